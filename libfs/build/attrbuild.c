// SPDX-License-Identifier: GPL-2.0
/*
 * The xattr encoder: attributes in, an attr fork out.  Short form when
 * every name and value is below 255 bytes (the kernel's rule); otherwise
 * attr3 leaf blocks, entries in hash order (a parent pointer's hash is
 * pptr.c's: its name's mixed with the parent's inode number) with their name structures
 * packed from the end of the block, values at or above three quarters of
 * a block in remote value blocks (XARM, one header per block); one leaf
 * is attr block 0, more leaves hang under DA3 node levels rooted there.
 * Layout and field rules follow the kernel's attr leaf and remote formats; tests in
 * tests/libfs/build/test_attrbuild.c read the result back through libfs/format/attr.c.
 */
#include "libfs/build/attrbuild.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/attr.h"
#include "libfs/format/crc.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/format/pptr.h"
#include "libfs/util/sort.h"

#define LEAF_HDR  sizeof(struct xfs_attr3_leaf_hdr)
#define LEAF_ENT  sizeof(struct xfs_attr_leaf_entry)
#define NODE_HDR  sizeof(struct xfs_da3_node_hdr)
#define NODE_ENT  sizeof(struct xfs_da_node_entry)
#define RMT_HDR   sizeof(struct xfs_attr3_rmt_hdr)
#define SF_HDR    sizeof(struct xfs_attr_sf_hdr)
#define VALUE_MAX 65536u

struct aent {
	uint32_t hash, idx;        /* idx into ents */
	uint32_t entsize;          /* bytes of its name structure in a leaf */
	uint32_t rmtblk;           /* remote: first logical block of the value */
	bool local;
};

struct fs_attrbuild {
	const struct fs_geom *g;
	fs_ino_t ino;
	const struct fs_attrbuild_ent *ents;
	size_t n;
	struct aent *v;            /* by hash */
	uint32_t *leaf_first;      /* first v index of each leaf, nleaf + 1 entries */
	uint32_t nleaf, ntree;     /* leaves; tree blocks (leaves + nodes) */
	uint32_t levels;           /* node levels above the leaves (0: one leaf) */
	uint32_t lvcnt[XFS_DA_NODE_MAXDEPTH + 1]; /* blocks per level, [0] = leaves */
	uint32_t nblocks;
	fs_fsblock_t *phys;        /* per logical block */
};

/* One namespace; parent pointers only where the feature is on, and then as pptr.c decodes them. */
static bool ent_ok(const struct fs_geom *g, const struct fs_attrbuild_ent *e)
{
	if (!e->namelen || e->valuelen > VALUE_MAX || memchr(e->name, 0, e->namelen))
		return false;
	if (e->flags == XFS_ATTR_PARENT)
		return g->parent && e->valuelen == sizeof(struct xfs_parent_rec) &&
		       !memchr(e->name, '/', e->namelen);
	return e->flags == 0 || e->flags == XFS_ATTR_ROOT || e->flags == XFS_ATTR_SECURE;
}

static uint32_t ent_hash(const struct fs_geom *g, const struct fs_attrbuild_ent *e)
{
	if (e->flags == XFS_ATTR_PARENT)
		return fs_parent_hashval(g, e->name, e->namelen,
					 get_be64(e->value + offsetof(struct xfs_parent_rec, p_ino)));
	return fs_da_hashname(e->name, e->namelen);
}

/* The same attribute: one name per namespace; a parent pointer is its name and its value. */
static bool same_attr(const struct fs_attrbuild_ent *a, const struct fs_attrbuild_ent *b)
{
	if (a->flags != b->flags || a->namelen != b->namelen || memcmp(a->name, b->name, a->namelen))
		return false;
	return a->flags != XFS_ATTR_PARENT || !memcmp(a->value, b->value, a->valuelen);
}

