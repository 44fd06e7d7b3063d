// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the AGF-rooted btree descriptions: key order of bno, cnt,
 * rmap and refcount keys, and each record type's own rules, over the core
 * fixture's geometry (4 KiB blocks, 4 AGs of 16384 blocks, last AG 10000).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "libfs/format/btree_ag.h"
#include "libfs/format/endian.h"
#include "tests/libfs/fixture.h"

static void alloc_rec(unsigned char *r, uint32_t start, uint32_t len)
{
	put_be32(r, start);
	put_be32(r + 4, len);
}

static void test_alloc(void **state)
{
	const struct fs_btree_ops *bno = fs_btree_ag_ops(FS_BTREE_AG_BNO);
	const struct fs_btree_ops *cnt = fs_btree_ag_ops(FS_BTREE_AG_CNT);
	unsigned char a[8], b[8], ka[8], kb[8];
	struct fs_alloc_rec r;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	assert_non_null(bno);
	assert_non_null(cnt);
	assert_null(fs_btree_ag_ops(FS_BTREE_AG_NR));
	assert_int_equal(bno->magic, XFS_ABTB_CRC_MAGIC);
	assert_int_equal(cnt->magic, XFS_ABTC_CRC_MAGIC);
	assert_int_equal(fs_btree_maxrecs(bno, 4096, true), (4096 - XFS_BTREE_SBLOCK_CRC_LEN) / 8);

	alloc_rec(a, 100, 50);
	alloc_rec(b, 200, 10);
	bno->rec_key(a, ka);
	bno->rec_key(b, kb);
	assert_true(bno->key_cmp(ka, kb) < 0);	/* by start */
	assert_true(cnt->key_cmp(ka, kb) > 0);	/* by length first */
	alloc_rec(b, 200, 50);
	cnt->rec_key(b, kb);
	assert_true(cnt->key_cmp(ka, kb) < 0);	/* same length: by start */
	assert_int_equal(cnt->key_cmp(ka, ka), 0);

	fs_alloc_rec_decode(a, &r);
	assert_int_equal(r.startblock, 100);
	assert_int_equal(r.blockcount, 50);
	assert_null(fs_alloc_rec_problem(&f.g, 0, &r));
	r.blockcount = 0;
	assert_non_null(fs_alloc_rec_problem(&f.g, 0, &r));
	r = (struct fs_alloc_rec){ 0, 1 };	/* on the headers */
	assert_non_null(fs_alloc_rec_problem(&f.g, 0, &r));
	r = (struct fs_alloc_rec){ 16000, 384 };
	assert_null(fs_alloc_rec_problem(&f.g, 0, &r));
	assert_non_null(fs_alloc_rec_problem(&f.g, 3, &r));	/* the short last AG */
	r = (struct fs_alloc_rec){ 16000, 0xffffffffu };	/* overflow */
	assert_non_null(fs_alloc_rec_problem(&f.g, 0, &r));
	assert_true(bno->rec_valid(&f.g, 0, a));
}

static void rmap_rec(unsigned char *r, uint32_t start, uint32_t len, uint64_t owner, uint64_t off)
{
	put_be32(r + offsetof(struct xfs_rmap_rec, rm_startblock), start);
	put_be32(r + offsetof(struct xfs_rmap_rec, rm_blockcount), len);
	put_be64(r + offsetof(struct xfs_rmap_rec, rm_owner), owner);
	put_be64(r + offsetof(struct xfs_rmap_rec, rm_offset), off);
}

