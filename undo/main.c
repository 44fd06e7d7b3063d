// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_undo: write back the old contents an undo file saved (xfsx_repair
 * or xfsx_mkfs --undo-file).  A thin command line over libfs/undo/undo.c: the
 * whole file is validated before the device is opened for writing, the
 * device is judged against it (size, filesystem UUID, fingerprint of its
 * first blocks), then every record is written back and the result is
 * compared with the fingerprint taken before the run.  A file that covers
 * an external log or realtime device too needs each given (-l, -r), and
 * each is judged the same way before anything is written.
 * Exit: 0 restored (-n: would restore), 1 refused (another device, or it
 * changed since the run; -f overrides), 2 the undo file is damaged,
 * truncated or unreadable, 4 restored but the first blocks differ from
 * before the run, 8 operational error, 16 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfs/io/io.h"
#include "libfs/io/target.h"
#include "libfs/undo/undo.h"
#include "libfs/util/exit.h"

#ifndef XFSX_VERSION
#define XFSX_VERSION "unknown"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xfsx_undo [-n] [-f] [-v] [-l LOGDEV] [-r RTDEV] UNDOFILE DEVICE|IMAGE\n"
		"Write back what xfsx_repair or xfsx_mkfs --undo-file=UNDOFILE saved.\n\n"
		"  -l, --logdev=DEV   the external log device the run wrote (required when the\n"
		"                  undo file covers one)\n"
		"  -r, --rtdev=DEV    the realtime device, likewise\n"
		"  -n, --dry-run   check the file and the device, say what would be written; write nothing\n"
		"  -f, --force     restore even to a device that is not the one the file was made for,\n"
		"                  or that changed since the run\n"
		"  -v, --verbose   list every range\n"
		"  -h, --help      this text\n"
		"  -V, --version   print the version\n\n"
		"The whole undo file is validated first: a damaged or truncated file is refused\n"
		"and nothing is written; so is every device it names, each judged by its size,\n"
		"the UUID its contents carry and the fingerprint of its first blocks.\n\n"
		"Exit: 0 restored (-n: would restore), 1 refused (another device or a changed one),\n"
		"2 damaged, truncated or unreadable undo file, 4 restored but the first blocks differ\n"
		"from before the run, 8 operational error, 16 usage error.\n");
}

static const char *human(uint64_t b, char *buf, size_t bl)
{
	if (b >= 10ull << 30)
		snprintf(buf, bl, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= 10ull << 20)
		snprintf(buf, bl, "%.1f MiB", (double)b / (1ull << 20));
	else if (b >= 10ull << 10)
		snprintf(buf, bl, "%.1f KiB", (double)b / (1ull << 10));
	else
		snprintf(buf, bl, "%" PRIu64 " bytes", b);
	return buf;
}

/* Judge one device against the file: 0 to go on, else the exit status (said). */
static int judge_device(const struct fs_undo_file *f, enum fs_undo_role role, const char *path,
			struct fs_dev *dev, bool force)
{
	enum fs_undo_match m;
	char msg[768];
	int err = fs_undo_file_match_role(f, role, dev, &m, msg, sizeof(msg));

