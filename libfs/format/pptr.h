/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_PPTR_H
#define XFSX_PPTR_H

#include "libfs/format/format.h"
#include "libfs/format/attr.h"

/*
 * Parent pointers (the parent feature): every link of a file to a
 * directory is also an xattr of the file in the parent namespace
 * (XFS_ATTR_PARENT), its name the directory entry's name, its value a
 * struct xfs_parent_rec (the directory's inode number and generation,
 * big-endian, 12 bytes, always local), its leaf hash the directory name
 * hash mixed with the parent's inode number (xfs_parent_hashval).
 */

/* What is wrong with a parent pointer xattr, as decoded (FS_PPTR_OK: nothing). */
enum fs_pptr_problem {
	FS_PPTR_OK,
	FS_PPTR_NAME,              /* empty, or a '/' or NUL in it, or marked incomplete */
	FS_PPTR_VALUE,             /* not a local value of exactly 12 bytes */
	FS_PPTR_INO,               /* the parent's inode number cannot name an inode */
};

struct fs_pptr {
	fs_ino_t parent;
	uint32_t gen;
	const uint8_t *name;       /* the entry's bytes; valid as long as the entry's buffer */
	uint8_t namelen;
};

/* The entry is a parent pointer (its namespace bit), whatever else it holds. */
static inline bool fs_attr_is_pptr(const struct fs_attr_ent *e)
{
	return e->flags & XFS_ATTR_PARENT;
}

/* A parent pointer xattr entry decoded and judged (xfs_parent_from_attr's rules). */
enum fs_pptr_problem fs_pptr_decode(const struct fs_geom *g, const struct fs_attr_ent *e,
				    struct fs_pptr *p);

/* The name hash of a parent pointer: the directory hash of name ^ both halves of parent. */
uint32_t fs_parent_hashval(const struct fs_geom *g, const uint8_t *name, size_t len,
			   fs_ino_t parent);

/*
 * The hash a leaf entry must carry: a parent pointer's (from its value:
 * 0 when the value is not a 12-byte local one), else the da name hash.
 */
uint32_t fs_attr_ent_hashval(const struct fs_geom *g, const struct fs_attr_ent *e);

/*
 * A 64-bit digest of a name, for matching directory entries with parent
 * pointers without keeping the names (two different names share a digest
 * with probability 2^-64).
 */
uint64_t fs_name_digest(const uint8_t *name, size_t len);

/* "problem" as people read it: "name", "value", "parent inode". */
const char *fs_pptr_problem_name(enum fs_pptr_problem p);

#endif
