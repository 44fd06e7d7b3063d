/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_RT_H
#define XFSX_REPAIR_PHASE_RT_H

#include "repair/plan.h"

/* phase_rt.c: the realtime bitmap, summary and their inodes. */
int repair_phase_rt(struct repair_ctx *rx);

#endif
