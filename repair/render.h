/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_RENDER_H
#define XFSX_REPAIR_RENDER_H

#include "repair/run.h"

/*
 * render.c: a finished run's report on standard output: one JSON object
 * (--json), else the fixes, moves, salvaged xattrs and the summary line,
 * and with verbose each round's phase times.
 */
void repair_render(const struct repair_run *run, int verbose);

#endif
