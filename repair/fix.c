// SPDX-License-Identifier: GPL-2.0
/*
 * The decision table, like e2fsck's fix_problem(): every finding's row in
 * the findings table names its fix action (enum fs_fix), and here each
 * action has one row holding, side by side, the rules that plan it (which
 * step takes findings of that action, and what it makes of one) and the
 * rule that says whether the plan the phases built covers one (its AG
 * rebuilt, its superblock copy rewritten, its inode cleared or mended,
 * the log reset).  The phases walk their findings through the table
 * (repair_plan_findings, rules.h) and the decide step asks every row's
 * covered rule; nothing else in repair/ looks at a finding's action.  A
 * rule that reads a phase's own state lives in that phase's file and is
 * named here.  Also here, once: the freed-inode rule, the superblock's
 * share of the AG findings, and the action a report line names.
 */
#include <stdlib.h>

#include "repair/fix.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/phase_quota.h"
#include "repair/phase_sb.h"
#include "repair/pptrs.h"
#include "scan/links.h"

int64_t repair_finding_ag(const struct repair_ctx *rx, const struct fs_finding *f)
{
	const struct fs_geom *g = &rx->fs->g;

	if (f->ag >= 0 && f->ag < g->agcount)
		return f->ag;
	if (f->daddr >= 0) {
		uint64_t agbytes = (uint64_t)g->agblocks << g->blocklog;
		uint64_t a = ((uint64_t)f->daddr << FS_BBSHIFT) / agbytes;

		if (a < g->agcount)
			return (int64_t)a;
	}
	if (f->ino >= 0 && fs_ino_valid(g, (fs_ino_t)f->ino))
		return fs_ino_to_agno(g, (fs_ino_t)f->ino);
	return FS_NONE;
}

/*
 * The AG whose rebuild settles a header or btree finding; FS_NONE when
 * the superblock's counters do instead: no AG, or a finding of that kind
 * about the primary superblock (its free counts, say), which is no AG's.
 */
static int64_t rebuilt_ag(const struct repair_ctx *rx, const struct fs_finding *f)
{
	if (f->ag == 0 && f->def->obj == FS_OBJ_SB)
		return FS_NONE;
	return repair_finding_ag(rx, f);
}

static uint64_t slot_of(const struct repair_ctx *rx, int64_t ino)
{
	if (ino < 0 || !rx->verdict)
		return UINT64_MAX;
	return scan_links_slot(rx->sx, (fs_ino_t)ino);
}

static uint8_t inode_verdict(const struct repair_ctx *rx, int64_t ino)
{
	uint64_t s = slot_of(rx, ino);

	return s == UINT64_MAX ? 0 : rx->verdict[s];
}

/* ---- the plan rules that read only the plan ---- */

static int plan_sb_copy(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	(void)arg;
	if (f->ag > 0 && f->ag < rx->fs->g.agcount)
		rx->rewrite_sb[f->ag] = true;
	else
		rx->rewrite_primary = true;
	return 0;
}

static int plan_ag_rebuild(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	int64_t ag = rebuilt_ag(rx, f);

	(void)arg;
	if (ag == FS_NONE)
		rx->counters = true;
	else
		rx->ag[ag].rebuild = true;
	return 0;
}

/* Two AG structures claim a block (no inode): the AG rebuild settles it. */
static int plan_fork_ag(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	return f->ino < 0 ? plan_ag_rebuild(rx, f, arg) : 0;
}

static int plan_empty_unlinked(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	(void)f;
	(void)arg;
	rx->empty_unlinked = true;	/* phase_inodes.c frees or takes off what they hold */
	return 0;
}

/* The lists emptied: the AGI gets empty buckets. */
static int plan_unlinked_ag(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	return rx->empty_unlinked ? plan_ag_rebuild(rx, f, arg) : 0;
}

/* A finding about realtime inode *arg: it is made again (phase_rt.c). */
static int plan_rt_findings(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	(void)rx;
	return f->ino == (int64_t)*(const fs_ino_t *)arg;
}

/* A report-only finding about an inode: one the scan could not read. */
static int plan_unread_inode(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	(void)rx;
	(void)arg;
	return f->ino >= 0;
}

/* ---- the covered rules ---- */

static bool covered_never(const struct repair_ctx *rx, const struct fs_finding *f)
{
	(void)rx;
	(void)f;
	return false;
}

static bool covered_log(const struct repair_ctx *rx, const struct fs_finding *f)
{
	(void)f;
	return rx->o->zero_log;
}

