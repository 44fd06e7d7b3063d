// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the free-space plan (libfs/build/freesp.c): blocks for the bno
 * and cnt trees and the AGFL come out of the free extents; what remains
 * plus what was taken is exactly what was free; the geometry fits the
 * remaining records; the trees built on the planned blocks walk back to
 * the remaining extents; the AGFL minimum follows the kernel's formula.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/build/bload.h"
#include "libfs/build/encode.h"
#include "libfs/build/freesp.h"
#include "tests/libfs/bload_rt.h"

static struct fs_geom G;

/* Free extents: count of them, every len blocks long, gap blocks apart, from block 100. */
static struct fs_alloc_rec *extents(size_t count, uint32_t len, uint32_t gap)
{
	struct fs_alloc_rec *e = calloc(count, sizeof(*e));

	for (size_t i = 0; i < count; i++)
		e[i] = (struct fs_alloc_rec){ 100 + (uint32_t)i * (len + gap), len };
	return e;
}

/* A block bitmap of the AG: set for every block of the extents. */
static void mark(unsigned char *map, const struct fs_alloc_rec *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (uint32_t b = 0; b < e[i].blockcount; b++)
			map[e[i].startblock + b]++;
}

/* Remaining + taken = the original free space, each block once. */
static void check_conserved(const struct fs_alloc_rec *orig, size_t norig,
			    const struct fs_alloc_rec *left, size_t nleft,
			    const struct fs_freesp_plan *p)
{
	unsigned char *before = calloc(G.agblocks, 1), *after = calloc(G.agblocks, 1);

	mark(before, orig, norig);
	mark(after, left, nleft);
	for (uint64_t i = 0; i < p->ntree_blocks; i++)
		after[p->tree_blocks[i]]++;
	for (uint32_t i = 0; i < p->agfl_count; i++)
		after[p->agfl[i]]++;
	assert_memory_equal(before, after, G.agblocks);
	for (uint32_t b = 0; b < G.agblocks; b++)
		assert_true(after[b] <= 1);
	free(before);
	free(after);
}

static void plan_case(size_t count, uint32_t len, uint32_t gap, uint32_t want)
{
	struct fs_alloc_rec *e = extents(count, len, gap), *orig = extents(count, len, gap);
	struct fs_freesp_plan p = { .slack = { -1, -1 }, .agfl_want = want };
	size_t n = count;
	struct fs_bload_geom bno, cnt;

	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), 0);
	assert_true(n <= count);
	assert_true(p.agfl_count >= want);
	assert_true(p.agfl_count <= G.agfl_size);
	/* the trees fit the records that remain, exactly */
	assert_int_equal(fs_bload_compute_geometry(fs_btree_ag_ops(FS_BTREE_AG_BNO), G.blocksize, n,
						   &p.slack, 0, &bno), 0);
	assert_int_equal(fs_bload_compute_geometry(fs_btree_ag_ops(FS_BTREE_AG_CNT), G.blocksize, n,
						   &p.slack, 0, &cnt), 0);
	assert_int_equal(p.ntree_blocks, bno.nblocks + cnt.nblocks);
	assert_int_equal(p.bno.nblocks, bno.nblocks);
	assert_int_equal(p.cnt.nblocks, cnt.nblocks);
	check_conserved(orig, count, e, n, &p);
	fs_freesp_plan_free(&p);
	free(e);
	free(orig);
}

static void test_plan_shapes(void **state)
{
	(void)state;
	plan_case(1, 10000, 0, 8);        /* one big extent: cut from its end */
	plan_case(1, 20, 0, 0);
	plan_case(3000, 1, 1, 10);        /* single blocks: every cut uses one up */
	plan_case(3000, 2, 3, 6);
	plan_case(500, 7, 2, 0);
}

static void test_plan_refusals(void **state)
{
	struct fs_alloc_rec e[3] = { { 100, 2 }, { 200, 1 }, { 150, 5 } };
	struct fs_freesp_plan p = { .slack = { -1, -1 } };
	size_t n = 3;

	(void)state;
	/* unsorted */
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -EINVAL);
	assert_int_equal(n, 3);
	/* overlapping */
	e[1] = (struct fs_alloc_rec){ 101, 3 };
	e[2] = (struct fs_alloc_rec){ 300, 5 };
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -EINVAL);
	/* empty extent */
	e[1] = (struct fs_alloc_rec){ 150, 0 };
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -EINVAL);
	/* too little space for two roots and the AGFL */
	e[1] = (struct fs_alloc_rec){ 150, 1 };
	p.agfl_want = 8;
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -ENOSPC);
	assert_int_equal(e[0].blockcount, 2);
	/* an AGFL larger than the AGFL */
	p.agfl_want = G.agfl_size + 1;
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -EINVAL);
	/* nothing free at all */
	n = 0;
	p.agfl_want = 0;
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), -ENOSPC);
}

/* ---- the plan used: both trees built on its blocks, walked back ---- */

