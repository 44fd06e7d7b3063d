// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the scan's in-core model: ownership extents, overlaps,
 * gaps, the class filter and the free space a rebuild would use, the
 * runs of shared data blocks, inode chunks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "scan/model.h"

static struct fs_geom geom(void)
{
	struct fs_geom g = { 0 };

	g.agcount = 2;
	g.agblocks = 1000;
	g.last_ag_blocks = 500;
	g.agblklog = 10;
	g.blocklog = 12;
	return g;
}

struct ov {
	int n;
	fs_agblock_t at[8];
	uint32_t len[8];
	uint8_t a[8], b[8];
};

static void on_overlap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len,
		       const struct model_ext *a, const struct model_ext *b)
{
	struct ov *o = priv;

	(void)agno;
	if (o->n < 8) {
		o->at[o->n] = agbno;
		o->len[o->n] = len;
		o->a[o->n] = a->cls;
		o->b[o->n] = b->cls;
	}
	o->n++;
}

struct gaps {
	int n;
	fs_agblock_t at[8];
	uint32_t len[8];
};

static void on_gap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct gaps *o = priv;

	(void)agno;
	if (o->n < 8) {
		o->at[o->n] = agbno;
		o->len[o->n] = len;
	}
	o->n++;
}

static void test_bounds(void **state)
{
	struct fs_geom g = geom();
	struct model *m;

	(void)state;
	assert_int_equal(model_create(&g, &m), 0);
	assert_int_equal(model_add(m, 0, 999, 1, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 999, 2, MC_FREE, 0, 0, 0), -EINVAL);
	assert_int_equal(model_add(m, 1, 499, 1, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 1, 500, 1, MC_FREE, 0, 0, 0), -EINVAL);	/* short last AG */
	assert_int_equal(model_add(m, 2, 0, 1, MC_FREE, 0, 0, 0), -EINVAL);
	assert_int_equal(model_add(m, 0, 0, 0, MC_FREE, 0, 0, 0), -EINVAL);
	assert_int_equal(model_add(m, 0, 0xfffffff0u, 0x20, MC_FREE, 0, 0, 0), -EINVAL);
	model_destroy(m);
}

static void test_overlaps_and_gaps(void **state)
{
	struct fs_geom g = geom();
	struct model *m;
	struct ov o = { 0 };
	struct gaps gp = { 0 };
	size_t n;
	const struct model_ext *e;

	(void)state;
	assert_int_equal(model_create(&g, &m), 0);
	/* added out of order, as concurrent scans would */
	assert_int_equal(model_add(m, 0, 100, 50, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 0, 4, MC_AGHDR, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 4, 1, MC_BNOBT, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 5, 1, MC_CNTBT, 0, 0, 0), 0);
	/* a file's data in three adjacent pieces: merged into one extent */
	assert_int_equal(model_add(m, 0, 20, 5, MC_DATA, 131, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 30, 5, MC_DATA, 131, 10, 0), 0);
	assert_int_equal(model_add(m, 0, 25, 5, MC_DATA, 131, 5, 0), 0);
	/* a second file claims blocks inside the free extent: duplicate */
	assert_int_equal(model_add(m, 0, 140, 20, MC_DATA, 132, 0, 0), 0);
	/* the cnt btree block is claimed again (same block, another owner) */
	assert_int_equal(model_add(m, 0, 5, 1, MC_INOBT, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 160, 840, MC_INODES, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 0), 0);

	e = model_ag_extents(m, 0, &n);
	for (size_t i = 1; i < n; i++)
		assert_true(e[i - 1].agbno <= e[i].agbno);
	assert_int_equal(n, 8);
	/* the merged file extent */
	assert_int_equal(e[4].agbno, 20);
	assert_int_equal(e[4].len, 15);
	assert_int_equal(e[4].owner, 131);

	assert_int_equal(model_ag_overlaps(m, 0, on_overlap, &o), 2);
	assert_int_equal(o.at[0], 5);
	assert_int_equal(o.len[0], 1);
	assert_int_equal(o.a[0], MC_CNTBT);
	assert_int_equal(o.b[0], MC_INOBT);
	assert_int_equal(o.at[1], 140);
	assert_int_equal(o.len[1], 10);
	assert_int_equal(o.a[1], MC_FREE);
	assert_int_equal(o.b[1], MC_DATA);

	assert_int_equal(model_ag_gaps(m, 0, on_gap, &gp), 2);
	assert_int_equal(gp.at[0], 6);
	assert_int_equal(gp.len[0], 14);
	assert_int_equal(gp.at[1], 35);
	assert_int_equal(gp.len[1], 65);

	assert_int_equal(model_ag_class_blocks(m, 0, MC_DATA), 35);
	assert_int_equal(model_rmap_owner(MC_BNOBT, 0), XFS_RMAP_OWN_AG);
	assert_int_equal(model_rmap_owner(MC_DATA, 131), 131);
	assert_string_equal(model_class_name(MC_CNTBT), "cnt btree");

	/* the short last AG: its gap ends at its own end */
	memset(&gp, 0, sizeof(gp));
	assert_int_equal(model_add(m, 1, 0, 400, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 1), 0);
	assert_int_equal(model_ag_gaps(m, 1, on_gap, &gp), 1);
	assert_int_equal(gp.at[0], 400);
	assert_int_equal(gp.len[0], 100);
	assert_true(model_bytes(m) > 0);
	model_destroy(m);
}

