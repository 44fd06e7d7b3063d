/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_H
#define XFSX_SCAN_H

#include <stdio.h>

#include "libfs/io/cache.h"
#include "libfs/fs.h"
#include "libfs/format/findings.h"
#include "libfs/format/bmap.h"
#include "libfs/format/inode.h"
#include "libfs/io/readahead.h"
#include "libfs/format/verify.h"
#include "libfs/util/mem.h"
#include "libfs/util/budget.h"
#include "libfs/util/spill.h"
#include "scan/model.h"

struct scan_links;
struct scan_pptrs;
#include "libfs/format/btree.h"

struct scan_opts {
	unsigned threads;          /* worker threads (0: one per CPU, at most the AG groups) */
	uint32_t ag_stride;        /* AGs per work item (0: 1) */
	uint64_t cache_bytes;      /* metadata cache cap (0: 256 MiB, or a quarter of RAM if less;
				    * with mem_bytes: the budget's share) */
	uint64_t mem_bytes;        /* -m: the whole run's cap (0: none); the model spills */
	const char *tmpdir;        /* --tmpdir: where the model spills (NULL: $TMPDIR, /tmp) */
	unsigned qdepth;           /* reads in flight per worker (0: 16) */
	int progress;              /* 1 force, 0 never, -1 when stderr is a terminal */
	unsigned progress_interval; /* seconds between progress lines (0: 0.2 s on a terminal,
				     * else 1 s) */
	const char *progress_prefix; /* before each progress line (NULL: none) */
	bool log_zeroed;           /* a dirty log is thrown away (repair -L): its finding says
				    * so instead of "mount the filesystem to replay it" */
};

struct scan_progress;

/* Block ranges of one AG (rmap OWN_INODES records, for chunks the inobt lost). */
struct scan_ranges {
	struct scan_range {
		fs_agblock_t agbno;
		uint32_t len;
	} *v;
	size_t n, cap;
};

/* The phases of a run, in order (scan_run times each). */
enum scan_phase {
	SCAN_PH_HEADERS, SCAN_PH_FREESP, SCAN_PH_INOBT, SCAN_PH_INODES, SCAN_PH_BLOCKS,
	SCAN_PH_LINKS, SCAN_PH_UNLINKED, SCAN_PH_OWNERS, SCAN_PH_NR
};
/* "headers", "freesp", "inobt", "inodes", "blocks", "links", "unlinked", "owners". */
const char *scan_phase_name(enum scan_phase ph);

/* The realtime section (phase_rt.c). */
struct scan_rt {
	pthread_mutex_t lock;
	struct scan_rt_ext { uint64_t start, len; } *ext;  /* rt blocks the files map */
	size_t n, cap;
	/* computed in phase 7 when judged */
	bool judged;               /* every fork read, both inodes usable: compared */
	bool computed;             /* every fork read, geometry sound: bitmap/summary computed */
	uint8_t *bitmap;           /* what the bitmap file must hold (rbmblocks blocks) */
	uint32_t *summary;         /* what the summary file must hold (sumblocks blocks) */
	uint64_t bmbytes, sumblocks, frextents;
	bool *bad_bm, *bad_sum;    /* per file block: disagrees (or unreadable, or a hole) */
	bool frextents_bad;
};

/* What one scan observed: the model, link records and findings, kept for
 * the summary of xfsx_check and for xfsx_repair. */
