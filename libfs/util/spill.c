// SPDX-License-Identifier: GPL-2.0
/*
 * Sorted runs on disk and their k-way merge (libfs/util/spill.h): one
 * unlinked temporary file per spill, runs appended at an offset taken
 * under a lock, read back through a buffer per run and merged with a
 * binary heap.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfs/util/spill.h"

enum {
	SPILL_FANIN = 64,            /* runs merged at once */
	SPILL_BUF = 16 << 10,        /* bytes of read buffer per run */
};

struct fs_spill {
	pthread_mutex_t lock;
	char *dir;
	int dirfd, fd;               /* fd: -1 until the first write */
	size_t recsize;
	uint64_t end, runs;          /* bytes appended; runs written */
	int err;                     /* the first error */
	bool vanish_hook;            /* XFSX_TEST_SPILL_VANISH: remove dir after the first run */
};

static int keep_err(struct fs_spill *sp, int err)
{
	pthread_mutex_lock(&sp->lock);
	if (!sp->err)
		sp->err = err;
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int fs_spill_open(const char *dir, size_t recsize, struct fs_spill **out)
{
	struct fs_spill *sp;
	struct stat st;
	int dfd;

	if (!recsize || recsize > SPILL_BUF)
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) || faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS)) {
		int err = -errno;

		close(dfd);
		return err;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp || !(sp->dir = strdup(dir))) {
		free(sp);
		close(dfd);
		return -ENOMEM;
	}
	pthread_mutex_init(&sp->lock, NULL);
	sp->dirfd = dfd;
	sp->fd = -1;
	sp->recsize = recsize;
	sp->vanish_hook = getenv("XFSX_TEST_SPILL_VANISH") != NULL;
	*out = sp;
	return 0;
}

void fs_spill_close(struct fs_spill *sp)
{
	if (!sp)
		return;
	if (sp->fd >= 0)
		close(sp->fd);
	close(sp->dirfd);
	pthread_mutex_destroy(&sp->lock);
	free(sp->dir);
	free(sp);
}

const char *fs_spill_dir(const struct fs_spill *sp)
{
	return sp->dir;
}

int fs_spill_error(const struct fs_spill *sp)
{
	return __atomic_load_n(&sp->err, __ATOMIC_RELAXED);
}

uint64_t fs_spill_runs(const struct fs_spill *sp)
{
	return __atomic_load_n(&sp->runs, __ATOMIC_RELAXED);
}

uint64_t fs_spill_bytes(const struct fs_spill *sp)
{
	return __atomic_load_n(&sp->end, __ATOMIC_RELAXED);
}

