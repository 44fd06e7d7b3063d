// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 5 of check: the block maps of every inode in use.  Per AG on the
 * worker pool, each inode the inode scan found in use is read again from
 * the cache, its data and attr forks are loaded through fs_bmap_load
 * (bmbt blocks read through the cache, findings bmap.* / bmbt.*), every
 * mapped extent and bmbt block goes into the model as owned by the inode
 * (realtime data stays out: it is not in the AGs), and di_nblocks is
 * compared with the blocks the forks map (inode.nblocks).  Whether every
 * fork loaded cleanly is kept: the leak check trusts only a complete scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "libfs/bmap.h"
#include "libfs/endian.h"
#include "libfs/inode.h"
#include "libfs/workq.h"

struct forks_ag {
	struct check_ctx *cx;
	fs_agnumber_t agno;
	int err;
	uint64_t inodes, extents, bmbt;
	bool incomplete;
};

static int read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct forks_ag *a = priv;
	const struct fs_geom *g = &a->cx->fs->g;

	if (!fs_fsb_valid(g, fsb))
		return -ERANGE;
	return check_read_agblock(a->cx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb), buf);
}

static void note(struct forks_ag *a, fs_fsblock_t fsb, uint64_t len, enum model_class cls,
		 uint64_t ino, uint64_t off, uint8_t flags)
{
	const struct fs_geom *g = &a->cx->fs->g;
	int err;

	if (len > UINT32_MAX)
		return;	/* bmap.c refused such extents already */
	err = model_add(a->cx->model, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb),
			(uint32_t)len, cls, ino, off, flags);
	if (err == -ENOMEM && !a->err)
		a->err = err;
}

/*
 * The inode verifier already reported this inode's core (phase 4); load
 * its forks only when nothing that shapes them is wrong.  The verifier is
 * run again into a scratch list, which is thrown away.
 */
static bool core_usable(struct check_ctx *cx, fs_agnumber_t agno, fs_ino_t ino, fs_daddr_t daddr,
			const void *dip)
{
	struct fs_findings tmp;
	struct fs_vctx vc = { .g = &cx->fs->g, .fl = &tmp, .agno = agno, .daddr = daddr,
			      .have_log_head = cx->fs->have_log_head,
			      .head_lsn = cx->fs->log_head_lsn, .ino = ino };
	bool ok = true;

	fs_findings_init(&tmp);
	fs_verify(FS_MT_INODE, &vc, dip, cx->fs->g.inodesize);
	for (size_t i = 0; i < tmp.n && ok; i++) {
		const char *c = tmp.v[i].def->code;
		/* rules that do not change where the fork's extents are */
		if (strcmp(c, "inode.lsn") && strcmp(c, "inode.nblocks") &&
		    strcmp(c, "inode.extsize") && strcmp(c, "inode.cowextsize") &&
		    strcmp(c, "inode.unlinked") && strcmp(c, "inode.size"))
			ok = false;
	}
	if (tmp.dropped)
		ok = false;
	fs_findings_free(&tmp);
	return ok;
}

static void check_inode(struct forks_ag *a, fs_ino_t ino, fs_daddr_t daddr, const void *dip)
{
	struct check_ctx *cx = a->cx;
	const struct fs_geom *g = &cx->fs->g;
	struct fs_bmap_ctx bc = {
		.g = g, .fl = cx->fl, .have_log_head = cx->fs->have_log_head,
		.head_lsn = cx->fs->log_head_lsn, .read_fsblock = read_fsblock, .priv = a,
		.rblocks = cx->fs->sb.sb_rblocks,
	};
	struct fs_inode ip;
	uint64_t mapped = 0;
	bool bad = false;

	if (!core_usable(cx, a->agno, ino, daddr, dip)) {
		a->incomplete = true;
		return;
	}
	fs_inode_decode(dip, &ip);
	a->inodes++;
	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK; fork++) {
		bool rt = fork == XFS_DATA_FORK && (ip.flags & XFS_DIFLAG_REALTIME);
		enum model_class cls = fork == XFS_DATA_FORK ? MC_DATA : MC_ATTR;
		struct fs_bmap m;
		int err = fs_bmap_load(&bc, dip, &ip, fork, &m);

		if (err) {
			if (!a->err)
				a->err = err;
			return;
		}
		if (m.bad)
			bad = true;
		for (size_t i = 0; i < m.n; i++) {
			const struct fs_bmap_ext *e = &m.ext[i];

			mapped += e->blockcount;
			if (!rt)
				note(a, e->startblock, e->blockcount, cls, ino, e->startoff,
				     e->unwritten ? MODEL_EXT_UNWRITTEN : 0);
		}
		for (size_t i = 0; i < m.nbmbt; i++)
			note(a, m.bmbt[i], 1, MC_BMBT, ino, 0,
			     fork == XFS_ATTR_FORK ? MODEL_EXT_ATTRFORK : 0);
		mapped += m.nbmbt;
		a->extents += m.n;
		a->bmbt += m.nbmbt;
		fs_bmap_free(&m);
	}
	if (bad) {
		a->incomplete = true;
		return;
	}
	if (ip.nblocks != mapped)
		fs_report(cx->fl, "inode.nblocks", a->agno, (int64_t)daddr, (int64_t)ino,
			  "di_nblocks", FS_U(mapped), FS_U(ip.nblocks),
			  "inode %llu claims %llu blocks but its forks map %llu (extents and bmbt "
			  "blocks)", (unsigned long long)ino, (unsigned long long)ip.nblocks,
			  (unsigned long long)mapped);
}

