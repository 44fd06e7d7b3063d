// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 5 (run.c), the namespace: directories and link counts.  Works
 * on the scan's directory graph (kept for repair: links.h scan_links_children)
 * and the verdicts of step 4 (phase_inodes.c):
 *  - a directory is rebuilt when the scan found anything wrong with it
 *    (its "dir." and "da." findings), when it names an inode that is not
 *    in use or that this repair clears, or a directory that has another
 *    parent; the rebuild keeps every entry that survives verification
 *    (named inode in use and kept, a directory only under its one parent,
 *    a name once) with the ftype of the inode it names, and ".." naming
 *    the real parent;
 *  - every inode in use that is not reachable from the root afterwards
 *    goes to /lost+found under its inode number (made when missing; an
 *    entry of that name that is not a directory moves in there too); a
 *    directory goes with its whole subtree;
 *  - link counts are set to the references counted: files the entries
 *    naming them, directories 2 + subdirectories.
 * Rebuilt directories are encoded by libfs's directory encoder
 * (libfs/build/dirbuild.c, the one mkfs -p uses) into the smallest format that
 * holds them, into blocks free before and after the repair (place.c; the
 * old ones are freed by the AG rebuild once the new ones are in place); the inode
 * gets its new fork, size and counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libfs/format/dir.h"
#include "libfs/build/bload.h"
#include "libfs/format/btree.h"
#include "libfs/build/dirbuild.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/util/vec.h"
#include "repair/buf.h"
#include "repair/phase_names.h"
#include "repair/place.h"
#include "repair/pptrs.h"
#include "repair/rules.h"
#include "scan/links.h"

/*
 * Per-slot namespace state, one byte a slot (nm->flags): what the plan
 * did (NM_*), and what the graph walks read for every entry (NS_*).
 * What only directories need is in their rows (struct nm_dslot).
 */
enum {
	NM_REBUILD = 1,            /* (directories) rebuilt */
	NM_REACHED = 2,            /* reachable from the root after the repair */
	NM_MOVED = 4,              /* attached to lost+found */
	NM_NLINK = 8,              /* its link count is rewritten */
	NM_NEW = 32,               /* an inode this repair allocates (lost+found) */
	NM_RESTORED = 128,         /* named again from its parent pointer (restore_names) */
};

struct nm_ent {
	fs_ino_t ino;
	size_t name;               /* offset in nm->names */
	uint8_t namelen, ftype;
	uint32_t seq;              /* order found, for the first of duplicate names */
};

/* One rebuilt directory: the entries it will hold. */
struct nm_dir {
	uint64_t slot;
	fs_ino_t ino;
	struct nm_ent *v;
	size_t n, cap;
	uint32_t restored;         /* entries put back from parent pointers */
};

/* An entry put back from its file's parent pointer (restore_names). */
struct nm_restored {
	fs_ino_t dir, ino;
	size_t name;               /* offset in nm->names */
	uint8_t namelen;
};

/* Per-slot facts the graph walks read for every entry, in the same byte. */
enum {
	NS_LIVE = 16,              /* in use and kept */
	NS_DIR = 64,               /* a directory */
};

/* What only directories need: one row per directory slot, sorted by slot. */
struct nm_dslot {
	uint32_t slot;
	uint32_t parent;           /* the parent kept, slot + 1; 0 none */
	uint32_t dirix;            /* (rebuilt directories) index in dirs + 1 */
	uint32_t subdirs;          /* counted after the repair */
	bool built;                /* (rebuilt directories) encoded and written */
};

struct repair_names {
	/*
	 * NM_* and NS_* per slot.  NS_*, what live() and is_dir() say, is kept
	 * beside the link records (6 bytes a slot) so that the walks over
	 * every entry touch one byte per child, not a record and a verdict
	 * (1M inodes: 1 MiB, not 7); in the flags' byte, not one of its own
	 * (bench-scale's 20M-inode image: 19 MiB less at the names step).
	 */
	uint8_t *flags;
	uint64_t root;             /* the root directory's slot */
	uint64_t changes;          /* the directories' contents changed (count again) */
	uint64_t counted;          /* changes when the counts were taken, + 1 */
	struct nm_dslot *ds;       /* the directories' rows, by slot (ds_find) */
	size_t nds, capds;
	/*
	 * The entries naming each slot after the repair are counted in the
	 * link records' refs8 (of the scan's counts only what unnamed below
	 * keeps is read later): 255 and more keep LR_BIG there and their count in
	 * big (refs_of).  No array of their own: bench-scale's 20M-inode
	 * image under -m 256 peaked at 375.9 MiB with 4 bytes a slot here.
	 */
	struct nm_big { uint32_t slot1, count; } *big;  /* open addressing; slot1 0: empty */
	size_t nbig, capbig;
	bool big_failed;           /* an entry could not be added: count() says -ENOMEM */
	/*
	 * What the scan's counts said that is read after they are
	 * overwritten: the slots on an AGI unlinked list no entry named
	 * (repair_unlinked_frees), sorted; kept until the plan is freed.
	 */
	uint32_t *unnamed;
	size_t nunnamed;
	struct nm_dir *dirs;
	size_t ndirs, capdirs;
	unsigned char *names;
	size_t nnames, capnames;
	uint64_t lf_slot;          /* lost+found's slot, UINT64_MAX none */
	uint64_t rebuilt, moved, nlinks;
	fs_ino_t *moves;           /* what went to lost+found, in order */
	size_t nmoves, capmoves;
	/* per move: its old path and old directory where known (malloc'd), else NULL */
	char **from, **from_dir;
	/*
	 * Entries of the directories the scan did not walk (a core that
	 * failed a check phase 3 mended: a flag, the magic): parent -> child
	 * slot, walked here before the parents are chosen, so a directory
	 * they name keeps one parent.
	 */
	struct link_edge *xedge;
	size_t nxedge, capxedge;
	/* entries put back from parent pointers, in order */
	struct nm_restored *restored;
	size_t nrestored, caprestored;
	/* the old paths of the inodes findings name: pino sorted, paths[i] or NULL */
	fs_ino_t *pino;
	char **paths;
	size_t npaths;
};

/* refs8's mark of a count in the side table (the link records' own) */
#ifndef REFS_BIG
#define REFS_BIG LR_BIG
#endif

/* Where slot s's count is in the side table, or the empty place it would take. */
static struct nm_big *big_at(const struct repair_names *nm, uint64_t s)
{
	size_t mask = nm->capbig - 1, i = (size_t)((s * 0x9e3779b97f4a7c15ull) >> 32) & mask;

	while (nm->big[i].slot1 && nm->big[i].slot1 != s + 1)
		i = (i + 1) & mask;
	return &nm->big[i];
}

/* The entries naming slot s after the repair (count()). */
static uint32_t refs_of(const struct repair_ctx *rx, uint64_t s)
{
	uint8_t v = rx->sx->links->rec[s].refs8;

	return v == REFS_BIG ? big_at(rx->nm, s)->count : v;
}

/* One more entry names slot s; false: the side table could not grow. */
static bool refs_add(struct repair_ctx *rx, uint64_t s)
{
	struct repair_names *nm = rx->nm;
	uint8_t *v = &rx->sx->links->rec[s].refs8;
	struct nm_big *b;

	if (*v < REFS_BIG - 1) {
		(*v)++;
		return true;
	}
	if (*v == REFS_BIG) {
		big_at(nm, s)->count++;
		return true;
	}
	if ((nm->nbig + 1) * 2 > nm->capbig) {
		/* half full at most: the table doubles, its entries placed again */
		struct nm_big *old = nm->big;
		size_t oldcap = nm->capbig, cap = oldcap ? oldcap * 2 : 64;

		nm->big = calloc(cap, sizeof(*nm->big));
		if (!nm->big) {
			nm->big = old;
			return false;
		}
		nm->capbig = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].slot1)
				*big_at(nm, old[i].slot1 - 1) = old[i];
		free(old);
	}
	b = big_at(nm, s);
	b->slot1 = (uint32_t)(s + 1);
	b->count = REFS_BIG;
	nm->nbig++;
	*v = REFS_BIG;
	return true;
}

static bool live(const struct repair_ctx *rx, uint64_t s)
{
	return rx->nm->flags[s] & NS_LIVE;
}

static bool is_dir(const struct repair_ctx *rx, uint64_t s)
{
	return rx->nm->flags[s] & NS_DIR;
}

/* Slot s's NS_* from its link record and verdict (again whenever either changes). */
static void set_st(struct repair_ctx *rx, uint64_t s)
{
	const struct link_rec *r = &rx->sx->links->rec[s];

	rx->nm->flags[s] = (uint8_t)((rx->nm->flags[s] & ~(NS_LIVE | NS_DIR)) |
				     (((r->flags & LR_SEEN) && !(rx->verdict[s] & RV_CLEAR)) ?
				      NS_LIVE : 0) | (r->type == XFS_DIR3_FT_DIR ? NS_DIR : 0));
}

static fs_ino_t ino_of(const struct repair_ctx *rx, uint64_t s)
{
	fs_agnumber_t agno;

	return scan_slot_ino(rx->sx, s, &agno);
}

