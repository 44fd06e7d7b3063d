/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SCAN_MODEL_H
#define XFSX_SCAN_MODEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/format/format.h"
#include "libfs/util/spill.h"

/*
 * The in-core model the scan builds of the filesystem as observed, shaped for
 * repair to consume (doc/design.md, "The check scan"):
 *  - per AG, every observed use of a block range as an extent (agbno, len,
 *    owner class, owner id, offset), kept as sorted extents rather than one
 *    byte per block.  Overlaps between owners are duplicate blocks; gaps are
 *    leaked blocks; repair bulk-loads bno/cnt/rmap/refcount btrees from it.
 *  - per AG, one record per inode chunk as the inode btrees describe it and
 *    as the inodes turn out to be.
 * Adding is thread-safe (an AG's data blocks may be found by any worker);
 * sorting and queries of an AG run when its adds are finished.
 */

/* Who owns a block range.  Free space is an owner too: the bno btree's. */
enum model_class {
	MC_FREE,                     /* a bno btree record */
	MC_AGHDR,                    /* sb, AGF, AGI, AGFL sectors */
	MC_LOG,                      /* the internal log */
	MC_AGFL,                     /* a block on the AG free list */
	MC_BNOBT,
	MC_CNTBT,
	MC_RMAPBT,
	MC_REFCBT,
	MC_INOBT,
	MC_FINOBT,
	MC_INODES,                   /* an inode chunk (owner: first inode) */
	MC_DATA,                     /* file/dir/symlink data fork (owner: inode) */
	MC_ATTR,                     /* attr fork (owner: inode) */
	MC_BMBT,                     /* extent map btree block (owner: inode) */
	MC_COW,                      /* CoW staging extent */
	MC_NR
};

/*
 * 24 bytes (the model is the scan's biggest structure after the link
 * records): a file offset has 54 bits on disk (a bmbt record's startoff),
 * the class and flags share its word.
 */
#define MODEL_OFFSET_BITS 54
struct model_ext {
	fs_agblock_t agbno;
	uint32_t len;
	uint64_t owner;              /* inode number, or 0 for static owners */
	uint64_t offset : MODEL_OFFSET_BITS;  /* file offset in blocks (data/attr), else 0 */
	uint64_t cls : 5;            /* enum model_class */
	uint64_t flags : 5;          /* MODEL_EXT_* */
};
_Static_assert(sizeof(struct model_ext) == 24, "model_ext is 24 bytes");

enum { MODEL_EXT_UNWRITTEN = 1, MODEL_EXT_ATTRFORK = 2 /* MC_BMBT of the attr fork */,
       MODEL_EXT_NEW = 4 /* (repair) blocks this repair allocates, e.g. a rebuilt directory's */ };

/* One inode chunk. */
struct model_ichunk {
	fs_agino_t startino;
	uint16_t holemask;           /* inobt: 4-inode groups without space */
	uint8_t count, freecount;    /* inobt's counters */
	uint8_t where;               /* MODEL_IC_*: which structures list it */
	uint64_t ir_free;            /* inobt's free mask */
	uint64_t fino_free;          /* finobt's free mask, when listed there */
	uint64_t seen_free;          /* free as the inodes themselves say */
	uint64_t seen_mask;          /* inodes actually examined */
};

/*
 * Where a chunk was found.  Beyond the inode btrees ("uncertain" chunks, as
 * xfs_repair calls them): MODEL_IC_RMAP, an rmap OWN_INODES record no
 * inobt record covers; MODEL_IC_DIRENT, directory entries pointing into
 * it.  The inode scan reads uncertain chunks too and keeps only inodes
 * that prove themselves (magic and their own number); MODEL_IC_FOUND marks
 * an uncertain chunk where at least one did.
 */
enum {
	MODEL_IC_INOBT = 1, MODEL_IC_FINOBT = 2, MODEL_IC_RMAP = 4, MODEL_IC_DIRENT = 8,
	MODEL_IC_FOUND = 16,
};
#define MODEL_IC_UNCERTAIN (MODEL_IC_RMAP | MODEL_IC_DIRENT)

/*
 * Extents added by other threads wait in stripes (one per thread, by a
 * thread number modulo MODEL_STRIPES) until model_ag_finish moves them
 * into ext: AG workers add fork extents to every AG, so one lock per AG
 * would have them queue on each other.  Each on its own cache line.
 */
#define MODEL_STRIPES 8
struct model_stripe {
	_Alignas(64) pthread_mutex_t lock;
	struct model_ext *ext;
	size_t n, cap;
};

/*
 * The chunk fields come first and are only read once the inode btree
 * phase is done; the fields extents are added through start on cache
 * lines of their own, so adding an extent never evicts a line another
 * worker's chunk lookups (scan_links_slot) are reading.
 */
