// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk-loader round trips (see bload_rt.h): a geometry from a superblock
 * built here, record generators for the seven tree types, an in-memory
 * block store the loader writes to and the walkers read from, and the
 * comparison of what walks back with what went in.
 */
#include "tests/libfs/bload_rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/bmap.h"
#include "libfs/format/btree.h"
#include "libfs/format/btree_ag.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/sb.h"

static unsigned ilog2u(uint32_t v)
{
	unsigned l = 0;

	while ((1u << (l + 1)) <= v)
		l++;
	return l;
}

int rt_geom(uint32_t blocksize, struct fs_geom *g)
{
	return rt_geom_ex(blocksize, 0, 14, 4, false, g);
}

int rt_geom_ex(uint32_t blocksize, uint32_t dirblklog, uint32_t agblklog, uint32_t agcount,
	       bool asciici, struct fs_geom *g)
{
	struct xfs_sb sb;
	uint32_t inopb = blocksize / 512;

	memset(&sb, 0, sizeof(sb));
	sb.sb_magicnum = XFS_SB_MAGIC;
	sb.sb_blocksize = blocksize;
	sb.sb_blocklog = (uint8_t)ilog2u(blocksize);
	sb.sb_agblocks = 1u << agblklog;
	sb.sb_agblklog = (uint8_t)agblklog;
	sb.sb_agcount = agcount;
	sb.sb_dblocks = (uint64_t)agcount << agblklog;
	sb.sb_dirblklog = (uint8_t)dirblklog;
	sb.sb_rextsize = blocksize >= 4096 ? 1 : 4096 / blocksize;
	sb.sb_logblocks = 4096;
	sb.sb_logstart = 8192;
	sb.sb_versionnum = XFS_SB_VERSION_5 | XFS_SB_VERSION_ALIGNBIT | XFS_SB_VERSION_MOREBITSBIT |
			   XFS_SB_VERSION_DIRV2BIT | XFS_SB_VERSION_EXTFLGBIT;
	sb.sb_sectsize = 512;
	sb.sb_sectlog = 9;
	sb.sb_inodesize = 512;
	sb.sb_inodelog = 9;
	sb.sb_inopblock = (uint16_t)inopb;
	sb.sb_inopblog = (uint8_t)ilog2u(inopb);
	sb.sb_imax_pct = 25;
	/* chunks of 64 inodes aligned to their size; sparse clusters of 16 KiB */
	sb.sb_inoalignmt = 64 / inopb;
	sb.sb_spino_align = 16384 / blocksize ? 16384 / blocksize : 1;
	sb.sb_rootino = (uint64_t)64 * 2;
	sb.sb_rbmino = sb.sb_rootino + 1;
	sb.sb_rsumino = sb.sb_rootino + 2;
	sb.sb_logsunit = 1;
	sb.sb_features2 = XFS_SB_VERSION2_LAZYSBCOUNTBIT | XFS_SB_VERSION2_ATTR2BIT |
			  XFS_SB_VERSION2_PROJID32BIT | XFS_SB_VERSION2_CRCBIT | XFS_SB_VERSION2_FTYPE;
	sb.sb_bad_features2 = sb.sb_features2;
	sb.sb_features_incompat = XFS_SB_FEAT_INCOMPAT_FTYPE | XFS_SB_FEAT_INCOMPAT_SPINODES |
				  XFS_SB_FEAT_INCOMPAT_BIGTIME | XFS_SB_FEAT_INCOMPAT_NREXT64;
	sb.sb_features_ro_compat = XFS_SB_FEAT_RO_COMPAT_FINOBT | XFS_SB_FEAT_RO_COMPAT_RMAPBT |
				   XFS_SB_FEAT_RO_COMPAT_REFLINK | XFS_SB_FEAT_RO_COMPAT_INOBTCNT;
	if (asciici)
		sb.sb_versionnum |= XFS_SB_VERSION_BORGBIT;
	memset(&sb.sb_meta_uuid, 0x5a, sizeof(sb.sb_meta_uuid));
	memset(&sb.sb_uuid, 0x5a, sizeof(sb.sb_uuid));
	return fs_geom_derive(&sb, g);
}