struct store {
	unsigned char *blk;        /* agblocks * blocksize */
	const fs_agblock_t *list;
	uint64_t next, end;
	const struct fs_alloc_rec *want;
	size_t nwant, idx;
	bool same;
};

static int st_alloc(void *priv, uint64_t *ptr)
{
	struct store *s = priv;

	if (s->next >= s->end)
		return -ENOSPC;
	*ptr = s->list[s->next++];
	return 0;
}

static int st_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct store *s = priv;

	(void)level;
	memcpy(s->blk + ptr * G.blocksize, block, G.blocksize);
	return 0;
}

static int st_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct store *s = priv;

	(void)agno;
	memcpy(buf, s->blk + (uint64_t)agbno * G.blocksize, G.blocksize);
	return 0;
}

static int st_rec(void *priv, const void *rec)
{
	struct store *s = priv;
	struct fs_alloc_rec r;

	fs_alloc_rec_decode(rec, &r);
	if (s->idx >= s->nwant || r.startblock != s->want[s->idx].startblock ||
	    r.blockcount != s->want[s->idx].blockcount)
		s->same = false;
	s->idx++;
	return 0;
}

static int cmp_cnt(const void *a, const void *b)
{
	const struct fs_alloc_rec *x = a, *y = b;

	if (x->blockcount != y->blockcount)
		return x->blockcount < y->blockcount ? -1 : 1;
	return x->startblock < y->startblock ? -1 : x->startblock > y->startblock;
}

static void test_plan_build(void **state)
{
	struct fs_alloc_rec *e = extents(4000, 1, 2), *bycnt;
	struct fs_freesp_plan p = { .slack = { 0, 0 }, .agfl_want = fs_agfl_min_blocks(&G, 2, 2, 3) };
	size_t n = 4000;
	struct store s = { .same = true };
	unsigned char *recs;

	(void)state;
	s.blk = calloc(G.agblocks, G.blocksize);
	assert_non_null(s.blk);
	assert_int_equal(fs_freesp_plan(&G, e, &n, &p), 0);
	assert_true(n < 4000);	/* single-block extents: the plan used some up */
	recs = malloc(n * sizeof(xfs_alloc_rec_t));
	bycnt = malloc(n * sizeof(*bycnt));
	memcpy(bycnt, e, n * sizeof(*bycnt));
	qsort(bycnt, n, sizeof(*bycnt), cmp_cnt);
	s.list = p.tree_blocks;
	for (int t = 0; t < 2; t++) {
		const struct fs_alloc_rec *v = t ? bycnt : e;
		struct fs_bload b = {
			.ops = fs_btree_ag_ops(t ? FS_BTREE_AG_CNT : FS_BTREE_AG_BNO), .g = &G,
			.agno = RT_AGNO, .slack = p.slack, .nrecs = n, .recs = recs,
			.alloc_block = st_alloc, .write_block = st_write, .priv = &s,
		};
		struct fs_findings fl;
		struct fs_btree_walk w = { .ops = b.ops, .g = &G, .read_block = st_read,
					   .visit_rec = st_rec, .priv = &s };

		for (size_t i = 0; i < n; i++)
			fs_enc_alloc_rec(recs + i * sizeof(xfs_alloc_rec_t), v[i].startblock,
					 v[i].blockcount);
		s.end = s.next + (t ? p.cnt.nblocks : p.bno.nblocks);
		assert_int_equal(fs_bload_build(&b), 0);
		assert_int_equal(s.next, s.end);	/* exactly the planned blocks */
		fs_findings_init(&fl);
		w.fl = &fl;
		w.vc.g = &G;
		w.vc.fl = &fl;
		w.vc.agno = RT_AGNO;
		w.root = (fs_agblock_t)b.root;
		w.nlevels = b.nlevels;
		s.want = v;
		s.nwant = n;
		s.idx = 0;
		assert_int_equal(fs_btree_walk(&w), 0);
		assert_int_equal(fl.n, 0);
		assert_int_equal(s.idx, n);
		assert_true(s.same);
		assert_true(b.nlevels >= 2);
		fs_findings_free(&fl);
	}
	assert_int_equal(s.next, p.ntree_blocks);
	fs_freesp_plan_free(&p);
	free(recs);
	free(bycnt);
	free(e);
	free(s.blk);
}

static void test_agfl_min(void **state)
{
	(void)state;
	/* min(level + 1, maxlevels) * 2 - 2 per tree */
	assert_int_equal(fs_agfl_min_blocks(&G, 1, 1, 0), 4);
	assert_int_equal(fs_agfl_min_blocks(&G, 1, 1, 1), 6);
	assert_int_equal(fs_agfl_min_blocks(&G, 2, 2, 3), 4 + 4 + 6);
	/* capped by the trees' maximum heights */
	assert_int_equal(fs_agfl_min_blocks(&G, 40, 0, 0), G.alloc_maxlevels * 2 - 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_shapes),
		cmocka_unit_test(test_plan_refusals),
		cmocka_unit_test(test_plan_build),
		cmocka_unit_test(test_agfl_min),
	};

	if (rt_geom(1024, &G))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
