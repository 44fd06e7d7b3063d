/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CACHE_H
#define XFSX_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format.h"
#include "libfs/io.h"

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

struct fs_cache_stats {
	uint64_t hits, misses;       /* lookups that found / did not find the buffer */
	uint64_t inserts;            /* buffers added (reads and readahead) */
	uint64_t evictions;
	uint64_t reads;              /* synchronous reads done on a miss */
	uint64_t bytes, peak_bytes;  /* buffer bytes held now / at most */
	uint64_t buffers;            /* buffers held now */
	uint64_t over_cap;           /* inserts that left the cache above its cap */
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
 * Insert a copy of data read elsewhere (readahead).  If the key is already
 * cached the cached copy wins.  out may be NULL (no reference kept).
 */
int fs_cache_insert(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, const void *data,
		    struct fs_buf **out);

/* Drop a reference taken by lookup/read/insert. */
void fs_buf_put(struct fs_cache *c, struct fs_buf *b);

uint32_t fs_buf_flags(const struct fs_buf *b);
void fs_buf_set_flags(struct fs_buf *b, uint32_t set, uint32_t clear);

/* Lower or raise the cap (evicting now if needed). */
void fs_cache_set_cap(struct fs_cache *c, uint64_t cap_bytes);
uint64_t fs_cache_cap(const struct fs_cache *c);
void fs_cache_get_stats(struct fs_cache *c, struct fs_cache_stats *st);
struct fs_dev *fs_cache_dev(const struct fs_cache *c);

#endif
