/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_LOG_H
#define XFSX_SCAN_LOG_H

#include <stdio.h>

#include "libfs/log/logreplay.h"

/*
 * A dirty log, as both tools meet it: located, read and replayed in
 * memory, with what it held for the JSON "log" summary and the messages.
 * scan_log_reopen makes the replay real: shown to the scan (check,
 * repair -n) or written (repair) before the scan.
 */
struct scan_log {
	bool dirty;                /* the log needs recovery */
	bool located, replayed;
	struct fs_log_info li;
	struct fs_replay *rp;      /* when replayed */
	int err;                   /* why it was not replayed (negative errno) */
	/* the unfinished intents (scan_log_account) */
	bool *intent_ags;          /* per AG: named by one (its trees are what recovery changes) */
	uint64_t accounted;        /* findings they explain, taken off the list */
	bool completing;           /* the caller completes them (repair), else recovery would (check) */
	char msg[512];
};

struct fs_open_opts;
struct fs_error;
struct fs_undo;

/*
 * The undo file of a run that writes fs: its data device and an external
 * log device, one file (fs_undo_create_devs).  0, or negative errno with msg.
 */
int scan_undo_create(const char *path, const struct fs *fs, const char *tool,
		     struct fs_undo **out, char *msg, size_t ml);
/* The undo file moved to a reopened fs's devices: 0, -ENODEV when a size changed. */
int scan_undo_attach(struct fs_undo *u, const struct fs *fs);

/* Locate and, if dirty, replay in memory (replay.c).  Returns sl->err (0 for a clean log). */
int scan_log_replay(struct fs *fs, struct scan_log *sl);

/* How scan_log_reopen makes a replay real. */
enum scan_replay_mode {
	SCAN_REPLAY_IN_MEMORY,     /* shown to every read of the reopened device: check, repair -n */
	SCAN_REPLAY_ON_DISK,       /* written (fs_replay_write) and the log reset: repair */
};
/* The step of scan_log_reopen that failed. */
enum scan_reopen_step {
	SCAN_REOPEN_WRITE = 1,     /* writing the replay (msg says why) */
	SCAN_REOPEN_OPEN,          /* opening the filesystem again (ferr says why) */
	SCAN_REOPEN_UNDO,          /* the undo file on the new device: its size changed */
};
/*
 * After a replay (sl->rp): the replay made real as mode says, then the
 * filesystem opened again with *oo (in memory: its read patch set to the
 * replay), *fs replaced, *fl emptied and filled by the new open, an undo
 * file (NULL: none) moved from the old device to the new one.  The new
 * filesystem has log_replayed set (in memory) and its lazy counters not
 * judged.  0, or a negative errno and *failed; after a failed write *fs
 * is still the old filesystem, after a failed open it is NULL.
 */
int scan_log_reopen(struct scan_log *sl, enum scan_replay_mode mode, const char *path,
		    struct fs_open_opts *oo, struct fs_undo *undo, struct fs **fs,
		    struct fs_findings *fl, struct fs_error *ferr, enum scan_reopen_step *failed,
		    char *msg, size_t ml);
/* The "log" JSON member's value (an object). */
void scan_log_json(const struct scan_log *sl, FILE *out);
/* One line on what the replay did: "N transactions (...), M blocks". */
void scan_log_describe(const struct scan_log *sl, char *buf, size_t len);
/* The unfinished intents, "2 EFI, 1 RUI" (empty when none). */
void scan_log_intents(const struct scan_log *sl, char *buf, size_t len);
/*
 * The unfinished EFI/RUI/CUI/BUI intents after a replay: mounting completes
 * them (frees the extents, updates the rmaps and refcounts, maps or unmaps
 * file ranges), so the scan of the replayed filesystem finds, about the
 * blocks they name, exactly what recovery changes: blocks neither free nor
 * owned, reverse mappings and reference counts that do not match the
 * forks.  Those findings (codes of the AG trees, in an AG an intent names,
 * at a block an intent names) are taken off fl and counted; the AGs are
 * marked in sl->intent_ags (so repair rebuilds them from the forks, which
 * gives what recovery gives).  0, or -ENOMEM.
 */
int scan_log_account(struct scan_log *sl, const struct fs *fs, struct fs_findings *fl,
		     bool completing);
void scan_log_free(struct scan_log *sl);

#endif
