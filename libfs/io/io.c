// SPDX-License-Identifier: GPL-2.0
/*
 * Device access: opening an image file or block device, learning its size
 * and sector sizes, and reading it through io_uring, libaio or plain pread,
 * chosen at run time.  Also the offloaded zero/discard primitives mkfs and
 * repair use.  O_DIRECT is used whenever the target accepts it.
 */
#include "libfs/io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

struct fs_ioq {
	struct fs_dev *dev;
	enum fs_io_engine engine;
	unsigned depth;
	struct io_uring ring;
	io_context_t aio;
	struct iocb *iocbs;
	struct iocb **iocbp;
	struct io_event *events;
	/* asynchronous use (fs_ioq_submit/fs_ioq_wait) */
	unsigned inflight;           /* submitted to the engine, not yet reaped */
	struct fs_io_req **ready;    /* finished without the engine (ring of depth) */
	unsigned ready_head, ready_n;
	/* buffers kept for the queue's owner (fs_ioq_buffer), one per slot */
	void **bufs;
	size_t *buf_len;
	size_t buf_total;            /* the sum of buf_len */
};

const char *fs_io_engine_name(enum fs_io_engine e)
{
	switch (e) {
	case FS_IO_URING: return "io_uring";
	case FS_IO_AIO: return "libaio";
	case FS_IO_PREAD: return "pread";
	default: return "auto";
	}
}

int fs_io_engine_parse(const char *s, enum fs_io_engine *e)
{
	if (!strcmp(s, "uring") || !strcmp(s, "io_uring")) *e = FS_IO_URING;
	else if (!strcmp(s, "aio") || !strcmp(s, "libaio")) *e = FS_IO_AIO;
	else if (!strcmp(s, "pread") || !strcmp(s, "sync")) *e = FS_IO_PREAD;
	else if (!strcmp(s, "auto")) *e = FS_IO_AUTO;
	else return -EINVAL;
	return 0;
}

/* Probe whether an engine can be set up here (io_uring may be disabled by sysctl). */
static bool engine_works(enum fs_io_engine e)
{
	if (e == FS_IO_URING) {
		struct io_uring r;
		if (io_uring_queue_init(4, &r, 0) < 0)
			return false;
		io_uring_queue_exit(&r);
		return true;
	}
	if (e == FS_IO_AIO) {
		io_context_t ctx = 0;
		if (io_setup(4, &ctx) < 0)
			return false;
		io_destroy(ctx);
		return true;
	}
	return true;
}

static int probe_direct(struct fs_dev *dev)
{
	void *buf = fs_dev_alloc(dev, dev->dio_align);
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	r = pread(dev->fd, buf, dev->dio_align, 0);
	free(buf);
	return r < 0 ? -errno : 0;
}

