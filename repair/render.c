// SPDX-License-Identifier: GPL-2.0
/*
 * A finished run's report: with --json one object (the filesystem, the
 * log, the first round's findings with what became of each, moves,
 * xattrs, cleared inodes, the scan of the result, the later rounds, the
 * summary with its phase times), else the text lines (one per finding:
 * fixed, would fix or left, its place as xfsx_check writes it, with the
 * action fix.c's table names; causes first, the findings grouped under
 * another counted in one line per kind and fate; the moves and the inodes
 * cleared with their data, past 20 counted) and the summary line; -v
 * prints every line and each round's phase times.  The phase-time report keeps the
 * keys it has always had, each a step's name (run.c's table).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repair/fix.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/phase_xattrs.h"
#include "repair/render.h"
#include "scan/links.h"

/*
 * The phase-time report's keys, in the order it has always had (commit
 * before verify), and the steps each key's time includes besides its
 * own: the namespace's the xattr salvage (whose blocks it places among
 * its own), the AG rebuild's quota and realtime.  The intents, decide
 * and blame steps are in none.
 */
#define PH(p) (1u << (p))
static const struct {
	enum repair_phase ph;
	unsigned also;             /* PH() of the steps folded in */
} time_keys[] = {
	{ REPAIR_PH_SCAN, 0 }, { REPAIR_PH_SB, 0 }, { REPAIR_PH_INODES, 0 },
	{ REPAIR_PH_NAMES, PH(REPAIR_PH_XATTRS) },
	{ REPAIR_PH_REBUILD, PH(REPAIR_PH_QUOTA) | PH(REPAIR_PH_RT) },
	{ REPAIR_PH_COUNTERS, 0 }, { REPAIR_PH_COMMIT, 0 }, { REPAIR_PH_VERIFY, 0 },
};

/* a run step's name by number, for fs_mem_json_phases */
static const char *step_name(unsigned ph) { return repair_phase_name((enum repair_phase)ph); }

static double key_seconds(const struct repair_ctx *rx, size_t k)
{
	double s = rx->phase_seconds[time_keys[k].ph];

	for (unsigned ph = 0; ph < REPAIR_PH_NR; ph++)
		if (time_keys[k].also & PH(ph))
			s += rx->phase_seconds[ph];
	return s;
}

/* ---- one line per finding: fixed / would fix / left, the cleared inodes ---- */

static void report_line(const struct repair_ctx *rx, const char *what, const struct fs_finding *f,
			bool action, FILE *out)
{
	char place[FS_PLACE_LEN];
	const char *path = f->ino >= 0 ? repair_names_path(rx, f->ino) : NULL;

	/* the place as xfsx_check prints it (fs_place), then the inode's path */
	fprintf(out, "%-9s %s", what, f->def->code);
	fs_place(place, sizeof(place), f->ag, f->ino, f->daddr);
	if (place[0])
		fprintf(out, " %s", place);
	if (path)
		fprintf(out, " (%s)", path);
	/* what the finding said to do is not what was done: say what was */
	if (action && repair_log_thrown_away(rx, f))
		fprintf(out, ": the dirty log %s zeroed (-L): its last transactions, which had "
			"not reached the metadata, %s discarded", rx->o->dry_run ? "would be" : "was",
			rx->o->dry_run ? "would be" : "were");
	else
		fprintf(out, ": %s", f->message[0] ? f->message : f->def->summary);
	if (action)
		fprintf(out, " [%s]", repair_action_taken(rx, f));
	fputc('\n', out);
}

static int cmp_code(const void *pa, const void *pb, void *arg)
{
	const struct fs_findings *fl = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (fl->v[a].code != fl->v[b].code)
		return fl->v[a].code < fl->v[b].code ? -1 : 1;
	return (a > b) - (a < b);
}

/* members of one group in the text report: by what became of them, then as they came */
struct member_sort {
	const struct repair_ctx *rx;
	const struct fs_grouping *g;
};

static int member_status(const struct repair_ctx *rx, size_t i)
{
	return rx->fixed && rx->fixed[i];
}

