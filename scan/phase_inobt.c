// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 3 of the scan: per AG, walk the inode btree and the free inode btree
 * from the AGI.  Every record must be a valid chunk (alignment, hole mask,
 * counts, free mask); chunks go into the model (their blocks as inode
 * chunk owners, their records for the inode scan to come); the finobt must
 * hold exactly the inobt records that have free inodes, with the same
 * contents; the AGI's count/freecount and (inobtcount) block counters, and
 * the superblock's icount/ifree, must equal what the trees hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "libfs/format/ag.h"
#include "libfs/format/endian.h"
#include "libfs/util/vec.h"

#define MISMATCH_REPORTS 10

struct ino_tree {
	struct scan_bt bt;         /* first: the shared walk's part */
	struct fs_inobt_rec *rec;
	size_t n, cap;
	uint64_t bad_recs;         /* records rejected (their chunks are not in the model) */
};

struct ino_totals {
	pthread_mutex_t lock;
	uint64_t icount, ifree;
	bool complete;
};

/* The blocks of a chunk that have inodes behind them (holes have none). */
static void note_chunk_blocks(struct scan_btw *a, const struct fs_inobt_rec *r)
{
	int err = model_add_chunk_blocks(a->cx->model, a->agno, r->startino, r->holemask,
					 fs_agino_to_ino(&a->cx->fs->g, a->agno, r->startino));

	if (err == -ENOMEM && !a->err)
		a->err = err;
}

static int visit_rec(void *priv, const void *raw)
{
	struct scan_btw *a = priv;
	struct ino_tree *t = (struct ino_tree *)a->t;
	const struct fs_geom *g = &a->cx->fs->g;
	struct fs_inobt_rec r;
	const char *why;
	char found[64];

	fs_inobt_rec_decode(g, raw, &r);
	snprintf(found, sizeof(found), "startino %u holemask 0x%x count %u freecount %u",
		 r.startino, r.holemask, r.count, r.freecount);
	why = fs_inobt_rec_problem(g, a->agno, &r);
	/* full chunks start on the inode alignment (sparse ones only on the sparse alignment) */
	if (!why && g->inoalign && !r.holemask &&
	    fs_agino_to_agbno(g, r.startino) % g->inoalign)
		why = "chunk does not start on the inode alignment";
	if (!why && t->bt.cls == MC_FINOBT && r.freecount == 0)
		why = "record without free inodes in the free inode btree";
	if (why) {
		fs_report(a->cx->fl, t->bt.ops->codes[FS_BTC_REC], a->agno,
			  t->bt.leaf == NULLAGBLOCK ? FS_NONE : (int64_t)fs_agbno_to_daddr(g, a->agno, t->bt.leaf),
			  FS_NONE, "record", "a valid inode chunk", found, "%s record: %s",
			  t->bt.ops->name, why);
		t->bad_recs++;
		return 0;
	}
	if (FS_VEC_ROOM(t->rec, t->n, t->cap, 128))
		return -ENOMEM;
	t->rec[t->n++] = r;
	if (t->bt.cls == MC_INOBT) {
		struct model_ichunk ic = {
			.startino = r.startino, .holemask = r.holemask, .count = r.count,
			.freecount = r.freecount, .where = MODEL_IC_INOBT, .ir_free = r.free,
		};
		note_chunk_blocks(a, &r);
		if (model_add_ichunk(a->cx->model, a->agno, &ic) == -ENOMEM && !a->err)
			a->err = -ENOMEM;
	} else {
		struct model_ichunk ic = {
			.startino = r.startino, .where = MODEL_IC_FINOBT, .fino_free = r.free,
		};
		if (model_add_ichunk(a->cx->model, a->agno, &ic) == -ENOMEM && !a->err)
			a->err = -ENOMEM;
	}
	return 0;
}

static bool same_rec(const struct fs_inobt_rec *x, const struct fs_inobt_rec *y)
{
	return x->startino == y->startino && x->holemask == y->holemask && x->count == y->count &&
	       x->freecount == y->freecount && x->free == y->free;
}

