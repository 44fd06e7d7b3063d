// SPDX-License-Identifier: GPL-2.0
/*
 * Xattrs, symlinks and special files.  A per-inode step of the inode scan
 * (phase 4) checks the shape of device/fifo/socket inodes and short form
 * attrs; the attr fork's DA tree (from block 0 through its nodes and
 * leaves to the remote values, plus every mapped block reached) and remote
 * symlink targets are checked in phase 5 (phase_blocks.c), once their
 * blocks are read ahead.  Inodes whose core failed the verifier are
 * skipped: their forks cannot be trusted.  (Phase 7, the unlinked lists
 * and the quota and realtime inodes, is phase_unlinked.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "libfs/format/attr.h"
#include "libfs/format/bmap.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/pptr.h"
#include "libfs/format/symlink.h"
#include "scan/pptr.h"
#include "libfs/util/u32set.h"
#include "libfs/util/vec.h"

/* ---- reading fork blocks through the shared cache ---- */


/* ---- the attr fork's DA tree ---- */

struct attr_walk {
	struct scan_ctx *cx;
	fs_ino_t ino;
	uint64_t slot;             /* its link record */
	unsigned worker;
	const struct fs_bmap *map;
	struct fs_u32set seen;        /* attr fork blocks reached */
	uint8_t *buf;              /* one block */
	uint32_t hi;               /* fork blocks are below this */
	/* the previous block of each level (0 = leaves), for the sibling chains */
	bool have_prev[XFS_DA_NODE_MAXDEPTH + 1];
	uint32_t prev[XFS_DA_NODE_MAXDEPTH + 1], prev_forw[XFS_DA_NODE_MAXDEPTH + 1];
	uint64_t prev_daddr[XFS_DA_NODE_MAXDEPTH + 1];
	bool have_last_hash;
	uint32_t last_hash;        /* highest hash of the leaves so far */
	bool broken;               /* a block failed: what it points to was not visited */
};

/* Read fork block dablk into w->buf; false (reported) when it cannot be. */
static bool attr_read(struct attr_walk *w, uint32_t dablk, fs_fsblock_t *fsb, const char *what)
{
	struct scan_ctx *cx = w->cx;
	const struct fs_geom *g = &cx->fs->g;

	if (!fs_bmap_fsb(g, w->map, dablk, fsb)) {
		fs_report(cx->fl, w->map->bad ? FS_C_ATTR_UNREADABLE : FS_C_ATTR_TREE, FS_NONE, FS_NONE,
			  (int64_t)w->ino, "dablk", "a mapped block", FS_U(dablk),
			  "inode %llu: attr fork block %u (%s) is not mapped",
			  (unsigned long long)w->ino, dablk, what);
		return false;
	}
	if (scan_read_agblock(cx, fs_fsb_to_agno(g, *fsb), fs_fsb_to_agbno(g, *fsb), w->buf)) {
		fs_report(cx->fl, FS_C_ATTR_UNREADABLE, fs_fsb_to_agno(g, *fsb),
			  (int64_t)fs_fsb_to_daddr(g, *fsb), (int64_t)w->ino, NULL, NULL, NULL,
			  "inode %llu: attr fork block %u could not be read",
			  (unsigned long long)w->ino, dablk);
		return false;
	}
	return true;
}

