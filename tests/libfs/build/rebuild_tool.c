// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper for tests/libfs/build/rebuild.sh: rebuild AG btrees of a real
 * filesystem with the bulk loader and write them through the cache's
 * verified writeback, as repair will.  Each tree is walked (records and
 * blocks collected, no findings allowed), a slack is found that needs
 * exactly as many blocks as the tree has (so free space, rmap and the AG
 * counters stay true), the tree is rebuilt onto its old blocks in
 * ascending order (every block's contents move), the AGF/AGI root and
 * level are updated, and the new blocks are flushed before the headers.
 *
 * A file's block map btree (bmbt:INO) is rebuilt the same way: its
 * extents loaded (fs_bmap_load), the tree rebuilt onto its own blocks,
 * the new root written into the inode's fork (the inode is a dirty buffer
 * of its own: the flush restamps and verifies it).
 *
 * Usage: rebuild_tool IMAGE TREE...   (TREE: bno cnt rmap refc ino fino bmbt:INO)
 * Prints one line per tree; exit 0 when every tree was rebuilt or had no
 * usable slack (said), 1 on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/ag.h"
#include "libfs/build/bload.h"
#include "libfs/format/bmap.h"
#include "libfs/format/btree_ag.h"
#include "libfs/io/cache.h"
#include "libfs/format/endian.h"
#include "libfs/fs.h"
#include "libfs/format/inode.h"

struct tree {
	const char *name;
	const struct fs_btree_ops *ops;
	bool in_agi;
};

struct collect {
	struct fs_cache *c;
	const struct fs_geom *g;
	uint16_t rec_len;
	unsigned char *recs;
	uint64_t nrecs, cap;
	uint64_t *blocks;
	uint64_t nblocks, bcap;
	uint64_t next;             /* alloc_block cursor */
	struct fs_bload_cache_target tgt;
};

static int read_block(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct collect *k = priv;
	struct fs_buf *b;
	int err = fs_cache_read(k->c, fs_agbno_to_daddr(k->g, agno, agbno), k->g->blocksize, &b);

	if (err)
		return err;
	memcpy(buf, b->data, k->g->blocksize);
	fs_buf_put(k->c, b);
	return 0;
}

static int visit_block(void *priv, uint32_t level, fs_agblock_t agbno, const void *block)
{
	struct collect *k = priv;

	(void)level;
	(void)block;
	if (k->nblocks == k->bcap) {
		k->bcap = k->bcap ? 2 * k->bcap : 64;
		k->blocks = realloc(k->blocks, k->bcap * sizeof(*k->blocks));
		if (!k->blocks)
			return -ENOMEM;
	}
	k->blocks[k->nblocks++] = agbno;
	return 0;
}

static int visit_rec(void *priv, const void *rec)
{
	struct collect *k = priv;

	if (k->nrecs == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->recs = realloc(k->recs, k->cap * k->rec_len);
		if (!k->recs)
			return -ENOMEM;
	}
	memcpy(k->recs + k->nrecs++ * k->rec_len, rec, k->rec_len);
	return 0;
}

static int alloc_old(void *priv, uint64_t *ptr)
{
	struct collect *k = priv;

	if (k->next >= k->nblocks)
		return -ENOSPC;
	*ptr = k->blocks[k->next++];
	return 0;
}

