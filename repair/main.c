// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_repair: the command line.  Opens the filesystem (read-only with -n,
 * read-write otherwise), refuses what it must before the scan, runs the
 * shared scan, the repair phases (which only plan), then commits the plan
 * and renders the fixes.  Exit codes follow fsck(8): 0 nothing wrong,
 * 1 errors fixed, 4 errors left uncorrected, 8 operational error, 16 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "libfs/log/logattr.h"
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
#include "repair/verify.h"
#include "scan/log.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xfsx_repair [options] DEVICE|IMAGE\n"
		"Repair an unmounted XFS v5 filesystem.\n\n"
		"  -n, --no-modify         check and say what would be fixed; write nothing\n"
		"  -L, --zero-log          throw away a dirty log (its last transactions are lost)\n"
		"      --no-replay         refuse a dirty log instead of replaying it\n"
		"      --threads=N         worker threads (default: one per CPU)\n"
		"  -t SECONDS              progress every SECONDS on stderr (xfs_repair's -t)\n"
		"  -m, --memory=MiB        metadata cache cap, dirty buffers included (default: 256)\n"
		"  -o ag_stride=N          AGs per work item (xfs_repair's other -o suboptions\n"
		"                          are accepted and ignored, with a note)\n"
		"  -v, --verbose           also print each phase's time\n"
		"  -e                      accepted: exit 4 when something was fixed, as xfs_repair\n"
		"                          -e, when invoked as xfs_repair; else noted (1 says it)\n"
		"  -f, -P, -d, -c SUBOPT   xfs_repair's; accepted with a note, nothing changes\n"
		"  -l LOGDEV, -r RTDEV     xfs_repair's; an external log is refused (not read by\n"
		"                          this version), otherwise noted\n"
		"  -j, --json              machine-readable output (one JSON object)\n"
		"      --progress          show phase and ETA on stderr even when not a terminal\n"
		"      --no-progress       never show progress (default: on a terminal)\n"
		"  -q, --quiet             print nothing but errors; the exit code tells\n"
		"      --undo-file=FILE    save the old contents of everything written to FILE\n"
		"                          (a new file; xfsx_undo FILE DEVICE restores them)\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"A mounted filesystem is refused (with -n, one mounted read-only is checked).\n"
		"A dirty log is replayed first, as mounting would (with -n in memory only);\n"
		"--no-replay refuses it, -L throws it away.  Operational errors go to stderr\n"
		"even with -q.\n\n"
		"Exit: 0 nothing wrong, 1 errors fixed, 4 errors left uncorrected,\n"
		"8 operational error (a refusal writes nothing; a write error mid-repair leaves\n"
		"NEEDSREPAIR set and names the range), 16 usage error.  Invoked through a link\n"
		"named xfs_repair, xfs_repair's: 0 clean or fixed (4 with -e when fixed), 1 damage\n"
		"found with -n, left, or an error, 2 stopped by a dirty log.\n");
}

/* rx->phase_seconds[i] is the time of phase_names[i] */
static const char *const phase_names[] = { "scan", "superblocks", "inodes", "names", "rebuild",
					   "counters", "commit", "verify" };

