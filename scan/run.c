// SPDX-License-Identifier: GPL-2.0
/*
 * One scan of a filesystem, the engine xfsx_check and xfsx_repair share:
 * the dirty-log warning first, then the engine (one metadata
 * cache for all phases, the in-core model, a submission queue per worker)
 * and the phases in order.  Phases are files: phase_headers.c (1),
 * phase_freesp.c (2), phase_inobt.c (3), phase_inodes.c (4: the inode scan,
 * which reads every inode once and runs the per-inode steps of
 * phase_forks.c and phase_attrs.c on it), phase_blocks.c (5: the blocks
 * the scan deferred, read ahead per batch: bmbt, directory via
 * phase_dirs.c, xattr, symlink), phase_links.c (6: the directory graph),
 * phase_unlinked.c (7: unlinked lists, quota and realtime inodes),
 * phase_owners.c with phase_rmap.c (8: block ownership).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "scan/pptr.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/io/workq.h"
#include "libfs/util/clock.h"

/*
 * Inode clusters are streamed, never cached, so the cache holds btree,
 * directory, xattr and symlink blocks: 256 MiB (a quarter of RAM on small
 * machines) covers the directory batches without growing with the volume.
 */
static uint64_t default_cache_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t quarter = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 4 : 0;
	uint64_t cap = 256ull << 20;

	return quarter && quarter < cap ? quarter : cap;
}

int scan_each_ag(struct scan_ctx *cx, const char *name,
		 int (*fn)(void *priv, fs_agnumber_t agno, unsigned worker), void *priv)
{
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = cx->fs->g.agcount,
	};
	int err;

	scan_progress_phase(cx, name, cx->fs->g.agcount);
	err = fs_ag_workq_run(&wo, fn, priv);
	scan_progress_end(cx);
	return err;
}

int scan_each_item(struct scan_ctx *cx, const char *name,
		   int (*fn)(void *priv, uint32_t item, unsigned worker), void *priv)
{
	uint32_t stride = cx->opts->ag_stride;
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = stride ? stride * cx->parts : 0,
		.first_ag = 0, .ag_count = cx->fs->g.agcount * cx->parts,
	};
	int err;

	scan_progress_phase(cx, name, wo.ag_count);
	err = fs_ag_workq_run(&wo, fn, priv);
	scan_progress_end(cx);
	return err;
}

static size_t part_cut(const struct scan_ctx *cx, const struct model_ichunk *ic, size_t n,
		       uint32_t part)
{
	const struct fs_geom *g = &cx->fs->g;
	size_t k = (size_t)((uint64_t)n * part / cx->parts);

	/* with 64 KiB blocks one block holds two chunks: both go to one part */
	while (k > 0 && k < n &&
	       fs_agino_to_agbno(g, ic[k].startino) <=
	       fs_agino_to_agbno(g, ic[k - 1].startino + XFS_INODES_PER_CHUNK - 1))
		k++;
	return k;
}

void scan_item_chunks(const struct scan_ctx *cx, const struct model_ichunk *ic, size_t n,
		      uint32_t part, size_t *lo, size_t *hi)
{
	*lo = part_cut(cx, ic, n, part);
	*hi = part + 1 >= cx->parts ? n : part_cut(cx, ic, n, part + 1);
}

int scan_read_agblock(struct scan_ctx *cx, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_buf *b;
	int err;

	if (agno >= g->agcount || agbno >= fs_ag_blocks(g, agno))
		return -ERANGE;
	err = fs_cache_read(cx->cache, fs_agbno_to_daddr(g, agno, agbno), g->blocksize, &b);
	if (err)
		return err;
	memcpy(buf, b->data, g->blocksize);
	fs_buf_put(cx->cache, b);
	return 0;
}

int scan_read_fsblock(void *cx, fs_fsblock_t fsb, void *buf)
{
	const struct fs_geom *g = &((struct scan_ctx *)cx)->fs->g;

	if (!fs_fsb_valid(g, fsb))
		return -ERANGE;
	return scan_read_agblock(cx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb), buf);
}

int scan_load_map(struct scan_ctx *cx, const void *dip, const struct fs_inode *ip,
		   int whichfork, struct fs_findings *fl, struct fs_bmap *m)
{
	struct fs_bmap_ctx bc = {
		.g = &cx->fs->g, .fl = fl, .have_log_head = cx->fs->have_log_head,
		.head_lsn = cx->fs->log_head_lsn, .read_fsblock = scan_read_fsblock, .priv = cx,
		.rblocks = cx->fs->sb.sb_rblocks,
	};

	return fs_bmap_load(&bc, dip, ip, whichfork, m);
}

