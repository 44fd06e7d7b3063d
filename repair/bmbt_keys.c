// SPDX-License-Identifier: GPL-2.0
/*
 * Block map btree keys mended in place: a node key (in the inode's root or
 * in a node block) is by definition its child's first key, so a key that
 * says otherwise is set from the child, as xfs_repair keeps such a fork.
 * Only keys change: a child that is not a bmbt block of the level its parent
 * implies, or a pointer outside the filesystem, is left for the fork's own
 * checks (which then drop the fork or the file).  Run on the planned core
 * before its forks are loaded, so the load sees the mended keys.
 */
#include <errno.h>
#include <string.h>

#include "libfs/format/bmap.h"
#include "libfs/format/btree.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "repair/bmbt_keys.h"
#include "repair/buf.h"

/* The first key of bmbt block b at level (its first record's offset at level 0). */
static uint64_t first_key(const struct fs_btree_ops *ops, const unsigned char *b, uint32_t level)
{
	struct fs_bmap_ext e;

	if (level)
		return get_be64(fs_btree_key(ops, b, 0));
	fs_bmbt_rec_decode(fs_btree_rec(ops, b, 0), &e);
	return e.startoff;
}

/*
 * Blocks one fork's walk may read: a hostile tree whose pointers all name
 * one shared subtree would otherwise be walked numrecs^levels times (the
 * loader rejects such a tree as bmbt.loop; mending simply stops).
 */
#define MEND_BUDGET (1u << 16)

/*
 * Mend the keys below the node at fsb (level >= 1) and give *first its own
 * first key; 1 when it is a bmbt block of that level with records, else 0.
 */
static int mend_block(struct repair_ctx *rx, fs_ino_t ino, fs_fsblock_t fsb, uint32_t level,
		      uint64_t *first, uint32_t *budget)
{
	const struct fs_geom *g = &rx->fs->g;
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);
	struct fs_btree_hdr h;
	struct fs_buf *b;
	bool changed = false;
	int err;

	if (!fs_fsb_valid(g, fsb) || !*budget)
		return 0;
	(*budget)--;
	err = repair_get_buf(rx, fs_fsb_to_daddr(g, fsb), g->blocksize, false, &b);
	if (err)
		return err == -ENOMEM ? err : 0;
	fs_btree_hdr_decode(ops, b->data, &h);
	if (h.magic != ops->magic || h.level != level || h.numrecs == 0 ||
	    h.numrecs > fs_btree_maxrecs(ops, g->blocksize, level == 0)) {
		fs_buf_put(rx->sx->cache, b);
		return 0;
	}
	for (uint32_t i = 0; level && i < h.numrecs; i++) {
		unsigned char *kp = (unsigned char *)fs_btree_key(ops, b->data, i);
		uint64_t child;

		err = mend_block(rx, ino, fs_btree_ptr(ops, b->data, g->blocksize, i), level - 1,
				 &child, budget);
		if (err < 0)
			break;
		if (err && get_be64(kp) != child) {
			put_be64(kp, child);
			changed = true;
		}
		err = 0;
	}
	*first = first_key(ops, b->data, level);
	if (!err && changed) {
		err = repair_mark(rx, b, FS_MT_BMBT, fs_fsb_to_agno(g, fsb), ino, FS_WCLASS_HEADERS);
		if (!err)
			rx->planned_writes = true;
	}
	fs_buf_put(rx->sx->cache, b);
	return err < 0 ? err : 1;
}

int repair_bmbt_keys(struct repair_ctx *rx, fs_ino_t ino, unsigned char *dip, int fork)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_inode ip;
	unsigned char *root;
	uint32_t fsize, maxr, level, numrecs, budget = MEND_BUDGET;
	int mended = 0;

	fs_inode_decode(dip, &ip);
	if ((fork == XFS_DATA_FORK ? ip.format : ip.aformat) != XFS_DINODE_FMT_BTREE ||
	    (fork == XFS_ATTR_FORK && !ip.forkoff))
		return 0;
	fsize = fs_inode_fork_size(g, &ip, fork);
	root = (unsigned char *)fs_inode_fork_ptr(dip, &ip, fork);
	if (fsize < sizeof(struct xfs_bmdr_block) + sizeof(xfs_bmdr_key_t) +
		    sizeof(xfs_bmdr_ptr_t) || fsize > g->inodesize)
		return 0;
	maxr = (fsize - (uint32_t)sizeof(struct xfs_bmdr_block)) /
	       (uint32_t)(sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t));
	level = get_be16(root);
	numrecs = get_be16(root + 2);
	if (level == 0 || level > (fork == XFS_DATA_FORK ? g->bmbt_maxlevels_data :
				   g->bmbt_maxlevels_attr) || numrecs == 0 || numrecs > maxr)
		return 0;
	for (uint32_t i = 0; i < numrecs; i++) {
		unsigned char *kp = root + sizeof(struct xfs_bmdr_block) + i * sizeof(xfs_bmdr_key_t);
		uint64_t ptr = get_be64(root + sizeof(struct xfs_bmdr_block) +
					maxr * sizeof(xfs_bmdr_key_t) + i * sizeof(xfs_bmdr_ptr_t));
		uint64_t child;
		int r = mend_block(rx, ino, ptr, level - 1, &child, &budget);

		if (r < 0)
			return r;
		if (r && get_be64(kp) != child) {
			put_be64(kp, child);
			mended = 1;
		}
	}
	return mended;
}
