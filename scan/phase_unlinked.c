// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 7 of the scan, after the links phase.  Per AG: the AGI unlinked
 * lists (every bucket's chain through di_next_unlinked: allocated inodes
 * with no links, each once, in the right bucket) and every allocated inode
 * with no links on one.  Then, once, the quota files (every dquot block)
 * and the realtime bitmap/summary inodes the superblock names.  Inodes are
 * read by cluster through the shared cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/ag.h"
#include "libfs/format/bmap.h"
#include "libfs/format/dquot.h"
#include "libfs/format/inode.h"
#include "libfs/util/u32set.h"

/* ---- reading inodes through the shared cache ---- */

/* One inode in its cluster buffer (a cluster read whole, as the inode scan reads them). */
struct ino_ref {
	struct fs_buf *b;
	const uint8_t *dip;
	fs_daddr_t daddr;          /* the inode's block */
};

static uint32_t cluster_blocks(const struct fs_geom *g)
{
	return g->blocks_per_cluster ? g->blocks_per_cluster : 1;
}

/* The inode agino of AG agno, whose chunk starts at chunk_start. */
static int read_inode(struct scan_ctx *cx, fs_agnumber_t agno, fs_agino_t chunk_start,
		      fs_agino_t agino, struct ino_ref *r)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_agblock_t chunk_agbno = fs_agino_to_agbno(g, chunk_start);
	fs_agblock_t agbno = fs_agino_to_agbno(g, agino);
	uint32_t bpc = cluster_blocks(g), aglen = fs_ag_blocks(g, agno), len;
	fs_agblock_t u;
	size_t off;
	int err;

	if (agbno < chunk_agbno || agbno >= aglen)
		return -ERANGE;
	u = chunk_agbno + (agbno - chunk_agbno) / bpc * bpc;
	len = u + bpc <= aglen ? bpc : aglen - u;
	err = fs_cache_read(cx->cache, fs_agbno_to_daddr(g, agno, u), len << g->blocklog, &r->b);
	if (err)
		return err;
	off = ((size_t)(agbno - u) << g->blocklog) +
	      ((size_t)fs_agino_to_offset(g, agino) << g->inodelog);
	if (off + g->inodesize > r->b->len) {
		fs_buf_put(cx->cache, r->b);
		return -ERANGE;
	}
	r->dip = r->b->data + off;
	r->daddr = fs_agbno_to_daddr(g, agno, agbno);
	return 0;
}

/* The inode verifier's verdict on an inode, its findings dropped (phase 4 reported them). */
static bool core_ok(struct scan_ctx *cx, fs_agnumber_t agno, fs_ino_t ino, const struct ino_ref *r)
{
	struct fs_findings scratch;
	struct fs_vctx c = {
		.g = &cx->fs->g, .agno = agno, .daddr = r->daddr, .ino = ino,
		.have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn,
	};
	int n;

	fs_findings_init(&scratch);
	c.fl = &scratch;
	n = fs_verify(FS_MT_INODE, &c, r->dip, cx->fs->g.inodesize);
	fs_findings_free(&scratch);
	return n == 0;
}

/* ---- the AGI unlinked lists, after the scan ---- */

static bool in_hole(const struct model_ichunk *c, uint32_t i)
{
	return c->holemask & (1u << (i / XFS_INODES_PER_HOLEMASK_BIT));
}

/* In use on disk as the inodes phase saw it. */
static bool inode_in_use(struct scan_ctx *cx, fs_agnumber_t agno, fs_agino_t agino,
			 const struct model_ichunk **chunk)
{
	const struct model_ichunk *c = model_ichunk_find(cx->model, agno, agino);
	uint32_t i;

	*chunk = c;
	if (!c || agino < c->startino || agino - c->startino >= XFS_INODES_PER_CHUNK)
		return false;
	i = agino - c->startino;
	return !in_hole(c, i) && (c->seen_mask & (1ull << i)) && !(c->seen_free & (1ull << i));
}

