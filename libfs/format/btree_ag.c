// SPDX-License-Identifier: GPL-2.0
/*
 * The AGF-rooted btrees' descriptions for the generic btree code: free
 * space by block number (bno) and by extent size (cnt), reverse mappings
 * (rmap, an overlapping tree: nodes carry low and high keys) and reference
 * counts (refcount).  Records, keys and
 * magics come from <xfs/xfs_format.h>; the walker and block field rules are
 * btree.c's.
 */
#include "libfs/format/btree_ag.h"

#include <string.h>

#include "libfs/format/endian.h"

static uint32_t alloc_maxlevels(const struct fs_geom *g)
{
	return g->alloc_maxlevels;
}

/* An allocation btree key has the record's layout: the key is the record. */
static void alloc_rec_key(const void *rec, void *key)
{
	memcpy(key, rec, sizeof(xfs_alloc_key_t));
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return x < y ? -1 : x > y;
}

/* keys may sit in byte buffers: read fields through get_be32, never by cast */
#define START(p) get_be32((const unsigned char *)(p) + offsetof(xfs_alloc_key_t, ar_startblock))
#define COUNT(p) get_be32((const unsigned char *)(p) + offsetof(xfs_alloc_key_t, ar_blockcount))

/* bno: ordered by start block alone */
static int bno_key_cmp(const void *a, const void *b)
{
	return cmp_u32(START(a), START(b));
}

/* cnt: ordered by length, then start block */
static int cnt_key_cmp(const void *a, const void *b)
{
	int c = cmp_u32(COUNT(a), COUNT(b));

	return c ? c : cmp_u32(START(a), START(b));
}

static bool alloc_rec_valid(const struct fs_geom *g, fs_agnumber_t agno, const void *rec)
{
	struct fs_alloc_rec r;

	fs_alloc_rec_decode(rec, &r);
	return fs_alloc_rec_problem(g, agno, &r) == NULL;
}

static uint32_t rmap_maxlevels(const struct fs_geom *g)
{
	return g->rmap_maxlevels;
}

static uint32_t refc_maxlevels(const struct fs_geom *g)
{
	return g->refc_maxlevels;
}

#define RK(field) offsetof(struct xfs_rmap_key, field)
#define RR(field) offsetof(struct xfs_rmap_rec, field)

static void rmap_rec_key(const void *rec, void *key)
{
	const unsigned char *r = rec;
	unsigned char *k = key;

	memcpy(k + RK(rm_startblock), r + RR(rm_startblock), 4);
	memcpy(k + RK(rm_owner), r + RR(rm_owner), 8);
	memcpy(k + RK(rm_offset), r + RR(rm_offset), 8);
}