struct scan_ctx {
	struct fs *fs;
	struct fs_findings *fl;
	const struct scan_opts *opts;
	struct fs_cache *cache;    /* shared by every phase */
	struct model *model;       /* block ownership and inode chunks as observed */
	struct scan_links *links;  /* per-inode link records and the directory graph (links.h) */
	struct scan_pptrs *pptrs;  /* parent pointers and entries as link keys (pptr.h), or NULL */
	struct scan_deferq *deferq;/* per work item of phases 4 and 5: inodes left for phase 5 */
	struct scan_deferq *deferw;/* per worker: the inode scan's own queue (scan_defer) */
	uint32_t parts;            /* work items per AG in phases 4 and 5 (scan_item_*) */
	const struct scan_step *const *steps; /* the per-inode steps in order, NULL-terminated */
	struct scan_ranges *rmap_inodes; /* per AG: the rmapbt's OWN_INODES ranges (phase 2) */
	struct fs_ioq **ioq;       /* one submission queue per worker */
	struct fs_ioq **ioq_aux;   /* a second per worker: reads while the first streams */
	struct scan_batch_mem *batch_mem; /* per worker: phase 5 batches' arrays (phase_blocks.c) */
	unsigned workers;
	struct scan_progress *progress;
	struct fs_ra_stats ra;     /* readahead totals (under ra_lock) */
	pthread_mutex_t ra_lock;
	uint32_t ra_inflight;      /* bytes in flight on a queue at once (SCAN_RA_INFLIGHT) */
	/*
	 * -m, phase 8: the bytes of rmap comparison lists the workers hold
	 * (phase_rmap.c), kept within the model's share: a worker waits while
	 * another holds lists and its own would pass it.
	 */
	pthread_mutex_t rmap_lock;
	pthread_cond_t rmap_cv;
	uint64_t rmap_held;
	uint32_t ags_checked;
	fs_agnumber_t ags_past_end; /* the last AGs, which start past the device's end: not read */
	uint32_t headers_read;
	uint64_t btree_blocks;     /* btree blocks walked (all trees) */
	uint64_t kept_bytes;       /* scan_keep_cached's running total (atomic) */
	uint64_t free_extents;     /* bno records */
	uint64_t inodes;           /* inodes the inode btrees hold */
	uint64_t inodes_checked;   /* inodes read and verified */
	uint64_t directories;      /* directories walked */
	uint64_t dir_entries;      /* live entries (not . and ..) in them */
	uint64_t fork_extents;     /* extents mapped by the inodes' forks */
	uint64_t bmbt_blocks;      /* bmbt blocks of the inodes' forks */
	uint64_t deferred;         /* inodes the scan kept for phase 5 */
	uint64_t deferred_early;   /* ... whose non-directory work ran during the scan */
	uint64_t deferred_spilled; /* ... that waited for phase 5 in the temporary directory */
	uint64_t deferred_held;    /* -m: bytes of the queues kept in memory past their part's scan */
	bool spill_forced;         /* XFSX_TEST_SPILL: whatever can spill does */
	bool forks_complete;       /* every in-use inode's forks loaded cleanly */
	bool keep_graph;           /* (set before the run) keep the directory graph (links.h) */
	bool *chunks_known;        /* per AG: every inode chunk is in the model (the inobt was
				    * walked whole, or a whole rmapbt gave back what it lost) */
	bool *rmap_whole;          /* per AG: the rmapbt was walked whole, every record valid */
	double phase_seconds[SCAN_PH_NR]; /* wall time of each phase run */
	double phase_cpu[SCAN_PH_NR];     /* CPU seconds of the process, all threads, per phase */
	struct fs_spill *spill;    /* the model's runs, when -m (or XFSX_TEST_SPILL) asks */
	struct fs_spill *stage;    /* -m: the cache's dirty buffers past its cap (a repair's) */
	uint64_t stage_over;       /* XFSX_TEST_SPILL: staged past this many bytes instead */
	struct fs_budget budget;   /* -m as planned (libfs/util/budget.h) */
	uint64_t mem_min_mib;      /* -ERANGE from the run: the smallest -m that works */
	const char *spill_failed;  /* the temporary directory an error came from, or NULL */
	/*
	 * Without a spill (no -m): where phase 8's rmap lists of a big AG go
	 * past RMAP_SOFT_BYTES a side (the temporary directory, unless it is on
	 * the filesystem's own device), or NULL: no bound.
	 */
	const char *rmap_soft_dir;
	bool stage_soft;           /* no -m: the stage past STAGE_SOFT_BYTES, failures kept in memory */
	struct fs_mem_sample phase_mem[SCAN_PH_NR]; /* memory at each phase's end (util/mem.h) */
	uint64_t est_inodes;       /* in-use inodes the AGIs count (estimate.c) */
	uint64_t est_fixed;        /* the estimate's part that is not per inode */
	uint64_t est_io;           /* its I/O buffers (grow with the inodes, up to the bytes in flight) */
	uint64_t mem_estimate;     /* the memory a full check needs, from the AG headers */
	struct scan_rt rt;
};

