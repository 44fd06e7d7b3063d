/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_FREESP_H
#define XFSX_FREESP_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/build/bload.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/format.h"

/*
 * Rebuilding an AG's free-space trees takes their own blocks, and the
 * AGFL's, out of the very free space they record: fewer free extents may
 * need fewer tree blocks.  fs_freesp_plan settles that circle the way
 * xfs_repair's phase 5 does, iterating until the record count and the
 * block need agree, taking blocks from the ends of the largest free
 * extents (so the record count rarely changes, and the blocks taken were
 * free before and stay unused by anything else).
 */

/*
 * Blocks the AGFL must hold for AG btrees of these heights (rmap_level 0
 * without rmapbt): the kernel's xfs_alloc_min_freelist as of Linux 6.7,
 * min(level + 1, maxlevels) * 2 - 2 per tree, which is more than older
 * kernels ask, so every kernel is satisfied.  At most g->agfl_size.
 */
uint32_t fs_agfl_min_blocks(const struct fs_geom *g, uint32_t bno_level, uint32_t cnt_level,
			    uint32_t rmap_level);

struct fs_freesp_plan {
	/* inputs */
	struct fs_bload_slack slack;   /* for both trees */
	uint32_t agfl_want;            /* AGFL blocks wanted (<= g->agfl_size; 0: none) */

	/* results (fs_freesp_plan_free releases the arrays) */
	struct fs_bload_geom bno, cnt; /* the trees' geometry for the remaining records */
	fs_agblock_t *tree_blocks;     /* bno.nblocks blocks for the bno tree, then cnt.nblocks
					* for the cnt tree, ascending within each: hand them out
					* in this order from the loaders' alloc_block */
	uint64_t ntree_blocks;
	fs_agblock_t *agfl;            /* the AGFL's blocks (agfl_want, or more: leftovers) */
	uint32_t agfl_count;
	uint32_t iterations;           /* rounds the plan took */
};

/*
 * ext, *n: the AG's free extents in block order, not overlapping, as the
 * model says once every other owner's blocks are known.  On success they
 * are the extents that remain free (what the bno/cnt trees will record,
 * *n updated; the array is only shortened, never grown) and p holds the
 * blocks taken for the trees and the AGFL.  0, or -ENOSPC (the AG has
 * too little free space for the trees and the AGFL wanted), -EINVAL (bad
 * arguments, overlapping or unsorted extents), -ENOMEM, -EAGAIN (no
 * stable plan: does not happen with sane inputs).  On error ext is
 * unchanged and p holds nothing to free.
 */
int fs_freesp_plan(const struct fs_geom *g, struct fs_alloc_rec *ext, size_t *n,
		   struct fs_freesp_plan *p);
void fs_freesp_plan_free(struct fs_freesp_plan *p);

#endif