int fs_dev_open(const char *path, const struct fs_dev_opts *o, struct fs_dev **out)
{
	struct fs_dev_opts defaults = { 0 };
	struct fs_dev *dev;
	struct stat st;
	int flags, err;

	if (!o)
		o = &defaults;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = -1;
	dev->path = strdup(path);
	dev->writable = o->writable;
	flags = (o->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	if (!dev->path) {
		err = -ENOMEM;
		goto fail;
	}

	dev->fd = open(path, flags | (o->no_direct ? 0 : O_DIRECT));
	if (dev->fd < 0 && errno == EINVAL && !o->no_direct)
		dev->fd = open(path, flags);
	else if (dev->fd >= 0 && !o->no_direct)
		dev->direct = true;
	if (dev->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(dev->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		int lsect = 512;
		unsigned int psect = 512;

		dev->blockdev = true;
		if (ioctl(dev->fd, BLKGETSIZE64, &dev->size) < 0) {
			err = -errno;
			goto fail;
		}
		if (ioctl(dev->fd, BLKSSZGET, &lsect) < 0)
			lsect = 512;
		if (ioctl(dev->fd, BLKPBSZGET, &psect) < 0)
			psect = lsect;
		dev->lsect = lsect;
		dev->psect = psect;
		dev->dio_align = lsect;
	} else if (S_ISREG(st.st_mode)) {
		dev->size = st.st_size;
		dev->lsect = 512;
		dev->psect = 512;
		/* the host filesystem's block is a safe O_DIRECT alignment for files */
		dev->dio_align = st.st_blksize >= 512 && st.st_blksize <= 65536 ? st.st_blksize : 4096;
	} else {
		err = -ENOTBLK;
		goto fail;
	}
	if (dev->dio_align < 512)
		dev->dio_align = 512;

	if (dev->direct && dev->size >= dev->dio_align && probe_direct(dev) == -EINVAL) {
		close(dev->fd);
		dev->direct = false;
		dev->fd = open(path, flags);
		if (dev->fd < 0) {
			err = -errno;
			goto fail;
		}
	}

	if (dev->direct && !dev->blockdev && (!dev->writable || o->cached_reads) && dev->size) {
		/*
		 * The mapping is asked which pages are resident (mincore); streamed
		 * reads of resident ranges read it in place (fs_dev_resident).
		 */
		dev->cached_fd = open(path, O_RDONLY | O_CLOEXEC);
		dev->cache_map = dev->cached_fd >= 0 ?
			mmap(NULL, dev->size, PROT_READ, MAP_SHARED, dev->cached_fd, 0) : MAP_FAILED;
		dev->try_cache = dev->cache_map != MAP_FAILED;
		if (!dev->try_cache && dev->cached_fd >= 0)
			close(dev->cached_fd);
	}

	dev->engine = o->engine;
	if (dev->engine == FS_IO_AUTO) {
		const char *env = getenv("XFSX_IO_ENGINE");
		if (env && *env && fs_io_engine_parse(env, &dev->engine) < 0) {
			err = -EINVAL;
			goto fail;
		}
	}
	if (dev->engine == FS_IO_AUTO) {
		if (engine_works(FS_IO_URING))
			dev->engine = FS_IO_URING;
		else if (engine_works(FS_IO_AIO))
			dev->engine = FS_IO_AIO;
		else
			dev->engine = FS_IO_PREAD;
	} else if (!engine_works(dev->engine)) {
		err = -ENOSYS;
		goto fail;
	}
	dev->qdepth = o->qdepth ? o->qdepth : 64;
	fs_dev_set_read_patch(dev, o->read_patch, o->read_patch_priv);
	*out = dev;
	return 0;
fail:
	if (dev->fd >= 0)
		close(dev->fd);
	if (dev->try_cache) {
		munmap(dev->cache_map, dev->size);
		close(dev->cached_fd);
	}
	free(dev->path);
	free(dev);
	return err;
}

void fs_dev_close(struct fs_dev *dev)
{
	if (!dev)
		return;
	if (dev->fd >= 0)
		close(dev->fd);
	if (dev->try_cache) {
		munmap(dev->cache_map, dev->size);
		close(dev->cached_fd);
	}
	free(dev->path);
	free(dev);
}

void *fs_dev_alloc(const struct fs_dev *dev, size_t len)
{
	void *p = NULL;
	size_t align = dev->dio_align > 4096 ? dev->dio_align : 4096;

	if (!len)
		len = align;
	len = (len + align - 1) / align * align;
	if (posix_memalign(&p, align, len))
		return NULL;
	return p;
}

static bool is_aligned(const struct fs_dev *dev, const void *buf, size_t len, uint64_t off)
{
	uint64_t a = dev->dio_align;
	return !dev->direct || (((uintptr_t)buf % a) == 0 && len % a == 0 && off % a == 0);
}

static int full_io(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t r = write ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		len -= r;
		off += r;
	}
	return 0;
}

static int bounce_io(struct fs_dev *dev, void *buf, size_t len, uint64_t off, bool write)
{
	uint64_t a = dev->dio_align;
	uint64_t start = off / a * a;
	uint64_t end = (off + len + a - 1) / a * a;
	unsigned char *b;
	int err;

	if (end > dev->size && dev->size > start && !write)
		end = (dev->size + a - 1) / a * a;
	b = fs_dev_alloc(dev, end - start);
	if (!b)
		return -ENOMEM;
	err = full_io(dev->fd, b, end - start, start, false);
	if (!err && write) {
		memcpy(b + (off - start), buf, len);
		err = full_io(dev->fd, b, end - start, start, true);
	} else if (!err) {
		memcpy(buf, b + (off - start), len);
	}
	free(b);
	return err;
}

/*
 * The whole range from the page cache when every page of it is resident,
 * else false (the caller reads the device directly).  Residency is asked
 * with mincore, which starts no I/O: a buffered read that missed would
 * start readahead and read the range twice.
 */
/* Every page of [off, off + len) resident in the page cache (asked of the mapping). */
static bool resident(struct fs_dev *dev, uint64_t off, size_t len)
{
	static long page;
	unsigned char vec[256];
	uint64_t first, last;

	if (!dev->try_cache || !len || off >= dev->size || len > dev->size - off)
		return false;
	if (!page)
		page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	first = off / (uint64_t)page;
	last = (off + len - 1) / (uint64_t)page;
	for (uint64_t p = first; p <= last;) {
		uint64_t n = last - p + 1 < sizeof(vec) ? last - p + 1 : sizeof(vec);

		if (mincore((char *)dev->cache_map + p * (uint64_t)page, n * (uint64_t)page, vec))
			return false;
		for (uint64_t i = 0; i < n; i++)
			if (!(vec[i] & 1))
				return false;
		p += n;
	}
	return true;
}

static bool read_cached(struct fs_dev *dev, void *buf, size_t len, uint64_t off)
{
	if (!resident(dev, off, len) || full_io(dev->cached_fd, buf, len, off, false))
		return false;
	__atomic_add_fetch(&dev->cached_bytes, len, __ATOMIC_RELAXED);
	return true;
}

int fs_dev_read_resident(struct fs_dev *dev, void *buf, size_t len, uint64_t off)
{
	if (!read_cached(dev, buf, len, off))
		return -EAGAIN;
	if (dev->read_patch)
		dev->read_patch(dev->read_patch_priv, buf, len, off);
	return 0;
}

const void *fs_dev_resident(struct fs_dev *dev, uint64_t off, size_t len)
{
	if (dev->read_patch || !resident(dev, off, len))
		return NULL;
	__atomic_add_fetch(&dev->cached_bytes, len, __ATOMIC_RELAXED);
	return (const unsigned char *)dev->cache_map + off;
}

void fs_dev_resident_done(struct fs_dev *dev, const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p, e = a + len;

	if (!dev->try_cache || !len || !page)
		return;
	/*
	 * Unmap the range from this process: the pages stay in the page cache
	 * (a shared file mapping), but are no longer counted as our resident
	 * memory; a neighbour still being read refaults them from the cache.
	 */
	a &= ~(page - 1);
	e = (e + page - 1) & ~(page - 1);
	madvise((void *)a, e - a, MADV_DONTNEED);
}

static int dev_read(struct fs_dev *dev, void *buf, size_t len, uint64_t off)
{
	if (off > dev->size || len > dev->size - off)
		return -ENXIO;
	if (read_cached(dev, buf, len, off))
		return 0;
	if (is_aligned(dev, buf, len, off))
		return full_io(dev->fd, buf, len, off, false);
	return bounce_io(dev, buf, len, off, false);
}

/* A read request that completed whole gets the read patch. */
static void patch_req(struct fs_dev *dev, struct fs_io_req *r)
{
	if (dev->read_patch && r->result == (long)r->len)
		dev->read_patch(dev->read_patch_priv, r->buf, r->len, r->off);
}

int fs_dev_read(struct fs_dev *dev, void *buf, size_t len, uint64_t off)
{
	int err = dev_read(dev, buf, len, off);

	if (!err && dev->read_patch)
		dev->read_patch(dev->read_patch_priv, buf, len, off);
	return err;
}

void fs_dev_set_read_patch(struct fs_dev *dev, fs_read_patch_fn fn, void *priv)
{
	dev->read_patch = fn;
	dev->read_patch_priv = fn ? priv : NULL;
}

/*
 * Test hooks for crash and error tests (tests/undo), read once from the
 * environment: XFSX_TEST_KILL_AFTER_WRITES=k sends the process SIGKILL
 * once its k-th device write (a write, zeroing or discard of one range)
 * completed; XFSX_TEST_FAIL_WRITE=k makes the k-th fail with EIO, nothing
 * of it written.  With either set, batched writes go out one at a time, in
 * order, so "the k-th" is exact and nothing after a failed write is
 * submitted.
 */
static long test_kill_after = -1, test_fail_at = -1;
static long test_writes;
static pthread_once_t test_once = PTHREAD_ONCE_INIT;

static long env_count(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	n = strtol(v, &end, 10);
	return *end || n < 1 ? -1 : n;
}

static void test_hooks_init(void)
{
	test_kill_after = env_count("XFSX_TEST_KILL_AFTER_WRITES");
	test_fail_at = env_count("XFSX_TEST_FAIL_WRITE");
}

static bool test_hooks_on(void)
{
	pthread_once(&test_once, test_hooks_init);
	return test_kill_after > 0 || test_fail_at > 0;
}

/* Before one device write: -EIO when it is the one chosen to fail. */
static int test_before_write(void)
{
	if (!test_hooks_on())
		return 0;
	return __atomic_add_fetch(&test_writes, 1, __ATOMIC_SEQ_CST) == test_fail_at ? -EIO : 0;
}

static void test_after_write(void)
{
	if (test_kill_after > 0 && __atomic_load_n(&test_writes, __ATOMIC_SEQ_CST) >= test_kill_after)
		kill(getpid(), SIGKILL);
}

void fs_dev_set_write_hook(struct fs_dev *dev, fs_write_hook_fn fn, void *priv)
{
	dev->before_write = fn;
	dev->before_write_priv = priv;
}

void fs_dev_set_write_commit(struct fs_dev *dev, fs_write_commit_fn fn)
{
	dev->before_submit = fn;
}

static int call_commit_hook(struct fs_dev *dev)
{
	return dev->before_submit ? dev->before_submit(dev->before_write_priv) : 0;
}

/* One range of a single write: announced, then committed. */
static int call_write_hook(struct fs_dev *dev, uint64_t off, uint64_t len)
{
	int err = dev->before_write && len ? dev->before_write(dev->before_write_priv, off, len) : 0;

	return err ? err : call_commit_hook(dev);
}

int fs_dev_write(struct fs_dev *dev, const void *buf, size_t len, uint64_t off)
{
	int err;

	if (!dev->writable)
		return -EROFS;
	if (off > dev->size || len > dev->size - off)
		return -ENXIO;
	err = call_write_hook(dev, off, len);
	if (!err)
		err = test_before_write();
	if (err)
		return err;
	if (is_aligned(dev, buf, len, off))
		err = full_io(dev->fd, (void *)buf, len, off, true);
	else
		err = bounce_io(dev, (void *)buf, len, off, true);
	test_after_write();
	return err;
}

int fs_dev_flush(struct fs_dev *dev)
{
	return fsync(dev->fd) < 0 ? -errno : 0;
}

static int zero_range(struct fs_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->blockdev) {
		uint64_t r[2] = { off, len };
		return ioctl(dev->fd, BLKZEROOUT, r) < 0 ? -errno : 0;
	}
	if (fallocate(dev->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
		return 0;
	/* some filesystems lack ZERO_RANGE; a punched hole reads back as zeroes too */
	if (fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
		return 0;
	return -errno;
}

static int discard_range(struct fs_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->blockdev) {
		uint64_t r[2] = { off, len };
		return ioctl(dev->fd, BLKDISCARD, r) < 0 ? -errno : 0;
	}
	return fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) < 0 ?
		-errno : 0;
}

/* Zeroing and discards are writes: announced and committed first, counted by the test hooks. */
static int offload(struct fs_dev *dev, uint64_t off, uint64_t len,
		   int (*fn)(struct fs_dev *, uint64_t, uint64_t))
{
	int err;

	if (!dev->writable)
		return -EROFS;
	if (off > dev->size || len > dev->size - off)
		return -ENXIO;
	err = call_write_hook(dev, off, len);
	if (!err)
		err = test_before_write();
	if (err)
		return err;
	err = fn(dev, off, len);
	test_after_write();
	return err;
}

int fs_dev_zero_range(struct fs_dev *dev, uint64_t off, uint64_t len)
{
	return offload(dev, off, len, zero_range);
}

int fs_dev_discard_range(struct fs_dev *dev, uint64_t off, uint64_t len)
{
	return offload(dev, off, len, discard_range);
}

int fs_ioq_create(struct fs_dev *dev, struct fs_ioq **out)
{
	struct fs_ioq *q = calloc(1, sizeof(*q));
	int err = 0;

	if (!q)
		return -ENOMEM;
	q->dev = dev;
	q->engine = dev->engine;
	q->depth = dev->qdepth;
	q->ready = calloc(q->depth ? q->depth : 1, sizeof(*q->ready));
	if (!q->ready) {
		free(q);
		return -ENOMEM;
	}
	if (q->engine == FS_IO_URING) {
		err = io_uring_queue_init(q->depth, &q->ring, 0);
	} else if (q->engine == FS_IO_AIO) {
		q->iocbs = calloc(q->depth, sizeof(*q->iocbs));
		q->iocbp = calloc(q->depth, sizeof(*q->iocbp));
		q->events = calloc(q->depth, sizeof(*q->events));
		if (!q->iocbs || !q->iocbp || !q->events)
			err = -ENOMEM;
		else
			err = io_setup(q->depth, &q->aio);
	}
	if (err < 0) {
		free(q->iocbs);
		free(q->iocbp);
		free(q->events);
		free(q->ready);
		free(q);
		return err;
	}
	*out = q;
	return 0;
}

void fs_ioq_destroy(struct fs_ioq *q)
{
	if (!q)
		return;
	if (q->engine == FS_IO_URING)
		io_uring_queue_exit(&q->ring);
	else if (q->engine == FS_IO_AIO)
		io_destroy(q->aio);
	free(q->iocbs);
	free(q->iocbp);
	free(q->events);
	free(q->ready);
	if (q->bufs)
		for (unsigned i = 0; i < fs_ioq_depth(q); i++)
			free(q->bufs[i]);
	free(q->bufs);
	free(q->buf_len);
	free(q);
}

/* A completed request that came back short is finished synchronously. */
static void finish_io(struct fs_ioq *q, struct fs_io_req *r, long res, bool write)
{
	if (res >= 0 && (size_t)res < r->len) {
		int err = full_io(q->dev->fd, (char *)r->buf + res, r->len - res, r->off + res, write);
		res = err ? err : (long)r->len;
	}
	r->result = res;
}

static void finish_req(struct fs_ioq *q, struct fs_io_req *r, long res)
{
	finish_io(q, r, res, false);
}

static int batch_uring(struct fs_ioq *q, struct fs_io_req *reqs, size_t n, bool write)
{
	size_t done = 0;

	while (done < n) {
		size_t chunk = n - done < q->depth ? n - done : q->depth;
		int ret;

		for (size_t i = 0; i < chunk; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
			struct fs_io_req *r = &reqs[done + i];

			if (!sqe)
				return -EBUSY;
			if (write)
				io_uring_prep_write(sqe, q->dev->fd, r->buf, r->len, r->off);
			else
				io_uring_prep_read(sqe, q->dev->fd, r->buf, r->len, r->off);
			io_uring_sqe_set_data(sqe, r);
		}
		ret = io_uring_submit(&q->ring);
		if (ret < 0)
			return ret;
		for (size_t i = 0; i < chunk; i++) {
			struct io_uring_cqe *cqe;

			do {
				ret = io_uring_wait_cqe(&q->ring, &cqe);
			} while (ret == -EINTR);
			if (ret < 0)
				return ret;
			finish_io(q, io_uring_cqe_get_data(cqe), cqe->res, write);
			io_uring_cqe_seen(&q->ring, cqe);
		}
		done += chunk;
	}
	return 0;
}

static int batch_aio(struct fs_ioq *q, struct fs_io_req *reqs, size_t n, bool write)
{
	size_t done = 0;

	while (done < n) {
		size_t chunk = n - done < q->depth ? n - done : q->depth;
		size_t got = 0;
		int ret;

		for (size_t i = 0; i < chunk; i++) {
			struct fs_io_req *r = &reqs[done + i];

			if (write)
				io_prep_pwrite(&q->iocbs[i], q->dev->fd, r->buf, r->len, r->off);
			else
				io_prep_pread(&q->iocbs[i], q->dev->fd, r->buf, r->len, r->off);
			q->iocbs[i].data = r;
			q->iocbp[i] = &q->iocbs[i];
		}
		ret = io_submit(q->aio, chunk, q->iocbp);
		if (ret < 0)
			return ret;
		if ((size_t)ret < chunk) {
			/* the rest were not queued: do them synchronously */
			for (size_t i = ret; i < chunk; i++)
				finish_io(q, &reqs[done + i], 0, write);
			chunk = ret;
		}
		while (got < chunk) {
			ret = io_getevents(q->aio, 1, chunk - got, q->events, NULL);
			if (ret == -EINTR)
				continue;
			if (ret < 0)
				return ret;
			for (int i = 0; i < ret; i++)
				finish_io(q, q->events[i].data, (long)q->events[i].res, write);
			got += ret;
		}
		done += n - done < q->depth ? n - done : q->depth;
	}
	return 0;
}

int fs_ioq_read_batch(struct fs_ioq *q, struct fs_io_req *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fs_io_req *r = &reqs[i];

		if (r->off > q->dev->size || r->len > q->dev->size - r->off) {
			r->result = -ENXIO;
			continue;
		}
		if (!is_aligned(q->dev, r->buf, r->len, r->off)) {
			r->result = -EINVAL;
			continue;
		}
		if (read_cached(q->dev, r->buf, r->len, r->off)) {
			r->result = (long)r->len;
			continue;
		}
		r->result = 1;	/* marks "to be issued" */
	}
	/* compact the issuable requests to the front is not needed: skip marked ones */
	if (q->engine == FS_IO_PREAD) {
		for (size_t i = 0; i < n; i++)
			if (reqs[i].result == 1)
				finish_req(q, &reqs[i], 0);
		for (size_t i = 0; i < n; i++)
			patch_req(q->dev, &reqs[i]);
		return 0;
	}
	{
		struct fs_io_req **todo = malloc(n * sizeof(*todo));
		struct fs_io_req *tmp;
		size_t m = 0;
		int err;

		if (!todo)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (reqs[i].result == 1)
				todo[m++] = &reqs[i];
		/* engines work on arrays of requests: gather, run, scatter */
		tmp = malloc((m ? m : 1) * sizeof(*tmp));
		if (!tmp) {
			free(todo);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m; i++)
			tmp[i] = *todo[i];
		err = q->engine == FS_IO_URING ? batch_uring(q, tmp, m, false) :
						 batch_aio(q, tmp, m, false);
		for (size_t i = 0; i < m; i++)
			todo[i]->result = err ? err : tmp[i].result;
		free(tmp);
		free(todo);
		for (size_t i = 0; i < n && !err; i++)
			patch_req(q->dev, &reqs[i]);
		return err;
	}
}

