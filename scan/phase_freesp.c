// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 2 of the scan: per AG, record the statically owned blocks (AG headers,
 * the internal log, the AGFL's blocks) in the model, walk the two free
 * space btrees (bno by block, cnt by size) with the generic walker, check
 * every record, check that the two trees describe the same extent set, and
 * compare the AGF's counters (freeblks, longest, btreeblks) and the
 * superblock's fdblocks with what was found.  The rmap and refcount trees
 * (also rooted in the AGF) are walked for their blocks and records' own
 * rules; comparing their contents with the observed owners needs the
 * inode scan and comes with it.  Free extents and btree
 * blocks go into the model, where the last phase finds double claims.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "libfs/format/ag.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/endian.h"
#include "libfs/util/vec.h"

#define MISMATCH_REPORTS 10   /* per AG, then one summary */

struct fsp_tree {
	struct scan_bt bt;         /* first: the shared walk's part */
	struct fs_alloc_rec *rec;
	size_t n, cap;
	uint64_t prev_end;         /* bno: end of the previous record */
	bool have_prev;
	uint64_t bad_recs;         /* records that broke their own rules */
};

struct fsp_ag {
	struct scan_btw w;         /* first: the shared walk's part (cx, agno, worker, err) */
	struct fs_agf agf;
	uint32_t agfl_count;
};

/* What phase 2 adds up over all AGs for the superblock counters. */
struct fsp_totals {
	pthread_mutex_t lock;
	uint64_t fdblocks;
	bool complete;             /* every AG's trees walked without a rejected block */
};

static void fsp_report(struct fsp_ag *a, enum fs_code code, fs_agblock_t agbno, const char *field,
		       const char *exp, const char *found, const char *msg)
{
	const struct fs_geom *g = &a->w.cx->fs->g;

	fs_report(a->w.cx->fl, code, a->w.agno,
		  agbno == NULLAGBLOCK ? FS_NONE : (int64_t)fs_agbno_to_daddr(g, a->w.agno, agbno),
		  FS_NONE, field, exp, found, "%s", msg);
}

static void model_note(struct fsp_ag *a, fs_agblock_t agbno, uint32_t len, enum model_class cls)
{
	int err = model_add(a->w.cx->model, a->w.agno, agbno, len, cls, 0, 0, 0);

	if (err == -ENOMEM && !a->w.err)
		a->w.err = err;
}

/* ---- walker callbacks ---- */

/*
 * rmap and refcount records: their own rules here (the walker skipped the
 * order of invalid ones); phase 8 (phase_rmap.c) compares them with the owners.
 */
static int visit_other_rec(struct fsp_ag *a, const void *rec)
{
	struct fsp_tree *t = (struct fsp_tree *)a->w.t;
	const struct fs_geom *g = &a->w.cx->fs->g;
	const char *why;
	char found[96], msg[200];

	if (t->bt.cls == MC_RMAPBT) {
		struct fs_rmap_rec r;

		fs_rmap_rec_decode(rec, &r);
		why = fs_rmap_rec_problem(g, a->w.agno, &r);
		/* inode chunks as the rmapbt knows them: phase 3 finds those the inobt lost */
		if (!why && r.owner == XFS_RMAP_OWN_INODES) {
			struct scan_ranges *ri = &a->w.cx->rmap_inodes[a->w.agno];

			if (FS_VEC_ROOM(ri->v, ri->n, ri->cap, 64))
				return -ENOMEM;
			ri->v[ri->n++] = (struct scan_range){ r.startblock, r.blockcount };
		}
		snprintf(found, sizeof(found), "%u+%u owner %lld offset %llu%s%s%s", r.startblock,
			 r.blockcount, (long long)r.owner, (unsigned long long)r.offset,
			 r.attr_fork ? " attr" : "", r.bmbt_block ? " bmbt" : "",
			 r.unwritten ? " unwritten" : "");
	} else {
		struct fs_refc_rec r;

		fs_refc_rec_decode(rec, &r);
		why = fs_refc_rec_problem(g, a->w.agno, &r);
		snprintf(found, sizeof(found), "%u+%u refcount %u%s", r.startblock, r.blockcount,
			 r.refcount, r.cow ? " cow" : "");
	}
	t->n++;
	if (!why)
		return 0;
	t->bad_recs++;
	snprintf(msg, sizeof(msg), "%s record %s: %s", t->bt.ops->name, found, why);
	fsp_report(a, t->bt.ops->codes[FS_BTC_REC], t->bt.leaf, "record", "a valid record", found, msg);
	return 0;
}