static int write_new(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	return fs_bload_cache_writer(&((struct collect *)priv)->tgt, ptr, level, block);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A slack under which the tree takes exactly want blocks: the default first, then any. */
static bool find_slack(const struct fs_btree_ops *ops, const struct fs_geom *g, uint64_t nrecs,
		       uint32_t fork_size, uint64_t want, struct fs_bload_slack *out)
{
	uint32_t lmax = fs_btree_maxrecs(ops, g->blocksize, true);
	uint32_t nmax = fs_btree_maxrecs(ops, g->blocksize, false);
	struct fs_bload_geom gm;

	for (int l = -1; l <= (int)(lmax / 2 + 1); l++)
		for (int n = -1; n <= (int)(nmax / 2 + 1); n++) {
			struct fs_bload_slack s = { l, n };

			if (fs_bload_compute_geometry(ops, g->blocksize, nrecs, &s, fork_size, &gm) == 0 &&
			    gm.nblocks == want) {
				*out = s;
				return true;
			}
		}
	return false;
}

/* Where an AG header keeps a tree's root and level. */
static void root_fields(const struct tree *t, size_t *root_off, size_t *level_off)
{
	if (!strcmp(t->name, "bno")) {
		*root_off = offsetof(struct xfs_agf, agf_roots[XFS_BTNUM_BNOi]);
		*level_off = offsetof(struct xfs_agf, agf_levels[XFS_BTNUM_BNOi]);
	} else if (!strcmp(t->name, "cnt")) {
		*root_off = offsetof(struct xfs_agf, agf_roots[XFS_BTNUM_CNTi]);
		*level_off = offsetof(struct xfs_agf, agf_levels[XFS_BTNUM_CNTi]);
	} else if (!strcmp(t->name, "rmap")) {
		*root_off = offsetof(struct xfs_agf, agf_roots[XFS_BTNUM_RMAPi]);
		*level_off = offsetof(struct xfs_agf, agf_levels[XFS_BTNUM_RMAPi]);
	} else if (!strcmp(t->name, "refc")) {
		*root_off = offsetof(struct xfs_agf, agf_refcount_root);
		*level_off = offsetof(struct xfs_agf, agf_refcount_level);
	} else if (!strcmp(t->name, "ino")) {
		*root_off = offsetof(struct xfs_agi, agi_root);
		*level_off = offsetof(struct xfs_agi, agi_level);
	} else {
		*root_off = offsetof(struct xfs_agi, agi_free_root);
		*level_off = offsetof(struct xfs_agi, agi_free_level);
	}
}

static int rebuild(struct fs *fs, struct fs_cache *c, fs_agnumber_t agno, const struct tree *t)
{
	const struct fs_geom *g = &fs->g;
	uint64_t hdr_off = t->in_agi ? fs_ag_agi_offset(g, agno) : fs_ag_agf_offset(g, agno);
	struct fs_dirty_info hdr_di = { .type = t->in_agi ? FS_MT_AGI : FS_MT_AGF, .agno = agno,
					.wclass = FS_WCLASS_HEADERS };
	struct collect k = { .c = c, .g = g, .rec_len = t->ops->rec_len };
	struct fs_findings fl;
	struct fs_btree_walk w = {
		.ops = t->ops, .g = g, .read_block = read_block, .visit_block = visit_block,
		.visit_rec = visit_rec, .priv = &k,
	};
	struct fs_bload b = {
		.ops = t->ops, .g = g, .agno = agno, .alloc_block = alloc_old,
		.write_block = write_new, .priv = &k,
	};
	size_t root_off, level_off;
	struct fs_buf *hb;
	uint32_t old_root, old_levels;
	int err;

	root_fields(t, &root_off, &level_off);
	err = fs_cache_read(c, hdr_off / FS_BBSIZE, g->sectsize, &hb);
	if (err)
		return err;
	old_root = get_be32(hb->data + root_off);
	old_levels = get_be32(hb->data + level_off);
	if (!old_levels) {
		printf("%s AG %u: no tree\n", t->name, agno);
		fs_buf_put(c, hb);
		return 0;
	}
	fs_findings_init(&fl);
	w.fl = &fl;
	w.vc.g = g;
	w.vc.fl = &fl;
	w.vc.agno = agno;
	w.vc.have_log_head = fs->have_log_head;
	w.vc.head_lsn = fs->log_head_lsn;
	w.root = old_root;
	w.nlevels = old_levels;
	err = fs_btree_walk(&w);
	if (!err && (fl.n || w.bad_blocks)) {
		fprintf(stderr, "%s AG %u: the tree has findings before the rebuild (%s)\n", t->name,
			agno, fl.n ? fl.v[0].def->code : "bad blocks");
		err = -EUCLEAN;
	}
	fs_findings_free(&fl);
	if (err)
		goto out;
	if (!find_slack(t->ops, g, k.nrecs, 0, k.nblocks, &b.slack)) {
		printf("%s AG %u: %llu records, %llu blocks: no slack gives that many blocks; "
		       "left alone\n", t->name, agno, (unsigned long long)k.nrecs,
		       (unsigned long long)k.nblocks);
		goto out;
	}
	qsort(k.blocks, k.nblocks, sizeof(*k.blocks), cmp_u64);
	k.tgt = (struct fs_bload_cache_target){ .cache = c, .g = g, .ops = t->ops, .agno = agno,
						.wclass = FS_WCLASS_NEW };
	b.recs = k.recs;
	b.nrecs = k.nrecs;
	err = fs_bload_build(&b);
	if (err) {
		fprintf(stderr, "%s AG %u: build failed: %s (record %llu)\n", t->name, agno,
			strerror(-err), (unsigned long long)b.bad_rec);
		goto out;
	}
	put_be32(hb->data + root_off, (uint32_t)b.root);
	put_be32(hb->data + level_off, b.nlevels);
	err = fs_buf_mark_dirty(c, hb, &hdr_di);
	printf("%s AG %u: %llu records, %llu blocks, levels %u -> %u, root %u -> %llu, "
	       "slack %d/%d\n", t->name, agno, (unsigned long long)k.nrecs,
	       (unsigned long long)k.nblocks, old_levels, b.nlevels, old_root,
	       (unsigned long long)b.root, b.slack.leaf, b.slack.node);
out:
	fs_buf_put(c, hb);
	free(k.recs);
	free(k.blocks);
	return err;
}

static int read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct collect *k = priv;

	return read_block(k, fs_fsb_to_agno(k->g, fsb), fs_fsb_to_agbno(k->g, fsb), buf);
}