/* The "filesystem" member both tools' JSON starts with (device, geometry, log, mount). */
void scan_print_fs_json(const struct fs *fs, const char *path, FILE *out);

/* The whole run: phases in order (the tools parse options and render). */
int  scan_run(struct scan_ctx *cx);
/*
 * The process's memory now, with the bytes cx's cache holds (scan_run: at
 * each phase's end), and whether the model spilled since *spill_mark
 * (the caller's: runs written at its last sample, updated).
 */
void scan_mem_sample(const struct scan_ctx *cx, struct fs_mem_sample *s, uint64_t *spill_mark);
/*
 * estimate.c: after the headers phase, the memory a full run needs from the
 * AG headers (inode counts, btree block counts, AG count, cache_cap):
 * cx->mem_estimate for a check; scan_memory_estimate_repair for a repair
 * (writes: not -n, so the verify step scans the result again).
 */
void scan_estimate_memory(struct scan_ctx *cx, uint64_t cache_cap);
uint64_t scan_memory_estimate_repair(const struct scan_ctx *cx, bool writes);
/* "memory: a full <what> needs about N MiB (...); this run peaked at M MiB" */
void scan_print_estimate(const struct scan_ctx *cx, uint64_t estimate, const char *what, FILE *out);
void scan_teardown(struct scan_ctx *cx);
/*
 * What a repair's verify no longer needs of the scan it planned from,
 * freed before the second scan starts: the block model's extents (its
 * inode chunks and the cache stay: the report and the commit use them;
 * the repair frees the links and the directory graph itself, once it has
 * kept what its report needs); under -m the cache's clean buffers go too
 * and its dirty ones past its floor are staged.
 */
void scan_release_for_verify(struct scan_ctx *cx);
/* --tmpdir, else $TMPDIR, else /tmp. */
const char *scan_tmpdir(const struct scan_opts *o);
/* The model's spill error or the cache's staging one (the temporary directory full or gone), or 0. */
int scan_spill_error(const struct scan_ctx *cx);
/* err of a run as a message: -m too small (with the smallest), the tmpdir's error, else strerror. */
int scan_strerror(const struct scan_ctx *cx, int err, char *buf, size_t len);

/* Phase 1: superblocks, AGF, AGI and AGFL of every AG. */
int scan_phase_headers(struct scan_ctx *cx);
/* Phase 2: static ownership (headers, log, AGFL) and the free space btrees. */
int scan_phase_freesp(struct scan_ctx *cx);
/* Phase 3: the inode btrees (inobt, finobt) against each other and the AGI. */
int scan_phase_inobt(struct scan_ctx *cx);
/*
 * Phase 4, the inode scan: every inode of every chunk read once, streamed
 * (never cached); its v3 core rules, its state against the inobt free
 * mask, and the per-inode steps below.
 */
int scan_phase_inodes(struct scan_ctx *cx);

/* One inode as the inode scan read it, handed to the per-inode steps. */
struct scan_inode {
	fs_agnumber_t agno;
	fs_agino_t agino;
	fs_ino_t ino;
	fs_daddr_t daddr;          /* its block */
	const unsigned char *dip;  /* inodesize bytes, valid during the call only */
	struct fs_inode ip;        /* decoded */
	uint64_t slot;             /* its link record (scan/links.h) */
	bool core_ok;              /* the inode verifier found nothing */
	bool forks_ok;             /* ... nothing that moves where its forks' blocks are */
};

/*
 * One work item of the inode scan or phase 5 (a part of an AG's inode
 * chunks): what the per-inode steps tally (one worker owns it).
 */
