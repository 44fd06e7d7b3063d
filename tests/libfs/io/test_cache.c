// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the metadata cache and readahead over a synthetic image
 * whose every 512-byte sector is stamped with its own number, so a buffer's
 * contents prove where it was read from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "libfs/io/cache.h"
#include "libfs/format/endian.h"
#include "libfs/io/readahead.h"
#include "libfs/io/slab.h"

#define IMG_SECTORS 65536u   /* 32 MiB */

struct tfix {
	char path[64];
	struct fs_dev *dev;
};

static void stamp(unsigned char *sec, uint64_t n)
{
	for (unsigned i = 0; i < FS_BBSIZE; i += 8)
		put_be64(sec + i, n * 1000 + i / 8);
}

static bool sector_ok(const unsigned char *sec, uint64_t n)
{
	return get_be64(sec) == n * 1000 && get_be64(sec + FS_BBSIZE - 8) == n * 1000 + 63;
}

static bool buf_ok(const struct fs_buf *b)
{
	for (uint32_t s = 0; s < b->len / FS_BBSIZE; s++)
		if (!sector_ok(b->data + (size_t)s * FS_BBSIZE, b->daddr + s))
			return false;
	return true;
}

static int setup_common(void **state, bool direct)
{
	struct tfix *t = calloc(1, sizeof(*t));
	unsigned char *chunk = malloc(1 << 20);
	struct fs_dev_opts o = { .no_direct = !direct };
	int fd;

	/* /var/tmp rather than tmpfs so O_DIRECT has a chance */
	snprintf(t->path, sizeof(t->path), "/var/tmp/xfsx-cache.XXXXXX");
	fd = mkstemp(t->path);
	if (fd < 0)
		return -1;
	for (uint32_t c = 0; c < IMG_SECTORS / 2048; c++) {
		for (uint32_t s = 0; s < 2048; s++)
			stamp(chunk + (size_t)s * FS_BBSIZE, (uint64_t)c * 2048 + s);
		if (write(fd, chunk, 1 << 20) != 1 << 20)
			return -1;
	}
	close(fd);
	free(chunk);
	if (fs_dev_open(t->path, &o, &t->dev))
		return -1;
	*state = t;
	return 0;
}

static int setup(void **state) { return setup_common(state, false); }
static int setup_direct(void **state) { return setup_common(state, true); }

static int teardown(void **state)
{
	struct tfix *t = *state;

	fs_dev_close(t->dev);
	unlink(t->path);
	free(t);
	return 0;
}

static void test_hit_miss(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b, *b2;

	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	assert_null(fs_cache_lookup(c, 100, 4096));
	assert_int_equal(fs_cache_read(c, 100, 4096, &b), 0);
	assert_true(buf_ok(b));
	assert_int_equal(b->daddr, 100);
	assert_int_equal(b->len, 4096);
	b2 = fs_cache_lookup(c, 100, 4096);
	assert_ptr_equal(b, b2);
	/* the key includes the length: same daddr, other length is another buffer */
	assert_null(fs_cache_lookup(c, 100, 512));
	assert_true(fs_cache_contains(c, 100, 4096));
	fs_buf_set_flags(b, FS_BUF_VERIFIED, 0);
	assert_int_equal(fs_buf_flags(b2), FS_BUF_VERIFIED);
	fs_buf_put(c, b);
	fs_buf_put(c, b2);
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 3);	/* 2 lookups + 1 read */
	assert_int_equal(st.reads, 1);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.bytes, 4096);
	/* a read past the device end fails and caches nothing */
	assert_true(fs_cache_read(c, IMG_SECTORS, 512, &b) < 0);
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 1);
	fs_cache_destroy(c);
}

static void test_insert_existing_wins(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	unsigned char junk[512];
	struct fs_buf *b, *b2;

	memset(junk, 0xab, sizeof(junk));
	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	assert_int_equal(fs_cache_read(c, 7, 512, &b), 0);
	assert_int_equal(fs_cache_insert(c, 7, 512, junk, &b2), 0);
	assert_ptr_equal(b, b2);
	assert_true(buf_ok(b2));
	fs_buf_put(c, b);
	fs_buf_put(c, b2);
	fs_cache_destroy(c);
}

