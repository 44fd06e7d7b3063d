// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 9 (run.c): an AG's headers and btrees rebuilt from the model,
 * only for AGs with findings about them or whose owners changed (inodes
 * cleared, attr forks removed); the rest are left byte-identical.
 *
 * What the model gives:
 *  - kept owners: AG headers, the log, inode chunks, file data/attr/bmbt
 *    blocks (minus those of cleared inodes and removed attr forks); leftover
 *    CoW staging extents are freed;
 *  - free space: the gaps once the old btree blocks, the old AGFL and the
 *    dropped owners are ignored;
 *  - inobt/finobt records: the chunks, free as the inodes themselves said
 *    (cleared inodes free);
 *  - refcount records: runs of data blocks mapped more than once;
 *  - rmap records: every kept owner, plus the new trees' own blocks.
 * New blocks come from space free before and after (old metadata stays
 * readable until the headers switch) when there is enough; the free-space
 * and rmap trees depend on what they take, so the reservation is iterated
 * until the block counts are stable, and what is left over fills the AGFL.
 * Trees are bulk-loaded (libfs/build/bload.c) into dirty cache buffers (class
 * NEW); AGF, AGI and AGFL become dirty buffers of class HEADERS.  AGs run
 * on the worker pool.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/ag.h"
#include "libfs/build/bload.h"
#include "libfs/format/btree_ag.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/build/freesp.h"
#include "libfs/util/sort.h"
#include "libfs/util/vec.h"
#include "libfs/io/workq.h"
#include "repair/buf.h"
#include "repair/phase_rebuild.h"
#include "repair/place.h"
#include "repair/rules.h"
#include "scan/links.h"

struct run {
	fs_agblock_t start;
	uint32_t len;
};

struct runvec {
	struct run *v;
	size_t n, cap;
};

static int runs_push(struct runvec *r, fs_agblock_t start, uint32_t len)
{
	if (!len)
		return 0;
	if (r->n && r->v[r->n - 1].start + r->v[r->n - 1].len == start) {
		r->v[r->n - 1].len += len;
		return 0;
	}
	if (FS_VEC_ROOM(r->v, r->n, r->cap, 64))
		return -ENOMEM;
	r->v[r->n++] = (struct run){ start, len };
	return 0;
}

/* Records, encoded on disk, rec_len bytes each. */
struct recvec {
	unsigned char *v;
	size_t n, cap, len;
};

static void *recs_add(struct recvec *r)
{
	if (fs_vec_reserve(&r->v, &r->cap, r->n + 1, r->len, 256))
		return NULL;
	return r->v + r->n++ * r->len;
}

/* An rmap record before encoding. */
struct rmrec {
	fs_agblock_t start;
	uint32_t len;
	uint64_t owner;
	uint64_t offset;           /* with the XFS_RMAP_OFF_* flags */
};

struct rmvec {
	struct rmrec *v;
	size_t n, cap;
};

static int rm_push(struct rmvec *r, const struct rmrec *x)
{
	if (FS_VEC_ROOM(r->v, r->n, r->cap, 256))
		return -ENOMEM;
	r->v[r->n++] = *x;
	return 0;
}

