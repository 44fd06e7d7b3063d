/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_FS_H
#define XFSX_FS_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/io/io.h"
#include "libfs/io/target.h"

/*
 * The library handle, like e2fsprogs' ext2_filsys: the device, the primary
 * superblock decoded, the geometry derived from it.  Every tool opens one.
 */
struct fs {
	struct fs_dev *dev;
	/*
	 * The device the log is on: dev itself for an internal log, the
	 * external log device (the log at its byte 0) when sb_logstart is 0,
	 * NULL when that device was not given (fs_open_opts.log_not_needed).
	 */
	struct fs_dev *logdev;
	/* the realtime device, when given (NULL otherwise: rt extents not bounded by it) */
	struct fs_dev *rtdev;
	struct fs_target_info log_target, rt_target;
	struct xfs_sb sb;          /* the superblock the geometry came from */
	struct fs_geom g;
	fs_agnumber_t sb_source;   /* 0, or the AG of the secondary used */
	/*
	 * The primary as it reads on disk.  When sb_source is 0, sb differs
	 * from it in the fields the vote over the secondaries (and the
	 * geometry's own rules for the root and realtime inodes) rejected.
	 */
	struct xfs_sb sb_disk;
	/* sb came from a secondary: its free/inode counters are not current
	 * and must not be judged against a scan */
	bool sb_counters_stale;
	bool have_log_head;
	uint64_t log_head_lsn;
	bool log_clean;            /* head record is an unmount record */
	bool log_replayed;         /* reads show the log replayed in memory (logreplay.h) */
	bool have_log_uuid;        /* log_uuid holds the head record's h_fs_uuid */
	unsigned char log_uuid[16];
	/*
	 * The external log device holds records of another filesystem (its
	 * head record's UUID is not sb_uuid): opened only when the caller
	 * said it throws the log away (fs_open_opts.log_foreign_ok, repair
	 * -L); the log then counts as dirty.
	 */
	bool log_foreign;
	/* what fs_target_check found: mounted read-only, what libblkid sees */
	struct fs_target_info target;
};

struct fs_open_opts {
	struct fs_dev_opts dev;
	/* if the primary is unusable, search for a secondary superblock */
	bool allow_secondary;
	/* the mount policy (libfs/io/target.h); the default looks only */
	enum fs_target_use use;
	/*
	 * The external log device (-l, --logdev), required when the log is
	 * external (sb_logstart 0), and the realtime device (-r, --rtdev),
	 * optional.  Each is examined as the data device is (fs_target_check
	 * with use) and opened with dev's options but no read patch (the
	 * replay's overlay is of data device sectors); the log device is
	 * written when dev.writable, the realtime device never.  Either given
	 * for a filesystem that has no such device is not opened (the tool
	 * says so).
	 */
	const char *logdev;
	const char *rtdev;
	/* an external log may be missing (the geometry is all the caller reads) */
	bool log_not_needed;
	/* an external log device holding another filesystem's records is opened (repair -L) */
	bool log_foreign_ok;
};

/* Why fs_open failed, in words a user can act on. */
struct fs_error {
	int err;                   /* negative errno */
	bool not_xfs;              /* -EINVAL: no XFS there (fl emptied: nothing to fix) */
	char msg[256];
};

/*
 * Open and identify a v5 filesystem.  The target is examined first
 * (fs_target_check with o->use: file type, mounts), and XFSX_IO_ENGINE.
 * Findings about the primary superblock go to fl (may be NULL).  Errors:
 * -ENOENT/-EACCES... (cannot open), -ENOTBLK (not a block device or
 * regular file), -EBUSY (mounted, per o->use), -EINVAL (not XFS, or a bad
 * XFSX_IO_ENGINE), -EPROTONOSUPPORT (v4), -EOPNOTSUPP (unknown features),
 * -EUCLEAN (corrupt primary, no usable secondary); err->msg says which.
 * Not XFS at all (-EINVAL with err->not_xfs: zeros, another filesystem,
 * no secondary found, too small): fl is emptied, as there is nothing to
 * fix; a wrong magic with a secondary found stays a finding instead.
 * The external log and realtime devices (o->logdev, o->rtdev): -ENODEV
 * when the log is external and no log device was given (the message names
 * --logdev), -EXDEV when the device given is not this filesystem's (its
 * log is smaller than sb_logblocks, or its records carry another UUID:
 * see log_foreign_ok; the data device itself), or the errors above for
 * that device.  A realtime device smaller than the section is opened (the
 * scan reports what lies beyond it).
 */
