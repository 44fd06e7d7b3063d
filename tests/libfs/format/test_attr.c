// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the xattr, symlink, special file and dquot decoders and
 * verifiers, over hand-built blocks in the core fixture's geometry (4 KiB
 * blocks): a valid block of each kind gives no finding, and each hostile
 * variant gives the finding that names its fault (and never reads outside
 * the buffer: run under ASan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/attr.h"
#include "libfs/format/dquot.h"
#include "libfs/format/endian.h"
#include "libfs/format/symlink.h"
#include "tests/libfs/fixture.h"

#define BS 4096
#define INO 131ull
#define DADDR 800ull
#define LHDR sizeof(struct xfs_attr3_leaf_hdr)

/* A stand-in name hash: the checks only compare it with what is stored. */
static uint32_t toy_hash(const uint8_t *name, int len)
{
	uint32_t h = 7;

	for (int i = 0; i < len; i++)
		h = h * 31 + name[i];
	return h;
}

struct lent {
	const char *name;
	const char *value;     /* local value, or NULL: remote */
	uint32_t rlen, rblk;   /* remote value length and block */
	uint8_t ns;            /* XFS_ATTR_ROOT/SECURE or 0 */
};

static int cmp_hash(const void *a, const void *b)
{
	uint32_t ha = toy_hash((const uint8_t *)((const struct lent *)a)->name,
			       (int)strlen(((const struct lent *)a)->name));
	uint32_t hb = toy_hash((const uint8_t *)((const struct lent *)b)->name,
			       (int)strlen(((const struct lent *)b)->name));

	return ha < hb ? -1 : ha > hb;
}

/* A valid attr3 leaf block holding ents (sorted by hash here). */
static void build_leaf(const struct fx *f, uint8_t *b, struct lent *ents, int n)
{
	struct xfs_attr3_leaf_hdr *h = (void *)b;
	uint32_t top = BS, used = 0;

	memset(b, 0, BS);
	qsort(ents, n, sizeof(*ents), cmp_hash);
	h->info.hdr.magic = to_be16(XFS_ATTR3_LEAF_MAGIC);
	h->info.blkno = to_be64(DADDR);
	h->info.owner = to_be64(INO);
	memcpy(&h->info.uuid, f->g.meta_uuid, 16);
	h->count = to_be16(n);
	for (int i = 0; i < n; i++) {
		struct xfs_attr_leaf_entry *e = (void *)(b + LHDR + i * sizeof(*e));
		uint32_t nl = strlen(ents[i].name), sz;
		uint8_t *p;

		if (ents[i].value) {
			uint32_t vl = strlen(ents[i].value);
			sz = fs_attr_entsize_local(nl, vl);
			top -= sz;
			p = b + top;
			put_be16(p, vl);
			p[2] = nl;
			memcpy(p + 3, ents[i].name, nl);
			memcpy(p + 3 + nl, ents[i].value, vl);
			e->flags = XFS_ATTR_LOCAL | ents[i].ns;
		} else {
			sz = fs_attr_entsize_remote(nl);
			top -= sz;
			p = b + top;
			put_be32(p, ents[i].rblk);
			put_be32(p + 4, ents[i].rlen);
			p[8] = nl;
			memcpy(p + 9, ents[i].name, nl);
			e->flags = ents[i].ns;
		}
		used += sz;
		e->hashval = to_be32(toy_hash((const uint8_t *)ents[i].name, nl));
		e->nameidx = to_be16(top);
	}
	h->usedbytes = to_be16(used);
	h->firstused = to_be16(top);
	h->freemap[0].base = to_be16(LHDR + n * sizeof(struct xfs_attr_leaf_entry));
	h->freemap[0].size = to_be16(top - (LHDR + n * sizeof(struct xfs_attr_leaf_entry)));
	fs_crc_update(b, BS, XFS_ATTR3_LEAF_CRC_OFF);
}

static struct fs_vctx vctx(const struct fx *f, struct fs_findings *fl)
{
	struct fs_vctx c = fx_vctx(f, 0, fl);

	c.daddr = DADDR;
	c.ino = INO;
	return c;
}

static int leaf_check(const struct fx *f, uint8_t *b, struct fs_findings *fl, bool recrc)
{
	struct fs_vctx c = vctx(f, fl);

	if (recrc)
		fs_crc_update(b, BS, XFS_ATTR3_LEAF_CRC_OFF);
	return fs_verify(FS_MT_ATTR_LEAF, &c, b, BS) + fs_attr_leaf_verify_hashes(&c, b, BS, toy_hash);
}

static void sample(struct lent *e)
{
	e[0] = (struct lent){ "user.alpha", "one", 0, 0, 0 };
	e[1] = (struct lent){ "user.beta", "a longer value here", 0, 0, 0 };
	e[2] = (struct lent){ "trusted.big", NULL, 70000 - 5000, 3, XFS_ATTR_ROOT };
	e[3] = (struct lent){ "security.x", "s", 0, 0, XFS_ATTR_SECURE };
}

static uint16_t ent_u16(const uint8_t *b, int i, size_t off)
{
	return get_be16(b + LHDR + i * sizeof(struct xfs_attr_leaf_entry) + off);
}

static void test_leaf(void **state)
{
	static uint8_t b[BS];
	struct lent e[4];
	struct fs_findings fl;
	struct fx f;
	struct fs_attr_leaf_hdr h;
	struct fs_attr_ent ent;
	size_t nidx = offsetof(struct xfs_attr_leaf_entry, nameidx);

	(void)state;
	fx_init_default(&f);
	sample(e);

	/* clean */
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	if (leaf_check(&f, b, &fl, false))
		fx_dump(&fl);
	assert_int_equal(fl.n, 0);
	fs_attr_leaf_hdr_decode(b, BS, &h);
	assert_int_equal(h.count, 4);
	for (int i = 0; i < 4; i++) {
		assert_true(fs_attr_leaf_entry(b, BS, &h, i, &ent));
		assert_int_equal(ent.namelen, strlen(e[i].name));
		assert_memory_equal(ent.name, e[i].name, ent.namelen);
		assert_int_equal(ent.local, e[i].value != NULL);
	}
	fs_findings_free(&fl);

	/* stale CRC, wrong owner, wrong self address */
	struct { size_t off; int width; uint64_t val; const char *code; } cases[] = {
		{ offsetof(struct xfs_attr3_leaf_hdr, info.owner), 8, 999, "attr.owner" },
		{ offsetof(struct xfs_attr3_leaf_hdr, info.blkno), 8, 8, "attr.blkno" },
		{ offsetof(struct xfs_attr3_leaf_hdr, info.hdr.magic), 2, 0x3bef, "attr.magic" },
		{ offsetof(struct xfs_attr3_leaf_hdr, usedbytes), 2, 12, "attr.usedbytes" },
		{ offsetof(struct xfs_attr3_leaf_hdr, firstused), 2, 40, "attr.firstused" },
		{ offsetof(struct xfs_attr3_leaf_hdr, firstused), 2, 5000, "attr.firstused" },
		{ offsetof(struct xfs_attr3_leaf_hdr, count), 2, 0xffff, "attr.count" },
		{ offsetof(struct xfs_attr3_leaf_hdr, freemap[1].base), 2, 4093, "attr.freemap" },
		{ offsetof(struct xfs_attr3_leaf_hdr, freemap[0].size), 2, 4096, "attr.freemap" },
		{ LHDR + nidx, 2, 4095, "attr.entry" },          /* name past the block */
		{ LHDR + nidx, 2, 10, "attr.nameidx" },          /* into the header */
		{ LHDR + 8 + nidx, 2, 0, "attr.nameidx" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fs_findings_init(&fl);
		build_leaf(&f, b, e, 4);
		if (cases[k].width == 2)
			put_be16(b + cases[k].off, (uint16_t)cases[k].val);
		else
			put_be64(b + cases[k].off, cases[k].val);
		assert_true(leaf_check(&f, b, &fl, true) > 0);
		if (!fx_has(&fl, cases[k].code, NULL)) {
			fx_dump(&fl);
			fail_msg("case %zu: no %s", k, cases[k].code);
		}
		fs_findings_free(&fl);
	}

	/* stale CRC only */
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	b[BS - 1] ^= 1;
	leaf_check(&f, b, &fl, false);
	assert_true(fx_has(&fl, "attr.crc", NULL));
	fs_findings_free(&fl);

	/* hash order: swap two entries' table slots */
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	{
		uint8_t tmp[8];
		memcpy(tmp, b + LHDR, 8);
		memcpy(b + LHDR, b + LHDR + 8, 8);
		memcpy(b + LHDR + 8, tmp, 8);
	}
	leaf_check(&f, b, &fl, true);
	assert_true(fx_has(&fl, "attr.order", NULL));
	fs_findings_free(&fl);

	/* wrong hash of one name (order kept: lowest entry's hash lowered) */
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	put_be32(b + LHDR, 0);
	leaf_check(&f, b, &fl, true);
	assert_true(fx_has(&fl, "attr.hash", NULL));
	assert_false(fx_has(&fl, "attr.order", NULL));
	fs_findings_free(&fl);

	/* two entries pointing at one name */
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	put_be16(b + LHDR + 8 + nidx, ent_u16(b, 0, nidx));
	leaf_check(&f, b, &fl, true);
	assert_true(fx_has(&fl, "attr.overlap", NULL));
	fs_findings_free(&fl);

	/* flags: two namespaces, incomplete, unknown bit */
	uint8_t bad_flags[] = { XFS_ATTR_LOCAL | XFS_ATTR_ROOT | XFS_ATTR_SECURE, XFS_ATTR_LOCAL | 0x10 };
	for (size_t k = 0; k < sizeof(bad_flags); k++) {
		fs_findings_init(&fl);
		build_leaf(&f, b, e, 4);
		for (int i = 0; i < 4; i++)
			if (b[LHDR + i * 8 + offsetof(struct xfs_attr_leaf_entry, flags)] & XFS_ATTR_LOCAL)
				b[LHDR + i * 8 + offsetof(struct xfs_attr_leaf_entry, flags)] = bad_flags[k];
		leaf_check(&f, b, &fl, true);
		assert_true(fx_has(&fl, "attr.flags", NULL));
		fs_findings_free(&fl);
	}
	fs_findings_init(&fl);
	build_leaf(&f, b, e, 4);
	b[LHDR + offsetof(struct xfs_attr_leaf_entry, flags)] |= XFS_ATTR_INCOMPLETE;
	leaf_check(&f, b, &fl, true);
	assert_true(fx_has(&fl, "attr.incomplete", NULL));
	fs_findings_free(&fl);

	/* a remote entry at value block 0, an empty name */
	for (int i = 0; i < 4; i++) {
		fs_attr_leaf_hdr_decode(b, BS, &h);
		build_leaf(&f, b, e, 4);
		fs_findings_init(&fl);
		assert_true(fs_attr_leaf_entry(b, BS, &h, i, &ent));
		if (ent.local)
			b[ent.nameidx + offsetof(struct xfs_attr_leaf_name_local, namelen)] = 0;
		else
			put_be32(b + ent.nameidx, 0);
		leaf_check(&f, b, &fl, true);
		assert_true(fx_has(&fl, ent.local ? "attr.name" : "attr.remote", NULL));
		fs_findings_free(&fl);
	}

	/* hostile: random bytes with a valid magic and CRC never crash */
	for (int round = 0; round < 500; round++) {
		uint32_t seed = 12345u + round;
		for (int i = 0; i < BS; i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = (uint8_t)(seed >> 16);
		}
		if (round & 1)	/* small counts reach the entry decoding */
			put_be16(b + offsetof(struct xfs_attr3_leaf_hdr, count), round % 40);
		put_be16(b + offsetof(struct xfs_attr3_leaf_hdr, info.hdr.magic), XFS_ATTR3_LEAF_MAGIC);
		fs_findings_init(&fl);
		assert_true(leaf_check(&f, b, &fl, true) > 0);
		fs_findings_free(&fl);
	}
}

/* Short form: header then entries namelen, valuelen, flags, name, value. */
static size_t build_sf(uint8_t *p, size_t cap, int n, const char **names, const char **vals)
{
	size_t off = sizeof(struct xfs_attr_sf_hdr);

	memset(p, 0, cap);
	for (int i = 0; i < n; i++) {
		size_t nl = strlen(names[i]), vl = strlen(vals[i]);
		p[off] = nl;
		p[off + 1] = vl;
		p[off + 2] = 0;
		memcpy(p + off + 3, names[i], nl);
		memcpy(p + off + 3 + nl, vals[i], vl);
		off += 3 + nl + vl;
	}
	put_be16(p, off);
	p[2] = n;
	return off;
}

static int sf_count;
static void count_ent(void *priv, const struct fs_attr_ent *e)
{
	(void)priv;
	(void)e;
	sf_count++;
}

static void test_shortform(void **state)
{
	const char *names[] = { "user.a", "user.bb", "selinux" };
	const char *vals[] = { "1", "22", "system_u:object_r:etc_t:s0" };
	uint8_t p[200];
	struct fs_findings fl;
	struct fx f;
	struct fs_vctx c;
	size_t tot;

	(void)state;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	tot = build_sf(p, sizeof(p), 3, names, vals);
	sf_count = 0;
	assert_int_equal(fs_attr_sf_verify(&c, p, sizeof(p), count_ent, NULL), 0);
	assert_int_equal(sf_count, 3);
	/* the fork may be exactly totsize */
	assert_int_equal(fs_attr_sf_verify(&c, p, tot, NULL, NULL), 0);
	assert_true(fs_attr_sf_verify(&c, p, tot - 1, NULL, NULL) > 0);
	assert_true(fx_has(&fl, "attr.sf_size", NULL));
	fs_findings_free(&fl);

	struct { size_t off; uint8_t val; const char *code; } cases[] = {
		{ 2, 4, "attr.sf_entry" },      /* count past the end */
		{ 2, 2, "attr.sf_size" },       /* count short of totsize */
		{ 2, 255, "attr.sf_entry" },
		{ 4, 0, "attr.sf_name" },       /* namelen 0 */
		{ 4, 200, "attr.sf_entry" },    /* namelen past the end */
		{ 5, 255, "attr.sf_entry" },    /* valuelen past the end */
		{ 6, XFS_ATTR_ROOT | XFS_ATTR_SECURE, "attr.sf_flags" },
		{ 6, XFS_ATTR_LOCAL, "attr.sf_flags" },
		{ 7, 0, "attr.sf_name" },       /* NUL inside the name */
		{ 1, 0, "attr.sf_size" },       /* totsize 0 */
		{ 1, 2, "attr.sf_size" },       /* totsize below the header */
		{ 0, 1, "attr.sf_size" },       /* totsize past the fork */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fs_findings_init(&fl);
		c = vctx(&f, &fl);
		build_sf(p, sizeof(p), 3, names, vals);
		p[cases[k].off] = cases[k].val;
		assert_true(fs_attr_sf_verify(&c, p, sizeof(p), NULL, NULL) > 0);
		if (!fx_has(&fl, cases[k].code, NULL)) {
			fx_dump(&fl);
			fail_msg("sf case %zu: no %s", k, cases[k].code);
		}
		fs_findings_free(&fl);
	}
	/* a fork too small for the header */
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	assert_true(fs_attr_sf_verify(&c, p, 3, NULL, NULL) > 0);
	fs_findings_free(&fl);
}

static void build_rmt(const struct fx *f, uint8_t *b, uint32_t off, uint32_t bytes)
{
	struct xfs_attr3_rmt_hdr *h = (void *)b;

	memset(b, 0xab, BS);
	memset(h, 0, sizeof(*h));
	h->rm_magic = to_be32(XFS_ATTR3_RMT_MAGIC);
	h->rm_offset = to_be32(off);
	h->rm_bytes = to_be32(bytes);
	h->rm_owner = to_be64(INO);
	h->rm_blkno = to_be64(DADDR);
	h->rm_lsn = to_be64(~0ull);	/* unlogged, as the kernel writes values */
	memcpy(&h->rm_uuid, f->g.meta_uuid, 16);
	fs_crc_update(b, BS, XFS_ATTR3_RMT_CRC_OFF);
}

static void test_remote(void **state)
{
	static uint8_t b[BS];
	uint32_t space = BS - sizeof(struct xfs_attr3_rmt_hdr);
	struct fs_findings fl;
	struct fs_vctx c;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	assert_int_equal(fs_attr_rmt_blocks(&f.g, 65536), (65536 + space - 1) / space);
	assert_int_equal(fs_attr_rmt_blocks(&f.g, space), 1);
	assert_int_equal(fs_attr_rmt_blocks(&f.g, space + 1), 2);

	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	build_rmt(&f, b, space, space);
	assert_int_equal(fs_verify(FS_MT_ATTR_RMT, &c, b, BS), 0);
	fs_findings_free(&fl);

	struct { size_t off; int w; uint64_t v; const char *code; } cases[] = {
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_owner), 8, 0, "attrrmt.owner" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_owner), 8, 132, "attrrmt.owner" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_blkno), 8, 0, "attrrmt.blkno" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_bytes), 4, space + 1, "attrrmt.bytes" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_offset), 4, 65536, "attrrmt.offset" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_offset), 4, 0xfffffff0u, "attrrmt.offset" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_magic), 4, XFS_SYMLINK_MAGIC, "attrrmt.magic" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_uuid), 4, 1, "attrrmt.uuid" },
		{ offsetof(struct xfs_attr3_rmt_hdr, rm_lsn), 8, (99ull << 32) | 1, "attrrmt.lsn" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fs_findings_init(&fl);
		c = vctx(&f, &fl);
		build_rmt(&f, b, 0, 100);
		if (cases[k].w == 4)
			put_be32(b + cases[k].off, (uint32_t)cases[k].v);
		else
			put_be64(b + cases[k].off, cases[k].v);
		fs_crc_update(b, BS, XFS_ATTR3_RMT_CRC_OFF);
		assert_true(fs_verify(FS_MT_ATTR_RMT, &c, b, BS) > 0);
		if (!fx_has(&fl, cases[k].code, NULL)) {
			fx_dump(&fl);
			fail_msg("remote case %zu: no %s", k, cases[k].code);
		}
		fs_findings_free(&fl);
	}
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	build_rmt(&f, b, 0, 100);
	b[200] ^= 0xff;
	assert_int_equal(fs_verify(FS_MT_ATTR_RMT, &c, b, BS), 1);
	assert_true(fx_has(&fl, "attrrmt.crc", NULL));
	/* a buffer shorter than the header is only "wrong magic/short", never a read past it */
	assert_true(fs_verify(FS_MT_ATTR_RMT, &c, b, 2) > 0);
	fs_findings_free(&fl);
}

