/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_REBUILD_H
#define XFSX_REPAIR_PHASE_REBUILD_H

#include "repair/plan.h"

/* phase_rebuild.c: AG headers and btrees rebuilt from the model. */
int repair_phase_rebuild(struct repair_ctx *rx);

#endif