static bool covered_sb_copy(const struct repair_ctx *rx, const struct fs_finding *f)
{
	if (f->ag > 0 && f->ag < rx->fs->g.agcount)
		return rx->rewrite_sb[f->ag];
	return rx->rewrite_primary;
}

static bool covered_ag_rebuild(const struct repair_ctx *rx, const struct fs_finding *f)
{
	int64_t ag = rebuilt_ag(rx, f);

	if (ag == FS_NONE)
		return rx->counters && rx->rewrite_primary;
	return rx->ag[ag].rebuild;
}

/* cleared, or mended (a bad magic reset, the CRC re-stamped): phase_inodes.c */
static bool covered_inode_core(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return (inode_verdict(rx, f->ino) & (RV_CLEAR | RV_FIELDS)) != 0;
}

static bool covered_inode_field(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return (inode_verdict(rx, f->ino) & (RV_CLEAR | RV_FIELDS | RV_REFLINK)) != 0;
}

static bool covered_fork(const struct repair_ctx *rx, const struct fs_finding *f)
{
	int64_t ag = repair_finding_ag(rx, f);

	/* without an inode, two AG structures claim a block: the AG rebuild settles it */
	if (f->ino < 0)
		return ag != FS_NONE && rx->ag[ag].rebuild;
	/* or the fork's counts were mended from its records (phase_inodes.c) */
	return (inode_verdict(rx, f->ino) & (RV_CLEAR | RV_ATTR_RESET | RV_FIELDS)) != 0;
}

/* a directory's blocks rebuilt, or (a DA node of the xattrs) the attr fork */
static bool covered_dir(const struct repair_ctx *rx, const struct fs_finding *f)
{
	uint64_t s = slot_of(rx, f->ino);

	return s != UINT64_MAX && (repair_names_built(rx, s) ||
				   (rx->verdict[s] & (RV_ATTR_RESET | RV_ATTR_NEW)));
}

/* its other parents rebuilt without it, its link count set to the references counted */
static bool covered_names_planned(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return slot_of(rx, f->ino) != UINT64_MAX && rx->nm != NULL;
}

/* named (in lost+found or not) */
static bool covered_connect(const struct repair_ctx *rx, const struct fs_finding *f)
{
	uint64_t s = slot_of(rx, f->ino);

	return s != UINT64_MAX && repair_names_reached(rx, s);
}

/* the attr fork rebuilt (phase_xattrs.c) or removed */
static bool covered_xattr(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return (inode_verdict(rx, f->ino) & (RV_ATTR_RESET | RV_ATTR_NEW)) != 0;
}

static bool covered_unlinked(const struct repair_ctx *rx, const struct fs_finding *f)
{
	int64_t ag = repair_finding_ag(rx, f);

	return rx->empty_unlinked && ag != FS_NONE && rx->ag && rx->ag[ag].rebuild;
}

/* its quota inode no longer named, or its dquot block rewritten (phase_quota.c) */
static bool covered_quota(const struct repair_ctx *rx, const struct fs_finding *f)
{
	for (int t = 0; t < 3; t++)
		if (rx->quota_unhooked[t] && (int64_t)rx->quota_unhooked[t] == f->ino)
			return true;
	for (size_t k = 0; k < rx->ndquot; k++)
		if (rx->dquot_blocks[k] == (fs_daddr_t)f->daddr)
			return true;
	return false;
}

/* the bitmap, summary or free extent count rewritten, or an inode made again (phase_rt.c) */
static bool covered_rt(const struct repair_ctx *rx, const struct fs_finding *f)
{
	const struct xfs_sb *sb = &rx->fs->sb;

	if (f->ino >= 0 && ((f->ino == (int64_t)sb->sb_rbmino && rx->rt_bitmap_remade) ||
			    (f->ino == (int64_t)sb->sb_rsumino && rx->rt_summary_remade)))
		return true;	/* made again in place */
	if (!rx->sx->rt.judged)
		return false;	/* the realtime inodes themselves are not what they should be */
	if (f->ino == (int64_t)sb->sb_rbmino)
		return rx->rt_bitmap_fixed;
	if (f->ino == (int64_t)sb->sb_rsumino)
		return rx->rt_summary_fixed;
	return f->ino < 0 && rx->rt_frextents_fixed;
}

/* its parent pointers rewritten from the directory entries (pptrs.c, phase_xattrs.c) */
static bool covered_pptr(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return repair_pptrs_rewritten(rx, f->ino);
}

