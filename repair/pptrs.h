/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PPTRS_H
#define XFSX_REPAIR_PPTRS_H

#include "libfs/format/pptr.h"
#include "repair/plan.h"

/*
 * pptrs.c: parent pointers as the repaired namespace wants them (the
 * parent feature only).  The namespace phase (phase_names.c) marks the
 * files whose parent pointers it may change (children of rebuilt and
 * cleared directories, files with pptr.* findings, attr forks rebuilt or
 * removed) and records, for each of them, the one parent pointer every
 * directory entry naming it after the repair needs; the xattr phase
 * (phase_xattrs.c) rewrites the attr forks whose pointers differ, keeping
 * their other xattrs.  Also the reader of one inode's parent pointers
 * (names included), which the restore of lost names by parent pointer
 * uses.
 */

enum {
	RP_AFFECTED = 1,           /* its parent pointers are recomputed */
	RP_FORCE = 2,              /* its attr fork is rewritten whatever it holds */
	RP_DONE = 4,               /* its parent pointers were rewritten */
};

struct repair_pptr {
	uint32_t child;            /* link slot */
	uint32_t gen;              /* the parent's di_gen */
	fs_ino_t parent;
	size_t name;               /* offset in names */
	uint8_t namelen;
};

struct repair_pptrs {
	uint8_t *want;             /* RP_* per link slot */
	struct repair_pptr *v;     /* wanted pointers, sorted by child after repair_pptrs_sort */
	size_t n, cap;
	unsigned char *names;
	size_t nnames, capnames;
	uint64_t rewritten;        /* files whose pointers were rewritten */
};

/* On a parent pointer filesystem: rx->pp set up (nothing marked); 0 elsewhere. */
int  repair_pptrs_alloc(struct repair_ctx *rx);
void repair_pptrs_free(struct repair_ctx *rx);
/* The plan rule of a pptr.* finding (fix.c's table): its file's pointers rewritten. */
int  repair_pptrs_plan(struct repair_ctx *rx, const struct fs_finding *f, void *arg);
/* Whether the plan rewrote the parent pointers of inode ino (fix.c's covered rule). */
bool repair_pptrs_rewritten(const struct repair_ctx *rx, int64_t ino);
int  repair_pptrs_add(struct repair_ctx *rx, uint64_t child, fs_ino_t parent, uint32_t gen,
		      const unsigned char *name, uint8_t namelen);
void repair_pptrs_sort(struct repair_ctx *rx);
/* The wanted pointers of slot s (after the sort): their count, the first in *v. */
size_t repair_pptrs_of(const struct repair_ctx *rx, uint64_t s, const struct repair_pptr **v);

/*
 * Each parent pointer of inode ino that decodes right (and, in a leaf,
 * carries its hash) to fn; fn's pointer is valid during the call only.
 * 0, or a negative errno (fn's too).
 */
int  repair_pptrs_read(struct repair_ctx *rx, fs_ino_t ino,
		       int (*fn)(void *priv, const struct fs_pptr *p), void *priv);

#endif
