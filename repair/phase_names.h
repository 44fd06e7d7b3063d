/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_NAMES_H
#define XFSX_REPAIR_PHASE_NAMES_H

#include <stdio.h>

#include "repair/plan.h"

/* phase_names.c: the namespace (directories, lost+found, link counts). */
int repair_phase_names(struct repair_ctx *rx);
/* The fix actions of the namespace (directories to quota): phase_names.c decides. */
static inline bool repair_fix_is_names(enum fs_fix fix)
{
	return fix >= FS_FIX_DIR && fix <= FS_FIX_RT;
}
/* Whether the namespace plan covers a finding with one of those actions. */
bool repair_names_covers(const struct repair_ctx *rx, const struct fs_finding *f);
void repair_names_free(struct repair_ctx *rx);
/* Each inode moved to lost+found: a text line, or a JSON array of {ino, to}. */
void repair_names_print_moves(const struct repair_ctx *rx, FILE *out, bool json);
/* The path inode ino had before the repair, where the namespace tells it; else NULL. */
const char *repair_names_path(const struct repair_ctx *rx, int64_t ino);
/* What the namespace phase did, for the summary. */
void repair_names_counts(const struct repair_ctx *rx, uint64_t *rebuilt, uint64_t *moved,
			 uint64_t *nlinks);

#endif
