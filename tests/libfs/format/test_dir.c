// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/format/dir.c over hand-built directories: a short form fork and a
 * block-form directory block ("XDB3") that verify clean and hand their two
 * live entries and ".." to the walker; then one broken field at a time
 * (CRC re-stamped) gives its exact finding code; hostile lengths and
 * counts (name length past the block, zero-length free region, a tail
 * count of 2^32-1, a short form count past the fork) are reported without
 * reading outside the buffers (the ASan build runs this too); the di_size
 * a short form fork's entries and a mapping imply (repair's size mend).
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/dir.h"
#include "tests/libfs/fixture.h"

#define OWNER 131ull
#define PARENT 128ull
#define DADDR 800ull

struct got {
	int n;
	char names[8][16];
	uint64_t inos[8];
};

static int on_entry(void *priv, const struct fs_dirent *e)
{
	struct got *g = priv;

	if (g->n < 8) {
		snprintf(g->names[g->n], 16, "%.*s", e->namelen, (const char *)e->name);
		g->inos[g->n] = e->ino;
	}
	g->n++;
	return 0;
}

/* ---- short form ---- */

static size_t build_sf(unsigned char *p)
{
	size_t o = 0;

	memset(p, 0, 256);
	p[o++] = 2;                 /* count */
	p[o++] = 0;                 /* i8count */
	put_be32(p + o, PARENT); o += 4;
	p[o++] = 1; put_be16(p + o, 0x60); o += 2; p[o++] = 'a'; p[o++] = XFS_DIR3_FT_REG_FILE;
	put_be32(p + o, 200); o += 4;
	p[o++] = 2; put_be16(p + o, 0x70); o += 2; p[o++] = 'b'; p[o++] = 'b'; p[o++] = XFS_DIR3_FT_DIR;
	put_be32(p + o, 201); o += 4;
	return o;
}

static int sf_run(struct fx *f, const unsigned char *p, size_t forklen, size_t size,
		  struct fs_findings *fl, struct got *got)
{
	struct fs_dir_ctx c = { .g = &f->g, .fl = fl, .ino = OWNER, .entry = on_entry, .priv = got };
	int n = fs_dir_sf_walk(&c, p, forklen, size);

	if (n == 0)
		assert_int_equal(c.parent, PARENT);
	return n;
}

static void expect_code(struct fs_findings *fl, const char *code)
{
	assert_non_null(fs_finding_lookup(code));
	if (!fs_findings_has(fl, fs_finding_lookup(code)->id)) {
		for (size_t i = 0; i < fl->n; i++)
			print_message("# got %s (%s)\n", fl->v[i].def->code, fl->v[i].field);
		fail_msg("expected %s", code);
	}
}

static void test_sf(void **st)
{
	unsigned char *p = malloc(256);
	struct fs_findings fl;
	struct got got = { 0 };
	struct fx f;
	size_t size;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	size = build_sf(p);
	fs_findings_init(&fl);
	assert_int_equal(sf_run(&f, p, 256, size, &fl, &got), 0);
	assert_int_equal(got.n, 2);
	assert_string_equal(got.names[0], "a");
	assert_string_equal(got.names[1], "bb");
	assert_int_equal(got.inos[1], 201);
	fs_findings_free(&fl);

	struct { const char *code; size_t at; unsigned char v; long dsize; } cases[] = {
		{ "dir.sf", 0, 200, 0 },         /* count past the fork */
		{ "dir.namelen", 6, 0, 0 },      /* first name empty */
		{ "dir.namelen", 6, 250, 0 },    /* first name past di_size */
		{ "dir.sf", 1, 1, 0 },           /* i8count without 8-byte inodes */
		{ "dir.name", 9, '/', 0 },       /* '/' in a name */
		{ "dir.sf", 8, 0x10, 0 },        /* offset below the first entry's */
		{ "dir.ftype", 10, 9, 0 },       /* ftype past the last type */
		{ "dir.sf", 0, 1, 0 },           /* count short of di_size */
		{ "dir.sf", 0, 2, 400 },         /* di_size past the fork */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size = build_sf(p);
		p[cases[i].at] = cases[i].v;
		memset(&got, 0, sizeof(got));
		fs_findings_init(&fl);
		/* exact-size copy: ASan sees any read past di_size */
		unsigned char *q = malloc(size);
		memcpy(q, p, size);
		assert_true(sf_run(&f, q, cases[i].dsize ? 256 : size, cases[i].dsize ? (size_t)cases[i].dsize : size,
				   &fl, &got) > 0);
		expect_code(&fl, cases[i].code);
		free(q);
		fs_findings_free(&fl);
	}
	free(p);
}

