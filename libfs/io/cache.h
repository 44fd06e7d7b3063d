/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CACHE_H
#define XFSX_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format/format.h"
#include "libfs/io/io.h"
#include "libfs/format/verify.h"

/*
 * One metadata buffer cache shared by every phase and thread: buffers keyed
 * by (daddr, length in bytes), found through a lock-free hash table,
 * refcounted, kept under a memory cap.  Past the cap, clean unreferenced
 * buffers are evicted least-recently-used first (CLOCK approximation) and
 * read again on demand.  Any thread may use it without registering.
 */
struct fs_cache;

/* Flags a user may set on a buffer (atomic, see fs_buf_set_flags). */
enum {
	FS_BUF_VERIFIED = 1u << 0,   /* its verifier ran */
	FS_BUF_CORRUPT  = 1u << 1,   /* ... and found something */
	FS_BUF_DIRTY    = 1u << 2,   /* modified: never evicted (repair) */
};

/* A cached buffer.  Read-only for users except data (under their own rules) and flags. */
struct fs_buf {
	fs_daddr_t daddr;
	uint32_t len;                /* bytes */
	unsigned char *data;
};

/* A block range: a cache key, an object to read ahead (libfs/io/readahead.h). */
struct fs_ra_extent {
	fs_daddr_t daddr;
	uint32_t len;                /* bytes, a multiple of 512 */
};

struct fs_cache_stats {
	uint64_t hits, misses;       /* lookups that found / did not find the buffer */
	uint64_t inserts;            /* buffers added (reads and readahead) */
	uint64_t evictions;
	uint64_t forgotten;          /* buffers dropped at their reader's word (fs_cache_forget) */
	uint64_t reads;              /* synchronous reads done on a miss */
	uint64_t bytes, peak_bytes;  /* buffer bytes held now / at most */
	uint64_t buffers;            /* buffers held now */
	uint64_t over_cap;           /* inserts that left the cache above its cap */
	uint64_t mem_bytes;          /* memory the buffers take now (bytes, unless a length is
				      * not a power of two from 512 to 64 KiB: rounded up to 4 KiB) */
	uint64_t mapped_bytes;       /* the 2 MiB chunks they are cut from (libfs/io/slab.h) */
};

/* cap_bytes 0: no cap. */
int  fs_cache_create(struct fs_dev *dev, uint64_t cap_bytes, struct fs_cache **out);
/* Every buffer must have been released. */
void fs_cache_destroy(struct fs_cache *c);

/* A referenced buffer for (daddr, len), or NULL. */
struct fs_buf *fs_cache_lookup(struct fs_cache *c, fs_daddr_t daddr, uint32_t len);
/* Whether (daddr, len) is cached, without referencing or counting it. */
bool fs_cache_contains(struct fs_cache *c, fs_daddr_t daddr, uint32_t len);

/*
 * A referenced buffer for (daddr, len): from the cache, else read from the
 * device synchronously and inserted.  Negative errno on a failed read.
 */
int fs_cache_read(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, struct fs_buf **out);

/*
 * (daddr, len)'s bytes into buf for a reader that keeps its own copy and
 * will not ask again (a btree walk): from the cache if it is there (the
 * cached buffer then dropped, as by fs_cache_forget), else read from the
 * device and not cached (counted as a miss and a read).  Nobody may be
 * dirtying the block meanwhile.  0 or a negative errno.
 */
int fs_cache_read_once(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, void *buf);

/*
 * Insert a copy of data read elsewhere (readahead).  If the key is already
 * cached the cached copy wins.  out may be NULL (no reference kept).
 */
int fs_cache_insert(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, const void *data,
		    struct fs_buf **out);

/*
 * Insert copies of n blocks cut from one buffer read elsewhere: ext[i]'s
 * bytes start at base + (its byte offset - base_off); one not wholly inside
 * the base_len bytes is skipped.  Taking the cache's
 * lock once for them all, not once per block.  Returns the bytes inserted
 * (a block already cached keeps the cached copy and counts too).
 */
uint64_t fs_cache_insert_many(struct fs_cache *c, const struct fs_ra_extent *ext, size_t n,
			      const unsigned char *base, uint64_t base_off, uint64_t base_len);

/*
 * The reader is done with (daddr, len) for good (metadata read once): drop
 * it now if it is cached, clean and unreferenced, rather than let it push
 * out buffers that will be used again.  Whether it was dropped; a later
 * read simply reads it again.
 */
bool fs_cache_forget(struct fs_cache *c, fs_daddr_t daddr, uint32_t len);

/*
 * fs_cache_forget for n blocks: one lock, one RCU grace period, and the
 * memory freed by the calling thread (which, reading ahead, allocated it:
 * its allocator reuses it at once).  Returns how many were dropped.
 */
size_t fs_cache_forget_many(struct fs_cache *c, const struct fs_ra_extent *ext, size_t n);