struct model_ag {
	struct model_ichunk *ic;
	size_t nic, capic;
	bool ic_sorted;
	/*
	 * Direct index over the sorted chunks: icidx[s] = how many chunks
	 * start below agino s << icshift (nicidx slots + 1), so a lookup
	 * searches only the chunks starting in its slot.  NULL: search all.
	 */
	uint32_t *icidx;
	size_t nicidx;
	unsigned int icshift;
	_Alignas(64) pthread_mutex_t lock;
	struct model_ext *ext;       /* stripe 0, and every stripe once finished */
	size_t n, cap;
	bool sorted;
	/*
	 * Spilled (model_set_spill): sorted runs of the AG's extents on disk.
	 * nhead: runs[0..nhead-1] are the finished AG (model_ag_finish's
	 * result) in pieces of at most MODEL_SEG extents, one after another in
	 * block order; later runs are adds since.  mirror: ext holds exactly
	 * the head, so it can be dropped (model_ag_release) and read back by
	 * the next query that wants an array; the sweeps read the head a
	 * piece at a time (struct model_cursor).  runlock (taken last) guards
	 * runs, for stripes spilling under their own lock.
	 */
	size_t nhead;
	bool mirror;
	pthread_mutex_t runlock;
	struct fs_spill_run *runs;
	size_t nruns, capruns;
	struct model_stripe stripe[MODEL_STRIPES - 1];
};

struct model {
	const struct fs_geom *g;
	fs_agnumber_t agcount;
	struct model_ag *ag;
	/* spilling: NULL, or where runs go once held extents pass limit bytes */
	struct fs_spill *spill;
	size_t limit, batch;         /* batch: the fewest extents an array spills */
	size_t seg, chunk;           /* MODEL_SEG, MODEL_CURSOR_EXT (fewer for small batches) */
	/*
	 * Extents in memory, counted per thread stripe (atomic, each on a
	 * cache line of its own; a stripe's count may go below 0): one
	 * counter bumped for every extent by every worker bounced its line
	 * between them.  model_held sums them.
	 */
	struct { _Alignas(64) int64_t n; } held[MODEL_STRIPES];
	int err;                     /* the first spill error (sticky) */
};

int  model_create(const struct fs_geom *g, struct model **out);
void model_destroy(struct model *m);
/*
 * Every AG's extents dropped, in memory and spilled (a repair's planning
 * scan once the plan is made); the inode chunks stay (link slots are
 * found through them).  Queries of extents afterwards see none.
 */
void model_drop_extents(struct model *m);

/*
 * -EINVAL when the range is not inside the AG (the caller reports it) or
 * the offset has more than MODEL_OFFSET_BITS bits, -ENOMEM.
 */
int model_add(struct model *m, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len,
	      enum model_class cls, uint64_t owner, uint64_t offset, uint8_t flags);

/* Sort an AG's extents by block and merge the contiguous runs of one owner. */
int model_ag_finish(struct model *m, fs_agnumber_t agno);

/*
 * An AG's extents (sorted once model_ag_finish ran), as one array: a
 * spilled AG is read back whole (the repair's phases).  The sweeps below
 * and struct model_cursor read a spilled AG a piece at a time instead.
 */
const struct model_ext *model_ag_extents(const struct model *m, fs_agnumber_t agno, size_t *n);

/* How many extents the AG has, in memory or spilled, without reading them back. */
size_t model_ag_count(const struct model *m, fs_agnumber_t agno);

/*
 * A finished AG's extents in block order, one at a time: from memory, or
 * from a spilled AG's runs through a buffer of MODEL_CURSOR_EXT extents,
 * so a sweep over an AG holds that much whatever the AG's size.
 * model_cursor_peek: the current extent (NULL at the end or on a read
 * error, which is kept in model_error too); valid until the next call.
 * No other thread may change the AG meanwhile.
 */
#define MODEL_SEG (1u << 15)          /* extents a piece of a spilled finished AG, at most */
#define MODEL_CURSOR_EXT (1u << 13)   /* extents a cursor reads at once, at most */
struct model_cursor {
	struct model *m;
	const struct model_ext *v;   /* the extents at hand */
	size_t n, i;
	struct fs_spill_run *segs;   /* spilled: the head's pieces (a copy) */
	size_t nsegs, seg;
	uint64_t at;                 /* extents of segs[seg] read so far */
	struct model_ext *buf;
	int err;
};
void model_cursor_open(const struct model *m, fs_agnumber_t agno, struct model_cursor *c);
const struct model_ext *model_cursor_peek(struct model_cursor *c);
void model_cursor_next(struct model_cursor *c);
/* 0, or the read error that ended the sweep early. */
int model_cursor_close(struct model_cursor *c);

/*
 * Blocks claimed by more than one extent.  For every extent that starts
 * inside an earlier one, cb gets the shared range and both claimants (the
 * earlier one being the claimant reaching furthest).  Returns the number
 * of overlaps.  Needs model_ag_finish.
 */
typedef void (*model_overlap_fn)(void *priv, fs_agnumber_t agno, fs_agblock_t agbno,
				 uint32_t len, const struct model_ext *a,
				 const struct model_ext *b);
