// SPDX-License-Identifier: GPL-2.0
/*
 * Progress on stderr: the phase, units done of total and an ETA, redrawn in
 * place at most five times a second on a terminal (one line per update,
 * once a second, when forced onto something that is not a terminal).
 * Updates come from worker threads; whoever finds the redraw due draws.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "libfs/util/clock.h"
#include "libfs/util/mem.h"
#include "scan/scan.h"

struct scan_progress {
	pthread_mutex_t lock;
	bool tty;
	const char *phase;
	unsigned phase_no;
	uint64_t total, done;
	double start, last;
	double every;              /* seconds between draws */
	const char *prefix;
	const struct fs_spill *spill; /* the model's, or NULL */
	uint64_t spill_runs;       /* its runs when the phase began */
};

static void draw(struct scan_progress *p, bool final)
{
	double t = fs_monotonic_seconds(), el = t - p->start;
	unsigned pct = p->total ? (unsigned)(p->done * 100 / p->total) : 100;

	fprintf(stderr, "%s%sphase %u: %s: %llu/%llu (%u%%)", p->tty ? "\r\033[K" : "",
		p->prefix ? p->prefix : "", p->phase_no, p->phase, (unsigned long long)p->done,
		(unsigned long long)p->total, pct);
	if (final) {
		/* the process's peak resident set so far (libfs/util/mem.h), and a spill */
		fprintf(stderr, ", %.1fs, peak %" PRIu64 " MiB%s\n", el, fs_mem_peak_rss() >> 20,
			p->spill && fs_spill_runs(p->spill) != p->spill_runs ? ", spilled" : "");
	} else if (p->done && p->done < p->total) {
		double eta = el / p->done * (p->total - p->done);
		fprintf(stderr, ", ETA %u:%02u", (unsigned)eta / 60, (unsigned)eta % 60);
	}
	if (!p->tty && !final)
		fputc('\n', stderr);
	fflush(stderr);
	p->last = t;
}

void scan_progress_phase(struct scan_ctx *cx, const char *name, uint64_t total)
{
	struct scan_progress *p = cx->progress;

	if (!p) {
		int mode = cx->opts ? cx->opts->progress : 0;

		if (mode == 0 || (mode < 0 && !isatty(STDERR_FILENO)))
			return;
		p = calloc(1, sizeof(*p));
		if (!p)
			return;
		pthread_mutex_init(&p->lock, NULL);
		p->tty = isatty(STDERR_FILENO);
		p->prefix = cx->opts->progress_prefix;
		p->every = cx->opts->progress_interval ? cx->opts->progress_interval :
			   p->tty ? 0.2 : 1.0;
		/* an interval asks for a line each time, as xfs_repair -t prints them */
		if (cx->opts->progress_interval)
			p->tty = false;
		cx->progress = p;
	}
	pthread_mutex_lock(&p->lock);
	p->phase = name;
	p->phase_no++;
	p->total = total;
	p->done = 0;
	p->start = fs_monotonic_seconds();
	p->last = 0;
	p->spill = cx->spill;
	p->spill_runs = cx->spill ? fs_spill_runs(cx->spill) : 0;
	pthread_mutex_unlock(&p->lock);
}

void scan_progress_add(struct scan_ctx *cx, uint64_t done)
{
	struct scan_progress *p = cx->progress;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done += done;
	if (fs_monotonic_seconds() - p->last >= p->every)
		draw(p, false);
	pthread_mutex_unlock(&p->lock);
}

void scan_progress_end(struct scan_ctx *cx)
{
	struct scan_progress *p = cx->progress;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	draw(p, true);
	pthread_mutex_unlock(&p->lock);
}

void scan_progress_free(struct scan_ctx *cx)
{
	if (!cx->progress)
		return;
	pthread_mutex_destroy(&cx->progress->lock);
	free(cx->progress);
	cx->progress = NULL;
}
