/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_LINKS_H
#define XFSX_SCAN_LINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format/format.h"

/*
 * The directory graph and per-inode link records (doc/design.md, "The
 * check scan"): one compact record per inode slot of every chunk (a dense index
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
	LR_ON_UNLINKED = 128,      /* (phase 7) on an AGI unlinked list */
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
	/*
	 * The graph the links phase joined, kept when the run asked for it
	 * (scan_ctx.keep_graph: repair's namespace phase): the edges sorted
	 * by parent, a parent's edges gedge[gfirst[p] .. gfirst[p + 1]).
	 */
	uint64_t *gfirst;
	struct link_edge *gedge;
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
/* Quota and realtime inodes: in use, named by the superblock, in no directory. */
bool scan_is_metadata_ino(const struct scan_ctx *cx, fs_ino_t ino);
/* The inode number of a slot (and its AG). */
fs_ino_t scan_slot_ino(const struct scan_ctx *cx, uint64_t slot, fs_agnumber_t *agno);
/*
 * Walk the entries of directory ino (its core at dip) again, for repair:
 * the same walker and reads as the scan, findings into fl (a scratch list).
 * The number of findings, or a negative errno (from fn too).
 */
struct fs_dirent;
int scan_dir_entries(struct scan_ctx *cx, fs_ino_t ino, const void *dip, struct fs_findings *fl,
		     int (*fn)(void *priv, const struct fs_dirent *e), void *priv,
		     fs_ino_t *dotdot);

/* XFS_DIR3_FT_* of a mode (0 when the type is unknown). */
uint8_t scan_mode_ftype(uint16_t mode);

#endif
