/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BUDGET_H
#define XFSX_BUDGET_H

#include <stdint.h>

/*
 * One memory budget for a run (-m MiB): what the process holds whatever
 * the volume's contents (the program, per-AG structures, I/O windows:
 * "fixed", estimated by the caller from the geometry and the workers), the
 * metadata cache's cap, and the share of the model's extents, beyond which
 * they spill to disk (libfs/util/spill.h).  The cache gets what the model
 * does not need, down to a floor; a cap that cannot hold the fixed part
 * and both floors is refused with the smallest that works.
 */
struct fs_budget {
	uint64_t total;              /* the cap, bytes (0: none; nothing spills) */
	uint64_t fixed;
	uint64_t cache;              /* the metadata cache's cap */
	uint64_t model;              /* the model's extents in memory before spilling */
	uint64_t planned_fixed;      /* fixed as planned, before any charge */
};

enum {
	FS_BUDGET_CACHE_FLOOR = 4u << 20,   /* the cache's floor: a directory batch's blocks */
	FS_BUDGET_MODEL_FLOOR = 1u << 20,   /* the model's: one merge's buffers (64 runs x 16 KiB) */
};

/*
 * Split total between cache and model once fixed is set aside: the model
 * half of what is left, the cache the rest (each at least its floor).
 * 0, or -ERANGE with *min_mib the smallest cap in MiB that works.
 */
int fs_budget_plan(struct fs_budget *b, uint64_t total, uint64_t fixed, uint64_t *min_mib);

/*
 * A structure that does not spill took bytes (the link records, once
 * sized): they come out of the model's share, down to its floor, then
 * out of the cache's, down to its floor (the caller lowers the cache's
 * cap to b->cache; a repair's dirty buffers past it are staged).  What
 * does not fit is over the cap (the peak then passes it); returns those
 * bytes, 0 when it all fit.
 */
uint64_t fs_budget_charge(struct fs_budget *b, uint64_t bytes);

/*
 * The same for a structure the run cannot do without nor spill (the link
 * records, sized from the inode chunks): 0 when it fits, else -ERANGE and
 * *min_mib the smallest cap whose plan holds everything charged so far
 * (what the fixed part leaves, less both floors, covers them).  The
 * charge stands either way.  No cap: 0.
 */
int fs_budget_need(struct fs_budget *b, uint64_t bytes, uint64_t *min_mib);

/*
 * Part of the fixed part no longer held (the run chose smaller I/O
 * windows): its bytes go back to the model's share.
 */
void fs_budget_release(struct fs_budget *b, uint64_t bytes);

/* The smallest cap in MiB whose plan holds fixed and charged bytes (0 charged: the floors). */
uint64_t fs_budget_min_mib(uint64_t fixed, uint64_t charged);

#endif
