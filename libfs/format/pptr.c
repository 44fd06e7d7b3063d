// SPDX-License-Identifier: GPL-2.0
/*
 * Parent pointer xattrs: decoding a parent-namespace attr entry into the
 * directory it names (inode, generation, entry name), the rules the kernel's
 * xfs_parent_from_attr applies to it, its name hash, and the name digest the
 * check scan matches directory entries and parent pointers by.
 */
#include "libfs/format/pptr.h"

#include <string.h>

#include "libfs/format/da.h"
#include "libfs/format/endian.h"

uint32_t fs_parent_hashval(const struct fs_geom *g, const uint8_t *name, size_t len,
			   fs_ino_t parent)
{
	return fs_dir_hashname(g, name, len) ^ (uint32_t)(parent >> 32) ^ (uint32_t)parent;
}

static bool local_rec(const struct fs_attr_ent *e)
{
	return e->local && e->value && e->valuelen == sizeof(struct xfs_parent_rec);
}

uint32_t fs_attr_ent_hashval(const struct fs_geom *g, const struct fs_attr_ent *e)
{
	if (!fs_attr_is_pptr(e))
		return fs_da_hashname(e->name, e->namelen);
	if (!local_rec(e))
		return 0;
	return fs_parent_hashval(g, e->name, e->namelen,
				 get_be64(e->value + offsetof(struct xfs_parent_rec, p_ino)));
}

enum fs_pptr_problem fs_pptr_decode(const struct fs_geom *g, const struct fs_attr_ent *e,
				    struct fs_pptr *p)
{
	memset(p, 0, sizeof(*p));
	p->name = e->name;
	p->namelen = e->namelen;
	/* parent pointers are always logged: never incomplete; a directory entry's name */
	if ((e->flags & XFS_ATTR_INCOMPLETE) || e->namelen == 0 || !e->name ||
	    memchr(e->name, 0, e->namelen) || memchr(e->name, '/', e->namelen))
		return FS_PPTR_NAME;
	if (!local_rec(e))
		return FS_PPTR_VALUE;
	p->parent = get_be64(e->value + offsetof(struct xfs_parent_rec, p_ino));
	p->gen = get_be32(e->value + offsetof(struct xfs_parent_rec, p_gen));
	if (!fs_ino_valid(g, p->parent))
		return FS_PPTR_INO;
	return FS_PPTR_OK;
}

uint64_t fs_name_digest(const uint8_t *name, size_t len)
{
	/* FNV-1a, then a final avalanche (splitmix64's) so short names spread over 64 bits */
	uint64_t h = 0xcbf29ce484222325ull ^ len;

	for (size_t i = 0; i < len; i++) {
		h ^= name[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

const char *fs_pptr_problem_name(enum fs_pptr_problem p)
{
	switch (p) {
	case FS_PPTR_OK: return "none";
	case FS_PPTR_NAME: return "name";
	case FS_PPTR_VALUE: return "value";
	case FS_PPTR_INO: return "parent inode";
	}
	return "?";
}