/* The sibling chain of a level: this block follows the previous one. */
static void attr_sibling(struct attr_walk *w, unsigned level, uint32_t dablk, fs_fsblock_t fsb,
			 uint32_t forw, uint32_t back)
{
	struct scan_ctx *cx = w->cx;
	const struct fs_geom *g = &cx->fs->g;
	enum fs_code code = level ? FS_C_DA_SIBLING : FS_C_ATTR_SIBLING;
	uint32_t want_back = w->have_prev[level] ? w->prev[level] : 0;

	if (back != want_back)
		fs_report(cx->fl, code, fs_fsb_to_agno(g, fsb), (int64_t)fs_fsb_to_daddr(g, fsb),
			  (int64_t)w->ino, "info.back", FS_U(want_back), FS_U(back),
			  "inode %llu: attr block %u back pointer is not the block before it",
			  (unsigned long long)w->ino, dablk);
	if (w->have_prev[level] && w->prev_forw[level] != dablk)
		fs_report(cx->fl, code, FS_NONE, (int64_t)w->prev_daddr[level], (int64_t)w->ino,
			  "info.forw", FS_U(dablk), FS_U(w->prev_forw[level]),
			  "inode %llu: attr block %u forward pointer is not the block after it",
			  (unsigned long long)w->ino, w->prev[level]);
	w->have_prev[level] = true;
	w->prev[level] = dablk;
	w->prev_forw[level] = forw;
	w->prev_daddr[level] = fs_fsb_to_daddr(g, fsb);
}

/* A remote value: its blocks mapped, each header the piece of the value it should be. */
static void attr_remote_value(struct attr_walk *w, const struct fs_attr_ent *e, uint32_t dablk)
{
	struct scan_ctx *cx = w->cx;
	const struct fs_geom *g = &cx->fs->g;
	uint32_t space = g->blocksize - sizeof(struct xfs_attr3_rmt_hdr);
	uint32_t nblocks = fs_attr_rmt_blocks(g, e->valuelen);

	for (uint32_t i = 0; i < nblocks; i++) {
		uint64_t blk = (uint64_t)e->valueblk + i;
		uint32_t want_off = i * space;
		uint32_t want_bytes = e->valuelen - want_off < space ? e->valuelen - want_off : space;
		struct fs_attr_rmt_hdr h;
		struct fs_vctx c;
		fs_fsblock_t fsb;

		if (blk >= w->hi || !fs_bmap_fsb(g, w->map, blk, &fsb)) {
			fs_report(cx->fl, FS_C_ATTR_REMOTE, FS_NONE, FS_NONE, (int64_t)w->ino, "valueblk",
				  "mapped value blocks", FS_U(blk),
				  "inode %llu: remote value of the entry in attr block %u misses "
				  "block %u of %u", (unsigned long long)w->ino, dablk, i, nblocks);
			return;
		}
		if (fs_u32set_add(&w->seen, (uint32_t)blk) == 0) {
			fs_report(cx->fl, FS_C_ATTR_REMOTE, fs_fsb_to_agno(g, fsb),
				  (int64_t)fs_fsb_to_daddr(g, fsb), (int64_t)w->ino, "valueblk", NULL,
				  FS_U(blk), "inode %llu: attr fork block %llu is used twice (remote "
				  "value of the entry in attr block %u)", (unsigned long long)w->ino,
				  (unsigned long long)blk, dablk);
			return;
		}
		if (scan_read_agblock(cx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb), w->buf)) {
			fs_report(cx->fl, FS_C_ATTR_UNREADABLE, fs_fsb_to_agno(g, fsb),
				  (int64_t)fs_fsb_to_daddr(g, fsb), (int64_t)w->ino, NULL, NULL, NULL,
				  "inode %llu: remote attr value block could not be read",
				  (unsigned long long)w->ino);
			return;
		}
		c = scan_vctx(cx, w->ino, fsb);
		if (fs_verify(FS_MT_ATTR_RMT, &c, w->buf, g->blocksize))
			continue;
		fs_attr_rmt_hdr_decode(w->buf, &h);
		if (h.offset != want_off)
			fs_report(cx->fl, FS_C_ATTRRMT_OFFSET, c.agno, (int64_t)c.daddr, (int64_t)w->ino,
				  "rm_offset", FS_U(want_off), FS_U(h.offset),
				  "inode %llu: remote attr value block %u of %u has the wrong offset",
				  (unsigned long long)w->ino, i, nblocks);
		if (h.bytes != want_bytes)
			fs_report(cx->fl, FS_C_ATTRRMT_BYTES, c.agno, (int64_t)c.daddr, (int64_t)w->ino,
				  "rm_bytes", FS_U(want_bytes), FS_U(h.bytes),
				  "inode %llu: remote attr value block %u of %u has the wrong length",
				  (unsigned long long)w->ino, i, nblocks);
	}
}

