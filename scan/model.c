// SPDX-License-Identifier: GPL-2.0
/*
 * The in-core model: per-AG block ownership as extents and per-AG inode
 * chunk records.  Extents are appended as scans find them (any thread, into
 * per-thread stripes of the AG), then gathered and sorted once per AG; overlaps and gaps come from one
 * sweep over the sorted array, so the cost is O(n log n) in extents, not
 * in blocks, and a large volume fits in memory.
 */
#include "scan/model.h"
#include "libfs/util/sort.h"
#include "libfs/util/vec.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[MC_NR] = {
	[MC_FREE] = "free space", [MC_AGHDR] = "AG headers", [MC_LOG] = "log",
	[MC_AGFL] = "AG free list", [MC_BNOBT] = "bno btree", [MC_CNTBT] = "cnt btree",
	[MC_RMAPBT] = "rmap btree", [MC_REFCBT] = "refcount btree", [MC_INOBT] = "inode btree",
	[MC_FINOBT] = "free inode btree", [MC_INODES] = "inode chunk", [MC_DATA] = "file data",
	[MC_ATTR] = "attribute fork", [MC_BMBT] = "extent map btree", [MC_COW] = "CoW staging",
};

const char *model_class_name(enum model_class cls)
{
	return cls < MC_NR ? class_names[cls] : "unknown";
}

uint64_t model_rmap_owner(enum model_class cls, uint64_t owner)
{
	switch (cls) {
	case MC_AGHDR: return XFS_RMAP_OWN_FS;
	case MC_LOG: return XFS_RMAP_OWN_LOG;
	case MC_AGFL: case MC_BNOBT: case MC_CNTBT: case MC_RMAPBT: return XFS_RMAP_OWN_AG;
	case MC_REFCBT: return XFS_RMAP_OWN_REFC;
	case MC_INOBT: case MC_FINOBT: return XFS_RMAP_OWN_INOBT;
	case MC_INODES: return XFS_RMAP_OWN_INODES;
	case MC_COW: return XFS_RMAP_OWN_COW;
	case MC_DATA: case MC_ATTR: case MC_BMBT: return owner;
	default: return XFS_RMAP_OWN_NULL;
	}
}

int model_create(const struct fs_geom *g, struct model **out)
{
	/* aligned: the held counters must each have a cache line */
	struct model *m = aligned_alloc(_Alignof(struct model), sizeof(*m));

	if (!m)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	m->g = g;
	m->agcount = g->agcount;
	/* aligned: the struct's cache-line groups must start on cache lines */
	m->ag = aligned_alloc(_Alignof(struct model_ag), (g->agcount ? g->agcount : 1) * sizeof(*m->ag));
	if (m->ag)
		memset(m->ag, 0, (g->agcount ? g->agcount : 1) * sizeof(*m->ag));
	if (!m->ag) {
		free(m);
		return -ENOMEM;
	}
	for (fs_agnumber_t a = 0; a < m->agcount; a++) {
		pthread_mutex_init(&m->ag[a].lock, NULL);
		pthread_mutex_init(&m->ag[a].runlock, NULL);
		for (unsigned k = 0; k < MODEL_STRIPES - 1; k++)
			pthread_mutex_init(&m->ag[a].stripe[k].lock, NULL);
	}
	*out = m;
	return 0;
}

void model_destroy(struct model *m)
{
	if (!m)
		return;
	for (fs_agnumber_t a = 0; a < m->agcount; a++) {
		free(m->ag[a].ext);
		free(m->ag[a].icidx);
		free(m->ag[a].ic);
		free(m->ag[a].runs);
		pthread_mutex_destroy(&m->ag[a].lock);
		pthread_mutex_destroy(&m->ag[a].runlock);
		for (unsigned k = 0; k < MODEL_STRIPES - 1; k++) {
			free(m->ag[a].stripe[k].ext);
			pthread_mutex_destroy(&m->ag[a].stripe[k].lock);
		}
	}
	free(m->ag);
	free(m);
}

void model_drop_extents(struct model *m)
{
	if (!m)
		return;
	for (fs_agnumber_t a = 0; a < m->agcount; a++) {
		struct model_ag *ag = &m->ag[a];

		pthread_mutex_lock(&ag->lock);
		free(ag->ext);
		ag->ext = NULL;
		ag->n = ag->cap = 0;
		pthread_mutex_lock(&ag->runlock);
		for (size_t r = 0; m->spill && r < ag->nruns; r++)
			fs_spill_discard(m->spill, &ag->runs[r]);
		free(ag->runs);
		ag->runs = NULL;
		ag->nruns = ag->capruns = 0;
		ag->nhead = 0;
		ag->mirror = false;
		pthread_mutex_unlock(&ag->runlock);
		for (unsigned k = 0; k < MODEL_STRIPES - 1; k++) {
			free(ag->stripe[k].ext);
			ag->stripe[k].ext = NULL;
			ag->stripe[k].n = ag->stripe[k].cap = 0;
		}
		pthread_mutex_unlock(&ag->lock);
	}
}