/* ---- the table ---- */

#define RULE(step, fn) { REPAIR_PLAN_##step, fn }

const struct repair_action repair_actions[FS_FIX_NR] = {
	/* report only; place.c asks whether one names an inode the scan could not read */
	[FS_FIX_NONE] = { FS_FIX_NONE, REPAIR_FREED_GONE,
		{ RULE(MODEL, plan_unread_inode) }, covered_never },
	[FS_FIX_SB] = { FS_FIX_SB, REPAIR_FREED_GONE,
		{ RULE(SB, plan_sb_copy), RULE(SB_FIELDS, repair_sb_plan_field) },
		covered_sb_copy },
	/* and wholesale: phase_rebuild.c rebuilds every AG whose owners change */
	[FS_FIX_AGHDR] = { FS_FIX_AGHDR, REPAIR_FREED_GONE,
		{ RULE(AGS, plan_ag_rebuild) }, covered_ag_rebuild },
	[FS_FIX_AG_BTREES] = { FS_FIX_AG_BTREES, REPAIR_FREED_GONE,
		{ RULE(INODES, repair_inodes_plan_unbacked), RULE(AGS, plan_ag_rebuild) },
		covered_ag_rebuild },
	[FS_FIX_INODE_CLEAR] = { FS_FIX_INODE_CLEAR, REPAIR_FREED_GONE,
		{ RULE(INODES, repair_inodes_plan_clear) }, covered_inode_core },
	[FS_FIX_INODE_FIELD] = { FS_FIX_INODE_FIELD, REPAIR_FREED_GONE,
		{ RULE(INODES, repair_inodes_plan_field) }, covered_inode_field },
	[FS_FIX_INODE_CRC] = { FS_FIX_INODE_CRC, REPAIR_FREED_GONE,
		{ RULE(INODES, repair_inodes_plan_crc) }, covered_inode_core },
	[FS_FIX_FORK] = { FS_FIX_FORK, REPAIR_FREED_GONE,
		{ RULE(INODES, repair_inodes_plan_fork), RULE(AGS, plan_fork_ag) }, covered_fork },
	[FS_FIX_DIR] = { FS_FIX_DIR, REPAIR_FREED_NAMES,
		{ RULE(INODES, repair_inodes_plan_attr_node), RULE(NAMES, repair_names_plan_dir) },
		covered_dir },
	/* wholesale: phase_names.c chooses each directory's parent from the graph */
	[FS_FIX_PARENTS] = { FS_FIX_PARENTS, REPAIR_FREED_NAMES, { { 0 } },
		covered_names_planned },
	/* wholesale: phase_names.c sets every link count to the references counted */
	[FS_FIX_NLINK] = { FS_FIX_NLINK, REPAIR_FREED_NAMES, { { 0 } }, covered_names_planned },
	/* wholesale: phase_names.c names what the root does not reach in lost+found */
	[FS_FIX_CONNECT] = { FS_FIX_CONNECT, REPAIR_FREED_NAMES, { { 0 } }, covered_connect },
	/* phase_xattrs.c then salvages or removes the forks so marked */
	[FS_FIX_XATTR] = { FS_FIX_XATTR, REPAIR_FREED_OWN,
		{ RULE(INODES, repair_inodes_plan_xattr) }, covered_xattr },
	/* a symlink mended in place is not claimed fixed: the verify scan says so */
	[FS_FIX_SYMLINK] = { FS_FIX_SYMLINK, REPAIR_FREED_OWN,
		{ RULE(INODES, repair_inodes_plan_symlink) }, covered_never },
	[FS_FIX_UNLINKED] = { FS_FIX_UNLINKED, REPAIR_FREED_APART,
		{ RULE(INODES, plan_empty_unlinked), RULE(AGS, plan_unlinked_ag) },
		covered_unlinked },
	/* and wholesale: phase_quota.c has the kernel count again when blocks change owner */
	[FS_FIX_QUOTA] = { FS_FIX_QUOTA, REPAIR_FREED_APART,
		{ RULE(QUOTA, repair_quota_plan_block) }, covered_quota },
	/* and wholesale: phase_rt.c rewrites the bitmap and summary the scan computed */
	[FS_FIX_RT] = { FS_FIX_RT, REPAIR_FREED_APART,
		{ RULE(RT, plan_rt_findings) }, covered_rt },
	/* before the plan: log.c replays it, or -L (log.c's repair_zero_log) throws it away */
	[FS_FIX_LOG] = { FS_FIX_LOG, REPAIR_FREED_GONE, { { 0 } }, covered_log },
	/* and wholesale: every file whose entries the namespace plan changes (phase_names.c) */
	[FS_FIX_PPTR] = { FS_FIX_PPTR, REPAIR_FREED_GONE,
		{ RULE(NAMES, repair_pptrs_plan) }, covered_pptr },
};