/* The AGI's unlinked buckets, each chain walked through di_next_unlinked. */
static void check_unlinked(struct scan_ctx *cx, fs_agnumber_t agno)
{
	const struct fs_geom *g = &cx->fs->g;
	const struct scan_links *l = cx->links;
	const struct model_ichunk *ic;
	size_t nic;
	struct fs_u32set on_list = { 0 };
	struct fs_buf *b;
	struct fs_agi agi;
	uint32_t used = 0;

	if (fs_cache_read(cx->cache, fs_ag_agi_offset(g, agno) >> FS_BBSHIFT, g->sectsize, &b))
		return;	/* phase 1 reported it */
	fs_agi_decode(b->data, &agi);
	fs_buf_put(cx->cache, b);
	if (agi.magic != XFS_AGI_MAGIC)
		return;
	/*
	 * With a clean log nothing frees what the lists hold (log recovery
	 * does): the inodes and their blocks are leaked, and xfs_repair -n
	 * reports every bucket in use.  With a dirty log (already reported
	 * first) the next mount's recovery processes them: not a finding.
	 */
	for (uint32_t bucket = 0; bucket < XFS_AGI_UNLINKED_BUCKETS; bucket++)
		if (agi.unlinked[bucket] != NULLAGINO)
			used++;
	if (used && !(cx->fs->have_log_head && !cx->fs->log_clean))
		fs_report(cx->fl, FS_C_UNLINKED_PENDING, agno, FS_NONE, FS_NONE, "agi_unlinked",
			  "no lists", FS_U(used), "AGI unlinked lists are in use in %u buckets: "
			  "their inodes are unlinked but were never freed", used);
	for (uint32_t bucket = 0; bucket < XFS_AGI_UNLINKED_BUCKETS; bucket++) {
		fs_agino_t agino = agi.unlinked[bucket];
		bool head = true;

		while (agino != NULLAGINO) {
			const struct model_ichunk *c;
			struct ino_ref r;
			struct fs_inode ip;
			fs_ino_t ino;
			int added;

			if (!fs_agino_valid(g, agno, agino))
				break;	/* phase 1 (bucket head) or the inode verifier (next) said so */
			ino = fs_agino_to_ino(g, agno, agino);
			added = fs_u32set_add(&on_list, agino);
			if (added < 0)
				break;
			if (added == 0) {
				fs_report(cx->fl, FS_C_UNLINKED_LOOP, agno, FS_NONE, (int64_t)ino,
					  "di_next_unlinked", NULL, FS_U(agino),
					  "AGI unlinked bucket %u reaches inode %llu a second time",
					  bucket, (unsigned long long)ino);
				break;
			}
			if (!inode_in_use(cx, agno, agino, &c)) {
				fs_report(cx->fl, head ? FS_C_UNLINKED_FREE : FS_C_UNLINKED_NEXT, agno, FS_NONE,
					  (int64_t)ino, head ? "agi_unlinked" : "di_next_unlinked",
					  "an allocated inode", FS_U(agino),
					  "AGI unlinked bucket %u lists inode %llu, which is not allocated",
					  bucket, (unsigned long long)ino);
				break;
			}
			if (agino % XFS_AGI_UNLINKED_BUCKETS != bucket)
				fs_report(cx->fl, FS_C_UNLINKED_BUCKET, agno, FS_NONE, (int64_t)ino,
					  "agi_unlinked", FS_U(agino % XFS_AGI_UNLINKED_BUCKETS),
					  FS_U(bucket), "inode %llu is on unlinked bucket %u, not %u",
					  (unsigned long long)ino, bucket,
					  agino % XFS_AGI_UNLINKED_BUCKETS);
			if (read_inode(cx, agno, c->startino, agino, &r))
				break;
			if (cx->links) {
				uint64_t slot = scan_links_slot(cx, ino);

				if (slot != UINT64_MAX)	/* this AG's slots are this worker's */
					cx->links->rec[slot].flags |= LR_ON_UNLINKED;
			}
			fs_inode_decode(r.dip, &ip);
			if (ip.nlink)
				fs_report(cx->fl, FS_C_UNLINKED_NLINK, agno, (int64_t)r.daddr, (int64_t)ino,
					  "di_nlink", "0", FS_U(ip.nlink),
					  "inode %llu is on unlinked bucket %u but has %u links",
					  (unsigned long long)ino, bucket, ip.nlink);
			agino = ip.next_unlinked;
			fs_buf_put(cx->cache, r.b);
			head = false;
		}
	}
	/* allocated inodes with no links must be on a list */
	ic = model_ag_ichunks(cx->model, agno, &nic);
	for (uint64_t slot = l ? l->ag_base[agno] : 0; l && slot < l->ag_base[agno + 1]; slot++) {
		const struct link_rec *lr = &l->rec[slot];
		uint64_t k = slot - l->ag_base[agno];
		fs_agino_t agino;

		if (!(lr->flags & LR_SEEN) || lr->nlink8 != 0 || k / XFS_INODES_PER_CHUNK >= nic)
			continue;
		agino = ic[k / XFS_INODES_PER_CHUNK].startino + (fs_agino_t)(k % XFS_INODES_PER_CHUNK);
		if (fs_u32set_has(&on_list, agino))
			continue;
		fs_report(cx->fl, FS_C_UNLINKED_ORPHAN, agno, FS_NONE,
			  (int64_t)fs_agino_to_ino(g, agno, agino), "di_nlink",
			  "on an unlinked list", "0 links, on no list",
			  "inode %llu has no links and is on no unlinked list",
			  (unsigned long long)fs_agino_to_ino(g, agno, agino));
	}
	fs_u32set_free(&on_list);
}

