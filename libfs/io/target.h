/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_TARGET_H
#define XFSX_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What a tool is about to do with its target: decides which mounts are
 * refused.  Every tool calls fs_target_check() (fs_open does it for the
 * tools that open a filesystem) before anything opens the path, so a FIFO
 * never blocks an open() and a mounted filesystem is never judged or
 * written behind the kernel's back.
 */
enum fs_target_use {
	/* look only (bulkstat: a mounted target goes to the kernel instead) */
	FS_TARGET_INSPECT = 0,
	/* read-only consistency check: refuse a read-write mount, allow a
	 * read-only one (the caller says the result may be stale) */
	FS_TARGET_CHECK,
	/* write (mkfs, repair): refuse any mount and any exclusive holder
	 * of a block device (RAID, LVM, device mapper) */
	FS_TARGET_WRITE,
};

enum fs_target_type {
	FS_TARGET_OTHER = 0,       /* directory, FIFO, socket, character device */
	FS_TARGET_BLOCK,
	FS_TARGET_FILE,
};

struct fs_target_info {
	enum fs_target_type type;
	uint64_t size;             /* bytes: st_size, or BLKGETSIZE64 */
	/*
	 * Mounted, directly or (an image file) through a loop device: the
	 * mount table's first entry for it.  mount_source is the device it
	 * names (the loop device for an image).
	 */
	bool mounted;
	bool mounted_ro;
	char mount_point[PATH_MAX];
	char mount_source[PATH_MAX];
	/*
	 * "" when the entry mounts it; "logdev" or "rtdev" when the entry uses
	 * it as its external log or realtime device (mount_source is then the
	 * data device of that filesystem).
	 */
	char mount_role[8];
	/* what libblkid finds there: "xfs", "ext4", ... or "" (nothing known) */
	char fstype[32];
	/* a partition table libblkid finds ("dos", "gpt"), or "" */
	char pttype[32];
};

/*
 * Examine path for use: stat it, refuse what is neither a block device nor
 * a regular file (-ENOTBLK, at once: nothing is opened), find whether it is
 * mounted, ask libblkid what it holds, and apply the use's mount policy
 * (-EBUSY).  Other errors are stat's (-ENOENT, -EACCES...).  Fills out
 * (even on -EBUSY, so a caller can name the mount point) and, on failure, a
 * message for the user in err.  Prints nothing.
 */
int fs_target_check(const char *path, enum fs_target_use use, struct fs_target_info *out,
		    char *err, size_t errlen);

/* "a" or "an" in front of a libblkid type name as spoken ("an ext4", "an xfs", "a btrfs"). */
const char *fs_target_article(const char *type);

/*
 * XFSX_IO_ENGINE, when set, must name an engine: 0, or -EINVAL with a
 * message that quotes the variable (the I/O layer would only say EINVAL).
 */
int fs_target_io_engine_env(char *err, size_t errlen);

/*
 * The other end of a tool: flush and close an output stream (stdout) and
 * say whether everything written reached it.  0, or a negative errno
 * (-EPIPE: the reader went away; -ENOSPC: /dev/full...).  Call it once,
 * last; SIGPIPE should be ignored so a closed pipe shows up here as -EPIPE.
 */
int fs_output_close(FILE *f);

#endif