/* The last block a record maps; file mappings advance their offset with it. */
static void rmap_rec_high_key(const void *rec, void *key)
{
	const unsigned char *r = rec;
	unsigned char *k = key;
	uint32_t len = get_be32(r + RR(rm_blockcount));
	uint32_t adj = len ? len - 1 : 0;
	uint64_t owner = get_be64(r + RR(rm_owner));
	uint64_t off = get_be64(r + RR(rm_offset));

	put_be32(k + RK(rm_startblock), get_be32(r + RR(rm_startblock)) + adj);
	put_be64(k + RK(rm_owner), owner);
	if (!XFS_RMAP_NON_INODE_OWNER(owner) && !(off & XFS_RMAP_OFF_BMBT_BLOCK))
		off = (off & ~XFS_RMAP_OFF_MASK) | ((XFS_RMAP_OFF(off) + adj) & XFS_RMAP_OFF_MASK);
	put_be64(k + RK(rm_offset), off);
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* start block, owner, then offset with its fork/bmbt flags (unwritten does not order) */
static int rmap_key_cmp(const void *a, const void *b)
{
	const unsigned char *x = a, *y = b;
	int c = cmp_u32(get_be32(x + RK(rm_startblock)), get_be32(y + RK(rm_startblock)));

	if (!c)
		c = cmp_u64(get_be64(x + RK(rm_owner)), get_be64(y + RK(rm_owner)));
	if (!c)
		c = cmp_u64(get_be64(x + RK(rm_offset)) & ~XFS_RMAP_OFF_UNWRITTEN,
			    get_be64(y + RK(rm_offset)) & ~XFS_RMAP_OFF_UNWRITTEN);
	return c;
}

static bool rmap_rec_valid(const struct fs_geom *g, fs_agnumber_t agno, const void *rec)
{
	struct fs_rmap_rec r;

	fs_rmap_rec_decode(rec, &r);
	return fs_rmap_rec_problem(g, agno, &r) == NULL;
}

static void refc_rec_key(const void *rec, void *key)
{
	memcpy(key, rec, sizeof(struct xfs_refcount_key));
}

/* the raw start block, CoW flag included: staging extents sort after shared ones */
static int refc_key_cmp(const void *a, const void *b)
{
	return cmp_u32(get_be32(a), get_be32(b));
}

static bool refc_rec_valid(const struct fs_geom *g, fs_agnumber_t agno, const void *rec)
{
	struct fs_refc_rec r;

	fs_refc_rec_decode(rec, &r);
	return fs_refc_rec_problem(g, agno, &r) == NULL;
}

static const struct fs_btree_ops ag_table[FS_BTREE_AG_NR] = {
	[FS_BTREE_AG_BNO] = {
		.type = FS_BTREE_NR, .name = "free space (bno) btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_BNOBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_BNOBT_OWNER, [FS_BTC_BLKNO] = FS_C_BNOBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_BNOBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_BNOBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_BNOBT_SIBLING, [FS_BTC_PTR] = FS_C_BNOBT_PTR,
			[FS_BTC_KEY] = FS_C_BNOBT_KEY, [FS_BTC_ORDER] = FS_C_BNOBT_ORDER,
			[FS_BTC_LOOP] = FS_C_BNOBT_LOOP, [FS_BTC_DEPTH] = FS_C_BNOBT_DEPTH,
			[FS_BTC_REC] = FS_C_NR,
		},
		.mtype = FS_MT_BNOBT, .magic = XFS_ABTB_CRC_MAGIC,
		.rec_len = sizeof(xfs_alloc_rec_t), .key_len = sizeof(xfs_alloc_key_t),
		.ptr_len = sizeof(xfs_alloc_ptr_t), .maxlevels = alloc_maxlevels,
		.rec_key = alloc_rec_key, .key_cmp = bno_key_cmp, .rec_valid = alloc_rec_valid,
	},
	[FS_BTREE_AG_CNT] = {
		.type = FS_BTREE_NR, .name = "free space (cnt) btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_CNTBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_CNTBT_OWNER, [FS_BTC_BLKNO] = FS_C_CNTBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_CNTBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_CNTBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_CNTBT_SIBLING, [FS_BTC_PTR] = FS_C_CNTBT_PTR,
			[FS_BTC_KEY] = FS_C_CNTBT_KEY, [FS_BTC_ORDER] = FS_C_CNTBT_ORDER,
			[FS_BTC_LOOP] = FS_C_CNTBT_LOOP, [FS_BTC_DEPTH] = FS_C_CNTBT_DEPTH,
			[FS_BTC_REC] = FS_C_NR,
		},
		.mtype = FS_MT_CNTBT, .magic = XFS_ABTC_CRC_MAGIC,
		.rec_len = sizeof(xfs_alloc_rec_t), .key_len = sizeof(xfs_alloc_key_t),
		.ptr_len = sizeof(xfs_alloc_ptr_t), .maxlevels = alloc_maxlevels,
		.rec_key = alloc_rec_key, .key_cmp = cnt_key_cmp, .rec_valid = alloc_rec_valid,
	},
	[FS_BTREE_AG_RMAP] = {
		.type = FS_BTREE_NR, .name = "reverse mapping btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_RMAPBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_RMAPBT_OWNER, [FS_BTC_BLKNO] = FS_C_RMAPBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_RMAPBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_RMAPBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_RMAPBT_SIBLING, [FS_BTC_PTR] = FS_C_RMAPBT_PTR,
			[FS_BTC_KEY] = FS_C_RMAPBT_KEY, [FS_BTC_ORDER] = FS_C_RMAPBT_ORDER,
			[FS_BTC_LOOP] = FS_C_RMAPBT_LOOP, [FS_BTC_DEPTH] = FS_C_RMAPBT_DEPTH,
			[FS_BTC_REC] = FS_C_RMAPBT_REC,
		},
		.mtype = FS_MT_RMAPBT, .magic = XFS_RMAP_CRC_MAGIC, .overlapping = true,
		.rec_len = sizeof(struct xfs_rmap_rec), .key_len = sizeof(struct xfs_rmap_key),
		.ptr_len = sizeof(xfs_rmap_ptr_t), .maxlevels = rmap_maxlevels,
		.rec_key = rmap_rec_key, .rec_high_key = rmap_rec_high_key, .key_cmp = rmap_key_cmp,
		.rec_valid = rmap_rec_valid,
	},
	[FS_BTREE_AG_REFC] = {
		.type = FS_BTREE_NR, .name = "reference count btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_REFCBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_REFCBT_OWNER, [FS_BTC_BLKNO] = FS_C_REFCBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_REFCBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_REFCBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_REFCBT_SIBLING, [FS_BTC_PTR] = FS_C_REFCBT_PTR,
			[FS_BTC_KEY] = FS_C_REFCBT_KEY, [FS_BTC_ORDER] = FS_C_REFCBT_ORDER,
			[FS_BTC_LOOP] = FS_C_REFCBT_LOOP, [FS_BTC_DEPTH] = FS_C_REFCBT_DEPTH,
			[FS_BTC_REC] = FS_C_REFCBT_REC,
		},
		.mtype = FS_MT_REFCBT, .magic = XFS_REFC_CRC_MAGIC,
		.rec_len = sizeof(struct xfs_refcount_rec), .key_len = sizeof(struct xfs_refcount_key),
		.ptr_len = sizeof(xfs_refcount_ptr_t), .maxlevels = refc_maxlevels,
		.rec_key = refc_rec_key, .key_cmp = refc_key_cmp, .rec_valid = refc_rec_valid,
	},
};