/* The parent pointers of a leaf that passed its field rules, as link keys. */
static void note_leaf_pptrs(struct attr_walk *w, const struct fs_attr_leaf_hdr *h)
{
	const struct fs_geom *g = &w->cx->fs->g;

	for (uint32_t i = 0; i < h->count; i++) {
		struct fs_attr_ent e;
		struct fs_pptr p;

		if (fs_attr_leaf_entry(w->buf, g->blocksize, h, i, &e) && fs_attr_is_pptr(&e) &&
		    fs_pptr_decode(g, &e, &p) == FS_PPTR_OK)
			scan_pptr_note_ptr(w->cx, w->worker, w->slot, &p);
	}
}

static uint32_t da_hash(const uint8_t *name, int len)
{
	return fs_da_hashname(name, (size_t)len);
}

/*
 * Visit fork block dablk expected at level (-1: the root, either kind).
 * *maxhash gets the highest hash under it; false when it could not be
 * judged (then the parent's key is not compared).
 */
static bool attr_visit(struct attr_walk *w, uint32_t dablk, int level, unsigned depth,
		       uint32_t *maxhash)
{
	struct scan_ctx *cx = w->cx;
	const struct fs_geom *g = &cx->fs->g;
	fs_fsblock_t fsb;
	struct fs_vctx c;
	uint16_t magic;
	int r;

	r = fs_u32set_add(&w->seen, dablk);
	if (r <= 0) {
		if (r == 0)
			fs_report(cx->fl, FS_C_DA_LOOP, FS_NONE, FS_NONE, (int64_t)w->ino, "dablk", NULL,
				  FS_U(dablk), "inode %llu: attr fork block %u is reached twice",
				  (unsigned long long)w->ino, dablk);
		{ w->broken = true; return false; }
	}
	if (!attr_read(w, dablk, &fsb, level > 0 ? "node" : "leaf"))
		{ w->broken = true; return false; }
	c = scan_vctx(cx, w->ino, fsb);
	magic = get_be16(w->buf + offsetof(struct xfs_da_blkinfo, magic));

	if (magic == XFS_DA3_NODE_MAGIC && level != 0 && depth < XFS_DA_NODE_MAXDEPTH) {
		struct fs_da_node n;
		bool all = true;

		if (fs_verify(FS_MT_DA_NODE, &c, w->buf, g->blocksize) ||
		    fs_da3_node_decode(w->buf, g->blocksize, &n))
			{ w->broken = true; return false; }
		if (level > 0 && n.level != level) {
			fs_report(cx->fl, FS_C_DA_LEVEL, c.agno, (int64_t)c.daddr, (int64_t)w->ino,
				  "hdr.level", FS_U(level), FS_U(n.level),
				  "inode %llu: attr node block %u level is wrong for its place",
				  (unsigned long long)w->ino, dablk);
			{ w->broken = true; return false; }
		}
		if (fs_da3_node_check_ptrs(&c, &n, dablk, 0, w->hi))
			{ w->broken = true; return false; }
		attr_sibling(w, n.level, dablk, fsb, n.forw, n.back);
		/* n.ents points into w->buf, which the children reuse: copy them first */
		uint32_t cnt = n.count, *hash = malloc(cnt * 2 * sizeof(uint32_t));
		if (!hash)
			{ w->broken = true; return false; }
		for (uint32_t i = 0; i < cnt; i++) {
			hash[2 * i] = fs_da_node_hash(&n, i);
			hash[2 * i + 1] = fs_da_node_before(&n, i);
		}
		uint64_t node_daddr = c.daddr;
		fs_agnumber_t node_ag = c.agno;
		unsigned nlevel = n.level;
		for (uint32_t i = 0; i < cnt; i++) {
			uint32_t child_max;

			if (attr_visit(w, hash[2 * i + 1], (int)nlevel - 1, depth + 1, &child_max) &&
			    child_max != hash[2 * i]) {
				char fld[32];

				snprintf(fld, sizeof(fld), "btree[%u].hashval", i);
				fs_report(cx->fl, FS_C_DA_HASH, node_ag, (int64_t)node_daddr, (int64_t)w->ino,
					  fld, FS_X(child_max), FS_X(hash[2 * i]),
					  "inode %llu: attr node block %u key %u is not its child's "
					  "highest hash", (unsigned long long)w->ino, dablk, i);
				all = false;
			}
		}
		*maxhash = hash[2 * (cnt - 1)];
		free(hash);
		(void)all;
		return true;
	}
	if (magic == XFS_ATTR3_LEAF_MAGIC && level <= 0) {
		struct fs_attr_leaf_hdr h;
		uint32_t count;
		struct {
			struct fs_attr_ent e;
		} *rmt = NULL;
		size_t nrmt = 0, caprmt = 0;
		bool ok = true;

		if (fs_verify(FS_MT_ATTR_LEAF, &c, w->buf, g->blocksize))
			ok = false;
		fs_attr_leaf_verify_hashes(&c, w->buf, g->blocksize, da_hash);
		if (!ok)
			{ w->broken = true; return false; }
		fs_attr_leaf_hdr_decode(w->buf, g->blocksize, &h);
		attr_sibling(w, 0, dablk, fsb, h.forw, h.back);
		count = h.count;
		if (cx->pptrs)
			note_leaf_pptrs(w, &h);
		if (count == 0 && dablk != 0)
			fs_report(cx->fl, FS_C_ATTR_COUNT, c.agno, (int64_t)c.daddr, (int64_t)w->ino,
				  "count", "at least 1", "0",
				  "inode %llu: attr leaf block %u below the root is empty",
				  (unsigned long long)w->ino, dablk);
		*maxhash = 0;
		if (count) {
			struct fs_attr_ent first, last;

			fs_attr_leaf_entry(w->buf, g->blocksize, &h, 0, &first);
			fs_attr_leaf_entry(w->buf, g->blocksize, &h, count - 1, &last);
			if (w->have_last_hash && first.hash < w->last_hash)
				fs_report(cx->fl, FS_C_ATTR_ORDER, c.agno, (int64_t)c.daddr, (int64_t)w->ino,
					  "entries[0].hashval", "at least the previous leaf's last hash",
					  FS_X(first.hash), "inode %llu: attr leaf block %u starts below "
					  "the previous leaf's hashes", (unsigned long long)w->ino, dablk);
			w->have_last_hash = true;
			w->last_hash = last.hash;
			*maxhash = last.hash;
		}
		/* the remote values read into w->buf too: collect the entries first */
		for (uint32_t i = 0; i < count; i++) {
			struct fs_attr_ent e;

			if (!fs_attr_leaf_entry(w->buf, g->blocksize, &h, i, &e) || e.local ||
			    (e.flags & XFS_ATTR_INCOMPLETE))
				continue;
			if (FS_VEC_ROOM(rmt, nrmt, caprmt, 8))
				break;
			rmt[nrmt].e = e;
			rmt[nrmt].e.name = NULL;
			nrmt++;
		}
		for (size_t i = 0; i < nrmt; i++)
			attr_remote_value(w, &rmt[i].e, dablk);
		free(rmt);
		return count != 0;
	}
	/* neither: report against what the place needs */
	if (level > 0)
		fs_report(cx->fl, FS_C_ATTR_TREE, c.agno, (int64_t)c.daddr, (int64_t)w->ino, "magic",
			  FS_X(XFS_DA3_NODE_MAGIC), FS_X(magic),
			  "inode %llu: attr fork block %u should be a node block",
			  (unsigned long long)w->ino, dablk);
	else if (magic == XFS_DA3_NODE_MAGIC)
		fs_report(cx->fl, FS_C_ATTR_TREE, c.agno, (int64_t)c.daddr, (int64_t)w->ino, "magic",
			  FS_X(XFS_ATTR3_LEAF_MAGIC), FS_X(magic),
			  "inode %llu: attr fork block %u is a node where a leaf belongs",
			  (unsigned long long)w->ino, dablk);
	else
		fs_verify(FS_MT_ATTR_LEAF, &c, w->buf, g->blocksize);	/* says: magic */
	{ w->broken = true; return false; }
}

