/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PHASE_NAMES_H
#define XFSX_REPAIR_PHASE_NAMES_H

#include <stdio.h>

#include "repair/plan.h"

/* phase_names.c: the namespace (directories, lost+found, link counts). */
int repair_phase_names(struct repair_ctx *rx);
/* The plan rule of a directory finding (fix.c's table): the directory is rebuilt. */
int repair_names_plan_dir(struct repair_ctx *rx, const struct fs_finding *f, void *arg);
/* Whether the namespace plan wrote the directory in links slot slot anew (UINT64_MAX: no). */
bool repair_names_built(const struct repair_ctx *rx, uint64_t slot);
/* Whether the root reaches the inode in links slot slot after the repair. */
bool repair_names_reached(const struct repair_ctx *rx, uint64_t slot);
void repair_names_free(struct repair_ctx *rx);
/*
 * Whether the scan found no entry naming the inode in links slot slot, an
 * inode on an AGI unlinked list (the link records' refs8 hold the
 * namespace plan's counts once it has run).
 */
bool repair_names_scan_unnamed(const struct repair_ctx *rx, uint64_t slot);
/* Once the namespace is planned: the per-slot counts it took are freed. */
void repair_names_drop_counts(struct repair_ctx *rx);
/*
 * Once the plan is decided (verify.c): its per-slot state too (the counts,
 * the flags, the directories' rows); the paths, moves, rebuilt
 * directories and restored entries the report names stay.
 */
void repair_names_drop_slots(struct repair_ctx *rx);
/* Each inode moved to lost+found: a text line, or a JSON array of {ino, to}. */
/*
 * The moves to /lost+found, as JSON or text lines; text: at most
 * REPAIR_TEXT_LIST lines, then one counting the rest, unless all.
 */
#define REPAIR_TEXT_LIST 20
void repair_names_print_moves(const struct repair_ctx *rx, FILE *out, bool json, bool all);
/* The path inode ino had before the repair, where the namespace tells it; else NULL. */
const char *repair_names_path(const struct repair_ctx *rx, int64_t ino);
/*
 * (parent feature) The entries put back into rebuilt directories from
 * their files' parent pointers: per directory a line with the count, and
 * the names (text: at most REPAIR_TEXT_LIST a directory unless all), or
 * a JSON array of {dir, path, count, entries: [{name, ino}]}.
 */
void repair_names_print_restored(const struct repair_ctx *rx, FILE *out, bool json, bool all);
uint64_t repair_names_restored(const struct repair_ctx *rx);
/* Whether the inode in links slot slot was named again from its parent pointer. */
bool repair_names_restored_slot(const struct repair_ctx *rx, uint64_t slot);
/* Whether the inode in links slot slot was attached to lost+found. */
bool repair_names_moved_slot(const struct repair_ctx *rx, uint64_t slot);
/* What the namespace phase did, for the summary. */
void repair_names_counts(const struct repair_ctx *rx, uint64_t *rebuilt, uint64_t *moved,
			 uint64_t *nlinks);

#endif