static int cmp_ext(const void *pa, const void *pb)
{
	const struct model_ext *a = pa, *b = pb;

	if (a->agbno != b->agbno)
		return a->agbno < b->agbno ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* b continues a: same owner, adjacent blocks, and for file forks adjacent offsets. */
static bool continues(const struct model_ext *a, const struct model_ext *b)
{
	bool forked = a->cls == MC_DATA || a->cls == MC_ATTR;

	return a->cls == b->cls && a->owner == b->owner && a->flags == b->flags &&
	       (uint64_t)a->agbno + a->len == b->agbno && (uint64_t)a->len + b->len <= UINT32_MAX &&
	       (!forked || a->offset + a->len == b->offset);
}


/* Held extents: atomically, stripes adding and AGs finishing at once. */
static unsigned thread_stripe(void);

static void held_add(struct model *m, size_t n)
{
	__atomic_add_fetch(&m->held[thread_stripe()].n, (int64_t)n, __ATOMIC_RELAXED);
}

static void held_sub(struct model *m, size_t n)
{
	__atomic_sub_fetch(&m->held[thread_stripe()].n, (int64_t)n, __ATOMIC_RELAXED);
}

/* The extents in memory, all stripes' counts. */
static size_t model_held(const struct model *m)
{
	int64_t t = 0;

	for (unsigned k = 0; k < MODEL_STRIPES; k++)
		t += __atomic_load_n(&m->held[k].n, __ATOMIC_RELAXED);
	return t > 0 ? (size_t)t : 0;
}

static bool over_limit(const struct model *m)
{
	return m->spill &&
	       model_held(m) * sizeof(struct model_ext) > m->limit;
}

static int fail(struct model *m, int err)
{
	int zero = 0;

	__atomic_compare_exchange_n(&m->err, &zero, err, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	return err;
}

static void sort_ext(struct model_ext *v, size_t n)
{
	if (n && fs_sort_u32_cmp(v, n, sizeof(*v), offsetof(struct model_ext, agbno), cmp_ext))
		qsort(v, n, sizeof(*v), cmp_ext);	/* no memory for the radix sort's copy */
}

static int push_run(struct model *m, struct model_ag *ag, const struct fs_spill_run *r)
{
	int err;

	pthread_mutex_lock(&ag->runlock);
	err = FS_VEC_ROOM(ag->runs, ag->nruns, ag->capruns, 16);
	if (!err)
		ag->runs[ag->nruns++] = *r;
	pthread_mutex_unlock(&ag->runlock);
	return err ? fail(m, err) : 0;
}

/* Sort an array of the AG (its lock held), write it as a run, free it. */
static int spill_array(struct model *m, struct model_ag *ag, struct model_ext **v, size_t *n,
		       size_t *cap)
{
	struct fs_spill_run r;
	int err;

	sort_ext(*v, *n);
	err = fs_spill_write(m->spill, *v, *n, &r);
	if (!err)
		err = push_run(m, ag, &r);
	if (err)
		return fail(m, err);
	held_sub(m, *n);
	free(*v);
	*v = NULL;
	*n = *cap = 0;
	return 0;
}

/* ext mirrors runs[0]: drop it (under ag->lock). */
static void drop_mirror(struct model *m, struct model_ag *ag)
{
	if (!ag->mirror)
		return;
	held_sub(m, ag->n);
	free(ag->ext);
	ag->ext = NULL;
	ag->n = ag->cap = 0;
	ag->mirror = false;
}

/* This thread's stripe: threads are numbered as they first add; the first one uses ext itself. */
static unsigned thread_stripe(void)
{
	static unsigned next;
	static _Thread_local unsigned mine;	/* stripe + 1; 0: not numbered yet */

	if (!mine)
		mine = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % MODEL_STRIPES + 1;
	return mine - 1;
}

int model_add(struct model *m, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len,
	      enum model_class cls, uint64_t owner, uint64_t offset, uint8_t flags)
{
	struct model_ag *ag;
	struct model_stripe *st;
	struct model_ext e;
	unsigned k;
	int err;

	/* the padding too: spilled runs are written byte for byte */
	memset(&e, 0, sizeof(e));
	e.agbno = agbno;
	e.len = len;
	e.owner = owner;
	e.offset = offset;
	e.cls = (uint8_t)cls;
	e.flags = flags;

	if (agno >= m->agcount || !len || cls >= MC_NR || agbno >= fs_ag_blocks(m->g, agno) ||
	    len > fs_ag_blocks(m->g, agno) - agbno || offset >> MODEL_OFFSET_BITS || flags >> 5)
		return -EINVAL;
	ag = &m->ag[agno];
	k = thread_stripe();
	if (m->err)
		return m->err;
	if (!k) {
		pthread_mutex_lock(&ag->lock);
		drop_mirror(m, ag);	/* runs[0] keeps it; ext takes only what is new */
		err = FS_VEC_ROOM(ag->ext, ag->n, ag->cap, 16);
		if (!err) {
			ag->ext[ag->n++] = e;
			ag->sorted = false;
			held_add(m, 1);
			if (ag->n >= m->batch && over_limit(m))
				err = spill_array(m, ag, &ag->ext, &ag->n, &ag->cap);
		}
		pthread_mutex_unlock(&ag->lock);
		return err;
	}
	st = &ag->stripe[k - 1];
	pthread_mutex_lock(&st->lock);
	err = FS_VEC_ROOM(st->ext, st->n, st->cap, 16);
	if (!err) {
		st->ext[st->n++] = e;
		held_add(m, 1);
		if (st->n >= m->batch && over_limit(m))
			err = spill_array(m, ag, &st->ext, &st->n, &st->cap);
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

/* Move the stripes' extents into ext (under ag->lock). */
static int gather_stripes(struct model_ag *ag)
{
	int err = 0;

	for (unsigned k = 0; k < MODEL_STRIPES - 1 && !err; k++) {
		struct model_stripe *st = &ag->stripe[k];

		pthread_mutex_lock(&st->lock);
		if (st->n) {
			err = fs_vec_reserve(&ag->ext, &ag->cap, ag->n + st->n,
					     sizeof(*ag->ext), 16);
			if (!err) {
				memcpy(ag->ext + ag->n, st->ext, st->n * sizeof(*st->ext));
				ag->n += st->n;
				ag->sorted = false;
				free(st->ext);
				st->ext = NULL;
				st->n = st->cap = 0;
			}
		}
		pthread_mutex_unlock(&st->lock);
	}
	return err;
}

/* Merge the contiguous runs of one owner as the sorted extents stream by. */
static void merge_into(struct model_ext *out, size_t *w, const struct model_ext *e)
{
	/*
	 * Merging is only safe across free-space records when they are
	 * adjacent, never overlapping; an exact duplicate is kept so the
	 * sweep sees both claims.
	 */
	if (*w && continues(&out[*w - 1], e) && e->cls != MC_FREE)
		out[*w - 1].len += e->len;
	else
		out[(*w)++] = *e;
}

/* The finished AG (ext) becomes the head (one piece), so it can leave memory. */
static int write_mirror(struct model *m, struct model_ag *ag)
{
	struct fs_spill_run r;
	int err = fs_spill_write(m->spill, ag->ext, ag->n, &r);

	if (err)
		return fail(m, err);
	pthread_mutex_lock(&ag->runlock);
	for (size_t i = 0; i < ag->nruns; i++)
		fs_spill_discard(m->spill, &ag->runs[i]);
	ag->nruns = 0;
	err = FS_VEC_ROOM(ag->runs, ag->nruns, ag->capruns, 16);
	if (!err)
		ag->runs[ag->nruns++] = r;
	pthread_mutex_unlock(&ag->runlock);
	if (err)
		return fail(m, err);
	ag->nhead = 1;
	ag->mirror = true;
	return 0;
}

/* A merge's output, written as the pieces of the finished AG (MODEL_SEG extents each). */
struct seg_out {
	struct model *m;
	struct model_ext *v;         /* seg + 1: the last may still grow by the next */
	size_t w;
	struct fs_spill_run *segs;
	size_t nsegs, cap;
};

static int seg_flush(struct seg_out *o, size_t n)
{
	struct fs_spill_run r;
	int err;

	if (!n)
		return 0;
	err = fs_spill_write(o->m->spill, o->v, n, &r);
	if (!err)
		err = FS_VEC_ROOM(o->segs, o->nsegs, o->cap, 16);
	if (!err)
		o->segs[o->nsegs++] = r;
	return err;
}

static int emit_seg(void *priv, const void *rec)
{
	struct seg_out *o = priv;
	int err;

	merge_into(o->v, &o->w, rec);
	if (o->w <= o->m->seg)
		return 0;
	err = seg_flush(o, o->m->seg);	/* all but the last are final */
	o->v[0] = o->v[o->m->seg];
	o->w = 1;
	return err;
}

/*
 * Finish a spilled AG (under ag->lock): every run and what is in memory,
 * k-way merged into the head's pieces on disk; nothing of the AG is left
 * in memory (the queries read it back).
 */
static int finish_spilled(struct model *m, struct model_ag *ag)
{
	struct seg_out o = { .m = m };
	struct fs_spill_run *runs;
	size_t nruns;
	int err;

	drop_mirror(m, ag);
	err = gather_stripes(ag);
	if (!err && ag->n)
		err = spill_array(m, ag, &ag->ext, &ag->n, &ag->cap);
	if (err)
		return fail(m, err);
	pthread_mutex_lock(&ag->runlock);
	runs = ag->runs;
	nruns = ag->nruns;
	ag->runs = NULL;
	ag->nruns = ag->capruns = ag->nhead = 0;
	pthread_mutex_unlock(&ag->runlock);
	o.v = malloc((m->seg + 1) * sizeof(*o.v));
	if (!o.v)
		err = -ENOMEM;
	else
		err = fs_spill_merge(m->spill, runs, nruns, cmp_ext, emit_seg, &o);
	if (!err)
		err = seg_flush(&o, o.w);
	free(o.v);
	free(runs);
	if (err) {
		free(o.segs);
		return fail(m, err);
	}
	pthread_mutex_lock(&ag->runlock);
	ag->runs = o.segs;
	ag->nruns = ag->nhead = o.nsegs;
	ag->capruns = o.cap;
	pthread_mutex_unlock(&ag->runlock);
	ag->sorted = true;
	return 0;
}

/* Adds waiting in the stripes (read without their locks: a hint, as for finishing). */
static bool stripes_pending(const struct model_ag *ag)
{
	for (unsigned k = 0; k < MODEL_STRIPES - 1; k++)
		if (__atomic_load_n(&ag->stripe[k].n, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* Whether the AG's finished extents are on disk only, all of them in the head. */
static bool finished_on_disk(const struct model_ag *ag)
{
	return ag->nhead && ag->nruns == ag->nhead && ag->sorted && !ag->mirror && !ag->n &&
	       !stripes_pending(ag);
}

/* The head read back whole into ext (under ag->lock). */
static int load_head(struct model *m, struct model_ag *ag)
{
	size_t total = 0, at = 0;
	struct model_ext *v;
	int err = 0;

	for (size_t i = 0; i < ag->nhead; i++)
		total += ag->runs[i].n;
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		err = -ENOMEM;
	for (size_t i = 0; i < ag->nhead && !err; i++) {
		err = fs_spill_read(m->spill, &ag->runs[i], v + at);
		at += ag->runs[i].n;
	}
	if (err) {
		free(v);
		return fail(m, err);
	}
	ag->ext = v;
	ag->n = ag->cap = total;
	ag->mirror = true;
	held_add(m, total);
	return 0;
}

static int finish_locked(struct model *m, struct model_ag *ag)
{
	size_t w = 0;
	int err;

	if (ag->nruns) {
		if (ag->sorted && ag->nhead && ag->nruns == ag->nhead && !stripes_pending(ag))
			return 0;	/* finished already */
		return finish_spilled(m, ag);
	}
	err = gather_stripes(ag);
	if (!err && !ag->sorted) {
		sort_ext(ag->ext, ag->n);
		for (size_t i = 0; i < ag->n; i++)
			merge_into(ag->ext, &w, &ag->ext[i]);
		held_sub(m, ag->n - w);
		ag->n = w;
		ag->sorted = true;
	}
	return err;
}

int model_ag_finish(struct model *m, fs_agnumber_t agno)
{
	struct model_ag *ag;
	int err;

	if (agno >= m->agcount)
		return -EINVAL;
	if (m->err)
		return m->err;
	ag = &m->ag[agno];
	pthread_mutex_lock(&ag->lock);
	err = finish_locked(m, ag);
	pthread_mutex_unlock(&ag->lock);
	return err;
}

/*
 * Before a query of a spilled AG: its finished extents read back, or its
 * runs merged if it had adds since.  Errors are kept (model_error); the
 * query then sees what is in memory.
 */
static void ready(const struct model *cm, fs_agnumber_t agno)
{
	struct model *m = (struct model *)cm;	/* loading is not a change the caller sees */
	struct model_ag *ag = &m->ag[agno];

	if (!m->spill || !__atomic_load_n(&ag->nruns, __ATOMIC_RELAXED) || m->err)
		return;
	pthread_mutex_lock(&ag->lock);
	if (!finished_on_disk(ag) && ag->nruns && !ag->mirror)
		(void)finish_locked(m, ag);
	if (finished_on_disk(ag) && !m->err)
		(void)load_head(m, ag);
	pthread_mutex_unlock(&ag->lock);
}

/* The AG's extents, in memory or in its runs (a mirror counted once). */
static size_t ag_count(const struct model_ag *ag)
{
	size_t n = ag->mirror ? 0 : ag->n;

	for (size_t i = 0; i < ag->nruns; i++)
		n += ag->runs[i].n;
	if (ag->mirror && !ag->nruns)
		n = ag->n;
	return n;
}

size_t model_ag_count(const struct model *m, fs_agnumber_t agno)
{
	const struct model_ag *ag;
	size_t n;

	if (agno >= m->agcount)
		return 0;
	ag = &m->ag[agno];
	pthread_mutex_lock((pthread_mutex_t *)&ag->lock);
	pthread_mutex_lock((pthread_mutex_t *)&ag->runlock);
	n = ag_count(ag);
	pthread_mutex_unlock((pthread_mutex_t *)&ag->runlock);
	pthread_mutex_unlock((pthread_mutex_t *)&ag->lock);
	return n;
}

void model_cursor_open(const struct model *cm, fs_agnumber_t agno, struct model_cursor *c)
{
	struct model *m = (struct model *)cm;	/* loading is not a change the caller sees */
	struct model_ag *ag;

	memset(c, 0, sizeof(*c));
	c->m = m;
	if (agno >= m->agcount)
		return;
	ag = &m->ag[agno];
	if (m->spill && __atomic_load_n(&ag->nruns, __ATOMIC_RELAXED) && !m->err) {
		pthread_mutex_lock(&ag->lock);
		if (!finished_on_disk(ag) && ag->nruns && !ag->mirror)
			(void)finish_locked(m, ag);
		if (finished_on_disk(ag) && !m->err) {
			c->segs = malloc(ag->nhead * sizeof(*c->segs));
			c->buf = malloc(m->chunk * sizeof(*c->buf));
			if (!c->segs || !c->buf) {
				c->err = fail(m, -ENOMEM);
			} else {
				memcpy(c->segs, ag->runs, ag->nhead * sizeof(*c->segs));
				c->nsegs = ag->nhead;
			}
			pthread_mutex_unlock(&ag->lock);
			return;
		}
		pthread_mutex_unlock(&ag->lock);
	}
	c->v = ag->ext;
	c->n = ag->n;
}

/* The next piece of a spilled head into the buffer: false at its end or on an error. */
static bool cursor_refill(struct model_cursor *c)
{
	while (!c->err && c->seg < c->nsegs) {
		const struct fs_spill_run *r = &c->segs[c->seg];
		uint64_t left = r->n - c->at;
		size_t take = left < c->m->chunk ? (size_t)left : c->m->chunk;
		int err;

		if (!take) {
			c->seg++;
			c->at = 0;
			continue;
		}
		err = fs_spill_read_part(c->m->spill, r, c->at, take, c->buf);
		if (err) {
			c->err = fail(c->m, err);
			break;
		}
		c->at += take;
		c->v = c->buf;
		c->n = take;
		c->i = 0;
		return true;
	}
	return false;
}

const struct model_ext *model_cursor_peek(struct model_cursor *c)
{
	if (c->i >= c->n && !cursor_refill(c))
		return NULL;
	return &c->v[c->i];
}

void model_cursor_next(struct model_cursor *c)
{
	if (c->i < c->n)
		c->i++;
}

int model_cursor_close(struct model_cursor *c)
{
	free(c->segs);
	free(c->buf);
	c->segs = NULL;
	c->buf = NULL;
	c->nsegs = c->n = c->i = 0;
	return c->err;
}

void model_ag_release(struct model *m, fs_agnumber_t agno)
{
	struct model_ag *ag;

	if (!m->spill || agno >= m->agcount || m->err)
		return;
	ag = &m->ag[agno];
	pthread_mutex_lock(&ag->lock);
	if (!ag->mirror && ag->sorted && !ag->nruns && ag->n && over_limit(m))
		(void)write_mirror(m, ag);
	if (ag->mirror && over_limit(m))
		drop_mirror(m, ag);
	pthread_mutex_unlock(&ag->lock);
}

void model_set_spill(struct model *m, struct fs_spill *sp, size_t limit, size_t batch)
{
	m->spill = sp;
	m->limit = limit;
	m->batch = batch ? batch : 1;
	m->seg = m->batch < MODEL_SEG / 8 ? 8 * m->batch : MODEL_SEG;
	m->chunk = m->batch < MODEL_CURSOR_EXT / 2 ? 2 * m->batch : MODEL_CURSOR_EXT;
}

size_t model_resident_need(const struct model *m, unsigned workers)
{
	size_t held = model_held(m), most = 0;

	if (!m->spill)
		return held * sizeof(struct model_ext);
	for (fs_agnumber_t a = 0; a < m->agcount; a++) {
		size_t n = ag_count(&m->ag[a]);

		most = n > most ? n : most;
	}
	most *= (size_t)(workers ? workers : 1);
	return (most < held ? most : held) * sizeof(struct model_ext);
}

int model_error(const struct model *m)
{
	return __atomic_load_n(&m->err, __ATOMIC_RELAXED);
}


const struct model_ext *model_ag_extents(const struct model *m, fs_agnumber_t agno, size_t *n)
{
	if (agno >= m->agcount) {
		*n = 0;
		return NULL;
	}
	ready(m, agno);
	*n = m->ag[agno].n;
	return m->ag[agno].ext;
}

size_t model_ag_overlaps(const struct model *m, fs_agnumber_t agno, model_overlap_fn cb,
			 void *priv)
{
	struct model_cursor c;
	struct model_ext reach;      /* the extent reaching furthest so far */
	const struct model_ext *e;
	bool have = false;
	size_t found = 0;
	uint64_t reach_end = 0;

	if (agno >= m->agcount)
		return 0;
	for (model_cursor_open(m, agno, &c); (e = model_cursor_peek(&c)); model_cursor_next(&c)) {
		uint64_t end = (uint64_t)e->agbno + e->len;

		if (have && e->agbno < reach_end) {
			uint64_t shared_end = end < reach_end ? end : reach_end;

			found++;
			if (cb)
				cb(priv, agno, e->agbno, (uint32_t)(shared_end - e->agbno), &reach, e);
		}
		if (!have || end > reach_end) {
			reach = *e;
			have = true;
			reach_end = end;
		}
	}
	(void)model_cursor_close(&c);
	return found;
}

size_t model_ag_extents_filter(const struct model *m, fs_agnumber_t agno, uint32_t class_mask,
			       model_ext_fn cb, void *priv)
{
	struct model_cursor c;
	const struct model_ext *e;
	size_t found = 0;

	if (agno >= m->agcount)
		return 0;
	for (model_cursor_open(m, agno, &c); (e = model_cursor_peek(&c)); model_cursor_next(&c)) {
		if (!(class_mask & MODEL_CLASS_BIT(e->cls)))
			continue;
		found++;
		if (cb)
			cb(priv, agno, e);
	}
	(void)model_cursor_close(&c);
	return found;
}

size_t model_ag_free_gaps_drop(const struct model *m, fs_agnumber_t agno,
			       uint32_t drop_class_mask, model_drop_fn drop, model_gap_fn cb,
			       void *priv)
{
	struct model_cursor c;
	uint64_t next = 0, ag_end;
	size_t found = 0;

	if (agno >= m->agcount)
		return 0;
	ag_end = fs_ag_blocks(m->g, agno);
	model_cursor_open(m, agno, &c);
	/* the extents are in block order: the kept ones are too, so one pass finds the gaps */
	for (bool last = false; !last; model_cursor_next(&c)) {
		const struct model_ext *e = model_cursor_peek(&c);
		uint64_t start;

		last = !e;
		if (e && ((drop_class_mask & MODEL_CLASS_BIT(e->cls)) || (drop && drop(priv, e))))
			continue;
		start = e ? e->agbno : ag_end;
		if (start > next) {
			found++;
			if (cb)
				cb(priv, agno, (fs_agblock_t)next, (uint32_t)(start - next));
		}
		if (e && (uint64_t)e->agbno + e->len > next)
			next = (uint64_t)e->agbno + e->len;
	}
	(void)model_cursor_close(&c);
	return found;
}

size_t model_ag_free_gaps(const struct model *m, fs_agnumber_t agno, uint32_t drop_class_mask,
			  model_gap_fn cb, void *priv)
{
	return model_ag_free_gaps_drop(m, agno, drop_class_mask, NULL, cb, priv);
}

size_t model_ag_gaps(const struct model *m, fs_agnumber_t agno, model_gap_fn cb, void *priv)
{
	return model_ag_free_gaps_drop(m, agno, 0, NULL, cb, priv);
}

uint64_t model_ag_class_blocks(const struct model *m, fs_agnumber_t agno, enum model_class cls)
{
	struct model_cursor c;
	const struct model_ext *e;
	uint64_t sum = 0;

	if (agno >= m->agcount)
		return 0;
	for (model_cursor_open(m, agno, &c); (e = model_cursor_peek(&c)); model_cursor_next(&c))
		if (e->cls == cls)
			sum += e->len;
	(void)model_cursor_close(&c);
	return sum;
}

int model_add_ichunk(struct model *m, fs_agnumber_t agno, const struct model_ichunk *ic)
{
	struct model_ag *ag;
	int err;

	if (agno >= m->agcount)
		return -EINVAL;
	ag = &m->ag[agno];
	pthread_mutex_lock(&ag->lock);
	err = FS_VEC_ROOM(ag->ic, ag->nic, ag->capic, 256);
	if (!err) {
		ag->ic[ag->nic++] = *ic;
		ag->ic_sorted = false;
	}
	pthread_mutex_unlock(&ag->lock);
	return err;
}

/*
 * Build the direct index of the sorted chunks.  Slots are 64 inodes (one
 * aligned chunk) wide, or wider so the index has at most about two slots
 * per chunk: its size follows the chunks, not the AG's inode space.
 * Without memory for it, lookups search the whole array.
 */
static void index_ichunks(struct model_ag *ag)
{
	fs_agino_t last;
	unsigned int shift = 6;
	size_t ns, c = 0;

	free(ag->icidx);
	ag->icidx = NULL;
	if (!ag->nic || ag->nic > UINT32_MAX)
		return;
	last = ag->ic[ag->nic - 1].startino;
	while (((size_t)last >> shift) + 1 > 2 * ag->nic + 64)
		shift++;
	ns = ((size_t)last >> shift) + 1;
	ag->icidx = malloc((ns + 1) * sizeof(*ag->icidx));
	if (!ag->icidx)
		return;
	for (size_t s = 0; s <= ns; s++) {
		while (c < ag->nic && ((size_t)ag->ic[c].startino >> shift) < s)
			c++;
		ag->icidx[s] = (uint32_t)c;
	}
	ag->nicidx = ns;
	ag->icshift = shift;
}

static int cmp_ichunk(const void *pa, const void *pb)
{
	const struct model_ichunk *a = pa, *b = pb;

	if (a->startino != b->startino)
		return a->startino < b->startino ? -1 : 1;
	/* the inobt's view first, so it is the one merged into */
	return (b->where & MODEL_IC_INOBT) - (a->where & MODEL_IC_INOBT);
}

int model_ag_finish_ichunks(struct model *m, fs_agnumber_t agno)
{
	struct model_ag *ag;
	size_t w = 0;

	if (agno >= m->agcount)
		return -EINVAL;
	ag = &m->ag[agno];
	pthread_mutex_lock(&ag->lock);
	if (!ag->ic_sorted) {
		if (ag->nic && fs_sort_u32_cmp(ag->ic, ag->nic, sizeof(*ag->ic),
					       offsetof(struct model_ichunk, startino), cmp_ichunk))
			qsort(ag->ic, ag->nic, sizeof(*ag->ic), cmp_ichunk);
		for (size_t i = 0; i < ag->nic; i++) {
			struct model_ichunk *prev = w ? &ag->ic[w - 1] : NULL;
			const struct model_ichunk *c = &ag->ic[i];

			if (prev && prev->startino == c->startino) {
				if (c->where & MODEL_IC_FINOBT)
					prev->fino_free = c->fino_free;
				prev->where |= c->where;
				prev->seen_free |= c->seen_free;
				prev->seen_mask |= c->seen_mask;
				continue;
			}
			ag->ic[w++] = *c;
		}
		ag->nic = w;
		/*
		 * the array's slack given back (it grew by doubling, and the
		 * finobt's records of the same chunks were merged): -m charges
		 * a record a chunk (scan/run.c, links_bytes)
		 */
		if (ag->nic && ag->nic < ag->capic) {
			struct model_ichunk *v = realloc(ag->ic, ag->nic * sizeof(*ag->ic));

			if (v) {
				ag->ic = v;
				ag->capic = ag->nic;
			}
		}
		ag->ic_sorted = true;
		index_ichunks(ag);
	}
	pthread_mutex_unlock(&ag->lock);
	return 0;
}

const struct model_ichunk *model_ag_ichunks(const struct model *m, fs_agnumber_t agno, size_t *n)
{
	if (agno >= m->agcount) {
		*n = 0;
		return NULL;
	}
	*n = m->ag[agno].nic;
	return m->ag[agno].ic;
}

struct model_ichunk *model_ichunk_find(struct model *m, fs_agnumber_t agno, fs_agino_t agino)
{
	struct model_ag *ag;
	size_t lo = 0, hi;

	if (agno >= m->agcount)
		return NULL;
	ag = &m->ag[agno];
	hi = ag->nic;
	if (ag->icidx && ag->ic_sorted) {
		size_t slot = (size_t)agino >> ag->icshift;

		/* the answer is the last chunk starting at or below agino:
		 * one starting in agino's slot, else the last one before it */
		if (slot < ag->nicidx) {
			lo = ag->icidx[slot];
			hi = ag->icidx[slot + 1];
		} else {
			lo = ag->icidx[ag->nicidx];
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ag->ic[mid].startino <= agino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && agino - ag->ic[lo - 1].startino < XFS_INODES_PER_CHUNK)
		return &ag->ic[lo - 1];
	return NULL;
}

int model_add_chunk_blocks(struct model *m, fs_agnumber_t agno, fs_agino_t startino,
			   uint16_t holemask, uint64_t owner)
{
	uint32_t bit = 0;

	while (bit < XFS_INOBT_HOLEMASK_BITS) {
		uint32_t end;
		fs_agblock_t b0, b1;
		int err;

		if (holemask & (1u << bit)) {
			bit++;
			continue;
		}
		for (end = bit; end < XFS_INOBT_HOLEMASK_BITS && !(holemask & (1u << end)); end++)
			;
		b0 = fs_agino_to_agbno(m->g, startino + bit * XFS_INODES_PER_HOLEMASK_BIT);
		b1 = fs_agino_to_agbno(m->g, startino + end * XFS_INODES_PER_HOLEMASK_BIT - 1);
		err = model_add(m, agno, b0, b1 - b0 + 1, MC_INODES, owner, 0, 0);
		if (err)
			return err;
		bit = end;
	}
	return 0;
}

size_t model_bytes(const struct model *m)
{
	size_t b = sizeof(*m) + (size_t)m->agcount * sizeof(*m->ag);

	for (fs_agnumber_t a = 0; a < m->agcount; a++)
		b += m->ag[a].cap * sizeof(struct model_ext) + m->ag[a].capic * sizeof(struct model_ichunk);
	return b;
}

/* A min-heap of the ends of the data extents covering the sweep's position. */
struct ends {
	uint32_t *v;
	size_t n, cap;
};

static int ends_push(struct ends *h, uint32_t x)
{
	size_t i;

	if (FS_VEC_ROOM(h->v, h->n, h->cap, 64))
		return -ENOMEM;
	for (i = h->n++; i && h->v[(i - 1) / 2] > x; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = x;
	return 0;
}

static void ends_pop(struct ends *h)
{
	uint32_t x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
}

/* The first data extent from the cursor's on that drop() keeps, or NULL. */
static const struct model_ext *next_data(struct model_cursor *c, model_drop_fn drop, void *priv)
{
	const struct model_ext *e;

	while ((e = model_cursor_peek(c)) && (e->cls != MC_DATA || (drop && drop(priv, e))))
		model_cursor_next(c);
	return e;
}

/*
 * One sweep over the AG's extents in block order: the data extents start
 * in that order and their ends wait in a heap, so what is held is the
 * extents covering one block (the sharing depth), not two edges an extent.
 */
int model_ag_shared_runs(const struct model *m, fs_agnumber_t agno, model_drop_fn drop,
			 model_run_fn cb, void *priv)
{
	struct model_cursor c;
	const struct model_ext *e;
	struct ends h = { 0 };
	uint32_t depth = 0;
	int err = 0, rerr;

	if (agno >= m->agcount)
		return 0;
	model_cursor_open(m, agno, &c);
	e = next_data(&c, drop, priv);
	while (!err) {
		uint64_t at = e ? e->agbno : UINT64_MAX, next;

		if (h.n && h.v[0] < at)
			at = h.v[0];
		if (at == UINT64_MAX)
			break;
		/* every edge at this block, then the depth until the next edge */
		while (!err && e && e->agbno == at) {
			err = ends_push(&h, e->agbno + e->len);
			depth++;
			model_cursor_next(&c);
			e = next_data(&c, drop, priv);
		}
		while (h.n && h.v[0] == at) {
			ends_pop(&h);
			depth--;
		}
		next = e ? e->agbno : UINT64_MAX;
		if (h.n && h.v[0] < next)
			next = h.v[0];
		if (!err && depth >= 2 && next != UINT64_MAX)
			err = cb(priv, (fs_agblock_t)at, (uint32_t)(next - at), depth);
	}
	free(h.v);
	rerr = model_cursor_close(&c);
	return err ? err : rerr;
}
