/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_XATTRS_H
#define XFSX_REPAIR_PHASE_XATTRS_H

#include <stdio.h>

#include "repair/plan.h"

/* phase_xattrs.c: damaged attr forks rebuilt from what verifies; ATTRIs completed. */
int repair_phase_xattrs(struct repair_ctx *rx);
/* Per inode, what the salvage kept, dropped or cleared: text lines or a JSON array. */
void repair_xattrs_print(const struct repair_ctx *rx, FILE *out, bool json);
uint64_t repair_xattrs_rebuilt(const struct repair_ctx *rx);
void repair_xattrs_free(struct repair_ctx *rx);

#endif
