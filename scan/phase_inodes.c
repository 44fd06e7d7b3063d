// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 4 of the scan, the inode scan: every inode of every chunk the inode
 * btree lists is read exactly once.  An AG's inode clusters go to the
 * streaming reader in one list (dense chunk runs become 2 MiB windows kept
 * in flight on the worker's queue); each completed window is walked in
 * place and dropped, so inode clusters never fill the metadata cache.
 * The chunk geometry is libfs's, in the section of libfs/format/inode.c
 * bulkstat's inode scan takes its inode addresses from: which clusters
 * hold a chunk's inodes (fs_ichunk_clusters, fs_ichunk_in_hole).  The
 * reading stays here: the chunks are the model's (the inode btrees' and
 * those the rmapbt or a probe found, which an inobt walk never sees) and
 * windows are taken in completion order, which bulkstat's scan, bound to
 * inode order, cannot do.
 *
 * Per inode: the verifier table's v3 core rules (findings collected per
 * inode, then moved to the run's list, so the later steps know whether the
 * core can be trusted), the state on disk (mode 0 = free) against the inode
 * btree's free mask, the link record (scan/links.h), and then the
 * per-inode steps (cx->steps, struct scan_step): fork block maps
 * (phase_forks.c), directories (phase_dirs.c), xattrs, remote symlinks and
 * special files (phase_attrs.c).  What needs other blocks read (bmbt, directory, attr,
 * remote symlink blocks) is deferred to phase 5 (phase_blocks.c), which
 * reads them ahead in batches; directories must wait there anyway until
 * every inode's type is known.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/util/vec.h"

/* The AG's inode clusters (those the inode btree lists), one extent each. */
static int cluster_list(struct scan_ctx *cx, fs_agnumber_t agno, const struct model_ichunk *ic,
			size_t n, struct fs_ra_extent **out, size_t *nout)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ra_extent *ext;
	size_t m = 0, cap = n * 2 + 8;

	ext = malloc(cap * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		struct fs_icluster cl[XFS_INODES_PER_CHUNK];
		unsigned ncl;

		if (!(ic[k].where & (MODEL_IC_INOBT | MODEL_IC_UNCERTAIN)))
			continue;
		ncl = fs_ichunk_clusters(g, agno, ic[k].startino, ic[k].holemask, cl);
		for (unsigned i = 0; i < ncl; i++) {
			if (FS_VEC_ROOM(ext, m, cap, cap)) {
				free(ext);
				return -ENOMEM;
			}
			ext[m++] = (struct fs_ra_extent){ fs_agbno_to_daddr(g, agno, cl[i].agbno),
							  cl[i].blocks << g->blocklog };
		}
	}
	*out = ext;
	*nout = m;
	return 0;
}

/*
 * Findings that say nothing of the inode's contents: its CRC, and a magic
 * or version an identified inode had mended (scan_inode_mend_identity).
 * They hide nothing: the contents are judged by every rule all the same,
 * and repair re-stamps the CRC only on contents that pass.
 */
static bool says_nothing_of_contents(const struct fs_finding *f, bool mended)
{
	return f->code == FS_C_INODE_CRC || (mended && (f->def->flags & FS_FL_IDENTITY));
}

/*
 * Fields repair resets without changing how the inode's contents read
 * (FS_FL_KEEPS_CONTENTS): a directory, xattrs or a symlink with one of
 * them are judged all the same.  So are bad flags on anything but a
 * regular file (a realtime flag moves a file's data; on other types
 * repair drops every flag that does not belong).  A directory repair
 * keeps must have been walked: its children are where it says, not
 * orphans.
 */
static bool mended_without_contents(const struct fs_finding *f, uint16_t mode)
{
	if (f->def->flags & FS_FL_KEEPS_CONTENTS)
		return true;
	return f->code == FS_C_INODE_FLAGS && mode && !S_ISREG(mode);
}

/* The identity findings of the damaged bytes: the rest is judged on the mended copy. */
static bool not_identity(void *priv, const struct fs_finding *f)
{
	(void)priv;
	return !(f->def->flags & FS_FL_IDENTITY);
}

/* Whether a finding of the inode verifier leaves the forks' block maps meaningless. */
static bool moves_forks(const struct fs_finding *f, bool mended)
{
	if (f->def->flags & FS_FL_KEEPS_FORKS)
		return false;
	return !says_nothing_of_contents(f, mended);
}

