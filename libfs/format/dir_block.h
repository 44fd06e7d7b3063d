/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_DIR_BLOCK_H
#define XFSX_DIR_BLOCK_H

/*
 * What dir.c and dir_walk.c share of the directory block layouts: part
 * sizes, the report shorthand, the two special names.
 */
#include "libfs/format/dir.h"

#define DATA_HDR   sizeof(struct xfs_dir3_data_hdr)
#define LEAF_HDR   sizeof(struct xfs_dir3_leaf_hdr)
#define FREE_HDR   sizeof(struct xfs_dir3_free_hdr)
#define LEAF_ENT   sizeof(struct xfs_dir2_leaf_entry)
#define BLOCK_TAIL sizeof(struct xfs_dir2_block_tail)
#define LEAF_TAIL  sizeof(struct xfs_dir2_leaf_tail)

#define REPORT(c, daddr, code, field, exp, found, ...)                                     \
	fs_report((c)->fl, code, (c)->agno, (daddr) ? (int64_t)(daddr) : FS_NONE, (int64_t)(c)->ino, \
		  field, exp, \
		  found, __VA_ARGS__)

static inline bool is_dot(const unsigned char *n, uint32_t len)
{
	return len == 1 && n[0] == '.';
}

static inline bool is_dotdot(const unsigned char *n, uint32_t len)
{
	return len == 2 && n[0] == '.' && n[1] == '.';
}

#endif