bool scan_inode_proves(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t agino,
		       const void *dip)
{
	const struct xfs_dinode *d = dip;

	/*
	 * a damaged magic does not disprove a v3 core that names itself and
	 * this filesystem (the verifier reports the magic; repair resets it)
	 */
	return get_be64((const unsigned char *)dip + offsetof(struct xfs_dinode, di_ino)) ==
	       fs_agino_to_ino(g, agno, agino) &&
	       (get_be16(dip) == XFS_DINODE_MAGIC ||
		(d->di_version == 3 && !memcmp(d->di_uuid, g->meta_uuid, sizeof(d->di_uuid))));
}

bool scan_inode_identified(const struct fs_geom *g, fs_ino_t ino, const void *dip)
{
	const struct xfs_dinode *d = dip;

	return be64(d->di_ino) == ino && !memcmp(&d->di_uuid, g->meta_uuid, sizeof(d->di_uuid));
}

bool scan_inode_mend_identity(const struct fs_geom *g, fs_ino_t ino, const void *dip,
			      unsigned char *out)
{
	struct xfs_dinode *d = (struct xfs_dinode *)out;
	bool crc_was_ok;

	if (!scan_inode_identified(g, ino, dip))
		return false;
	if (be16(((const struct xfs_dinode *)dip)->di_magic) == XFS_DINODE_MAGIC &&
	    ((const struct xfs_dinode *)dip)->di_version == 3)
		return false;
	crc_was_ok = fs_crc_ok(dip, g->inodesize, XFS_DINODE_CRC_OFF);
	memcpy(out, dip, g->inodesize);
	put_be16(&d->di_magic, XFS_DINODE_MAGIC);
	d->di_version = 3;
	/* a CRC that matched the damaged bytes was stamped over them: the damage is not its */
	if (crc_was_ok)
		fs_crc_update(out, g->inodesize, XFS_DINODE_CRC_OFF);
	return true;
}

struct fs_vctx scan_vctx(struct scan_ctx *cx, fs_ino_t ino, fs_fsblock_t fsb)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_vctx c = {
		.g = g, .fl = cx->fl, .agno = fs_fsb_to_agno(g, fsb),
		.daddr = fs_fsb_to_daddr(g, fsb), .have_log_head = cx->fs->have_log_head,
		.head_lsn = cx->fs->log_head_lsn, .ino = ino,
	};
	return c;
}

void scan_ra_account(struct scan_ctx *cx, const struct fs_ra_stats *st)
{
	pthread_mutex_lock(&cx->ra_lock);
	cx->ra.extents += st->extents;
	cx->ra.cached += st->cached;
	cx->ra.windows += st->windows;
	cx->ra.exact += st->exact;
	cx->ra.bytes_read += st->bytes_read;
	cx->ra.bytes_kept += st->bytes_kept;
	cx->ra.failed += st->failed;
	pthread_mutex_unlock(&cx->ra_lock);
}

/* The per-inode steps, in the order they run; the engine calls them through this table. */
static const struct scan_step *const steps[] = {
	&scan_step_forks, &scan_step_dirs, &scan_step_attrs, NULL,
};

const char *scan_tmpdir(const struct scan_opts *o)
{
	const char *t = getenv("TMPDIR");

	if (o && o->tmpdir)
		return o->tmpdir;
	return t && *t ? t : "/tmp";
}

/*
 * A worker's I/O buffers: what is in flight on each of its two queues (the
 * readahead's and the blocks phase's), SCAN_RA_INFLIGHT each.  Under -m
 * below WINDOW_FULL_MIB it is cut to 512 KiB a queue, so a worker's
 * buffers fit 1 MiB (windows of up to 512 KiB, or sixteen 32 KiB inode
 * clusters' reads); the windows are read from the device (O_DIRECT), and
 * with 32 KiB windows the aged 5M-inode image's inode scan took 8-10 s
 * against 4-6.
 */
#define WINDOW_FULL_MIB 64
/* no -m: a repair's dirty buffers in memory before the rest is staged (plan_memory) */
#define STAGE_SOFT_BYTES (32ull << 20)

static uint32_t inflight_for(uint64_t mem_bytes)
{
	if (mem_bytes && mem_bytes < ((uint64_t)WINDOW_FULL_MIB << 20))
		return 512u << 10;
	return SCAN_RA_INFLIGHT;
}

static void plan_window(struct scan_ctx *cx)
{
	cx->ra_inflight = inflight_for(cx->opts->mem_bytes);
}