struct exts {
	int n;
	fs_agblock_t at[8];
	uint8_t cls[8];
};

static void on_ext(void *priv, fs_agnumber_t agno, const struct model_ext *e)
{
	struct exts *o = priv;

	(void)agno;
	if (o->n < 8) {
		o->at[o->n] = e->agbno;
		o->cls[o->n] = e->cls;
	}
	o->n++;
}

/* Extents of owner 200 count as cleared (an inode repair frees). */
static bool drop_owner_200(void *priv, const struct model_ext *e)
{
	(void)priv;
	return e->owner == 200;
}

/*
 * What a rebuild needs: the extents of some classes, and the free space
 * once the old btree blocks, the old AGFL, the old free-space records and
 * cleared owners are no longer counted as owners.
 */
static void test_filter_and_free_gaps(void **state)
{
	struct fs_geom g = geom();
	struct model *m;
	struct exts ex = { 0 };
	struct gaps gp = { 0 };
	uint32_t old_trees = MODEL_CLASS_BIT(MC_FREE) | MODEL_CLASS_BIT(MC_BNOBT) |
			     MODEL_CLASS_BIT(MC_CNTBT) | MODEL_CLASS_BIT(MC_INOBT) |
			     MODEL_CLASS_BIT(MC_AGFL);

	(void)state;
	assert_int_equal(model_create(&g, &m), 0);
	assert_int_equal(model_add(m, 0, 0, 4, MC_AGHDR, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 4, 1, MC_BNOBT, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 5, 1, MC_CNTBT, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 6, 1, MC_INOBT, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 7, 3, MC_AGFL, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 10, 64, MC_INODES, 128, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 74, 26, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 100, 10, MC_DATA, 131, 0, 0), 0);
	/* a cleared inode's data, and a bmbt block of another file inside old free space */
	assert_int_equal(model_add(m, 0, 110, 20, MC_DATA, 200, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 80, 1, MC_BMBT, 131, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 130, 870, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 0), 0);

	/* the old btree blocks, in block order */
	assert_int_equal(model_ag_extents_filter(m, 0, MODEL_CLASS_BIT(MC_BNOBT) |
						 MODEL_CLASS_BIT(MC_CNTBT) |
						 MODEL_CLASS_BIT(MC_INOBT), on_ext, &ex), 3);
	assert_int_equal(ex.at[0], 4);
	assert_int_equal(ex.cls[0], MC_BNOBT);
	assert_int_equal(ex.at[2], 6);
	assert_int_equal(ex.cls[2], MC_INOBT);
	assert_int_equal(model_ag_extents_filter(m, 0, MODEL_CLASS_BIT(MC_DATA), NULL, NULL), 2);
	assert_int_equal(model_ag_extents_filter(m, 0, 0, on_ext, &ex), 0);
	assert_int_equal(model_ag_extents_filter(m, 5, ~0u, on_ext, &ex), 0);

	/* nothing dropped: the extents cover the whole AG */
	assert_int_equal(model_ag_free_gaps(m, 0, 0, on_gap, &gp), 0);
	/* old trees, AGFL and free records dropped: 4..9, 74..79, 81..99, 130..999 are free */
	assert_int_equal(model_ag_free_gaps(m, 0, old_trees, on_gap, &gp), 4);
	assert_int_equal(gp.at[0], 4);
	assert_int_equal(gp.len[0], 6);
	assert_int_equal(gp.at[1], 74);
	assert_int_equal(gp.len[1], 6);
	assert_int_equal(gp.at[2], 81);
	assert_int_equal(gp.len[2], 19);
	assert_int_equal(gp.at[3], 130);
	assert_int_equal(gp.len[3], 870);
	/* and inode 200 cleared: its 110..129 join the last range */
	memset(&gp, 0, sizeof(gp));
	assert_int_equal(model_ag_free_gaps_drop(m, 0, old_trees, drop_owner_200, on_gap, &gp), 4);
	assert_int_equal(gp.at[3], 110);
	assert_int_equal(gp.len[3], 890);
	/* the short last AG, everything dropped: one range, the whole AG */
	memset(&gp, 0, sizeof(gp));
	assert_int_equal(model_add(m, 1, 0, 4, MC_AGHDR, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 1), 0);
	assert_int_equal(model_ag_free_gaps(m, 1, ~0u, on_gap, &gp), 1);
	assert_int_equal(gp.at[0], 0);
	assert_int_equal(gp.len[0], 500);
	model_destroy(m);
}

