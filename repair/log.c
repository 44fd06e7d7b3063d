// SPDX-License-Identifier: GPL-2.0
/*
 * The dirty log a repair meets at the open: it holds changes the metadata
 * lacks, so it is replayed before the scan as the kernel's recovery would
 * (-n: in memory, shown to the scan's reads; else written, the run's first
 * write, inside the undo file), refused with --no-replay, and thrown away
 * with -L (commit.c).  Nothing is written unless every item replays, and
 * a repair refuses a log whose unfinished intents it cannot complete: a
 * BUI the replay could not apply, an xattr intent the kernel's recovery
 * stops at.  The replay itself and the reopen are scan/replay.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/log/logattr.h"
#include "libfs/undo/undo.h"
#include "repair/log.h"

/* The first xattr intent the kernel's recovery would stop at (and, with -n, each named). */
struct attri_bad {
	const char *path;
	bool show;
	char first[400], why[400];
	const struct fs_log_attri *v; /* the replay's open ATTRIs: refused[] is indexed as they are */
	bool *refused;
};

static void on_attri_bad(void *priv, const struct fs_log_attri *a, const char *why)
{
	struct attri_bad *ab = priv;
	char what[400];

	fs_log_attri_describe(a, what, sizeof(what));
	if (ab->refused)
		ab->refused[a - ab->v] = true;
	if (!ab->first[0]) {
		snprintf(ab->first, sizeof(ab->first), "%s", what);
		snprintf(ab->why, sizeof(ab->why), "%s", why);
	}
	if (ab->show)
		printf("%s: the log's unfinished %s cannot be completed: %s; a repair refuses such "
		       "a log\n", ab->path, what, why);
}

/*
 * Unfinished intents: the replay applied the BUIs it could to their
 * forks; EFI, RUI and CUI are completed after the scan by rebuilding the
 * AGs they name from the forks (scan_log_account); xattr intents (ATTRI)
 * by the xattr phase re-encoding their inodes' attr forks.  A BUI the
 * replay could not apply (its fork damaged, or no free block for a new
 * bmbt block), or an xattr intent the kernel's recovery stops at (its
 * inode free, not an inode, or damaged: logattr.c; the mount fails), is
 * refused before anything is written; -n names them.  0, 1 refused (msg).
 */
static int judge_intents(struct repair_log *lg, const struct repair_opts *o, const char *path,
			 struct fs *fs, const char *options, char *msg, size_t ml)
{
	const char *bui_why = fs_replay_bui_unapplied(lg->sl.rp);
	struct attri_bad ab = { .path = path, .show = o->dry_run && !o->quiet && !o->json };
	size_t na;
	char what[512];
	int err;

	if (bui_why)
		snprintf(what, sizeof(what), "%s; recovery makes that change, this version "
			 "does not", bui_why);
	else
		what[0] = 0;
	if (*what && !o->dry_run) {
		snprintf(msg, ml, "%s: the log cannot be completed: %s.  %s", path, what, options);
		return 1;
	}
	if (*what && !o->quiet && !o->json)
		printf("%s: %s (a repair refuses such a log): findings about that file may "
		       "follow\n", path, what);
	na = fs_replay_open_attris(lg->sl.rp, &ab.v);
	lg->attri_refused = ab.refused = calloc(na ? na : 1, sizeof(bool));
	err = ab.refused ? fs_replay_judge_attris(fs, lg->sl.rp, on_attri_bad, &ab) : -ENOMEM;
	if (err < 0) {
		snprintf(msg, ml, "%s: judging the log's xattr intents failed: %s.  "
			 "Nothing was written.", path, strerror(-err));
		return 1;
	}
	if (err && !o->dry_run) {
		snprintf(msg, ml, "%s: the log cannot be completed: its unfinished "
			 "%s cannot be completed: %s%s.  -L throws the log away (its last "
			 "transactions are lost).  Nothing was written.", path, ab.first, ab.why,
			 err > 1 ? " (and more intents: xfsx_repair -n names them all)" : "");
		return 1;
	}
	/* -n: what a repair would refuse is left, whatever the scan finds */
	lg->attris_refused = (size_t)err;
	return 0;
}

int repair_log_meet(struct repair_log *lg, const struct repair_opts *o, const char *path,
		    struct fs_open_opts *oo, struct fs **fs, struct fs_findings *fl,
		    struct fs_undo **undo, char *msg, size_t ml)
{
	const char *options = "Mounting the filesystem may replay it (the kernel's own "
		"recovery; unmount and run xfsx_repair again), or -L throws the log away (its "
		"last transactions are lost).  Nothing was written.";
	struct fs_error ferr = { 0 };
	enum scan_reopen_step failed;
	char what[512];
	int err;