/* Report mapped attr fork blocks the walk never reached, one finding per run. */
static void attr_unreached(struct attr_walk *w)
{
	struct scan_ctx *cx = w->cx;
	const struct fs_geom *g = &cx->fs->g;
	uint64_t budget = 1u << 20;	/* blocks looked at, for maps a hostile fork makes huge */

	for (size_t i = 0; i < w->map->n; i++) {
		const struct fs_bmap_ext *x = &w->map->ext[i];

		for (uint64_t b = 0; b < x->blockcount && budget; b++, budget--) {
			uint64_t run = 0;

			while (b + run < x->blockcount && x->startoff + b + run < w->hi &&
			       !fs_u32set_has(&w->seen, (uint32_t)(x->startoff + b + run)))
				run++;
			if (!run)
				continue;
			fs_report(cx->fl, FS_C_ATTR_UNREACHABLE, fs_fsb_to_agno(g, x->startblock + b),
				  fs_fsb_valid(g, x->startblock + b) ?
				  (int64_t)fs_fsb_to_daddr(g, x->startblock + b) : FS_NONE,
				  (int64_t)w->ino, "dablk", "a tree or value block",
				  FS_U(x->startoff + b),
				  "inode %llu: attr fork blocks %llu..%llu are mapped but not in use",
				  (unsigned long long)w->ino, (unsigned long long)(x->startoff + b),
				  (unsigned long long)(x->startoff + b + run - 1));
			b += run;
		}
	}
}