static void test_free_records_not_merged(void **state)
{
	struct fs_geom g = geom();
	struct model *m;
	size_t n;

	(void)state;
	/* two adjacent free records are a corruption (they should be one): keep both */
	assert_int_equal(model_create(&g, &m), 0);
	assert_int_equal(model_add(m, 0, 10, 5, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_add(m, 0, 15, 5, MC_FREE, 0, 0, 0), 0);
	/* the same free record twice (bno listing it twice) is an overlap */
	assert_int_equal(model_add(m, 0, 15, 5, MC_FREE, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 0), 0);
	model_ag_extents(m, 0, &n);
	assert_int_equal(n, 3);
	assert_int_equal(model_ag_overlaps(m, 0, NULL, NULL), 1);
	model_destroy(m);
}

static void test_ichunks(void **state)
{
	struct fs_geom g = geom();
	struct model *m;
	struct model_ichunk ic = { 0 }, *f;
	const struct model_ichunk *all;
	size_t n;

	(void)state;
	assert_int_equal(model_create(&g, &m), 0);
	for (int i = 3; i >= 0; i--) {
		ic = (struct model_ichunk){ .startino = 128 + 64 * i, .where = MODEL_IC_INOBT,
					    .count = 64, .freecount = (uint8_t)i, .ir_free = (1ull << i) - 1 };
		assert_int_equal(model_add_ichunk(m, 0, &ic), 0);
	}
	/* the finobt lists the chunks with free inodes */
	ic = (struct model_ichunk){ .startino = 128 + 64, .where = MODEL_IC_FINOBT, .fino_free = 1 };
	assert_int_equal(model_add_ichunk(m, 0, &ic), 0);
	assert_int_equal(model_ag_finish_ichunks(m, 0), 0);
	all = model_ag_ichunks(m, 0, &n);
	assert_int_equal(n, 4);
	assert_int_equal(all[0].startino, 128);
	assert_int_equal(all[1].where, MODEL_IC_INOBT | MODEL_IC_FINOBT);
	assert_int_equal(all[1].fino_free, 1);
	assert_int_equal(all[1].ir_free, 1);
	f = model_ichunk_find(m, 0, 128 + 64 * 3 + 63);
	assert_non_null(f);
	assert_int_equal(f->startino, 128 + 64 * 3);
	assert_null(model_ichunk_find(m, 0, 127));
	assert_null(model_ichunk_find(m, 0, 128 + 64 * 4));
	model_destroy(m);
}

/* the slot index gives what a search of the whole array gives */
static const struct model_ichunk *linear_find(const struct model_ichunk *v, size_t n,
					      fs_agino_t agino)
{
	const struct model_ichunk *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i].startino <= agino)
			best = &v[i];
	return best && agino - best->startino < XFS_INODES_PER_CHUNK ? best : NULL;
}

