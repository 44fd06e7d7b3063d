/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BLOAD_H
#define XFSX_BLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format/btree.h"
#include "libfs/io/cache.h"
#include "libfs/format/format.h"

/*
 * The btree bulk loader: one for every btree type of the ops tables
 * (libfs/format/btree.h: inobt, finobt, bmbt; libfs/format/btree_ag.h: bno, cnt, rmap,
 * refcount).  Records, already encoded on-disk and in key order, fill the
 * leaves left to right leaving slack; each node level is built from the
 * first keys of the level below (and, for overlapping trees such as rmap,
 * the highest key of each subtree); blocks of a level are linked by
 * sibling pointers; headers carry magic, level, numrecs, owner (AG or
 * inode), blkno, the metadata UUID, LSN 0 and a CRC.  Short format trees
 * get a root block; a bmbt's root lives in its inode fork (bmdr format),
 * or the fork holds the records as an extent list when they fit.
 *
 * Every non-root block holds at least half its capacity (the minimum
 * xfs_repair and the kernel's shape rules accept); slack is honoured
 * wherever that allows.
 */

#define FS_BLOAD_MAXLEVELS 16

/*
 * Empty slots to leave in each leaf / node block.  Negative: the default,
 * blocks about 75% full (as the kernel's bulk loader does).  Clamped to
 * [0, maxrecs - maxrecs/2].  0 packs blocks full (the free-space trees of
 * a repair that must fit, mkfs).
 */
struct fs_bload_slack {
	int leaf, node;
};

/* The shape of a tree: what fs_bload_build will allocate and write. */
struct fs_bload_geom {
	uint32_t nlevels;          /* height (bmbt: counting the root in the fork); 0: no btree */
	uint64_t nblocks;          /* blocks to allocate (a bmbt's in-fork root not included) */
	uint64_t level_blocks[FS_BLOAD_MAXLEVELS]; /* per level, [0] = leaves; bmbt root: 0 */
	uint32_t leaf_max, node_max;    /* entries a leaf / node block can hold */
	uint32_t leaf_fill, node_fill;  /* entries aimed at per block (capacity minus slack) */
	uint32_t root_entries;     /* entries of the root (block or in-fork root) */
	bool root_in_fork;         /* bmbt as a btree: the top level is the fork's bmdr root */
	bool fork_extents;         /* bmbt: records fit the fork as an extent list; no blocks */
};

/*
 * The geometry for nrecs records of tree ops in blocks of blocksize bytes.
 * fork_size: for the bmbt, the bytes of the inode fork that holds the root
 * (fs_inode_fork_size); ignored for other trees.  The free-space trees'
 * callers iterate: blocks taken from free space change the record count,
 * so they recompute until nblocks is stable.
 * 0, or -EINVAL (no ops, a block too small for two records, a bmbt fork
 * too small for a root), -EFBIG (more than FS_BLOAD_MAXLEVELS levels).
 */
int fs_bload_compute_geometry(const struct fs_btree_ops *ops, uint32_t blocksize, uint64_t nrecs,
			      const struct fs_bload_slack *slack, uint32_t fork_size,
			      struct fs_bload_geom *out);

/* One bulk load: the caller fills the inputs, fs_bload_build the results. */
struct fs_bload {
	/* inputs */
	const struct fs_btree_ops *ops;
	const struct fs_geom *g;   /* blocksize, meta_uuid, address conversions, max heights */
	fs_agnumber_t agno;        /* short format: the AG (owner; pointers are its agbnos) */
	fs_ino_t ino;              /* long format (bmbt): the owning inode */
	struct fs_bload_slack slack;
	uint64_t nrecs;
	/*
	 * The records, rec_len bytes each, in key order (strictly ascending;
	 * overlapping trees: never descending).  Either an array ...
	 * (neither is needed for nrecs 0: an empty tree is one empty leaf)
	 */
	const void *recs;
	/* ... or, when recs is NULL, a source: copy the next n records to out; 0 or -errno. */
	int (*get_recs)(void *priv, void *out, uint32_t n);
	/*
	 * A new block for the tree: an AG block of agno (short format) or a
	 * filesystem block (long format), free and not handed out before.
	 * Called geom.nblocks times, leaves first (left to right), then each
	 * node level.  0 or -errno (the build stops with it).
	 */
	int (*alloc_block)(void *priv, uint64_t *ptr);
	/*
	 * A finished block (blocksize bytes, CRC set) for ptr at level: the
	 * caller writes or copies it (fs_bload_cache_writer puts it in a dirty
	 * cache buffer).  0 or -errno (the build stops with it).
	 */
	int (*write_block)(void *priv, uint64_t ptr, uint32_t level, const void *block);
	void *priv;
	/* bmbt: the fork area (fork_size bytes), overwritten with an extent list or a bmdr root */
	void *fork;
	uint32_t fork_size;

	/* results */
	struct fs_bload_geom geom;
	uint64_t root;             /* short format: the root block (agbno); bmbt: NULLFSBLOCK */
	uint32_t nlevels;          /* the height to record (AGF/AGI levels, bmdr level + 1) */
	uint8_t fork_format;       /* bmbt: XFS_DINODE_FMT_EXTENTS or XFS_DINODE_FMT_BTREE */
	uint64_t blocks_written;
	uint64_t bad_rec;          /* on -EINVAL for a record: its index */
};

/*
 * Build the tree.  Returns 0, or:
 *   -EINVAL  bad inputs, or record bad_rec is out of key order or fails the
 *            type's own record rules (ops->rec_valid); nothing more written
 *   -EFBIG   the tree would be taller than the geometry allows
 *   -ENOMEM, or a callback's negative errno (the build stops there; blocks
 *            already written are the caller's to discard)
 * Owns nothing after it returns (its buffers are freed).
 */
int fs_bload_build(struct fs_bload *b);

/*
 * An inode fork rewritten from its extents (file-offset order, n of them):
 * into the fork area (fork_size bytes) as an extent list when they fit,
 * else as a bmbt from the bulk loader, blocks packed full (slack 0), each
 * from alloc_block and handed to write_block (fs_bload's callbacks, priv
 * theirs).  Shared by repair's rebuilt forks and the log replay's
 * completed BUIs.  *format the fork format, *blocks the bmbt blocks
 * written.  0 or fs_bload_build's errors.
 */
struct fs_bmap_ext;
int fs_bload_fork(const struct fs_geom *g, fs_ino_t ino, const struct fs_bmap_ext *ext, size_t n,
		  void *fork, uint32_t fork_size, int (*alloc_block)(void *priv, uint64_t *ptr),
		  int (*write_block)(void *priv, uint64_t ptr, uint32_t level, const void *block),
		  void *priv, uint8_t *format, uint64_t *blocks);

/*
 * A write_block for fs_bload that puts each block in a dirty cache buffer
 * of the tree's metadata type (fs_cache_get_new + fs_buf_mark_dirty), to
 * be flushed with fs_cache_flush.  priv is a struct fs_bload_cache_target.
 * -ENOSPC when the dirty set would pass the cache's cap.
 */
struct fs_bload_cache_target {
	struct fs_cache *cache;
	const struct fs_geom *g;
	const struct fs_btree_ops *ops;
	fs_agnumber_t agno;        /* short format: the AG */
	fs_ino_t ino;              /* long format: the owner */
	uint8_t wclass;            /* FS_WCLASS_* (new blocks: FS_WCLASS_NEW) */
};
int fs_bload_cache_writer(void *priv, uint64_t ptr, uint32_t level, const void *block);

#endif