/* fs_cache_forget drops a clean unreferenced buffer only; a later read reads it again. */
static void test_forget(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b;

	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	assert_false(fs_cache_forget(c, 40, 4096));	/* not cached */
	assert_int_equal(fs_cache_read(c, 40, 4096, &b), 0);
	assert_false(fs_cache_forget(c, 40, 4096));	/* referenced */
	assert_true(fs_cache_contains(c, 40, 4096));
	fs_buf_put(c, b);
	assert_false(fs_cache_forget(c, 40, 512));	/* another key */
	assert_true(fs_cache_forget(c, 40, 4096));
	assert_false(fs_cache_contains(c, 40, 4096));
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.forgotten, 1);
	assert_int_equal(fs_cache_read(c, 40, 4096, &b), 0);
	assert_true(buf_ok(b));
	fs_buf_put(c, b);
	/* a dirty buffer stays until it is written */
	assert_int_equal(fs_cache_get_new(c, 80, 512, &b), 0);
	assert_int_equal(fs_buf_mark_dirty(c, b, &(struct fs_dirty_info){ .type = FS_MT_AGFL }), 0);
	fs_buf_put(c, b);
	assert_false(fs_cache_forget(c, 80, 512));
	assert_true(fs_cache_contains(c, 80, 512));
	fs_cache_destroy(c);
}

/*
 * The batch forms: insert_many cuts blocks out of one buffer (an existing
 * key keeps the cached copy; a block not wholly inside the buffer is
 * skipped), forget_many drops the clean unheld ones only.
 */
static void test_insert_forget_many(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b, *held;
	unsigned char *win = malloc(16 * FS_BBSIZE);
	const uint64_t base = 100;	/* the buffer holds sectors 100..115 */
	struct fs_ra_extent ext[] = {
		{ 100, 1024 }, { 104, 512 }, { 110, 4096 },	/* the last runs past the end */
		{ 112, 2048 }, { 90, 512 },			/* before the buffer */
	};

	assert_non_null(win);
	for (uint64_t s = 0; s < 16; s++)
		stamp(win + s * FS_BBSIZE, base + s);
	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	/* 104 is cached already with other bytes: the cached copy wins */
	assert_int_equal(fs_cache_insert(c, 104, 512, win + 8 * FS_BBSIZE, &held), 0);
	assert_int_equal(fs_cache_insert_many(c, ext, 5, win, base * FS_BBSIZE, 16 * FS_BBSIZE),
			 1024 + 512 + 2048);
	assert_true(fs_cache_contains(c, 100, 1024));
	assert_true(fs_cache_contains(c, 112, 2048));
	assert_false(fs_cache_contains(c, 110, 4096));
	assert_false(fs_cache_contains(c, 90, 512));
	assert_int_equal(fs_cache_read(c, 100, 1024, &b), 0);
	assert_true(buf_ok(b));
	fs_buf_put(c, b);
	assert_int_equal(fs_cache_read(c, 112, 2048, &b), 0);
	assert_true(buf_ok(b));
	fs_buf_put(c, b);
	assert_false(buf_ok(held));	/* sector 108's bytes under key 104: not replaced */
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 3);
	assert_int_equal(st.bytes, 1024 + 512 + 2048);
	/* 104 is held: forget_many drops the two others and leaves it */
	assert_int_equal(fs_cache_forget_many(c, ext, 5), 2);
	assert_false(fs_cache_contains(c, 100, 1024));
	assert_false(fs_cache_contains(c, 112, 2048));
	assert_true(fs_cache_contains(c, 104, 512));
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.forgotten, 2);
	fs_buf_put(c, held);
	assert_int_equal(fs_cache_forget_many(c, ext, 5), 1);
	assert_int_equal(fs_cache_forget_many(c, ext, 0), 0);
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 0);
	assert_int_equal(st.bytes, 0);
	fs_cache_destroy(c);
	free(win);
}

