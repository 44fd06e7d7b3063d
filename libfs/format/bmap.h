/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_BMAP_H
#define XFSX_BMAP_H

#include <sys/types.h>

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/inode.h"

/*
 * The block map of one inode fork: the extents of an extents-format fork,
 * or the leaf records of a btree-format fork (bmbt blocks read, verified
 * through the verifier table and walked).  Everything the check of file
 * blocks, directories, xattrs and symlinks needs to find a fork's blocks.
 */

/* One mapping: file blocks [startoff, startoff+blockcount) at startblock. */
struct fs_bmap_ext {
	uint64_t startoff;         /* file offset in filesystem blocks */
	fs_fsblock_t startblock;   /* XFS_FSB_TO_... encoded (agno << agblklog | agbno) */
	uint64_t blockcount;
	bool unwritten;
};

/* A fork's mappings in file-offset order, plus the bmbt blocks that hold them. */
struct fs_bmap {
	struct fs_bmap_ext *ext;
	size_t n;
	fs_fsblock_t *bmbt;        /* bmbt blocks (btree format), in walk order */
	size_t nbmbt;
	bool bad;                  /* findings were made; the map may be incomplete */
};

/* How fs_bmap_load reads a bmbt block and where it reports. */
struct fs_bmap_ctx {
	const struct fs_geom *g;
	struct fs_findings *fl;    /* NULL: load silently (bulkstat, dir readers) */
	bool have_log_head;
	uint64_t head_lsn;
	/* read one filesystem block (blocksize bytes) into buf: 0 or negative errno */
	int (*read_fsblock)(void *priv, fs_fsblock_t fsb, void *buf);
	void *priv;
	uint64_t rblocks;          /* realtime device blocks; 0 = unknown (rt extents not judged) */
};

/*
 * Load the mappings of fork whichfork (XFS_DATA_FORK / XFS_ATTR_FORK) of
 * the inode in dinode (decoded as ip).  Local and device forks have no
 * mappings (n = 0).  Record rules checked with findings (code family
 * "bmap."/"bmbt."): startblock inside the filesystem and its AG, no zero
 * length, offsets ascending and not overlapping, the extent count the
 * inode claims, unwritten only where allowed; bmbt blocks as every btree
 * block (magic, CRC, UUID, owner = the inode, blkno, level, siblings,
 * key order).  Returns 0 (findings say what was wrong, out->bad set) or a
 * negative errno on operational failure (-ENOMEM).
 */
int fs_bmap_load(const struct fs_bmap_ctx *c, const void *dinode, const struct fs_inode *ip,
		 int whichfork, struct fs_bmap *out);
void fs_bmap_free(struct fs_bmap *m);

/*
 * The child blocks a btree-format fork's root (in the inode) points to,
 * at most max of them, for readahead: nothing is verified or reported
 * (fs_bmap_load does that); pointers outside the filesystem are left out.
 * 0 when the fork is not a btree or its root is unusable.
 */
size_t fs_bmap_root_children(const struct fs_geom *g, const void *dinode,
			     const struct fs_inode *ip, int whichfork, fs_fsblock_t *out, size_t max);

/* Unpack / pack one on-disk bmbt record (struct xfs_bmbt_rec, 16 bytes). */
void fs_bmbt_rec_decode(const void *rec, struct fs_bmap_ext *e);
void fs_bmbt_rec_encode(const struct fs_bmap_ext *e, void *rec);

/*
 * The mapping holding file block off: its index in m->ext, or -1 for a
 * hole.  Binary search; m->ext must be sorted (fs_bmap_load leaves it so).
 */
ssize_t fs_bmap_find(const struct fs_bmap *m, uint64_t off);

/* The filesystem block holding file block off: false for a hole or a block outside the fs. */
bool fs_bmap_fsb(const struct fs_geom *g, const struct fs_bmap *m, uint64_t off,
		 fs_fsblock_t *fsb);

/* Filesystem blocks mapped in [0, end) (a directory/xattr's logical range). */
uint64_t fs_bmap_blocks(const struct fs_bmap *m);

#endif