static int visit_rec(void *priv, const void *rec)
{
	struct fsp_ag *a = priv;
	struct fsp_tree *t = (struct fsp_tree *)a->w.t;
	const struct fs_geom *g = &a->w.cx->fs->g;
	struct fs_alloc_rec r;
	const char *why;
	char found[48], msg[160];

	if (t->bt.cls == MC_RMAPBT || t->bt.cls == MC_REFCBT)
		return visit_other_rec(a, rec);
	fs_alloc_rec_decode(rec, &r);
	snprintf(found, sizeof(found), "%u+%u", r.startblock, r.blockcount);
	why = fs_alloc_rec_problem(g, a->w.agno, &r);
	if (why) {
		snprintf(msg, sizeof(msg), "%s record %s: %s", t->bt.ops->name, found, why);
		fsp_report(a, FS_C_FREESP_REC, t->bt.leaf, "record", "an extent inside the AG", found, msg);
		return 0;
	}
	if (t->bt.cls == MC_BNOBT) {
		if (t->have_prev && r.startblock < t->prev_end) {
			snprintf(msg, sizeof(msg), "bno btree record %s overlaps the previous record", found);
			fsp_report(a, FS_C_FREESP_OVERLAP, t->bt.leaf, "startblock",
				   FS_U(t->prev_end), FS_U(r.startblock), msg);
		}
		t->prev_end = (uint64_t)r.startblock + r.blockcount;
		t->have_prev = true;
		model_note(a, r.startblock, r.blockcount, MC_FREE);
	}
	if (FS_VEC_ROOM(t->rec, t->n, t->cap, 256))
		return -ENOMEM;
	t->rec[t->n++] = r;
	return 0;
}

static int cmp_rec_bno(const void *pa, const void *pb)
{
	const struct fs_alloc_rec *x = pa, *y = pb;

	if (x->startblock != y->startblock)
		return x->startblock < y->startblock ? -1 : 1;
	return x->blockcount < y->blockcount ? -1 : x->blockcount > y->blockcount;
}

/* Both trees must list the same extents; report what only one of them has. */
static void compare_trees(struct fsp_ag *a, struct fsp_tree *bno, struct fsp_tree *cnt)
{
	size_t i = 0, j = 0, bad = 0;

	if (cnt->n)
		qsort(cnt->rec, cnt->n, sizeof(*cnt->rec), cmp_rec_bno);
	while (i < bno->n || j < cnt->n) {
		int c = i >= bno->n ? 1 : j >= cnt->n ? -1 : cmp_rec_bno(&bno->rec[i], &cnt->rec[j]);
		const struct fs_alloc_rec *r;
		char found[48], msg[160];

		if (c == 0) {
			i++;
			j++;
			continue;
		}
		r = c < 0 ? &bno->rec[i++] : &cnt->rec[j++];
		if (++bad > MISMATCH_REPORTS)
			continue;
		snprintf(found, sizeof(found), "%u+%u", r->startblock, r->blockcount);
		snprintf(msg, sizeof(msg), "free extent %s is in the %s btree but not in the %s btree",
			 found, c < 0 ? "bno" : "cnt", c < 0 ? "cnt" : "bno");
		fsp_report(a, FS_C_FREESP_MISMATCH, NULLAGBLOCK, c < 0 ? "cnt" : "bno",
			   "the same extent", found, msg);
	}
	if (bad > MISMATCH_REPORTS) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%zu more free extents are in only one of the two btrees",
			 bad - MISMATCH_REPORTS);
		fsp_report(a, FS_C_FREESP_MISMATCH, NULLAGBLOCK, NULL, NULL, NULL, msg);
	}
}

