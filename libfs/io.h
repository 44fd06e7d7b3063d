/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_IO_H
#define XFSX_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fs_io_engine { FS_IO_AUTO = 0, FS_IO_URING, FS_IO_AIO, FS_IO_PREAD };

struct fs_dev_opts {
	bool writable;
	bool no_direct;            /* never use O_DIRECT */
	enum fs_io_engine engine;  /* FS_IO_AUTO: $XFSX_IO_ENGINE, else uring > aio > pread */
	unsigned qdepth;           /* 0: default 64 */
};

struct fs_dev {
	int fd;
	char *path;
	uint64_t size;             /* bytes */
	uint32_t lsect, psect;     /* logical / physical sector size */
	uint32_t dio_align;        /* buffer/offset/length alignment O_DIRECT needs */
	bool direct, blockdev, writable;
	enum fs_io_engine engine;  /* the engine actually in use */
	unsigned qdepth;
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

/* Synchronous read/write of any range; unaligned ranges go through a bounce buffer. */
int fs_dev_read(struct fs_dev *dev, void *buf, size_t len, uint64_t off);
int fs_dev_write(struct fs_dev *dev, const void *buf, size_t len, uint64_t off);
int fs_dev_flush(struct fs_dev *dev);
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

#endif
