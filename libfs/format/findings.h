/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_FINDINGS_H
#define XFSX_FINDINGS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum fs_severity { FS_SEV_INFO, FS_SEV_WARNING, FS_SEV_ERROR };

/*
 * What repair does about a finding: the one decision point (each table row
 * names its action; nothing compares code strings to decide).
 */
enum fs_fix {
	FS_FIX_NONE,              /* report only */
	FS_FIX_SB,                /* rewrite a superblock (from the primary / agreed geometry) */
	FS_FIX_AGHDR,             /* rebuild AGF/AGI/AGFL header fields */
	FS_FIX_AG_BTREES,         /* rebuild an AG's btrees, AGFL and their counters from the model */
	FS_FIX_INODE_CLEAR,       /* free a bad inode: core damage with no known right value */
	FS_FIX_INODE_FIELD,       /* set a core field whose right value is known */
	FS_FIX_INODE_CRC,         /* a file whose core is sound but for its CRC: kept, re-stamped */
	FS_FIX_FORK,              /* drop bad extent records / bmbt blocks, reset the fork */
	FS_FIX_DIR,               /* rebuild the directory from its surviving entries */
	FS_FIX_PARENTS,           /* a directory's other parents rebuilt without it */
	FS_FIX_NLINK,             /* set the link count to the references counted */
	FS_FIX_CONNECT,           /* name an orphan in /lost+found */
	FS_FIX_XATTR,             /* remove the damaged attr fork (the file is kept) */
	FS_FIX_SYMLINK,           /* remove an unreadable symlink with its names */
	FS_FIX_UNLINKED,          /* free what the AGI unlinked lists hold, empty them */
	FS_FIX_QUOTA,             /* quota: rewrite bad dquots, let the kernel recount */
	FS_FIX_RT,                /* realtime bitmap/summary inodes */
	FS_FIX_LOG,               /* the log: replay it, or -L zeroes it */
	FS_FIX_NR
};

/*
 * "none", "sb", "aghdr", "ag_btrees", "inode_clear", "inode_field", "inode_crc", "fork",
 * "dir", "parents", "nlink", "lost_found", "xattr", "symlink", "unlinked",
 * "quota", "rt", "log".
 */
const char *fs_fix_name(enum fs_fix fix);

/* One row of the findings table: every problem xfsx can report. */
struct fs_finding_def {
	const char *code;         /* stable: scripts and repair key on it */
	enum fs_severity sev;
	enum fs_fix fix;          /* what repair does about it (FS_FIX_NONE: report only) */
	const char *summary;      /* the default message */
};

#define FS_NONE (-1LL)

/* One observed problem: rendered as text and as JSON from the same record. */
struct fs_finding {
	const struct fs_finding_def *def;
	int64_t ag, daddr, ino;   /* FS_NONE where not applicable */
	/*
	 * FS_NONE, or the inode whose damage this finding follows from (an
	 * inode unreachable because its directory or the root is bad): the
	 * renderers group it under that inode's own finding.
	 */
	int64_t cause_ino;
	char field[48];
	char expected[96];
	char found[96];
	char message[256];
};

struct fs_findings {
	pthread_mutex_t lock;
	struct fs_finding *v;
	size_t n, cap;
	size_t dropped;           /* records not kept for lack of memory */
	size_t by_sev[3];
};

void fs_findings_init(struct fs_findings *fl);
void fs_findings_free(struct fs_findings *fl);

/* The whole table, for documentation and tests. */
const struct fs_finding_def *fs_finding_table(size_t *count);
const struct fs_finding_def *fs_finding_lookup(const char *code);

/*
 * Record a finding.  code must be in the table (-EINVAL otherwise: a bug in
 * the caller).  field/expected/found may be NULL; fmt may be NULL to use the
 * table's summary.
 */
int fs_report(struct fs_findings *fl, const char *code, int64_t ag, int64_t daddr,
	      int64_t ino, const char *field, const char *expected, const char *found,
	      const char *fmt, ...) __attribute__((format(printf, 9, 10)));

/* fs_report for a finding that follows from what is wrong with inode cause_ino. */
int fs_report_caused(struct fs_findings *fl, int64_t cause_ino, const char *code, int64_t ag,
		     int64_t daddr, int64_t ino, const char *field, const char *expected,
		     const char *found, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));

/* Number formatting for expected/found strings (valid for the full expression). */
const char *fs_fmt_u64(char *buf, uint64_t v);
const char *fs_fmt_x64(char *buf, uint64_t v);
#define FS_U(v) fs_fmt_u64((char[24]){0}, (uint64_t)(v))
#define FS_X(v) fs_fmt_x64((char[24]){0}, (uint64_t)(v))

/* Append every record of src to dst (thread-safe on dst) and empty src, keeping its memory. */
int fs_findings_move(struct fs_findings *dst, struct fs_findings *src);
bool fs_findings_has(const struct fs_findings *fl, const char *code);
size_t fs_findings_count(const struct fs_findings *fl, enum fs_severity min_sev);
/* Remove the records drop() says to (counts kept right); returns how many. */
size_t fs_findings_drop(struct fs_findings *fl, bool (*drop)(void *priv, const struct fs_finding *f),
			void *priv);

/* Sort by AG, then daddr, then inode, then code: stable output for people and diffs. */
void fs_findings_sort(struct fs_findings *fl);

/*
 * Render to a stream the caller owns.  Text: a finding with a cause_ino is
 * not printed on its own line when that inode has a finding of its own:
 * it is counted, by code, in a line under it (cause first).  JSON: every
 * record, with "cause": {"ino", "code"} naming the cause, or null.
 */
void fs_findings_write_text(const struct fs_findings *fl, FILE *out);
void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out);
/* The same, with extra(priv, i, out) writing more members (",\"name\":value") into record i. */
void fs_findings_write_json_array_ex(const struct fs_findings *fl, FILE *out,
				     void (*extra)(void *priv, size_t i, FILE *out), void *priv);
void fs_json_string(FILE *out, const char *s);
const char *fs_severity_name(enum fs_severity s);

#endif
