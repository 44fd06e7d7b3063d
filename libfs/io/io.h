/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_IO_H
#define XFSX_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fs_io_engine { FS_IO_AUTO = 0, FS_IO_URING, FS_IO_AIO, FS_IO_PREAD };

/*
 * Called before any byte range of the device is written (fs_dev_write,
 * fs_dev_zero_range, fs_dev_discard_range,
 * fs_ioq_write_batch, the cache's writeback), with the byte offset and
 * length about to be overwritten: the undo file records the old contents
 * there.  A nonzero return stops the write and is returned by the writer.
 */
typedef int (*fs_write_hook_fn)(void *priv, uint64_t off, uint64_t len);
/*
 * Test hooks (io.c, read once from the environment; tests/undo):
 * XFSX_TEST_KILL_AFTER_WRITES=k sends SIGKILL once the k-th device write
 * (one write, zeroing or discard of a range) completed, XFSX_TEST_FAIL_WRITE=k
 * fails the k-th with EIO; either makes batches go out one request at a
 * time, in order.
 */
/*
 * Optional second hook: called once after the ranges of one submission
 * (a write batch, or a single synchronous write) were announced and
 * before any of them is written, so an undo file can make all of them
 * durable with one flush.  Nonzero stops the writes, as above.
 */
typedef int (*fs_write_commit_fn)(void *priv);

/*
 * Called after every successful read of the device (fs_dev_read, read
 * batches, asynchronous reads) with the bytes read and where they came
 * from: a log replay held in memory shows its changes to every reader.
 */
typedef void (*fs_read_patch_fn)(void *priv, void *buf, size_t len, uint64_t off);

struct fs_dev_opts {
	bool writable;
	bool no_direct;            /* never use O_DIRECT */
	/*
	 * A writable image file still serves reads whose pages are all in the
	 * page cache from there (read-only opens always do).  Coherent with
	 * our own writes: they are O_DIRECT, and the kernel drops the cached
	 * pages a direct write covers.  For a caller that reads first and
	 * writes after (xfsx_repair).
	 */
	bool cached_reads;
	enum fs_io_engine engine;  /* FS_IO_AUTO: $XFSX_IO_ENGINE, else uring > aio > pread */
	unsigned qdepth;           /* 0: default 64 */
	fs_read_patch_fn read_patch;    /* optional: installed at open (fs_dev_set_read_patch) */
	void *read_patch_priv;
};

struct fs_dev {
	int fd;
	char *path;
	uint64_t size;             /* bytes */
	uint32_t lsect, psect;     /* logical / physical sector size */
	uint32_t dio_align;        /* buffer/offset/length alignment O_DIRECT needs */
	bool direct, blockdev, writable;
	/*
	 * An image file read with O_DIRECT also gets a buffered descriptor:
	 * a range whose pages are all in the page cache (mincore on a mapping
	 * that is never touched) is read from there; anything else goes to the
	 * device.  Not for block devices, whose page cache a filesystem need
	 * not keep coherent.
	 */
	bool try_cache;
	int cached_fd;
	void *cache_map;
	uint64_t cached_bytes;     /* read from the page cache that way (atomic) */
	enum fs_io_engine engine;  /* the engine actually in use */
	unsigned qdepth;
	fs_write_hook_fn before_write;  /* optional, see fs_dev_set_write_hook */
	fs_write_commit_fn before_submit; /* optional, see fs_dev_set_write_commit */
	void *before_write_priv;
	fs_read_patch_fn read_patch;    /* optional, see fs_dev_set_read_patch */
	void *read_patch_priv;
};

/* One read of a batch.  result: bytes read, or negative errno. */
struct fs_io_req {
	uint64_t off;
	size_t len;
	void *buf;
	long result;
	void *priv;
};

struct fs_ioq;                 /* a submission queue: one per thread */

int  fs_dev_open(const char *path, const struct fs_dev_opts *o, struct fs_dev **out);
void fs_dev_close(struct fs_dev *dev);
const char *fs_io_engine_name(enum fs_io_engine e);
int  fs_io_engine_parse(const char *s, enum fs_io_engine *e);

/* Buffers suitable for any read on this device (aligned for O_DIRECT). */
void *fs_dev_alloc(const struct fs_dev *dev, size_t len);

/*
 * [off, off + len) in place, without a copy, when the device is an image
 * file whose pages for it are all resident in the page cache and no read
 * patch is installed: a pointer into a read-only mapping of the file, valid
 * until fs_dev_close (a page evicted meanwhile is read back on touch).
 * NULL otherwise: read it.
 */
