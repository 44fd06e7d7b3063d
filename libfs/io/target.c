// SPDX-License-Identifier: GPL-2.0
/*
 * The one place every tool examines its target before opening it: the file
 * type (a FIFO must never reach open(), a directory or /dev/null must not
 * be reported as "Block device required"), whether it is mounted — directly
 * or, for an image file, through a loop device — and read-only or not, what
 * libblkid sees on it, and the mount policy of what the tool is about to do.
 * Also the check of XFSX_IO_ENGINE, so a bad value is named as such, and
 * the other end: whether a tool's output really reached its reader.
 */
#include "libfs/io/target.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libfs/io/io.h"

static int terr(char *err, size_t el, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int terr(char *err, size_t el, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && el) {
		va_start(ap, fmt);
		vsnprintf(err, el, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* name is path itself, or a block device with device number rdev (when want_rdev). */
static bool same_device(const char *name, const char *path, bool want_rdev, dev_t rdev)
{
	struct stat ms;

	return !strcmp(name, path) ||
	       (want_rdev && name[0] == '/' && stat(name, &ms) == 0 && S_ISBLK(ms.st_mode) &&
		ms.st_rdev == rdev);
}

/*
 * The device a mount option names (XFS's logdev=, rtdev=), when the entry
 * has that option: copied into buf.
 */
static bool mount_option_device(const struct mntent *m, const char *opt, char *buf, size_t len)
{
	const char *v = hasmntopt(m, opt);
	size_t n, ol = strlen(opt);

	if (!v || v[ol] != '=')
		return false;
	v += ol + 1;
	n = strcspn(v, ",");
	if (!n || n >= len)
		return false;
	memcpy(buf, v, n);
	buf[n] = 0;
	return true;
}

/*
 * The first mount table entry whose source is path itself or a block device
 * with device number rdev (when want_rdev): the same device under another
 * name (/dev/disk/by-..., a device-mapper alias) counts.  So does an entry
 * that uses it as its external log or realtime device (the logdev= and
 * rtdev= options: the kernel writes there as much as to the source).
 */
static bool find_mount(const char *path, bool want_rdev, dev_t rdev, struct fs_target_info *out)
{
	static const char *const roles[] = { "logdev", "rtdev" };
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while (!found && (m = getmntent(f))) {
		const char *role = "";

		if (!same_device(m->mnt_fsname, path, want_rdev, rdev)) {
			char dev[PATH_MAX];

			for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]) && !*role; i++)
				if (mount_option_device(m, roles[i], dev, sizeof(dev)) &&
				    same_device(dev, path, want_rdev, rdev))
					role = roles[i];
			if (!*role)
				continue;
		}
		found = true;
		out->mounted = true;
		out->mounted_ro = hasmntopt(m, "ro") != NULL;
		snprintf(out->mount_point, sizeof(out->mount_point), "%s", m->mnt_dir);
		snprintf(out->mount_source, sizeof(out->mount_source), "%s", m->mnt_fsname);
		snprintf(out->mount_role, sizeof(out->mount_role), "%s", role);
	}
	endmntent(f);
	return found;
}

/* read one line of a sysfs file into buf, newline dropped; false if unreadable */
static bool read_line(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* An image file is mounted when a loop device backed by it is. */
static void find_loop_mount(const struct stat *st, struct fs_target_info *out)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;

	if (!d)
		return;
	while (!out->mounted && (de = readdir(d))) {
		char file[PATH_MAX], line[PATH_MAX], dev[300];
		unsigned maj, min;
		struct stat bs;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(file, sizeof(file), "/sys/block/%s/loop/backing_file", de->d_name);
		if (!read_line(file, line, sizeof(line)))
			continue;
		if (stat(line, &bs) < 0 || bs.st_dev != st->st_dev || bs.st_ino != st->st_ino)
			continue;
		snprintf(file, sizeof(file), "/sys/block/%s/dev", de->d_name);
		if (!read_line(file, line, sizeof(line)) || sscanf(line, "%u:%u", &maj, &min) != 2)
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		find_mount(dev, true, makedev(maj, min), out);
	}
	closedir(d);
}

static void blkid_names(const char *path, struct fs_target_info *out)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *v = NULL;

	if (!pr)
		return;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	if (blkid_do_fullprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0 && v)
			snprintf(out->fstype, sizeof(out->fstype), "%s", v);
		v = NULL;
		if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0 && v)
			snprintf(out->pttype, sizeof(out->pttype), "%s", v);
	}
	blkid_free_probe(pr);
}

