/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MKFS_TARGET_H
#define XFSX_MKFS_TARGET_H

#include <stddef.h>

#include "mkfs/plan.h"

/* Size, sector sizes, stripe topology and rotation of a device or file. */
int mkfs_target_probe(const char *path, struct mkfs_topo *t, char *err, size_t errlen);
/* Refuse a mounted target (directly, or an image behind a mounted loop device). */
int mkfs_target_check_unmounted(const char *path, char *err, size_t errlen);
/* Refuse a target that holds a filesystem or partition table. */
int mkfs_target_check_empty(const char *path, char *err, size_t errlen);

#endif
