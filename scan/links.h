/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_LINKS_H
#define XFSX_SCAN_LINKS_H

#include <stdint.h>

#include "libfs/format.h"

/*
 * The directory graph and per-inode link records (DESIGN.md, "The in-core
 * model"): one compact record per inode slot of every chunk (a dense index
 * over the model's chunks, 64 slots a chunk), filled by the inode phase
 * (type, nlink), counted by the directory phase (references, subdirectory
 * entries, "..", the first parent seen), and the directory edges in flat
 * per-worker arrays.  The links phase joins them: reachability from the
 * root, link counts, directory hard links, "..".
 */

enum {
	LR_SEEN = 1,               /* the inode phase read it (allocated, mode != 0) */
	LR_BAD = 2,                /* its own checks failed: do not judge its links */
	LR_REACHED = 4,
	LR_WALKED = 8,             /* a directory whose entries were walked */
	LR_REFLINK = 16,           /* di_flags2 has XFS_DIFLAG2_REFLINK */
	LR_NOTED = 32,             /* (links phase) its unreachability is reported */
	LR_FORKS_UNREAD = 64,      /* its core kept its forks from being loaded into the model */
};

struct link_rec {
	uint32_t nlink;            /* on disk */
	uint32_t refs;             /* directory entries naming it */
	uint32_t subdirs;          /* (directories) entries naming directories */
	uint32_t parent;           /* (directories) slot of the first directory naming it, +1 */
	uint64_t dotdot;           /* (directories) what ".." says */
	uint8_t type;              /* XFS_DIR3_FT_* of its mode, 0 = free/unknown */
	uint8_t flags;             /* LR_* */
};

/* A directory entry naming another directory or file: parent slot -> child slot. */
struct link_edge {
	uint32_t parent, child;
};

struct link_edges {
	struct link_edge *v;
	size_t n, cap;
};

struct scan_links {
	uint64_t nslots;
	uint64_t *ag_base;         /* first slot of each AG */
	struct link_rec *rec;
	struct link_edges *edges;  /* one array per worker */
	unsigned nworkers;
	uint64_t dirs_walked, entries;
};

struct scan_ctx;

/* After the inode btrees: size the slot index from the model's chunks. */
int  scan_links_create(struct scan_ctx *cx);
void scan_links_destroy(struct scan_ctx *cx);
/* The slot of an inode, or UINT64_MAX when no chunk holds it. */
uint64_t scan_links_slot(struct scan_ctx *cx, fs_ino_t ino);
/* Inode scan hook: one inode as read into its slot (bad: its checks failed). */
struct fs_inode;
void scan_links_note_slot(struct scan_ctx *cx, uint64_t slot, const struct fs_inode *ip,
			   bool bad);
/* XFS_DIR3_FT_* of a mode (0 when the type is unknown). */
uint8_t scan_mode_ftype(uint16_t mode);

#endif