static uint64_t io_bytes(uint32_t inflight)
{
	uint64_t b = 2ull * inflight;

	return b > (1u << 20) ? b : 1u << 20;
}

/*
 * What a run holds whatever the volume holds, for -m: the program, its
 * libraries and the superblocks' phase (measured: under 5 MiB resident at
 * the end of phase 1; 6 MiB), per-AG records (the model's, the work
 * queues', the repair's: 4 KiB an AG covers them), and per worker its I/O
 * queues and readahead buffers (io_bytes).
 */
static uint64_t fixed_for(const struct scan_ctx *cx, uint32_t inflight)
{
	return (6ull << 20) + (uint64_t)cx->fs->g.agcount * 4096 +
	       (uint64_t)cx->workers * io_bytes(inflight);
}

static uint64_t fixed_bytes(const struct scan_ctx *cx)
{
	return fixed_for(cx, cx->ra_inflight);
}

/*
 * The smallest -m that holds charged bytes beside the fixed part: the
 * fixed part as that cap would plan it (its bytes in flight).
 */
static uint64_t min_mib(const struct scan_ctx *cx, uint64_t charged)
{
	uint64_t m = fs_budget_min_mib(fixed_for(cx, inflight_for(1)), charged);

	if (m < WINDOW_FULL_MIB)
		return m;
	m = fs_budget_min_mib(fixed_for(cx, inflight_for(0)), charged);
	return m > WINDOW_FULL_MIB ? m : WINDOW_FULL_MIB;
}