static int rebuild_bmbt(struct fs *fs, struct fs_cache *c, fs_ino_t ino)
{
	const struct fs_geom *g = &fs->g;
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);
	fs_agnumber_t agno = fs_ino_to_agno(g, ino);
	fs_agino_t agino = fs_ino_to_agino(g, ino);
	fs_daddr_t d = fs_agbno_to_daddr(g, agno, fs_agino_to_agbno(g, agino)) +
		       (fs_agino_to_offset(g, agino) << g->inodelog) / FS_BBSIZE;
	struct fs_dirty_info di = { .type = FS_MT_INODE, .agno = agno, .ino = ino,
				    .wclass = FS_WCLASS_HEADERS };
	struct collect k = { .c = c, .g = g, .rec_len = ops->rec_len };
	struct fs_findings fl;
	struct fs_bmap_ctx bc = { .g = g, .have_log_head = fs->have_log_head,
				  .head_lsn = fs->log_head_lsn, .read_fsblock = read_fsblock,
				  .priv = &k };
	struct fs_bload b = { .ops = ops, .g = g, .ino = ino, .alloc_block = alloc_old,
			      .write_block = write_new, .priv = &k };
	struct fs_inode ip;
	struct fs_bmap m = { 0 };
	struct fs_buf *ib;
	unsigned char *fork = NULL;
	int err;

	if (g->inodesize % FS_BBSIZE)
		return -EOPNOTSUPP;	/* an inode smaller than a sector shares its buffer */
	err = fs_cache_read(c, d, g->inodesize, &ib);
	if (err)
		return err;
	fs_inode_decode(ib->data, &ip);
	if (ip.format != XFS_DINODE_FMT_BTREE) {
		fprintf(stderr, "bmbt %llu: data fork is not a btree\n", (unsigned long long)ino);
		err = -EINVAL;
		goto out;
	}
	fs_findings_init(&fl);
	bc.fl = &fl;
	err = fs_bmap_load(&bc, ib->data, &ip, XFS_DATA_FORK, &m);
	if (!err && (fl.n || m.bad)) {
		fprintf(stderr, "bmbt %llu: findings before the rebuild (%s)\n",
			(unsigned long long)ino, fl.n ? fl.v[0].def->code : "bad map");
		err = -EUCLEAN;
	}
	fs_findings_free(&fl);
	if (err)
		goto out;
	k.recs = malloc(m.n * ops->rec_len + 1);
	k.blocks = malloc(m.nbmbt * sizeof(*k.blocks) + 1);
	b.fork_size = fs_inode_fork_size(g, &ip, XFS_DATA_FORK);
	fork = malloc(b.fork_size);
	if (!k.recs || !k.blocks || !fork) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m.n; i++)
		fs_bmbt_rec_encode(&m.ext[i], k.recs + i * ops->rec_len);
	for (size_t i = 0; i < m.nbmbt; i++)
		k.blocks[i] = m.bmbt[i];
	k.nrecs = m.n;
	k.nblocks = m.nbmbt;
	if (!find_slack(ops, g, k.nrecs, b.fork_size, k.nblocks, &b.slack)) {
		printf("bmbt %llu: %llu extents, %llu blocks: no slack gives that many blocks; "
		       "left alone\n", (unsigned long long)ino, (unsigned long long)k.nrecs,
		       (unsigned long long)k.nblocks);
		goto out;
	}
	qsort(k.blocks, k.nblocks, sizeof(*k.blocks), cmp_u64);
	k.tgt = (struct fs_bload_cache_target){ .cache = c, .g = g, .ops = ops, .ino = ino,
						.wclass = FS_WCLASS_NEW };
	b.recs = k.recs;
	b.nrecs = k.nrecs;
	b.fork = fork;
	err = fs_bload_build(&b);
	if (!err && b.fork_format != XFS_DINODE_FMT_BTREE)
		err = -EINVAL;
	if (err) {
		fprintf(stderr, "bmbt %llu: build failed: %s\n", (unsigned long long)ino,
			strerror(-err));
		goto out;
	}
	memcpy((void *)fs_inode_fork_ptr(ib->data, &ip, XFS_DATA_FORK), fork, b.fork_size);
	err = fs_buf_mark_dirty(c, ib, &di);
	printf("bmbt %llu: %llu extents, %llu blocks, levels %u (root in the inode), slack %d/%d\n",
	       (unsigned long long)ino, (unsigned long long)k.nrecs,
	       (unsigned long long)k.nblocks, b.nlevels, b.slack.leaf, b.slack.node);