/* Where directory slot s's row is, or would go. */
static size_t ds_pos(const struct repair_names *nm, uint64_t s)
{
	size_t lo = 0, hi = nm->nds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nm->ds[mid].slot < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Directory slot s's row, NULL when s was never a directory. */
static struct nm_dslot *ds_find(const struct repair_names *nm, uint64_t s)
{
	size_t i = ds_pos(nm, s);

	return i < nm->nds && nm->ds[i].slot == s ? &nm->ds[i] : NULL;
}

/* Whether slot s is a directory the plan encoded and wrote. */
static bool built(const struct repair_names *nm, uint64_t s)
{
	const struct nm_dslot *d = ds_find(nm, s);

	return d && d->built;
}

/* The same, added when missing (a new directory); NULL: no memory. */
static struct nm_dslot *ds_get(struct repair_names *nm, uint64_t s)
{
	size_t i = ds_pos(nm, s);

	if (i < nm->nds && nm->ds[i].slot == s)
		return &nm->ds[i];
	if (FS_VEC_ROOM(nm->ds, nm->nds, nm->capds, 64))
		return NULL;
	memmove(&nm->ds[i + 1], &nm->ds[i], (nm->nds - i) * sizeof(*nm->ds));
	nm->nds++;
	nm->ds[i] = (struct nm_dslot){ .slot = (uint32_t)s };
	return &nm->ds[i];
}

/* The parent directory slot s keeps, slot + 1; 0 none. */
static uint32_t parent_of_dir(const struct repair_names *nm, uint64_t s)
{
	const struct nm_dslot *d = ds_find(nm, s);

	return d ? d->parent : 0;
}

static struct nm_dir *dir_of(const struct repair_names *nm, uint64_t s)
{
	const struct nm_dslot *d = ds_find(nm, s);

	return d && d->dirix ? &nm->dirs[d->dirix - 1] : NULL;
}

/* ---- which parent a directory keeps ---- */

/* (a directory the scan did not walk) its entries naming inodes in use, as edges */
struct xwalk {
	struct repair_ctx *rx;
	uint64_t p;
};

static int on_xentry(void *priv, const struct fs_dirent *e)
{
	struct xwalk *w = priv;
	struct repair_names *nm = w->rx->nm;
	uint64_t cs = scan_links_slot(w->rx->sx, e->ino);

	if (cs == UINT64_MAX || cs == w->p || !live(w->rx, cs) ||
	    !fs_dir_name_ok(e->name, e->namelen) ||
	    (e->name[0] == '.' && (e->namelen == 1 || (e->namelen == 2 && e->name[1] == '.'))))
		return 0;
	if (FS_VEC_ROOM(nm->xedge, nm->nxedge, nm->capxedge, 64))
		return -ENOMEM;
	nm->xedge[nm->nxedge++] = (struct link_edge){ (uint32_t)w->p, (uint32_t)cs };
	return 0;
}

static int read_inode(struct repair_ctx *rx, fs_ino_t ino, struct fs_buf **b);

/*
 * Directories kept that the scan never walked (their core failed a check:
 * a bad flag, a bad magic, that phase 3 mended) are walked now through
 * the mended core: their entries become edges for choosing parents, and
 * each is rebuilt from what survives, so nothing they name is left
 * named twice or moved to lost+found while they still name it.
 */
static int walk_unwalked(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	int err = 0;

	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		struct xwalk w = { .rx = rx, .p = s };
		struct fs_findings scratch;
		struct fs_buf *b;
		fs_ino_t dotdot;

		if (!live(rx, s) || !is_dir(rx, s) || !(lk->rec[s].flags & LR_BAD) ||
		    (rx->nm->flags[s] & NM_NEW) || scan_is_metadata_ino(rx->sx, ino_of(rx, s)))
			continue;
		rx->nm->flags[s] |= NM_REBUILD;
		err = read_inode(rx, ino_of(rx, s), &b);
		if (err)
			return err;
		fs_findings_init(&scratch);
		err = scan_dir_entries(rx->sx, ino_of(rx, s), b->data, &scratch, on_xentry, &w,
				       &dotdot);
		fs_findings_free(&scratch);
		fs_buf_put(rx->sx->cache, b);
		if (!scan_link_dotdot(lk, s)) {
			struct link_dir *d = scan_link_dir_add(lk, s);

			if (!d)
				return -ENOMEM;
			d->dotdot = dotdot;
		}
		err = err == -ENOMEM ? err : 0;
	}
	return err;
}

/* p -> c as a parent candidate: the one ".." names (pass 0), else the first (pass 1) */
static void parent_edge(struct repair_ctx *rx, int pass, uint64_t p, uint64_t c, fs_ino_t *pino)
{
	struct repair_names *nm = rx->nm;

	struct nm_dslot *d;

	if ((nm->flags[c] & (NS_LIVE | NS_DIR)) != (NS_LIVE | NS_DIR) || c == p || c == nm->root)
		return;
	d = ds_find(nm, c);
	if (!d || d->parent)
		return;
	if (pass == 0 && !*pino)
		*pino = ino_of(rx, p);
	if (pass == 1 || scan_link_dotdot(rx->sx->links, c) == *pino)
		d->parent = (uint32_t)p + 1;
}

/*
 * A directory named by several directories keeps one parent: the one its
 * ".." names when that one names it, else the first in slot order.
 */
static void choose_parents(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;

	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t p = 0; p < lk->nslots; p++) {
			fs_ino_t pino = 0;

			if (!live(rx, p) || !is_dir(rx, p))
				continue;
			size_t nc;
			const uint32_t *ch = scan_links_children(lk, p, &nc);

			for (size_t i = 0; i < nc; i++)
				parent_edge(rx, pass, p, ch[i], &pino);
		}
		for (size_t i = 0; i < nm->nxedge; i++) {
			fs_ino_t pino = 0;

			if (live(rx, nm->xedge[i].parent))
				parent_edge(rx, pass, nm->xedge[i].parent, nm->xedge[i].child,
					    &pino);
		}
	}
}

/* ---- which directories are rebuilt ---- */

static void mark(struct repair_ctx *rx, uint64_t s)
{
	/* (a metadata inode whose mode says directory is not one: phase_rt.c, quota) */
	if (s != UINT64_MAX && live(rx, s) && is_dir(rx, s) &&
	    !scan_is_metadata_ino(rx->sx, ino_of(rx, s)))
		rx->nm->flags[s] |= NM_REBUILD;
}

int repair_names_plan_dir(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	(void)arg;
	if (f->ino >= 0)
		mark(rx, scan_links_slot(rx->sx, (fs_ino_t)f->ino));
	return 0;
}

static void choose_rebuilds(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;

	/* every directory with findings of its own */
	repair_plan_findings(rx, REPAIR_PLAN_NAMES, NULL);
	for (uint64_t p = 0; p < lk->nslots; p++) {
		size_t nc;
		const uint32_t *ch;

		if (!live(rx, p) || !is_dir(rx, p))
			continue;
		ch = scan_links_children(lk, p, &nc);
		for (size_t i = 0; i < nc; i++) {
			uint64_t c = ch[i];

			if (!live(rx, c) || (is_dir(rx, c) && parent_of_dir(nm, c) != p + 1))
				mark(rx, p);
		}
	}
}

/* ---- a rebuilt directory's entries ---- */

static int add_ent(struct repair_names *nm, struct nm_dir *d, fs_ino_t ino,
		   const unsigned char *name, uint8_t namelen, uint8_t ftype)
{
	if (FS_VEC_ROOM(d->v, d->n, d->cap, 16) ||
	    fs_vec_reserve(&nm->names, &nm->capnames, nm->nnames + namelen, 1, 4096))
		return -ENOMEM;
	memcpy(nm->names + nm->nnames, name, namelen);
	d->v[d->n] = (struct nm_ent){ .ino = ino, .name = nm->nnames, .namelen = namelen,
				      .ftype = ftype, .seq = (uint32_t)d->n };
	d->n++;
	nm->nnames += namelen;
	nm->changes++;
	return 0;
}

struct collect {
	struct repair_ctx *rx;
	struct nm_dir *d;
};

static int on_entry(void *priv, const struct fs_dirent *e)
{
	struct collect *c = priv;
	struct repair_ctx *rx = c->rx;
	uint64_t cs = scan_links_slot(rx->sx, e->ino);

	if (cs == UINT64_MAX || !live(rx, cs) || !fs_dir_name_ok(e->name, e->namelen) ||
	    (e->name[0] == '.' && (e->namelen == 1 || (e->namelen == 2 && e->name[1] == '.'))) ||
	    (is_dir(rx, cs) && parent_of_dir(rx->nm, cs) != c->d->slot + 1))
		return 0;
	/* the root's lost+found must be a directory: another kind loses that name */
	if (c->d->ino == rx->fs->g.rootino && e->namelen == 10 &&
	    !memcmp(e->name, "lost+found", 10) && !is_dir(rx, cs))
		return 0;
	return add_ent(rx->nm, c->d, e->ino, e->name, e->namelen, rx->sx->links->rec[cs].type);
}

static const unsigned char *ent_name(const struct repair_names *nm, const struct nm_ent *e)
{
	return nm->names + e->name;
}

static int cmp_name(const void *pa, const void *pb, void *priv)
{
	const struct repair_names *nm = priv;
	const struct nm_ent *a = pa, *b = pb;
	int d = a->namelen - b->namelen;

	if (!d)
		d = memcmp(ent_name(nm, a), ent_name(nm, b), a->namelen);
	return d ? d : (a->seq > b->seq) - (a->seq < b->seq);
}

/* Drop the second and later entries of a name (the first found is kept). */
static void dedupe(struct repair_names *nm, struct nm_dir *d)
{
	size_t w = 0;

	if (!d->n)
		return;
	qsort_r(d->v, d->n, sizeof(*d->v), cmp_name, nm);
	for (size_t i = 0; i < d->n; i++) {
		if (w && d->v[w - 1].namelen == d->v[i].namelen &&
		    !memcmp(ent_name(nm, &d->v[w - 1]), ent_name(nm, &d->v[i]), d->v[i].namelen))
			continue;
		d->v[w++] = d->v[i];
	}
	d->n = w;
}

static int read_inode(struct repair_ctx *rx, fs_ino_t ino, struct fs_buf **b)
{
	return repair_get_buf(rx, fs_ino_to_daddr(&rx->fs->g, ino), rx->fs->g.inodesize,
			      false, b);
}

