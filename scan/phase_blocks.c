// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 5 of the scan: the inode blocks the inode scan deferred.  The scan
 * (phase 4) reads inodes only; whatever needs blocks from elsewhere —
 * btree-format fork maps (bmbt blocks), directory blocks, attr fork blocks,
 * remote symlink blocks — is left here with a copy of the inode, because
 * reading those one at a time in the middle of the scan would be a
 * synchronous read per inode, and because a directory's entries can only
 * be judged once every inode's type is known.
 *
 * Per work item on the worker pool (a part of an AG, as the inode scan
 * split it: scan_each_item), the deferred inodes are taken in batches
 * small enough for the cache, and the per-inode steps (cx->steps, struct
 * scan_step) do their deferred work in stages: stage 0, the batch's bmbt
 * root children go to readahead as one sorted list, then the deferred
 * fork maps are loaded (phase_forks.c, deeper bmbt levels read on demand);
 * stage 1, the directory, attr and symlink blocks the batch's maps hold go
 * to readahead as one list (dense runs become 2 MiB windows chopped into
 * cached blocks), and the directory walks (phase_dirs.c), attr and
 * symlink checks (phase_attrs.c) find them in the cache.  An inode's fork
 * maps are loaded once for all its steps (struct scan_maps).
 *
 * This file is the engine: it knows the steps only through the table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/bmap.h"
#include "libfs/format/inode.h"
#include "libfs/util/vec.h"

static int flush_nondir(struct scan_ag *s, struct scan_deferq *q, struct fs_ioq *ioq,
			unsigned qdepth);
/*
 * Reads in flight on the second queue, used while the scan streams: its
 * slot buffers (up to 2 MiB each) are memory on top of the stream's.
 */
#define AUX_QDEPTH 4
#define DEFER_FLUSH_AT 4096

int scan_defer(struct scan_ag *s, const struct scan_inode *ci, uint8_t what)
{
	struct scan_ctx *cx = s->cx;
	/*
	 * The worker's own queue, not the item's: reused from item to item,
	 * it is faulted in once per worker (a queue per item, 32 items a
	 * worker, grew and faulted in afresh for each: 2,000 page faults more
	 * at -t 2 than at -t 1 on the aged benchmark image).
	 */
	struct scan_deferq *q = &cx->deferw[s->worker];
	size_t isz = cx->fs->g.inodesize;

	/* an inode's steps run one after another: it can only be the last one kept */
	if (q->n && q->v[q->n - 1].ino == ci->ino) {
		if (!(q->v[q->n - 1].what & ~DEFER_DIR) && (what & ~DEFER_DIR))
			q->nondir++;
		q->v[q->n - 1].what |= what;
		return 0;
	}
	if (q->nondir >= DEFER_FLUSH_AT) {
		int err = flush_nondir(s, q, cx->ioq_aux[s->worker],
				       cx->opts->qdepth && cx->opts->qdepth < AUX_QDEPTH ?
				       cx->opts->qdepth : AUX_QDEPTH);

		if (err)
			return err;
	}
	if (q->n == q->cap) {
		/* two arrays of one capacity: the records and their inode copies */
		size_t cap = q->cap, dcap = q->cap;

		if (FS_VEC_ROOM(q->v, q->n, cap, 64) ||
		    fs_vec_reserve(&q->dips, &dcap, q->n + 1, isz, 64))
			return -ENOMEM;
		q->cap = cap;
	}
	q->v[q->n] = (struct scan_deferred){ ci->slot, ci->ino, ci->daddr, what };
	memcpy(q->dips + q->n * isz, ci->dip, isz);
	q->n++;
	s->deferred++;
	if (what & ~DEFER_DIR)
		q->nondir++;
	return 0;
}

int scan_ra_add(struct scan_ra_list *l, fs_fsblock_t fsb, uint32_t blocks)
{
	if (!fs_fsb_valid(l->g, fsb) || !blocks)
		return 0;
	if (FS_VEC_ROOM(l->v, l->n, l->cap, 256))
		return -ENOMEM;
	l->v[l->n++] = (struct fs_ra_extent){ fs_fsb_to_daddr(l->g, fsb), blocks << l->g->blocklog };
	l->bytes += (uint64_t)blocks << l->g->blocklog;
	return 0;
}