static int check_attr_blocks(struct scan_ctx *cx, const struct scan_inode *ci,
			     struct scan_maps *maps, unsigned worker)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_ino_t ino = ci->ino;
	struct attr_walk w = { .cx = cx, .ino = ino, .slot = ci->slot, .worker = worker };
	const struct fs_bmap *m;
	uint32_t maxhash;
	int err = 0;

	m = scan_maps_get(cx, ci, maps, XFS_ATTR_FORK, &err);
	if (!m) {
		scan_pptr_note_unknown(cx, ci->slot);
		return err == -ENOMEM ? err : 0;	/* the forks step reported a bad map */
	}
	if (m->n == 0)
		goto out;	/* an empty attr fork (the inode verifier judges the counts) */
	w.map = m;
	w.hi = m->ext[m->n - 1].startoff + m->ext[m->n - 1].blockcount > UINT32_MAX ? UINT32_MAX :
	       (uint32_t)(m->ext[m->n - 1].startoff + m->ext[m->n - 1].blockcount);
	w.buf = malloc(g->blocksize);
	if (!w.buf) {
		err = -ENOMEM;
		goto out;
	}
	attr_visit(&w, 0, -1, 0, &maxhash);
	for (unsigned l = 0; l <= XFS_DA_NODE_MAXDEPTH; l++)
		if (w.have_prev[l] && w.prev_forw[l] != 0)
			fs_report(cx->fl, l ? FS_C_DA_SIBLING : FS_C_ATTR_SIBLING, FS_NONE,
				  (int64_t)w.prev_daddr[l], (int64_t)ino, "info.forw", "0",
				  FS_U(w.prev_forw[l]), "inode %llu: the last attr block of level %u "
				  "has a forward pointer", (unsigned long long)ino, l);
	if (!m->bad && !w.broken)
		attr_unreached(&w);
	else
		scan_pptr_note_unknown(cx, ci->slot);	/* some leaves' pointers were not read */
