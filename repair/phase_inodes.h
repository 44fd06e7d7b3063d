/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_INODES_H
#define XFSX_REPAIR_PHASE_INODES_H

#include "repair/plan.h"

/* phase_inodes.c: verdicts on inodes, cores mended. */
int repair_phase_inodes(struct repair_ctx *rx);
/*
 * The inode in links slot s is one the AGI unlinked lists' processing frees
 * (on a list, no links, no directory names it).
 */
bool repair_unlinked_frees(const struct repair_ctx *rx, uint64_t s);
/* Remove an inode's attr fork in its core (forkoff 0, no extents). */
void repair_attr_fork_reset(const struct fs_geom *g, unsigned char *dip);

#endif
