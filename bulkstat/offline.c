// SPDX-License-Identifier: GPL-2.0
/*
 * The offline engine: open the device read-only through libfs, scan the
 * AGs in parallel with the libfs inode scan, turn each inode into the
 * struct xfs_bulkstat the kernel would report, and write the records in
 * inode-number order.  With more than one worker each AG is cut into
 * ranges of its inode chunks (items of about ITEM_CHUNKS chunks, at most
 * MAX_PARTS per AG), so the head of the output moves often and what waits
 * behind it stays small whatever the inode count.  Each worker formats
 * into 1 MiB chunks; the worker holding the lowest unfinished item writes
 * straight through, the others queue their chunks (bounded: past the cap
 * they wait for the head to move on), and finished items are flushed in
 * order.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkstat/bulkstat.h"
#include "libfs/fs.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"
#include "libfs/io/workq.h"

#define CHUNK_SIZE (1u << 20)
/*
 * Bytes queued behind the head item before workers wait.  The queue fills
 * whenever the head's worker falls behind (on a shared machine, often), and
 * the chunks it held stay in the pool: this cap is most of what the run's
 * peak memory adds to its buffers.  32 MiB was reached on long runs only
 * (2 threads, 1M inodes 46 MiB anon, 5M 70 MiB); 8 MiB holds it at 44-45
 * MiB for both, no slower.
 */
#define QUEUE_CAP  (8u << 20)
#define ITEM_CHUNKS 512           /* inode chunks per item (32k inodes, ~11 MiB of JSON) */
/*
 * Items per AG at most: each walks the AG's whole inode btree (its leaf
 * blocks, ~250 records each), so the walks cost parts x leaves.  64 keeps
 * items of ITEM_CHUNKS up to 2M inodes per AG, at 64 walks per AG.
 */
#define MAX_PARTS  64

struct chunk {
	struct chunk *next;
	size_t len;
	char data[];
};

struct ag_queue {
	struct chunk *head, *tail;
	bool done;
};

/* Output in item (inode number) order from many workers. */
struct sink {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t moved;
	uint32_t nags;             /* items */
	struct ag_queue *q;        /* index: item */
	uint32_t head;             /* the lowest unfinished item */
	size_t queued;
	int err;                   /* first write error */
	struct chunk *pool;        /* written chunks, kept for reuse (their pages stay mapped) */
};

static void chunk_write_locked(struct sink *s, struct chunk *c)
{
	if (!s->err && c->len)
		s->err = bs_write_all(s->fd, c->data, c->len);
	/*
	 * Kept, not freed: malloc gives a 1 MiB block back to the kernel on
	 * free, and the next one's pages fault in again (three quarters of a
	 * run's page faults were the formatter touching fresh output pages).
	 * The pool holds at most what was once queued, which QUEUE_CAP bounds.
	 */
	c->next = s->pool;
	s->pool = c;
}

/* Flush what the head AG queued; advance past finished AGs.  Lock held. */
static void advance_locked(struct sink *s)
{
	while (s->head < s->nags) {
		struct ag_queue *a = &s->q[s->head];

		while (a->head) {
			struct chunk *c = a->head;
			a->head = c->next;
			s->queued -= c->len;
			chunk_write_locked(s, c);
		}
		a->tail = NULL;
		if (!a->done)
			break;
		s->head++;
	}
	pthread_cond_broadcast(&s->moved);
}

static int sink_put(struct sink *s, uint32_t i, struct chunk *c)
{
	int err;

	pthread_mutex_lock(&s->lock);
	if (i == s->head) {
		advance_locked(s);
		chunk_write_locked(s, c);
	} else {
		struct ag_queue *a = &s->q[i];

		c->next = NULL;
		if (a->tail)
			a->tail->next = c;
		else
			a->head = c;
		a->tail = c;
		s->queued += c->len;
		while (s->queued > QUEUE_CAP && s->head != i && !s->err)
			pthread_cond_wait(&s->moved, &s->lock);
	}
	err = s->err;
	pthread_mutex_unlock(&s->lock);
	return err;
}

static void sink_done(struct sink *s, uint32_t i)
{
	pthread_mutex_lock(&s->lock);
	s->q[i].done = true;
	advance_locked(s);
	pthread_mutex_unlock(&s->lock);
}

struct engine;