int  fs_open(const char *path, const struct fs_open_opts *o, struct fs **out,
	     struct fs_findings *fl, struct fs_error *err);
void fs_close(struct fs *fs);

/*
 * The secondary superblock a majority of AG boundaries agree with (what
 * fs_open falls back to): 0 with the copy and its byte offset, -ENOENT
 * when none verifies, -ENOMEM.
 */
int fs_find_secondary(struct fs_dev *dev, struct xfs_sb *out, uint64_t *where);

/*
 * A secondary that agrees with fs->sb in every shared field (read at the
 * AG boundaries fs->sb names; the device is searched only when none
 * does): 0 with the copy, -ENOENT, -ENOMEM.
 */
int fs_sb_majority_copy(struct fs *fs, struct xfs_sb *out);

/*
 * What a tool says about the devices it was given, one line each ("" when
 * there is nothing to say): a log device given for a filesystem whose log
 * is internal, a realtime device for one without a realtime section (both
 * not used), a realtime section whose device was not given (its extents
 * are then judged against the superblock's size only).
 */
struct fs_device_notes {
	char logdev[256], rtdev[256], rt_unchecked[256];
};
void fs_device_notes(const struct fs *fs, const struct fs_open_opts *o,
		     struct fs_device_notes *n);
/* No realtime device was given for the filesystem's realtime section. */
static inline bool fs_rt_unchecked(const struct fs *fs)
{
	return fs->g.rblocks && !fs->rtdev;
}

/*
 * Examine path (fs_target_check with use: the one policy for every device
 * a tool touches) and open it with o: what fs_open does for the data
 * device and the log and realtime devices, and what a tool that makes a
 * filesystem uses for each device it writes.  0 with *out and *ti filled,
 * or a negative errno with err->msg saying why.
 */
int fs_open_device(const char *path, enum fs_target_use use, const struct fs_dev_opts *o,
		   struct fs_dev **out, struct fs_target_info *ti, struct fs_error *err);

/*
 * Where the log is: its device (internal: the data device) and the byte
 * offset of its first block there (external: 0).  The device is NULL when
 * an external log's device was not opened.
 */
static inline uint64_t fs_log_offset(const struct fs *fs)
{
	return fs->g.log_internal ?
	       fs_daddr_to_bytes(fs_fsb_to_daddr(&fs->g, fs->g.logstart)) : 0;
}
/* The log device when it is not the data device (external), else NULL. */
static inline struct fs_dev *fs_log_extdev(const struct fs *fs)
{
	return fs->logdev && fs->logdev != fs->dev ? fs->logdev : NULL;
}

/* Locate the log head; sets have_log_head/log_head_lsn/log_clean. -EOPNOTSUPP: no log device. */
int fs_log_find_head(struct fs *fs);

/*
 * Write a clean log over [log_off, log_off + log_bytes): every sector
 * zeroed, then one record at block 0 holding an unmount record, stamped
 * with cycle (1 for a new filesystem; above every LSN in the metadata when
 * a log is thrown away, or the kernel rejects those blocks as from the
 * future).  lsunit_bytes pads the record (fs_log_lsunit_bytes()).  The
 * record is judged first by the log reader's own checks
 * (fs_log_check_clean_record): -EUCLEAN, nothing written, msg saying why.
 * Other errors: msg names what failed.
 */
int fs_log_write_clean(struct fs_dev *dev, uint64_t log_off, uint64_t log_bytes,
		       uint32_t lsunit_bytes, const unsigned char uuid[16], uint32_t cycle,
		       char *msg, size_t ml);
/* The same with the record given (rec_len bytes, the whole first record). */
int fs_log_write_record(struct fs_dev *dev, uint64_t log_off, uint64_t log_bytes,
			const void *rec, size_t rec_len, const unsigned char uuid[16],
			uint32_t cycle, char *msg, size_t ml);
/*
 * repair -L: the log thrown away, a clean one written a cycle past the head
 * (fs_log_write_clean) on the log's device and flushed.  0, or negative
 * errno with msg.
 */
int fs_log_reset(struct fs *fs, char *msg, size_t ml);
/*
 * The clean log written for fs (its uuid, its log stripe unit) at cycle on
 * the log's device, then flushed: the end of a replay and of -L.  0, or
 * negative errno with msg ("WHAT failed: …", or the record's own fault).
 */
int fs_log_write_clean_fs(struct fs *fs, uint64_t log_off, uint64_t log_bytes, uint32_t cycle,
			  const char *what, char *msg, size_t ml);
uint32_t fs_log_lsunit_bytes(const struct xfs_sb *sb);

#endif