static void scan_inode(struct scan_ag *s, struct model_ichunk *c, uint64_t slot, uint32_t i,
		       fs_daddr_t daddr, const unsigned char *dip)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_geom *g = &cx->fs->g;
	struct scan_inode ci = {
		.agno = s->agno, .agino = c->startino + i, .daddr = daddr, .dip = dip, .slot = slot,
	};
	struct fs_vctx vc = { .g = g, .fl = &s->scratch, .agno = s->agno, .daddr = daddr,
			      .have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn,
			      .decoded = &ci.ip };
	bool free_disk, free_btree, uncertain = !(c->where & MODEL_IC_INOBT), mended_id = false;
	unsigned char mended[1u << XFS_DINODE_MAX_LOG];

	ci.ino = fs_agino_to_ino(g, s->agno, ci.agino);
	vc.ino = ci.ino;
	if (uncertain) {
		/*
		 * No inode btree lists this chunk: only inodes that prove
		 * themselves (magic, their own number) are inodes, and the
		 * first one makes the chunk's blocks inodes in the model.
		 */
		if (!scan_inode_proves(g, s->agno, ci.agino, dip))
			return;
		if (!(c->where & MODEL_IC_FOUND)) {
			int err = model_add_chunk_blocks(cx->model, s->agno, c->startino, c->holemask,
							 fs_agino_to_ino(g, s->agno, c->startino));

			c->where |= MODEL_IC_FOUND;
			if (err == -ENOMEM && !s->err)
				s->err = err;
		}
	}
	s->checked++;
	fs_verify(FS_MT_INODE, &vc, dip, g->inodesize);
	/*
	 * An inode whose magic or version is damaged but whose di_ino and
	 * UUID name it is judged as the inode it is: its identity findings
	 * stay, every other rule runs on a copy with magic and version set
	 * (what repair writes), and the steps below read that copy.
	 */
	if (s->scratch.n && g->inodesize <= sizeof(mended) &&
	    scan_inode_mend_identity(g, ci.ino, dip, mended)) {
		bool crc_ok = fs_crc_ok(dip, g->inodesize, XFS_DINODE_CRC_OFF);

		fs_findings_drop(&s->scratch, not_identity, NULL);
		memset(&ci.ip, 0, sizeof(ci.ip));
		fs_verify(FS_MT_INODE, &vc, mended, g->inodesize);
		/* the CRC as stored does not match the bytes on disk: said, whatever the copy's */
		if (!crc_ok && !fs_findings_has(&s->scratch, FS_C_INODE_CRC))
			fs_report(&s->scratch, FS_C_INODE_CRC, s->agno, (int64_t)daddr, (int64_t)ci.ino,
				  "crc", FS_X(fs_crc_compute(dip, g->inodesize, XFS_DINODE_CRC_OFF)),
				  FS_X(fs_crc_stored(dip, XFS_DINODE_CRC_OFF)),
				  "inode CRC does not match its contents");
		dip = ci.dip = mended;
		mended_id = true;
	}
	ci.core_ok = !s->scratch.dropped;
	ci.forks_ok = !s->scratch.dropped;
	for (size_t k = 0; k < s->scratch.n; k++) {
		const struct fs_finding *f = &s->scratch.v[k];

		if (!says_nothing_of_contents(f, mended_id) && !mended_without_contents(f, ci.ip.mode))
			ci.core_ok = false;
		if (moves_forks(f, mended_id))
			ci.forks_ok = false;
	}
	if (fs_findings_move(cx->fl, &s->scratch) == -ENOMEM && !s->err)
		s->err = -ENOMEM;
	/* the verifier decoded the core (version 0: it stopped before, or disk says 0) */
	if (!ci.ip.version)
		fs_inode_decode(dip, &ci.ip);
	scan_links_note_slot(cx, slot, &ci.ip, !ci.core_ok);
	if (!ci.forks_ok && ci.ip.mode && cx->links && slot < cx->links->nslots)
		cx->links->rec[slot].flags |= LR_FORKS_UNREAD;

	free_disk = ci.ip.mode == 0;
	free_btree = c->ir_free & (1ull << i);
	c->seen_mask |= 1ull << i;
	if (free_disk)
		c->seen_free |= 1ull << i;
	if (uncertain)
		;	/* no inode btree to compare with: inobt.lost says so per AG */
	else if (free_disk && !free_btree)
		fs_report(cx->fl, FS_C_INODE_FREE, s->agno, (int64_t)daddr, (int64_t)ci.ino, "di_mode",
			  "an allocated inode", "0 (free)",
			  "inode %llu is allocated in the inode btree but free on disk",
			  (unsigned long long)ci.ino);
	else if (!free_disk && free_btree)
		fs_report(cx->fl, FS_C_INOBT_FREEMASK, s->agno, (int64_t)daddr, (int64_t)ci.ino,
			  "ir_free", "bit clear (in use)", "bit set (free)",
			  "inode %llu is in use on disk (mode 0%o) but free in the inode btree",
			  (unsigned long long)ci.ino, ci.ip.mode);
	if (free_disk || s->err)
		return;
	for (const struct scan_step *const *st = cx->steps; *st; st++)
		(*st)->inode(s, &ci);
}

/*
 * One inode cluster as it arrives.  Its inodes are looked up chunk by
 * chunk: with 64 KiB blocks a block holds two chunks' inodes.
 */