int fs_target_check(const char *path, enum fs_target_use use, struct fs_target_info *out,
		    char *err, size_t el)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) < 0)
		return terr(err, el, -errno, "cannot open %s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		out->type = FS_TARGET_FILE;
		out->size = (uint64_t)st.st_size;
	} else if (S_ISBLK(st.st_mode)) {
		out->type = FS_TARGET_BLOCK;
		/* opening a block device never blocks; O_NONBLOCK all the same */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return terr(err, el, -errno, "cannot open %s: %s", path, strerror(errno));
		if (ioctl(fd, BLKGETSIZE64, &out->size) < 0) {
			int e = errno;

			close(fd);
			return terr(err, el, -e, "cannot read the size of %s: %s", path, strerror(e));
		}
		close(fd);
	} else {
		const char *what = S_ISDIR(st.st_mode) ? "a directory" :
				   S_ISFIFO(st.st_mode) ? "a FIFO" :
				   S_ISSOCK(st.st_mode) ? "a socket" :
				   S_ISCHR(st.st_mode) ? "a character device" : "a special file";

		return terr(err, el, -ENOTBLK, "%s is %s: not a block device or regular file%s", path,
			    what, S_ISDIR(st.st_mode) && use == FS_TARGET_CHECK ?
			    " (give the device a filesystem is mounted from, unmounted)" : "");
	}

	if (!find_mount(path, out->type == FS_TARGET_BLOCK, st.st_rdev, out) &&
	    out->type == FS_TARGET_FILE)
		find_loop_mount(&st, out);
	blkid_names(path, out);

	if (out->mounted) {
		bool via_loop = out->type == FS_TARGET_FILE && strcmp(out->mount_source, path);
		char how[2 * PATH_MAX];

		if (*out->mount_role)
			snprintf(how, sizeof(how), "%s the %s device of %s, mounted",
				 out->type == FS_TARGET_FILE ? "is attached to a loop device that is" :
				 "is", !strcmp(out->mount_role, "logdev") ? "external log" : "realtime",
				 out->mount_source);
		else if (via_loop)
			snprintf(how, sizeof(how), "is attached to %s, which is mounted", out->mount_source);
		else
			snprintf(how, sizeof(how), "is mounted");
		if (use == FS_TARGET_WRITE)
			return terr(err, el, -EBUSY, "%s %s on %s; unmount it first", path, how,
				    out->mount_point);
		if (use == FS_TARGET_CHECK && !out->mounted_ro)
			return terr(err, el, -EBUSY, "%s %s read-write on %s: its metadata changes "
				    "under a check, so nothing found would be true; unmount it first "
				    "(a read-only mount can be checked)", path, how, out->mount_point);
	}
	if (use == FS_TARGET_WRITE && out->type == FS_TARGET_BLOCK) {
		/* O_EXCL on a block device fails while anything (a mount, md, dm) holds it */
		fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == EBUSY)
			return terr(err, el, -EBUSY, "%s is in use (mounted, or part of a RAID, LVM "
				    "or device mapper device); release it first", path);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

const char *fs_target_article(const char *type)
{
	/* letters whose spoken name starts with a vowel sound, in initialisms */
	static const char *const initialisms[] = { "xfs", "ntfs", "hfs", "lvm", "f2fs", "mdraid",
						   "nilfs", "rbd", "lsi" };

	if (!type || !*type)
		return "a";
	if (strchr("aeiouAEIOU", type[0]))
		return "an";
	for (size_t i = 0; i < sizeof(initialisms) / sizeof(initialisms[0]); i++)
		if (!strncasecmp(type, initialisms[i], strlen(initialisms[i])))
			return "an";
	return "a";
}

int fs_target_io_engine_env(char *err, size_t el)
{
	const char *env = getenv("XFSX_IO_ENGINE");
	enum fs_io_engine e;

	if (env && *env && fs_io_engine_parse(env, &e) < 0)
		return terr(err, el, -EINVAL, "XFSX_IO_ENGINE=%s is not an I/O engine (uring, aio, "
			    "pread, or unset for the best available)", env);
	return 0;
}

int fs_output_close(FILE *f)
{
	int err = 0;

	/* ferror first: a failed write earlier loses its errno, but not its flag */
	if (fflush(f) != 0)
		err = -errno;
	else if (ferror(f))
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}
