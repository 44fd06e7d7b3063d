/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xfsx_bulkstat internals shared by the command line, the offline engine
 * (libfs inode scan of an unmounted device) and the online engine
 * (XFS_IOC_BULKSTAT on a mounted filesystem).  Both engines produce
 * struct xfs_bulkstat records, the kernel's own type, and one formatter
 * renders them, so the two paths cannot drift apart in presentation.
 */
#ifndef XFSX_BULKSTAT_H
#define XFSX_BULKSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xfs/xfs.h>
#include <xfs/xfs_fs.h>

#include "libfs/util/exit.h"


/* ---- fields and formats (format.c) ---- */

enum bs_format { BS_JSONL, BS_CSV, BS_TEXT };

#define BS_MAX_FIELDS 32
/* Longest line one record can take, all fields selected, any format. */
#define BS_MAX_RECORD 2048

struct bs_output {
	enum bs_format format;
	unsigned nfields;
	uint8_t fields[BS_MAX_FIELDS];   /* indexes into the field table */
	/* what goes before each value: '{"ino":' / ',' / ' mode=' (bs_output_prepare) */
	char prefix[BS_MAX_FIELDS][24];
	uint8_t prefix_len[BS_MAX_FIELDS];
	bool paths;                      /* a paths column after the fields (CSV header) */
};

/* Parse "a,b,c" into o->fields; NULL selects the default set.  0 or -EINVAL (msg says why). */
int bs_output_parse_fields(struct bs_output *o, const char *list, char *msg, size_t msglen);
int bs_output_parse_format(struct bs_output *o, const char *name);
/* After format and fields are set: precompute the per-field prefixes. */
void bs_output_prepare(struct bs_output *o);
/* Names of every field, for --help and the man page test. */
const char *bs_field_name(unsigned i);
unsigned bs_field_count(void);

/* The CSV header row (with newline) into buf; returns its length (0 for other formats). */
size_t bs_format_header(const struct bs_output *o, char *buf, size_t len);
/* One record (with newline) into buf, which has room for BS_MAX_RECORD bytes. */
size_t bs_format_record(const struct bs_output *o, const struct xfs_bulkstat *bs, char *buf);

/* ---- paths (paths.c) ---- */

/* A growable byte buffer. */
struct bs_buf {
	char *p;
	size_t len, cap;
};

struct bs_paths;
struct fs;
/* The link map of an unmounted filesystem: parent pointers where it has them, else its directories. */
int bs_paths_build_offline(struct fs *fs, struct bs_paths **out);
/* The link map of a mounted one: a walk of the tree at mnt. */
int bs_paths_build_online(const char *mnt, struct bs_paths **out);
void bs_paths_free(struct bs_paths *p);
/*
 * The paths member (JSON: ,"paths":[...]), or column (CSV: ,"p1//p2"), or
 * pair (text:  paths="p1//p2") of inode ino, with the record's end, into
 * out; scratch is the caller's (reused between calls).
 */
int bs_paths_render(const struct bs_paths *p, enum bs_format fmt, uint64_t ino,
		    struct bs_buf *out, struct bs_buf *scratch);

/* ---- options and engines ---- */

struct bs_opts {
	struct bs_output out;
	bool have_ag;
	uint32_t ag;
	uint64_t start_ino;
	unsigned threads;          /* 0: one per CPU */
	bool include_internal;
	bool strict;
	bool no_direct;
	int io_engine;             /* enum fs_io_engine */
	int out_fd;
	bool want_paths;           /* --paths: each engine builds its link map first */
	const char *logdev, *rtdev; /* -l, -r: the external log and realtime devices */
};

/* One record with its paths into out (emptied first): 0 or -ENOMEM. */
int bs_record_with_paths(const struct bs_output *o, const struct bs_paths *p,
			 const struct xfs_bulkstat *bs, struct bs_buf *out, struct bs_buf *scratch);

/* What a run did, for the summary and the exit code. */
struct bs_result {
	uint64_t inodes;           /* records written */
	uint64_t damaged;          /* inodes skipped as damaged */
	uint64_t problems;         /* other damage (AG headers, btrees) */
	bool primary_bad;          /* read through a secondary superblock */
};

/* Unmounted device or image: 0, or an exit code (messages already printed). */
int bs_run_offline(const char *path, const struct bs_opts *o, struct bs_result *r);
/* Mounted filesystem, through XFS_IOC_BULKSTAT. */
int bs_run_online(const char *mountpoint, const struct bs_opts *o, struct bs_result *r);

/* Write all of buf to fd; 0 or negative errno. */
int bs_write_all(int fd, const char *buf, size_t len);

#endif
