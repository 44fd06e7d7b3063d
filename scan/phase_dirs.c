// SPDX-License-Identifier: GPL-2.0
/*
 * Directories, walked in phase 5 (phase_blocks.c: the inode scan keeps a
 * copy of every directory inode whose core is sound, phase 5 reads each
 * batch's directory blocks ahead): each directory's data fork is decoded
 * and verified through libfs/format/dir.c (short form inline; block, leaf and
 * node forms block by block from the cache), and every live entry is
 * recorded in the directory graph (scan/links.h): the child must be an
 * allocated inode, its ftype must match its mode, references and
 * subdirectory counts are tallied, the edge kept for the links phase.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "scan/pptr.h"
#include "libfs/format/bmap.h"
#include "libfs/format/dir.h"
#include "libfs/format/inode.h"

struct dwalk {
	struct scan_ctx *cx;
	unsigned worker;
	uint64_t dslot;            /* the directory's slot */
	struct link_dir *dir;      /* its directory record */
	fs_ino_t dino;
	uint32_t dgen;             /* the directory's generation (parent pointers hold it) */
	fs_agnumber_t agno;
	const struct fs_bmap *map;
	int err;
	fs_dirent_fn user;         /* (scan_dir_entries) the caller's entry callback */
	void *user_priv;
};

static const char *ftype_name(uint8_t t)
{
	static const char *const names[] = { "unknown", "regular file", "directory", "char device",
					     "block device", "fifo", "socket", "symlink", "whiteout" };
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "invalid";
}

static void entry_name(char *buf, size_t size, const struct fs_dirent *d)
{
	snprintf(buf, size, "%.*s", d->namelen > 60 ? 60 : d->namelen, (const char *)d->name);
}

