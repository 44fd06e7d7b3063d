// SPDX-License-Identifier: GPL-2.0
/*
 * Repair phase 3d, the realtime section's free space: the bitmap and
 * summary blocks the scan found wrong are rewritten with what the
 * realtime extents the files map say (scan/phase_rt.c computed them), in
 * place in the blocks the two inodes already map, and sb_frextents is set
 * from the bitmap, as xfs_repair recomputes them.  Only when the scan
 * judged them: every fork read, both inodes usable.
 *
 * Without a realtime section the two inodes are empty regular files; one
 * that phase 3 clears, that is free on disk, not a regular file, or of
 * the wrong size is made again in place (as xfs_repair reinitialises
 * them), in use in the rebuilt inode btree, its old blocks freed, so the
 * superblock never names a free inode.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libfs/bmap.h"
#include "libfs/encode.h"
#include "libfs/endian.h"
#include "libfs/inode.h"
#include "repair/repair.h"
#include "scan/links.h"

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

/* Whether realtime inode ino must be made again: cleared, free, not a file, or a finding's. */
static bool needs_remake(const struct repair_ctx *rx, fs_ino_t ino, uint64_t s)
{
	const struct link_rec *r = &rx->sx->links->rec[s];

	if ((rx->verdict[s] & RV_CLEAR) || !(r->flags & LR_SEEN) ||
	    r->type != XFS_DIR3_FT_REG_FILE)
		return true;
	for (size_t i = 0; i < rx->fl->n; i++)
		if (rx->fl->v[i].ino == (int64_t)ino && rx->fl->v[i].def->fix == FS_FIX_RT)
			return true;
	return false;
}

/*
 * Realtime inode ino (no realtime section) made again in place: an empty
 * regular file, one link, the bitmap with the flag mkfs gives it.
 */
static int remake(struct repair_ctx *rx, fs_ino_t ino, bool bitmap, bool *done)
{
	const struct fs_geom *g = &rx->fs->g;
	uint64_t s = scan_links_slot(rx->sx, ino);
	struct fs_dinode_init in = { .mode = S_IFREG, .format = XFS_DINODE_FMT_EXTENTS,
				     .nlink = 1, .flags = bitmap ? XFS_DIFLAG_NEWRTBM : 0,
				     .bigtime = g->bigtime, .nrext64 = g->nrext64 };
	struct timespec ts;
	struct fs_buf *b;
	uint32_t gen;
	int err;

	*done = false;
	if (s == UINT64_MAX || !rx->verdict || !needs_remake(rx, ino, s))
		return 0;
	err = repair_get_buf(rx, repair_inode_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		return err;
	gen = get_be32(&((struct xfs_dinode *)b->data)->di_gen);
	clock_gettime(CLOCK_REALTIME, &ts);
	in.sec = ts.tv_sec;
	in.nsec = (uint32_t)ts.tv_nsec;
	fs_enc_dinode(b->data, g->inodesize, ino, g->meta_uuid, &in);
	put_be32(&((struct xfs_dinode *)b->data)->di_gen, gen);
	fs_enc_dinode_finish(b->data, g->inodesize);
	err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(g, ino), ino, FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	if (err)
		return err;
	/* its old blocks go (the AG rebuild frees them); the inode is in use */
	rx->verdict[s] |= RV_CLEAR | RV_NEW;
	rx->drops = true;
	rx->planned_writes = true;
	*done = true;
	return 0;
}

int repair_phase_rt(struct repair_ctx *rx)
{
	const struct xfs_sb *sb = &rx->fs->sb;
	const struct scan_rt *rt = &rx->sx->rt;
	int err;

	if (!sb->sb_rblocks && !sb->sb_rextents && !sb->sb_rbmblocks && rx->sx->links &&
	    !repair_model_incomplete(rx)) {
		err = 0;
		if (fs_ino_valid(&rx->fs->g, sb->sb_rbmino))
			err = remake(rx, sb->sb_rbmino, true, &rx->rt_bitmap_remade);
		if (!err && fs_ino_valid(&rx->fs->g, sb->sb_rsumino))
			err = remake(rx, sb->sb_rsumino, false, &rx->rt_summary_remade);
		if (err)
			return err;
	}
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

	if (f->ino >= 0 && ((f->ino == (int64_t)sb->sb_rbmino && rx->rt_bitmap_remade) ||
			    (f->ino == (int64_t)sb->sb_rsumino && rx->rt_summary_remade)))
		return true;	/* made again in place */
	if (!rx->sx->rt.judged)
		return false;	/* the realtime inodes themselves are not what they should be */
	if (f->ino == (int64_t)sb->sb_rbmino)
		return rx->rt_bitmap_fixed;
	if (f->ino == (int64_t)sb->sb_rsumino)
		return rx->rt_summary_fixed;
	return f->ino < 0 && rx->rt_frextents_fixed;
}
