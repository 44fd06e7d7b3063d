/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CHECK_RENDER_H
#define XFSX_CHECK_RENDER_H

#include "check/run.h"

/* render.c: a check's report on standard output, text or one JSON object. */

/* The findings and summary of a finished check; clean: no errors. */
void check_render(const struct check_run *run, bool clean);
/* A filesystem that could not be opened: the findings so far and why (also on stderr). */
void check_render_open_failure(const struct check_run *run);

#endif