static const struct repair_action *action_of(const struct fs_finding *f)
{
	return (unsigned)f->def->fix < FS_FIX_NR ? &repair_actions[f->def->fix] :
						   &repair_actions[FS_FIX_NONE];
}

int repair_plan_findings(struct repair_ctx *rx, enum repair_plan_step step, void *arg)
{
	for (size_t i = 0; i < rx->fl->n; i++) {
		const struct fs_finding *f = &rx->fl->v[i];
		const struct repair_action *a = action_of(f);

		for (size_t k = 0; k < REPAIR_PLAN_RULES; k++) {
			int r;

			if (!a->plan[k].plan || a->plan[k].step != step)
				continue;
			r = a->plan[k].plan(rx, f, arg);
			if (r)
				return r;
		}
	}
	return 0;
}

/* ---- the decision ---- */

bool repair_finding_covered(const struct repair_ctx *rx, const struct fs_finding *f)
{
	const struct repair_action *a = action_of(f);
	uint8_t v = inode_verdict(rx, f->ino);

	/*
	 * Whatever is wrong with an inode that is freed (or made anew, as a
	 * lost root is) is gone with it; not what its names are about, which
	 * changes only when the directories that name it do.
	 */
	switch (a->freed) {
	case REPAIR_FREED_GONE:
		if (v & (RV_CLEAR | RV_NEW))
			return true;
		break;
	case REPAIR_FREED_OWN:
		if (v & RV_CLEAR)
			return true;
		break;
	case REPAIR_FREED_NAMES:
		if (v & RV_CLEAR)
			return rx->nm != NULL;
		break;
	case REPAIR_FREED_APART:
		break;
	}
	return a->covered && a->covered(rx, f);
}

size_t repair_decide(struct repair_ctx *rx)
{
	size_t left = 0;

	free(rx->fixed);
	rx->fixed = calloc(rx->fl->n ? rx->fl->n : 1, sizeof(*rx->fixed));
	if (!rx->fixed)
		return rx->fl->n;
	for (size_t i = 0; i < rx->fl->n; i++) {
		const struct fs_finding *f = &rx->fl->v[i];

		rx->fixed[i] = repair_finding_covered(rx, f);
		if (!rx->fixed[i] && f->def->sev != FS_SEV_INFO)
			left++;
	}
	return left + rx->fl->dropped;
}

const char *repair_action_taken(const struct repair_ctx *rx, const struct fs_finding *f)
{
	uint8_t v;

	/* once the plan is judged: as it was when its scan's state was freed (verify.c) */
	if (rx->kept.action && f >= rx->fl->v && f < rx->fl->v + rx->fl->n)
		return rx->kept.action[f - rx->fl->v];
	v = inode_verdict(rx, f->ino);

	/* any inode finding settled by clearing the inode */
	if (f->ino >= 0 && (v & RV_CLEAR) && action_of(f)->freed == REPAIR_FREED_GONE)
		return fs_fix_name(FS_FIX_INODE_CLEAR);
	/* an orphan named again from its parent pointer, not moved to lost+found */
	if (f->def->fix == FS_FIX_CONNECT && repair_names_restored_slot(rx, slot_of(rx, f->ino)))
		return "restored by name";
	/*
	 * reached without a move of its own: an orphan only because the scan
	 * could not read its directory (a core the inode step mended, walked
	 * since), or inside a directory moved whole
	 */
	if (f->def->fix == FS_FIX_CONNECT && repair_names_reached(rx, slot_of(rx, f->ino)) &&
	    !repair_names_moved_slot(rx, slot_of(rx, f->ino)))
		return "kept in its directory";
	/* a row that would clear an inode whose repair mended it (a bad magic reset) */
	if (f->def->fix == FS_FIX_INODE_CLEAR && !(v & RV_CLEAR))
		return fs_fix_name(FS_FIX_INODE_FIELD);
	return fs_fix_name(f->def->fix);
}

bool repair_log_thrown_away(const struct repair_ctx *rx, const struct fs_finding *f)
{
	return f->def->fix == FS_FIX_LOG && rx->o->zero_log;
}