static void test_cap_evict_reread(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b, *held;

	/* room for 8 buffers of 4 KiB */
	assert_int_equal(fs_cache_create(t->dev, 8 * 4096, &c), 0);
	/* one buffer stays referenced throughout: it must never be evicted */
	assert_int_equal(fs_cache_read(c, 0, 4096, &held), 0);
	for (uint64_t i = 1; i <= 32; i++) {
		assert_int_equal(fs_cache_read(c, i * 8, 4096, &b), 0);
		assert_true(buf_ok(b));
		fs_buf_put(c, b);
		fs_cache_get_stats(c, &st);
		assert_true(st.bytes <= 8 * 4096);
	}
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.evictions, 33 - 8);
	assert_int_equal(st.buffers, 8);
	assert_true(fs_cache_contains(c, 0, 4096));
	assert_true(buf_ok(held));
	/* the oldest unreferenced went first; the newest are still here */
	assert_false(fs_cache_contains(c, 8, 4096));
	assert_true(fs_cache_contains(c, 32 * 8, 4096));
	/* an evicted buffer is read again on demand, with the same contents */
	assert_int_equal(fs_cache_read(c, 8, 4096, &b), 0);
	assert_true(buf_ok(b));
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.reads, 34);
	fs_buf_put(c, b);

	/* second chance: a buffer looked up recently survives the next eviction */
	b = fs_cache_lookup(c, 31 * 8, 4096);
	assert_non_null(b);
	fs_buf_put(c, b);
	for (uint64_t i = 100; i < 106; i++) {
		assert_int_equal(fs_cache_read(c, i * 8, 4096, &b), 0);
		fs_buf_put(c, b);
	}
	assert_true(fs_cache_contains(c, 31 * 8, 4096));

	/* dirty buffers stay; lowering the cap evicts everything else unreferenced */
	assert_int_equal(fs_cache_read(c, 2000, 4096, &b), 0);
	fs_buf_set_flags(b, FS_BUF_DIRTY, 0);
	fs_buf_put(c, b);
	fs_cache_set_cap(c, 4096);
	assert_true(fs_cache_contains(c, 2000, 4096));
	assert_true(fs_cache_contains(c, 0, 4096));
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 2);
	fs_buf_put(c, held);
	fs_cache_destroy(c);
}

struct thr_arg {
	struct fs_cache *c;
	unsigned seed;
	int bad;
};