/* Drop a reference taken by lookup/read/insert. */
void fs_buf_put(struct fs_cache *c, struct fs_buf *b);

uint32_t fs_buf_flags(const struct fs_buf *b);
void fs_buf_set_flags(struct fs_buf *b, uint32_t set, uint32_t clear);

/* Lower or raise the cap (evicting now if needed; with a stage, dirty bytes past it staged). */
void fs_cache_set_cap(struct fs_cache *c, uint64_t cap_bytes);
uint64_t fs_cache_cap(const struct fs_cache *c);
void fs_cache_get_stats(struct fs_cache *c, struct fs_cache_stats *st);
/* The buffer memory kept empty for reuse goes back to the kernel (fs_slab_trim). */
void fs_cache_trim(struct fs_cache *c);
struct fs_dev *fs_cache_dev(const struct fs_cache *c);

/* ---- the write path (repair, mkfs -p) ----
 *
 * A buffer to be written is obtained (fs_cache_get_new to overwrite it
 * whole, fs_cache_read to edit it), changed in place by its holder, then
 * marked dirty with its metadata type and what its verifier needs to know
 * (AG, owning inode).  Dirty buffers are never evicted, count against the
 * cap, and leave the cache only through fs_cache_flush, which for each one
 * recomputes the CRC, runs the type's READ verifier on the new bytes, and
 * writes them sorted and coalesced.  Threads may get and mark buffers
 * concurrently; a flush must not run concurrently with marking or with
 * changes to the buffers it writes.  Buffers overlapping each other
 * (different keys covering common sectors) must not both be dirty, in any
 * classes: the flush refuses them (-EEXIST).  Clean cached buffers that
 * overlap a written one get its new bytes, so reads stay coherent.
 * fs_cache_destroy drops dirty buffers unwritten.
 */

/*
 * Write classes for the crash protocol: the caller flushes one class at a
 * time, with a device flush (fs_flush_opts.sync) between them: new blocks,
 * then AG headers, then secondary superblocks, the primary last.  The
 * values are only labels; any 0..FS_WCLASS_NR-1 works.
 */
enum {
	FS_WCLASS_NEW = 0,         /* blocks nothing on disk points to yet */
	FS_WCLASS_HEADERS = 1,     /* AG headers, inode cores: switch to the new blocks */
	FS_WCLASS_SECONDARY = 2,   /* secondary superblocks */
	FS_WCLASS_PRIMARY = 3,     /* the primary superblock */
	FS_WCLASS_NR = 8,
	FS_WCLASS_ALL = 0xff       /* fs_flush_opts.wclass: every class */
};

/* What a dirty buffer is, for its CRC and its verifier. */
struct fs_dirty_info {
	enum fs_mtype type;        /* FS_MT_*; inode buffers may hold many inodes */
	fs_agnumber_t agno;        /* the AG its verifier is told (the sb number for FS_MT_SB) */
	fs_ino_t ino;              /* owner (bmbt, dir, attr, symlink blocks); FS_MT_INODE: the
				    * number of the buffer's first inode (the rest follow) */
	uint8_t wclass;            /* FS_WCLASS_* (below FS_WCLASS_NR) */
};

/*
 * A referenced buffer for (daddr, len) whose contents will be overwritten
 * whole: zero-filled, nothing read.  If the key is already cached that
 * buffer is returned, zeroed too (whatever it held, dirty edits included).
 * Negative errno: -EINVAL (len 0), -ENXIO (past the device), -ENOMEM.
 * The buffer is clean until fs_buf_mark_dirty.
 */
int fs_cache_get_new(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, struct fs_buf **out);

/*
 * Mark a referenced buffer dirty with its type and context (replacing
 * those of an earlier mark).  -ENOSPC when the cache has a cap and the
 * dirty set would grow past it (the buffer stays clean: flush or give up
 * before changing more); -EINVAL for a bad type or class.
 */
int fs_buf_mark_dirty(struct fs_cache *c, struct fs_buf *b, const struct fs_dirty_info *info);

/*
 * Past the cap, dirty buffers nobody holds go to stage (an fs_spill of
 * 1-byte records in the temporary directory; the caller owns it and
 * closes it after the cache): their bytes are written there and their
 * memory freed, read back when looked up again, by a flush (sealed and
 * written again there, then copied into the device writes) and by a dirty
 * set's read patch.  Without a stage a mark past the cap is refused
 * (-ENOSPC, below).  fs_cache_stage_error: the first staging failure (a
 * lookup that could not read a buffer back returns it as missing, a read
 * patch leaves the device's bytes): a caller that sees one must not
 * write.  Called before any buffer is marked.  over: stage past this many
 * dirty bytes in memory instead of the cap (a test switch; 0: the cap).
 */
struct fs_spill;
void fs_cache_set_stage(struct fs_cache *c, struct fs_spill *stage, uint64_t over);
/*
 * The stage is a help, not a need (a run without -m): a buffer that cannot
 * be written there stays in memory and staging stops, with no error.
 */
