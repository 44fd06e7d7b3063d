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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"

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

void scan_links_destroy(struct scan_ctx *cx)
{
	struct scan_links *l = cx->links;

	if (!l)
		return;
	if (l->edges)
		for (unsigned i = 0; i < l->nworkers; i++)
			free(l->edges[i].v);
	free(l->edges);
	free(l->gfirst);
	free(l->gedge);
	free(l->rec);
	free(l->ag_base);
	free(l);
	cx->links = NULL;
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
	r->nlink = ip->nlink;
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
	return (r->flags & (LR_SEEN | LR_BAD | LR_REACHED)) == LR_SEEN && r->nlink;
}

/* A directory whose entries are unknown: bad, or its blocks could not be walked. */
static bool explains_children(const struct link_rec *r)
{
	return (r->flags & LR_BAD) || (r->type == XFS_DIR3_FT_DIR && !(r->flags & LR_WALKED));
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
		const struct link_rec *r = &l->rec[x];

		if (!r->parent || !unreached(&l->rec[r->parent - 1]) || r->parent - 1 == x)
			break;
		x = r->parent - 1;
	}
	d = scan_links_slot(cx, l->rec[x].dotdot);
	if (l->rec[x].type == XFS_DIR3_FT_DIR && d != UINT64_MAX && d != x &&
	    (l->rec[d].flags & LR_SEEN) && explains_children(&l->rec[d]))
		return (int64_t)l->rec[x].dotdot;
	return x == s ? FS_NONE : (int64_t)scan_slot_ino(cx, x, &agno);
}

static void report_unreachable(struct scan_ctx *cx, uint64_t s, int64_t cause)
{
	const struct link_rec *r = &cx->links->rec[s];
	fs_agnumber_t agno;
	fs_ino_t ino = scan_slot_ino(cx, s, &agno);

	fs_report_caused(cx->fl, cause, FS_C_INODE_UNREACHABLE, agno, FS_NONE, (int64_t)ino, NULL,
			 "reachable from the root", r->refs ? "only from unreachable directories"
			 : "no directory entry",
			 "inode %llu (nlink %u) is not reachable from the root directory",
			 (unsigned long long)ino, r->nlink);
}

