// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 10 (run.c), the superblock counters: inodes, free inodes and free
 * blocks summed over the AGs, from what the rebuild built for rebuilt AGs
 * and from the (consistent) AGF/AGI of the others.  The primary is
 * rewritten when they differ from what it says, or when anything else is
 * written (its NEEDSREPAIR bit is cleared last in any case).
 */
#include <errno.h>

#include "libfs/format/ag.h"
#include "repair/phase_counters.h"

static int read_counts(struct repair_ctx *rx, fs_agnumber_t agno, uint64_t *fd, uint64_t *ic,
		       uint64_t *ifree)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_agf agf;
	struct fs_agi agi;
	int err;

	err = fs_cache_read(rx->sx->cache, fs_ag_agf_offset(g, agno) >> FS_BBSHIFT, g->sectsize, &b);
	if (err)
		return err;
	fs_agf_decode(b->data, &agf);
	fs_buf_put(rx->sx->cache, b);
	err = fs_cache_read(rx->sx->cache, fs_ag_agi_offset(g, agno) >> FS_BBSHIFT, g->sectsize, &b);
	if (err)
		return err;
	fs_agi_decode(b->data, &agi);
	fs_buf_put(rx->sx->cache, b);
	*fd = (uint64_t)agf.freeblks + agf.flcount + agf.btreeblks;
	*ic = agi.count;
	*ifree = agi.freecount;
	return 0;
}

int repair_phase_counters(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;
	uint64_t fd = 0, ic = 0, ifree = 0;

	for (fs_agnumber_t a = 0; a < g->agcount; a++) {
		const struct repair_ag *ra = &rx->ag[a];

		if (ra->rebuild) {
			fd += ra->freeblks + ra->flcount + ra->btreeblks;
			ic += ra->icount;
			ifree += ra->ifree;
		} else {
			uint64_t f, c, i;
			int err = read_counts(rx, a, &f, &c, &i);

			if (err)
				return err;
			fd += f;
			ic += c;
			ifree += i;
		}
	}
	rx->icount = ic;
	rx->ifree = ifree;
	rx->fdblocks = fd;
	if (rx->newsb.sb_icount != ic || rx->newsb.sb_ifree != ifree ||
	    rx->newsb.sb_fdblocks != fd)
		rx->counters = true;
	if (rx->quota_recount && (rx->newsb.sb_qflags & (XFS_UQUOTA_CHKD | XFS_GQUOTA_CHKD |
							   XFS_PQUOTA_CHKD))) {
		rx->newsb.sb_qflags &= (uint16_t)~(XFS_UQUOTA_CHKD | XFS_GQUOTA_CHKD |
						   XFS_PQUOTA_CHKD);
		rx->counters = true;
	}
	rx->newsb.sb_icount = ic;
	rx->newsb.sb_ifree = ifree;
	rx->newsb.sb_fdblocks = fd;
	if (rx->counters || rx->planned_writes) {
		rx->rewrite_primary = true;
		rx->planned_writes = true;
	}
	return 0;
}
