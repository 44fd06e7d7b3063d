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
	FS_FIX_PPTR,              /* rewrite a file's parent pointers from the directory entries */
	FS_FIX_NR
};

/*
 * "none", "sb", "aghdr", "ag_btrees", "inode_clear", "inode_field", "inode_crc", "fork",
 * "dir", "parents", "nlink", "lost_found", "xattr", "symlink", "unlinked",
 * "quota", "rt", "log", "pptr".
 */
const char *fs_fix_name(enum fs_fix fix);

/* The codes: FS_C_<OBJ>_<NAME> for every row of findings.def, in its order. */
enum fs_code {
#define FS_CODE(obj, name, code, sev, fix, flags, summary) FS_C_##obj##_##name,
#include "libfs/format/findings.def"
#undef FS_CODE
	FS_C_NR
};

/* What a finding is about: the first half of its code (sb in sb.magic). */
enum fs_obj {
	FS_OBJ_SB, FS_OBJ_AGF, FS_OBJ_AGI, FS_OBJ_AGFL,
	FS_OBJ_BNOBT, FS_OBJ_CNTBT, FS_OBJ_RMAPBT, FS_OBJ_REFCBT, FS_OBJ_INOBT, FS_OBJ_FINOBT,
	FS_OBJ_FREESP, FS_OBJ_BLOCK, FS_OBJ_RMAP, FS_OBJ_REFCOUNT,
	FS_OBJ_INODE, FS_OBJ_DA, FS_OBJ_DIR, FS_OBJ_ATTR, FS_OBJ_ATTRRMT, FS_OBJ_PPTR, FS_OBJ_SYMLINK,
	FS_OBJ_SPECIAL, FS_OBJ_DQUOT, FS_OBJ_QUOTA, FS_OBJ_RT, FS_OBJ_UNLINKED,
	FS_OBJ_BMAP, FS_OBJ_BMBT, FS_OBJ_LOG,
	FS_OBJ_NR
};

/*
 * What a row says to the code that reads findings (flags of
 * struct fs_finding_def), so none of it keeps lists of codes.
 */
enum {
	/* a block's LSN is beyond the log: the kernel reads such a block all the same */
	FS_FL_LSN = 1 << 0,
	/* a block's CRC does not match: it hides nothing, the contents are judged by every rule */
	FS_FL_CRC = 1 << 1,
	/* a block's UUID is not the filesystem's */
	FS_FL_UUID = 1 << 2,
	/*
	 * repair mends the inode, not clears it, when its identity holds
	 * (di_ino and UUID): as xfs_repair resets a bad magic and version,
	 * and clears an attr fork it cannot read
	 */
	FS_FL_MEND_IF_IDENTIFIED = 1 << 3,
	/*
	 * an inode's magic or version: the scan mends them in an inode whose
	 * identity holds (scan_inode_mend_identity) and judges the mended copy
	 */
	FS_FL_IDENTITY = 1 << 4,
	/*
	 * a field repair resets without changing how the inode's contents
	 * read (a hint, a timestamp, an LSN, a list pointer): a directory,
	 * xattrs or a symlink with it are judged all the same
	 */
	FS_FL_KEEPS_CONTENTS = 1 << 5,
	/* an inode verifier finding that leaves the forks' block maps meaningful */
	FS_FL_KEEPS_FORKS = 1 << 6,
	/*
	 * the AG trees' view of blocks, which an unfinished log intent naming
	 * those blocks explains (scan/log.c); block.dup: file data still
	 * against its CoW staging extent (an unfinished CUI)
	 */
	FS_FL_INTENT = 1 << 7,
	/*
	 * fs_btree_walk leaves a subtree (or the rest of the tree) unwalked
	 * for it: key order, a pointer, a loop, the height, an unreadable
	 * block; records are missing from the walk
	 */
	FS_FL_SKIPS_SUBTREE = 1 << 8,
};

/* One row of the findings table (findings.def). */
struct fs_finding_def {
	enum fs_code id;
	const char *code;         /* stable: scripts and JSON output key on it */
	enum fs_obj obj;
	enum fs_severity sev;
	enum fs_fix fix;          /* what repair does about it (FS_FIX_NONE: report only) */
	unsigned flags;           /* FS_FL_* */
	const char *summary;      /* the default message */
};

#define FS_NONE (-1LL)

/* Which inode fork a finding concerns. */
enum fs_fork { FS_FORK_NONE, FS_FORK_DATA, FS_FORK_ATTR };

/* A range of blocks (AG block numbers unless a finding says otherwise); len 0: none. */
struct fs_range {
	uint64_t start, len;
};

/*
 * The values a finding carries for code to decide on; the strings of
 * struct fs_finding are only for people.  All zero: nothing typed.
 */
