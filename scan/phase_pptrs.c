// SPDX-License-Identifier: GPL-2.0
/*
 * Parent pointers against the directory graph, on filesystems with the
 * parent feature (the end of phase 6): the link keys the directory walks
 * (phase_dirs.c) and the attr walks (phase_attrs.c) recorded per worker
 * are gathered, sorted by (child, parent, name digest) and merged child by
 * child.  Every live directory entry needs exactly one parent pointer on
 * the file it names (pptr.missing), every parent pointer its entry in a
 * directory (pptr.dangling), holding that directory's generation
 * (pptr.gen), once (pptr.dup); the pointers of a file number its link
 * count, a directory's one, the root's none (pptr.count), as xfs_repair
 * 6.10's phase 6 has them.  A file whose pointers could not all be read,
 * or a parent directory whose entries are not all known, is not judged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "scan/pptr.h"
#include "libfs/format/pptr.h"
#include "libfs/util/vec.h"

int scan_pptrs_create(struct scan_ctx *cx)
{
	struct scan_pptrs *p;

	if (!cx->fs->g.parent || !cx->links)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	cx->pptrs = p;
	p->nworkers = cx->links->nworkers;
	p->ents = calloc(p->nworkers, sizeof(*p->ents));
	p->ptrs = calloc(p->nworkers, sizeof(*p->ptrs));
	p->unknown = calloc(cx->links->nslots ? cx->links->nslots : 1, 1);
	return p->ents && p->ptrs && p->unknown ? 0 : -ENOMEM;
}

void scan_pptrs_destroy(struct scan_ctx *cx)
{
	struct scan_pptrs *p = cx->pptrs;

	if (!p)
		return;
	for (unsigned w = 0; w < p->nworkers; w++) {
		if (p->ents)
			free(p->ents[w].v);
		if (p->ptrs)
			free(p->ptrs[w].v);
	}
	free(p->ents);
	free(p->ptrs);
	free(p->unknown);
	free(p);
	cx->pptrs = NULL;
}

static void add_key(struct scan_pptrs *p, struct pptr_keys *a, const struct pptr_key *k)
{
	if (FS_VEC_ROOM(a->v, a->n, a->cap, 1024)) {
		if (!p->err)
			p->err = -ENOMEM;
		return;
	}
	a->v[a->n++] = *k;
}

void scan_pptr_note_entry(struct scan_ctx *cx, unsigned worker, uint32_t cs, fs_ino_t dir,
			  uint32_t dgen, const uint8_t *name, size_t namelen)
{
	struct scan_pptrs *p = cx->pptrs;
	struct pptr_key k = { .child = cs, .gen = dgen, .parent = dir,
			      .digest = fs_name_digest(name, namelen) };

	if (p)
		add_key(p, &p->ents[worker % p->nworkers], &k);
}

void scan_pptr_note_ptr(struct scan_ctx *cx, unsigned worker, uint64_t cs,
			const struct fs_pptr *pp)
{
	struct scan_pptrs *p = cx->pptrs;
	struct pptr_key k = { .child = (uint32_t)cs, .gen = pp->gen, .parent = pp->parent,
			      .digest = fs_name_digest(pp->name, pp->namelen) };

	if (p && cs < cx->links->nslots)
		add_key(p, &p->ptrs[worker % p->nworkers], &k);
}

void scan_pptr_note_unknown(struct scan_ctx *cx, uint64_t cs)
{
	struct scan_pptrs *p = cx->pptrs;

	if (p && cs < cx->links->nslots)
		p->unknown[cs] = 1;
}

static int cmp_key(const void *a, const void *b)
{
	const struct pptr_key *x = a, *y = b;

	if (x->child != y->child)
		return x->child < y->child ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->digest != y->digest)
		return x->digest < y->digest ? -1 : 1;
	return 0;
}

/* One sorted array of every worker's keys (the per-worker arrays freed). */
static int gather(struct pptr_keys *per, unsigned nworkers, struct pptr_keys *out)
{
	size_t n = 0;

	for (unsigned w = 0; w < nworkers; w++)
		n += per[w].n;
	out->v = malloc((n ? n : 1) * sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (unsigned w = 0; w < nworkers; w++) {
		if (per[w].n)
			memcpy(out->v + out->n, per[w].v, per[w].n * sizeof(*out->v));
		out->n += per[w].n;
		free(per[w].v);
		per[w] = (struct pptr_keys){ 0 };
	}
	qsort(out->v, out->n, sizeof(*out->v), cmp_key);
	return 0;
}

/*
 * What is known of the directory a parent pointer names: 1 its entries
 * are all known (so a missing one is missing), 0 they are not (not
 * judged), -1 it is no directory in use (the pointer names nothing).
 */
static int parent_known(struct scan_ctx *cx, fs_ino_t parent)
{
	uint64_t s = scan_links_slot(cx, parent);
	const struct link_rec *r;

	if (s == UINT64_MAX)
		return -1;
	r = &cx->links->rec[s];
	if (!(r->flags & LR_SEEN))
		return -1;
	if (r->flags & LR_BAD)
		return 0;
	if (r->type != XFS_DIR3_FT_DIR)
		return -1;
	return (r->flags & LR_WALKED) ? 1 : 0;
}

struct judge {
	struct scan_ctx *cx;
	fs_ino_t ino;
	fs_agnumber_t agno;
	unsigned found;            /* findings about the file */
	bool unsure;               /* a pointer to a directory whose entries are unknown */
};

static void missing(struct judge *j, const struct pptr_key *e)
{
	j->found++;
	fs_report(j->cx->fl, FS_C_PPTR_MISSING, j->agno, FS_NONE, (int64_t)j->ino, "parent",
		  FS_U(e->parent), "none",
		  "inode %llu is named by an entry of directory %llu (name digest %016llx) but has "
		  "no parent pointer for it", (unsigned long long)j->ino,
		  (unsigned long long)e->parent, (unsigned long long)e->digest);
}

static void dangling(struct judge *j, const struct pptr_key *p)
{
	int known = parent_known(j->cx, p->parent);

	if (!known) {
		j->unsure = true;
		return;
	}
	j->found++;
	fs_report(j->cx->fl, FS_C_PPTR_DANGLING, j->agno, FS_NONE, (int64_t)j->ino, "parent",
		  known < 0 ? "a directory in use" : "an entry naming the inode", FS_U(p->parent),
		  known < 0 ? "inode %llu has a parent pointer to inode %llu, which is not a "
		  "directory in use (name digest %016llx)" : "inode %llu has a parent pointer "
		  "to directory %llu, which has no such entry (name digest %016llx)",
		  (unsigned long long)j->ino, (unsigned long long)p->parent,
		  (unsigned long long)p->digest);
}

static void judge_child(struct judge *j, const struct pptr_key *e, size_t ne,
			const struct pptr_key *p, size_t np)
{
	struct scan_ctx *cx = j->cx;
	uint64_t cs = e ? e->child : p->child;
	const struct link_rec *r = &cx->links->rec[cs];
	size_t a = 0, b = 0;
	uint64_t want;

	while (a < ne || b < np) {
		int c = a >= ne ? 1 : b >= np ? -1 : cmp_key(&e[a], &p[b]);

		if (c < 0) {
			missing(j, &e[a++]);
			continue;
		}
		if (c > 0) {
			dangling(j, &p[b++]);
			continue;
		}
		if (e[a].gen != p[b].gen) {
			j->found++;
			fs_report(cx->fl, FS_C_PPTR_GEN, j->agno, FS_NONE, (int64_t)j->ino, "p_gen",
				  FS_U(e[a].gen), FS_U(p[b].gen),
				  "inode %llu's parent pointer to directory %llu holds generation "
				  "%u, the directory's is %u", (unsigned long long)j->ino,
				  (unsigned long long)p[b].parent, p[b].gen, e[a].gen);
		}
		for (b++; b < np && !cmp_key(&e[a], &p[b]); b++) {
			j->found++;
			fs_report(cx->fl, FS_C_PPTR_DUP, j->agno, FS_NONE, (int64_t)j->ino, "parent",
				  "one pointer per entry", FS_U(p[b].parent),
				  "inode %llu has more than one parent pointer for its entry in "
				  "directory %llu", (unsigned long long)j->ino,
				  (unsigned long long)p[b].parent);
		}
		a++;
	}
	/*
	 * The count: what the link count calls for.  Only where nothing above
	 * explains it and the references agree with the link count (else
	 * inode.nlink or dir.hardlink says it already).
	 */
	if (j->found || j->unsure)
		return;
	if (r->type == XFS_DIR3_FT_DIR)
		want = j->ino == cx->fs->g.rootino ? 0 : 1;
	else
		want = scan_link_nlink(cx->links, cs);
	if (np != want && scan_link_refs(cx->links, cs) ==
			  (r->type == XFS_DIR3_FT_DIR ? want : scan_link_nlink(cx->links, cs)))
		fs_report(cx->fl, FS_C_PPTR_COUNT, j->agno, FS_NONE, (int64_t)j->ino,
			  "parent pointers", FS_U(want), FS_U(np),
			  "inode %llu has %zu parent pointers, its links call for %llu",
			  (unsigned long long)j->ino, np, (unsigned long long)want);
}

int scan_pptr_check(struct scan_ctx *cx)
{
	struct scan_pptrs *pp = cx->pptrs;
	struct pptr_keys e = { 0 }, p = { 0 };
	size_t i = 0, k = 0;
	int err;

	if (!pp)
		return 0;
	if (pp->err)
		return pp->err;
	/* AGs nobody read may hold either side: nothing to judge (phase 1 said so) */
	if (cx->ags_past_end)
		return 0;
	err = gather(pp->ents, pp->nworkers, &e);
	if (!err)
		err = gather(pp->ptrs, pp->nworkers, &p);
	while (!err && (i < e.n || k < p.n)) {
		uint32_t child = i >= e.n ? p.v[k].child : k >= p.n ? e.v[i].child :
				 e.v[i].child < p.v[k].child ? e.v[i].child : p.v[k].child;
		size_t ie = i, ke = k;
		const struct link_rec *r = &cx->links->rec[child];

		while (ie < e.n && e.v[ie].child == child)
			ie++;
		while (ke < p.n && p.v[ke].child == child)
			ke++;
		if ((r->flags & LR_SEEN) && !(r->flags & (LR_BAD | LR_FORKS_UNREAD)) &&
		    !pp->unknown[child]) {
			struct judge j = { .cx = cx };

			j.ino = scan_slot_ino(cx, child, &j.agno);
			judge_child(&j, ie > i ? &e.v[i] : NULL, ie - i, ke > k ? &p.v[k] : NULL, ke - k);
		}
		i = ie;
		k = ke;
	}
	/* a file with no key at all is named by no entry: inode.unreachable says so */
	free(e.v);
	free(p.v);
	return err;
}
