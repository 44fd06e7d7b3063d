// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_check's report: the findings as text with one summary line saying
 * what was checked (AGs, inodes, directories and entries, blocks walked,
 * the time) and the verdict, or one JSON object (the filesystem, the log,
 * the findings, the summary with the cache's and readahead's figures and
 * each scan phase's time and memory); and the report of a filesystem
 * that could not be opened.
 */
#include <inttypes.h>
#include <stdio.h>

#include "check/render.h"
#include "scan/links.h"

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/*
 * One line saying what was checked, not only how many headers: AGs,
 * inodes, directories and their entries, the blocks of metadata walked,
 * and the time, then the verdict.
 */
static void print_summary_text(const struct scan_ctx *cx, const char *path, bool clean, FILE *out)
{
	const struct fs_findings *fl = cx->fl;
	uint64_t blocks = cx->btree_blocks + cx->bmbt_blocks;
	size_t errors = fl->by_sev[FS_SEV_ERROR], warnings = fl->by_sev[FS_SEV_WARNING];
	double secs = 0;

	for (int ph = 0; ph < SCAN_PH_NR; ph++)
		secs += cx->phase_seconds[ph];
	fprintf(out, "%s: checked %u %s, %" PRIu64 " %s, %" PRIu64 " %s with %" PRIu64 " %s, "
		"%" PRIu64 " btree %s and %" PRIu64 " file %s in %.2f s: %zu %s, %zu %s%s\n",
		path, cx->ags_checked, plural(cx->ags_checked, "AG", "AGs"),
		cx->inodes_checked, plural(cx->inodes_checked, "inode", "inodes"),
		cx->directories, plural(cx->directories, "directory", "directories"),
		cx->dir_entries, plural(cx->dir_entries, "entry", "entries"),
		blocks, plural(blocks, "block", "blocks"),
		cx->fork_extents, plural(cx->fork_extents, "extent", "extents"), secs,
		errors, plural(errors, "error", "errors"),
		warnings, plural(warnings, "warning", "warnings"), clean ? ", clean" : "");
}

/* a scan phase's name by number, for fs_mem_json_phases */
static const char *phase_name(unsigned ph) { return scan_phase_name((enum scan_phase)ph); }

/* ,"key":{"headers":s,...}: seconds per scan phase */
static void phase_times_json(FILE *out, const char *key, const double *v)
{
	fprintf(out, ",\"%s\":{", key);
	for (unsigned ph = 0; ph < SCAN_PH_NR; ph++)
		fprintf(out, "%s\"%s\":%.3f", ph ? "," : "", scan_phase_name(ph), v[ph]);
	fputc('}', out);
}

static void print_summary_json(const struct scan_ctx *cx, FILE *out)
{
	const struct fs_findings *fl = cx->fl;

	struct fs_cache_stats cs = { 0 };

	if (cx->cache)
		fs_cache_get_stats(cx->cache, &cs);
	fprintf(out, "\"summary\":{\"ags\":%u,\"headers\":%u,\"btree_blocks\":%" PRIu64 ","
		"\"free_extents\":%" PRIu64 ",\"inodes\":%" PRIu64 ",\"inodes_checked\":%" PRIu64 ",\"directories\":%" PRIu64 ",\"dir_entries\":%" PRIu64 ",\"fork_extents\":%" PRIu64 ",\"bmbt_blocks\":%" PRIu64 ",\"deferred\":%" PRIu64 ",\"deferred_early\":%" PRIu64 ",\"deferred_spilled\":%" PRIu64 ",\"forks_complete\":%s,\"findings\":%zu,\"errors\":%zu,"
		"\"warnings\":%zu,\"clean\":%s,\"cache\":{\"hits\":%" PRIu64 ",\"misses\":%" PRIu64
		",\"evictions\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 "},\"readahead\":{\"windows\":%"
		PRIu64 ",\"exact\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"bytes_kept\":%" PRIu64
		",\"page_cache_bytes\":%" PRIu64 "}",
		cx->ags_checked, cx->headers_read, cx->btree_blocks, cx->free_extents, cx->inodes,
		cx->inodes_checked, cx->directories, cx->dir_entries, cx->fork_extents, cx->bmbt_blocks,
		cx->deferred, cx->deferred_early, cx->deferred_spilled,
		cx->forks_complete ? "true" : "false",
		fl->n + fl->dropped, fl->by_sev[FS_SEV_ERROR],
		fl->by_sev[FS_SEV_WARNING], fl->by_sev[FS_SEV_ERROR] ? "false" : "true",
		cs.hits, cs.misses, cs.evictions, cs.peak_bytes, cx->ra.windows, cx->ra.exact,
		cx->ra.bytes_read, cx->ra.bytes_kept,
		__atomic_load_n(&cx->fs->dev->cached_bytes, __ATOMIC_RELAXED));
	phase_times_json(out, "phase_seconds", cx->phase_seconds);
	phase_times_json(out, "phase_cpu_seconds", cx->phase_cpu);
	/* each phase that ran: the memory held at its end (nothing spills yet) */
	fprintf(out, ",\"memory_estimate_bytes\":%" PRIu64 ",", cx->mem_estimate);
	/* what went to the temporary directory: the model's extents, the directory edges */
	fprintf(out, "\"spill\":{\"model_runs\":%" PRIu64 ",\"model_bytes\":%" PRIu64
		",\"edge_runs\":%" PRIu64 ",\"edge_bytes\":%" PRIu64 "},",
		cx->spill ? fs_spill_runs(cx->spill) : 0, cx->spill ? fs_spill_bytes(cx->spill) : 0,
		cx->links && cx->links->spill ? fs_spill_runs(cx->links->spill) : 0,
		cx->links && cx->links->spill ? fs_spill_bytes(cx->links->spill) : 0);
	fs_mem_json_phases(out, cx->phase_mem, SCAN_PH_NR, phase_name);
	fputs("}", out);
}

void check_render(const struct check_run *run, bool clean)
{
	if (run->json) {
		fputc('{', stdout);
		scan_print_fs_json(run->fs, run->path, stdout);
		if (run->fs->logdev) {
			fputs(",\"log\":", stdout);
			scan_log_json(&run->sl, stdout);
		}
		fputs(",\"findings\":", stdout);
		fs_findings_write_json_array(&run->fl, stdout);
		fputs(",\"groups\":", stdout);
		fs_findings_write_groups_json(&run->fl, stdout);
		fputc(',', stdout);
		print_summary_json(&run->cx, stdout);
		fputs("}\n", stdout);
	} else if (!run->quiet) {
		fs_findings_write_text_v(&run->fl, stdout, run->verbose);
		print_summary_text(&run->cx, run->path, clean, stdout);
		if (run->verbose)
			scan_print_estimate(&run->cx, run->cx.mem_estimate, "check", stdout);
	}
}

void check_render_open_failure(const struct check_run *run)
{
	if (run->json) {
		fputs("{\"error\":", stdout);
		fs_json_string(stdout, run->ferr.msg);
		if (run->ferr.not_xfs)
			fputs(",\"not_xfs\":true", stdout);
		fputs(",\"findings\":", stdout);
		fs_findings_write_json_array(&run->fl, stdout);
		fputs(",\"groups\":", stdout);
		fs_findings_write_groups_json(&run->fl, stdout);
		printf(",\"summary\":{\"findings\":%zu,\"clean\":false}}\n", run->fl.n);
	} else if (!run->quiet) {
		fs_findings_write_text_v(&run->fl, stdout, run->verbose);
	}
	if (!run->quiet || !run->json)
		fprintf(stderr, "xfsx_check: %s\n", run->ferr.msg);
}
