// SPDX-License-Identifier: GPL-2.0
/*
 * The one decision point, like e2fsck's fix_problem(): every finding's row
 * in the findings table names its fix action (enum fs_fix); here a finding
 * counts as fixed when the plan the phases built covers that action for
 * that object (its AG rebuilt, its superblock copy rewritten, its inode
 * cleared or mended, the log reset).  Nothing here compares code strings:
 * the table decides what kind of fix a finding needs, the plan decides
 * whether it is done.  The text and JSON reports come from the same flags.
 */
#include <stdlib.h>
#include <string.h>

#include "repair/fix.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/phase_rt.h"
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

static uint8_t inode_verdict(const struct repair_ctx *rx, int64_t ino)
{
	uint64_t slot;

	if (ino < 0 || !rx->verdict)
		return 0;
	slot = scan_links_slot(rx->sx, (fs_ino_t)ino);
	return slot == UINT64_MAX ? 0 : rx->verdict[slot];
}

/* Whether the plan covers this finding. */
static bool covered(const struct repair_ctx *rx, const struct fs_finding *f)
{
	int64_t ag = repair_finding_ag(rx, f);
	uint8_t v = inode_verdict(rx, f->ino);

	/*
	 * whatever is wrong with an inode that is freed (or made anew, as a
	 * lost root is) is gone with it (not who names it)
	 */
	if ((v & (RV_CLEAR | RV_NEW)) && !repair_fix_is_names(f->def->fix))
		return true;
	switch (f->def->fix) {
	case FS_FIX_NONE:
		return false;
	case FS_FIX_LOG:
		return rx->o->zero_log;
	case FS_FIX_SB:
		if (f->ag > 0 && f->ag < rx->fs->g.agcount)
			return rx->rewrite_sb[f->ag];
		return rx->rewrite_primary;
	case FS_FIX_AGHDR:
	case FS_FIX_AG_BTREES:
		if (ag == FS_NONE || (f->ag == 0 && f->def->obj == FS_OBJ_SB))
			return rx->counters && rx->rewrite_primary;
		return rx->ag[ag].rebuild;
	case FS_FIX_INODE_CLEAR:	/* cleared, or (a bad magic) reset: phase_inodes.c */
		return (v & (RV_CLEAR | RV_FIELDS)) != 0;
	case FS_FIX_INODE_CRC:
		return (v & (RV_CLEAR | RV_FIELDS)) != 0;
	case FS_FIX_INODE_FIELD:
		return (v & (RV_CLEAR | RV_FIELDS | RV_REFLINK)) != 0;
	case FS_FIX_FORK:
		/* without an inode, two AG structures claim a block: the AG rebuild settles it */
		if (f->ino < 0)
			return ag != FS_NONE && rx->ag[ag].rebuild;
		/* or the fork's counts were mended from its records (phase_inodes.c) */
		return (v & (RV_CLEAR | RV_ATTR_RESET | RV_FIELDS)) != 0;
	case FS_FIX_DIR: case FS_FIX_PARENTS: case FS_FIX_NLINK: case FS_FIX_CONNECT:
	case FS_FIX_XATTR: case FS_FIX_SYMLINK: case FS_FIX_UNLINKED: case FS_FIX_QUOTA:
		return repair_names_covers(rx, f);
	case FS_FIX_RT:
		return repair_rt_covers(rx, f);
	case FS_FIX_NR:
		break;
	}
	return false;
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

		rx->fixed[i] = covered(rx, f);
		if (!rx->fixed[i] && f->def->sev != FS_SEV_INFO)
			left++;
	}
	return left + rx->fl->dropped;
}

/*
 * The action a fixed finding's line names: its row's, unless the inode's
 * verdict says otherwise (a row that would clear an inode whose repair
 * mended it, or any inode finding settled by clearing the inode).
 */
static const char *action_taken(const struct repair_ctx *rx, const struct fs_finding *f)
{
	uint8_t v = inode_verdict(rx, f->ino);

	if (f->ino >= 0 && (v & RV_CLEAR) && !repair_fix_is_names(f->def->fix))
		return "inode_clear";
	if (f->def->fix == FS_FIX_INODE_CLEAR && !(v & RV_CLEAR))
		return "inode_field";
	return fs_fix_name(f->def->fix);
}

