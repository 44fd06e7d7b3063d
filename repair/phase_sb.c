// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 3 (run.c), superblocks.  The geometry the scan used is the
 * primary's, or (primary unusable) the one a majority of secondaries agree
 * on (libfs/fs.c).  Planned here: the primary is rewritten when it was
 * unusable, has findings of its own or its counters are off (the counters
 * are filled in by phase_counters.c); every secondary with findings is
 * rewritten as a copy of the primary.  The buffers themselves are made in
 * commit.c, since the primary's counters are known only at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/build/encode.h"
#include "libfs/fs.h"
#include "libfs/format/sb.h"
#include "repair/phase_sb.h"
#include "repair/rules.h"

/* Findings the primary would still get (its CRC set as it will be written). */
static int primary_findings(const struct fs_geom *g, const struct xfs_sb *sb)
{
	unsigned char buf[XFS_MAX_SECTORSIZE] = { 0 };
	struct fs_findings scratch;
	enum fs_sb_state st;
	int n;

	fs_enc_sb(buf, g->sectsize, sb);
	fs_findings_init(&scratch);
	st = fs_sb_verify(buf, sizeof(buf), 0, &scratch);
	n = (int)scratch.n + (st != FS_SB_OK && st != FS_SB_DAMAGED);
	fs_findings_free(&scratch);
	return n;
}

static bool placed(enum fs_sb_field field)
{
	return field == FS_SBF_rootino || field == FS_SBF_rbmino || field == FS_SBF_rsumino;
}

/* The primary as it is being mended, and the secondary its fields are taken from. */
struct sb_fields {
	struct xfs_sb *trial;
	const struct xfs_sb *from;
};

int repair_sb_plan_field(struct repair_ctx *rx, const struct fs_finding *f, void *fields)
{
	struct sb_fields *sf = fields;
	enum fs_sb_field field = (enum fs_sb_field)f->val.field;

	/*
	 * from agrees with the vote in every shared field; the root and
	 * realtime inodes the geometry placed are not taken from it
	 * (secondaries hold them stale or null)
	 */
	if (f->ag == 0 && field != FS_SBF_NONE &&
	    !(placed(field) && !fs_sb_field_equal(&rx->fs->sb, &rx->fs->sb_disk, field)))
		fs_sb_copy_field(sf->trial, sf->from, field);
	return 0;
}

/*
 * A primary the scan could use but which has findings of its own: each
 * field a finding names is taken from the secondary the majority agrees
 * with (the counters are recomputed later anyway).  If the result still
 * fails its rules, the whole secondary is taken, with the fields only the
 * primary keeps (the counters, quota inodes) recomputed or cleared.
 */
static int mend_primary(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xfs_sb sec, trial = rx->newsb;
	int err = fs_sb_majority_copy(rx->fs, &sec);

	if (err == -ENOENT)
		return 0;	/* nothing to take values from: the verifier will say */
	if (err)
		return err;
	repair_plan_findings(rx, REPAIR_PLAN_SB_FIELDS,
			     &(struct sb_fields){ .trial = &trial, .from = &sec });
	trial.sb_inprogress = 0;
	if (primary_findings(g, &trial)) {
		trial = sec;
		trial.sb_inprogress = 0;
		trial.sb_uquotino = trial.sb_gquotino = trial.sb_pquotino = NULLFSINO;
		trial.sb_qflags = 0;
		/* what the vote and the geometry chose stands (the root inode first) */
		fs_sb_copy_changed(&trial, &rx->fs->sb, &rx->fs->sb_disk);
		trial.sb_rootino = rx->fs->sb.sb_rootino;
		trial.sb_rbmino = rx->fs->sb.sb_rbmino;
		trial.sb_rsumino = rx->fs->sb.sb_rsumino;
	}
	rx->newsb = trial;
	return 0;
}

int repair_phase_sb(struct repair_ctx *rx)
{
	const struct fs_geom *g = &rx->fs->g;

	rx->rewrite_sb = calloc(g->agcount, sizeof(*rx->rewrite_sb));
	if (!rx->rewrite_sb)
		return -ENOMEM;
	rx->newsb = rx->fs->sb;
	if (rx->fs->sb_source != 0)
		rx->rewrite_primary = true;
	/* each copy with findings of its own */
	repair_plan_findings(rx, REPAIR_PLAN_SB, NULL);
	/* what mkfs leaves in progress, the kernel refuses; the rewrite says done */
	rx->newsb.sb_inprogress = 0;
	if (rx->rewrite_primary && rx->fs->sb_source == 0) {
		int err = mend_primary(rx);

		if (err)
			return err;
	}
	/*
	 * Secondaries carry no realtime inode numbers (mkfs writes them before
	 * allocating those inodes): a primary made from one gets the numbers
	 * the geometry places after the root (fs_geom_derive's one rule).
	 */
	if (rx->newsb.sb_rbmino == NULLFSINO || !fs_ino_valid(g, rx->newsb.sb_rbmino))
		rx->newsb.sb_rbmino = g->rbmino;
	if (rx->newsb.sb_rsumino == NULLFSINO || !fs_ino_valid(g, rx->newsb.sb_rsumino))
		rx->newsb.sb_rsumino = g->rsumino;
	for (fs_agnumber_t a = 1; a < g->agcount; a++)
		if (rx->rewrite_sb[a])
			rx->planned_writes = true;
	if (rx->rewrite_primary)
		rx->planned_writes = true;
	return 0;
}
