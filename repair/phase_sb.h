/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_SB_H
#define XFSX_REPAIR_PHASE_SB_H

#include "repair/plan.h"

/* phase_sb.c: the superblocks to rewrite. */
int repair_phase_sb(struct repair_ctx *rx);
/*
 * The plan rule of a superblock finding while the primary is mended (fix.c's
 * table): a field the primary's finding names taken from the vote's copy.
 */
int repair_sb_plan_field(struct repair_ctx *rx, const struct fs_finding *f, void *fields);

#endif
