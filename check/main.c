// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_check: the command line.  Parses the options, runs the check
 * (run.c: open read-only, the dirty log, the scan), renders its findings
 * (render.c, or geometry.c for -g) and turns them into the exit status,
 * fsck(8)'s: 0 clean, 4 corruption, 8 operational, 16 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check/geometry.h"
#include "check/render.h"
#include "check/run.h"
#include "libfs/util/exit.h"
#include "libfs/util/mem.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xfsx_check [options] DEVICE|IMAGE\n"
		"Verify an unmounted XFS v5 filesystem without writing to it.\n\n"
		"  -g, --geometry          print the filesystem geometry and exit\n"
		"  -j, --json              machine-readable output (one JSON object)\n"
		"  -t, --threads=N         worker threads (default: one per CPU)\n"
		"  -m, --memory=MiB        cap on the run's memory (cache, block model, link\n"
		"                          records, I/O windows): the block model, directory edges\n"
		"                          and rmap lists spill to --tmpdir past their share\n"
		"                          (default: no cap, a 256 MiB cache); too small is refused,\n"
		"                          naming the smallest that works\n"
		"      --tmpdir=DIR        where -m spills, and without -m an AG's rmap lists past\n"
		"                          4 MiB a side (default: $TMPDIR, else /tmp; never on\n"
		"                          the filesystem's own devices)\n"
		"  -o ag_stride=N          AGs per work item: a few threads cover many AGs\n"
		"      --progress          show phase and ETA on stderr even when not a terminal\n"
		"      --no-progress       never show progress (default: on a terminal)\n"
		"      --io-engine=E       uring, aio or pread (default: best available;\n"
		"                          also $XFSX_IO_ENGINE)\n"
		"      --no-direct         do not use O_DIRECT\n"
		"      --queue-depth=N     reads in flight per worker (default 16)\n"
		"  -l, --logdev=DEV        the external log device (required when the log is\n"
		"                          external: sb_logstart 0)\n"
		"  -r, --rtdev=DEV         the realtime device: every realtime extent is checked\n"
		"                          to lie on it (without it, said once)\n"
		"  -v, --verbose           every finding on its own line (by default the findings\n"
		"                          a cause brings, or the many of one block, are counted\n"
		"                          in one line under it), and the memory a full check\n"
		"                          needs, estimated from the AG headers, beside the peak\n"
		"  -q, --quiet             print no findings or summary; the exit code tells\n"
		"                          (operational errors still go to stderr)\n"
		"  -n                      accepted (as xfs_repair -n); checking never writes\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"A filesystem mounted read-write is refused (exit 8); a read-only mount is\n"
		"checked, with a warning that the result may be stale.  So are the log and\n"
		"realtime devices; one that is not the filesystem's (too small, or a log of\n"
		"another filesystem) is refused (exit 8), as is an external log not given.\n\n"
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

/* The options into *run: 0, else the exit status to leave with (usage, or -h / -V done). */
static int parse_args(int argc, char **argv, struct check_run *run, bool *geometry)
{
	static const struct option longopts[] = {
		{ "geometry", no_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, 't' },
		{ "memory", required_argument, NULL, 'm' },
		{ "tmpdir", required_argument, NULL, 'T' },
		{ "progress", no_argument, NULL, 'P' },
		{ "no-progress", no_argument, NULL, 'N' },
		{ "io-engine", required_argument, NULL, 'E' },
		{ "no-direct", no_argument, NULL, 'D' },
		{ "queue-depth", required_argument, NULL, 'Q' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "logdev", required_argument, NULL, 'l' },
		{ "rtdev", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "gjt:m:o:qvhVnl:r:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': break;	/* xfs_repair -n's habit: checking never writes anyway */
		case 'l':
		case 'r':
			if (!*optarg) {
				fprintf(stderr, "xfsx_check: --%s needs a device\n",
					c == 'l' ? "logdev" : "rtdev");
				return XFSX_EXIT_USAGE;
			}
			*(c == 'l' ? &run->oo.logdev : &run->oo.rtdev) = optarg;
			break;
		case 'g': *geometry = true; break;
		case 'j': run->json = true; break;
		case 'q': run->quiet = true; break;
		case 'v': run->verbose++; break;
		case 't': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_check: --threads takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			run->co.threads = (unsigned)v;
			break;
		}
		case 'T':
			if (!*optarg) {
				fprintf(stderr, "xfsx_check: --tmpdir needs a directory\n");
				return XFSX_EXIT_USAGE;
			}
			run->co.tmpdir = optarg;
			break;
		case 'm':
			if (scan_parse_memory(optarg, &run->co.mem_bytes)) {
				fprintf(stderr, "xfsx_check: --memory takes a size in MiB (at least 1)\n");
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'o':
			if (scan_parse_subopts(optarg, &run->co)) {
				fprintf(stderr, "xfsx_check: unknown or invalid -o option '%s' (ag_stride=N)\n",
					optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'P': run->co.progress = 1; break;
		case 'N': run->co.progress = 0; break;
		case 'E':
			if (fs_io_engine_parse(optarg, &run->oo.dev.engine) < 0) {
				fprintf(stderr, "xfsx_check: unknown I/O engine '%s' (uring, aio, pread)\n", optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'D': run->oo.dev.no_direct = true; break;
		case 'Q': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > 1024) {
				fprintf(stderr, "xfsx_check: --queue-depth takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			run->co.qdepth = (unsigned)v;
			/* the submission ring holds at least that many */
			run->oo.dev.qdepth = v > 64 ? (unsigned)v : 64;
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
	run->path = argv[optind];
	return -1;
}

int main(int argc, char **argv)
{
	struct check_run run = { .co = { .progress = -1 } };
	bool geometry = false;
	int rc, err;

	fs_mem_setup();
	rc = parse_args(argc, argv, &run, &geometry);
	if (rc >= 0)
		return rc;
	/* a reader that goes away is an output error (EPIPE), not a silent death */
	signal(SIGPIPE, SIG_IGN);
	if (run.quiet || run.json)
		run.co.progress = 0;

	/* the geometry is read from the data device alone */
	run.oo.log_not_needed = geometry;
	err = check_open(&run);
	if (err) {
		check_render_open_failure(&run);
		check_run_free(&run);
		/* a corrupt primary with no usable secondary is corruption, not an operational failure */
		return finish_output(err == -EUCLEAN ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_OPERATIONAL);
	}
	if (geometry) {
		if (run.json)
			check_print_geometry_json(run.fs, stdout);
		else
			check_print_geometry_text(run.fs, run.path, stdout);
		check_run_free(&run);
		return finish_output(XFSX_EXIT_CLEAN);
	}
	err = check_run(&run);
	if (err) {
		check_run_free(&run);
		/* (a failed scan has written nothing: its status is not the output's) */
		return err == -ENOTRECOVERABLE ? XFSX_EXIT_OPERATIONAL :
		       finish_output(XFSX_EXIT_OPERATIONAL);
	}
	rc = run.fl.by_sev[FS_SEV_ERROR] ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_CLEAN;
	check_render(&run, rc == XFSX_EXIT_CLEAN);
	check_note_unchecked(&run);
	check_run_free(&run);
	return finish_output(rc);
}