size_t model_ag_overlaps(const struct model *m, fs_agnumber_t agno, model_overlap_fn cb,
			 void *priv);

/* Block ranges of the AG no extent covers (leaked blocks).  Needs model_ag_finish. */
typedef void (*model_gap_fn)(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len);
size_t model_ag_gaps(const struct model *m, fs_agnumber_t agno, model_gap_fn cb, void *priv);

/* A class as a bit of a class mask. */
#define MODEL_CLASS_BIT(cls) (1u << (cls))

/*
 * The AG's extents of the classes in class_mask (MODEL_CLASS_BIT), in
 * block order, to cb.  Returns how many.  Needs model_ag_finish.
 */
typedef void (*model_ext_fn)(void *priv, fs_agnumber_t agno, const struct model_ext *e);
size_t model_ag_extents_filter(const struct model *m, fs_agnumber_t agno, uint32_t class_mask,
			       model_ext_fn cb, void *priv);

/*
 * The AG's free space for a rebuild: the block ranges no extent covers
 * once the extents of the classes in drop_class_mask are ignored (the old
 * free space records MC_FREE, old btree blocks, the old AGFL...), to cb in
 * block order.  Returns how many ranges.  Needs model_ag_finish.
 * model_ag_free_gaps_drop also ignores every extent drop() says true for
 * (the extents of cleared inodes, say); priv goes to both callbacks.
 */
size_t model_ag_free_gaps(const struct model *m, fs_agnumber_t agno, uint32_t drop_class_mask,
			  model_gap_fn cb, void *priv);
typedef bool (*model_drop_fn)(void *priv, const struct model_ext *e);
size_t model_ag_free_gaps_drop(const struct model *m, fs_agnumber_t agno,
			       uint32_t drop_class_mask, model_drop_fn drop, model_gap_fn cb,
			       void *priv);

/*
 * Runs of the AG's blocks mapped by two or more data-fork extents (those
 * drop() says true for left out; drop may be NULL), with how many map
 * them, in block order, to cb (one call per stretch of equal count).
 * Needs model_ag_finish.  0, -ENOMEM, or cb's nonzero return.
 */
typedef int (*model_run_fn)(void *priv, fs_agblock_t start, uint32_t len, uint32_t count);
int model_ag_shared_runs(const struct model *m, fs_agnumber_t agno, model_drop_fn drop,
			 model_run_fn cb, void *priv);

/* Blocks of a class in an AG. */
uint64_t model_ag_class_blocks(const struct model *m, fs_agnumber_t agno, enum model_class cls);

const char *model_class_name(enum model_class cls);
/* The rmapbt owner value a class/owner pair corresponds to. */
uint64_t model_rmap_owner(enum model_class cls, uint64_t owner);

/* Inode chunks.  Adding a chunk already present merges the `where` flags and masks. */
int model_add_ichunk(struct model *m, fs_agnumber_t agno, const struct model_ichunk *ic);
int model_ag_finish_ichunks(struct model *m, fs_agnumber_t agno);
const struct model_ichunk *model_ag_ichunks(const struct model *m, fs_agnumber_t agno, size_t *n);
/* The chunk holding agino (needs model_ag_finish_ichunks), or NULL. */
struct model_ichunk *model_ichunk_find(struct model *m, fs_agnumber_t agno, fs_agino_t agino);

/* A chunk's blocks with inodes behind them (holes have none) as MC_INODES extents. */
int model_add_chunk_blocks(struct model *m, fs_agnumber_t agno, fs_agino_t startino,
			   uint16_t holemask, uint64_t owner);

/* Bytes the model holds (for the memory budget). */
size_t model_bytes(const struct model *m);

/*
 * Spill extents to sp once more than limit bytes of them are in memory:
 * an array of at least batch extents that grows past it is sorted and
 * written as a run; model_ag_finish merges an AG's runs (k-way) straight
 * into new runs of MODEL_SEG extents (the finished AG never whole in
 * memory; 8 batches, and cursors read 2, when that is fewer: the test
 * switch's tiny batches make many pieces), which the sweeps read a piece at a time and model_ag_extents
 * reads back whole.  Every query works spilled, with the same answers.
 * sp stays the caller's.
 */
void model_set_spill(struct model *m, struct fs_spill *sp, size_t limit, size_t batch);
/*
 * Done with an AG for now: spilling, its finished extents leave memory
 * (when over the limit) until a query wants them.  No other thread may
 * hold the AG's extents.  Without spilling, nothing.
 */
void model_ag_release(struct model *m, fs_agnumber_t agno);
/*
 * Bytes of extents the model will want in memory from now on, with up to
 * workers AGs worked on at once: all it holds when not spilling, else
 * workers times its largest AG (held or on disk).
 */
size_t model_resident_need(const struct model *m, unsigned workers);
/* The first spill error (a write to the temporary directory failed), or 0. */
int model_error(const struct model *m);

#endif