void scan_ra_run(struct scan_ctx *cx, struct fs_ioq *ioq, unsigned qdepth, struct scan_ra_list *l)
{
	struct fs_ra_stats st = { 0 };

	if (l->n && fs_readahead(cx->cache, ioq, l->v, l->n,
				 &(struct fs_ra_opts){ .qdepth = qdepth, .inflight_max = cx->ra_inflight }, &st) == 0)
		scan_ra_account(cx, &st);
}

/*
 * A batch's blocks are read once: once its steps are done with them they
 * leave the cache, so the cache holds what the batch in hand needs, not
 * the last cap's worth of every directory and xattr block read before.
 */
static void ra_forget(struct scan_ctx *cx, struct scan_ra_list *l)
{
	fs_cache_forget_many(cx->cache, l->v, l->n);
	l->n = 0;
	l->bytes = 0;
}

/*
 * Bytes of blocks one batch may read ahead: a share of the cache, so a
 * batch is not evicted before it is used, and at most 8 MiB: a batch's
 * blocks leave the cache once it is done (read once), so this is what the
 * cache holds per worker.  (16 MiB, the cap before, was slower warm on
 * the aged benchmark image, -t 1 0.59 s against 0.56 and -t 2 0.35
 * against 0.33, with 10 MiB more peak at -t 2, and no faster cold; 4 MiB
 * was slower again at -t 1.)  At least 4 MiB, but under a small -m (the
 * cache at its 4 MiB floor) half the cache's cap shared by the workers: 4
 * MiB a worker took the 20M-inode image's check at its smallest cap 17 MiB
 * past its inode phase.
 */
static uint64_t batch_budget(struct scan_ctx *cx)
{
	uint64_t cap = fs_cache_cap(cx->cache), b;

	unsigned w = cx->workers ? cx->workers : 1;
	/* at least 4 MiB, unless -m cut the cache so far that the workers' batches would pass it */
	uint64_t least = cap && cap / w / 2 < (4ull << 20) ? cap / w / 2 : 4ull << 20;

	b = cap ? cap / 4 / w : 16ull << 20;
	if (b < least)
		b = least;
	if (b < (256ull << 10))
		b = 256ull << 10;
	if (b > (8ull << 20))
		b = 8ull << 20;
	return b;
}

/* Every block a map holds into l (attr and symlink blocks are single fs blocks). */
int scan_ra_map(const struct fs_bmap *m, struct scan_ra_list *l, uint64_t budget)
{
	for (size_t k = 0; k < m->n && l->bytes < budget; k++) {
		const struct fs_bmap_ext *x = &m->ext[k];
		uint64_t left = x->blockcount;
		fs_fsblock_t fsb = x->startblock;

		/* a mapping outside the filesystem (reported by the fork checks) has nothing to read */
		if (!left || !fs_fsb_valid(l->g, fsb) || !fs_fsb_valid(l->g, fsb + left - 1))
			continue;
		while (left && l->bytes < budget) {
			uint32_t run = 1;
			int err = scan_ra_add(l, fsb, run);

			if (err)
				return err;
			fsb += run;
			left -= run;
		}
	}
	return 0;
}

const struct fs_bmap *scan_maps_get(struct scan_ctx *cx, const struct scan_inode *ci,
				    struct scan_maps *maps, int whichfork, int *err)
{
	int f = whichfork == XFS_ATTR_FORK;

	if (!maps->state[f]) {
		int e = scan_load_map(cx, ci->dip, &ci->ip, whichfork, NULL, &maps->fork[f]);

		if (e)
			fs_bmap_free(&maps->fork[f]);
		maps->state[f] = e ? (int8_t)(e < -127 ? -EIO : e) : 1;
	}
	if (maps->state[f] < 0) {
		*err = maps->state[f];
		return NULL;
	}
	return &maps->fork[f];
}

