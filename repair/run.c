// SPDX-License-Identifier: GPL-2.0
/*
 * One run of xfsx_repair: the open (read-only with -n), the refusals that
 * come before any work (a device cut short, an external log, a dirty log:
 * log.c), then the rounds.  A round is one plan, made by the table of
 * steps below in the order they run (enum repair_phase): the shared scan,
 * the unfinished intents of a replayed log accounted, the phases that
 * plan (superblocks, inodes, namespace, xattrs, quota, realtime, AG
 * rebuild, counters; each only makes dirty buffers), the decision of what
 * the plan covers, the scan of the planned result (verify.c), the blame
 * that makes a plan bringing in problems again with the inodes it wrongly
 * kept cleared, and the commit.  One loop runs and times the steps.  When
 * a written plan's result still has findings and the plan fixed some, the
 * filesystem as written is opened and planned again, at most
 * REPAIR_ROUNDS rounds in all.  Rendering is render.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfs/undo/undo.h"
#include "libfs/util/clock.h"
#include "libfs/util/exit.h"
#include "repair/commit.h"
#include "repair/fix.h"
#include "repair/phase_counters.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/phase_quota.h"
#include "repair/phase_rebuild.h"
#include "repair/phase_rt.h"
#include "repair/phase_sb.h"
#include "repair/phase_xattrs.h"
#include "repair/place.h"
#include "repair/pptrs.h"
#include "repair/run.h"
#include "repair/verify.h"
#include "scan/links.h"

/* A step's return: the first round's plan is made again from a fresh scan (step_blame). */
enum { REPAIR_REPLAN = 1 };

int repair_refuse(struct repair_run *run, const char *msg)
{
	if (run->o->json) {
		fputs("{\"error\":", stdout);
		fs_json_string(stdout, msg);
		if (run->not_xfs)
			fputs(",\"not_xfs\":true", stdout);
		fputs(",\"findings\":", stdout);
		fs_findings_write_json_array(&run->round[0].fl, stdout);
		puts(",\"summary\":{\"clean\":false}}");
	}
	fprintf(stderr, "xfsx_repair: %s\n", msg);
	return XFSX_EXIT_OPERATIONAL;
}

size_t repair_count_fixed(const struct repair_ctx *rx)
{
	size_t n = 0;

	for (size_t i = 0; rx->fixed && i < rx->fl->n; i++)
		n += rx->fixed[i];
	return n;
}

/* ---- the steps ---- */

static int step_scan(struct repair_ctx *rx)
{
	int err = scan_run(rx->sx);
	char why[512];

	if (err) {
		scan_strerror(rx->sx, err, why, sizeof(why));
		fprintf(stderr, "xfsx_repair: %s: scan failed: %s; nothing was written\n", rx->path,
			why);
	}
	return err;
}

/*
 * The replayed log's unfinished EFI/RUI/CUI intents (the first round):
 * what the scan found about their blocks is the completion still to come;
 * the AGs they name are rebuilt from the forks, which completes them as
 * recovery would.  Only when the rebuild can happen: else those findings
 * stay (left).  Xattr intents name no blocks: the xattr phase completes
 * them, and says so.
 */
static int step_intents(struct repair_ctx *rx)
{
	struct scan_log *sl = &rx->run->log.sl;
	const struct repair_opts *o = rx->o;
	char what[512];
	int err;

	if (rx->round || !sl->rp || fs_replay_intents_open(sl->rp) <= rx->nattris ||
	    repair_model_incomplete(rx))
		return 0;
	err = scan_log_account(sl, rx->fs, rx->fl, true);
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: %s\n", rx->path, strerror(-err));
		return err;
	}
	rx->intent_ags = sl->intent_ags;
	rx->replay_bmbt_changed = fs_replay_stats(sl->rp)->bui_bmbt_taken ||
				 fs_replay_stats(sl->rp)->bui_bmbt_freed;
	scan_log_intents(sl, what, sizeof(what));
	if (!o->quiet && !o->json)
		printf("%s: the log's unfinished intents (%s) %s completed as recovery "
		       "completes them: the AGs they name rebuilt from the file forks (%"
		       PRIu64 " finding(s) about their blocks were that completion)\n", rx->path,
		       what, o->dry_run ? "would be" : "are", sl->accounted);
	return 0;
}

