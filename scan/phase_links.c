// SPDX-License-Identifier: GPL-2.0
/*
 * The whole-filesystem rules over the directory graph: the compact
 * per-inode link records (slot index over the model's inode chunks, filled
 * by the inode and directory phases) and the final pass that joins them
 * with the directory edges — every inode in use reachable from the root
 * (inode.unreachable), link counts equal to the references
 * (inode.nlink), one parent per directory (dir.hardlink) and ".." naming
 * it (dir.parent).  Metadata inodes and inodes with no links (on the AGI
 * unlinked lists) are left out, as xfs_repair does.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/io/workq.h"
#include "libfs/util/sort.h"
#include "libfs/util/vec.h"

uint8_t scan_mode_ftype(uint16_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return XFS_DIR3_FT_REG_FILE;
	case S_IFDIR: return XFS_DIR3_FT_DIR;
	case S_IFCHR: return XFS_DIR3_FT_CHRDEV;
	case S_IFBLK: return XFS_DIR3_FT_BLKDEV;
	case S_IFIFO: return XFS_DIR3_FT_FIFO;
	case S_IFSOCK: return XFS_DIR3_FT_SOCK;
	case S_IFLNK: return XFS_DIR3_FT_SYMLINK;
	default: return XFS_DIR3_FT_UNKNOWN;
	}
}

int scan_links_create(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct scan_links *l = calloc(1, sizeof(*l));
	uint64_t slots = 0;

	if (!l)
		return -ENOMEM;
	cx->links = l;
	pthread_mutex_init(&l->big_nlink.lock, NULL);
	pthread_mutex_init(&l->big_refs.lock, NULL);
	l->ag_base = calloc(g->agcount + 1, sizeof(*l->ag_base));
	l->nworkers = cx->workers ? cx->workers : 1;
	l->edges = calloc(l->nworkers, sizeof(*l->edges));
	if (!l->ag_base || !l->edges)
		return -ENOMEM;
	for (fs_agnumber_t agno = 0; agno < g->agcount; agno++) {
		size_t n;

		model_ag_ichunks(cx->model, agno, &n);
		l->ag_base[agno] = slots;
		slots += (uint64_t)n * XFS_INODES_PER_CHUNK;
	}
	l->ag_base[g->agcount] = slots;
	l->nslots = slots;
	/* slots are kept in 32 bits in the edges and parents */
	if (slots >= UINT32_MAX)
		return -EOVERFLOW;
	l->rec = calloc(slots ? slots : 1, sizeof(*l->rec));
	return l->rec ? 0 : -ENOMEM;
}

static void free_edges(struct scan_links *l)
{
	if (l->edges)
		for (unsigned i = 0; i < l->nworkers; i++) {
			for (size_t b = 0; b < l->edges[i].nblocks; b++)
				free(l->edges[i].blocks[b]);
			free(l->edges[i].blocks);
			free(l->edges[i].run);
			free(l->edges[i].sv);
			if (l->spill)
				for (size_t r = 0; r < l->edges[i].nsrun; r++)
					fs_spill_discard(l->spill, &l->edges[i].srun[r]);
			free(l->edges[i].srun);
			l->edges[i] = (struct link_edges){ 0 };
		}
	for (size_t i = 0; i < l->nowned; i++)
		free(l->owned[i]);
	free(l->owned);
	free(l->runs);
	l->owned = NULL;
	l->nowned = 0;
	l->runs = NULL;
	l->nruns = 0;
}

void scan_links_drop_graph(struct scan_links *l)
{
	if (l)
		free_edges(l);
}

void scan_links_destroy(struct scan_ctx *cx)
{
	struct scan_links *l = cx->links;

	if (!l)
		return;
	free_edges(l);
	fs_spill_close(l->spill);
	free(l->edges);
	free(l->rec);
	free(l->dir);
	free(l->big_nlink.v);
	free(l->big_refs.v);
	pthread_mutex_destroy(&l->big_nlink.lock);
	pthread_mutex_destroy(&l->big_refs.lock);
	free(l->ag_base);
	free(l);
	cx->links = NULL;
}

/* ---- counts of 255 and more ---- */