static void *hammer(void *p)
{
	struct thr_arg *a = p;

	for (int i = 0; i < 4000; i++) {
		uint64_t daddr = (uint64_t)(rand_r(&a->seed) % 512) * 8;
		struct fs_buf *b;
		unsigned char tmp[4096];

		if (i % 3 == 0) {
			/* insert a correct copy, as readahead would */
			for (int s = 0; s < 8; s++)
				stamp(tmp + s * FS_BBSIZE, daddr + s);
			if (fs_cache_insert(a->c, daddr, 4096, tmp, &b)) {
				a->bad++;
				continue;
			}
		} else if (fs_cache_read(a->c, daddr, 4096, &b)) {
			a->bad++;
			continue;
		}
		if (!buf_ok(b) || b->daddr != daddr)
			a->bad++;
		fs_buf_put(a->c, b);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct tfix *t = *state;
	struct thr_arg args[6];
	pthread_t th[6];
	struct fs_cache_stats st;

	for (int round = 0; round < 2; round++) {
		struct fs_cache *c;
		/* round 0: everything fits; round 1: a cap forcing evictions under contention */
		assert_int_equal(fs_cache_create(t->dev, round ? 64 * 4096 : 0, &c), 0);
		for (int i = 0; i < 6; i++) {
			args[i] = (struct thr_arg){ .c = c, .seed = 17u * (i + 1) + round };
			assert_int_equal(pthread_create(&th[i], NULL, hammer, &args[i]), 0);
		}
		for (int i = 0; i < 6; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(args[i].bad, 0);
		}
		fs_cache_get_stats(c, &st);
		/* every fs_cache_read is one hit or one miss; inserts are neither */
		assert_int_equal(st.hits + st.misses, 6 * 2666);
		if (round == 0) {
			assert_true(st.buffers <= 512);
			assert_int_equal(st.evictions, 0);
		} else {
			assert_true(st.evictions > 0);
			assert_true(st.bytes <= 64 * 4096);
		}
		assert_int_equal(st.bytes, st.buffers * 4096);
		fs_cache_destroy(c);
	}
}

static void test_ra_plan(void **state)
{
	struct tfix *t = *state;
	struct fs_ra_opts o = { .max_window = 64 * 1024, .gap_max = 8192 };
	struct fs_ra_extent e[] = {
		{ 1000, 4096 }, { 0, 4096 }, { 8, 4096 }, { 8, 4096 },  /* dup */
		{ 24, 4096 },          /* gap of 4 KiB after 8+8: joins */
		{ 64, 8192 },          /* gap of 16 KiB: new window */
		{ 80, 512 }, { 200, 65536 + 4096 },  /* larger than a window: exact, alone */
		{ 400, 8192 }, { 416, 8192 }, { 432, 8192 }, { 448, 8192 }, { 464, 8192 },
		{ 480, 8192 }, { 496, 8192 }, { 512, 8192 }, { 528, 8192 }, /* 72 KiB dense: split */
		{ IMG_SECTORS, 512 },  /* past the device: dropped */
	};
	size_t n = sizeof(e) / sizeof(e[0]), nw;
	struct fs_ra_window *w;

	assert_int_equal(fs_ra_plan(t->dev, e, &n, &o, &w, &nw), 0);
	assert_int_equal(n, sizeof(e) / sizeof(e[0]) - 2);
	/* sorted */
	for (size_t i = 1; i < n; i++)
		assert_true(e[i - 1].daddr <= e[i].daddr);
	assert_int_equal(nw, 6);
	assert_int_equal(w[0].off, 0);
	assert_int_equal(w[0].len, 16384);
	assert_int_equal(w[0].count, 3);
	assert_int_equal(w[1].off, 64 * 512);
	assert_int_equal(w[1].count, 2);
	assert_int_equal(w[1].len, 80 * 512 + 512 - 64 * 512);
	assert_int_equal(w[2].off, 200 * 512);
	assert_int_equal(w[2].count, 1);
	assert_int_equal(w[2].len, 65536 + 4096);
	assert_int_equal(w[3].count, 8);
	assert_int_equal(w[3].len, 65536);
	assert_int_equal(w[4].count, 1);
	assert_int_equal(w[5].off, 1000 * 512);
	free(w);
}

static void test_ra_plan_direct(void **state)
{
	struct tfix *t = *state;
	struct fs_ra_extent e[] = { { 1, 512 }, { 30, 1024 } };
	size_t n = 2, nw;
	struct fs_ra_window *w;

	if (!t->dev->direct) {
		skip();
		return;
	}
	assert_int_equal(fs_ra_plan(t->dev, e, &n, NULL, &w, &nw), 0);
	for (size_t i = 0; i < nw; i++) {
		assert_int_equal(w[i].off % t->dev->dio_align, 0);
		assert_int_equal(w[i].len % t->dev->dio_align, 0);
	}
	free(w);
}

static void ra_run(struct tfix *t)
{
	struct fs_cache *c;
	struct fs_ioq *q;
	struct fs_ra_stats st = { 0 };
	struct fs_cache_stats cs;
	struct fs_ra_extent e[600];
	size_t n = 0;
	struct fs_buf *b;

	/* a dense region (inode chunks every 32 KiB), plus sparse single blocks */
	for (uint64_t i = 0; i < 512; i++)
		e[n++] = (struct fs_ra_extent){ 4096 + i * 64, 16384 };
	for (uint64_t i = 0; i < 40; i++)
		e[n++] = (struct fs_ra_extent){ 40000 + i * 512, 4096 };
	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	assert_int_equal(fs_ioq_create(t->dev, &q), 0);
	/* one object already cached is not read again */
	assert_int_equal(fs_cache_read(c, 40000, 4096, &b), 0);
	fs_buf_put(c, b);
	assert_int_equal(fs_readahead(c, q, e, n, &(struct fs_ra_opts){ .qdepth = 4 }, &st), 0);
	assert_int_equal(st.extents, 552);
	assert_int_equal(st.cached, 1);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.exact, 39);
	/* 512 * 32 KiB = 16 MiB dense: 8 windows of 2 MiB */
	assert_int_equal(st.windows, 8);
	assert_int_equal(st.bytes_kept, 512 * 16384 + 39 * 4096);
	/* the holes were read and dropped, not cached */
	assert_true(st.bytes_read > st.bytes_kept);
	fs_cache_get_stats(c, &cs);
	assert_int_equal(cs.bytes, 512 * 16384 + 40 * 4096);
	assert_int_equal(cs.buffers, 552);
	for (uint64_t i = 0; i < 512; i++) {
		b = fs_cache_lookup(c, 4096 + i * 64, 16384);
		assert_non_null(b);
		assert_true(buf_ok(b));
		fs_buf_put(c, b);
	}
	for (uint64_t i = 0; i < 40; i++) {
		b = fs_cache_lookup(c, 40000 + i * 512, 4096);
		assert_non_null(b);
		assert_true(buf_ok(b));
		fs_buf_put(c, b);
	}
	assert_null(fs_cache_lookup(c, 4096 + 32, 512));	/* a hole sector */
	fs_ioq_destroy(q);
	fs_cache_destroy(c);
}

static void test_readahead(void **state) { ra_run(*state); }

/* What a stream delivered: each object once, with its own sectors. */
struct seen {
	unsigned calls, bad, failed;
	uint8_t got[600];
	const struct fs_ra_extent *base;
	struct fs_ra_extent orig[600];
	size_t n;
};

