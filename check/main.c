// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_check: the command line.  Parses options, opens the filesystem
 * read-only through libfs, runs the scan (scan/) and renders its findings.
 * Exit codes follow fsck(8): 0 clean, 4 corruption, 8 operational, 16 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "check/geometry.h"
#include "libfs/log/logattr.h"
#include "libfs/util/exit.h"
#include "scan/log.h"
#include "scan/scan.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xfsx_check [options] DEVICE|IMAGE\n"
		"Verify an unmounted XFS v5 filesystem without writing to it.\n\n"
		"  -g, --geometry          print the filesystem geometry and exit\n"
		"  -j, --json              machine-readable output (one JSON object)\n"
		"  -t, --threads=N         worker threads (default: one per CPU)\n"
		"  -m, --memory=MiB        metadata cache cap (default: 256, less on small machines)\n"
		"  -o ag_stride=N          AGs per work item: a few threads cover many AGs\n"
		"      --progress          show phase and ETA on stderr even when not a terminal\n"
		"      --no-progress       never show progress (default: on a terminal)\n"
		"      --io-engine=E       uring, aio or pread (default: best available;\n"
		"                          also $XFSX_IO_ENGINE)\n"
		"      --no-direct         do not use O_DIRECT\n"
		"      --queue-depth=N     reads in flight per worker (default 16)\n"
		"  -q, --quiet             print no findings or summary; the exit code tells\n"
		"                          (operational errors still go to stderr)\n"
		"  -n                      accepted (as xfs_repair -n); checking never writes\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"A filesystem mounted read-write is refused (exit 8); a read-only mount is\n"
		"checked, with a warning that the result may be stale.\n\n"
		"Exit: 0 clean, 4 corruption found, 8 operational error (cannot open, not\n"
		"XFS, mounted, cannot write the output), 16 usage error.\n");
}

/*
 * Every report ends here: what was written must have reached the reader.
 * A write error (a full disk, /dev/full) is exit 8, naming the output; a
 * reader that went away (EPIPE: | head) keeps the check's verdict.
 */