static void print_summary_json(const struct repair_ctx *rx, size_t left, FILE *out)
{

	uint32_t rebuilt = 0;
	uint64_t dirs, moved, nlinks;

	for (fs_agnumber_t a = 0; rx->ag && a < rx->fs->g.agcount; a++)
		rebuilt += rx->ag[a].rebuild;
	repair_names_counts(rx, &dirs, &moved, &nlinks);
	fprintf(out, "\"summary\":{\"findings\":%zu,\"left\":%zu,\"dry_run\":%s,"
		"\"ags_rebuilt\":%u,\"inodes_cleared\":%" PRIu64 ",\"attr_forks_removed\":%"
		PRIu64 ",\"attr_forks_rebuilt\":%" PRIu64 ",\"inode_fields_fixed\":%" PRIu64
		",\"directories_rebuilt\":%" PRIu64
		",\"moved_to_lost_found\":%" PRIu64 ",\"link_counts_set\":%" PRIu64
		",\"blocks_written\":%" PRIu64
		",\"writes\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"verified\":%s"
		",\"introduced\":%zu,\"phase_seconds\":{",
		rx->fl->n, left, rx->o->dry_run ? "true" : "false", rebuilt, rx->cleared,
		rx->attr_resets, repair_xattrs_rebuilt(rx), rx->field_fixes, dirs, moved, nlinks,
		rx->blocks_written, rx->writes, rx->bytes_written,
		rx->verified.ran ? "true" : "false", rx->verified.introduced);
	for (size_t i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
		fprintf(out, "%s\"%s\":%.3f", i ? "," : "", phase_names[i], rx->phase_seconds[i]);
	fputs("}}", out);
}

static void print_phase_times(const struct repair_ctx *rx, int round, FILE *out)
{
	fprintf(out, "round %d seconds:", round);
	for (size_t i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
		fprintf(out, " %s %.3f", phase_names[i], rx->phase_seconds[i]);
	fputc('\n', out);
}

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

static int fail_open(const struct repair_opts *o, const char *path, struct fs_findings *fl,
		     const char *msg)
{
	if (o->json) {
		fputs("{\"error\":", stdout);
		fs_json_string(stdout, msg);
		fputs(",\"findings\":", stdout);
		fs_findings_write_json_array(fl, stdout);
		puts(",\"summary\":{\"clean\":false}}");
	}
	fprintf(stderr, "xfsx_repair: %s\n", msg);
	(void)path;
	return XFSX_EXIT_OPERATIONAL;
}

/* The planning phases in run order, and the phase_names[] slot each is timed in. */
static const struct {
	int (*run)(struct repair_ctx *rx);
	int slot;
} plan_phases[] = {
	{ repair_phase_sb, 1 }, { repair_phase_inodes, 2 }, { repair_phase_names, 3 },
	{ repair_phase_xattrs, 3 }, { repair_phase_quota, 4 }, { repair_phase_rt, 4 },
	{ repair_phase_rebuild, 4 }, { repair_phase_counters, 5 },
};

/*
 * One plan: the scan, the unfinished intents accounted (the first round,
 * after a replay: sl), the phases, the decisions, and the judgement of the
 * planned result (verify.c).  Messages are printed; a negative errno when
 * the plan could not be made (nothing written).  *left: what the plan
 * leaves.
 */
static int plan_round(struct repair_ctx *rx, struct scan_log *sl, size_t attris_refused,
		      size_t *left)
{
	const struct repair_opts *ro = rx->o;
	const char *path = rx->path;
	char msg[1024];
	double t0;
	size_t left_;
	int err;

	t0 = fs_monotonic_seconds();
	err = scan_run(rx->sx);
	rx->phase_seconds[0] = fs_monotonic_seconds() - t0;
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: scan failed: %s\n", path, strerror(-err));
		return err;
	}
	/*
	 * The replayed log's unfinished EFI/RUI/CUI intents: what the scan found
	 * about their blocks is the completion still to come; the AGs they name
	 * are rebuilt from the forks, which completes them as recovery would.
	 * Only when the rebuild can happen: else those findings stay (left).
	 */
	/* (xattr intents name no blocks: the xattr phase completes them, and says so) */
	if (sl->rp && fs_replay_intents_open(sl->rp) > rx->nattris && !repair_model_incomplete(rx)) {
		char what[512];

		err = scan_log_account(sl, rx->fs, rx->fl, true);
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: %s\n", path, strerror(-err));
			return err;
		}
		rx->intent_ags = sl->intent_ags;
		rx->replay_bmbt_changed = fs_replay_stats(sl->rp)->bui_bmbt_taken ||
					 fs_replay_stats(sl->rp)->bui_bmbt_freed;
		scan_log_intents(sl, what, sizeof(what));
		if (!ro->quiet && !ro->json)
			printf("%s: the log's unfinished intents (%s) %s completed as recovery "
			       "completes them: the AGs they name rebuilt from the file forks (%"
			       PRIu64 " finding(s) about their blocks were that completion)\n", path,
			       what, ro->dry_run ? "would be" : "are", sl->accounted);
	}
	/*
	 * The phases only plan: every buffer they change stays dirty in the
	 * cache.  In run order, each timed into its slot of phase_names[]
	 * (the xattr phase after the namespace: its allocator places the
	 * rebuilt attr forks too).
	 */
	for (size_t i = 0; !err && i < sizeof(plan_phases) / sizeof(plan_phases[0]); i++) {
		t0 = fs_monotonic_seconds();
		err = plan_phases[i].run(rx);
		rx->phase_seconds[plan_phases[i].slot] += fs_monotonic_seconds() - t0;
	}
	if (!err && rx->nattris && !ro->quiet && !ro->json) {
		/*
		 * Each refused one was named as the judge found it (-n only: a
		 * repair stops before writing): the count says what the rest
		 * come to, and that a repair completes none of them then
		 */
		char freed[160] = "", refused[200] = "";

		if (rx->attris_freed)
			snprintf(freed, sizeof(freed), "; %" PRIu64 " on unlinked inodes (no links, "
				 "on an AGI unlinked list), which %s freed as recovery frees them after "
				 "completing them", rx->attris_freed, ro->dry_run ? "would be" : "are");
		if (rx->attris_refused)
			snprintf(refused, sizeof(refused), "; %" PRIu64 " cannot be (on the inode%s "
				 "named above), so a repair refuses the log and completes none of the %zu",
				 rx->attris_refused, attris_refused > 1 ? "s" : "", rx->nattris);
		printf("%s: the log's unfinished xattr intents (ATTRI): %" PRIu64 " of %zu %s as "
		       "recovery completes them, on their inodes' attr forks%s%s\n", path,
		       rx->attris_done, rx->nattris, rx->attris_refused ? "can be completed" :
		       ro->dry_run ? "would be completed" : "completed", freed, refused);
	}
	{
		uint64_t rest = rx->nattris - rx->attris_done - rx->attris_freed - rx->attris_refused;

		if (!err && rest)
			fprintf(stderr, "xfsx_repair: %s: %" PRIu64 " unfinished xattr intent%s not "
				"completed: %s inode is not in use, is cleared, or %s attr fork could "
				"not be rebuilt\n", path, rest, rest > 1 ? "s" : "",
				rest > 1 ? "their" : "its", rest > 1 ? "their" : "its");
	}
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: planning the repair failed: %s; nothing was "
			"written\n", path, strerror(-err));
		return err;
	}
	/* sorted once, before the decisions index it */
	fs_findings_sort(rx->fl);
	left_ = repair_decide(rx);
	/*
	 * "fixed" is what the scan of the planned result no longer finds: the
	 * plan is judged before anything is written (verify.c), and a plan
	 * that would bring in problems that were not there is not written.
	 */
	if (rx->planned_writes || ro->zero_log) {
		t0 = fs_monotonic_seconds();
		err = repair_verify_plan(rx, msg, sizeof(msg));
		rx->phase_seconds[7] = fs_monotonic_seconds() - t0;
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: %s\n", path, msg);
			return err;
		}
		left_ = rx->verified.left;
		if (rx->verified.introduced) {
			memset(rx->fixed, 0, (rx->fl->n ? rx->fl->n : 1) * sizeof(*rx->fixed));
			left_ = fs_findings_count(rx->fl, FS_SEV_WARNING) + rx->fl->dropped;
		}
	} else {
		/* nothing to write: nothing changes */
		memset(rx->fixed, 0, (rx->fl->n ? rx->fl->n : 1) * sizeof(*rx->fixed));
		left_ = fs_findings_count(rx->fl, FS_SEV_WARNING) + rx->fl->dropped;
	}

	*left = left_;
	return 0;
}

