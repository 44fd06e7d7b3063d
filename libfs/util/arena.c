// SPDX-License-Identifier: GPL-2.0
/*
 * File-backed memory that does not stay resident (libfs/util/arena.h): a
 * PROT_NONE reservation, the file's steps mapped over it MAP_SHARED |
 * MAP_FIXED as they are allocated, MADV_DONTNEED to let the pages go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfs/util/arena.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static int make_file(const char *dir)
{
	char *path;
	int fd;

#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
#endif
	if (asprintf(&path, "%s/xfsx-arena.XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		free(path);
		return err;
	}
	unlink(path);
	free(path);
	return fd;
}

int fs_arena_open(struct fs_arena *a, const char *dir, unsigned nregions, size_t region_bytes)
{
	struct stat st;
	void *p;
	int fd;

	memset(a, 0, sizeof(*a));
	a->fd = a->statm = -1;
	if (!nregions || nregions > 8 || !region_bytes || region_bytes % FS_ARENA_STEP ||
	    region_bytes > SIZE_MAX / nregions)
		return -EINVAL;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	a->dir = strdup(dir);
	if (!a->dir)
		return -ENOMEM;
	fd = make_file(dir);
	if (fd < 0) {
		free(a->dir);
		a->dir = NULL;
		return fd;
	}
	p = mmap(NULL, (size_t)nregions * region_bytes, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		close(fd);
		free(a->dir);
		a->dir = NULL;
		return -ENOMEM;
	}
	a->fd = fd;
	a->base = p;
	a->nregions = nregions;
	a->region_bytes = region_bytes;
	return 0;
}

void fs_arena_close(struct fs_arena *a)
{
	if (!a->base)
		return;        /* never opened (or closed): nothing held */
	munmap(a->base, (size_t)a->nregions * a->region_bytes);
	if (a->fd >= 0)
		close(a->fd);
	if (a->statm >= 0)
		close(a->statm);
	free(a->dir);
	memset(a, 0, sizeof(*a));
	a->fd = a->statm = -1;
}

static int fail(struct fs_arena *a, int err)
{
	if (!a->err)
		a->err = err;
	return err;
}

/* Region r mapped (and on disk) up to at least end bytes. */
static int map_to(struct fs_arena *a, unsigned r, size_t end)
{
	size_t want, step;
	off_t off;
	void *p;

	if (end <= a->mapped[r])
		return 0;
	if (end > a->region_bytes)
		return fail(a, -ENOMEM);
	/* 1 MiB, doubling up to FS_ARENA_STEP, then a step at a time: a small tree takes little */
	step = a->mapped[r] < FS_ARENA_MIN ? FS_ARENA_MIN :
	       a->mapped[r] < FS_ARENA_STEP ? a->mapped[r] : FS_ARENA_STEP;
	want = a->mapped[r] + step;
	if (want < end)
		want = (end + FS_ARENA_MIN - 1) / FS_ARENA_MIN * FS_ARENA_MIN;
	if (want > a->region_bytes)
		want = a->region_bytes;
	off = (off_t)((size_t)r * a->region_bytes + a->mapped[r]);
	/* on disk first: a store into a page the file cannot hold would be a SIGBUS */
	if (fallocate(a->fd, 0, off, (off_t)(want - a->mapped[r]))) {
		int err = errno;

		if (err != EOPNOTSUPP && err != ENOSYS)
			return fail(a, -err);
		err = posix_fallocate(a->fd, off, (off_t)(want - a->mapped[r]));
		if (err)
			return fail(a, -err);
	}
	p = mmap(a->base + (size_t)r * a->region_bytes + a->mapped[r], want - a->mapped[r],
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a->fd, off);
	if (p == MAP_FAILED)
		return fail(a, -errno);
	/*
	 * No readahead: the page cache then makes this file's pages one by one
	 * (order 0), and a fault maps one page and its fault-around window; a
	 * large folio would be mapped whole (up to 2 MiB a fault).
	 */
	(void)madvise(p, want - a->mapped[r], MADV_RANDOM);
	a->mapped[r] = want;
	return 0;
}

