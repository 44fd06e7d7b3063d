// SPDX-License-Identifier: GPL-2.0
/*
 * Repair phase 3d, the realtime section's free space: the bitmap and
 * summary blocks the scan found wrong are rewritten with what the
 * realtime extents the files map say (scan/phase_rt.c computed them), in
 * place in the blocks the two inodes already map, and sb_frextents is set
 * from the bitmap, as xfs_repair recomputes them.  Only when the scan
 * judged them: every fork read, both inodes usable (a realtime inode that
 * is not what the superblock says is left, reported).
 */
#include <errno.h>
#include <string.h>

#include "libfs/bmap.h"
#include "libfs/inode.h"
#include "repair/repair.h"

/* Rewrite the blocks of file ino marked bad with want's bytes; all of them or *done false. */
static int rewrite(struct repair_ctx *rx, fs_ino_t ino, const uint8_t *want, const bool *bad,
		   uint64_t nblocks, enum fs_mtype type, bool *done)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_bmap m = { 0 };
	bool any = false;
	int err;

	*done = false;
	for (uint64_t fb = 0; fb < nblocks && !any; fb++)
		any = bad[fb];
	if (!any)
		return 0;
	err = repair_data_map(rx, ino, &m);
	if (err)
		return err;
	*done = true;
	for (uint64_t fb = 0; fb < nblocks && !err; fb++) {
		fs_fsblock_t fsb;

		if (!bad[fb])
			continue;
		if (!fs_bmap_fsb(g, &m, fb, &fsb)) {
			*done = false;	/* a hole: nothing to write into */
			continue;
		}
		err = repair_get_buf(rx, fs_fsb_to_daddr(g, fsb), g->blocksize, true, &b);
		if (err)
			break;
		memcpy(b->data, want + fb * g->blocksize, g->blocksize);
		err = repair_mark(rx, b, type, fs_fsb_to_agno(g, fsb), ino, FS_WCLASS_HEADERS);
		fs_buf_put(rx->sx->cache, b);
		rx->planned_writes = true;
	}
	fs_bmap_free(&m);
	return err;
}

int repair_phase_rt(struct repair_ctx *rx)
{
	const struct xfs_sb *sb = &rx->fs->sb;
	const struct scan_rt *rt = &rx->sx->rt;
	int err;

	if (!rt->judged)
		return 0;
	err = rewrite(rx, sb->sb_rbmino, rt->bitmap, rt->bad_bm, sb->sb_rbmblocks, FS_MT_RTBITMAP,
		      &rx->rt_bitmap_fixed);
	if (!err)
		err = rewrite(rx, sb->sb_rsumino, (const uint8_t *)rt->summary, rt->bad_sum,
			      rt->sumblocks, FS_MT_RTSUMMARY, &rx->rt_summary_fixed);
	if (!err && rt->frextents_bad) {
		rx->newsb.sb_frextents = rt->frextents;
		rx->rt_frextents_fixed = true;
		rx->counters = true;
		rx->planned_writes = true;
	}
	return err;
}

bool repair_rt_covers(const struct repair_ctx *rx, const struct fs_finding *f)
{
	const struct xfs_sb *sb = &rx->fs->sb;

	if (!rx->sx->rt.judged)
		return false;	/* the realtime inodes themselves are not what they should be */
	if (f->ino == (int64_t)sb->sb_rbmino)
		return rx->rt_bitmap_fixed;
	if (f->ino == (int64_t)sb->sb_rsumino)
		return rx->rt_summary_fixed;
	return f->ino < 0 && rx->rt_frextents_fixed;
}
