// SPDX-License-Identifier: GPL-2.0
/*
 * The phases' blocks, through the scan's cache: a buffer read (or new,
 * nothing read), then marked dirty into the plan with its type, AG, owner
 * and write class, which is all commit.c needs to write it in order; and
 * an inode's data fork map read the same way.  Past the cache's cap a
 * dirty buffer is refused, and the run says how to give it room.
 */
#include <errno.h>
#include <stdio.h>

#include "libfs/format/bmap.h"
#include "libfs/format/inode.h"
#include "repair/buf.h"

int repair_get_buf(struct repair_ctx *rx, fs_daddr_t daddr, uint32_t len, bool fresh,
		   struct fs_buf **out)
{
	if (fresh)
		return fs_cache_get_new(rx->sx->cache, daddr, len, out);
	return fs_cache_read(rx->sx->cache, daddr, len, out);
}

int repair_mark(struct repair_ctx *rx, struct fs_buf *b, enum fs_mtype type, fs_agnumber_t agno,
		fs_ino_t ino, uint8_t wclass)
{
	struct fs_dirty_info di = { .type = type, .agno = agno, .ino = ino, .wclass = wclass };
	int err = fs_buf_mark_dirty(rx->sx->cache, b, &di);

	if (err == -ENOSPC)
		fprintf(stderr, "xfsx_repair: the repair's changed blocks do not fit in the "
			"metadata cache (-m %llu MiB): raise -m; nothing was written\n",
			(unsigned long long)(fs_cache_cap(rx->sx->cache) >> 20));
	return err;
}

int repair_data_map(struct repair_ctx *rx, fs_ino_t ino, struct fs_bmap *m)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_inode ip;
	int err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);

	if (err)
		return err;
	fs_inode_decode(b->data, &ip);
	err = scan_load_map(rx->sx, b->data, &ip, XFS_DATA_FORK, NULL, m);
	fs_buf_put(rx->sx->cache, b);
	return err;
}