int fs_attrbuild_plan(const struct fs_geom *g, fs_ino_t ino, const struct fs_attrbuild_ent *ents,
		      size_t n, struct fs_attrbuild **out)
{
	struct fs_attrbuild *ab;
	uint32_t bs = g->blocksize, used, first, rmt;

	*out = NULL;
	if (n > UINT32_MAX / 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!ent_ok(g, &ents[i]))
			return -EINVAL;
	ab = calloc(1, sizeof(*ab));
	if (!ab)
		return -ENOMEM;
	ab->g = g;
	ab->ino = ino;
	ab->ents = ents;
	ab->n = n;
	ab->v = malloc((n + 1) * sizeof(*ab->v));
	ab->leaf_first = malloc((n + 2) * sizeof(*ab->leaf_first));
	if (!ab->v || !ab->leaf_first)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		struct aent *e = &ab->v[i];
		uint32_t loc = fs_attr_entsize_local(ents[i].namelen, ents[i].valuelen);

		e->hash = ent_hash(g, &ents[i]);
		e->idx = (uint32_t)i;
		/* the kernel keeps a value local below three quarters of a block */
		e->local = loc < (bs >> 1) + (bs >> 2);
		e->entsize = e->local ? loc : fs_attr_entsize_remote(ents[i].namelen);
		e->rmtblk = 0;
	}
	if (fs_sort_u32(ab->v, n, sizeof(*ab->v), offsetof(struct aent, hash)))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n && ab->v[j].hash == ab->v[i].hash; j++)
			if (same_attr(&ents[ab->v[i].idx], &ents[ab->v[j].idx])) {
				fs_attrbuild_free(ab);
				return -EEXIST;
			}
	/* leaves: filled in hash order while the table and the names fit */
	used = (uint32_t)LEAF_HDR;
	first = 0;
	ab->nleaf = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t need = (uint32_t)LEAF_ENT + ab->v[i].entsize;

		if (used + need > bs) {
			ab->leaf_first[ab->nleaf++] = first;
			first = i;
			used = (uint32_t)LEAF_HDR;
		}
		used += need;
	}
	ab->leaf_first[ab->nleaf++] = first;
	ab->leaf_first[ab->nleaf] = (uint32_t)n;
	/* DA node levels over the leaves, filled evenly, the root at attr block 0 */
	ab->lvcnt[0] = ab->nleaf;
	ab->ntree = ab->nleaf;
	while (ab->lvcnt[ab->levels] > 1) {
		uint32_t ncap = (bs - (uint32_t)NODE_HDR) / (uint32_t)NODE_ENT;

		if (ab->levels == XFS_DA_NODE_MAXDEPTH) {
			fs_attrbuild_free(ab);
			return -EFBIG;
		}
		ab->lvcnt[ab->levels + 1] = (ab->lvcnt[ab->levels] + ncap - 1) / ncap;
		ab->ntree += ab->lvcnt[++ab->levels];
	}
	/* remote values after the tree, each in its own run */
	rmt = ab->ntree;
	for (size_t i = 0; i < n; i++)
		if (!ab->v[i].local) {
			ab->v[i].rmtblk = rmt;
			rmt += fs_attr_rmt_blocks(g, ents[ab->v[i].idx].valuelen);
		}
	ab->nblocks = rmt;
	*out = ab;
	return 0;
nomem:
	fs_attrbuild_free(ab);
	return -ENOMEM;
}

void fs_attrbuild_free(struct fs_attrbuild *ab)
{
	if (!ab)
		return;
	free(ab->v);
	free(ab->leaf_first);
	free(ab->phys);
	free(ab);
}

uint32_t fs_attrbuild_sf_size(const struct fs_attrbuild *ab)
{
	uint64_t size = SF_HDR;

	if (ab->n > 255 || !ab->n)
		return 0;
	for (size_t i = 0; i < ab->n; i++) {
		if (ab->ents[i].namelen >= 255 || ab->ents[i].valuelen >= 255)
			return 0;
		size += 3 + ab->ents[i].namelen + ab->ents[i].valuelen;
	}
	return size > UINT16_MAX ? 0 : (uint32_t)size;
}

void fs_attrbuild_sf(const struct fs_attrbuild *ab, void *afork)
{
	unsigned char *p = afork;
	size_t o = SF_HDR;

	put_be16(p, (uint16_t)fs_attrbuild_sf_size(ab));
	p[2] = (uint8_t)ab->n;
	p[3] = 0;
	for (size_t i = 0; i < ab->n; i++) {
		const struct fs_attrbuild_ent *e = &ab->ents[i];

		p[o] = e->namelen;
		p[o + 1] = (uint8_t)e->valuelen;
		p[o + 2] = e->flags;
		memcpy(p + o + 3, e->name, e->namelen);
		if (e->valuelen)
			memcpy(p + o + 3 + e->namelen, e->value, e->valuelen);
		o += 3 + e->namelen + e->valuelen;
	}
}

