// SPDX-License-Identifier: GPL-2.0
/*
 * The directory encoder: entries in, a v5 directory out in the smallest of
 * the four formats the kernel would keep it in (short form while it fits
 * the inode and one block; block; leaf while one leaf block holds every
 * hash and the bests; node with a DA tree and free index otherwise).
 * Entries are laid out in the order given, packed from the front of each
 * data block with the rest of the block one free region; leaf entries in
 * (hash, address) order; DA tree levels filled evenly.  The one copy used
 * by mkfs -p and repair's directory rebuild; tests/libfs/dir_rt.c walks
 * its output back through libfs/format/dir.c.
 */
#include "libfs/build/dirbuild.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/util/sort.h"

#define DATA_HDR   sizeof(struct xfs_dir3_data_hdr)
#define LEAF_HDR   sizeof(struct xfs_dir3_leaf_hdr)
#define FREE_HDR   sizeof(struct xfs_dir3_free_hdr)
#define NODE_HDR   sizeof(struct xfs_da3_node_hdr)
#define LEAF_ENT   sizeof(struct xfs_dir2_leaf_entry)
#define NODE_ENT   sizeof(struct xfs_da_node_entry)
#define BLOCK_TAIL sizeof(struct xfs_dir2_block_tail)
#define LEAF_TAIL  sizeof(struct xfs_dir2_leaf_tail)

/* One stored entry: ".", ".." or ents[src - 2]. */
struct fs_dirbuild_slot {
	uint32_t hash;
	uint32_t src;
	uint32_t db;               /* data block */
	uint32_t off;              /* byte offset in it */
};

/* Per-level block counts of the node form's leaf space, kept after the public struct. */
struct dirbuild_priv {
	struct fs_dirbuild pub;
	uint32_t lvcnt[XFS_DA_NODE_MAXDEPTH + 1];  /* [0]: leafn blocks, [levels]: 1 */
};

static uint64_t leaf_fsb(const struct fs_geom *g) { return XFS_DIR2_LEAF_OFFSET >> g->blocklog; }
static uint64_t free_fsb(const struct fs_geom *g) { return XFS_DIR2_FREE_OFFSET >> g->blocklog; }

static const unsigned char dot[1] = { '.' }, dotdot[2] = { '.', '.' };

static const unsigned char *slot_name(const struct fs_dirbuild *b, uint32_t src, uint8_t *len)
{
	if (src < 2) {
		*len = (uint8_t)(src + 1);
		return src ? dotdot : dot;
	}
	*len = b->ents[src - 2].namelen;
	return b->ents[src - 2].name;
}

static fs_ino_t slot_ino(const struct fs_dirbuild *b, uint32_t src)
{
	return src == 0 ? b->ino : src == 1 ? b->parent : b->ents[src - 2].ino;
}

static uint8_t slot_ftype(const struct fs_dirbuild *b, uint32_t src)
{
	return src < 2 ? XFS_DIR3_FT_DIR : b->ents[src - 2].ftype;
}

static uint32_t slot_addr(const struct fs_dirbuild *b, const struct fs_dirbuild_slot *s)
{
	return (uint32_t)((((uint64_t)s->db << (b->g->blocklog + b->g->dirblklog)) + s->off) >>
			  XFS_DIR2_DATA_ALIGN_LOG);
}

static uint32_t div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* (hash, index) pairs sorted stably by hash: slots are already in address order. */
struct hidx {
	uint32_t hash, idx;
};