static int finish_output(int rc)
{
	int err = fs_output_close(stdout);

	if (err == -EPIPE)
		return rc;
	if (err) {
		fprintf(stderr, "xfsx_check: cannot write the report to standard output: %s\n",
			strerror(-err));
		return XFSX_EXIT_OPERATIONAL;
	}
	return rc;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/*
 * One line saying what was checked, not only how many headers: AGs,
 * inodes, directories and their entries, the blocks of metadata walked,
 * and the time, then the verdict.
 */
static void print_summary_text(const struct scan_ctx *cx, const char *path, bool clean, FILE *out)
{
	const struct fs_findings *fl = cx->fl;
	uint64_t blocks = cx->btree_blocks + cx->bmbt_blocks;
	size_t errors = fl->by_sev[FS_SEV_ERROR], warnings = fl->by_sev[FS_SEV_WARNING];
	double secs = 0;

	for (int ph = 0; ph < SCAN_PH_NR; ph++)
		secs += cx->phase_seconds[ph];
	fprintf(out, "%s: checked %u %s, %" PRIu64 " %s, %" PRIu64 " %s with %" PRIu64 " %s, "
		"%" PRIu64 " btree %s and %" PRIu64 " file %s in %.2f s: %zu %s, %zu %s%s\n",
		path, cx->ags_checked, plural(cx->ags_checked, "AG", "AGs"),
		cx->inodes_checked, plural(cx->inodes_checked, "inode", "inodes"),
		cx->directories, plural(cx->directories, "directory", "directories"),
		cx->dir_entries, plural(cx->dir_entries, "entry", "entries"),
		blocks, plural(blocks, "block", "blocks"),
		cx->fork_extents, plural(cx->fork_extents, "extent", "extents"), secs,
		errors, plural(errors, "error", "errors"),
		warnings, plural(warnings, "warning", "warnings"), clean ? ", clean" : "");
}

static void print_summary_json(const struct scan_ctx *cx, FILE *out)
{
	const struct fs_findings *fl = cx->fl;

	struct fs_cache_stats cs = { 0 };

	if (cx->cache)
		fs_cache_get_stats(cx->cache, &cs);
	fprintf(out, "\"summary\":{\"ags\":%u,\"headers\":%u,\"btree_blocks\":%" PRIu64 ","
		"\"free_extents\":%" PRIu64 ",\"inodes\":%" PRIu64 ",\"inodes_checked\":%" PRIu64 ",\"directories\":%" PRIu64 ",\"dir_entries\":%" PRIu64 ",\"fork_extents\":%" PRIu64 ",\"bmbt_blocks\":%" PRIu64 ",\"deferred\":%" PRIu64 ",\"deferred_early\":%" PRIu64 ",\"forks_complete\":%s,\"findings\":%zu,\"errors\":%zu,"
		"\"warnings\":%zu,\"clean\":%s,\"cache\":{\"hits\":%" PRIu64 ",\"misses\":%" PRIu64
		",\"evictions\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 "},\"readahead\":{\"windows\":%"
		PRIu64 ",\"exact\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"bytes_kept\":%" PRIu64
		",\"page_cache_bytes\":%" PRIu64 "}",
		cx->ags_checked, cx->headers_read, cx->btree_blocks, cx->free_extents, cx->inodes,
		cx->inodes_checked, cx->directories, cx->dir_entries, cx->fork_extents, cx->bmbt_blocks,
		cx->deferred, cx->deferred_early,
		cx->forks_complete ? "true" : "false",
		fl->n + fl->dropped, fl->by_sev[FS_SEV_ERROR],
		fl->by_sev[FS_SEV_WARNING], fl->by_sev[FS_SEV_ERROR] ? "false" : "true",
		cs.hits, cs.misses, cs.evictions, cs.peak_bytes, cx->ra.windows, cx->ra.exact,
		cx->ra.bytes_read, cx->ra.bytes_kept,
		__atomic_load_n(&cx->fs->dev->cached_bytes, __ATOMIC_RELAXED));
	fputs(",\"phase_seconds\":{", out);
	for (unsigned ph = 0; ph < SCAN_PH_NR; ph++)
		fprintf(out, "%s\"%s\":%.3f", ph ? "," : "", scan_phase_name(ph), cx->phase_seconds[ph]);
	fputs("}}", out);
}

