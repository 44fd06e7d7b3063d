// SPDX-License-Identifier: GPL-2.0
/* The run's memory budget: -m split between the fixed part, the cache and the model. */
#include <errno.h>

#include "libfs/util/budget.h"

uint64_t fs_budget_min_mib(uint64_t fixed, uint64_t charged)
{
	/* a charge takes the model's and the cache's shares down to their floors */
	uint64_t left = charged + FS_BUDGET_MODEL_FLOOR + FS_BUDGET_CACHE_FLOOR;

	return (fixed + left + (1u << 20) - 1) >> 20;
}

int fs_budget_plan(struct fs_budget *b, uint64_t total, uint64_t fixed, uint64_t *min_mib)
{
	uint64_t need = fixed + FS_BUDGET_CACHE_FLOOR + FS_BUDGET_MODEL_FLOOR, left;

	b->total = total;
	b->fixed = fixed;
	b->planned_fixed = fixed;
	if (total < need) {
		*min_mib = fs_budget_min_mib(fixed, 0);
		return -ERANGE;
	}
	left = total - fixed;
	b->model = left / 2 > FS_BUDGET_MODEL_FLOOR ? left / 2 : FS_BUDGET_MODEL_FLOOR;
	b->cache = left - b->model;
	if (b->cache < FS_BUDGET_CACHE_FLOOR) {
		b->cache = FS_BUDGET_CACHE_FLOOR;
		b->model = left - b->cache;
	}
	return 0;
}

uint64_t fs_budget_charge(struct fs_budget *b, uint64_t bytes)
{
	uint64_t take;

	if (!b->total)
		return 0;
	/*
	 * from the model's share first, then the cache's: each down to its
	 * floor (a repair's dirty buffers past the cache's cap are staged in
	 * the temporary directory, so a smaller cache still holds a plan)
	 */
	b->fixed += bytes;
	take = b->model > FS_BUDGET_MODEL_FLOOR ? b->model - FS_BUDGET_MODEL_FLOOR : 0;
	take = take < bytes ? take : bytes;
	b->model -= take;
	bytes -= take;
	take = b->cache > FS_BUDGET_CACHE_FLOOR ? b->cache - FS_BUDGET_CACHE_FLOOR : 0;
	take = take < bytes ? take : bytes;
	b->cache -= take;
	return bytes - take;
}

void fs_budget_release(struct fs_budget *b, uint64_t bytes)
{
	if (!b->total)
		return;
	bytes = bytes < b->planned_fixed ? bytes : b->planned_fixed;
	b->fixed -= bytes;
	b->planned_fixed -= bytes;
	b->model += bytes;
}

int fs_budget_need(struct fs_budget *b, uint64_t bytes, uint64_t *min_mib)
{
	if (!b->total || !fs_budget_charge(b, bytes))
		return 0;
	*min_mib = fs_budget_min_mib(b->planned_fixed, b->fixed - b->planned_fixed);
	return -ERANGE;
}
