/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_DA_H
#define XFSX_DA_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

/*
 * The directory/attribute ("da") btree shared by directories and xattrs:
 * the name hash both key on, and the v5 DA3 node block (magic
 * XFS_DA3_NODE_MAGIC) that indexes their leaf blocks by hash.
 *
 * Users (dir.c, attr.c):
 *  - fs_da_hashname()/fs_dir_hashname(): the hash of a name;
 *  - fs_verify(FS_MT_DA_NODE, vc, buf, len) with vc->ino = owning inode and
 *    vc->daddr = the block's disk address: header checks (codes "da.*":
 *    magic, CRC, UUID, LSN, owner, blkno, count, level, hash order);
 *  - fs_da3_node_decode() to read the entries (bounds-checked);
 *  - fs_da3_node_check_ptrs() for the rules that need the fork's logical
 *    range (children inside it, not pointing at the node itself).
 */

/* xfs_da_hashname: the hash every directory entry and xattr name is keyed on. */
uint32_t fs_da_hashname(const unsigned char *name, size_t len);
/* xfs_ascii_ci_hashname: the same for ascii-ci filesystems (latin-1 case folded). */
uint32_t fs_da_hashname_ci(const unsigned char *name, size_t len);
/* The directory name hash this filesystem uses (ci when the sb says ascii-ci). */
uint32_t fs_dir_hashname(const struct fs_geom *g, const unsigned char *name, size_t len);

/* A decoded DA3 node block; ents points into the caller's buffer. */
struct fs_da_node {
	uint32_t forw, back;       /* sibling da blocks (0: none) */
	uint16_t magic;
	uint16_t count, level;
	uint64_t blkno, owner, lsn;
	const struct xfs_da_node_entry *ents;   /* count entries, inside the buffer */
};

/* Entries a node block of len bytes can hold. */
uint32_t fs_da3_node_maxents(size_t len);

/*
 * Decode a DA3 node header: 0, or -EINVAL if the buffer is too short, the
 * magic is not XFS_DA3_NODE_MAGIC or count does not fit in the block (out
 * is then filled as far as it could be, with ents NULL).
 */
int fs_da3_node_decode(const void *buf, size_t len, struct fs_da_node *out);

/* Hash value / child block of entry i (i < count: the caller checks). */
uint32_t fs_da_node_hash(const struct fs_da_node *n, uint32_t i);
uint32_t fs_da_node_before(const struct fs_da_node *n, uint32_t i);

/*
 * Rules needing the fork's shape: every child pointer in [lo, hi) (logical
 * fs blocks of the fork) and not the node's own block self.  Reports
 * FS_C_DA_PTR with vc's object; returns the number of findings.
 */
int fs_da3_node_check_ptrs(const struct fs_vctx *vc, const struct fs_da_node *n, uint32_t self,
			   uint32_t lo, uint32_t hi);

/* Field rules for the verifier table row FS_MT_DA_NODE. */
int fs_da3_node_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

#endif