static int cmp_member(const void *pa, const void *pb, void *arg)
{
	const struct member_sort *ms = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int sa = member_status(ms->rx, a), sb = member_status(ms->rx, b);
	/* the action's name comes from one static table: the same action, the same pointer */
	const char *xa = sa ? repair_action_taken(ms->rx, &ms->rx->fl->v[a]) : "";
	const char *xb = sb ? repair_action_taken(ms->rx, &ms->rx->fl->v[b]) : "";
	int ka = fs_grouping_kind(ms->rx->fl, ms->g, a), kb = fs_grouping_kind(ms->rx->fl, ms->g, b);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (sa != sb)
		return sb - sa;
	if (xa != xb)
		return (uintptr_t)xa < (uintptr_t)xb ? -1 : 1;
	return (a > b) - (a < b);
}

/*
 * The findings grouped under finding i, m[0..n) (a copy the caller owns):
 * one line per kind and what became of them ("fixed [dir]", "left").
 */
static void report_members(const struct repair_ctx *rx, const struct fs_grouping *g, size_t *m,
			   size_t n, FILE *out)
{
	const char *done = rx->o->dry_run ? "would fix" : "fixed";
	struct member_sort ms = { rx, g };

	qsort_r(m, n, sizeof(*m), cmp_member, &ms);
	for (size_t k = 0; k < n;) {
		size_t end = k + 1;
		int st = member_status(rx, m[k]);
		const char *act = st ? repair_action_taken(rx, &rx->fl->v[m[k]]) : NULL;
		char how[64];

		while (end < n && fs_grouping_kind(rx->fl, g, m[end]) ==
		       fs_grouping_kind(rx->fl, g, m[k]) && member_status(rx, m[end]) == st &&
		       (!st || repair_action_taken(rx, &rx->fl->v[m[end]]) == act))
			end++;
		if (st)
			snprintf(how, sizeof(how), "%s [%s]", done, act);
		else
			snprintf(how, sizeof(how), "left");
		/* the codes in their table order within the line */
		qsort_r(m + k, end - k, sizeof(*m), cmp_code, (void *)rx->fl);
		fs_group_write_line(rx->fl, g, m + k, end - k, how, out);
		k = end;
	}
}

/* The inodes in use the plan frees, their data lost (verify.c kept them). */
static size_t count_cleared(const struct repair_ctx *rx)
{
	return rx->verified.introduced ? 0 : rx->kept.nlost;
}

static size_t report_cleared(const struct repair_ctx *rx, FILE *out, bool json, bool all)
{
	const char *done = rx->o->dry_run ? "would clear" : "cleared";
	size_t n = 0;

	if (json)
		fputc('[', out);
	for (size_t k = 0; !rx->verified.introduced && k < rx->kept.nlost; k++) {
		fs_ino_t ino = rx->kept.lost[k];
		const char *path;

		path = repair_names_path(rx, (int64_t)ino);
		if (json) {
			fprintf(out, "%s{\"ino\":%llu,\"path\":", n ? "," : "",
				(unsigned long long)ino);
			if (path)
				fs_json_string(out, path);
			else
				fputs("null", out);
			fputc('}', out);
		} else if (all || n < REPAIR_TEXT_LIST) {
			fprintf(out, "%-9s inode %llu%s%s%s: nothing shows what it held; its data is "
				"lost\n", done, (unsigned long long)ino, path ? " (" : "",
				path ? path : "", path ? ")" : "");
		}
		n++;
	}
	if (json)
		fputc(']', out);
	else if (!all && n > REPAIR_TEXT_LIST)
		fprintf(out, "  ... and %zu more inodes %s, their data lost; -v lists them\n",
			n - REPAIR_TEXT_LIST, done);
	return n;
}

/*
 * One line per finding, causes first: what a cause brings, the many of one
 * block or of one code, counted in lines under it (verbose: every line).
 */
