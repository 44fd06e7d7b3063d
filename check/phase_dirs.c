// SPDX-License-Identifier: GPL-2.0
/*
 * The directory phase (after the inodes): per AG on the worker pool, every
 * directory inode's data fork is decoded and verified through libfs/dir.c
 * (short form inline; block, leaf and node forms read block by block
 * through the cache along the fork's block map), and every live entry is
 * recorded in the directory graph (check/links.h): the child must be an
 * allocated inode, its ftype must match its mode, references and
 * subdirectory counts are tallied, the edge kept for the links phase.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/links.h"
#include "libfs/bmap.h"
#include "libfs/dir.h"
#include "libfs/inode.h"
#include "libfs/workq.h"

struct dwalk {
	struct check_ctx *cx;
	unsigned worker;
	uint64_t dslot;            /* the directory's slot */
	fs_ino_t dino;
	fs_agnumber_t agno;
	const struct fs_bmap *map;
	int err;
};

static const char *ftype_name(uint8_t t)
{
	static const char *const names[] = { "unknown", "regular file", "directory", "char device",
					     "block device", "fifo", "socket", "symlink", "whiteout" };
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "invalid";
}

static int add_edge(struct link_edges *a, uint32_t parent, uint32_t child)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		struct link_edge *nv = realloc(a->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = (struct link_edge){ parent, child };
	return 0;
}

