/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_RUN_H
#define XFSX_REPAIR_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "libfs/fs.h"
#include "repair/plan.h"
#include "repair/log.h"

/* run.c: one run of xfsx_repair, from the open to the last round's writes. */

/*
 * When the verified result of a written plan still has findings (and the
 * plan fixed some), the filesystem as written is scanned and planned
 * again: at most this many rounds in all, each a whole plan, judged
 * before its first write.
 */
enum { REPAIR_ROUNDS = 3 };

struct repair_round {
	struct fs *fs;
	struct fs_findings fl;
	struct scan_ctx sx;
	struct repair_ctx rx;
};

/* The step progress's figures (run.c step_progress). */
struct repair_step_progress {
	double start;              /* the first step's start (0: none yet) */
	double scan_seconds;       /* the last scan step's time: the verify's estimate */
	double other_seconds;      /* the other steps' time, and how many ran */
	unsigned others;
};

struct repair_run {
	const struct repair_opts *o;
	const char *path;
	struct fs_open_opts oo;
	struct repair_log log;     /* the dirty log met at the open */
	struct fs_undo *undo;
	/* [0] the first round: its findings are the report's; later rounds' own lists */
	struct repair_round round[REPAIR_ROUNDS];
	int nrounds;
	size_t left;               /* what the last written round's result leaves */
	bool reached_scan;         /* past the refusals: the report's output is checked */
	bool not_xfs;              /* the open found no XFS: the JSON error says so */
	struct repair_step_progress sp;
	/* inodes a later attempt of the first round clears (repair_blame) */
	fs_ino_t *force_clear;
	size_t nforce_clear;
	int attempt;               /* of the first round's plan, from 1 */
	char msg[1024];
};

/*
 * Open, refuse what must be refused, meet the dirty log, then the rounds:
 * each runs the table of steps (enum repair_phase) and writes its plan.
 * 0 when there is a report to render; else the run stopped (said on
 * stderr, or as a JSON error object) and it is an operational error.
 */
int repair_run(struct repair_run *run, const struct repair_opts *o, const char *path);
/* The exit status a finished run's report stands for (XFSX_EXIT_*). */
int repair_run_status(const struct repair_run *run);
/* The undo file finished (whatever happened) and everything freed. */
void repair_run_end(struct repair_run *run);
void repair_run_free(struct repair_run *run);
/* A refusal: said on stderr, and under --json as the error object; XFSX_EXIT_OPERATIONAL. */
int repair_refuse(struct repair_run *run, const char *msg);
/* A step's name, as the phase-time report (-v, JSON) calls it. */
const char *repair_phase_name(enum repair_phase ph);
/* How many of a plan's findings it fixed. */
size_t repair_count_fixed(const struct repair_ctx *rx);

#endif
