/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_SB_H
#define XFSX_REPAIR_PHASE_SB_H

#include "repair/plan.h"

/* phase_sb.c: the superblocks to rewrite. */
int repair_phase_sb(struct repair_ctx *rx);

#endif
