// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_bulkstat: the command line.  Parses options, picks the engine (the
 * kernel's ioctl for a mounted filesystem, the libfs scan for an unmounted
 * device or image), prints the damage summary and maps the outcome to an
 * exit code: 0 done, 4 damage seen with --strict, 8 operational, 16 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkstat/bulkstat.h"
#include "libfs/io/io.h"
#include "libfs/io/target.h"
#include "libfs/util/mem.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xfsx_bulkstat [options] DEVICE|IMAGE|MOUNTPOINT\n"
		"Print the stat data of every allocated inode of an XFS v5 filesystem, in\n"
		"inode-number order, as the kernel's XFS_IOC_BULKSTAT reports it.\n\n"
		"  -f, --format=F          jsonl (default), csv or text\n"
		"  -F, --fields=a,b,...    fields to print, in this order (default: all but\n"
		"                          blksize and extents32)\n"
		"  -a, --ag=N              only allocation group N\n"
		"  -s, --start-ino=N       start at inode N\n"
		"  -t, --threads=N         worker threads (default: one per CPU)\n"
		"  -i, --include-internal  also list realtime bitmap/summary and quota inodes\n"
		"  -p, --paths             add each inode's paths (every hard link's): from\n"
		"                          parent pointers where the filesystem has them,\n"
		"                          else from one walk of the directories; JSON \"paths\"\n"
		"                          array, CSV/text one quoted value, paths parted by //\n"
		"      --strict            exit 4 if any inode or metadata was damaged\n"
		"      --io-engine=E       uring, aio or pread (default: best available)\n"
		"      --no-direct         do not use O_DIRECT\n"
		"  -l, --logdev=DEV        the external log device (required when the log is\n"
		"                          external: its head tells whether the log is dirty)\n"
		"  -r, --rtdev=DEV         the realtime device (examined and opened, not read)\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"A mounted filesystem (a mount point, or a device or image file mounted\n"
		"through a loop device) is listed by the kernel (XFS_IOC_BULKSTAT: root).\n\n"
		"Fields:");
	for (unsigned i = 0; i < bs_field_count(); i++)
		fprintf(out, "%s%s", i ? "," : " ", bs_field_name(i));
	fprintf(out, "\n\nExit: 0 done (also when the reader of the output goes away), 4 damage found\n"
		"with --strict, or the primary superblock unusable (read through a secondary),\n"
		"8 operational error (cannot open, not XFS, cannot write the output), 16 usage\n"
		"error.\n");
}

