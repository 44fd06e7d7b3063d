/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PPTR_GUARD_H
#define XFSX_REPAIR_PPTR_GUARD_H

#include "repair/plan.h"

/*
 * On a filesystem with parent pointers, a plan that would change a
 * directory, a link count, lost+found or an xattr fork is not written:
 * this version does not keep the parent pointers in step with such
 * changes.  A real repair drops the plan's writes (every finding left,
 * exit 4) and says why; -n says what it would do and that a repair would
 * refuse.  Plans that touch only AG headers, btrees and superblock
 * counters go on.  true: the plan was refused (rx->refused).
 */
bool repair_pptr_guard(struct repair_ctx *rx);

#endif