/* The finobt holds exactly the inobt records with free inodes, unchanged. */
static void compare_finobt(struct scan_btw *a, const struct ino_tree *ino, const struct ino_tree *fino)
{
	const struct fs_geom *g = &a->cx->fs->g;
	size_t i = 0, j = 0, bad = 0;

	while (i < ino->n || j < fino->n) {
		const struct fs_inobt_rec *r = i < ino->n ? &ino->rec[i] : NULL;
		const struct fs_inobt_rec *f = j < fino->n ? &fino->rec[j] : NULL;
		const char *why = NULL;
		fs_agino_t at;

		if (r && r->freecount == 0) {
			i++;
			continue;
		}
		if (r && f && r->startino == f->startino) {
			if (!same_rec(r, f))
				why = "finobt record differs from the inobt record";
			at = r->startino;
			i++;
			j++;
		} else if (r && (!f || r->startino < f->startino)) {
			why = "chunk with free inodes is missing from the free inode btree";
			at = r->startino;
			i++;
		} else {
			why = "free inode btree record has no inobt record with free inodes";
			at = f->startino;
			j++;
		}
		if (!why || ++bad > MISMATCH_REPORTS)
			continue;
		fs_report(a->cx->fl, FS_C_FINOBT_MISMATCH, a->agno, FS_NONE,
			  (int64_t)fs_agino_to_ino(g, a->agno, at), "startino", "the same record",
			  FS_U(at), "chunk at AG inode %u: %s", at, why);
	}
	if (bad > MISMATCH_REPORTS)
		fs_report(a->cx->fl, FS_C_FINOBT_MISMATCH, a->agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more differences between the inode and free inode btrees",
			  bad - MISMATCH_REPORTS);
}

static void agi_counter(struct scan_btw *a, const char *field, uint64_t on_disk, uint64_t seen)
{
	const struct fs_geom *g = &a->cx->fs->g;

	if (on_disk == seen)
		return;
	fs_report(a->cx->fl, FS_C_AGI_COUNTERS, a->agno,
		  (int64_t)(fs_ag_daddr(g, a->agno) + 2 * (g->sectsize >> FS_BBSHIFT)), FS_NONE,
		  field, FS_U(seen), FS_U(on_disk), "AGI %s is %llu but the inode btrees hold %llu",
		  field, (unsigned long long)on_disk, (unsigned long long)seen);
}

static int inobt_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct scan_ctx *cx = ((void **)priv)[0];
	struct ino_totals *tot = ((void **)priv)[1];
	const struct fs_geom *g = &cx->fs->g;
	struct ino_tree ino = { .bt = { .ops = fs_btree_ops_get(FS_BTREE_INO), .cls = MC_INOBT } };
	struct ino_tree fino = { .bt = { .ops = fs_btree_ops_get(FS_BTREE_FINO), .cls = MC_FINOBT } };
	struct scan_btw a = { .cx = cx, .agno = agno, .worker = worker };
	uint64_t count = 0, freecount = 0, fino_free = 0;
	struct fs_agi agi;
	struct fs_buf *b;
	bool complete = false;

	if (fs_cache_read(cx->cache, fs_ag_daddr(g, agno) + 2 * (g->sectsize >> FS_BBSHIFT),
			  g->sectsize, &b))
		goto out;
	fs_agi_decode(b->data, &agi);
	fs_buf_put(cx->cache, b);
	/*
	 * An AGI whose magic is wrong (phase 1 reported it) may still name its
	 * trees: they are walked when it says it is this AG's, since every
	 * block verifies itself; the AGI's counters are not judged then.
	 */
	if (agi.magic != XFS_AGI_MAGIC && agi.seqno != agno)
		goto out;

	scan_btree_walk(&a, &ino.bt, agi.root, agi.level, visit_rec);
	if (g->finobt)
		scan_btree_walk(&a, &fino.bt, agi.free_root, agi.free_level, visit_rec);
	/* every chunk the inobt holds is in the model: repair may rebuild from it */
	cx->chunks_known[agno] = ino.bt.walked && !ino.bt.bad_blocks && !ino.bad_recs;
	complete = agi.magic == XFS_AGI_MAGIC && ino.bt.walked && !ino.bt.bad_blocks &&
		   (!g->finobt || (fino.bt.walked && !fino.bt.bad_blocks));
	for (size_t i = 0; i < ino.n; i++) {
		count += ino.rec[i].count;
		freecount += ino.rec[i].freecount;
	}
	for (size_t j = 0; j < fino.n; j++)
		fino_free += fino.rec[j].freecount;
	if (complete) {
		agi_counter(&a, "count", agi.count, count);
		agi_counter(&a, "freecount", agi.freecount, freecount);
		if (g->finobt) {
			compare_finobt(&a, &ino, &fino);
			if (fino_free != freecount)
				agi_counter(&a, "freecount", agi.freecount, fino_free);
		}
		if (g->inobtcount) {
			agi_counter(&a, "ino_blocks", agi.iblocks, ino.bt.blocks);
			if (g->finobt)
				agi_counter(&a, "fino_blocks", agi.fblocks, fino.bt.blocks);
		}
	}