const void *fs_dev_resident(struct fs_dev *dev, uint64_t off, size_t len);
/* Done with what fs_dev_resident gave: its pages leave the process's resident set. */
void fs_dev_resident_done(struct fs_dev *dev, const void *p, size_t len);
/*
 * [off, off + len) copied into buf from the page cache, when the device is
 * an image file whose pages for it are all resident: 0 (a read patch
 * applied, as to any read).  -EAGAIN otherwise (nothing read, no I/O
 * started: read it from the device).  One copy into a reused buffer costs less than mapping
 * the pages in place (fs_dev_resident: a page fault per 64 KiB, then
 * unmapping them again); the scan's readahead reads this way.
 */
int fs_dev_read_resident(struct fs_dev *dev, void *buf, size_t len, uint64_t off);

/* Synchronous read/write of any range; unaligned ranges go through a bounce buffer. */
int fs_dev_read(struct fs_dev *dev, void *buf, size_t len, uint64_t off);
int fs_dev_write(struct fs_dev *dev, const void *buf, size_t len, uint64_t off);
int fs_dev_flush(struct fs_dev *dev);
/* Install (fn) or remove (NULL) the before-write hook. */
void fs_dev_set_write_hook(struct fs_dev *dev, fs_write_hook_fn fn, void *priv);
/* Install (fn) or remove (NULL) the read patch; reads in flight may miss it. */
void fs_dev_set_read_patch(struct fs_dev *dev, fs_read_patch_fn fn, void *priv);
/* Install (fn) or remove (NULL) the commit hook; it shares the write hook's priv. */
void fs_dev_set_write_commit(struct fs_dev *dev, fs_write_commit_fn fn);
/* Zero or discard a range by offload (BLKZEROOUT/BLKDISCARD, fallocate on files). */
int fs_dev_zero_range(struct fs_dev *dev, uint64_t off, uint64_t len);
int fs_dev_discard_range(struct fs_dev *dev, uint64_t off, uint64_t len);

/*
 * Batched reads through the device's engine.  Request buffers come from
 * fs_dev_alloc() and offsets/lengths are multiples of dev->dio_align when
 * dev->direct.  Returns 0 when every request was issued (each carries its
 * own result), negative errno if the queue itself failed.
 */
int  fs_ioq_create(struct fs_dev *dev, struct fs_ioq **out);
void fs_ioq_destroy(struct fs_ioq *q);
int  fs_ioq_read_batch(struct fs_ioq *q, struct fs_io_req *reqs, size_t n);

/*
 * Asynchronous reads on the same queue (not mixed with a batch in
 * progress): at most fs_ioq_depth() requests outstanding.  fs_ioq_submit
 * queues one (-EBUSY when the queue is full; a request the device cannot
 * take, or the pread engine's, completes at once); fs_ioq_wait returns the
 * next finished request, in any order, with its result set (-ENOENT when
 * none is outstanding).  Other negative errno: the queue itself failed.
 */
/*
 * Batched writes, same rules as fs_ioq_read_batch for buffers and
 * alignment.  The device's before-write hook is called for every request
 * before any of them is submitted.  Short writes are finished
 * synchronously.  Returns 0 when every request wrote all its bytes; else
 * the first failure's negative errno (-EROFS read-only device, -ENXIO past
 * the end, -EINVAL misaligned for O_DIRECT: nothing submitted; other
 * errors: some requests may have been written, each carries its result).
 */
int  fs_ioq_write_batch(struct fs_ioq *q, struct fs_io_req *reqs, size_t n);

unsigned fs_ioq_depth(const struct fs_ioq *q);
int fs_ioq_submit(struct fs_ioq *q, struct fs_io_req *r);
int fs_ioq_wait(struct fs_ioq *q, struct fs_io_req **done);
/*
 * A read buffer of at least len bytes kept by the queue for slot (below
 * fs_ioq_depth), reused across calls and freed with the queue: streaming
 * readers reuse their windows' memory instead of faulting in new pages.
 */
void *fs_ioq_buffer(struct fs_ioq *q, unsigned slot, size_t len);
/*
 * fs_ioq_buffer holding the queue's kept buffers to about cap bytes (0:
 * no cap): when the new one would pass it, the slot's own buffer is cut
 * to len if larger, and the buffers of slots not busy (busy[i] zero, or
 * busy NULL: every other slot) are freed.  Busy slots' buffers may still
 * pass cap: the caller bounds the bytes it has in flight.
 */
void *fs_ioq_buffer_fit(struct fs_ioq *q, unsigned slot, size_t len, size_t cap,
			const unsigned char *busy);
/* The bytes of the buffers the queue keeps. */
size_t fs_ioq_buffered(const struct fs_ioq *q);

#endif
