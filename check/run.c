// SPDX-License-Identifier: GPL-2.0
/*
 * One check: the filesystem opened read-only through libfs; a dirty log
 * replayed in memory and shown to every read the scan makes (nothing is
 * written: scan/replay.c), so the check judges what the kernel's recovery
 * would leave; the scan (scan/); then the log's unfinished intents: an
 * xattr intent recovery stops at is a finding, and what the scan found
 * about the blocks the others name is the completion mounting does, not
 * damage (scan_log_account).  Rendering is render.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/run.h"
#include "libfs/log/logattr.h"

int check_open(struct check_run *run)
{
	int err;

	run->oo.allow_secondary = true;
	run->oo.dev.writable = false;	/* check never writes */
	/* a read-write mount changes under us: refused (as xfs_repair -n does) */
	run->oo.use = FS_TARGET_CHECK;
	fs_findings_init(&run->fl);
	err = fs_open(run->path, &run->oo, &run->fs, &run->fl, &run->ferr);
	if (err) {
		fs_findings_sort(&run->fl);
		return err;
	}
	if (run->fs->target.mounted && !run->quiet)
		fprintf(stderr, "xfsx_check: warning: %s is mounted read-only on %s: the kernel may "
			"hold changes the device does not show yet, so the result may be stale\n",
			run->path, run->fs->target.mount_point);
	if (!run->quiet) {
		struct fs_device_notes n;

		fs_device_notes(run->fs, &run->oo, &n);
		if (*n.logdev)
			fprintf(stderr, "xfsx_check: %s\n", n.logdev);
		if (*n.rtdev)
			fprintf(stderr, "xfsx_check: %s\n", n.rtdev);
	}
	return 0;
}

/* Said once, after the report: what was not read (the JSON has it as a field). */
void check_note_unchecked(const struct check_run *run)
{
	struct fs_device_notes n;

	if (run->quiet || run->json || !run->fs)
		return;
	fs_device_notes(run->fs, &run->oo, &n);
	if (*n.rt_unchecked)
		fprintf(stderr, "xfsx_check: %s: %s\n", run->path, n.rt_unchecked);
}

/*
 * A dirty log: replayed in memory, the filesystem opened again over the
 * replay (the superblock may be among what it changed).  A log that
 * cannot be replayed leaves the metadata checked as it is on disk.
 */
static int meet_log(struct check_run *run)
{
	struct scan_log *sl = &run->sl;
	enum scan_reopen_step failed;
	char what[512];

	if (!run->fs->logdev)
		return 0;
	if (!run->fs->have_log_head || run->fs->log_clean) {
		/* a clean log: where it is, for the JSON summary */
		sl->located = !fs_log_locate(run->fs, &sl->li, sl->msg, sizeof(sl->msg));
		return 0;
	}
	if (!scan_log_replay(run->fs, sl) && !sl->dirty) {
		/* the full reader finds an unmount record newest (a padded one, say) */
		run->fs->log_clean = true;
		return 0;
	}
	if (sl->err) {
		if (!run->quiet && !run->json)
			fprintf(stderr, "xfsx_check: %s: the log is dirty and was not replayed: %s; "
				"checking the metadata as it is on disk\n", run->path, sl->msg);
		return 0;
	}
	/* the scan sees the filesystem as recovery leaves it */
	if (scan_log_reopen(sl, SCAN_REPLAY_IN_MEMORY, run->path, &run->oo, NULL, &run->fs,
			    &run->fl, &run->ferr, &failed, what, sizeof(what))) {
		fprintf(stderr, "xfsx_check: %s: opening the filesystem over the replayed "
			"log failed: %s\n", run->path, run->ferr.msg);
		return -EIO;
	}
	scan_log_describe(sl, what, sizeof(what));
	if (!run->quiet && !run->json)
		fprintf(stderr, "xfsx_check: %s: the log is dirty: replayed in memory only, "
			"nothing written (%s); checking the filesystem as log recovery "
			"leaves it\n", run->path, what);
	return 0;
}

/* A log.attri finding: an unfinished xattr intent the kernel's recovery stops at. */
static void on_attri_bad(void *priv, const struct fs_log_attri *a, const char *why)
{
	char what[400];

	fs_log_attri_describe(a, what, sizeof(what));
	fs_report(priv, FS_C_LOG_ATTRI, FS_NONE, FS_NONE, (int64_t)a->ino, "log", "completed",
		  "stops recovery", "%s cannot be completed: %s", what, why);
}

/*
 * The log's unfinished intents, once the scan ran.  An xattr intent the
 * kernel's recovery stops at (its inode free, not an inode, or damaged:
 * logattr.c): the mount fails; xfsx_repair refuses such a log.  Said as a
 * finding each.  The others: mounting completes them after the replay, so
 * what the scan finds about the blocks they name is that completion still
 * to come, not damage (scan_log_account says which findings).
 */
static int judge_intents(struct check_run *run)
{
	struct scan_log *sl = &run->sl;
	char what[512];

	if (!sl->rp)
		return 0;
	if (fs_replay_stats(sl->rp)->intents_open[FS_INTENT_ATTRI] &&
	    fs_replay_judge_attris(run->fs, sl->rp, on_attri_bad, &run->fl) < 0) {
		fprintf(stderr, "xfsx_check: %s: judging the log's xattr intents failed\n",
			run->path);
		return -EIO;
	}
	if (!fs_replay_intents_open(sl->rp))
		return 0;
	if (scan_log_account(sl, run->fs, &run->fl, false)) {
		fprintf(stderr, "xfsx_check: %s: out of memory\n", run->path);
		return -ENOMEM;
	}
	scan_log_intents(sl, what, sizeof(what));
	if (!run->quiet && !run->json)
		fprintf(stderr, "xfsx_check: %s: the log holds unfinished intents (%s) that "
			"mounting completes after the replay: %" PRIu64 " finding(s) about the "
			"blocks they name are that completion, not counted%s%s%s\n", run->path, what,
			sl->accounted, fs_replay_stats(sl->rp)->intents_open[FS_INTENT_ATTRI] ?
			" (xattr intents are named, not applied here: their files are checked as they stand; xfsx_repair completes them)" :
			"", fs_replay_bui_unapplied(sl->rp) ? "; not applied: " : "",
			fs_replay_bui_unapplied(sl->rp) ? fs_replay_bui_unapplied(sl->rp) : "");
	return 0;
}

int check_run(struct check_run *run)
{
	int err = meet_log(run);

	if (err)
		return err;
	run->cx.fs = run->fs;
	run->cx.fl = &run->fl;
	run->cx.opts = &run->co;
	err = scan_run(&run->cx);
	if (err) {
		char why[512];

		scan_strerror(&run->cx, err, why, sizeof(why));
		fprintf(stderr, "xfsx_check: %s: check failed: %s\n", run->path, why);
		return -ENOTRECOVERABLE;
	}
	err = judge_intents(run);
	if (err)
		return err;
	fs_findings_sort(&run->fl);
	return 0;
}

void check_run_free(struct check_run *run)
{
	if (run->cx.fs)
		scan_teardown(&run->cx);
	fs_close(run->fs);
	scan_log_free(&run->sl);
	fs_findings_free(&run->fl);
}
