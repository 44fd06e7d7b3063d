// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the btree bulk loader (libfs/build/bload.c): for every tree
 * type, block size and slack, record sets of the sizes where shapes
 * change (none, one, exactly one full leaf, one more, a few leaves,
 * thousands) are built and walked back by libfs's own walkers with no
 * findings and the same records (bload_rt.c); the geometry predicts what
 * is built; bad inputs are refused; and a tree built into dirty cache
 * buffers survives fs_cache_flush and walks back from the device.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfs/build/bload.h"
#include "libfs/format/btree_ag.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "tests/libfs/bload_rt.h"

static void roundtrip_sizes(uint32_t blocksize, const struct fs_bload_slack *slack)
{
	struct fs_geom g;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ blocksize ^ (uint64_t)(slack ? slack->leaf : 99);

	assert_int_equal(rt_geom(blocksize, &g), 0);
	for (int t = 0; t < RT_NR; t++) {
		const struct fs_btree_ops *ops = rt_ops(t);
		uint64_t leaf = fs_btree_maxrecs(ops, blocksize, true);
		uint64_t fork = (g.inodesize - sizeof(struct xfs_dinode)) / ops->rec_len;
		uint64_t sizes[] = { 0, 1, 2, leaf, leaf + 1, 2 * leaf + 3, 7 * leaf, 3000,
				     fork, fork + 1 };
		uint32_t max_levels = 0;

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint64_t n = sizes[i];
			unsigned char *recs = rt_records(&g, t, &n, &rng);
			struct rt_result res;
			struct fs_bload_geom pre;

			assert_non_null(recs);
			assert_int_equal(fs_bload_compute_geometry(ops, blocksize, n, slack,
					 ops->long_format ? g.inodesize - sizeof(struct xfs_dinode) : 0,
					 &pre), 0);
			if (rt_roundtrip(&g, t, recs, n, slack, &res))
				fail_msg("%s, %u-byte blocks, %llu records: %s", rt_name(t), blocksize,
					 (unsigned long long)n, res.why);
			/* the geometry computed alone is what was built */
			assert_int_equal(pre.nblocks, res.blocks);
			assert_int_equal(pre.nlevels, res.nlevels);
			if (ops->long_format)
				assert_int_equal(res.fork_format, n <= fork ? XFS_DINODE_FMT_EXTENTS :
								 XFS_DINODE_FMT_BTREE);
			else
				assert_true(res.nlevels >= 1);
			if (res.nlevels > max_levels)
				max_levels = res.nlevels;
			free(recs);
		}
		/* thousands of records in small blocks: a tree of three levels or more */
		if (blocksize == 1024 && (t == RT_RMAP || t == RT_BMBT))
			assert_true(max_levels >= 3);
		else
			assert_true(max_levels >= 2);
	}
}

static void test_roundtrip_4k_default(void **state)
{
	(void)state;
	roundtrip_sizes(4096, NULL);
}

static void test_roundtrip_1k_default(void **state)
{
	(void)state;
	roundtrip_sizes(1024, NULL);
}

static void test_roundtrip_packed(void **state)
{
	struct fs_bload_slack full = { 0, 0 };

	(void)state;
	roundtrip_sizes(1024, &full);
	roundtrip_sizes(4096, &full);
}

static void test_roundtrip_custom_slack(void **state)
{
	struct fs_bload_slack s = { 3, 1 };

	(void)state;
	roundtrip_sizes(1024, &s);
	roundtrip_sizes(2048, &s);
}

/* Random sizes and seeds: whatever comes, it walks back. */
static void test_roundtrip_random(void **state)
{
	uint64_t rng = 42;

	(void)state;
	for (int i = 0; i < 60; i++) {
		uint32_t bs = 512u << (rt_rand(&rng) % 4);
		enum rt_tree t = (enum rt_tree)(rt_rand(&rng) % RT_NR);
		struct fs_bload_slack s = { (int)(rt_rand(&rng) % 40) - 5, (int)(rt_rand(&rng) % 20) - 5 };
		uint64_t n = rt_rand(&rng) % 2500;
		struct fs_geom g;
		unsigned char *recs;
		struct rt_result res;

		assert_int_equal(rt_geom(bs, &g), 0);
		recs = rt_records(&g, t, &n, &rng);
		assert_non_null(recs);
		if (rt_roundtrip(&g, t, recs, n, &s, &res))
			fail_msg("%s, %u-byte blocks, %llu records, slack %d/%d: %s", rt_name(t), bs,
				 (unsigned long long)n, s.leaf, s.node, res.why);
		free(recs);
	}
}

