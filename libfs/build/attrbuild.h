/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_ATTRBUILD_H
#define XFSX_ATTRBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/format/format.h"

/*
 * The xattr encoder (mkfs -p; repair's attr rebuild can use it): a set of
 * attributes in, an attr fork out, as short form in the inode or as attr3
 * leaf blocks (one leaf at attr block 0, or DA3 node levels rooted there
 * over several leaves) with remote value blocks for values too large for a leaf.
 *
 *   fs_attrbuild_plan(g, ino, ents, n, &ab);
 *   if ((sf = fs_attrbuild_sf_size(ab)) && sf fits the attr fork)
 *           fs_attrbuild_sf(ab, afork);                 // aformat local
 *   else {
 *           fs_attrbuild_layout(ab, &io);               // io.alloc: runs of blocks
 *           for (i < fs_attrbuild_nblocks(ab)) fs_attrbuild_encode(ab, i, buf, &fsb);
 *   }
 *   fs_attrbuild_free(ab);
 *
 * ents (and what they point to) must stay valid until the last call.
 */

struct fs_attrbuild_ent {
	/*
	 * namespace: 0 (user), XFS_ATTR_ROOT, XFS_ATTR_SECURE, or with the
	 * parent feature XFS_ATTR_PARENT: a parent pointer, its name the
	 * directory entry's, its value a struct xfs_parent_rec
	 */
	uint8_t flags;
	uint8_t namelen;           /* 1..255 */
	const unsigned char *name;
	uint32_t valuelen;         /* up to XFS_XATTR_SIZE_MAX (64 KiB) */
	const unsigned char *value;
};

struct fs_attrbuild_io {
	/*
	 * nblocks contiguous fs blocks for the next logical attr blocks (in
	 * order, from 0): the first's fs block in *fsb.  0 or -errno; on
	 * -ENOSPC for a run of several, the layout asks again one block at a
	 * time (the fork then maps them as separate extents).
	 */
	int (*alloc)(void *priv, uint32_t nblocks, fs_fsblock_t *fsb);
	void *priv;
};

struct fs_attrbuild;

/*
 * -EINVAL for a bad name, namespace or value size, -EEXIST for a name given
 * twice (a parent pointer: name and value twice), -ENOMEM.
 */
int fs_attrbuild_plan(const struct fs_geom *g, fs_ino_t ino, const struct fs_attrbuild_ent *ents,
		      size_t n, struct fs_attrbuild **out);

/* Bytes of the short form (header included), or 0 when it cannot be short form. */
uint32_t fs_attrbuild_sf_size(const struct fs_attrbuild *ab);
void fs_attrbuild_sf(const struct fs_attrbuild *ab, void *afork);

/* Block form: allocate every block through io (tree blocks first, then each remote value). */
int fs_attrbuild_layout(struct fs_attrbuild *ab, const struct fs_attrbuild_io *io);
/* Logical attr blocks after layout; block i's bytes (g->blocksize) and its fs block. */
uint32_t fs_attrbuild_nblocks(const struct fs_attrbuild *ab);
int fs_attrbuild_encode(const struct fs_attrbuild *ab, uint32_t i, void *buf, fs_fsblock_t *fsb);

void fs_attrbuild_free(struct fs_attrbuild *ab);

#endif
