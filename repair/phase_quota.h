/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_QUOTA_H
#define XFSX_REPAIR_PHASE_QUOTA_H

#include "repair/plan.h"

/* phase_quota.c: dquots rewritten, quota recounted by the kernel. */
int repair_phase_quota(struct repair_ctx *rx);
bool repair_quota_covers(const struct repair_ctx *rx, const struct fs_finding *f);

#endif