static int sort_by_hash(struct fs_dirbuild *b, size_t nslots)
{
	struct hidx *h = malloc(nslots * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++)
		h[i] = (struct hidx){ b->slots[i].hash, (uint32_t)i };
	if (fs_sort_u32(h, nslots, sizeof(*h), offsetof(struct hidx, hash))) {
		free(h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nslots; i++)
		b->byhash[i] = h[i].idx;
	free(h);
	return 0;
}

/* Names equal within one run of equal hashes: -EEXIST. */
static int find_dups(const struct fs_dirbuild *b, size_t nslots)
{
	size_t i = 0;

	while (i < nslots) {
		size_t j = i + 1;
		uint32_t h = b->slots[b->byhash[i]].hash;

		while (j < nslots && b->slots[b->byhash[j]].hash == h)
			j++;
		for (size_t x = i; x < j; x++)
			for (size_t y = x + 1; y < j; y++) {
				uint8_t lx, ly;
				const unsigned char *nx = slot_name(b, b->slots[b->byhash[x]].src, &lx);
				const unsigned char *ny = slot_name(b, b->slots[b->byhash[y]].src, &ly);

				if (lx == ly && fs_dir_name_eq(b->g, nx, ny, lx))
					return -EEXIST;
			}
		i = j;
	}
	return 0;
}

int fs_dirbuild_plan(const struct fs_geom *g, fs_ino_t ino, fs_ino_t parent,
		     const struct fs_dirbuild_ent *ents, size_t n, size_t sf_max,
		     struct fs_dirbuild **out)
{
	struct dirbuild_priv *p;
	struct fs_dirbuild *b;
	size_t nslots = n + 2;
	uint32_t db = 0, off = DATA_HDR, dsize = g->dirblksize;
	uint64_t datasum = 0, sfsize;
	/* short form stores no "." : only the parent and the entries decide the width */
	bool i8 = parent > XFS_DIR2_MAX_SHORT_INUM;
	int err;

	*out = NULL;
	if (!fs_ino_valid(g, ino) || !fs_ino_valid(g, parent))
		return -EINVAL;
	if (n > UINT32_MAX / 2)
		return -EFBIG;
	for (size_t i = 0; i < n; i++) {
		const struct fs_dirbuild_ent *e = &ents[i];

		if (!e->namelen || !fs_dir_name_ok(e->name, e->namelen) ||
		    (e->namelen == 1 && e->name[0] == '.') ||
		    (e->namelen == 2 && e->name[0] == '.' && e->name[1] == '.') ||
		    (g->ftype && e->ftype >= XFS_DIR3_FT_MAX) || !fs_ino_valid(g, e->ino))
			return -EINVAL;
		if (e->ino > XFS_DIR2_MAX_SHORT_INUM)
			i8 = true;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	b = &p->pub;
	b->g = g;
	b->ino = ino;
	b->parent = parent;
	b->ents = ents;
	b->n = n;
	b->fsbs = g->dirblkfsbs;
	b->slots = malloc(nslots * sizeof(*b->slots));
	b->byhash = malloc(nslots * sizeof(*b->byhash));
	if (!b->slots || !b->byhash) {
		err = -ENOMEM;
		goto fail;
	}

	/* data blocks: entries in order, each block packed from the front */
	sfsize = 2 + (i8 ? 8 : 4);
	for (uint32_t i = 0; i < nslots; i++) {
		struct fs_dirbuild_slot *s = &b->slots[i];
		uint8_t len;
		const unsigned char *name = slot_name(b, i, &len);
		uint32_t es = fs_dir_entsize(g, len);

		if (off + es > dsize) {
			db++;
			off = DATA_HDR;
		}
		*s = (struct fs_dirbuild_slot){ fs_dir_hashname(g, name, len), i, db, off };
		off += es;
		datasum += es;
		if (i >= 2)
			sfsize += 3 + len + (g->ftype ? 1 : 0) + (i8 ? 8 : 4);
	}
	b->ndata = db + 1;
	if (((uint64_t)b->ndata << (g->blocklog + g->dirblklog)) > XFS_DIR2_LEAF_OFFSET) {
		err = -EFBIG;
		goto fail;
	}
	err = sort_by_hash(b, nslots);
	if (!err)
		err = find_dups(b, nslots);
	if (err)
		goto fail;

	if (DATA_HDR + datasum + nslots * LEAF_ENT + BLOCK_TAIL <= dsize) {
		/* one block holds it; short form when the inode does too (the kernel's rule) */
		if (sf_max && n < 255 && sfsize <= sf_max) {
			b->fmt = FS_DIR_SHORT;
			b->sf_bytes = (uint32_t)sfsize;
			b->size = sfsize;
			b->ndata = 0;
		} else {
			b->fmt = FS_DIR_BLOCK;
			b->size = dsize;
		}
	} else {
		uint32_t maxbests = (dsize - (uint32_t)FREE_HDR) / 2;

		b->size = (uint64_t)b->ndata * dsize;
		b->bests = malloc(b->ndata * sizeof(*b->bests));
		if (!b->bests) {
			err = -ENOMEM;
			goto fail;
		}
		/* the free region of each data block is what its entries leave at the end */
		for (uint32_t d = 0; d < b->ndata; d++)
			b->bests[d] = (uint16_t)(dsize - DATA_HDR);
		for (uint32_t i = 0; i < nslots; i++) {
			uint8_t len;

			slot_name(b, i, &len);
			b->bests[b->slots[i].db] -= (uint16_t)fs_dir_entsize(g, len);
		}
		if (LEAF_HDR + nslots * LEAF_ENT + (uint64_t)b->ndata * 2 + LEAF_TAIL <= dsize) {
			b->fmt = FS_DIR_LEAF;
			b->nleaf = 1;
		} else {
			uint32_t cap = (dsize - (uint32_t)LEAF_HDR) / LEAF_ENT;
			uint32_t ncap = (dsize - (uint32_t)NODE_HDR) / NODE_ENT;
			uint32_t l = 0;

			b->fmt = FS_DIR_NODE;
			p->lvcnt[0] = div_up(nslots, cap);
			b->nleaf = p->lvcnt[0];
			while (p->lvcnt[l] > 1) {
				if (l == XFS_DA_NODE_MAXDEPTH) {
					err = -EFBIG;
					goto fail;
				}
				p->lvcnt[l + 1] = div_up(p->lvcnt[l], ncap);
				b->nleaf += p->lvcnt[++l];
			}
			b->levels = l;
			b->nfree = div_up(b->ndata, maxbests);
			if ((uint64_t)b->nleaf * dsize > XFS_DIR2_FREE_OFFSET - XFS_DIR2_LEAF_OFFSET) {
				err = -EFBIG;
				goto fail;
			}
		}
	}
	b->nblocks = b->fmt == FS_DIR_SHORT ? 0 : b->ndata + b->nleaf + b->nfree;
	*out = b;
	return 0;
fail:
	fs_dirbuild_free(b);
	return err;
}

void fs_dirbuild_free(struct fs_dirbuild *b)
{
	if (!b)
		return;
	free(b->slots);
	free(b->byhash);
	free(b->bests);
	free((struct dirbuild_priv *)b);
}

uint64_t fs_dirbuild_lblk(const struct fs_dirbuild *b, uint32_t i)
{
	if (i < b->ndata)
		return (uint64_t)i * b->fsbs;
	i -= b->ndata;
	if (i < b->nleaf)
		return leaf_fsb(b->g) + (uint64_t)i * b->fsbs;
	return free_fsb(b->g) + (uint64_t)(i - b->nleaf) * b->fsbs;
}

void fs_dirbuild_sf(const struct fs_dirbuild *b, void *dfork)
{
	const struct fs_geom *g = b->g;
	unsigned char *p = dfork;
	uint32_t i8count = b->parent > XFS_DIR2_MAX_SHORT_INUM;
	bool i8;
	size_t o;

	/* i8count: every stored inode number that needs 8 bytes, the parent's included */
	for (size_t i = 0; i < b->n; i++)
		i8count += b->ents[i].ino > XFS_DIR2_MAX_SHORT_INUM;
	i8 = i8count > 0;
	p[0] = (uint8_t)b->n;
	p[1] = (uint8_t)i8count;
	if (i8)
		put_be64(p + 2, b->parent);
	else
		put_be32(p + 2, (uint32_t)b->parent);
	o = 2 + (i8 ? 8 : 4);
	for (size_t i = 2; i < b->n + 2; i++) {
		const struct fs_dirbuild_ent *e = &b->ents[i - 2];

		p[o++] = e->namelen;
		put_be16(p + o, (uint16_t)b->slots[i].off);
		o += 2;
		memcpy(p + o, e->name, e->namelen);
		o += e->namelen;
		if (g->ftype)
			p[o++] = e->ftype;
		if (i8) {
			put_be64(p + o, e->ino);
			o += 8;
		} else {
			put_be32(p + o, (uint32_t)e->ino);
			o += 4;
		}
	}
}

/* The v5 header every directory block starts with (the blk_hdr or da3_blkinfo tail). */
static void set_hdr3(const struct fs_dirbuild *b, unsigned char *blkno_at, fs_fsblock_t fsb)
{
	/* blkno, lsn, uuid, owner follow each other in both header kinds */
	put_be64(blkno_at, fs_fsb_to_daddr(b->g, fsb));
	put_be64(blkno_at + 8, 0);
	memcpy(blkno_at + 16, b->g->meta_uuid, 16);
	put_be64(blkno_at + 32, b->ino);
}

/* Leaf entries [from, to) of the hash order. */
static void put_leaf_ents(const struct fs_dirbuild *b, unsigned char *at, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++, at += LEAF_ENT) {
		const struct fs_dirbuild_slot *s = &b->slots[b->byhash[i]];

		put_be32(at, s->hash);
		put_be32(at + 4, slot_addr(b, s));
	}
}

/* Data block db: entries, the free region after them up to dend, bestfree. */
static void enc_data(const struct fs_dirbuild *b, uint32_t db, unsigned char *buf,
		     fs_fsblock_t fsb, uint32_t dend, size_t *slot)
{
	const struct fs_geom *g = b->g;
	struct xfs_dir3_data_hdr *h = (void *)buf;
	uint32_t off = DATA_HDR;

	put_be32(buf, b->fmt == FS_DIR_BLOCK ? XFS_DIR3_BLOCK_MAGIC : XFS_DIR3_DATA_MAGIC);
	set_hdr3(b, buf + offsetof(struct xfs_dir3_blk_hdr, blkno), fsb);
	for (; *slot < b->n + 2 && b->slots[*slot].db == db; (*slot)++) {
		const struct fs_dirbuild_slot *s = &b->slots[*slot];
		uint8_t len;
		const unsigned char *name = slot_name(b, s->src, &len);
		unsigned char *e = buf + s->off;
		uint32_t es = fs_dir_entsize(g, len);

		put_be64(e, slot_ino(b, s->src));
		e[8] = len;
		memcpy(e + 9, name, len);
		if (g->ftype)
			e[9 + len] = slot_ftype(b, s->src);
		put_be16(e + es - 2, (uint16_t)s->off);
		off = s->off + es;
	}
	if (dend > off) {
		put_be16(buf + off, XFS_DIR2_DATA_FREE_TAG);
		put_be16(buf + off + 2, (uint16_t)(dend - off));
		put_be16(buf + dend - 2, (uint16_t)off);
		h->best_free[0].offset = to_be16((uint16_t)off);
		h->best_free[0].length = to_be16((uint16_t)(dend - off));
	}
}

static void put_bests(const struct fs_dirbuild *b, unsigned char *at, uint32_t from, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		put_be16(at + 2 * i, b->bests[from + i]);
}

/* Node form: leaf-space block i (0 the root) and what it covers. */
struct tree_pos {
	uint32_t level, idx;       /* level 0 = leafn */
};

static uint32_t tree_block_of(const struct dirbuild_priv *p, uint32_t level, uint32_t idx)
{
	uint32_t at = 1;

	if (level == p->pub.levels)
		return 0;
	if (level == 0)
		return p->pub.levels ? 1 + idx : 0;
	at += p->lvcnt[0];
	for (uint32_t l = 1; l < level; l++)
		at += p->lvcnt[l];
	return at + idx;
}

static struct tree_pos tree_pos_of(const struct dirbuild_priv *p, uint32_t i)
{
	uint32_t l = 1;

	if (i == 0)
		return (struct tree_pos){ p->pub.levels, 0 };
	i--;
	if (i < p->lvcnt[0])
		return (struct tree_pos){ 0, i };
	i -= p->lvcnt[0];
	while (i >= p->lvcnt[l])
		i -= p->lvcnt[l++];
	return (struct tree_pos){ l, i };
}

/* Children of block idx at level l are [first, end) of level l - 1; leafn: leaf entries. */
static void tree_range(const struct dirbuild_priv *p, uint32_t level, uint32_t idx,
		       uint64_t *first, uint64_t *end)
{
	uint64_t nchild = level ? p->lvcnt[level - 1] : p->pub.n + 2;
	uint64_t nself = p->lvcnt[level];

	*first = idx * nchild / nself;
	*end = (idx + 1ull) * nchild / nself;
}

/* Index of the last leaf entry under block idx of level l (its subtree's highest hash). */
static uint64_t tree_last_ent(const struct dirbuild_priv *p, uint32_t level, uint32_t idx)
{
	uint64_t first, end;

	for (;;) {
		tree_range(p, level, idx, &first, &end);
		if (level == 0)
			return end - 1;
		idx = (uint32_t)(end - 1);
		level--;
	}
}

static uint64_t tree_dablk(const struct dirbuild_priv *p, uint32_t level, uint32_t idx)
{
	return fs_dirbuild_lblk(&p->pub, p->pub.ndata + tree_block_of(p, level, idx));
}

static void enc_tree(const struct dirbuild_priv *p, uint32_t i, unsigned char *buf,
		     fs_fsblock_t fsb)
{
	const struct fs_dirbuild *b = &p->pub;
	struct tree_pos t = tree_pos_of(p, i);
	struct xfs_da_blkinfo *info = (void *)buf;
	uint64_t first, end;

	tree_range(p, t.level, t.idx, &first, &end);
	if (t.idx > 0)
		info->back = to_be32((uint32_t)tree_dablk(p, t.level, t.idx - 1));
	if (t.idx + 1 < p->lvcnt[t.level])
		info->forw = to_be32((uint32_t)tree_dablk(p, t.level, t.idx + 1));
	set_hdr3(b, buf + offsetof(struct xfs_da3_blkinfo, blkno), fsb);
	if (t.level == 0) {
		struct xfs_dir3_leaf_hdr *h = (void *)buf;

		info->magic = to_be16(XFS_DIR3_LEAFN_MAGIC);
		h->count = to_be16((uint16_t)(end - first));
		put_leaf_ents(b, buf + LEAF_HDR, first, end);
		fs_crc_update(buf, b->g->dirblksize, XFS_DIR3_LEAF_CRC_OFF);
	} else {
		struct xfs_da3_node_hdr *h = (void *)buf;
		unsigned char *e = buf + NODE_HDR;

		info->magic = to_be16(XFS_DA3_NODE_MAGIC);
		h->__count = to_be16((uint16_t)(end - first));
		h->__level = to_be16((uint16_t)t.level);
		for (uint64_t c = first; c < end; c++, e += NODE_ENT) {
			uint64_t last = tree_last_ent(p, t.level - 1, (uint32_t)c);

			put_be32(e, b->slots[b->byhash[last]].hash);
			put_be32(e + 4, (uint32_t)tree_dablk(p, t.level - 1, (uint32_t)c));
		}
		fs_crc_update(buf, b->g->dirblksize, XFS_DA3_NODE_CRC_OFF);
	}
}

int fs_dirbuild_encode(const struct fs_dirbuild *b, const fs_fsblock_t *phys, void *const *bufs)
{
	const struct dirbuild_priv *p = (const struct dirbuild_priv *)b;
	const struct fs_geom *g = b->g;
	uint32_t dsize = g->dirblksize, maxbests = (dsize - (uint32_t)FREE_HDR) / 2;
	size_t nslots = b->n + 2, slot = 0;

	if (b->fmt == FS_DIR_SHORT)
		return -EINVAL;
	for (uint32_t i = 0; i < b->nblocks; i++)
		memset(bufs[i], 0, dsize);
	if (b->fmt == FS_DIR_BLOCK) {
		unsigned char *buf = bufs[0];
		uint32_t lstart = dsize - (uint32_t)BLOCK_TAIL - (uint32_t)(nslots * LEAF_ENT);

		enc_data(b, 0, buf, phys[0], lstart, &slot);
		put_leaf_ents(b, buf + lstart, 0, nslots);
		put_be32(buf + dsize - BLOCK_TAIL, (uint32_t)nslots);
		put_be32(buf + dsize - BLOCK_TAIL + 4, 0);
		fs_crc_update(buf, dsize, XFS_DIR3_DATA_CRC_OFF);
		return 0;
	}
	for (uint32_t d = 0; d < b->ndata; d++) {
		enc_data(b, d, bufs[d], phys[d], dsize, &slot);
		fs_crc_update(bufs[d], dsize, XFS_DIR3_DATA_CRC_OFF);
	}
	if (b->fmt == FS_DIR_LEAF) {
		unsigned char *buf = bufs[b->ndata];
		struct xfs_dir3_leaf_hdr *h = (void *)buf;

		h->info.hdr.magic = to_be16(XFS_DIR3_LEAF1_MAGIC);
		set_hdr3(b, buf + offsetof(struct xfs_da3_blkinfo, blkno), phys[b->ndata]);
		h->count = to_be16((uint16_t)nslots);
		put_leaf_ents(b, buf + LEAF_HDR, 0, nslots);
		put_bests(b, buf + dsize - LEAF_TAIL - (size_t)b->ndata * 2, 0, b->ndata);
		put_be32(buf + dsize - LEAF_TAIL, b->ndata);
		fs_crc_update(buf, dsize, XFS_DIR3_LEAF_CRC_OFF);
		return 0;
	}
	for (uint32_t i = 0; i < b->nleaf; i++)
		enc_tree(p, i, bufs[b->ndata + i], phys[b->ndata + i]);
	for (uint32_t f = 0; f < b->nfree; f++) {
		uint32_t k = b->ndata + b->nleaf + f, first = f * maxbests;
		uint32_t nvalid = b->ndata - first < maxbests ? b->ndata - first : maxbests;
		unsigned char *buf = bufs[k];
		struct xfs_dir3_free_hdr *h = (void *)buf;

		put_be32(buf, XFS_DIR3_FREE_MAGIC);
		set_hdr3(b, buf + offsetof(struct xfs_dir3_blk_hdr, blkno), phys[k]);
		h->firstdb = to_be32(first);
		h->nvalid = to_be32(nvalid);
		h->nused = to_be32(nvalid);
		put_bests(b, buf + FREE_HDR, first, nvalid);
		fs_crc_update(buf, dsize, XFS_DIR3_FREE_CRC_OFF);
	}
	return 0;
}

size_t fs_dirbuild_extents(const struct fs_dirbuild *b, const fs_fsblock_t *phys,
			   struct fs_bmap_ext *ext)
{
	const struct fs_geom *g = b->g;
	size_t n = 0;

	for (uint32_t i = 0; i < b->nblocks; i++) {
		uint64_t lblk = fs_dirbuild_lblk(b, i);
		struct fs_bmap_ext *prev = n ? &ext[n - 1] : NULL;

		if (prev && prev->startoff + prev->blockcount == lblk &&
		    prev->startblock + prev->blockcount == phys[i] &&
		    fs_fsb_to_agno(g, prev->startblock) == fs_fsb_to_agno(g, phys[i]) &&
		    prev->blockcount + b->fsbs <= XFS_MAX_BMBT_EXTLEN) {
			prev->blockcount += b->fsbs;
			continue;
		}
		ext[n++] = (struct fs_bmap_ext){ .startoff = lblk, .startblock = phys[i],
						 .blockcount = b->fsbs };
	}
	return n;
}