out:
	pthread_mutex_lock(&tot->lock);
	tot->icount += count;
	tot->ifree += freecount;
	if (!complete)
		tot->complete = false;
	pthread_mutex_unlock(&tot->lock);
	free(ino.rec);
	free(fino.rec);
	scan_progress_add(cx, 1);
	return a.err;
}

/* Whether an inode of the block holding agino proves itself (buf: one block). */
static bool probe_block(struct scan_ctx *cx, fs_agnumber_t agno, fs_agino_t agino, void *buf)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_agblock_t agbno = fs_agino_to_agbno(g, agino);
	fs_agino_t first = fs_agbno_to_agino(g, agbno);

	if (scan_read_agblock(cx, agno, agbno, buf))
		return false;
	for (uint32_t i = 0; i < g->inopblock; i++)
		if (scan_inode_proves(g, agno, first + i,
				      (const unsigned char *)buf + ((size_t)i << g->inodelog)))
			return true;
	return false;
}

/*
 * Chunks the rmapbt says hold inodes where no inobt record does (a lost
 * root, a lost record): added as uncertain chunks (MODEL_IC_RMAP), the
 * 4-inode groups the rmap covers as their space, so the inode scan reads
 * them and a lost inode btree does not lose the AG's inodes.  Which of
 * their inodes are real the scan decides.  Needs the AG's chunks sorted;
 * sorts them again.
 */
static int add_rmap_chunks(struct scan_ctx *cx, fs_agnumber_t agno)
{
	const struct fs_geom *g = &cx->fs->g;
	const struct scan_ranges *ri = &cx->rmap_inodes[agno];
	struct model_ichunk *add = NULL;
	size_t n = 0, cap = 0;
	fs_agino_t rejected = NULLAGINO;
	unsigned char *buf;
	int err = 0;

	if (!ri->n)
		return 0;
	buf = malloc(g->blocksize);
	if (!buf)
		return -ENOMEM;
	for (size_t k = 0; k < ri->n && !err; k++) {
		uint64_t first = fs_agbno_to_agino(g, ri->v[k].agbno);
		uint64_t end = first + ((uint64_t)ri->v[k].len << g->inopblog);

		for (uint64_t ino = first; ino < end && !err; ino += XFS_INODES_PER_HOLEMASK_BIT) {
			fs_agino_t start = (fs_agino_t)ino & ~(fs_agino_t)(XFS_INODES_PER_CHUNK - 1);
			struct model_ichunk *c = model_ichunk_find(cx->model, agno, (fs_agino_t)ino);

			if (c) {
				/* listed by the finobt alone: scanned as uncertain too */
				if (!(c->where & MODEL_IC_INOBT))
					c->where |= MODEL_IC_RMAP;
				continue;
			}
			if (start == rejected)
				continue;
			if (!n || add[n - 1].startino != start) {
				/*
				 * A hostile record may claim a whole AG: a chunk is
				 * only taken when an inode in the block at hand
				 * proves itself, so the chunks (and the link records
				 * sized from them) stay what the disk really holds.
				 */
				if (!probe_block(cx, agno, (fs_agino_t)ino, buf)) {
					rejected = start;
					continue;
				}
				err = FS_VEC_ROOM(add, n, cap, 16);
				if (err)
					break;
				add[n++] = (struct model_ichunk){ .startino = start, .holemask = 0xffff,
								  .where = MODEL_IC_RMAP };
			}
			add[n - 1].holemask &= (uint16_t)~(1u << ((ino - start) / XFS_INODES_PER_HOLEMASK_BIT));
		}
	}
	for (size_t i = 0; i < n && !err; i++) {
		add[i].count = (uint8_t)(XFS_INODES_PER_CHUNK -
					 XFS_INODES_PER_HOLEMASK_BIT * __builtin_popcount(add[i].holemask));
		err = model_add_ichunk(cx->model, agno, &add[i]);
	}
	free(add);
	free(buf);
	if (!err && n)
		err = model_ag_finish_ichunks(cx->model, agno);
	return err;
}

struct probe {
	struct scan_ctx *cx;
	fs_agnumber_t agno;
	unsigned char *buf;
	int err;
};

