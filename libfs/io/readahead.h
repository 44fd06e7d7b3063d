/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_READAHEAD_H
#define XFSX_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/io/cache.h"
#include "libfs/io/io.h"

/*
 * Readahead of known metadata: given where metadata objects are (usually
 * one AG's worth), plan reads that cover them, run them through the
 * device's batch engine, and leave one cached buffer per object.
 *
 * Planning: objects are sorted by address; neighbours are coalesced into
 * one window while the hole between them is at most gap_max bytes and the
 * window stays within max_window bytes (reading a small hole is cheaper
 * than another request).  Objects far from any other get an exact read.
 * Each completed window is chopped into the objects' buffers; the bytes
 * between them are dropped.  Objects already cached are not read again.
 */
struct fs_ra_opts {
	uint32_t max_window;         /* bytes; 0: 2 MiB */
	uint32_t gap_max;            /* bytes of hole worth reading through; 0: 64 KiB */
	unsigned qdepth;             /* windows submitted per batch; 0: 16 */
	uint32_t inflight_max;       /* bytes in flight on the queue at once, and about what its
	                                kept buffers hold (fs_ioq_buffer_fit); 0: 4 MiB */
};

/* One planned read. */
struct fs_ra_window {
	uint64_t off;                /* bytes, aligned for the device */
	uint32_t len;
	uint32_t first, count;       /* the sorted extents it carries */
};

struct fs_ra_stats {
	uint64_t extents;            /* objects asked for */
	uint64_t cached;             /* ... already in the cache */
	uint64_t windows;            /* reads of more than one object */
	uint64_t exact;              /* reads of exactly one object */
	uint64_t bytes_read;
	uint64_t bytes_kept;         /* inserted in the cache */
	uint64_t failed;             /* reads that failed (objects left for demand reads) */
};

/*
 * Sort ext (in place), drop duplicates, and plan windows for the device's
 * alignment.  *out is malloc'ed (free it).  Exposed for tests and tools.
 */
int fs_ra_plan(const struct fs_dev *dev, struct fs_ra_extent *ext, size_t *n,
	       const struct fs_ra_opts *o, struct fs_ra_window **out, size_t *nwin);

/*
 * Read the extents into the cache through q.  Read failures are not an
 * error here (the objects' demand reads will report them); the return is
 * negative errno only when the engine itself failed or memory ran out.
 * st may be NULL; counts are added to it.  The windows are read into q's
 * slot buffers (fs_ioq_buffer), so no stream may be running on q.
 */
int fs_readahead(struct fs_cache *c, struct fs_ioq *q, struct fs_ra_extent *ext, size_t n,
		 const struct fs_ra_opts *o, struct fs_ra_stats *st);

/*
 * Stream the extents: the same plan, up to qdepth windows in flight on q,
 * and for every object of each completed window cb(priv, object, bytes),
 * bytes pointing into the window (valid during the call only) or NULL when
 * the read failed.  Objects come window by window in completion order;
 * nothing is cached.  Negative errno only when the queue failed or memory
 * ran out (objects not yet delivered are then never delivered).
 */
typedef void (*fs_ra_stream_fn)(void *priv, const struct fs_ra_extent *x, const unsigned char *data);
int fs_ra_stream(struct fs_dev *dev, struct fs_ioq *q, struct fs_ra_extent *ext, size_t n,
		 const struct fs_ra_opts *o, fs_ra_stream_fn cb, void *priv, struct fs_ra_stats *st);

#endif