/* The surviving entries of directory slot s (once): its row in nm->dirs. */
static int collect(struct repair_ctx *rx, uint64_t s, struct nm_dir **out)
{
	struct repair_names *nm = rx->nm;
	struct collect c = { .rx = rx };
	fs_ino_t dotdot;
	struct fs_findings scratch;
	struct fs_buf *b;
	struct nm_dslot *ds = ds_get(nm, s);
	int err;

	if (!ds)
		return -ENOMEM;
	if (ds->dirix) {
		*out = dir_of(nm, s);
		return 0;
	}
	if (FS_VEC_ROOM(nm->dirs, nm->ndirs, nm->capdirs, 64))
		return -ENOMEM;
	c.d = &nm->dirs[nm->ndirs];
	*c.d = (struct nm_dir){ .slot = s, .ino = ino_of(rx, s) };
	ds->dirix = (uint32_t)++nm->ndirs;
	nm->flags[s] |= NM_REBUILD;
	nm->changes++;
	*out = c.d;
	if (nm->flags[s] & NM_NEW)
		return 0;
	err = read_inode(rx, c.d->ino, &b);
	if (err)
		return err;
	fs_findings_init(&scratch);
	err = scan_dir_entries(rx->sx, c.d->ino, b->data, &scratch, on_entry, &c, &dotdot);
	fs_findings_free(&scratch);
	fs_buf_put(rx->sx->cache, b);
	if (err == -ENOMEM)
		return err;
	dedupe(nm, c.d);
	return 0;
}

/* ---- reachability and lost+found ---- */

/* The children of directory p as they will be: fn(rx, child slot) for each. */
static void for_children(struct repair_ctx *rx, uint64_t p,
			 void (*fn)(struct repair_ctx *rx, uint64_t c, void *priv), void *priv)
{
	struct repair_names *nm = rx->nm;
	struct scan_links *lk = rx->sx->links;
	const struct nm_dir *d = dir_of(nm, p);
	const uint32_t *ch;
	size_t nc;

	if (d) {
		for (size_t i = 0; i < d->n; i++) {
			uint64_t c = scan_links_slot(rx->sx, d->v[i].ino);

			if (c != UINT64_MAX)
				fn(rx, c, priv);
		}
		return;
	}
	ch = scan_links_children(lk, p, &nc);
	for (size_t i = 0; i < nc; i++)
		fn(rx, ch[i], priv);
}

/* The queue holds the directories reached (a file has nothing to walk) and the start. */
struct bfs {
	uint32_t *queue;
	uint64_t qt;
};

static void reach_child(struct repair_ctx *rx, uint64_t c, void *priv)
{
	struct bfs *q = priv;

	if (!(rx->nm->flags[c] & NM_REACHED) && live(rx, c)) {
		rx->nm->flags[c] |= NM_REACHED;
		if (is_dir(rx, c))
			q->queue[q->qt++] = (uint32_t)c;
	}
}

/* Marks everything reachable from slot start. */
static void reach_from(struct repair_ctx *rx, uint64_t start, uint32_t *queue)
{
	struct bfs q = { .queue = queue };
	uint64_t qh = 0;

	if (rx->nm->flags[start] & NM_REACHED)
		return;
	rx->nm->flags[start] |= NM_REACHED;
	queue[q.qt++] = (uint32_t)start;
	while (qh < q.qt) {
		uint64_t p = queue[qh++];

		if (is_dir(rx, p))
			for_children(rx, p, reach_child, &q);
	}
}

/*
 * An inode in use that a directory must name: not a metadata inode, and
 * with links, or with none but on no unlinked list either (an orphan the
 * kernel would never free: it goes to lost+found, as xfs_repair does).
 */
static bool needs_name(const struct repair_ctx *rx, uint64_t s)
{
	const struct link_rec *r = &rx->sx->links->rec[s];

	return live(rx, s) && (r->nlink8 || (rx->empty_unlinked && !(r->flags & LR_ON_UNLINKED))) &&
	       !scan_is_metadata_ino(rx->sx, ino_of(rx, s));
}

/* Whether some finding names inode ino (fino: the findings' inodes, sorted). */
static bool named_by_finding(const fs_ino_t *fino, size_t n, fs_ino_t ino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (fino[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && fino[lo] == ino;
}

static int cmp_ino(const void *pa, const void *pb);

/* Inode ino reads as a free inode that verifies (magic, CRC, its number, mode 0). */
static bool reads_free(struct repair_ctx *rx, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .ino = ino,
			      .daddr = fs_ino_to_daddr(g, ino),
			      .have_log_head = rx->fs->have_log_head,
			      .head_lsn = rx->fs->log_head_lsn };
	struct fs_findings scratch;
	struct fs_buf *b;
	bool ok;

	if (read_inode(rx, ino, &b))
		return false;
	fs_findings_init(&scratch);
	vc.fl = &scratch;
	ok = fs_verify(FS_MT_INODE, &vc, b->data, g->inodesize) == 0 && !scratch.dropped &&
	     get_be16(&((const struct xfs_dinode *)b->data)->di_mode) == 0;
	fs_findings_free(&scratch);
	fs_buf_put(rx->sx->cache, b);
	return ok;
}

/*
 * A free inode slot to make lost+found in, free by every source: the
 * chunk is the inode btree's (or one the scan found and proved), the
 * inode btree and the free inode btree (where they list it) say free,
 * the inode read free by its own word, no finding names it and no
 * verdict touches it, and it reads again now as a free inode that
 * verifies.  The first such one, in AG order.
 */
static uint64_t free_slot(struct repair_ctx *rx, fs_agino_t *agino, fs_agnumber_t *agno)
{
	struct scan_links *lk = rx->sx->links;
	const struct fs_geom *g = &rx->fs->g;
	fs_ino_t *fino = malloc((rx->fl->n ? rx->fl->n : 1) * sizeof(*fino));
	uint64_t found = UINT64_MAX;
	size_t nf = 0;

	if (!fino)
		return UINT64_MAX;
	for (size_t i = 0; i < rx->fl->n; i++)
		if (rx->fl->v[i].ino >= 0)
			fino[nf++] = (fs_ino_t)rx->fl->v[i].ino;
	qsort(fino, nf, sizeof(*fino), cmp_ino);
	for (fs_agnumber_t a = 0; a < g->agcount && found == UINT64_MAX; a++) {
		size_t nic;
		const struct model_ichunk *ic = model_ag_ichunks(rx->sx->model, a, &nic);

		if (scan_ag_unread(rx->sx, a))
			continue;
		for (size_t k = 0; k < nic && found == UINT64_MAX; k++) {
			const struct model_ichunk *c = &ic[k];

			if (!(c->where & (MODEL_IC_INOBT | MODEL_IC_FOUND)))
				continue;
			for (unsigned i = 0; i < XFS_INODES_PER_CHUNK; i++) {
				uint64_t s = lk->ag_base[a] + k * XFS_INODES_PER_CHUNK + i, bit = 1ull << i;
				fs_ino_t ino = fs_agino_to_ino(g, a, c->startino + i);

				if (s >= lk->ag_base[a + 1] || !(c->seen_mask & bit) ||
				    !(c->seen_free & bit) || (lk->rec[s].flags & LR_SEEN) ||
				    rx->verdict[s] ||
				    (c->holemask >> (i / XFS_INODES_PER_HOLEMASK_BIT) & 1) ||
				    ((c->where & MODEL_IC_INOBT) && !(c->ir_free & bit)) ||
				    ((c->where & MODEL_IC_FINOBT) && !(c->fino_free & bit)) ||
				    named_by_finding(fino, nf, ino) || !reads_free(rx, ino))
					continue;
				*agno = a;
				*agino = c->startino + i;
				found = s;
				break;
			}
		}
	}
	free(fino);
	return found;
}

/* A new directory inode in slot s: in use from now on, for the link records and inobt. */
static int take_slot(struct repair_ctx *rx, uint64_t s, fs_agnumber_t agno, fs_agino_t agino)
{
	struct link_rec *r = &rx->sx->links->rec[s];
	struct model_ichunk *ic = model_ichunk_find(rx->sx->model, agno, agino);

	if (!ds_get(rx->nm, s))
		return -ENOMEM;
	r->flags |= LR_SEEN;
	r->type = XFS_DIR3_FT_DIR;
	scan_link_set_nlink(rx->sx->links, s, 0);
	if (ic)
		ic->seen_free &= ~(1ull << (agino - ic->startino));
	rx->verdict[s] |= RV_NEW;
	set_st(rx, s);
	rx->nm->flags[s] |= NM_NEW | NM_REACHED;
	rx->nm->changes++;
	return 0;
}

/*
 * The root inode is gone (cleared, or not a directory): a new, empty root
 * directory in its place, as xfs_repair makes one; its old forks' blocks
 * are freed, and everything it named is an orphan for lost+found.
 */
static int new_root(struct repair_ctx *rx, uint64_t root)
{
	const struct fs_geom *g = &rx->fs->g;

	rx->verdict[root] = (uint8_t)((rx->verdict[root] & ~RV_CLEAR) | RV_DIR_NEW | RV_ATTR_RESET);
	rx->drops = true;
	return take_slot(rx, root, fs_ino_to_agno(g, g->rootino), fs_ino_to_agino(g, g->rootino));
}

/*
 * /lost+found: the root's entry of that name when it is a directory, else
 * a new directory in the first free inode (an entry of that name that is
 * not a directory lost the name when the root was collected: that file is
 * an orphan now and moves into the new one).
 */
static int lost_found(struct repair_ctx *rx, uint64_t root)
{
	struct repair_names *nm = rx->nm;
	struct nm_dir *rd, *lf;
	uint64_t s;
	fs_agnumber_t agno;
	fs_agino_t agino;
	int err;

	if (nm->lf_slot != UINT64_MAX)
		return 0;
	err = collect(rx, root, &rd);
	if (err)
		return err;
	/* (collect keeps that name only when it names a directory) */
	for (size_t i = 0; i < rd->n; i++) {
		const struct nm_ent *e = &rd->v[i];

		if (e->namelen == 10 && !memcmp(ent_name(nm, e), "lost+found", 10)) {
			nm->lf_slot = scan_links_slot(rx->sx, e->ino);
			return collect(rx, nm->lf_slot, &lf);
		}
	}
	s = free_slot(rx, &agino, &agno);
	if (s == UINT64_MAX)
		return -ENOSPC;
	err = take_slot(rx, s, agno, agino);
	if (err)
		return err;
	ds_find(nm, s)->parent = (uint32_t)root + 1;
	nm->lf_slot = s;
	err = collect(rx, s, &lf);
	rd = dir_of(nm, root);	/* collect may have moved the rows */
	if (!err)
		err = add_ent(nm, rd, ino_of(rx, s), (const unsigned char *)"lost+found", 10,
			      XFS_DIR3_FT_DIR);
	return err;
}

/* Orphan s (a file, or the top of a subtree) into lost+found, named by its number. */
static int adopt(struct repair_ctx *rx, uint64_t s, uint32_t *queue)
{
	struct repair_names *nm = rx->nm;
	struct nm_dir *lf, *d;
	char name[24];
	int len, err;

	nm->changes++;
	err = collect(rx, nm->lf_slot, &lf);
	if (err)
		return err;
	len = snprintf(name, sizeof(name), "%llu", (unsigned long long)ino_of(rx, s));
	err = add_ent(nm, lf, ino_of(rx, s), (const unsigned char *)name, (uint8_t)len,
		      rx->sx->links->rec[s].type);
	if (err)
		return err;
	nm->flags[s] |= NM_MOVED;
	nm->moved++;
	err = FS_VEC_ROOM(nm->moves, nm->nmoves, nm->capmoves, 64);
	if (err)
		return err;
	nm->moves[nm->nmoves++] = ino_of(rx, s);
	if (is_dir(rx, s)) {
		struct nm_dslot *ds = ds_get(nm, s);
		uint32_t old;

		if (!ds)
			return -ENOMEM;
		old = ds->parent;
		/* its ".." names lost+found now */
		ds->parent = (uint32_t)nm->lf_slot + 1;
		err = collect(rx, s, &d);
		if (err)
			return err;
		/* a parent it had (a loop of directories nobody reached) names it no more */
		if (old && old != (uint32_t)nm->lf_slot + 1) {
			struct nm_dir *pd = dir_of(nm, old - 1);

			if (!pd)
				err = collect(rx, old - 1, &pd);	/* leaves it out */
			else
				for (size_t i = 0; i < pd->n;)
					if (pd->v[i].ino == ino_of(rx, s))
						memmove(&pd->v[i], &pd->v[i + 1],
							(--pd->n - i) * sizeof(pd->v[0]));
					else
						i++;
			if (err)
				return err;
		}
	}
	reach_from(rx, s, queue);
	return 0;
}

/* ---- counts ---- */

static void count_child(struct repair_ctx *rx, uint64_t c, void *priv)
{
	struct nm_dslot *pd = priv;

	if (!live(rx, c))
		return;
	if (!refs_add(rx, c))
		rx->nm->big_failed = true;
	if (is_dir(rx, c) && pd)
		pd->subdirs++;
}

/*
 * References and subdirectories as the directories will hold them; not
 * again while no directory's contents changed (nm->changes).
 */
static int count(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;

	if (nm->counted == nm->changes + 1)
		return 0;	/* nothing changed since */
	nm->counted = nm->changes + 1;
	nm->big_failed = false;
	for (uint64_t s = 0; s < lk->nslots; s++)
		lk->rec[s].refs8 = 0;
	if (nm->big)
		memset(nm->big, 0, nm->capbig * sizeof(*nm->big));
	nm->nbig = 0;
	for (size_t i = 0; i < nm->nds; i++)
		nm->ds[i].subdirs = 0;
	for (uint64_t p = 0; p < lk->nslots; p++)
		if (live(rx, p) && is_dir(rx, p))
			for_children(rx, p, count_child, ds_find(nm, p));
	if (nm->big_failed) {
		nm->counted = 0;	/* not a count to keep */
		return -ENOMEM;
	}
	return 0;
}

/*
 * Everything in use that the root does not reach goes to lost+found: first
 * the tops (directories with no parent kept, files no kept directory
 * names), then, sweep after sweep, what only a loop of directories held.
 */
static int connect(struct repair_ctx *rx, uint64_t root)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;
	/* every directory row, lost+found's, and the start: each at most once a walk */
	uint32_t *queue = malloc((nm->nds + 2) * sizeof(*queue));
	bool orphans = false;
	int err = 0;

	if (!queue)
		return -ENOMEM;
	err = count(rx);
	if (err)
		goto out;
	reach_from(rx, root, queue);
	for (uint64_t s = 0; s < lk->nslots && !orphans; s++)
		orphans = !(nm->flags[s] & NM_REACHED) && needs_name(rx, s);
	if (orphans) {
		err = lost_found(rx, root);
		if (err)
			goto out;
		/* lost+found may have taken a name from the root: judge again */
		for (uint64_t s = 0; s < lk->nslots; s++)
			nm->flags[s] &= (uint8_t)~NM_REACHED;
		reach_from(rx, root, queue);
	}
	for (int pass = 0, adopted = 1; (pass == 0 || adopted) && !err; pass++) {
		adopted = 0;
		for (uint64_t s = 0; s < lk->nslots && !err; s++) {
			if ((nm->flags[s] & NM_REACHED) || !needs_name(rx, s))
				continue;
			if (pass == 0 && (is_dir(rx, s) ? parent_of_dir(nm, s) != 0 : refs_of(rx, s) != 0))
				continue;	/* comes with the directory that names it */
			err = adopt(rx, s, queue);
			adopted++;
		}
	}
out:
	free(queue);
	return err;
}

