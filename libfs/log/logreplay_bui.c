// SPDX-License-Identifier: GPL-2.0
/*
 * Unfinished BUIs applied by the replay, as the kernel's recovery
 * finishes them (xfs_bmap_finish_one): the inode's fork read whole
 * through the overlay, the mapping put in or taken out, and the fork
 * written back as a list in the inode or a bmbt packed into its old bmbt
 * blocks, with new ones taken from the space free after the replay when
 * it needs more (each AG's AGF, AGFL and bno btree read and verified
 * first).  The bmbt blocks freed and taken join the open extents, so the
 * caller's AG rebuild accounts for them.  A BUI is left unapplied, and
 * named, only when its fork is damaged or no block can be taken.
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/build/bload.h"
#include "libfs/format/ag.h"
#include "libfs/format/bmap.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"

/* bmbt blocks read for a BUI's fork: through the replay's view of the device */
static int bui_read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct fs_replay *rp = priv;
	const struct fs_geom *g = &rp->fs->g;
	unsigned char *b = NULL;
	int err = replay_buf_get(rp, fs_fsb_to_daddr(g, fsb), g->blocksize >> BBSHIFT, &b);

	if (err)
		return err;
	memcpy(buf, b, g->blocksize);
	free(b);
	return 0;
}

/*
 * The rebuilt bmbt of a BUI's fork goes into the fork's own old bmbt
 * blocks, then into the new ones the caller took for it (bui_take_blocks),
 * each block verified and put in the replay's view as any replayed block.
 */
struct bui_bmbt {
	struct fs_replay *rp;
	fs_ino_t ino;
	const fs_fsblock_t *old, *fresh;
	size_t nold, used, nfresh, usedfresh;
};

static int bui_bmbt_alloc(void *priv, uint64_t *ptr)
{
	struct bui_bmbt *bb = priv;

	if (bb->used < bb->nold)
		*ptr = bb->old[bb->used++];
	else if (bb->usedfresh < bb->nfresh)
		*ptr = bb->fresh[bb->usedfresh++];
	else
		return -ENOSPC;
	return 0;
}

static int bui_bmbt_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct bui_bmbt *bb = priv;
	const struct fs_geom *g = &bb->rp->fs->g;
	uint64_t daddr = fs_fsb_to_daddr(g, ptr);
	struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = bb->ino,
			      .agno = fs_fsb_to_agno(g, ptr) };
	struct fs_findings fl;
	int err = 0;

	(void)level;
	fs_findings_init(&fl);
	vc.fl = &fl;
	fs_verify(FS_MT_BMBT, &vc, block, g->blocksize);
	if (fl.n)
		err = replay_fail(bb->rp, -EUCLEAN, "a bmbt block of inode %llu rebuilt for its unfinished "
			   "BUI fails its check: %s: %s", (unsigned long long)bb->ino,
			   fl.v[0].def->code, fl.v[0].message);
	fs_findings_free(&fl);
	if (!err)
		err = replay_buf_put(bb->rp, daddr, g->blocksize >> BBSHIFT, block);
	if (!err)
		err = replay_note_write(bb->rp, daddr, g->blocksize >> BBSHIFT, 0, g->blocksize,
					FS_MT_BMBT, bb->ino);
	return err;
}

/*
 * Blocks a completed BUI changed the fate of, single blocks joining the
 * open extents as kind EFI: the old bmbt blocks it no longer uses are
 * free (flags 0), as the kernel frees them (an EFI of its own), and the
 * new ones it took are in use (FS_INTENT_EXT_TAKEN).  Either way the
 * caller's AG rebuild covers their AGs and what the scan finds about them
 * is accounted to the completion.
 */
static int bui_open_blocks(struct fs_replay *rp, const fs_fsblock_t *v, size_t n, uint32_t flags)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_intent_ext *o;

	if (!n)
		return 0;
	o = realloc(rp->open, (rp->nopen + n) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	rp->open = o;
	for (size_t i = 0; i < n; i++)
		o[rp->nopen++] = (struct fs_intent_ext){
			.kind = FS_INTENT_EFI, .flags = flags, .fsb = v[i], .len = 1,
			.agno = fs_fsb_to_agno(g, v[i]), .agbno = fs_fsb_to_agbno(g, v[i]) };
	return 0;
}