static bool in_hole(const struct model_ichunk *c, uint32_t i)
{
	return c->holemask & (1u << (i / XFS_INODES_PER_HOLEMASK_BIT));
}

static void scan_chunk(struct forks_ag *a, const struct model_ichunk *c)
{
	struct check_ctx *cx = a->cx;
	const struct fs_geom *g = &cx->fs->g;
	uint32_t bpc = g->blocks_per_cluster ? g->blocks_per_cluster : 1;
	fs_agblock_t chunk_agbno = fs_agino_to_agbno(g, c->startino), cur = NULLAGBLOCK;
	struct fs_buf *b = NULL;

	for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK; i++) {
		fs_agino_t agino = c->startino + i;
		fs_agblock_t agbno = fs_agino_to_agbno(g, agino);
		fs_agblock_t u = chunk_agbno + (agbno - chunk_agbno) / bpc * bpc;
		size_t off;

		if (in_hole(c, i))
			continue;
		if (!(c->seen_mask & (1ull << i))) {
			a->incomplete = true;	/* never read: its blocks are unknown */
			continue;
		}
		if (c->seen_free & (1ull << i))
			continue;
		if (u != cur) {
			uint32_t aglen = fs_ag_blocks(g, a->agno);
			uint32_t nblk = u + bpc <= aglen ? bpc : aglen - u;

			fs_buf_put(cx->cache, b);
			b = NULL;
			cur = u;
			if (fs_cache_read(cx->cache, fs_agbno_to_daddr(g, a->agno, u),
					  nblk << g->blocklog, &b))
				b = NULL;	/* phase 4 reported it */
		}
		if (!b) {
			a->incomplete = true;
			continue;
		}
		off = ((size_t)(agbno - u) << g->blocklog) +
		      ((size_t)fs_agino_to_offset(g, agino) << g->inodelog);
		if (off + g->inodesize > b->len)
			continue;
		check_inode(a, fs_agino_to_ino(g, a->agno, agino),
			    fs_agbno_to_daddr(g, a->agno, agbno), b->data + off);
		if (a->err)
			break;
	}
	fs_buf_put(cx->cache, b);
}

struct forks_totals {
	pthread_mutex_t lock;
	uint64_t inodes, extents, bmbt;
	bool incomplete;
};

static int forks_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct check_ctx *cx = ((void **)priv)[0];
	struct forks_totals *t = ((void **)priv)[1];
	struct forks_ag a = { .cx = cx, .agno = agno };
	size_t n;
	const struct model_ichunk *ic = model_ag_ichunks(cx->model, agno, &n);

	(void)worker;
	for (size_t k = 0; k < n && !a.err; k++)
		if (ic[k].where & MODEL_IC_INOBT)
			scan_chunk(&a, &ic[k]);
	pthread_mutex_lock(&t->lock);
	t->inodes += a.inodes;
	t->extents += a.extents;
	t->bmbt += a.bmbt;
	if (a.incomplete)
		t->incomplete = true;
	pthread_mutex_unlock(&t->lock);
	check_progress_add(cx, 1);
	return a.err;
}

int check_phase_forks(struct check_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct forks_totals t = { .incomplete = false };
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	void *priv[2] = { cx, &t };
	int err;

	pthread_mutex_init(&t.lock, NULL);
	check_progress_phase(cx, "inode forks", g->agcount);
	err = fs_ag_workq_run(&wo, forks_ag, priv);
	check_progress_end(cx);
	pthread_mutex_destroy(&t.lock);
	cx->fork_extents = t.extents;
	cx->bmbt_blocks = t.bmbt;
	cx->forks_complete = !t.incomplete;
	return err;
}
