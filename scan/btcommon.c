// SPDX-License-Identifier: GPL-2.0
/*
 * What every per-AG btree phase does around the generic walker: set the
 * walk up (blocks read through the cache, the log head for LSN rules, the
 * root and height phase 1 judged plausible), read a node's children ahead
 * in one batch, and insist (as xfs_repair does) that blocks below the root
 * are at least half full.
 */
#include <errno.h>
#include <stdlib.h>

#include "scan/scan.h"

static int walk_read_kept(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	return scan_read_agblock(*(struct scan_ctx **)priv, agno, agbno, buf);
}

/*
 * The walker keeps its own copy of the block and no later phase reads it
 * again (scan_bt.kept says otherwise): it leaves the cache now rather than
 * stay until the cap pushes it out (10,000 AGs of one-block trees filled a
 * 256 MiB cache with them).
 */
static int walk_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct scan_ctx *cx = *(struct scan_ctx **)priv;
	const struct fs_geom *g = &cx->fs->g;

	if (agno >= g->agcount || agbno >= fs_ag_blocks(g, agno))
		return -ERANGE;
	return fs_cache_read_once(cx->cache, fs_agbno_to_daddr(g, agno, agbno), g->blocksize, buf);
}

bool scan_btree_walk_init(struct scan_ctx *cx, const struct fs_btree_ops *ops, fs_agnumber_t agno,
			  fs_agblock_t root, uint32_t levels, struct fs_findings *fl, void *priv,
			  struct fs_btree_walk *w)
{
	const struct fs_geom *g = &cx->fs->g;

	*w = (struct fs_btree_walk){
		.ops = ops, .g = g, .fl = fl,
		.vc = { .g = g, .fl = fl, .agno = agno,
			.have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn },
		.root = root, .nlevels = levels, .read_block = walk_read, .priv = priv,
	};
	/* phase 1 reported an impossible root or height */
	return levels != 0 && levels <= ops->maxlevels(g) && root >= g->ag_hdr_blocks &&
	       agno < g->agcount && root < fs_ag_blocks(g, agno);
}

static int walk_block(void *priv, uint32_t level, fs_agblock_t agbno, const void *block)
{
	struct scan_btw *w = priv;
	struct scan_bt *t = w->t;
	struct fs_btree_hdr h;
	int err;

	fs_btree_hdr_decode(t->ops, block, &h);
	t->blocks++;
	err = model_add(w->cx->model, w->agno, agbno, 1, t->cls, 0, 0, 0);
	if (err == -ENOMEM && !w->err)
		w->err = err;
	if (agbno != t->root)
		scan_btree_minrecs(w->cx, t->ops, w->agno, agbno, level, block);
	if (level > 0)
		scan_btree_readahead(w->cx, w->worker, t->ops, w->agno, block, h.numrecs);
	else
		t->leaf = agbno;
	return 0;
}

void scan_btree_walk(struct scan_btw *w, struct scan_bt *t, fs_agblock_t root, uint32_t levels,
		     int (*visit_rec)(void *priv, const void *rec))
{
	struct fs_btree_walk bw;
	int err;

	if (!scan_btree_walk_init(w->cx, t->ops, w->agno, root, levels, w->cx->fl, w, &bw))
		return;
	bw.visit_block = walk_block;
	bw.visit_rec = visit_rec;
	if (t->kept)
		bw.read_block = walk_read_kept;
	w->t = t;
	t->root = root;
	t->leaf = NULLAGBLOCK;
	err = fs_btree_walk(&bw);
	if (err < 0 && !w->err)
		w->err = err;
	t->walked = err == 0;
	t->bad_blocks = bw.bad_blocks;
	__atomic_add_fetch(&w->cx->btree_blocks, bw.blocks, __ATOMIC_RELAXED);
}

bool scan_keep_cached(struct scan_ctx *cx, uint64_t bytes)
{
	uint64_t budget = fs_cache_cap(cx->cache) / 16;
	uint64_t had = __atomic_load_n(&cx->kept_bytes, __ATOMIC_RELAXED);

	if (!budget)
		return true;
	do {
		if (bytes > budget || had > budget - bytes)
			return false;
	} while (!__atomic_compare_exchange_n(&cx->kept_bytes, &had, had + bytes, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

void scan_btree_readahead(struct scan_ctx *cx, unsigned worker, const struct fs_btree_ops *ops,
			   fs_agnumber_t agno, const void *block, uint32_t numrecs)
{
	const struct fs_geom *g = &cx->fs->g;
	uint32_t maxr = fs_btree_maxrecs(ops, g->blocksize, false);
	struct fs_ra_extent *ext;
	struct fs_ra_stats st = { 0 };
	size_t n = 0;

	if (numrecs > maxr)
		numrecs = maxr;
	ext = malloc((numrecs ? numrecs : 1) * sizeof(*ext));
	if (!ext)
		return;
	for (uint32_t i = 0; i < numrecs; i++) {
		uint64_t p = fs_btree_ptr(ops, block, g->blocksize, i);

		if (p >= g->ag_hdr_blocks && p < fs_ag_blocks(g, agno))
			ext[n++] = (struct fs_ra_extent){
				fs_agbno_to_daddr(g, agno, (fs_agblock_t)p), g->blocksize };
	}
	if (n && fs_readahead(cx->cache, cx->ioq[worker], ext, n,
			      &(struct fs_ra_opts){ .qdepth = cx->opts->qdepth,
						   .inflight_max = cx->ra_inflight }, &st) == 0)
		scan_ra_account(cx, &st);
	free(ext);
}

bool scan_btree_minrecs(struct scan_ctx *cx, const struct fs_btree_ops *ops, fs_agnumber_t agno,
			 fs_agblock_t agbno, uint32_t level, const void *block)
{
	const struct fs_geom *g = &cx->fs->g;
	uint32_t minr = fs_btree_maxrecs(ops, g->blocksize, level == 0) / 2;
	struct fs_btree_hdr h;

	fs_btree_hdr_decode(ops, block, &h);
	if (h.numrecs >= minr)
		return true;
	fs_report(cx->fl, ops->codes[FS_BTC_NUMRECS], agno, (int64_t)fs_agbno_to_daddr(g, agno, agbno), FS_NONE,
		  "bb_numrecs", FS_U(minr), FS_U(h.numrecs),
		  "%s block %u holds fewer records than a non-root block must", ops->name, agbno);
	return false;
}
