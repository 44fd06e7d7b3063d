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
 * Per AG on the worker pool, the deferred inodes are taken in batches
 * small enough for the cache: the batch's bmbt root children go to
 * readahead as one sorted list, then the deferred fork maps are loaded
 * (phase_forks.c, deeper bmbt levels read on demand); then the directory,
 * attr and symlink blocks the batch's maps hold go to readahead as one
 * list (dense runs become 2 MiB windows chopped into cached blocks), and
 * the directory walks (phase_dirs.c), attr and symlink checks
 * (phase_attrs.c) find them in the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "libfs/bmap.h"
#include "libfs/inode.h"
#include "libfs/vec.h"
#include "libfs/workq.h"

static int flush_nondir(struct scan_ag *s, struct scan_deferq *q);
#define DEFER_FLUSH_AT 4096

int scan_defer(struct scan_ag *s, const struct scan_inode *ci, uint8_t what)
{
	struct scan_ctx *cx = s->cx;
	struct scan_deferq *q = &cx->deferq[s->agno];	/* this AG's worker alone adds to it */
	size_t isz = cx->fs->g.inodesize;

	/* an inode's steps run one after another: it can only be the last one kept */
	if (q->n && q->v[q->n - 1].ino == ci->ino) {
		if (!(q->v[q->n - 1].what & ~DEFER_DIR) && (what & ~DEFER_DIR))
			q->nondir++;
		q->v[q->n - 1].what |= what;
		return 0;
	}
	if (q->nondir >= DEFER_FLUSH_AT) {
		int err = flush_nondir(s, q);

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
	__atomic_add_fetch(&cx->deferred, 1, __ATOMIC_RELAXED);
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

void scan_ra_run(struct scan_ctx *cx, struct fs_ioq *ioq, struct scan_ra_list *l)
{
	struct fs_ra_stats st = { 0 };

	if (l->n && fs_readahead(cx->cache, ioq, l->v, l->n,
				 &(struct fs_ra_opts){ .qdepth = cx->opts->qdepth }, &st) == 0)
		scan_ra_account(cx, &st);
	l->n = 0;
	l->bytes = 0;
}

/*
 * Bytes of blocks one batch may read ahead: a share of the cache, so a
 * batch is not evicted before it is used.
 */
static uint64_t batch_budget(struct scan_ctx *cx)
{
	uint64_t cap = fs_cache_cap(cx->cache), b;

	b = cap ? cap / 4 / (cx->workers ? cx->workers : 1) : 64ull << 20;
	if (b < (4ull << 20))
		b = 4ull << 20;
	if (b > (64ull << 20))
		b = 64ull << 20;
	return b;
}

/* Every block a map holds into l (attr and symlink blocks are single fs blocks). */
static int map_readahead(const struct fs_bmap *m, struct scan_ra_list *l, uint64_t budget)
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

struct batch_item {
	struct scan_inode ci;
	struct fs_bmap dmap;       /* data fork (directories) */
	bool have_dmap;
};

static void item_init(struct scan_ctx *cx, struct scan_deferq *q, size_t i, fs_agnumber_t agno,
		      struct batch_item *it)
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
}

/*
 * Run the work in `mask` (DEFER_*) of the queue's items, batch by batch,
 * through queue ioq; the flags done are cleared.  s carries the tallies.
 */
static int run_batches(struct scan_ag *s, struct scan_deferq *q, struct fs_ioq *ioq,
		       uint8_t mask)
{
	struct scan_ctx *cx = s->cx;
	const struct fs_geom *g = &cx->fs->g;
	struct scan_ra_list ra = { .g = g };
	uint64_t budget = batch_budget(cx);
	struct batch_item *items = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t first = 0; first < q->n && !err;) {
		size_t last = first, nb;
		uint64_t want = 0;

		/*
		 * The batch: inodes until their blocks (di_nblocks, both forks)
		 * reach the budget; the bmbt root children of its btree forks
		 * are read ahead together.
		 */
		while (last < q->n && (last == first || want < budget)) {
			const struct scan_deferred *d = &q->v[last];
			const void *dip = q->dips + last * g->inodesize;
			struct fs_inode ip;

			last++;
			if (!(d->what & mask))
				continue;
			fs_inode_decode(dip, &ip);
			want += ip.nblocks < (budget >> g->blocklog) ? ip.nblocks << g->blocklog : budget;
			if (d->what & mask & DEFER_FORKS) {
				fs_fsblock_t kids[64];

				for (int f = XFS_DATA_FORK; f <= XFS_ATTR_FORK && !err; f++) {
					size_t n = fs_bmap_root_children(g, dip, &ip, f, kids, 64);

					for (size_t k = 0; k < n && !err; k++)
						err = scan_ra_add(&ra, kids[k], 1);
				}
			}
		}
		nb = last - first;
		if (fs_vec_reserve(&items, &cap, nb, sizeof(*items), nb)) {
			err = -ENOMEM;
			break;
		}
		scan_ra_run(cx, ioq, &ra);
		for (size_t i = 0; i < nb; i++) {
			item_init(cx, q, first + i, s->agno, &items[i]);
			if (q->v[first + i].what & mask & DEFER_FORKS)
				scan_forks_inode(s, &items[i].ci);
		}
		/* then the batch's directory, attr and symlink blocks, read ahead together */
		for (size_t i = 0; i < nb && !err; i++) {
			struct batch_item *it = &items[i];
			uint8_t what = q->v[first + i].what & mask;
			uint8_t fmt = it->ci.ip.format;

			if ((what & (DEFER_DIR | DEFER_SYMLINK)) &&
			    (fmt == XFS_DINODE_FMT_EXTENTS || fmt == XFS_DINODE_FMT_BTREE)) {
				int e = scan_load_map(cx, it->ci.dip, &it->ci.ip, XFS_DATA_FORK, NULL, &it->dmap);

				if (e == -ENOMEM) {
					err = e;
					break;
				}
				it->have_dmap = e == 0;
				if (e)
					fs_bmap_free(&it->dmap);
				else if (what & DEFER_DIR)
					err = scan_dir_readahead(&it->dmap, &ra, budget);
				else
					err = map_readahead(&it->dmap, &ra, budget);
			}
			if (!err && (what & DEFER_ATTR)) {
				struct fs_bmap am;
				int e = scan_load_map(cx, it->ci.dip, &it->ci.ip, XFS_ATTR_FORK, NULL, &am);

				if (e == -ENOMEM)
					err = e;
				else if (!e)
					err = map_readahead(&am, &ra, budget);
				fs_bmap_free(&am);
			}
		}
		scan_ra_run(cx, ioq, &ra);
		for (size_t i = 0; i < nb; i++) {
			struct batch_item *it = &items[i];
			uint8_t what = q->v[first + i].what & mask;

			if (!err && (what & DEFER_DIR))
				err = scan_dir_walk(s, &it->ci, it->have_dmap ? &it->dmap : NULL);
			if (!err && (what & (DEFER_ATTR | DEFER_SYMLINK)))
				scan_attrs_blocks(s, &it->ci, what);
			if (it->have_dmap)
				fs_bmap_free(&it->dmap);
			q->v[first + i].what &= (uint8_t)~mask;
		}
		if (!err && s->err)
			err = s->err;
		first = last;
	}
	free(items);
	free(ra.v);
	return err;
}