static void build_sl(const struct fx *f, uint8_t *b, uint32_t off, uint32_t bytes, char fill)
{
	struct xfs_dsymlink_hdr *h = (void *)b;

	memset(b, 0, BS);
	h->sl_magic = to_be32(XFS_SYMLINK_MAGIC);
	h->sl_offset = to_be32(off);
	h->sl_bytes = to_be32(bytes);
	h->sl_owner = to_be64(INO);
	h->sl_blkno = to_be64(DADDR);
	memcpy(&h->sl_uuid, f->g.meta_uuid, 16);
	memset(b + sizeof(*h), fill, bytes);
	fs_crc_update(b, BS, XFS_SYMLINK_CRC_OFF);
}

static void test_symlink(void **state)
{
	static uint8_t b[BS];
	struct fs_findings fl;
	struct fs_vctx c;
	struct fx f;
	uint32_t done;
	char t[1100];

	(void)state;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	/* inline */
	memset(t, 'a', sizeof(t));
	assert_int_equal(fs_symlink_local_verify(&c, t, 1), 0);
	assert_int_equal(fs_symlink_local_verify(&c, t, 1024), 0);
	assert_true(fs_symlink_local_verify(&c, t, 1025) > 0);
	assert_true(fs_symlink_local_verify(&c, t, 0) > 0);
	assert_true(fx_has(&fl, "symlink.size", NULL));
	t[10] = 0;
	assert_true(fs_symlink_local_verify(&c, t, 20) > 0);
	assert_true(fx_has(&fl, "symlink.target", NULL));
	fs_findings_free(&fl);

	/* remote: a 1000-byte target in one block */
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	build_sl(&f, b, 0, 1000, 'x');
	assert_int_equal(fs_verify(FS_MT_SYMLINK, &c, b, BS), 0);
	done = 0;
	assert_int_equal(fs_symlink_rmt_verify_piece(&c, b, BS, 1000, &done), 0);
	assert_int_equal(done, 1000);
	/* the inode says 900 bytes */
	done = 0;
	assert_true(fs_symlink_rmt_verify_piece(&c, b, BS, 900, &done) > 0);
	assert_true(fx_has(&fl, "symlink.bytes", NULL));
	fs_findings_free(&fl);

	struct { size_t off; int w; uint64_t v; const char *code; } cases[] = {
		{ offsetof(struct xfs_dsymlink_hdr, sl_owner), 8, 0, "symlink.owner" },
		{ offsetof(struct xfs_dsymlink_hdr, sl_owner), 8, 7, "symlink.owner" },
		{ offsetof(struct xfs_dsymlink_hdr, sl_blkno), 8, 1, "symlink.blkno" },
		{ offsetof(struct xfs_dsymlink_hdr, sl_bytes), 4, 5000, "symlink.bytes" },
		{ offsetof(struct xfs_dsymlink_hdr, sl_offset), 4, 100, "symlink.offset" },
		{ offsetof(struct xfs_dsymlink_hdr, sl_magic), 4, 0, "symlink.magic" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fs_findings_init(&fl);
		c = vctx(&f, &fl);
		build_sl(&f, b, 0, 1000, 'x');
		if (cases[k].w == 4)
			put_be32(b + cases[k].off, (uint32_t)cases[k].v);
		else
			put_be64(b + cases[k].off, cases[k].v);
		fs_crc_update(b, BS, XFS_SYMLINK_CRC_OFF);
		assert_true(fs_verify(FS_MT_SYMLINK, &c, b, BS) > 0);
		if (!fx_has(&fl, cases[k].code, NULL)) {
			fx_dump(&fl);
			fail_msg("symlink case %zu: no %s", k, cases[k].code);
		}
		fs_findings_free(&fl);
	}
	/* a NUL inside a remote target; a piece not continuing the previous one */
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	build_sl(&f, b, 0, 1000, 'x');
	b[sizeof(struct xfs_dsymlink_hdr) + 500] = 0;
	done = 0;
	assert_true(fs_symlink_rmt_verify_piece(&c, b, BS, 1000, &done) > 0);
	assert_true(fx_has(&fl, "symlink.target", NULL));
	done = 10;
	build_sl(&f, b, 0, 990, 'x');
	assert_true(fs_symlink_rmt_verify_piece(&c, b, BS, 1000, &done) > 0);
	assert_true(fx_has(&fl, "symlink.offset", NULL));
	/* small blocks: a target across three 512-byte blocks */
	done = 0;
	fs_findings_free(&fl);
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	{
		uint32_t sp = 512 - sizeof(struct xfs_dsymlink_hdr), off = 0;
		for (int i = 0; i < 3; i++) {
			uint32_t by = 1000 - off < sp ? 1000 - off : sp;
			build_sl(&f, b, off, by, 'y');
			assert_int_equal(fs_symlink_rmt_verify_piece(&c, b, 512, 1000, &done), 0);
			off += by;
		}
		assert_int_equal(done, 1000);
	}
	fs_findings_free(&fl);
}

static void test_special(void **state)
{
	struct fs_findings fl;
	struct fs_inode ip;
	struct fs_vctx c;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	memset(&ip, 0, sizeof(ip));
	ip.mode = S_IFCHR | 0644;
	ip.format = XFS_DINODE_FMT_DEV;
	assert_int_equal(fs_special_verify(&c, &ip), 0);
	ip.mode = S_IFIFO | 0644;
	ip.forkoff = 1;
	ip.nblocks = 1;	/* an attr block: allowed */
	assert_int_equal(fs_special_verify(&c, &ip), 0);
	ip.size = 10;
	assert_int_equal(fs_special_verify(&c, &ip), 1);
	assert_true(fx_has(&fl, "special.size", NULL));
	ip.size = 0;
	ip.nextents = 2;
	assert_int_equal(fs_special_verify(&c, &ip), 1);
	ip.nextents = 0;
	ip.forkoff = 0;
	assert_int_equal(fs_special_verify(&c, &ip), 1);
	assert_true(fx_has(&fl, "special.extents", "di_nblocks"));
	fs_findings_free(&fl);
}

static void build_dq(const struct fx *f, uint8_t *b, uint64_t fileblk, uint8_t type)
{
	uint32_t per = BS / sizeof(struct xfs_dqblk);

	memset(b, 0, BS);
	for (uint32_t i = 0; i < per; i++) {
		struct xfs_dqblk *q = (void *)(b + i * sizeof(*q));
		q->dd_diskdq.d_magic = to_be16(XFS_DQUOT_MAGIC);
		q->dd_diskdq.d_version = XFS_DQUOT_VERSION;
		q->dd_diskdq.d_type = type;
		q->dd_diskdq.d_id = to_be32(fileblk * per + i);
		memcpy(&q->dd_uuid, f->g.meta_uuid, 16);
		fs_crc_update(q, sizeof(*q), XFS_DQUOT_CRC_OFF);
	}
}

static void test_dquot(void **state)
{
	static uint8_t b[BS];
	struct fs_findings fl;
	struct fs_vctx c;
	struct fx f;
	struct xfs_dqblk *q = (void *)(b + 3 * sizeof(struct xfs_dqblk));

	(void)state;
	fx_init_default(&f);
	assert_int_equal(fs_dquot_per_block(&f.g), 30);
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	build_dq(&f, b, 2, XFS_DQTYPE_USER);
	assert_int_equal(fs_dquot_block_verify(&c, b, BS, 2, XFS_DQTYPE_USER), 0);
	/* ids of another block */
	assert_int_equal(fs_dquot_block_verify(&c, b, BS, 1, XFS_DQTYPE_USER), 30);
	assert_true(fx_has(&fl, "dquot.id", NULL));
	fs_findings_free(&fl);
	/* the group file holding user records */
	fs_findings_init(&fl);
	c = vctx(&f, &fl);
	assert_int_equal(fs_dquot_block_verify(&c, b, BS, 2, XFS_DQTYPE_GROUP), 30);
	assert_true(fx_has(&fl, "dquot.type", NULL));
	fs_findings_free(&fl);

	struct { const char *code; int what; } cases[] = {
		{ "dquot.magic", 0 }, { "dquot.version", 1 }, { "dquot.type", 2 },
		{ "dquot.timer", 3 }, { "dquot.crc", 4 }, { "dquot.uuid", 5 }, { "dquot.id", 6 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fs_findings_init(&fl);
		c = vctx(&f, &fl);
		build_dq(&f, b, 0, XFS_DQTYPE_PROJ);
		switch (cases[k].what) {
		case 0: q->dd_diskdq.d_magic = to_be16(0x4452); break;
		case 1: q->dd_diskdq.d_version = 2; break;
		case 2: q->dd_diskdq.d_type = XFS_DQTYPE_USER | XFS_DQTYPE_GROUP; break;
		case 3: q->dd_diskdq.d_blk_softlimit = to_be64(10);
			q->dd_diskdq.d_bcount = to_be64(11); break;
		case 4: break;
		case 5: ((uint8_t *)&q->dd_uuid)[0] ^= 1; break;
		case 6: q->dd_diskdq.d_id = to_be32(77); break;
		}
		if (cases[k].what != 4)
			fs_crc_update(q, sizeof(*q), XFS_DQUOT_CRC_OFF);
		else
			q->dd_diskdq.d_iwarns = to_be16(1);
		assert_true(fs_dquot_block_verify(&c, b, BS, 0, XFS_DQTYPE_PROJ) > 0);
		if (!fx_has(&fl, cases[k].code, NULL)) {
			fx_dump(&fl);
			fail_msg("dquot case %zu: no %s", k, cases[k].code);
		}
		fs_findings_free(&fl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_shortform),
		cmocka_unit_test(test_remote),
		cmocka_unit_test(test_symlink),
		cmocka_unit_test(test_special),
		cmocka_unit_test(test_dquot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