struct worker {
	struct engine *e;
	struct fs_inode_scan *scan;
	struct fs_findings scratch;   /* one inode's findings at a time */
	struct chunk *cur;
	struct bs_buf rec, pathbuf;   /* --paths: one record, one path */
	fs_agnumber_t agno;
	uint32_t item;             /* its index in engine.items: where the sink puts its output */
	uint64_t inodes, damaged;
	int err;
};

/* A range of one AG's inode chunks: records whose startino is in [lo, end). */
struct item {
	fs_agnumber_t agno;
	fs_agino_t lo, end;        /* end NULLAGINO: to the AG's end */
};

struct engine {
	struct fs *fs;
	struct item *items;
	uint32_t nitems;
	const struct bs_opts *o;
	struct sink sink;
	struct worker *w;
	struct fs_findings fl;        /* AG header and btree findings */
	struct bs_paths *paths;       /* --paths: the link map */
	fs_ino_t internal[5];
	unsigned ninternal;
	uint32_t dev_blksize;         /* what the kernel reports as blksize for devices */
	fs_agnumber_t start_ag;
	fs_agino_t start_agino;
};

static struct chunk *chunk_new(struct sink *s)
{
	struct chunk *c;

	pthread_mutex_lock(&s->lock);
	c = s->pool;
	if (c)
		s->pool = c->next;
	pthread_mutex_unlock(&s->lock);
	if (!c)
		c = malloc(sizeof(*c) + CHUNK_SIZE);
	if (c) {
		c->next = NULL;
		c->len = 0;
	}
	return c;
}

static bool is_internal(const struct engine *e, fs_ino_t ino)
{
	for (unsigned i = 0; i < e->ninternal; i++)
		if (e->internal[i] == ino)
			return true;
	return false;
}

/* struct xfs_bulkstat as xfs_bulkstat_one_int() fills it from the inode. */
static void fill_bulkstat(const struct engine *e, const struct fs_inode *ip, fs_ino_t ino,
			  struct xfs_bulkstat *bs)
{
	uint16_t type = ip->mode & S_IFMT;
	bool special = type == S_IFCHR || type == S_IFBLK || type == S_IFIFO || type == S_IFSOCK;

	memset(bs, 0, sizeof(*bs));
	bs->bs_ino = ino;
	bs->bs_mode = ip->mode;
	bs->bs_nlink = ip->nlink;
	bs->bs_uid = ip->uid;
	bs->bs_gid = ip->gid;
	bs->bs_projectid = ip->projid;
	/* special files have no size in core: xfs_iformat_data_fork() zeroes it */
	bs->bs_size = special ? 0 : ip->size;
	bs->bs_atime = ip->atime.sec;
	bs->bs_atime_nsec = ip->atime.nsec;
	bs->bs_mtime = ip->mtime.sec;
	bs->bs_mtime_nsec = ip->mtime.nsec;
	bs->bs_ctime = ip->ctime.sec;
	bs->bs_ctime_nsec = ip->ctime.nsec;
	bs->bs_btime = ip->crtime.sec;
	bs->bs_btime_nsec = ip->crtime.nsec;
	bs->bs_gen = ip->gen;
	bs->bs_xflags = fs_inode_xflags(ip);
	bs->bs_extsize_blks = ip->extsize;
	bs->bs_extents64 = ip->nextents;
	bs->bs_extents = ip->nextents > XFS_MAX_EXTCNT_DATA_FORK_SMALL ?
			 (uint32_t)XFS_MAX_EXTCNT_DATA_FORK_SMALL : (uint32_t)ip->nextents;
	bs->bs_aextents = ip->forkoff ? ip->anextents : 0;
	bs->bs_forkoff = (uint16_t)(ip->forkoff << 3);
	bs->bs_version = XFS_BULKSTAT_VERSION_V5;
	if (ip->flags2 & XFS_DIFLAG2_COWEXTSIZE)
		bs->bs_cowextsize_blks = ip->cowextsize;
	/* blocks and rdev follow the data fork format, not the file type */
	switch (ip->format) {
	case XFS_DINODE_FMT_DEV:
		bs->bs_rdev = fs_inode_bulkstat_rdev(ip->dev);
		bs->bs_blksize = e->dev_blksize;
		bs->bs_blocks = 0;
		break;
	case XFS_DINODE_FMT_LOCAL:
		bs->bs_blksize = e->fs->g.blocksize;
		bs->bs_blocks = 0;
		break;
	default:
		bs->bs_blksize = e->fs->g.blocksize;
		bs->bs_blocks = ip->nblocks;
		break;
	}
}