out:
	free(w.buf);
	fs_u32set_free(&w.seen);
	return err;
}

/* ---- symlinks ---- */

/*
 * The kernel writes a remote target one mapping at a time: each extent is
 * one buffer with one header, its CRC over the whole extent.  A target is
 * at most 1023 bytes, so a few blocks of the smallest size hold it.
 */
#define SYMLINK_MAX_BLOCKS 4

static int check_symlink_blocks(struct scan_ctx *cx, const struct scan_inode *ci,
				struct scan_maps *maps)
{
	const struct fs_geom *g = &cx->fs->g;
	const struct fs_inode *ip = &ci->ip;
	fs_ino_t ino = ci->ino;
	uint32_t space = fs_symlink_block_space(g), done = 0, nblocks;
	uint64_t next_off = 0;
	const struct fs_bmap *m;
	uint8_t *buf;
	int err = 0;

	if (ip->size == 0 || ip->size >= XFS_SYMLINK_MAXLEN) {
		fs_report(cx->fl, FS_C_SYMLINK_SIZE, fs_ino_to_agno(g, ino), FS_NONE, (int64_t)ino,
			  "di_size", "1..1023", FS_U(ip->size),
			  "inode %llu: remote symlink target length is impossible",
			  (unsigned long long)ino);
		return 0;
	}
	m = scan_maps_get(cx, ci, maps, XFS_DATA_FORK, &err);
	if (!m)
		return err == -ENOMEM ? err : 0;
	nblocks = (uint32_t)((ip->size + space - 1) / space);
	if (!m->bad && fs_bmap_blocks(m) != nblocks) {
		fs_report(cx->fl, FS_C_SYMLINK_SIZE, fs_ino_to_agno(g, ino), FS_NONE, (int64_t)ino,
			  "di_nblocks", FS_U(nblocks), FS_U(fs_bmap_blocks(m)),
			  "inode %llu: remote symlink maps a number of blocks its size does not need",
			  (unsigned long long)ino);
		return 0;
	}
	buf = malloc((size_t)SYMLINK_MAX_BLOCKS << g->blocklog);
	for (size_t i = 0; buf && i < m->n && done < ip->size; i++) {
		const struct fs_bmap_ext *x = &m->ext[i];
		size_t len = (size_t)x->blockcount << g->blocklog;
		struct fs_vctx c;
		bool readable = true;

		if (x->startoff != next_off || x->blockcount > SYMLINK_MAX_BLOCKS)
			break;	/* a hole or a huge extent: the block count above disagrees */
		next_off += x->blockcount;
		for (uint64_t b = 0; b < x->blockcount && readable; b++) {
			fs_fsblock_t fsb = x->startblock + b;

			readable = fs_fsb_valid(g, fsb) &&
				   !scan_read_agblock(cx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb),
						       buf + (b << g->blocklog));
		}
		if (!readable) {
			fs_report(cx->fl, FS_C_SYMLINK_UNREADABLE, FS_NONE, FS_NONE, (int64_t)ino, NULL,
				  NULL, NULL, "inode %llu: remote symlink extent %zu could not be read",
				  (unsigned long long)ino, i);
			break;
		}
		c = scan_vctx(cx, ino, x->startblock);
		if (fs_verify(FS_MT_SYMLINK, &c, buf, len))
			break;
		if (fs_symlink_rmt_verify_piece(&c, buf, len, ip->size, &done))
			break;
	}
	free(buf);
	return 0;
}

/* ---- one inode, during the inode scan ---- */

static bool is_special(uint16_t mode)
{
	return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode);
}

struct sf_pptrs {
	struct scan_ctx *cx;
	uint64_t slot;
	unsigned worker;
};