static int unlinked_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct scan_ctx *cx = priv;

	(void)worker;
	check_unlinked(cx, agno);
	scan_progress_add(cx, 1);
	return 0;
}

/* ---- quota and realtime metadata inodes ---- */

static bool sb_ino_set(uint64_t ino)
{
	return ino != 0 && ino != NULLFSINO;
}

/* Read the inode a superblock field names; false (reported) when it is not in use. */
static bool read_sb_inode(struct scan_ctx *cx, uint64_t ino, enum fs_code code, const char *field,
			  struct ino_ref *r, struct fs_inode *ip)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_agnumber_t agno = fs_ino_to_agno(g, ino);
	fs_agino_t agino = fs_ino_to_agino(g, ino);
	const struct model_ichunk *c;

	if (!fs_ino_valid(g, ino))
		return false;	/* the superblock rules report it */
	if (!inode_in_use(cx, agno, agino, &c)) {
		fs_report(cx->fl, code, agno, FS_NONE, (int64_t)ino, field, "an allocated inode",
			  FS_U(ino), "superblock %s names inode %llu, which is not in use", field,
			  (unsigned long long)ino);
		return false;
	}
	if (read_inode(cx, agno, c->startino, agino, r))
		return false;
	if (!core_ok(cx, agno, ino, r)) {
		fs_buf_put(cx->cache, r->b);
		return false;
	}
	fs_inode_decode(r->dip, ip);
	if (!S_ISREG(ip->mode)) {
		fs_report(cx->fl, code, agno, (int64_t)r->daddr, (int64_t)ino, "di_mode",
			  "a regular file", FS_X(ip->mode), "superblock %s inode %llu is not a "
			  "regular file", field, (unsigned long long)ino);
		fs_buf_put(cx->cache, r->b);
		return false;
	}
	return true;
}

