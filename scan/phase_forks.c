// SPDX-License-Identifier: GPL-2.0
/*
 * Fork block maps, a per-inode step of the inode scan (phase 4; inodes
 * with a btree-format fork are deferred to phase 5, which reads their bmbt
 * blocks ahead): each inode in use whose core leaves its forks meaningful
 * has its data and attr forks loaded through fs_bmap_load (bmbt blocks
 * read through the cache, findings bmap.* / bmbt.*), every mapped extent
 * and bmbt block goes into the model
 * as owned by the inode (realtime data stays out: it is not in the AGs;
 * phase_rt.c gets it),
 * and di_nblocks is compared with the blocks the forks map (inode.nblocks).
 * Whether every fork loaded cleanly is kept: the leak check trusts only a
 * complete scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "libfs/format/bmap.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"

int scan_model_add_fork(struct scan_ctx *cx, fs_ino_t ino, const struct fs_inode *ip,
			int fork, const struct fs_bmap *m)
{
	const struct fs_geom *g = &cx->fs->g;
	bool rt = fork == XFS_DATA_FORK && (ip->flags & XFS_DIFLAG_REALTIME);
	enum model_class cls = fork == XFS_DATA_FORK ? MC_DATA : MC_ATTR;
	int err = 0;

	if (rt && cx->fs->sb.sb_rextents) {
		err = scan_rt_note(cx, ino, m);
		if (err)
			return err;
	}
	for (size_t i = 0; i < m->n && !rt; i++) {
		const struct fs_bmap_ext *e = &m->ext[i];

		if (e->blockcount > UINT32_MAX)
			continue;	/* bmap.c refused such extents already */
		err = model_add(cx->model, fs_fsb_to_agno(g, e->startblock),
				fs_fsb_to_agbno(g, e->startblock), (uint32_t)e->blockcount, cls, ino,
				e->startoff, e->unwritten ? MODEL_EXT_UNWRITTEN : 0);
		if (err == -ENOMEM)
			return err;
	}
	for (size_t i = 0; i < m->nbmbt; i++) {
		err = model_add(cx->model, fs_fsb_to_agno(g, m->bmbt[i]),
				fs_fsb_to_agbno(g, m->bmbt[i]), 1, MC_BMBT, ino, 0,
				fork == XFS_ATTR_FORK ? MODEL_EXT_ATTRFORK : 0);
		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

/*
 * Load both forks (findings reported), put their extents and bmbt blocks
 * into the model, compare di_nblocks.  With maps (phase 5), a fork map a
 * later step of the batch needs (want: its DEFER_* bits) is kept there.
 */
static void load_forks(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
		       uint8_t want)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_inode *ip = &ci->ip;
	fs_ino_t ino = ci->ino;
	uint64_t mapped = 0;
	bool bad = false;

	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK; fork++) {
		uint8_t needs = fork == XFS_DATA_FORK ? DEFER_DIR | DEFER_SYMLINK : DEFER_ATTR;
		struct fs_bmap m;
		int err = scan_load_map(cx, ci->dip, ip, fork, cx->fl, &m);

		if (err) {
			if (!s->err)
				s->err = err;
			return;
		}
		if (m.bad)
			bad = true;
		for (size_t i = 0; i < m.n; i++)
			mapped += m.ext[i].blockcount;
		err = scan_model_add_fork(cx, ino, ip, fork, &m);
		if (err && !s->err)
			s->err = err;
		mapped += m.nbmbt;
		s->extents += m.n;
		s->bmbt += m.nbmbt;
		if (maps && (want & needs))
			scan_maps_keep(maps, fork, &m);
		else
			fs_bmap_free(&m);
	}
	if (bad) {
		s->incomplete = true;
		return;
	}
	if (ip->nblocks != mapped)
		fs_report(cx->fl, FS_C_INODE_NBLOCKS, ci->agno, (int64_t)ci->daddr, (int64_t)ino,
			  "di_nblocks", FS_U(mapped), FS_U(ip->nblocks),
			  "inode %llu claims %llu blocks but its forks map %llu (extents and bmbt "
			  "blocks)", (unsigned long long)ino, (unsigned long long)ip->nblocks,
			  (unsigned long long)mapped);
}

/*
 * The inode verifier already reported this inode's core; load its forks
 * only when nothing that shapes them is wrong.  A btree fork's blocks are
 * read in phase 5, ahead, in batches.
 */
static void forks_inode(struct scan_ag *s, const struct scan_inode *ci)
{
	const struct fs_inode *ip = &ci->ip;

	if (!ci->forks_ok) {
		s->incomplete = true;
		return;
	}
	if (s->deferring && (ip->format == XFS_DINODE_FMT_BTREE ||
			     (ip->forkoff && ip->aformat == XFS_DINODE_FMT_BTREE))) {
		int err = scan_defer(s, ci, DEFER_FORKS);

		if (err && !s->err)
			s->err = err;
		return;
	}
	load_forks(s, ci, NULL, 0);
}

/* Phase 5, stage 0: the bmbt root's children of both forks, read ahead as one batch. */
static int forks_readahead(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			   uint8_t what, struct scan_ra_list *l, uint64_t budget)
{
	fs_fsblock_t kids[64];
	int err = 0;

	(void)maps;
	(void)what;
	(void)budget;
	for (int f = XFS_DATA_FORK; f <= XFS_ATTR_FORK && !err; f++) {
		size_t n = fs_bmap_root_children(&s->cx->fs->g, ci->dip, &ci->ip, f, kids, 64);

		for (size_t k = 0; k < n && !err; k++)
			err = scan_ra_add(l, kids[k], 1);
	}
	return err;
}

/* Phase 5: a deferred inode's forks (deeper bmbt levels read on demand). */
static int forks_blocks(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			uint8_t what)
{
	load_forks(s, ci, maps, what);
	return 0;
}

const struct scan_step scan_step_forks = {
	.name = "forks", .defer = DEFER_FORKS, .stage = 0,
	.inode = forks_inode, .readahead = forks_readahead, .blocks = forks_blocks,
};
