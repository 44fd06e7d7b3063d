// SPDX-License-Identifier: GPL-2.0
/*
 * What mkfs needs to know about its target before planning or writing,
 * past what libfs/io/target.c finds for every tool (type, size, mounts, what
 * libblkid sees): sector sizes and stripe topology (libblkid), whether it
 * rotates, whether it already holds a filesystem or partition table, and
 * whether an image file can grow to the size asked.
 */
#include "mkfs/target.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
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

int mkfs_target_probe(const char *path, const struct fs_target_info *ti, struct mkfs_topo *t,
		      char *err, size_t el)
{
	int fd;

	memset(t, 0, sizeof(*t));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	t->nr_cpus = cpus > 0 ? (unsigned)cpus : 0;
	t->lsect = t->psect = 512;
	t->size = ti->size;
	if (ti->type == FS_TARGET_FILE) {
		t->is_file = true;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return terr(err, el, "cannot open %s: %s", path, strerror(errno));
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
			/*
			 * As mkfs.xfs reads them: sizes equal to the physical
			 * sector are no stripe; the planner judges the rest.
			 */
			if (min_io != t->psect && opt_io != t->psect) {
				t->sunit = min_io & ~(uint64_t)(FS_BBSIZE - 1);
				t->swidth = opt_io & ~(uint64_t)(FS_BBSIZE - 1);
			}
			/* a device that starts off its physical sectors: only with -f, on logical ones */
			if (blkid_topology_get_alignment_offset(tp) != 0) {
				t->misaligned = true;
				t->psect = t->lsect;
			}
		} else {
			t->no_topology = true;
		}
		blkid_free_probe(pr);
	}
	if (!t->lsect)
		t->lsect = 512;
	if (!t->psect)
		t->psect = t->lsect;
	return 0;
}

int mkfs_target_check_empty(const char *path, const struct fs_target_info *ti, char *err,
			   size_t el)
{
	if (*ti->fstype)
		return terr(err, el, "%s already holds %s %s filesystem (found by libblkid); use -f "
			    "to overwrite it", path, fs_target_article(ti->fstype), ti->fstype);
	if (*ti->pttype)
		return terr(err, el, "%s already holds %s %s partition table (found by libblkid); "
			    "use -f to overwrite it", path, fs_target_article(ti->pttype), ti->pttype);
	return 0;
}

int mkfs_target_extend(const char *path, uint64_t size, bool noaction, char *err, size_t el)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, e = 0;

	if (!noaction) {
		if (truncate(path, (off_t)size) < 0)
			return terr(err, el, "cannot extend %s to %llu bytes: %s", path,
				    (unsigned long long)size, strerror(errno));
		return 0;
	}
	/*
	 * -N writes nothing to the image, but whether its filesystem takes a
	 * file that large is asked of a sparse scratch file beside it, removed
	 * at once, so -N refuses what the real run would.
	 */
	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.xfsx_mkfs-size.XXXXXX", (int)(slash - path), path);
	else
		snprintf(tmp, sizeof(tmp), ".xfsx_mkfs-size.XXXXXX");
	fd = mkstemp(tmp);
	if (fd < 0)
		return 0;       /* cannot ask (read-only directory): the real run will say */
	if (ftruncate(fd, (off_t)size) < 0)
		e = errno;
	close(fd);
	unlink(tmp);
	if (e)
		return terr(err, el, "cannot extend %s to %llu bytes: %s", path,
			    (unsigned long long)size, strerror(e));
	return 0;
}