static void test_ichunk_index(void **state)
{
	struct fs_geom g = geom();

	(void)state;
	/* aligned chunks, dense and sparse; misaligned ones (damaged records);
	 * far-apart ones (wide slots) */
	for (int shape = 0; shape < 4; shape++) {
		struct model *m;
		const struct model_ichunk *all;
		size_t n;
		fs_agino_t at = 64;

		srand(shape + 1);
		assert_int_equal(model_create(&g, &m), 0);
		for (int i = 0; i < 300; i++) {
			struct model_ichunk ic = { .where = MODEL_IC_INOBT };

			switch (shape) {
			case 0: at += 64; break;
			case 1: at += 64 * (1 + rand() % 4); break;
			case 2: at += 1 + rand() % 100; break;
			default: at += 64 + (fs_agino_t)(rand() % 200000); break;
			}
			ic.startino = at;
			assert_int_equal(model_add_ichunk(m, 0, &ic), 0);
		}
		assert_int_equal(model_ag_finish_ichunks(m, 0), 0);
		all = model_ag_ichunks(m, 0, &n);
		assert_int_equal(n, 300);
		for (int k = 0; k < 20000; k++) {
			fs_agino_t agino = k < 10000 ? (fs_agino_t)k : (fs_agino_t)rand() % (at + 1000);

			assert_ptr_equal(model_ichunk_find(m, 0, agino), linear_find(all, n, agino));
		}
		assert_ptr_equal(model_ichunk_find(m, 0, at + 63), &all[n - 1]);
		assert_null(model_ichunk_find(m, 0, at + 64));
		assert_null(model_ichunk_find(m, 0, 0xffffffffu));
		model_destroy(m);
	}
}

/*
 * Extents added from many threads (each into its own stripe) all reach
 * the sorted array once the AG is finished, and adds after a finish are
 * picked up by the next one.
 */
struct adder {
	struct model *m;
	unsigned id;
};

static void *add_many(void *p)
{
	struct adder *a = p;

	for (unsigned i = 0; i < 100; i++)	/* owner id: never merged with a neighbour */
		if (model_add(a->m, 0, (fs_agblock_t)(i * 9 + a->id), 1, MC_DATA, a->id + 1, i, 0))
			return p;
	return NULL;
}

static void test_threads(void **state)
{
	const struct fs_geom g = geom();
	struct model *m;
	pthread_t th[9];
	struct adder a[9];
	const struct model_ext *e;
	size_t n;

	(void)state;
	assert_int_equal(model_create(&g, &m), 0);
	for (unsigned i = 0; i < 9; i++) {
		a[i] = (struct adder){ m, i };
		assert_int_equal(pthread_create(&th[i], NULL, add_many, &a[i]), 0);
	}
	for (unsigned i = 0; i < 9; i++) {
		void *r;

		assert_int_equal(pthread_join(th[i], &r), 0);
		assert_null(r);
	}
	assert_int_equal(model_ag_finish(m, 0), 0);
	e = model_ag_extents(m, 0, &n);
	assert_int_equal(n, 900);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(e[i].agbno, i);
		assert_int_equal(e[i].owner, i % 9 + 1);
	}
	assert_int_equal(model_add(m, 0, 950, 10, MC_AGHDR, 0, 0, 0), 0);
	assert_int_equal(model_ag_finish(m, 0), 0);
	e = model_ag_extents(m, 0, &n);
	assert_int_equal(n, 901);
	assert_int_equal(e[900].agbno, 950);
	model_destroy(m);
}

/*
 * Spilled, the model answers as in memory: pseudo-random extents (with
 * duplicates, adjacent runs of one owner, free records) added to two
 * models, one spilling every 3 extents into runs (more than the merge's
 * fan-in of 64, so merge passes run), finished, released and queried
 * again, then added to after the finish and finished again.
 */
static void fill(struct model *m, unsigned seed, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		unsigned r = (seed = seed * 1103515245u + 12345u) >> 8;
		fs_agblock_t b = r % 990;
		uint32_t len = 1 + (r >> 12) % 9;
		enum model_class cls = (r >> 20) % 3 == 0 ? MC_FREE : MC_DATA;

		assert_int_equal(model_add(m, 0, b, len, cls, cls == MC_DATA ? 100 + (r >> 22) % 4 : 0,
					   b, 0), 0);
	}
}

static void same_extents(struct model *a, struct model *b)
{
	size_t na, nb;
	const struct model_ext *ea = model_ag_extents(a, 0, &na), *eb = model_ag_extents(b, 0, &nb);

	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(ea[i].agbno, eb[i].agbno);
		assert_int_equal(ea[i].len, eb[i].len);
		assert_int_equal(ea[i].cls, eb[i].cls);
		assert_int_equal(ea[i].owner, eb[i].owner);
		assert_int_equal(ea[i].offset, eb[i].offset);
	}
	assert_int_equal(model_ag_overlaps(a, 0, NULL, NULL), model_ag_overlaps(b, 0, NULL, NULL));
	assert_int_equal(model_ag_gaps(a, 0, NULL, NULL), model_ag_gaps(b, 0, NULL, NULL));
	assert_int_equal(model_ag_class_blocks(a, 0, MC_DATA), model_ag_class_blocks(b, 0, MC_DATA));
}