/* What became of the replayed log's xattr intents, once the phases planned. */
static void say_attris(const struct repair_ctx *rx)
{
	const struct repair_opts *o = rx->o;
	uint64_t rest = rx->nattris - rx->attris_done - rx->attris_freed - rx->attris_refused;

	if (rx->nattris && !o->quiet && !o->json) {
		/*
		 * Each refused one was named as the judge found it (-n only: a
		 * repair stops before writing): the count says what the rest
		 * come to, and that a repair completes none of them then
		 */
		char freed[160] = "", refused[200] = "";

		if (rx->attris_freed)
			snprintf(freed, sizeof(freed), "; %" PRIu64 " on unlinked inodes (no links, "
				 "on an AGI unlinked list), which %s freed as recovery frees them after "
				 "completing them", rx->attris_freed, o->dry_run ? "would be" : "are");
		if (rx->attris_refused)
			snprintf(refused, sizeof(refused), "; %" PRIu64 " cannot be (on the inode%s "
				 "named above), so a repair refuses the log and completes none of the %zu",
				 rx->attris_refused, rx->run->log.attris_refused > 1 ? "s" : "",
				 rx->nattris);
		printf("%s: the log's unfinished xattr intents (ATTRI): %" PRIu64 " of %zu %s as "
		       "recovery completes them, on their inodes' attr forks%s%s\n", rx->path,
		       rx->attris_done, rx->nattris, rx->attris_refused ? "can be completed" :
		       o->dry_run ? "would be completed" : "completed", freed, refused);
	}
	if (rest)
		fprintf(stderr, "xfsx_repair: %s: %" PRIu64 " unfinished xattr intent%s not "
			"completed: %s inode is not in use, is cleared, or %s attr fork could "
			"not be rebuilt\n", rx->path, rest, rest > 1 ? "s" : "",
			rest > 1 ? "their" : "its", rest > 1 ? "their" : "its");
}

/* The findings the plan covers, sorted once before the decisions index them (fix.c). */
static int step_decide(struct repair_ctx *rx)
{
	say_attris(rx);
	fs_findings_sort(rx->fl);
	rx->left = repair_decide(rx);
	return 0;
}

/* Nothing is fixed by a plan that is not written. */
static void nothing_fixed(struct repair_ctx *rx)
{
	memset(rx->fixed, 0, (rx->fl->n ? rx->fl->n : 1) * sizeof(*rx->fixed));
	rx->left = fs_findings_count(rx->fl, FS_SEV_WARNING) + rx->fl->dropped;
}

/*
 * "Fixed" is what the scan of the planned result no longer finds: the
 * plan is judged before anything is written, and a plan that would bring
 * in problems that were not there is not written.
 */
static int step_verify(struct repair_ctx *rx)
{
	struct fs_cache *c = rx->sx->cache;
	uint64_t cap = c ? fs_cache_cap(c) : 0;
	char msg[1024];
	int err = repair_keep_for_report(rx);

	if (err)
		return err;
	if (!rx->planned_writes && !rx->o->zero_log) {
		nothing_fixed(rx);
		return 0;
	}
	/*
	 * The plan is made: the directory graph and the namespace's counts
	 * are not read again, and the scan of the result needs their room.
	 * The scan of the result has a cache of its own: the first scan's
	 * clean buffers go first (a later step reads them again if it needs
	 * them), so the two caches are not held at once.  The plan's dirty
	 * buffers stay, and the cap is restored at once (the plan may still
	 * grow).  On 10,000 AGs the repair's peak fell from 1118-1228 to 927-934 MiB.
	 */
	scan_links_drop_graph(rx->sx->links);
	if (c) {
		fs_cache_set_cap(c, fs_cache_dirty_bytes(c) + 1);
		fs_cache_set_cap(c, cap);
	}
	/* its block model's extents too; under -m its cache at the floor, the rest staged */
	scan_release_for_verify(rx->sx);	/* the plan is made: its model is not needed */
	/*
	 * and the rest of its per-inode state, what the blame and the report
	 * read of it kept (repair_keep_for_report), then what was freed given
	 * back (malloc_trim).  On bench-scale's damaged images of 800,000
	 * inodes (one run each) the peak fell from 56 to 40 MiB (files) and
	 * from 77 to 61 MiB (aged).
	 */
	repair_release_scan(rx);
	err = repair_verify_plan(rx, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: %s\n", rx->path, msg);
		return err;
	}
	rx->left = rx->verified.left;
	if (rx->verified.introduced)
		nothing_fixed(rx);
	return 0;
}