int fs_ioq_write_batch(struct fs_ioq *q, struct fs_io_req *reqs, size_t n)
{
	struct fs_dev *dev = q->dev;
	int err;

	if (!dev->writable)
		return -EROFS;
	for (size_t i = 0; i < n; i++) {
		struct fs_io_req *r = &reqs[i];

		if (r->off > dev->size || r->len > dev->size - r->off ||
		    !is_aligned(dev, r->buf, r->len, r->off))
			return r->off > dev->size || r->len > dev->size - r->off ? -ENXIO : -EINVAL;
	}
	/* every range is announced, then committed, before the first byte of the batch goes out */
	for (size_t i = 0; i < n && dev->before_write; i++) {
		err = reqs[i].len ? dev->before_write(dev->before_write_priv, reqs[i].off,
						      reqs[i].len) : 0;
		if (err)
			return err;
	}
	err = call_commit_hook(dev);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		reqs[i].result = 0;
	if (test_hooks_on()) {
		/* one at a time, in order; nothing after a failed write is submitted */
		for (size_t i = 0; i < n; i++) {
			err = test_before_write();
			if (err) {
				reqs[i].result = err;
				for (size_t j = i + 1; j < n; j++)
					reqs[j].result = -ECANCELED;
				return err;
			}
			finish_io(q, &reqs[i], 0, true);
			test_after_write();
			if (reqs[i].result < 0) {
				for (size_t j = i + 1; j < n; j++)
					reqs[j].result = -ECANCELED;
				return (int)reqs[i].result;
			}
		}
		return 0;
	}
	if (q->engine == FS_IO_URING)
		err = batch_uring(q, reqs, n, true);
	else if (q->engine == FS_IO_AIO)
		err = batch_aio(q, reqs, n, true);
	else {
		err = 0;
		for (size_t i = 0; i < n; i++)
			finish_io(q, &reqs[i], 0, true);
	}
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (reqs[i].result < 0)
			return (int)reqs[i].result;
	return 0;
}

