/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_BUF_H
#define XFSX_REPAIR_BUF_H

#include "repair/plan.h"

/* buf.c: the phases' reads and changes of blocks, through the scan's cache. */
/* A buffer of the scan's cache: read (fresh false) or new and zeroed, nothing read. */
int repair_get_buf(struct repair_ctx *rx, fs_daddr_t daddr, uint32_t len, bool fresh,
		   struct fs_buf **out);
/*
 * Buffer b into the plan: dirty, with its metadata type, AG, owner and
 * write class; -ENOSPC (said on stderr: raise -m) when the cache cannot
 * hold another dirty buffer.
 */
int repair_mark(struct repair_ctx *rx, struct fs_buf *b, enum fs_mtype type, fs_agnumber_t agno,
		fs_ino_t ino, uint8_t wclass);
/* Inode ino's data fork map, the inode read through the cache (silently). */
int repair_data_map(struct repair_ctx *rx, fs_ino_t ino, struct fs_bmap *m);

#endif
