/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_LOG_H
#define XFSX_SCAN_LOG_H

#include <stdio.h>

#include "libfs/logreplay.h"

/*
 * A dirty log, as both tools meet it: located, read and replayed in
 * memory (never written here), with what it held for the JSON "log"
 * summary and the messages.  check shows the replay to its scan;
 * repair writes it (fs_replay_write) before its own scan.
 */
struct scan_log {
	bool dirty;                /* the log needs recovery */
	bool located, replayed;
	struct fs_log_info li;
	struct fs_replay *rp;      /* when replayed */
	int err;                   /* why it was not replayed (negative errno) */
	char msg[512];
};

/* Locate and, if dirty, replay in memory.  Returns sl->err (0 for a clean log). */
int scan_log_replay(struct fs *fs, struct scan_log *sl);
/* The "log" JSON member's value (an object). */
void scan_log_json(const struct scan_log *sl, FILE *out);
/* One line on what the replay did: "N transactions (...), M blocks". */
void scan_log_describe(const struct scan_log *sl, char *buf, size_t len);
/* The unfinished intents, "2 EFI, 1 RUI" (empty when none). */
void scan_log_intents(const struct scan_log *sl, char *buf, size_t len);
void scan_log_free(struct scan_log *sl);

#endif