void scan_maps_keep(struct scan_maps *maps, int whichfork, struct fs_bmap *m)
{
	int f = whichfork == XFS_ATTR_FORK;

	if (maps->state[f] > 0)
		fs_bmap_free(&maps->fork[f]);
	maps->fork[f] = *m;
	maps->state[f] = 1;
}

void scan_maps_free(struct scan_maps *maps)
{
	for (int f = 0; f < 2; f++)
		if (maps->state[f] > 0)
			fs_bmap_free(&maps->fork[f]);
	memset(maps, 0, sizeof(*maps));
}

struct batch_item {
	struct scan_inode ci;
	struct scan_maps maps;     /* its fork maps, loaded once for all its steps */
	uint8_t what;              /* its DEFER_* bits this run does */
};

static void item_init(struct scan_ctx *cx, struct scan_deferq *q, size_t i, fs_agnumber_t agno,
		      uint8_t mask, struct batch_item *it)
{
	memset(it, 0, sizeof(*it));
	it->ci.agno = agno;
	it->ci.ino = q->v[i].ino;
	it->ci.agino = fs_ino_to_agino(&cx->fs->g, q->v[i].ino);
	it->ci.daddr = q->v[i].daddr;
	it->ci.slot = q->v[i].slot;
	it->ci.dip = q->dips + i * cx->fs->g.inodesize;
	/*
	 * Only inodes whose core allowed the deferred work were kept (a sound
	 * core for directories, attrs and symlinks; sound forks for maps);
	 * phase 5's steps do not consult core_ok.
	 */
	it->ci.core_ok = false;
	it->ci.forks_ok = true;
	fs_inode_decode(it->ci.dip, &it->ci.ip);
	it->what = q->v[i].what & mask;
}

/*
 * A worker's batch arrays, kept from one run_batches to the next: freed
 * and allocated again per call (above glibc's 128 KiB mmap threshold,
 * fs_mem_setup) they were mapped anew and faulted in page by page, about
 * 1,100 page faults of a -t 2 check of the aged benchmark image, and
 * their unmapping sent the other worker a TLB shootdown.
 */
struct scan_batch_mem {
	struct batch_item *items;
	size_t cap;
	struct scan_ra_list ra;
};

int scan_batch_mem_create(struct scan_ctx *cx)
{
	cx->batch_mem = calloc(cx->workers ? cx->workers : 1, sizeof(*cx->batch_mem));
	return cx->batch_mem ? 0 : -ENOMEM;
}

void scan_batch_mem_free(struct scan_ctx *cx)
{
	if (!cx->batch_mem)
		return;
	for (unsigned w = 0; w < (cx->workers ? cx->workers : 1); w++) {
		free(cx->batch_mem[w].items);
		free(cx->batch_mem[w].ra.v);
	}
	free(cx->batch_mem);
	cx->batch_mem = NULL;
}

/*
 * Run the work in `mask` (DEFER_*) of the queue's items, batch by batch,
 * through queue ioq; the flags done are cleared.  s carries the tallies.
 * Per batch and stage: the stage's steps add their blocks to one
 * readahead list, it is read, then the steps do their work.
 */
