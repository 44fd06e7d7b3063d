// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libfs/format/btree.c and libfs/io/workq.c: the generic walker on
 * inode btrees built in memory (a good tree visited in key order; a bad
 * magic, a loop, a level mismatch, a misordered record, a broken sibling
 * link, a root outside the AG and an impossible height each reported
 * without a crash; an LSN past the log head reported but followed; random
 * damage under a valid CRC), inobt record rules,
 * and the per-AG worker pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/btree.h"
#include "libfs/format/endian.h"
#include "libfs/io/workq.h"
#include "tests/libfs/fixture.h"

#define FIRST 16   /* first AG block the fake tree may use */
#define NBLK  64
#define AGNO  1

struct tree {
	struct fx f;
	unsigned char *blk[NBLK];   /* AG blocks FIRST..FIRST+NBLK-1 */
	uint32_t recs[256];          /* startinos visited */
	unsigned nrecs;
	int reads;
};

static unsigned char *B(struct tree *t, uint32_t agbno)
{
	return t->blk[agbno - FIRST];
}

static void hdr(struct tree *t, uint32_t agbno, uint16_t level, uint16_t numrecs, uint32_t left,
		uint32_t right)
{
	struct xfs_btree_block *b = (struct xfs_btree_block *)B(t, agbno);

	memset(b, 0, t->f.g.blocksize);
	b->bb_magic = to_be32(XFS_IBT_CRC_MAGIC);
	b->bb_level = to_be16(level);
	b->bb_numrecs = to_be16(numrecs);
	b->bb_u.s.bb_leftsib = to_be32(left);
	b->bb_u.s.bb_rightsib = to_be32(right);
	b->bb_u.s.bb_blkno = to_be64(fs_agbno_to_daddr(&t->f.g, AGNO, agbno));
	b->bb_u.s.bb_owner = to_be32(AGNO);
	memcpy(&b->bb_u.s.bb_uuid, t->f.g.meta_uuid, 16);
}

static void crc(struct tree *t, uint32_t agbno)
{
	fs_crc_update(B(t, agbno), t->f.g.blocksize, XFS_BTREE_SBLOCK_CRC_OFF);
}

/* A leaf with n records, all inodes allocated, starting at chunk first_chunk. */
static void leaf(struct tree *t, uint32_t agbno, uint32_t first_chunk, unsigned n, uint32_t left,
		 uint32_t right)
{
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_INO);

	hdr(t, agbno, 0, (uint16_t)n, left, right);
	for (unsigned i = 0; i < n; i++) {
		struct xfs_inobt_rec *r = (struct xfs_inobt_rec *)fs_btree_rec(ops, B(t, agbno), i);

		r->ir_startino = to_be32((first_chunk + i) * 64);
		r->ir_u.sp.ir_holemask = 0;
		r->ir_u.sp.ir_count = 64;
		r->ir_u.sp.ir_freecount = 0;
		r->ir_free = 0;
	}
	crc(t, agbno);
}

/* A level-1 node over the given children; keys are their first startinos. */
static void node(struct tree *t, uint32_t agbno, const uint32_t *child, const uint32_t *key,
		 unsigned n)
{
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_INO);
	uint32_t maxr = fs_btree_maxrecs(ops, t->f.g.blocksize, false);
	unsigned char *b = B(t, agbno);

	hdr(t, agbno, 1, (uint16_t)n, NULLAGBLOCK, NULLAGBLOCK);
	for (unsigned i = 0; i < n; i++) {
		put_be32((unsigned char *)fs_btree_key(ops, b, i), key[i]);
		put_be32(b + XFS_BTREE_SBLOCK_CRC_LEN + maxr * 4 + i * 4, child[i]);
	}
	crc(t, agbno);
}

/* root 16 (level 1) -> leaves 17, 18, 19 with 3 records each: chunks 0..8 */
static void good_tree(struct tree *t)
{
	static const uint32_t child[] = { 17, 18, 19 };
	static const uint32_t key[] = { 0 * 64, 3 * 64, 6 * 64 };

	leaf(t, 17, 0, 3, NULLAGBLOCK, 18);
	leaf(t, 18, 3, 3, 17, 19);
	leaf(t, 19, 6, 3, 18, NULLAGBLOCK);
	node(t, 16, child, key, 3);
}

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	fx_init_default(&t->f);
	for (int i = 0; i < NBLK; i++)
		t->blk[i] = calloc(1, t->f.g.blocksize);
	good_tree(t);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;

	for (int i = 0; i < NBLK; i++)
		free(t->blk[i]);
	free(t);
	return 0;
}

static int rd(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct tree *t = priv;

	assert_int_equal(agno, AGNO);
	t->reads++;
	if (agbno < FIRST || agbno >= FIRST + NBLK)
		return -5;
	memcpy(buf, B(t, agbno), t->f.g.blocksize);
	return 0;
}

