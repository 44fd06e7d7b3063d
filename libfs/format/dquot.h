/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_DQUOT_H
#define XFSX_DQUOT_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

/*
 * Quota files: blocks of struct xfs_dqblk records, each with its own CRC.
 * Findings in the family "dquot.".
 */

/* Records one block of blocksize bytes holds. */
uint32_t fs_dquot_per_block(const struct fs_geom *g);

/*
 * Field rules of one record (sizeof(struct xfs_dqblk) bytes) for the
 * verifier table: version, type bits, bigtime allowed, timers set where
 * usage is over a soft limit.
 */
int fs_dquot_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/*
 * One block of a quota file at file block fileblk: every record through
 * the table (magic, CRC, UUID, LSN, fields), its id the one its place
 * says (fileblk * per block + slot) and its type the file's (type: one
 * of XFS_DQTYPE_USER/GROUP/PROJ).  c->daddr is the block's address.
 */
int fs_dquot_block_verify(const struct fs_vctx *c, const void *buf, size_t len,
			  uint64_t fileblk, uint8_t type);

#endif