static int on_entry(void *priv, const struct fs_dirent *d)
{
	struct dwalk *w = priv;
	struct scan_ctx *cx = w->cx;
	struct scan_links *l = cx->links;
	uint64_t cs = scan_links_slot(cx, d->ino);
	struct link_rec *c;
	char name[64];

	if (cs == UINT64_MAX || !(l->rec[cs].flags & LR_SEEN)) {
		/* an inode in an AG past the device's end was never read: not judged */
		if (scan_ag_unread(cx, fs_ino_to_agno(&cx->fs->g, d->ino)))
			return 0;
		entry_name(name, sizeof(name), d);
		fs_report(cx->fl, FS_C_DIR_ENTRY_FREE, w->agno, d->daddr ? (int64_t)d->daddr : FS_NONE,
			  (int64_t)w->dino, name, "an allocated inode", FS_U(d->ino),
			  "directory entry \"%s\" names inode %llu, which is not in use", name,
			  (unsigned long long)d->ino);
		return 0;
	}
	c = &l->rec[cs];
	if (cx->fs->g.ftype && !(c->flags & LR_BAD) && d->ftype != c->type) {
		entry_name(name, sizeof(name), d);
		fs_report(cx->fl, FS_C_DIR_FTYPE, w->agno, d->daddr ? (int64_t)d->daddr : FS_NONE,
			  (int64_t)w->dino, name, ftype_name(c->type), ftype_name(d->ftype),
			  "directory entry \"%s\" says inode %llu is a %s, it is a %s", name,
			  (unsigned long long)d->ino, ftype_name(d->ftype), ftype_name(c->type));
	}
	/* xfs_repair's rule: the root's lost+found is a directory (it junks the entry) */
	if (w->dino == cx->fs->g.rootino && d->namelen == 10 &&
	    !memcmp(d->name, "lost+found", 10) && c->type != XFS_DIR3_FT_DIR &&
	    !(c->flags & LR_BAD))
		fs_report(cx->fl, FS_C_DIR_LOST_FOUND, w->agno, d->daddr ? (int64_t)d->daddr : FS_NONE,
			  (int64_t)w->dino, "lost+found", ftype_name(XFS_DIR3_FT_DIR),
			  ftype_name(c->type), "the root's entry \"lost+found\" names inode %llu, "
			  "a %s, not a directory", (unsigned long long)d->ino, ftype_name(c->type));
	/* the references are counted from the edges, in the links phase */
	if (c->type == XFS_DIR3_FT_DIR) {
		struct link_dir *cd = scan_link_dir(l, cs);
		uint32_t zero = 0;

		if (w->dir)
			w->dir->subdirs++;
		if (cd)
			__atomic_compare_exchange_n(&cd->parent, &zero, (uint32_t)w->dslot + 1,
						    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	if (cx->pptrs)
		scan_pptr_note_entry(cx, w->worker, (uint32_t)cs, w->dino, w->dgen, d->name,
				     d->namelen);
	/* spilling, only the entries naming directories stay in memory (links.h) */
	if (l->spill && c->type != XFS_DIR3_FT_DIR) {
		scan_links_spill_edge(l, w->worker, (uint32_t)w->dslot, (uint32_t)cs);
		return 0;
	}
	return scan_links_add_edge(&l->edges[w->worker], (uint32_t)cs);
}

/*
 * The pieces of directory block dablk: runs of contiguous fs blocks inside
 * one AG, each one cached buffer.  fn(priv, i, fsb, run) for the run that
 * starts i blocks into the directory block; a nonzero return stops.
 */
typedef int (*piece_fn)(void *priv, uint32_t i, fs_fsblock_t fsb, uint32_t run);

static int dirblk_pieces(const struct fs_geom *g, const struct fs_bmap *m, uint64_t dablk,
			 piece_fn fn, void *priv)
{
	for (uint32_t i = 0; i < g->dirblkfsbs;) {
		ssize_t k = fs_bmap_find(m, dablk + i);
		const struct fs_bmap_ext *x;
		fs_fsblock_t fsb;
		uint64_t run;
		int err;

		if (k < 0)
			return -ENODATA;
		x = &m->ext[k];
		fsb = x->startblock + (dablk + i - x->startoff);
		run = x->startoff + x->blockcount - (dablk + i);
		if (run > g->dirblkfsbs - i)
			run = g->dirblkfsbs - i;
		/* the run must stay inside one AG */
		if (!fs_fsb_valid(g, fsb) || !fs_fsb_valid(g, fsb + run - 1) ||
		    fs_fsb_to_agno(g, fsb) != fs_fsb_to_agno(g, fsb + run - 1))
			return -ERANGE;
		err = fn(priv, i, fsb, (uint32_t)run);
		if (err)
			return err;
		i += (uint32_t)run;
	}
	return 0;
}

struct piece_read {
	struct dwalk *w;
	unsigned char *out;
	fs_daddr_t *daddr;
};

static int read_piece(void *priv, uint32_t i, fs_fsblock_t fsb, uint32_t run)
{
	struct piece_read *p = priv;
	const struct fs_geom *g = &p->w->cx->fs->g;
	struct fs_buf *b;
	int err;

	if (i == 0)
		*p->daddr = fs_fsb_to_daddr(g, fsb);
	err = fs_cache_read(p->w->cx->cache, fs_fsb_to_daddr(g, fsb), run << g->blocklog, &b);
	if (err)
		return err;
	memcpy(p->out + ((size_t)i << g->blocklog), b->data, (size_t)run << g->blocklog);
	fs_buf_put(p->w->cx->cache, b);
	return 0;
}

/* One directory block, read from the cache piece by piece. */
static int read_dirblk(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	struct dwalk *w = priv;
	struct piece_read p = { .w = w, .out = buf, .daddr = daddr };

	return dirblk_pieces(&w->cx->fs->g, w->map, dablk, read_piece, &p);
}

/* Walk one directory (map: its data fork's, NULL for short form); its entries into the graph. */
static int dir_walk(struct scan_ag *s, const struct scan_inode *ci, const struct fs_bmap *map)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_geom *g = &cx->fs->g;
	struct link_rec *r = &cx->links->rec[ci->slot];
	const struct fs_inode *ip = &ci->ip;
	struct link_edges *edges = &cx->links->edges[s->worker % cx->links->nworkers];
	struct dwalk w = { .cx = cx, .worker = s->worker % cx->links->nworkers, .dslot = ci->slot,
			   .dir = scan_link_dir(cx->links, ci->slot), .dino = ci->ino,
			   .dgen = ci->ip.gen, .agno = ci->agno, .map = map };
	struct fs_dir_ctx dc = {
		.g = g, .fl = cx->fl, .ino = ci->ino, .agno = ci->agno,
		.have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn,
		.read = read_dirblk, .entry = on_entry, .priv = &w,
	};
	int n, err;

	if (ip->format != XFS_DINODE_FMT_LOCAL && !map)
		return 0;	/* the inode verifier reported the format, or the map did not load */
	/* its entries are one run of the worker's edges */
	scan_links_run_open(edges, (uint32_t)ci->slot);
	if (ip->format == XFS_DINODE_FMT_LOCAL) {
		n = fs_dir_sf_walk(&dc, fs_inode_fork_ptr(ci->dip, ip, XFS_DATA_FORK),
				   fs_inode_fork_size(g, ip, XFS_DATA_FORK), ip->size);
	} else {
		n = fs_dir_walk(&dc, map, ip->size);
		/* a map with findings (reported by the forks' checks) may hide entries */
		if (map->bad && n == 0)
			n = 1;
	}
	err = scan_links_run_close(edges);
	if (n < 0)
		return n;
	if (err)
		return err;
	if (w.dir)
		w.dir->dotdot = dc.parent;
	if (n == 0)
		r->flags |= LR_WALKED;
	s->dirs++;
	s->entries += dc.entries;
	return 0;
}

static int ra_piece(void *priv, uint32_t i, fs_fsblock_t fsb, uint32_t run)
{
	(void)i;
	return scan_ra_add(priv, fsb, run);
}

/* The directory blocks of a data fork map into l, until l holds budget bytes. */
static int dir_readahead(const struct fs_bmap *m, struct scan_ra_list *l, uint64_t budget)
{
	const struct fs_geom *g = l->g;
	uint64_t last = UINT64_MAX;

	for (size_t k = 0; k < m->n; k++) {
		const struct fs_bmap_ext *x = &m->ext[k];

		/* a mapping outside the filesystem (reported by the fork checks) has nothing to read */
		if (!x->blockcount || !fs_fsb_valid(g, x->startblock) ||
		    !fs_fsb_valid(g, x->startblock + x->blockcount - 1))
			continue;
		for (uint64_t b = 0; b < x->blockcount; b++) {
			uint64_t dablk = (x->startoff + b) / g->dirblkfsbs * g->dirblkfsbs;

			if (dablk == last)
				continue;
			last = dablk;
			if (l->bytes >= budget)
				return 0;
			if (dirblk_pieces(g, m, dablk, ra_piece, l) == -ENOMEM)
				return -ENOMEM;
		}
	}
	return 0;
}

static int user_entry(void *priv, const struct fs_dirent *d)
{
	const struct dwalk *w = priv;

	return w->user(w->user_priv, d);
}

int scan_dir_entries(struct scan_ctx *cx, fs_ino_t ino, const void *dip, struct fs_findings *fl,
		     int (*fn)(void *priv, const struct fs_dirent *e), void *priv,
		     fs_ino_t *dotdot)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_inode ip;
	struct fs_bmap m = { 0 };
	struct dwalk w = { .cx = cx, .dino = ino, .agno = fs_ino_to_agno(g, ino), .map = &m,
			   .user = fn, .user_priv = priv };
	struct fs_dir_ctx dc = {
		.g = g, .fl = fl, .ino = ino, .agno = w.agno,
		.have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn,
		.read = read_dirblk, .entry = user_entry, .priv = &w,
	};
	int n;

	fs_inode_decode(dip, &ip);
	if (ip.format == XFS_DINODE_FMT_LOCAL) {
		n = fs_dir_sf_walk(&dc, fs_inode_fork_ptr(dip, &ip, XFS_DATA_FORK),
				   fs_inode_fork_size(g, &ip, XFS_DATA_FORK), ip.size);
	} else {
		n = scan_load_map(cx, dip, &ip, XFS_DATA_FORK, NULL, &m);
		if (!n)
			n = fs_dir_walk(&dc, &m, ip.size);
		fs_bmap_free(&m);
	}
	*dotdot = dc.parent;
	return n;
}