/* ---- where moved inodes were ---- */

/*
 * The report names a moved inode's old place where the damaged namespace
 * still tells it: the directory that named it (a directory's first parent,
 * or its ".."; for a file, any directory entry naming it), and its name
 * there when that directory's entries can still be read.  Paths are found
 * upwards through each directory's first parent as the scan saw them,
 * reading names from the directories on disk, before anything is written.
 */
#define OLD_PATH_MAX 4096
#define OLD_DEPTH_MAX 512

struct name_find {
	fs_ino_t want;
	char name[MAXNAMELEN + 1];
	bool found;
};

static int on_name(void *priv, const struct fs_dirent *e)
{
	struct name_find *nf = priv;

	if (nf->found || e->ino != nf->want || !fs_dir_name_ok(e->name, e->namelen) ||
	    (e->name[0] == '.' && (e->namelen == 1 || (e->namelen == 2 && e->name[1] == '.'))))
		return 0;
	memcpy(nf->name, e->name, e->namelen);
	nf->name[e->namelen] = '\0';
	nf->found = true;
	return 0;
}

/* The name directory slot p gave inode ino on disk; false when unreadable or absent. */
static bool old_name_in(struct repair_ctx *rx, uint64_t p, fs_ino_t ino, char *name)
{
	struct name_find nf = { .want = ino };
	struct fs_findings scratch;
	struct fs_buf *b;
	fs_ino_t dotdot;

	if (!(rx->sx->links->rec[p].flags & LR_SEEN) || (rx->verdict[p] & RV_CLEAR) ||
	    (rx->nm->flags[p] & NM_NEW) || !is_dir(rx, p) || read_inode(rx, ino_of(rx, p), &b))
		return false;
	fs_findings_init(&scratch);
	scan_dir_entries(rx->sx, ino_of(rx, p), b->data, &scratch, on_name, &nf, &dotdot);
	fs_findings_free(&scratch);
	fs_buf_put(rx->sx->cache, b);
	if (nf.found)
		memcpy(name, nf.name, strlen(nf.name) + 1);
	return nf.found;
}

/* Directory slot s's old parent slot, or UINT64_MAX. */
static uint64_t old_parent(const struct repair_ctx *rx, uint64_t s)
{
	const struct link_dir *d = scan_link_dir(rx->sx->links, s);
	uint64_t p;

	if (d && d->parent)
		return d->parent - 1;
	p = d && d->dotdot ? scan_links_slot(rx->sx, (fs_ino_t)d->dotdot) : UINT64_MAX;
	return p != s ? p : UINT64_MAX;
}

/* Directory slot p's old path ("/" for the root), malloc'd; NULL when unknown. */
static char *old_dir_path(struct repair_ctx *rx, uint64_t p)
{
	char *buf = malloc(OLD_PATH_MAX), name[MAXNAMELEN + 1];
	size_t at = OLD_PATH_MAX - 1;
	uint64_t cur = p;

	if (!buf)
		return NULL;
	buf[at] = '\0';
	for (int depth = 0; ino_of(rx, cur) != rx->fs->g.rootino; depth++) {
		uint64_t up = old_parent(rx, cur);
		size_t len;

		if (depth >= OLD_DEPTH_MAX || up == UINT64_MAX ||
		    !old_name_in(rx, up, ino_of(rx, cur), name))
			goto unknown;
		len = strlen(name);
		if (len + 1 > at)
			goto unknown;
		at -= len;
		memcpy(buf + at, name, len);
		buf[--at] = '/';
		cur = up;
	}
	if (at == OLD_PATH_MAX - 1)
		buf[--at] = '/';
	memmove(buf, buf + at, OLD_PATH_MAX - at);
	return buf;
unknown:
	free(buf);
	return NULL;
}

/* An inode being placed: its index, slot or old directory, and inode number. */
struct mv {
	uint64_t key;
	fs_ino_t ino;
	size_t i;
};

static int cmp_mv(const void *pa, const void *pb)
{
	const struct mv *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->ino > b->ino) - (a->ino < b->ino);
}

/* Names one directory gives a group of inodes (sorted by inode). */
struct group_names {
	char **from;
	const struct mv *v;
	size_t n;
	const char *dir;
};