void *fs_arena_alloc(struct fs_arena *a, unsigned r, size_t len, size_t align)
{
	size_t at;

	if (r >= a->nregions || a->err)
		return NULL;
	if (!align)
		align = 1;
	at = (a->used[r] + align - 1) & ~(align - 1);
	if (len > a->region_bytes || at > a->region_bytes - len) {
		fail(a, -ENOMEM);
		return NULL;
	}
	if (map_to(a, r, at + len))
		return NULL;
	a->used[r] = at + len;
	a->since_trim += len;
	if (a->since_trim >= FS_ARENA_RESIDENT)
		fs_arena_trim(a);
	return a->base + (size_t)r * a->region_bytes + at;
}

void *fs_arena_realloc(struct fs_arena *a, unsigned r, void *old, size_t oldlen, size_t newlen,
		       size_t align)
{
	unsigned char *rb = a->base + (size_t)r * a->region_bytes;
	unsigned char *p;

	if (r >= a->nregions || a->err)
		return NULL;
	if (old && (unsigned char *)old + oldlen == rb + a->used[r] && newlen >= oldlen) {
		size_t at = (size_t)((unsigned char *)old - rb);

		if (newlen > a->region_bytes - at) {
			fail(a, -ENOMEM);
			return NULL;
		}
		if (map_to(a, r, at + newlen))
			return NULL;
		a->used[r] = at + newlen;
		a->since_trim += newlen - oldlen;
		return old;
	}
	p = fs_arena_alloc(a, r, newlen, align);
	if (p && old)
		memcpy(p, old, oldlen < newlen ? oldlen : newlen);
	return p;
}

size_t fs_arena_mark(const struct fs_arena *a, unsigned r)
{
	return r < a->nregions ? a->used[r] : 0;
}

void fs_arena_release(struct fs_arena *a, unsigned r, size_t mark)
{
	size_t pg = page_size(), lo, hi;
	unsigned char *rb;

	if (r >= a->nregions || mark >= a->used[r])
		return;
	rb = a->base + (size_t)r * a->region_bytes;
	lo = (mark + pg - 1) & ~(pg - 1);
	hi = (a->used[r] + pg - 1) & ~(pg - 1);
	/* the partial page by hand, whole pages zeroed in the file (still allocated: no SIGBUS) */
	memset(rb + mark, 0, (lo < a->used[r] ? lo : a->used[r]) - mark);
	if (hi > lo) {
		if (fallocate(a->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			      (off_t)((size_t)r * a->region_bytes + lo), (off_t)(hi - lo)))
			memset(rb + lo, 0, hi - lo);
		(void)madvise(rb + lo, hi - lo, MADV_DONTNEED);
	}
	a->used[r] = mark;
}

int fs_arena_reserve(struct fs_arena *a, unsigned r, size_t bytes)
{
	if (r >= a->nregions)
		return -EINVAL;
	if (a->err)
		return a->err;
	if (bytes > a->region_bytes - a->used[r])
		return fail(a, -ENOMEM);
	return map_to(a, r, a->used[r] + bytes);
}

void fs_arena_trim(struct fs_arena *a)
{
	for (unsigned r = 0; r < a->nregions; r++)
		if (a->mapped[r])
			(void)madvise(a->base + (size_t)r * a->region_bytes, a->mapped[r],
				      MADV_DONTNEED);
	a->since_trim = 0;
}

/* Resident pages of file mappings (the arena's and the program's own), from /proc. */
static size_t resident_shared(struct fs_arena *a)
{
	unsigned long size, res, shared;
	char buf[128];
	ssize_t n;

	if (a->statm < 0)
		a->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	n = a->statm < 0 ? -1 : pread(a->statm, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return SIZE_MAX;
	buf[n] = 0;
	if (sscanf(buf, "%lu %lu %lu", &size, &res, &shared) != 3)
		return SIZE_MAX;
	return (size_t)shared * page_size();
}

/*
 * A read fault maps the page's neighbours too (fault-around: 64 KiB), so
 * FS_ARENA_TICKS ticks that each touch a new place map a few MiB at most.
 */
void fs_arena_tick(struct fs_arena *a)
{
	if (!a->base || ++a->ticks % FS_ARENA_TICKS)
		return;
	if (resident_shared(a) > FS_ARENA_RESIDENT)
		fs_arena_trim(a);
}

size_t fs_arena_bytes(const struct fs_arena *a)
{
	size_t n = 0;

	for (unsigned r = 0; r < a->nregions; r++)
		n += a->mapped[r];
	return n;
}
