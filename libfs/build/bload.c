// SPDX-License-Identifier: GPL-2.0
/*
 * The btree bulk loader, one for every tree of the ops tables: the level
 * geometry for a record count and slack, then the blocks, leaves first,
 * each level built from the first (and, for overlapping trees, highest)
 * keys of the level below, siblings linked, headers and CRCs set, handed
 * to the caller's writer.  A bmbt's root goes into the inode fork (bmdr
 * format), or the records themselves when they fit there as extents.
 * As xfs_repair's phase 5 and the kernel's xfs_btree_bload do it; the
 * code is ours.
 */
#include "libfs/build/bload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/bmap.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"

#define KEYMAX 64

static size_t entry_keys_len(const struct fs_btree_ops *ops)
{
	return (size_t)ops->key_len * (ops->overlapping ? 2 : 1);
}

/* Slots a block keeps empty: the caller's, or about a quarter; never below half full. */
static uint32_t slack_of(int slack, uint32_t maxr)
{
	uint32_t minr = maxr / 2;
	uint32_t s = slack < 0 ? maxr - (maxr + minr) / 2 : (uint32_t)slack;

	return s > maxr - minr ? maxr - minr : s;
}

/*
 * Blocks for nr entries of one level: enough that none holds more than
 * fill, unless that would leave blocks under half full (the shape rules
 * want at least maxr/2 in every block but the root); never more than maxr.
 */
static uint64_t level_nblocks(uint64_t nr, uint32_t maxr, uint32_t fill)
{
	uint32_t minr = maxr / 2;
	uint64_t nb = (nr + fill - 1) / fill;

	if (nb == 0)
		return 1;
	while (nb > 1 && nr / nb < minr)
		nb--;
	while ((nr + nb - 1) / nb > maxr)
		nb++;
	return nb;
}

/* Entries of block i when nr entries spread over nb blocks: the first ones take the remainder. */
static uint32_t block_entries(uint64_t nr, uint64_t nb, uint64_t i)
{
	return (uint32_t)(nr / nb + (i < nr % nb ? 1 : 0));
}

static uint32_t bmdr_maxrecs(const struct fs_btree_ops *ops, uint32_t fork_size)
{
	if (fork_size < sizeof(struct xfs_bmdr_block) + ops->key_len + ops->ptr_len)
		return 0;
	return (fork_size - (uint32_t)sizeof(struct xfs_bmdr_block)) /
	       (uint32_t)(ops->key_len + ops->ptr_len);
}

int fs_bload_compute_geometry(const struct fs_btree_ops *ops, uint32_t blocksize, uint64_t nrecs,
			      const struct fs_bload_slack *slack, uint32_t fork_size,
			      struct fs_bload_geom *out)
{
	struct fs_bload_slack dflt = { -1, -1 };
	uint32_t root_max = 0;
	uint64_t nr = nrecs;

	memset(out, 0, sizeof(*out));
	if (!ops || !ops->rec_len || !ops->key_len || !ops->ptr_len || ops->key_len > KEYMAX)
		return -EINVAL;
	if (!slack)
		slack = &dflt;
	out->leaf_max = fs_btree_maxrecs(ops, blocksize, true);
	out->node_max = fs_btree_maxrecs(ops, blocksize, false);
	if (out->leaf_max < 2 || out->node_max < 2 || out->leaf_max > UINT16_MAX ||
	    out->node_max > UINT16_MAX)
		return -EINVAL;
	out->leaf_fill = out->leaf_max - slack_of(slack->leaf, out->leaf_max);
	out->node_fill = out->node_max - slack_of(slack->node, out->node_max);
	if (ops->long_format) {
		root_max = bmdr_maxrecs(ops, fork_size);
		if (!root_max)
			return -EINVAL;
		if (nrecs <= fork_size / ops->rec_len) {
			out->fork_extents = true;
			out->root_entries = (uint32_t)nrecs;
			return 0;
		}
		out->root_in_fork = true;
	}
	for (uint32_t level = 0;; level++) {
		uint32_t maxr = level ? out->node_max : out->leaf_max;
		uint32_t fill = level ? out->node_fill : out->leaf_fill;
		uint64_t nb;

		if (level + (ops->long_format ? 2 : 1) > FS_BLOAD_MAXLEVELS)
			return -EFBIG;
		nb = level_nblocks(nr, maxr, fill);
		out->level_blocks[level] = nb;
		out->nblocks += nb;
		if (ops->long_format && nb <= root_max) {
			/* the level above is the root in the inode */
			out->nlevels = level + 2;
			out->root_entries = (uint32_t)nb;
			return 0;
		}
		if (!ops->long_format && nb == 1) {
			out->nlevels = level + 1;
			out->root_entries = (uint32_t)nr;
			return 0;
		}
		nr = nb;
	}
}