const struct fs_btree_ops *rt_ops(enum rt_tree t)
{
	switch (t) {
	case RT_BNO: return fs_btree_ag_ops(FS_BTREE_AG_BNO);
	case RT_CNT: return fs_btree_ag_ops(FS_BTREE_AG_CNT);
	case RT_RMAP: return fs_btree_ag_ops(FS_BTREE_AG_RMAP);
	case RT_REFC: return fs_btree_ag_ops(FS_BTREE_AG_REFC);
	case RT_INO: return fs_btree_ops_get(FS_BTREE_INO);
	case RT_FINO: return fs_btree_ops_get(FS_BTREE_FINO);
	case RT_BMBT: return fs_btree_ops_get(FS_BTREE_BMBT);
	default: return NULL;
	}
}

const char *rt_name(enum rt_tree t)
{
	static const char *const names[RT_NR] = { "bnobt", "cntbt", "rmapbt", "refcbt", "inobt",
						  "finobt", "bmbt" };

	return t < RT_NR ? names[t] : "?";
}

uint64_t rt_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The inode whose bmbt the round trips build. */
static fs_ino_t bmbt_ino(const struct fs_geom *g)
{
	return fs_agino_to_ino(g, RT_AGNO, fs_agbno_to_agino(g, 512));
}

static const struct fs_btree_ops *sort_ops;

static int cmp_recs(const void *a, const void *b)
{
	unsigned char ka[64], kb[64];

	sort_ops->rec_key(a, ka);
	sort_ops->rec_key(b, kb);
	return sort_ops->key_cmp(ka, kb);
}

static uint64_t pick_owner(const struct fs_geom *g, uint64_t *rng, uint64_t *offset)
{
	static const uint64_t special[] = { XFS_RMAP_OWN_AG, XFS_RMAP_OWN_INOBT,
					    XFS_RMAP_OWN_INODES, XFS_RMAP_OWN_REFC,
					    XFS_RMAP_OWN_COW, XFS_RMAP_OWN_LOG };
	uint64_t r = rt_rand(rng);
	fs_agblock_t agbno;

	*offset = 0;
	if (r % 4 == 0)
		return special[(r >> 8) % (sizeof(special) / sizeof(special[0]))];
	agbno = g->ag_hdr_blocks + 64 + (uint32_t)((r >> 8) % 4096);
	if ((r >> 20) % 8 == 0)
		*offset = XFS_RMAP_OFF_BMBT_BLOCK;
	else
		*offset = ((r >> 24) % (1u << 20)) | ((r >> 50) % 4 == 0 ? XFS_RMAP_OFF_ATTR_FORK : 0);
	return fs_agino_to_ino(g, RT_AGNO, fs_agbno_to_agino(g, agbno & ~7u));
}