static void scan_cluster(void *priv, const struct fs_ra_extent *x, const unsigned char *data)
{
	struct scan_ag *s = priv;
	struct scan_ctx *cx = s->cx;
	const struct fs_geom *g = &cx->fs->g;
	fs_agblock_t u = fs_daddr_to_agbno(g, s->agno, x->daddr);
	fs_agino_t first = fs_agbno_to_agino(g, u);
	uint32_t count = x->len >> g->inodelog;
	const struct model_ichunk *base;
	struct model_ichunk *c = NULL;
	size_t nchunks;
	bool reported = false;

	base = model_ag_ichunks(cx->model, s->agno, &nchunks);
	for (uint32_t k = 0; k < count; k++) {
		fs_agino_t agino = first + k;
		uint32_t i;
		fs_agblock_t agbno;

		if (!c || agino < c->startino || agino - c->startino >= XFS_INODES_PER_CHUNK)
			c = model_ichunk_find(cx->model, s->agno, agino);
		if (!c || !(c->where & (MODEL_IC_INOBT | MODEL_IC_UNCERTAIN)))
			continue;
		i = agino - c->startino;
		if (fs_ichunk_in_hole(c->holemask, i))
			continue;
		agbno = fs_agino_to_agbno(g, agino);
		if (!data) {
			s->incomplete = true;
			if (!reported)
				fs_report(cx->fl, FS_C_INODE_UNREADABLE, s->agno,
					  (int64_t)fs_agbno_to_daddr(g, s->agno, u),
					  (int64_t)fs_agino_to_ino(g, s->agno, agino), NULL, NULL, NULL,
					  "inode cluster at AG block %u could not be read", u);
			reported = true;
			continue;
		}
		/*
		 * inode k of the cluster at k inodes in (not fs_inode_in_read:
		 * its address arithmetic per inode cost 1% of the scan's
		 * instructions on the aged benchmark image)
		 */
		scan_inode(s, c, cx->links->ag_base[s->agno] +
			   (uint64_t)(c - base) * XFS_INODES_PER_CHUNK + i, i,
			   fs_agbno_to_daddr(g, s->agno, agbno), data + ((size_t)k << g->inodelog));
	}
}

/* Chunks with inodes that no inode btree lists (found through the rmapbt): one finding per AG. */
static void lost_chunks(struct scan_ctx *cx, fs_agnumber_t agno)
{
	const struct fs_geom *g = &cx->fs->g;
	size_t n, lost = 0;
	const struct model_ichunk *ic = model_ag_ichunks(cx->model, agno, &n), *first = NULL;

	for (size_t k = 0; k < n; k++)
		if ((ic[k].where & MODEL_IC_FOUND) && !(ic[k].where & MODEL_IC_INOBT)) {
			if (!first)
				first = &ic[k];
			lost++;
		}
	if (!lost)
		return;
	fs_report(cx->fl, FS_C_INOBT_LOST, agno, FS_NONE,
		  (int64_t)fs_agino_to_ino(g, agno, first->startino), "startino",
		  "in the inode btree", FS_U(first->startino),
		  "%zu inode chunks the rmap btree lists hold inodes the inode btree does not list "
		  "(the first at AG inode %u); they were scanned", lost, first->startino);
}

/* One work item: a part of an AG's chunks (scan_item_chunks). */
static int inodes_item(void *priv, uint32_t item, unsigned worker)
{
	struct scan_ctx *cx = priv;
	fs_agnumber_t agno = item / cx->parts;
	struct scan_ag s = { .cx = cx, .agno = agno, .item = item, .worker = worker,
			     .deferring = true };
	/*
	 * Windows cover runs of adjacent clusters only (gap_max one 4 KiB
	 * block): between chunks lies file data, read for nothing, and
	 * smaller windows keep the streaming buffers small.  Sixteen in
	 * flight (the default --queue-depth) keep a device busy when the
	 * page cache has nothing.
	 */
	const struct fs_ra_opts ro = { .qdepth = cx->opts->qdepth, .gap_max = 4096,
				       .inflight_max = cx->ra_inflight };
	struct fs_ra_stats st = { 0 };
	struct fs_ra_extent *ext;
	size_t n, m, lo, hi;
	const struct model_ichunk *ic = model_ag_ichunks(cx->model, agno, &n);
	int err;

	scan_item_chunks(cx, ic, n, item % cx->parts, &lo, &hi);
	fs_findings_init(&s.scratch);
	err = cluster_list(cx, agno, ic + lo, hi - lo, &ext, &m);
	if (!err) {
		err = fs_ra_stream(cx->fs->dev, cx->ioq[worker], ext, m, &ro, scan_cluster, &s, &st);
		free(ext);
	}
	if (!err && !s.err)
		err = scan_defer_flush(&s);
	fs_findings_free(&s.scratch);
	scan_ra_account(cx, &st);
	pthread_mutex_lock(&cx->ra_lock);
	cx->inodes_checked += s.checked;
	cx->deferred += s.deferred;
	cx->fork_extents += s.extents;
	cx->bmbt_blocks += s.bmbt;
	if (s.incomplete || err || s.err)
		cx->forks_complete = false;
	pthread_mutex_unlock(&cx->ra_lock);
	scan_progress_add(cx, 1);
	return err ? err : s.err;
}

int scan_phase_inodes(struct scan_ctx *cx)
{
	int err;

	cx->forks_complete = true;
	err = scan_each_item(cx, "inodes", inodes_item, cx);
	scan_defer_release(cx);
	for (fs_agnumber_t agno = 0; agno < cx->fs->g.agcount; agno++)
		lost_chunks(cx, agno);
	return err;
}