static void report_line(const struct repair_ctx *rx, const char *what, const struct fs_finding *f,
			bool action, FILE *out)
{
	fprintf(out, "%-9s %s", what, f->def->code);
	if (f->ag >= 0)
		fprintf(out, " ag %lld", (long long)f->ag);
	if (f->ino >= 0) {
		const char *path = repair_names_path(rx, f->ino);

		fprintf(out, " ino %lld", (long long)f->ino);
		if (path)
			fprintf(out, " (%s)", path);
	}
	if (f->daddr >= 0)
		fprintf(out, " daddr %lld", (long long)f->daddr);
	/* what the finding said to do is not what was done: say what was */
	if (action && f->def->fix == FS_FIX_LOG && rx->o->zero_log)
		fprintf(out, ": the dirty log %s thrown away (-L): the changes it held that had "
			"not reached the metadata are lost", rx->o->dry_run ? "would be" : "was");
	else
		fprintf(out, ": %s", f->message[0] ? f->message : f->def->summary);
	if (action)
		fprintf(out, " [%s]", action_taken(rx, f));
	fputc('\n', out);
}

void repair_report_text(const struct repair_ctx *rx, FILE *out)
{
	const char *done = rx->o->dry_run ? "would fix" : "fixed";
	const struct repair_verified *vf = &rx->verified;

	for (size_t i = 0; i < rx->fl->n; i++) {
		bool fixed = rx->fixed && rx->fixed[i];

		report_line(rx, fixed ? done : "left", &rx->fl->v[i], fixed, out);
	}
	/* what the plan's result would have that was not there: why nothing is written */
	for (size_t i = 0; vf->ran && vf->introduced && i < vf->after.n; i++)
		if (vf->after_new[i])
			report_line(rx, "new", &vf->after.v[i], false, out);
	repair_report_cleared(rx, out, false);
}


/* Whether links slot s is an inode in use that the plan frees: its data is lost. */
static bool lost(const struct repair_ctx *rx, uint64_t s)
{
	return rx->verdict && (rx->verdict[s] & RV_CLEAR) && !(rx->verdict[s] & RV_NEW) &&
	       (rx->sx->links->rec[s].flags & LR_SEEN) && !repair_unlinked_frees(rx, s);
}

size_t repair_count_cleared(const struct repair_ctx *rx)
{
	size_t n = 0;

	for (uint64_t s = 0; rx->sx->links && rx->verdict && !rx->verified.introduced &&
	     s < rx->sx->links->nslots; s++)
		n += lost(rx, s);
	return n;
}

size_t repair_report_cleared(const struct repair_ctx *rx, FILE *out, bool json)
{
	const char *done = rx->o->dry_run ? "would clear" : "cleared";
	size_t n = 0;

	if (json)
		fputc('[', out);
	for (uint64_t s = 0; rx->sx->links && rx->verdict && !rx->verified.introduced &&
	     s < rx->sx->links->nslots; s++) {
		fs_ino_t ino;
		const char *path;

		if (!lost(rx, s))
			continue;
		ino = scan_slot_ino(rx->sx, s, &(fs_agnumber_t){ 0 });
		path = repair_names_path(rx, (int64_t)ino);
		if (json) {
			fprintf(out, "%s{\"ino\":%llu,\"path\":", n ? "," : "",
				(unsigned long long)ino);
			if (path)
				fs_json_string(out, path);
			else
				fputs("null", out);
			fputc('}', out);
		} else {
			fprintf(out, "%-9s ino %llu%s%s%s: nothing shows what it held; its data is "
				"lost\n", done, (unsigned long long)ino, path ? " (" : "",
				path ? path : "", path ? ")" : "");
		}
		n++;
	}
	if (json)
		fputc(']', out);
	return n;
}

static void json_fixed(void *priv, size_t i, FILE *out)
{
	const struct repair_ctx *rx = priv;

	const char *path = repair_names_path(rx, rx->fl->v[i].ino);

	fprintf(out, ",\"fixed\":%s", rx->fixed && rx->fixed[i] ? "true" : "false");
	if (path) {
		fputs(",\"path\":", out);
		fs_json_string(out, path);
	}
}

void repair_report_json(const struct repair_ctx *rx, FILE *out)
{
	fs_findings_write_json_array_ex(rx->fl, out, json_fixed, (void *)rx);
}

static void json_new(void *priv, size_t i, FILE *out)
{
	const struct repair_ctx *rx = priv;

	fprintf(out, ",\"new\":%s", rx->verified.after_new[i] ? "true" : "false");
}

void repair_report_after_json(const struct repair_ctx *rx, FILE *out)
{
	if (!rx->verified.ran || !rx->verified.after_new) {
		fputs("null", out);
		return;
	}
	fs_findings_write_json_array_ex(&rx->verified.after, out, json_new, (void *)rx);
}
