// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 4 of check: every inode of every chunk the inode btree lists.  The
 * chunks' inode clusters of an AG are handed to readahead in one list, so
 * dense chunk runs arrive as 2 MiB windows chopped into cached clusters;
 * then each inode is verified through the verifier table (v3 core rules)
 * and its state on disk (mode 0 = free) is compared with the inode btree's
 * free mask, which the model keeps for later phases as seen_free.
 */
#include <errno.h>
#include <stdlib.h>

#include "check/check.h"
#include "check/links.h"
#include "libfs/endian.h"
#include "libfs/inode.h"
#include "libfs/workq.h"

/* Inode clusters: the unit the kernel reads inodes in, the unit cached here. */
static fs_agblock_t unit_start(const struct fs_geom *g, fs_agblock_t chunk_agbno, fs_agblock_t agbno)
{
	uint32_t bpc = g->blocks_per_cluster ? g->blocks_per_cluster : 1;

	return chunk_agbno + (agbno - chunk_agbno) / bpc * bpc;
}

static uint32_t unit_blocks(const struct fs_geom *g, fs_agnumber_t agno, fs_agblock_t start)
{
	uint32_t bpc = g->blocks_per_cluster ? g->blocks_per_cluster : 1;
	uint32_t aglen = fs_ag_blocks(g, agno);

	return start + bpc <= aglen ? bpc : aglen - start;
}

static bool in_hole(const struct model_ichunk *c, uint32_t i)
{
	return c->holemask & (1u << (i / XFS_INODES_PER_HOLEMASK_BIT));
}

/* One readahead list for the AG's inode clusters, in chunk order. */
static void readahead_chunks(struct check_ctx *cx, fs_agnumber_t agno, unsigned worker,
			     const struct model_ichunk *ic, size_t n)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ra_stats st = { 0 };
	struct fs_ra_extent *ext;
	size_t m = 0, cap = n * 2 + 8;

	ext = malloc(cap * sizeof(*ext));
	if (!ext)
		return;
	for (size_t k = 0; k < n; k++) {
		fs_agblock_t chunk_agbno = fs_agino_to_agbno(g, ic[k].startino), last = NULLAGBLOCK;

		if (!(ic[k].where & MODEL_IC_INOBT))
			continue;
		for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK; i++) {
			fs_agblock_t u;

			if (in_hole(&ic[k], i))
				continue;
			u = unit_start(g, chunk_agbno, fs_agino_to_agbno(g, ic[k].startino + i));
			if (u == last)
				continue;
			last = u;
			if (m == cap) {
				struct fs_ra_extent *nv = realloc(ext, cap * 2 * sizeof(*nv));
				if (!nv)
					goto out;
				ext = nv;
				cap *= 2;
			}
			ext[m++] = (struct fs_ra_extent){ fs_agbno_to_daddr(g, agno, u),
							  unit_blocks(g, agno, u) << g->blocklog };
		}
	}
	if (m && fs_readahead(cx->cache, cx->ioq[worker], ext, m, NULL, &st) == 0) {
		pthread_mutex_lock(&cx->ra_lock);
		cx->ra.extents += st.extents;
		cx->ra.cached += st.cached;
		cx->ra.windows += st.windows;
		cx->ra.exact += st.exact;
		cx->ra.bytes_read += st.bytes_read;
		cx->ra.bytes_kept += st.bytes_kept;
		cx->ra.failed += st.failed;
		pthread_mutex_unlock(&cx->ra_lock);
	}
out:
	free(ext);
}

