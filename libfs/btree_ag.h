/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BTREE_AG_H
#define XFSX_BTREE_AG_H

#include "libfs/btree.h"

/*
 * The per-AG btrees rooted in the AGF: free space by block (bno) and by
 * size (cnt).  Their rows follow the generic table's shape (struct
 * fs_btree_ops), so the generic walker and short-block field rules apply.
 */
enum fs_btree_ag_type {
	FS_BTREE_AG_BNO,
	FS_BTREE_AG_CNT,
	FS_BTREE_AG_NR
};

const struct fs_btree_ops *fs_btree_ag_ops(enum fs_btree_ag_type t);

/* A free-space record in host order. */
struct fs_alloc_rec {
	fs_agblock_t startblock;
	uint32_t blockcount;
};

void fs_alloc_rec_decode(const void *rec, struct fs_alloc_rec *out);
/*
 * The record's own rules: a non-empty extent wholly inside the AG and past
 * its headers.  NULL or what is wrong, for a message.
 */
const char *fs_alloc_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				 const struct fs_alloc_rec *r);

/* Field rules for the verifier table. */
int fs_bnobt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_cntbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

#endif
