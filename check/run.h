/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CHECK_RUN_H
#define XFSX_CHECK_RUN_H

#include <stdbool.h>

#include "libfs/fs.h"
#include "scan/log.h"
#include "scan/scan.h"

/* run.c: one check, from the open to the findings the report renders. */
struct check_run {
	/* what the command line asks for (main.c) */
	const char *path;
	struct fs_open_opts oo;
	struct scan_opts co;
	bool json, quiet;
	int verbose;               /* -v: every finding on its own line */
	/* the run */
	struct fs *fs;
	struct fs_findings fl;
	struct fs_error ferr;      /* why the open failed */
	struct scan_log sl;        /* the log: located, and replayed when dirty */
	struct scan_ctx cx;
};

/*
 * Open the filesystem read-only (a read-write mount refused, a read-only
 * one warned about): 0, or fs_open's negative errno with run->ferr and
 * run->fl (sorted) saying why.
 */
int check_open(struct check_run *run);
/*
 * The check: a dirty log replayed in memory and the filesystem opened
 * again over it, the scan, the log's unfinished intents judged and
 * accounted.  0 with run->fl sorted, or a negative errno (said on stderr);
 * -ENOTRECOVERABLE when the scan itself failed.
 */
int check_run(struct check_run *run);
/* The realtime extents not checked against a device not given: said once on stderr. */
void check_note_unchecked(const struct check_run *run);
void check_run_free(struct check_run *run);

#endif
