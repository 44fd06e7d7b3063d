/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MEM_H
#define XFSX_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * How much memory the process held at the end of a phase, for the tools'
 * --json ("phase_memory") and progress lines: the peak resident set so far
 * (VmHWM, or getrusage's ru_maxrss where /proc is missing), the resident
 * set now (VmRSS, 0 if unknown) and the bytes the metadata cache held (the
 * caller passes them: util knows nothing of the cache).  spilled: the
 * model wrote runs to the temporary directory during the phase (-m,
 * libfs/util/spill.h; the caller says).
 */
struct fs_mem_sample {
	bool taken;                /* the phase ran and was measured */
	bool spilled;
	uint64_t peak_rss_bytes, rss_bytes, cache_bytes;
};

/*
 * At a tool's start: allocations of FS_MEM_MMAP_MIN bytes and more get
 * their own mappings, given back to the kernel when freed.  glibc's
 * default threshold rises to the largest block freed (up to 32 MiB), so
 * the scan's big arrays, once freed, would stay in the heap behind small
 * blocks still in use: on a repair of 5M aged inodes, 22 MiB resident but
 * free before its verify scan (peak 170 -> 144 MB; check 126-131 -> 117).
 */
#define FS_MEM_MMAP_MIN (128u << 10)
void fs_mem_setup(void);

/* The peak resident set of the process so far, in bytes (0 if unknown). */
uint64_t fs_mem_peak_rss(void);
/* Fill s now, with the cache's bytes as the caller counted them. */
void fs_mem_sample(struct fs_mem_sample *s, uint64_t cache_bytes);
/* "name":{"peak_rss_bytes":..,"rss_bytes":..,"cache_bytes":..,"spilled":false} */
void fs_mem_json(FILE *out, const char *name, const struct fs_mem_sample *s);
/*
 * "phase_memory":{one fs_mem_json per phase of v[0..n) that was measured,
 * named by name(ph)},"peak_rss_bytes":the run's peak — check's and repair's
 * summaries
 */
void fs_mem_json_phases(FILE *out, const struct fs_mem_sample *v, unsigned n,
			const char *(*name)(unsigned ph));

#endif