/*
 * A first plan that would bring in problems on inodes it kept although
 * they had problems of their own is made again from a fresh scan with
 * those inodes cleared, as xfs_repair clears what it cannot make right
 * (reported as data lost), at most three attempts.  Not after a replay,
 * whose intents the first plan accounted.
 */
static int step_blame(struct repair_ctx *rx)
{
	struct repair_run *run = rx->run;
	const struct repair_opts *o = rx->o;
	size_t nblamed = run->nforce_clear;
	int err;

	if (rx->round)
		return 0;
	if (rx->verified.introduced && run->attempt < 3 && !run->log.sl.rp) {
		err = repair_blame(rx, &run->force_clear, &run->nforce_clear);
		if (err)
			return err;
		if (run->nforce_clear != nblamed) {
			if (!o->quiet && !o->json)
				printf("%s: the plan would bring in %zu problem(s) on %zu inode(s) it "
				       "kept; planning again with %s cleared\n", rx->path,
				       rx->verified.introduced, run->nforce_clear - nblamed,
				       run->nforce_clear - nblamed > 1 ? "them" : "it");
			return REPAIR_REPLAN;
		}
	}
	if (rx->verified.introduced)
		fprintf(stderr, "xfsx_repair: %s: the repair's plan would leave %zu problem(s) that "
			"were not there before (listed as \"new\"), so %s; this is a defect of "
			"xfsx_repair, please report it\n", rx->path, rx->verified.introduced,
			o->dry_run ? "a repair would write nothing" : "nothing was written");
	return 0;
}

/* A judged plan written (commit.c); a failure is said with the undo file's own. */
static int step_commit(struct repair_ctx *rx)
{
	struct fs_undo *undo = rx->run->undo;
	bool zero_log = !rx->round && rx->o->zero_log;	/* the log is clean after the first */
	char msg[1024];
	int err;

	if (rx->o->dry_run || rx->verified.introduced || (!rx->planned_writes && !zero_log))
		return 0;
	err = repair_commit(rx, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: %s\n", rx->path, msg);
		if (undo && *fs_undo_error(undo))
			fprintf(stderr, "xfsx_repair: %s: %s\n", rx->o->undo_path,
				fs_undo_error(undo));
	}
	return err;
}

/*
 * A round's steps in run order.  The planning phases only plan: every
 * buffer they change stays dirty in the cache until the commit.
 */
static const struct repair_step {
	enum repair_phase phase;
	const char *name;
	int (*run)(struct repair_ctx *rx);
	bool plans;                /* a planning phase: its failure is said here */
} steps[] = {
	{ REPAIR_PH_SCAN, "scan", step_scan, false },
	{ REPAIR_PH_INTENTS, "intents", step_intents, false },
	{ REPAIR_PH_SB, "superblocks", repair_phase_sb, true },
	{ REPAIR_PH_INODES, "inodes", repair_phase_inodes, true },
	{ REPAIR_PH_NAMES, "names", repair_phase_names, true },
	{ REPAIR_PH_XATTRS, "xattrs", repair_phase_xattrs, true },
	{ REPAIR_PH_QUOTA, "quota", repair_phase_quota, true },
	{ REPAIR_PH_RT, "rt", repair_phase_rt, true },
	{ REPAIR_PH_REBUILD, "rebuild", repair_phase_rebuild, true },
	{ REPAIR_PH_COUNTERS, "counters", repair_phase_counters, true },
	{ REPAIR_PH_DECIDE, "decide", step_decide, false },
	{ REPAIR_PH_VERIFY, "verify", step_verify, false },
	{ REPAIR_PH_BLAME, "blame", step_blame, false },
	{ REPAIR_PH_COMMIT, "commit", step_commit, false },
};
_Static_assert(sizeof(steps) / sizeof(steps[0]) == REPAIR_PH_NR, "a step for every phase");

const char *repair_phase_name(enum repair_phase ph)
{
	for (size_t i = 0; i < REPAIR_PH_NR; i++)
		if (steps[i].phase == ph)
			return steps[i].name;
	return "unknown";
}

