// SPDX-License-Identifier: GPL-2.0
/*
 * Log replay, after the kernel's recovery (xfs_log_recover.c and the
 * per-item *_recover.c files, read for the rules): pass 1 collects the
 * buffer cancellations (a buffer freed later in the log is not replayed
 * before its last cancel record), pass 2 applies each committed
 * transaction in log order with its items in the kernel's order (buffers
 * and icreate, then inodes, dquots and intents, then inode-buffer unlinked
 * updates, then cancels).  The LSN rule keeps newer blocks: a buffer or
 * dquot whose LSN is at or past the transaction's, an inode whose LSN is
 * past it, is not overwritten.  Changes go to an overlay of sectors, never
 * to the device; at the end every replayed block gets its LSN and CRC
 * stamped as the kernel's write verifiers would, and its read verifier
 * run.  Intents are paired with their done items; the unfinished ones are
 * parsed and checked as the kernel's recovery checks them (a bad one is
 * refused as corruption) and handed to the caller with the extents they
 * name (fs_replay_open_extents): completing them is the caller's, since
 * their effect follows from the inode forks the replay leaves.  This file
 * holds the passes, the finish and the write; the items are in
 * logreplay_items.c, the intents in logreplay_intents.c, the BUIs the
 * replay applies in logreplay_bui.c, the overlay in logreplay_overlay.c.
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/verify.h"

/* ---- the passes ---- */