unsigned char *rt_records(const struct fs_geom *g, enum rt_tree t, uint64_t *n, uint64_t *rng)
{
	const struct fs_btree_ops *ops = rt_ops(t);
	uint32_t agblocks = fs_ag_blocks(g, RT_AGNO), hdr = g->ag_hdr_blocks;
	unsigned char *v = calloc(*n ? *n : 1, ops->rec_len);
	uint64_t got = 0;

	if (!v)
		return NULL;
	switch (t) {
	case RT_BNO:
	case RT_CNT: {
		uint32_t start = hdr + 1;

		for (; got < *n; got++) {
			uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 3);

			if (start + len > agblocks)
				break;
			fs_enc_alloc_rec(v + got * ops->rec_len, start, len);
			start += len + 1 + (uint32_t)(rt_rand(rng) % 3);
		}
		break;
	}
	case RT_RMAP: {
		uint32_t start = hdr;

		if (*n) {
			fs_enc_rmap_rec(v, 0, hdr, XFS_RMAP_OWN_FS, 0);
			got = 1;
		}
		for (; got < *n; got++) {
			uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 16);
			uint64_t off, owner = pick_owner(g, rng, &off);

			start += (uint32_t)(rt_rand(rng) % 3);
			if (start + len > agblocks)
				break;
			fs_enc_rmap_rec(v + got * ops->rec_len, start, len, owner, off);
		}
		break;
	}
	case RT_REFC: {
		uint32_t start = hdr + 1, half = agblocks / 2;
		uint64_t shared = *n - *n / 8;      /* the rest are CoW staging extents */

		for (; got < shared; got++) {
			uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 4);

			if (start + len > half)
				break;
			fs_enc_refc_rec(v + got * ops->rec_len, start, len,
					2 + (uint32_t)(rt_rand(rng) % 4), false);
			start += len + (uint32_t)(rt_rand(rng) % 3);
		}
		/* CoW extents sort after every shared one: the flag is the key's top bit */
		for (start = half; got < *n; got++) {
			uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 4);

			if (start + len > agblocks)
				break;
			fs_enc_refc_rec(v + got * ops->rec_len, start, len, 1, true);
			start += len + (uint32_t)(rt_rand(rng) % 3);
		}
		break;
	}
	case RT_INO:
	case RT_FINO: {
		uint32_t chunk = XFS_INODES_PER_CHUNK >> g->inopblog;
		uint32_t agbno = (hdr + chunk - 1) / chunk * chunk;

		if (!chunk)
			chunk = 1;
		for (; got < *n; got++) {
			uint64_t free = rt_rand(rng);

			if (t == RT_FINO && !free)
				free = 1;
			if (agbno + chunk > agblocks)
				break;
			fs_enc_inobt_rec(v + got * ops->rec_len, fs_agbno_to_agino(g, agbno), true, 0,
					 XFS_INODES_PER_CHUNK, (uint8_t)__builtin_popcountll(free), free);
			agbno += chunk * (1 + (uint32_t)(rt_rand(rng) % 2));
		}
		break;
	}
	case RT_BMBT: {
		uint64_t off = rt_rand(rng) % 10;

		for (; got < *n; got++) {
			uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 64);
			fs_agnumber_t agno = (fs_agnumber_t)(rt_rand(rng) % g->agcount);
			uint32_t room = fs_ag_blocks(g, agno) - hdr - len;
			struct fs_bmap_ext e = {
				.startoff = off,
				.startblock = fs_agbno_to_fsb(g, agno,
							      hdr + (uint32_t)(rt_rand(rng) % room)),
				.blockcount = len,
				.unwritten = rt_rand(rng) % 8 == 0,
			};

			fs_bmbt_rec_encode(&e, v + got * ops->rec_len);
			off += len + rt_rand(rng) % 5;
		}
		break;
	}
	default:
		break;
	}
	*n = got;
	sort_ops = ops;
	if (t == RT_CNT || t == RT_RMAP)
		qsort(v, got, ops->rec_len, cmp_recs);
	return v;
}

/* ---- the store: blocks the loader writes, the walkers read ---- */

#define STORE_BASE 1000
#define STORE_STRIDE 3

struct store {
	const struct fs_geom *g;
	bool lf;
	uint64_t n, max;           /* allocated / room */
	unsigned char *data;       /* max blocks */
	unsigned char *written;
};

static uint64_t store_ptr(const struct store *s, uint64_t k)
{
	uint32_t agbno = STORE_BASE + (uint32_t)(k * STORE_STRIDE);

	return s->lf ? fs_agbno_to_fsb(s->g, RT_AGNO, agbno) : agbno;
}

static bool store_index(const struct store *s, uint64_t ptr, uint64_t *k)
{
	uint64_t agbno;

	if (s->lf) {
		if (fs_fsb_to_agno(s->g, ptr) != RT_AGNO)
			return false;
		agbno = fs_fsb_to_agbno(s->g, ptr);
	} else {
		agbno = ptr;
	}
	if (agbno < STORE_BASE || (agbno - STORE_BASE) % STORE_STRIDE)
		return false;
	*k = (agbno - STORE_BASE) / STORE_STRIDE;
	return *k < s->n && s->written[*k];
}

static int st_alloc(void *priv, uint64_t *ptr)
{
	struct store *s = priv;

	if (s->n >= s->max)
		return -ENOSPC;
	*ptr = store_ptr(s, s->n++);
	return 0;
}