struct scan_ag {
	struct scan_ctx *cx;
	fs_agnumber_t agno;
	uint32_t item;             /* agno * cx->parts + part: its deferq */
	unsigned worker;
	int err;                   /* first hard error (-ENOMEM): the run stops */
	uint64_t checked;          /* inodes read and verified */
	uint64_t extents, bmbt;    /* fork extents and bmbt blocks mapped */
	/*
	 * Tallies kept here and added to the run's at the item's end: an
	 * atomic add per inode or directory would bounce a cache line the
	 * other workers read for every entry (cx, cx->links).
	 */
	uint64_t deferred;         /* inodes deferred to phase 5 */
	uint64_t dirs, entries;    /* directories walked, their entries */
	bool incomplete;           /* some in-use inode's forks are unknown */
	bool deferring;            /* the inode scan: block reads wait for phase 5 */
	struct fs_findings scratch;/* one inode's verifier findings */
};

/* Readahead lists of filesystem blocks (phase_blocks.c). */
struct scan_ra_list {
	const struct fs_geom *g;
	struct fs_ra_extent *v;
	size_t n, cap;
	uint64_t bytes;
};

/* Work phase 5 does for a deferred inode. */
enum { DEFER_FORKS = 1, DEFER_DIR = 2, DEFER_ATTR = 4, DEFER_SYMLINK = 8 };

/*
 * A deferred inode's fork maps in phase 5, loaded at most once each and
 * shared by its steps (the forks step leaves the maps it loaded here when
 * a later step of the batch needs them).
 */
struct scan_maps {
	struct fs_bmap fork[2];    /* XFS_DATA_FORK, XFS_ATTR_FORK */
	int8_t state[2];           /* 0 not loaded, 1 loaded, negative errno */
};
/* The fork's map, loaded silently on first use; NULL when it cannot be (*err: why). */
const struct fs_bmap *scan_maps_get(struct scan_ctx *cx, const struct scan_inode *ci,
				    struct scan_maps *maps, int whichfork, int *err);
/* Keep m (loaded by a step) as the fork's map; maps owns it now. */
void scan_maps_keep(struct scan_maps *maps, int whichfork, struct fs_bmap *m);
void scan_maps_free(struct scan_maps *maps);

/*
 * One per-inode step of the scan.  The engine (phase_inodes.c, phase
 * blocks.c) runs the steps of cx->steps in order and knows them only
 * through this table (run.c builds it): in the inode scan, `inode` for
 * every inode in use, which keeps for phase 5 (scan_defer, its bits in
 * `defer`) what needs blocks from outside the inode.  In phase 5, per
 * batch and per stage: every step's `readahead` of the stage (the blocks
 * its deferred work will read, into l until it holds budget bytes), one
 * readahead run, then every step's `blocks` (the deferred work).  `what`
 * is all the inode's DEFER_* bits of the batch: a step acts on its own and
 * may keep a map for the others (scan_maps).  Steps are called only for
 * inodes with one of their bits set.
 */
struct scan_step {
	const char *name;
	uint8_t defer;             /* the DEFER_* bits this step's deferred work carries */
	uint8_t stage;             /* phase 5: steps of one stage share a readahead run */
	void (*inode)(struct scan_ag *s, const struct scan_inode *ci);
	int  (*readahead)(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
			  uint8_t what, struct scan_ra_list *l, uint64_t budget);
	int  (*blocks)(struct scan_ag *s, const struct scan_inode *ci, struct scan_maps *maps,
		       uint8_t what);
};
#define SCAN_STAGES 2

/*
 * The steps, in the order they run: fork block maps into the model and
 * di_nblocks (phase_forks.c; stage 0: bmbt blocks); directories (phase
 * dirs.c; stage 1); xattrs, remote symlink blocks and special files
 * (phase_attrs.c; stage 1).
 */
extern const struct scan_step scan_step_forks, scan_step_dirs, scan_step_attrs;

/* One AG's deferred inodes (phase_blocks.c): a copy of each, inodesize bytes. */
struct scan_deferred {
	uint64_t slot;
	fs_ino_t ino;
	fs_daddr_t daddr;
	uint8_t what;              /* DEFER_* */
};

