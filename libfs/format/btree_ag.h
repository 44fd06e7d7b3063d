/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BTREE_AG_H
#define XFSX_BTREE_AG_H

#include "libfs/format/btree.h"

/*
 * The per-AG btrees rooted in the AGF: free space by block (bno) and by
 * size (cnt), reverse mappings (rmap) and reference counts (refcount).
 * Their rows follow the generic table's shape (struct fs_btree_ops), so the
 * generic walker and short-block field rules apply.
 */
enum fs_btree_ag_type {
	FS_BTREE_AG_BNO,
	FS_BTREE_AG_CNT,
	FS_BTREE_AG_RMAP,
	FS_BTREE_AG_REFC,
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

/* A reverse mapping record in host order (flags split out of the offset). */
struct fs_rmap_rec {
	fs_agblock_t startblock;
	uint32_t blockcount;
	uint64_t owner;
	uint64_t offset;            /* without the flag bits */
	bool attr_fork, bmbt_block, unwritten;
};

void fs_rmap_rec_decode(const void *rec, struct fs_rmap_rec *out);
/* The kernel's rmap record rules.  NULL or what is wrong. */
const char *fs_rmap_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				const struct fs_rmap_rec *r);

/* A reference count record: shared extents, and CoW staging extents (cow). */
struct fs_refc_rec {
	fs_agblock_t startblock;    /* without the CoW flag */
	uint32_t blockcount;
	uint32_t refcount;
	bool cow;
};

void fs_refc_rec_decode(const void *rec, struct fs_refc_rec *out);
const char *fs_refc_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				const struct fs_refc_rec *r);

/* Field rules for the verifier table. */
int fs_bnobt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_cntbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_rmapbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_refcbt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

#endif
