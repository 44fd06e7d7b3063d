/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGATTR_H
#define XFSX_LOGATTR_H
#include <stddef.h>
#include <stdint.h>
#include "libfs/format.h"
#include "libfs/logread.h"

/* An xattr intent (ATTRI) as the log states it, its name and value in the item's regions. */
struct fs_log_attri {
	uint64_t id, ino;
	uint32_t op;               /* XFS_ATTRI_OP_FLAGS_SET / REMOVE / REPLACE */
	uint32_t filter;           /* XFS_ATTR_ROOT / XFS_ATTR_SECURE (INCOMPLETE dropped) */
	uint32_t namelen, valuelen;
	const unsigned char *name, *value;   /* point into the item */
};

/*
 * Decode and check an ATTRI item as the kernel checks it when it meets one
 * in the log (whether or not its done item follows): 0, or -EUCLEAN with
 * why saying what is wrong.
 */
int fs_log_attri_parse(const struct fs_geom *g, const struct fs_log_item *it,
		       struct fs_log_attri *a, char *why, size_t wl);
#endif
