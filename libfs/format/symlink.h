/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SYMLINK_H
#define XFSX_SYMLINK_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"

/*
 * Symbolic links (inline target or remote XSLM blocks) and special files
 * (character/block devices, fifos, sockets).  Findings in the families
 * "symlink." and "special.".
 */

/* Target bytes one remote symlink block carries. */
uint32_t fs_symlink_block_space(const struct fs_geom *g);

/*
 * The encoder: one remote symlink extent (len bytes: the kernel reads and
 * writes a remote target one extent per buffer, one header and CRC per
 * extent) at daddr carrying bytes of the target from offset (at most len
 * minus the header); the rest zeroed.
 */
void fs_symlink_rmt_encode(const struct fs_geom *g, void *buf, size_t len, fs_ino_t ino,
			   fs_daddr_t daddr, uint32_t offset, const void *data, uint32_t bytes);

/*
 * An inline target of size bytes (fork: the data fork): 0 < size <=
 * XFS_SYMLINK_MAXLEN and no NUL inside (the kernel's shortform rule).
 */
int fs_symlink_local_verify(const struct fs_vctx *c, const void *fork, uint64_t size);

/* Header of a remote symlink block. */
struct fs_symlink_hdr {
	uint32_t offset, bytes;
	uint64_t owner, blkno, lsn;
};
void fs_symlink_hdr_decode(const void *buf, struct fs_symlink_hdr *h);

/*
 * Field rules of one remote symlink block for the verifier table: owner
 * (c->ino), blkno (c->daddr), bytes that fit, offset + bytes below the
 * largest target.
 */
int fs_symlink_rmt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/*
 * One block of a remote target, in file order: the header must continue
 * the target where the previous block stopped (*done bytes so far) and
 * carry what is left of size, up to a block's space; the bytes must hold
 * no NUL.  Advances *done by what the block carries.  Run after the
 * table's checks (fs_verify(FS_MT_SYMLINK)).
 */
int fs_symlink_rmt_verify_piece(const struct fs_vctx *c, const void *buf, size_t len,
				uint64_t size, uint32_t *done);

/*
 * A character/block device, fifo or socket: device format, size 0, no
 * blocks or extents in the data fork.
 */
int fs_special_verify(const struct fs_vctx *c, const struct fs_inode *ip);

#endif