unsigned fs_ioq_depth(const struct fs_ioq *q)
{
	return q->depth ? q->depth : 1;
}

static void ready_push(struct fs_ioq *q, struct fs_io_req *r)
{
	q->ready[(q->ready_head + q->ready_n) % fs_ioq_depth(q)] = r;
	q->ready_n++;
}

int fs_ioq_submit(struct fs_ioq *q, struct fs_io_req *r)
{
	if (q->inflight + q->ready_n >= fs_ioq_depth(q))
		return -EBUSY;
	if (r->off > q->dev->size || r->len > q->dev->size - r->off) {
		r->result = -ENXIO;
		ready_push(q, r);
		return 0;
	}
	if (!is_aligned(q->dev, r->buf, r->len, r->off)) {
		r->result = -EINVAL;
		ready_push(q, r);
		return 0;
	}
	if (read_cached(q->dev, r->buf, r->len, r->off)) {
		r->result = (long)r->len;
		ready_push(q, r);
		return 0;
	}
	if (q->engine == FS_IO_URING) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
		int ret;

		if (!sqe)
			return -EBUSY;
		io_uring_prep_read(sqe, q->dev->fd, r->buf, r->len, r->off);
		io_uring_sqe_set_data(sqe, r);
		ret = io_uring_submit(&q->ring);
		if (ret < 0)
			return ret;
		q->inflight++;
		return 0;
	}
	if (q->engine == FS_IO_AIO) {
		struct iocb *cb = &q->iocbs[0], *cbp = cb;
		int ret;

		/* io_submit copies the iocb, so one scratch iocb serves every request */
		io_prep_pread(cb, q->dev->fd, r->buf, r->len, r->off);
		cb->data = r;
		ret = io_submit(q->aio, 1, &cbp);
		if (ret == 1) {
			q->inflight++;
			return 0;
		}
		if (ret < 0 && ret != -EAGAIN)
			return ret;
		/* not queued: do it synchronously */
	}
	finish_req(q, r, 0);
	ready_push(q, r);
	return 0;
}