static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_STRICT = 256, OPT_IO_ENGINE, OPT_NO_DIRECT };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "fields", required_argument, NULL, 'F' },
		{ "ag", required_argument, NULL, 'a' },
		{ "start-ino", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "include-internal", no_argument, NULL, 'i' },
		{ "paths", no_argument, NULL, 'p' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
		{ "no-direct", no_argument, NULL, OPT_NO_DIRECT },
		{ "logdev", required_argument, NULL, 'l' },
		{ "rtdev", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct bs_opts o = { .out_fd = STDOUT_FILENO };
	struct bs_result r = { 0 };
	const char *fields = NULL, *path;
	char msg[128];
	struct stat st;
	enum fs_io_engine engine = FS_IO_AUTO;
	struct fs_target_info ti;
	char emsg[512];
	uint64_t v;
	int c, rc;

	fs_mem_setup();
	o.out.format = BS_JSONL;
	while ((c = getopt_long(argc, argv, "f:F:a:s:t:iphVl:r:", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'r':
			if (!*optarg) {
				fprintf(stderr, "xfsx_bulkstat: --%s needs a device\n",
					c == 'l' ? "logdev" : "rtdev");
				return XFSX_EXIT_USAGE;
			}
			*(c == 'l' ? &o.logdev : &o.rtdev) = optarg;
			break;
		case 'f':
			if (bs_output_parse_format(&o.out, optarg)) {
				fprintf(stderr, "xfsx_bulkstat: unknown format '%s' (jsonl, csv, text)\n", optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case 'F': fields = optarg; break;
		case 'a':
			if (parse_u64(optarg, UINT32_MAX - 1, &v)) {
				fprintf(stderr, "xfsx_bulkstat: --ag takes an AG number\n");
				return XFSX_EXIT_USAGE;
			}
			o.have_ag = true;
			o.ag = (uint32_t)v;
			break;
		case 's':
			if (parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "xfsx_bulkstat: --start-ino takes an inode number\n");
				return XFSX_EXIT_USAGE;
			}
			o.start_ino = v;
			break;
		case 't':
			if (parse_u64(optarg, 1024, &v) || v < 1) {
				fprintf(stderr, "xfsx_bulkstat: --threads takes a number from 1 to 1024\n");
				return XFSX_EXIT_USAGE;
			}
			o.threads = (unsigned)v;
			break;
		case 'i': o.include_internal = true; break;
		case 'p': o.want_paths = true; break;
		case OPT_STRICT: o.strict = true; break;
		case OPT_IO_ENGINE:
			if (fs_io_engine_parse(optarg, &engine) < 0) {
				fprintf(stderr, "xfsx_bulkstat: unknown I/O engine '%s' (uring, aio, pread)\n", optarg);
				return XFSX_EXIT_USAGE;
			}
			break;
		case OPT_NO_DIRECT: o.no_direct = true; break;
		case 'h': usage(stdout); return XFSX_EXIT_CLEAN;
		case 'V': printf("xfsx_bulkstat %s\n", XFSX_VERSION); return XFSX_EXIT_CLEAN;
		default: usage(stderr); return XFSX_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		if (optind >= argc)
			fprintf(stderr, "xfsx_bulkstat: no device, image or mount point given\n");
		else
			fprintf(stderr, "xfsx_bulkstat: extra argument '%s': give one device, image or "
				"mount point\n", argv[optind + 1]);
		usage(stderr);
		return XFSX_EXIT_USAGE;
	}
	path = argv[optind];
	o.io_engine = engine;
	if (bs_output_parse_fields(&o.out, fields, msg, sizeof(msg))) {
		fprintf(stderr, "xfsx_bulkstat: --fields: %s\n", msg);
		return XFSX_EXIT_USAGE;
	}
	o.out.paths = o.want_paths;
	bs_output_prepare(&o.out);

	/* a reader that goes away (| head) shows up as EPIPE: a clean end, every time */
	signal(SIGPIPE, SIG_IGN);
	if (fs_target_io_engine_env(msg, sizeof(msg))) {
		fprintf(stderr, "xfsx_bulkstat: %s\n", msg);
		return XFSX_EXIT_OPERATIONAL;
	}
	if (stat(path, &st) < 0) {
		fprintf(stderr, "xfsx_bulkstat: %s: %s\n", path, strerror(errno));
		return XFSX_EXIT_OPERATIONAL;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = bs_run_online(path, &o, &r);
	} else if (fs_target_check(path, FS_TARGET_INSPECT, &ti, emsg, sizeof(emsg))) {
		fprintf(stderr, "xfsx_bulkstat: %s\n", emsg);
		return XFSX_EXIT_OPERATIONAL;
	} else if (ti.mounted) {
		/* the device holds stale metadata while mounted: ask its kernel */
		rc = bs_run_online(ti.mount_point, &o, &r);
	} else {
		rc = bs_run_offline(path, &o, &r);
	}

	if (r.damaged || r.problems)
		fprintf(stderr, "xfsx_bulkstat: %" PRIu64 " inodes listed; %" PRIu64 " damaged inodes skipped; %" PRIu64 " other problems\n",
			r.inodes, r.damaged, r.problems);
	if (rc == XFSX_EXIT_CLEAN && o.strict && (r.damaged || r.problems))
		rc = XFSX_EXIT_UNCORRECTED;
	if (rc == XFSX_EXIT_CLEAN && r.primary_bad)
		rc = XFSX_EXIT_UNCORRECTED;
	/* an empty answer to a narrowed question says so: silence reads as a failure */
	if (rc == XFSX_EXIT_CLEAN && r.inodes == 0 && o.have_ag)
		fprintf(stderr, "xfsx_bulkstat: no inodes in AG %u at or after inode %" PRIu64 "\n",
			o.ag, o.start_ino);
	else if (rc == XFSX_EXIT_CLEAN && r.inodes == 0 && o.start_ino)
		fprintf(stderr, "xfsx_bulkstat: no inodes at or after inode %" PRIu64 "\n",
			o.start_ino);
	/* output goes to fd 1 unbuffered; stdio's stdout still tells a failed close */
	{
		int err = fs_output_close(stdout);

		if (err && err != -EPIPE) {
			fprintf(stderr, "xfsx_bulkstat: cannot write to standard output: %s\n",
				strerror(-err));
			rc = XFSX_EXIT_OPERATIONAL;
		}
	}
	return rc;
}