/* What a plan holds (not its scan, filesystem or findings). */
static void plan_free(struct repair_ctx *rx)
{
	repair_names_free(rx);
	repair_xattrs_free(rx);
	repair_pptrs_free(rx);
	repair_verified_free(rx);
	repair_kept_free(rx);
	free(rx->dquot_blocks);
	free(rx->verdict);
	free(rx->fixed);
	free(rx->ag);
	free(rx->rewrite_sb);
	free(rx->ffix);
	free(rx->symlinks);
	repair_place_free(rx);
}

static void round_init(struct repair_run *run, int n)
{
	struct repair_round *r = &run->round[n];
	struct repair_ctx *rx = &r->rx;

	rx->fs = r->fs;
	rx->fl = &r->fl;
	rx->sx = &r->sx;
	rx->o = run->o;
	rx->path = run->path;
	rx->run = run;
	rx->round = n;
	if (!n) {
		if (run->log.sl.rp)
			rx->nattris = fs_replay_open_attris(run->log.sl.rp, &rx->attris);
		rx->attri_refused = run->log.attri_refused;
		rx->force_clear = run->force_clear;
		rx->nforce_clear = run->nforce_clear;
	}
	r->sx.fs = r->fs;
	r->sx.fl = &r->fl;
	r->sx.opts = &run->o->scan;
	r->sx.keep_graph = true;	/* the namespace phase works on the directory graph */
}

/*
 * Progress over the table (--progress, -t, or a terminal; as the scan's
 * own): a line as each step ends, with its time, the run's elapsed time
 * and an ETA (on a terminal the step under way is shown as it starts).  The scan steps' own lines (scan/progress.c) come in
 * between.  The ETA: the plan's verify scans the result as the first step
 * scanned the filesystem, so it is counted at the scan's time; every other
 * step left at the mean of those done.  An estimate, said as one.
 */
static bool step_progress_on(const struct repair_run *run)
{
	int mode = run->o->scan.progress;

	return mode > 0 || (mode < 0 && isatty(STDERR_FILENO));
}

