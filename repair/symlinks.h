/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_SYMLINKS_H
#define XFSX_REPAIR_SYMLINKS_H

#include "repair/plan.h"

/* symlinks.c: remote symlinks mended in place. */
/*
 * A remote symlink whose blocks' headers are damaged but whose target
 * survives, its blocks written again in place: 1; 0 when it cannot be
 * mended (the caller removes it); negative errno.
 */
int repair_symlink_salvage(struct repair_ctx *rx, fs_ino_t ino);

#endif