static void check_counter(struct fsp_ag *a, const char *field, uint64_t on_disk, uint64_t seen)
{
	char msg[128];

	if (on_disk == seen)
		return;
	snprintf(msg, sizeof(msg), "AGF %s is %llu but the btrees hold %llu", field,
		 (unsigned long long)on_disk, (unsigned long long)seen);
	fs_report(a->w.cx->fl, FS_C_AGF_COUNTERS, a->w.agno,
		  (int64_t)(fs_ag_daddr(&a->w.cx->fs->g, a->w.agno) + (a->w.cx->fs->g.sectsize >> FS_BBSHIFT)),
		  FS_NONE, field, FS_U(seen), FS_U(on_disk), "%s", msg);
}

/* The AGFL's active blocks are owned (by the free list); returns how many. */
static uint32_t note_agfl(struct fsp_ag *a)
{
	struct scan_ctx *cx = a->w.cx;
	const struct fs_geom *g = &cx->fs->g;
	uint32_t n = fs_agfl_active_count(g, &a->agf), count = 0;
	struct fs_buf *b;

	if (a->agf.flfirst >= g->agfl_size || a->agf.fllast >= g->agfl_size || n != a->agf.flcount)
		return a->agf.flcount;	/* phase 1 reported it; trust the count for the totals */
	if (!n)
		return 0;
	if (fs_cache_read(cx->cache, fs_ag_daddr(g, a->w.agno) + 3 * (g->sectsize >> FS_BBSHIFT),
			  g->sectsize, &b))
		return n;
	if (get_be32(b->data) == XFS_AGFL_MAGIC) {
		const unsigned char *slots = b->data + sizeof(struct xfs_agfl);

		for (uint32_t i = 0; i < n; i++) {
			uint32_t bno = get_be32(slots + 4 * (size_t)fs_agfl_slot(g, &a->agf, i));

			if (bno >= g->ag_hdr_blocks && bno < fs_ag_blocks(g, a->w.agno))
				model_note(a, bno, 1, MC_AGFL);
			count++;
		}
	}
	fs_buf_put(cx->cache, b);
	return count;
}