static void on_object(void *priv, const struct fs_ra_extent *x, const unsigned char *data)
{
	struct seen *s = priv;
	size_t i;

	s->calls++;
	for (i = 0; i < s->n; i++)
		if (s->orig[i].daddr == x->daddr && s->orig[i].len == x->len)
			break;
	if (i == s->n) {
		s->bad++;
		return;
	}
	s->got[i]++;
	if (!data) {
		s->failed++;
		return;
	}
	for (uint32_t k = 0; k < x->len / FS_BBSIZE; k++)
		if (!sector_ok(data + (size_t)k * FS_BBSIZE, x->daddr + k))
			s->bad++;
}

static void stream_run(struct tfix *t, enum fs_io_engine e)
{
	struct fs_ra_stats st = { 0 };
	struct fs_ra_extent ext[600];
	struct seen s = { 0 };
	struct fs_dev_opts o = { .no_direct = !t->dev->direct, .engine = e };
	struct fs_dev *dev;
	struct fs_ioq *q;

	assert_int_equal(fs_dev_open(t->path, &o, &dev), 0);
	assert_int_equal(fs_ioq_create(dev, &q), 0);
	/* adjacent chunks, sparse blocks, a duplicate and one past the device's end */
	for (uint64_t i = 0; i < 512; i++)
		s.orig[s.n++] = (struct fs_ra_extent){ 4096 + i * 32, 16384 };
	for (uint64_t i = 0; i < 40; i++)
		s.orig[s.n++] = (struct fs_ra_extent){ 40000 + i * 512, 4096 };
	s.orig[s.n++] = (struct fs_ra_extent){ IMG_SECTORS + 8, 4096 };
	memcpy(ext, s.orig, s.n * sizeof(*ext));
	ext[s.n] = s.orig[3];
	assert_int_equal(fs_ra_stream(dev, q, ext, s.n + 1,
				      &(struct fs_ra_opts){ .qdepth = 3, .gap_max = 4096 },
				      on_object, &s, &st), 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.failed, 1);
	/* every object exactly once (the duplicate is read once) */
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.got[i], 1);
	assert_int_equal(s.calls, s.n);
	/* 8 MiB of adjacent chunks: 4 windows of 2 MiB; the sparse blocks are exact */
	assert_int_equal(st.exact, 40);
	assert_int_equal(st.windows, 4);
	assert_int_equal(st.bytes_kept, 512 * 16384 + 40 * 4096);
	assert_int_equal(st.bytes_read, st.bytes_kept);
	/* the queue is idle afterwards and can stream again */
	memcpy(ext, s.orig, 5 * sizeof(*ext));
	memset(&s.got, 0, sizeof(s.got));
	s.calls = 0;
	assert_int_equal(fs_ra_stream(dev, q, ext, 5, NULL, on_object, &s, NULL), 0);
	assert_int_equal(s.calls, 5);
	fs_ioq_destroy(q);
	fs_dev_close(dev);
}

/*
 * The bytes in flight, and the buffers a queue keeps, stay within
 * inflight_max (4 MiB by default): 16 MiB of adjacent chunks read as
 * eight 2 MiB windows at depth 16 would otherwise keep a 2 MiB buffer in
 * each of 8 slots.
 */
/* The image's pages out of the page cache, so reads go to the device (not copied from there). */
static void drop_pages(const char *path)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

static void inflight_run(struct tfix *t, uint32_t cap)
{
	struct fs_ra_stats st = { 0 }, st2 = { 0 };
	struct fs_ra_extent ext[600];
	struct fs_cache_stats cs;
	struct seen s = { 0 };
	struct fs_cache *c;
	struct fs_ioq *q;

	for (uint64_t i = 0; i < 512; i++)
		s.orig[s.n++] = (struct fs_ra_extent){ 4096 + i * 64, 32768 };
	memcpy(ext, s.orig, s.n * sizeof(*ext));
	assert_int_equal(fs_ioq_create(t->dev, &q), 0);
	drop_pages(t->path);
	assert_int_equal(fs_ra_stream(t->dev, q, ext, s.n,
				      &(struct fs_ra_opts){ .qdepth = 16, .inflight_max = cap },
				      on_object, &s, &st), 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.failed, 0);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.got[i], 1);
	assert_int_equal(st.windows, 8);
	assert_true(fs_ioq_buffered(q) <= (cap ? cap : 4u << 20));
	assert_true(fs_ioq_buffered(q) >= 2u << 20);	/* the windows' own size: still 2 MiB */
	/* the batch readahead into a cache, on the same queue */
	memcpy(ext, s.orig, s.n * sizeof(*ext));
	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	drop_pages(t->path);
	assert_int_equal(fs_readahead(c, q, ext, s.n,
				      &(struct fs_ra_opts){ .qdepth = 16, .inflight_max = cap }, &st2), 0);
	assert_int_equal(st2.windows, 8);
	assert_int_equal(st2.failed, 0);
	fs_cache_get_stats(c, &cs);
	assert_int_equal(cs.buffers, 512);
	assert_true(fs_ioq_buffered(q) <= (cap ? cap : 4u << 20));
	fs_cache_destroy(c);
	fs_ioq_destroy(q);
}

