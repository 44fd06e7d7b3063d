/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_DIRBUILD_H
#define XFSX_DIRBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/format/bmap.h"
#include "libfs/format/dir.h"
#include "libfs/format/format.h"

/*
 * The directory encoder shared by xfsx_mkfs -p and xfsx_repair's
 * directory rebuild: a set of entries in, a v5 directory out in the
 * smallest format that holds it (short form, block, leaf, node), blocks
 * that pass the verifier table and walk back through libfs/format/dir.c.
 *
 * Two steps, so the caller can allocate in between:
 *
 *   struct fs_dirbuild *b;
 *   fs_dirbuild_plan(g, ino, parent, ents, n, sf_max, &b);
 *   if (b->fmt == FS_DIR_SHORT)
 *           fs_dirbuild_sf(b, dfork);            // b->sf_bytes into the data fork
 *   else {
 *           // b->nblocks directory blocks, each b->fsbs contiguous fs blocks,
 *           // at logical fs block fs_dirbuild_lblk(b, i); choose phys[i]
 *           fs_dirbuild_encode(b, phys, bufs);   // bufs[i]: g->dirblksize bytes
 *           n = fs_dirbuild_extents(b, phys, ext);  // the data fork's mappings
 *   }
 *   inode: di_size = b->size, format local/extents/btree, nblocks, nextents
 *   fs_dirbuild_free(b);
 *
 * ents (and the names they point to) must stay valid until the last call.
 */

/* One entry to store; "." and ".." are implied by ino and parent. */
struct fs_dirbuild_ent {
	fs_ino_t ino;
	const unsigned char *name;
	uint8_t namelen;           /* 1..255 */
	uint8_t ftype;             /* XFS_DIR3_FT_* (ignored without the ftype feature) */
};

struct fs_dirbuild {
	enum fs_dir_format fmt;    /* FS_DIR_SHORT, _BLOCK, _LEAF or _NODE */
	uint64_t size;             /* the inode's di_size */
	uint32_t sf_bytes;         /* short form: bytes of the data fork used (= size) */
	uint32_t ndata, nleaf, nfree; /* directory blocks in each space */
	uint32_t nblocks;          /* ndata + nleaf + nfree */
	uint32_t fsbs;             /* fs blocks per directory block (g->dirblkfsbs) */
	uint32_t levels;           /* node form: DA tree levels above the leaves (0: one leaf) */
	/* private */
	const struct fs_geom *g;
	fs_ino_t ino, parent;
	const struct fs_dirbuild_ent *ents;
	size_t n;
	struct fs_dirbuild_slot *slots; /* n + 2 (".", "..", then ents), in data order */
	uint32_t *byhash;          /* slot indexes in (hash, address) order */
	uint16_t *bests;           /* longest free region per data block */
};

/*
 * Choose the format and count the blocks.  sf_max is the data fork's
 * literal area in bytes (0: never short form).  -EINVAL for a bad name
 * (empty, '/', NUL, "." or ".."), ftype or inode number; -EEXIST for a
 * name given twice (case folded on ascii-ci filesystems); -EFBIG when the
 * directory does not fit the data space; -ENOMEM.  *out on success.
 */
int fs_dirbuild_plan(const struct fs_geom *g, fs_ino_t ino, fs_ino_t parent,
		     const struct fs_dirbuild_ent *ents, size_t n, size_t sf_max,
		     struct fs_dirbuild **out);

/* Logical fs block (file offset) of directory block i, i < nblocks. */
uint64_t fs_dirbuild_lblk(const struct fs_dirbuild *b, uint32_t i);

/* Short form: write b->sf_bytes bytes of the fork into dfork. */
void fs_dirbuild_sf(const struct fs_dirbuild *b, void *dfork);

/*
 * Block/leaf/node: encode directory block i into bufs[i] (g->dirblksize
 * bytes each), living at fs block phys[i] (the first of b->fsbs
 * contiguous ones): headers (blkno, owner, metadata UUID, LSN 0), entries,
 * hashes, bestfree tables, tags and CRCs.  0 or -EINVAL (short form).
 */
int fs_dirbuild_encode(const struct fs_dirbuild *b, const fs_fsblock_t *phys, void *const *bufs);

/*
 * The data fork's mappings for phys[]: logical runs merged where the
 * physical blocks follow on.  ext must hold b->nblocks entries; returns
 * how many were written (in file-offset order).
 */
size_t fs_dirbuild_extents(const struct fs_dirbuild *b, const fs_fsblock_t *phys,
			   struct fs_bmap_ext *ext);

void fs_dirbuild_free(struct fs_dirbuild *b);

#endif