/* Room for need records in all, exactly (an AG's list can be tens of MiB). */
static int rm_reserve(struct rmvec *r, size_t need)
{
	struct rmrec *v;

	if (need <= r->cap)
		return 0;
	v = realloc(r->v, need * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->cap = need;
	return 0;
}

static bool inode_owner(uint64_t owner)
{
	return owner < XFS_RMAP_OWN_MIN;
}

/* The rmapbt's key order: block, owner, offset (flags included). */
static int cmp_rm(const void *pa, const void *pb)
{
	const struct rmrec *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

/* Order for merging: one owner's records of one kind together, by block. */
static int cmp_rm_owner(const void *pa, const void *pb)
{
	const struct rmrec *a = pa, *b = pb;
	uint64_t fa = a->offset & XFS_RMAP_OFF_FLAGS, fb = b->offset & XFS_RMAP_OFF_FLAGS;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (fa != fb)
		return fa < fb ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

/*
 * Merge the records the kernel would have merged (xfs_rmap_is_mergeable:
 * one owner, the same fork and flags, contiguous blocks and, for file
 * data, contiguous offsets), then put them in key order.
 */
static void rm_merge(struct rmvec *r)
{
	size_t out = 0;

	qsort(r->v, r->n, sizeof(*r->v), cmp_rm_owner);

	for (size_t i = 0; i < r->n; i++) {
		struct rmrec *p = out ? &r->v[out - 1] : NULL;
		const struct rmrec *x = &r->v[i];
		bool offs = inode_owner(x->owner) && !(x->offset & XFS_RMAP_OFF_BMBT_BLOCK);

		if (p && p->owner == x->owner && p->start + p->len == x->start &&
		    (p->offset & XFS_RMAP_OFF_FLAGS) == (x->offset & XFS_RMAP_OFF_FLAGS) &&
		    (!offs || XFS_RMAP_OFF(p->offset) + p->len == XFS_RMAP_OFF(x->offset)) &&
		    (uint64_t)p->len + x->len <= XFS_RMAP_LEN_MAX) {
			p->len += x->len;
			continue;
		}
		r->v[out++] = *x;
	}
	r->n = out;
	qsort(r->v, r->n, sizeof(*r->v), cmp_rm);
}

/* One AG's rebuild work. */
struct agwork {
	struct repair_ctx *rx;
	fs_agnumber_t agno;
	uint32_t agblocks;
	struct runvec free0;       /* free before allocation */
	struct runvec oldmeta;     /* old btree and AGFL blocks (not preferred for new ones) */
	struct rmvec rm_base;      /* rmap records of the kept owners */
	struct recvec ino, fino, refc;
	uint64_t icount, ifree;
	fs_agino_t last_chunk;
	/* the reservation */
	struct runvec resv;
	uint64_t nresv;
	fs_agblock_t *blocks;      /* reserved blocks in hand-out order */
	/* the tree being built: its blocks and where they go */
	const fs_agblock_t *list;
	uint64_t nlist, next;
	struct fs_bload_cache_target tgt;
};

static bool class_kept(uint8_t cls)
{
	switch (cls) {
	case MC_AGHDR: case MC_LOG: case MC_INODES: case MC_DATA: case MC_ATTR: case MC_BMBT:
		return true;
	default:
		return false;
	}
}

static uint8_t verdict(const struct repair_ctx *rx, uint64_t owner)
{
	uint64_t slot = scan_links_slot(rx->sx, (fs_ino_t)owner);

	return slot == UINT64_MAX ? 0 : rx->verdict[slot];
}

/* Whether an extent survives the plan (its owner kept, its fork kept). */
static bool ext_kept(const struct repair_ctx *rx, const struct model_ext *e)
{
	uint8_t v;

	if (!class_kept(e->cls))
		return false;
	if (e->cls < MC_DATA || e->cls > MC_BMBT || !rx->drops)
		return true;
	v = verdict(rx, e->owner);
	/* an inode this repair makes (again): only the blocks it was given */
	if (v & RV_NEW)
		return (e->flags & MODEL_EXT_NEW) != 0;
	if (v & RV_CLEAR)
		return false;
	/*
	 * a rebuilt attr fork: its new blocks replace the old ones (also after
	 * a removal: a parent pointer filesystem's fork made again, pptrs.c)
	 */
	if ((v & RV_ATTR_NEW) && (e->cls == MC_ATTR ||
	    (e->cls == MC_BMBT && (e->flags & MODEL_EXT_ATTRFORK))))
		return (e->flags & MODEL_EXT_NEW) != 0;
	if ((v & RV_ATTR_RESET) && (e->cls == MC_ATTR ||
	    (e->cls == MC_BMBT && (e->flags & MODEL_EXT_ATTRFORK))))
		return false;
	/* a rebuilt directory: its new blocks replace its old data fork */
	if ((v & RV_DIR_NEW) && (e->cls == MC_DATA ||
	    (e->cls == MC_BMBT && !(e->flags & MODEL_EXT_ATTRFORK))))
		return (e->flags & MODEL_EXT_NEW) != 0;
	return true;
}

static struct rmrec ext_rmap(const struct model_ext *e)
{
	struct rmrec r = { .start = e->agbno, .len = e->len,
			   .owner = model_rmap_owner(e->cls, e->owner) };

	if (e->cls == MC_DATA || e->cls == MC_ATTR) {
		r.offset = e->offset;
		if (e->cls == MC_ATTR)
			r.offset |= XFS_RMAP_OFF_ATTR_FORK;
		if (e->flags & MODEL_EXT_UNWRITTEN)
			r.offset |= XFS_RMAP_OFF_UNWRITTEN;
	} else if (e->cls == MC_BMBT) {
		r.offset = XFS_RMAP_OFF_BMBT_BLOCK;
		if (e->flags & MODEL_EXT_ATTRFORK)
			r.offset |= XFS_RMAP_OFF_ATTR_FORK;
	}
	return r;
}

/* Union of intervals (sorted by start) into merged runs. */
static int union_add(struct runvec *u, fs_agblock_t start, uint32_t len)
{
	if (u->n) {
		struct run *p = &u->v[u->n - 1];
		uint64_t end = (uint64_t)p->start + p->len;

		if (start <= end) {
			if ((uint64_t)start + len > end)
				p->len = (uint32_t)((uint64_t)start + len - p->start);
			return 0;
		}
	}
	return runs_push(u, start, len);
}

/* a minus b (both sorted, merged). */
static int subtract(const struct runvec *a, const struct runvec *b, struct runvec *out)
{
	size_t j = 0;
	int err = 0;

	for (size_t i = 0; i < a->n && !err; i++) {
		uint64_t s = a->v[i].start, e = s + a->v[i].len;

		while (j < b->n && (uint64_t)b->v[j].start + b->v[j].len <= s)
			j++;
		for (size_t k = j; k < b->n && b->v[k].start < e && !err; k++) {
			if (b->v[k].start > s)
				err = runs_push(out, (fs_agblock_t)s, (uint32_t)(b->v[k].start - s));
			if ((uint64_t)b->v[k].start + b->v[k].len > s)
				s = (uint64_t)b->v[k].start + b->v[k].len;
		}
		if (!err && s < e)
			err = runs_push(out, (fs_agblock_t)s, (uint32_t)(e - s));
	}
	return err;
}

/* ---- inputs from the model ---- */

/*
 * The classes a rebuild replaces: old free space, old btree blocks, the old
 * AGFL, and leftover CoW staging extents (freed, as the kernel frees them at
 * mount and xfs_repair does).
 */
#define OLD_CLASSES (MODEL_CLASS_BIT(MC_FREE) | MODEL_CLASS_BIT(MC_AGFL) | \
		     MODEL_CLASS_BIT(MC_COW) | MODEL_CLASS_BIT(MC_BNOBT) | MODEL_CLASS_BIT(MC_CNTBT) | \
		     MODEL_CLASS_BIT(MC_RMAPBT) | MODEL_CLASS_BIT(MC_REFCBT) | \
		     MODEL_CLASS_BIT(MC_INOBT) | MODEL_CLASS_BIT(MC_FINOBT))

struct gapctx {
	struct repair_ctx *rx;
	struct runvec *out;
	size_t count;
	int err;
};

static void on_gap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct gapctx *c = priv;

	(void)agno;
	if (!c->err)
		c->err = runs_push(c->out, agbno, len);
}

/* Owners the plan drops: cleared inodes' blocks, removed attr forks. */
static bool dropped(void *priv, const struct model_ext *e)
{
	const struct gapctx *c = priv;

	return e->cls >= MC_DATA && e->cls <= MC_BMBT && !ext_kept(c->rx, e);
}

static void on_old(void *priv, fs_agnumber_t agno, const struct model_ext *e)
{
	struct gapctx *c = priv;

	(void)agno;
	if (!c->err)
		c->err = union_add(c->out, e->agbno, e->len);
}

static int collect(struct agwork *w)
{
	struct repair_ctx *rx = w->rx;
	const struct fs_geom *g = &rx->fs->g;
	size_t n;
	const struct model_ext *e = model_ag_extents(rx->sx->model, w->agno, &n);
	struct runvec old = { 0 }, notfree = { 0 };
	struct gapctx fc = { .rx = rx, .out = &w->free0 }, oc = { .rx = rx, .out = &old };
	int err = 0;

	if (g->rmapbt) {
		size_t kept = 0;

		for (size_t i = 0; i < n; i++)
			kept += ext_kept(rx, &e[i]) && e[i].agbno < w->agblocks;
		err = rm_reserve(&w->rm_base, kept);
	}
	for (size_t i = 0; i < n && !err && g->rmapbt; i++) {
		if (ext_kept(rx, &e[i]) && e[i].agbno < w->agblocks) {
			struct rmrec r = ext_rmap(&e[i]);

			err = rm_push(&w->rm_base, &r);
		}
	}
	if (err)
		return err;
	/* free space for the new trees: what no kept owner uses */
	model_ag_free_gaps_drop(rx->sx->model, w->agno, OLD_CLASSES, dropped, on_gap, &fc);
	if (fc.err)
		return fc.err;
	/* old metadata that is free now: its blocks are taken last */
	model_ag_extents_filter(rx->sx->model, w->agno, OLD_CLASSES & ~MODEL_CLASS_BIT(MC_FREE),
				on_old, &oc);
	err = oc.err;
	if (!err)
		err = subtract(&old, &w->free0, &notfree);
	if (!err)
		err = subtract(&old, &notfree, &w->oldmeta);
	free(old.v);
	free(notfree.v);
	return err;
}

static int inode_records(struct agwork *w)
{
	struct repair_ctx *rx = w->rx;
	const struct fs_geom *g = &rx->fs->g;
	struct scan_links *lk = rx->sx->links;
	size_t nic;
	const struct model_ichunk *ic = model_ag_ichunks(rx->sx->model, w->agno, &nic);

	w->ino.len = w->fino.len = sizeof(struct xfs_inobt_rec);
	w->last_chunk = NULLAGINO;
	for (size_t k = 0; k < nic; k++) {
		const struct model_ichunk *c = &ic[k];
		bool listed = c->where & MODEL_IC_INOBT;
		struct fs_inobt_rec r = { .startino = c->startino, .holemask = c->holemask,
					  .count = c->count };
		uint64_t alloc, freem = 0;
		uint64_t slot0 = lk ? lk->ag_base[w->agno] + (uint64_t)k * XFS_INODES_PER_CHUNK : 0;
		unsigned fc = 0;
		void *p;

		if (!listed && !c->seen_mask)
			continue;
		/* a chunk the rmapbt gave back: its space is what its hole mask leaves */
		if (!listed)
			r.count = (uint8_t)(XFS_INODES_PER_CHUNK - XFS_INODES_PER_HOLEMASK_BIT *
					    __builtin_popcount(r.holemask));
		alloc = fs_inobt_rec_allocmask(&r);
		for (unsigned i = 0; i < XFS_INODES_PER_CHUNK; i++) {
			uint64_t bit = 1ull << i;
			bool f;

			if (!(alloc & bit))
				f = true;
			else if (lk && (rx->verdict[slot0 + i] & RV_NEW))
				f = false;	/* made by this repair (lost+found, a new root) */
			else if (lk && (rx->verdict[slot0 + i] & RV_CLEAR))
				f = true;
			else if (c->seen_mask & bit)
				f = (c->seen_free & bit) != 0;
			else
				/* not read: the inobt's word, or (no inobt record) nothing proves it */
				f = !listed || (c->ir_free & bit) != 0;
			if (f) {
				freem |= bit;
				if (alloc & bit)
					fc++;
			}
		}
		p = recs_add(&w->ino);
		if (!p)
			return -ENOMEM;
		fs_enc_inobt_rec(p, c->startino, g->spinodes, c->holemask, r.count,
				 (uint8_t)fc, freem);
		w->icount += r.count;
		w->ifree += fc;
		w->last_chunk = c->startino;
		if (g->finobt && fc) {
			void *q = recs_add(&w->fino);

			if (!q)
				return -ENOMEM;
			memcpy(q, p, w->fino.len);
		}
	}
	return 0;
}

/* A refcount record before encoding. */
struct refc {
	fs_agblock_t start;
	uint32_t len, count;
};

struct refcctx {
	struct agwork *w;
	struct refc *v;
	size_t n, cap;
};

static bool refc_drop(void *priv, const struct model_ext *e)
{
	const struct refcctx *c = priv;

	return !ext_kept(c->w->rx, e);
}

/* One more run, merged with the last when it continues it with the same count. */
static int refc_push(void *priv, fs_agblock_t start, uint32_t len, uint32_t count)
{
	struct refcctx *c = priv;
	struct refc *p = c->n ? &c->v[c->n - 1] : NULL;

	if (p && p->count == count && p->start + p->len == start &&
	    (uint64_t)p->len + len <= MAXREFCEXTLEN) {
		p->len += len;
		return 0;
	}
	if (FS_VEC_ROOM(c->v, c->n, c->cap, 64))
		return -ENOMEM;
	c->v[c->n++] = (struct refc){ start, len, count };
	return 0;
}

/*
 * Refcount records: runs of kept data blocks mapped twice or more (the
 * model's one rule, model_ag_shared_runs), in block order.  No CoW staging
 * records: leftovers are freed.
 */
static int refcount_records(struct agwork *w)
{
	struct refcctx c = { .w = w };
	int err;

	w->refc.len = sizeof(struct xfs_refcount_rec);
	err = model_ag_shared_runs(w->rx->sx->model, w->agno, refc_drop, refc_push, &c);
	for (size_t i = 0; i < c.n && !err; i++) {
		void *r = recs_add(&w->refc);

		if (!r)
			err = -ENOMEM;
		else
			fs_enc_refc_rec(r, c.v[i].start, c.v[i].len, c.v[i].count, false);
	}
	free(c.v);
	return err;
}

/* ---- reservation ---- */

static int cmp_run_len_desc(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_run_start(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * Take `need` blocks: from the largest free extents that held no old
 * metadata first (the old trees stay readable until the headers switch),
 * then from the rest.  Each piece is taken from the end of its extent so
 * the extent count of free space does not grow.
 */
static int take_from(struct agwork *w, const struct runvec *src, uint64_t need)
{
	struct run *order;

	if (!src->n)
		return 0;
	order = malloc(src->n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	memcpy(order, src->v, src->n * sizeof(*order));
	qsort(order, src->n, sizeof(*order), cmp_run_len_desc);
	for (size_t i = 0; i < src->n && w->nresv < need; i++) {
		uint64_t take = need - w->nresv;

		if (take > order[i].len)
			take = order[i].len;
		if (FS_VEC_ROOM(w->resv.v, w->resv.n, w->resv.cap, 16)) {
			free(order);
			return -ENOMEM;
		}
		w->resv.v[w->resv.n++] = (struct run){
			order[i].start + order[i].len - (uint32_t)take, (uint32_t)take };
		w->nresv += take;
	}
	free(order);
	qsort(w->resv.v, w->resv.n, sizeof(*w->resv.v), cmp_run_start);
	return 0;
}

static int reserve(struct agwork *w, uint64_t need)
{
	struct runvec pref = { 0 }, rest = { 0 };
	int err;

	w->resv.n = 0;
	w->nresv = 0;
	err = subtract(&w->free0, &w->oldmeta, &pref);
	if (!err)
		err = take_from(w, &pref, need);
	if (!err && w->nresv < need) {
		err = subtract(&w->free0, &w->resv, &rest);
		if (!err)
			err = take_from(w, &rest, need);
	}
	free(pref.v);
	free(rest.v);
	if (!err && w->nresv < need)
		err = -ENOSPC;
	return err;
}

/*
 * The new trees, and where their blocks come from: the inode, refcount and
 * rmap trees from the reservation (in that order), the free-space trees
 * and the AGFL from the free-space plan (libfs/build/freesp.c).
 */
enum { T_INO, T_FINO, T_REFC, T_RMAP, T_NR };

static const struct fs_bload_slack SLACK = { .leaf = -1, .node = -1 };

struct shape {
	uint64_t blocks[T_NR];     /* from the reservation, in this order */
	struct fs_freesp_plan fp;  /* bno/cnt blocks and the AGFL */
	fs_agblock_t *agfl;        /* fp.agfl plus reserved blocks the rmap tree did not need */
	uint32_t agfl_count;
	struct fs_alloc_rec *freesp; /* what stays free: the bno/cnt records */
	size_t nfree;
	struct rmvec rm;           /* every rmap record */
};

static void shape_free(struct shape *sh)
{
	fs_freesp_plan_free(&sh->fp);
	free(sh->agfl);
	free(sh->freesp);
	free(sh->rm.v);
}

static struct fs_bload_geom geom_of(const struct fs_btree_ops *ops, uint32_t bs, uint64_t nrecs,
				    int *err)
{
	struct fs_bload_geom gm = { 0 };
	int e = fs_bload_compute_geometry(ops, bs, nrecs, &SLACK, 0, &gm);

	if (e && !*err)
		*err = e;
	return gm;
}

/* The reserved blocks as a list, in hand-out order. */
static int list_blocks(struct agwork *w)
{
	uint64_t k = 0;

	free(w->blocks);
	w->blocks = malloc((w->nresv ? w->nresv : 1) * sizeof(*w->blocks));
	if (!w->blocks)
		return -ENOMEM;
	for (size_t i = 0; i < w->resv.n; i++)
		for (uint32_t b = 0; b < w->resv.v[i].len; b++)
			w->blocks[k++] = w->resv.v[i].start + b;
	return 0;
}

static int push_blocks(struct rmvec *rm, const fs_agblock_t *v, uint64_t n, uint64_t owner)
{
	for (uint64_t i = 0; i < n; i++) {
		struct rmrec r = { .start = v[i], .len = 1, .owner = owner };
		int err = rm_push(rm, &r);

		if (err)
			return err;
	}
	return 0;
}

static int runs_to_recs(const struct runvec *r, struct fs_alloc_rec **out, size_t *n)
{
	*out = malloc((r->n ? r->n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		(*out)[i] = (struct fs_alloc_rec){ r->v[i].start, r->v[i].len };
	*n = r->n;
	return 0;
}

/*
 * The free-space trees and the AGFL out of what the reservation left: first
 * from space that held no old metadata (old trees stay readable until the
 * headers switch: a rerun after a crash still finds them), the freed old
 * blocks joining the free records afterwards; if that changes the trees'
 * size, or there is not enough such space, from all of it.
 */
static int plan_freesp(struct agwork *w, const struct runvec *rest, uint32_t agfl_want,
		       struct shape *sh)
{
	const struct fs_geom *g = &w->rx->fs->g;
	struct runvec pref = { 0 }, oldfree = { 0 }, remain = { 0 };
	struct fs_alloc_rec *ext = NULL;
	size_t n = 0;
	int err;

	fs_freesp_plan_free(&sh->fp);
	free(sh->freesp);
	sh->freesp = NULL;
	sh->fp = (struct fs_freesp_plan){ .slack = SLACK, .agfl_want = agfl_want };
	err = subtract(rest, &w->oldmeta, &pref);
	if (!err)
		err = subtract(rest, &pref, &oldfree);
	if (!err && oldfree.n)
		err = runs_to_recs(&pref, &ext, &n);
	if (!err && oldfree.n) {
		err = fs_freesp_plan(g, ext, &n, &sh->fp);
		if (!err) {
			/* the remaining preferred extents and the freed old blocks, merged */
			size_t j = 0;

			for (size_t i = 0; i < n || j < oldfree.n;) {
				bool take_old = j < oldfree.n &&
						(i >= n || oldfree.v[j].start < ext[i].startblock);

				if (take_old) {
					err = union_add(&remain, oldfree.v[j].start, oldfree.v[j].len);
					j++;
				} else {
					err = union_add(&remain, ext[i].startblock, ext[i].blockcount);
					i++;
				}
				if (err)
					break;
			}
			if (!err) {
				struct fs_bload_geom gb = geom_of(fs_btree_ag_ops(FS_BTREE_AG_BNO),
								  g->blocksize, remain.n, &err);

				if (!err && gb.nblocks == sh->fp.bno.nblocks) {
					free(ext);
					ext = NULL;
					err = runs_to_recs(&remain, &sh->freesp, &sh->nfree);
					goto out;
				}
			}
		}
		if (err && err != -ENOSPC)
			goto out;
		err = 0;
		fs_freesp_plan_free(&sh->fp);
		sh->fp = (struct fs_freesp_plan){ .slack = SLACK, .agfl_want = agfl_want };
	}
	/* no old metadata in the way, or it did not work out: plan over everything */
	free(ext);
	ext = NULL;
	err = runs_to_recs(rest, &sh->freesp, &sh->nfree);
	if (!err)
		err = fs_freesp_plan(g, sh->freesp, &sh->nfree, &sh->fp);
out:
	free(ext);
	free(pref.v);
	free(oldfree.v);
	free(remain.v);
	return err;
}

/*
 * Reserve the inode, refcount and rmap trees' blocks, plan the free-space
 * trees and the AGFL over the rest, and compute the rmap records with
 * every new block in them; the rmap tree's size depends on all that, so
 * iterate until its reservation holds it.  Reserved blocks the rmap tree
 * does not need go to the AGFL (both are OWN_AG: the records stay right).
 */
static int plan_space(struct agwork *w, struct shape *sh)
{
	const struct fs_geom *g = &w->rx->fs->g;
	uint32_t bs = g->blocksize;
	uint64_t rmap_est;
	int err = 0;

	memset(sh->blocks, 0, sizeof(sh->blocks));
	sh->blocks[T_INO] = geom_of(fs_btree_ops_get(FS_BTREE_INO), bs, w->ino.n, &err).nblocks;
	if (g->finobt)
		sh->blocks[T_FINO] = geom_of(fs_btree_ops_get(FS_BTREE_FINO), bs, w->fino.n,
					     &err).nblocks;
	if (g->reflink)
		sh->blocks[T_REFC] = geom_of(fs_btree_ag_ops(FS_BTREE_AG_REFC), bs, w->refc.n,
					     &err).nblocks;
	rmap_est = g->rmapbt ? geom_of(fs_btree_ag_ops(FS_BTREE_AG_RMAP), bs, w->rm_base.n + 8,
				       &err).nblocks : 0;
	for (int iter = 0; iter < 16 && !err; iter++) {
		uint64_t fixed = sh->blocks[T_INO] + sh->blocks[T_FINO] + sh->blocks[T_REFC];
		struct runvec rest = { 0 };
		struct fs_bload_geom gb, gr = { 0 };
		uint32_t agfl_want;
		uint64_t real_rmap = 0, extra;

		err = reserve(w, fixed + rmap_est);
		if (!err)
			err = list_blocks(w);
		if (!err)
			err = subtract(&w->free0, &w->resv, &rest);
		if (err) {
			free(rest.v);
			break;
		}
		/* the AGFL the kernel wants for trees of about these heights */
		gb = geom_of(fs_btree_ag_ops(FS_BTREE_AG_BNO), bs, rest.n, &err);
		if (g->rmapbt)
			gr = geom_of(fs_btree_ag_ops(FS_BTREE_AG_RMAP), bs, w->rm_base.n + 8, &err);
		agfl_want = fs_agfl_min_blocks(g, gb.nlevels, gb.nlevels, gr.nlevels);
		if (!err)
			err = plan_freesp(w, &rest, agfl_want, sh);
		free(rest.v);
		if (err)
			break;
		sh->rm.n = 0;
		if (g->rmapbt) {
			const fs_agblock_t *b = w->blocks;

			/* sized once: the kept owners' records and one a new block at most */
			err = rm_reserve(&sh->rm, w->rm_base.n + w->nresv + sh->fp.ntree_blocks +
					 sh->fp.agfl_count + 1);
			if (!err) {
				memcpy(sh->rm.v, w->rm_base.v, w->rm_base.n * sizeof(*sh->rm.v));
				sh->rm.n = w->rm_base.n;
			}
			if (!err)
				err = push_blocks(&sh->rm, b, sh->blocks[T_INO] + sh->blocks[T_FINO],
						  XFS_RMAP_OWN_INOBT);
			b += sh->blocks[T_INO] + sh->blocks[T_FINO];
			if (!err)
				err = push_blocks(&sh->rm, b, sh->blocks[T_REFC], XFS_RMAP_OWN_REFC);
			b += sh->blocks[T_REFC];
			if (!err)
				err = push_blocks(&sh->rm, b, rmap_est, XFS_RMAP_OWN_AG);
			if (!err)
				err = push_blocks(&sh->rm, sh->fp.tree_blocks, sh->fp.ntree_blocks,
						  XFS_RMAP_OWN_AG);
			if (!err)
				err = push_blocks(&sh->rm, sh->fp.agfl, sh->fp.agfl_count,
						  XFS_RMAP_OWN_AG);
			if (err)
				break;
			rm_merge(&sh->rm);
			real_rmap = geom_of(fs_btree_ag_ops(FS_BTREE_AG_RMAP), bs, sh->rm.n,
					    &err).nblocks;
		}
		if (err)
			break;
		extra = rmap_est - real_rmap;
		if (real_rmap > rmap_est || sh->fp.agfl_count + extra > g->agfl_size) {
			rmap_est = real_rmap;
			continue;
		}
		sh->blocks[T_RMAP] = real_rmap;
		free(sh->agfl);
		sh->agfl = malloc((sh->fp.agfl_count + extra + 1) * sizeof(*sh->agfl));
		if (!sh->agfl)
			return -ENOMEM;
		memcpy(sh->agfl, sh->fp.agfl, sh->fp.agfl_count * sizeof(*sh->agfl));
		for (uint64_t i = 0; i < extra; i++)
			sh->agfl[sh->fp.agfl_count + i] = w->blocks[w->nresv - extra + i];
		sh->agfl_count = sh->fp.agfl_count + (uint32_t)extra;
		return 0;
	}
	return err ? err : -EAGAIN;
}

/* ---- building ---- */

static int put_block(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct agwork *w = priv;

	return fs_bload_cache_writer(&w->tgt, ptr, level, block);
}

static int next_block(void *priv, uint64_t *ptr)
{
	struct agwork *w = priv;

	if (w->next >= w->nlist)
		return -ENOSPC;
	*ptr = w->list[w->next++];
	return 0;
}

struct build_out {
	uint64_t root;
	uint32_t nlevels;
};

/* Build one tree on the blocks list[0..n) (all of them: the plan counted them). */
static int build(struct agwork *w, const struct fs_btree_ops *ops, const void *recs,
		 uint64_t nrecs, const fs_agblock_t *list, uint64_t n, struct build_out *out)
{
	struct repair_ctx *rx = w->rx;
	struct fs_bload b = {
		.ops = ops, .g = &rx->fs->g, .agno = w->agno, .nrecs = nrecs,
		.recs = recs ? recs : (const void *)"",  /* an empty tree: no records to read */
		.slack = SLACK, .alloc_block = next_block, .write_block = put_block, .priv = w,
	};
	int err;

	w->list = list;
	w->nlist = n;
	w->next = 0;
	w->tgt = (struct fs_bload_cache_target){
		.cache = rx->sx->cache, .g = &rx->fs->g, .ops = ops, .agno = w->agno,
		.wclass = FS_WCLASS_NEW,
	};
	err = fs_bload_build(&b);
	if (err) {
		if (getenv("XFSX_REPAIR_DEBUG"))
			fprintf(stderr, "bload %s AG %u: %d (record %llu of %llu)\n", ops->name,
				w->agno, err, (unsigned long long)b.bad_rec,
				(unsigned long long)nrecs);
		return err;
	}
	if (w->next != n)
		return -EPROTO;	/* the geometry promised another count: a bug */
	out->root = b.root;
	out->nlevels = b.nlevels;
	return 0;
}

static int cmp_alloc_len_start(const void *pa, const void *pb)
{
	const struct fs_alloc_rec *a = pa, *b = pb;

	if (a->blockcount != b->blockcount)
		return a->blockcount < b->blockcount ? -1 : 1;
	return a->startblock < b->startblock ? -1 : a->startblock > b->startblock;
}

/* bno records in block order; cnt records by length, then block. */
static int encode_freesp(const struct fs_alloc_rec *f, size_t n, bool by_size, struct recvec *out)
{
	struct fs_alloc_rec *v = NULL;

	out->len = sizeof(struct xfs_alloc_rec);
	out->n = 0;
	if (by_size) {
		v = malloc((n ? n : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, f, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_alloc_len_start);
	}
	for (size_t i = 0; i < n; i++) {
		const struct fs_alloc_rec *r = by_size ? &v[i] : &f[i];
		void *p = recs_add(out);

		if (!p) {
			free(v);
			return -ENOMEM;
		}
		fs_enc_alloc_rec(p, r->startblock, r->blockcount);
	}
	free(v);
	return 0;
}

/*
 * The rmap records encoded where they lie (a record and its on-disk form
 * are both 24 bytes): out takes rm's array, rm is left empty, so an AG's
 * records are held once, not twice, while its rmapbt is built.
 */
_Static_assert(sizeof(struct rmrec) == sizeof(struct xfs_rmap_rec),
	       "an rmap record is encoded in place");
static int encode_rmaps(struct rmvec *rm, struct recvec *out)
{
	unsigned char *v = (unsigned char *)rm->v;

	for (size_t i = 0; i < rm->n; i++) {
		struct rmrec r = rm->v[i];

		fs_enc_rmap_rec(v + i * sizeof(struct xfs_rmap_rec), r.start, r.len, r.owner, r.offset);
	}
	out->len = sizeof(struct xfs_rmap_rec);
	out->v = v;
	out->n = rm->n;
	out->cap = rm->cap;
	*rm = (struct rmvec){ 0 };
	return 0;
}

/* The old AGI's unlinked buckets and newino, when it can be read and verified. */
static void old_agi(struct agwork *w, struct fs_agi *agi)
{
	struct repair_ctx *rx = w->rx;
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_findings scratch;
	struct fs_vctx vc = { .g = g, .agno = w->agno,
			      .daddr = fs_ag_agi_offset(g, w->agno) >> FS_BBSHIFT };

	memset(agi, 0, sizeof(*agi));
	agi->newino = NULLAGINO;
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
		agi->unlinked[i] = NULLAGINO;
	if (fs_cache_read(rx->sx->cache, vc.daddr, g->sectsize, &b))
		return;
	fs_findings_init(&scratch);
	vc.fl = &scratch;
	if (fs_verify(FS_MT_AGI, &vc, b->data, g->sectsize) == 0) {
		struct fs_agi old;

		fs_agi_decode(b->data, &old);
		/* the lists are kept unless this repair frees what they hold */
		if (!rx->empty_unlinked)
			memcpy(agi->unlinked, old.unlinked, sizeof(agi->unlinked));
		agi->newino = old.newino;
	}
	fs_findings_free(&scratch);
	fs_buf_put(rx->sx->cache, b);
}

static int write_header(struct agwork *w, uint64_t off, enum fs_mtype type, const void *sector)
{
	struct repair_ctx *rx = w->rx;
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	int err = repair_get_buf(rx, off >> FS_BBSHIFT, g->sectsize, true, &b);

	if (err)
		return err;
	memcpy(b->data, sector, g->sectsize);
	err = repair_mark(rx, b, type, w->agno, 0, FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	return err;
}

static int rebuild_ag(struct agwork *w)
{
	struct repair_ctx *rx = w->rx;
	const struct fs_geom *g = &rx->fs->g;
	struct repair_ag *ra = &rx->ag[w->agno];
	struct shape sh = { 0 };
	struct recvec bno = { 0 }, cnt = { 0 }, rmr = { 0 };
	struct build_out o_ino = { 0 }, o_fino = { 0 }, o_refc = { 0 }, o_bno = { 0 },
			 o_cnt = { 0 }, o_rmap = { 0 };
	struct fs_agf agf = { 0 };
	struct fs_agi agi;
	unsigned char *sector = NULL;
	const fs_agblock_t *rb;
	uint64_t freeblks = 0, longest = 0;
	int err;

	err = collect(w);
	if (!err)
		err = inode_records(w);
	if (!err && g->reflink)
		err = refcount_records(w);
	if (!err)
		err = plan_space(w, &sh);
	/* sh.rm holds the kept owners' records now, with the new trees' */
	free(w->rm_base.v);
	w->rm_base = (struct rmvec){ 0 };
	if (!err)
		err = encode_freesp(sh.freesp, sh.nfree, false, &bno);
	if (!err)
		err = encode_freesp(sh.freesp, sh.nfree, true, &cnt);
	if (!err && g->rmapbt)
		err = encode_rmaps(&sh.rm, &rmr);
	if (err)
		goto out;
	/* the reservation's blocks go to the trees in the order plan_space counted them */
	rb = w->blocks;
	err = build(w, fs_btree_ops_get(FS_BTREE_INO), w->ino.v, w->ino.n, rb, sh.blocks[T_INO],
		    &o_ino);
	rb += sh.blocks[T_INO];
	if (!err && g->finobt)
		err = build(w, fs_btree_ops_get(FS_BTREE_FINO), w->fino.v, w->fino.n, rb,
			    sh.blocks[T_FINO], &o_fino);
	rb += sh.blocks[T_FINO];
	if (!err && g->reflink)
		err = build(w, fs_btree_ag_ops(FS_BTREE_AG_REFC), w->refc.v, w->refc.n, rb,
			    sh.blocks[T_REFC], &o_refc);
	rb += sh.blocks[T_REFC];
	if (!err && g->rmapbt)
		err = build(w, fs_btree_ag_ops(FS_BTREE_AG_RMAP), rmr.v, rmr.n, rb,
			    sh.blocks[T_RMAP], &o_rmap);
	if (!err)
		err = build(w, fs_btree_ag_ops(FS_BTREE_AG_BNO), bno.v, bno.n, sh.fp.tree_blocks,
			    sh.fp.bno.nblocks, &o_bno);
	if (!err)
		err = build(w, fs_btree_ag_ops(FS_BTREE_AG_CNT), cnt.v, cnt.n,
			    sh.fp.tree_blocks + sh.fp.bno.nblocks, sh.fp.cnt.nblocks, &o_cnt);
	if (err)
		goto out;

	sector = fs_dev_alloc(rx->fs->dev, g->sectsize);
	if (!sector) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < sh.nfree; i++) {
		freeblks += sh.freesp[i].blockcount;
		if (sh.freesp[i].blockcount > longest)
			longest = sh.freesp[i].blockcount;
	}

	agf.magic = XFS_AGF_MAGIC;
	agf.versionnum = XFS_AGF_VERSION;
	agf.seqno = w->agno;
	agf.length = w->agblocks;
	agf.bno_root = (uint32_t)o_bno.root;
	agf.bno_level = o_bno.nlevels;
	agf.cnt_root = (uint32_t)o_cnt.root;
	agf.cnt_level = o_cnt.nlevels;
	if (g->rmapbt) {
		agf.rmap_root = (uint32_t)o_rmap.root;
		agf.rmap_level = o_rmap.nlevels;
		agf.rmap_blocks = (uint32_t)sh.blocks[T_RMAP];
	}
	if (g->reflink) {
		agf.refc_root = (uint32_t)o_refc.root;
		agf.refc_level = o_refc.nlevels;
		agf.refc_blocks = (uint32_t)sh.blocks[T_REFC];
	}
	agf.flfirst = 0;
	agf.flcount = sh.agfl_count;
	agf.fllast = agf.flcount ? agf.flcount - 1 : g->agfl_size - 1;
	agf.freeblks = (uint32_t)freeblks;
	agf.longest = (uint32_t)longest;
	/* the free-space and rmap trees' blocks beyond their roots */
	agf.btreeblks = (uint32_t)(sh.fp.bno.nblocks - 1 + sh.fp.cnt.nblocks - 1 +
				   (g->rmapbt ? sh.blocks[T_RMAP] - 1 : 0));
	fs_enc_agf(sector, g->sectsize, &agf, g->meta_uuid);
	err = write_header(w, fs_ag_agf_offset(g, w->agno), FS_MT_AGF, sector);
	if (err)
		goto out;

	fs_enc_agfl(sector, g->sectsize, w->agno, g->meta_uuid, 0, sh.agfl, agf.flcount);
	err = write_header(w, fs_ag_agfl_offset(g, w->agno), FS_MT_AGFL, sector);
	if (err)
		goto out;

	old_agi(w, &agi);
	agi.magic = XFS_AGI_MAGIC;
	agi.versionnum = XFS_AGI_VERSION;
	agi.seqno = w->agno;
	agi.length = w->agblocks;
	agi.count = (uint32_t)w->icount;
	agi.freecount = (uint32_t)w->ifree;
	agi.root = (uint32_t)o_ino.root;
	agi.level = o_ino.nlevels;
	if (g->finobt) {
		agi.free_root = (uint32_t)o_fino.root;
		agi.free_level = o_fino.nlevels;
	}
	if (g->inobtcount) {
		agi.iblocks = (uint32_t)sh.blocks[T_INO];
		agi.fblocks = (uint32_t)sh.blocks[T_FINO];
	}
	/* newino names a chunk that exists, else the last one */
	if (agi.newino != NULLAGINO && !model_ichunk_find(rx->sx->model, w->agno, agi.newino))
		agi.newino = w->last_chunk;
	if (agi.newino == NULLAGINO)
		agi.newino = w->last_chunk;
	agi.dirino = NULLAGINO;
	fs_enc_agi(sector, g->sectsize, &agi, g->meta_uuid);
	err = write_header(w, fs_ag_agi_offset(g, w->agno), FS_MT_AGI, sector);
	if (err)
		goto out;

	ra->freeblks = freeblks;
	ra->flcount = agf.flcount;
	ra->btreeblks = agf.btreeblks;
	ra->icount = w->icount;
	ra->ifree = w->ifree;
	ra->blocks_written = (uint32_t)(w->nresv + sh.fp.ntree_blocks);
out:
	free(sector);
	free(bno.v);
	free(cnt.v);
	free(rmr.v);
	shape_free(&sh);
	return err;
}

static void agwork_free(struct agwork *w)
{
	free(w->free0.v);
	free(w->oldmeta.v);
	free(w->rm_base.v);
	free(w->ino.v);
	free(w->fino.v);
	free(w->refc.v);
	free(w->resv.v);
	free(w->blocks);
}

struct rebuild_run {
	struct repair_ctx *rx;
	int first_err;
	fs_agnumber_t err_ag;
	pthread_mutex_t lock;
};

static int rebuild_one(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct rebuild_run *run = priv;
	struct repair_ctx *rx = run->rx;
	struct agwork w = { .rx = rx, .agno = agno, .agblocks = fs_ag_blocks(&rx->fs->g, agno) };
	int err;

	(void)worker;
	if (!rx->ag[agno].rebuild)
		return 0;
	err = rebuild_ag(&w);
	agwork_free(&w);
	model_ag_release(rx->sx->model, agno);	/* no other AG's work reads this AG's extents */
	if (err) {
		pthread_mutex_lock(&run->lock);
		if (!run->first_err) {
			run->first_err = err;
			run->err_ag = agno;
		}
		pthread_mutex_unlock(&run->lock);
	}
	return err;
}

static void count_gap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct gapctx *c = priv;

	(void)agno;
	(void)agbno;
	(void)len;
	c->count++;
}

/*
 * Which AGs change: findings about their headers or trees; owners dropped
 * in them, or added (a rebuilt directory's blocks, a kept inode's forks the
 * scan could not load, so the AG's trees never matched them); blocks nothing accounts for (neither free before, nor old
 * metadata, nor a kept owner's: leaked, found here too when the scan could
 * not judge leaks because some forks were unread).
 */
/* A kept inode whose forks the scan could not load: the AG trees never saw its extents. */
static bool late_owner(const struct repair_ctx *rx, uint64_t owner)
{
	uint64_t slot = scan_links_slot(rx->sx, (fs_ino_t)owner);

	return slot != UINT64_MAX && (rx->sx->links->rec[slot].flags & LR_FORKS_UNREAD) &&
	       !(rx->verdict[slot] & RV_CLEAR);
}

static void choose_ags(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;
	struct scan_links *lk = rx->sx->links;
	bool late = false;

	for (uint64_t s = 0; s < lk->nslots && !late; s++)
		late = (lk->rec[s].flags & LR_FORKS_UNREAD) && (lk->rec[s].flags & LR_SEEN) &&
		       !(rx->verdict[s] & RV_CLEAR);

	/* every AG with header or btree findings (or the superblock counters) */
	repair_plan_findings(rx, REPAIR_PLAN_AGS, NULL);
	for (fs_agnumber_t a = 0; a < g->agcount; a++) {
		size_t n;
		const struct model_ext *e = model_ag_extents(rx->sx->model, a, &n);
		struct gapctx lc = { .rx = rx };

		/* the unfinished intents of a replayed log name it */
		if (rx->intent_ags && rx->intent_ags[a])
			rx->ag[a].rebuild = true;
		/* owners' blocks dropped, or new ones (a rebuilt directory's) */
		for (size_t i = 0; i < n && !rx->ag[a].rebuild; i++)
			if (e[i].cls >= MC_DATA && e[i].cls <= MC_BMBT &&
			    (!ext_kept(rx, &e[i]) || (e[i].flags & MODEL_EXT_NEW) ||
			     (late && late_owner(rx, e[i].owner))))
				rx->ag[a].rebuild = true;
		/* cleared and new inodes change the AG's inode btrees */
		for (uint64_t s = lk->ag_base[a]; s < lk->ag_base[a + 1] && !rx->ag[a].rebuild; s++)
			if (rx->verdict[s] & (RV_CLEAR | RV_NEW))
				rx->ag[a].rebuild = true;
		if (!rx->ag[a].rebuild) {
			model_ag_free_gaps_drop(rx->sx->model, a, 0, dropped, count_gap, &lc);
			if (lc.count)
				rx->ag[a].rebuild = true;
		}
		model_ag_release(rx->sx->model, a);	/* spilling: one AG in memory at a time */
	}
}

/*
 * A chunk no inode btree listed that the rebuild lists (an inode in it
 * proved itself) gets every inode that did not prove itself marked free:
 * that must be true on disk too.  Such an inode that does not read as a
 * free inode that verifies is written as one (its generation kept), or
 * the kernel would find it in use when it allocates it, and one bad magic
 * fails the whole inode cluster's read.
 */
static int free_unproven(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;
	int err = 0;

	for (fs_agnumber_t a = 0; a < g->agcount && !err; a++) {
		size_t nic;
		const struct model_ichunk *ic = model_ag_ichunks(rx->sx->model, a, &nic);

		if (!rx->ag[a].rebuild)
			continue;
		for (size_t k = 0; k < nic && !err; k++) {
			const struct model_ichunk *c = &ic[k];

			if ((c->where & MODEL_IC_INOBT) || !c->seen_mask)
				continue;
			for (unsigned i = 0; i < XFS_INODES_PER_CHUNK && !err; i++) {
				fs_ino_t ino = fs_agino_to_ino(g, a, c->startino + i);
				struct fs_vctx vc = { .g = g, .agno = a, .ino = ino };
				struct fs_findings scratch;
				struct fs_buf *b;
				int n;

				if ((c->seen_mask >> i & 1) ||
				    (c->holemask >> (i / XFS_INODES_PER_HOLEMASK_BIT) & 1))
					continue;
				err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize,
						     false, &b);
				if (err)
					break;
				fs_findings_init(&scratch);
				vc.fl = &scratch;
				n = fs_verify(FS_MT_INODE, &vc, b->data, g->inodesize);
				if (n || scratch.dropped ||
				    get_be16(&((struct xfs_dinode *)b->data)->di_mode) != 0) {
					uint32_t gen = get_be32(&((struct xfs_dinode *)b->data)->di_gen);

					fs_enc_dinode_free(b->data, g->inodesize, ino, g->meta_uuid);
					put_be32(&((struct xfs_dinode *)b->data)->di_gen, gen);
					err = repair_mark(rx, b, FS_MT_INODE, a, ino, FS_WCLASS_HEADERS);
					rx->planned_writes = true;
				}
				fs_findings_free(&scratch);
				fs_buf_put(rx->sx->cache, b);
			}
		}
	}
	return err;
}

/*
 * -m: an AG's rebuild holds its extents and its rmap records twice over
 * (the kept owners', then with the new trees' blocks), some 70 bytes an
 * extent; when the workers' AGs at once would pass the model's share, the
 * AGs are rebuilt one at a time (aged 20M inodes, 4 AGs, -m 256: peak 320
 * -> 251 MiB, the step 0.5 -> 1.2 s).
 */
static unsigned rebuild_threads(const struct repair_ctx *rx, unsigned threads)
{
	const struct scan_ctx *sx = rx->sx;
	uint64_t most = 0;

	if (!rx->o->scan.mem_bytes || threads <= 1)
		return threads;
	for (fs_agnumber_t a = 0; a < rx->fs->g.agcount; a++) {
		uint64_t n = rx->ag[a].rebuild ? model_ag_count(sx->model, a) : 0;

		most = n > most ? n : most;
	}
	most *= 2 * sizeof(struct rmrec) + sizeof(struct model_ext);
	return most * threads > sx->budget.model ? 1 : threads;
}

int repair_phase_rebuild(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_ag_workq_opts wo = {
		.threads = rx->sx->workers, .ag_stride = rx->o->scan.ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	struct rebuild_run run = { .rx = rx };
	const char *why;
	int err;

	rx->ag = calloc(g->agcount, sizeof(*rx->ag));
	if (!rx->ag)
		return -ENOMEM;
	if (!rx->sx->links)
		return 0;
	why = repair_model_incomplete(rx);
	if (why) {
		fprintf(stderr, "xfsx_repair: %s: the blocks their inodes use are unknown, so no "
			"AG's headers and btrees are rebuilt (those findings are left)\n", why);
		return 0;
	}
	choose_ags(rx);
	err = free_unproven(rx);
	if (err)
		return err;
	for (fs_agnumber_t a = 0; a < g->agcount; a++)
		if (rx->ag[a].rebuild) {
			rx->planned_writes = true;
			rx->counters = true;
		}
	wo.threads = rebuild_threads(rx, wo.threads);
	pthread_mutex_init(&run.lock, NULL);
	err = fs_ag_workq_run(&wo, rebuild_one, &run);
	pthread_mutex_destroy(&run.lock);
	if (run.first_err) {
		fprintf(stderr, "xfsx_repair: rebuilding AG %u failed: %s\n", run.err_ag,
			run.first_err == -ENOSPC && fs_cache_stage_error(rx->sx->cache) ?
			"its new btree blocks could not be staged in the temporary directory" :
			run.first_err == -ENOSPC && !fs_cache_dirty_fits(rx->sx->cache, g->blocksize) ?
			"its new btree blocks do not fit in the metadata cache's cap (raise -m or "
			"the cache size)" :
			run.first_err == -ENOSPC ? "not enough free space for its new btrees" :
			run.first_err == -EAGAIN ? "its btree sizes did not converge" :
			strerror(-run.first_err));
		return run.first_err;
	}
	return err;
}
