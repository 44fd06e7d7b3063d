// SPDX-License-Identifier: GPL-2.0
/*
 * Planning an AG's free-space trees: the blocks the bno and cnt trees and
 * the AGFL take come out of the free space those trees record, so the
 * plan iterates until the remaining record count and the block need
 * agree.  Blocks are cut from the ends of the largest free extents first,
 * which leaves the record count unchanged unless an extent is used up.
 * Also the AGFL's minimum size for the current kernels.
 */
#include "libfs/build/freesp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t fs_agfl_min_blocks(const struct fs_geom *g, uint32_t bno_level, uint32_t cnt_level,
			    uint32_t rmap_level)
{
	const uint32_t levels[3] = { bno_level, cnt_level, rmap_level };
	const uint32_t maxl[3] = { g->alloc_maxlevels, g->alloc_maxlevels, g->rmap_maxlevels };
	uint32_t min = 0;

	for (int i = 0; i < 3; i++) {
		uint32_t h = levels[i] + 1;

		if (!levels[i])
			continue;
		if (maxl[i] && h > maxl[i])
			h = maxl[i];
		min += h * 2 - 2;
	}
	return min < g->agfl_size ? min : g->agfl_size;
}

/* Blocks both trees need for nrec records. */
static int trees_need(const struct fs_geom *g, const struct fs_bload_slack *slack, uint64_t nrec,
		      struct fs_bload_geom *bno, struct fs_bload_geom *cnt, uint64_t *need)
{
	int err = fs_bload_compute_geometry(fs_btree_ag_ops(FS_BTREE_AG_BNO), g->blocksize, nrec,
					    slack, 0, bno);

	if (!err)
		err = fs_bload_compute_geometry(fs_btree_ag_ops(FS_BTREE_AG_CNT), g->blocksize,
						nrec, slack, 0, cnt);
	*need = bno->nblocks + cnt->nblocks;
	return err;
}

/* Largest first; among equals, the highest blocks first (ctx: the extents; AGs plan in parallel). */
static int cmp_larger(const void *a, const void *b, void *ctx)
{
	const struct fs_alloc_rec *ext = ctx;
	const struct fs_alloc_rec *x = &ext[*(const size_t *)a], *y = &ext[*(const size_t *)b];

	if (x->blockcount != y->blockcount)
		return x->blockcount > y->blockcount ? -1 : 1;
	return x->startblock > y->startblock ? -1 : x->startblock < y->startblock;
}

/* Cut take blocks from the extents' ends, largest first: the records left, or -ENOSPC. */
static int64_t carve(const struct fs_alloc_rec *ext, size_t n, const size_t *order, uint64_t take,
		     uint32_t *cut)
{
	int64_t left_recs = (int64_t)n;

	memset(cut, 0, n * sizeof(*cut));
	for (size_t k = 0; k < n && take; k++) {
		size_t i = order[k];
		uint32_t c = ext[i].blockcount < take ? ext[i].blockcount : (uint32_t)take;

		cut[i] = c;
		take -= c;
		if (c == ext[i].blockcount)
			left_recs--;
	}
	return take ? -ENOSPC : left_recs;
}

static int cmp_agbno(const void *a, const void *b)
{
	fs_agblock_t x = *(const fs_agblock_t *)a, y = *(const fs_agblock_t *)b;

	return x < y ? -1 : x > y;
}

int fs_freesp_plan(const struct fs_geom *g, struct fs_alloc_rec *ext, size_t *n,
		   struct fs_freesp_plan *p)
{
	size_t nn = *n, *order = NULL;
	uint32_t *cut = NULL;
	fs_agblock_t *taken = NULL;
	uint64_t need, take, ntaken = 0, prev_take = UINT64_MAX;
	int64_t left = 0;
	int err;

	p->tree_blocks = NULL;
	p->agfl = NULL;
	p->ntree_blocks = 0;
	p->agfl_count = 0;
	p->iterations = 0;
	if (!g || (nn && !ext) || p->agfl_want > g->agfl_size)
		return -EINVAL;
	for (size_t i = 0; i < nn; i++)
		if (!ext[i].blockcount || ext[i].startblock > UINT32_MAX - ext[i].blockcount ||
		    (i && ext[i].startblock < ext[i - 1].startblock + ext[i - 1].blockcount))
			return -EINVAL;
	order = malloc((nn ? nn : 1) * sizeof(*order));
	cut = malloc((nn ? nn : 1) * sizeof(*cut));
	if (!order || !cut) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nn; i++)
		order[i] = i;
	qsort_r(order, nn, sizeof(*order), cmp_larger, ext);

	err = trees_need(g, &p->slack, nn, &p->bno, &p->cnt, &need);
	if (err)
		goto out;
	take = need + p->agfl_want;
	for (;;) {
		if (++p->iterations > 16) {
			err = -EAGAIN;
			goto out;
		}
		left = carve(ext, nn, order, take, cut);
		if (left < 0) {
			err = (int)left;
			goto out;
		}
		err = trees_need(g, &p->slack, (uint64_t)left, &p->bno, &p->cnt, &need);
		if (err)
			goto out;
		/* what the trees need now fits what was taken; leftovers go to the AGFL */
		if (need + p->agfl_want <= take && take - need <= g->agfl_size)
			break;
		/* a second visit to the same amount would loop: settle on the larger */
		if (need + p->agfl_want == prev_take) {
			err = -EAGAIN;
			goto out;
		}
		prev_take = take;
		take = need + p->agfl_want;
	}

	taken = malloc((take ? take : 1) * sizeof(*taken));
	p->tree_blocks = malloc((need ? need : 1) * sizeof(*p->tree_blocks));
	p->agfl = malloc((take - need ? take - need : 1) * sizeof(*p->agfl));
	if (!taken || !p->tree_blocks || !p->agfl) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nn; i++)
		for (uint32_t b = 0; b < cut[i]; b++)
			taken[ntaken++] = ext[i].startblock + ext[i].blockcount - cut[i] + b;
	qsort(taken, ntaken, sizeof(*taken), cmp_agbno);
	/* the trees get the lowest of the blocks taken, the AGFL the rest */
	memcpy(p->tree_blocks, taken, need * sizeof(*taken));
	p->ntree_blocks = need;
	memcpy(p->agfl, taken + need, (take - need) * sizeof(*taken));
	p->agfl_count = (uint32_t)(take - need);
	/* the extents that stay free: shortened from their ends, used-up ones dropped */
	{
		size_t w = 0;

		for (size_t i = 0; i < nn; i++) {
			if (cut[i] == ext[i].blockcount)
				continue;
			ext[w] = ext[i];
			ext[w].blockcount -= cut[i];
			w++;
		}
		*n = w;
	}
out:
	if (err) {
		free(p->tree_blocks);
		free(p->agfl);
		p->tree_blocks = NULL;
		p->agfl = NULL;
		p->ntree_blocks = 0;
		p->agfl_count = 0;
	}
	free(taken);
	free(order);
	free(cut);
	return err;
}

void fs_freesp_plan_free(struct fs_freesp_plan *p)
{
	free(p->tree_blocks);
	free(p->agfl);
	p->tree_blocks = NULL;
	p->agfl = NULL;
	p->ntree_blocks = p->agfl_count = 0;
}