/*
 * New bmbt blocks for a BUI whose fork needs more than it had, taken as
 * the kernel's bmbt allocator takes them (near the inode: its AG first,
 * then the others in order) from the space free after the replay: each
 * AG's bno btree read through the replay's view, skipping the blocks on
 * its AGFL and every block an open extent names (an unfinished intent's,
 * whose fate is still pending, or one an earlier BUI freed or took).  The
 * AGF, the AGFL and every bno btree block walked must pass their
 * verifiers, and each record its own rules, before a block is taken.
 */
struct bui_take {
	struct fs_replay *rp;
	fs_agnumber_t agno;
	const uint32_t *agfl;      /* the AG's active AGFL entries */
	uint32_t nagfl;
	fs_fsblock_t *out;
	size_t need, got;
	char *why;                 /* set when a block read is bad */
	size_t wl;
};

static int bui_take_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct bui_take *t = priv;

	return bui_read_fsblock(t->rp, fs_agbno_to_fsb(&t->rp->fs->g, agno, agbno), buf);
}

/* The first block at or past b that neither the AGFL nor an open extent holds. */
static uint64_t bui_take_skip(const struct bui_take *t, uint64_t b)
{
	bool moved = true;

	while (moved) {
		moved = false;
		for (uint32_t i = 0; i < t->nagfl; i++)
			if (t->agfl[i] == b) {
				b++;
				moved = true;
			}
		for (size_t i = 0; i < t->rp->nopen; i++) {
			const struct fs_intent_ext *o = &t->rp->open[i];

			if (o->kind != FS_INTENT_ATTRI && o->agno == t->agno && o->agbno <= b &&
			    b < (uint64_t)o->agbno + o->len) {
				b = (uint64_t)o->agbno + o->len;
				moved = true;
			}
		}
	}
	return b;
}

static int bui_take_rec(void *priv, const void *rec)
{
	struct bui_take *t = priv;
	const struct fs_geom *g = &t->rp->fs->g;
	struct fs_alloc_rec r;
	const char *bad;
	uint64_t end;

	fs_alloc_rec_decode(rec, &r);
	bad = fs_alloc_rec_problem(g, t->agno, &r);
	if (bad) {
		snprintf(t->why, t->wl, "AG %u's free space record %u+%u is bad: %s", t->agno,
			 r.startblock, r.blockcount, bad);
		return 1;
	}
	end = (uint64_t)r.startblock + r.blockcount;
	/* the blocks this BUI took are not open yet: records ascend, so they lie before b */
	for (uint64_t b = bui_take_skip(t, r.startblock); b < end && t->got < t->need;
	     b = bui_take_skip(t, b + 1))
		t->out[t->got++] = fs_agbno_to_fsb(g, t->agno, (fs_agblock_t)b);
	return t->got == t->need;
}