/* Write a judged plan (commit.c), timed; a failure is said with the undo file's own. */
static int commit_plan(struct repair_ctx *rx, struct fs_undo *undo, const char *undo_path)
{
	char msg[1024];
	double t0 = fs_monotonic_seconds();
	int err = repair_commit(rx, msg, sizeof(msg));

	rx->phase_seconds[6] = fs_monotonic_seconds() - t0;
	if (err) {
		fprintf(stderr, "xfsx_repair: %s: %s\n", rx->path, msg);
		if (undo && *fs_undo_error(undo))
			fprintf(stderr, "xfsx_repair: %s: %s\n", undo_path, fs_undo_error(undo));
	}
	return err;
}

/* What a plan holds (not its scan, filesystem or findings). */
static void plan_free(struct repair_ctx *rx)
{
	repair_names_free(rx);
	repair_xattrs_free(rx);
	repair_verified_free(rx);
	free(rx->dquot_blocks);
	free(rx->verdict);
	free(rx->fixed);
	free(rx->ag);
	free(rx->rewrite_sb);
	free(rx->ffix);
	free(rx->symlinks);
	repair_place_free(rx);
}

/*
 * A later round: when the verified result of a plan that was written still
 * has findings (and the plan fixed some), the filesystem as written is
 * scanned and planned again, at most REPAIR_ROUNDS times in all, so one run
 * finishes what one plan could not.  Each round is a whole plan: judged
 * before its first write, written under the crash protocol.
 */
enum { REPAIR_ROUNDS = 3 };
struct round {
	struct fs *fs;
	struct fs_findings fl;
	struct scan_ctx sx;
	struct repair_ctx rx;
	size_t left;
	bool written;
};

static size_t count_fixed(const struct repair_ctx *rx)
{
	size_t n = 0;

	for (size_t i = 0; rx->fixed && i < rx->fl->n; i++)
		n += rx->fixed[i];
	return n;
}

/* One later round's lists and summary, for --json's "later_rounds". */
static void print_round_json(const struct round *r, FILE *out)
{
	fputs("{\"findings\":", out);
	repair_report_json(&r->rx, out);
	fputs(",\"moved\":", out);
	repair_names_print_moves(&r->rx, out, true);
	fputs(",\"xattrs\":", out);
	repair_xattrs_print(&r->rx, out, true);
	fputs(",\"cleared\":", out);
	repair_report_cleared(&r->rx, out, true);
	fputs(",\"after\":", out);
	repair_report_after_json(&r->rx, out);
	fputc(',', out);
	print_summary_json(&r->rx, r->left, out);
	fputc('}', out);
}

/* What the exit status depends on beyond the run's own code (xfs_repair's personality). */
struct compat {
	bool xfs_repair;           /* invoked as xfs_repair: its exit statuses */
	bool e;                    /* -e: 4 when something was fixed */
	bool dry_run;
	bool log_refused;          /* stopped at a dirty log */
	int verbose;               /* -v, once or more */
};

