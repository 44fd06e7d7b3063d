// SPDX-License-Identifier: GPL-2.0
/*
 * The last phase of check: with every scan's claims in the model, each AG's
 * ownership extents are sorted once and swept for blocks claimed by more
 * than one owner (free space and a btree block, two btrees, a file and the
 * log...).  Leaked blocks (owned by nobody) need the inode scan's claims
 * too; they are reported once that scan exists.
 */
#include <errno.h>

#include "check/check.h"

#define DUP_REPORTS 20   /* per AG, then one summary */

struct dup_ctx {
	struct check_ctx *cx;
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
	if (++d->n > DUP_REPORTS)
		return;
	snprintf(found, sizeof(found), "%s and %s", model_class_name(a->cls),
		 model_class_name(b->cls));
	fs_report(d->cx->fl, "block.dup", agno, (int64_t)fs_agbno_to_daddr(g, agno, agbno), FS_NONE,
		  "owner", "one owner", found,
		  "blocks %u..%u are claimed by %s (extent %u+%u) and by %s (extent %u+%u)",
		  agbno, agbno + len - 1, model_class_name(a->cls), a->agbno, a->len,
		  model_class_name(b->cls), b->agbno, b->len);
}

int check_phase_owners(struct check_ctx *cx)
{
	for (fs_agnumber_t agno = 0; agno < cx->fs->g.agcount; agno++) {
		struct dup_ctx d = { .cx = cx };
		int err = model_ag_finish(cx->model, agno);

		if (err)
			return err;
		model_ag_overlaps(cx->model, agno, on_overlap, &d);
		if (d.n > DUP_REPORTS)
			fs_report(cx->fl, "block.dup", agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
				  "%zu more multiply claimed block ranges",
				  d.n - DUP_REPORTS);
	}
	return 0;
}