static int count_run(void *priv, fs_agblock_t start, uint32_t len, uint32_t count)
{
	uint64_t *sum = priv;

	*sum += (uint64_t)start * 31 + (uint64_t)len * 7 + count;
	return 0;
}

/*
 * b's AG 0 finished and on disk only: the sweeps read it a piece at a
 * time (struct model_cursor) with a's answers, and leave it on disk.
 */
static void same_sweeps(struct model *a, struct model *b)
{
	struct model_cursor c;
	const struct model_ext *e;
	size_t na, i = 0;
	const struct model_ext *ea = model_ag_extents(a, 0, &na);
	uint64_t ra = 0, rb = 0;

	assert_int_equal(b->ag[0].n, 0);
	assert_true(b->ag[0].nhead > 2);		/* several pieces */
	assert_int_equal(model_ag_count(b, 0), na);
	for (model_cursor_open(b, 0, &c); (e = model_cursor_peek(&c)); model_cursor_next(&c)) {
		assert_true(i < na);
		assert_int_equal(e->agbno, ea[i].agbno);
		assert_int_equal(e->len, ea[i].len);
		assert_int_equal(e->cls, ea[i].cls);
		assert_int_equal(e->owner, ea[i].owner);
		assert_int_equal(e->offset, ea[i].offset);
		i++;
	}
	assert_int_equal(model_cursor_close(&c), 0);
	assert_int_equal(i, na);
	assert_int_equal(model_ag_overlaps(a, 0, NULL, NULL), model_ag_overlaps(b, 0, NULL, NULL));
	assert_int_equal(model_ag_gaps(a, 0, NULL, NULL), model_ag_gaps(b, 0, NULL, NULL));
	assert_int_equal(model_ag_class_blocks(a, 0, MC_DATA), model_ag_class_blocks(b, 0, MC_DATA));
	assert_int_equal(model_ag_extents_filter(a, 0, MODEL_CLASS_BIT(MC_FREE), NULL, NULL),
			 model_ag_extents_filter(b, 0, MODEL_CLASS_BIT(MC_FREE), NULL, NULL));
	assert_int_equal(model_ag_shared_runs(a, 0, NULL, count_run, &ra), 0);
	assert_int_equal(model_ag_shared_runs(b, 0, NULL, count_run, &rb), 0);
	assert_true(ra != 0);
	assert_int_equal(ra, rb);
	assert_int_equal(b->ag[0].n, 0);		/* none of it was read back whole */
	assert_int_equal(model_error(b), 0);
}

/*
 * model_ag_shared_runs against a count per block: random data extents
 * (some of one block, some shared many times) and other classes between
 * them, with a drop() that leaves out one owner.
 */
struct sruns {
	uint32_t count[1000];
	int bad, calls;
	fs_agblock_t last_end;
};

static int on_run(void *priv, fs_agblock_t start, uint32_t len, uint32_t count)
{
	struct sruns *r = priv;

	r->calls++;
	if (!len || start < r->last_end || start + len > 1000)
		return r->bad++, 0;
	for (uint32_t b = start; b < start + len; b++)
		if (r->count[b] != count)
			r->bad++;
	for (uint32_t b = r->last_end; b < start; b++)
		if (r->count[b] >= 2)
			r->bad++;	/* a shared block no run named */
	r->last_end = start + len;
	return 0;
}

static bool drop_owner_7(void *priv, const struct model_ext *e)
{
	(void)priv;
	return e->owner == 7;
}

static void test_shared_runs(void **state)
{
	struct fs_geom g = geom();

	(void)state;
	for (unsigned seed = 1; seed <= 20; seed++) {
		struct model *m;
		struct sruns r = { 0 };

		assert_int_equal(model_create(&g, &m), 0);
		srand(seed);
		for (int i = 0; i < 200; i++) {
			fs_agblock_t at = (fs_agblock_t)(rand() % 990);
			uint32_t len = 1 + (uint32_t)(rand() % (i % 3 ? 10 : 2));
			uint64_t owner = 1 + (uint64_t)(rand() % 9);
			bool data = rand() % 4 != 0;

			assert_int_equal(model_add(m, 0, at, len, data ? MC_DATA : MC_INODES, owner,
						   0, 0), 0);
			if (data && owner != 7)
				for (uint32_t b = at; b < at + len; b++)
					r.count[b]++;
		}
		assert_int_equal(model_ag_finish(m, 0), 0);
		assert_int_equal(model_ag_shared_runs(m, 0, drop_owner_7, on_run, &r), 0);
		for (uint32_t b = r.last_end; b < 1000; b++)
			if (r.count[b] >= 2)
				r.bad++;
		assert_int_equal(r.bad, 0);
		assert_true(r.calls > 0);
		model_destroy(m);
	}
}

