/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BTREE_H
#define XFSX_BTREE_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

/*
 * The btrees of this table: the per-AG inode btrees and the bmbt (long
 * format, rooted in an inode fork).  The AGF's trees (bno, cnt, rmap,
 * refcount) are rows of the same shape in btree_ag.h (fs_btree_ag_ops,
 * type FS_BTREE_NR); the generic walker and block rules take any row.
 */
enum fs_btree_type {
	FS_BTREE_INO,
	FS_BTREE_FINO,
	FS_BTREE_BMBT,             /* long format, rooted in an inode fork (walked by bmap.c) */
	FS_BTREE_NR
};

/* The checks of a tree's blocks and walk: each one a finding code of the tree's own. */
enum fs_btree_check {
	FS_BTC_UNREADABLE, FS_BTC_OWNER, FS_BTC_BLKNO, FS_BTC_LEVEL, FS_BTC_NUMRECS,
	FS_BTC_SIBLING, FS_BTC_PTR, FS_BTC_KEY, FS_BTC_ORDER, FS_BTC_LOOP, FS_BTC_DEPTH,
	FS_BTC_REC,
	FS_BTC_NR
};

/* What the generic code needs to know about one btree type. */
struct fs_btree_ops {
	enum fs_btree_type type;
	const char *name;          /* for messages: "inode btree" */
	/* the code of each check (FS_C_NR: the tree has no such check) */
	enum fs_code codes[FS_BTC_NR];
	enum fs_mtype mtype;       /* the verifier-table row for its blocks */
	uint32_t magic;            /* v5 (CRC) magic */
	bool long_format;          /* 64-bit sibling/child pointers, owner is an inode */
	bool overlapping;          /* node entries carry a low and a high key (rmap+reflink) */
	uint16_t rec_len;          /* bytes per leaf record */
	uint16_t key_len;          /* bytes per (low) key */
	uint16_t ptr_len;          /* bytes per child pointer */
	/* height the geometry allows */
	uint32_t (*maxlevels)(const struct fs_geom *g);
	/* the low key of a leaf record, written to key (key_len bytes) */
	void (*rec_key)(const void *rec, void *key);
	/*
	 * Overlapping trees: the high key of a leaf record (the last block it
	 * covers, with the matching file offset), key_len bytes.
	 */
	void (*rec_high_key)(const void *rec, void *key);
	/* order of two keys: <0, 0, >0 */
	int (*key_cmp)(const void *a, const void *b);
	/*
	 * Optional: false when a leaf record is invalid on its own (say,
	 * outside the AG).  The walker still hands it to visit_rec (to be
	 * reported) but leaves it out of the key order check, so one wild
	 * record does not make every later record look out of order.
	 */
	bool (*rec_valid)(const struct fs_geom *g, fs_agnumber_t agno, const void *rec);
};

const struct fs_btree_ops *fs_btree_ops_get(enum fs_btree_type t);

/* A btree block header in host order (short and long format alike). */
struct fs_btree_hdr {
	uint32_t magic;
	uint16_t level, numrecs;
	uint64_t leftsib, rightsib; /* NULLAGBLOCK / NULLFSBLOCK when none */
	uint64_t blkno;             /* daddr the block claims to live at */
	uint64_t lsn;
	uint64_t owner;             /* AG number (short) or inode (long) */
	uint32_t crc;
};

size_t fs_btree_hdr_len(const struct fs_btree_ops *ops);
void fs_btree_hdr_decode(const struct fs_btree_ops *ops, const void *block,
			 struct fs_btree_hdr *h);
/* Records (leaf) or key/pointer pairs (node) a block of this size holds. */
uint32_t fs_btree_maxrecs(const struct fs_btree_ops *ops, size_t blocksize, bool leaf);

/* Where record / key / pointer i of a block is (no bounds checks: i < maxrecs). */
const void *fs_btree_rec(const struct fs_btree_ops *ops, const void *block, uint32_t i);
const void *fs_btree_key(const struct fs_btree_ops *ops, const void *block, uint32_t i);
uint64_t fs_btree_ptr(const struct fs_btree_ops *ops, const void *block, size_t blocksize,
		      uint32_t i);

/*
 * Field rules of a btree block for the verifier table: blkno is the daddr
 * it was read from, level below the geometry's maximum for the tree,
 * numrecs within maxrecs.  Short format: owner is c->agno, siblings NULL
 * or inside the AG.  Long format (bmbt): owner is c->ino, siblings NULL or
 * inside the filesystem and off the AG headers.  The common
 * magic/CRC/UUID/LSN checks come from the table row.
 */
int fs_btree_block_verify_fields(const struct fs_btree_ops *ops, const struct fs_vctx *c,
				 const void *buf, size_t len);

/*
 * Walk a short-format btree from its root, visiting leaf records in key
 * order.  Every block is verified through the verifier table; the walk also
 * checks what only the tree shape can tell: each child's level is its
 * parent's minus one, child pointers stay inside the AG, keys ascend and
 * match the child's first key, sibling pointers link the blocks of a level
 * in order, no block is reached twice (loops), and the height is within
 * what the geometry allows.  A bad block is reported and its subtree
 * skipped; the walk carries on with the rest of the tree.
 */
struct fs_btree_walk {
	const struct fs_btree_ops *ops;
	const struct fs_geom *g;
	struct fs_findings *fl;
	struct fs_vctx vc;          /* agno, log head (daddr is set per block) */
	fs_agblock_t root;
	uint32_t nlevels;           /* height the AG header claims */

	/* Read one filesystem block of this AG into buf (blocksize bytes). */
	int (*read_block)(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf);
	/* Each block that verified, before its records (may be NULL). */
	int (*visit_block)(void *priv, uint32_t level, fs_agblock_t agbno, const void *block);
	/* Each leaf record in key order; a nonzero return stops the walk and is returned. */
	int (*visit_rec)(void *priv, const void *rec);
	void *priv;

	/* results */
	uint64_t blocks;            /* blocks read and accepted */
	uint64_t records;           /* records visited */
	uint32_t bad_blocks;        /* blocks rejected (their subtrees were skipped) */
};

/*
 * 0 when the walk finished (findings say what was wrong), a callback's
 * nonzero value when it stopped the walk, negative errno on an operational
 * failure (out of memory).
 */
int fs_btree_walk(struct fs_btree_walk *w);

/* Inode btree records (inobt and finobt share the layout). */
struct fs_inobt_rec {
	fs_agino_t startino;
	uint16_t holemask;          /* bit i: inodes 4i..4i+3 are not allocated space */
	uint8_t count;              /* inodes with space behind them */
	uint8_t freecount;
	uint64_t free;              /* bit i: inode startino+i is free (holes are free too) */
};

void fs_inobt_rec_decode(const struct fs_geom *g, const void *rec, struct fs_inobt_rec *out);
/* Mask of inodes of the chunk that have space behind them (not in a hole). */
uint64_t fs_inobt_rec_allocmask(const struct fs_inobt_rec *r);
/*
 * The record's internal rules (the kernel's inobt record check): startino
 * aligned and inside the AG, count and freecount consistent with the hole
 * and free masks.  Returns NULL or what is wrong, for a message.
 */
const char *fs_inobt_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				 const struct fs_inobt_rec *r);

#endif
