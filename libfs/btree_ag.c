// SPDX-License-Identifier: GPL-2.0
/*
 * The AGF-rooted btrees' descriptions for the generic btree code: free
 * space by block number (bno) and by extent size (cnt).  Records, keys and
 * magics come from <xfs/xfs_format.h>; the walker and block field rules are
 * btree.c's.
 */
#include "libfs/btree_ag.h"

#include <string.h>

#include "libfs/endian.h"

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

static const struct fs_btree_ops ag_table[FS_BTREE_AG_NR] = {
	[FS_BTREE_AG_BNO] = {
		.type = FS_BTREE_NR, .name = "free space (bno) btree", .code_prefix = "bnobt",
		.mtype = FS_MT_BNOBT, .magic = XFS_ABTB_CRC_MAGIC,
		.rec_len = sizeof(xfs_alloc_rec_t), .key_len = sizeof(xfs_alloc_key_t),
		.ptr_len = sizeof(xfs_alloc_ptr_t), .maxlevels = alloc_maxlevels,
		.rec_key = alloc_rec_key, .key_cmp = bno_key_cmp, .rec_valid = alloc_rec_valid,
	},
	[FS_BTREE_AG_CNT] = {
		.type = FS_BTREE_NR, .name = "free space (cnt) btree", .code_prefix = "cntbt",
		.mtype = FS_MT_CNTBT, .magic = XFS_ABTC_CRC_MAGIC,
		.rec_len = sizeof(xfs_alloc_rec_t), .key_len = sizeof(xfs_alloc_key_t),
		.ptr_len = sizeof(xfs_alloc_ptr_t), .maxlevels = alloc_maxlevels,
		.rec_key = alloc_rec_key, .key_cmp = cnt_key_cmp, .rec_valid = alloc_rec_valid,
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
	return fs_btree_sblock_verify_fields(&ag_table[FS_BTREE_AG_BNO], c, buf, len);
}

int fs_cntbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_sblock_verify_fields(&ag_table[FS_BTREE_AG_CNT], c, buf, len);
}
