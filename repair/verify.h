/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_VERIFY_H
#define XFSX_REPAIR_VERIFY_H

#include <stddef.h>

#include "repair/plan.h"

/* verify.c: the plan judged before the first write. */
/*
 * Open the filesystem again with the plan shown to its reads and run the
 * scan over it; rx->fixed[i] is then whether finding i is gone,
 * rx->verified what is left and what the plan would bring in.  0, or a
 * negative errno with msg saying why (nothing written either way).
 */
int repair_verify_plan(struct repair_ctx *rx, char *msg, size_t ml);
void repair_verified_free(struct repair_ctx *rx);
/*
 * The inodes to blame for what the plan would bring in: named by a new
 * finding (or its cause), with findings of their own before the plan, kept
 * by it (not cleared).  Added to *v (sorted, no repeats); 0 or -ENOMEM.
 */
int repair_blame(const struct repair_ctx *rx, fs_ino_t **v, size_t *n);
/*
 * Once the plan is decided: what the blame and the report need of the
 * first scan's per-inode state, kept in rx->kept (0 or -ENOMEM).  Then
 * repair_release_scan frees that state (link records and model, verdicts,
 * the namespace's per-slot flags, parent pointers), before the scan of the
 * planned result; the cache, with the plan's dirty buffers, stays.
 */
int repair_keep_for_report(struct repair_ctx *rx);
void repair_release_scan(struct repair_ctx *rx);
void repair_kept_free(struct repair_ctx *rx);
/* Whether the scan of the planned result still makes finding f (its code, its object). */
bool repair_verified_has(const struct repair_verified *vf, const struct fs_finding *f);

#endif