	if (err) {
		fprintf(stderr, "xfsx_undo: %s: %s; nothing was written\n", path, msg);
		return XFSX_EXIT_OPERATIONAL;
	}
	if (m == FS_UNDO_WRONG_DEVICE || m == FS_UNDO_CHANGED) {
		if (!force) {
			fprintf(stderr, "xfsx_undo: %s (the %s device): %s.  %s; nothing was written "
				"(-f restores anyway)\n", path, fs_undo_role_name(role), msg,
				m == FS_UNDO_WRONG_DEVICE ? "Refusing another device" :
				"Refusing a device that changed since the run");
			return XFSX_EXIT_UNDO_REFUSED;
		}
		fprintf(stderr, "xfsx_undo: %s: %s; restoring anyway (-f)\n", path, msg);
	} else {
		printf("%s: %s\n", path, msg);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "logdev", required_argument, NULL, 'l' },
		{ "rtdev", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static const char *const opt_name[FS_UNDO_ROLES] = { "", "-l / --logdev", "-r / --rtdev" };
	bool dry = false, force = false, verbose = false;
	struct fs_dev_opts dopts = { 0 };
	struct fs_target_info ti;
	struct fs_undo_file *f = NULL;
	struct fs_dev *devs[FS_UNDO_ROLES] = { 0 };
	const char *paths[FS_UNDO_ROLES] = { 0 };
	const char *upath;
	char msg[768], hb[32], when[64];
	uint64_t zero_bytes = 0, data_bytes = 0;
	uint32_t fp;
	time_t ct;
	int c, err, rc = XFSX_EXIT_OPERATIONAL;

	while ((c = getopt_long(argc, argv, "nfvl:r:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': dry = true; break;
		case 'f': force = true; break;
		case 'v': verbose = true; break;
		case 'l':
		case 'r':
			if (!*optarg) {
				fprintf(stderr, "xfsx_undo: %s needs a device\n",
					opt_name[c == 'l' ? FS_UNDO_LOG : FS_UNDO_RT]);
				return XFSX_EXIT_USAGE;
			}
			paths[c == 'l' ? FS_UNDO_LOG : FS_UNDO_RT] = optarg;
			break;
		case 'h': usage(stdout); return XFSX_EXIT_CLEAN;
		case 'V': printf("xfsx_undo %s\n", XFSX_VERSION); return XFSX_EXIT_CLEAN;
		default: usage(stderr); return XFSX_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "xfsx_undo: %s\n", argc - optind < 2 ?
			"give an undo file and a device or image" : "too many arguments");
		usage(stderr);
		return XFSX_EXIT_USAGE;
	}
	upath = argv[optind];
	paths[FS_UNDO_DATA] = argv[optind + 1];
	signal(SIGPIPE, SIG_IGN);

	/* everything in the file is checked before the device is opened for writing */
	err = fs_undo_file_open(upath, &f, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfsx_undo: %s: %s; nothing was written\n", upath, msg);
		return err == -ENOMEM ? XFSX_EXIT_OPERATIONAL : XFSX_EXIT_UNDO_BADFILE;
	}
	/* the devices given are exactly the ones the run wrote */
	for (unsigned r = FS_UNDO_DATA + 1; r < FS_UNDO_ROLES; r++) {
		if (f->h.devs[r].present && !paths[r]) {
			fprintf(stderr, "xfsx_undo: %s: the run also wrote the %s device %s: give it "
				"with %s; nothing was written\n", upath, fs_undo_role_name(r),
				f->h.devs[r].device, opt_name[r]);
			rc = XFSX_EXIT_USAGE;
			goto out;
		}
		if (!f->h.devs[r].present && paths[r]) {
			fprintf(stderr, "xfsx_undo: %s: %s %s: the run wrote no %s device; nothing "
				"was written\n", upath, opt_name[r], paths[r], fs_undo_role_name(r));
			rc = XFSX_EXIT_USAGE;
			goto out;
		}
	}
	for (size_t i = 0; i < f->nrecs; i++) {
		if (f->recs[i].zero)
			zero_bytes += f->recs[i].len;
		else
			data_bytes += f->recs[i].len;
	}
	ct = (time_t)f->h.ctime;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&ct));
	printf("%s: made by %s for %s (%" PRIu64 " bytes) on %s; %s\n", upath,
	       *f->h.tool ? f->h.tool : "?", *f->h.device ? f->h.device : "?", f->h.dev_size, when,
	       f->h.flags & FS_UNDO_COMPLETE ? "the run finished" :
	       "the run did not finish (killed or stopped by an error)");
	for (unsigned r = FS_UNDO_DATA + 1; r < FS_UNDO_ROLES; r++)
		if (f->h.devs[r].present)
			printf("%s: and for the %s device %s (%" PRIu64 " bytes)\n", upath,
			       fs_undo_role_name(r), f->h.devs[r].device, f->h.devs[r].dev_size);
	printf("%s: %zu ranges: %s of old data", upath, f->nrecs, human(data_bytes, hb, sizeof(hb)));
	printf(", %s that held zeroes\n", human(zero_bytes, hb, sizeof(hb)));
	if (f->torn_bytes)
		printf("%s: its last %" PRIu64 " bytes are a record the run was still appending "
		       "when it stopped (never synced, so never written to the device): dropped\n",
		       upath, f->torn_bytes);

