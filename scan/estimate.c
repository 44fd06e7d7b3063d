// SPDX-License-Identifier: GPL-2.0
/*
 * The memory a full run needs, estimated from the AG headers alone (after
 * the headers phase, before anything else is scanned): the inodes each AGI
 * counts, the btree blocks each AGF and AGI count, the number of AGs and
 * the cache cap, times the costs measured per inode, per AG and per cached
 * block (scripts/bench-scale, the many-AG image of tests/core/many_ags.sh).
 * xfsx_check and xfsx_repair -n print it (-v) and put it in --json
 * ("memory_estimate_bytes"); tests/core/memory_estimate.sh holds it within
 * a factor of two of the measured peak.
 */
#include <inttypes.h>
#include <stdio.h>

#include "scan/scan.h"
#include "libfs/format/ag.h"
#include "libfs/util/mem.h"

/*
 * The measured costs (release build, scripts/bench-scale and the images of
 * tests/core/memory_estimate.sh): the peak grows about 12-20 bytes per
 * in-use inode from 1M to 20M inodes for a check (link records, edges,
 * the model's chunks) and 18-32 for a repair, on top of I/O buffers that
 * fill up to the readahead's bytes in flight (two queues a worker) over
 * the first few hundred thousand inodes: 100k inodes peak at 11 MiB.
 * (80 and 120 bytes an inode, from before the compact link records and
 * the in-flight cap, came to 4-5x the peak at 5M and 20M inodes.)
 */
#define EST_BASE_BYTES     (3ull << 20)  /* the program, its threads, I/O queues */
#define EST_INODE_CHECK    16ull
#define EST_INODE_REPAIR   24ull
#define EST_INODE_IO       64ull         /* I/O buffers an inode, up to ... */
#define EST_QUEUES         2ull          /* ... the bytes in flight on each worker's queues
					  * (without -m: the estimate is that of a full run) */
/*
 * per AG: the model's per-AG structures and the three header sectors kept
 * cached (10,000 AGs of one-block trees: 59 MiB with 16 MiB of kept blocks)
 */
#define EST_AG_BYTES       (4ull << 10)
/*
 * btree blocks leave the cache once walked, but for those the owners
 * phase walks again, which stay up to a sixteenth of the cap
 * (scan_keep_cached); a cached block costs its size (libfs/io/slab.h)
 */
#define EST_KEPT_SHARE     16ull

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void scan_estimate_memory(struct scan_ctx *cx, uint64_t cache_cap)
{
	const struct fs_geom *g = &cx->fs->g;
	uint64_t inodes = 0, btree_blocks = 0;

	for (fs_agnumber_t agno = 0; agno < g->agcount; agno++) {
		struct fs_buf *b;
		struct fs_agf agf;
		struct fs_agi agi;

		if (!fs_cache_read(cx->cache, fs_ag_agi_offset(g, agno) >> FS_BBSHIFT,
				   g->sectsize, &b)) {
			fs_agi_decode(b->data, &agi);
			fs_buf_put(cx->cache, b);
			/* hostile headers: counts no larger than the AG could hold */
			if (agi.magic == XFS_AGI_MAGIC) {
				inodes += min_u64(agi.count, (uint64_t)g->agblocks << g->inopblog);
				btree_blocks += min_u64((uint64_t)agi.iblocks + agi.fblocks, g->agblocks);
			}
		}
		if (!fs_cache_read(cx->cache, fs_ag_agf_offset(g, agno) >> FS_BBSHIFT,
				   g->sectsize, &b)) {
			fs_agf_decode(b->data, &agf);
			fs_buf_put(cx->cache, b);
			/* btreeblks: bno, cnt (and rmap) blocks past the roots */
			if (agf.magic == XFS_AGF_MAGIC)
				btree_blocks += min_u64((uint64_t)agf.btreeblks + 4 + agf.refc_blocks,
							g->agblocks);
		}
	}
	cx->est_inodes = inodes;
	cx->est_fixed = EST_BASE_BYTES + EST_AG_BYTES * g->agcount +
		min_u64(cache_cap / EST_KEPT_SHARE, btree_blocks * g->blocksize);
	cx->est_io = min_u64(EST_INODE_IO * inodes, EST_QUEUES * cx->workers * SCAN_RA_INFLIGHT);
	cx->mem_estimate = cx->est_fixed + cx->est_io + EST_INODE_CHECK * inodes;
}

/*
 * A repair that writes scans its result again (the verify step) while the
 * first scan's cache and model are still held: the fixed part twice.
 */
uint64_t scan_memory_estimate_repair(const struct scan_ctx *cx, bool writes)
{
	return (writes ? 2 : 1) * cx->est_fixed + cx->est_io + EST_INODE_REPAIR * cx->est_inodes;
}

void scan_print_estimate(const struct scan_ctx *cx, uint64_t estimate, const char *what, FILE *out)
{
	fprintf(out, "memory: a full %s needs about %" PRIu64 " MiB (estimated from the AG headers: "
		"%" PRIu64 " inodes in %u AGs); this run peaked at %" PRIu64 " MiB\n", what,
		(estimate + (1 << 19)) >> 20, cx->est_inodes, cx->fs->g.agcount,
		(fs_mem_peak_rss() + (1 << 19)) >> 20);
}
