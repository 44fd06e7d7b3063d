/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_BMBT_KEYS_H
#define XFSX_REPAIR_BMBT_KEYS_H

#include "repair/plan.h"

/* bmbt_keys.c: block map btree node keys mended in place. */
/*
 * Set every node key of a btree-format fork (the root in the core at dip,
 * node blocks as dirty buffers) to its child's first key.  1 when a root
 * key changed, 0, or a negative errno.
 */
int repair_bmbt_keys(struct repair_ctx *rx, fs_ino_t ino, unsigned char *dip, int fork);

#endif