/* ---- the build ---- */

/* One level's blocks as their parents see them: pointer, low key, high key. */
struct lvl {
	uint64_t n;
	uint64_t *ptr;
	unsigned char *lo, *hi;    /* n * key_len each (hi: overlapping trees only) */
};

static void lvl_free(struct lvl *l)
{
	free(l->ptr);
	free(l->lo);
	free(l->hi);
	memset(l, 0, sizeof(*l));
}

static int lvl_alloc(struct fs_bload *b, struct lvl *l, uint64_t n)
{
	const struct fs_btree_ops *ops = b->ops;
	const struct fs_geom *g = b->g;

	l->n = n;
	l->ptr = calloc(n, sizeof(*l->ptr));
	l->lo = calloc(n, ops->key_len);
	l->hi = ops->overlapping ? calloc(n, ops->key_len) : NULL;
	if (!l->ptr || !l->lo || (ops->overlapping && !l->hi))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		int err = b->alloc_block(b->priv, &l->ptr[i]);
		uint64_t p = l->ptr[i];

		if (err)
			return err;
		if (ops->long_format ? !fs_fsb_valid(g, p) || fs_fsb_to_agbno(g, p) < g->ag_hdr_blocks :
		    p < g->ag_hdr_blocks || p >= fs_ag_blocks(g, b->agno))
			return -EINVAL;
	}
	return 0;
}

static void enc_header(const struct fs_bload *b, void *buf, uint32_t level, uint32_t n,
		       const struct lvl *l, uint64_t i)
{
	const struct fs_btree_ops *ops = b->ops;
	const struct fs_geom *g = b->g;
	struct xfs_btree_block *h = buf;
	uint64_t p = l->ptr[i];

	if (ops->long_format) {
		fs_enc_lblock(buf, g->blocksize, ops->magic, (uint16_t)level, (uint16_t)n,
			      fs_fsb_to_daddr(g, p), b->ino, g->meta_uuid);
		h->bb_u.l.bb_leftsib = to_be64(i ? l->ptr[i - 1] : NULLFSBLOCK);
		h->bb_u.l.bb_rightsib = to_be64(i + 1 < l->n ? l->ptr[i + 1] : NULLFSBLOCK);
	} else {
		fs_enc_sblock(buf, g->blocksize, ops->magic, (uint16_t)level, (uint16_t)n,
			      fs_agbno_to_daddr(g, b->agno, (fs_agblock_t)p), b->agno, g->meta_uuid);
		h->bb_u.s.bb_leftsib = to_be32(i ? (uint32_t)l->ptr[i - 1] : NULLAGBLOCK);
		h->bb_u.s.bb_rightsib = to_be32(i + 1 < l->n ? (uint32_t)l->ptr[i + 1] : NULLAGBLOCK);
	}
}

static void finish_block(const struct fs_bload *b, void *buf)
{
	if (b->ops->long_format)
		fs_enc_lblock_finish(buf, b->g->blocksize);
	else
		fs_enc_sblock_finish(buf, b->g->blocksize);
}

static void put_ptr(const struct fs_btree_ops *ops, unsigned char *p, uint64_t v)
{
	if (ops->ptr_len == 8)
		put_be64(p, v);
	else
		put_be32(p, (uint32_t)v);
}

/* Fetch n records into out: from the array or the source. */
static int get_recs(struct fs_bload *b, uint64_t idx, void *out, uint32_t n)
{
	if (!n)
		return 0;
	if (b->recs) {
		memcpy(out, (const unsigned char *)b->recs + idx * b->ops->rec_len,
		       (size_t)n * b->ops->rec_len);
		return 0;
	}
	return b->get_recs(b->priv, out, n);
}

/* Key order and the type's record rules, across block boundaries. */
struct order {
	unsigned char last[KEYMAX];
	bool have_last;
};

