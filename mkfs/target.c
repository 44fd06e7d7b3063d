// SPDX-License-Identifier: GPL-2.0
/*
 * What mkfs needs to know about its target before planning or writing:
 * size, sector sizes and stripe topology (libblkid), whether it rotates,
 * whether it is mounted (directly or through a loop device), and whether it
 * already holds a filesystem or partition table (libblkid probe).
 */
#include "mkfs/target.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static int terr(char *err, size_t el, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int terr(char *err, size_t el, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, el, fmt, ap);
	va_end(ap);
	return -1;
}

int mkfs_target_probe(const char *path, struct mkfs_topo *t, char *err, size_t el)
{
	struct stat st;
	int fd;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st) < 0)
		return terr(err, el, "cannot use %s: %s%s", path, strerror(errno),
			    errno == ENOENT ? " (create an image first, e.g. truncate -s 10G FILE)" : "");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	t->nr_cpus = cpus > 0 ? (unsigned)cpus : 0;
	t->lsect = t->psect = 512;
	if (S_ISREG(st.st_mode)) {
		t->is_file = true;
		t->size = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return terr(err, el, "%s is neither a block device nor a regular file", path);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return terr(err, el, "cannot open %s: %s", path, strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &t->size) < 0) {
		close(fd);
		return terr(err, el, "cannot read the size of %s: %s", path, strerror(errno));
	}
	{
		unsigned short rot = 1;

		if (ioctl(fd, BLKROTATIONAL, &rot) == 0)
			t->solid_state = rot == 0;
	}
	close(fd);

	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (pr) {
		blkid_topology tp = blkid_probe_get_topology(pr);

		if (tp) {
			unsigned long min_io = blkid_topology_get_minimum_io_size(tp);
			unsigned long opt_io = blkid_topology_get_optimal_io_size(tp);

			t->lsect = (uint32_t)blkid_topology_get_logical_sector_size(tp);
			t->psect = (uint32_t)blkid_topology_get_physical_sector_size(tp);
			/* a stripe only when the device reports unit and a larger width */
			if (min_io && opt_io && opt_io != min_io && opt_io % min_io == 0 &&
			    min_io > t->psect) {
				t->sunit = min_io;
				t->swidth = opt_io;
			}
		}
		blkid_free_probe(pr);
	}
	if (!t->lsect)
		t->lsect = 512;
	if (!t->psect)
		t->psect = t->lsect;
	return 0;
}

/* Is dev (a block device number) or path mounted, per /proc/self/mounts? */
static bool mounted_as(const char *path, dev_t rdev, bool is_blk, char *where, size_t wl)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while ((m = getmntent(f))) {
		struct stat ms;

		if (!strcmp(m->mnt_fsname, path) ||
		    (is_blk && m->mnt_fsname[0] == '/' && stat(m->mnt_fsname, &ms) == 0 &&
		     S_ISBLK(ms.st_mode) && ms.st_rdev == rdev)) {
			snprintf(where, wl, "%s", m->mnt_dir);
			found = true;
			break;
		}
	}
	endmntent(f);
	return found;
}

int mkfs_target_check_unmounted(const char *path, char *err, size_t el)
{
	struct stat st;
	char where[PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) < 0)
		return terr(err, el, "cannot use %s: %s", path, strerror(errno));
	if (mounted_as(path, st.st_rdev, S_ISBLK(st.st_mode), where, sizeof(where)))
		return terr(err, el, "%s is mounted on %s; unmount it first (xfsx_mkfs never "
			    "formats a mounted device, even with -f)", path, where);
	if (S_ISBLK(st.st_mode)) {
		/* O_EXCL on a block device fails while anything (a mount, md, dm) holds it */
		int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);

		if (fd < 0 && errno == EBUSY)
			return terr(err, el, "%s is in use (mounted, or part of a RAID, LVM or device "
				    "mapper device); release it first", path);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* an image file attached to a loop device that is mounted */
	d = opendir("/sys/block");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char bf[PATH_MAX], dev[300];
		struct stat bs, ls;
		FILE *f;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(bf, sizeof(bf), "/sys/block/%s/loop/backing_file", de->d_name);
		f = fopen(bf, "r");
		if (!f)
			continue;
		if (!fgets(bf, sizeof(bf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		bf[strcspn(bf, "\n")] = 0;
		if (stat(bf, &bs) < 0 || bs.st_dev != st.st_dev || bs.st_ino != st.st_ino)
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		if (stat(dev, &ls) == 0 && mounted_as(dev, ls.st_rdev, true, where, sizeof(where))) {
			closedir(d);
			return terr(err, el, "%s is attached to %s, which is mounted on %s; unmount it "
				    "first", path, dev, where);
		}
	}
	closedir(d);
	return 0;
}

int mkfs_target_check_empty(const char *path, char *err, size_t el)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *type = NULL, *what = "filesystem";
	int rc = 0;

	if (!pr)
		return 0;      /* nothing to probe (e.g. an empty file) */
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	if (blkid_do_fullprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 && type) {
			what = "filesystem";
		} else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0 && type) {
			what = "partition table";
		}
		if (type)
			rc = terr(err, el, "%s already holds a %s %s (found by libblkid); use -f to "
				  "overwrite it", path, type, what);
	}
	blkid_free_probe(pr);
	return rc;
}