static int freesp_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct fsp_totals *tot = ((void **)priv)[1];
	struct scan_ctx *cx = ((void **)priv)[0];
	const struct fs_geom *g = &cx->fs->g;
	struct fsp_tree bno = { .bt = { .ops = fs_btree_ag_ops(FS_BTREE_AG_BNO), .cls = MC_BNOBT } };
	struct fsp_tree cnt = { .bt = { .ops = fs_btree_ag_ops(FS_BTREE_AG_CNT), .cls = MC_CNTBT } };
	struct fsp_tree rmap = { .bt = { .ops = fs_btree_ag_ops(FS_BTREE_AG_RMAP), .cls = MC_RMAPBT } };
	struct fsp_tree refc = { .bt = { .ops = fs_btree_ag_ops(FS_BTREE_AG_REFC), .cls = MC_REFCBT } };
	struct fsp_ag a = { .w = { .cx = cx, .agno = agno, .worker = worker } };
	uint64_t freeblks = 0, longest = 0, btreeblks, fdblocks = 0;
	struct fs_buf *b;
	bool complete;
	int err;

	/* statically owned: the header sectors and, in its AG, the internal log */
	model_note(&a, 0, g->ag_hdr_blocks, MC_AGHDR);
	if (g->log_internal && g->log_agno == agno && g->logblocks &&
	    g->log_agbno < fs_ag_blocks(g, agno) && g->logblocks <= fs_ag_blocks(g, agno) - g->log_agbno)
		model_note(&a, g->log_agbno, g->logblocks, MC_LOG);

	err = fs_cache_read(cx->cache, fs_ag_daddr(g, agno) + (g->sectsize >> FS_BBSHIFT),
			    g->sectsize, &b);
	if (err) {
		/* phase 1 reported an unreadable AGF */
		complete = false;
		goto out;
	}
	if (get_be32(b->data) != XFS_AGF_MAGIC) {
		fs_buf_put(cx->cache, b);
		complete = false;
		goto out;
	}
	fs_agf_decode(b->data, &a.agf);
	fs_buf_put(cx->cache, b);

	a.agfl_count = note_agfl(&a);
	/* phase_rmap.c walks these two again at the end: their blocks stay cached, within a budget */
	rmap.bt.kept = refc.bt.kept = scan_keep_cached(cx, ((uint64_t)(g->rmapbt ? a.agf.rmap_blocks : 0) +
							    (g->reflink ? a.agf.refc_blocks : 0)) *
							   g->blocksize);
	scan_btree_walk(&a.w, &bno.bt, a.agf.bno_root, a.agf.bno_level, visit_rec);
	scan_btree_walk(&a.w, &cnt.bt, a.agf.cnt_root, a.agf.cnt_level, visit_rec);
	if (g->rmapbt) {
		scan_btree_walk(&a.w, &rmap.bt, a.agf.rmap_root, a.agf.rmap_level, visit_rec);
		if (rmap.bt.walked && !rmap.bt.bad_blocks)
			check_counter(&a, "rmap_blocks", a.agf.rmap_blocks, rmap.bt.blocks);
		/* every OWN_INODES record seen: phase 3 can give back what an inobt lost */
		cx->rmap_whole[agno] = rmap.bt.walked && !rmap.bt.bad_blocks && !rmap.bad_recs;
	}
	if (g->reflink) {
		scan_btree_walk(&a.w, &refc.bt, a.agf.refc_root, a.agf.refc_level, visit_rec);
		if (refc.bt.walked && !refc.bt.bad_blocks)
			check_counter(&a, "refcount_blocks", a.agf.refc_blocks, refc.bt.blocks);
	}
	complete = bno.bt.walked && cnt.bt.walked && !bno.bt.bad_blocks && !cnt.bt.bad_blocks;
	__atomic_add_fetch(&cx->free_extents, bno.n, __ATOMIC_RELAXED);

	if (complete) {
		compare_trees(&a, &bno, &cnt);
		for (size_t i = 0; i < cnt.n; i++) {
			freeblks += cnt.rec[i].blockcount;
			if (cnt.rec[i].blockcount > longest)
				longest = cnt.rec[i].blockcount;
		}
		check_counter(&a, "freeblks", a.agf.freeblks, freeblks);
		check_counter(&a, "longest", a.agf.longest, longest);
		/*
		 * btreeblks counts the free space (and rmap) btrees' blocks
		 * beyond their roots.  An rmap tree that could not be walked
		 * whole contributes what its AGF counter says.
		 */
		btreeblks = (bno.bt.blocks - 1) + (cnt.bt.blocks - 1);
		if (g->rmapbt && rmap.bt.walked && !rmap.bt.bad_blocks)
			btreeblks += rmap.bt.blocks - 1;
		else if (g->rmapbt && a.agf.rmap_blocks)
			btreeblks += a.agf.rmap_blocks - 1;
		if (g->lazysbcount)
			check_counter(&a, "btreeblks", a.agf.btreeblks, btreeblks);
		/* free for the superblock: extents, the free list, non-root btree blocks */
		fdblocks = freeblks + a.agfl_count + btreeblks;
	}
out:
	pthread_mutex_lock(&tot->lock);
	tot->fdblocks += fdblocks;
	if (!complete)
		tot->complete = false;
	pthread_mutex_unlock(&tot->lock);
	free(bno.rec);
	free(cnt.rec);
	scan_progress_add(cx, 1);
	return a.w.err;
}

int scan_phase_freesp(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fsp_totals tot = { .complete = true };
	void *priv[2] = { cx, &tot };
	int err;

	pthread_mutex_init(&tot.lock, NULL);
	err = scan_each_ag(cx, "free space btrees", freesp_ag, priv);
	pthread_mutex_destroy(&tot.lock);
	if (err)
		return err;
	/* a secondary's counters are never kept current; unread AGs were not counted */
	if (tot.complete && g->lazysbcount && !cx->fs->sb_counters_stale && !cx->ags_past_end &&
	    cx->fs->sb.sb_fdblocks != tot.fdblocks)
		fs_report(cx->fl, FS_C_SB_COUNTERS, 0, 0, FS_NONE, "fdblocks", FS_U(tot.fdblocks),
			  FS_U(cx->fs->sb.sb_fdblocks),
			  "superblock free block count is %llu but the AGs hold %llu",
			  (unsigned long long)cx->fs->sb.sb_fdblocks, (unsigned long long)tot.fdblocks);
	return 0;
}