void fs_cache_stage_soft(struct fs_cache *c);
int fs_cache_stage_error(struct fs_cache *c);
/* Bytes of dirty buffers in the staging file now (fs_cache_dirty_bytes counts them too). */
uint64_t fs_cache_staged_bytes(struct fs_cache *c);

/* Bytes in dirty buffers now. */
uint64_t fs_cache_dirty_bytes(struct fs_cache *c);
/* Whether bytes more of dirty buffers fit under the cap (a plan's check before it starts). */
bool fs_cache_dirty_fits(struct fs_cache *c, uint64_t bytes);

struct fs_flush_opts {
	const struct fs_geom *g;   /* required: the verifiers' geometry and UUID */
	uint8_t wclass;            /* the class to write, or FS_WCLASS_ALL */
	uint32_t max_write;        /* largest coalesced write in bytes; 0: 2 MiB */
	bool sync;                 /* fs_dev_flush (fdatasync) after the writes */
	bool have_log_head;        /* LSN checks against a known log head */
	uint64_t head_lsn;
};

struct fs_flush_result {
	uint64_t buffers;          /* dirty buffers written */
	uint64_t bytes;            /* bytes handed to the device (alignment included) */
	uint64_t writes;           /* device write requests */
	uint64_t rmw_reads;        /* reads of partly covered alignment units */
	/* on failure: the object that stopped the flush */
	enum fs_mtype type;
	fs_daddr_t daddr;
	uint32_t len;
	fs_agnumber_t agno;
	fs_ino_t ino;
	bool has_code;             /* the verifier made a finding: code is its first */
	enum fs_code code;
	char message[256];         /* its message, or what failed */
};

/*
 * Write every dirty buffer of the class: CRCs recomputed (the verifier
 * table's crc_off), the read verifier run on the new bytes; then the
 * writes, sorted by daddr and coalesced into runs of up to max_write
 * bytes (O_DIRECT units shared by two buffers are merged into one write,
 * units partly covered by dirty buffers are read first), issued through
 * the device's engine; then the buffers are clean.  Before any write, the
 * device's before-write hook sees every range.
 *
 * Returns 0 (res says what was written), or:
 *   -EUCLEAN: a buffer's new bytes fail their verifier (a bug in whoever
 *             changed it): NOTHING of this flush was written; res names it
 *             (type, daddr, agno, ino, first finding's code and message).
 *   -EEXIST:  two dirty buffers overlap (whatever their classes); nothing
 *             written; res names one.
 *   other negative errno: a device read/write failed; res names the range;
 *             the buffers stay dirty (some ranges may have been written).
 * res may be NULL.
 */
int fs_cache_flush(struct fs_cache *c, const struct fs_flush_opts *o, struct fs_flush_result *res);

/*
 * The flush's check for one metadata buffer written outside the cache (the
 * log replay's blocks, mkfs's): info says its type, AG and owner (FS_MT_INODE:
 * the number of its first inode), as fs_buf_mark_dirty would be told; o's
 * geometry and log head are used (the rest is ignored).  Every unit of the
 * buffer (fs_verify_unit) gets its CRC stamped from the verifier table, then
 * the type's read verifier runs on the new bytes.  0, or -EUCLEAN with res
 * naming the object and the first finding, exactly as a flush names it (the
 * caller must not write the buffer); -EINVAL for a bad type or an empty
 * buffer.  res may be NULL.
 */
int fs_meta_seal(const struct fs_flush_opts *o, const struct fs_dirty_info *info,
		 fs_daddr_t daddr, void *data, uint32_t len, struct fs_flush_result *res);
/* A verifier failure (-EUCLEAN) in words: "BUG: a <type> block at daddr D (AG a, inode i) ...". */
void fs_flush_result_describe(const struct fs_flush_result *res, char *msg, size_t ml);

/*
 * The plan as it will be written, before anything is: every dirty buffer
 * referenced and sorted (overlaps refused as by a flush: -EEXIST), and
 * those of o->wclass (FS_WCLASS_ALL: all) given their CRCs and judged by
 * their read verifier (-EUCLEAN naming the first that fails, as a flush
 * would).  fs_dirty_set_patch is a read patch (fs_dev_opts.read_patch):
 * reads through it see the dirty bytes, so a scan of the result can run
 * before the first write.  The buffers must not change while the set
 * lives; fs_dirty_set_free puts them (they stay dirty).
 */
struct fs_dirty_set;
int fs_cache_dirty_set(struct fs_cache *c, const struct fs_flush_opts *o,
		       struct fs_dirty_set **out, struct fs_flush_result *res);
void fs_dirty_set_patch(void *priv, void *buf, size_t len, uint64_t off);
void fs_dirty_set_free(struct fs_dirty_set *s);

#endif