struct scan_deferq {
	struct scan_deferred *v;
	unsigned char *dips;
	size_t n, cap;
	size_t nondir;             /* items with work besides a directory walk */
	/*
	 * -m (or XFSX_TEST_SPILL): v and dips in the temporary directory from
	 * the end of the item's scan to its turn in phase 5 (n stays)
	 */
	bool spilled;
	struct fs_spill_run run_v, run_dips;
};

/* During the scan: keep ci for phase 5 with the work in `what`.  0 or -ENOMEM. */
int scan_defer(struct scan_ag *s, const struct scan_inode *ci, uint8_t what);
/*
 * At the end of a work item's scan: the work of its kept inodes that need
 * not wait for the directory graph is done now (the scan's own queue is
 * idle), so only directories wait for phase 5: they move from the
 * worker's queue to the item's (cx->deferq), and the worker's queue is
 * empty for its next item.
 */
int scan_defer_flush(struct scan_ag *s);
/* After the inode scan: the workers' queues (empty by then) give back their memory. */
void scan_defer_release(struct scan_ctx *cx);

/*
 * Phase 5, per AG in batches: readahead of the batch's bmbt blocks, then
 * the deferred fork maps; readahead of its directory, attr and remote
 * symlink blocks, then those checks.
 */
int scan_phase_blocks(struct scan_ctx *cx);

int scan_ra_add(struct scan_ra_list *l, fs_fsblock_t fsb, uint32_t blocks);
/* Read the list into the cache through ioq (the list is left in another order). */
/* The per-worker arrays the batches of phases 4 and 5 keep between calls (cx->batch_mem). */
int scan_batch_mem_create(struct scan_ctx *cx);
void scan_batch_mem_free(struct scan_ctx *cx);
void scan_ra_run(struct scan_ctx *cx, struct fs_ioq *ioq, unsigned qdepth, struct scan_ra_list *l);
/*
 * The bytes the scan has in flight on one queue (scan_ctx.ra_inflight, the
 * readahead's inflight_max), which also bound the slot buffers the queue
 * keeps: windows of up to 2 MiB, two of them at once, or sixteen inode
 * clusters' reads.  Unbounded, sixteen 2 MiB windows a queue held 64 MiB
 * for two workers.  Under a small -m it is cut so a worker's two queues
 * fit the 1 MiB a worker of the fixed part.
 */
#define SCAN_RA_INFLIGHT (4u << 20)
/* Every block of a map into l (single fs blocks), until l holds budget bytes. */
int scan_ra_map(const struct fs_bmap *m, struct scan_ra_list *l, uint64_t budget);

/* Whole-filesystem link rules: reachability, link counts, directory hard links, "..". */
int scan_phase_links(struct scan_ctx *cx);
/* Phase 7, after the links: the AGI unlinked lists of every AG, then the quota and rt inodes
 * (phase_unlinked.c). */
int scan_phase_unlinked(struct scan_ctx *cx);
/* Last: every block owned once (duplicate claims across all scanned owners). */
int scan_phase_owners(struct scan_ctx *cx);

/* The last phase's rmap/refcount comparison of one AG (phase_rmap.c). */
struct scan_rmap_ag;
/* Walk the AG's refcount and rmap trees; CoW staging extents go into the model. */
int  scan_rmap_prepare(struct scan_ctx *cx, fs_agnumber_t agno, struct scan_rmap_ag **out);
/* After model_ag_finish: rmap.* and refcount.* findings. */
int  scan_rmap_compare(struct scan_ctx *cx, fs_agnumber_t agno, struct scan_rmap_ag *s);
void scan_rmap_free(struct scan_rmap_ag *s);

/* Shared by the btree phases (btcommon.c). */
struct fs_btree_ops;