int fs_ioq_wait(struct fs_ioq *q, struct fs_io_req **done)
{
	int ret;

	if (q->ready_n) {
		*done = q->ready[q->ready_head];
		q->ready_head = (q->ready_head + 1) % fs_ioq_depth(q);
		q->ready_n--;
		patch_req(q->dev, *done);
		return 0;
	}
	if (!q->inflight)
		return -ENOENT;
	if (q->engine == FS_IO_URING) {
		struct io_uring_cqe *cqe;

		do {
			ret = io_uring_wait_cqe(&q->ring, &cqe);
		} while (ret == -EINTR);
		if (ret < 0)
			return ret;
		*done = io_uring_cqe_get_data(cqe);
		finish_req(q, *done, cqe->res);
		io_uring_cqe_seen(&q->ring, cqe);
	} else {
		struct io_event ev;

		do {
			ret = io_getevents(q->aio, 1, 1, &ev, NULL);
		} while (ret == -EINTR);
		if (ret < 0)
			return ret;
		if (ret != 1)
			return -EIO;
		*done = ev.data;
		finish_req(q, *done, (long)ev.res);
	}
	q->inflight--;
	patch_req(q->dev, *done);
	return 0;
}

static void buffer_drop(struct fs_ioq *q, unsigned slot)
{
	free(q->bufs[slot]);
	q->bufs[slot] = NULL;
	q->buf_total -= q->buf_len[slot];
	q->buf_len[slot] = 0;
}

