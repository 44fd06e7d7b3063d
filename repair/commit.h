/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_COMMIT_H
#define XFSX_REPAIR_COMMIT_H

#include <stddef.h>

#include "repair/plan.h"

/* commit.c: the plan written under the crash protocol. */
/* Write the plan (crash protocol); 0, or a negative errno with err saying what stopped. */
int repair_commit(struct repair_ctx *rx, char *err, size_t errlen);
/* -L: the log replaced by a clean one a cycle past the head, flushed. */
int repair_zero_log(struct fs *fs, char *err, size_t errlen);

#endif