static int run_batches(struct scan_ag *s, struct scan_deferq *q, struct fs_ioq *ioq,
		       unsigned qdepth, uint8_t mask)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_geom *g = &cx->fs->g;
	const struct scan_step *const *steps = cx->steps;
	struct scan_batch_mem *bm = &cx->batch_mem[s->worker];
	struct scan_ra_list ra = bm->ra;
	uint64_t budget = batch_budget(cx);
	struct batch_item *items = bm->items;
	size_t cap = bm->cap;
	int err = 0;

	ra.g = g;

	for (size_t first = 0; first < q->n && !err;) {
		size_t last = first, nb;
		uint64_t want = 0;

		/* the batch: inodes until their blocks (di_nblocks, both forks) reach the budget */
		while (last < q->n && (last == first || want < budget)) {
			const struct scan_deferred *d = &q->v[last];
			struct fs_inode ip;

			last++;
			if (!(d->what & mask))
				continue;
			fs_inode_decode(q->dips + (last - 1) * g->inodesize, &ip);
			want += ip.nblocks < (budget >> g->blocklog) ? ip.nblocks << g->blocklog : budget;
		}
		nb = last - first;
		if (fs_vec_reserve(&items, &cap, nb, sizeof(*items), nb)) {
			err = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < nb; i++)
			item_init(cx, q, first + i, s->agno, mask, &items[i]);
		for (unsigned stage = 0; stage < SCAN_STAGES; stage++) {
			for (size_t i = 0; i < nb && !err; i++)
				for (unsigned k = 0; steps[k] && !err; k++)
					if (steps[k]->stage == stage && (items[i].what & steps[k]->defer) &&
					    steps[k]->readahead)
						err = steps[k]->readahead(s, &items[i].ci, &items[i].maps,
									  items[i].what, &ra, budget);
			scan_ra_run(cx, ioq, qdepth, &ra);
			for (size_t i = 0; i < nb; i++)
				for (unsigned k = 0; steps[k] && !err; k++)
					if (steps[k]->stage == stage && (items[i].what & steps[k]->defer) &&
					    steps[k]->blocks)
						err = steps[k]->blocks(s, &items[i].ci, &items[i].maps,
								       items[i].what);
			ra_forget(cx, &ra);
		}
		for (size_t i = 0; i < nb; i++) {
			scan_maps_free(&items[i].maps);
			q->v[first + i].what &= (uint8_t)~mask;
		}
		if (!err && s->err)
			err = s->err;
		first = last;
	}
	ra.n = 0;
	ra.bytes = 0;
	bm->ra = ra;
	bm->items = items;
	bm->cap = cap;
	return err;
}

/*
 * During the scan: once a work item's queue holds enough inodes with work
 * that need not wait for the directory graph, do that work now (through
 * the worker's second queue: the first carries the scan's windows) and
 * keep only the directories, so the queue does not grow with every file
 * that has an attr block or a btree fork.  At the end of the item the
 * rest goes the same way (scan_defer_flush), so only directories wait
 * for phase 5.
 */
static int flush_nondir(struct scan_ag *s, struct scan_deferq *q, struct fs_ioq *ioq,
			unsigned qdepth)
{
	struct scan_ctx *cx = s->cx;
	size_t isz = cx->fs->g.inodesize, m = 0;
	int err;

	s->deferring = false;
	err = run_batches(s, q, ioq, qdepth, (uint8_t)~DEFER_DIR);
	s->deferring = true;
	for (size_t i = 0; i < q->n; i++) {
		if (!q->v[i].what)
			continue;
		if (m != i) {
			q->v[m] = q->v[i];
			memcpy(q->dips + m * isz, q->dips + i * isz, isz);
		}
		m++;
	}
	__atomic_add_fetch(&cx->deferred_early, q->nondir, __ATOMIC_RELAXED);
	q->n = m;
	q->nondir = 0;
	return err;
}

/*
 * -m (or XFSX_TEST_SPILL): what a work item keeps for phase 5 once its
 * scan is done (the directories: a record and a copy of the inode each,
 * 544 bytes with 512-byte inodes), once the queues kept in memory would
 * pass an eighth of the model's share, waits in the temporary directory, two
 * runs in the byte spill the cache stages to, and comes back one work
 * item at a time (defer_load), so the queues do not grow with the
 * directories of the volume.  The order, and so the findings, are those
 * of the queue in memory.
 */