/* A block device of the filesystem's whose mounted filesystem holds dir. */
static bool dir_on_device(const struct scan_ctx *cx, const char *dir)
{
	const struct fs_dev *devs[] = { cx->fs->dev, cx->fs->logdev, cx->fs->rtdev };
	struct stat ds, st;

	if (stat(dir, &ds))
		return false;
	for (unsigned i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (devs[i] && !fstat(devs[i]->fd, &st) && S_ISBLK(st.st_mode) &&
		    st.st_rdev == ds.st_dev)
			return true;
	return false;
}

/* What a directory's link records take, and the directories a slot count is charged for. */
#define LINK_DIR_BYTES (sizeof(struct link_dir) + 2 * sizeof(struct link_run))
#define LINK_SLOTS_PER_DIR 64
/*
 * Spilling the edges: the entries a worker buffers before writing a run
 * (1 MiB), and what the links phase holds to read them back (a run, the
 * candidates, their sort's copy) and merge them (64 runs' 16 KiB buffers
 * and a merge pass's 4 MiB output).
 */
#define EDGE_SPILL_BATCH ((size_t)1 << 17)
#define EDGE_MERGE_BYTES (5ull << 20)

/* The edges may spill: a spill is set up (-m, XFSX_TEST_SPILL) and the graph is not kept. */
static bool edges_may_spill(const struct scan_ctx *cx)
{
	return cx->spill && !cx->keep_graph;
}

static size_t edge_batch(const struct scan_ctx *cx)
{
	const char *test = getenv("XFSX_TEST_SPILL");

	return test && *test && cx->model->batch ? cx->model->batch : EDGE_SPILL_BATCH;
}

/* A directory's share: its record, its runs, and with the edges spilled the entry naming it. */
static uint64_t link_dir_bytes(bool spilled)
{
	return LINK_DIR_BYTES + (spilled ? sizeof(uint32_t) : 0);
}

/*
 * -m: the link records' charge for slots inode slots (phase_inodes): a
 * record a slot, the parent pointers' byte, a directory's share every
 * LINK_SLOTS_PER_DIR slots, and the edges: in memory 4 bytes an entry,
 * about one entry a slot; spilled, the buffers that write and read them.
 */
static uint64_t links_bytes(const struct scan_ctx *cx, uint64_t slots, bool spilled)
{
	uint64_t per = sizeof(struct link_rec) + (spilled ? 0 : sizeof(uint32_t)) +
		       (cx->fs->g.parent ? 1 : 0);
	uint64_t bufs = 0;

	if (spilled) {
		uint64_t k = cx->workers > 3 ? cx->workers : 3;

		bufs = k * edge_batch(cx) * sizeof(struct link_edge) + EDGE_MERGE_BYTES;
	}
	/* and the model's chunk index, allocated by the inobt phase (one record a chunk) */
	return slots * per + slots / LINK_SLOTS_PER_DIR * link_dir_bytes(spilled) + bufs +
	       slots / XFS_INODES_PER_CHUNK * sizeof(struct model_ichunk);
}

/*
 * The same before the inode btrees are read: the superblock's inode count
 * (no more than the volume could hold), in whole chunks, one part-used
 * chunk an AG.
 */
static uint64_t links_estimate(const struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	uint64_t n = cx->fs->sb.sb_icount, most = (uint64_t)g->dblocks << g->inopblog;

	if (n > most)
		n = most;
	n = (n + XFS_INODES_PER_CHUNK - 1) / XFS_INODES_PER_CHUNK * XFS_INODES_PER_CHUNK;
	n += (uint64_t)g->agcount * XFS_INODES_PER_CHUNK;
	/* the edges in memory or spilled (when they may), whichever takes less */
	if (!cx->keep_graph && links_bytes(cx, n, true) < links_bytes(cx, n, false))
		return links_bytes(cx, n, true);
	return links_bytes(cx, n, false);
}

/*
 * -m as a budget, and the model's spill to the temporary directory when
 * -m is given (or XFSX_TEST_SPILL=N: every array of N extents or more
 * spills, the test switch of tests/core/spill.sh), with the cache's
 * staging file for a repair's dirty buffers.  -ERANGE: -m below the
 * smallest that works (cx->mem_min_mib); a temporary directory that is
 * not one, or on the filesystem's own device: cx->spill_failed set.
 */
static int plan_memory(struct scan_ctx *cx, uint64_t *cache)
{
	const char *test = getenv("XFSX_TEST_SPILL"), *dir = scan_tmpdir(cx->opts);
	const char *stage = getenv("XFSX_TEST_STAGE");
	bool spill = cx->opts->mem_bytes || (test && *test);
	size_t limit, batch = 4096;
	int err;

	if (cx->opts->mem_bytes) {
		err = fs_budget_plan(&cx->budget, cx->opts->mem_bytes, fixed_bytes(cx),
				     &cx->mem_min_mib);
		/* too small already: the smallest named holds the link records too (as estimated) */
		if (err == -ERANGE)
			cx->mem_min_mib = min_mib(cx, links_estimate(cx));
		if (err)
			return err;
		*cache = cx->budget.cache;
	}
	if (!spill && !dir_on_device(cx, dir))
		cx->rmap_soft_dir = dir;
	if (!spill && !(stage && *stage)) {
		/*
		 * No -m: a repair's dirty buffers past STAGE_SOFT_BYTES wait in
		 * the temporary directory when there is one (the file is made at
		 * the first; one that cannot be made or written keeps them in
		 * memory), so the plan of a big volume is not held twice over
		 * while its result is scanned.
		 */
		if (cx->rmap_soft_dir && !fs_spill_open(dir, 1, &cx->stage)) {
			cx->stage_over = STAGE_SOFT_BYTES;
			cx->stage_soft = true;
		}
		return 0;
	}
	limit = (size_t)cx->budget.model;
	if (test && *test) {
		long b = strtol(test, NULL, 10);

		cx->spill_forced = true;
		limit = 0;
		batch = b > 0 ? (size_t)b : 16;
	}
	cx->spill_failed = dir;
	if (dir_on_device(cx, dir))
		return -EXDEV;
	if (spill) {
		err = fs_spill_open(dir, sizeof(struct model_ext), &cx->spill);
		if (err)
			return err;
	}
	/*
	 * A repair's dirty buffers past the cache's cap are staged there too
	 * (XFSX_TEST_STAGE=N, alone or with -m: past N KiB whatever the cap;
	 * XFSX_TEST_SPILL=N: past N KiB as well).
	 */
	cx->stage_over = stage && *stage ? strtoull(stage, NULL, 10) << 10 :
			 test && *test ? (uint64_t)batch << 10 : 0;
	err = fs_spill_open(dir, 1, &cx->stage);
	if (err)
		return err;
	cx->spill_failed = NULL;
	if (spill)
		model_set_spill(cx->model, cx->spill, limit, batch);
	return 0;
}

void scan_release_for_verify(struct scan_ctx *cx)
{
	model_drop_extents(cx->model);
	if (cx->opts->mem_bytes && cx->stage && cx->cache)
		fs_cache_set_cap(cx->cache, FS_BUDGET_CACHE_FLOOR);
}

int scan_strerror(const struct scan_ctx *cx, int err, char *buf, size_t len)
{
	if (err == -ERANGE && cx->mem_min_mib)
		return snprintf(buf, len, "-m %" PRIu64 " is too small for this filesystem (%u AGs, "
				"%u workers): the smallest that works is -m %" PRIu64,
				cx->opts->mem_bytes >> 20, cx->fs->g.agcount, cx->workers,
				cx->mem_min_mib);
	if (err == -EXDEV && cx->spill_failed)
		return snprintf(buf, len, "temporary directory %s is on the filesystem's own "
				"device: give --tmpdir elsewhere", cx->spill_failed);
	if (cx->spill_failed)
		return snprintf(buf, len, "temporary directory %s: %s", cx->spill_failed,
				strerror(-err));
	return snprintf(buf, len, "%s", strerror(-err));
}

static int engine_start(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ag_workq_opts wo = {
		.threads = cx->opts->threads, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	int err;

	pthread_mutex_init(&cx->ra_lock, NULL);
	pthread_mutex_init(&cx->rmap_lock, NULL);
	pthread_cond_init(&cx->rmap_cv, NULL);
	pthread_mutex_init(&cx->rt.lock, NULL);
	uint64_t cache = cx->opts->cache_bytes ? cx->opts->cache_bytes : default_cache_bytes();

	cx->steps = steps;
	cx->workers = fs_ag_workq_threads(&wo);
	plan_window(cx);
	err = model_create(g, &cx->model);
	if (!err)
		err = plan_memory(cx, &cache);
	if (err)
		return err;
	err = fs_cache_create(cx->fs->dev, cache, &cx->cache);
	if (err)
		return err;
	if (cx->stage)
		fs_cache_set_stage(cx->cache, cx->stage, cx->stage_over);
	if (cx->stage_soft)
		fs_cache_stage_soft(cx->cache);
	/*
	 * Phases 4 and 5 run in parts of AGs: about 32 work items per worker,
	 * so one AG heavy with xattrs or directories is shared, and the last
	 * item is too small to leave the other workers idle long (with eight
	 * per worker, one xattr-heavy item kept one of two workers alone for
	 * 80-140 ms of a 0.7 s check on the aged benchmark image).
	 */
	cx->parts = 1;
	if (cx->workers > 1 && g->agcount < 32 * cx->workers)
		cx->parts = (32 * cx->workers + g->agcount - 1) / g->agcount;
	cx->deferq = calloc((size_t)g->agcount * cx->parts, sizeof(*cx->deferq));
	cx->deferw = calloc(cx->workers ? cx->workers : 1, sizeof(*cx->deferw));
	cx->chunks_known = calloc(g->agcount, sizeof(*cx->chunks_known));
	cx->rmap_whole = calloc(g->agcount, sizeof(*cx->rmap_whole));
	cx->rmap_inodes = calloc(g->agcount, sizeof(*cx->rmap_inodes));
	if (!cx->deferq || !cx->deferw || !cx->chunks_known || !cx->rmap_whole || !cx->rmap_inodes)
		return -ENOMEM;
	cx->ioq = calloc(cx->workers, sizeof(*cx->ioq));
	cx->ioq_aux = calloc(cx->workers, sizeof(*cx->ioq_aux));
	if (!cx->ioq || !cx->ioq_aux)
		return -ENOMEM;
	err = scan_batch_mem_create(cx);
	if (err)
		return err;
	for (unsigned i = 0; i < cx->workers; i++) {
		err = fs_ioq_create(cx->fs->dev, &cx->ioq[i]);
		if (!err)
			err = fs_ioq_create(cx->fs->dev, &cx->ioq_aux[i]);
		if (err)
			return err;
	}
	return 0;
}

void scan_teardown(struct scan_ctx *cx)
{
	for (unsigned i = 0; i < cx->workers; i++) {
		if (cx->ioq)
			fs_ioq_destroy(cx->ioq[i]);
		if (cx->ioq_aux)
			fs_ioq_destroy(cx->ioq_aux[i]);
	}
	free(cx->ioq);
	free(cx->ioq_aux);
	scan_batch_mem_free(cx);
	cx->ioq = NULL;
	cx->ioq_aux = NULL;
	fs_cache_destroy(cx->cache);
	cx->cache = NULL;
	scan_pptrs_destroy(cx);
	scan_links_destroy(cx);
	if (cx->deferq)
		for (size_t a = 0; a < (size_t)cx->fs->g.agcount * cx->parts; a++) {
			free(cx->deferq[a].v);
			free(cx->deferq[a].dips);
		}
	free(cx->deferq);
	if (cx->deferw)
		scan_defer_release(cx);
	free(cx->deferw);
	cx->deferw = NULL;
	free(cx->chunks_known);
	cx->chunks_known = NULL;
	free(cx->rmap_whole);
	cx->rmap_whole = NULL;
	cx->deferq = NULL;
	if (cx->rmap_inodes)
		for (fs_agnumber_t a = 0; a < cx->fs->g.agcount; a++)
			free(cx->rmap_inodes[a].v);
	free(cx->rmap_inodes);
	cx->rmap_inodes = NULL;
	model_destroy(cx->model);
	cx->model = NULL;
	fs_spill_close(cx->spill);
	cx->spill = NULL;
	fs_spill_close(cx->stage);	/* after the cache, whose staged buffers it held */
	cx->stage = NULL;
	scan_progress_free(cx);
	scan_rt_free(cx);
	pthread_mutex_destroy(&cx->rt.lock);
	pthread_mutex_destroy(&cx->ra_lock);
	pthread_mutex_destroy(&cx->rmap_lock);
	pthread_cond_destroy(&cx->rmap_cv);
}

const char *scan_phase_name(enum scan_phase ph)
{
	static const char *const names[SCAN_PH_NR] = {
		[SCAN_PH_HEADERS] = "headers", [SCAN_PH_FREESP] = "freesp",
		[SCAN_PH_INOBT] = "inobt", [SCAN_PH_INODES] = "inodes", [SCAN_PH_BLOCKS] = "blocks",
		[SCAN_PH_LINKS] = "links", [SCAN_PH_UNLINKED] = "unlinked",
		[SCAN_PH_OWNERS] = "owners",
	};

	return (unsigned)ph < SCAN_PH_NR ? names[ph] : "unknown";
}

/* Phase 1 draws its own progress line; the others set theirs up inside. */
static int phase_headers(struct scan_ctx *cx)
{
	int err;

	scan_progress_phase(cx, "AG headers", cx->fs->g.agcount);
	err = scan_phase_headers(cx);
	scan_progress_end(cx);
	return err;
}

/* Whether bytes more fit the budget (what fs_budget_need would say, the budget unchanged). */
static bool budget_holds(const struct fs_budget *b, uint64_t bytes)
{
	struct fs_budget t = *b;

	return !fs_budget_charge(&t, bytes);
}

/*
 * The edges spill when they may and -m cannot hold them in memory while
 * their spill takes less (or XFSX_TEST_SPILL says so): a spill of their
 * own in the temporary directory, handed to the links.
 */
static int plan_edges(struct scan_ctx *cx, bool *spilled)
{
	const char *test = getenv("XFSX_TEST_SPILL");
	uint64_t slots = cx->links->nslots;
	struct fs_spill *sp;
	int err;

	*spilled = false;
	if (!edges_may_spill(cx))
		return 0;
	if (!(test && *test) &&
	    (!cx->opts->mem_bytes || budget_holds(&cx->budget, links_bytes(cx, slots, false)) ||
	     links_bytes(cx, slots, true) >= links_bytes(cx, slots, false)))
		return 0;
	err = fs_spill_open(fs_spill_dir(cx->spill), sizeof(struct link_edge), &sp);
	if (err) {
		cx->spill_failed = fs_spill_dir(cx->spill);
		return err;
	}
	err = scan_links_set_spill(cx->links, sp, edge_batch(cx));
	*spilled = !err;
	return err;
}

/* The link records are sized from the chunks phase 3 found, before the scan fills them. */
/*
 * -m: a charge the cap holds only with the small I/O windows (its fixed
 * part cut by them) gets them, so every cap from the smallest named up
 * works: a 5M-inode image named -m 58 (small windows) and refused -m 64
 * (full ones: 16 MiB more in flight).
 */
static void fit_window(struct scan_ctx *cx, uint64_t charge)
{
	uint32_t small = inflight_for(1);
	uint64_t charged = cx->budget.fixed - cx->budget.planned_fixed + charge;
	uint64_t full_fixed = fixed_for(cx, cx->ra_inflight), small_fixed = fixed_for(cx, small);

	if (cx->ra_inflight <= small || full_fixed <= small_fixed ||
	    (fs_budget_min_mib(full_fixed, charged) << 20) <= cx->opts->mem_bytes ||
	    (fs_budget_min_mib(small_fixed, charged) << 20) > cx->opts->mem_bytes)
		return;
	cx->ra_inflight = small;
	fs_budget_release(&cx->budget, full_fixed - small_fixed);
}

static int phase_inodes(struct scan_ctx *cx)
{
	int err = scan_links_create(cx);
	bool spilled = false;

	if (!err)
		err = scan_pptrs_create(cx);
	if (!err && cx->links)
		err = plan_edges(cx, &spilled);
	/*
	 * -m: the link records do not spill; their bytes come out of the
	 * model's share, then the cache's (links_bytes), with the edges
	 * the directory phase will add, or their spill's buffers.  A cap
	 * that cannot hold them is refused here, before any inode is read,
	 * with the smallest that can.
	 */
	if (!err && cx->opts->mem_bytes && cx->links) {
		fit_window(cx, links_bytes(cx, cx->links->nslots, spilled));
		err = fs_budget_need(&cx->budget, links_bytes(cx, cx->links->nslots, spilled),
				     &cx->mem_min_mib);
		if (err == -ERANGE)
			cx->mem_min_mib = min_mib(cx, cx->budget.fixed - cx->budget.planned_fixed);
		model_set_spill(cx->model, cx->spill, (size_t)cx->budget.model, cx->model->batch);
		if (!err && cx->budget.cache < fs_cache_cap(cx->cache))
			fs_cache_set_cap(cx->cache, cx->budget.cache);
	}
	if (!err)
		err = scan_phase_inodes(cx);
	/* the directories' own records, for the directory walks of phase 5 */
	if (!err && cx->links)
		err = scan_links_index_dirs(cx->links);
	/*
	 * and theirs (the record, a run of edges and its copy in the joined
	 * graph, the entry naming it when the edges spill) past what was
	 * charged for them: one directory in 64 slots
	 */
	if (!err && cx->opts->mem_bytes && cx->links &&
	    cx->links->ndir > cx->links->nslots / LINK_SLOTS_PER_DIR) {
		err = fs_budget_need(&cx->budget, (cx->links->ndir -
						   cx->links->nslots / LINK_SLOTS_PER_DIR) *
				     link_dir_bytes(spilled), &cx->mem_min_mib);
		if (err == -ERANGE)
			cx->mem_min_mib = min_mib(cx, cx->budget.fixed - cx->budget.planned_fixed);
		model_set_spill(cx->model, cx->spill, (size_t)cx->budget.model, cx->model->batch);
		if (!err && cx->budget.cache < fs_cache_cap(cx->cache))
			fs_cache_set_cap(cx->cache, cx->budget.cache);
	}
	return err;
}

/* The directory graph's rules, then the parent pointers against it. */
static int phase_links(struct scan_ctx *cx)
{
	int err = scan_phase_links(cx);

	return err ? err : scan_pptr_check(cx);
}

void scan_mem_sample(const struct scan_ctx *cx, struct fs_mem_sample *s, uint64_t *spill_mark)
{
	struct fs_cache_stats cs = { 0 };

	if (cx->cache)
		fs_cache_get_stats(cx->cache, &cs);
	fs_mem_sample(s, cs.bytes);
	if (cx->spill || cx->stage) {
		/* the model's runs, the cache's staged dirty buffers, the edges' runs */
		uint64_t runs = (cx->spill ? fs_spill_runs(cx->spill) : 0) +
				(cx->stage ? fs_spill_runs(cx->stage) : 0) +
				(cx->links && cx->links->spill ? fs_spill_runs(cx->links->spill) : 0);

		s->spilled = runs != *spill_mark;
		*spill_mark = runs;
	}
}

int scan_spill_error(const struct scan_ctx *cx)
{
	int err = cx->model ? model_error(cx->model) : 0;

	if (err)
		((struct scan_ctx *)cx)->spill_failed = fs_spill_dir(cx->spill);
	/* the directory edges' (a directory walk's write that failed) */
	if (!err && cx->links && cx->links->spill) {
		err = fs_spill_error(cx->links->spill);
		if (err)
			((struct scan_ctx *)cx)->spill_failed = fs_spill_dir(cx->links->spill);
	}
	/* a repair's dirty buffers that could not be staged (or read back) */
	if (!err && cx->stage && cx->cache) {
		err = fs_cache_stage_error(cx->cache);
		if (err)
			((struct scan_ctx *)cx)->spill_failed = fs_spill_dir(cx->stage);
	}
	return err;
}

int scan_run(struct scan_ctx *cx)
{
	static int (*const run[SCAN_PH_NR])(struct scan_ctx *) = {
		[SCAN_PH_HEADERS] = phase_headers, [SCAN_PH_FREESP] = scan_phase_freesp,
		[SCAN_PH_INOBT] = scan_phase_inobt, [SCAN_PH_INODES] = phase_inodes,
		[SCAN_PH_BLOCKS] = scan_phase_blocks, [SCAN_PH_LINKS] = phase_links,
		[SCAN_PH_UNLINKED] = scan_phase_unlinked, [SCAN_PH_OWNERS] = scan_phase_owners,
	};
	struct fs *fs = cx->fs;
	uint64_t spill_mark = 0;
	int err;

	/* first: a dirty log means what follows may be stale, not corrupt (unless replayed) */
	if (fs->log_foreign)
		fs_report(cx->fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, "log",
			  "this filesystem's", "another filesystem's",
			  "the log device holds another filesystem's log (its records carry "
			  "another UUID): nothing in it is this filesystem's to replay");
	else if (fs->have_log_head && !fs->log_clean && !fs->log_replayed && cx->opts &&
		 cx->opts->log_zeroed)
		fs_report(cx->fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, "log", "clean", "dirty",
			  "the log is dirty (head at cycle %u block %u): zeroed (-L), its last "
			  "transactions discarded",
			  fs_lsn_cycle(fs->log_head_lsn), fs_lsn_block(fs->log_head_lsn));
	else if (fs->have_log_head && !fs->log_clean && !fs->log_replayed)
		fs_report(cx->fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, "log", "clean", "dirty",
			  "the log is dirty (head at cycle %u block %u): mount the filesystem to "
			  "replay it; findings below may be spurious",
			  fs_lsn_cycle(fs->log_head_lsn), fs_lsn_block(fs->log_head_lsn));
	err = engine_start(cx);
	if (err)
		return err;
	for (unsigned ph = 0; ph < SCAN_PH_NR; ph++) {
		double t0 = fs_monotonic_seconds(), c0 = fs_process_cpu_seconds();

		err = run[ph](cx);
		/* the cache's empty chunks kept for the phase's batches go back */
		if (cx->cache)
			fs_cache_trim(cx->cache);
		cx->phase_seconds[ph] = fs_monotonic_seconds() - t0;
		cx->phase_cpu[ph] = fs_process_cpu_seconds() - c0;
		scan_mem_sample(cx, &cx->phase_mem[ph], &spill_mark);
		if (!err)
			err = scan_spill_error(cx);
		if (err)
			return err;
		if (ph == SCAN_PH_HEADERS)
			scan_estimate_memory(cx, cx->opts->cache_bytes ? cx->opts->cache_bytes :
					     default_cache_bytes());
	}
	/*
	 * -m: what the model still needs is known now (one AG per worker when
	 * spilled); the cache, which holds a repair's dirty buffers, gets
	 * the rest.
	 */
	if (cx->opts->mem_bytes) {
		uint64_t need = cx->budget.fixed + model_resident_need(cx->model, cx->workers);

		if (cx->opts->mem_bytes > need && cx->opts->mem_bytes - need > cx->budget.cache)
			fs_cache_set_cap(cx->cache, cx->opts->mem_bytes - need);
	}
	return 0;
}

void scan_print_fs_json(const struct fs *fs, const char *path, FILE *out)
{
	char u[37];

	uuid_unparse_lower((const unsigned char *)&fs->sb.sb_uuid, u);
	fputs("\"filesystem\":{\"device\":", out);
	fs_json_string(out, path);
	fprintf(out, ",\"uuid\":\"%s\",\"blocksize\":%u,\"dblocks\":%" PRIu64 ",\"agcount\":%u,"
		"\"agblocks\":%u,\"inodesize\":%u,\"sb_source_ag\":%u,\"io_engine\":\"%s\","
		"\"direct_io\":%s,\"log\":\"%s\",\"mounted\":\"%s\"",
		u, fs->g.blocksize, fs->g.dblocks, fs->g.agcount, fs->g.agblocks, fs->g.inodesize,
		fs->sb_source, fs_io_engine_name(fs->dev->engine), fs->dev->direct ? "true" : "false",
		!fs->have_log_head ? "unknown" : fs->log_clean ? "clean" : "dirty",
		fs->target.mounted ? "read-only" : "no");
	/* the other devices: where the log was read, whether rt extents met their device */
	fputs(",\"logdev\":", out);
	if (fs_log_extdev(fs))
		fs_json_string(out, fs->logdev->path);
	else
		fputs(fs->g.log_internal ? "\"internal\"" : "null", out);
	fputs(",\"rtdev\":", out);
	if (fs->rtdev)
		fs_json_string(out, fs->rtdev->path);
	else
		fputs("null", out);
	fprintf(out, ",\"rt_extents_checked_against_device\":%s}",
		!fs->g.rblocks ? "null" : fs->rtdev ? "true" : "false");
}