static int big_cmp(const void *a, const void *b)
{
	const struct link_big *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The entry of slot in t, or NULL (t locked). */
static struct link_big *big_find(struct link_bigs *t, uint64_t slot)
{
	size_t lo = 0, hi = t->sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->sorted && t->v[lo].slot == slot)
		return &t->v[lo];
	for (size_t i = t->sorted; i < t->n; i++)
		if (t->v[i].slot == slot)
			return &t->v[i];
	return NULL;
}

static uint32_t big_get(const struct link_bigs *ct, uint64_t slot)
{
	struct link_bigs *t = (struct link_bigs *)ct;
	struct link_big *b;
	uint32_t v;

	pthread_mutex_lock(&t->lock);
	/* a long unsorted tail (many inodes with huge counts): sort it once */
	if (t->n - t->sorted > 64) {
		qsort(t->v, t->n, sizeof(*t->v), big_cmp);
		t->sorted = t->n;
	}
	b = big_find(t, slot);
	v = b ? b->value : LR_BIG;
	pthread_mutex_unlock(&t->lock);
	return v;
}

/* 0 or -ENOMEM (the table is marked failed: the links phase fails the run). */
static int big_set(struct link_bigs *t, uint64_t slot, uint32_t value)
{
	struct link_big *b;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	b = big_find(t, slot);
	if (b)
		b->value = value;
	else if (!FS_VEC_ROOM(t->v, t->n, t->cap, 16))
		t->v[t->n++] = (struct link_big){ slot, value };
	else {
		t->failed = true;
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}

static void set_count(struct link_bigs *t, uint8_t *field, uint64_t slot, uint32_t value)
{
	if (value < LR_BIG)
		*field = (uint8_t)value;
	else
		*field = big_set(t, slot, value) ? LR_BIG - 1 : LR_BIG;
}

uint32_t scan_link_nlink(const struct scan_links *l, uint64_t slot)
{
	uint8_t v = l->rec[slot].nlink8;

	return v == LR_BIG ? big_get(&l->big_nlink, slot) : v;
}

void scan_link_set_nlink(struct scan_links *l, uint64_t slot, uint32_t nlink)
{
	set_count(&l->big_nlink, &l->rec[slot].nlink8, slot, nlink);
}

uint32_t scan_link_refs(const struct scan_links *l, uint64_t slot)
{
	uint8_t v = l->rec[slot].refs8;

	return v == LR_BIG ? big_get(&l->big_refs, slot) : v;
}

/* ---- directory records ---- */

int scan_links_index_dirs(struct scan_links *l)
{
	size_t n = 0;

	for (uint64_t s = 0; s < l->nslots; s++)
		n += l->rec[s].type == XFS_DIR3_FT_DIR;
	free(l->dir);
	l->dir = calloc(n ? n : 1, sizeof(*l->dir));
	if (!l->dir)
		return -ENOMEM;
	l->capdir = n ? n : 1;
	l->ndir = 0;
	for (uint64_t s = 0; s < l->nslots; s++)
		if (l->rec[s].type == XFS_DIR3_FT_DIR)
			l->dir[l->ndir++].slot = (uint32_t)s;
	return 0;
}

/* Where slot is or would go in the sorted directory records. */
static size_t dir_pos(const struct scan_links *l, uint64_t slot)
{
	size_t lo = 0, hi = l->ndir;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->dir[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct link_dir *scan_link_dir(const struct scan_links *l, uint64_t slot)
{
	size_t i = dir_pos(l, slot);

	return i < l->ndir && l->dir[i].slot == slot ? &l->dir[i] : NULL;
}

struct link_dir *scan_link_dir_add(struct scan_links *l, uint64_t slot)
{
	size_t i = dir_pos(l, slot);

	if (i < l->ndir && l->dir[i].slot == slot)
		return &l->dir[i];
	if (FS_VEC_ROOM(l->dir, l->ndir, l->capdir, 16))
		return NULL;
	memmove(&l->dir[i + 1], &l->dir[i], (l->ndir - i) * sizeof(*l->dir));
	l->ndir++;
	l->dir[i] = (struct link_dir){ .slot = (uint32_t)slot };
	return &l->dir[i];
}

/* ---- the edges ---- */

#define EDGE_BLOCK ((size_t)1 << 16)

void scan_links_run_open(struct link_edges *a, uint32_t parent)
{
	a->run_start = a->n;
	a->run_parent = parent;
}

int scan_links_run_close(struct link_edges *a)
{
	size_t n = a->n - a->run_start;

	if (!n)
		return 0;
	if (FS_VEC_ROOM(a->run, a->nrun, a->caprun, 64))
		return -ENOMEM;
	a->run[a->nrun++] = (struct link_run){ a->run_parent, (uint32_t)n, a->v + a->run_start };
	a->run_start = a->n;
	return 0;
}

/* A full block: grown in place while the open run is all it holds, else a new one. */
static int edges_grow(struct link_edges *a)
{
	size_t open = a->n - a->run_start, ncap;
	uint32_t *nv;

	if (a->v && a->run_start == 0) {
		nv = realloc(a->v, a->cap * 2 * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->blocks[a->nblocks - 1] = nv;
		a->v = nv;
		a->cap *= 2;
		return 0;
	}
	ncap = open * 2 > EDGE_BLOCK ? open * 2 : EDGE_BLOCK;
	if (FS_VEC_ROOM(a->blocks, a->nblocks, a->capblocks, 16))
		return -ENOMEM;
	nv = malloc(ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	if (open)
		memcpy(nv, a->v + a->run_start, open * sizeof(*nv));
	a->blocks[a->nblocks++] = nv;
	a->v = nv;
	a->n = open;
	a->cap = ncap;
	a->run_start = 0;
	return 0;
}

int scan_links_add_edge(struct link_edges *a, uint32_t child)
{
	if (a->n == a->cap && edges_grow(a))
		return -ENOMEM;
	a->v[a->n++] = child;
	return 0;
}

int scan_links_set_spill(struct scan_links *l, struct fs_spill *sp, size_t batch)
{
	l->spill = sp;
	l->spill_batch = batch ? batch : 1;
	for (unsigned w = 0; w < l->nworkers; w++) {
		l->edges[w].sv = malloc(l->spill_batch * sizeof(*l->edges[w].sv));
		if (!l->edges[w].sv)
			return -ENOMEM;
	}
	return 0;
}

/* A worker's buffered entries as one run (a write error is kept in the spill). */
static void spill_flush(struct scan_links *l, struct link_edges *a)
{
	struct fs_spill_run run;

	if (!a->sn)
		return;
	if (!fs_spill_write(l->spill, a->sv, a->sn, &run)) {
		if (!FS_VEC_ROOM(a->srun, a->nsrun, a->capsrun, 64)) {
			a->srun[a->nsrun++] = run;
		} else {
			fs_spill_discard(l->spill, &run);
			__atomic_store_n(&l->spill_err, -ENOMEM, __ATOMIC_RELAXED);
		}
	}
	a->sn = 0;
}

void scan_links_spill_edge(struct scan_links *l, unsigned worker, uint32_t parent,
			   uint32_t child)
{
	struct link_edges *a = &l->edges[worker];

	a->sv[a->sn++] = (struct link_edge){ parent, child };
	if (a->sn == l->spill_batch)
		spill_flush(l, a);
}

const uint32_t *scan_links_children(const struct scan_links *l, uint64_t p, size_t *n)
{
	size_t lo = 0, hi = l->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->runs[mid].parent < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < l->nruns && l->runs[lo].parent == p) {
		*n = l->runs[lo].n;
		return l->runs[lo].child;
	}
	*n = 0;
	return NULL;
}

uint64_t scan_links_slot(struct scan_ctx *cx, fs_ino_t ino)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_agnumber_t agno = fs_ino_to_agno(g, ino);
	fs_agino_t agino = fs_ino_to_agino(g, ino);
	const struct model_ichunk *base, *c;
	size_t n;

	if (!cx->links || agno >= g->agcount || fs_agino_to_ino(g, agno, agino) != ino)
		return UINT64_MAX;
	c = model_ichunk_find(cx->model, agno, agino);
	if (!c)
		return UINT64_MAX;
	base = model_ag_ichunks(cx->model, agno, &n);
	return cx->links->ag_base[agno] + (uint64_t)(c - base) * XFS_INODES_PER_CHUNK +
	       (agino - c->startino);
}

void scan_links_note_slot(struct scan_ctx *cx, uint64_t slot, const struct fs_inode *ip,
			   bool bad)
{
	struct link_rec *r;

	if (!cx->links || slot >= cx->links->nslots || ip->mode == 0)
		return;
	r = &cx->links->rec[slot];
	scan_link_set_nlink(cx->links, slot, ip->nlink);
	r->type = scan_mode_ftype(ip->mode);
	r->flags |= LR_SEEN | (bad ? LR_BAD : 0) |
		    (ip->flags2 & XFS_DIFLAG2_REFLINK ? LR_REFLINK : 0);
}

/* Slot -> inode number. */
fs_ino_t scan_slot_ino(const struct scan_ctx *cx, uint64_t s, fs_agnumber_t *agp)
{
	const struct fs_geom *g = &cx->fs->g;
	struct scan_links *l = cx->links;
	fs_agnumber_t lo = 0, hi = g->agcount;
	const struct model_ichunk *ic;
	size_t n;

	while (hi - lo > 1) {
		fs_agnumber_t mid = lo + (hi - lo) / 2;

		if (l->ag_base[mid] <= s)
			lo = mid;
		else
			hi = mid;
	}
	ic = model_ag_ichunks(cx->model, lo, &n);
	*agp = lo;
	s -= l->ag_base[lo];
	return fs_agino_to_ino(g, lo, ic[s / XFS_INODES_PER_CHUNK].startino +
				      (fs_agino_t)(s % XFS_INODES_PER_CHUNK));
}

bool scan_is_metadata_ino(const struct scan_ctx *cx, fs_ino_t ino)
{
	const struct xfs_sb *sb = &cx->fs->sb;

	/* the geometry places the realtime inodes when a secondary has them null */
	return ino == cx->fs->g.rbmino || ino == cx->fs->g.rsumino ||
	       (ino && (ino == sb->sb_uquotino || ino == sb->sb_gquotino || ino == sb->sb_pquotino));
}

/* In use, judged, not reached from the root: reported as inode.unreachable. */
static bool unreached(const struct link_rec *r)
{
	return (r->flags & (LR_SEEN | LR_BAD | LR_REACHED)) == LR_SEEN && r->nlink8;
}

/* A directory whose entries are unknown: bad, or its blocks could not be walked. */
static bool explains_children(const struct link_rec *r)
{
	return (r->flags & LR_BAD) || (r->type == XFS_DIR3_FT_DIR && !(r->flags & LR_WALKED));
}

static const struct link_dir no_dir;

static const struct link_dir *dir_of(const struct scan_links *l, uint64_t s)
{
	const struct link_dir *d = scan_link_dir(l, s);

	return d ? d : &no_dir;
}

/*
 * What an unreachable directory's unreachability follows from: up through
 * the first parent each unreachable directory was named by, to the topmost
 * one; if its ".." names a directory whose entries are unknown (bad, or
 * not walked), that directory; else the topmost unreachable directory
 * itself.  FS_NONE when that is s itself (its own finding is the cause).
 */
static int64_t dir_cause(struct scan_ctx *cx, uint64_t s)
{
	struct scan_links *l = cx->links;
	uint64_t x = s, d;
	fs_agnumber_t agno;

	/* a parent chain is a tree unless the disk says otherwise: bounded */
	for (unsigned steps = 0; steps < 4096; steps++) {
		uint32_t parent = dir_of(l, x)->parent;

		if (!parent || !unreached(&l->rec[parent - 1]) || parent - 1 == x)
			break;
		x = parent - 1;
	}
	d = scan_links_slot(cx, dir_of(l, x)->dotdot);
	if (l->rec[x].type == XFS_DIR3_FT_DIR && d != UINT64_MAX && d != x &&
	    (l->rec[d].flags & LR_SEEN) && explains_children(&l->rec[d]))
		return (int64_t)dir_of(l, x)->dotdot;
	return x == s ? FS_NONE : (int64_t)scan_slot_ino(cx, x, &agno);
}

static void report_unreachable(struct scan_ctx *cx, uint64_t s, int64_t cause)
{
	fs_agnumber_t agno;
	fs_ino_t ino = scan_slot_ino(cx, s, &agno);

	fs_report_caused(cx->fl, cause, FS_C_INODE_UNREACHABLE, agno, FS_NONE, (int64_t)ino, NULL,
			 "reachable from the root", scan_link_refs(cx->links, s) ?
			 "only from unreachable directories" : "no directory entry",
			 "inode %llu (nlink %u) is not reachable from the root directory",
			 (unsigned long long)ino, scan_link_nlink(cx->links, s));
}

static void count_ref(struct scan_links *l, uint32_t c)
{
	uint8_t v = l->rec[c].refs8;

	if (v < LR_BIG - 1)
		l->rec[c].refs8 = v + 1;
	else
		set_count(&l->big_refs, &l->rec[c].refs8, c,
			  (v == LR_BIG ? big_get(&l->big_refs, c) : v) + 1);
}

static int run_cmp(const void *a, const void *b)
{
	const struct link_run *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->child < y->child ? -1 : x->child > y->child;
}

/*
 * Every worker's runs into one array sorted by parent; a directory walked
 * twice (it cannot be, but the disk is hostile) gets its runs joined.
 * Then the references each inode has, from the edges.
 */
static int join_runs(struct scan_links *l)
{
	size_t nr = 0, o = 0;

	for (unsigned w = 0; w < l->nworkers; w++)
		nr += l->edges[w].nrun;
	l->runs = malloc((nr ? nr : 1) * sizeof(*l->runs));
	if (!l->runs)
		return -ENOMEM;
	for (unsigned w = 0; w < l->nworkers; w++) {
		if (l->edges[w].nrun)
			memcpy(l->runs + o, l->edges[w].run, l->edges[w].nrun * sizeof(*l->runs));
		o += l->edges[w].nrun;
		free(l->edges[w].run);
		l->edges[w].run = NULL;
		l->edges[w].nrun = l->edges[w].caprun = 0;
	}
	qsort(l->runs, nr, sizeof(*l->runs), run_cmp);
	o = 0;
	for (size_t i = 0; i < nr; o++) {
		size_t j = i + 1, n = l->runs[i].n;
		uint32_t *v, **ow;

		while (j < nr && l->runs[j].parent == l->runs[i].parent)
			n += l->runs[j++].n;
		l->runs[o] = l->runs[i];
		if (j > i + 1) {
			if (n >= UINT32_MAX)
				return -EOVERFLOW;
			ow = realloc(l->owned, (l->nowned + 1) * sizeof(*ow));
			if (!ow)
				return -ENOMEM;
			l->owned = ow;
			v = malloc(n * sizeof(*v));
			if (!v)
				return -ENOMEM;
			l->owned[l->nowned++] = v;
			n = 0;
			for (size_t k = i; k < j; k++) {
				memcpy(v + n, l->runs[k].child, l->runs[k].n * sizeof(*v));
				n += l->runs[k].n;
			}
			l->runs[o].child = v;
			l->runs[o].n = (uint32_t)n;
		}
		i = j;
	}
	l->nruns = o;
	for (size_t i = 0; i < l->nruns; i++)
		for (uint32_t k = 0; k < l->runs[i].n; k++)
			count_ref(l, l->runs[i].child[k]);
	return 0;
}

/*
 * Spilled entries (parent, child: children that are no directories).
 * Pass one reads every worker's runs in the order they were written:
 * references, children of reached directories reached, and (cand set)
 * the entries of directories left unreached kept as candidates for the
 * report of unreachable files, in runs each stably sorted by parent.
 * Pass two merges those by parent (ties in run order: the entries' own
 * order), as the in-memory graph's runs are ordered.
 */
struct spilled {
	struct scan_links *l;
	struct link_edge *buf;     /* a run read back */
	struct link_edge *cv;      /* candidates not yet written */
	size_t cn;
	struct fs_spill_run *crun;
	size_t ncrun, capcrun;
	bool cand;
};

static int cand_flush(struct spilled *sx)
{
	struct fs_spill_run run;
	int err;

	if (!sx->cn)
		return 0;
	err = fs_sort_u32(sx->cv, sx->cn, sizeof(*sx->cv), offsetof(struct link_edge, parent));
	if (!err)
		err = fs_spill_write(sx->l->spill, sx->cv, sx->cn, &run);
	if (!err && FS_VEC_ROOM(sx->crun, sx->ncrun, sx->capcrun, 64)) {
		fs_spill_discard(sx->l->spill, &run);
		err = -ENOMEM;
	}
	if (!err)
		sx->crun[sx->ncrun++] = run;
	sx->cn = 0;
	return err;
}

static int spilled_pass1(struct spilled *sx)
{
	struct scan_links *l = sx->l;
	int err = 0;

	for (unsigned w = 0; w < l->nworkers && !err; w++) {
		struct link_edges *a = &l->edges[w];

		for (size_t r = 0; r < a->nsrun && !err; r++) {
			err = fs_spill_read(l->spill, &a->srun[r], sx->buf);
			fs_spill_discard(l->spill, &a->srun[r]);
			for (uint64_t i = 0; i < a->srun[r].n && !err; i++) {
				const struct link_edge *e = &sx->buf[i];

				if (e->parent >= l->nslots || e->child >= l->nslots)
					continue;	/* written from the slot index: cannot be */
				count_ref(l, e->child);
				if (l->rec[e->parent].flags & LR_REACHED)
					l->rec[e->child].flags |= LR_REACHED;
				else if (sx->cand) {
					sx->cv[sx->cn++] = *e;
					if (sx->cn == l->spill_batch)
						err = cand_flush(sx);
				}
			}
		}
		a->nsrun = 0;
	}
	return err ? err : cand_flush(sx);
}

static int edge_parent_cmp(const void *a, const void *b)
{
	const struct link_edge *x = a, *y = b;

	return x->parent < y->parent ? -1 : x->parent > y->parent;
}

/*
 * Unreachable files named by unreachable directories, reported under the
 * directory's cause: directory by directory in slot order, each one's
 * entries in order (the in-memory graph's runs, or the spilled candidates
 * merged by parent).
 */
struct named {
	struct scan_ctx *cx;
	uint64_t left;             /* such files not yet reported */
	uint64_t p;                /* the directory whose entries these are */
	int64_t cause;
	bool known, any;
};

static void named_entry(struct named *nm, uint64_t c)
{
	struct scan_ctx *cx = nm->cx;
	struct scan_links *l = cx->links;
	struct link_rec *r = &l->rec[c];
	fs_agnumber_t agno;

	if (!unreached(r) || r->type == XFS_DIR3_FT_DIR || !r->refs8 ||
	    (r->flags & LR_NOTED) || scan_is_metadata_ino(cx, scan_slot_ino(cx, c, &agno)))
		return;
	if (!nm->known) {
		nm->cause = dir_cause(cx, nm->p);
		if (nm->cause == FS_NONE && unreached(&l->rec[nm->p]))
			nm->cause = (int64_t)scan_slot_ino(cx, nm->p, &agno);
		nm->known = true;
	}
	r->flags |= LR_NOTED;
	report_unreachable(cx, c, nm->cause);
	nm->left--;
}

/* fs_spill_merge's emit over the candidates: 1 stops it once all are reported. */
static int named_emit(void *priv, const void *rec)
{
	struct named *nm = priv;
	const struct link_edge *e = rec;

	if (!nm->left)
		return 1;
	if (!nm->any || e->parent != nm->p) {
		nm->p = e->parent;
		nm->known = false;
		nm->any = true;
	}
	named_entry(nm, e->child);
	return 0;
}

/* Spilling: every worker's last entries written, the buffers for reading them back. */
static int spilled_start(struct spilled *sx)
{
	struct scan_links *l = sx->l;

	for (unsigned w = 0; w < l->nworkers; w++) {
		spill_flush(l, &l->edges[w]);
		free(l->edges[w].sv);
		l->edges[w].sv = NULL;
	}
	if (__atomic_load_n(&l->spill_err, __ATOMIC_RELAXED))
		return l->spill_err;
	if (fs_spill_error(l->spill))
		return fs_spill_error(l->spill);
	sx->buf = malloc(l->spill_batch * sizeof(*sx->buf));
	sx->cv = malloc(l->spill_batch * sizeof(*sx->cv));
	return sx->buf && sx->cv ? 0 : -ENOMEM;
}

static void spilled_end(struct spilled *sx)
{
	for (size_t r = 0; r < sx->ncrun; r++)
		fs_spill_discard(sx->l->spill, &sx->crun[r]);
	free(sx->crun);
	free(sx->buf);
	free(sx->cv);
}

/*
 * The slots' rules (reachability, link counts, one parent, "..") over a
 * share of the slots: the slots are read only, the findings go to the
 * run's list (thread-safe) and are sorted at the end, so the workers take
 * shares in any order.  One slot sweep of the aged benchmark image's 1M
 * slots took 5 ms, a tenth of the phase's serial time at -t 2.
 */
struct sweep {
	struct scan_ctx *cx;
	bool root_lost;
	uint32_t parts;
	uint64_t left;             /* atomic: files named only by unreachable directories */
};

static int sweep_part(void *priv, uint32_t part, unsigned worker)
{
	struct sweep *sw = priv;
	struct scan_ctx *cx = sw->cx;
	struct scan_links *l = cx->links;
	const struct fs_geom *g = &cx->fs->g;
	uint64_t lo = l->nslots * part / sw->parts, hi = l->nslots * (part + 1) / sw->parts;
	uint64_t left = 0;

	(void)worker;
	for (uint64_t s = lo; s < hi; s++) {
		struct link_rec *r = &l->rec[s];
		fs_agnumber_t agno;
		fs_ino_t ino;
		uint64_t want;
		uint32_t nlink, refs;

		if (!(r->flags & LR_SEEN) || (r->flags & LR_BAD))
			continue;
		ino = scan_slot_ino(cx, s, &agno);
		if (scan_is_metadata_ino(cx, ino) || r->nlink8 == 0)
			continue;
		refs = scan_link_refs(l, s);
		if (!(r->flags & LR_REACHED)) {
			/*
			 * Grouped under their cause: all of them under the root
			 * when the root's entries are unknown; a directory under
			 * what its ancestry says; a file named by an unreachable
			 * directory later, from the edges; a file nobody names
			 * has no known cause.
			 */
			if (sw->root_lost)
				report_unreachable(cx, s, (int64_t)g->rootino);
			else if (r->type == XFS_DIR3_FT_DIR)
				report_unreachable(cx, s, dir_cause(cx, s));
			else if (refs)
				left++;
			else
				report_unreachable(cx, s, FS_NONE);
			continue;
		}
		nlink = scan_link_nlink(l, s);
		if (r->type == XFS_DIR3_FT_DIR) {
			bool is_root = ino == g->rootino;
			const struct link_dir *d = dir_of(l, s);

			if (refs > 1 || (is_root && refs)) {
				fs_report(cx->fl, FS_C_DIR_HARDLINK, agno, FS_NONE, (int64_t)ino, "refs",
					  is_root ? "0" : "1", FS_U(refs),
					  "directory %llu is named by %u directory entries",
					  (unsigned long long)ino, refs);
				continue;
			}
			if (r->flags & LR_WALKED) {
				fs_ino_t parent = is_root ? ino : scan_slot_ino(cx, d->parent - 1, &agno);

				agno = fs_ino_to_agno(g, ino);
				if (d->dotdot != parent) {
					fs_report(cx->fl, FS_C_DIR_PARENT, agno, FS_NONE, (int64_t)ino, "..",
						  FS_U(parent), FS_U(d->dotdot),
						  "directory %llu's \"..\" names %llu, its parent is %llu",
						  (unsigned long long)ino, (unsigned long long)d->dotdot,
						  (unsigned long long)parent);
				}
				want = 2 + (uint64_t)d->subdirs;
			} else {
				continue;	/* its entries are unknown: no count to compare */
			}
		} else {
			want = refs;
		}
		if (want != nlink)
			fs_report(cx->fl, FS_C_INODE_NLINK, fs_ino_to_agno(g, ino), FS_NONE, (int64_t)ino,
				  "nlink", FS_U(want), FS_U(nlink),
				  "inode %llu has link count %u, directories reference it %llu times",
				  (unsigned long long)ino, nlink, (unsigned long long)want);
	}
	__atomic_add_fetch(&sw->left, left, __ATOMIC_RELAXED);
	return 0;
}

int scan_phase_links(struct scan_ctx *cx)
{
	struct scan_links *l = cx->links;
	const struct fs_geom *g = &cx->fs->g;
	uint64_t root, qh = 0, qt = 0;
	struct spilled sx = { .l = l };
	struct named nm = { .cx = cx };
	bool root_lost;
	uint32_t *queue = NULL;
	int err;

	if (!l)
		return 0;
	cx->directories = l->dirs_walked;
	cx->dir_entries = l->entries;
	scan_progress_phase(cx, "links", 1);
	err = join_runs(l);
	if (!err && l->spill)
		err = spilled_start(&sx);
	if (!err && (l->big_nlink.failed || l->big_refs.failed))
		err = -ENOMEM;
	if (err)
		goto out;
	/* the queue holds directories and the root */
	queue = malloc((l->ndir + 1) * sizeof(*queue));
	err = -ENOMEM;
	if (!queue)
		goto out;

	/*
	 * With AGs past the device's end unread, any inode may be named by a
	 * directory nobody read: reachability and link counts cannot be judged
	 * (phase 1 said so once).  The references are counted all the same.
	 */
	if (cx->ags_past_end) {
		err = l->spill ? spilled_pass1(&sx) : 0;
		goto out;
	}
	/* reachability: breadth first from the root over walked directories */
	root = scan_links_slot(cx, g->rootino);
	root_lost = root == UINT64_MAX || !(l->rec[root].flags & LR_SEEN) ||
		    explains_children(&l->rec[root]);
	if (root != UINT64_MAX && (l->rec[root].flags & LR_SEEN)) {
		l->rec[root].flags |= LR_REACHED;
		queue[qt++] = (uint32_t)root;
	}
	while (qh < qt) {
		size_t n;
		const uint32_t *ch = scan_links_children(l, queue[qh++], &n);

		for (size_t i = 0; i < n; i++) {
			struct link_rec *c = &l->rec[ch[i]];

			if (c->flags & LR_REACHED)
				continue;
			c->flags |= LR_REACHED;
			if (c->type == XFS_DIR3_FT_DIR && qt < l->ndir + 1)
				queue[qt++] = ch[i];
		}
	}
	/*
	 * spilled: the entries naming non-directories (the directories
	 * reached are known now); with the root lost every unreachable
	 * inode is reported under it, the candidates are not needed
	 */
	if (l->spill) {
		sx.cand = !root_lost;
		err = spilled_pass1(&sx);
		if (!err && l->big_refs.failed)
			err = -ENOMEM;
		if (err)
			goto out;
	}

	{
		struct sweep sw = { .cx = cx, .root_lost = root_lost,
				    .parts = cx->workers > 1 ? 8 * cx->workers : 1 };
		struct fs_ag_workq_opts wo = { .threads = cx->workers, .ag_count = sw.parts };

		err = fs_ag_workq_run(&wo, sweep_part, &sw);
		if (err)
			goto out;
		nm.left = sw.left;
	}
	/* unreachable files named by unreachable directories: the cause is the directory's */
	if (l->spill) {
		err = nm.left && sx.ncrun ? fs_spill_merge(l->spill, sx.crun, sx.ncrun, edge_parent_cmp,
					       named_emit, &nm) : 0;
		if (err == 1)
			err = 0;
		if (err)
			goto out;
	}
	for (size_t ri = 0; ri < l->nruns && nm.left && !l->spill; ri++) {
		nm.p = l->runs[ri].parent;
		nm.known = false;
		for (uint32_t i = 0; i < l->runs[ri].n && nm.left; i++)
			named_entry(&nm, l->runs[ri].child[i]);
	}
	err = 0;
out:
	scan_progress_add(cx, 1);
	scan_progress_end(cx);
	if (l->spill) {
		if (err && fs_spill_error(l->spill))
			cx->spill_failed = fs_spill_dir(l->spill);
		spilled_end(&sx);
	}
	if (err || !cx->keep_graph)
		free_edges(l);
	free(queue);
	return err;
}
