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
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
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
		pthread_mutex_destroy(&m->ag[a].lock);
		for (unsigned k = 0; k < MODEL_STRIPES - 1; k++) {
			free(m->ag[a].stripe[k].ext);
			pthread_mutex_destroy(&m->ag[a].stripe[k].lock);
		}
	}
	free(m->ag);
	free(m);
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
	const struct model_ext e = { .agbno = agbno, .len = len, .owner = owner,
				     .offset = offset, .cls = (uint8_t)cls, .flags = flags };
	unsigned k;
	int err;

	if (agno >= m->agcount || !len || cls >= MC_NR || agbno >= fs_ag_blocks(m->g, agno) ||
	    len > fs_ag_blocks(m->g, agno) - agbno)
		return -EINVAL;
	ag = &m->ag[agno];
	k = thread_stripe();
	if (!k) {
		pthread_mutex_lock(&ag->lock);
		err = FS_VEC_ROOM(ag->ext, ag->n, ag->cap, 256);
		if (!err) {
			ag->ext[ag->n++] = e;
			ag->sorted = false;
		}
		pthread_mutex_unlock(&ag->lock);
		return err;
	}
	st = &ag->stripe[k - 1];
	pthread_mutex_lock(&st->lock);
	err = FS_VEC_ROOM(st->ext, st->n, st->cap, 256);
	if (!err)
		st->ext[st->n++] = e;
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
					     sizeof(*ag->ext), 256);
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

int model_ag_finish(struct model *m, fs_agnumber_t agno)
{
	struct model_ag *ag;
	size_t w = 0;
	int err;

	if (agno >= m->agcount)
		return -EINVAL;
	ag = &m->ag[agno];
	pthread_mutex_lock(&ag->lock);
	err = gather_stripes(ag);
	if (!err && !ag->sorted) {
		if (ag->n && fs_sort_u32_cmp(ag->ext, ag->n, sizeof(*ag->ext),
					     offsetof(struct model_ext, agbno), cmp_ext))
			qsort(ag->ext, ag->n, sizeof(*ag->ext), cmp_ext);	/* no memory for the radix sort's copy */
		/*
		 * Merging is only safe across free-space records when they are
		 * adjacent, never overlapping; an exact duplicate is kept so the
		 * sweep sees both claims.
		 */
		for (size_t i = 0; i < ag->n; i++) {
			if (w && continues(&ag->ext[w - 1], &ag->ext[i]) && ag->ext[i].cls != MC_FREE)
				ag->ext[w - 1].len += ag->ext[i].len;
			else
				ag->ext[w++] = ag->ext[i];
		}
		ag->n = w;
		ag->sorted = true;
	}
	pthread_mutex_unlock(&ag->lock);
	return err;
}

const struct model_ext *model_ag_extents(const struct model *m, fs_agnumber_t agno, size_t *n)
{
	if (agno >= m->agcount) {
		*n = 0;
		return NULL;
	}
	*n = m->ag[agno].n;
	return m->ag[agno].ext;
}

size_t model_ag_overlaps(const struct model *m, fs_agnumber_t agno, model_overlap_fn cb,
			 void *priv)
{
	const struct model_ag *ag;
	size_t reach = SIZE_MAX, found = 0;   /* the extent reaching furthest so far */
	uint64_t reach_end = 0;

	if (agno >= m->agcount)
		return 0;
	ag = &m->ag[agno];
	for (size_t i = 0; i < ag->n; i++) {
		const struct model_ext *e = &ag->ext[i];
		uint64_t end = (uint64_t)e->agbno + e->len;

		if (reach != SIZE_MAX && e->agbno < reach_end) {
			uint64_t shared_end = end < reach_end ? end : reach_end;

			found++;
			if (cb)
				cb(priv, agno, e->agbno, (uint32_t)(shared_end - e->agbno),
				   &ag->ext[reach], e);
		}
		if (reach == SIZE_MAX || end > reach_end) {
			reach = i;
			reach_end = end;
		}
	}
	return found;
}

size_t model_ag_extents_filter(const struct model *m, fs_agnumber_t agno, uint32_t class_mask,
			       model_ext_fn cb, void *priv)
{
	size_t found = 0;

	if (agno >= m->agcount)
		return 0;
	for (size_t i = 0; i < m->ag[agno].n; i++) {
		const struct model_ext *e = &m->ag[agno].ext[i];

		if (!(class_mask & MODEL_CLASS_BIT(e->cls)))
			continue;
		found++;
		if (cb)
			cb(priv, agno, e);
	}
	return found;
}

size_t model_ag_free_gaps_drop(const struct model *m, fs_agnumber_t agno,
			       uint32_t drop_class_mask, model_drop_fn drop, model_gap_fn cb,
			       void *priv)
{
	const struct model_ag *ag;
	uint64_t next = 0, ag_end;
	size_t found = 0;

	if (agno >= m->agcount)
		return 0;
	ag = &m->ag[agno];
	ag_end = fs_ag_blocks(m->g, agno);
	/* the extents are in block order: the kept ones are too, so one pass finds the gaps */
	for (size_t i = 0; i <= ag->n; i++) {
		const struct model_ext *e = i < ag->n ? &ag->ext[i] : NULL;
		uint64_t start;

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
	uint64_t sum = 0;

	if (agno >= m->agcount)
		return 0;
	for (size_t i = 0; i < m->ag[agno].n; i++)
		if (m->ag[agno].ext[i].cls == cls)
			sum += m->ag[agno].ext[i].len;
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

struct edge {
	uint32_t at;
	int delta;
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	return a->at < b->at ? -1 : a->at > b->at;
}

int model_ag_shared_runs(const struct model *m, fs_agnumber_t agno, model_drop_fn drop,
			 model_run_fn cb, void *priv)
{
	size_t n, ne = 0;
	const struct model_ext *e = model_ag_extents(m, agno, &n);
	struct edge *ev;
	uint32_t depth = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		ne += e[i].cls == MC_DATA && !(drop && drop(priv, &e[i])) ? 2 : 0;
	if (!ne)
		return 0;
	ev = malloc(ne * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ne = 0;
	for (size_t i = 0; i < n; i++)
		if (e[i].cls == MC_DATA && !(drop && drop(priv, &e[i]))) {
			ev[ne++] = (struct edge){ e[i].agbno, 1 };
			ev[ne++] = (struct edge){ e[i].agbno + e[i].len, -1 };
		}
	if (fs_sort_u32(ev, ne, sizeof(*ev), offsetof(struct edge, at)))
		qsort(ev, ne, sizeof(*ev), cmp_edge);
	for (size_t i = 0; i < ne && !err;) {
		uint32_t at = ev[i].at;

		while (i < ne && ev[i].at == at)
			depth = (uint32_t)((int)depth + ev[i++].delta);
		if (depth >= 2 && i < ne)
			err = cb(priv, at, ev[i].at - at, depth);
	}
	free(ev);
	return err;
}
