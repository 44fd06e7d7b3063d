/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_COUNTERS_H
#define XFSX_REPAIR_PHASE_COUNTERS_H

#include "repair/plan.h"

/* phase_counters.c: the superblock counters from what was built. */
int repair_phase_counters(struct repair_ctx *rx);

#endif