/*
 * During the scan: once an AG's queue holds enough inodes with work that
 * need not wait for the directory graph, do that work now (through the
 * worker's second queue: the first carries the scan's windows) and keep
 * only the directories, so the queue does not grow with every file that
 * has an attr block or a btree fork.
 */
static int flush_nondir(struct scan_ag *s, struct scan_deferq *q)
{
	struct scan_ctx *cx = s->cx;
	size_t isz = cx->fs->g.inodesize, m = 0;
	int err;

	s->deferring = false;
	err = run_batches(s, q, cx->ioq_aux[s->worker], (uint8_t)~DEFER_DIR);
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

static int blocks_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct scan_ctx *cx = priv;
	struct scan_deferq *q = &cx->deferq[agno];
	struct scan_ag s = { .cx = cx, .agno = agno, .worker = worker };
	int err = run_batches(&s, q, cx->ioq[worker], 0xff);

	free(q->v);
	free(q->dips);
	*q = (struct scan_deferq){ 0 };
	pthread_mutex_lock(&cx->ra_lock);
	cx->fork_extents += s.extents;
	cx->bmbt_blocks += s.bmbt;
	if (s.incomplete || err)
		cx->forks_complete = false;
	pthread_mutex_unlock(&cx->ra_lock);
	scan_progress_add(cx, 1);
	return err;
}

int scan_phase_blocks(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	int err;

	scan_progress_phase(cx, "directory, xattr, symlink and bmbt blocks", g->agcount);
	err = fs_ag_workq_run(&wo, blocks_ag, cx);
	scan_progress_end(cx);
	return err;
}