const struct fs_btree_ops *fs_btree_ag_ops(enum fs_btree_ag_type t)
{
	return t < FS_BTREE_AG_NR ? &ag_table[t] : NULL;
}

void fs_alloc_rec_decode(const void *rec, struct fs_alloc_rec *out)
{
	out->startblock = START(rec);
	out->blockcount = COUNT(rec);
}

const char *fs_alloc_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				 const struct fs_alloc_rec *r)
{
	uint32_t agblocks = fs_ag_blocks(g, agno);

	if (r->blockcount == 0)
		return "extent has no blocks";
	if (r->startblock < g->ag_hdr_blocks || r->startblock >= agblocks)
		return "extent starts outside the AG or on its headers";
	if (r->blockcount > agblocks - r->startblock)
		return "extent runs past the end of the AG";
	return NULL;
}

int fs_bnobt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(&ag_table[FS_BTREE_AG_BNO], c, buf, len);
}

int fs_cntbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(&ag_table[FS_BTREE_AG_CNT], c, buf, len);
}

void fs_rmap_rec_decode(const void *rec, struct fs_rmap_rec *out)
{
	const unsigned char *r = rec;
	uint64_t off = get_be64(r + RR(rm_offset));

	out->startblock = get_be32(r + RR(rm_startblock));
	out->blockcount = get_be32(r + RR(rm_blockcount));
	out->owner = get_be64(r + RR(rm_owner));
	out->offset = XFS_RMAP_OFF(off);
	out->attr_fork = off & XFS_RMAP_OFF_ATTR_FORK;
	out->bmbt_block = off & XFS_RMAP_OFF_BMBT_BLOCK;
	out->unwritten = off & XFS_RMAP_OFF_UNWRITTEN;
}

/* an extent of the AG past its headers, without overflow */
static bool agbext_ok(const struct fs_geom *g, fs_agnumber_t agno, uint32_t start, uint32_t len)
{
	uint32_t aglen = fs_ag_blocks(g, agno);

	return len && start >= g->ag_hdr_blocks && start < aglen && len <= aglen - start;
}

const char *fs_rmap_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				const struct fs_rmap_rec *r)
{
	bool is_inode = !XFS_RMAP_NON_INODE_OWNER(r->owner);

	if (r->blockcount == 0)
		return "mapping has no blocks";
	if (r->startblock < g->ag_hdr_blocks) {
		/* only the AG headers themselves live there, as one mapping */
		if (r->owner != XFS_RMAP_OWN_FS || r->blockcount != g->ag_hdr_blocks)
			return "mapping of the AG header blocks is not the static metadata's";
	} else if (!agbext_ok(g, agno, r->startblock, r->blockcount)) {
		return "mapping runs outside the AG";
	}
	if (!(is_inode ? fs_ino_valid(g, r->owner) :
	      r->owner <= XFS_RMAP_OWN_FS && r->owner >= XFS_RMAP_OWN_MIN))
		return "owner is neither a valid inode nor a known special owner";
	if (r->bmbt_block && r->offset != 0)
		return "extent map btree block mapping has a file offset";
	if (!is_inode && (r->offset || r->bmbt_block || r->unwritten || r->attr_fork))
		return "special owner with a file offset or fork flags";
	if (r->unwritten && (r->bmbt_block || r->attr_fork))
		return "unwritten flag on a btree block or attribute fork mapping";
	if (is_inode && !r->bmbt_block && r->offset + r->blockcount > XFS_MAX_FILEOFF)
		return "file offset past the largest file";
	return NULL;
}

void fs_refc_rec_decode(const void *rec, struct fs_refc_rec *out)
{
	const unsigned char *r = rec;
	uint32_t start = get_be32(r + offsetof(struct xfs_refcount_rec, rc_startblock));

	out->cow = start & XFS_REFC_COWFLAG;
	out->startblock = start & ~XFS_REFC_COWFLAG;
	out->blockcount = get_be32(r + offsetof(struct xfs_refcount_rec, rc_blockcount));
	out->refcount = get_be32(r + offsetof(struct xfs_refcount_rec, rc_refcount));
}

const char *fs_refc_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				const struct fs_refc_rec *r)
{
	if (r->blockcount == 0)
		return "extent has no blocks";
	if (r->cow ? r->refcount != 1 : r->refcount < 2)
		return r->cow ? "CoW staging extent with a reference count other than 1" :
				"shared extent with a reference count below 2";
	if (!agbext_ok(g, agno, r->startblock, r->blockcount))
		return "extent runs outside the AG or over its headers";
	return NULL;
}

int fs_rmapbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(&ag_table[FS_BTREE_AG_RMAP], c, buf, len);
}

int fs_refcbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(&ag_table[FS_BTREE_AG_REFC], c, buf, len);
}