static int on_entry(void *priv, const struct fs_dirent *d)
{
	struct dwalk *w = priv;
	struct check_ctx *cx = w->cx;
	struct check_links *l = cx->links;
	uint64_t cs = check_links_slot(cx, d->ino);
	struct link_rec *c;
	char name[64];

	snprintf(name, sizeof(name), "%.*s", d->namelen > 60 ? 60 : d->namelen,
		 (const char *)d->name);
	if (cs == UINT64_MAX || !(l->rec[cs].flags & LR_SEEN)) {
		fs_report(cx->fl, "dir.entry_free", w->agno, d->daddr ? (int64_t)d->daddr : FS_NONE,
			  (int64_t)w->dino, name, "an allocated inode", FS_U(d->ino),
			  "directory entry \"%s\" names inode %llu, which is not in use", name,
			  (unsigned long long)d->ino);
		return 0;
	}
	c = &l->rec[cs];
	if (cx->fs->g.ftype && !(c->flags & LR_BAD) && d->ftype != c->type) {
		fs_report(cx->fl, "dir.ftype", w->agno, d->daddr ? (int64_t)d->daddr : FS_NONE,
			  (int64_t)w->dino, name, ftype_name(c->type), ftype_name(d->ftype),
			  "directory entry \"%s\" says inode %llu is a %s, it is a %s", name,
			  (unsigned long long)d->ino, ftype_name(d->ftype), ftype_name(c->type));
	}
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	if (c->type == XFS_DIR3_FT_DIR) {
		uint32_t zero = 0;

		l->rec[w->dslot].subdirs++;
		__atomic_compare_exchange_n(&c->parent, &zero, (uint32_t)w->dslot + 1, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return add_edge(&l->edges[w->worker], (uint32_t)w->dslot, (uint32_t)cs);
}

static int read_fsb(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct dwalk *w = priv;
	const struct fs_geom *g = &w->cx->fs->g;

	if (!fs_fsb_valid(g, fsb))
		return -ERANGE;
	return check_read_agblock(w->cx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb), buf);
}

/* One directory block: from one cached read when its fs blocks are contiguous. */
static int read_dirblk(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	struct dwalk *w = priv;
	const struct fs_geom *g = &w->cx->fs->g;
	const struct fs_bmap *m = w->map;
	unsigned char *out = buf;

	for (uint32_t i = 0; i < g->dirblkfsbs;) {
		ssize_t k = fs_bmap_find(m, dablk + i);
		const struct fs_bmap_ext *x;
		fs_fsblock_t fsb;
		uint64_t run;
		struct fs_buf *b;
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
		if (i == 0)
			*daddr = fs_fsb_to_daddr(g, fsb);
		err = fs_cache_read(w->cx->cache, fs_fsb_to_daddr(g, fsb), (uint32_t)run << g->blocklog, &b);
		if (err)
			return err;
		memcpy(out + ((size_t)i << g->blocklog), b->data, (size_t)run << g->blocklog);
		fs_buf_put(w->cx->cache, b);
		i += (uint32_t)run;
	}
	return 0;
}

static int check_dir(struct check_ctx *cx, unsigned worker, fs_agnumber_t agno, fs_ino_t ino,
		     uint64_t slot, const void *dip)
{
	const struct fs_geom *g = &cx->fs->g;
	struct link_rec *r = &cx->links->rec[slot];
	struct fs_inode ip;
	struct dwalk w = { .cx = cx, .worker = worker, .dslot = slot, .dino = ino, .agno = agno };
	struct fs_dir_ctx dc = {
		.g = g, .fl = cx->fl, .ino = ino, .agno = agno,
		.have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn,
		.read = read_dirblk, .entry = on_entry, .priv = &w,
	};
	int n;

	fs_inode_decode(dip, &ip);
	if (ip.format == XFS_DINODE_FMT_LOCAL) {
		n = fs_dir_sf_walk(&dc, fs_inode_fork_ptr(dip, &ip, XFS_DATA_FORK),
				   fs_inode_fork_size(g, &ip, XFS_DATA_FORK), ip.size);
	} else if (ip.format == XFS_DINODE_FMT_EXTENTS || ip.format == XFS_DINODE_FMT_BTREE) {
		struct fs_bmap m = { 0 };
		struct fs_bmap_ctx bc = { .g = g, .fl = NULL, .have_log_head = cx->fs->have_log_head,
					  .head_lsn = cx->fs->log_head_lsn, .read_fsblock = read_fsb,
					  .priv = &w };
		int err = fs_bmap_load(&bc, dip, &ip, XFS_DATA_FORK, &m);

		if (err) {
			fs_bmap_free(&m);
			return err == -ENOMEM ? err : 0;
		}
		w.map = &m;
		n = fs_dir_walk(&dc, &m, ip.size);
		/* a map with findings (reported by the forks' checks) may hide entries */
		if (m.bad && n == 0)
			n = 1;
		fs_bmap_free(&m);
	} else {
		return 0;	/* the inode phase reported the format */
	}
	if (n < 0)
		return n;
	r->dotdot = dc.parent;
	if (n == 0)
		r->flags |= LR_WALKED;
	__atomic_add_fetch(&cx->links->dirs_walked, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cx->links->entries, dc.entries, __ATOMIC_RELAXED);
	return 0;
}

static int dirs_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct check_ctx *cx = priv;
	struct check_links *l = cx->links;
	const struct fs_geom *g = &cx->fs->g;
	size_t n;
	const struct model_ichunk *ic = model_ag_ichunks(cx->model, agno, &n);
	int err = 0;

	for (size_t k = 0; k < n && !err; k++) {
		uint64_t base = l->ag_base[agno] + (uint64_t)k * XFS_INODES_PER_CHUNK;

		for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK && !err; i++) {
			struct link_rec *r = &l->rec[base + i];
			fs_agino_t agino = ic[k].startino + i;
			struct fs_buf *b;
			size_t off;

			if (!(r->flags & LR_SEEN) || (r->flags & LR_BAD) || r->type != XFS_DIR3_FT_DIR)
				continue;
			if (check_inode_get(cx, agno, agino, &b, &off))
				continue;
			err = check_dir(cx, worker % l->nworkers, agno, fs_agino_to_ino(g, agno, agino),
					base + i, b->data + off);
			fs_buf_put(cx->cache, b);
		}
	}
	check_progress_add(cx, 1);
	return err;
}

int check_phase_dirs(struct check_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	int err;

	if (!cx->links)
		return 0;
	check_progress_phase(cx, "directories", g->agcount);
	err = fs_ag_workq_run(&wo, dirs_ag, cx);
	check_progress_end(cx);
	return err;
}
