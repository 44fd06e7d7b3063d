/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_FIX_H
#define XFSX_REPAIR_FIX_H

#include <stdio.h>

#include "repair/plan.h"

/* fix.c: the one decision point, and the per-finding report. */
/* The AG a finding is about (its ag, else its daddr's), or FS_NONE. */
int64_t repair_finding_ag(const struct repair_ctx *rx, const struct fs_finding *f);
/* Mark every finding the plan covers as fixed; returns how many are left. */
size_t repair_decide(struct repair_ctx *rx);
/* Print the fixes: "fixed" / "would fix" / "left", one line per finding. */
void repair_report_text(const struct repair_ctx *rx, FILE *out);
void repair_report_json(const struct repair_ctx *rx, FILE *out);
/*
 * The inodes in use that the plan frees (nothing showed what they held):
 * "cleared ino N (PATH): ... data is lost" lines, or a JSON array of {ino, path}.
 */
size_t repair_report_cleared(const struct repair_ctx *rx, FILE *out, bool json);
/* How many such inodes. */
size_t repair_count_cleared(const struct repair_ctx *rx);
/* The scan of the planned result's findings, each with "new" (none before), or null. */
void repair_report_after_json(const struct repair_ctx *rx, FILE *out);

#endif