/* One AG btree walked with findings by phase 2 or 3: first member of the phase's tree state. */
struct scan_bt {
	const struct fs_btree_ops *ops;
	enum model_class cls;      /* its blocks' owner class in the model */
	fs_agblock_t root;
	fs_agblock_t leaf;         /* the leaf whose records are being visited */
	uint64_t blocks;           /* blocks accepted by the walk */
	uint32_t bad_blocks;       /* blocks rejected (their subtrees skipped) */
	bool walked;               /* the walk ran (root and height plausible) to its end */
	bool kept;                 /* its blocks stay cached (a later phase walks it again);
				    * else each leaves the cache once walked */
};
/* One AG's walks in phase 2 or 3: first member of the phase's walk state (the callbacks' priv). */
struct scan_btw {
	struct scan_ctx *cx;
	fs_agnumber_t agno;
	unsigned worker;
	struct scan_bt *t;         /* the tree being walked */
	int err;                   /* first operational failure */
};
/*
 * Walk t from root: every block accepted goes into the model as t->cls,
 * is held to the fill rule below the root and has its children read
 * ahead; every record goes to visit_rec(w, rec).  Nothing is walked when
 * the root or height is impossible (phase 1 reported it).
 */
void scan_btree_walk(struct scan_btw *w, struct scan_bt *t, fs_agblock_t root, uint32_t levels,
		     int (*visit_rec)(void *priv, const void *rec));
/*
 * Set w up to walk one of AG agno's btrees (ops) from root, levels high,
 * reporting to fl, blocks read through the cache.  priv is the callbacks'
 * and must point to a struct whose first member is the struct scan_ctx *.
 * The caller adds visit_block / visit_rec.  false (nothing to walk) when
 * the root or height is impossible: phase 1 reported that.
 */
bool scan_btree_walk_init(struct scan_ctx *cx, const struct fs_btree_ops *ops, fs_agnumber_t agno,
			  fs_agblock_t root, uint32_t levels, struct fs_findings *fl, void *priv,
			  struct fs_btree_walk *w);
/*
 * Whether a tree of bytes that a later phase walks again may stay cached
 * (scan_bt.kept) until then: while every such tree kept adds up to a
 * sixteenth of the cache's cap at most (16 MiB by default; thread-safe).
 * Past that, trees are read again: 10,000 AGs' one-block rmap and refcount
 * roots otherwise held 80 MB between phase 2 and the owners phase (a
 * million-inode image's take 48 blocks).
 */
bool scan_keep_cached(struct scan_ctx *cx, uint64_t bytes);
void scan_btree_readahead(struct scan_ctx *cx, unsigned worker, const struct fs_btree_ops *ops,
			   fs_agnumber_t agno, const void *block, uint32_t numrecs);
/* A block below the root must be at least half full; reports and returns false if not. */
bool scan_btree_minrecs(struct scan_ctx *cx, const struct fs_btree_ops *ops, fs_agnumber_t agno,
			 fs_agblock_t agbno, uint32_t level, const void *block);

/*
 * A fork's mapped extents and bmbt blocks into the model as the inode's
 * (realtime data stays out).  0 or -ENOMEM (extents outside an AG, which
 * the map's loader reported, are skipped).  Repair adds the forks of the
 * inodes whose core it mended this way.
 */
int scan_model_add_fork(struct scan_ctx *cx, fs_ino_t ino, const struct fs_inode *ip,
			int fork, const struct fs_bmap *m);

/*
 * One per-AG pass of a phase: fn(priv, agno, worker) for every AG on the
 * worker pool (ag_stride AGs a work item), with progress named `name`.
 */
int scan_each_ag(struct scan_ctx *cx, const char *name,
		 int (*fn)(void *priv, fs_agnumber_t agno, unsigned worker), void *priv);
/*
 * The same over cx->parts work items per AG (item = agno * parts + part),
 * for phases 4 and 5: one AG's inodes may hold most of the work (a tree
 * of files with xattrs lives in one AG), and parts keep every worker busy.
 */
int scan_each_item(struct scan_ctx *cx, const char *name,
		   int (*fn)(void *priv, uint32_t item, unsigned worker), void *priv);
/* Part `part` of an AG's n inode chunks: [*lo, *hi), cut where no block holds two chunks. */
void scan_item_chunks(const struct scan_ctx *cx, const struct model_ichunk *ic, size_t n,
		      uint32_t part, size_t *lo, size_t *hi);

