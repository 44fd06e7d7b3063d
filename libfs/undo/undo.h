/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_UNDO_H
#define XFSX_UNDO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/io/io.h"

/*
 * Undo files (xfsx_repair/xfsx_mkfs --undo-file, xfsx_undo).  Layout, all
 * little-endian (doc/design.md, "Undo files"):
 *
 *   header   one 512-byte sector at offset 0: magic, version, the data
 *            device's size, a CRC32c of its first FS_UNDO_FP_BYTES as they
 *            were before the run and (once the run finished) after it, the
 *            filesystem UUID before and the one the run leaves, and, once
 *            finished, the record count, bytes saved and file length; from
 *            version 2, the set of devices the run writes (one bit per
 *            enum fs_undo_role).  Its own CRC32c last.
 *   devices  version 2: each other device (external log, realtime) in a
 *            512-byte sector of its own at 512 * role: magic, role, size,
 *            fingerprint before and after, the UUID its contents name
 *            before and after (a log: the filesystem UUID its records
 *            carry), the path, its own CRC32c.  The rest of the first 4 KiB
 *            is unused.
 *   records  from offset 4096, appended: a 32-byte header (magic, flags
 *            with the device's role in bits 8-15 (version 2), device
 *            offset, length, CRC32c of the data, CRC32c of the header) and
 *            the old bytes, at most FS_UNDO_CHUNK per record; a range that
 *            held only zeroes (or a hole of an image file) is a record with
 *            FS_UNDO_REC_ZERO and no data.
 *
 * Version 1 files (one device, role bits 0) are read as before.
 *
 * Order: the header is durable before the run's first write; the records
 * of the ranges a submission overwrites are durable (fdatasync) before
 * that submission reaches the device; the header is rewritten "complete"
 * only after the run's last write.  So a file whose header is not complete
 * comes from a run that was killed (or failed): every record it holds
 * whole is restored, and a torn last record is dropped (it was never
 * synced, so the write it covered never began).
 */
#define FS_UNDO_MAGIC     "XFSXUNDO"
#define FS_UNDO_VERSION   2
#define FS_UNDO_DEV_MAGIC "XFSXUDEV"
#define FS_UNDO_HDR_SPACE 4096u          /* records start here */
#define FS_UNDO_HDR_LEN   512u           /* bytes the header CRC covers, CRC included */
#define FS_UNDO_REC_MAGIC 0x58524543u    /* "XREC" */
#define FS_UNDO_REC_LEN   32u
#define FS_UNDO_CHUNK     (1u << 20)     /* old bytes per record, at most */
#define FS_UNDO_FP_BYTES  (1u << 20)     /* fingerprint: this many first bytes */
#define FS_UNDO_GRAIN     512u           /* ranges are saved in whole sectors */

enum {
	FS_UNDO_COMPLETE    = 1u << 0,   /* the run finished: after-fingerprint and counts valid */
	FS_UNDO_UUID_BEFORE = 1u << 1,   /* the device held an XFS primary before the run */
	FS_UNDO_UUID_AFTER  = 1u << 2,   /* the run leaves a filesystem with uuid_after */
};
enum { FS_UNDO_REC_ZERO = 1u << 0 };
#define FS_UNDO_REC_ROLE_SHIFT 8
#define FS_UNDO_REC_ROLE_MASK  (0xffu << FS_UNDO_REC_ROLE_SHIFT)

/* The devices one undo file covers: each record names one. */
enum fs_undo_role { FS_UNDO_DATA = 0, FS_UNDO_LOG, FS_UNDO_RT, FS_UNDO_ROLES };

/*
 * One device's identity (the data device's is in the header itself): its
 * size, the fingerprint of its first bytes before and after the run, and
 * the UUID its contents name (FS_UNDO_UUID_BEFORE/_AFTER in flags): the
 * data device's XFS primary, the log's record headers; none for a
 * realtime device.
 */
struct fs_undo_devdesc {
	bool present;
	uint32_t flags;
	uint64_t dev_size, fp_len;
	uint32_t fp_before, fp_after;
	unsigned char uuid_before[16], uuid_after[16];
	char device[256];        /* the path the run was given (messages only) */
};
/* "data", "log", "realtime" */
const char *fs_undo_role_name(enum fs_undo_role role);

struct fs_undo_header {
	uint32_t version, flags;
	uint64_t dev_size;
	uint64_t fp_len;
	uint32_t fp_before, fp_after;
	unsigned char uuid_before[16], uuid_after[16];
	uint64_t nrecs, saved_bytes, file_len;
	uint64_t ctime;          /* seconds since the epoch, when the run started */
	char tool[64];           /* NUL-terminated */
	char device[256];        /* the path the run was given (messages only) */
	/* every device the file covers, [FS_UNDO_DATA] the fields above (version 1: only it) */
	struct fs_undo_devdesc devs[FS_UNDO_ROLES];
};