static int visit(void *priv, const void *rec)
{
	struct tree *t = priv;

	if (t->nrecs < 256)
		t->recs[t->nrecs++] = get_be32(rec);
	return 0;
}

static int walk(struct tree *t, struct fs_findings *fl, uint32_t root, uint32_t levels)
{
	struct fs_btree_walk w = {
		.ops = fs_btree_ops_get(FS_BTREE_INO), .g = &t->f.g, .fl = fl,
		.vc = fx_vctx(&t->f, AGNO, fl), .root = root, .nlevels = levels,
		.read_block = rd, .visit_rec = visit, .priv = t,
	};
	int err;

	t->nrecs = 0;
	t->reads = 0;
	err = fs_btree_walk(&w);
	assert_int_equal(err, 0);
	return (int)w.bad_blocks;
}

static void test_good(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;

	fs_findings_init(&fl);
	assert_int_equal(walk(t, &fl, 16, 2), 0);
	if (fl.n)
		fx_dump(&fl);
	assert_int_equal(fl.n, 0);
	assert_int_equal(t->nrecs, 9);
	for (unsigned i = 0; i < 9; i++)
		assert_int_equal(t->recs[i], i * 64);
	assert_int_equal(t->reads, 4);
	fs_findings_free(&fl);
}

static void test_bad_magic(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;

	fs_findings_init(&fl);
	put_be32(B(t, 18), XFS_FIBT_CRC_MAGIC);
	crc(t, 18);
	assert_int_equal(walk(t, &fl, 16, 2), 1);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_MAGIC));
	/* the other leaves are still visited, in order */
	assert_int_equal(t->nrecs, 6);
	assert_int_equal(t->recs[2], 2 * 64);
	assert_int_equal(t->recs[3], 6 * 64);
	fs_findings_free(&fl);
}

static void test_loop(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;
	static const uint32_t self[] = { 17, 16, 19 };
	static const uint32_t twice[] = { 17, 17, 19 };
	static const uint32_t key[] = { 0, 3 * 64, 6 * 64 };

	fs_findings_init(&fl);
	node(t, 16, self, key, 3);	/* the root names itself as a child */
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_LOOP));
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	node(t, 16, twice, key, 3);	/* one leaf reached twice */
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_LOOP));
	assert_int_equal(t->nrecs, 6);
	fs_findings_free(&fl);
}

static void test_level_mismatch(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;

	fs_findings_init(&fl);
	B(t, 19)[5] = 1;	/* bb_level low byte: a "node" where a leaf must be */
	crc(t, 19);
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_LEVEL));
	assert_int_equal(t->nrecs, 6);
	fs_findings_free(&fl);

	/* the AGI claims one level too few: the root is not a leaf */
	fs_findings_init(&fl);
	good_tree(t);
	walk(t, &fl, 16, 1);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_LEVEL));
	assert_int_equal(t->nrecs, 0);
	fs_findings_free(&fl);
}

static void test_order_and_siblings(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_INO);

	fs_findings_init(&fl);
	/* a record going backwards inside a leaf */
	put_be32((unsigned char *)fs_btree_rec(ops, B(t, 18), 1), 64);
	crc(t, 18);
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_ORDER));
	assert_int_equal(t->nrecs, 8);
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	good_tree(t);
	leaf(t, 18, 3, 3, 17, 42);	/* right sibling is not the next leaf */
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_SIBLING));
	assert_int_equal(t->nrecs, 9);
	fs_findings_free(&fl);
}

static void test_bad_root_and_height(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;

	fs_findings_init(&fl);
	walk(t, &fl, t->f.g.agblocks + 5, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_PTR));
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	walk(t, &fl, 16, 60);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_DEPTH));
	assert_int_equal(t->reads, 0);
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	walk(t, &fl, 16, 0);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_DEPTH));
	fs_findings_free(&fl);

	/* a block from another AG, or claiming another address */
	fs_findings_init(&fl);
	put_be32(B(t, 17) + offsetof(struct xfs_btree_block, bb_u.s.bb_owner), 7);
	crc(t, 17);
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_OWNER));
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	good_tree(t);
	put_be64(B(t, 17) + offsetof(struct xfs_btree_block, bb_u.s.bb_blkno), 12345);
	crc(t, 17);
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_BLKNO));
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	good_tree(t);
	B(t, 19)[XFS_BTREE_SBLOCK_CRC_LEN + 3] ^= 1;	/* no CRC update */
	walk(t, &fl, 16, 2);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_CRC));
	fs_findings_free(&fl);
}

