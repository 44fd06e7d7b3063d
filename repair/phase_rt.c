// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 8 (run.c), the realtime section's free space: the bitmap and
 * summary blocks the scan found wrong are rewritten with what the
 * realtime extents the files map say (scan/phase_rt.c computed them), in
 * place in the blocks the two inodes already map, and sb_frextents is set
 * from the bitmap, as xfs_repair recomputes them.  Only when the scan
 * judged them: every fork read, both inodes usable.
 *
 * A bitmap or summary inode that step 4 (inodes) clears, that is free on disk,
 * not a regular file, or of the wrong size is made again in place (as
 * xfs_repair reinitialises them), in use in the rebuilt inode btree, its
 * old blocks freed (RV_NEW keeps only its new ones), so the superblock
 * never names a free inode: without a realtime section an empty regular
 * file; with one, new blocks holding what the files' rt extents call for
 * (computed once step 4 has loaded every kept inode's forks), the other
 * inode's blocks rewritten whole from the same and sb_frextents set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libfs/format/bmap.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "repair/buf.h"
#include "repair/phase_rt.h"
#include "repair/place.h"
#include "repair/rules.h"
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
static bool needs_remake(struct repair_ctx *rx, fs_ino_t ino, uint64_t s)
{
	const struct link_rec *r = &rx->sx->links->rec[s];

	if ((rx->verdict[s] & RV_CLEAR) || !(r->flags & LR_SEEN) ||
	    r->type != XFS_DIR3_FT_REG_FILE)
		return true;
	return repair_plan_findings(rx, REPAIR_PLAN_RT, &ino) > 0;
}

/*
 * The new file's blocks: nblocks of want, in new blocks near the inode
 * (one run when there is one), written, entered in the model as its data
 * (MODEL_EXT_NEW); the extents into ext[], their count into *next.
 */
static int place_content(struct repair_ctx *rx, fs_ino_t ino, const uint8_t *want,
			 uint64_t nblocks, enum fs_mtype type, struct fs_bmap_ext *ext,
			 size_t *next)
{
	const struct fs_geom *g = &rx->fs->g;
	fs_fsblock_t run;
	bool one = repair_place(rx, ino, (uint32_t)nblocks, &run) == 0;
	int err = 0;

	*next = 0;
	for (uint64_t fb = 0; fb < nblocks && !err; fb++) {
		fs_fsblock_t fsb = one ? run + fb : 0;
		struct fs_buf *b;

		if (!one) {
			err = repair_place(rx, ino, 1, &fsb);
			if (err)
				break;
		}
		if (*next && ext[*next - 1].startblock + ext[*next - 1].blockcount == fsb &&
		    fs_fsb_to_agno(g, ext[*next - 1].startblock) == fs_fsb_to_agno(g, fsb))
			ext[*next - 1].blockcount++;
		else
			ext[(*next)++] = (struct fs_bmap_ext){ .startoff = fb, .startblock = fsb,
							       .blockcount = 1 };
		err = repair_get_buf(rx, fs_fsb_to_daddr(g, fsb), g->blocksize, true, &b);
		if (err)
			break;
		memcpy(b->data, want + fb * g->blocksize, g->blocksize);
		err = repair_mark(rx, b, type, fs_fsb_to_agno(g, fsb), ino, FS_WCLASS_NEW);
		fs_buf_put(rx->sx->cache, b);
	}
	for (size_t i = 0; i < *next && !err; i++)
		err = model_add(rx->sx->model, fs_fsb_to_agno(g, ext[i].startblock),
				fs_fsb_to_agbno(g, ext[i].startblock), (uint32_t)ext[i].blockcount,
				MC_DATA, ino, ext[i].startoff, MODEL_EXT_NEW);
	for (size_t i = 0; i < *next && !err; i++)
		err = model_ag_finish(rx->sx->model, fs_fsb_to_agno(g, ext[i].startblock));
	return err;
}

/*
 * Realtime inode ino made again in place: a regular file of one link (the
 * bitmap with the flag mkfs gives it) holding nblocks blocks of want in
 * new blocks (none without a realtime section).
 */
static int remake(struct repair_ctx *rx, fs_ino_t ino, bool bitmap, const uint8_t *want,
		  uint64_t nblocks, bool *done)
{
	const struct fs_geom *g = &rx->fs->g;
	uint64_t s = scan_links_slot(rx->sx, ino);
	struct fs_dinode_init in = { .mode = S_IFREG, .format = XFS_DINODE_FMT_EXTENTS,
				     .nlink = 1, .flags = bitmap ? XFS_DIFLAG_NEWRTBM : 0,
				     .size = nblocks * g->blocksize,
				     .bigtime = g->bigtime, .nrext64 = g->nrext64 };
	struct fs_bmap_ext *ext = NULL;
	size_t next = 0;
	struct timespec ts;
	struct fs_buf *b;
	uint32_t gen;
	int err;

	*done = false;
	if (s == UINT64_MAX || !rx->verdict || !needs_remake(rx, ino, s))
		return 0;
	if (nblocks) {
		ext = calloc(nblocks, sizeof(*ext));
		if (!ext)
			return -ENOMEM;
		err = place_content(rx, ino, want, nblocks, bitmap ? FS_MT_RTBITMAP :
				    FS_MT_RTSUMMARY, ext, &next);
		if (err)
			goto out;
	}
	err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		goto out;
	gen = get_be32(&((struct xfs_dinode *)b->data)->di_gen);
	clock_gettime(CLOCK_REALTIME, &ts);
	in.sec = ts.tv_sec;
	in.nsec = (uint32_t)ts.tv_nsec;
	fs_enc_dinode(b->data, g->inodesize, ino, g->meta_uuid, &in);
	put_be32(&((struct xfs_dinode *)b->data)->di_gen, gen);
	if (next) {
		struct xfs_dinode *d = (struct xfs_dinode *)b->data;
		uint8_t format = XFS_DINODE_FMT_EXTENTS;
		uint64_t bmbt = 0;

		err = repair_fork_map(rx, ino, XFS_DATA_FORK, ext, next, fs_dinode_dfork(b->data),
				      fs_dinode_litino(g->inodesize), &format, &bmbt);
		d->di_format = format;
		if (g->nrext64)
			put_be64(&d->di_big_nextents, next);
		else
			put_be32(&d->di_nextents, (uint32_t)next);
		put_be64(&d->di_nblocks, nblocks + bmbt);
	}
	fs_enc_dinode_finish(b->data, g->inodesize);
	if (!err)
		err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(g, ino), ino,
				  FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	if (err)
		goto out;
	/* its old blocks go (the AG rebuild frees them); the inode is in use */
	rx->verdict[s] |= RV_CLEAR | RV_NEW;
	rx->drops = true;
	rx->planned_writes = true;
	*done = true;
out:
	free(ext);
	return err;
}

/*
 * One realtime inode made again while the other was never compared (the
 * scan judges only when both are usable): the other's blocks are all
 * written with what the files call for, and sb_frextents set from it.
 */
static int rewrite_other(struct repair_ctx *rx)
{
	const struct xfs_sb *sb = &rx->fs->sb;
	const struct scan_rt *rt = &rx->sx->rt;
	bool bm = !rx->rt_bitmap_remade;
	uint64_t n = bm ? sb->sb_rbmblocks : rt->sumblocks;
	bool *all = malloc((n ? n : 1) * sizeof(*all));
	bool done = true;
	int err = 0;

	if (!all)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		all[i] = true;
	if (!(rx->rt_bitmap_remade && rx->rt_summary_remade))
		err = rewrite(rx, bm ? sb->sb_rbmino : sb->sb_rsumino,
			      bm ? rt->bitmap : (const uint8_t *)rt->summary, all, n,
			      bm ? FS_MT_RTBITMAP : FS_MT_RTSUMMARY, &done);
	free(all);
	if (!err && bm)
		rx->rt_bitmap_fixed = done;
	else if (!err)
		rx->rt_summary_fixed = done;
	if (!err && sb->sb_frextents != rt->frextents) {
		rx->newsb.sb_frextents = rt->frextents;
		rx->rt_frextents_fixed = true;
		rx->counters = true;
		rx->planned_writes = true;
	}
	return err;
}

int repair_phase_rt(struct repair_ctx *rx)
{
	const struct xfs_sb *sb = &rx->fs->sb;
	const struct scan_rt *rt = &rx->sx->rt;
	int err;

	/*
	 * with the model complete every kept inode's forks are loaded (phase 3
	 * loaded those the scan could not), so every rt extent is noted
	 */
	if (rx->sx->links && !repair_model_incomplete(rx) && sb->sb_rblocks && !rt->judged) {
		err = scan_rt_compute(rx->sx, true);
		if (err)
			return err;
	}
	if (rx->sx->links && !repair_model_incomplete(rx) &&
	    ((!sb->sb_rblocks && !sb->sb_rextents && !sb->sb_rbmblocks) ||
	     (rt->computed && rx->nm))) {
		/* without a realtime section: empty files; with one: what the files call for */
		bool rtsec = sb->sb_rblocks != 0;

		err = 0;
		if (fs_ino_valid(&rx->fs->g, sb->sb_rbmino))
			err = remake(rx, sb->sb_rbmino, true, rt->bitmap,
				     rtsec ? sb->sb_rbmblocks : 0, &rx->rt_bitmap_remade);
		if (!err && fs_ino_valid(&rx->fs->g, sb->sb_rsumino))
			err = remake(rx, sb->sb_rsumino, false, (const uint8_t *)rt->summary,
				     rtsec ? rt->sumblocks : 0, &rx->rt_summary_remade);
		if (err)
			return err;
		if (rtsec && !rt->judged && (rx->rt_bitmap_remade || rx->rt_summary_remade))
			return rewrite_other(rx);
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
