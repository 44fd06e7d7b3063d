// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_mkfs -p: places a tree (proto.h) in the filesystem mkfs_write laid
 * out, before the primary superblock says it is complete.
 *
 * Placement follows the kernel's habits: the root in AG 0's root chunk,
 * each new directory in the next AG (a rotor), files in their parent's
 * AG; inode chunks allocated as needed, aligned, from the front of the AG;
 * then, AG by AG, file data, directory, symlink and xattr blocks from a
 * first-fit allocator over the AG's free space, so one AG's writes are
 * one ascending stream, gathered into large writes.  File data keeps its
 * holes (SEEK_DATA/SEEK_HOLE); it is read into the gather buffers by a pool
 * of reader threads while this thread places what follows, and a buffer is
 * written (by one writer thread) once its reads are done.  Directories come from libfs/build/dirbuild.c,
 * forks with more extents than the inode holds get a bmbt from the bulk
 * loader.  Last, per AG, the btrees (bno, cnt, inobt, finobt, rmap,
 * refcount) are bulk loaded into one run of blocks after the AG's last
 * allocation, so their own rmap records are three (OWN_INOBT, OWN_REFC,
 * OWN_AG) whatever their sizes, and the AGF, AGI and AGFL are rewritten.
 * Every metadata block put in a gather buffer is noted with its type, and
 * the writer seals each (mkfs_seal: CRC stamped, read verifier run) before
 * the buffer goes out; one that fails stops the run, nothing more written.
 */
#include "mkfs/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libfs/build/attrbuild.h"
#include "libfs/build/bload.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/crc.h"
#include "libfs/build/dirbuild.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/build/freesp.h"
#include "libfs/format/sb.h"
#include "libfs/format/symlink.h"
#include "libfs/util/vec.h"
#include "mkfs/write.h"

#define WBUF_BYTES (8u << 20)      /* writes are gathered up to this size */
#define WBUF_COUNT 4               /* one filling, the others queued or being written */
/*
 * One writer: a write smaller than the O_DIRECT unit is a read-modify-write
 * of the unit (libfs/io/io.c), and two of them in flight on one unit would
 * lose one's bytes; in order, one at a time, they cannot.
 */
#define WRITERS 1
/*
 * Readers: file data is read into the gather buffers by a pool of threads,
 * so the opens and the page-cache copies of many small files proceed side
 * by side while this thread places the next inodes (two cores are usual).
 */
#define READERS 2
#define RJOBS 4096                 /* queued reads */
#define RBATCH 16                  /* reads a reader takes at once */
#define NOINODE UINT32_MAX
#define RTINODE (UINT32_MAX - 1)   /* the root chunk's realtime bitmap and summary */

struct rrec {
	uint32_t start, len;
	uint64_t owner, offset;    /* offset with the XFS_RMAP_OFF_* flags */
};

struct chunk {
	uint32_t agbno;
	uint32_t *slot;            /* chunk_inodes entries: tree index, or NOINODE */
	uint32_t used;
	bool root;                 /* AG 0's root chunk (root, rt bitmap, rt summary) */
};

struct agst {
	uint32_t agno, length;
	struct fs_alloc_rec *free; /* free extents, by start */
	size_t nfree, capfree;
	struct chunk *chunks;
	size_t nchunks, capchunks;
	struct rrec *rmap;
	size_t nrmap, caprmap;
	uint64_t icount, ifree;
};

/* One read: a piece of a source file into a gather buffer, zeros past its end. */
struct rjob {
	const char *path;
	uint64_t foff, fsize;      /* where in the file; its size when placed */
	unsigned char *dst;
	size_t len;                /* bytes of buffer to fill */
	unsigned buf;              /* the buffer dst is in */
};

/* A metadata block in a gather buffer, sealed by the writer before the buffer is written. */
struct wobj {
	uint32_t off, len;         /* its bytes in the buffer */
	enum fs_mtype type;
	fs_agnumber_t agno;
	fs_ino_t ino;              /* owner; an inode chunk's first inode */
};

struct pop {
	struct fs_dev *dev;
	const struct mkfs_plan *p;
	struct proto_tree *t;
	struct fs_geom g;
	struct agst *ags;
	uint32_t litino;
	/* the write gatherer and its writer thread */
	struct wbuf {
		unsigned char *data;
		size_t len;
		uint64_t off;
		bool busy;             /* queued or being written */
		unsigned pending;      /* reads into it not yet done: it waits for them */
		struct wobj *objs;     /* its metadata blocks (file data is not) */
		size_t nobjs, capobjs;
	} bufs[WBUF_COUNT];
	unsigned cur;              /* the buffer being filled */
	unsigned queue[WBUF_COUNT];
	unsigned qhead, qtail, inflight;
	bool wstop;
	pthread_t writer[WRITERS];
	unsigned writers;          /* threads running */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	int werr;
	char vmsg[512];            /* the writer's verifier failure (set before werr) */
	/* the reader pool (under wlock; rcond: a job queued or a slot freed) */
	struct rjob *jobs;
	unsigned jhead, jtail;
	bool rstop;
	pthread_t reader[READERS];
	unsigned readers, ridle;
	pthread_cond_t rcond;
	int rerr;                  /* the first read error, and its file */
	const char *rerr_path;
	/*
	 * Parent pointers: the names of tree inode i are links[link_first[i]
	 * .. link_first[i + 1]), each a directory's tree index and the entry's
	 * index in it (built when the feature is on).
	 */
	uint32_t *link_first;
	struct tree_link { uint32_t dir, ent; } *links;
	/* progress */
	bool progress;
	uint64_t done_bytes, done_files;
	struct timespec start, last;
	char *err;
	size_t el;
};

static int perr(struct pop *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct pop *s, int rc, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	/* once the writer refused a block, that is why the run stops, whatever failed after */
	if (__atomic_load_n(&s->werr, __ATOMIC_ACQUIRE) == -EUCLEAN && s->vmsg[0]) {
		snprintf(s->err, s->el, "%s", s->vmsg);
		return -EUCLEAN;
	}

	va_start(ap, fmt);
	vsnprintf(s->err, s->el, fmt, ap);
	va_end(ap);
	n = strlen(s->err);
	if (rc < 0 && n < s->el)
		snprintf(s->err + n, s->el - n, ": %s", strerror(-rc));
	return rc < 0 ? rc : -EIO;
}