/* Geometry alone: exact counts for the classic shapes, slack, fork rules. */
static void test_geometry(void **state)
{
	const struct fs_btree_ops *bno = fs_btree_ag_ops(FS_BTREE_AG_BNO);
	const struct fs_btree_ops *bmbt = fs_btree_ops_get(FS_BTREE_BMBT);
	struct fs_bload_slack full = { 0, 0 };
	struct fs_bload_geom gm;
	uint32_t leaf = fs_btree_maxrecs(bno, 4096, true);      /* (4096 - 56) / 8 = 505 */
	uint32_t node = fs_btree_maxrecs(bno, 4096, false);

	(void)state;
	assert_int_equal(leaf, 505);
	assert_int_equal(fs_bload_compute_geometry(bno, 4096, 0, NULL, 0, &gm), 0);
	assert_int_equal(gm.nlevels, 1);
	assert_int_equal(gm.nblocks, 1);
	/* packed: one full leaf is one block; one more record makes two leaves and a root */
	assert_int_equal(fs_bload_compute_geometry(bno, 4096, leaf, &full, 0, &gm), 0);
	assert_int_equal(gm.nlevels, 1);
	assert_int_equal(gm.nblocks, 1);
	assert_int_equal(fs_bload_compute_geometry(bno, 4096, leaf + 1, &full, 0, &gm), 0);
	assert_int_equal(gm.nlevels, 2);
	assert_int_equal(gm.level_blocks[0], 2);
	assert_int_equal(gm.nblocks, 3);
	/* default slack: about 3/4 full */
	assert_int_equal(fs_bload_compute_geometry(bno, 4096, 100000, NULL, 0, &gm), 0);
	assert_int_equal(gm.leaf_fill, leaf - (leaf - (leaf + leaf / 2) / 2));
	assert_int_equal(gm.level_blocks[0], (100000 + gm.leaf_fill - 1) / gm.leaf_fill);
	assert_int_equal(gm.nlevels, 2);
	assert_true(gm.level_blocks[0] <= node);
	/* slack asked beyond half is clamped: blocks stay at least half full */
	{
		struct fs_bload_slack huge = { 100000, 100000 };

		assert_int_equal(fs_bload_compute_geometry(bno, 4096, 100000, &huge, 0, &gm), 0);
		assert_int_equal(gm.leaf_fill, leaf / 2);
	}
	/* bmbt: up to fork/16 records stay in the fork as extents; one more needs a leaf */
	assert_int_equal(fs_bload_compute_geometry(bmbt, 4096, 21, NULL, 336, &gm), 0);
	assert_true(gm.fork_extents);
	assert_int_equal(gm.nblocks, 0);
	assert_int_equal(fs_bload_compute_geometry(bmbt, 4096, 22, NULL, 336, &gm), 0);
	assert_false(gm.fork_extents);
	assert_true(gm.root_in_fork);
	assert_int_equal(gm.nlevels, 2);
	assert_int_equal(gm.nblocks, 1);
	assert_int_equal(gm.root_entries, 1);
	/* a fork too small for any root, a block too small for two records */
	assert_int_equal(fs_bload_compute_geometry(bmbt, 4096, 100, NULL, 16, &gm), -EINVAL);
	assert_int_equal(fs_bload_compute_geometry(bno, 64, 10, NULL, 0, &gm), -EINVAL);
	assert_int_equal(fs_bload_compute_geometry(NULL, 4096, 10, NULL, 0, &gm), -EINVAL);
}

/* ---- refusals ---- */

struct mem {
	uint64_t next;
	int fail_after;
	unsigned writes;
};

static int mem_alloc(void *priv, uint64_t *ptr)
{
	struct mem *m = priv;

	if (m->fail_after >= 0 && m->next - 100 >= (uint64_t)m->fail_after)
		return -ENOSPC;
	*ptr = m->next++;
	return 0;
}

static int mem_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct mem *m = priv;

	(void)ptr;
	(void)level;
	(void)block;
	m->writes++;
	return 0;
}