static int st_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct store *s = priv;
	uint64_t k;

	(void)level;
	if (s->lf ? fs_fsb_to_agno(s->g, ptr) != RT_AGNO : false)
		return -EINVAL;
	k = ((s->lf ? fs_fsb_to_agbno(s->g, ptr) : ptr) - STORE_BASE) / STORE_STRIDE;
	if (k >= s->n || s->written[k])
		return -EEXIST;	/* not handed out, or written twice */
	memcpy(s->data + k * s->g->blocksize, block, s->g->blocksize);
	s->written[k] = 1;
	return 0;
}

static int st_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct store *s = priv;
	uint64_t k;

	if (agno != RT_AGNO || !store_index(s, agbno, &k))
		return -EIO;
	memcpy(buf, s->data + k * s->g->blocksize, s->g->blocksize);
	return 0;
}

static int st_read_fsb(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct store *s = priv;
	uint64_t k;

	if (!store_index(s, fsb, &k))
		return -EIO;
	memcpy(buf, s->data + k * s->g->blocksize, s->g->blocksize);
	return 0;
}

/* ---- walking back ---- */

struct cmp {
	const unsigned char *recs;
	uint64_t n, idx;
	uint16_t rec_len;
	bool mismatch;
	uint64_t at;
};

static int visit_rec(void *priv, const void *rec)
{
	struct cmp *c = priv;

	if (!c->mismatch && (c->idx >= c->n ||
			     memcmp(rec, c->recs + c->idx * c->rec_len, c->rec_len))) {
		c->mismatch = true;
		c->at = c->idx;
	}
	c->idx++;
	return 0;
}

struct walkpriv {
	struct store *s;
	struct cmp *c;
};

static int wp_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	return st_read(((struct walkpriv *)priv)->s, agno, agbno, buf);
}

static int wp_rec(void *priv, const void *rec)
{
	return visit_rec(((struct walkpriv *)priv)->c, rec);
}

