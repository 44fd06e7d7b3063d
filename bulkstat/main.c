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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkstat/bulkstat.h"
#include "libfs/io.h"

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
		"      --strict            exit 4 if any inode or metadata was damaged\n"
		"      --io-engine=E       uring, aio or pread (default: best available)\n"
		"      --no-direct         do not use O_DIRECT\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n\n"
		"Fields:");
	for (unsigned i = 0; i < bs_field_count(); i++)
		fprintf(out, "%s%s", i ? "," : " ", bs_field_name(i));
	fprintf(out, "\n\nExit: 0 done, 4 damage found with --strict, 8 operational error, 16 usage error.\n");
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
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
		{ "no-direct", no_argument, NULL, OPT_NO_DIRECT },
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
	char *mnt = NULL;
	uint64_t v;
	int c, rc;

	o.out.format = BS_JSONL;
	while ((c = getopt_long(argc, argv, "f:F:a:s:t:ihV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (bs_output_parse_format(&o.out, optarg)) {
				fprintf(stderr, "xfsx_bulkstat: unknown format '%s' (jsonl, csv, text)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'F': fields = optarg; break;
		case 'a':
			if (parse_u64(optarg, UINT32_MAX - 1, &v)) {
				fprintf(stderr, "xfsx_bulkstat: --ag takes an AG number\n");
				return EXIT_USAGE;
			}
			o.have_ag = true;
			o.ag = (uint32_t)v;
			break;
		case 's':
			if (parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "xfsx_bulkstat: --start-ino takes an inode number\n");
				return EXIT_USAGE;
			}
			o.start_ino = v;
			break;
		case 't':
			if (parse_u64(optarg, 1024, &v) || v < 1) {
				fprintf(stderr, "xfsx_bulkstat: --threads takes a number from 1 to 1024\n");
				return EXIT_USAGE;
			}
			o.threads = (unsigned)v;
			break;
		case 'i': o.include_internal = true; break;
		case OPT_STRICT: o.strict = true; break;
		case OPT_IO_ENGINE:
			if (fs_io_engine_parse(optarg, &engine) < 0) {
				fprintf(stderr, "xfsx_bulkstat: unknown I/O engine '%s' (uring, aio, pread)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_DIRECT: o.no_direct = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("xfsx_bulkstat %s\n", XFSX_VERSION); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	path = argv[optind];
	o.io_engine = engine;
	if (bs_output_parse_fields(&o.out, fields, msg, sizeof(msg))) {
		fprintf(stderr, "xfsx_bulkstat: --fields: %s\n", msg);
		return EXIT_USAGE;
	}
	bs_output_prepare(&o.out);

	if (stat(path, &st) < 0) {
		fprintf(stderr, "xfsx_bulkstat: %s: %s\n", path, strerror(errno));
		return EXIT_OPERATIONAL;
	}
	if (S_ISDIR(st.st_mode))
		rc = bs_run_online(path, &o, &r);
	else if ((mnt = bs_find_mount(path)) != NULL)
		rc = bs_run_online(mnt, &o, &r);	/* a mounted device: ask its kernel */
	else
		rc = bs_run_offline(path, &o, &r);
	free(mnt);

	if (r.damaged || r.problems)
		fprintf(stderr, "xfsx_bulkstat: %" PRIu64 " inodes listed; %" PRIu64 " damaged inodes skipped; %" PRIu64 " other problems\n",
			r.inodes, r.damaged, r.problems);
	if (rc == EXIT_OK && o.strict && (r.damaged || r.problems))
		rc = EXIT_DAMAGE;
	return rc;
}