static int on_group_name(void *priv, const struct fs_dirent *e)
{
	struct group_names *g = priv;
	size_t lo = 0, hi = g->n, len;

	if (!fs_dir_name_ok(e->name, e->namelen) ||
	    (e->name[0] == '.' && (e->namelen == 1 || (e->namelen == 2 && e->name[1] == '.'))))
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->v[mid].ino < e->ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->n || g->v[lo].ino != e->ino || g->from[g->v[lo].i])
		return 0;
	len = strlen(g->dir) + 1 + e->namelen + 1;
	g->from[g->v[lo].i] = malloc(len);
	if (!g->from[g->v[lo].i])
		return -ENOMEM;
	snprintf(g->from[g->v[lo].i], len, "%s%s%.*s", g->dir,
		 g->dir[strlen(g->dir) - 1] == '/' ? "" : "/", (int)e->namelen, e->name);
	return 0;
}

/* The old names of a group of inodes that directory slot p held. */
static int group_places(struct repair_ctx *rx, uint64_t p, const struct mv *v, size_t n,
			char **from, char **from_dir)
{
	struct repair_names *nm = rx->nm;
	struct group_names g = { .from = from, .v = v, .n = n };
	struct fs_findings scratch;
	struct fs_buf *b;
	fs_ino_t dotdot;
	char *dir = old_dir_path(rx, p);
	int err = 0;

	if (!dir)
		return 0;
	for (size_t k = 0; k < n && !err; k++)
		if (!(from_dir[v[k].i] = strdup(dir)))
			err = -ENOMEM;
	g.dir = dir;
	if (!err && (rx->sx->links->rec[p].flags & LR_SEEN) && !(rx->verdict[p] & RV_CLEAR) &&
	    !(nm->flags[p] & NM_NEW) && !read_inode(rx, ino_of(rx, p), &b)) {
		fs_findings_init(&scratch);
		err = scan_dir_entries(rx->sx, ino_of(rx, p), b->data, &scratch, on_group_name, &g,
				       &dotdot);
		fs_findings_free(&scratch);
		fs_buf_put(rx->sx->cache, b);
		if (err != -ENOMEM)
			err = 0;
	}
	free(dir);
	return err;
}

/*
 * Where inodes inos[0..n) were before the repair: from[i], the old path,
 * and from_dir[i], the directory, each malloc'd or NULL when unknown.
 */
static int places(struct repair_ctx *rx, const fs_ino_t *inos, size_t n, char **from,
		  char **from_dir)
{
	struct scan_links *lk = rx->sx->links;
	struct mv *v;
	uint64_t *named_by;        /* per inode: a directory slot that named it, + 1 */
	uint64_t *want;            /* a bit a slot: one of inos (the edges' quick test) */
	int err = 0;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	named_by = calloc(n, sizeof(*named_by));
	want = calloc(lk->nslots / 64 + 1, sizeof(*want));
	if (!v || !named_by || !want) {
		free(v);
		free(named_by);
		free(want);
		return -ENOMEM;
	}
	/* by slot, to find the directories that named the files */
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct mv){ scan_links_slot(rx->sx, inos[i]), inos[i], i };
		if (v[i].key < lk->nslots)
			want[v[i].key / 64] |= 1ull << (v[i].key % 64);
	}
	qsort(v, n, sizeof(*v), cmp_mv);
	for (size_t ri = 0; ri < lk->nruns; ri++)
		for (uint32_t e = 0; e < lk->runs[ri].n; e++) {
			uint64_t p = lk->runs[ri].parent, c = lk->runs[ri].child[e];
			size_t lo = 0, hi = n;

			if (!(want[c / 64] & (1ull << (c % 64))) || is_dir(rx, c))
				continue;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (v[mid].key < c)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < n && v[lo].key == c; lo++)
				named_by[v[lo].i] = p + 1;
		}
	/* then by old directory: each is walked once */
	for (size_t k = 0; k < n; k++) {
		uint64_t s = v[k].key, p = UINT64_MAX;

		if (s != UINT64_MAX && is_dir(rx, s))
			p = ino_of(rx, s) == rx->fs->g.rootino ? UINT64_MAX : old_parent(rx, s);
		else if (named_by[v[k].i])
			p = named_by[v[k].i] - 1;
		v[k].key = p;
	}
	qsort(v, n, sizeof(*v), cmp_mv);
	for (size_t k = 0, j; k < n && !err; k = j) {
		for (j = k + 1; j < n && v[j].key == v[k].key; j++)
			;
		if (v[k].key != UINT64_MAX)
			err = group_places(rx, v[k].key, &v[k], j - k, from, from_dir);
	}
	free(v);
	free(named_by);
	free(want);
	return err;
}

static int old_places(struct repair_ctx *rx)
{
	struct repair_names *nm = rx->nm;

	if (!nm->nmoves)
		return 0;
	nm->from = calloc(nm->nmoves, sizeof(*nm->from));
	nm->from_dir = calloc(nm->nmoves, sizeof(*nm->from_dir));
	if (!nm->from || !nm->from_dir)
		return -ENOMEM;
	return places(rx, nm->moves, nm->nmoves, nm->from, nm->from_dir);
}

static int cmp_ino(const void *pa, const void *pb)
{
	fs_ino_t a = *(const fs_ino_t *)pa, b = *(const fs_ino_t *)pb;

	return (a > b) - (a < b);
}

/* The paths of the inodes findings name, as they were (the report shows them). */
static int finding_paths(struct repair_ctx *rx)
{
	struct repair_names *nm = rx->nm;
	char **dirs;
	size_t n = 0;
	int err;

	nm->pino = malloc((rx->fl->n ? rx->fl->n : 1) * sizeof(*nm->pino));
	if (!nm->pino)
		return -ENOMEM;
	for (size_t i = 0; i < rx->fl->n; i++)
		if (rx->fl->v[i].ino > 0 && (uint64_t)rx->fl->v[i].ino != rx->fs->g.rootino)
			nm->pino[n++] = (fs_ino_t)rx->fl->v[i].ino;
	qsort(nm->pino, n, sizeof(*nm->pino), cmp_ino);
	nm->npaths = 0;
	for (size_t i = 0; i < n; i++)
		if (!nm->npaths || nm->pino[nm->npaths - 1] != nm->pino[i])
			nm->pino[nm->npaths++] = nm->pino[i];
	nm->paths = calloc(nm->npaths ? nm->npaths : 1, sizeof(*nm->paths));
	dirs = calloc(nm->npaths ? nm->npaths : 1, sizeof(*dirs));
	if (!nm->paths || !dirs) {
		free(dirs);
		return -ENOMEM;
	}
	err = places(rx, nm->pino, nm->npaths, nm->paths, dirs);
	for (size_t i = 0; i < nm->npaths; i++)
		free(dirs[i]);
	free(dirs);
	return err;
}

const char *repair_names_path(const struct repair_ctx *rx, int64_t ino)
{
	const struct repair_names *nm = rx->nm;
	size_t lo = 0, hi;

	if (!nm || !nm->paths || ino < 0)
		return NULL;
	if ((uint64_t)ino == rx->fs->g.rootino)
		return "/";
	hi = nm->npaths;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (nm->pino[mid] < (fs_ino_t)ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nm->npaths && nm->pino[lo] == (fs_ino_t)ino ? nm->paths[lo] : NULL;
}

/* ---- writing ---- */

static const enum fs_mtype dir_types[] = {
	FS_MT_DIR_BLOCK, FS_MT_DIR_DATA, FS_MT_DIR_LEAF1, FS_MT_DIR_LEAFN, FS_MT_DA_NODE,
	FS_MT_DIR_FREE,
};

/* Blocks for the directory: one run for all when there is one, else block by block. */
static int place_all(struct repair_ctx *rx, const struct fs_dirbuild *b, fs_ino_t ino,
		     fs_fsblock_t *phys)
{
	int err = repair_place(rx, ino, b->nblocks * b->fsbs, &phys[0]);

	if (!err) {
		for (uint32_t i = 1; i < b->nblocks; i++)
			phys[i] = phys[0] + (fs_fsblock_t)i * b->fsbs;
		return 0;
	}
	if (err != -ENOSPC)
		return err;
	err = 0;
	for (uint32_t i = 0; i < b->nblocks && !err; i++)
		err = repair_place(rx, ino, b->fsbs, &phys[i]);
	return err;
}

static void set_nextents(struct xfs_dinode *d, const struct fs_inode *ip, uint64_t n)
{
	if (ip->nrext64)
		put_be64(&d->di_big_nextents, n);
	else
		put_be32(&d->di_nextents, (uint32_t)n);
}

/* The blocks a directory's data fork maps now (extents and bmbt blocks). */
static int old_blocks(struct repair_ctx *rx, const void *dip, const struct fs_inode *ip,
		      uint64_t *n)
{
	struct fs_bmap m = { 0 };
	int err;

	*n = 0;
	if (ip->format != XFS_DINODE_FMT_EXTENTS && ip->format != XFS_DINODE_FMT_BTREE)
		return 0;
	err = scan_load_map(rx->sx, dip, ip, XFS_DATA_FORK, NULL, &m);
	if (err == -ENOMEM)
		return err;
	for (size_t i = 0; i < m.n; i++)
		*n += m.ext[i].blockcount;
	*n += m.nbmbt;
	fs_bmap_free(&m);
	return 0;
}

/* The parent ".." names: the one kept, the root's own, else what ".." said. */
static fs_ino_t parent_of(const struct repair_ctx *rx, uint64_t s, fs_ino_t ino)
{
	fs_ino_t dd = scan_link_dotdot(rx->sx->links, s);

	if (ino == rx->fs->g.rootino)
		return ino;
	if (parent_of_dir(rx->nm, s))
		return ino_of(rx, parent_of_dir(rx->nm, s) - 1);
	return dd && fs_ino_valid(&rx->fs->g, dd) ? dd : rx->fs->g.rootino;
}

/*
 * A new inode's core: a directory owned by root, mode 0755 (as xfs_repair
 * makes lost+found).  With parent pointers (afork) it has an empty short
 * form attr fork at the end of the literal area, room for its pointer.
 */
static void new_dir_core(const struct fs_geom *g, void *dip, fs_ino_t ino, bool afork)
{
	struct fs_dinode_init in = { .mode = S_IFDIR | 0755, .format = XFS_DINODE_FMT_LOCAL,
				     .nlink = 2, .bigtime = g->bigtime, .nrext64 = g->nrext64 };
	size_t lit = fs_dinode_litino(g->inodesize);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	in.sec = ts.tv_sec;
	in.nsec = (uint32_t)ts.tv_nsec;
	if (afork) {
		/* the header and one pointer named "lost+found", rounded up: 32 bytes */
		in.forkoff = (uint8_t)((lit - 32) / 8);
		in.aformat = XFS_DINODE_FMT_LOCAL;
	}
	fs_enc_dinode(dip, g->inodesize, ino, g->meta_uuid, &in);
	if (afork) {
		unsigned char *af = (unsigned char *)fs_dinode_dfork(dip) + in.forkoff * 8u;

		memset(af, 0, lit - in.forkoff * 8u);
		put_be16(af + offsetof(struct xfs_attr_sf_hdr, totsize),
			 sizeof(struct xfs_attr_sf_hdr));
	}
}

static int write_blocks(struct repair_ctx *rx, const struct fs_dirbuild *b, fs_ino_t ino,
			const fs_fsblock_t *phys)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf **bb = calloc(b->nblocks, sizeof(*bb));
	void **bufs = calloc(b->nblocks, sizeof(*bufs));
	int err = bb && bufs ? 0 : -ENOMEM;

	for (uint32_t i = 0; i < b->nblocks && !err; i++) {
		err = repair_get_buf(rx, fs_fsb_to_daddr(g, phys[i]), g->dirblksize, true, &bb[i]);
		if (!err)
			bufs[i] = bb[i]->data;
	}
	if (!err)
		err = fs_dirbuild_encode(b, phys, bufs);
	for (uint32_t i = 0; i < b->nblocks && !err; i++) {
		enum fs_mtype t = fs_verifier_by_magic(bufs[i], g->dirblksize, dir_types,
						       sizeof(dir_types) / sizeof(dir_types[0]));

		err = t == FS_MT_NR ? -EUCLEAN :
		      repair_mark(rx, bb[i], t, fs_fsb_to_agno(g, phys[i]), ino, FS_WCLASS_NEW);
	}
	for (uint32_t i = 0; bb && i < b->nblocks; i++)
		if (bb[i])
			fs_buf_put(rx->sx->cache, bb[i]);
	free(bb);
	free(bufs);
	return err;
}