struct fs_typed {
	enum fs_fork fork;
	/*
	 * the field as an identifier, where code depends on it: for
	 * superblock findings (FS_OBJ_SB) an enum fs_sb_field (sb.h); 0: none
	 */
	uint16_t field;
	uint8_t has;              /* FS_HAS_EXPECTED, FS_HAS_FOUND: which numbers are set */
	uint64_t expected, found; /* the numbers expected/found show, when has says so */
	/* the block ranges expected/found name (rmap records: "start+len owner ...") */
	struct fs_range expected_range, found_range;
};
#define FS_HAS_EXPECTED 1
#define FS_HAS_FOUND    2

/* One observed problem: rendered as text and as JSON from the same record. */
struct fs_finding {
	enum fs_code code;
	const struct fs_finding_def *def;  /* its row: &fs_finding_table()[code] */
	int64_t ag, daddr, ino;   /* FS_NONE where not applicable */
	/*
	 * FS_NONE, or the inode whose damage this finding follows from (an
	 * inode unreachable because its directory or the root is bad): the
	 * renderers group it under that inode's own finding.
	 */
	int64_t cause_ino;
	struct fs_typed val;
	/*
	 * For output only: nothing decides on these.  Never NULL in a list's
	 * record: they point into one block of the record's own (strs, freed
	 * with it), each cut to FS_FINDING_*_MAX - 1 bytes; a record costs its
	 * strings' length, not the longest they may be (1M findings of a
	 * damaged volume: some 280 bytes each instead of 630).
	 */
	const char *field, *expected, *found, *message;
	char *strs;
};
#define FS_FINDING_FIELD_MAX    48
#define FS_FINDING_EXPECTED_MAX 96
#define FS_FINDING_FOUND_MAX    96
#define FS_FINDING_MESSAGE_MAX  256

struct fs_findings {
	pthread_mutex_t lock;
	struct fs_finding *v;
	size_t n, cap;
	size_t dropped;           /* records not kept for lack of memory */
	size_t by_sev[3];
};

void fs_findings_init(struct fs_findings *fl);
void fs_findings_free(struct fs_findings *fl);

/* The whole table (indexed by enum fs_code), for documentation and tests. */
const struct fs_finding_def *fs_finding_table(size_t *count);
/* The row of a code (NULL for a value out of range). */
const struct fs_finding_def *fs_finding_def(enum fs_code code);
/* The stable code string of a code (sb.magic for FS_C_SB_MAGIC). */
const char *fs_code_name(enum fs_code code);
/* The row of a code string: for tests and command-line lookups only. */
const struct fs_finding_def *fs_finding_lookup(const char *code);

/*
 * Record a finding.  field/expected/found may be NULL; fmt may be NULL to
 * use the table's summary.  -EINVAL for a code out of range (a bug in the
 * caller), -ENOMEM when the record was not kept.
 */
int fs_report(struct fs_findings *fl, enum fs_code code, int64_t ag, int64_t daddr,
	      int64_t ino, const char *field, const char *expected, const char *found,
	      const char *fmt, ...) __attribute__((format(printf, 9, 10)));

/* fs_report with typed values (val may be NULL: none). */
int fs_report_val(struct fs_findings *fl, const struct fs_typed *val, enum fs_code code,
		  int64_t ag, int64_t daddr, int64_t ino, const char *field,
		  const char *expected, const char *found, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));

/* fs_report for a finding that follows from what is wrong with inode cause_ino. */
int fs_report_caused(struct fs_findings *fl, int64_t cause_ino, enum fs_code code, int64_t ag,
		     int64_t daddr, int64_t ino, const char *field, const char *expected,
		     const char *found, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));

/* Record a copy of f, its strings too (a finding made in a scratch list, passed on). */
int fs_findings_add(struct fs_findings *fl, const struct fs_finding *f);

/*
 * Where the findings of one verifier go and what they are about: the
 * verifiers of libfs/format fill one in and report through it.
 */
struct fs_reporter {
	struct fs_findings *fl;
	int64_t ag, daddr, ino;    /* FS_NONE where not applicable */
	enum fs_fork fork;
	const char *prefix;        /* put before every message as "prefix: ", or NULL */
	bool prefix_ino;           /* no prefix: "inode <ino>: " (built only for a finding) */
	int n;                     /* findings made through it */
};