/* Free blocks of AG t->agno into t->out: 0 (t->why set when something read was bad), or negative errno. */
static int bui_take_ag(struct bui_take *t)
{
	const struct fs_geom *g = &t->rp->fs->g;
	uint32_t sbbs = g->sectsize >> BBSHIFT, *agfl = NULL, n = 0;
	unsigned char *agf_b = NULL, *agfl_b = NULL;
	struct fs_findings fl;
	struct fs_vctx vc = { .g = g, .agno = t->agno };
	struct fs_btree_walk w;
	struct fs_agf agf;
	const char *what = "AGF";
	int err;

	fs_findings_init(&fl);
	vc.fl = &fl;
	vc.daddr = (fs_daddr_t)(fs_ag_agf_offset(g, t->agno) >> BBSHIFT);
	err = replay_buf_get(t->rp, (uint64_t)vc.daddr, sbbs, &agf_b);
	if (err)
		goto out;
	fs_verify(FS_MT_AGF, &vc, agf_b, g->sectsize);
	if (fl.n)
		goto bad;
	fs_agf_decode(agf_b, &agf);
	if (!agf.freeblks)
		goto out;	/* nothing free here, as the AGF says; another AG may have some */
	what = "AGFL";
	vc.daddr = (fs_daddr_t)(fs_ag_agfl_offset(g, t->agno) >> BBSHIFT);
	err = replay_buf_get(t->rp, (uint64_t)vc.daddr, sbbs, &agfl_b);
	if (err)
		goto out;
	fs_verify(FS_MT_AGFL, &vc, agfl_b, g->sectsize);
	if (!fl.n && (agf.flfirst >= g->agfl_size || agf.fllast >= g->agfl_size ||
		      agf.flcount != fs_agfl_active_count(g, &agf))) {
		snprintf(t->why, t->wl, "AG %u's AGF free list bounds are bad (first %u, last %u, "
			 "count %u)", t->agno, agf.flfirst, agf.fllast, agf.flcount);
		goto out;
	}
	if (!fl.n)
		fs_agfl_check_active(&vc, agfl_b, &agf);
	if (fl.n)
		goto bad;
	agfl = calloc(agf.flcount + 1, sizeof(*agfl));
	if (!agfl) {
		err = -ENOMEM;
		goto out;
	}
	for (; n < agf.flcount; n++)
		agfl[n] = get_be32(agfl_b + sizeof(struct xfs_agfl) +
				   fs_agfl_slot(g, &agf, n) * sizeof(__be32));
	t->agfl = agfl;
	t->nagfl = n;
	what = "free space btree";
	w = (struct fs_btree_walk){ .ops = fs_btree_ag_ops(FS_BTREE_AG_BNO), .g = g, .fl = &fl,
				    .vc = { .g = g, .agno = t->agno }, .root = agf.bno_root,
				    .nlevels = agf.bno_level, .read_block = bui_take_read,
				    .visit_rec = bui_take_rec, .priv = t };
	err = fs_btree_walk(&w);
	t->agfl = NULL;
	t->nagfl = 0;
	if (err > 0)
		err = 0;	/* stopped: enough blocks, or a bad record (t->why) */
	if (err || !fl.n)
		goto out;
bad:
	snprintf(t->why, t->wl, "AG %u's %s (daddr %lld) fails its check: %s: %.80s", t->agno, what,
		 (long long)fl.v[0].daddr, fl.v[0].def->code, fl.v[0].message);
out:
	fs_findings_free(&fl);
	free(agfl);
	free(agf_b);
	free(agfl_b);
	return err;
}

/* need new bmbt blocks for inode ino into out: 1 taken, 0 not (why says why), negative errno */
static int bui_take_blocks(struct fs_replay *rp, fs_ino_t ino, size_t need, fs_fsblock_t *out,
			   char *why, size_t wl)
{
	const struct fs_geom *g = &rp->fs->g;
	fs_agnumber_t first = fs_ino_to_agno(g, ino);
	struct bui_take t = { .rp = rp, .out = out, .need = need, .why = why, .wl = wl };

	for (fs_agnumber_t k = 0; k < g->agcount && t.got < need; k++) {
		int err;

		t.agno = (first + k) % g->agcount;
		err = bui_take_ag(&t);
		if (err)
			return err;
		if (why[0])
			return 0;
	}
	if (t.got < need) {
		snprintf(why, wl, "no free block for the new bmbt block of inode %llu (%zu needed, "
			 "%zu free)", (unsigned long long)ino, need, t.got);
		return 0;
	}
	return 1;
}

/*
 * An unfinished BUI's mapping applied to its inode's fork, as the kernel's
 * recovery finishes it (xfs_bmap_finish_one): map puts the extent into a
 * hole (xfs_bmapi_remap, merged with neighbours it continues as
 * xfs_bmap_add_extent_hole_real merges), unmap takes the range out
 * (__xfs_bunmapi with XFS_BMAPI_REMAP: the blocks' fate is the refcount
 * and free intents', which the caller's rebuild derives from the forks);
 * di_nblocks and the extent count follow.  The fork, a list of extents or
 * a block map btree, is read whole, changed as a list and written back:
 * a list in the inode when it fits (the kernel's btree-to-extents rule),
 * else a bmbt packed full by the bulk loader in the fork's old bmbt
 * blocks; the kernel splits and joins blocks one by one, so its tree may
 * use more blocks than ours (never fewer: it keeps blocks at least half
 * full and ours are full), the mappings are the same.  A fork that needs
 * more bmbt blocks than it had (a list that must become a btree, a btree
 * that needs another leaf) takes the new ones from the space free after
 * the replay (bui_take_blocks), as the kernel's bmbt allocator does; only
 * a filesystem with no free block left (or whose free space records are
 * damaged) leaves the BUI unapplied.  1 applied, 0 not (why in *why),
 * negative errno.
 */