static void test_inflight_2m(void **state) { inflight_run(*state, 2u << 20); }
static void test_inflight_default(void **state) { inflight_run(*state, 0); }

static void test_stream_uring(void **state) { stream_run(*state, FS_IO_URING); }
static void test_stream_aio(void **state) { stream_run(*state, FS_IO_AIO); }
static void test_stream_pread(void **state) { stream_run(*state, FS_IO_PREAD); }

/*
 * An image read with O_DIRECT: ranges whose pages are all in the page
 * cache come from there (counted), others from the device.
 */
static void test_page_cache_first(void **state)
{
	struct tfix *t = *state;
	unsigned char *buf = fs_dev_alloc(t->dev, 65536);
	uint64_t before;
	int fd;

	assert_non_null(buf);
	if (!t->dev->direct) {
		free(buf);
		skip();	/* /var/tmp refused O_DIRECT: nothing to prefer the cache over */
	}
	assert_true(t->dev->try_cache);
	/* evict the file's pages, then make the first 64 KiB resident again */
	fd = open(t->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(pread(fd, buf, 65536, 0), 65536);
	close(fd);

	before = t->dev->cached_bytes;
	assert_int_equal(fs_dev_read(t->dev, buf, 65536, 0), 0);
	assert_true(sector_ok(buf, 0) && sector_ok(buf + 65536 - FS_BBSIZE, 127));
	assert_int_equal(t->dev->cached_bytes - before, 65536);
	/* a range not in the page cache goes to the device (and stays uncached) */
	before = t->dev->cached_bytes;
	assert_int_equal(fs_dev_read(t->dev, buf, 65536, 16 << 20), 0);
	assert_true(sector_ok(buf, 32768));
	assert_int_equal(t->dev->cached_bytes, before);
	assert_int_equal(fs_dev_read(t->dev, buf, 65536, 16 << 20), 0);
	assert_int_equal(t->dev->cached_bytes, before);
	free(buf);
}

/* A read-once: from the cache (then dropped) or from the device (not cached). */
static void test_read_once(void **state)
{
	struct tfix *t = *state;
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b, one = { .daddr = 300, .len = 4096 };
	unsigned char *buf = malloc(4096 + 1);

	assert_non_null(buf);
	one.data = buf + 1;	/* unaligned on purpose */
	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	assert_int_equal(fs_cache_read_once(c, 300, 4096, one.data), 0);
	assert_true(buf_ok(&one));
	assert_false(fs_cache_contains(c, 300, 4096));
	assert_int_equal(fs_cache_read(c, 400, 4096, &b), 0);
	fs_buf_put(c, b);
	one.daddr = 400;
	assert_int_equal(fs_cache_read_once(c, 400, 4096, one.data), 0);
	assert_true(buf_ok(&one));
	assert_false(fs_cache_contains(c, 400, 4096));
	assert_true(fs_cache_read_once(c, IMG_SECTORS, 512, one.data) < 0);
	urcu_bp_barrier();
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.buffers, 0);
	assert_int_equal(st.mem_bytes, 0);
	assert_int_equal(st.reads, 3);
	fs_cache_destroy(c);
	free(buf);
}

/* ---- the buffers' memory (libfs/io/slab.h) ---- */

