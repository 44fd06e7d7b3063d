// SPDX-License-Identifier: GPL-2.0
/*
 * The last phase of the scan: with every scan's claims in the model, each
 * AG's ownership extents are sorted once and swept.  Blocks claimed by
 * more than one owner are block.dup (free space and a btree block, two
 * btrees, a file and the log...), except data-fork blocks shared by
 * reflink, which the refcount comparison judges instead.  Blocks nobody
 * claims are leaked (block.leak), reported only when every inode's forks
 * were loaded.  Then the AG's rmap and refcount btrees are compared with
 * the model (phase_rmap.c).  AGs run on the worker pool.
 */
#include <errno.h>

#include "scan/scan.h"

#define DUP_REPORTS 20   /* per AG, then one summary */
#define LEAK_REPORTS 20

struct dup_ctx {
	struct scan_ctx *cx;
	size_t n;
};

static void on_overlap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len,
		       const struct model_ext *a, const struct model_ext *b)
{
	struct dup_ctx *d = priv;
	const struct fs_geom *g = &d->cx->fs->g;
	char found[64];

	/*
	 * Inode chunks share a block when a block holds more inodes than a
	 * chunk (64 KiB blocks), and a sparse chunk's runs may share one:
	 * neither is a double claim.
	 */
	if (a->cls == MC_INODES && b->cls == MC_INODES &&
	    (a->owner == b->owner || g->inopblock > XFS_INODES_PER_CHUNK))
		return;
	/* reflink: data blocks may be shared; the refcount btree must say so (phase_rmap.c) */
	if (g->reflink && a->cls == MC_DATA && b->cls == MC_DATA)
		return;
	if (++d->n > DUP_REPORTS)
		return;
	snprintf(found, sizeof(found), "%s and %s", model_class_name(a->cls),
		 model_class_name(b->cls));
	fs_report(d->cx->fl, FS_C_BLOCK_DUP, agno, (int64_t)fs_agbno_to_daddr(g, agno, agbno),
		  b->owner && b->cls >= MC_DATA && b->cls <= MC_BMBT ? (int64_t)b->owner : FS_NONE,
		  "owner", "one owner", found,
		  "blocks %u..%u are claimed by %s (extent %u+%u, owner %llu) and by %s (extent "
		  "%u+%u, owner %llu)", agbno, agbno + len - 1, model_class_name(a->cls), a->agbno,
		  a->len, (unsigned long long)a->owner, model_class_name(b->cls), b->agbno, b->len,
		  (unsigned long long)b->owner);
}

struct leak_ctx {
	struct scan_ctx *cx;
	size_t n;
	uint64_t blocks;
};

static void on_gap(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct leak_ctx *l = priv;
	const struct fs_geom *g = &l->cx->fs->g;

	l->blocks += len;
	if (++l->n > LEAK_REPORTS)
		return;
	fs_report(l->cx->fl, FS_C_BLOCK_LEAK, agno, (int64_t)fs_agbno_to_daddr(g, agno, agbno), FS_NONE,
		  "owner", "free space or an owner", "none",
		  "blocks %u..%u (%u) are neither free nor used by anything", agbno,
		  agbno + len - 1, len);
}

static int owners_ag(void *priv, fs_agnumber_t agno, unsigned worker)
{
	struct scan_ctx *cx = priv;
	struct dup_ctx d = { .cx = cx };
	struct leak_ctx l = { .cx = cx };
	struct scan_rmap_ag *rs = NULL;
	int err;

	(void)worker;
	if (scan_ag_unread(cx, agno)) {
		err = 0;	/* past the device's end: nothing read, nothing claimed */
		goto out;
	}
	err = scan_rmap_prepare(cx, agno, &rs);
	if (!err)
		err = model_ag_finish(cx->model, agno);
	if (err)
		goto out;
	model_ag_overlaps(cx->model, agno, on_overlap, &d);
	if (d.n > DUP_REPORTS)
		fs_report(cx->fl, FS_C_BLOCK_DUP, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more multiply claimed block ranges", d.n - DUP_REPORTS);
	if (cx->forks_complete) {
		model_ag_gaps(cx->model, agno, on_gap, &l);
		if (l.n > LEAK_REPORTS)
			fs_report(cx->fl, FS_C_BLOCK_LEAK, agno, FS_NONE, FS_NONE, "owner", NULL,
				  FS_U(l.blocks), "%zu more leaked block ranges (%llu blocks leaked "
				  "in this AG in all)", l.n - LEAK_REPORTS,
				  (unsigned long long)l.blocks);
	}
	err = scan_rmap_compare(cx, agno, rs);
out:
	scan_rmap_free(rs);
	model_ag_release(cx->model, agno);	/* spilling: the AG's extents leave memory */
	scan_progress_add(cx, 1);
	return err;
}

int scan_phase_owners(struct scan_ctx *cx)
{
	return scan_each_ag(cx, "owners", owners_ag, cx);
}