/* code: the finding's code as people read it (inode.free) */
static void report_damaged(struct worker *w, fs_ino_t ino, const char *code, const char *msg,
			   const struct fs_finding *f)
{
	char place[FS_PLACE_LEN];

	/* the place as every tool writes it: AG n inode N */
	fs_place(place, sizeof(place), w->agno, (int64_t)ino, FS_NONE);
	w->damaged++;
	if (f && f->field[0] && (f->expected[0] || f->found[0]))
		fprintf(stderr, "xfsx_bulkstat: %s: skipped: %s: %s [%s: expected %s, found %s]\n",
			place, code, msg, f->field, f->expected[0] ? f->expected : "?",
			f->found[0] ? f->found : "?");
	else
		fprintf(stderr, "xfsx_bulkstat: %s: skipped: %s: %s\n", place, code, msg);
}

/* An LSN beyond the log: the kernel never judges a block by it when reading it. */
static bool is_lsn_finding(const struct fs_finding *f)
{
	return f->def->flags & FS_FL_LSN;
}

/* A record of any length (its paths): across as many chunks as it needs, in order. */
static int put_with_paths(struct worker *w, const struct xfs_bulkstat *bs)
{
	struct engine *e = w->e;
	size_t at = 0;
	int err = bs_record_with_paths(&e->o->out, e->paths, bs, &w->rec, &w->pathbuf);

	while (!err && at < w->rec.len) {
		size_t room = CHUNK_SIZE - w->cur->len, n = w->rec.len - at;

		if (!room) {
			struct chunk *c = chunk_new(&e->sink);

			if (!c)
				return -ENOMEM;
			err = sink_put(&e->sink, w->item, w->cur);
			w->cur = c;
			continue;
		}
		if (n > room)
			n = room;
		memcpy(w->cur->data + w->cur->len, w->rec.p + at, n);
		w->cur->len += n;
		at += n;
	}
	if (!err)
		w->inodes++;
	return err;
}

static int on_inode(void *priv, const struct fs_inode_scan_item *it)
{
	struct worker *w = priv;
	struct engine *e = w->e;
	const struct fs_geom *g = &e->fs->g;
	struct fs_vctx vc = {
		.g = g, .fl = &w->scratch, .agno = it->agno,
		.have_log_head = e->fs->have_log_head, .head_lsn = e->fs->log_head_lsn,
		.ino = it->ino,
	};
	struct fs_inode ip;
	struct xfs_bulkstat bs;

	if (!e->o->include_internal && is_internal(e, it->ino))
		return 0;
	if (!it->dinode) {
		char msg[96];
		snprintf(msg, sizeof(msg), "its inode chunk could not be read: %s",
			 strerror(-it->read_err));
		report_damaged(w, it->ino, fs_code_name(FS_C_INODE_UNREADABLE), msg, NULL);
		return 0;
	}
	vc.daddr = fs_agbno_to_daddr(g, it->agno, fs_agino_to_agbno(g, it->agino)) +
		   ((uint64_t)fs_agino_to_offset(g, it->agino) * g->inodesize >> FS_BBSHIFT);
	if (fs_verify(FS_MT_INODE, &vc, it->dinode, g->inodesize) > 0) {
		const struct fs_finding *bad = NULL;

		/* the kernel never judges an inode by its LSN when reading it */
		for (size_t i = 0; i < w->scratch.n && !bad; i++)
			if (!is_lsn_finding(&w->scratch.v[i]))
				bad = &w->scratch.v[i];
		if (bad || w->scratch.dropped) {
			if (bad)
				report_damaged(w, it->ino, bad->def->code, bad->message, bad);
			else
				report_damaged(w, it->ino, "inode", "inode failed verification", NULL);
		}
		fs_findings_clear(&w->scratch);
		if (bad)
			return 0;
	}
	fs_inode_decode(it->dinode, &ip);
	if (ip.mode == 0) {
		/* the kernel skips it silently (-ENOENT); it is still an inconsistency */
		report_damaged(w, it->ino, fs_code_name(FS_C_INODE_FREE),
			       "allocated in the inode btree but free on disk (mode 0)", NULL);
		return 0;
	}
	fill_bulkstat(e, &ip, it->ino, &bs);
	if (e->paths)
		return put_with_paths(w, &bs);
	if (CHUNK_SIZE - w->cur->len < BS_MAX_RECORD) {
		struct chunk *n = chunk_new(&e->sink);
		int err;

		if (!n)
			return -ENOMEM;
		err = sink_put(&e->sink, w->item, w->cur);
		w->cur = n;
		if (err)
			return err;
	}
	w->cur->len += bs_format_record(&e->o->out, &bs, w->cur->data + w->cur->len);
	w->inodes++;
	return 0;
}