void *fs_ioq_buffer_fit(struct fs_ioq *q, unsigned slot, size_t len, size_t cap,
			const unsigned char *busy)
{
	unsigned depth = fs_ioq_depth(q);

	if (slot >= depth)
		return NULL;
	if (!q->bufs) {
		q->bufs = calloc(depth, sizeof(*q->bufs));
		q->buf_len = calloc(depth, sizeof(*q->buf_len));
		if (!q->bufs || !q->buf_len) {
			free(q->bufs);
			free(q->buf_len);
			q->bufs = NULL;
			q->buf_len = NULL;
			return NULL;
		}
	}
	if (cap) {
		/* a kept buffer far larger than this window goes when the queue is over its cap */
		if (q->buf_len[slot] > len && q->buf_total > cap)
			buffer_drop(q, slot);
		/* then idle slots' buffers, until the new one fits */
		for (unsigned i = 0; i < depth && q->buf_total - q->buf_len[slot] + len > cap; i++)
			if (i != slot && q->buf_len[i] && (!busy || !busy[i]))
				buffer_drop(q, i);
	}
	if (q->buf_len[slot] < len) {
		buffer_drop(q, slot);
		q->bufs[slot] = fs_dev_alloc(q->dev, len);
		q->buf_len[slot] = q->bufs[slot] ? len : 0;
		q->buf_total += q->buf_len[slot];
	}
	return q->bufs[slot];
}

size_t fs_ioq_buffered(const struct fs_ioq *q)
{
	return q->buf_total;
}

void *fs_ioq_buffer(struct fs_ioq *q, unsigned slot, size_t len)
{
	return fs_ioq_buffer_fit(q, slot, len, 0, NULL);
}