static int check_recs(struct fs_bload *b, struct order *o, const unsigned char *recs, uint32_t n,
		      uint64_t first_idx, unsigned char *lo, unsigned char *hi)
{
	const struct fs_btree_ops *ops = b->ops;

	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *r = recs + (size_t)i * ops->rec_len;
		unsigned char key[KEYMAX];
		int c;

		if (ops->rec_valid && !ops->rec_valid(b->g, b->agno, r)) {
			b->bad_rec = first_idx + i;
			return -EINVAL;
		}
		ops->rec_key(r, key);
		if (o->have_last) {
			c = ops->key_cmp(o->last, key);
			if (ops->overlapping ? c > 0 : c >= 0) {
				b->bad_rec = first_idx + i;
				return -EINVAL;
			}
		}
		memcpy(o->last, key, ops->key_len);
		o->have_last = true;
		if (i == 0 && lo)
			memcpy(lo, key, ops->key_len);
		if (hi && ops->rec_high_key) {
			unsigned char hk[KEYMAX];

			ops->rec_high_key(r, hk);
			if (i == 0 || ops->key_cmp(hk, hi) > 0)
				memcpy(hi, hk, ops->key_len);
		}
	}
	return 0;
}

static int build_leaves(struct fs_bload *b, struct lvl *out, unsigned char *buf)
{
	const struct fs_btree_ops *ops = b->ops;
	uint64_t nb = b->geom.level_blocks[0], idx = 0;
	struct order o = { .have_last = false };
	int err = lvl_alloc(b, out, nb);

	for (uint64_t i = 0; !err && i < nb; i++) {
		uint32_t n = block_entries(b->nrecs, nb, i);
		unsigned char *recs;

		enc_header(b, buf, 0, n, out, i);
		recs = (unsigned char *)buf + fs_btree_hdr_len(ops);
		err = get_recs(b, idx, recs, n);
		if (!err)
			err = check_recs(b, &o, recs, n, idx, out->lo + i * ops->key_len,
					 out->hi ? out->hi + i * ops->key_len : NULL);
		if (err)
			break;
		finish_block(b, buf);
		err = b->write_block(b->priv, out->ptr[i], 0, buf);
		b->blocks_written += !err;
		idx += n;
	}
	return err;
}

static int build_nodes(struct fs_bload *b, uint32_t level, const struct lvl *kids, struct lvl *out,
		       unsigned char *buf)
{
	const struct fs_btree_ops *ops = b->ops;
	const uint32_t bs = b->g->blocksize;
	const size_t kl = ops->key_len, ekl = entry_keys_len(ops);
	const uint32_t maxr = fs_btree_maxrecs(ops, bs, false);
	uint64_t nb = b->geom.level_blocks[level], c = 0;
	int err = lvl_alloc(b, out, nb);

	for (uint64_t i = 0; !err && i < nb; i++) {
		uint32_t n = block_entries(kids->n, nb, i);
		unsigned char *keys, *ptrs;

		enc_header(b, buf, level, n, out, i);
		keys = (unsigned char *)buf + fs_btree_hdr_len(ops);
		ptrs = keys + (size_t)maxr * ekl;
		memcpy(out->lo + i * kl, kids->lo + c * kl, kl);
		for (uint32_t j = 0; j < n; j++, c++) {
			memcpy(keys + j * ekl, kids->lo + c * kl, kl);
			if (ops->overlapping) {
				const unsigned char *hk = kids->hi + c * kl;

				memcpy(keys + j * ekl + kl, hk, kl);
				if (j == 0 || ops->key_cmp(hk, out->hi + i * kl) > 0)
					memcpy(out->hi + i * kl, hk, kl);
			}
			put_ptr(ops, ptrs + (size_t)j * ops->ptr_len, kids->ptr[c]);
		}
		finish_block(b, buf);
		err = b->write_block(b->priv, out->ptr[i], level, buf);
		b->blocks_written += !err;
	}
	return err;
}

/* The bmdr root in the fork: level, count, the children's keys and pointers. */
static void build_fork_root(struct fs_bload *b, uint32_t level, const struct lvl *kids)
{
	const struct fs_btree_ops *ops = b->ops;
	unsigned char *f = b->fork;
	uint32_t maxr = bmdr_maxrecs(ops, b->fork_size);
	unsigned char *keys = f + sizeof(struct xfs_bmdr_block);
	unsigned char *ptrs = keys + (size_t)maxr * ops->key_len;

	memset(f, 0, b->fork_size);
	put_be16(f + offsetof(struct xfs_bmdr_block, bb_level), (uint16_t)level);
	put_be16(f + offsetof(struct xfs_bmdr_block, bb_numrecs), (uint16_t)kids->n);
	for (uint64_t j = 0; j < kids->n; j++) {
		memcpy(keys + j * ops->key_len, kids->lo + j * ops->key_len, ops->key_len);
		put_ptr(ops, ptrs + j * ops->ptr_len, kids->ptr[j]);
	}
}