/* Pieces are aligned to their size (4096 above it), never overlap, and are counted exactly. */
static void test_slab_pieces(void **state)
{
	enum { N = 600 };   /* 4 KiB pieces: more than one 2 MiB chunk holds */
	static const size_t sizes[] = { 512, 1024, 4096, 8192, 65536 };
	struct fs_slab *s;
	struct fs_slab_stats st;
	unsigned char **v = calloc(N, sizeof(*v));
	void *again;

	(void)state;
	assert_non_null(v);
	assert_int_equal(fs_slab_create(512, &s), 0);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t z = sizes[k], align = z < 4096 ? z : 4096;
		unsigned char *p = fs_slab_alloc(s, z);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % align, 0);
		if (z == 8192)
			assert_int_equal((uintptr_t)p % 8192, 0);
		memset(p, 0xa5, z);
		fs_slab_free(s, p, z);
	}
	for (int i = 0; i < N; i++) {
		v[i] = fs_slab_alloc(s, 4096);
		assert_non_null(v[i]);
		assert_int_equal((uintptr_t)v[i] % 4096, 0);
		memset(v[i], i & 0xff, 4096);
	}
	for (int i = 0; i < N; i++)
		for (size_t o = 0; o < 4096; o += 512)
			assert_int_equal(v[i][o], i & 0xff);
	/* a piece freed is the next one handed out */
	fs_slab_free(s, v[5], 4096);
	again = fs_slab_alloc(s, 4096);
	assert_ptr_equal(again, v[5]);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.piece_bytes, (uint64_t)N * 4096);
	assert_int_equal(st.large_bytes, 0);
	/* 511 pieces a chunk (the first holds the header), and the other sizes' chunks kept */
	assert_true(st.chunks >= 2 && st.chunks <= 2 + 5);
	for (int i = 0; i < N; i++)
		fs_slab_free(s, v[i], 4096);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.piece_bytes, 0);
	/* empty chunks are kept for reuse (at most 8), and trimmed away */
	assert_true(st.chunks <= 8);
	fs_slab_trim(s);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.chunks, 0);
	fs_slab_destroy(s);
	free(v);
}

/*
 * Batches: n pieces under one lock, counted like single ones; a chunk a
 * batch left empty is taken by another size without a new mapping, and
 * past the reserve chunks are unmapped.
 */
static void test_slab_batches(void **state)
{
	enum { N = 2000 };   /* 4 KiB pieces: four chunks */
	struct fs_slab *s;
	struct fs_slab_stats st;
	void **v = calloc(N, sizeof(*v));
	uint64_t maps;

	(void)state;
	assert_non_null(v);
	assert_int_equal(fs_slab_create(512, &s), 0);
	assert_int_equal(fs_slab_alloc_many(s, 4096, v, N), N);
	for (int i = 0; i < N; i++) {
		assert_non_null(v[i]);
		assert_int_equal((uintptr_t)v[i] % 4096, 0);
		memset(v[i], i & 0xff, 4096);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(((unsigned char *)v[i])[4095], i & 0xff);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.piece_bytes, (uint64_t)N * 4096);
	assert_int_equal(st.chunks, 4);
	maps = st.chunk_maps;
	v[7] = NULL;	/* NULLs are skipped (and that piece stays handed out) */
	fs_slab_free_many(s, v, 4096, N);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.piece_bytes, 4096);
	/* three chunks emptied: kept, and 512-byte pieces are cut from them */
	assert_int_equal(st.chunks, 4);
	assert_int_equal(fs_slab_alloc_many(s, 512, v, N), N);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.chunk_maps, maps);
	assert_int_equal(st.piece_bytes, 4096 + (uint64_t)N * 512);
	fs_slab_free_many(s, v, 512, N);
	/* other lengths go through posix_memalign, one by one */
	assert_int_equal(fs_slab_alloc_many(s, 12288, v, 3), 3);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.large_bytes, 3 * 12288);
	fs_slab_free_many(s, v, 12288, 3);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.large_bytes, 0);
	assert_int_equal(st.piece_bytes, 4096);
	fs_slab_destroy(s);
	free(v);
}

/* Other lengths: posix_memalign'd, aligned to 4096, counted rounded up to it. */
static void test_slab_large(void **state)
{
	struct fs_slab *s;
	struct fs_slab_stats st;
	void *a, *b, *c;

	(void)state;
	assert_int_equal(fs_slab_create(0, &s), 0);
	assert_null(fs_slab_alloc(s, 0));
	a = fs_slab_alloc(s, 12288);
	b = fs_slab_alloc(s, 1u << 17);
	c = fs_slab_alloc(s, 1000);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal((uintptr_t)a % 4096, 0);
	assert_int_equal((uintptr_t)b % 4096, 0);
	assert_int_equal((uintptr_t)c % 4096, 0);
	memset(a, 1, 12288);
	memset(b, 2, 1u << 17);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.large_bytes, 12288 + (1u << 17) + 4096);
	assert_int_equal(st.piece_bytes, 0);
	assert_int_equal(st.chunks, 0);
	fs_slab_free(s, a, 12288);
	fs_slab_free(s, b, 1u << 17);
	fs_slab_free(s, c, 1000);
	fs_slab_free(s, NULL, 4096);
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.large_bytes, 0);
	fs_slab_destroy(s);
}

struct slab_thr {
	struct fs_slab *s;
	unsigned seed;
	int bad;
};