/* ---- the step ---- */

/* The inode scan keeps every directory whose core is sound for phase 5. */
static void dirs_inode(struct scan_ag *s, const struct scan_inode *ci)
{
	if (ci->core_ok && S_ISDIR(ci->ip.mode)) {
		int err = scan_defer(s, ci, DEFER_DIR);

		if (err && !s->err)
			s->err = err;
	}
}

static bool has_blocks(const struct scan_inode *ci)
{
	return ci->ip.format == XFS_DINODE_FMT_EXTENTS || ci->ip.format == XFS_DINODE_FMT_BTREE;
}

static int dirs_readahead(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			  uint8_t what, struct scan_ra_list *l, uint64_t budget)
{
	const struct fs_bmap *m;
	int err = 0;

	(void)what;
	if (!has_blocks(ci))
		return 0;
	m = scan_maps_get(s->cx, ci, maps, XFS_DATA_FORK, &err);
	if (m)
		err = dir_readahead(m, l, budget);
	return err == -ENOMEM ? err : 0;
}

static int dirs_blocks(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
		       uint8_t what)
{
	const struct fs_bmap *m = NULL;
	int err = 0;

	(void)what;
	if (has_blocks(ci)) {
		m = scan_maps_get(s->cx, ci, maps, XFS_DATA_FORK, &err);
		if (err == -ENOMEM)
			return err;
	}
	return dir_walk(s, ci, m);
}

const struct scan_step scan_step_dirs = {
	.name = "dirs", .defer = DEFER_DIR, .stage = 1,
	.inode = dirs_inode, .readahead = dirs_readahead, .blocks = dirs_blocks,
};