static void test_spill(void **state)
{
	const struct fs_geom g = geom();
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct model *mem, *sp;
	struct fs_spill *s;

	(void)state;
	assert_int_equal(model_create(&g, &mem), 0);
	assert_int_equal(model_create(&g, &sp), 0);
	assert_int_equal(fs_spill_open(tmp, sizeof(struct model_ext), &s), 0);
	model_set_spill(sp, s, 0, 3);
	fill(mem, 7, 600);
	fill(sp, 7, 600);
	assert_true(fs_spill_runs(s) > 64);
	assert_int_equal(model_ag_finish(mem, 0), 0);
	assert_int_equal(model_ag_finish(sp, 0), 0);
	same_sweeps(mem, sp);
	same_extents(mem, sp);
	model_ag_release(sp, 0);
	assert_int_equal(sp->ag[0].n, 0);		/* gone from memory... */
	same_extents(mem, sp);				/* ...and read back */
	model_ag_release(sp, 0);
	fill(mem, 99, 50);
	fill(sp, 99, 50);
	assert_int_equal(model_ag_finish(mem, 0), 0);
	assert_int_equal(model_ag_finish(sp, 0), 0);
	same_sweeps(mem, sp);				/* the old head and the adds since, merged */
	same_extents(mem, sp);
	assert_int_equal(model_error(sp), 0);
	model_destroy(sp);
	model_destroy(mem);
	fs_spill_close(s);
	/* not a directory: refused when opened */
	assert_int_not_equal(fs_spill_open("/nonexistent-xfsx-dir", 32, &s), 0);
}

/*
 * The spill at the batch a real -m run uses (4096: pieces of 32,768
 * extents, cursors reading 8,192): 100,000 extents that do not merge, in
 * a scrambled order, read back the same way as from memory.
 */
static void test_spill_full_batch(void **state)
{
	struct fs_geom g = geom();
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct model *mem, *sp;
	struct fs_spill *s;
	const unsigned n = 100000;

	(void)state;
	g.agblocks = 1u << 20;
	g.last_ag_blocks = 1u << 20;
	g.agblklog = 20;
	assert_int_equal(model_create(&g, &mem), 0);
	assert_int_equal(model_create(&g, &sp), 0);
	assert_int_equal(fs_spill_open(tmp, sizeof(struct model_ext), &s), 0);
	model_set_spill(sp, s, 0, 4096);
	assert_int_equal(sp->seg, MODEL_SEG);
	assert_int_equal(sp->chunk, MODEL_CURSOR_EXT);
	for (unsigned i = 0; i < n; i++) {
		unsigned k = (unsigned)(((uint64_t)i * 7919) % n);	/* every k once */
		fs_agblock_t b = 2 * k + (k % 3 == 0);		/* gaps: nothing merges */
		enum model_class cls = k % 5 == 0 ? MC_FREE : MC_DATA;
		uint64_t owner = cls == MC_DATA ? 100 + k % 7 : 0;

		assert_int_equal(model_add(mem, 0, b, 1 + (k % 4 == 0), cls, owner, k, 0), 0);
		assert_int_equal(model_add(sp, 0, b, 1 + (k % 4 == 0), cls, owner, k, 0), 0);
	}
	assert_int_equal(model_ag_finish(mem, 0), 0);
	assert_int_equal(model_ag_finish(sp, 0), 0);
	same_sweeps(mem, sp);
	assert_true(sp->ag[0].nhead >= n / MODEL_SEG);
	same_extents(mem, sp);
	model_destroy(sp);
	model_destroy(mem);
	fs_spill_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_overlaps_and_gaps),
		cmocka_unit_test(test_filter_and_free_gaps),
		cmocka_unit_test(test_free_records_not_merged),
		cmocka_unit_test(test_ichunks),
		cmocka_unit_test(test_ichunk_index),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_spill),
		cmocka_unit_test(test_spill_full_batch),
		cmocka_unit_test(test_shared_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