/* One record as the reader found it. */
struct fs_undo_rec {
	uint8_t role;            /* enum fs_undo_role: which device */
	uint64_t off, len;       /* device range */
	uint64_t data_pos;       /* where its old bytes are in the file (none when zero) */
	uint32_t data_crc;
	bool zero;
};

/* ---- writing (the tools' --undo-file) ---- */

struct fs_undo;

/*
 * Create path (it must not exist: an undo file may be the only way back
 * from an earlier run) for dev, make its header durable, and install the
 * device's write hooks: from now on every first overwrite of a sector of
 * dev saves its old bytes first.  uuid_after: the UUID of the filesystem
 * the run leaves (mkfs), or NULL when it keeps the one it finds.  tool
 * names the writer in the header.  On failure msg says why.
 */
int  fs_undo_create(const char *path, struct fs_dev *dev, const char *tool,
		    const unsigned char *uuid_after, struct fs_undo **out, char *msg, size_t ml);
/*
 * The same for every device the run may write: devs[role] (NULL: none;
 * devs[FS_UNDO_DATA] required), each identified in the header, each with
 * its write hooks; one file, each record naming its device.
 */
int  fs_undo_create_devs(const char *path, struct fs_dev *const devs[FS_UNDO_ROLES],
			 const char *tool, const unsigned char *uuid_after, struct fs_undo **out,
			 char *msg, size_t ml);
/*
 * The run's writes are over: remove the hooks, take the after-fingerprint
 * and rewrite the header complete (durable).  Call it whether or not the
 * run succeeded; a file never finished stays valid (a killed run).
 */
int  fs_undo_finish(struct fs_undo *u, char *msg, size_t ml);
/*
 * The device is closed and opened again (repair after a log replay): detach
 * before closing it, attach the new fs_dev (the same device: -ENODEV when
 * its size differs).  Sectors saved stay saved.  A file finished while
 * detached stays unfinished (no device to fingerprint): still valid.
 */
void fs_undo_detach(struct fs_undo *u);
int  fs_undo_attach(struct fs_undo *u, struct fs_dev *dev);
/* Attach the device of a role the file was created with (-ENODEV: size differs or no such role). */
int  fs_undo_attach_role(struct fs_undo *u, enum fs_undo_role role, struct fs_dev *dev);
/* Remove the hooks and free; the file stays as it is. */
void fs_undo_free(struct fs_undo *u);
/* The last error of the write hook, "" if none (it names the undo file). */
const char *fs_undo_error(const struct fs_undo *u);
/* Bytes of old data and records written so far. */
uint64_t fs_undo_saved_bytes(const struct fs_undo *u);
uint64_t fs_undo_records(const struct fs_undo *u);

/* ---- reading (xfsx_undo) ---- */

struct fs_undo_file {
	int fd;
	uint64_t file_len;
	struct fs_undo_header h;
	struct fs_undo_rec *recs;
	size_t nrecs;
	uint64_t saved_bytes;    /* sum of the records' lengths */
	uint64_t torn_bytes;     /* an unfinished file's dropped tail (0 if none) */
};

/*
 * Open and validate the whole file: header magic, version and CRC, every
 * record's header CRC, data CRC and range (inside the device, no two
 * overlapping), and for a finished file the counts and length its header
 * gives.  -EBADMSG (damaged) or -ENODATA (truncated) with msg naming what
 * and where; nothing is kept open on failure.
 */
int  fs_undo_file_open(const char *path, struct fs_undo_file **out, char *msg, size_t ml);
void fs_undo_file_close(struct fs_undo_file *f);

enum fs_undo_match {
	FS_UNDO_MATCH = 0,       /* the device the file was made for, as the run left it */
	FS_UNDO_MATCH_UNKNOWN,   /* unfinished file: only size and UUID could be compared */
	FS_UNDO_WRONG_DEVICE,    /* size (or filesystem UUID) differs */
	FS_UNDO_CHANGED,         /* same device, but its first blocks changed since the run */
	FS_UNDO_RESTORED,        /* its first blocks are as before the run: already undone? */
};
/* Judge dev against the file (reads the first FS_UNDO_FP_BYTES); msg explains. */
int  fs_undo_file_match(const struct fs_undo_file *f, struct fs_dev *dev,
			enum fs_undo_match *m, char *msg, size_t ml);
/* The same for the device of a role the file covers (f->h.devs[role].present). */
int  fs_undo_file_match_role(const struct fs_undo_file *f, enum fs_undo_role role,
			     struct fs_dev *dev, enum fs_undo_match *m, char *msg, size_t ml);
/*
 * Write record i's old bytes back to dev, the device of its role (its data re-read and its CRC
 * checked again first: -EBADMSG if the file changed since it was opened).
 * Zero records: a punched hole on an image file, BLKZEROOUT on a device.
 */
int  fs_undo_file_apply(const struct fs_undo_file *f, size_t i, struct fs_dev *dev);
/* CRC32c of the first fp_len bytes of dev (the fingerprint). */
int  fs_undo_fingerprint(struct fs_dev *dev, uint64_t fp_len, uint32_t *out);

#endif
