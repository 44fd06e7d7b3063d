/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_WORKQ_H
#define XFSX_WORKQ_H

#include <stdint.h>

#include "libfs/format/format.h"

/*
 * Per-AG parallelism.  Work items are groups of ag_stride consecutive AGs,
 * handed out to the threads in increasing AG order, so a few threads cover
 * many AGs and the lowest unfinished AG is always being worked on (callers
 * that emit per-AG results in AG order rely on that).  More threads than
 * groups never helps: the pool is cut down to the number of groups.
 */

/* Called once per AG by one worker; a nonzero return stops handing out work. */
typedef int (*fs_ag_work_fn)(void *priv, fs_agnumber_t agno, unsigned worker);

struct fs_ag_workq_opts {
	unsigned threads;          /* 0: one per online CPU */
	uint32_t ag_stride;        /* AGs per work item; 0 means 1 */
	fs_agnumber_t first_ag;    /* AGs first_ag .. first_ag + ag_count - 1 */
	fs_agnumber_t ag_count;
};

/* Workers the run will use (threads clamped to the number of groups, at least 1). */
unsigned fs_ag_workq_threads(const struct fs_ag_workq_opts *o);

/*
 * Run fn over the AGs.  worker is 0..fs_ag_workq_threads()-1, so callers can
 * keep per-thread state in an array.  Returns the first nonzero value a call
 * returned (in AG order), or negative errno if threads could not start.
 * With one worker everything runs on the calling thread.
 */
int fs_ag_workq_run(const struct fs_ag_workq_opts *o, fs_ag_work_fn fn, void *priv);

#endif