int scan_phase_links(struct scan_ctx *cx)
{
	struct scan_links *l = cx->links;
	const struct fs_geom *g = &cx->fs->g;
	struct link_edge *e = NULL;
	uint64_t ne = 0, *first = NULL, root, qh = 0, qt = 0, files_named = 0;
	bool root_lost;
	uint32_t *queue = NULL;
	int err = -ENOMEM;

	if (!l)
		return 0;
	cx->directories = l->dirs_walked;
	cx->dir_entries = l->entries;
	scan_progress_phase(cx, "links", 1);
	/* one flat edge array sorted by parent: the graph in CSR form */
	for (unsigned w = 0; w < l->nworkers; w++)
		ne += l->edges[w].n;
	e = malloc((ne ? ne : 1) * sizeof(*e));
	first = calloc(l->nslots + 1, sizeof(*first));
	queue = malloc((l->nslots ? l->nslots : 1) * sizeof(*queue));
	if (!e || !first || !queue)
		goto out;
	/* counting sort by parent: count, prefix sums, place (children keep worker order) */
	for (unsigned w = 0; w < l->nworkers; w++)
		for (size_t i = 0; i < l->edges[w].n; i++)
			first[l->edges[w].v[i].parent + 1]++;
	for (uint64_t s = 0; s < l->nslots; s++)
		first[s + 1] += first[s];
	for (unsigned w = 0; w < l->nworkers; w++) {
		for (size_t i = 0; i < l->edges[w].n; i++) {
			const struct link_edge *x = &l->edges[w].v[i];

			e[first[x->parent]++] = *x;
		}
		free(l->edges[w].v);
		l->edges[w] = (struct link_edges){ 0 };
	}
	/* placing advanced each parent's start to the next one's: shift back */
	for (uint64_t s = l->nslots; s > 0; s--)
		first[s] = first[s - 1];
	first[0] = 0;

	/*
	 * With AGs past the device's end unread, any inode may be named by a
	 * directory nobody read: reachability and link counts cannot be judged
	 * (phase 1 said so once).
	 */
	if (cx->ags_past_end) {
		err = 0;
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
		uint64_t s = queue[qh++];

		for (uint64_t i = first[s]; i < first[s + 1]; i++) {
			struct link_rec *c = &l->rec[e[i].child];

			if (c->flags & LR_REACHED)
				continue;
			c->flags |= LR_REACHED;
			if (c->type == XFS_DIR3_FT_DIR)
				queue[qt++] = e[i].child;
		}
	}

	for (uint64_t s = 0; s < l->nslots; s++) {
		struct link_rec *r = &l->rec[s];
		fs_agnumber_t agno;
		fs_ino_t ino;
		uint64_t want;

		if (!(r->flags & LR_SEEN) || (r->flags & LR_BAD))
			continue;
		ino = scan_slot_ino(cx, s, &agno);
		if (scan_is_metadata_ino(cx, ino) || r->nlink == 0)
			continue;
		if (!(r->flags & LR_REACHED)) {
			/*
			 * Grouped under their cause: all of them under the root
			 * when the root's entries are unknown; a directory under
			 * what its ancestry says; a file named by an unreachable
			 * directory later, from the edges; a file nobody names
			 * has no known cause.
			 */
			if (root_lost)
				report_unreachable(cx, s, (int64_t)g->rootino);
			else if (r->type == XFS_DIR3_FT_DIR)
				report_unreachable(cx, s, dir_cause(cx, s));
			else if (r->refs)
				files_named++;
			else
				report_unreachable(cx, s, FS_NONE);
			continue;
		}
		if (r->type == XFS_DIR3_FT_DIR) {
			bool is_root = ino == g->rootino;

			if (r->refs > 1 || (is_root && r->refs)) {
				fs_report(cx->fl, FS_C_DIR_HARDLINK, agno, FS_NONE, (int64_t)ino, "refs",
					  is_root ? "0" : "1", FS_U(r->refs),
					  "directory %llu is named by %u directory entries",
					  (unsigned long long)ino, r->refs);
				continue;
			}
			if (r->flags & LR_WALKED) {
				fs_ino_t parent = is_root ? ino : scan_slot_ino(cx, r->parent - 1, &agno);

				agno = fs_ino_to_agno(g, ino);
				if (r->dotdot != parent) {
					fs_report(cx->fl, FS_C_DIR_PARENT, agno, FS_NONE, (int64_t)ino, "..",
						  FS_U(parent), FS_U(r->dotdot),
						  "directory %llu's \"..\" names %llu, its parent is %llu",
						  (unsigned long long)ino, (unsigned long long)r->dotdot,
						  (unsigned long long)parent);
				}
				want = 2 + (uint64_t)r->subdirs;
			} else {
				continue;	/* its entries are unknown: no count to compare */
			}
		} else {
			want = r->refs;
		}
		if (want != r->nlink)
			fs_report(cx->fl, FS_C_INODE_NLINK, fs_ino_to_agno(g, ino), FS_NONE, (int64_t)ino,
				  "nlink", FS_U(want), FS_U(r->nlink),
				  "inode %llu has link count %u, directories reference it %llu times",
				  (unsigned long long)ino, r->nlink, (unsigned long long)want);
	}
	/* unreachable files named by unreachable directories: the cause is the directory's */
	for (uint64_t p = 0; p < l->nslots && files_named; p++) {
		int64_t cause = FS_NONE;
		bool known = false;

		for (uint64_t i = first[p]; i < first[p + 1] && files_named; i++) {
			uint64_t c = e[i].child;
			struct link_rec *r = &l->rec[c];
			fs_agnumber_t agno;

			if (!unreached(r) || r->type == XFS_DIR3_FT_DIR || !r->refs ||
			    (r->flags & LR_NOTED) || scan_is_metadata_ino(cx, scan_slot_ino(cx, c, &agno)))
				continue;
			if (!known) {
				cause = dir_cause(cx, p);
				if (cause == FS_NONE && unreached(&l->rec[p]))
					cause = (int64_t)scan_slot_ino(cx, p, &agno);
				known = true;
			}
			r->flags |= LR_NOTED;
			report_unreachable(cx, c, cause);
			files_named--;
		}
	}
	err = 0;
out:
	scan_progress_add(cx, 1);
	scan_progress_end(cx);
	if (!err && cx->keep_graph) {
		l->gfirst = first;
		l->gedge = e;
		first = NULL;
		e = NULL;
	}
	free(e);
	free(first);
	free(queue);
	return err;
}
