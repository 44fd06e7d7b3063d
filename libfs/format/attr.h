/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_ATTR_H
#define XFSX_ATTR_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

/*
 * Extended attributes of v5 filesystems: the short form kept in the attr
 * fork, attr3 leaf blocks and remote value blocks.  Decoders bound every
 * offset by the block; verifiers report findings (families "attr." and
 * "attrrmt.") and return how many they made.  The tree above the leaves
 * (DA3 node blocks) is libfs/format/da.c's.
 */

/* One attribute entry as found in a leaf block or the short form. */
struct fs_attr_ent {
	uint32_t hash;             /* leaf: stored hash; short form: 0 */
	uint16_t nameidx;          /* leaf: offset of the name structure */
	uint8_t flags;             /* XFS_ATTR_* */
	bool local;                /* value stored next to the name */
	uint8_t namelen;
	const uint8_t *name;
	uint32_t valuelen;
	const uint8_t *value;      /* local values only */
	uint32_t valueblk;         /* remote values: first attr fork block */
	uint32_t entsize;          /* bytes of the name structure, padded */
};

/* A decoded attr3 leaf header. */
struct fs_attr_leaf_hdr {
	uint32_t forw, back;
	uint16_t magic;
	uint64_t blkno, owner, lsn;
	uint16_t count, usedbytes;
	uint32_t firstused;        /* NULLOFF (0) turned into the block size */
	uint8_t holes;
	uint16_t freebase[XFS_ATTR_LEAF_MAPSIZE], freesize[XFS_ATTR_LEAF_MAPSIZE];
};

/* Bytes a local / remote name structure takes in a leaf block (what usedbytes sums). */
uint32_t fs_attr_entsize_local(uint32_t namelen, uint32_t valuelen);
uint32_t fs_attr_entsize_remote(uint32_t namelen);

/* Remote value blocks a value of len bytes takes (each block has a header). */
uint32_t fs_attr_rmt_blocks(const struct fs_geom *g, uint32_t len);

/* Header of a leaf block of blksize bytes (at least the header's size). */
void fs_attr_leaf_hdr_decode(const void *buf, size_t blksize, struct fs_attr_leaf_hdr *h);

/*
 * Entry idx of a leaf block, its name structure bounded by the block:
 * false when the entry or its name/value does not fit (e is then partial).
 */
bool fs_attr_leaf_entry(const void *buf, size_t blksize, const struct fs_attr_leaf_hdr *h,
			uint32_t idx, struct fs_attr_ent *e);

/*
 * Field rules of an attr3 leaf block for the verifier table (owner is
 * c->ino, blkno is c->daddr): firstused, count, entries in hash order,
 * names inside the block and not overlapping, flags, usedbytes, freemap.
 */
int fs_attr_leaf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/*
 * Stored hash of every entry against the name's hash (hashfn: the da name
 * hash).  Separate from the table row so the row needs no hash function.
 */
typedef uint32_t (*fs_attr_hash_fn)(const uint8_t *name, int len);
int fs_attr_leaf_verify_hashes(const struct fs_vctx *c, const void *buf, size_t len,
			       fs_attr_hash_fn hashfn);

/*
 * Short form attr fork (fork: the fork's bytes, forksize of them): header,
 * totsize inside the fork, count entries ending exactly at totsize, names
 * not empty and without NUL, one namespace at most, no unknown flags.
 * Each good entry goes to cb when not NULL.
 */
typedef void (*fs_attr_ent_fn)(void *priv, const struct fs_attr_ent *e);
int fs_attr_sf_verify(const struct fs_vctx *c, const void *fork, size_t forksize,
		      fs_attr_ent_fn cb, void *priv);

/*
 * Field rules of one remote value block (blocksize bytes) for the verifier
 * table: owner (c->ino), blkno (c->daddr), bytes fit, offset + bytes within
 * the largest value.
 */
int fs_attr_rmt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/* Header of a remote value block. */
struct fs_attr_rmt_hdr {
	uint32_t offset, bytes;
	uint64_t owner, blkno, lsn;
};
void fs_attr_rmt_hdr_decode(const void *buf, struct fs_attr_rmt_hdr *h);

#endif
