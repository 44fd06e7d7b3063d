/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CHECK_H
#define XFSX_CHECK_H

#include <stdio.h>

#include "libfs/fs.h"
#include "libfs/findings.h"

struct check_opts {
	unsigned threads;          /* worker threads (0: one per CPU, at most agcount) */
};

/* What one check run observed, kept for the summary (and, later, repair). */
struct check_ctx {
	struct fs *fs;
	struct fs_findings *fl;
	const struct check_opts *opts;
	uint32_t ags_checked;
	uint32_t headers_read;
};

/* Phase 1: superblocks, AGF, AGI and AGFL of every AG. */
int check_phase_headers(struct check_ctx *cx);

/* Geometry reports. */
void check_print_geometry_text(const struct fs *fs, const char *path, FILE *out);
void check_print_geometry_json(const struct fs *fs, FILE *out);

#endif