static int pass1(void *priv, const struct fs_log_trans *t)
{
	struct fs_replay *rp = priv;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct fs_log_item *it = &t->items[i];

		if (!it->n || !it->reg[0].len)
			return replay_fail(rp, -EUCLEAN, "transaction %#x: an empty log item", t->tid);
		if (it->type == XFS_LI_BUF) {
			const struct xfs_buf_log_format *bf = NULL;
			int err = replay_buf_format(rp, it, &bf);
			uint64_t *c;

			if (err)
				return err;
			if (!(bf->blf_flags & XFS_BLF_CANCEL))
				continue;
			c = u64map_find(&rp->cancel, replay_cancel_key(bf->blf_blkno, bf->blf_len));
			if (c && *c != MAP_GONE)
				(*c)++;
			else if ((err = u64map_put(&rp->cancel, replay_cancel_key(bf->blf_blkno, bf->blf_len), 1)))
				return err;
		} else if (it->type == XFS_LI_QUOTAOFF) {
			struct xfs_qoff_logformat q;

			if (it->reg[0].len < sizeof(q))
				return replay_fail(rp, -EUCLEAN, "a quotaoff log item of %u bytes", it->reg[0].len);
			memcpy(&q, it->reg[0].p, sizeof(q));
			/* quota types whose records are not replayed (the kernel's mapping) */
			if (q.qf_flags & XFS_UQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_USER;
			if (q.qf_flags & XFS_PQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_PROJ;
			if (q.qf_flags & XFS_GQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_GROUP;
		}
	}
	return 0;
}

/* The kernel's item order inside a transaction: 0 buffers/icreate, 1 the rest, 2 inode buffers, 3 cancels. */
static int item_class(const struct fs_log_item *it)
{
	if (it->type == XFS_LI_BUF && it->reg[0].len >= offsetof(struct xfs_buf_log_format, blf_len)) {
		const struct xfs_buf_log_format *bf = (const void *)it->reg[0].p;

		if (bf->blf_flags & XFS_BLF_CANCEL)
			return 3;
		if (bf->blf_flags & XFS_BLF_INODE_BUF)
			return 2;
		return 0;
	}
	return it->type == XFS_LI_ICREATE ? 0 : 1;
}

static int replay_item(struct fs_replay *rp, const struct fs_log_trans *t,
		       const struct fs_log_item *it)
{
	switch (it->type) {
	case XFS_LI_BUF:      return replay_buf_item(rp, it, t->lsn);
	case XFS_LI_INODE:    return replay_inode_item(rp, it, t->lsn);
	case XFS_LI_ICREATE:  return replay_icreate_item(rp, it);
	case XFS_LI_DQUOT:    return replay_dquot_item(rp, it, t->lsn);
	case XFS_LI_QUOTAOFF: return 0;
	case XFS_LI_EFI:      return replay_intent_item(rp, it, FS_INTENT_EFI, false);
	case XFS_LI_EFD:      return replay_intent_item(rp, it, FS_INTENT_EFI, true);
	case XFS_LI_RUI:      return replay_intent_item(rp, it, FS_INTENT_RUI, false);
	case XFS_LI_RUD:      return replay_intent_item(rp, it, FS_INTENT_RUI, true);
	case XFS_LI_CUI:      return replay_intent_item(rp, it, FS_INTENT_CUI, false);
	case XFS_LI_CUD:      return replay_intent_item(rp, it, FS_INTENT_CUI, true);
	case XFS_LI_BUI:      return replay_intent_item(rp, it, FS_INTENT_BUI, false);
	case XFS_LI_BUD:      return replay_intent_item(rp, it, FS_INTENT_BUI, true);
	case XFS_LI_ATTRI:    return replay_intent_item(rp, it, FS_INTENT_ATTRI, false);
	case XFS_LI_ATTRD:    return replay_intent_item(rp, it, FS_INTENT_ATTRI, true);
	case XFS_LI_XMI:      return replay_intent_item(rp, it, FS_INTENT_XMI, false);
	case XFS_LI_XMD:      return replay_intent_item(rp, it, FS_INTENT_XMI, true);
	default:
		return replay_fail(rp, -EOPNOTSUPP, "transaction %#x (LSN %u/%u) holds a log item of type "
			    "%#x, which this version does not replay", t->tid,
			    (unsigned)(t->lsn >> 32), (unsigned)t->lsn, it->type);
	}
}

static int pass2(void *priv, const struct fs_log_trans *t)
{
	struct fs_replay *rp = priv;

	for (int cls = 0; cls < 4; cls++) {
		/* inode buffers and cancels went to the head of their lists: taken newest first */
		bool reverse = cls >= 2;

		for (uint32_t k = 0; k < t->n; k++) {
			const struct fs_log_item *it = &t->items[reverse ? t->n - 1 - k : k];
			int err;

			if (item_class(it) != cls)
				continue;
			err = replay_item(rp, t, it);
			if (err)
				return err;
		}
	}
	return 0;
}

static int cmp_rbuf(const void *x, const void *y)
{
	const struct rbuf *a = x, *b = y;

	if (a->daddr != b->daddr)
		return a->daddr < b->daddr ? -1 : 1;
	if (a->bbs != b->bbs)
		return a->bbs < b->bbs ? -1 : 1;
	return a->lsn < b->lsn ? -1 : a->lsn > b->lsn;
}

/*
 * Every block a buffer item replayed gets what the kernel's write
 * verifier gives it at writeback: the transaction's LSN and a fresh CRC;
 * then its read verifier runs, as the kernel's does when it reads it next,
 * and so does every replayed inode's (as the kernel demands after each),
 * every inode chunk an icreate made and every quota record replayed: the
 * same check (replay_check_writes) runs again just before the write.
 * Inode buffers logged as such are left to the scan: the replay takes
 * only their unlinked pointers, the rest of each inode is the disk's.
 */
static int finish(struct fs_replay *rp)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_flush_result res;
	const struct rwrite *bad = NULL;
	int err = 0;

	if (rp->nbufs)
		qsort(rp->bufs, rp->nbufs, sizeof(*rp->bufs), cmp_rbuf);
	for (size_t i = 0; i < rp->nbufs && !err; i++) {
		const struct rbuf *r = &rp->bufs[i];
		uint32_t bytes = r->bbs << BBSHIFT, unit;
		const struct fs_verifier *v;
		enum fs_mtype t;
		unsigned char *b;
		fs_ino_t owner = 0;

		/* the newest of the same key carries the LSN */
		if (i + 1 < rp->nbufs && rp->bufs[i + 1].daddr == r->daddr && rp->bufs[i + 1].bbs == r->bbs)
			continue;
		if (replay_partial_dir(rp, r->blft, bytes))
			continue;
		err = replay_buf_get(rp, r->daddr, r->bbs, &b);
		if (err)
			break;
		t = fs_mtype_by_magic(b, bytes);
		if (t == FS_MT_NR) {
			/* no header of a type we know (a realtime bitmap, a stale block): as logged */
			free(b);
			continue;
		}
		v = fs_verifier_get(t);
		unit = fs_verify_unit(g, t, bytes);
		for (uint32_t off = 0; off + unit <= bytes; off += unit) {
			unsigned char *p = b + off;

			if (t == FS_MT_SB) {
				put_be64(p + offsetof(struct xfs_dsb, sb_lsn), r->lsn);
				fs_crc_update(p, unit, FS_SB_CRC_OFF);
			} else if (t == FS_MT_INODE || t == FS_MT_DQUOT) {
				/* these carry their own LSN per record, set by their own items */
				fs_crc_update(p, unit, v->crc_off);
			} else {
				if (v->lsn_off != SIZE_MAX && v->lsn_off + 8 <= unit)
					put_be64(p + v->lsn_off, r->lsn);
				if (v->crc_off != SIZE_MAX)
					fs_crc_update(p, unit, v->crc_off);
			}
		}
		/* owner-dependent checks need the owner: take the block's own claim */
		if (t == FS_MT_BMBT)
			owner = be64(((const struct xfs_btree_block *)b)->bb_u.l.bb_owner);
		else if (t == FS_MT_DIR_BLOCK || t == FS_MT_DIR_DATA || t == FS_MT_DIR_FREE)
			owner = get_be64(b + offsetof(struct xfs_dir3_blk_hdr, owner));
		else if (t == FS_MT_DA_NODE || t == FS_MT_DIR_LEAF1 || t == FS_MT_DIR_LEAFN ||
			 t == FS_MT_ATTR_LEAF)
			owner = get_be64(b + offsetof(struct xfs_da3_blkinfo, owner));
		err = replay_buf_put(rp, r->daddr, r->bbs, b);
		/* whole units only: a tail shorter than one was never stamped */
		if (!err && t != FS_MT_INODE)
			err = replay_note_write(rp, r->daddr, r->bbs, 0, bytes / unit * unit, t, owner);
		free(b);
	}
	for (size_t i = 0; i < rp->ninos && !err; i++) {
		const struct rinode *ri = &rp->inos[i];
		uint32_t bbs = (g->inodesize + BBSIZE - 1) >> BBSHIFT;

		err = replay_note_write(rp, ri->daddr + (ri->off >> BBSHIFT), bbs, 0, g->inodesize,
					FS_MT_INODE, ri->ino);
	}
	if (!err)
		err = replay_check_writes(rp, &res, &bad);
	if (err == -EUCLEAN && bad && bad->info.type == FS_MT_INODE)
		err = replay_fail(rp, err, "the replayed inode %llu fails its check: %s: %s",
				  (unsigned long long)res.ino,
				  res.has_code ? fs_code_name(res.code) : "unknown", res.message);
	else if (err == -EUCLEAN && bad)
		err = replay_fail(rp, err, "the replayed %s at daddr %llu fails its check: %s: %s",
				  fs_verifier_get(bad->info.type)->name,
				  (unsigned long long)bad->daddr,
				  res.has_code ? fs_code_name(res.code) : "unknown", res.message);
	return err;
}

int fs_replay_log(struct fs *fs, struct fs_log_info *li, struct fs_replay **out, char *msg,
		  size_t ml)
{
	struct fs_replay *rp = calloc(1, sizeof(*rp));
	struct timespec t0, t1;
	int err;

	*out = NULL;
	if (!rp)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rp->fs = fs;
	rp->msg = msg;
	rp->ml = ml;
	err = fs_log_walk(fs, li, pass1, rp, msg, ml);
	if (!err)
		err = fs_log_walk(fs, li, pass2, rp, msg, ml);
	if (!err)
		err = finish(rp);
	if (!err)
		err = replay_collect_open(rp);
	if (!err)
		err = replay_apply_buis(rp);
	if (!err)
		err = replay_apply_xmis(rp);
	if (!err)
		err = replay_apply_pptrs(rp);
	if (err) {
		fs_replay_free(rp);
		return err;
	}
	rp->st.sectors = rp->ndata;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rp->st.seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	rp->msg = NULL;
	rp->ml = 0;
	*out = rp;
	return 0;
}

const struct fs_replay_stats *fs_replay_stats(const struct fs_replay *rp)
{
	return &rp->st;
}

uint64_t fs_replay_intents_open(const struct fs_replay *rp)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < FS_INTENT_NR; i++)
		n += rp->st.intents_open[i];
	return n;
}

