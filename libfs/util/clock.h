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

#endif