static void test_rmap(void **state)
{
	const struct fs_btree_ops *ops = fs_btree_ag_ops(FS_BTREE_AG_RMAP);
	unsigned char a[sizeof(struct xfs_rmap_rec)], b[sizeof(struct xfs_rmap_rec)];
	unsigned char ka[sizeof(struct xfs_rmap_key)], kb[sizeof(struct xfs_rmap_key)];
	struct fs_rmap_rec r;
	struct fx f;
	uint64_t ino;

	(void)state;
	fx_init_default(&f);
	ino = fs_agino_to_ino(&f.g, 0, 128);
	assert_true(ops->overlapping);
	/* same block and owner: the offset orders; unwritten does not */
	rmap_rec(a, 500, 4, ino, 10 | XFS_RMAP_OFF_UNWRITTEN);
	rmap_rec(b, 500, 4, ino, 10);
	ops->rec_key(a, ka);
	ops->rec_key(b, kb);
	assert_int_equal(ops->key_cmp(ka, kb), 0);
	rmap_rec(b, 500, 4, ino, 11);
	ops->rec_key(b, kb);
	assert_true(ops->key_cmp(ka, kb) < 0);
	rmap_rec(b, 500, 4, ino + 1, 0);
	ops->rec_key(b, kb);
	assert_true(ops->key_cmp(ka, kb) < 0);

	fs_rmap_rec_decode(a, &r);
	assert_true(r.unwritten);
	assert_int_equal(r.offset, 10);
	assert_null(fs_rmap_rec_problem(&f.g, 0, &r));
	/* the AG headers belong to OWN_FS, as one mapping */
	rmap_rec(a, 0, f.g.ag_hdr_blocks, XFS_RMAP_OWN_FS, 0);
	fs_rmap_rec_decode(a, &r);
	assert_null(fs_rmap_rec_problem(&f.g, 0, &r));
	rmap_rec(a, 0, f.g.ag_hdr_blocks, XFS_RMAP_OWN_AG, 0);
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	/* special owners have no offset or flags; unknown special owners are invalid */
	rmap_rec(a, 600, 1, XFS_RMAP_OWN_AG, 5);
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	rmap_rec(a, 600, 1, XFS_RMAP_OWN_MIN - 1, 0);
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	/* bmbt blocks have no offset; unwritten never with attr fork */
	rmap_rec(a, 600, 1, ino, XFS_RMAP_OFF_BMBT_BLOCK | 3);
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	rmap_rec(a, 600, 1, ino, XFS_RMAP_OFF_ATTR_FORK | XFS_RMAP_OFF_UNWRITTEN);
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	rmap_rec(a, 16383, 2, ino, 0);		/* past the AG */
	fs_rmap_rec_decode(a, &r);
	assert_non_null(fs_rmap_rec_problem(&f.g, 0, &r));
	assert_false(ops->rec_valid(&f.g, 0, a));
	/* high keys: the last block, and for file data the offset with it */
	assert_non_null(ops->rec_high_key);
	rmap_rec(a, 500, 4, ino, 10 | XFS_RMAP_OFF_ATTR_FORK);
	ops->rec_high_key(a, ka);
	assert_int_equal(get_be32(ka + offsetof(struct xfs_rmap_key, rm_startblock)), 503);
	assert_int_equal(get_be64(ka + offsetof(struct xfs_rmap_key, rm_owner)), ino);
	assert_int_equal(get_be64(ka + offsetof(struct xfs_rmap_key, rm_offset)),
			 13 | XFS_RMAP_OFF_ATTR_FORK);
	rmap_rec(a, 500, 4, ino, XFS_RMAP_OFF_BMBT_BLOCK);	/* bmbt blocks have no offset */
	ops->rec_high_key(a, ka);
	assert_int_equal(get_be64(ka + offsetof(struct xfs_rmap_key, rm_offset)),
			 XFS_RMAP_OFF_BMBT_BLOCK);
	rmap_rec(a, 500, 4, XFS_RMAP_OWN_AG, 0);		/* nor do static owners */
	ops->rec_high_key(a, ka);
	assert_int_equal(get_be32(ka + offsetof(struct xfs_rmap_key, rm_startblock)), 503);
	assert_int_equal(get_be64(ka + offsetof(struct xfs_rmap_key, rm_offset)), 0);
	/* one block: the high key is the low key */
	rmap_rec(a, 700, 1, ino, 42);
	ops->rec_key(a, ka);
	ops->rec_high_key(a, kb);
	assert_int_equal(ops->key_cmp(ka, kb), 0);
}

static void test_refc(void **state)
{
	const struct fs_btree_ops *ops = fs_btree_ag_ops(FS_BTREE_AG_REFC);
	unsigned char a[12], b[12], ka[4], kb[4];
	struct fs_refc_rec r;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	put_be32(a, 9000);
	put_be32(a + 4, 3);
	put_be32(a + 8, 2);
	put_be32(b, 100 | XFS_REFC_COWFLAG);
	put_be32(b + 4, 3);
	put_be32(b + 8, 1);
	ops->rec_key(a, ka);
	ops->rec_key(b, kb);
	/* CoW staging extents sort after every shared extent */
	assert_true(ops->key_cmp(ka, kb) < 0);
	fs_refc_rec_decode(a, &r);
	assert_false(r.cow);
	assert_null(fs_refc_rec_problem(&f.g, 0, &r));
	fs_refc_rec_decode(b, &r);
	assert_true(r.cow);
	assert_int_equal(r.startblock, 100);
	assert_null(fs_refc_rec_problem(&f.g, 0, &r));
	r.refcount = 2;
	assert_non_null(fs_refc_rec_problem(&f.g, 0, &r));
	fs_refc_rec_decode(a, &r);
	r.refcount = 1;
	assert_non_null(fs_refc_rec_problem(&f.g, 0, &r));
	r.refcount = 2;
	r.blockcount = 0;
	assert_non_null(fs_refc_rec_problem(&f.g, 0, &r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_rmap),
		cmocka_unit_test(test_refc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