/* A short form entry that passed its rules: a parent pointer becomes a link key. */
static void sf_pptr(void *priv, const struct fs_attr_ent *e)
{
	struct sf_pptrs *sp = priv;
	struct fs_pptr p;

	if (fs_attr_is_pptr(e) && fs_pptr_decode(&sp->cx->fs->g, e, &p) == FS_PPTR_OK)
		scan_pptr_note_ptr(sp->cx, sp->worker, sp->slot, &p);
}

static void attrs_inode(struct scan_ag *s, const struct scan_inode *ci)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_inode *ip = &ci->ip;
	bool remote_link = S_ISLNK(ip->mode) && ip->format != XFS_DINODE_FMT_LOCAL;
	bool attrs = ip->forkoff != 0, attr_blocks;
	struct fs_vctx c = {
		.g = &cx->fs->g, .fl = cx->fl, .agno = ci->agno, .daddr = ci->daddr, .ino = ci->ino,
	};

	if (!remote_link && !attrs && !is_special(ip->mode))
		return;
	if (!ci->core_ok)
		return;	/* reported by the inode verifier; the forks mean nothing */
	if (is_special(ip->mode))
		fs_special_verify(&c, ip);
	if (attrs && ip->aformat == XFS_DINODE_FMT_LOCAL) {
		struct sf_pptrs sp = { .cx = cx, .slot = ci->slot, .worker = s->worker };

		if (fs_attr_sf_verify(&c, fs_inode_fork_ptr(ci->dip, ip, XFS_ATTR_FORK),
				      fs_inode_fork_size(&cx->fs->g, ip, XFS_ATTR_FORK),
				      cx->pptrs ? sf_pptr : NULL, &sp))
			scan_pptr_note_unknown(cx, ci->slot);
	}
	/*
	 * Blocks outside the inode are read in phase 5, ahead, in batches.
	 * An attr fork in extents format with no extents has none (the
	 * kernel leaves such empty forks behind on many files).
	 */
	attr_blocks = attrs && (ip->aformat == XFS_DINODE_FMT_BTREE ||
				(ip->aformat == XFS_DINODE_FMT_EXTENTS && ip->anextents));
	if (remote_link || attr_blocks) {
		int err = scan_defer(s, ci, (remote_link ? DEFER_SYMLINK : 0) |
				      (attr_blocks ? DEFER_ATTR : 0));

		if (err && !s->err)
			s->err = err;
	}
}

/* Phase 5, stage 1: the remote symlink's and the attr fork's blocks, into the batch's readahead. */
static int attrs_readahead(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			   uint8_t what, struct scan_ra_list *l, uint64_t budget)
{
	uint8_t fmt = ci->ip.format;
	int err = 0;

	if ((what & DEFER_SYMLINK) &&
	    (fmt == XFS_DINODE_FMT_EXTENTS || fmt == XFS_DINODE_FMT_BTREE)) {
		const struct fs_bmap *m = scan_maps_get(s->cx, ci, maps, XFS_DATA_FORK, &err);

		if (m)
			err = scan_ra_map(m, l, budget);
	}
	if ((what & DEFER_ATTR) && err != -ENOMEM) {
		const struct fs_bmap *m = scan_maps_get(s->cx, ci, maps, XFS_ATTR_FORK, &err);

		if (m)
			err = scan_ra_map(m, l, budget);
	}
	return err == -ENOMEM ? err : 0;
}

static int attrs_blocks(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			uint8_t what)
{
	int err = 0;

	if (what & DEFER_SYMLINK)
		err = check_symlink_blocks(s->cx, ci, maps);
	if (!err && (what & DEFER_ATTR))
		err = check_attr_blocks(s->cx, ci, maps, s->worker);
	return err;
}

const struct scan_step scan_step_attrs = {
	.name = "attrs", .defer = DEFER_ATTR | DEFER_SYMLINK, .stage = 1,
	.inode = attrs_inode, .readahead = attrs_readahead, .blocks = attrs_blocks,
};
