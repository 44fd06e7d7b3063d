// SPDX-License-Identifier: GPL-2.0
/*
 * Remote symlinks mended rather than removed: when a remote symlink's
 * block headers are damaged (magic, UUID, owner, address, offset, byte
 * count, CRC) but its target survives — the inode's size is a target's,
 * its map holds the blocks that size needs in file order, and the bytes
 * its extents carry (one header an extent, as the kernel writes them) hold
 * no NUL — the extents are written again in place with headers
 * made from the inode (as xfs_repair rewrites a bad symlink buffer), so
 * the link and its names are kept.  Anything else leaves the caller to
 * remove the symlink.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/bmap.h"
#include "libfs/format/inode.h"
#include "libfs/format/symlink.h"
#include "repair/buf.h"
#include "repair/symlinks.h"

int repair_symlink_salvage(struct repair_ctx *rx, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;
	uint32_t hdr = sizeof(struct xfs_dsymlink_hdr), space = fs_symlink_block_space(g);
	unsigned char target[XFS_SYMLINK_MAXLEN];
	struct fs_bmap m = { 0 };
	struct fs_inode ip;
	struct fs_buf *b;
	uint32_t done = 0;
	uint64_t nblocks;
	int err;

	err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		return err;
	fs_inode_decode(b->data, &ip);
	fs_buf_put(rx->sx->cache, b);
	if (!S_ISLNK(ip.mode) || ip.format != XFS_DINODE_FMT_EXTENTS || ip.size == 0 ||
	    ip.size >= XFS_SYMLINK_MAXLEN)
		return 0;
	if (repair_data_map(rx, ino, &m))
		return 0;
	nblocks = (ip.size + space - 1) / space;
	/*
	 * One header an extent (the kernel writes a remote target one extent
	 * a buffer), the extents in file order without holes
	 */
	if (m.bad || fs_bmap_blocks(&m) != nblocks)
		goto no;
	for (size_t i = 0, off = 0; i < m.n; off += m.ext[i].blockcount, i++)
		if (m.ext[i].startoff != off || m.ext[i].blockcount > nblocks || m.ext[i].unwritten ||
		    !fs_fsb_valid(g, m.ext[i].startblock) ||
		    !fs_fsb_valid(g, m.ext[i].startblock + m.ext[i].blockcount - 1))
			goto no;
	for (size_t i = 0; i < m.n && done < ip.size; i++) {
		uint32_t len = (uint32_t)m.ext[i].blockcount << g->blocklog;
		uint32_t bytes = (uint32_t)ip.size - done < len - hdr ? (uint32_t)ip.size - done :
				 len - hdr;

		err = repair_get_buf(rx, fs_fsb_to_daddr(g, m.ext[i].startblock), len, false, &b);
		if (err)
			goto no;
		memcpy(target + done, b->data + hdr, bytes);
		fs_buf_put(rx->sx->cache, b);
		done += bytes;
	}
	/* the target's own rules: all of it there, no NUL inside */
	if (done != ip.size || memchr(target, 0, done))
		goto no;
	done = 0;
	for (size_t i = 0; i < m.n && !err && done < ip.size; i++) {
		uint32_t len = (uint32_t)m.ext[i].blockcount << g->blocklog;
		uint32_t bytes = (uint32_t)ip.size - done < len - hdr ? (uint32_t)ip.size - done :
				 len - hdr;
		fs_daddr_t daddr = fs_fsb_to_daddr(g, m.ext[i].startblock);

		err = repair_get_buf(rx, daddr, len, true, &b);
		if (err)
			break;
		fs_symlink_rmt_encode(g, b->data, len, ino, daddr, done, target + done, bytes);
		err = repair_mark(rx, b, FS_MT_SYMLINK, fs_fsb_to_agno(g, m.ext[i].startblock), ino,
				  FS_WCLASS_HEADERS);
		fs_buf_put(rx->sx->cache, b);
		done += bytes;
	}
	fs_bmap_free(&m);
	if (err)
		return err;
	rx->planned_writes = true;
	return 1;
no:
	fs_bmap_free(&m);
	return 0;
}