/* One stretch of the AG nothing claims: an inode cluster at each aligned start that proves itself. */
static void probe_gap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct probe *p = priv;
	struct scan_ctx *cx = p->cx;
	const struct fs_geom *g = &cx->fs->g;
	uint32_t a = g->spinodes && g->spino_align ? g->spino_align :
		     g->cluster_align ? g->cluster_align : 1;
	uint32_t span = g->blocks_per_cluster > a ? g->blocks_per_cluster : a;
	struct scan_ranges *ri = &cx->rmap_inodes[agno];
	uint64_t end = (uint64_t)agbno + len;

	for (uint64_t b = (agbno + a - 1) / a * a; b < end && !p->err; b += a) {
		fs_agino_t agino = fs_agbno_to_agino(g, (fs_agblock_t)b);

		if (model_ichunk_find(cx->model, agno, agino) || !probe_block(cx, agno, agino, p->buf))
			continue;
		p->err = FS_VEC_ROOM(ri->v, ri->n, ri->cap, 16);
		if (!p->err)
			ri->v[ri->n++] = (struct scan_range){ (fs_agblock_t)b,
				(uint32_t)(b + span <= end ? span : end - b) };
	}
}

/*
 * An AG whose inode btree was not walked whole and that has no whole
 * rmapbt to name its chunks: the blocks nothing claims (not free space,
 * not a btree, not a known chunk) are probed for inode clusters that prove
 * themselves (magic and their own number, at the cluster alignment), as
 * xfs_repair looks for its "uncertain" inodes, and those join the chunks
 * the rmapbt would have given.  Costs one block read per alignment unit of
 * the AG's unclaimed space, and only where an inode btree is damaged.
 */
static int probe_lost_chunks(struct scan_ctx *cx, fs_agnumber_t agno)
{
	struct probe p = { .cx = cx, .agno = agno, .buf = malloc(cx->fs->g.blocksize) };

	if (!p.buf)
		return -ENOMEM;
	p.err = model_ag_finish(cx->model, agno);
	if (!p.err)
		model_ag_gaps(cx->model, agno, probe_gap, &p);
	model_ag_release(cx->model, agno);
	free(p.buf);
	return p.err;
}

int scan_phase_inobt(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct ino_totals tot = { .complete = true };
	void *priv[2] = { cx, &tot };
	int err;

	pthread_mutex_init(&tot.lock, NULL);
	err = scan_each_ag(cx, "inode btrees", inobt_ag, priv);
	pthread_mutex_destroy(&tot.lock);
	if (err)
		return err;
	for (fs_agnumber_t agno = 0; agno < g->agcount; agno++) {
		bool probed = false;

		err = model_ag_finish_ichunks(cx->model, agno);
		if (!err && !cx->chunks_known[agno] && !(g->rmapbt && cx->rmap_whole[agno]) &&
		    !scan_ag_unread(cx, agno)) {
			err = probe_lost_chunks(cx, agno);
			probed = true;
		}
		if (!err)
			err = add_rmap_chunks(cx, agno);
		if (err)
			return err;
		/* the rmapbt's inode chunks, all seen, or the probe, stand in for what the inobt lost */
		if ((g->rmapbt && cx->rmap_whole[agno]) || probed)
			cx->chunks_known[agno] = true;
	}
	cx->inodes = tot.icount;
	/*
	 * Not judged when some trees were not walked, or when the superblock is
	 * a secondary (its counters are mkfs's, never kept current), or AGs lie
	 * past the end of the device (their inodes were not counted).
	 */
	if (!tot.complete || cx->fs->sb_counters_stale || cx->ags_past_end)
		return 0;
	if (cx->fs->sb.sb_icount != tot.icount)
		fs_report(cx->fl, FS_C_SB_COUNTERS, 0, 0, FS_NONE, "icount", FS_U(tot.icount),
			  FS_U(cx->fs->sb.sb_icount),
			  "superblock inode count is %llu but the inode btrees hold %llu",
			  (unsigned long long)cx->fs->sb.sb_icount, (unsigned long long)tot.icount);
	if (cx->fs->sb.sb_ifree != tot.ifree)
		fs_report(cx->fl, FS_C_SB_COUNTERS, 0, 0, FS_NONE, "ifree", FS_U(tot.ifree),
			  FS_U(cx->fs->sb.sb_ifree),
			  "superblock free inode count is %llu but the inode btrees hold %llu",
			  (unsigned long long)cx->fs->sb.sb_ifree, (unsigned long long)tot.ifree);
	return 0;
}