static void step_progress(struct repair_run *run, int round, size_t i, double took)
{
	struct repair_step_progress *p = &run->sp;
	bool tty = isatty(STDERR_FILENO) && !run->o->scan.progress_interval;
	double now = fs_monotonic_seconds(), eta = 0;
	char where[32] = "";

	if (!step_progress_on(run))
		return;
	if (!p->start)
		p->start = now;
	if (round || run->attempt > 1)
		snprintf(where, sizeof(where), "round %d%s: ", round + 1,
			 run->attempt > 1 ? " again" : "");
	if (took < 0) {
		/* the step under way, on a terminal only (redrawn by what follows) */
		if (tty) {
			fprintf(stderr, "\r\033[K%sstep %zu/%d: %s ...", where, i + 1, REPAIR_PH_NR,
				steps[i].name);
			fflush(stderr);
		}
		return;
	}
	if (steps[i].phase == REPAIR_PH_SCAN)
		p->scan_seconds = took;
	else if (steps[i].phase != REPAIR_PH_VERIFY) {
		p->other_seconds += took;
		p->others++;
	}
	for (size_t k = i + 1; k < REPAIR_PH_NR; k++)
		eta += steps[k].phase == REPAIR_PH_VERIFY ? p->scan_seconds :
		       steps[k].phase == REPAIR_PH_SCAN ? 0 :
		       p->others ? p->other_seconds / p->others : 0;
	fprintf(stderr, "%s%sstep %zu/%d: %s: %.1fs, run %.1fs, peak %" PRIu64 " MiB%s",
		tty ? "\r\033[K" : "", where, i + 1, REPAIR_PH_NR, steps[i].name, took,
		now - p->start, run->round[round].rx.phase_mem[steps[i].phase].peak_rss_bytes >> 20,
		run->round[round].rx.phase_mem[steps[i].phase].spilled ? ", spilled" : "");
	if (i + 1 < REPAIR_PH_NR)
		fprintf(stderr, ", ETA %u:%02u", (unsigned)eta / 60, (unsigned)eta % 60);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Round n, made and written by the table: 0, or a negative errno (said). */
static int run_round(struct repair_run *run, int n)
{
	struct repair_round *r = &run->round[n];

	for (run->attempt = 1;; run->attempt++) {
		uint64_t spill_mark = 0;   /* model runs written at the last step's end */
		int err = 0;

		round_init(run, n);
		for (size_t i = 0; i < REPAIR_PH_NR && !err; i++) {
			double t0 = fs_monotonic_seconds(), took;

			char why[512];

			step_progress(run, n, i, -1);
			err = steps[i].run(&r->rx);
			took = fs_monotonic_seconds() - t0;
			r->rx.phase_seconds[steps[i].phase] += took;
			scan_mem_sample(&r->sx, &r->rx.phase_mem[steps[i].phase], &spill_mark);
			step_progress(run, n, i, took);
			/* the model's runs lost (its temporary directory full or gone): before the
			 * commit step, so nothing was written */
			if (err >= 0 && steps[i].phase != REPAIR_PH_SCAN &&
			    steps[i].phase != REPAIR_PH_COMMIT && scan_spill_error(&r->sx)) {
				err = scan_spill_error(&r->sx);
				scan_strerror(&r->sx, err, why, sizeof(why));
				fprintf(stderr, "xfsx_repair: %s: %s step failed: %s; nothing was "
					"written\n", run->path, steps[i].name, why);
			} else if (err < 0 && steps[i].plans) {
				scan_strerror(&r->sx, err, why, sizeof(why));
				fprintf(stderr, "xfsx_repair: %s: planning the repair failed: %s; nothing "
					"was written\n", run->path, why);
			}
		}
		if (err != REPAIR_REPLAN)
			return err;
		plan_free(&r->rx);
		scan_teardown(&r->sx);
		memset(&r->rx, 0, sizeof(r->rx));
		memset(&r->sx, 0, sizeof(r->sx));
		fs_findings_free(&r->fl);
		fs_findings_init(&r->fl);
	}
}

/* ---- the run ---- */

/* The open and what is refused before any work: 0, or an exit status (said). */
static int open_target(struct repair_run *run)
{
	const struct repair_opts *o = run->o;
	struct repair_round *r = &run->round[0];
	struct fs_error ferr = { 0 };
	int err;

	fs_findings_init(&r->fl);
	/* -n never writes: the device is opened read-only */
	run->oo.allow_secondary = true;
	run->oo.dev.writable = !o->dry_run;
	/* an image file in the page cache is read from there, as by xfsx_check */
	run->oo.dev.cached_reads = true;
	/* a mounted filesystem is refused: -n as a check does (read-only mounts allowed), a repair always */
	run->oo.use = o->dry_run ? FS_TARGET_CHECK : FS_TARGET_WRITE;
	run->oo.logdev = o->logdev;
	run->oo.rtdev = o->rtdev;
	/* -L throws the log away: even one that is another filesystem's */
	run->oo.log_foreign_ok = o->zero_log;
	err = fs_open(run->path, &run->oo, &r->fs, &r->fl, &ferr);
	if (err) {
		run->not_xfs = ferr.not_xfs;
		return repair_refuse(run, ferr.msg);
	}
	/* a device cut short cannot be repaired by rewriting metadata */
	if ((uint64_t)r->fs->g.dblocks << r->fs->g.blocklog > r->fs->dev->size) {
		snprintf(run->msg, sizeof(run->msg),
			 "%s: the filesystem is %llu bytes but the device holds only %llu: "
			 "restore the device's full size first.  Nothing was written.", run->path,
			 (unsigned long long)((uint64_t)r->fs->g.dblocks << r->fs->g.blocklog),
			 (unsigned long long)r->fs->dev->size);
		return repair_refuse(run, run->msg);
	}
	{
		struct fs_device_notes n;

		fs_device_notes(r->fs, &run->oo, &n);
		if (*n.logdev)
			fprintf(stderr, "xfsx_repair: %s\n", n.logdev);
		if (*n.rtdev)
			fprintf(stderr, "xfsx_repair: %s\n", n.rtdev);
		if (*n.rt_unchecked && !o->quiet)
			fprintf(stderr, "xfsx_repair: %s: %s\n", run->path, n.rt_unchecked);
	}
	err = repair_log_meet(&run->log, o, run->path, &run->oo, &r->fs, &r->fl, &run->undo,
			      run->msg, sizeof(run->msg));
	if (err > 0)
		return repair_refuse(run, run->msg);
	if (err)
		return XFSX_EXIT_OPERATIONAL;
	/* before the scan, so a file that cannot be made stops the run before any work */
	if (o->undo_path && !run->undo &&
	    scan_undo_create(o->undo_path, r->fs, "xfsx_repair " XFSX_VERSION, &run->undo, run->msg, sizeof(run->msg)))
		return repair_refuse(run, run->msg);
	return 0;
}

/* Later rounds over what was written, while they make progress: 0 or a negative errno. */
static int later_rounds(struct repair_run *run)
{
	struct repair_ctx *first = &run->round[0].rx, *last = first;

	while (!run->o->dry_run && run->nrounds < REPAIR_ROUNDS && last->verified.ran &&
	       !last->verified.introduced && last->verified.left && repair_count_fixed(last)) {
		int n = run->nrounds++;
		struct repair_round *r = &run->round[n];
		struct fs_error ferr = { 0 };
		int err;

		fs_findings_init(&r->fl);
		err = fs_open(run->path, &run->oo, &r->fs, &r->fl, &ferr);
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: opening the filesystem again for round %d: "
				"%s\n", run->path, n + 1, ferr.msg);
			return err;
		}
		if (run->undo) {
			fs_undo_detach(run->undo);
			if (scan_undo_attach(run->undo, r->fs)) {
				fprintf(stderr, "xfsx_repair: %s: the device changed size while it was "
					"open\n", run->path);
				return -EIO;
			}
		}
		if (!run->o->quiet && !run->o->json)
			printf("%s: round %d: %zu problem(s) left after the last round's writes; "
			       "planning again over the result\n", run->path, n + 1,
			       last->verified.left);
		err = run_round(run, n);
		if (err)
			return err;
		if (!r->rx.planned_writes || r->rx.verified.introduced)
			break;
		run->left = r->rx.left;
		last = &r->rx;
		/* the first round's findings, judged by the newest result */
		for (size_t i = 0; i < run->round[0].fl.n; i++)
			if (!first->fixed[i])
				first->fixed[i] = !repair_verified_has(&last->verified,
								       &run->round[0].fl.v[i]);
	}
	return 0;
}