/* Record one finding at the reporter's place; fmt NULL: the table's summary. */
void fs_reporter_bad(struct fs_reporter *r, enum fs_code code, const char *field,
		     const char *expected, const char *found, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Number formatting for expected/found strings (valid for the full expression). */
const char *fs_fmt_u64(char *buf, uint64_t v);
const char *fs_fmt_x64(char *buf, uint64_t v);
#define FS_U(v) fs_fmt_u64((char[24]){0}, (uint64_t)(v))
#define FS_X(v) fs_fmt_x64((char[24]){0}, (uint64_t)(v))

/* Empty the list (its records' strings freed, counts zeroed), keeping its array. */
void fs_findings_clear(struct fs_findings *fl);
/* Append every record of src to dst (thread-safe on dst) and empty src, keeping its memory. */
int fs_findings_move(struct fs_findings *dst, struct fs_findings *src);
bool fs_findings_has(const struct fs_findings *fl, enum fs_code code);
size_t fs_findings_count(const struct fs_findings *fl, enum fs_severity min_sev);
/* Remove (and free) the records drop() says to (counts kept right); returns how many. */
size_t fs_findings_drop(struct fs_findings *fl, bool (*drop)(void *priv, const struct fs_finding *f),
			void *priv);

/* Sort by AG, then daddr, then inode, then code: stable output for people and diffs. */
void fs_findings_sort(struct fs_findings *fl);

/*
 * Where a finding is, as every tool prints it: "AG 1 inode 131 daddr 0x70"
 * (the parts that are not FS_NONE, daddr in hex; "" for none).  Returns buf.
 */
#define FS_PLACE_LEN 80
const char *fs_place(char *buf, size_t len, int64_t ag, int64_t ino, int64_t daddr);

/*
 * Causes first (rendering only: nothing decides on it).  A finding is
 * grouped under another, its anchor, when it has a cause_ino (FS_GROUP_CAUSE:
 * under the first causeless finding about that inode), or when it is one
 * of FS_GROUP_BLOCK_MIN or more causeless findings about the same block
 * (FS_GROUP_BLOCK: same AG, inode and daddr; under the first of them), or
 * else when FS_GROUP_CODE_MIN or more findings of one code are left, no
 * anchor among them (FS_GROUP_CODE: under the first of them).
 */
enum fs_group_kind { FS_GROUP_NONE, FS_GROUP_CAUSE, FS_GROUP_BLOCK, FS_GROUP_CODE };
#define FS_GROUP_BLOCK_MIN 4
#define FS_GROUP_CODE_MIN 10
struct fs_grouping {
	size_t *anchor;           /* per finding: the index it is grouped under, or SIZE_MAX */
	size_t *order;            /* the grouped findings, by anchor, kind, code, index */
	size_t n;                 /* entries of order */
};
/* 0 (anchor NULL when nothing is grouped), or -ENOMEM: then nothing is. */
int fs_findings_group(const struct fs_findings *fl, struct fs_grouping *g);
void fs_grouping_free(struct fs_grouping *g);
/* How many findings are grouped under anchor; *pos: the first in g->order. */
size_t fs_grouping_members(const struct fs_grouping *g, size_t anchor, size_t *pos);
/* The kind finding i is grouped by (FS_GROUP_NONE: its own line); "cause", "block", "code". */
enum fs_group_kind fs_grouping_kind(const struct fs_findings *fl, const struct fs_grouping *g,
				    size_t i);
const char *fs_group_kind_name(enum fs_group_kind k);
/* "451 attr.nameidx; 3 inode.unreachable (inodes 133, 134, 135)" for members m[0..n) */
void fs_group_write_codes(const struct fs_findings *fl, const struct fs_grouping *g,
			  const size_t *m, size_t n, FILE *out);
/*
 * The line under an anchor for members m[0..n) of one kind:
 * "  ... and N more findings caused by it|in the same block|of the same
 * kind[, how]: <codes>; -v lists them".
 */
void fs_group_write_line(const struct fs_findings *fl, const struct fs_grouping *g,
			 const size_t *m, size_t n, const char *how, FILE *out);

/*
 * Render to a stream the caller owns.  Text: a grouped finding is not
 * printed on its own line: it is counted, by code, in a line under its
 * anchor (cause first); verbose: every finding on its line, each group's
 * right under its anchor.  JSON: every record, with "cause": {"ino",
 * "code"} naming the cause, or null, and "group": its entry in the groups
 * array, or null.
 */
void fs_findings_write_text(const struct fs_findings *fl, FILE *out);
void fs_findings_write_text_v(const struct fs_findings *fl, FILE *out, int verbose);
/*
 * The groups as a JSON array: {"finding": the anchor's index in the
 * findings array, "kind": "cause"|"block"|"code", "code", "ag", "ino", "daddr" (the
 * anchor's), "count": its members, "codes": {code: how many}}.
 */
void fs_findings_write_groups_json(const struct fs_findings *fl, FILE *out);
void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out);
/* The same, with extra(priv, i, out) writing more members (",\"name\":value") into record i. */
void fs_findings_write_json_array_ex(const struct fs_findings *fl, FILE *out,
				     void (*extra)(void *priv, size_t i, FILE *out), void *priv);
void fs_json_string(FILE *out, const char *s);
const char *fs_severity_name(enum fs_severity s);

#endif