static int check_chunk(struct check_ctx *cx, fs_agnumber_t agno, struct model_ichunk *c,
		       uint64_t *checked)
{
	const struct fs_geom *g = &cx->fs->g;
	fs_agblock_t chunk_agbno = fs_agino_to_agbno(g, c->startino), cur = NULLAGBLOCK;
	struct fs_buf *b = NULL;
	struct fs_vctx vc = { .g = g, .fl = cx->fl, .agno = agno,
			      .have_log_head = cx->fs->have_log_head, .head_lsn = cx->fs->log_head_lsn };

	for (uint32_t i = 0; i < XFS_INODES_PER_CHUNK; i++) {
		fs_agino_t agino = c->startino + i;
		fs_agblock_t agbno = fs_agino_to_agbno(g, agino);
		fs_agblock_t u = unit_start(g, chunk_agbno, agbno);
		fs_ino_t ino = fs_agino_to_ino(g, agno, agino);
		const unsigned char *dip;
		size_t off;
		bool free_disk, free_btree;
		uint16_t mode;

		if (in_hole(c, i))
			continue;
		if (u != cur) {
			fs_buf_put(cx->cache, b);
			b = NULL;
			cur = u;
			if (fs_cache_read(cx->cache, fs_agbno_to_daddr(g, agno, u),
					  unit_blocks(g, agno, u) << g->blocklog, &b)) {
				fs_report(cx->fl, "inode.unreadable", agno,
					  (int64_t)fs_agbno_to_daddr(g, agno, u), (int64_t)ino, NULL, NULL,
					  NULL, "inode cluster at AG block %u could not be read", u);
				b = NULL;
			}
		}
		if (!b)
			continue;
		off = ((size_t)(agbno - u) << g->blocklog) +
		      ((size_t)fs_agino_to_offset(g, agino) << g->inodelog);
		if (off + g->inodesize > b->len)
			continue;
		dip = b->data + off;
		vc.daddr = fs_agbno_to_daddr(g, agno, agbno);
		vc.ino = ino;
		check_links_note(cx, ino, dip, fs_verify(FS_MT_INODE, &vc, dip, g->inodesize) != 0);
		(*checked)++;
		mode = get_be16(dip + offsetof(struct xfs_dinode, di_mode));
		free_disk = mode == 0;
		free_btree = c->ir_free & (1ull << i);
		c->seen_mask |= 1ull << i;
		if (free_disk)
			c->seen_free |= 1ull << i;
		if (free_disk && !free_btree)
			fs_report(cx->fl, "inode.free", agno, (int64_t)vc.daddr, (int64_t)ino, "di_mode",
				  "an allocated inode", "0 (free)",
				  "inode %llu is allocated in the inode btree but free on disk",
				  (unsigned long long)ino);
		else if (!free_disk && free_btree)
			fs_report(cx->fl, "inobt.freemask", agno, (int64_t)vc.daddr, (int64_t)ino,
				  "ir_free", "bit clear (in use)", "bit set (free)",
				  "inode %llu is in use on disk (mode 0%o) but free in the inode btree",
				  (unsigned long long)ino, mode);
	}
	fs_buf_put(cx->cache, b);
	return 0;
}

int check_inode_get(struct check_ctx *cx, fs_agnumber_t agno, fs_agino_t agino, struct fs_buf **b,
		    size_t *off)
{
	const struct fs_geom *g = &cx->fs->g;
	struct model_ichunk *c = model_ichunk_find(cx->model, agno, agino);
	fs_agblock_t agbno = fs_agino_to_agbno(g, agino), u;
	int err;

	if (!c)
		return -ENOENT;
	u = unit_start(g, fs_agino_to_agbno(g, c->startino), agbno);
	err = fs_cache_read(cx->cache, fs_agbno_to_daddr(g, agno, u),
			    unit_blocks(g, agno, u) << g->blocklog, b);
	if (err)
		return err;
	*off = ((size_t)(agbno - u) << g->blocklog) +
	       ((size_t)fs_agino_to_offset(g, agino) << g->inodelog);
	if (*off + g->inodesize > (*b)->len) {
		fs_buf_put(cx->cache, *b);
		return -ERANGE;
	}
	return 0;
}

static int inodes_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct check_ctx *cx = priv;
	size_t n;
	const struct model_ichunk *ic = model_ag_ichunks(cx->model, agno, &n);
	uint64_t checked = 0;

	readahead_chunks(cx, agno, worker, ic, n);
	for (size_t k = 0; k < n; k++) {
		/* this AG's chunks belong to this worker alone */
		struct model_ichunk *c = (struct model_ichunk *)&ic[k];

		if (c->where & MODEL_IC_INOBT)
			check_chunk(cx, agno, c, &checked);
	}
	__atomic_add_fetch(&cx->inodes_checked, checked, __ATOMIC_RELAXED);
	check_progress_add(cx, 1);
	return 0;
}

int check_phase_inodes(struct check_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	struct fs_ag_workq_opts wo = {
		.threads = cx->workers, .ag_stride = cx->opts->ag_stride,
		.first_ag = 0, .ag_count = g->agcount,
	};
	int err;

	check_progress_phase(cx, "inodes", g->agcount);
	err = fs_ag_workq_run(&wo, inodes_ag, cx);
	check_progress_end(cx);
	return err;
}