/* An LSN past the log head is reported, but the block is still followed. */
static void test_lsn_not_fatal(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;

	fs_findings_init(&fl);
	put_be64(B(t, 18) + offsetof(struct xfs_btree_block, bb_u.s.bb_lsn), 9ull << 32);
	crc(t, 18);
	assert_int_equal(walk(t, &fl, 16, 2), 0);
	assert_true(fs_findings_has(&fl, FS_C_INOBT_LSN));
	assert_int_equal(t->nrecs, 9);
	fs_findings_free(&fl);
}

/* Random damage with valid CRCs, pointers included: findings, never a crash or a hang. */
static void test_random(void **state)
{
	struct tree *t = *state;
	struct fs_findings fl;
	unsigned seed = 424242;

	fs_findings_init(&fl);
	for (int round = 0; round < 3000; round++) {
		good_tree(t);
		for (int k = 0; k < 1 + round % 6; k++) {
			uint32_t agbno = 16 + (seed >> 3) % 4;
			size_t off;

			seed = seed * 1103515245 + 12345;
			off = (seed >> 9) % 160;
			if (round % 3 == 0)	/* aim at the pointers of the root */
				off = XFS_BTREE_SBLOCK_CRC_LEN +
				      fs_btree_maxrecs(fs_btree_ops_get(FS_BTREE_INO), t->f.g.blocksize,
						       false) * 4 + (seed >> 5) % 12;
			B(t, agbno)[off] ^= (unsigned char)(seed >> 17) | 1;
			crc(t, agbno);
		}
		walk(t, &fl, 16, 2);
		assert_true(t->reads <= 64);
		fs_findings_clear(&fl);
	}
	fs_findings_free(&fl);
}

static void test_inobt_records(void **state)
{
	struct tree *t = *state;
	struct fs_inobt_rec r = { .startino = 128, .count = 64, .freecount = 2, .free = 3 };

	assert_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	r.startino = 130;
	assert_non_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	r.startino = 128;
	r.freecount = 3;
	assert_non_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	/* sparse: holemask bit 15 covers inodes 60..63, which must be free */
	r.holemask = 0x8000;
	r.count = 60;
	r.free = 0xfull << 60;
	r.freecount = 0;
	assert_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	assert_int_equal(fs_inobt_rec_allocmask(&r), ~(0xfull << 60));
	r.free = 0;	/* holes not marked free */
	assert_non_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	r.free = 0xfull << 60;
	r.count = 64;	/* count disagrees with the hole mask */
	assert_non_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
	/* beyond the AG */
	r = (struct fs_inobt_rec){ .startino = (t->f.g.agblocks + 10) << t->f.g.inopblog,
				   .count = 64 };
	assert_non_null(fs_inobt_rec_problem(&t->f.g, 0, &r));
}

/* ---- the worker pool ---- */

struct wq_seen {
	int count[40];
	int fail_at;
	unsigned max_worker;
};

static int wq_fn(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct wq_seen *s = priv;

	__atomic_add_fetch(&s->count[agno], 1, __ATOMIC_RELAXED);
	if (worker > __atomic_load_n(&s->max_worker, __ATOMIC_RELAXED))
		__atomic_store_n(&s->max_worker, worker, __ATOMIC_RELAXED);
	return (int)agno == s->fail_at ? -7 : 0;
}

static void test_workq(void **state)
{
	(void)state;
	for (unsigned threads = 1; threads <= 5; threads++) {
		for (uint32_t stride = 1; stride <= 4; stride++) {
			struct wq_seen s = { .fail_at = -1 };
			struct fs_ag_workq_opts o = { .threads = threads, .ag_stride = stride,
						      .first_ag = 3, .ag_count = 30 };

			assert_int_equal(fs_ag_workq_run(&o, wq_fn, &s), 0);
			for (int ag = 0; ag < 40; ag++)
				assert_int_equal(s.count[ag], ag >= 3 && ag < 33 ? 1 : 0);
			assert_true(s.max_worker < fs_ag_workq_threads(&o));
		}
	}
	/* a failure is returned and stops further hand-outs */
	{
		struct wq_seen s = { .fail_at = 5 };
		struct fs_ag_workq_opts o = { .threads = 1, .ag_count = 30 };

		assert_int_equal(fs_ag_workq_run(&o, wq_fn, &s), -7);
		assert_int_equal(s.count[6], 0);
	}
	/* never more workers than groups */
	{
		struct fs_ag_workq_opts o = { .threads = 16, .ag_stride = 4, .ag_count = 9 };

		assert_int_equal(fs_ag_workq_threads(&o), 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_and_siblings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_root_and_height, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lsn_not_fatal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inobt_records, setup, teardown),
		cmocka_unit_test(test_workq),
	};

	return cmocka_run_group_tests_name("btree", tests, NULL, NULL);
}
