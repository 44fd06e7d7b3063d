// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_repair: the command line.  Parses the options (xfs_repair's too),
 * runs the repair (run.c: open, refusals, the dirty log, the rounds of
 * plan, verify and commit), renders its report (render.c) and turns it
 * into the exit status: fsck(8)'s, or xfs_repair's when invoked by that
 * name.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/util/exit.h"
#include "libfs/util/mem.h"
#include "repair/render.h"
#include "repair/run.h"

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
		"  -m, --memory=MiB        cap on the scans' memory (cache with its dirty buffers,\n"
		"                          block model, link records, I/O windows; not the\n"
		"                          repair's own ~2 bytes an inode): the block model and\n"
		"                          rmap lists spill to --tmpdir past their share (default:\n"
		"                          no cap, a 256 MiB cache); too small is refused, naming\n"
		"                          the smallest\n"
		"      --tmpdir=DIR        where -m spills, and without -m an AG's rmap lists past\n"
		"                          4 MiB a side and dirty buffers past 32 MiB (default:\n"
		"                          $TMPDIR, else /tmp; never on the filesystem's own devices)\n"
		"  -o ag_stride=N          AGs per work item (xfs_repair's other -o suboptions\n"
		"                          are accepted and ignored, with a note)\n"
		"  -v, --verbose           every finding, move and cleared inode on its own line\n"
		"                          (by default grouped under their cause, with counts),\n"
		"                          each phase's time, and the memory a full run needs,\n"
		"                          estimated from the AG headers (-n -v: before repairing)\n"
		"  -e                      accepted: exit 4 when something was fixed, as xfs_repair\n"
		"                          -e, when invoked as xfs_repair; else noted (1 says it)\n"
		"  -f, -P, -d, -c SUBOPT   xfs_repair's; accepted with a note, nothing changes\n"
		"  -l, --logdev=DEV        the external log device (required when the log is\n"
		"                          external: replayed, reset by -L, written to the undo file)\n"
		"  -r, --rtdev=DEV         the realtime device: every realtime extent is checked to\n"
		"                          lie on it (never written; without it, said once)\n"
		"  -j, --json              machine-readable output (one JSON object)\n"
		"      --progress          show phase and ETA on stderr even when not a terminal\n"
		"      --no-progress       never show progress (default: on a terminal)\n"
		"  -q, --quiet             print nothing but errors; the exit code tells\n"
		"      --undo-file=FILE    save the old contents of everything written to FILE\n"
		"                          (a new file; xfsx_undo FILE DEVICE restores them)\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"A mounted filesystem is refused (with -n, one mounted read-only is checked),\n"
		"and so are log and realtime devices in use; an external log not given, or a\n"
		"log device that is not the filesystem's, is refused before anything is written.\n"
		"A dirty log is replayed first, as mounting would (with -n in memory only);\n"
		"--no-replay refuses it, -L throws it away.  Operational errors go to stderr\n"
		"even with -q.\n\n"
		"Exit: 0 nothing wrong, 1 errors fixed, 4 errors left uncorrected,\n"
		"8 operational error (a refusal writes nothing; a write error mid-repair leaves\n"
		"NEEDSREPAIR set and names the range), 16 usage error.  Invoked through a link\n"
		"named xfs_repair, xfs_repair's: 0 clean or fixed (4 with -e when fixed), 1 damage\n"
		"found with -n, left, or an error, 2 stopped by a dirty log.\n");
}

/* What the exit status depends on beyond the run's own code (xfs_repair's personality). */
struct compat {
	bool xfs_repair;           /* invoked as xfs_repair: its exit statuses */
	bool e;                    /* -e: 4 when something was fixed */
	int verbose;               /* -v, once or more */
};

static void note_subopt(void *priv, const char *subopt)
{
	(void)priv;
	fprintf(stderr, "xfsx_repair: -o %s: accepted for xfs_repair's sake, no meaning here "
		"(ignored)\n", subopt);
}

/*
 * The options into *ro: 0, else the exit status to leave with (usage, or
 * -h / -V done).  xfs_repair's flags are taken too, so scripts that call
 * xfs_repair can call this: what has a meaning here is honoured (-n -L -m
 * -o ag_stride -t -v -e -V -l -r), the rest is accepted with a one-line
 * note (-f -P -d -c, other -o suboptions).
 */