	err = fs_target_io_engine_env(msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "xfsx_undo: %s; nothing was written\n", msg);
		goto out;
	}
	dopts.writable = !dry;
	/* every device examined, opened and judged before the first write */
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++) {
		if (!paths[r])
			continue;
		err = fs_target_check(paths[r], dry ? FS_TARGET_CHECK : FS_TARGET_WRITE, &ti, msg,
				      sizeof(msg));
		if (err) {
			fprintf(stderr, "xfsx_undo: %s; nothing was written\n", msg);
			goto out;
		}
		err = fs_dev_open(paths[r], &dopts, &devs[r]);
		if (err) {
			fprintf(stderr, "xfsx_undo: cannot open %s%s: %s; nothing was written\n",
				paths[r], dry ? "" : " for writing", strerror(-err));
			goto out;
		}
		for (unsigned o = 0; o < r; o++)
			if (devs[o] && !strcmp(paths[o], paths[r])) {
				fprintf(stderr, "xfsx_undo: %s is given as both the %s and the %s "
					"device; nothing was written\n", paths[r],
					fs_undo_role_name(o), fs_undo_role_name(r));
				rc = XFSX_EXIT_USAGE;
				goto out;
			}
		err = judge_device(f, r, paths[r], devs[r], force);
		if (err) {
			rc = err;
			goto out;
		}
	}

	for (size_t i = 0; i < f->nrecs; i++) {
		const struct fs_undo_rec *r = &f->recs[i];
		struct fs_dev *dev = devs[r->role];

		if (verbose)
			printf("%s %s at %s%soffset %" PRIu64 " (%" PRIu64 " bytes)%s\n",
			       dry ? "would restore" : "restoring", r->zero ? "zeroes" : "old data",
			       r->role ? fs_undo_role_name(r->role) : "", r->role ? " device " : "",
			       r->off, r->len, r->zero && !dev->blockdev ? ", as a hole" : "");
		if (dry)
			continue;
		err = fs_undo_file_apply(f, i, dev);
		if (err) {
			fprintf(stderr, "xfsx_undo: restoring range #%zu (%s device offset %" PRIu64
				", %" PRIu64 " bytes) failed: %s; the devices are partly restored: run "
				"xfsx_undo again once the cause is fixed\n", i,
				fs_undo_role_name(r->role), r->off, r->len,
				err == -EBADMSG ? "the undo file changed while it was read" :
				strerror(-err));
			goto out;
		}
	}
	if (dry) {
		printf("%s: would restore %zu ranges (%s) to %s; nothing was written (-n)\n",
		       upath, f->nrecs, human(f->saved_bytes, hb, sizeof(hb)), paths[FS_UNDO_DATA]);
		rc = XFSX_EXIT_CLEAN;
		goto out;
	}
	rc = XFSX_EXIT_CLEAN;
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++) {
		const struct fs_undo_devdesc *d = &f->h.devs[r];

		if (!devs[r])
			continue;
		err = fs_dev_flush(devs[r]);
		if (err) {
			fprintf(stderr, "xfsx_undo: flushing %s failed: %s\n", paths[r], strerror(-err));
			rc = XFSX_EXIT_OPERATIONAL;
			goto out;
		}
		err = fs_undo_fingerprint(devs[r], d->fp_len, &fp);
		if (err) {
			fprintf(stderr, "xfsx_undo: reading %s back failed: %s\n", paths[r],
				strerror(-err));
			rc = XFSX_EXIT_OPERATIONAL;
			goto out;
		}
		if (fp != d->fp_before) {
			fprintf(stderr, "xfsx_undo: %s: restored %zu ranges, but its first %" PRIu64
				" bytes differ from before the run (CRC32c 0x%08x, was 0x%08x): it "
				"changed outside what the run wrote\n", paths[r], f->nrecs, d->fp_len,
				fp, d->fp_before);
			rc = XFSX_EXIT_UNDO_MISMATCH;
			continue;
		}
		if (r == FS_UNDO_DATA)
			printf("%s: restored %zu ranges (%s); its first %" PRIu64 " bytes are as "
			       "before the run\n", paths[r], f->nrecs,
			       human(f->saved_bytes, hb, sizeof(hb)), d->fp_len);
		else
			printf("%s: the %s device's first %" PRIu64 " bytes are as before the run\n",
			       paths[r], fs_undo_role_name(r), d->fp_len);
	}
out:
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++)
		fs_dev_close(devs[r]);
	fs_undo_file_close(f);
	err = fs_output_close(stdout);
	if (err && err != -EPIPE && rc == XFSX_EXIT_CLEAN) {
		fprintf(stderr, "xfsx_undo: cannot write to standard output: %s\n", strerror(-err));
		rc = XFSX_EXIT_OPERATIONAL;
	}
	return rc;
}