static int do_item(void *priv, fs_agnumber_t idx, unsigned worker)
{
	struct engine *e = priv;
	struct worker *w = &e->w[worker];
	const struct item *it = &e->items[idx];
	fs_agino_t start = it->agno == e->start_ag ? e->start_agino : 0;
	int ret;

	w->agno = it->agno;
	w->item = idx;
	ret = fs_inode_scan_ag_range(w->scan, it->agno, start, it->lo, it->end, &e->fl, on_inode, w);
	if (ret == -EUCLEAN) {
		if (it->lo == 0)
			fprintf(stderr, "xfsx_bulkstat: AG %u: the AGI cannot be trusted; its inodes are "
				"not listed\n", it->agno);
		ret = 0;
	}
	if (ret == 0) {
		/* hand over what is left of this item and mark it finished */
		ret = sink_put(&e->sink, idx, w->cur);
		w->cur = chunk_new(&e->sink);
		if (!w->cur && !ret)
			ret = -ENOMEM;
	}
	sink_done(&e->sink, idx);
	if (ret)
		w->err = ret;
	return ret;
}

static void collect_internal(struct engine *e)
{
	const struct xfs_sb *sb = &e->fs->sb;
	/* the geometry's: right even when a secondary superblock has them null */
	fs_ino_t cand[5] = { e->fs->g.rbmino, e->fs->g.rsumino, 0, 0, 0 };
	unsigned n = 2;

	/* xfs_is_sb_inum(): quota inodes count only on a quota-enabled filesystem */
	if (e->fs->g.quota) {
		cand[n++] = sb->sb_uquotino;
		cand[n++] = sb->sb_gquotino;
		cand[n++] = sb->sb_pquotino;
	}
	for (unsigned i = 0; i < n; i++)
		if (cand[i] && cand[i] != NULLFSINO)
			e->internal[e->ninternal++] = cand[i];
}

/*
 * The work items: each AG of wo whole with one worker; with more, cut into
 * ranges of about ITEM_CHUNKS inode chunks (at most MAX_PARTS), read off
 * its inode btree first.  An AG whose chunks cannot be listed is one item
 * (its scan reports why).  Sizes the sink to the items.
 */
static int make_items(struct engine *e, const struct fs_ag_workq_opts *wo, unsigned nthreads)
{
	size_t cap = (size_t)wo->ag_count * MAX_PARTS;

	e->items = calloc(cap ? cap : 1, sizeof(*e->items));
	if (!e->items)
		return -ENOMEM;
	for (fs_agnumber_t a = 0; a < wo->ag_count; a++) {
		fs_agnumber_t agno = wo->first_ag + a;
		const fs_agino_t *ch = NULL;
		size_t n = 0, parts = 1;

		if (nthreads > 1) {
			int err = fs_inode_scan_ag_chunks(e->w[0].scan, agno, &ch, &n);

			if (err && err != -EUCLEAN)
				return err;
			parts = (n + ITEM_CHUNKS - 1) / ITEM_CHUNKS;
			if (parts > MAX_PARTS)
				parts = MAX_PARTS;
			if (!parts)
				parts = 1;
		}
		for (size_t p = 0; p < parts; p++) {
			/* cut at a chunk's startino; a later part starts past the previous one */
			fs_agino_t lo = p ? ch[n * p / parts] : 0;

			if (p && lo <= e->items[e->nitems - 1].lo)
				continue;
			if (p)
				e->items[e->nitems - 1].end = lo;
			e->items[e->nitems++] = (struct item){ agno, lo, NULLAGINO };
		}
	}
	e->sink.nags = e->nitems;
	e->sink.q = calloc(e->nitems ? e->nitems : 1, sizeof(*e->sink.q));
	return e->sink.q ? 0 : -ENOMEM;
}

