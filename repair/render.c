// SPDX-License-Identifier: GPL-2.0
/*
 * A finished run's report: with --json one object (the filesystem, the
 * log, the first round's findings with what became of each, moves,
 * xattrs, cleared inodes, the scan of the result, the later rounds, the
 * summary with its phase times), else the text lines and the summary
 * line; -v adds each round's phase times.  The phase-time report keeps the
 * keys it has always had, each a step's name (run.c's table).
 */
#include <inttypes.h>
#include <stdio.h>

#include "repair/fix.h"
#include "repair/phase_names.h"
#include "repair/phase_xattrs.h"
#include "repair/render.h"

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

static double key_seconds(const struct repair_ctx *rx, size_t k)
{
	double s = rx->phase_seconds[time_keys[k].ph];

	for (unsigned ph = 0; ph < REPAIR_PH_NR; ph++)
		if (time_keys[k].also & PH(ph))
			s += rx->phase_seconds[ph];
	return s;
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
		",\"moved_to_lost_found\":%" PRIu64 ",\"link_counts_set\":%" PRIu64
		",\"blocks_written\":%" PRIu64
		",\"writes\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"verified\":%s"
		",\"introduced\":%zu,\"phase_seconds\":{",
		rx->fl->n, left, rx->o->dry_run ? "true" : "false", rebuilt, rx->cleared,
		rx->attr_resets, repair_xattrs_rebuilt(rx), rx->field_fixes, dirs, moved, nlinks,
		rx->blocks_written, rx->writes, rx->bytes_written,
		rx->verified.ran ? "true" : "false", rx->verified.introduced);
	for (size_t k = 0; k < sizeof(time_keys) / sizeof(time_keys[0]); k++)
		fprintf(out, "%s\"%s\":%.3f", k ? "," : "", repair_phase_name(time_keys[k].ph),
			key_seconds(rx, k));
	fputs("}}", out);
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
	repair_report_json(rx, out);
	fputs(",\"moved\":", out);
	repair_names_print_moves(rx, out, true);
	fputs(",\"xattrs\":", out);
	repair_xattrs_print(rx, out, true);
	fputs(",\"cleared\":", out);
	repair_report_cleared(rx, out, true);
	fputs(",\"after\":", out);
	repair_report_after_json(rx, out);
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
	uint64_t cleared = repair_count_cleared(rx);
	char rounds[64] = "";

	repair_report_text(rx, out);
	repair_names_print_moves(rx, out, false);
	repair_xattrs_print(rx, out, false);
	for (int i = 1; i < run->nrounds; i++) {
		repair_names_print_moves(&run->round[i].rx, out, false);
		repair_xattrs_print(&run->round[i].rx, out, false);
		cleared += repair_report_cleared(&run->round[i].rx, out, false);
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
}

void repair_render(const struct repair_run *run, int verbose)
{
	if (run->o->json)
		render_json(run, stdout);
	else if (!run->o->quiet)
		render_text(run, verbose, stdout);
}