/* The size a short form fork's entries imply, and a mapping's (a mend of di_size). */
static void test_implied_size(void **st)
{
	unsigned char *p = malloc(256);
	struct fx f;
	size_t size;
	uint64_t leaf;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	size = build_sf(p);
	assert_int_equal(fs_dir_sf_size(&f.g, p, 256), size);
	assert_int_equal(fs_dir_sf_size(&f.g, p, size), size);
	assert_int_equal(fs_dir_sf_size(&f.g, p, size - 1), 0);	/* the last entry past the fork */
	p[6] = 0;
	assert_int_equal(fs_dir_sf_size(&f.g, p, 256), 0);		/* an empty name */
	size = build_sf(p);
	p[0] = 255;
	assert_int_equal(fs_dir_sf_size(&f.g, p, 256), 0);		/* a count past the fork */
	assert_int_equal(fs_dir_sf_size(&f.g, p, 5), 0);
	free(p);

	leaf = XFS_DIR2_LEAF_OFFSET >> f.g.blocklog;
	assert_int_equal(fs_dir_mapped_size(&f.g, &(struct fs_bmap){
		.ext = &(struct fs_bmap_ext){ 0, 100, f.g.dirblkfsbs, false }, .n = 1 }),
		f.g.dirblksize);
	struct fs_bmap_ext lf[] = { { 0, 100, 3 * f.g.dirblkfsbs, false },
				    { leaf, 200, f.g.dirblkfsbs, false } };
	assert_int_equal(fs_dir_mapped_size(&f.g, &(struct fs_bmap){ .ext = lf, .n = 2 }),
			 3ull * f.g.dirblksize);
	struct fs_bmap_ext hole[] = { { 1, 100, 1, false } };
	assert_int_equal(fs_dir_mapped_size(&f.g, &(struct fs_bmap){ .ext = hole, .n = 1 }), 0);
	assert_int_equal(fs_dir_mapped_size(&f.g, &(struct fs_bmap){ .n = 0 }), 0);
}

static void test_sf_dup(void **st)
{
	unsigned char p[64];
	struct fs_findings fl;
	struct got got = { 0 };
	struct fx f;
	size_t o = 0;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	memset(p, 0, sizeof(p));
	p[o++] = 2; p[o++] = 0; put_be32(p + o, PARENT); o += 4;
	for (int i = 0; i < 2; i++) {
		p[o++] = 1; put_be16(p + o, (uint16_t)(0x60 + 0x10 * i)); o += 2; p[o++] = 'X';
		p[o++] = XFS_DIR3_FT_REG_FILE; put_be32(p + o, 200 + i); o += 4;
	}
	fs_findings_init(&fl);
	assert_true(sf_run(&f, p, sizeof(p), o, &fl, &got) > 0);
	expect_code(&fl, "dir.dup_name");
	fs_findings_free(&fl);
	/* ascii-ci: "X" and "x" are one name */
	p[6 + 9 + 3] = 'x';
	fs_findings_init(&fl);
	assert_int_equal(sf_run(&f, p, sizeof(p), o, &fl, &got), 0);
	f.g.asciici = true;
	assert_true(sf_run(&f, p, sizeof(p), o, &fl, &got) > 0);
	expect_code(&fl, "dir.dup_name");
	fs_findings_free(&fl);
}

/* ---- block form ---- */

#define BLK 4096

struct ent { const char *name; uint64_t ino; uint8_t ft; };
static const struct ent ents[] = {
	{ ".", OWNER, XFS_DIR3_FT_DIR }, { "..", PARENT, XFS_DIR3_FT_DIR },
	{ "a", 200, XFS_DIR3_FT_REG_FILE }, { "bb", 201, XFS_DIR3_FT_DIR },
};
#define NENT 4