int bs_run_offline(const char *path, const struct bs_opts *o, struct bs_result *r)
{
	/* the same fallback as check: a bad primary is read through a secondary */
	struct fs_open_opts oo = { .allow_secondary = true };
	struct fs_error ferr = { 0 };
	struct engine e = { .o = o };
	struct fs_ag_workq_opts wo = { .threads = o->threads, .ag_stride = 1 };
	unsigned nthreads;
	int rc = XFSX_EXIT_CLEAN, err;
	long pg = sysconf(_SC_PAGESIZE);

	oo.dev.writable = false;
	oo.dev.no_direct = o->no_direct;
	oo.dev.engine = (enum fs_io_engine)o->io_engine;
	oo.logdev = o->logdev;
	oo.rtdev = o->rtdev;
	fs_findings_init(&e.fl);
	err = fs_open(path, &oo, &e.fs, &e.fl, &ferr);
	if (err) {
		fprintf(stderr, "xfsx_bulkstat: %s\n", ferr.msg);
		fs_findings_free(&e.fl);
		return err == -EUCLEAN ? XFSX_EXIT_UNCORRECTED : XFSX_EXIT_OPERATIONAL;
	}
	{
		struct fs_device_notes n;

		fs_device_notes(e.fs, &oo, &n);
		if (*n.logdev)
			fprintf(stderr, "xfsx_bulkstat: %s\n", n.logdev);
		if (*n.rtdev)
			fprintf(stderr, "xfsx_bulkstat: %s\n", n.rtdev);
	}
	if (e.fs->sb_source) {
		fprintf(stderr, "xfsx_bulkstat: %s: the primary superblock is unusable; reading "
			"with the geometry of the secondary in AG %u (xfs_repair can rewrite it)\n",
			path, e.fs->sb_source);
		r->primary_bad = true;
	}
	if (e.fs->have_log_head && !e.fs->log_clean)
		fprintf(stderr, "xfsx_bulkstat: %s: the log is dirty; inodes changed since the last "
			"checkpoint may be missing or stale (mount and unmount to replay it)\n", path);
	e.dev_blksize = pg > 0 ? (uint32_t)pg : 4096;
	collect_internal(&e);

	/* which AGs, from where */
	{
		const struct fs_geom *g = &e.fs->g;
		fs_agnumber_t sag = fs_ino_to_agno(g, o->start_ino);
		uint64_t last_ag = g->agcount;

		if (o->start_ino >> g->agino_log >= g->agcount) {
			wo.ag_count = 0;	/* past the last AG: nothing to list */
		} else if (o->have_ag) {
			if (o->ag >= g->agcount) {
				fprintf(stderr, "xfsx_bulkstat: --ag=%u: the filesystem has %u AGs\n",
					o->ag, g->agcount);
				fs_close(e.fs);
				fs_findings_free(&e.fl);
				return XFSX_EXIT_USAGE;
			}
			wo.first_ag = o->ag;
			wo.ag_count = sag > o->ag ? 0 : 1;
			e.start_ag = o->ag;
			e.start_agino = sag == o->ag ? fs_ino_to_agino(g, o->start_ino) : 0;
		} else {
			wo.first_ag = sag;
			wo.ag_count = (fs_agnumber_t)(last_ag - sag);
			e.start_ag = sag;
			e.start_agino = fs_ino_to_agino(g, o->start_ino);
		}
	}

	if (o->want_paths) {
		err = bs_paths_build_offline(e.fs, &e.paths);
		if (err) {
			fprintf(stderr, "xfsx_bulkstat: %s: cannot gather the paths: %s\n", path,
				strerror(-err));
			fs_close(e.fs);
			fs_findings_free(&e.fl);
			return XFSX_EXIT_OPERATIONAL;
		}
	}
	nthreads = fs_ag_workq_threads(&wo);
	e.w = calloc(nthreads, sizeof(*e.w));
	e.sink.fd = o->out_fd;
	pthread_mutex_init(&e.sink.lock, NULL);
	pthread_cond_init(&e.sink.moved, NULL);
	if (!e.w) {
		fprintf(stderr, "xfsx_bulkstat: out of memory\n");
		rc = XFSX_EXIT_OPERATIONAL;
		goto out;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		e.w[i].e = &e;
		fs_findings_init(&e.w[i].scratch);
		e.w[i].cur = chunk_new(&e.sink);
		err = e.w[i].cur ? fs_inode_scan_create(e.fs, NULL, &e.w[i].scan) : -ENOMEM;
		if (err) {
			fprintf(stderr, "xfsx_bulkstat: %s: cannot set up reading: %s\n", path,
				strerror(-err));
			rc = XFSX_EXIT_OPERATIONAL;
			goto out;
		}
	}
	err = make_items(&e, &wo, nthreads);
	if (err) {
		fprintf(stderr, "xfsx_bulkstat: %s: %s\n", path, strerror(-err));
		rc = XFSX_EXIT_OPERATIONAL;
		goto out;
	}
	{
		char hdr[BS_MAX_FIELDS * 24];
		size_t n = bs_format_header(&o->out, hdr, sizeof(hdr));

		if (n && (err = bs_write_all(o->out_fd, hdr, n))) {
			if (err != -EPIPE)
				fprintf(stderr, "xfsx_bulkstat: cannot write to standard output: %s\n",
					strerror(-err));
			rc = err == -EPIPE ? XFSX_EXIT_CLEAN : XFSX_EXIT_OPERATIONAL;
			goto out;
		}
	}
	{
		struct fs_ag_workq_opts io = { .threads = nthreads, .ag_stride = 1,
					       .ag_count = e.nitems };

		err = e.nitems ? fs_ag_workq_run(&io, do_item, &e) : 0;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		r->inodes += e.w[i].inodes;
		r->damaged += e.w[i].damaged;
	}
	if (getenv("XFSX_BULKSTAT_STATS")) {
		/* for benchmarks: how the reads were shaped */
		struct fs_inode_scan_stats sum = { 0 }, st;

		for (unsigned i = 0; i < nthreads; i++) {
			fs_inode_scan_get_stats(e.w[i].scan, &st);
			sum.chunks += st.chunks;
			sum.windows += st.windows;
			sum.bytes_read += st.bytes_read;
			sum.btree_blocks += st.btree_blocks;
		}
		fprintf(stderr, "xfsx_bulkstat: stats: %u threads, %s engine%s, %" PRIu64 " chunks, %" PRIu64
			" reads, %" PRIu64 " bytes read, %" PRIu64 " inobt blocks\n",
			nthreads, fs_io_engine_name(e.fs->dev->engine), e.fs->dev->direct ? " (O_DIRECT)" : "",
			sum.chunks, sum.windows, sum.bytes_read, sum.btree_blocks);
	}
	if (err == -EPIPE || e.sink.err == -EPIPE) {
		rc = XFSX_EXIT_CLEAN;	/* the reader went away: not our failure */
	} else if (e.sink.err) {
		/* the output failed, not the image: name the output */
		fprintf(stderr, "xfsx_bulkstat: cannot write to standard output: %s\n",
			strerror(-e.sink.err));
		rc = XFSX_EXIT_OPERATIONAL;
	} else if (err) {
		fprintf(stderr, "xfsx_bulkstat: %s: %s\n", path, strerror(err < 0 ? -err : EIO));
		rc = XFSX_EXIT_OPERATIONAL;
	}
	/* header, btree and record problems met on the way */
	fs_findings_sort(&e.fl);
	for (size_t i = 0; i < e.fl.n; i++) {
		const struct fs_finding *f = &e.fl.v[i];
		if (f->def->sev == FS_SEV_ERROR && !is_lsn_finding(f))
			r->problems++;
	}
	if (e.fl.n) {
		fputs("xfsx_bulkstat: problems found on the way (inodes behind them may be missing):\n",
		      stderr);
		fs_findings_write_text(&e.fl, stderr);
	}
out:
	if (e.w)
		for (unsigned i = 0; i < nthreads; i++) {
			fs_inode_scan_destroy(e.w[i].scan);
			fs_findings_free(&e.w[i].scratch);
			free(e.w[i].cur);
			free(e.w[i].rec.p);
			free(e.w[i].pathbuf.p);
		}
	if (e.sink.q)
		for (fs_agnumber_t i = 0; i < e.sink.nags; i++)
			while (e.sink.q[i].head) {
				struct chunk *c = e.sink.q[i].head;
				e.sink.q[i].head = c->next;
				free(c);
			}
	while (e.sink.pool) {
		struct chunk *c = e.sink.pool;

		e.sink.pool = c->next;
		free(c);
	}
	free(e.sink.q);
	free(e.items);
	free(e.w);
	bs_paths_free(e.paths);
	pthread_mutex_destroy(&e.sink.lock);
	pthread_cond_destroy(&e.sink.moved);
	fs_close(e.fs);
	fs_findings_free(&e.fl);
	return rc;
}
