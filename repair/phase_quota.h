/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_QUOTA_H
#define XFSX_REPAIR_PHASE_QUOTA_H

#include "repair/plan.h"

/* phase_quota.c: dquots rewritten, quota recounted by the kernel. */
int repair_phase_quota(struct repair_ctx *rx);
/* The plan rule of a quota finding (fix.c's table): its dquot block's bad records rewritten. */
int repair_quota_plan_block(struct repair_ctx *rx, const struct fs_finding *f, void *arg);

#endif