static void note_subopt(void *priv, const char *subopt)
{
	(void)priv;
	fprintf(stderr, "xfsx_repair: -o %s: accepted for xfs_repair's sake, no meaning here "
		"(ignored)\n", subopt);
}

static int repair_main(int argc, char **argv, struct compat *cp)
{
	enum { OPT_NO_REPLAY = 1000, OPT_THREADS, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_UNDO };
	static const struct option longopts[] = {
		{ "no-modify", no_argument, NULL, 'n' },
		{ "zero-log", no_argument, NULL, 'L' },
		{ "no-replay", no_argument, NULL, OPT_NO_REPLAY },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "memory", required_argument, NULL, 'm' },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "undo-file", required_argument, NULL, OPT_UNDO },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct repair_opts ro = { .scan = { .progress = -1 } };
	struct fs_open_opts oo = { .allow_secondary = true };
	struct repair_ctx rx = { 0 };
	struct scan_ctx sx = { 0 };
	struct fs_findings fl;
	struct fs_error ferr = { 0 };
	struct fs *fs = NULL;
	struct scan_log sl = { 0 };
	struct round more[REPAIR_ROUNDS - 1] = { 0 };
	int nmore = 0;
	bool no_replay = false;
	struct fs_undo *undo = NULL;
	const char *undo_path = NULL, *logdev = NULL, *rtdev = NULL;
	char msg[1024];
	const char *path;
	size_t left, attris_refused = 0;
	bool *attri_refused = NULL;   /* per open ATTRI: judged as stopping recovery (-n) */
	fs_ino_t *force_clear = NULL; /* inodes a later attempt clears (repair_blame) */
	size_t nforce_clear = 0;
	int c, err, rc;

	/*
	 * xfs_repair's flags are taken too, so scripts that call xfs_repair can
	 * call this: what has a meaning here is honoured (-n -L -m -o ag_stride
	 * -t -v -e -V), the rest is accepted with a one-line note (-f -P -d -c,
	 * other -o suboptions; -l and -r name devices this version does not read).
	 */
	while ((c = getopt_long(argc, argv, "nLjt:m:o:qhVfPvdec:l:r:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': ro.dry_run = true; break;
		case 'L': ro.zero_log = true; break;
		case OPT_NO_REPLAY: no_replay = true; break;
		case 'j': ro.json = true; break;
		case 'q': ro.quiet = true; break;
		case OPT_UNDO:
			if (!*optarg) {
				fprintf(stderr, "xfsx_repair: --undo-file needs a file name\n");
				return XFSX_EXIT_USAGE;
			}
			undo_path = optarg;
			break;
		case OPT_THREADS: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_repair: --threads takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			ro.scan.threads = (unsigned)v;
			break;
		}
		case 't': {
			/* as xfs_repair's -t: the progress interval in seconds */
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 86400) {
				fprintf(stderr, "xfsx_repair: -t takes the progress interval in seconds "
					"(1 to 86400); worker threads are --threads\n");
				return XFSX_EXIT_USAGE;
			}
			ro.scan.progress_interval = (unsigned)v;
			ro.scan.progress = 1;
			break;
		}
		case 'm':
			if (scan_parse_memory(optarg, &ro.scan.cache_bytes)) {
				fprintf(stderr, "xfsx_repair: --memory takes a size in MiB (at least 16)\n");
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'o':
			if (scan_parse_subopts_ex(optarg, &ro.scan, note_subopt, NULL)) {
				fprintf(stderr, "xfsx_repair: invalid -o option '%s' (ag_stride=N, N "
					"from 1)\n", optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'v': cp->verbose++; break;
		case 'e': cp->e = true; break;
		case 'f':
			fprintf(stderr, "xfsx_repair: -f: accepted for xfs_repair's sake (image files "
				"are recognised without it)\n");
			break;
		case 'P':
			fprintf(stderr, "xfsx_repair: -P: accepted for xfs_repair's sake; readahead "
				"stays on (it cannot get stuck here)\n");
			break;
		case 'd':
			fprintf(stderr, "xfsx_repair: -d: accepted for xfs_repair's sake; a mounted "
				"filesystem is still refused\n");
			break;
		case 'c':
			fprintf(stderr, "xfsx_repair: -c %s: changing filesystem features is not "
				"done here (ignored; xfs_admin changes them)\n", optarg);
			break;
		case 'l': logdev = optarg; break;
		case 'r': rtdev = optarg; break;
		case OPT_PROGRESS: ro.scan.progress = 1; break;
		case OPT_NO_PROGRESS: ro.scan.progress = 0; break;
		case 'h': usage(stdout); return XFSX_EXIT_CLEAN;
		case 'V': printf("xfsx_repair %s\n", XFSX_VERSION); return XFSX_EXIT_CLEAN;
		default: usage(stderr); return XFSX_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "xfsx_repair: no device or image given\n");
		usage(stderr);
		return XFSX_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xfsx_repair: extra argument '%s'\n", argv[optind + 1]);
		usage(stderr);
		return XFSX_EXIT_USAGE;
	}
	if (ro.dry_run && ro.zero_log) {
		fprintf(stderr, "xfsx_repair: -n and -L cannot be used together\n");
		return XFSX_EXIT_USAGE;
	}
	if (ro.dry_run && cp->e) {
		fprintf(stderr, "xfsx_repair: -n and -e cannot be used together\n");
		return XFSX_EXIT_USAGE;
	}
	if (ro.dry_run && undo_path) {
		fprintf(stderr, "xfsx_repair: -n writes nothing: --undo-file is for a repair\n");
		return XFSX_EXIT_USAGE;
	}
	cp->dry_run = ro.dry_run;
	if (cp->e && !cp->xfs_repair)
		fprintf(stderr, "xfsx_repair: -e: the exit status already says 1 when something "
			"was fixed (as xfs_repair, it is 4 then)\n");
	path = argv[optind];
	/* a reader that goes away shows up as EPIPE at the end, not as a kill mid-write */
	signal(SIGPIPE, SIG_IGN);
	if (ro.quiet || ro.json)
		ro.scan.progress = 0;

	fs_findings_init(&fl);
	/* -n never writes: the device is opened read-only */
	oo.dev.writable = !ro.dry_run;
	/* an image file in the page cache is read from there, as by xfsx_check */
	oo.dev.cached_reads = true;
	/* a mounted filesystem is refused: -n as a check does (read-only mounts allowed), a repair always */
	oo.use = ro.dry_run ? FS_TARGET_CHECK : FS_TARGET_WRITE;
	err = fs_open(path, &oo, &fs, &fl, &ferr);
	if (err) {
		rc = fail_open(&ro, path, &fl, ferr.msg);
		fs_findings_free(&fl);
		return rc;
	}
	/* a device cut short cannot be repaired by rewriting metadata */
	if ((uint64_t)fs->g.dblocks << fs->g.blocklog > fs->dev->size) {
		snprintf(msg, sizeof(msg),
			 "%s: the filesystem is %llu bytes but the device holds only %llu: "
			 "restore the device's full size first.  Nothing was written.", path,
			 (unsigned long long)((uint64_t)fs->g.dblocks << fs->g.blocklog),
			 (unsigned long long)fs->dev->size);
		rc = fail_open(&ro, path, &fl, msg);
		fs_close(fs);
		fs_findings_free(&fl);
		return rc;
	}
	/* xfs_repair's -l and -r name devices this version does not read */
	if (logdev && fs->g.log_internal)
		fprintf(stderr, "xfsx_repair: -l %s: this filesystem's log is internal (ignored)\n",
			logdev);
	if (logdev && !fs->g.log_internal) {
		snprintf(msg, sizeof(msg), "%s: -l %s: reading an external log device is not "
			 "supported by this version.  Nothing was written.", path, logdev);
		goto refuse;
	}
	if (rtdev)
		fprintf(stderr, "xfsx_repair: -r %s: %s\n", rtdev, fs->g.rblocks ?
			"the realtime device is not read by this version: realtime extents are "
			"judged from the data device's bitmap and summary only" :
			"this filesystem has no realtime section (ignored)");
	/*
	 * A dirty log holds changes the metadata lacks: replayed before the
	 * scan as the kernel's recovery would (-n: in memory, shown to the
	 * scan's reads), refused with --no-replay, thrown away with -L.
	 * Nothing is written unless every item replays.
	 */
	if (fs->have_log_head && !fs->log_clean && !ro.zero_log) {
		const char *options = "Mounting the filesystem may replay it (the kernel's own "
			"recovery; unmount and run xfsx_repair again), or -L throws the log away (its "
			"last transactions are lost).  Nothing was written.";
		const char *bui_why;
		enum scan_reopen_step failed;
		char what[512];

		cp->log_refused = true;	/* until it is replayed */
		if (no_replay) {
			snprintf(msg, sizeof(msg),
				 "%s: the log is dirty (head at cycle %u block %u) and holds changes "
				 "the metadata lacks, and --no-replay was given.  Run without it to "
				 "replay the log, or mount the filesystem to replay it, unmount it, "
				 "and run xfsx_repair again.  If it cannot be mounted, -L throws the log "
				 "away (its last transactions are lost).  Nothing was written.",
				 path, fs_lsn_cycle(fs->log_head_lsn), fs_lsn_block(fs->log_head_lsn));
			goto refuse;
		}
		if (scan_log_replay(fs, &sl)) {
			snprintf(msg, sizeof(msg), "%s: the log is dirty and cannot be replayed: %s.  %s",
				 path, sl.msg, options);
			goto refuse;
		}
		if (!sl.dirty)
			goto log_done;	/* the full reader finds an unmount record newest */
		/*
		 * Unfinished intents: the replay applied the BUIs it could to their
		 * forks; EFI, RUI and CUI are completed after the scan by rebuilding
		 * the AGs they name from the forks (scan_log_account); xattr intents
		 * (ATTRI) by the xattr phase re-encoding their inodes' attr forks.  A
		 * BUI the replay could not apply (its fork damaged, or no free block
		 * for a new bmbt block) is refused before anything is written.
		 */
		bui_why = fs_replay_bui_unapplied(sl.rp);
		if (bui_why)
			snprintf(what, sizeof(what), "%s; recovery makes that change, this version "
				 "does not", bui_why);
		else
			what[0] = 0;
		if (*what && !ro.dry_run) {
			snprintf(msg, sizeof(msg), "%s: the log cannot be completed: %s.  %s", path,
				 what, options);
			goto refuse;
		}
		if (*what && !ro.quiet && !ro.json)
			printf("%s: %s (a repair refuses such a log): findings about that file may "
			       "follow\n", path, what);
		/*
		 * An xattr intent the kernel's recovery stops at (its inode free,
		 * not an inode, or damaged: logattr.c): the mount fails, and a
		 * repair refuses before anything is written.
		 */
		{
			struct attri_bad ab = { .path = path, .show = ro.dry_run && !ro.quiet && !ro.json };
			size_t na = fs_replay_open_attris(sl.rp, &ab.v);

			attri_refused = ab.refused = calloc(na ? na : 1, sizeof(bool));
			err = ab.refused ? fs_replay_judge_attris(fs, sl.rp, on_attri_bad, &ab) : -ENOMEM;
			if (err < 0) {
				snprintf(msg, sizeof(msg), "%s: judging the log's xattr intents failed: %s.  "
					 "Nothing was written.", path, strerror(-err));
				goto refuse;
			}
			if (err && !ro.dry_run) {
				snprintf(msg, sizeof(msg), "%s: the log cannot be completed: its unfinished "
					 "%s cannot be completed: %s%s.  -L throws the log away (its last "
					 "transactions are lost).  Nothing was written.", path, ab.first, ab.why,
					 err > 1 ? " (and more intents: xfsx_repair -n names them all)" : "");
				goto refuse;
			}
			/* -n: what a repair would refuse is left, whatever the scan finds */
			attris_refused = (size_t)err;
			err = 0;
		}
		scan_log_describe(&sl, what, sizeof(what));
		/* the replay is the run's first write: the undo file covers it too */
		if (!ro.dry_run && undo_path &&
		    fs_undo_create(undo_path, fs->dev, "xfsx_repair " XFSX_VERSION, NULL, &undo, msg,
				   sizeof(msg)))
			goto refuse;
		/* again, over what the replay changed (in memory with -n) */
		err = scan_log_reopen(&sl, ro.dry_run ? SCAN_REPLAY_IN_MEMORY : SCAN_REPLAY_ON_DISK,
				      path, &oo, undo, &fs, &fl, &ferr, &failed, msg, sizeof(msg));
		if (err && failed == SCAN_REOPEN_WRITE) {
			fprintf(stderr, "xfsx_repair: %s: replaying the log: %s; run xfsx_repair "
				"again (the log is still dirty until its reset)\n", path, msg);
			rc = XFSX_EXIT_OPERATIONAL;
			goto early_out;
		}
		if (err && failed == SCAN_REOPEN_OPEN) {
			rc = fail_open(&ro, path, &fl, ferr.msg);
			goto early_out;
		}
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: the device changed size while it was open\n",
				path);
			rc = XFSX_EXIT_OPERATIONAL;
			goto early_out;
		}
		if (!ro.quiet && !ro.json)
			printf("%s: the log was dirty: %s (%s)\n", path,
			       ro.dry_run ? "replayed in memory only" : "replayed and reset", what);
		cp->log_refused = false;
	}
	if (0) {
log_done:
		fs->log_clean = true;
	}
	if (0) {
refuse:
		rc = fail_open(&ro, path, &fl, msg);
early_out:
		/* a replay stopped part-way: what it wrote is in the undo file */
		if (undo && fs_undo_finish(undo, msg, sizeof(msg)))
			fprintf(stderr, "xfsx_repair: %s: %s\n", undo_path, msg);
		fs_undo_free(undo);
		scan_log_free(&sl);
		free(attri_refused);
		fs_close(fs);
		fs_findings_free(&fl);
		return rc;
	}

	/* before the scan, so a file that cannot be made stops the run before any work */
	if (undo_path && !undo && fs_undo_create(undo_path, fs->dev, "xfsx_repair " XFSX_VERSION,
						 NULL, &undo, msg, sizeof(msg)))
		goto refuse;

	rc = XFSX_EXIT_OPERATIONAL;
	for (int attempt = 1;; attempt++) {
		size_t nblamed;

		rx.fs = fs;
		rx.fl = &fl;
		rx.sx = &sx;
		rx.o = &ro;
		rx.path = path;
		if (sl.rp)
			rx.nattris = fs_replay_open_attris(sl.rp, &rx.attris);
		rx.attri_refused = attri_refused;
		rx.force_clear = force_clear;
		rx.nforce_clear = nforce_clear;
		sx.fs = fs;
		sx.fl = &fl;
		sx.opts = &ro.scan;
		sx.keep_graph = true;	/* the namespace phase works on the directory graph */
		err = plan_round(&rx, &sl, attris_refused, &left);
		if (err)
			goto out;
		/*
		 * A plan that would bring in problems on inodes it kept although
		 * they had problems of their own: planned again from a fresh scan
		 * with those inodes cleared, as xfs_repair clears what it cannot
		 * make right (reported as data lost), at most three times.  Not
		 * after a replay, whose intents the first plan accounted.
		 */
		if (!rx.verified.introduced || attempt == 3 || sl.rp)
			break;
		nblamed = nforce_clear;
		err = repair_blame(&rx, &force_clear, &nforce_clear);
		if (err)
			goto out;
		if (nforce_clear == nblamed)
			break;
		if (!ro.quiet && !ro.json)
			printf("%s: the plan would bring in %zu problem(s) on %zu inode(s) it kept; "
			       "planning again with %s cleared\n", path, rx.verified.introduced,
			       nforce_clear - nblamed, nforce_clear - nblamed > 1 ? "them" : "it");
		plan_free(&rx);
		scan_teardown(&sx);
		memset(&rx, 0, sizeof(rx));
		memset(&sx, 0, sizeof(sx));
		fs_findings_free(&fl);
		fs_findings_init(&fl);
	}
	if (rx.verified.introduced)
		fprintf(stderr, "xfsx_repair: %s: the repair's plan would leave %zu problem(s) that "
			"were not there before (listed as \"new\"), so %s; this is a defect of "
			"xfsx_repair, please report it\n", path, rx.verified.introduced,
			ro.dry_run ? "a repair would write nothing" : "nothing was written");

	if (!ro.dry_run && (rx.planned_writes || ro.zero_log) && !rx.verified.introduced) {
		err = commit_plan(&rx, undo, undo_path);
		if (err)
			goto out;
	}
	/* later rounds over what was written, while they make progress */
	for (struct repair_ctx *last = &rx; !ro.dry_run && nmore < REPAIR_ROUNDS - 1 &&
	     last->verified.ran && !last->verified.introduced && last->verified.left &&
	     count_fixed(last);) {
		struct round *r = &more[nmore];
		struct scan_log none = { 0 };

		fs_findings_init(&r->fl);
		nmore++;
		err = fs_open(path, &oo, &r->fs, &r->fl, &ferr);
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: opening the filesystem again for round %d: "
				"%s\n", path, nmore + 1, ferr.msg);
			goto out;
		}
		if (undo) {
			fs_undo_detach(undo);
			if (fs_undo_attach(undo, r->fs->dev)) {
				fprintf(stderr, "xfsx_repair: %s: the device changed size while it was "
					"open\n", path);
				err = -EIO;
				goto out;
			}
		}
		r->rx.fs = r->fs;
		r->rx.fl = &r->fl;
		r->rx.sx = &r->sx;
		r->rx.o = &ro;
		r->rx.path = path;
		r->sx.fs = r->fs;
		r->sx.fl = &r->fl;
		r->sx.opts = &ro.scan;
		r->sx.keep_graph = true;
		if (!ro.quiet && !ro.json)
			printf("%s: round %d: %zu problem(s) left after the last round's writes; "
			       "planning again over the result\n", path, nmore + 1, last->verified.left);
		err = plan_round(&r->rx, &none, 0, &r->left);
		if (err)
			goto out;
		if (!r->rx.planned_writes || r->rx.verified.introduced)
			break;
		err = commit_plan(&r->rx, undo, undo_path);
		if (err)
			goto out;
		r->written = true;
		left = r->left;
		last = &r->rx;
		/* the first round's findings, judged by the newest result */
		for (size_t i = 0; i < fl.n; i++)
			if (!rx.fixed[i])
				rx.fixed[i] = !repair_verified_has(&last->verified, &fl.v[i]);
	}
	if (undo) {
		err = fs_undo_finish(undo, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "xfsx_repair: %s: %s\n", undo_path, msg);
			goto out;
		}
		if (!ro.quiet && !ro.json)
			printf("%s: undo file %s: %" PRIu64 " ranges, %" PRIu64 " bytes saved\n",
			       path, undo_path, fs_undo_records(undo), fs_undo_saved_bytes(undo));
	}

	if (ro.json) {
		fputc('{', stdout);
		scan_print_fs_json(fs, path, stdout);
		if (sl.located || sl.err) {
			fputs(",\"log\":", stdout);
			scan_log_json(&sl, stdout);
		}
		fputs(",\"findings\":", stdout);
		repair_report_json(&rx, stdout);
		fputs(",\"moved\":", stdout);
		repair_names_print_moves(&rx, stdout, true);
		fputs(",\"xattrs\":", stdout);
		repair_xattrs_print(&rx, stdout, true);
		fputs(",\"cleared\":", stdout);
		repair_report_cleared(&rx, stdout, true);
		fputs(",\"after\":", stdout);
		repair_report_after_json(&rx, stdout);
		fputs(",\"later_rounds\":[", stdout);
		for (int i = 0; i < nmore; i++) {
			if (i)
				fputc(',', stdout);
			print_round_json(&more[i], stdout);
		}
		fputc(']', stdout);
		fputc(',', stdout);
		print_summary_json(&rx, left, stdout);
		fputs("}\n", stdout);
	} else if (!ro.quiet) {
		uint64_t cleared = repair_count_cleared(&rx);
		char rounds[64] = "";

		repair_report_text(&rx, stdout);
		repair_names_print_moves(&rx, stdout, false);
		repair_xattrs_print(&rx, stdout, false);
		for (int i = 0; i < nmore; i++) {
			repair_names_print_moves(&more[i].rx, stdout, false);
			repair_xattrs_print(&more[i].rx, stdout, false);
			cleared += repair_report_cleared(&more[i].rx, stdout, false);
		}
		if (nmore)
			snprintf(rounds, sizeof(rounds), "in %d rounds; ", 1 + nmore);
		if (!fl.n)
			printf("%s: no problems found\n", path);
		else
			printf("%s: %zu problem(s): %zu %s, %zu left uncorrected%s%s%s\n", path, fl.n,
			       count_fixed(&rx), ro.dry_run ? "would be fixed" : "fixed", left,
			       rx.verified.ran ? " (" : "", rx.verified.ran ? rounds : "",
			       rx.verified.ran ? "the result was checked before writing)" : "");
		if (cleared)
			printf("%s: %" PRIu64 " inode(s) in use could not be mended and %s cleared "
			       "(listed above): their data is lost\n", path, cleared,
			       ro.dry_run ? "would be" : "were");
		/* -v: where the time went, per round and phase */
		for (int i = 0; cp->verbose && i <= nmore; i++)
			print_phase_times(i ? &more[i - 1].rx : &rx, i + 1, stdout);
	}
	if (!fl.by_sev[FS_SEV_ERROR] && !fl.by_sev[FS_SEV_WARNING])
		rc = XFSX_EXIT_CLEAN;
	else if (left)
		rc = XFSX_EXIT_UNCORRECTED;
	else
		rc = ro.dry_run ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_FIXED;
	if (attris_refused)
		rc = XFSX_EXIT_UNCORRECTED;