out:
	fs_bmap_free(&m);
	fs_buf_put(c, ib);
	free(fork);
	free(k.recs);
	free(k.blocks);
	return err;
}

int main(int argc, char **argv)
{
	const struct tree trees[] = {
		{ "bno", fs_btree_ag_ops(FS_BTREE_AG_BNO), false },
		{ "cnt", fs_btree_ag_ops(FS_BTREE_AG_CNT), false },
		{ "rmap", fs_btree_ag_ops(FS_BTREE_AG_RMAP), false },
		{ "refc", fs_btree_ag_ops(FS_BTREE_AG_REFC), false },
		{ "ino", fs_btree_ops_get(FS_BTREE_INO), true },
		{ "fino", fs_btree_ops_get(FS_BTREE_FINO), true },
	};
	struct fs_open_opts oo = { .dev = { .writable = true } };
	struct fs_flush_opts fo = { .sync = true };
	struct fs_flush_result fr;
	struct fs_error fe;
	struct fs_cache *c;
	struct fs *fs;
	int err = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s IMAGE TREE...\n", argv[0]);
		return 2;
	}
	if (fs_open(argv[1], &oo, &fs, NULL, &fe)) {
		fprintf(stderr, "%s: %s\n", argv[1], fe.msg);
		return 1;
	}
	fs_log_find_head(fs);
	if (fs_cache_create(fs->dev, 0, &c)) {
		fs_close(fs);
		return 1;
	}
	for (fs_agnumber_t agno = 0; !err && agno < fs->g.agcount; agno++)
		for (int i = 2; !err && i < argc; i++) {
			const struct tree *t = NULL;

			if (!strncmp(argv[i], "bmbt:", 5)) {
				/* a file's tree: once, not per AG */
				if (agno == 0)
					err = rebuild_bmbt(fs, c, strtoull(argv[i] + 5, NULL, 0));
				continue;
			}
			for (size_t j = 0; j < sizeof(trees) / sizeof(trees[0]); j++)
				if (!strcmp(argv[i], trees[j].name))
					t = &trees[j];
			if (!t) {
				fprintf(stderr, "unknown tree %s\n", argv[i]);
				err = -EINVAL;
				break;
			}
			err = rebuild(fs, c, agno, t);
		}
	/* the crash protocol's order: new blocks durable before the headers point at them */
	fo.g = &fs->g;
	fo.have_log_head = fs->have_log_head;
	fo.head_lsn = fs->log_head_lsn;
	for (uint8_t cls = FS_WCLASS_NEW; !err && cls <= FS_WCLASS_HEADERS; cls++) {
		fo.wclass = cls;
		err = fs_cache_flush(c, &fo, &fr);
		if (err)
			fprintf(stderr, "flush: %s: %s at daddr %llu: %s\n", strerror(-err), fr.has_code ? fs_code_name(fr.code) : "-",
				(unsigned long long)fr.daddr, fr.message);
		else
			printf("flush class %u: %llu buffers, %llu writes, %llu bytes\n", cls,
			       (unsigned long long)fr.buffers, (unsigned long long)fr.writes,
			       (unsigned long long)fr.bytes);
	}
	fs_cache_destroy(c);
	fs_close(fs);
	return err ? 1 : 0;
}
