/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_LOG_H
#define XFSX_REPAIR_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "repair/plan.h"
#include "scan/log.h"

/* log.c: the dirty log a repair meets at the open. */

struct fs_undo;

struct repair_log {
	struct scan_log sl;        /* the replay (scan/replay.c), when there was one */
	bool refused;              /* stopped at the dirty log (xfs_repair's exit 2) */
	/* -n, per open ATTRI: judged as stopping the kernel's recovery; and how many */
	bool *attri_refused;
	size_t attris_refused;
};

/*
 * A dirty log: refused (--no-replay, a replay that fails, an intent a
 * repair cannot complete), or replayed (in memory with -n, else written,
 * the undo file made first, at *undo, when o asks for one) and the
 * filesystem opened again over it (*fs, *fl replaced).  0 to go on;
 * 1 refused, msg saying why (nothing written); -1 stopped, said on stderr.
 */
int repair_log_meet(struct repair_log *lg, const struct repair_opts *o, const char *path,
		    struct fs_open_opts *oo, struct fs **fs, struct fs_findings *fl,
		    struct fs_undo **undo, char *msg, size_t ml);
void repair_log_free(struct repair_log *lg);

#endif