/* Realtime (phase_rt.c): note a realtime file's data extents (thread-safe). */
int scan_rt_note(struct scan_ctx *cx, fs_ino_t ino, const struct fs_bmap *m);
/* A realtime device given that is smaller than the section: rt.device_small. */
void scan_rt_device(struct scan_ctx *cx);
/* Compare the bitmap and summary files (their data fork maps) with the rt extents noted. */
int scan_rt_check(struct scan_ctx *cx, const struct fs_bmap *bm, const struct fs_bmap *sum);
/*
 * The bitmap, summary and free count the files' rt extents call for,
 * without comparing (a realtime inode is not usable: repair makes it
 * again from them); rt->computed says whether they were.  forks_known:
 * the caller knows every kept inode's forks were loaded since (repair,
 * once phase 3 loaded those the scan could not), so every rt extent is noted.
 */
int scan_rt_compute(struct scan_ctx *cx, bool forks_known);
void scan_rt_free(struct scan_ctx *cx);

/* Read one filesystem block of an AG through the cache into buf. */
int scan_read_agblock(struct scan_ctx *cx, fs_agnumber_t agno, fs_agblock_t agbno, void *buf);
/* The same by fsblock, as fs_bmap_ctx's read_fsblock (priv: the scan_ctx); -ERANGE outside. */
int scan_read_fsblock(void *cx, fs_fsblock_t fsb, void *buf);
/* A fork's block map through the cache; fl NULL loads silently (the fork checks report). */
int scan_load_map(struct scan_ctx *cx, const void *dip, const struct fs_inode *ip,
		   int whichfork, struct fs_findings *fl, struct fs_bmap *m);
/*
 * Whether the inode bytes at dip are inode agino of AG agno by their own
 * word: di_ino (v3), and the inode magic or (a damaged magic) version 3 and
 * the filesystem's UUID.  For chunks no inode btree lists.
 */
bool scan_inode_proves(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t agino,
		       const void *dip);
/*
 * Whether inode bytes name themselves inode ino whatever their magic and
 * version say: di_ino is ino and di_uuid the filesystem's (24 bytes no
 * other block holds there).  Such an inode's magic and version are
 * mended, as xfs_repair resets them; it is never cleared for them alone.
 */
bool scan_inode_identified(const struct fs_geom *g, fs_ino_t ino, const void *dip);
/*
 * An identified inode whose magic or version is wrong, mended into out
 * (inodesize bytes): magic and version 3 set, the CRC restamped only when
 * the stored one matched the damaged bytes (a stale CRC stays stale: the
 * rest is judged as it is).  false: nothing to mend, out untouched.
 */
bool scan_inode_mend_identity(const struct fs_geom *g, fs_ino_t ino, const void *dip,
			      unsigned char *out);
/* A verifier context for a block of inode ino's forks at fsb, reporting to the run. */
struct fs_vctx scan_vctx(struct scan_ctx *cx, fs_ino_t ino, fs_fsblock_t fsb);
/* Add one readahead's counts to the run's totals. */
void scan_ra_account(struct scan_ctx *cx, const struct fs_ra_stats *st);

/* Progress on stderr: phase name, units done/total, ETA. */
void scan_progress_phase(struct scan_ctx *cx, const char *name, uint64_t total);
void scan_progress_add(struct scan_ctx *cx, uint64_t done);
void scan_progress_end(struct scan_ctx *cx);
void scan_progress_free(struct scan_ctx *cx);

/* Option parsing (opts.c): 0, or -1 for a bad value. */
int scan_parse_memory(const char *s, uint64_t *bytes);
int scan_parse_subopts(const char *s, struct scan_opts *o);
/*
 * The same, handing suboptions other than ag_stride to unknown (xfs_repair's
 * bhash, ihash, force_geometry, noquota...) instead of failing; a bad
 * ag_stride value still fails.
 */
int scan_parse_subopts_ex(const char *s, struct scan_opts *o,
			  void (*unknown)(void *priv, const char *subopt), void *priv);

/* AG agno starts past the end of the device, so the scan never read it. */
static inline bool scan_ag_unread(const struct scan_ctx *cx, fs_agnumber_t agno)
{
	return agno >= cx->fs->g.agcount - cx->ags_past_end;
}

#endif