out:
	/* a run stopped by an error still leaves a finished undo file of what it wrote */
	if (undo && (err = fs_undo_finish(undo, msg, sizeof(msg))) < 0)
		fprintf(stderr, "xfsx_repair: %s: %s\n", undo_path, msg);
	fs_undo_free(undo);
	/* the repair is done either way; a report that did not reach its reader is said so */
	err = fs_output_close(stdout);
	if (err && err != -EPIPE) {
		fprintf(stderr, "xfsx_repair: cannot write the report to standard output: %s\n",
			strerror(-err));
		rc = XFSX_EXIT_OPERATIONAL;
	}
	for (int i = 0; i < nmore; i++) {
		plan_free(&more[i].rx);
		scan_teardown(&more[i].sx);
		fs_close(more[i].fs);
		fs_findings_free(&more[i].fl);
	}
	plan_free(&rx);
	free(force_clear);
	scan_teardown(&sx);
	fs_close(fs);
	scan_log_free(&sl);
	free(attri_refused);
	fs_findings_free(&fl);
	return rc;
}

/*
 * Invoked through a link named xfs_repair, the exit statuses are
 * xfs_repair's, so test suites and scripts can point their repair program
 * here: 0 nothing wrong or all fixed (4 with -e when something was fixed),
 * 1 damage found by -n, or left, or an operational or usage error, 2 a
 * dirty log that stopped the run.
 */
int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	struct compat cp = { 0 };
	int rc;

	base = base ? base + 1 : argv[0];
	cp.xfs_repair = !strcmp(base, "xfs_repair");
	rc = repair_main(argc, argv, &cp);
	if (!cp.xfs_repair)
		return rc;
	switch (rc) {
	case XFSX_EXIT_CLEAN:
		return 0;
	case XFSX_EXIT_FIXED:
		return cp.e ? 4 : 0;
	case XFSX_EXIT_OPERATIONAL:
		return cp.log_refused ? 2 : 1;
	default:
		return 1;
	}
}
