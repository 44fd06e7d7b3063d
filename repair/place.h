/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PLACE_H
#define XFSX_REPAIR_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "repair/plan.h"

/* place.c: where a plan puts new blocks. */
struct fs_bmap_ext;

/*
 * NULL when the model knows every block owner (the AG rebuild and new
 * blocks need that), else why not.
 */
const char *repair_model_incomplete(struct repair_ctx *rx);
/*
 * New blocks for a rebuilt directory, attr fork or realtime inode: fsbs
 * contiguous blocks free before and after the repair, near inode ino
 * (its AG first).  0 or -ENOSPC.
 */
int repair_place(struct repair_ctx *rx, fs_ino_t ino, uint32_t fsbs, fs_fsblock_t *fsb);
/*
 * A rebuilt fork's extents into its fork area (size bytes): an extent list
 * when they fit, else a bmbt from the bulk loader in new blocks (in the
 * model, as the fork's).  *format the fork format, *bmbt its blocks.
 */
int repair_fork_map(struct repair_ctx *rx, fs_ino_t ino, int whichfork,
		    const struct fs_bmap_ext *ext, size_t n, void *fork, size_t size,
		    uint8_t *format, uint64_t *bmbt);
/* What placing held (the plan's free runs). */
void repair_place_free(struct repair_ctx *rx);

#endif
