// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_mkfs: make a v5 XFS filesystem on a device or image file.  This file
 * only sequences the steps: parse options, examine the target (libfs:
 * type, mounts, what is on it), plan the geometry, size and open the
 * target, print the geometry, write it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "libfs/io/io.h"
#include "libfs/undo/undo.h"
#include "libfs/util/mem.h"
#include "mkfs/opts.h"
#include "mkfs/plan.h"
#include "mkfs/target.h"
#include "mkfs/write.h"

#ifndef XFSX_VERSION
#define XFSX_VERSION "unknown"
#endif

static int die(const char *msg)
{
	fprintf(stderr, "xfsx_mkfs: %s\n", msg);
	return 1;
}

static int die_hint(const char *msg, const char *hint)
{
	fprintf(stderr, "xfsx_mkfs: %s%s\n", msg, hint);
	return 1;
}

/* One extra device (-l logdev=, -r rtdev=): what it is, and that nothing uses it. */
struct extra_dev {
	const char *role, *path;     /* "log", "realtime" */
	struct fs_target_info ti;
	struct stat st;
	struct fs_dev *dev;
};

static bool same_file(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int examine_extra(struct extra_dev *x, const struct mkfs_opts *o, const char *target,
			 const struct stat *data_st, char *err, size_t el)
{
	int rc = fs_target_check(x->path, o->noaction ? FS_TARGET_INSPECT : FS_TARGET_WRITE,
				 &x->ti, err, el);

	if (rc == -ENOENT) {
		snprintf(err + strlen(err), el - strlen(err), " (the %s device: create an image "
			 "first, e.g. truncate -s 1G FILE)", x->role);
		return rc;
	}
	if (rc)
		return rc;
	if (stat(x->path, &x->st) < 0) {
		snprintf(err, el, "%s: %s", x->path, strerror(errno));
		return -errno;
	}
	if (data_st && same_file(&x->st, data_st)) {
		snprintf(err, el, "the %s device %s is the data device %s: an external %s needs a "
			 "device of its own", x->role, x->path, target,
			 !strcmp(x->role, "log") ? "log" : "realtime section");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mkfs_opts o;
	struct mkfs_topo topo;
	struct fs_target_info ti;
	struct mkfs_plan plan;
	struct fs_dev_opts dopts = { .writable = true };
	struct fs_dev *dev = NULL;
	struct extra_dev xl = { .role = "log" }, xr = { .role = "realtime" };
	struct stat data_st;
	struct fs_undo *undo = NULL;
	struct proto_tree tree;
	bool have_tree = false, progress;
	const char *target = NULL;
	char err[512];
	int rc;

	fs_mem_setup();
	switch (mkfs_parse_args(argc, argv, &o, &target, err, sizeof(err))) {
	case MKFS_PARSE_OK:
		break;
	case MKFS_PARSE_HELP:
		fputs(mkfs_usage, stdout);
		return 0;
	case MKFS_PARSE_VERSION:
		printf("xfsx_mkfs %s\n", XFSX_VERSION);
		return 0;
	default:
		fprintf(stderr, "xfsx_mkfs: %s\n%s", err, mkfs_usage);
		return 1;
	}

	if (fs_target_io_engine_env(err, sizeof(err)))
		return die(err);
	/* -p: the whole source is read before the target is touched */
	if (o.proto) {
		const char *tmpdir = o.tmpdir;
		struct stat tst, dst;

		if (!tmpdir)
			tmpdir = getenv("TMPDIR");
		if (!tmpdir || !*tmpdir)
			tmpdir = "/tmp";
		/* the tree's file must not live on the device the filesystem is made on */
		if (!stat(target, &tst) && S_ISBLK(tst.st_mode) && !stat(tmpdir, &dst) &&
		    dst.st_dev == tst.st_rdev) {
			snprintf(err, sizeof(err), "the temporary directory %s is on %s, the target: "
				 "give another with --tmpdir", tmpdir, target);
			return die(err);
		}
		if (proto_read(o.proto, tmpdir, &tree, err, sizeof(err)) ||
		    proto_reserve(&tree, o.parent == 1, err, sizeof(err))) {
			proto_free(&tree);
			return die(err);
		}
		have_tree = true;
	}
	progress = o.progress == OPT_UNSET ? isatty(STDERR_FILENO) : o.progress != 0;
	/* what the target is, before anything opens it: a FIFO never blocks us */
	rc = fs_target_check(target, o.noaction ? FS_TARGET_INSPECT : FS_TARGET_WRITE, &ti, err,
			     sizeof(err));
	if (rc == -ENOENT)
		return die_hint(err, " (create an image first, e.g. truncate -s 10G FILE)");
	if (rc)
		return die(err);
	if (mkfs_target_probe(target, &ti, &topo, err, sizeof(err)))
		return die(err);
	if ((o.logdev || o.rtdev) && stat(target, &data_st) < 0) {
		snprintf(err, sizeof(err), "%s: %s", target, strerror(errno));
		return die(err);
	}
	xl.path = o.logdev;
	xr.path = o.rtdev;
	if (o.logdev) {
		if (examine_extra(&xl, &o, target, &data_st, err, sizeof(err)))
			return die(err);
		topo.logdev_size = xl.ti.size;
		if (xl.ti.type == FS_TARGET_BLOCK) {
			struct mkfs_topo lt;

			if (mkfs_target_probe(o.logdev, &xl.ti, &lt, err, sizeof(err)))
				return die(err);
			topo.logdev_lsect = lt.lsect;
		}
	}
	if (o.rtdev) {
		if (examine_extra(&xr, &o, target, &data_st, err, sizeof(err)))
			return die(err);
		if (o.logdev && same_file(&xr.st, &xl.st))
			return die("the log and realtime devices are the same: each needs its own");
		topo.rtdev_size = xr.ti.size;
	}
	/* mkfs.xfs's words for what libblkid could not tell or did not like */
	if (topo.no_topology)
		fprintf(stderr, "warning: unable to probe device topology for device %s\n", target);
	if (topo.misaligned) {
		fprintf(stderr, "warning: device is not properly aligned %s\n", target);
		if (!o.force)
			return die("Use -f to force usage of a misaligned device");
	}
	if (topo.is_file && !o.dsize && topo.size == 0)
		return die("the image file is empty: give its size with -d size= or make it "
			   "first (truncate -s 10G FILE)");
	if (!o.uuid_given)
		uuid_generate(o.uuid);

	rc = mkfs_plan(&o, &topo, &plan, err, sizeof(err));
	/* mkfs.xfs's warnings come before its geometry, and before an error found later */
	for (uint32_t i = 0; i < plan.nwarnings; i++)
		fprintf(stderr, "%s\n", plan.warnings[i]);
	if (rc)
		return die(err);

	if (!o.noaction && !o.force && mkfs_target_check_empty(target, &ti, err, sizeof(err)))
		return die(err);
	if (!o.noaction && !o.force && o.logdev &&
	    mkfs_target_check_empty(o.logdev, &xl.ti, err, sizeof(err)))
		return die(err);
	if (!o.noaction && !o.force && o.rtdev &&
	    mkfs_target_check_empty(o.rtdev, &xr.ti, err, sizeof(err)))
		return die(err);
	/*
	 * Size and open the target before printing anything: a geometry table
	 * followed by "cannot open" or "cannot extend" reads as success.
	 */
	if (topo.is_file && o.dsize > topo.size &&
	    mkfs_target_extend(target, o.dsize, o.noaction, err, sizeof(err)))
		return die(err);
	if (!o.noaction) {
		rc = fs_dev_open(target, &dopts, &dev);
		if (rc < 0) {
			snprintf(err, sizeof(err), "cannot open %s for writing: %s", target,
				 strerror(-rc));
			return die(err);
		}
		for (int i = 0; i < 2; i++) {
			struct extra_dev *x = i ? &xr : &xl;

			if (!x->path)
				continue;
			rc = fs_dev_open(x->path, &dopts, &x->dev);
			if (rc < 0) {
				snprintf(err, sizeof(err), "cannot open the %s device %s for writing: %s",
					 x->role, x->path, strerror(-rc));
				fs_dev_close(xl.dev);
				fs_dev_close(dev);
				return die(err);
			}
		}
	}
	/* -N prints the geometry even with -q: that is what it is for (as mkfs.xfs) */
	if (!o.quiet || o.noaction) {
		mkfs_print_geometry(target, o.logdev, o.rtdev, &plan);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			snprintf(err, sizeof(err), "cannot write to standard output: %s",
				 strerror(errno));
			fs_dev_close(xr.dev);
			fs_dev_close(xl.dev);
			fs_dev_close(dev);
			return die(err);
		}
	}
	if (o.noaction)
		return 0;

	/* before the first write: every range mkfs writes, zeroes or discards is saved first */
	if (o.undo_file) {
		struct fs_dev *devs[FS_UNDO_ROLES] = { 0 };

		devs[FS_UNDO_DATA] = dev;
		devs[FS_UNDO_LOG] = xl.dev;
		devs[FS_UNDO_RT] = xr.dev;
		rc = fs_undo_create_devs(o.undo_file, devs, "xfsx_mkfs " XFSX_VERSION,
					 (const unsigned char *)&plan.sb.sb_uuid, &undo, err,
					 sizeof(err));
		if (rc < 0) {
			fs_dev_close(xr.dev);
			fs_dev_close(xl.dev);
			fs_dev_close(dev);
			if (have_tree)
				proto_free(&tree);
			return die_hint(err, "; nothing was written");
		}
	}
	rc = mkfs_write(dev, xl.dev, xr.dev, &plan, &o, have_tree ? &tree : NULL, progress, err, sizeof(err));
	if (undo) {
		char uerr[512];

		if (rc < 0 && *fs_undo_error(undo))
			snprintf(err, sizeof(err), "%s", fs_undo_error(undo));
		if (fs_undo_finish(undo, uerr, sizeof(uerr)) < 0) {
			fprintf(stderr, "xfsx_mkfs: %s: %s\n", o.undo_file, uerr);
			rc = rc < 0 ? rc : -EIO;
		}
		fs_undo_free(undo);
	}
	fs_dev_close(xr.dev);
	fs_dev_close(xl.dev);
	fs_dev_close(dev);
	if (have_tree)
		proto_free(&tree);
	if (rc < 0)
		return die(err);
	return 0;
}