static int cmp_leaf(const void *a, const void *b)
{
	uint32_t x = get_be32(a), y = get_be32(b);

	return x < y ? -1 : x > y;
}

static void build_block(const struct fx *f, unsigned char *b)
{
	struct xfs_dir3_data_hdr *h = (void *)b;
	uint32_t off = sizeof(*h), lstart = BLK - 8 - NENT * 8;
	unsigned char *leaf = b + lstart;

	memset(b, 0, BLK);
	h->hdr.magic = to_be32(XFS_DIR3_BLOCK_MAGIC);
	h->hdr.blkno = to_be64(DADDR);
	h->hdr.owner = to_be64(OWNER);
	memcpy(&h->hdr.uuid, f->g.meta_uuid, 16);
	for (int i = 0; i < NENT; i++) {
		size_t nl = strlen(ents[i].name);
		uint32_t es = fs_dir_entsize(&f->g, (uint32_t)nl);

		put_be64(b + off, ents[i].ino);
		b[off + 8] = (uint8_t)nl;
		memcpy(b + off + 9, ents[i].name, nl);
		b[off + 9 + nl] = ents[i].ft;
		put_be16(b + off + es - 2, (uint16_t)off);
		put_be32(leaf + i * 8, fs_dir_hashname(&f->g, (const unsigned char *)ents[i].name, nl));
		put_be32(leaf + i * 8 + 4, off >> 3);
		off += es;
	}
	qsort(leaf, NENT, 8, cmp_leaf);
	/* one free region up to the leaf */
	put_be16(b + off, XFS_DIR2_DATA_FREE_TAG);
	put_be16(b + off + 2, (uint16_t)(lstart - off));
	put_be16(b + lstart - 2, (uint16_t)off);
	h->best_free[0].offset = to_be16((uint16_t)off);
	h->best_free[0].length = to_be16((uint16_t)(lstart - off));
	put_be32(b + BLK - 8, NENT);
	put_be32(b + BLK - 4, 0);
	fs_crc_update(b, BLK, XFS_DIR3_DATA_CRC_OFF);
}

static unsigned char *blockbuf;

static int read_block(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	(void)priv;
	if (dablk != 0)
		return -ENODATA;
	memcpy(buf, blockbuf, BLK);
	*daddr = DADDR;
	return 0;
}

static int block_run(struct fx *f, struct fs_findings *fl, struct got *got, uint64_t *parent)
{
	struct fs_bmap_ext ext = { .startoff = 0, .startblock = 100, .blockcount = 1 };
	struct fs_bmap m = { .ext = &ext, .n = 1 };
	struct fs_dir_ctx c = { .g = &f->g, .fl = fl, .ino = OWNER, .read = read_block,
				.entry = on_entry, .priv = got };
	int n = fs_dir_walk(&c, &m, BLK);

	*parent = c.parent;
	return n;
}

static void test_block_good(void **st)
{
	struct fs_findings fl;
	struct got got = { 0 };
	uint64_t parent;
	struct fx f;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	blockbuf = malloc(BLK);
	build_block(&f, blockbuf);
	fs_findings_init(&fl);
	assert_int_equal(fs_dir_block_format(&f.g, &(struct fs_bmap){
		.ext = &(struct fs_bmap_ext){ 0, 100, 1, false }, .n = 1 }), FS_DIR_BLOCK);
	assert_int_equal(block_run(&f, &fl, &got, &parent), 0);
	assert_int_equal(fl.n, 0);
	assert_int_equal(got.n, 2);
	assert_string_equal(got.names[0], "a");
	assert_int_equal(parent, PARENT);
	fs_findings_free(&fl);
	free(blockbuf);
}

/* entry i's offset in the built block */
static uint32_t ent_off(const struct fx *f, int i)
{
	uint32_t off = sizeof(struct xfs_dir3_data_hdr);

	for (int k = 0; k < i; k++)
		off += fs_dir_entsize(&f->g, (uint32_t)strlen(ents[k].name));
	return off;
}