void fs_replay_install(struct fs_dev *dev, struct fs_replay *rp)
{
	fs_dev_set_read_patch(dev, rp ? fs_replay_patch : NULL, rp);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The log-incompat feature bits (LOG_XATTRS among them) say what the log
 * may hold; the kernel clears them when it leaves a clean log behind
 * (xfs_clear_incompat_log_features at unmount), so the replay that resets
 * the log clears them in the primary superblock too.
 */
static int clear_log_incompat(struct fs_replay *rp)
{
	uint32_t bbs = rp->fs->g.sectsize >> BBSHIFT;
	struct xfs_dsb *d;
	unsigned char *b;
	int err;

	if (!bbs)
		return -EUCLEAN;
	err = replay_buf_get(rp, XFS_SB_DADDR, bbs, &b);
	if (err)
		return err;
	d = (struct xfs_dsb *)b;
	err = 0;
	if (be32(d->sb_magicnum) == XFS_SB_MAGIC && d->sb_features_log_incompat) {
		d->sb_features_log_incompat = 0;
		fs_crc_update(b, bbs << BBSHIFT, FS_SB_CRC_OFF);
		err = replay_buf_put(rp, XFS_SB_DADDR, bbs, b);
		if (!err)
			err = replay_note_write(rp, XFS_SB_DADDR, bbs, 0, bbs << BBSHIFT, FS_MT_SB, 0);
	}
	free(b);
	return err;
}

int fs_replay_write(struct fs *fs, struct fs_replay *rp, const struct fs_log_info *li, char *msg,
		    size_t ml)
{
	struct fs_flush_result res;
	const struct rwrite *bad = NULL;
	uint64_t *secs;
	unsigned char *run = NULL;
	size_t n = 0;
	int err;

	if (!fs->logdev) {
		snprintf(msg, ml, "the external log device was not given");
		return -EOPNOTSUPP;
	}
	rp->msg = msg;
	rp->ml = ml;
	err = clear_log_incompat(rp);
	rp->msg = NULL;
	rp->ml = 0;
	if (err)
		return err;
	/* judged as finish judged them, by the flush's own check: a failure now is ours */
	err = replay_check_writes(rp, &res, &bad);
	if (err == -EUCLEAN) {
		fs_flush_result_describe(&res, msg, ml);
		if (strlen(msg) + 1 < ml)
			snprintf(msg + strlen(msg), ml - strlen(msg),
				 "; the replay stopped before its first write");
	}
	if (err)
		return err;
	secs = malloc((rp->ndata ? rp->ndata : 1) * sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	for (size_t i = 0; i < rp->sect.cap; i++)
		if (rp->sect.k[i])
			secs[n++] = rp->sect.k[i] - 1;
	qsort(secs, n, sizeof(*secs), cmp_u64);
	run = malloc(1u << 20);
	if (!run) {
		free(secs);
		return -ENOMEM;
	}
	/* sorted, coalesced runs of up to 1 MiB */
	for (size_t i = 0; i < n && !err;) {
		size_t j = i;

		while (j + 1 < n && secs[j + 1] == secs[j] + 1 && (j + 1 - i) < (1u << 20) / BBSIZE)
			j++;
		for (size_t k = i; k <= j; k++)
			memcpy(run + ((k - i) << BBSHIFT),
			       rp->data + (*u64map_find(&rp->sect, secs[k]) << BBSHIFT), BBSIZE);
		err = fs_dev_write(fs->dev, run, (j - i + 1) << BBSHIFT, secs[i] << BBSHIFT);
		if (err)
			snprintf(msg, ml, "writing replayed sectors %llu+%zu failed: %s",
				 (unsigned long long)secs[i], j - i + 1, strerror(-err));
		i = j + 1;
	}
	free(run);
	free(secs);
	if (!err) {
		err = fs_dev_flush(fs->dev);
		if (err)
			snprintf(msg, ml, "flushing the replayed blocks failed: %s", strerror(-err));
	}
	if (err)
		return err;
	/*
	 * The log, now replayed, becomes a clean one past every LSN the replay
	 * stamped, on its own device (the replayed blocks are all on the data
	 * device, flushed above first)
	 */
	return fs_log_write_clean_fs(fs, li->log_off, (uint64_t)li->log_bbs << BBSHIFT,
				     li->head_cycle + 1, "resetting the log after replay", msg, ml);
}

void fs_replay_free(struct fs_replay *rp)
{
	if (!rp)
		return;
	u64map_free(&rp->sect);
	u64map_free(&rp->cancel);
	u64map_free(&rp->intents);
	free(rp->ints);
	free(rp->exts);
	free(rp->open);
	for (size_t i = 0; i < rp->nattris; i++)
		free((void *)rp->attris[i].name);
	free(rp->attris);
	free(rp->open_attris);
	free(rp->open_pptrs);
	free(rp->xmis);
	free(rp->open_xmis);
	free(rp->data);
	free(rp->bufs);
	free(rp->inos);
	free(rp->writes);
	free(rp);
}