/* Every metadata block of a buffer sealed: 0, or -EUCLEAN with s->vmsg naming it. */
static int seal_buf(struct pop *s, struct wbuf *b)
{
	for (size_t i = 0; i < b->nobjs; i++) {
		const struct wobj *o = &b->objs[i];
		int rc = mkfs_seal(&s->g, o->type, o->agno, o->ino,
				   (fs_daddr_t)((b->off + o->off) >> FS_BBSHIFT), b->data + o->off,
				   o->len, s->vmsg, sizeof(s->vmsg));

		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The write gatherer: contiguous pieces become one write of up to
 * WBUF_BYTES, handed to a writer thread so reading the sources overlaps
 * the device's writes (WBUF_COUNT buffers in turn).
 */
static void *writer_main(void *arg)
{
	struct pop *s = arg;

	pthread_mutex_lock(&s->wlock);
	for (;;) {
		struct wbuf *b;
		bool failed;
		int rc;

		while (s->qhead == s->qtail && !s->wstop)
			pthread_cond_wait(&s->wcond, &s->wlock);
		if (s->qhead == s->qtail)
			break;
		b = &s->bufs[s->queue[s->qhead % WBUF_COUNT]];
		s->qhead++;
		s->inflight++;
		while (b->pending)
			pthread_cond_wait(&s->wcond, &s->wlock);
		failed = s->werr != 0;
		pthread_mutex_unlock(&s->wlock);
		/* after a failure the rest is dropped: the run is lost anyway */
		rc = failed ? 0 : seal_buf(s, b);
		if (!failed && !rc)
			rc = fs_dev_write(s->dev, b->data, b->len, b->off);
		pthread_mutex_lock(&s->wlock);
		if (rc < 0 && !s->werr)
			__atomic_store_n(&s->werr, rc, __ATOMIC_RELEASE);
		b->len = 0;
		b->busy = false;
		s->inflight--;
		pthread_cond_broadcast(&s->wcond);
	}
	pthread_mutex_unlock(&s->wlock);
	return NULL;
}

/*
 * A reader's last directory: files come in tree order, so the next one is
 * most often in the same directory, and opening it by name there saves a
 * lookup per component of its path.
 */
struct rdir {
	int fd;
	size_t len;
	char path[PATH_MAX];
};

static int rd_open(struct rdir *rd, const char *path)
{
	const char *slash = strrchr(path, '/');
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	size_t len;

	/* O_NONBLOCK: a source turned into a FIFO since it was read must not hang us */
	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(rd->path))
		return open(path, flags);
	len = (size_t)(slash - path);
	if (rd->fd < 0 || rd->len != len || memcmp(rd->path, path, len)) {
		if (rd->fd >= 0)
			close(rd->fd);
		memcpy(rd->path, path, len);
		rd->path[len] = 0;
		rd->len = len;
		rd->fd = open(rd->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rd->fd < 0)
			return open(path, flags);
	}
	return openat(rd->fd, slash + 1, flags);
}

/*
 * A reader: takes up to RBATCH jobs at a time; after any error the rest
 * are only counted off (the run fails anyway), so nothing waits forever.
 */
static void *reader_main(void *arg)
{
	struct pop *s = arg;
	struct rjob mine[RBATCH];
	struct rdir *rd = malloc(sizeof(*rd));

	if (rd)
		rd->fd = -1;

	pthread_mutex_lock(&s->wlock);
	for (;;) {
		unsigned n = 0;
		bool failed;

		while (s->jhead == s->jtail && !s->rstop) {
			s->ridle++;
			pthread_cond_wait(&s->rcond, &s->wlock);
			s->ridle--;
		}
		if (s->jhead == s->jtail)
			break;
		while (n < RBATCH && s->jhead != s->jtail)
			mine[n++] = s->jobs[s->jhead++ % RJOBS];
		pthread_cond_broadcast(&s->rcond);   /* room for the placer */
		failed = s->rerr || s->werr;
		pthread_mutex_unlock(&s->wlock);
		uint64_t bytes = 0;
		int rc = 0;
		const char *path = NULL;

		for (unsigned i = 0; i < n && !failed && !rc; i++) {
			struct rjob *j = &mine[i];
			size_t got = 0, want = j->fsize > j->foff ? j->fsize - j->foff : 0;
			int fd = rd ? rd_open(rd, j->path) :
				 open(j->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

			if (want > j->len)
				want = j->len;
			if (fd < 0) {
				rc = -errno;
				path = j->path;
				break;
			}
			while (got < want) {
				ssize_t r = pread(fd, j->dst + got, want - got, (off_t)(j->foff + got));

				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0) {
					rc = -errno;
					path = j->path;
					break;
				}
				if (r == 0)
					break;  /* shorter than it was: the rest reads as zeros */
				got += (size_t)r;
			}
			close(fd);
			memset(j->dst + got, 0, j->len - got);
			bytes += got;
		}
		__atomic_fetch_add(&s->done_bytes, bytes, __ATOMIC_RELAXED);
		pthread_mutex_lock(&s->wlock);
		if (rc && !s->rerr) {
			s->rerr_path = path;
			__atomic_store_n(&s->rerr, rc, __ATOMIC_RELEASE);
		}
		for (unsigned i = 0; i < n; i++)
			if (!--s->bufs[mine[i].buf].pending)
				pthread_cond_broadcast(&s->wcond);
	}
	pthread_mutex_unlock(&s->wlock);
	if (rd && rd->fd >= 0)
		close(rd->fd);
	free(rd);
	return NULL;
}

/* Queue a read of len bytes at dst (in the current buffer) from path at foff. */
static void rd_queue(struct pop *s, const char *path, uint64_t foff, uint64_t fsize,
		     unsigned char *dst, size_t len)
{
	pthread_mutex_lock(&s->wlock);
	while (s->jtail - s->jhead == RJOBS)
		pthread_cond_wait(&s->rcond, &s->wlock);
	s->jobs[s->jtail++ % RJOBS] = (struct rjob){ path, foff, fsize, dst, len, s->cur };
	s->bufs[s->cur].pending++;
	if (s->ridle)
		pthread_cond_signal(&s->rcond);
	pthread_mutex_unlock(&s->wlock);
}

/* The first read error, as a message; 0 if none (the path is set before the error). */
static int rd_err(struct pop *s)
{
	int rc = __atomic_load_n(&s->rerr, __ATOMIC_ACQUIRE);

	return rc ? perr(s, rc, "reading %s", s->rerr_path) : 0;
}

/* The first write error (the writer thread sets it under the lock); a verifier's names its block. */
static int werr(struct pop *s)
{
	int rc = __atomic_load_n(&s->werr, __ATOMIC_ACQUIRE);

	if (rc == -EUCLEAN && s->vmsg[0] && !s->err[0])
		snprintf(s->err, s->el, "%s", s->vmsg);
	return rc;
}

/*
 * A gather buffer: 2 MiB aligned and backed by transparent huge pages where
 * the kernel offers them, so the readers' copies into it and the pinning of
 * its pages for each O_DIRECT write walk 4 huge pages per 8 MiB instead of
 * 2,048 small ones (measured: -p DIR ~20% faster on 1.6 GB of data).  A
 * target needing more than 2 MiB alignment gets fs_dev_alloc's.
 */
static unsigned char *wbuf_alloc(const struct fs_dev *dev)
{
	size_t align = (size_t)2 << 20;
	void *p = NULL;

	if (dev->dio_align > align)
		return fs_dev_alloc(dev, WBUF_BYTES);
	if (posix_memalign(&p, align, WBUF_BYTES))
		return NULL;
	(void)madvise(p, WBUF_BYTES, MADV_HUGEPAGE);   /* only a hint: fine if refused */
	return p;
}

/* Queue the current buffer and take a free one. */
static int wr_flush(struct pop *s)
{
	struct wbuf *cur = &s->bufs[s->cur];

	pthread_mutex_lock(&s->wlock);
	if (cur->len && !s->werr) {
		cur->busy = true;
		s->queue[s->qtail % WBUF_COUNT] = s->cur;
		s->qtail++;
		pthread_cond_broadcast(&s->wcond);
		for (;;) {
			unsigned i;

			for (i = 0; i < WBUF_COUNT && s->bufs[i].busy; i++)
				;
			if (i < WBUF_COUNT) {
				s->cur = i;
				break;
			}
			pthread_cond_wait(&s->wcond, &s->wlock);
		}
	}
	cur = &s->bufs[s->cur];
	cur->len = 0;
	cur->nobjs = 0;
	pthread_mutex_unlock(&s->wlock);
	return werr(s);
}

/* Everything queued is written: 0 or the first write error. */
static int wr_drain(struct pop *s)
{
	wr_flush(s);
	pthread_mutex_lock(&s->wlock);
	while (s->qhead != s->qtail || s->inflight)
		pthread_cond_wait(&s->wcond, &s->wlock);
	pthread_mutex_unlock(&s->wlock);
	return werr(s);
}

/* Room for len bytes (<= WBUF_BYTES, whole blocks) at device offset off; NULL on a write error. */
static unsigned char *wr_get(struct pop *s, uint64_t off, size_t len)
{
	struct wbuf *b = &s->bufs[s->cur];
	unsigned char *p;

	if (b->len && (off != b->off + b->len || b->len + len > WBUF_BYTES)) {
		wr_flush(s);
		b = &s->bufs[s->cur];
	}
	if (werr(s))
		return NULL;
	if (!b->len)
		b->off = off;
	p = b->data + b->len;
	b->len += len;
	return p;
}

static uint64_t fsb_off(const struct pop *s, fs_fsblock_t fsb)
{
	return fs_daddr_to_bytes(fs_fsb_to_daddr(&s->g, fsb));
}

static uint64_t agb_off(const struct pop *s, uint32_t agno, uint32_t agbno)
{
	return fs_daddr_to_bytes(fs_agbno_to_daddr(&s->g, agno, agbno));
}

/* The len bytes at p (from wr_get, just filled) are a metadata block of type t. */
static int wr_note(struct pop *s, const unsigned char *p, size_t len, enum fs_mtype t,
		   fs_agnumber_t agno, fs_ino_t ino)
{
	struct wbuf *b = &s->bufs[s->cur];

	if (FS_VEC_ROOM(b->objs, b->nobjs, b->capobjs, 64))
		return -ENOMEM;
	b->objs[b->nobjs++] = (struct wobj){ (uint32_t)(p - b->data), (uint32_t)len, t, agno, ino };
	return 0;
}

/*
 * A metadata block copied in and noted: its type the one of cand[0..n) its
 * magic names (a block with none is noted as cand[0], whose check fails it).
 */
static int wr_block(struct pop *s, uint64_t off, const void *buf, size_t len,
		    const enum fs_mtype *cand, size_t n, fs_agnumber_t agno, fs_ino_t ino)
{
	unsigned char *b = wr_get(s, off, len);
	enum fs_mtype t;

	if (!b)
		return werr(s);
	memcpy(b, buf, len);
	t = fs_verifier_by_magic(b, len, cand, n);
	return wr_note(s, b, len, t == FS_MT_NR ? cand[0] : t, agno, ino);
}

static const enum fs_mtype bmbt_types[] = { FS_MT_BMBT };
static const enum fs_mtype dir_types[] = { FS_MT_DIR_BLOCK, FS_MT_DIR_DATA, FS_MT_DIR_LEAF1,
					   FS_MT_DIR_LEAFN, FS_MT_DIR_FREE, FS_MT_DA_NODE };
static const enum fs_mtype attr_types[] = { FS_MT_ATTR_LEAF, FS_MT_DA_NODE, FS_MT_ATTR_RMT };
static const enum fs_mtype agbt_types[] = { FS_MT_BNOBT, FS_MT_CNTBT, FS_MT_INOBT, FS_MT_FINOBT,
					    FS_MT_RMAPBT, FS_MT_REFCBT };
#define NTYPES(v) (sizeof(v) / sizeof((v)[0]))

/* ---- per-AG space ---- */

static int rmap_add(struct pop *s, struct agst *a, uint32_t start, uint32_t len, uint64_t owner,
		    uint64_t off)
{
	if (a->nrmap == a->caprmap) {
		size_t cap = a->caprmap ? a->caprmap * 2 : 256;
		struct rrec *v = fs_arena_realloc(&s->t->ar, PROTO_AR_HEAP, a->rmap,
						  a->caprmap * sizeof(*v), cap * sizeof(*v), 8);

		if (!v)
			return -ENOMEM;
		a->rmap = v;
		a->caprmap = cap;
	}
	a->rmap[a->nrmap++] = (struct rrec){ start, len, owner, off };
	return 0;
}

static int free_insert(struct agst *a, size_t at, uint32_t start, uint32_t len)
{
	if (a->nfree == a->capfree) {
		size_t cap = a->capfree ? a->capfree * 2 : 16;
		struct fs_alloc_rec *v = realloc(a->free, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->free = v;
		a->capfree = cap;
	}
	memmove(a->free + at + 1, a->free + at, (a->nfree - at) * sizeof(*a->free));
	a->free[at] = (struct fs_alloc_rec){ start, len };
	a->nfree++;
	return 0;
}

/* Blocks the AG's own btrees may need for what it holds now (generous: half-full blocks). */
static uint64_t meta_reserve(const struct pop *s, const struct agst *a)
{
	uint64_t bs = s->g.blocksize, chunks = a->nchunks + 1;

	return 32 + s->g.agfl_size / 8 + 2 * ((a->nrmap + 8) * 24 / bs + 1) +
	       4 * (chunks * 16 / bs + 1) + 4 * ((a->nfree + 2) * 8 / bs + 1);
}

static uint64_t ag_free_blocks(const struct agst *a)
{
	uint64_t n = 0;

	for (size_t i = 0; i < a->nfree; i++)
		n += a->free[i].blockcount;
	return n;
}

/*
 * Up to want blocks (at least minlen, the start a multiple of align) in AG
 * a: the lowest free extent that holds all of them, so a file gets one
 * extent wherever one free extent can take it (as the kernel's allocator
 * gives a fresh filesystem's files); else the lowest that holds minlen.
 * keep: blocks to leave for the AG's own trees.  *got 0 when nothing fits.
 */
static int ag_alloc(struct pop *s, struct agst *a, uint32_t want, uint32_t minlen, uint32_t align,
		    bool keep, uint32_t *start, uint32_t *got)
{
	*got = 0;
	if (keep) {
		uint64_t fr = ag_free_blocks(a), res = meta_reserve(s, a);

		if (fr <= res + minlen)
			return 0;
		if (want > fr - res)
			want = (uint32_t)(fr - res);
	}
	for (int whole = 1; whole >= 0; whole--) {
		for (size_t i = 0; i < a->nfree; i++) {
			struct fs_alloc_rec *f = &a->free[i];
			uint32_t st = (f->startblock + align - 1) / align * align;
			uint32_t end = f->startblock + f->blockcount;
			uint32_t take;

			if (st >= end || end - st < (whole ? want : minlen))
				continue;
			take = end - st < want ? end - st : want;
			/* pieces of minlen blocks stay whole (directory blocks span several fs blocks) */
			take -= take % minlen;
			*start = st;
			*got = take;
			if (st == f->startblock) {
				f->startblock += take;
				f->blockcount -= take;
				if (!f->blockcount) {
					memmove(f, f + 1, (a->nfree - i - 1) * sizeof(*f));
					a->nfree--;
				}
			} else {
				uint32_t tail = end - (st + take);

				f->blockcount = st - f->startblock;
				if (tail)
					return free_insert(a, i + 1, st + take, tail);
			}
			return 0;
		}
	}
	return 0;
}

/* ---- placement: AGs and inode numbers ---- */

static int new_chunk(struct pop *s, struct agst *a, bool *ok)
{
	const struct mkfs_plan *p = s->p;
	uint32_t start, got;
	struct chunk *c;
	int rc;

	*ok = false;
	rc = ag_alloc(s, a, p->chunk_blocks, p->chunk_blocks, p->chunk_align, true, &start, &got);
	if (rc || !got)
		return rc;
	if (a->nchunks == a->capchunks) {
		size_t cap = a->capchunks ? a->capchunks * 2 : 16;
		struct chunk *v = realloc(a->chunks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->chunks = v;
		a->capchunks = cap;
	}
	c = &a->chunks[a->nchunks];
	memset(c, 0, sizeof(*c));
	c->agbno = start;
	c->slot = fs_arena_alloc(&s->t->ar, PROTO_AR_HEAP, p->chunk_inodes * sizeof(*c->slot), 4);
	if (!c->slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->chunk_inodes; i++)
		c->slot[i] = NOINODE;
	a->nchunks++;
	a->icount += p->chunk_inodes;
	a->ifree += p->chunk_inodes;
	*ok = true;
	return rmap_add(s, a, start, p->chunk_blocks, XFS_RMAP_OWN_INODES, 0);
}

/* An inode number for tree inode idx, in AG agno or, when that is full, the next one with room. */
static int place_inode(struct pop *s, uint32_t idx, uint32_t agno)
{
	const struct mkfs_plan *p = s->p;

	for (uint32_t tries = 0; tries < p->agcount; tries++) {
		struct agst *a = &s->ags[(agno + tries) % p->agcount];
		struct chunk *c = a->nchunks ? &a->chunks[a->nchunks - 1] : NULL;
		bool ok = true;
		int rc;

		if (!c || c->used == p->chunk_inodes) {
			rc = new_chunk(s, a, &ok);
			if (rc)
				return rc;
			c = &a->chunks[a->nchunks - 1];
		}
		if (!ok)
			continue;
		for (uint32_t i = 0; i < p->chunk_inodes; i++)
			if (c->slot[i] == NOINODE) {
				fs_agino_t agino = fs_agbno_to_agino(&s->g, c->agbno) + i;

				c->slot[i] = idx;
				c->used++;
				a->ifree--;
				s->t->v[idx].agno = a->agno;
				s->t->v[idx].ino = fs_agino_to_ino(&s->g, a->agno, agino);
				return 0;
			}
	}
	return perr(s, -ENOSPC, "no room for inode %u of %u (the tree has more inodes than the "
		    "filesystem can hold)", idx + 1, s->t->n);
}

static int place_all(struct pop *s)
{
	struct proto_tree *t = s->t;
	size_t mark = fs_arena_mark(&t->ar, PROTO_AR_SCRATCH);
	uint32_t *queue = fs_arena_alloc(&t->ar, PROTO_AR_SCRATCH, (size_t)t->n * sizeof(*queue), 4);
	uint32_t qh = 0, qt = 0, rotor = 0;
	int rc = 0;

	if (!queue)
		return perr(s, -ENOMEM, "placing inodes");
	/* the root takes the root chunk's first inode */
	t->v[0].agno = 0;
	t->v[0].ino = s->p->rootino;
	queue[qt++] = 0;
	while (qh < qt && !rc) {
		uint32_t d = queue[qh++];

		for (uint32_t k = 0; k < t->v[d].nents && !rc; k++) {
			uint32_t c = t->v[d].ents[k].child;
			struct proto_inode *in = &t->v[c];

			if (in->ino)
				continue;  /* a hard link already placed */
			if (S_ISDIR(in->mode)) {
				/* directories spread over the AGs, as the kernel's rotor does */
				rotor = (rotor + 1) % s->p->agcount;
				rc = place_inode(s, c, rotor);
				queue[qt++] = c;
			} else {
				rc = place_inode(s, c, t->v[d].agno);
			}
			fs_arena_tick(&t->ar);
		}
	}
	fs_arena_release(&t->ar, PROTO_AR_SCRATCH, mark);
	return rc;
}

/* ---- forks ---- */

/*
 * Extents into the data fork (or attr fork) of inode in: an extent list when
 * they fit, else a bmbt through the bulk loader with blocks from the inode's AG.
 */
struct bm_alloc {
	struct pop *s;
	struct agst *a;
	fs_ino_t ino;
	bool attr;
};

static int bm_alloc_block(void *priv, uint64_t *ptr)
{
	struct bm_alloc *b = priv;
	struct pop *s = b->s;
	uint32_t start, got;

	for (uint32_t tries = 0; tries < s->p->agcount; tries++) {
		struct agst *a = &s->ags[(b->a->agno + tries) % s->p->agcount];
		int rc = ag_alloc(s, a, 1, 1, 1, true, &start, &got);

		if (rc)
			return rc;
		if (got) {
			*ptr = fs_agbno_to_fsb(&s->g, a->agno, start);
			return rmap_add(s, a, start, 1, b->ino, XFS_RMAP_OFF_BMBT_BLOCK |
					(b->attr ? XFS_RMAP_OFF_ATTR_FORK : 0));
		}
	}
	return -ENOSPC;
}

static int bm_write_block(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct bm_alloc *b = priv;

	(void)level;
	return wr_block(b->s, fsb_off(b->s, ptr), block, b->s->g.blocksize, bmbt_types,
			NTYPES(bmbt_types), fs_fsb_to_agno(&b->s->g, ptr), b->ino);
}

static int set_fork(struct pop *s, struct proto_inode *in, const struct fs_bmap_ext *ext, size_t n,
		    bool attr)
{
	uint32_t fsize = attr ? s->litino - in->forkoff * 8u : (in->forkoff ? in->forkoff * 8u :
								     s->litino);
	bool inline_ext = n * sizeof(struct xfs_bmbt_rec) <= fsize;
	/* an extent list takes its records' bytes; a bmbt root the whole fork */
	unsigned char *fork = fs_arena_alloc(&s->t->ar, PROTO_AR_HEAP, inline_ext ?
					     (n ? n * sizeof(struct xfs_bmbt_rec) : 1) :
					     (fsize ? fsize : 1), 8);
	unsigned char *recs = NULL;
	struct bm_alloc ba = { s, &s->ags[in->agno], in->ino, attr };
	struct fs_bload b = { 0 };
	int rc;

	if (!fork)
		return -ENOMEM;
	if (inline_ext) {
		for (size_t i = 0; i < n; i++)
			fs_bmbt_rec_encode(&ext[i], fork + i * sizeof(struct xfs_bmbt_rec));
		if (attr) {
			in->afork = fork;
			in->afork_len = (uint32_t)(n * sizeof(struct xfs_bmbt_rec));
			in->aformat = XFS_DINODE_FMT_EXTENTS;
			in->anextents = (uint32_t)n;
		} else {
			in->dfork = fork;
			in->dfork_len = (uint32_t)(n * sizeof(struct xfs_bmbt_rec));
			in->format = XFS_DINODE_FMT_EXTENTS;
			in->nextents = n;
		}
		return 0;
	}
	recs = malloc(n * sizeof(struct xfs_bmbt_rec));
	if (!recs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fs_bmbt_rec_encode(&ext[i], recs + i * sizeof(struct xfs_bmbt_rec));
	b.ops = fs_btree_ops_get(FS_BTREE_BMBT);
	b.g = &s->g;
	b.ino = in->ino;
	b.slack = (struct fs_bload_slack){ 0, 0 };
	b.nrecs = n;
	b.recs = recs;
	b.alloc_block = bm_alloc_block;
	b.write_block = bm_write_block;
	b.priv = &ba;
	b.fork = fork;
	b.fork_size = fsize;
	rc = fs_bload_build(&b);
	free(recs);
	if (rc)
		return rc;
	in->nblocks += b.blocks_written;
	if (attr) {
		in->afork = fork;
		in->afork_len = fsize;
		in->aformat = b.fork_format;
		in->anextents = (uint32_t)n;
	} else {
		in->dfork = fork;
		in->dfork_len = fsize;
		in->format = b.fork_format;
		in->nextents = n;
	}
	return 0;
}

/* Growable extent list. */
struct extv {
	struct fs_bmap_ext *v;
	size_t n, cap;
};

static int ext_add(struct extv *e, uint64_t off, fs_fsblock_t fsb, uint64_t len)
{
	if (e->n && e->v[e->n - 1].startoff + e->v[e->n - 1].blockcount == off &&
	    e->v[e->n - 1].startblock + e->v[e->n - 1].blockcount == fsb &&
	    e->v[e->n - 1].blockcount + len <= XFS_MAX_BMBT_EXTLEN) {
		e->v[e->n - 1].blockcount += len;
		return 0;
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 8;
		struct fs_bmap_ext *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = (struct fs_bmap_ext){ .startoff = off, .startblock = fsb, .blockcount = len };
	return 0;
}

/*
 * Blocks [lblk, lblk + count) of inode in: allocated in its AG (then the
 * next ones), recorded in ext and the rmap; each piece handed to fill().
 */
static int alloc_range(struct pop *s, struct proto_inode *in, uint64_t lblk, uint64_t count,
		       uint32_t minlen, bool attr, struct extv *ext,
		       int (*fill)(struct pop *s, void *priv, uint64_t lblk, fs_fsblock_t fsb,
				   uint32_t len), void *priv)
{
	uint32_t tries = 0;

	while (count) {
		struct agst *a = &s->ags[(in->agno + tries) % s->p->agcount];
		uint32_t want = count > XFS_MAX_BMBT_EXTLEN ? XFS_MAX_BMBT_EXTLEN : (uint32_t)count;
		uint32_t start, got;
		fs_fsblock_t fsb;
		int rc = ag_alloc(s, a, want, minlen, 1, true, &start, &got);

		if (rc)
			return rc;
		if (!got) {
			if (++tries >= s->p->agcount)
				return -ENOSPC;
			continue;
		}
		fsb = fs_agbno_to_fsb(&s->g, a->agno, start);
		rc = rmap_add(s, a, start, got, in->ino, lblk | (attr ? XFS_RMAP_OFF_ATTR_FORK : 0));
		if (!rc)
			rc = ext_add(ext, lblk, fsb, got);
		if (!rc && fill)
			rc = fill(s, priv, lblk, fsb, got);
		if (rc)
			return rc;
		in->nblocks += got;
		lblk += got;
		count -= got;
	}
	return 0;
}

/* ---- regular files ---- */

struct copy {
	const char *path;
	uint64_t size;
};

static void progress(struct pop *s, bool last);

static int copy_fill(struct pop *s, void *priv, uint64_t lblk, fs_fsblock_t fsb, uint32_t len)
{
	struct copy *c = priv;
	uint64_t bs = s->g.blocksize, foff = lblk * bs, doff = fsb_off(s, fsb);
	uint64_t total = (uint64_t)len * bs;

	while (total) {
		size_t piece = total > WBUF_BYTES ? WBUF_BYTES : (size_t)total;
		unsigned char *b = wr_get(s, doff, piece);

		if (!b)
			return werr(s);
		rd_queue(s, c->path, foff, c->size, b, piece);
		foff += piece;
		doff += piece;
		total -= piece;
		progress(s, false);
	}
	return 0;
}

static int do_regular(struct pop *s, struct proto_inode *in)
{
	struct copy c = { .path = in->src, .size = in->size };
	struct extv ext = { 0 };
	uint64_t bs = s->g.blocksize, pos = 0;
	/* a file with all its blocks has no holes to look for: the readers open it */
	bool dense = in->src_blocks * 512 >= in->size;
	int fd = -1, rc = rd_err(s);

	in->format = XFS_DINODE_FMT_EXTENTS;
	s->done_files++;
	if (!in->size || rc)
		return rc;
	if (!dense) {
		fd = open(in->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			return perr(s, -errno, "cannot read %s", in->src);
	}
	/* data ranges only: holes stay holes */
	while (pos < in->size && !rc) {
		off_t d = dense ? (off_t)pos : lseek(fd, (off_t)pos, SEEK_DATA), h;
		uint64_t lo, hi;

		if (d < 0) {
			if (errno == ENXIO)
				break;
			if (errno != EINVAL) {
				rc = perr(s, -errno, "reading %s", in->src);
				break;
			}
			d = (off_t)pos;  /* no SEEK_DATA here: all data */
			h = (off_t)in->size;
		} else {
			h = dense ? (off_t)in->size : lseek(fd, d, SEEK_HOLE);
			if (h < 0)
				h = (off_t)in->size;
		}
		if ((uint64_t)h > in->size)
			h = (off_t)in->size;
		if ((uint64_t)d >= in->size)
			break;
		lo = (uint64_t)d / bs;
		hi = ((uint64_t)h + bs - 1) / bs;
		if (ext.n) {
			const struct fs_bmap_ext *l = &ext.v[ext.n - 1];

			if (lo < l->startoff + l->blockcount)
				lo = l->startoff + l->blockcount;
		}
		if (hi > lo)
			rc = alloc_range(s, in, lo, hi - lo, 1, false, &ext, copy_fill, &c);
		pos = (uint64_t)h;
	}
	if (fd >= 0)
		close(fd);
	if (rc == -ENOSPC)
		rc = perr(s, rc, "no room for the data of %s (the tree is larger than the filesystem)",
			  in->src);
	if (!rc)
		rc = set_fork(s, in, ext.v, ext.n, false);
	free(ext.v);
	return rc;
}

/* ---- directories ---- */

struct blkcopy {
	void *const *bufs;
	uint32_t per;              /* fs blocks per buffer */
	uint64_t lblk0;            /* the first buffer's logical block */
	uint32_t fsbs;
	fs_fsblock_t *phys;        /* filled: the physical block of each buffer */
	uint32_t nbuf;
};

static int do_dir(struct pop *s, struct proto_inode *in)
{
	struct proto_tree *t = s->t;
	struct fs_dirbuild_ent *ents = calloc(in->nents + 1, sizeof(*ents));
	struct fs_dirbuild *b = NULL;
	uint32_t dsize = in->forkoff ? in->forkoff * 8u : s->litino;
	fs_fsblock_t *phys = NULL;
	void **bufs = NULL;
	unsigned char *mem = NULL;
	struct extv ext = { 0 };
	unsigned char *names = NULL;
	size_t nbytes = 1;
	int rc;

	/*
	 * The children's inodes and names are spread over the arena (a
	 * directory of directories: one per subtree): read each once, ticking,
	 * the names copied here, so the builder's passes touch only this.
	 */
	for (uint32_t k = 0; k < in->nents; k++)
		nbytes += in->ents[k].namelen;
	names = malloc(nbytes);
	if (!ents || !names) {
		free(ents);
		free(names);
		return -ENOMEM;
	}
	for (uint32_t k = 0, at = 0; k < in->nents; k++) {
		const struct proto_inode *c = &t->v[in->ents[k].child];
		uint8_t ft;

		switch (c->mode & S_IFMT) {
		case S_IFREG: ft = XFS_DIR3_FT_REG_FILE; break;
		case S_IFDIR: ft = XFS_DIR3_FT_DIR; break;
		case S_IFCHR: ft = XFS_DIR3_FT_CHRDEV; break;
		case S_IFBLK: ft = XFS_DIR3_FT_BLKDEV; break;
		case S_IFIFO: ft = XFS_DIR3_FT_FIFO; break;
		case S_IFSOCK: ft = XFS_DIR3_FT_SOCK; break;
		default: ft = XFS_DIR3_FT_SYMLINK; break;
		}
		memcpy(names + at, in->ents[k].name, in->ents[k].namelen);
		ents[k] = (struct fs_dirbuild_ent){ c->ino, names + at, in->ents[k].namelen, ft };
		at += in->ents[k].namelen;
		fs_arena_tick(&t->ar);
	}
	rc = fs_dirbuild_plan(&s->g, in->ino, t->v[in->parent].ino, ents, in->nents, dsize, &b);
	if (rc) {
		rc = perr(s, rc, "directory with %u entries (inode %llu)", in->nents,
			  (unsigned long long)in->ino);
		goto out;
	}
	in->size = b->size;
	if (b->fmt == FS_DIR_SHORT) {
		in->format = XFS_DINODE_FMT_LOCAL;
		in->dfork = fs_arena_alloc(&t->ar, PROTO_AR_HEAP, b->sf_bytes, 8);
		if (!in->dfork) {
			rc = -ENOMEM;
			goto out;
		}
		fs_dirbuild_sf(b, in->dfork);
		in->dfork_len = b->sf_bytes;
		goto out;
	}
	phys = calloc(b->nblocks, sizeof(*phys));
	bufs = calloc(b->nblocks, sizeof(*bufs));
	mem = malloc((size_t)b->nblocks * s->g.dirblksize);
	if (!phys || !bufs || !mem) {
		rc = -ENOMEM;
		goto out;
	}
	/* each directory block is fsbs contiguous blocks; runs of them as one allocation */
	for (uint32_t i = 0; i < b->nblocks && !rc;) {
		uint32_t run = 1;
		size_t before = ext.n;

		while (i + run < b->nblocks &&
		       fs_dirbuild_lblk(b, i + run) == fs_dirbuild_lblk(b, i) + (uint64_t)run * b->fsbs)
			run++;
		rc = alloc_range(s, in, fs_dirbuild_lblk(b, i), (uint64_t)run * b->fsbs, b->fsbs, false,
				 &ext, NULL, NULL);
		/* physical block of each directory block of the run, from the new extents */
		for (size_t e = before ? before - 1 : 0; !rc && e < ext.n; e++)
			for (uint32_t k = 0; k < run; k++) {
				uint64_t l = fs_dirbuild_lblk(b, i + k);

				if (l >= ext.v[e].startoff && l < ext.v[e].startoff + ext.v[e].blockcount)
					phys[i + k] = ext.v[e].startblock + (l - ext.v[e].startoff);
			}
		i += run;
	}
	if (rc) {
		rc = perr(s, rc, "no room for a directory of %u entries", in->nents);
		goto out;
	}
	for (uint32_t i = 0; i < b->nblocks; i++)
		bufs[i] = mem + (size_t)i * s->g.dirblksize;
	rc = fs_dirbuild_encode(b, phys, bufs);
	for (uint32_t i = 0; !rc && i < b->nblocks; i++)
		rc = wr_block(s, fsb_off(s, phys[i]), bufs[i], s->g.dirblksize, dir_types,
			      NTYPES(dir_types), fs_fsb_to_agno(&s->g, phys[i]), in->ino);
	if (!rc)
		rc = set_fork(s, in, ext.v, ext.n, false);
out:
	free(ext.v);
	free(mem);
	free(bufs);
	free(phys);
	free(ents);
	free(names);
	fs_dirbuild_free(b);
	return rc;
}

/* ---- symlinks ---- */

static int do_symlink(struct pop *s, struct proto_inode *in)
{
	uint32_t dsize = in->forkoff ? in->forkoff * 8u : s->litino;
	uint32_t space = fs_symlink_block_space(&s->g), nblk, done = 0;
	struct extv ext = { 0 };
	int rc;

	if (in->srclen <= dsize) {
		in->format = XFS_DINODE_FMT_LOCAL;
		in->dfork = fs_arena_alloc(&s->t->ar, PROTO_AR_HEAP, in->srclen ? in->srclen : 1, 8);
		if (!in->dfork)
			return -ENOMEM;
		memcpy(in->dfork, in->src, in->srclen);
		in->dfork_len = in->srclen;
		return 0;
	}
	nblk = (in->srclen + space - 1) / space;
	rc = alloc_range(s, in, 0, nblk, 1, false, &ext, NULL, NULL);
	/*
	 * As the kernel writes it: one header per extent (its buffer), the
	 * target continuing over the extent's blocks; the block count assumed
	 * a header per block, so a contiguous run has room to spare.
	 */
	for (size_t e = 0; !rc && e < ext.n && done < in->srclen; e++) {
		fs_fsblock_t fsb = ext.v[e].startblock;
		uint32_t len = (uint32_t)ext.v[e].blockcount * s->g.blocksize;
		unsigned char *b = wr_get(s, fsb_off(s, fsb), len);
		uint32_t n = len - (s->g.blocksize - space);

		if (!b)
			return werr(s);
		if (n > in->srclen - done)
			n = in->srclen - done;
		fs_symlink_rmt_encode(&s->g, b, len, in->ino, fs_fsb_to_daddr(&s->g, fsb), done,
				      in->src + done, n);
		rc = wr_note(s, b, len, FS_MT_SYMLINK, fs_fsb_to_agno(&s->g, fsb), in->ino);
		done += n;
	}
	if (!rc)
		rc = set_fork(s, in, ext.v, ext.n, false);
	free(ext.v);
	return rc;
}

/* ---- xattrs ---- */

static int attr_alloc(void *priv, uint32_t nblocks, fs_fsblock_t *fsb)
{
	struct { struct pop *s; struct proto_inode *in; struct extv *ext; uint64_t next; } *c = priv;
	size_t before = c->ext->n;
	int rc = alloc_range(c->s, c->in, c->next, nblocks, nblocks, true, c->ext, NULL, NULL);

	if (rc)
		return rc;
	*fsb = c->ext->v[before ? before - 1 : 0].startblock;
	/* the run is contiguous (minlen = nblocks): its first block */
	for (size_t e = before ? before - 1 : 0; e < c->ext->n; e++)
		if (c->next >= c->ext->v[e].startoff &&
		    c->next < c->ext->v[e].startoff + c->ext->v[e].blockcount)
			*fsb = c->ext->v[e].startblock + (c->next - c->ext->v[e].startoff);
	c->next += nblocks;
	return 0;
}

/*
 * Every name of every tree inode, for its parent pointers: one pass over
 * the directories' entries, counted per child, then placed.
 */
static int build_links(struct pop *s)
{
	struct proto_tree *t = s->t;
	uint32_t total = 0;

	s->link_first = fs_arena_alloc(&t->ar, PROTO_AR_HEAP, ((size_t)t->n + 1) *
				       sizeof(*s->link_first), 8);
	if (!s->link_first)
		return -ENOMEM;
	for (uint32_t d = 0; d < t->n; d++)
		for (uint32_t e = 0; e < t->v[d].nents; e++) {
			if (t->v[d].ents[e].child >= t->n)
				return -EINVAL;
			s->link_first[t->v[d].ents[e].child + 1]++;
			total++;
			fs_arena_tick(&t->ar);
		}
	for (uint32_t i = 0; i < t->n; i++)
		s->link_first[i + 1] += s->link_first[i];
	s->links = fs_arena_alloc(&t->ar, PROTO_AR_HEAP, ((size_t)total + 1) * sizeof(*s->links), 8);
	if (!s->links)
		return -ENOMEM;
	{
		size_t mark = fs_arena_mark(&t->ar, PROTO_AR_SCRATCH);
		uint32_t *at = fs_arena_alloc(&t->ar, PROTO_AR_SCRATCH, ((size_t)t->n + 1) * sizeof(*at),
					      4);

		if (!at)
			return -ENOMEM;
		memcpy(at, s->link_first, ((size_t)t->n + 1) * sizeof(*at));
		for (uint32_t d = 0; d < t->n; d++)
			for (uint32_t e = 0; e < t->v[d].nents; e++) {
				s->links[at[t->v[d].ents[e].child]++] = (struct tree_link){ d, e };
				fs_arena_tick(&t->ar);
			}
		fs_arena_release(&t->ar, PROTO_AR_SCRATCH, mark);
	}
	return 0;
}

/*
 * Choose the attr fork: short form in the inode when it fits beside what
 * the data fork needs, else attr blocks (leaf, node, remote values) from
 * libfs/build/attrbuild.c mapped by the attr fork.  With parent pointers
 * the inode's names (tree index idx) are attributes too.
 */
static int do_xattrs(struct pop *s, struct proto_inode *in, uint32_t idx)
{
	struct fs_attrbuild_ent *ents;
	struct xfs_parent_rec *recs = NULL;
	struct fs_attrbuild *ab = NULL;
	struct extv ext = { 0 };
	bool dev = S_ISCHR(in->mode) || S_ISBLK(in->mode) || S_ISFIFO(in->mode) ||
		   S_ISSOCK(in->mode);
	uint32_t sf, npptr = s->links ? s->link_first[idx + 1] - s->link_first[idx] : 0;
	size_t n = (size_t)in->nxattrs + npptr;
	int rc;

	if (!n)
		return 0;
	ents = calloc(n, sizeof(*ents));
	recs = npptr ? calloc(npptr, sizeof(*recs)) : NULL;
	if (!ents || (npptr && !recs)) {
		free(ents);
		free(recs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < in->nxattrs; i++)
		ents[i] = (struct fs_attrbuild_ent){ in->xattrs[i].flags, in->xattrs[i].namelen,
			(const unsigned char *)in->xattrs[i].name, in->xattrs[i].valuelen,
			in->xattrs[i].value };
	for (uint32_t k = 0; k < npptr; k++) {
		const struct tree_link *l = &s->links[s->link_first[idx] + k];
		const struct proto_dent *de = &s->t->v[l->dir].ents[l->ent];

		/* encode_inode writes every inode with generation 0: so does its pptr value */
		put_be64(&recs[k].p_ino, s->t->v[l->dir].ino);
		put_be32(&recs[k].p_gen, 0);
		ents[in->nxattrs + k] = (struct fs_attrbuild_ent){ XFS_ATTR_PARENT, de->namelen,
			(const unsigned char *)de->name, sizeof(recs[k]),
			(const unsigned char *)&recs[k] };
	}
	rc = fs_attrbuild_plan(&s->g, in->ino, ents, n, &ab);
	if (rc) {
		free(ents);
		free(recs);
		return perr(s, rc, "xattrs of inode %llu", (unsigned long long)in->ino);
	}
	sf = fs_attrbuild_sf_size(ab);
	/*
	 * Short form when it fits and leaves the data fork room: devices need 8
	 * bytes, other inodes keep at least half the literal area (the kernel
	 * moves the fork boundary as forks grow; we choose once).
	 */
	if (sf && ((dev && sf <= s->litino - 8) || (!dev && sf <= s->litino / 2))) {
		uint32_t asize = (sf + 7) & ~7u;

		in->forkoff = dev ? 1 : (uint8_t)((s->litino - asize) / 8);
		in->aformat = XFS_DINODE_FMT_LOCAL;
		in->afork = fs_arena_alloc(&s->t->ar, PROTO_AR_HEAP, s->litino - in->forkoff * 8u, 8);
		if (!in->afork) {
			rc = -ENOMEM;
			goto out;
		}
		fs_attrbuild_sf(ab, in->afork);
		in->afork_len = sf;
		goto out;
	}
	{
		struct { struct pop *s; struct proto_inode *in; struct extv *ext; uint64_t next; }
			ac = { s, in, &ext, 0 };
		struct fs_attrbuild_io io = { .alloc = attr_alloc, .priv = &ac };
		unsigned char *blk = malloc(s->g.blocksize);

		if (!blk) {
			rc = -ENOMEM;
			goto out;
		}
		/* room in the inode for a few attr extents; the data fork keeps the rest */
		in->forkoff = dev ? 1 : (uint8_t)((s->litino - 4 * sizeof(struct xfs_bmbt_rec)) / 8);
		rc = fs_attrbuild_layout(ab, &io);
		for (uint32_t i = 0; !rc && i < fs_attrbuild_nblocks(ab); i++) {
			fs_fsblock_t fsb;

			rc = fs_attrbuild_encode(ab, i, blk, &fsb);
			if (!rc)
				rc = wr_block(s, fsb_off(s, fsb), blk, s->g.blocksize, attr_types,
					      NTYPES(attr_types), fs_fsb_to_agno(&s->g, fsb), in->ino);
		}
		free(blk);
		if (!rc)
			rc = set_fork(s, in, ext.v, ext.n, true);
	}
out:
	if (rc == -ENOSPC)
		rc = perr(s, rc, "no room for the xattrs of inode %llu", (unsigned long long)in->ino);
	free(ext.v);
	free(ents);
	free(recs);
	fs_attrbuild_free(ab);
	return rc;
}

/* ---- inodes ---- */

static void encode_inode(struct pop *s, const struct proto_inode *in, unsigned char *buf)
{
	const struct mkfs_plan *p = s->p;
	const struct fs_dinode_time t[4] = {
		{ in->tsec[0], in->tnsec[0] }, { in->tsec[1], in->tnsec[1] },
		{ in->tsec[2], in->tnsec[2] }, { in->tsec[3], in->tnsec[3] },
	};
	struct fs_dinode_init di = {
		.mode = (uint16_t)in->mode, .format = in->format, .nlink = in->nlink,
		.uid = in->uid, .gid = in->gid, .size = in->size, .changecount = 1,
		.bigtime = p->bigtime, .nrext64 = p->nrext64, .times = t,
		.nblocks = in->nblocks, .nextents = in->nextents, .anextents = in->anextents,
		.forkoff = in->forkoff, .aformat = in->aformat,
	};
	unsigned char *fork;

	if (S_ISCHR(in->mode) || S_ISBLK(in->mode) || S_ISFIFO(in->mode) || S_ISSOCK(in->mode)) {
		di.format = XFS_DINODE_FMT_DEV;
		di.size = 0;
	}
	fs_enc_dinode(buf, p->inodesize, in->ino, s->g.meta_uuid, &di);
	fork = fs_dinode_dfork(buf);
	if (di.format == XFS_DINODE_FMT_DEV)
		put_be32(fork, in->rdev);
	else if (in->dfork_len)
		memcpy(fork, in->dfork, in->dfork_len);
	if (in->forkoff && in->afork_len)
		memcpy(fork + in->forkoff * 8u, in->afork, in->afork_len);
	fs_enc_dinode_finish(buf, p->inodesize);
}

static int write_chunks(struct pop *s, struct agst *a, const unsigned char *rootchunk)
{
	const struct mkfs_plan *p = s->p;
	size_t is = p->inodesize, len = (size_t)p->chunk_blocks << p->blocklog;

	for (size_t c = 0; c < a->nchunks; c++) {
		struct chunk *ch = &a->chunks[c];
		unsigned char *buf = wr_get(s, agb_off(s, a->agno, ch->agbno), len);
		fs_agino_t agino0 = fs_agbno_to_agino(&s->g, ch->agbno);
		int rc;

		if (!buf)
			return werr(s);
		if (ch->root)
			memcpy(buf, rootchunk, len);
		for (uint32_t i = 0; i < p->chunk_inodes; i++) {
			fs_ino_t ino = fs_agino_to_ino(&s->g, a->agno, agino0 + i);

			if (ch->slot[i] == RTINODE)
				continue;  /* as mkfs_write made it */
			if (ch->slot[i] != NOINODE) {
				encode_inode(s, &s->t->v[ch->slot[i]], buf + i * is);
				fs_arena_tick(&s->t->ar);
			}
			else
				fs_enc_dinode_free(buf + i * is, is, ino,
						   s->g.meta_uuid);
		}
		if (ch->root && mkfs_test_fault("mkfs-bad-inode"))
			memset(buf, 0, 2);	/* the root inode's magic */
		rc = wr_note(s, buf, len, FS_MT_INODE, a->agno,
			     fs_agino_to_ino(&s->g, a->agno, agino0));
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the AG's btrees and headers ---- */

struct tree_blocks {
	struct pop *s;
	uint32_t agno;
	uint32_t next, end;        /* the run the trees' blocks come from */
};

static int tb_alloc(void *priv, uint64_t *ptr)
{
	struct tree_blocks *tb = priv;

	if (tb->next >= tb->end)
		return -ENOSPC;
	*ptr = tb->next++;
	return 0;
}

static int tb_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct tree_blocks *tb = priv;

	(void)level;
	return wr_block(tb->s, agb_off(tb->s, tb->agno, (uint32_t)ptr), block, tb->s->g.blocksize,
			agbt_types, NTYPES(agbt_types), tb->agno, 0);
}

static int cmp_rrec(const void *x, const void *y)
{
	const struct rrec *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Records as the kernel keeps them: neighbours of one owner (and fork, and offset run) merged. */
static size_t rmap_merge(struct rrec *v, size_t n)
{
	size_t o = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_rrec);
	for (size_t i = 0; i < n; i++) {
		struct rrec *l = o ? &v[o - 1] : NULL;
		bool special = v[i].owner >= XFS_RMAP_OWN_MIN;

		if (l && l->owner == v[i].owner && l->start + l->len == v[i].start &&
		    (l->offset & XFS_RMAP_OFF_FLAGS) == (v[i].offset & XFS_RMAP_OFF_FLAGS) &&
		    (special || (v[i].offset & XFS_RMAP_OFF_BMBT_BLOCK) ||
		     XFS_RMAP_OFF(l->offset) + l->len == XFS_RMAP_OFF(v[i].offset)) &&
		    (uint64_t)l->len + v[i].len <= UINT32_MAX) {
			l->len += v[i].len;
			continue;
		}
		v[o++] = v[i];
	}
	return o;
}

static int cmp_cnt(const void *x, const void *y)
{
	const struct fs_alloc_rec *a = x, *b = y;

	if (a->blockcount != b->blockcount)
		return a->blockcount < b->blockcount ? -1 : 1;
	return a->startblock < b->startblock ? -1 : a->startblock > b->startblock;
}

static uint64_t tree_blocks(const struct fs_btree_ops *ops, uint32_t bs, uint64_t n)
{
	struct fs_bload_geom g;
	struct fs_bload_slack sl = { 0, 0 };

	if (fs_bload_compute_geometry(ops, bs, n, &sl, 0, &g))
		return 0;
	return g.nblocks;
}

static uint32_t tree_levels(const struct fs_btree_ops *ops, uint32_t bs, uint64_t n)
{
	struct fs_bload_geom g;
	struct fs_bload_slack sl = { 0, 0 };

	if (fs_bload_compute_geometry(ops, bs, n, &sl, 0, &g))
		return 1;
	return g.nlevels;
}

static int load(struct pop *s, struct tree_blocks *tb, const struct fs_btree_ops *ops,
		const void *recs, uint64_t n, uint32_t *root, uint32_t *levels, uint64_t *blocks)
{
	struct fs_bload b = { .ops = ops, .g = &s->g, .agno = tb->agno, .nrecs = n, .recs = recs,
			      .alloc_block = tb_alloc, .write_block = tb_write, .priv = tb };
	int rc;

	b.slack = (struct fs_bload_slack){ 0, 0 };
	rc = fs_bload_build(&b);
	if (rc)
		return perr(s, rc, "building the %s of AG %u (%llu records)", ops->name, tb->agno,
			    (unsigned long long)n);
	*root = (uint32_t)b.root;
	*levels = b.nlevels;
	if (blocks)
		*blocks = b.blocks_written;
	return 0;
}

static int cmp_chunk(const void *x, const void *y)
{
	const struct chunk *a = x, *b = y;

	return a->agbno < b->agbno ? -1 : a->agbno > b->agbno;
}

static int build_ag(struct pop *s, struct agst *a, struct fs_agf *agf, struct fs_agi *agi)
{
	const struct mkfs_plan *p = s->p;
	uint32_t bs = s->g.blocksize, nino = 0, nfino = 0, ninorec;
	uint64_t ninobt, nfinobt, nrefc, nbno = 0, ncnt = 0, nrmapb = 0, nagfl = 0, need = 0;
	struct fs_alloc_rec *fr = NULL;
	unsigned char *recs = NULL;
	size_t nfr = 0, nrm;
	uint32_t mstart = 0, got = 0;
	uint32_t *agflv = NULL;
	struct tree_blocks tb = { .s = s, .agno = a->agno };
	size_t smark = fs_arena_mark(&s->t->ar, PROTO_AR_SCRATCH);
	int rc = 0;
	const struct fs_btree_ops *oino = fs_btree_ops_get(FS_BTREE_INO),
				  *ofino = fs_btree_ops_get(FS_BTREE_FINO),
				  *obno = fs_btree_ag_ops(FS_BTREE_AG_BNO),
				  *ocnt = fs_btree_ag_ops(FS_BTREE_AG_CNT),
				  *ormap = fs_btree_ag_ops(FS_BTREE_AG_RMAP),
				  *orefc = fs_btree_ag_ops(FS_BTREE_AG_REFC);

	/* inode btree records: one per 64 inodes of each chunk, in block order */
	if (a->nchunks > 1)
		qsort(a->chunks, a->nchunks, sizeof(*a->chunks), cmp_chunk);
	ninorec = (uint32_t)(a->nchunks * (p->chunk_inodes / XFS_INODES_PER_CHUNK));
	for (size_t c = 0; c < a->nchunks; c++)
		for (uint32_t r = 0; r < p->chunk_inodes / XFS_INODES_PER_CHUNK; r++)
			for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK; i++)
				if (a->chunks[c].slot[r * XFS_INODES_PER_CHUNK + i] == NOINODE) {
					nfino++;
					break;
				}
	/* the static owners (AG headers, the log), merged with the rest as the kernel would */
	if (p->rmapbt) {
		rc = rmap_add(s, a, 0, p->bno_root, XFS_RMAP_OWN_FS, 0);
		if (!rc && a->agno == p->logagno)
			rc = rmap_add(s, a, p->logagbno, p->logblocks, XFS_RMAP_OWN_LOG, 0);
		if (rc)
			return rc;
		a->nrmap = rmap_merge(a->rmap, a->nrmap);
	}
	nino = ninorec;
	ninobt = tree_blocks(oino, bs, nino);
	nfinobt = p->finobt ? tree_blocks(ofino, bs, nfino) : 0;
	nrefc = p->reflink ? 1 : 0;
	/*
	 * The trees' run: its size depends on the free extents left, which
	 * depend on the run: settle it (the record count changes by one at most).
	 */
	for (int round = 0; round < 8; round++) {
		struct agst trial = *a;
		uint64_t want;
		uint32_t bl, cl, rl;
		size_t i;

		/* the run adds OWN_INOBT, OWN_REFC (reflink) and OWN_AG */
		nrm = a->nrmap + 2 + (p->reflink ? 1 : 0);
		nbno = tree_blocks(obno, bs, a->nfree + 1);
		ncnt = nbno;
		nrmapb = p->rmapbt ? tree_blocks(ormap, bs, nrm) : 0;
		bl = tree_levels(obno, bs, a->nfree + 1);
		cl = bl;
		rl = p->rmapbt ? tree_levels(ormap, bs, nrm) : 0;
		nagfl = fs_agfl_min_blocks(&s->g, bl, cl, rl);
		want = ninobt + nfinobt + nrefc + nbno + ncnt + nrmapb + nagfl;
		if (want < need)
			want = need;   /* never shrink: the leftover goes to the AGFL */
		need = want;
		/* a copy of the free list to try the run on */
		trial.free = malloc((a->nfree + 1) * sizeof(*trial.free));
		if (!trial.free)
			return -ENOMEM;
		if (a->nfree)
			memcpy(trial.free, a->free, a->nfree * sizeof(*trial.free));
		trial.capfree = a->nfree + 1;
		for (i = 0; i < a->nfree; i++)
			if (a->free[i].blockcount >= need)
				break;
		if (i == a->nfree) {
			free(trial.free);
			return perr(s, -ENOSPC, "AG %u has no run of %llu free blocks for its btrees "
				    "(the tree is too large for the filesystem)", a->agno,
				    (unsigned long long)need);
		}
		rc = ag_alloc(s, &trial, (uint32_t)need, (uint32_t)need, 1, false, &mstart, &got);
		if (rc || got != need) {
			free(trial.free);
			return rc ? rc : -ENOSPC;
		}
		if (tree_blocks(obno, bs, trial.nfree) <= nbno) {
			free(a->free);
			a->free = trial.free;
			a->nfree = trial.nfree;
			a->capfree = trial.capfree;
			break;
		}
		free(trial.free);
		if (round == 7)
			return perr(s, -EAGAIN, "AG %u: the btree blocks do not settle", a->agno);
	}
	/* the run: inobt, finobt, refcount (OWN_INOBT, OWN_REFC), then bno, cnt, rmap, AGFL (OWN_AG) */
	if (p->rmapbt) {
		rc = rmap_add(s, a, mstart, (uint32_t)(ninobt + nfinobt), XFS_RMAP_OWN_INOBT, 0);
		if (!rc && nrefc)
			rc = rmap_add(s, a, mstart + (uint32_t)(ninobt + nfinobt), 1, XFS_RMAP_OWN_REFC, 0);
		if (!rc)
			rc = rmap_add(s, a, mstart + (uint32_t)(ninobt + nfinobt + nrefc),
				      (uint32_t)(need - ninobt - nfinobt - nrefc), XFS_RMAP_OWN_AG, 0);
		if (rc)
			return rc;
	}
	tb.next = mstart;
	tb.end = mstart + (uint32_t)need;

	/* inobt and finobt */
	recs = fs_arena_alloc(&s->t->ar, PROTO_AR_SCRATCH, (ninorec + 1) * sizeof(xfs_inobt_rec_t), 8);
	if (!recs)
		return -ENOMEM;
	for (int fino = 0; fino < (p->finobt ? 2 : 1) && !rc; fino++) {
		uint32_t n = 0, root = 0, levels = 0;

		for (size_t c = 0; c < a->nchunks; c++)
			for (uint32_t r = 0; r < p->chunk_inodes / XFS_INODES_PER_CHUNK; r++) {
				uint64_t mask = 0;
				uint8_t nfree = 0;

				for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK; i++) {
					bool used = a->chunks[c].slot[r * XFS_INODES_PER_CHUNK + i] != NOINODE;

					if (!used) {
						mask |= 1ull << i;
						nfree++;
					}
				}
				if (fino && !nfree)
					continue;
				fs_enc_inobt_rec(recs + n++ * sizeof(xfs_inobt_rec_t),
						 fs_agbno_to_agino(&s->g, a->chunks[c].agbno) +
						 r * XFS_INODES_PER_CHUNK, p->sparse, 0,
						 XFS_INODES_PER_CHUNK, nfree, mask);
			}
		rc = load(s, &tb, fino ? ofino : oino, recs, n, &root, &levels, NULL);
		if (fino) {
			agi->free_root = root;
			agi->free_level = levels;
			agi->fblocks = (uint32_t)nfinobt;
		} else {
			agi->root = root;
			agi->level = levels;
			agi->iblocks = (uint32_t)ninobt;
		}
	}
	fs_arena_release(&s->t->ar, PROTO_AR_SCRATCH, smark);
	recs = NULL;
	if (rc)
		return rc;
	if (p->reflink) {
		uint32_t root = 0, levels = 0;	/* set by load() when it succeeds */

		rc = load(s, &tb, orefc, NULL, 0, &root, &levels, NULL);
		if (rc)
			return rc;
		agf->refc_root = root;
		agf->refc_level = levels;
		agf->refc_blocks = 1;
	}
	/* free space: what is left */
	nfr = a->nfree;
	fr = a->free;
	recs = malloc((nfr + 1) * 8);
	if (!recs)
		return -ENOMEM;
	for (size_t i = 0; i < nfr; i++) {
		fs_enc_alloc_rec(recs + i * 8, fr[i].startblock, fr[i].blockcount);
		agf->freeblks += fr[i].blockcount;
		if (fr[i].blockcount > agf->longest)
			agf->longest = fr[i].blockcount;
	}
	{
		uint32_t root = 0, levels = 0;	/* set by load() when it succeeds */
		uint64_t bb = 0, cb = 0;
		struct fs_alloc_rec *byc = malloc((nfr + 1) * sizeof(*byc));

		rc = load(s, &tb, obno, recs, nfr, &root, &levels, &bb);
		agf->bno_root = root;
		agf->bno_level = levels;
		if (!rc && !byc)
			rc = -ENOMEM;
		if (!rc) {
			if (nfr)
				memcpy(byc, fr, nfr * sizeof(*byc));
			if (nfr > 1)
				qsort(byc, nfr, sizeof(*byc), cmp_cnt);
			for (size_t i = 0; i < nfr; i++)
				fs_enc_alloc_rec(recs + i * 8, byc[i].startblock, byc[i].blockcount);
			rc = load(s, &tb, ocnt, recs, nfr, &root, &levels, &cb);
			agf->cnt_root = root;
			agf->cnt_level = levels;
		}
		free(byc);
		agf->btreeblks = (uint32_t)(bb - 1 + cb - 1);
	}
	free(recs);
	recs = NULL;
	if (rc)
		return rc;
	if (p->rmapbt) {
		uint32_t root = 0, levels = 0;	/* set by load() when it succeeds */
		uint64_t rb = 0;

		nrm = rmap_merge(a->rmap, a->nrmap);
		recs = fs_arena_alloc(&s->t->ar, PROTO_AR_SCRATCH, (nrm + 1) * sizeof(struct xfs_rmap_rec),
				      8);
		if (!recs)
			return -ENOMEM;
		for (size_t i = 0; i < nrm; i++)
			fs_enc_rmap_rec(recs + i * sizeof(struct xfs_rmap_rec), a->rmap[i].start,
					a->rmap[i].len, a->rmap[i].owner, a->rmap[i].offset);
		rc = load(s, &tb, ormap, recs, nrm, &root, &levels, &rb);
		fs_arena_release(&s->t->ar, PROTO_AR_SCRATCH, smark);
		if (rc)
			return rc;
		agf->rmap_root = root;
		agf->rmap_level = levels;
		agf->rmap_blocks = (uint32_t)rb;
		agf->btreeblks += (uint32_t)(rb - 1);
	}
	/* whatever the run has left fills the AGFL */
	agflv = malloc((tb.end - tb.next + 1) * sizeof(*agflv));
	if (!agflv)
		return -ENOMEM;
	for (uint32_t b = tb.next; b < tb.end; b++)
		agflv[agf->flcount++] = b;
	if (agf->flcount > s->g.agfl_size) {
		free(agflv);
		return perr(s, -ENOSPC, "AG %u: %u AGFL blocks do not fit its %u slots", a->agno,
			    agf->flcount, s->g.agfl_size);
	}
	{
		unsigned char *sect = wr_get(s, agb_off(s, a->agno, 0) + 3 * p->sectsize, p->sectsize);

		if (!sect) {
			free(agflv);
			return werr(s);
		}
		fs_enc_agfl(sect, p->sectsize, a->agno, s->g.meta_uuid, 1,
			    agflv, agf->flcount);
		rc = wr_note(s, sect, p->sectsize, FS_MT_AGFL, a->agno, 0);
	}
	free(agflv);
	if (rc)
		return rc;
	agf->flfirst = 1;
	agf->fllast = agf->flcount;
	if (!agf->flcount) {
		agf->flfirst = 0;
		agf->fllast = s->g.agfl_size - 1;
	}
	return 0;
}

/* ---- progress ---- */

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress(struct pop *s, bool last)
{
	struct timespec now;
	double el, rate, eta;
	uint64_t done;

	if (!s->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!last && secs(&s->last, &now) < 0.5)
		return;
	s->last = now;
	el = secs(&s->start, &now);
	done = __atomic_load_n(&s->done_bytes, __ATOMIC_RELAXED);  /* the readers add to it */
	rate = el > 0 ? (double)done / el : 0;
	eta = rate > 0 && s->t->data_bytes > done ? (double)(s->t->data_bytes - done) / rate : 0;
	fprintf(stderr, "\rxfsx_mkfs: %llu files, %.1f of %.1f MiB copied, ETA %.0f s   %s",
		(unsigned long long)s->done_files, (double)done / 1048576.0,
		(double)s->t->data_bytes / 1048576.0, eta, last ? "\n" : "");
}

/* ---- the whole ---- */

static int init_ags(struct pop *s)
{
	const struct mkfs_plan *p = s->p;

	s->ags = calloc(p->agcount, sizeof(*s->ags));
	if (!s->ags)
		return -ENOMEM;
	for (uint32_t agno = 0; agno < p->agcount; agno++) {
		struct agst *a = &s->ags[agno];
		struct mkfs_ag ag;
		int rc = mkfs_ag_layout(p, agno, &ag);

		if (rc)
			return perr(s, rc, "laying out AG %u", agno);
		a->agno = agno;
		a->length = ag.length;
		/* everything past the header sectors is ours again but the log and root chunk */
		rc = free_insert(a, 0, p->bno_root, p->prealloc_blocks - p->bno_root);
		for (uint32_t i = 0; !rc && i < ag.agfl_count; i++)
			rc = free_insert(a, a->nfree, ag.agfl[i], 1);
		for (uint32_t i = 0; !rc && i < ag.nfree; i++)
			rc = free_insert(a, a->nfree, ag.free[i].start, ag.free[i].len);
		if (rc)
			return rc;
		/* sort and merge */
		for (size_t i = 1; i < a->nfree; i++)
			for (size_t j = i; j > 0 && a->free[j - 1].startblock > a->free[j].startblock; j--) {
				struct fs_alloc_rec x = a->free[j];

				a->free[j] = a->free[j - 1];
				a->free[j - 1] = x;
			}
		{
			size_t o = 0;

			for (size_t i = 0; i < a->nfree; i++) {
				if (o && a->free[o - 1].startblock + a->free[o - 1].blockcount ==
					 a->free[i].startblock)
					a->free[o - 1].blockcount += a->free[i].blockcount;
				else
					a->free[o++] = a->free[i];
			}
			a->nfree = o;
		}
		if (agno == 0) {
			struct chunk *c;

			a->chunks = calloc(4, sizeof(*a->chunks));
			if (!a->chunks)
				return -ENOMEM;
			a->capchunks = 4;
			c = &a->chunks[a->nchunks++];
			c->agbno = ag.chunk_agbno;
			c->root = true;
			c->slot = fs_arena_alloc(&s->t->ar, PROTO_AR_HEAP,
						 p->chunk_inodes * sizeof(*c->slot), 4);
			if (!c->slot)
				return -ENOMEM;
			for (uint32_t i = 0; i < p->chunk_inodes; i++)
				c->slot[i] = NOINODE;
			c->slot[0] = 0;   /* the root directory: tree inode 0 */
			c->slot[1] = c->slot[2] = RTINODE;
			c->used = 3;      /* root, rt bitmap, rt summary */
			a->icount = p->chunk_inodes;
			a->ifree = p->chunk_inodes - 3;
			rc = rmap_add(s, a, ag.chunk_agbno, p->chunk_blocks, XFS_RMAP_OWN_INODES, 0);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int proto_populate(struct fs_dev *dev, const struct mkfs_plan *p, struct proto_tree *t,
		   struct xfs_sb *sb, bool want_progress, char *err, size_t el)
{
	struct pop s = { .dev = dev, .p = p, .t = t, .progress = want_progress, .err = err,
			 .el = el };
	size_t chunk_len = (size_t)p->chunk_blocks << p->blocklog;
	unsigned char *rootchunk = NULL;
	uint64_t icount = 0, ifree = 0, fdblocks = 0;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &s.start);
	s.last = s.start;
	rc = fs_geom_derive(&p->sb, &s.g);
	if (rc)
		return perr(&s, rc, "deriving the geometry");
	s.litino = (uint32_t)fs_dinode_litino(p->inodesize);
	pthread_mutex_init(&s.wlock, NULL);
	pthread_cond_init(&s.wcond, NULL);
	pthread_cond_init(&s.rcond, NULL);
	s.jobs = malloc(RJOBS * sizeof(*s.jobs));
	if (!s.jobs)
		rc = -ENOMEM;
	for (unsigned i = 0; i < WBUF_COUNT; i++) {
		s.bufs[i].data = wbuf_alloc(dev);
		if (!s.bufs[i].data)
			rc = -ENOMEM;
	}
	rootchunk = fs_dev_alloc(dev, chunk_len);
	if (rc || !rootchunk) {
		rc = perr(&s, -ENOMEM, "allocating buffers");
		goto out;
	}
	for (unsigned i = 0; i < WRITERS; i++) {
		rc = pthread_create(&s.writer[i], NULL, writer_main, &s);
		if (rc) {
			rc = perr(&s, -rc, "starting the writer threads");
			goto out;
		}
		s.writers++;
	}
	for (unsigned i = 0; i < READERS; i++) {
		rc = pthread_create(&s.reader[i], NULL, reader_main, &s);
		if (rc) {
			rc = perr(&s, -rc, "starting the reader threads");
			goto out;
		}
		s.readers++;
	}
	/* the root chunk as mkfs_write left it: the rt inodes are kept as they are */
	rc = init_ags(&s);
	if (!rc) {
		const struct mkfs_ag *dummy = NULL;

		(void)dummy;
		rc = fs_dev_read(dev, rootchunk, chunk_len,
				 agb_off(&s, 0, s.ags[0].chunks[0].agbno));
		if (rc < 0)
			rc = perr(&s, rc, "reading back the root inode chunk");
	}
	if (!rc)
		rc = place_all(&s);
	if (!rc && p->parent) {
		rc = build_links(&s);
		if (rc)
			rc = perr(&s, rc, "listing the names for parent pointers");
	}
	/* AG by AG, inodes in tree order: one ascending stream of writes per AG */
	for (uint32_t agno = 0; agno < p->agcount && !rc; agno++)
		for (uint32_t i = 0; i < t->n && !rc; i++) {
			struct proto_inode *in = &t->v[i];

			/* the tree is read once per AG: its pages go again as they pass */
			fs_arena_tick(&t->ar);
			if (in->agno != agno)
				continue;
			rc = do_xattrs(&s, in, i);
			if (rc)
				break;
			switch (in->mode & S_IFMT) {
			case S_IFREG: rc = do_regular(&s, in); break;
			case S_IFDIR: rc = do_dir(&s, in); break;
			case S_IFLNK: rc = do_symlink(&s, in); break;
			default: in->format = XFS_DINODE_FMT_DEV; break;
			}
			if (rc && !*err)
				rc = perr(&s, rc, "copying tree inode %u", i);
			progress(&s, false);
		}
	for (uint32_t agno = 0; agno < p->agcount && !rc; agno++)
		rc = write_chunks(&s, &s.ags[agno], rootchunk);
	for (uint32_t agno = 0; agno < p->agcount && !rc; agno++) {
		struct agst *a = &s.ags[agno];
		struct fs_agf agf = { .seqno = agno, .length = a->length };
		struct fs_agi agi = { .seqno = agno, .length = a->length, .dirino = NULLAGINO,
				      .newino = NULLAGINO };
		unsigned char *sect;

		rc = build_ag(&s, a, &agf, &agi);
		if (rc)
			break;
		agi.count = (uint32_t)a->icount;
		agi.freecount = (uint32_t)a->ifree;
		if (a->nchunks)
			agi.newino = fs_agbno_to_agino(&s.g, a->chunks[a->nchunks - 1].agbno);
		for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
			agi.unlinked[i] = NULLAGINO;
		if (!p->inobtcount)
			agi.iblocks = agi.fblocks = 0;
		if (!p->finobt)
			agi.free_root = agi.free_level = 0;
		sect = wr_get(&s, agb_off(&s, agno, 0) + p->sectsize, p->sectsize);
		if (!sect) {
			rc = werr(&s);
			break;
		}
		fs_enc_agf(sect, p->sectsize, &agf, s.g.meta_uuid);
		rc = wr_note(&s, sect, p->sectsize, FS_MT_AGF, agno, 0);
		if (rc)
			break;
		sect = wr_get(&s, agb_off(&s, agno, 0) + 2 * p->sectsize, p->sectsize);
		if (!sect) {
			rc = werr(&s);
			break;
		}
		fs_enc_agi(sect, p->sectsize, &agi, s.g.meta_uuid);
		rc = wr_note(&s, sect, p->sectsize, FS_MT_AGI, agno, 0);
		if (rc)
			break;
		icount += agi.count;
		ifree += agi.freecount;
		fdblocks += (uint64_t)agf.freeblks + agf.flcount + agf.btreeblks;
	}
	{
		int wrc = wr_drain(&s);

		if (!rc)
			rc = rd_err(&s);
		if (!rc)
			rc = wrc;
	}
	/* the arena that could not grow is why, whatever the step that met it says */
	if (rc && t->ar.err)
		proto_nomem(t, err, el);
	if (rc && !*err)
		rc = perr(&s, rc, "writing %s", dev->path);
	if (!rc) {
		sb->sb_icount = icount;
		sb->sb_ifree = ifree;
		sb->sb_fdblocks = fdblocks;
		progress(&s, true);
	}
out:
	if (s.ags) {
		for (uint32_t a = 0; a < p->agcount; a++) {
			/* chunk slots and rmap records are in the tree's arena */
			free(s.ags[a].chunks);
			free(s.ags[a].free);
		}
		free(s.ags);
	}
	/* the readers finish what is queued (the writer waits for them), then stop */
	if (s.writers)
		wr_drain(&s);
	if (s.readers) {
		pthread_mutex_lock(&s.wlock);
		s.rstop = true;
		pthread_cond_broadcast(&s.rcond);
		pthread_mutex_unlock(&s.wlock);
		for (unsigned i = 0; i < s.readers; i++)
			pthread_join(s.reader[i], NULL);
	}
	if (s.writers) {
		pthread_mutex_lock(&s.wlock);
		s.wstop = true;
		pthread_cond_broadcast(&s.wcond);
		pthread_mutex_unlock(&s.wlock);
		for (unsigned i = 0; i < s.writers; i++)
			pthread_join(s.writer[i], NULL);
	}
	for (unsigned i = 0; i < WBUF_COUNT; i++) {
		free(s.bufs[i].data);
		free(s.bufs[i].objs);
	}
	pthread_mutex_destroy(&s.wlock);
	pthread_cond_destroy(&s.wcond);
	pthread_cond_destroy(&s.rcond);
	free(s.jobs);
	free(rootchunk);
	return rc;
}
