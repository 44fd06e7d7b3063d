/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MKFS_WRITE_H
#define XFSX_MKFS_WRITE_H

#include <stddef.h>

#include "libfs/io/io.h"
#include "mkfs/plan.h"
#include "mkfs/proto.h"

/*
 * Write the planned filesystem to dev, holding tree when not NULL (-p).
 * Negative errno, message in err; a failure after the target was touched
 * leaves the primary superblock zeroed (nothing that looks like XFS).
 */
int mkfs_write(struct fs_dev *dev, const struct mkfs_plan *p, const struct mkfs_opts *o,
	       struct proto_tree *tree, bool progress, char *err, size_t errlen);

/* Print the geometry in mkfs.xfs's layout. */
void mkfs_print_geometry(const char *target, const struct mkfs_plan *p);

#endif