static int apply_bui(struct fs_replay *rp, const struct fs_intent_ext *x, char *why, size_t wl)
{
	const struct fs_geom *g = &rp->fs->g;
	int whichfork = (x->flags & XFS_BMAP_EXTENT_ATTR_FORK) ? XFS_ATTR_FORK : XFS_DATA_FORK;
	const char *fname = whichfork == XFS_DATA_FORK ? "data" : "attr";
	uint32_t bbs = (g->inodesize + BBSIZE - 1) >> BBSHIFT, fsize;
	uint64_t daddr = fs_ino_to_daddr(g, x->owner), n, nn = 0, nblocks, end, nbmbt = 0;
	struct fs_bmap_ext *v = NULL, nw = { .startoff = x->startoff, .startblock = x->fsb,
					     .blockcount = x->len,
					     .unwritten = (x->flags & XFS_BMAP_EXTENT_UNWRITTEN) != 0 };
	struct fs_bmap m = { 0 };
	fs_fsblock_t *fresh = NULL;
	size_t nfresh = 0;
	struct xfs_dinode *d;
	struct fs_inode ip;
	unsigned char *b, *fork;
	uint8_t fmt, newfmt = XFS_DINODE_FMT_EXTENTS;
	int err;

	err = replay_buf_get(rp, daddr, bbs, &b);
	if (err)
		return err;
	d = (struct xfs_dinode *)b;
	fs_inode_decode(b, &ip);
	n = whichfork == XFS_DATA_FORK ? ip.nextents : ip.anextents;
	fmt = whichfork == XFS_DATA_FORK ? ip.format : ip.aformat;
	fsize = fs_inode_fork_size(g, &ip, whichfork);
	err = 0;
	if (be16(d->di_magic) != XFS_DINODE_MAGIC || ip.version != 3 || ip.ino != x->owner) {
		snprintf(why, wl, "inode %llu is not an inode core", (unsigned long long)x->owner);
		goto out;
	}
	if ((fmt != XFS_DINODE_FMT_EXTENTS && fmt != XFS_DINODE_FMT_BTREE) ||
	    (fmt == XFS_DINODE_FMT_EXTENTS && n > fsize / sizeof(struct xfs_bmbt_rec))) {
		snprintf(why, wl, "inode %llu's %s fork is neither a list of extents in the inode "
			 "nor a block map btree", (unsigned long long)x->owner, fname);
		goto out;
	}
	fork = (unsigned char *)fs_inode_fork_ptr(b, &ip, whichfork);
	{
		/* the whole fork as a list: the bmbt walker check uses, reading the replayed view */
		struct fs_findings fl;
		struct fs_bmap_ctx c = { .g = g, .read_fsblock = bui_read_fsblock, .priv = rp };

		fs_findings_init(&fl);
		c.fl = &fl;
		err = fs_bmap_load(&c, b, &ip, whichfork, &m);
		if (!err && (m.bad || fl.n))
			snprintf(why, wl, "inode %llu's %s fork fails its check before the BUI: %s: %.100s",
				 (unsigned long long)x->owner, fname,
				 fl.n ? fl.v[0].def->code : "bmap", fl.n ? fl.v[0].message : "damaged");
		fs_findings_free(&fl);
		if (err || why[0])
			goto out;
		n = m.n;
		nbmbt = m.nbmbt;
	}
	v = calloc(n + 2, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	nblocks = ip.nblocks;
	end = x->startoff + x->len;
	for (uint64_t i = 0; i < n; i++) {
		struct fs_bmap_ext e = m.ext[i];
		uint64_t eend, cut;

		eend = e.startoff + e.blockcount;
		if (x->type == 1 || eend <= x->startoff || e.startoff >= end) {
			if (x->type == 1 && eend > x->startoff && e.startoff < end) {
				snprintf(why, wl, "inode %llu already maps file block %llu, where the BUI "
					 "maps a new extent", (unsigned long long)x->owner,
					 (unsigned long long)(e.startoff > x->startoff ? e.startoff :
							      x->startoff));
				goto out;
			}
			v[nn++] = e;
			continue;
		}
		/* unmap: what lies before and after the range stays */
		cut = (eend < end ? eend : end) - (e.startoff > x->startoff ? e.startoff : x->startoff);
		if (cut > nblocks) {
			snprintf(why, wl, "inode %llu counts fewer blocks than the BUI unmaps",
				 (unsigned long long)x->owner);
			goto out;
		}
		nblocks -= cut;
		if (e.startoff < x->startoff)
			v[nn++] = (struct fs_bmap_ext){ e.startoff, e.startblock,
							x->startoff - e.startoff, e.unwritten };
		if (eend > end)
			v[nn++] = (struct fs_bmap_ext){ end, e.startblock + (end - e.startoff),
							eend - end, e.unwritten };
	}
	if (x->type == 1) {
		uint64_t at = 0;
		bool left, right;

		while (at < nn && v[at].startoff < x->startoff)
			at++;
		left = at > 0 && v[at - 1].startoff + v[at - 1].blockcount == nw.startoff &&
		       v[at - 1].startblock + v[at - 1].blockcount == nw.startblock &&
		       v[at - 1].unwritten == nw.unwritten &&
		       v[at - 1].blockcount + nw.blockcount <= XFS_MAX_BMBT_EXTLEN;
		right = at < nn && nw.startoff + nw.blockcount == v[at].startoff &&
			nw.startblock + nw.blockcount == v[at].startblock &&
			v[at].unwritten == nw.unwritten &&
			v[at].blockcount + nw.blockcount <= XFS_MAX_BMBT_EXTLEN;
		if (left && right &&
		    v[at - 1].blockcount + nw.blockcount + v[at].blockcount > XFS_MAX_BMBT_EXTLEN)
			right = false;
		if (left) {
			v[at - 1].blockcount += nw.blockcount;
			if (right) {
				v[at - 1].blockcount += v[at].blockcount;
				memmove(v + at, v + at + 1, (nn - at - 1) * sizeof(*v));
				nn--;
			}
		} else if (right) {
			v[at].startoff = nw.startoff;
			v[at].startblock = nw.startblock;
			v[at].blockcount += nw.blockcount;
		} else {
			memmove(v + at + 1, v + at, (nn - at) * sizeof(*v));
			v[at] = nw;
			nn++;
		}
		nblocks += x->len;
	}
	if (nn * sizeof(struct xfs_bmbt_rec) > fsize) {
		struct fs_bload_geom geo;
		struct fs_bload_slack full = { 0, 0 };

		err = fs_bload_compute_geometry(fs_btree_ops_get(FS_BTREE_BMBT), g->blocksize, nn,
						&full, fsize, &geo);
		if (err) {
			snprintf(why, wl, "inode %llu's %s fork of %llu extents has no block map "
				 "btree shape (%s)", (unsigned long long)x->owner, fname,
				 (unsigned long long)nn, strerror(-err));
			err = 0;
			goto out;
		}
		if (geo.nblocks > nbmbt) {
			/* more bmbt blocks than the fork had: new ones from free space */
			nfresh = geo.nblocks - nbmbt;
			fresh = calloc(nfresh, sizeof(*fresh));
			if (!fresh) {
				err = -ENOMEM;
				goto out;
			}
			err = bui_take_blocks(rp, x->owner, nfresh, fresh, why, wl);
			if (err <= 0)
				goto out;
			err = 0;
		}
	}
	{
		struct bui_bmbt bb = { .rp = rp, .ino = x->owner, .old = m.bmbt, .nold = m.nbmbt,
				       .fresh = fresh, .nfresh = nfresh };
		uint64_t written = 0;

		memset(fork, 0, fsize);
		err = fs_bload_fork(g, x->owner, v, nn, fork, fsize, bui_bmbt_alloc, bui_bmbt_write,
				    &bb, &newfmt, &written);
		if (err)
			goto out;
		err = bui_open_blocks(rp, m.bmbt + bb.used, m.nbmbt - bb.used, 0);
		if (!err)
			err = bui_open_blocks(rp, fresh, bb.usedfresh, FS_INTENT_EXT_TAKEN);
		if (err)
			goto out;
		if (bb.usedfresh)
			rp->st.bui_bmbt_taken++;
		if (m.nbmbt > bb.used)
			rp->st.bui_bmbt_freed++;
		nblocks = nblocks - nbmbt + written;
	}
	if (whichfork == XFS_DATA_FORK)
		d->di_format = newfmt;
	else
		d->di_aformat = newfmt;
	d->di_nblocks = to_be64(nblocks);
	if (whichfork == XFS_DATA_FORK && ip.nrext64)
		d->di_big_nextents = to_be64(nn);
	else if (whichfork == XFS_DATA_FORK)
		d->di_nextents = to_be32((uint32_t)nn);
	else if (ip.nrext64)
		d->di_big_anextents = to_be32((uint32_t)nn);
	else
		d->di_anextents = to_be16((uint16_t)nn);
	fs_crc_update(b, g->inodesize, XFS_DINODE_CRC_OFF);
	err = replay_buf_put(rp, daddr, bbs, b);
	if (!err) {
		struct fs_findings fl;
		struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = x->owner,
				      .agno = fs_ino_to_agno(g, x->owner) };

		/* the changed inode passes the inode verifier, as any replayed one */
		fs_findings_init(&fl);
		vc.fl = &fl;
		fs_verify(FS_MT_INODE, &vc, b, g->inodesize);
		if (fl.n)
			err = replay_fail(rp, -EUCLEAN, "inode %llu fails its check after its unfinished "
				   "BUI was applied: %s: %s", (unsigned long long)x->owner,
				   fl.v[0].def->code, fl.v[0].message);
		fs_findings_free(&fl);
		if (!err)
			err = replay_note_write(rp, daddr, bbs, 0, g->inodesize, FS_MT_INODE,
						x->owner);
		if (!err)
			err = 1;
	}
out:
	fs_bmap_free(&m);
	free(fresh);
	free(v);
	free(b);
	return err;
}

