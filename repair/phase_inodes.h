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
/*
 * The inode step's plan rules, one per fix action (fix.c's table pairs
 * each with its covered rule); arg is the step's suspect byte per slot.
 */
int repair_inodes_plan_clear(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
int repair_inodes_plan_crc(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
int repair_inodes_plan_field(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
int repair_inodes_plan_fork(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
int repair_inodes_plan_xattr(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
int repair_inodes_plan_symlink(struct repair_ctx *rx, const struct fs_finding *f, void *suspects);
/* (a directory finding) a DA node of the xattrs: the attr fork salvaged */
int repair_inodes_plan_attr_node(struct repair_ctx *rx, const struct fs_finding *f,
				 void *suspects);
/* (an AG btree finding) rmap.missing: the inode's claim is one the rmapbt does not back */
int repair_inodes_plan_unbacked(struct repair_ctx *rx, const struct fs_finding *f,
				void *suspects);
/* Remove an inode's attr fork in its core (forkoff 0, no extents). */
void repair_attr_fork_reset(const struct fs_geom *g, unsigned char *dip);

#endif