/* Encode one rebuilt directory: new blocks (NEW class), its inode (with the headers). */
static int build_dir(struct repair_ctx *rx, struct nm_dir *d)
{
	const struct fs_geom *g = &rx->fs->g;
	struct repair_names *nm = rx->nm;
	struct fs_dirbuild_ent *ents = calloc(d->n ? d->n : 1, sizeof(*ents));
	struct fs_dirbuild *b = NULL;
	struct fs_bmap_ext *ext = NULL;
	fs_fsblock_t *phys = NULL;
	struct fs_buf *ib = NULL;
	struct xfs_dinode *dip;
	struct fs_inode ip;
	uint64_t had = 0, now = 0;
	size_t next = 0, litsz;
	int err;

	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		ents[i] = (struct fs_dirbuild_ent){ .ino = d->v[i].ino, .name = ent_name(nm, &d->v[i]),
						    .namelen = d->v[i].namelen,
						    .ftype = d->v[i].ftype };
	err = read_inode(rx, d->ino, &ib);
	if (err)
		goto out;
	dip = (struct xfs_dinode *)ib->data;
	if (nm->flags[d->slot] & NM_NEW)
		new_dir_core(g, dip, d->ino, g->parent && d->ino != g->rootino);
	fs_inode_decode(dip, &ip);
	litsz = fs_inode_fork_size(g, &ip, XFS_DATA_FORK);
	err = old_blocks(rx, dip, &ip, &had);
	if (!err)
		err = fs_dirbuild_plan(g, d->ino, parent_of(rx, d->slot, d->ino), ents, d->n, litsz,
				       &b);
	if (err)
		goto out;
	memset(fs_dinode_dfork(dip), 0, litsz);
	if (b->fmt == FS_DIR_SHORT) {
		fs_dirbuild_sf(b, fs_dinode_dfork(dip));
		dip->di_format = XFS_DINODE_FMT_LOCAL;
	} else {
		phys = calloc(b->nblocks, sizeof(*phys));
		ext = calloc(b->nblocks, sizeof(*ext));
		err = phys && ext ? place_all(rx, b, d->ino, phys) : -ENOMEM;
		uint8_t format = XFS_DINODE_FMT_EXTENTS;
		uint64_t bmbt = 0;

		if (!err)
			next = fs_dirbuild_extents(b, phys, ext);
		for (size_t i = 0; i < next && !err; i++) {
			fs_agnumber_t a = fs_fsb_to_agno(g, ext[i].startblock);

			err = model_add(rx->sx->model, a, fs_fsb_to_agbno(g, ext[i].startblock),
					(uint32_t)ext[i].blockcount, MC_DATA, d->ino, ext[i].startoff,
					MODEL_EXT_NEW);
			now += ext[i].blockcount;
		}
		if (!err)
			err = repair_fork_map(rx, d->ino, XFS_DATA_FORK, ext, next,
					      fs_dinode_dfork(dip), litsz, &format, &bmbt);
		if (!err)
			err = write_blocks(rx, b, d->ino, phys);
		if (err)
			goto out;
		now += bmbt;
		dip->di_format = format;
	}
	set_nextents(dip, &ip, next);
	put_be64(&dip->di_size, b->size);
	put_be64(&dip->di_nblocks, ip.nblocks - had + now);
	put_be32(&dip->di_nlink, 2 + (ds_find(nm, d->slot) ? ds_find(nm, d->slot)->subdirs : 0));
	fs_enc_dinode_finish(dip, g->inodesize);
	err = repair_mark(rx, ib, FS_MT_INODE, fs_ino_to_agno(g, d->ino), d->ino,
			  FS_WCLASS_HEADERS);
	if (!err) {
		struct nm_dslot *ds = ds_get(nm, d->slot);	/* a directory's row: there already */

		if (had)
			rx->verdict[d->slot] |= RV_DIR_NEW;
		if (ds)
			ds->built = true;
		else
			err = -ENOMEM;
		nm->rebuilt++;
	}
out:
	if (ib)
		fs_buf_put(rx->sx->cache, ib);
	fs_dirbuild_free(b);
	free(phys);
	free(ext);
	free(ents);
	return err;
}

/* Link counts: files the entries naming them, directories 2 + subdirectories. */
static int set_nlinks(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;
	int err = 0;

	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		const struct nm_dslot *ds = is_dir(rx, s) ? ds_find(nm, s) : NULL;
		uint32_t want = is_dir(rx, s) ? 2 + (ds ? ds->subdirs : 0) : refs_of(rx, s);
		struct fs_buf *b;
		fs_ino_t ino;

		/*
		 * inodes in use that a directory names, or should (not unlinked-list
		 * ones); the inode number (a search) only for those that differ
		 */
		if (!live(rx, s) || want == scan_link_nlink(lk, s) || built(nm, s) ||
		    !(lk->rec[s].nlink8 || (nm->flags[s] & NM_REACHED)))
			continue;
		ino = ino_of(rx, s);
		if (scan_is_metadata_ino(rx->sx, ino))
			continue;
		err = read_inode(rx, ino, &b);
		if (err)
			break;
		put_be32(&((struct xfs_dinode *)b->data)->di_nlink, want);
		fs_enc_dinode_finish(b->data, rx->fs->g.inodesize);
		err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(&rx->fs->g, ino), ino,
				  FS_WCLASS_HEADERS);
		fs_buf_put(rx->sx->cache, b);
		nm->flags[s] |= NM_NLINK;
		nm->nlinks++;
	}
	return err;
}

/* ---- parent pointers (the parent feature) ---- */

static uint32_t dir_gen(struct repair_ctx *rx, fs_ino_t ino, bool *ok)
{
	struct fs_buf *b;
	uint32_t gen;

	*ok = !read_inode(rx, ino, &b);
	if (!*ok)
		return 0;
	gen = get_be32(&((const struct xfs_dinode *)b->data)->di_gen);
	fs_buf_put(rx->sx->cache, b);
	return gen;
}

/*
 * The names the rebuilt directories hold, while names are restored: an
 * open-addressed set of 64-bit digests of (directory, name), so that a
 * large directory with many names lost is not searched entry by entry
 * (two names share a digest with probability 2^-64, as the scan's keys).
 */
struct name_set {
	uint64_t *v;               /* 0: empty */
	size_t cap, n;             /* cap: a power of two */
};

static uint64_t name_key(fs_ino_t dir, const unsigned char *name, uint8_t namelen)
{
	uint64_t k = fs_name_digest(name, namelen) ^ (dir * 0x9e3779b97f4a7c15ull);

	return k ? k : 1;
}

/* Adds key (true when it was there already); -ENOMEM as *err. */
static bool set_add(struct name_set *h, uint64_t key, int *err)
{
	if (2 * (h->n + 1) > h->cap) {
		struct name_set g = { .cap = h->cap ? 2 * h->cap : 1024 };

		g.v = calloc(g.cap, sizeof(*g.v));
		if (!g.v) {
			*err = -ENOMEM;
			return true;
		}
		for (size_t i = 0; i < h->cap; i++)
			if (h->v[i])
				set_add(&g, h->v[i], err);
		free(h->v);
		*h = g;
	}
	for (size_t i = key & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (h->v[i] == key)
			return true;
		if (!h->v[i]) {
			h->v[i] = key;
			h->n++;
			return false;
		}
	}
}

struct restore {
	struct repair_ctx *rx;
	uint64_t s;
	fs_ino_t ino;
	struct name_set *names;    /* every rebuilt directory's names */
	int err;
};