static void report_text(const struct repair_ctx *rx, int verbose, FILE *out)
{
	const char *done = rx->o->dry_run ? "would fix" : "fixed";
	const struct repair_verified *vf = &rx->verified;
	struct fs_grouping g;
	size_t *m = NULL;

	fs_findings_group(rx->fl, &g);
	if (g.anchor && !verbose && !(m = malloc(g.n * sizeof(*m))))
		verbose = 1;	/* without memory, every line */
	for (size_t i = 0; i < rx->fl->n; i++) {
		bool fixed = rx->fixed && rx->fixed[i];
		size_t pos, nm;

		if (g.anchor && g.anchor[i] != SIZE_MAX)
			continue;	/* in its anchor's lines */
		report_line(rx, fixed ? done : "left", &rx->fl->v[i], fixed, out);
		nm = fs_grouping_members(&g, i, &pos);
		for (size_t k = 0; verbose && k < nm; k++) {
			size_t j = g.order[pos + k];
			bool fj = rx->fixed && rx->fixed[j];

			report_line(rx, fj ? done : "left", &rx->fl->v[j], fj, out);
		}
		if (!verbose && nm) {
			memcpy(m, g.order + pos, nm * sizeof(*m));
			report_members(rx, &g, m, nm, out);
		}
	}
	free(m);
	fs_grouping_free(&g);
	/* what the plan's result would have that was not there: why nothing is written */
	for (size_t i = 0; vf->ran && vf->introduced && i < vf->after.n; i++)
		if (vf->after_new[i])
			report_line(rx, "new", &vf->after.v[i], false, out);
	report_cleared(rx, out, false, verbose);
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

static void report_json(const struct repair_ctx *rx, FILE *out)
{
	fs_findings_write_json_array_ex(rx->fl, out, json_fixed, (void *)rx);
}

static void json_new(void *priv, size_t i, FILE *out)
{
	const struct repair_ctx *rx = priv;

	fprintf(out, ",\"new\":%s", rx->verified.after_new[i] ? "true" : "false");
}

static void report_after_json(const struct repair_ctx *rx, FILE *out)
{
	if (!rx->verified.ran || !rx->verified.after_new) {
		fputs("null", out);
		return;
	}
	fs_findings_write_json_array_ex(&rx->verified.after, out, json_new, (void *)rx);
}

static void print_summary_json(const struct repair_ctx *rx, size_t left, FILE *out)
{
	uint32_t rebuilt = 0;
	uint64_t dirs, moved, nlinks;

	for (fs_agnumber_t a = 0; rx->ag && a < rx->fs->g.agcount; a++)
		rebuilt += rx->ag[a].rebuild;
	repair_names_counts(rx, &dirs, &moved, &nlinks);
	fprintf(out, "\"summary\":{\"findings\":%zu,\"left\":%zu,\"dry_run\":%s,"
		"\"ags_rebuilt\":%u,\"inodes_cleared\":%" PRIu64 ",\"attr_forks_removed\":%"
		PRIu64 ",\"attr_forks_rebuilt\":%" PRIu64 ",\"inode_fields_fixed\":%" PRIu64
		",\"directories_rebuilt\":%" PRIu64
		",\"moved_to_lost_found\":%" PRIu64 ",\"entries_restored\":%" PRIu64
		",\"link_counts_set\":%" PRIu64
		",\"blocks_written\":%" PRIu64
		",\"writes\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"verified\":%s"
		",\"introduced\":%zu,\"phase_seconds\":{",
		rx->fl->n, left, rx->o->dry_run ? "true" : "false", rebuilt, rx->cleared,
		rx->attr_resets, repair_xattrs_rebuilt(rx), rx->field_fixes, dirs, moved, repair_names_restored(rx), nlinks,
		rx->blocks_written, rx->writes, rx->bytes_written,
		rx->verified.ran ? "true" : "false", rx->verified.introduced);
	for (size_t k = 0; k < sizeof(time_keys) / sizeof(time_keys[0]); k++)
		fprintf(out, "%s\"%s\":%.3f", k ? "," : "", repair_phase_name(time_keys[k].ph),
			key_seconds(rx, k));
	/* every step that ran, in run order: the memory held at its end (nothing spills yet) */
	fprintf(out, "},\"memory_estimate_bytes\":%" PRIu64 ",",
		scan_memory_estimate_repair(rx->sx, !rx->o->dry_run));
	/* what a repair that writes needs: with -n, the question before the real run */
	fprintf(out, "\"memory_estimate_repair_bytes\":%" PRIu64 ",",
		scan_memory_estimate_repair(rx->sx, true));
	fs_mem_json_phases(out, rx->phase_mem, REPAIR_PH_NR, step_name);
	fputs("}", out);
}

static void print_phase_times(const struct repair_ctx *rx, int round, FILE *out)
{
	fprintf(out, "round %d seconds:", round);
	for (size_t k = 0; k < sizeof(time_keys) / sizeof(time_keys[0]); k++)
		fprintf(out, " %s %.3f", repair_phase_name(time_keys[k].ph), key_seconds(rx, k));
	fputc('\n', out);
}

/* A plan's lists: findings, moves, xattrs, cleared inodes, the scan of its result. */
static void print_lists_json(const struct repair_ctx *rx, FILE *out)
{
	fputs("\"findings\":", out);
	report_json(rx, out);
	fputs(",\"groups\":", out);
	fs_findings_write_groups_json(rx->fl, out);
	fputs(",\"moved\":", out);
	repair_names_print_moves(rx, out, true, true);
	fputs(",\"restored\":", out);
	repair_names_print_restored(rx, out, true, true);
	fputs(",\"xattrs\":", out);
	repair_xattrs_print(rx, out, true);
	fputs(",\"cleared\":", out);
	report_cleared(rx, out, true, true);
	fputs(",\"after\":", out);
	report_after_json(rx, out);
}

static void render_json(const struct repair_run *run, FILE *out)
{
	const struct repair_ctx *rx = &run->round[0].rx;
	const struct scan_log *sl = &run->log.sl;

	fputc('{', out);
	scan_print_fs_json(rx->fs, run->path, out);
	if (sl->located || sl->err) {
		fputs(",\"log\":", out);
		scan_log_json(sl, out);
	}
	fputc(',', out);
	print_lists_json(rx, out);
	fputs(",\"later_rounds\":[", out);
	for (int i = 1; i < run->nrounds; i++) {
		if (i > 1)
			fputc(',', out);
		fputc('{', out);
		print_lists_json(&run->round[i].rx, out);
		fputc(',', out);
		print_summary_json(&run->round[i].rx, run->round[i].rx.left, out);
		fputc('}', out);
	}
	/* the first round's summary: what is left after the last round written */
	fputs("],", out);
	print_summary_json(rx, run->left, out);
	fputs("}\n", out);
}

static void render_text(const struct repair_run *run, int verbose, FILE *out)
{
	const struct repair_ctx *rx = &run->round[0].rx;
	const char *path = run->path;
	bool dry = run->o->dry_run;
	uint64_t cleared = count_cleared(rx);
	char rounds[64] = "";

	report_text(rx, verbose, out);
	repair_names_print_restored(rx, out, false, verbose);
	repair_names_print_moves(rx, out, false, verbose);
	repair_xattrs_print(rx, out, false);
	for (int i = 1; i < run->nrounds; i++) {
		repair_names_print_restored(&run->round[i].rx, out, false, verbose);
		repair_names_print_moves(&run->round[i].rx, out, false, verbose);
		repair_xattrs_print(&run->round[i].rx, out, false);
		cleared += report_cleared(&run->round[i].rx, out, false, verbose);
	}
	if (run->nrounds > 1)
		snprintf(rounds, sizeof(rounds), "in %d rounds; ", run->nrounds);
	if (!rx->fl->n)
		fprintf(out, "%s: no problems found\n", path);
	else
		fprintf(out, "%s: %zu problem(s): %zu %s, %zu left uncorrected%s%s%s\n", path,
			rx->fl->n, repair_count_fixed(rx), dry ? "would be fixed" : "fixed", run->left,
			rx->verified.ran ? " (" : "", rx->verified.ran ? rounds : "",
			rx->verified.ran ? "the result was checked before writing)" : "");
	if (cleared)
		fprintf(out, "%s: %" PRIu64 " inode(s) in use could not be mended and %s cleared "
			"(listed above): their data is lost\n", path, cleared,
			dry ? "would be" : "were");
	/* -v: where the time went, per round and phase */
	for (int i = 0; verbose && i < run->nrounds; i++)
		print_phase_times(&run->round[i].rx, i + 1, out);
	if (verbose)
		scan_print_estimate(rx->sx, scan_memory_estimate_repair(rx->sx, true), "repair", out);
}

void repair_render(const struct repair_run *run, int verbose)
{
	if (run->o->json)
		render_json(run, stdout);
	else if (!run->o->quiet)
		render_text(run, verbose, stdout);
}