static void check_quota_file(struct scan_ctx *cx, uint64_t ino, const char *field, uint8_t type)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_inode ip;
	struct ino_ref r;
	struct fs_bmap m;
	uint8_t *buf;

	if (!sb_ino_set(ino) || !read_sb_inode(cx, ino, FS_C_QUOTA_INODE, field, &r, &ip))
		return;
	if (scan_load_map(cx, r.dip, &ip, XFS_DATA_FORK, NULL, &m)) {
		fs_buf_put(cx->cache, r.b);
		return;
	}
	fs_buf_put(cx->cache, r.b);
	buf = malloc(g->blocksize);
	for (size_t i = 0; buf && i < m.n; i++) {
		const struct fs_bmap_ext *x = &m.ext[i];

		for (uint64_t b = 0; b < x->blockcount; b++) {
			fs_fsblock_t fsb = x->startblock + b;
			struct fs_vctx c;

			if (!fs_fsb_valid(g, fsb))
				break;
			if (x->unwritten)
				continue;	/* preallocated, never written */
			c = scan_vctx(cx, ino, fsb);
			if (scan_read_agblock(cx, c.agno, fs_fsb_to_agbno(g, fsb), buf)) {
				fs_report(cx->fl, FS_C_DQUOT_UNREADABLE, c.agno, (int64_t)c.daddr,
					  (int64_t)ino, NULL, NULL, NULL,
					  "quota file block could not be read");
				continue;
			}
			fs_dquot_block_verify(&c, buf, g->blocksize, x->startoff + b, type);
		}
	}
	free(buf);
	fs_bmap_free(&m);
}

/* A realtime inode as the geometry wants it; true with its data fork map in m. */
static bool check_rt_inode(struct scan_ctx *cx, uint64_t ino, const char *field, uint64_t want,
			   struct fs_bmap *m)
{
	struct fs_inode ip;
	struct ino_ref r;
	bool ok;

	if (!sb_ino_set(ino) || !read_sb_inode(cx, ino, FS_C_RT_INODE, field, &r, &ip))
		return false;
	ok = ip.size == want;
	if (!ok)
		fs_report(cx->fl, FS_C_RT_INODE, fs_ino_to_agno(&cx->fs->g, ino), (int64_t)r.daddr,
			  (int64_t)ino, "di_size", FS_U(want), FS_U(ip.size),
			  "superblock %s inode %llu size disagrees with the realtime geometry",
			  field, (unsigned long long)ino);
	else if (scan_load_map(cx, r.dip, &ip, XFS_DATA_FORK, NULL, m) || m->bad) {
		fs_bmap_free(m);
		ok = false;	/* the fork checks reported it */
	}
	fs_buf_put(cx->cache, r.b);
	return ok;
}

static int check_metadata_inodes(struct scan_ctx *cx)
{
	const struct xfs_sb *sb = &cx->fs->sb;
	const struct fs_geom *g = &cx->fs->g;
	struct fs_bmap bm, sum;
	bool bm_ok, sum_ok;
	uint64_t rsum;
	int err = 0;

	scan_rt_device(cx);
	check_quota_file(cx, sb->sb_uquotino, "uquotino", XFS_DQTYPE_USER);
	check_quota_file(cx, sb->sb_gquotino, "gquotino", XFS_DQTYPE_GROUP);
	check_quota_file(cx, sb->sb_pquotino, "pquotino", XFS_DQTYPE_PROJ);
	/* as xfs_repair: bitmap = rbmblocks blocks; summary = 4 bytes per level per bitmap block */
	rsum = (uint64_t)sizeof(xfs_suminfo_t) * (sb->sb_rextslog + 1u) * sb->sb_rbmblocks;
	rsum = (rsum + g->blocksize - 1) / g->blocksize * g->blocksize;
	bm_ok = check_rt_inode(cx, sb->sb_rbmino, "rbmino", (uint64_t)sb->sb_rbmblocks * g->blocksize,
			       &bm);
	sum_ok = check_rt_inode(cx, sb->sb_rsumino, "rsumino", rsum, &sum);
	if (bm_ok && sum_ok)
		err = scan_rt_check(cx, &bm, &sum);
	if (bm_ok)
		fs_bmap_free(&bm);
	if (sum_ok)
		fs_bmap_free(&sum);
	return err;
}

int scan_phase_unlinked(struct scan_ctx *cx)
{
	int err;

	err = scan_each_ag(cx, "unlinked lists", unlinked_ag, cx);
	if (err)
		return err;
	return check_metadata_inodes(cx);
}