int replay_bmap_apply(struct fs_replay *rp, const struct fs_intent_ext *x, char *why, size_t wl)
{
	return apply_bui(rp, x, why, wl);
}

struct fs_intent_ext *replay_open_add(struct fs_replay *rp, size_t n)
{
	struct fs_intent_ext *o = realloc(rp->open, (rp->nopen + n + 1) * sizeof(*o));

	if (!o)
		return NULL;
	rp->open = o;
	rp->nopen += n;
	return o + rp->nopen - n;
}

/* Every unfinished BUI, in log order; those that cannot be applied are counted and named. */
int replay_apply_buis(struct fs_replay *rp)
{
	for (size_t i = 0; i < rp->nopen; i++) {
		struct fs_intent_ext x = rp->open[i];	/* a copy: apply_bui may grow rp->open */
		char why[200] = "";
		int r;

		if (x.kind != FS_INTENT_BUI)
			continue;
		r = apply_bui(rp, &x, why, sizeof(why));
		if (r < 0)
			return r;
		if (r) {
			rp->st.buis_applied++;
		} else {
			rp->st.buis_unapplied++;
			if (!rp->bui_why[0])
				snprintf(rp->bui_why, sizeof(rp->bui_why), "an unfinished BUI (%s of "
					 "file blocks %llu+%u): %s", rp->open[i].type == 1 ? "map" : "unmap",
					 (unsigned long long)rp->open[i].startoff, rp->open[i].len, why);
		}
	}
	return 0;
}

const char *fs_replay_bui_unapplied(const struct fs_replay *rp)
{
	return rp->st.buis_unapplied ? rp->bui_why : NULL;
}