/* A bmbt whose records fit in the fork: an extent list, no blocks. */
static int build_fork_extents(struct fs_bload *b)
{
	struct order o = { .have_last = false };
	int err;

	memset(b->fork, 0, b->fork_size);
	err = get_recs(b, 0, b->fork, (uint32_t)b->nrecs);
	if (!err)
		err = check_recs(b, &o, b->fork, (uint32_t)b->nrecs, 0, NULL, NULL);
	b->fork_format = XFS_DINODE_FMT_EXTENTS;
	return err;
}

int fs_bload_build(struct fs_bload *b)
{
	const struct fs_btree_ops *ops = b->ops;
	struct lvl cur = { 0 }, next = { 0 };
	unsigned char *buf = NULL;
	uint32_t maxlevels, top;
	int err;

	b->root = ops && ops->long_format ? NULLFSBLOCK : NULLAGBLOCK;
	b->nlevels = 0;
	b->fork_format = 0;
	b->blocks_written = 0;
	b->bad_rec = 0;
	if (!ops || !b->g || !ops->rec_key || !ops->key_cmp ||
	    (b->nrecs && !b->recs && !b->get_recs) ||
	    (ops->long_format && (!b->fork || !b->fork_size)))
		return -EINVAL;
	err = fs_bload_compute_geometry(ops, b->g->blocksize, b->nrecs, &b->slack, b->fork_size,
					&b->geom);
	if (err)
		return err;
	if (b->geom.fork_extents)
		return build_fork_extents(b);
	if (!b->alloc_block || !b->write_block)
		return -EINVAL;
	maxlevels = ops->maxlevels ? ops->maxlevels(b->g) : 0;
	if (maxlevels && b->geom.nlevels > maxlevels)
		return -EFBIG;
	buf = malloc(b->g->blocksize);
	if (!buf)
		return -ENOMEM;

	/* the levels that live in blocks: all of them, or all but the fork's root */
	top = b->geom.nlevels - (b->geom.root_in_fork ? 1 : 0);
	err = build_leaves(b, &cur, buf);
	for (uint32_t level = 1; !err && level < top; level++) {
		err = build_nodes(b, level, &cur, &next, buf);
		lvl_free(&cur);
		cur = next;
		memset(&next, 0, sizeof(next));
	}
	if (!err) {
		b->nlevels = b->geom.nlevels;
		if (b->geom.root_in_fork) {
			build_fork_root(b, top, &cur);
			b->fork_format = XFS_DINODE_FMT_BTREE;
		} else {
			b->root = cur.ptr[0];
		}
	}
	lvl_free(&cur);
	lvl_free(&next);
	free(buf);
	return err;
}

int fs_bload_cache_writer(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct fs_bload_cache_target *t = priv;
	const struct fs_geom *g = t->g;
	bool lf = t->ops->long_format;
	struct fs_dirty_info di = {
		.type = t->ops->mtype,
		.agno = lf ? fs_fsb_to_agno(g, ptr) : t->agno,
		.ino = t->ino,
		.wclass = t->wclass,
	};
	fs_daddr_t d = lf ? fs_fsb_to_daddr(g, ptr) : fs_agbno_to_daddr(g, t->agno, (fs_agblock_t)ptr);
	struct fs_buf *bp;
	int err;

	(void)level;
	err = fs_cache_get_new(t->cache, d, g->blocksize, &bp);
	if (err)
		return err;
	memcpy(bp->data, block, g->blocksize);
	err = fs_buf_mark_dirty(t->cache, bp, &di);
	fs_buf_put(t->cache, bp);
	return err;
}

int fs_bload_fork(const struct fs_geom *g, fs_ino_t ino, const struct fs_bmap_ext *ext, size_t n,
		  void *fork, uint32_t fork_size, int (*alloc_block)(void *priv, uint64_t *ptr),
		  int (*write_block)(void *priv, uint64_t ptr, uint32_t level, const void *block),
		  void *priv, uint8_t *format, uint64_t *blocks)
{
	struct fs_bload b = {
		.ops = fs_btree_ops_get(FS_BTREE_BMBT), .g = g, .ino = ino, .nrecs = n,
		.alloc_block = alloc_block, .write_block = write_block, .priv = priv, .fork = fork,
		.fork_size = fork_size,
	};
	unsigned char *recs = malloc(n ? n * sizeof(struct xfs_bmbt_rec) : 1);
	int err;

	*blocks = 0;
	if (!recs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fs_bmbt_rec_encode(&ext[i], recs + i * sizeof(struct xfs_bmbt_rec));
	b.recs = recs;
	err = fs_bload_build(&b);
	free(recs);
	if (err)
		return err;
	*format = b.fork_format;
	*blocks = b.blocks_written;
	return 0;
}
