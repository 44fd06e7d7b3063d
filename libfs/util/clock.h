/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CLOCK_H
#define XFSX_CLOCK_H

#include <time.h>

/*
 * Seconds on the monotonic clock, for timing phases and pacing progress:
 * only differences mean anything (never a timestamp to store).
 */
static inline double fs_monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU seconds (user + system) the whole process has used so far, all its
 * threads: a phase's difference against its wall time says how well its
 * workers kept the CPUs busy, and against one worker's how much the
 * parallel run cost in work.
 */
static inline double fs_process_cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