int fs_attrbuild_layout(struct fs_attrbuild *ab, const struct fs_attrbuild_io *io)
{
	uint32_t at = 0;
	int rc;

	free(ab->phys);
	ab->phys = malloc(ab->nblocks * sizeof(*ab->phys));
	if (!ab->phys)
		return -ENOMEM;
	while (at < ab->nblocks) {
		/* the rest of the tree's blocks, or of the remote value holding block at */
		uint32_t run = at < ab->ntree ? ab->ntree - at : 0;
		fs_fsblock_t fsb;

		if (!run)
			for (size_t i = 0; i < ab->n && !run; i++) {
				uint32_t len = ab->v[i].local ? 0 :
					fs_attr_rmt_blocks(ab->g, ab->ents[ab->v[i].idx].valuelen);

				if (len && at >= ab->v[i].rmtblk && at - ab->v[i].rmtblk < len)
					run = ab->v[i].rmtblk + len - at;
			}
		if (!run)
			return -EINVAL;
		rc = io->alloc(io->priv, run, &fsb);
		/* no run that long (a repair in fragmented space): one block at a time */
		if (rc == -ENOSPC && run > 1) {
			run = 1;
			rc = io->alloc(io->priv, run, &fsb);
		}
		if (rc)
			return rc;
		for (uint32_t k = 0; k < run; k++)
			ab->phys[at + k] = fsb + k;
		at += run;
	}
	return 0;
}

uint32_t fs_attrbuild_nblocks(const struct fs_attrbuild *ab)
{
	return ab->nblocks;
}

/* The v5 block info every leaf and node starts with. */
static void blkinfo(const struct fs_attrbuild *ab, void *buf, uint16_t magic, uint32_t i,
		    uint32_t back, uint32_t forw)
{
	struct xfs_da3_blkinfo *info = buf;

	info->hdr.forw = to_be32(forw);
	info->hdr.back = to_be32(back);
	info->hdr.magic = to_be16(magic);
	info->blkno = to_be64(fs_fsb_to_daddr(ab->g, ab->phys[i]));
	memcpy(&info->uuid, ab->g->meta_uuid, 16);
	info->owner = to_be64(ab->ino);
}

/* Tree block index of block idx of level l: 0 the root, then the leaves, then lower node levels. */
static uint32_t tree_index(const struct fs_attrbuild *ab, uint32_t level, uint32_t idx)
{
	uint32_t at;

	if (level == ab->levels)
		return 0;
	if (level == 0)
		return 1 + idx;
	at = 1 + ab->lvcnt[0];
	for (uint32_t l = 1; l < level; l++)
		at += ab->lvcnt[l];
	return at + idx;
}

static void tree_pos(const struct fs_attrbuild *ab, uint32_t i, uint32_t *level, uint32_t *idx)
{
	uint32_t l = 1;

	if (i == 0) {
		*level = ab->levels;
		*idx = 0;
		return;
	}
	i--;
	if (i < ab->lvcnt[0]) {
		*level = 0;
		*idx = i;
		return;
	}
	i -= ab->lvcnt[0];
	while (i >= ab->lvcnt[l])
		i -= ab->lvcnt[l++];
	*level = l;
	*idx = i;
}

/* Children of node idx at level l (> 0): [first, end) of level l - 1, spread evenly. */
static void tree_kids(const struct fs_attrbuild *ab, uint32_t level, uint32_t idx,
		      uint32_t *first, uint32_t *end)
{
	uint64_t nk = ab->lvcnt[level - 1], ns = ab->lvcnt[level];

	*first = (uint32_t)(idx * nk / ns);
	*end = (uint32_t)((idx + 1ull) * nk / ns);
}

/* The highest hash under block idx of level l. */
static uint32_t tree_maxhash(const struct fs_attrbuild *ab, uint32_t level, uint32_t idx)
{
	while (level > 0) {
		uint32_t first, end;

		tree_kids(ab, level, idx, &first, &end);
		idx = end - 1;
		level--;
	}
	return ab->v[ab->leaf_first[idx + 1] - 1].hash;
}