static uint32_t one_level(const struct fs_geom *g)
{
	(void)g;
	return 1;
}

static void test_refusals(void **state)
{
	struct fs_geom g;
	const struct fs_btree_ops *bno = fs_btree_ag_ops(FS_BTREE_AG_BNO);
	struct fs_btree_ops short_tree;
	unsigned char recs[2000 * 8];
	struct mem m = { .next = 100, .fail_after = -1 };
	struct fs_bload b = {
		.ops = bno, .agno = RT_AGNO, .slack = { -1, -1 }, .recs = recs,
		.alloc_block = mem_alloc, .write_block = mem_write, .priv = &m,
	};

	(void)state;
	assert_int_equal(rt_geom(4096, &g), 0);
	b.g = &g;
	for (uint32_t i = 0; i < 2000; i++)
		fs_enc_alloc_rec(recs + 8 * i, 100 + 3 * i, 2);

	/* records out of order: refused, the culprit named */
	b.nrecs = 2000;
	fs_enc_alloc_rec(recs + 8 * 1500, 100, 2);
	assert_int_equal(fs_bload_build(&b), -EINVAL);
	assert_int_equal(b.bad_rec, 1500);
	fs_enc_alloc_rec(recs + 8 * 1500, 100 + 3 * 1500, 2);
	/* a record the type's own rules reject (zero length) */
	fs_enc_alloc_rec(recs + 8 * 7, 100 + 3 * 7, 0);
	m = (struct mem){ .next = 100, .fail_after = -1 };
	assert_int_equal(fs_bload_build(&b), -EINVAL);
	assert_int_equal(b.bad_rec, 7);
	fs_enc_alloc_rec(recs + 8 * 7, 100 + 3 * 7, 2);
	/* the allocator running dry stops the build with its error */
	m = (struct mem){ .next = 100, .fail_after = 2 };
	assert_int_equal(fs_bload_build(&b), -ENOSPC);
	/* an allocator handing out blocks outside the AG */
	m = (struct mem){ .next = 0, .fail_after = -1 };
	assert_int_equal(fs_bload_build(&b), -EINVAL);
	/* a tree taller than the geometry allows */
	short_tree = *bno;
	short_tree.maxlevels = one_level;
	b.ops = &short_tree;
	m = (struct mem){ .next = 100, .fail_after = -1 };
	assert_int_equal(fs_bload_build(&b), -EFBIG);
	assert_int_equal(m.writes, 0);
	/* and it all works once the inputs are right */
	b.ops = bno;
	m = (struct mem){ .next = 100, .fail_after = -1 };
	assert_int_equal(fs_bload_build(&b), 0);
	assert_int_equal(m.writes, b.geom.nblocks);
	assert_int_equal(b.blocks_written, b.geom.nblocks);
	/* missing callbacks */
	b.alloc_block = NULL;
	assert_int_equal(fs_bload_build(&b), -EINVAL);
	b.alloc_block = mem_alloc;
	b.recs = NULL;
	assert_int_equal(fs_bload_build(&b), -EINVAL);
	/* ... unless there are no records: an empty tree is one empty leaf */
	b.nrecs = 0;
	m = (struct mem){ .next = 100, .fail_after = -1 };
	assert_int_equal(fs_bload_build(&b), 0);
	assert_int_equal(m.writes, 1);
	assert_int_equal(b.nlevels, 1);
	b.nrecs = 2000;
	/* a bmbt without its fork */
	b.ops = fs_btree_ops_get(FS_BTREE_BMBT);
	b.recs = recs;
	assert_int_equal(fs_bload_build(&b), -EINVAL);
}

/* ---- through the cache and the device ---- */

struct src {
	const unsigned char *recs;
	uint64_t pos;
};

static int next_recs(void *priv, void *out, uint32_t n)
{
	struct src *s = priv;

	memcpy(out, s->recs + s->pos * sizeof(struct xfs_rmap_rec), (size_t)n * sizeof(struct xfs_rmap_rec));
	s->pos += n;
	return 0;
}

struct devblocks {
	struct fs_cache *c;
	const struct fs_geom *g;
	uint64_t next;
	struct src src;
	struct fs_bload_cache_target tgt;
	int fd;
	const unsigned char *recs;
	uint64_t idx;
	bool same;
};