static int defer_store(struct scan_ctx *cx, struct scan_deferq *q)
{
	size_t isz = cx->fs->g.inodesize;
	int err;

	if (!cx->spill || !cx->stage || !q->n)
		return 0;
	/* kept while the queues fit an eighth of the model's share (XFSX_TEST_SPILL: never) */
	if (!cx->spill_forced) {
		uint64_t b = q->n * (sizeof(*q->v) + isz);

		if (__atomic_add_fetch(&cx->deferred_held, b, __ATOMIC_RELAXED) <= cx->budget.model / 8)
			return 0;
		__atomic_sub_fetch(&cx->deferred_held, b, __ATOMIC_RELAXED);
	}
	err = fs_spill_write(cx->stage, q->v, q->n * sizeof(*q->v), &q->run_v);
	if (!err) {
		err = fs_spill_write(cx->stage, q->dips, q->n * isz, &q->run_dips);
		if (err)
			fs_spill_discard(cx->stage, &q->run_v);
	}
	if (err) {
		cx->spill_failed = fs_spill_dir(cx->stage);
		return err;
	}
	free(q->v);
	free(q->dips);
	q->v = NULL;
	q->dips = NULL;
	q->cap = 0;
	q->spilled = true;
	__atomic_add_fetch(&cx->deferred_spilled, q->n, __ATOMIC_RELAXED);
	return 0;
}

static int defer_load(struct scan_ctx *cx, struct scan_deferq *q)
{
	size_t isz = cx->fs->g.inodesize;
	int err;

	if (!q->spilled)
		return 0;
	q->v = malloc(q->n * sizeof(*q->v));
	q->dips = malloc(q->n * isz);
	err = q->v && q->dips ? 0 : -ENOMEM;
	if (!err)
		err = fs_spill_read(cx->stage, &q->run_v, q->v);
	if (!err)
		err = fs_spill_read(cx->stage, &q->run_dips, q->dips);
	fs_spill_discard(cx->stage, &q->run_v);
	fs_spill_discard(cx->stage, &q->run_dips);
	q->spilled = false;
	q->cap = q->n;
	if (err && err != -ENOMEM)
		cx->spill_failed = fs_spill_dir(cx->stage);
	return err;
}

int scan_defer_flush(struct scan_ag *s)
{
	struct scan_ctx *cx = s->cx;
	struct scan_deferq *w = &cx->deferw[s->worker], *q = &cx->deferq[s->item];
	size_t isz = cx->fs->g.inodesize;
	int err = w->nondir ? flush_nondir(s, w, cx->ioq[s->worker], cx->opts->qdepth) : 0;

	if (err)
		return err;
	/* the directories left, in their order, to the item's queue at their size */
	if (w->n) {
		q->v = malloc(w->n * sizeof(*q->v));
		q->dips = malloc(w->n * isz);
		if (!q->v || !q->dips) {
			free(q->v);
			free(q->dips);
			q->v = NULL;
			q->dips = NULL;
			return -ENOMEM;
		}
		memcpy(q->v, w->v, w->n * sizeof(*q->v));
		memcpy(q->dips, w->dips, w->n * isz);
		q->n = q->cap = w->n;
		q->nondir = 0;
		w->n = 0;
	}
	return defer_store(cx, q);
}

void scan_defer_release(struct scan_ctx *cx)
{
	for (unsigned k = 0; k < (cx->workers ? cx->workers : 1); k++) {
		free(cx->deferw[k].v);
		free(cx->deferw[k].dips);
		cx->deferw[k] = (struct scan_deferq){ 0 };
	}
}

static int blocks_item(void *priv, uint32_t item, unsigned worker)
{
	struct scan_ctx *cx = priv;
	struct scan_deferq *q = &cx->deferq[item];
	struct scan_ag s = { .cx = cx, .agno = item / cx->parts, .item = item, .worker = worker };
	int err = defer_load(cx, q);

	if (!err)
		err = run_batches(&s, q, cx->ioq[worker], cx->opts->qdepth, 0xff);

	free(q->v);
	free(q->dips);
	*q = (struct scan_deferq){ 0 };
	pthread_mutex_lock(&cx->ra_lock);
	cx->fork_extents += s.extents;
	cx->bmbt_blocks += s.bmbt;
	if (cx->links) {
		cx->links->dirs_walked += s.dirs;
		cx->links->entries += s.entries;
	}
	if (s.incomplete || err)
		cx->forks_complete = false;
	pthread_mutex_unlock(&cx->ra_lock);
	scan_progress_add(cx, 1);
	return err;
}

int scan_phase_blocks(struct scan_ctx *cx)
{
	return scan_each_item(cx, "directory, xattr, symlink and bmbt blocks", blocks_item, cx);
}