static void enc_leaf(const struct fs_attrbuild *ab, uint32_t leaf, uint32_t i, unsigned char *buf)
{
	uint32_t bs = ab->g->blocksize, from = ab->leaf_first[leaf], to = ab->leaf_first[leaf + 1];
	struct xfs_attr3_leaf_hdr *h = (void *)buf;
	uint32_t top = bs, used = 0, base;

	blkinfo(ab, buf, XFS_ATTR3_LEAF_MAGIC, i, ab->levels && leaf ? tree_index(ab, 0, leaf - 1) : 0,
		ab->levels && leaf + 1 < ab->nleaf ? tree_index(ab, 0, leaf + 1) : 0);
	for (uint32_t k = from; k < to; k++) {
		const struct aent *a = &ab->v[k];
		const struct fs_attrbuild_ent *e = &ab->ents[a->idx];
		unsigned char *ent = buf + LEAF_HDR + (size_t)(k - from) * LEAF_ENT;
		unsigned char *nm;

		top -= a->entsize;
		used += a->entsize;
		nm = buf + top;
		put_be32(ent, a->hash);
		put_be16(ent + 4, (uint16_t)top);
		ent[6] = (uint8_t)(e->flags | (a->local ? XFS_ATTR_LOCAL : 0));
		if (a->local) {
			put_be16(nm, (uint16_t)e->valuelen);
			nm[2] = e->namelen;
			memcpy(nm + 3, e->name, e->namelen);
			if (e->valuelen)
				memcpy(nm + 3 + e->namelen, e->value, e->valuelen);
		} else {
			put_be32(nm, a->rmtblk);
			put_be32(nm + 4, e->valuelen);
			nm[8] = e->namelen;
			memcpy(nm + 9, e->name, e->namelen);
		}
	}
	base = (uint32_t)(LEAF_HDR + (size_t)(to - from) * LEAF_ENT);
	h->count = to_be16((uint16_t)(to - from));
	h->usedbytes = to_be16((uint16_t)used);
	h->firstused = to_be16((uint16_t)(top == 65536 ? 0 : top));
	/* the free region between the table and the names, as a compacted leaf has it */
	h->freemap[0].base = to_be16((uint16_t)base);
	h->freemap[0].size = to_be16((uint16_t)(top - base));
	fs_crc_update(buf, bs, XFS_ATTR3_LEAF_CRC_OFF);
}

int fs_attrbuild_encode(const struct fs_attrbuild *ab, uint32_t i, void *out, fs_fsblock_t *fsb)
{
	uint32_t bs = ab->g->blocksize;
	unsigned char *buf = out;

	if (!ab->phys || i >= ab->nblocks)
		return -EINVAL;
	memset(buf, 0, bs);
	*fsb = ab->phys[i];
	if (i < ab->ntree) {
		uint32_t level, idx, first, end;
		struct xfs_da3_node_hdr *h = (void *)buf;

		tree_pos(ab, i, &level, &idx);
		if (level == 0) {
			enc_leaf(ab, idx, i, buf);
			return 0;
		}
		blkinfo(ab, buf, XFS_DA3_NODE_MAGIC, i, idx ? tree_index(ab, level, idx - 1) : 0,
			idx + 1 < ab->lvcnt[level] ? tree_index(ab, level, idx + 1) : 0);
		tree_kids(ab, level, idx, &first, &end);
		h->__count = to_be16((uint16_t)(end - first));
		h->__level = to_be16((uint16_t)level);
		for (uint32_t c = first; c < end; c++) {
			unsigned char *e = buf + NODE_HDR + (size_t)(c - first) * NODE_ENT;

			put_be32(e, tree_maxhash(ab, level - 1, c));
			put_be32(e + 4, tree_index(ab, level - 1, c));
		}
		fs_crc_update(buf, bs, XFS_DA3_NODE_CRC_OFF);
		return 0;
	}
	/* a remote value block: which value, which piece */
	for (size_t k = 0; k < ab->n; k++) {
		const struct aent *a = &ab->v[k];
		const struct fs_attrbuild_ent *e = &ab->ents[a->idx];
		uint32_t space = bs - (uint32_t)RMT_HDR, nb, off, len;
		struct xfs_attr3_rmt_hdr *h = (void *)buf;

		if (a->local || i < a->rmtblk)
			continue;
		nb = fs_attr_rmt_blocks(ab->g, e->valuelen);
		if (i >= a->rmtblk + nb)
			continue;
		off = (i - a->rmtblk) * space;
		len = e->valuelen - off < space ? e->valuelen - off : space;
		h->rm_magic = to_be32(XFS_ATTR3_RMT_MAGIC);
		h->rm_offset = to_be32(off);
		h->rm_bytes = to_be32(len);
		memcpy(&h->rm_uuid, ab->g->meta_uuid, 16);
		h->rm_owner = to_be64(ab->ino);
		h->rm_blkno = to_be64(fs_fsb_to_daddr(ab->g, ab->phys[i]));
		memcpy(buf + RMT_HDR, e->value + off, len);
		fs_crc_update(buf, bs, XFS_ATTR3_RMT_CRC_OFF);
		return 0;
	}
	return -EINVAL;
}
