/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_PPTR_H
#define XFSX_SCAN_PPTR_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format/format.h"

/*
 * Parent pointers against directory entries (filesystems with the parent
 * feature only; doc/check.md, phase 6).  Both sides become fixed-size
 * link keys, kept per worker while the scan runs: every live directory
 * entry (child slot, the directory, its generation, a 64-bit digest of
 * the name) from the directory walks, every parent pointer (child slot,
 * the parent it names, the generation it holds, the digest of its name)
 * from the attr walks.  No name is kept.  After the links phase both are
 * sorted by (child, parent, digest) and merged: an entry without its
 * pointer, a pointer without its entry, a generation that is not the
 * directory's, a pointer twice, and pointer counts against link counts.
 */
struct pptr_key {
	uint32_t child;            /* link record slot of the file */
	uint32_t gen;              /* entry: the directory's di_gen; pointer: p_gen */
	uint64_t parent;           /* the directory's inode number */
	uint64_t digest;           /* fs_name_digest of the name */
};

struct pptr_keys {
	struct pptr_key *v;
	size_t n, cap;
};

struct scan_pptrs {
	unsigned nworkers;
	struct pptr_keys *ents;    /* per worker: from directory entries */
	struct pptr_keys *ptrs;    /* per worker: from parent pointer xattrs */
	/*
	 * per link slot: the file's parent pointers are not all known (its
	 * attr fork had findings, or its blocks could not be walked whole)
	 */
	uint8_t *unknown;
	int err;                   /* the first -ENOMEM while recording (the run stops) */
};

struct scan_ctx;
struct fs_dirent;
struct fs_pptr;

/* After the link records exist: on a parent pointer filesystem, set the tables up. */
int  scan_pptrs_create(struct scan_ctx *cx);
void scan_pptrs_destroy(struct scan_ctx *cx);
/* A live entry of directory dir (generation dgen) naming child slot cs. */
void scan_pptr_note_entry(struct scan_ctx *cx, unsigned worker, uint32_t cs, fs_ino_t dir,
			  uint32_t dgen, const uint8_t *name, size_t namelen);
/* A parent pointer of the file in slot cs that passed its rules. */
void scan_pptr_note_ptr(struct scan_ctx *cx, unsigned worker, uint64_t cs,
			const struct fs_pptr *p);
/* The file in slot cs has parent pointers the scan could not read. */
void scan_pptr_note_unknown(struct scan_ctx *cx, uint64_t cs);
/* After the links phase: the merge and its findings (pptr.missing, .dangling, .gen, ...). */
int  scan_pptr_check(struct scan_ctx *cx);

#endif