static void test_block_damage(void **st)
{
	struct fx f;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	uint32_t e2 = ent_off(&f, 2), e3 = ent_off(&f, 3), fr = ent_off(&f, 4);
	struct { const char *code; uint32_t at; int width; uint64_t v; bool recrc; } cases[] = {
		{ "dir.crc", e2 + 9, 1, 'z', false },
		{ "dir.magic", 0, 4, XFS_DIR3_DATA_MAGIC, true },
		{ "dir.owner", offsetof(struct xfs_dir3_blk_hdr, owner), 8, 999, true },
		{ "dir.blkno", offsetof(struct xfs_dir3_blk_hdr, blkno), 8, 8, true },
		{ "dir.bad_hash", e2 + 9, 1, 'z', true },
		{ "dir.name", e3 + 9, 1, '/', true },
		{ "dir.namelen", e2 + 8, 1, 0, true },
		{ "dir.namelen", e3 + 8, 1, 255, true },
		{ "dir.tag", e3 + 14, 2, 8, true },
		{ "dir.ftype", e2 + 10, 1, 12, true },
		{ "dir.ino", e2, 8, 1, true },
		{ "dir.dot", sizeof(struct xfs_dir3_data_hdr), 8, 200, true },
		{ "dir.bestfree", offsetof(struct xfs_dir3_data_hdr, best_free[0].length), 2, 64, true },
		{ "dir.bestfree", offsetof(struct xfs_dir3_data_hdr, best_free[1].length), 2, 8, true },
		{ "dir.unused", fr + 2, 2, 0, true },
		{ "dir.unused", fr + 2, 2, 0xfff8, true },
		{ "dir.count", BLK - 8, 4, 0xffffffffu, true },
		{ "dir.count", BLK - 4, 4, 9, true },
		{ "dir.stale", BLK - 4, 4, 1, true },
		{ "dir.leaf", BLK - 8 - 4, 4, 0x3fff, true },
		{ "dir.hash_order", BLK - 8 - 8 * NENT, 4, 0xffffffffu, true },
	};

	blockbuf = malloc(BLK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_findings fl;
		struct got got = { 0 };
		uint64_t parent;
		unsigned char *p;

		build_block(&f, blockbuf);
		p = blockbuf + cases[i].at;
		switch (cases[i].width) {
		case 1: *p = (uint8_t)cases[i].v; break;
		case 2: put_be16(p, (uint16_t)cases[i].v); break;
		case 4: put_be32(p, (uint32_t)cases[i].v); break;
		default: put_be64(p, cases[i].v); break;
		}
		if (cases[i].recrc)
			fs_crc_update(blockbuf, BLK, XFS_DIR3_DATA_CRC_OFF);
		fs_findings_init(&fl);
		print_message("# case %zu: %s\n", i, cases[i].code);
		assert_true(block_run(&f, &fl, &got, &parent) > 0);
		expect_code(&fl, cases[i].code);
		fs_findings_free(&fl);
	}
	free(blockbuf);
}

static void test_names(void **st)
{
	struct fx f;

	(void)st;
	fx_init_default(&f);
	f.g.ftype = true;
	assert_true(fs_dir_name_ok((const unsigned char *)"ok", 2));
	assert_false(fs_dir_name_ok((const unsigned char *)"a/b", 3));
	assert_false(fs_dir_name_ok((const unsigned char *)"a\0b", 3));
	assert_false(fs_dir_name_ok((const unsigned char *)"", 0));
	/* 8 + 1 + name + ftype + tag, 8-aligned */
	assert_int_equal(fs_dir_entsize(&f.g, 1), 16);
	assert_int_equal(fs_dir_entsize(&f.g, 4), 16);
	assert_int_equal(fs_dir_entsize(&f.g, 5), 24);
	assert_int_equal(fs_dir_entsize(&f.g, 255), 272);
	f.g.ftype = false;
	assert_int_equal(fs_dir_entsize(&f.g, 5), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_sf),
		cmocka_unit_test(test_sf_dup),
		cmocka_unit_test(test_implied_size),
		cmocka_unit_test(test_block_good),
		cmocka_unit_test(test_block_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
