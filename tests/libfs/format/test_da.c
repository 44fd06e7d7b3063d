// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/format/da.c: the name hash against values xfs_db's "hash" command printed
 * (mkfs.xfs 6.1 image), the ascii-ci hash's case folding, and DA3 node
 * blocks built by hand: a good node verifies clean through the verifier
 * table; each broken field (owner, blkno, level, count, hash order, CRC,
 * magic) gives exactly its code; child pointers outside the fork range or
 * pointing at the node itself are "da.ptr"; hostile counts never read past
 * the buffer.
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

#include "libfs/format/da.h"
#include "tests/libfs/fixture.h"

#define S(x) (const unsigned char *)(x), sizeof(x) - 1

static void test_hash_oracle(void **st)
{
	(void)st;
	/* xfs_db -c 'hash NAME' */
	assert_int_equal(fs_da_hashname(S("a")), 0x61);
	assert_int_equal(fs_da_hashname(S("ab")), 0x30e2);
	assert_int_equal(fs_da_hashname(S("abc")), 0x187163);
	assert_int_equal(fs_da_hashname(S("abcd")), 0xc38b1e4);
	assert_int_equal(fs_da_hashname(S("abcde")), 0x1c58f263);
	assert_int_equal(fs_da_hashname(S("lost+found")), 0x21aa60c);
	assert_int_equal(fs_da_hashname(S("verylongname_with_many_chars_0123456789")), 0x21dc762e);
	assert_int_equal(fs_da_hashname(S("ABCdef")), 0x287930ea);
	assert_int_equal(fs_da_hashname(S("abcdef")), 0x2c7931e8);
	assert_int_equal(fs_da_hashname((const unsigned char *)"", 0), 0);
}

static void test_hash_ci(void **st)
{
	struct fx f;

	(void)st;
	assert_int_equal(fs_da_hashname_ci(S("ABCdef")), fs_da_hashname_ci(S("abcdef")));
	/* latin-1 capitals fold, the multiplication sign 0xd7 does not */
	assert_int_equal(fs_da_hashname_ci(S("\xc0\xde")), fs_da_hashname_ci(S("\xe0\xfe")));
	assert_int_not_equal(fs_da_hashname_ci(S("\xd7")), fs_da_hashname_ci(S("\xf7")));
	/* one byte: the byte itself; two: first rotated by 7 */
	assert_int_equal(fs_da_hashname_ci(S("A")), 'a');
	assert_int_equal(fs_da_hashname_ci(S("ab")), ('a' << 7) ^ 'b');
	fx_init_default(&f);
	f.g.asciici = false;
	assert_int_equal(fs_dir_hashname(&f.g, S("ABC")), fs_da_hashname(S("ABC")));
	f.g.asciici = true;
	assert_int_equal(fs_dir_hashname(&f.g, S("ABC")), fs_da_hashname_ci(S("abc")));
}

#define BLK 4096
#define OWNER 131ull
#define DADDR 800ull

static void build_node(const struct fx *f, unsigned char *buf, uint16_t count, uint16_t level)
{
	struct xfs_da3_node_hdr *h = (void *)buf;
	struct xfs_da_node_entry *e = (void *)(buf + sizeof(*h));

	memset(buf, 0, BLK);
	h->info.hdr.magic = to_be16(XFS_DA3_NODE_MAGIC);
	h->info.blkno = to_be64(DADDR);
	h->info.owner = to_be64(OWNER);
	memcpy(&h->info.uuid, f->g.meta_uuid, 16);
	h->__count = to_be16(count);
	h->__level = to_be16(level);
	for (uint16_t i = 0; i < count && i < fs_da3_node_maxents(BLK); i++) {
		e[i].hashval = to_be32(0x1000u * (i + 1));
		e[i].before = to_be32((uint32_t)(XFS_DIR2_LEAF_OFFSET >> 12) + 1 + i);
	}
	fs_crc_update(buf, BLK, XFS_DA3_NODE_CRC_OFF);
}

static int verify(const struct fx *f, unsigned char *buf, size_t len, struct fs_findings *fl)
{
	struct fs_vctx c = fx_vctx(f, 0, fl);

	c.daddr = DADDR;
	c.ino = OWNER;
	return fs_verify(FS_MT_DA_NODE, &c, buf, len);
}

/* Exactly one finding, with this code. */
static void expect_one(struct fs_findings *fl, const char *code)
{
	if (fl->n != 1 || strcmp(fl->v[0].def->code, code)) {
		for (size_t i = 0; i < fl->n; i++)
			print_message("# got %s (%s)\n", fl->v[i].def->code, fl->v[i].field);
		fail_msg("expected exactly one %s, got %zu findings", code, fl->n);
	}
}