static int dev_alloc(void *priv, uint64_t *ptr)
{
	struct devblocks *d = priv;

	/* 8 blocks apart: no two share (or touch) a 4 KiB O_DIRECT unit */
	*ptr = d->next;
	d->next += 8;
	return 0;
}

static int dev_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	return fs_bload_cache_writer(&((struct devblocks *)priv)->tgt, ptr, level, block);
}

static int dev_get_recs(void *priv, void *out, uint32_t n)
{
	return next_recs(&((struct devblocks *)priv)->src, out, n);
}

static int dev_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct devblocks *d = priv;
	uint64_t off = fs_daddr_to_bytes(fs_agbno_to_daddr(d->g, agno, agbno));

	return pread(d->fd, buf, d->g->blocksize, (off_t)off) == (ssize_t)d->g->blocksize ? 0 : -EIO;
}

static int dev_rec(void *priv, const void *rec)
{
	struct devblocks *d = priv;

	if (memcmp(rec, d->recs + d->idx * sizeof(struct xfs_rmap_rec), sizeof(struct xfs_rmap_rec)))
		d->same = false;
	d->idx++;
	return 0;
}

/* An rmap tree streamed from a source into dirty cache buffers, flushed, walked from disk. */
static void test_cache_writer(void **state)
{
	struct fs_geom g;
	char path[] = "/var/tmp/xfsx-bload.XXXXXX";
	struct fs_dev_opts o = { .writable = true };
	struct fs_dev *dev;
	struct fs_flush_result fr;
	struct fs_findings fl;
	uint64_t n = 4000, rng = 7;
	unsigned char *recs;
	struct devblocks d = { .next = 1000, .same = true };
	struct fs_bload b = {
		.ops = fs_btree_ag_ops(FS_BTREE_AG_RMAP), .agno = RT_AGNO, .slack = { -1, -1 },
		.get_recs = dev_get_recs, .alloc_block = dev_alloc, .write_block = dev_write,
		.priv = &d,
	};
	struct fs_btree_walk w = { .ops = b.ops, .read_block = dev_read, .visit_rec = dev_rec,
				   .priv = &d };
	struct fs_flush_opts fo = { .g = &g, .wclass = FS_WCLASS_ALL, .sync = true };
	int fd;

	(void)state;
	assert_int_equal(rt_geom(1024, &g), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(g.dblocks * g.blocksize)), 0);
	assert_int_equal(fs_dev_open(path, &o, &dev), 0);
	assert_int_equal(fs_cache_create(dev, 0, &d.c), 0);
	recs = rt_records(&g, RT_RMAP, &n, &rng);
	assert_non_null(recs);
	d.g = &g;
	d.fd = fd;
	d.recs = recs;
	d.src.recs = recs;
	d.tgt = (struct fs_bload_cache_target){ .cache = d.c, .g = &g, .ops = b.ops, .agno = RT_AGNO,
						.wclass = FS_WCLASS_NEW };
	b.g = &g;
	b.nrecs = n;
	assert_int_equal(fs_bload_build(&b), 0);
	assert_true(b.nlevels >= 3);
	assert_int_equal(fs_cache_dirty_bytes(d.c), b.geom.nblocks * g.blocksize);
	if (fs_cache_flush(d.c, &fo, &fr))
		fail_msg("flush: %s: %s", fr.code, fr.message);
	assert_int_equal(fr.buffers, b.geom.nblocks);
	/* no two adjacent: one write each */
	assert_int_equal(fr.writes, b.geom.nblocks);

	fs_findings_init(&fl);
	w.g = &g;
	w.fl = &fl;
	w.vc.g = &g;
	w.vc.fl = &fl;
	w.vc.agno = RT_AGNO;
	w.root = (fs_agblock_t)b.root;
	w.nlevels = b.nlevels;
	assert_int_equal(fs_btree_walk(&w), 0);
	assert_int_equal(fl.n, 0);
	assert_int_equal(w.records, n);
	assert_int_equal(w.blocks, b.geom.nblocks);
	assert_true(d.same);
	fs_findings_free(&fl);
	free(recs);
	fs_cache_destroy(d.c);
	fs_dev_close(dev);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_roundtrip_4k_default),
		cmocka_unit_test(test_roundtrip_1k_default),
		cmocka_unit_test(test_roundtrip_packed),
		cmocka_unit_test(test_roundtrip_custom_slack),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_cache_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
