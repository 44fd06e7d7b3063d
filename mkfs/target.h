/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MKFS_TARGET_H
#define XFSX_MKFS_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "libfs/io/target.h"
#include "mkfs/plan.h"

/*
 * Sector sizes, stripe topology and rotation of a device or file that
 * fs_target_check examined (ti: its type and size).
 */
int mkfs_target_probe(const char *path, const struct fs_target_info *ti, struct mkfs_topo *t,
		      char *err, size_t errlen);
/* Refuse a target where libblkid found a filesystem or partition table. */
int mkfs_target_check_empty(const char *path, const struct fs_target_info *ti, char *err,
			    size_t errlen);
/* Grow an image file to size (sparse); with noaction, only find out whether it could. */
int mkfs_target_extend(const char *path, uint64_t size, bool noaction, char *err, size_t errlen);

#endif