static int parse_args(int argc, char **argv, struct repair_opts *ro, struct compat *cp)
{
	enum { OPT_NO_REPLAY = 1000, OPT_THREADS, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_UNDO,
	       OPT_TMPDIR };
	static const struct option longopts[] = {
		{ "no-modify", no_argument, NULL, 'n' },
		{ "zero-log", no_argument, NULL, 'L' },
		{ "no-replay", no_argument, NULL, OPT_NO_REPLAY },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "memory", required_argument, NULL, 'm' },
		{ "tmpdir", required_argument, NULL, OPT_TMPDIR },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "undo-file", required_argument, NULL, OPT_UNDO },
		{ "verbose", no_argument, NULL, 'v' },
		{ "logdev", required_argument, NULL, 'l' },
		{ "rtdev", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "nLjt:m:o:qhVfPvdec:l:r:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': ro->dry_run = true; break;
		case 'L': ro->zero_log = ro->scan.log_zeroed = true; break;
		case OPT_NO_REPLAY: ro->no_replay = true; break;
		case 'j': ro->json = true; break;
		case 'q': ro->quiet = true; break;
		case OPT_UNDO:
			if (!*optarg) {
				fprintf(stderr, "xfsx_repair: --undo-file needs a file name\n");
				return XFSX_EXIT_USAGE;
			}
			ro->undo_path = optarg;
			break;
		case OPT_THREADS: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_repair: --threads takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			ro->scan.threads = (unsigned)v;
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
			ro->scan.progress_interval = (unsigned)v;
			ro->scan.progress = 1;
			break;
		}
		case OPT_TMPDIR:
			if (!*optarg) {
				fprintf(stderr, "xfsx_repair: --tmpdir needs a directory\n");
				return XFSX_EXIT_USAGE;
			}
			ro->scan.tmpdir = optarg;
			break;
		case 'm':
			if (scan_parse_memory(optarg, &ro->scan.mem_bytes)) {
				fprintf(stderr, "xfsx_repair: --memory takes a size in MiB (at least 1)\n");
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'o':
			if (scan_parse_subopts_ex(optarg, &ro->scan, note_subopt, NULL)) {
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
		case 'l':
		case 'r':
			if (!*optarg) {
				fprintf(stderr, "xfsx_repair: --%s needs a device\n",
					c == 'l' ? "logdev" : "rtdev");
				return XFSX_EXIT_USAGE;
			}
			*(c == 'l' ? &ro->logdev : &ro->rtdev) = optarg;
			break;
		case OPT_PROGRESS: ro->scan.progress = 1; break;
		case OPT_NO_PROGRESS: ro->scan.progress = 0; break;
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
	if (ro->dry_run && ro->zero_log) {
		fprintf(stderr, "xfsx_repair: -n and -L cannot be used together\n");
		return XFSX_EXIT_USAGE;
	}
	if (ro->dry_run && cp->e) {
		fprintf(stderr, "xfsx_repair: -n and -e cannot be used together\n");
		return XFSX_EXIT_USAGE;
	}
	if (ro->dry_run && ro->undo_path) {
		fprintf(stderr, "xfsx_repair: -n writes nothing: --undo-file is for a repair\n");
		return XFSX_EXIT_USAGE;
	}
	if (cp->e && !cp->xfs_repair)
		fprintf(stderr, "xfsx_repair: -e: the exit status already says 1 when something "
			"was fixed (as xfs_repair, it is 4 then)\n");
	return -1;
}

/*
 * Invoked through a link named xfs_repair, the exit statuses are
 * xfs_repair's, so test suites and scripts can point their repair program
 * here: 0 nothing wrong or all fixed (4 with -e when something was fixed),
 * 1 damage found by -n, or left, or an operational or usage error, 2 a
 * dirty log that stopped the run.
 */
static int xfs_repair_status(int rc, const struct compat *cp, bool log_refused)
{
	switch (rc) {
	case XFSX_EXIT_CLEAN:
		return 0;
	case XFSX_EXIT_FIXED:
		return cp->e ? 4 : 0;
	case XFSX_EXIT_OPERATIONAL:
		return log_refused ? 2 : 1;
	default:
		return 1;
	}
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	struct repair_opts ro = { .scan = { .progress = -1 } };
	struct repair_run run = { 0 };
	struct compat cp = { 0 };
	int rc, err;

	fs_mem_setup();
	base = base ? base + 1 : argv[0];
	cp.xfs_repair = !strcmp(base, "xfs_repair");
	rc = parse_args(argc, argv, &ro, &cp);
	if (rc >= 0)
		return cp.xfs_repair ? xfs_repair_status(rc, &cp, false) : rc;
	/* a reader that goes away shows up as EPIPE at the end, not as a kill mid-write */
	signal(SIGPIPE, SIG_IGN);
	if (ro.quiet || ro.json)
		ro.scan.progress = 0;

	rc = repair_run(&run, &ro, argv[optind]);
	if (!rc) {
		repair_render(&run, cp.verbose);
		rc = repair_run_status(&run);
	}
	repair_run_end(&run);
	/* the repair is done either way; a report that did not reach its reader is said so */
	if (run.reached_scan) {
		err = fs_output_close(stdout);
		if (err && err != -EPIPE) {
			fprintf(stderr, "xfsx_repair: cannot write the report to standard output: "
				"%s\n", strerror(-err));
			rc = XFSX_EXIT_OPERATIONAL;
		}
	}
	repair_run_free(&run);
	return cp.xfs_repair ? xfs_repair_status(rc, &cp, run.log.refused) : rc;
}
