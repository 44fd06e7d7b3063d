// SPDX-License-Identifier: GPL-2.0
/*
 * The process's memory as the kernel counts it: /proc/self/status's VmHWM
 * (peak resident set) and VmRSS (resident now), with getrusage's ru_maxrss
 * for the peak where /proc cannot be read.  Sampled at the end of each
 * phase by xfsx_check and xfsx_repair (libfs/util/mem.h).
 */
#include <inttypes.h>
#include <malloc.h>
#include <string.h>
#include <sys/resource.h>

#include "libfs/util/mem.h"

/* VmHWM and VmRSS in bytes (kB in the file); 0 for one not found. */
static void read_status(uint64_t *hwm, uint64_t *rss)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	*hwm = *rss = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			*hwm = (uint64_t)kb << 10;
		else if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			*rss = (uint64_t)kb << 10;
	}
	fclose(f);
}

static uint64_t rusage_peak(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss << 10 : 0;  /* kB on Linux */
}

/*
 * The highest peak read so far: the kernel's VmHWM is brought up to date
 * lazily and can read a few pages lower after an munmap (the resident
 * count it was about to fold in is gone), and a peak must not go down.
 */
static uint64_t peak_seen;

static uint64_t monotonic_peak(uint64_t p)
{
	uint64_t seen = __atomic_load_n(&peak_seen, __ATOMIC_RELAXED);

	while (p > seen && !__atomic_compare_exchange_n(&peak_seen, &seen, p, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return p > seen ? p : seen;
}

uint64_t fs_mem_peak_rss(void)
{
	uint64_t hwm, rss;

	read_status(&hwm, &rss);
	hwm = hwm ? hwm : rusage_peak();
	return monotonic_peak(hwm > rss ? hwm : rss);
}

void fs_mem_sample(struct fs_mem_sample *s, uint64_t cache_bytes)
{
	memset(s, 0, sizeof(*s));
	read_status(&s->peak_rss_bytes, &s->rss_bytes);
	if (!s->peak_rss_bytes)
		s->peak_rss_bytes = rusage_peak();
	/* the peak is never below what is resident now */
	if (s->peak_rss_bytes < s->rss_bytes)
		s->peak_rss_bytes = s->rss_bytes;
	s->peak_rss_bytes = monotonic_peak(s->peak_rss_bytes);
	s->cache_bytes = cache_bytes;
	s->taken = true;
}

void fs_mem_json(FILE *out, const char *name, const struct fs_mem_sample *s)
{
	fprintf(out, "\"%s\":{\"peak_rss_bytes\":%" PRIu64 ",\"rss_bytes\":%" PRIu64
		",\"cache_bytes\":%" PRIu64 ",\"spilled\":%s}", name, s->peak_rss_bytes,
		s->rss_bytes, s->cache_bytes, s->spilled ? "true" : "false");
}

void fs_mem_json_phases(FILE *out, const struct fs_mem_sample *v, unsigned n,
			const char *(*name)(unsigned ph))
{
	fputs("\"phase_memory\":{", out);
	for (unsigned ph = 0, k = 0; ph < n; ph++) {
		if (!v[ph].taken)
			continue;
		fputs(k++ ? "," : "", out);
		fs_mem_json(out, name(ph), &v[ph]);
	}
	fprintf(out, "},\"peak_rss_bytes\":%" PRIu64, fs_mem_peak_rss());
}

void fs_mem_setup(void)
{
	/* a fixed threshold also stops glibc's raising it (mallopt(3)) */
	(void)mallopt(M_MMAP_THRESHOLD, (int)FS_MEM_MMAP_MIN);
}