/* A log.attri finding: an unfinished xattr intent the kernel's recovery stops at. */
static void on_attri_bad(void *priv, const struct fs_log_attri *a, const char *why)
{
	char what[400];

	fs_log_attri_describe(a, what, sizeof(what));
	fs_report(priv, "log.attri", FS_NONE, FS_NONE, (int64_t)a->ino, "log", "completed",
		  "stops recovery", "%s cannot be completed: %s", what, why);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "geometry", no_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, 't' },
		{ "memory", required_argument, NULL, 'm' },
		{ "progress", no_argument, NULL, 'P' },
		{ "no-progress", no_argument, NULL, 'N' },
		{ "io-engine", required_argument, NULL, 'E' },
		{ "no-direct", no_argument, NULL, 'D' },
		{ "queue-depth", required_argument, NULL, 'Q' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct fs_open_opts oo = { .allow_secondary = true };
	struct scan_opts co = { .progress = -1 };
	bool geometry = false, json = false, quiet = false;
	struct fs_findings fl;
	struct fs_error ferr = { 0 };
	struct scan_ctx cx = { 0 };
	struct scan_log sl = { 0 };
	struct fs *fs = NULL;
	const char *path;
	int c, err, rc;

	while ((c = getopt_long(argc, argv, "gjt:m:o:qhVn", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': break;	/* xfs_repair -n's habit: checking never writes anyway */
		case 'g': geometry = true; break;
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 't': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_check: --threads takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			co.threads = (unsigned)v;
			break;
		}
		case 'm':
			if (scan_parse_memory(optarg, &co.cache_bytes)) {
				fprintf(stderr, "xfsx_check: --memory takes a size in MiB (at least 16)\n");
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'o':
			if (scan_parse_subopts(optarg, &co)) {
				fprintf(stderr, "xfsx_check: unknown or invalid -o option '%s' (ag_stride=N)\n",
					optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'P': co.progress = 1; break;
		case 'N': co.progress = 0; break;
		case 'E':
			if (fs_io_engine_parse(optarg, &oo.dev.engine) < 0) {
				fprintf(stderr, "xfsx_check: unknown I/O engine '%s' (uring, aio, pread)\n", optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'D': oo.dev.no_direct = true; break;
		case 'Q': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_check: --queue-depth takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			co.qdepth = (unsigned)v;
			/* the submission ring holds at least that many */
			oo.dev.qdepth = v > 64 ? (unsigned)v : 64;
			break;
		}
		case 'h': usage(stdout); return XFSX_EXIT_CLEAN;
		case 'V': printf("xfsx_check %s\n", XFSX_VERSION); return XFSX_EXIT_CLEAN;
		default: usage(stderr); return XFSX_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		if (optind >= argc)
			fprintf(stderr, "xfsx_check: no device or image given\n");
		else
			fprintf(stderr, "xfsx_check: extra argument '%s': give one device or image\n",
				argv[optind + 1]);
		usage(stderr);
		return XFSX_EXIT_USAGE;
	}
	path = argv[optind];
	oo.dev.writable = false;	/* check never writes */
	/* a read-write mount changes under us: refused (as xfs_repair -n does) */
	oo.use = FS_TARGET_CHECK;
	/* a reader that goes away is an output error (EPIPE), not a silent death */
	signal(SIGPIPE, SIG_IGN);

	fs_findings_init(&fl);
	err = fs_open(path, &oo, &fs, &fl, &ferr);
	if (err) {
		/* a corrupt primary with no usable secondary is corruption, not an operational failure */
		bool corrupt = err == -EUCLEAN;
		fs_findings_sort(&fl);
		if (json) {
			fputs("{\"error\":", stdout);
			fs_json_string(stdout, ferr.msg);
			fputs(",\"findings\":", stdout);
			fs_findings_write_json_array(&fl, stdout);
			printf(",\"summary\":{\"findings\":%zu,\"clean\":false}}\n", fl.n);
		} else if (!quiet) {
			fs_findings_write_text(&fl, stdout);
		}
		if (!quiet || !json)
			fprintf(stderr, "xfsx_check: %s\n", ferr.msg);
		fs_findings_free(&fl);
		rc = corrupt ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_OPERATIONAL;
		return finish_output(rc);
	}
	if (fs->target.mounted && !quiet)
		fprintf(stderr, "xfsx_check: warning: %s is mounted read-only on %s: the kernel may "
			"hold changes the device does not show yet, so the result may be stale\n",
			path, fs->target.mount_point);

	if (geometry) {
		if (json)
			check_print_geometry_json(fs, stdout);
		else
			check_print_geometry_text(fs, path, stdout);
		fs_close(fs);
		fs_findings_free(&fl);
		return finish_output(XFSX_EXIT_CLEAN);
	}

	/*
	 * A dirty log: replayed in memory and shown to every read the scan
	 * makes (nothing is written), so the check judges what the kernel's
	 * recovery would leave.  The filesystem is opened again over the
	 * replay: the superblock may be among what it changed.
	 */
	if (fs->g.log_internal && fs->have_log_head && !fs->log_clean) {
		char what[512];

		if (!scan_log_replay(fs, &sl) && !sl.dirty) {
			/* the full reader finds an unmount record newest (a padded one, say) */
			fs->log_clean = true;
		} else if (!sl.err) {
			enum scan_reopen_step failed;

			/* the scan sees the filesystem as recovery leaves it */
			if (scan_log_reopen(&sl, SCAN_REPLAY_IN_MEMORY, path, &oo, NULL, &fs, &fl, &ferr,
					    &failed, what, sizeof(what))) {
				fprintf(stderr, "xfsx_check: %s: opening the filesystem over the replayed "
					"log failed: %s\n", path, ferr.msg);
				scan_log_free(&sl);
				fs_findings_free(&fl);
				return finish_output(XFSX_EXIT_OPERATIONAL);
			}
			scan_log_describe(&sl, what, sizeof(what));
			if (!quiet && !json)
				fprintf(stderr, "xfsx_check: %s: the log is dirty: replayed in memory only, "
					"nothing written (%s); checking the filesystem as log recovery "
					"leaves it\n", path, what);
		} else if (!quiet && !json) {
			fprintf(stderr, "xfsx_check: %s: the log is dirty and was not replayed: %s; "
				"checking the metadata as it is on disk\n", path, sl.msg);
		}
	} else if (fs->g.log_internal) {
		/* a clean log: where it is, for the JSON summary */
		sl.located = !fs_log_locate(fs, &sl.li, sl.msg, sizeof(sl.msg));
	}

	cx.fs = fs;
	cx.fl = &fl;
	cx.opts = &co;
	if (quiet || json)
		co.progress = 0;
	err = scan_run(&cx);
	if (err) {
		fprintf(stderr, "xfsx_check: %s: check failed: %s\n", path, strerror(-err));
		scan_teardown(&cx);
		fs_close(fs);
		scan_log_free(&sl);
		fs_findings_free(&fl);
		return XFSX_EXIT_OPERATIONAL;
	}

	/*
	 * An xattr intent the kernel's recovery stops at (its inode free, not
	 * an inode, or damaged: logattr.c): the mount fails; xfsx_repair
	 * refuses such a log.  Said as a finding each.
	 */
	if (sl.rp && fs_replay_stats(sl.rp)->intents_open[FS_INTENT_ATTRI] &&
	    fs_replay_judge_attris(fs, sl.rp, on_attri_bad, &fl) < 0) {
		fprintf(stderr, "xfsx_check: %s: judging the log's xattr intents failed\n", path);
		scan_teardown(&cx);
		fs_close(fs);
		scan_log_free(&sl);
		fs_findings_free(&fl);
		return finish_output(XFSX_EXIT_OPERATIONAL);
	}
	/*
	 * Unfinished intents: mounting completes them after the replay, so what
	 * the scan finds about the blocks they name is that completion still to
	 * come, not damage (scan_log_account says which findings).
	 */
	if (sl.rp && fs_replay_intents_open(sl.rp)) {
		char what[512];

		if (scan_log_account(&sl, fs, &fl, false)) {
			fprintf(stderr, "xfsx_check: %s: out of memory\n", path);
			scan_teardown(&cx);
			fs_close(fs);
			scan_log_free(&sl);
			fs_findings_free(&fl);
			return finish_output(XFSX_EXIT_OPERATIONAL);
		}
		scan_log_intents(&sl, what, sizeof(what));
		if (!quiet && !json)
			fprintf(stderr, "xfsx_check: %s: the log holds unfinished intents (%s) that "
				"mounting completes after the replay: %" PRIu64 " finding(s) about the "
				"blocks they name are that completion, not counted%s%s%s\n", path, what,
				sl.accounted, fs_replay_stats(sl.rp)->intents_open[FS_INTENT_ATTRI] ?
				" (xattr intents are named, not applied here: their files are checked as they stand; xfsx_repair completes them)" :
				"", fs_replay_bui_unapplied(sl.rp) ? "; not applied: " : "",
				fs_replay_bui_unapplied(sl.rp) ? fs_replay_bui_unapplied(sl.rp) : "");
	}
	fs_findings_sort(&fl);
	rc = fl.by_sev[FS_SEV_ERROR] ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_CLEAN;
	if (json) {
		fputc('{', stdout);
		scan_print_fs_json(fs, path, stdout);
		if (fs->g.log_internal) {
			fputs(",\"log\":", stdout);
			scan_log_json(&sl, stdout);
		}
		fputs(",\"findings\":", stdout);
		fs_findings_write_json_array(&fl, stdout);
		fputc(',', stdout);
		print_summary_json(&cx, stdout);
		fputs("}\n", stdout);
	} else if (!quiet) {
		fs_findings_write_text(&fl, stdout);
		print_summary_text(&cx, path, rc == XFSX_EXIT_CLEAN, stdout);
	}
	scan_teardown(&cx);
	fs_close(fs);
	scan_log_free(&sl);
	fs_findings_free(&fl);
	return finish_output(rc);
}