static void *slab_worker(void *arg)
{
	enum { HELD = 256 };
	struct slab_thr *t = arg;
	unsigned char *held[HELD] = { 0 };
	size_t len[HELD] = { 0 };

	for (int it = 0; it < 20000; it++) {
		unsigned r = rand_r(&t->seed), i = r % HELD;

		if (held[i]) {
			for (size_t o = 0; o < len[i]; o += 256)
				if (held[i][o] != (unsigned char)i)
					t->bad++;
			fs_slab_free(t->s, held[i], len[i]);
			held[i] = NULL;
		} else {
			len[i] = (size_t)512 << ((r >> 8) % 5);   /* 512 .. 8192 */
			held[i] = fs_slab_alloc(t->s, len[i]);
			if (!held[i])
				t->bad++;
			else
				memset(held[i], (int)i, len[i]);
		}
	}
	for (int i = 0; i < HELD; i++)
		fs_slab_free(t->s, held[i], len[i]);
	return NULL;
}

/* Four threads allocating and freeing: no piece handed out twice, all counted back. */
static void test_slab_threads(void **state)
{
	struct fs_slab *s;
	struct fs_slab_stats st;
	struct slab_thr t[4];
	pthread_t th[4];

	(void)state;
	assert_int_equal(fs_slab_create(4096, &s), 0);
	for (int i = 0; i < 4; i++) {
		t[i] = (struct slab_thr){ .s = s, .seed = 17u * (unsigned)i + 1 };
		assert_int_equal(pthread_create(&th[i], NULL, slab_worker, &t[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].bad, 0);
	}
	fs_slab_get_stats(s, &st);
	assert_int_equal(st.piece_bytes, 0);
	assert_int_equal(st.large_bytes, 0);
	assert_true(st.chunks <= 5);
	fs_slab_destroy(s);
}

/* The cache's buffers take the bytes it counts; forgotten ones give them back. */
static void test_mem_counted(void **state)
{
	struct tfix *t = *state;
	struct fs_ra_extent ext[300];
	unsigned char src[8192];
	struct fs_cache *c;
	struct fs_cache_stats st;
	struct fs_buf *b;
	size_t n = 0;

	assert_int_equal(fs_cache_create(t->dev, 0, &c), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(fs_cache_read(c, 1000 + 8 * (fs_daddr_t)i, 4096, &b), 0);
		assert_true(buf_ok(b));
		fs_buf_put(c, b);
		ext[n++] = (struct fs_ra_extent){ 1000 + 8 * (fs_daddr_t)i, 4096 };
		assert_int_equal(fs_cache_read(c, 5000 + (fs_daddr_t)i, 512, &b), 0);
		fs_buf_put(c, b);
		ext[n++] = (struct fs_ra_extent){ 5000 + (fs_daddr_t)i, 512 };
		memset(src, i, sizeof(src));
		assert_int_equal(fs_cache_insert(c, 20000 + 16 * (fs_daddr_t)i, 8192, src, NULL), 0);
		ext[n++] = (struct fs_ra_extent){ 20000 + 16 * (fs_daddr_t)i, 8192 };
	}
	/* a length that is no power of two: rounded up to 4 KiB */
	assert_int_equal(fs_cache_read(c, 40000, 1536, &b), 0);
	assert_true(buf_ok(b));
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.bytes, 100 * (4096 + 512 + 8192) + 1536);
	assert_int_equal(st.mem_bytes, 100 * (4096 + 512 + 8192) + 4096);
	assert_true(st.mapped_bytes >= st.mem_bytes - 4096);
	fs_buf_put(c, b);
	assert_int_equal(fs_cache_forget_many(c, ext, n), n);
	assert_true(fs_cache_forget(c, 40000, 1536));
	urcu_bp_barrier();	/* fs_cache_forget frees after a grace period */
	fs_cache_get_stats(c, &st);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.mem_bytes, 0);
	fs_cache_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hit_miss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_existing_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_forget_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_evict_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_plan_direct, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_readahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readahead, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_stream_uring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_aio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_pread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_uring, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_stream_aio, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_page_cache_first, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_2m, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_default, setup_direct, teardown),
		cmocka_unit_test_setup_teardown(test_read_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_once, setup_direct, teardown),
		cmocka_unit_test(test_slab_pieces),
		cmocka_unit_test(test_slab_large),
		cmocka_unit_test(test_slab_batches),
		cmocka_unit_test(test_slab_threads),
		cmocka_unit_test_setup_teardown(test_mem_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mem_counted, setup_direct, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