int repair_run(struct repair_run *run, const struct repair_opts *o, const char *path)
{
	int err;

	run->o = o;
	run->path = path;
	err = open_target(run);
	if (err)
		return err;
	run->reached_scan = true;
	run->nrounds = 1;
	err = run_round(run, 0);
	if (!err) {
		run->left = run->round[0].rx.left;
		err = later_rounds(run);
	}
	if (!err && run->undo) {
		err = fs_undo_finish(run->undo, run->msg, sizeof(run->msg));
		if (err)
			fprintf(stderr, "xfsx_repair: %s: %s\n", o->undo_path, run->msg);
		else if (!o->quiet && !o->json)
			printf("%s: undo file %s: %" PRIu64 " ranges, %" PRIu64 " bytes saved\n",
			       path, o->undo_path, fs_undo_records(run->undo),
			       fs_undo_saved_bytes(run->undo));
	}
	return err ? XFSX_EXIT_OPERATIONAL : 0;
}

int repair_run_status(const struct repair_run *run)
{
	const struct fs_findings *fl = &run->round[0].fl;

	if (run->log.attris_refused)
		return XFSX_EXIT_UNCORRECTED;
	if (!fl->by_sev[FS_SEV_ERROR] && !fl->by_sev[FS_SEV_WARNING])
		return XFSX_EXIT_CLEAN;
	if (run->left || run->o->dry_run)
		return XFSX_EXIT_UNCORRECTED;
	return XFSX_EXIT_FIXED;
}

void repair_run_end(struct repair_run *run)
{
	/* a run stopped by an error still leaves a finished undo file of what it wrote */
	if (run->undo && fs_undo_finish(run->undo, run->msg, sizeof(run->msg)) < 0)
		fprintf(stderr, "xfsx_repair: %s: %s\n", run->o->undo_path, run->msg);
	fs_undo_free(run->undo);
	run->undo = NULL;
}

void repair_run_free(struct repair_run *run)
{
	/* the later rounds first, then the first (whose filesystem the report named) */
	for (int i = 1; i <= run->nrounds; i++) {
		struct repair_round *r = &run->round[i % run->nrounds];

		plan_free(&r->rx);
		scan_teardown(&r->sx);
		fs_close(r->fs);
		fs_findings_free(&r->fl);
	}
	if (!run->nrounds) {
		fs_close(run->round[0].fs);
		fs_findings_free(&run->round[0].fl);
	}
	free(run->force_clear);
	repair_log_free(&run->log);
}