/*
 * A parent pointer of a file whose entries are fewer than its links (or
 * of a directory with no parent kept): when it names a rebuilt directory,
 * with that directory's generation, by a name the directory does not
 * hold, the entry comes back under that name.
 */
static int on_restore_pptr(void *priv, const struct fs_pptr *p)
{
	struct restore *r = priv;
	struct repair_ctx *rx = r->rx;
	struct repair_names *nm = rx->nm;
	uint64_t ps = scan_links_slot(rx->sx, p->parent);
	struct nm_dir *d;
	bool ok;
	int err;

	if (ps == UINT64_MAX || ps == r->s || !live(rx, ps) || !is_dir(rx, ps) ||
	    !(d = dir_of(nm, ps)) || (nm->flags[ps] & NM_NEW) ||
	    !fs_dir_name_ok(p->name, p->namelen) ||
	    (p->name[0] == '.' && (p->namelen == 1 || (p->namelen == 2 && p->name[1] == '.'))) ||
	    (is_dir(rx, r->s) && parent_of_dir(nm, r->s)) ||
	    (ps == nm->root && p->namelen == 10 && !memcmp(p->name, "lost+found", 10)) ||
	    dir_gen(rx, d->ino, &ok) != p->gen || !ok ||
	    set_add(r->names, name_key(d->ino, p->name, p->namelen), &r->err))
		return r->err;
	err = add_ent(nm, d, r->ino, p->name, p->namelen, rx->sx->links->rec[r->s].type);
	if (err || FS_VEC_ROOM(nm->restored, nm->nrestored, nm->caprestored, 16))
		return err ? err : -ENOMEM;
	nm->restored[nm->nrestored++] = (struct nm_restored){ .dir = d->ino, .ino = r->ino,
		.name = d->v[d->n - 1].name, .namelen = p->namelen };
	d->restored++;
	nm->flags[r->s] |= NM_RESTORED;
	if (is_dir(rx, r->s)) {
		struct nm_dslot *ds = ds_get(nm, r->s);

		if (!ds)
			return -ENOMEM;
		ds->parent = (uint32_t)ps + 1;
	}
	return 0;
}

/*
 * Names come back: before anything goes to lost+found, every file that
 * fewer entries name than its link count says (the entries the rebuilt
 * directories keep; a directory: no parent kept), whose
 * parent pointer still names a rebuilt directory, is put back there under
 * the name its pointer holds.
 */
static int restore_names(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;
	struct name_set names = { 0 };
	int err = 0;

	if (!rx->fs->g.parent || !nm->ndirs)
		return 0;
	err = count(rx);	/* the entries naming each file once the directories are rebuilt */
	for (size_t i = 0; i < nm->ndirs && !err; i++)
		for (size_t k = 0; k < nm->dirs[i].n && !err; k++)
			set_add(&names, name_key(nm->dirs[i].ino, ent_name(nm, &nm->dirs[i].v[k]),
						 nm->dirs[i].v[k].namelen), &err);
	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		struct restore rs = { .rx = rx, .s = s, .names = &names };

		if (!live(rx, s) || s == nm->root || (nm->flags[s] & NM_NEW) ||
		    (is_dir(rx, s) ? parent_of_dir(nm, s) != 0 :
		     refs_of(rx, s) >= scan_link_nlink(lk, s)))
			continue;
		rs.ino = ino_of(rx, s);
		if (scan_is_metadata_ino(rx->sx, rs.ino))
			continue;
		err = repair_pptrs_read(rx, rs.ino, on_restore_pptr, &rs);
	}
	free(names.v);
	return err;
}

static void want(struct repair_ctx *rx, uint64_t c)
{
	if (c != UINT64_MAX && c < rx->sx->links->nslots)
		rx->pp->want[c] |= RP_AFFECTED;
}

/* Every child the scan saw directory slot p's entries name. */
static void want_children(struct repair_ctx *rx, uint64_t p)
{
	size_t nc;
	const uint32_t *ch = scan_links_children(rx->sx->links, p, &nc);

	for (size_t e = 0; e < nc; e++)
		want(rx, ch[e]);
}

struct want_walk {
	struct repair_ctx *rx;
	fs_ino_t dir;
	uint32_t gen;
	int err;
};

static int on_want_entry(void *priv, const struct fs_dirent *e)
{
	struct want_walk *w = priv;
	uint64_t cs = scan_links_slot(w->rx->sx, e->ino);

	if (cs == UINT64_MAX || !(w->rx->pp->want[cs] & RP_AFFECTED) ||
	    !fs_dir_name_ok(e->name, e->namelen) ||
	    (e->name[0] == '.' && (e->namelen == 1 || (e->namelen == 2 && e->name[1] == '.'))))
		return 0;
	return repair_pptrs_add(w->rx, cs, w->dir, w->gen, e->name, e->namelen);
}

/*
 * The parent pointers the namespace wants, for the files whose pointers
 * may change: the children of every rebuilt directory (kept, dropped or
 * put back), of every cleared one, and the files the plan rules or the
 * attr verdicts marked.  Each gets one pointer per entry naming it after
 * the repair: from the rebuilt directories' new entries, and from the
 * entries on disk of the directories left as they are.
 */
static int plan_pptrs(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	struct repair_names *nm = rx->nm;
	struct repair_pptrs *pp = rx->pp;
	int err = 0;

	if (!pp)
		return 0;
	for (size_t i = 0; i < nm->ndirs; i++) {
		const struct nm_dir *d = &nm->dirs[i];

		for (size_t k = 0; k < d->n; k++)
			want(rx, scan_links_slot(rx->sx, d->v[k].ino));
		if (!(nm->flags[d->slot] & NM_NEW))
			want_children(rx, d->slot);
	}
	for (uint64_t s = 0; s < lk->nslots; s++) {
		if ((rx->verdict[s] & RV_CLEAR) && lk->rec[s].type == XFS_DIR3_FT_DIR)
			want_children(rx, s);
		/*
		 * a file whose link count changes: an entry naming it went (or
		 * came) where no edge of the scan shows it, as in a cleared
		 * directory whose entries were never read; its pointer to that
		 * directory goes with it (compared first, written only when
		 * they differ)
		 */
		if (live(rx, s) && !is_dir(rx, s) && refs_of(rx, s) != scan_link_nlink(lk, s))
			want(rx, s);
		if (rx->verdict[s] & (RV_ATTR_SALVAGE | RV_ATTR_RESET))
			pp->want[s] |= RP_AFFECTED | RP_FORCE;
		if (!live(rx, s) || scan_is_metadata_ino(rx->sx, ino_of(rx, s)))
			pp->want[s] = 0;
	}
	/* the rebuilt directories' entries */
	for (size_t i = 0; i < nm->ndirs && !err; i++) {
		const struct nm_dir *d = &nm->dirs[i];
		bool ok;
		uint32_t gen = dir_gen(rx, d->ino, &ok);

		for (size_t k = 0; k < d->n && !err; k++) {
			uint64_t cs = scan_links_slot(rx->sx, d->v[k].ino);

			if (cs != UINT64_MAX && (pp->want[cs] & RP_AFFECTED))
				err = repair_pptrs_add(rx, cs, d->ino, gen, ent_name(nm, &d->v[k]),
						       d->v[k].namelen);
		}
	}
	/* the directories kept as they are that name a marked file */
	for (uint64_t p = 0; p < lk->nslots && !err; p++) {
		struct want_walk w = { .rx = rx };
		const uint32_t *ch;
		size_t nc;
		struct fs_findings scratch;
		struct fs_buf *b;
		fs_ino_t dotdot;
		bool named = false, ok;

		if (!live(rx, p) || !is_dir(rx, p) || dir_of(nm, p))
			continue;
		ch = scan_links_children(lk, p, &nc);
		for (size_t e = 0; e < nc && !named; e++)
			named = pp->want[ch[e]] & RP_AFFECTED;
		if (!named)
			continue;
		w.dir = ino_of(rx, p);
		w.gen = dir_gen(rx, w.dir, &ok);
		err = read_inode(rx, w.dir, &b);
		if (err)
			break;
		fs_findings_init(&scratch);
		err = scan_dir_entries(rx->sx, w.dir, b->data, &scratch, on_want_entry, &w, &dotdot);
		fs_findings_free(&scratch);
		fs_buf_put(rx->sx->cache, b);
		err = err < 0 ? err : 0;
	}
	if (!err)
		repair_pptrs_sort(rx);
	return err;
}

/* ---- the phase ---- */

static int names_alloc(struct repair_ctx *rx)
{
	uint64_t n = rx->sx->links->nslots + 1;
	struct repair_names *nm = calloc(1, sizeof(*nm));
	size_t cap = 0;

	if (!nm)
		return -ENOMEM;
	rx->nm = nm;
	nm->lf_slot = UINT64_MAX;
	/* before count() overwrites the scan's counts */
	for (uint64_t s = 0; s + 1 < n; s++) {
		const struct link_rec *r = &rx->sx->links->rec[s];

		if (!(r->flags & LR_ON_UNLINKED) || r->refs8)
			continue;
		if (FS_VEC_ROOM(nm->unnamed, nm->nunnamed, cap, 64))
			return -ENOMEM;
		nm->unnamed[nm->nunnamed++] = (uint32_t)s;
	}
	nm->flags = calloc(n, 1);
	if (!nm->flags)
		return -ENOMEM;
	/* a row for every slot that is a directory (take_slot adds new ones) */
	for (uint64_t s = 0; s + 1 < n; s++)
		if (rx->sx->links->rec[s].type == XFS_DIR3_FT_DIR)
			nm->nds++;
	nm->capds = nm->nds ? nm->nds : 1;
	nm->ds = calloc(nm->capds, sizeof(*nm->ds));
	if (!nm->ds)
		return -ENOMEM;
	nm->nds = 0;
	for (uint64_t s = 0; s + 1 < n; s++)
		if (rx->sx->links->rec[s].type == XFS_DIR3_FT_DIR)
			nm->ds[nm->nds++].slot = (uint32_t)s;
	for (uint64_t s = 0; s + 1 < n; s++)
		set_st(rx, s);
	return repair_pptrs_alloc(rx);
}

