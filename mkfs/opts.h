/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MKFS_OPTS_H
#define XFSX_MKFS_OPTS_H

#include <stddef.h>

#include "mkfs/plan.h"

enum mkfs_parse_result { MKFS_PARSE_OK = 0, MKFS_PARSE_ERROR, MKFS_PARSE_HELP, MKFS_PARSE_VERSION };

/*
 * Parse mkfs.xfs-style options into o and the target path.  On error the
 * message (naming the option and the accepted values) is in err.
 */
enum mkfs_parse_result mkfs_parse_args(int argc, char **argv, struct mkfs_opts *o,
				       const char **target, char *err, size_t errlen);

extern const char mkfs_usage[];

#endif
