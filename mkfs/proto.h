/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xfsx_mkfs -p: the tree to copy into the new filesystem, read from a
 * directory (-p DIR) or an mkfs.xfs protofile (-p PROTOFILE), and the
 * writer that places it (populate.c).
 */
#ifndef XFSX_MKFS_PROTO_H
#define XFSX_MKFS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/build/encode.h"
#include "libfs/io/io.h"
#include "libfs/util/arena.h"
#include "mkfs/plan.h"

struct proto_xattr {
	uint8_t flags;             /* XFS_ATTR_ROOT / XFS_ATTR_SECURE / 0 (user) */
	uint8_t namelen;
	uint32_t valuelen;
	char *name;                /* without the namespace prefix */
	unsigned char *value;
};

struct proto_dent {
	char *name;                /* in the tree's string pool */
	uint32_t child;            /* inode index */
	uint8_t namelen;
};

/*
 * One inode of the tree (hard links: several names, one inode).  The
 * fields are ordered by size, the times split into seconds and
 * nanoseconds: no padding (192 bytes, not 224).
 */
struct proto_inode {
	int64_t tsec[4];           /* atime, mtime, ctime, crtime: seconds */
	uint64_t size;
	uint64_t src_blocks;       /* regular: 512-byte blocks the source has (holes: fewer) */
	char *src;                 /* regular: file to copy from; symlink: the target (both in
				    * the tree's string pool) */
	struct proto_xattr *xattrs;
	struct proto_dent *ents;   /* directories */
	/* placement and what the inode core records (populate.c) */
	fs_ino_t ino;
	uint64_t nblocks, nextents;
	unsigned char *dfork, *afork;
	uint32_t tnsec[4];         /* the times' nanoseconds */
	uint32_t mode;             /* st_mode */
	uint32_t uid, gid, nlink;
	uint32_t rdev;             /* sysv-encoded (major << 18 | minor) */
	uint32_t srclen;
	uint32_t nxattrs;
	uint32_t parent;           /* inode index of the parent (the root: itself) */
	uint32_t nents, capents;
	uint32_t agno;
	uint32_t anextents;
	uint32_t dfork_len, afork_len;
	uint8_t format, aformat, forkoff;
};

static inline void proto_set_time(struct proto_inode *in, int i, int64_t sec, uint32_t nsec)
{
	in->tsec[i] = sec;
	in->tnsec[i] = nsec;
}

/*
 * Everything that grows with the tree lives in its arena (a file in the
 * temporary directory, libfs/util/arena.h), so the resident set stays
 * flat: the inode array in a region of its own (it grows in place), the
 * names, source paths, entry arrays, xattrs and encoded forks in the
 * heap region, populate's per-AG records (chunk slots, rmap records,
 * parent pointer links) too, and its passing arrays in the scratch
 * region (given back when done).
 */
enum { PROTO_AR_INODES, PROTO_AR_HEAP, PROTO_AR_SCRATCH, PROTO_AR_NREGIONS };
#define PROTO_AR_REGION_BYTES ((size_t)256 << 30)

struct proto_tree {
	struct proto_inode *v;     /* v[0] is the root directory */
	uint32_t n, cap;
	struct fs_arena ar;
	char **src_set;            /* open addressing, a power of two in size */
	size_t src_cap, src_n;
	uint64_t data_bytes;       /* regular file data to copy (holes left out) */
	bool warned_system_xattr;
};

/*
 * Read the tree at path: a directory (every file type, hard links, xattrs,
 * owners, modes, times) or a protofile, into an arena in tmpdir.  0, or -1
 * with a message in err naming the path (and for a protofile the line and
 * column), or the temporary directory when it cannot hold the tree.
 */
int proto_read(const char *path, const char *tmpdir, struct proto_tree *t, char *err,
	       size_t errlen);
/*
 * Room in the arena's file, now, for what placing and writing the tree
 * adds (chunk slots, rmap records, forks, parent pointer links): so a
 * temporary directory too small fails before the target is written.
 * 0, or -1 with the message in err.
 */
int proto_reserve(struct proto_tree *t, bool parent, char *err, size_t errlen);
/* The arena's error as a message naming its directory ("out of memory" without one). */
int proto_nomem(const struct proto_tree *t, char *err, size_t errlen);
void proto_free(struct proto_tree *t);

/*
 * Place the tree in the filesystem mkfs_write just laid out (on dev, with
 * plan p) and write it: inodes, file data, directories, symlinks, xattrs,
 * and every AG's headers and btrees rebuilt to hold them.  sb gets the
 * counters.  progress: report on stderr.  0, or a negative errno with a
 * message in err.
 */
int proto_populate(struct fs_dev *dev, const struct mkfs_plan *p, struct proto_tree *t,
		   struct xfs_sb *sb, bool progress, char *err, size_t errlen);

#endif