void repair_names_drop_counts(struct repair_ctx *rx)
{
	if (rx->nm) {
		free(rx->nm->big);
		rx->nm->big = NULL;
		rx->nm->nbig = rx->nm->capbig = 0;
		rx->nm->counted = 0;
	}
}

void repair_names_drop_slots(struct repair_ctx *rx)
{
	struct repair_names *nm = rx->nm;

	if (!nm)
		return;
	repair_names_drop_counts(rx);
	free(nm->flags);
	free(nm->ds);
	nm->flags = NULL;
	nm->ds = NULL;
	nm->nds = nm->capds = 0;
}

void repair_names_free(struct repair_ctx *rx)
{
	struct repair_names *nm = rx->nm;

	if (!nm)
		return;
	for (size_t i = 0; i < nm->ndirs; i++)
		free(nm->dirs[i].v);
	for (size_t i = 0; nm->from && i < nm->nmoves; i++) {
		free(nm->from[i]);
		free(nm->from_dir[i]);
	}
	free(nm->from);
	free(nm->from_dir);
	for (size_t i = 0; nm->paths && i < nm->npaths; i++)
		free(nm->paths[i]);
	free(nm->paths);
	free(nm->pino);
	free(nm->moves);
	free(nm->restored);
	free(nm->xedge);
	free(nm->dirs);
	free(nm->names);
	free(nm->flags);
	free(nm->ds);
	free(nm->big);
	free(nm->unnamed);
	free(nm);
	rx->nm = NULL;
}

int repair_phase_names(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	const struct fs_geom *g = &rx->fs->g;
	uint64_t root;
	const char *why;
	int err;

	if (!lk || !lk->runs)
		return 0;
	why = repair_model_incomplete(rx);
	root = scan_links_slot(rx->sx, g->rootino);
	if (!why && root == UINT64_MAX)
		why = "no inode chunk the scan knows holds the root inode";
	if (why) {
		fprintf(stderr, "xfsx_repair: %s: directories and link counts are left as they "
			"are\n", why);
		return 0;
	}
	err = names_alloc(rx);
	if (err)
		return err;
	rx->nm->root = root;
	if (!live(rx, root) || !is_dir(rx, root))
		err = new_root(rx, root);
	if (!err)
		err = walk_unwalked(rx);
	if (err)
		return err;
	choose_parents(rx);
	choose_rebuilds(rx);
	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		struct nm_dir *d;

		if (rx->nm->flags[s] & NM_REBUILD)
			err = collect(rx, s, &d);
	}
	if (!err)
		err = restore_names(rx);
	if (!err)
		err = connect(rx, root);
	if (!err)
		err = old_places(rx);
	if (!err)
		err = finding_paths(rx);
	if (!err)
		err = count(rx);
	for (size_t i = 0; i < rx->nm->ndirs && !err; i++)
		err = build_dir(rx, &rx->nm->dirs[i]);
	for (fs_agnumber_t a = 0; a < g->agcount && !err; a++)
		err = model_ag_finish(rx->sx->model, a);
	if (!err)
		err = set_nlinks(rx);
	if (!err)
		err = plan_pptrs(rx);
	if (err == -ENOSPC)
		fprintf(stderr, "xfsx_repair: no free %s for the rebuilt directories; nothing was "
			"written\n", rx->nm->lf_slot == UINT64_MAX ? "blocks" : "blocks or inode");
	else if (err == -EFBIG)
		fprintf(stderr, "xfsx_repair: a rebuilt directory's block map would be taller than "
			"the geometry allows; nothing was written\n");
	if (!err && (rx->nm->rebuilt || rx->nm->nlinks)) {
		rx->planned_writes = true;
		rx->drops = true;
	}
	/*
	 * Nothing after the namespace plan walks the directory graph or reads
	 * the counts: freed now, not at the verify step, so the phases after
	 * this one (the AG rebuild's btrees and dirty blocks) do not add to them.
	 */
	if (!err) {
		scan_links_drop_graph(lk);
		repair_names_drop_counts(rx);
	}
	return err;
}

/* ---- what the decision table (fix.c) asks of the namespace plan ---- */

bool repair_names_scan_unnamed(const struct repair_ctx *rx, uint64_t slot)
{
	const struct repair_names *nm = rx->nm;
	size_t lo = 0, hi;

	if (!nm)
		return scan_link_refs(rx->sx->links, slot) == 0;
	hi = nm->nunnamed;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nm->unnamed[mid] < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nm->nunnamed && nm->unnamed[lo] == slot;
}

bool repair_names_built(const struct repair_ctx *rx, uint64_t slot)
{
	return rx->nm && rx->nm->ds && slot != UINT64_MAX && built(rx->nm, slot);
}

bool repair_names_reached(const struct repair_ctx *rx, uint64_t slot)
{
	return rx->nm && rx->nm->flags && slot != UINT64_MAX && (rx->nm->flags[slot] & NM_REACHED);
}

void repair_names_counts(const struct repair_ctx *rx, uint64_t *rebuilt, uint64_t *moved,
			 uint64_t *nlinks)
{
	*rebuilt = rx->nm ? rx->nm->rebuilt : 0;
	*moved = rx->nm ? rx->nm->moved : 0;
	*nlinks = rx->nm ? rx->nm->nlinks : 0;
}

void repair_names_print_moves(const struct repair_ctx *rx, FILE *out, bool json, bool all)
{
	const struct repair_names *nm = rx->nm;
	const char *how = rx->o->dry_run ? "would move" : "moved";

	if (json)
		fputs("[", out);
	for (size_t i = 0; nm && i < nm->nmoves; i++) {
		unsigned long long ino = (unsigned long long)nm->moves[i];
		const char *from = nm->from ? nm->from[i] : NULL;
		const char *dir = nm->from_dir ? nm->from_dir[i] : NULL;

		if (!json && !all && i == REPAIR_TEXT_LIST) {
			fprintf(out, "  ... and %zu more %s to /lost+found; -v lists them\n",
				nm->nmoves - i, nm->nmoves - i == 1 ? "inode" : "inodes");
			break;
		}
		if (json) {
			fprintf(out, "%s{\"ino\":%llu,\"from\":", i ? "," : "", ino);
			if (from)
				fs_json_string(out, from);
			else
				fputs("null", out);
			fputs(",\"from_dir\":", out);
			if (dir)
				fs_json_string(out, dir);
			else
				fputs("null", out);
			fprintf(out, ",\"to\":\"/lost+found/%llu\"}", ino);
		} else if (from)
			fprintf(out, "%-9s inode %llu from %s to /lost+found/%llu\n", how, ino, from,
				ino);
		else if (dir)
			fprintf(out, "%-9s inode %llu to /lost+found/%llu (it was in %s; its name "
				"there is lost)\n", how, ino, ino, dir);
		else
			fprintf(out, "%-9s inode %llu to /lost+found/%llu (its old name is lost)\n",
				how, ino, ino);
	}
	if (json)
		fputs("]", out);
}

bool repair_names_moved_slot(const struct repair_ctx *rx, uint64_t slot)
{
	return rx->nm && rx->nm->flags && slot != UINT64_MAX && (rx->nm->flags[slot] & NM_MOVED);
}

bool repair_names_restored_slot(const struct repair_ctx *rx, uint64_t slot)
{
	return rx->nm && rx->nm->flags && slot != UINT64_MAX && (rx->nm->flags[slot] & NM_RESTORED);
}

uint64_t repair_names_restored(const struct repair_ctx *rx)
{
	return rx->nm ? rx->nm->nrestored : 0;
}

static void print_name(FILE *out, const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			fputc(s[i], out);
		else
			fprintf(out, "\\x%02x", s[i]);
}

void repair_names_print_restored(const struct repair_ctx *rx, FILE *out, bool json, bool all)
{
	const struct repair_names *nm = rx->nm;
	const char *how = rx->o->dry_run ? "would restore" : "restored";
	bool first = true;

	if (json)
		fputs("[", out);
	for (size_t i = 0; nm && i < nm->ndirs; i++) {
		const struct nm_dir *d = &nm->dirs[i];
		const char *path = repair_names_path(rx, (int64_t)d->ino);
		size_t listed = 0;

		if (!d->restored)
			continue;
		if (json) {
			fprintf(out, "%s{\"dir\":%llu,\"path\":", first ? "" : ",",
				(unsigned long long)d->ino);
			if (path)
				fs_json_string(out, path);
			else
				fputs("null", out);
			fprintf(out, ",\"count\":%u,\"entries\":[", d->restored);
		} else {
			fprintf(out, "%-9s %u entries in directory inode %llu%s%s%s from parent "
				"pointers (their names, not lost+found)\n", how, d->restored,
				(unsigned long long)d->ino, path ? " (" : "", path ? path : "",
				path ? ")" : "");
		}
		first = false;
		for (size_t k = 0; k < nm->nrestored; k++) {
			const struct nm_restored *r = &nm->restored[k];
			char name[MAXNAMELEN + 1];

			if (r->dir != d->ino)
				continue;
			if (json) {
				memcpy(name, nm->names + r->name, r->namelen);
				name[r->namelen] = 0;
				fprintf(out, "%s{\"name\":", listed ? "," : "");
				fs_json_string(out, name);
				fprintf(out, ",\"ino\":%llu}", (unsigned long long)r->ino);
			} else if (all || listed < REPAIR_TEXT_LIST) {
				fputs("  ", out);
				print_name(out, nm->names + r->name, r->namelen);
				fprintf(out, " (inode %llu)\n", (unsigned long long)r->ino);
			} else if (listed == REPAIR_TEXT_LIST) {
				fprintf(out, "  ... and %u more; -v lists them\n",
					d->restored - REPAIR_TEXT_LIST);
			}
			listed++;
		}
		if (json)
			fputs("]}", out);
	}
	if (json)
		fputs("]", out);
}
