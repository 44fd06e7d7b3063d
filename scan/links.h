/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_LINKS_H
#define XFSX_SCAN_LINKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/format/format.h"
#include "libfs/util/spill.h"

/*
 * The directory graph and per-inode link records (doc/design.md, "The
 * check scan"): one compact record per inode slot of every chunk (a dense index
 * over the model's chunks, 64 slots a chunk), filled by the inode phase
 * (type, nlink), counted by the directory phase (references, subdirectory
 * entries, "..", the first parent seen), and the directory edges in flat
 * per-worker arrays.  The links phase joins them: reachability from the
 * root, link counts, directory hard links, "..".
 *
 * Spilling (scan_links_set_spill: -m cannot hold the edges, or
 * XFSX_TEST_SPILL), only the entries naming directories stay in memory
 * (about one a directory: all the reachability walk needs); those naming
 * anything else go to the temporary directory as (parent, child) records,
 * per-worker runs in the order the entries were walked.  The links phase
 * reads them back once (references, reached children), then, when some
 * unreachable file is named by an unreachable directory, merges those
 * entries by parent (stable: entry order kept) to report them in the
 * order the in-memory graph gives.  The graph is then never whole in
 * memory: scan_links_children's contract needs scan_ctx.keep_graph,
 * which never spills.
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

/*
 * Per slot: 4 bytes.  Link counts and references of 255 and more (a
 * directory with 253 subdirectories, a file with as many names: few) keep
 * LR_BIG in the 8-bit field and their value in a side table (as e2fsck's
 * icount does); read and set them through scan_link_nlink/scan_link_refs.
 * References are counted by the links phase from the edges.
 */
#define LR_BIG UINT8_MAX

struct link_rec {
	uint8_t nlink8;            /* on disk (LR_BIG: in the side table) */
	uint8_t refs8;             /* directory entries naming it (links phase on) */
	uint8_t type;              /* XFS_DIR3_FT_* of its mode, 0 = free/unknown */
	uint8_t flags;             /* LR_* */
};
_Static_assert(sizeof(struct link_rec) == 4, "a link record is 4 bytes");

/* What only directories need, one record per directory slot (scan_link_dir). */
struct link_dir {
	uint64_t dotdot;           /* what ".." says */
	uint32_t subdirs;          /* entries naming directories */
	uint32_t parent;           /* slot of the first directory naming it, +1 */
	uint32_t slot;
};

/* Counts of 255 and more: slot -> value, sorted by slot (unsorted tail). */
struct link_big {
	uint64_t slot;
	uint32_t value;
};

struct link_bigs {
	struct link_big *v;
	size_t n, cap, sorted;
	bool failed;               /* an entry could not be added (the links phase says -ENOMEM) */
	pthread_mutex_t lock;
};

/* A directory entry naming another directory or file: parent slot -> child slot. */
struct link_edge {
	uint32_t parent, child;
};

/*
 * The directory edges: the children a walked directory's entries name,
 * one run per directory (its entries are walked by one worker, in order),
 * 4 bytes an entry, in per-worker blocks that never move once a run is
 * closed in them.
 */
struct link_run {
	uint32_t parent;           /* the directory's slot */
	uint32_t n;
	uint32_t *child;
};

struct link_edges {
	uint32_t *v;               /* the open block */
	size_t n, cap;
	size_t run_start;          /* where the open run starts in v */
	uint32_t run_parent;
	uint32_t **blocks;         /* every block, to free */
	size_t nblocks, capblocks;
	struct link_run *run;
	size_t nrun, caprun;
	/* spilling: entries naming non-directories, not yet written, and the runs written */
	struct link_edge *sv;
	size_t sn;
	struct fs_spill_run *srun;
	size_t nsrun, capsrun;
};

struct scan_links {
	uint64_t nslots;
	uint64_t *ag_base;         /* first slot of each AG */
	struct link_rec *rec;
	struct link_bigs big_nlink, big_refs;
	struct link_dir *dir;      /* the directories, sorted by slot (scan_links_index_dirs) */
	size_t ndir, capdir;
	struct link_edges *edges;  /* one array per worker */
	unsigned nworkers;
	struct fs_spill *spill;    /* NULL, or where entries naming non-directories go */
	size_t spill_batch;        /* records a worker holds before it writes them as a run */
	int spill_err;             /* -ENOMEM: a run written could not be listed (atomic) */
	uint64_t dirs_walked, entries;
	/*
	 * The graph the links phase joined: every directory's run, sorted by
	 * parent (scan_links_children).  The edges stay when the run asked
	 * for it (scan_ctx.keep_graph: repair's namespace phase).
	 */
	struct link_run *runs;
	size_t nruns;
	uint32_t **owned;          /* runs the links phase joined from two */
	size_t nowned;
};

uint32_t scan_link_nlink(const struct scan_links *l, uint64_t slot);
void scan_link_set_nlink(struct scan_links *l, uint64_t slot, uint32_t nlink);
uint32_t scan_link_refs(const struct scan_links *l, uint64_t slot);
/* The directory record of a slot, NULL when it was no directory after the inode scan. */
struct link_dir *scan_link_dir(const struct scan_links *l, uint64_t slot);
/* The same, added when missing (repair's new directories); NULL: no memory. */
struct link_dir *scan_link_dir_add(struct scan_links *l, uint64_t slot);
/* A directory's "..", and its first parent slot + 1 (0 when it has no record). */
static inline uint64_t scan_link_dotdot(const struct scan_links *l, uint64_t slot)
{
	const struct link_dir *d = scan_link_dir(l, slot);

	return d ? d->dotdot : 0;
}

static inline uint32_t scan_link_parent(const struct scan_links *l, uint64_t slot)
{
	const struct link_dir *d = scan_link_dir(l, slot);

	return d ? d->parent : 0;
}

/* After the inode scan: one directory record per slot whose type is a directory. */
int scan_links_index_dirs(struct scan_links *l);
/* The children directory p's entries name (after the links phase), n of them. */
const uint32_t *scan_links_children(const struct scan_links *l, uint64_t p, size_t *n);
/* The edges are no longer needed (repair, once its namespace is planned): freed. */
void scan_links_drop_graph(struct scan_links *l);
/* (directory phase) Open and close the run of directory slot parent on a worker's edges. */
void scan_links_run_open(struct link_edges *a, uint32_t parent);
int scan_links_run_close(struct link_edges *a);
int scan_links_add_edge(struct link_edges *a, uint32_t child);
/*
 * Spill the entries naming non-directories to sp (owned from now on,
 * closed with the links), each worker writing a run every batch of them.
 * 0 or -ENOMEM.
 */
int scan_links_set_spill(struct scan_links *l, struct fs_spill *sp, size_t batch);
/*
 * (directory phase) An entry of directory slot parent naming non-directory
 * child, spilling: buffered, written when the worker's batch is full.  A
 * write error stays in the spill (fs_spill_error: the run fails when the
 * phase ends, naming the directory); the records are dropped.
 */
void scan_links_spill_edge(struct scan_links *l, unsigned worker, uint32_t parent,
			   uint32_t child);

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