/* The file, made unlinked in dir (O_TMPFILE, else a unique name removed at once). Under lock. */
static int make_file(struct fs_spill *sp)
{
	char name[64];

	sp->fd = openat(sp->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (sp->fd >= 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	for (unsigned k = 0; k < 100; k++) {
		snprintf(name, sizeof(name), ".xfsx-spill-%ld-%u", (long)getpid(), k);
		sp->fd = openat(sp->dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (sp->fd >= 0) {
			unlinkat(sp->dirfd, name, 0);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Room for bytes at the file's end (the file made at the first call): its offset. */
static int reserve(struct fs_spill *sp, uint64_t bytes, uint64_t *off)
{
	struct stat st;
	int err = 0;

	pthread_mutex_lock(&sp->lock);
	if (sp->err)
		err = sp->err;
	else if (fstat(sp->dirfd, &st) || st.st_nlink == 0)
		err = -ENOENT;		/* the directory was removed under us */
	else if (sp->fd < 0)
		err = make_file(sp);
	*off = sp->end;
	if (!err)
		sp->end += bytes;
	pthread_mutex_unlock(&sp->lock);
	return err ? keep_err(sp, err) : 0;
}

static int pwrite_all(struct fs_spill *sp, const void *src, uint64_t bytes, uint64_t off)
{
	const char *p = src;

	for (uint64_t done = 0; done < bytes;) {
		ssize_t w = pwrite(sp->fd, p + done, bytes - done, (off_t)(off + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return keep_err(sp, w < 0 ? -errno : -ENOSPC);
		done += (uint64_t)w;
	}
	return 0;
}

static void count_run(struct fs_spill *sp)
{
	if (__atomic_add_fetch(&sp->runs, 1, __ATOMIC_RELAXED) == 1 && sp->vanish_hook)
		rmdir(sp->dir);	/* the test hook: the directory goes away mid-run */
}

int fs_spill_write(struct fs_spill *sp, const void *recs, size_t n, struct fs_spill_run *run)
{
	uint64_t bytes = (uint64_t)n * sp->recsize, off;
	int err = reserve(sp, bytes, &off);

	if (!err)
		err = pwrite_all(sp, recs, bytes, off);
	if (err)
		return err;
	run->off = off;
	run->n = n;
	count_run(sp);
	return 0;
}

static int pread_all(struct fs_spill *sp, void *dst, uint64_t bytes, uint64_t off)
{
	char *p = dst;

	for (uint64_t done = 0; done < bytes;) {
		ssize_t r = pread(sp->fd, p + done, bytes - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return keep_err(sp, r < 0 ? -errno : -EIO);
		done += (uint64_t)r;
	}
	return 0;
}

int fs_spill_read(struct fs_spill *sp, const struct fs_spill_run *run, void *dst)
{
	if (!run->n)
		return 0;
	if (sp->fd < 0)
		return -EIO;
	return pread_all(sp, dst, run->n * sp->recsize, run->off);
}

int fs_spill_read_part(struct fs_spill *sp, const struct fs_spill_run *run, uint64_t first,
		       size_t n, void *dst)
{
	if (first > run->n || n > run->n - first)
		return -EINVAL;
	if (!n)
		return 0;
	if (sp->fd < 0)
		return -EIO;
	return pread_all(sp, dst, (uint64_t)n * sp->recsize, run->off + first * sp->recsize);
}

void fs_spill_discard(struct fs_spill *sp, const struct fs_spill_run *run)
{
	uint64_t bytes = run->n * sp->recsize;

	if (sp->fd >= 0 && bytes)
		(void)fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)run->off, (off_t)bytes);
}

/* One input of a merge: its run, what is left to read, a buffer of records. */
struct cursor {
	struct fs_spill_run run;
	uint64_t next;               /* records of the run read into buf so far */
	char *buf;
	size_t have, at;             /* records in buf, the current one */
	unsigned idx;                /* the run's place, for ties */
};

static int refill(struct fs_spill *sp, struct cursor *c, size_t cap)
{
	uint64_t left = c->run.n - c->next;
	size_t take = left < cap ? (size_t)left : cap;
	int err;

	c->have = c->at = 0;
	if (!take)
		return 0;
	err = pread_all(sp, c->buf, (uint64_t)take * sp->recsize,
			c->run.off + c->next * sp->recsize);
	if (err)
		return err;
	c->next += take;
	c->have = take;
	return 0;
}

struct heap {
	struct cursor **v;
	size_t n;
	size_t recsize;
	int (*cmp)(const void *, const void *);
};

static const void *cur_rec(const struct heap *h, const struct cursor *c)
{
	return c->buf + c->at * h->recsize;
}

static bool less(const struct heap *h, const struct cursor *a, const struct cursor *b)
{
	int r = h->cmp(cur_rec(h, a), cur_rec(h, b));

	return r < 0 || (r == 0 && a->idx < b->idx);
}

static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct cursor *t;

		if (l < h->n && less(h, h->v[l], h->v[m]))
			m = l;
		if (r < h->n && less(h, h->v[r], h->v[m]))
			m = r;
		if (m == i)
			return;
		t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
}

/* Merge at most SPILL_FANIN runs to emit. */
static int merge_some(struct fs_spill *sp, const struct fs_spill_run *runs, size_t nruns,
		      int (*cmp)(const void *, const void *),
		      int (*emit)(void *priv, const void *rec), void *priv)
{
	size_t cap = SPILL_BUF / sp->recsize;
	struct cursor *cur = calloc(nruns, sizeof(*cur));
	struct heap h = { .recsize = sp->recsize, .cmp = cmp };
	int err = 0;

	h.v = calloc(nruns, sizeof(*h.v));
	if (!cur || !h.v) {
		free(cur);
		free(h.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nruns && !err; i++) {
		cur[i].run = runs[i];
		cur[i].idx = (unsigned)i;
		cur[i].buf = malloc(cap * sp->recsize);
		if (!cur[i].buf)
			err = -ENOMEM;
		else
			err = refill(sp, &cur[i], cap);
		if (!err && cur[i].have)
			h.v[h.n++] = &cur[i];
	}
	for (size_t i = h.n; i-- > 0;)
		if (!err)
			sift_down(&h, i);
	while (!err && h.n) {
		struct cursor *c = h.v[0];

		err = emit(priv, cur_rec(&h, c));
		if (err)
			break;
		if (++c->at == c->have) {
			err = refill(sp, c, cap);
			if (!err && !c->have) {
				fs_spill_discard(sp, &c->run);
				h.v[0] = h.v[--h.n];
			}
		}
		if (h.n)
			sift_down(&h, 0);
	}
	for (size_t i = 0; i < nruns; i++)
		free(cur[i].buf);
	free(cur);
	free(h.v);
	return err;
}

/* A merge pass's output: records buffered, written in order into room reserved for all. */
struct runout {
	struct fs_spill *sp;
	char *buf;
	size_t have, cap;
	uint64_t off;                /* where the next piece goes */
};

static int flush_out(struct runout *o)
{
	uint64_t bytes = (uint64_t)o->have * o->sp->recsize;
	int err;

	if (!o->have)
		return 0;
	err = pwrite_all(o->sp, o->buf, bytes, o->off);
	o->off += bytes;
	o->have = 0;
	return err;
}

static int emit_out(void *priv, const void *rec)
{
	struct runout *o = priv;

	memcpy(o->buf + o->have * o->sp->recsize, rec, o->sp->recsize);
	return ++o->have == o->cap ? flush_out(o) : 0;
}

/* Merge runs into one new run, through a buffer of at most 4 MiB. */
static int merge_to_run(struct fs_spill *sp, const struct fs_spill_run *runs, size_t nruns,
			int (*cmp)(const void *, const void *), struct fs_spill_run *out)
{
	uint64_t total = 0, start;
	struct runout o = { .sp = sp };
	int err;

	for (size_t i = 0; i < nruns; i++)
		total += runs[i].n;
	err = reserve(sp, total * sp->recsize, &start);
	if (err)
		return err;
	o.off = start;
	o.cap = total * sp->recsize <= (4u << 20) ? (size_t)total : (4u << 20) / sp->recsize;
	o.buf = malloc((o.cap ? o.cap : 1) * sp->recsize);
	if (!o.buf)
		return -ENOMEM;
	err = merge_some(sp, runs, nruns, cmp, emit_out, &o);
	if (!err)
		err = flush_out(&o);
	free(o.buf);
	if (!err) {
		*out = (struct fs_spill_run){ start, total };
		count_run(sp);
	}
	return err;
}

int fs_spill_merge(struct fs_spill *sp, const struct fs_spill_run *runs, size_t nruns,
		   int (*cmp)(const void *a, const void *b),
		   int (*emit)(void *priv, const void *rec), void *priv)
{
	struct fs_spill_run *cur = NULL;
	size_t n = nruns;
	int err = 0;

	if (sp->err)
		return sp->err;
	if (n > SPILL_FANIN) {
		cur = malloc(n * sizeof(*cur));
		if (!cur)
			return -ENOMEM;
		memcpy(cur, runs, n * sizeof(*cur));
		/* passes of SPILL_FANIN-way merges until one pass can finish */
		while (!err && n > SPILL_FANIN) {
			size_t w = 0;

			for (size_t i = 0; i < n && !err; i += SPILL_FANIN) {
				size_t k = n - i < SPILL_FANIN ? n - i : SPILL_FANIN;

				err = merge_to_run(sp, cur + i, k, cmp, &cur[w]);
				w++;
			}
			n = w;
		}
		runs = cur;
	}
	if (!err)
		err = merge_some(sp, runs, n, cmp, emit, priv);
	free(cur);
	return err;
}
