/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGRES_H
#define XFSX_LOGRES_H

#include "libfs/format/format.h"

/*
 * The smallest log a geometry may have, in filesystem blocks: what the
 * kernel checks at mount (a v5 filesystem with a smaller log does not
 * mount) and what mkfs.xfs sizes its logs from.  It is three times the
 * largest transaction reservation the kernel can make, so it follows the
 * block, inode and directory sizes, the btree heights and the features.
 * logsunit_bytes is the superblock's sb_logsunit (0 or 1: none).
 * XFS_MIN_LOG_BLOCKS is not applied here.
 */
uint32_t fs_log_min_blocks(const struct fs_geom *g, uint32_t logsunit_bytes);

#endif