static int why(struct rt_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int why(struct rt_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int findings_why(struct rt_result *res, const struct fs_findings *fl, const char *what)
{
	return why(res, "%s: %zu findings, first %s: %s", what, fl->n,
		   fl->n ? fl->v[0].def->code : "-", fl->n ? fl->v[0].message : "-");
}

/* Every written block: counts per level, capacity, half-full rule, distribution, slack. */
static int check_shape(const struct fs_btree_ops *ops, const struct store *s, uint64_t n,
		       struct rt_result *res)
{
	const struct fs_bload_geom *gm = &res->geom;
	uint32_t block_levels = gm->nlevels - (gm->root_in_fork ? 1 : 0);

	for (uint64_t k = 0; k < s->n; k++) {
		struct fs_btree_hdr h;
		uint32_t maxr, fill, minr;
		uint64_t nr, nb;

		if (!s->written[k])
			return why(res, "block %llu allocated but never written", (unsigned long long)k);
		fs_btree_hdr_decode(ops, s->data + k * s->g->blocksize, &h);
		if (h.level >= block_levels)
			return why(res, "block %llu at level %u, tree has %u block levels",
				   (unsigned long long)k, h.level, block_levels);
		res->level_seen[h.level]++;
		maxr = h.level ? gm->node_max : gm->leaf_max;
		fill = h.level ? gm->node_fill : gm->leaf_fill;
		minr = maxr / 2;
		nr = h.level ? gm->level_blocks[h.level - 1] : n;
		nb = gm->level_blocks[h.level];
		if (h.numrecs > maxr)
			return why(res, "level %u block holds %u > %u", h.level, h.numrecs, maxr);
		if (nb > 1 && h.numrecs < minr)
			return why(res, "level %u block holds %u < half of %u", h.level, h.numrecs, maxr);
		if (h.numrecs != nr / nb && h.numrecs != (nr + nb - 1) / nb)
			return why(res, "level %u block holds %u, not an even share of %llu over %llu",
				   h.level, h.numrecs, (unsigned long long)nr, (unsigned long long)nb);
		/* slack: kept unless one more block would leave them under half full */
		if (h.numrecs > fill && nr / (nb + 1) >= minr)
			return why(res, "level %u block holds %u > fill %u with room for another block",
				   h.level, h.numrecs, fill);
	}
	for (uint32_t l = 0; l < block_levels; l++)
		if (res->level_seen[l] != gm->level_blocks[l])
			return why(res, "level %u has %llu blocks, geometry said %llu", l,
				   (unsigned long long)res->level_seen[l],
				   (unsigned long long)gm->level_blocks[l]);
	return 0;
}

static int walk_short(const struct fs_geom *g, enum rt_tree t, struct store *s, struct cmp *c,
		      struct fs_bload *b, struct rt_result *res)
{
	struct fs_findings fl;
	struct walkpriv wp = { s, c };
	struct fs_btree_walk w = {
		.ops = rt_ops(t), .g = g, .root = (fs_agblock_t)b->root, .nlevels = b->nlevels,
		.read_block = wp_read, .visit_rec = wp_rec, .priv = &wp,
	};
	int err, ret = 0;

	fs_findings_init(&fl);
	w.fl = &fl;
	w.vc.g = g;
	w.vc.fl = &fl;
	w.vc.agno = RT_AGNO;
	err = fs_btree_walk(&w);
	res->walked_blocks = w.blocks;
	if (err)
		ret = why(res, "walk failed: %d", err);
	else if (fl.n || fl.dropped)
		ret = findings_why(res, &fl, "walk");
	fs_findings_free(&fl);
	return ret;
}

static int walk_bmbt(const struct fs_geom *g, struct store *s, struct cmp *c, struct fs_bload *b,
		     unsigned char *dinode, struct rt_result *res)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dinode;
	struct fs_findings fl;
	struct fs_bmap_ctx ctx = { .g = g, .read_fsblock = st_read_fsb, .priv = s };
	struct fs_inode ip;
	struct fs_bmap m;
	int err, ret = 0;

	d->di_format = b->fork_format;
	if (g->nrext64)
		d->di_big_nextents = to_be64(c->n);
	else
		d->di_nextents = to_be32((uint32_t)c->n);
	d->di_nblocks = to_be64(b->blocks_written);
	fs_enc_dinode_finish(dinode, g->inodesize);
	fs_inode_decode(dinode, &ip);
	fs_findings_init(&fl);
	ctx.fl = &fl;
	err = fs_bmap_load(&ctx, dinode, &ip, XFS_DATA_FORK, &m);
	if (err) {
		fs_findings_free(&fl);
		return why(res, "bmap load failed: %d", err);
	}
	res->walked_blocks = m.nbmbt;
	if (fl.n || fl.dropped || m.bad)
		ret = findings_why(res, &fl, "bmap load");
	for (size_t i = 0; !ret && i < m.n; i++) {
		unsigned char rec[16];

		fs_bmbt_rec_encode(&m.ext[i], rec);
		visit_rec(c, rec);
	}
	if (!ret && m.n != c->n)
		ret = why(res, "bmap load found %zu extents of %llu", m.n, (unsigned long long)c->n);
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	return ret;
}

int rt_roundtrip(const struct fs_geom *g, enum rt_tree t, const unsigned char *recs, uint64_t n,
		 const struct fs_bload_slack *slack, struct rt_result *res)
{
	const struct fs_btree_ops *ops = rt_ops(t);
	struct store s = { .g = g, .lf = ops->long_format };
	struct cmp c = { .recs = recs, .n = n, .rec_len = ops->rec_len };
	struct fs_bload b = {
		.ops = ops, .g = g, .agno = RT_AGNO, .ino = bmbt_ino(g), .nrecs = n,
		.recs = recs, .alloc_block = st_alloc, .write_block = st_write, .priv = &s,
	};
	unsigned char *dinode = NULL;
	int err, ret = 0;

	memset(res, 0, sizeof(*res));
	if (slack)
		b.slack = *slack;
	else
		b.slack = (struct fs_bload_slack){ -1, -1 };
	s.max = (fs_ag_blocks(g, RT_AGNO) - STORE_BASE) / STORE_STRIDE;
	s.data = malloc(s.max * g->blocksize);
	s.written = calloc(s.max, 1);
	if (ops->long_format) {
		struct fs_dinode_init in = { .mode = S_IFREG | 0644, .format = XFS_DINODE_FMT_EXTENTS,
					     .nlink = 1, .bigtime = g->bigtime, .nrext64 = g->nrext64 };
		struct fs_inode ip;

		dinode = calloc(1, g->inodesize);
		if (dinode) {
			fs_enc_dinode(dinode, g->inodesize, b.ino, g->meta_uuid, &in);
			fs_inode_decode(dinode, &ip);
			b.fork = fs_dinode_dfork(dinode);
			b.fork_size = fs_inode_fork_size(g, &ip, XFS_DATA_FORK);
		}
	}
	if (!s.data || !s.written || (ops->long_format && !dinode)) {
		ret = why(res, "out of memory");
		goto out;
	}
	err = fs_bload_build(&b);
	res->geom = b.geom;
	res->nlevels = b.nlevels;
	res->blocks = b.blocks_written;
	res->fork_format = b.fork_format;
	if (err) {
		why(res, "build failed: %d (record %llu)", err, (unsigned long long)b.bad_rec);
		ret = err;
		goto out;
	}
	if (b.blocks_written != b.geom.nblocks || s.n != b.geom.nblocks) {
		ret = why(res, "%llu blocks written, %llu allocated, geometry said %llu",
			  (unsigned long long)b.blocks_written, (unsigned long long)s.n,
			  (unsigned long long)b.geom.nblocks);
		goto out;
	}
	if (b.nlevels != b.geom.nlevels) {
		ret = why(res, "height %u, geometry said %u", b.nlevels, b.geom.nlevels);
		goto out;
	}
	ret = check_shape(ops, &s, n, res);
	if (ret)
		goto out;
	ret = ops->long_format ? walk_bmbt(g, &s, &c, &b, dinode, res) :
				 walk_short(g, t, &s, &c, &b, res);
	if (ret)
		goto out;
	if (c.mismatch)
		ret = why(res, "record %llu differs after the walk", (unsigned long long)c.at);
	else if (c.idx != n)
		ret = why(res, "%llu records walked back of %llu", (unsigned long long)c.idx,
			  (unsigned long long)n);
	else if (res->walked_blocks != b.blocks_written)
		ret = why(res, "walker accepted %llu blocks of %llu",
			  (unsigned long long)res->walked_blocks,
			  (unsigned long long)b.blocks_written);
out:
	free(s.data);
	free(s.written);
	free(dinode);
	return ret;
}

int rt_replay_main(int argc, char **argv, const struct rt_replay *r)
{
	uint64_t rng = 0x13198a2e03707344ull;
	unsigned long iters = 2000;
	uint8_t *in = malloc(r->insize);
	char why[768];

	if (!in)
		return 1;
	if (argc > 2 && strcmp(argv[1], "--seeds") == 0) {
		for (unsigned v = 0; v < 16; v++) {
			char path[4096];
			FILE *f;

			r->random_input(&rng, in, r->insize);
			in[0] = (uint8_t)(v % r->variants);
			snprintf(path, sizeof(path), "%s/seed-%02u", argv[2], v);
			f = fopen(path, "wb");
			if (!f || fwrite(in, 1, r->insize, f) != r->insize) {
				perror(path);
				free(in);
				return 1;
			}
			fclose(f);
		}
		free(in);
		return 0;
	}
	if (argc > 1)
		iters = strtoul(argv[1], NULL, 10);
	for (unsigned long i = 0; i < iters; i++) {
		r->random_input(&rng, in, r->insize);
		if (r->run_one(in, r->insize, why, sizeof(why))) {
			printf("1..1\nnot ok 1 - %s %lu: %s\n", r->one, i, why);
			free(in);
			return 1;
		}
	}
	printf("1..1\nok 1 - %lu %s\n", iters, r->all);
	free(in);
	return 0;
}