	if (!(*fs)->have_log_head || (*fs)->log_clean || o->zero_log)
		return 0;
	lg->refused = true;	/* until it is replayed */
	if (o->no_replay) {
		snprintf(msg, ml,
			 "%s: the log is dirty (head at cycle %u block %u) and holds changes "
			 "the metadata lacks, and --no-replay was given.  Run without it to "
			 "replay the log, or mount the filesystem to replay it, unmount it, "
			 "and run xfsx_repair again.  If it cannot be mounted, -L throws the log "
			 "away (its last transactions are lost).  Nothing was written.",
			 path, fs_lsn_cycle((*fs)->log_head_lsn), fs_lsn_block((*fs)->log_head_lsn));
		return 1;
	}
	if (scan_log_replay(*fs, &lg->sl)) {
		snprintf(msg, ml, "%s: the log is dirty and cannot be replayed: %s.  %s", path,
			 lg->sl.msg, options);
		return 1;
	}
	if (!lg->sl.dirty) {
		/*
		 * The full reader finds an unmount record newest, or nothing left
		 * once the torn newest records are dropped (a CRC or a length a
		 * crash leaves), as the kernel's head search drops them.  The
		 * kernel's mount then leaves a clean log behind; so does a repair,
		 * or every later reader would still call the log dirty.
		 */
		if (lg->sl.li.torn_records && !o->dry_run) {
			if (o->undo_path &&
			    scan_undo_create(o->undo_path, *fs, "xfsx_repair " XFSX_VERSION, undo, msg,
					     ml))
				return 1;
			err = fs_log_reset(*fs, msg, ml);
			if (err) {
				fprintf(stderr, "xfsx_repair: %s: resetting the log: %s\n", path, msg);
				return -1;
			}
			fs_log_find_head(*fs);
			if (!o->quiet && !o->json)
				printf("%s: the log's newest %u record(s) were torn (a CRC or a length a "
				       "crash leaves): dropped, as the kernel drops them, and the log "
				       "reset clean\n", path, lg->sl.li.torn_records);
		}
		(*fs)->log_clean = true;
		return 0;
	}
	if (judge_intents(lg, o, path, *fs, options, msg, ml))
		return 1;
	scan_log_describe(&lg->sl, what, sizeof(what));
	/* the replay is the run's first write: the undo file covers it too */
	if (!o->dry_run && o->undo_path &&
	    scan_undo_create(o->undo_path, *fs, "xfsx_repair " XFSX_VERSION, undo, msg, ml))
		return 1;
	/* again, over what the replay changed (in memory with -n) */
	err = scan_log_reopen(&lg->sl, o->dry_run ? SCAN_REPLAY_IN_MEMORY : SCAN_REPLAY_ON_DISK,
			      path, oo, *undo, fs, fl, &ferr, &failed, msg, ml);
	if (err && failed == SCAN_REOPEN_WRITE) {
		fprintf(stderr, "xfsx_repair: %s: replaying the log: %s; run xfsx_repair "
			"again (the log is still dirty until its reset)\n", path, msg);
		return -1;
	}
	if (err && failed == SCAN_REOPEN_OPEN) {
		snprintf(msg, ml, "%s", ferr.msg);
		return 1;
	}
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: the device changed size while it was open\n",
			path);
		return -1;
	}
	if (!o->quiet && !o->json)
		printf("%s: the log was dirty: %s (%s)\n", path,
		       o->dry_run ? "replayed in memory only" : "replayed and reset", what);
	lg->refused = false;
	/*
	 * A test switch: stop once the replay is written, so a test can hold
	 * the replayed filesystem against the kernel's recovery before the
	 * repair changes what the replay left (a crafted intent's pointer
	 * with no entry, say).
	 */
	if (!o->dry_run && getenv("XFSX_TEST_REPLAY_ONLY")) {
		fflush(stdout);
		fprintf(stderr, "xfsx_repair: %s: stopped after the replay (XFSX_TEST_REPLAY_ONLY)\n",
			path);
		return -1;
	}
	return 0;
}

void repair_log_free(struct repair_log *lg)
{
	scan_log_free(&lg->sl);
	free(lg->attri_refused);
	lg->attri_refused = NULL;
}
