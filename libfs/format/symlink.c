// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolic links and special files: the inline target rules, the remote
 * symlink block header (XSLM) and how a remote target's pieces chain, and
 * the shape of device/fifo/socket inodes.  Lengths from disk are bounded
 * by the block before any byte is looked at.
 */
#include "libfs/format/symlink.h"
#include "libfs/format/crc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/endian.h"

#define SL_HDR_SIZE sizeof(struct xfs_dsymlink_hdr)

void fs_symlink_rmt_encode(const struct fs_geom *g, void *buf, size_t len, fs_ino_t ino,
			   fs_daddr_t daddr, uint32_t offset, const void *data, uint32_t bytes)
{
	struct xfs_dsymlink_hdr *h = buf;

	(void)g;
	memset(buf, 0, len);
	h->sl_magic = to_be32(XFS_SYMLINK_MAGIC);
	h->sl_offset = to_be32(offset);
	h->sl_bytes = to_be32(bytes);
	memcpy(&h->sl_uuid, g->meta_uuid, 16);
	h->sl_owner = to_be64(ino);
	h->sl_blkno = to_be64(daddr);
	memcpy((unsigned char *)buf + SL_HDR_SIZE, data, bytes);
	fs_crc_update(buf, len, XFS_SYMLINK_CRC_OFF);
}

uint32_t fs_symlink_block_space(const struct fs_geom *g)
{
	return g->blocksize - SL_HDR_SIZE;
}

int fs_symlink_local_verify(const struct fs_vctx *c, const void *fork, uint64_t size)
{
	struct fs_reporter v = fs_vctx_reporter(c);

	if (size == 0 || size > XFS_SYMLINK_MAXLEN)
		fs_reporter_bad(&v, FS_C_SYMLINK_SIZE, "di_size", "1..1024", FS_U(size),
				"inline symlink target length is impossible");
	else if (memchr(fork, 0, size - 1))
		fs_reporter_bad(&v, FS_C_SYMLINK_TARGET, "target", "no NUL", "NUL",
				"inline symlink target contains a NUL byte");
	return v.n;
}

void fs_symlink_hdr_decode(const void *buf, struct fs_symlink_hdr *h)
{
	const struct xfs_dsymlink_hdr *d = buf;

	h->offset = be32(d->sl_offset);
	h->bytes = be32(d->sl_bytes);
	h->owner = be64(d->sl_owner);
	h->blkno = be64(d->sl_blkno);
	h->lsn = be64(d->sl_lsn);
}

int fs_symlink_rmt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	struct fs_reporter v = fs_vctx_reporter(c);
	struct fs_symlink_hdr h;

	if (len < SL_HDR_SIZE)
		return 0;
	fs_symlink_hdr_decode(buf, &h);
	if (h.owner == 0 || (c->ino && h.owner != c->ino))
		fs_reporter_bad(&v, FS_C_SYMLINK_OWNER, "sl_owner", FS_U(c->ino), FS_U(h.owner),
				"remote symlink block belongs to another inode");
	if (h.blkno != c->daddr)
		fs_reporter_bad(&v, FS_C_SYMLINK_BLKNO, "sl_blkno", FS_U(c->daddr), FS_U(h.blkno),
				"remote symlink block says it lives at another address");
	if (h.bytes > len - SL_HDR_SIZE)
		fs_reporter_bad(&v, FS_C_SYMLINK_BYTES, "sl_bytes", FS_U(len - SL_HDR_SIZE),
				FS_U(h.bytes), "remote symlink block holds more bytes than fit");
	/* the kernel's rule: a target stays below XFS_SYMLINK_MAXLEN */
	if ((uint64_t)h.offset + h.bytes >= XFS_SYMLINK_MAXLEN)
		fs_reporter_bad(&v, FS_C_SYMLINK_OFFSET, "sl_offset", "offset + bytes below 1024",
				FS_U((uint64_t)h.offset + h.bytes),
				"remote symlink block ends past the longest target");
	return v.n;
}

int fs_symlink_rmt_verify_piece(const struct fs_vctx *c, const void *buf, size_t len,
				uint64_t size, uint32_t *done)
{
	struct fs_reporter v = fs_vctx_reporter(c);
	struct fs_symlink_hdr h;
	uint64_t left = size > *done ? size - *done : 0;
	uint32_t space, want;

	if (len < SL_HDR_SIZE)
		return 0;
	space = (uint32_t)(len - SL_HDR_SIZE);
	want = left < space ? (uint32_t)left : space;
	fs_symlink_hdr_decode(buf, &h);
	if (h.offset != *done)
		fs_reporter_bad(&v, FS_C_SYMLINK_OFFSET, "sl_offset", FS_U(*done), FS_U(h.offset),
				"remote symlink block does not continue the target where the previous stopped");
	if (h.bytes != want)
		fs_reporter_bad(&v, FS_C_SYMLINK_BYTES, "sl_bytes", FS_U(want), FS_U(h.bytes),
				"remote symlink block byte count disagrees with the inode size");
	if (want && memchr((const uint8_t *)buf + SL_HDR_SIZE, 0,
			   *done + want >= size ? want - 1 : want))
		fs_reporter_bad(&v, FS_C_SYMLINK_TARGET, "target", "no NUL", "NUL",
				"remote symlink target contains a NUL byte");
	*done += want;
	return v.n;
}

int fs_special_verify(const struct fs_vctx *c, const struct fs_inode *ip)
{
	struct fs_reporter v = fs_vctx_reporter(c);

	if (ip->format != XFS_DINODE_FMT_DEV)
		return 0;	/* the inode verifier reports the format */
	if (ip->size)
		fs_reporter_bad(&v, FS_C_SPECIAL_SIZE, "di_size", "0", FS_U(ip->size),
				"device, fifo or socket inode has a nonzero size");
	if (ip->nextents)
		fs_reporter_bad(&v, FS_C_SPECIAL_EXTENTS, "di_nextents", "0", FS_U(ip->nextents),
				"device, fifo or socket inode has data extents");
	if (ip->nblocks && !ip->forkoff)
		fs_reporter_bad(&v, FS_C_SPECIAL_EXTENTS, "di_nblocks", "0", FS_U(ip->nblocks),
				"device, fifo or socket inode without xattrs owns blocks");
	return v.n;
}