static void test_node_good(void **st)
{
	static unsigned char buf[BLK];
	struct fs_findings fl;
	struct fs_da_node n;
	struct fx f;

	(void)st;
	fx_init_default(&f);
	fs_findings_init(&fl);
	build_node(&f, buf, 3, 1);
	assert_int_equal(verify(&f, buf, BLK, &fl), 0);
	assert_int_equal(fs_da3_node_decode(buf, BLK, &n), 0);
	assert_int_equal(n.count, 3);
	assert_int_equal(n.level, 1);
	assert_int_equal(fs_da_node_hash(&n, 2), 0x3000);
	assert_int_equal(fs_da_node_before(&n, 0), (XFS_DIR2_LEAF_OFFSET >> 12) + 1);
	/* full node: maxents entries */
	build_node(&f, buf, (uint16_t)fs_da3_node_maxents(BLK), 2);
	assert_int_equal(verify(&f, buf, BLK, &fl), 0);
	assert_int_equal(fs_da3_node_maxents(BLK), (BLK - 64) / 8);
	fs_findings_free(&fl);
}

struct damage {
	const char *code;
	void (*fn)(unsigned char *buf);
	bool recrc;
};

static void d_owner(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->info.owner = to_be64(132); }
static void d_blkno(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->info.blkno = to_be64(8); }
static void d_level0(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->__level = 0; }
static void d_level9(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->__level = to_be16(9); }
static void d_count0(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->__count = 0; }
static void d_countbig(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->__count = to_be16(0xffff); }
static void d_order(unsigned char *b)
{
	struct xfs_da_node_entry *e = (void *)(b + sizeof(struct xfs_da3_node_hdr));
	e[2].hashval = to_be32(1);
}
static void d_crc(unsigned char *b) { b[200] ^= 1; }
static void d_magic(unsigned char *b) { ((struct xfs_da3_node_hdr *)b)->info.hdr.magic = to_be16(XFS_DIR3_LEAFN_MAGIC); }
static void d_uuid(unsigned char *b) { b[offsetof(struct xfs_da3_node_hdr, info.uuid) + 3] ^= 0x40; }

static void test_node_damage(void **st)
{
	static const struct damage cases[] = {
		{ "da.owner", d_owner, true }, { "da.blkno", d_blkno, true },
		{ "da.level", d_level0, true }, { "da.level", d_level9, true },
		{ "da.count", d_count0, true }, { "da.count", d_countbig, true },
		{ "da.order", d_order, true }, { "da.crc", d_crc, false },
		{ "da.magic", d_magic, true }, { "da.uuid", d_uuid, true },
	};
	static unsigned char buf[BLK];
	struct fx f;

	(void)st;
	fx_init_default(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_findings fl;

		fs_findings_init(&fl);
		build_node(&f, buf, 3, 1);
		cases[i].fn(buf);
		if (cases[i].recrc)
			fs_crc_update(buf, BLK, XFS_DA3_NODE_CRC_OFF);
		verify(&f, buf, BLK, &fl);
		expect_one(&fl, cases[i].code);
		fs_findings_free(&fl);
	}
}

static void test_node_hostile(void **st)
{
	static unsigned char buf[BLK];
	unsigned char *small;
	struct fs_findings fl;
	struct fs_da_node n;
	struct fx f;

	(void)st;
	fx_init_default(&f);
	fs_findings_init(&fl);
	/* a count that fits 4 KiB but not a 256-byte buffer: decode refuses, verify reports */
	build_node(&f, buf, 100, 1);
	small = malloc(256);
	memcpy(small, buf, 256);
	assert_int_equal(fs_da3_node_decode(small, 256, &n), -EINVAL);
	assert_null(n.ents);
	verify(&f, small, 256, &fl);
	assert_true(fs_findings_has(&fl, FS_C_DA_COUNT));
	/* shorter than the header: decode refuses, verify says short magic/buffer */
	assert_int_equal(fs_da3_node_decode(small, 16, &n), -EINVAL);
	fs_findings_free(&fl);
	fs_findings_init(&fl);
	verify(&f, small, 8, &fl);
	assert_true(fs_findings_has(&fl, FS_C_DA_MAGIC));
	free(small);
	fs_findings_free(&fl);
}

static void test_node_ptrs(void **st)
{
	static unsigned char buf[BLK];
	struct fs_findings fl;
	struct fs_da_node n;
	struct fs_vctx c;
	struct fx f;
	uint32_t lo = (uint32_t)(XFS_DIR2_LEAF_OFFSET >> 12);

	(void)st;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = fx_vctx(&f, 0, &fl);
	c.ino = OWNER;
	build_node(&f, buf, 3, 1);
	assert_int_equal(fs_da3_node_decode(buf, BLK, &n), 0);
	assert_int_equal(fs_da3_node_check_ptrs(&c, &n, lo, lo, lo + 10), 0);
	/* the range ends before the third child */
	assert_int_equal(fs_da3_node_check_ptrs(&c, &n, lo, lo, lo + 3), 1);
	/* a child pointing at the node itself */
	assert_int_equal(fs_da3_node_check_ptrs(&c, &n, lo + 2, lo, lo + 10), 1);
	assert_int_equal(fl.n, 2);
	assert_string_equal(fl.v[0].def->code, "da.ptr");
	assert_string_equal(fl.v[1].field, "btree[1].before");
	fs_findings_free(&fl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_oracle),
		cmocka_unit_test(test_hash_ci),
		cmocka_unit_test(test_node_good),
		cmocka_unit_test(test_node_damage),
		cmocka_unit_test(test_node_hostile),
		cmocka_unit_test(test_node_ptrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
