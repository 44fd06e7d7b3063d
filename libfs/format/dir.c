// SPDX-License-Identifier: GPL-2.0
/*
 * v5 directories, what one piece says on its own: entry names and sizes,
 * the verifier table's field rules for directory blocks (data
 * "XDB3"/"XDD3", leaf "XDL3"/"XDN3", free index "XDF3"), and the short
 * form in the inode, walked whole here.  The walk that ties a block, leaf
 * or node directory's blocks together is dir_walk.c.
 */
#include "libfs/format/dir.h"
#include "libfs/format/dir_block.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/endian.h"

bool fs_dir_name_ok(const unsigned char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] == 0)
			return false;
	return true;
}

uint32_t fs_dir_entsize(const struct fs_geom *g, uint32_t namelen)
{
	/* inumber, namelen byte, name, ftype byte (ftype feature), tag; 8-byte aligned */
	uint32_t len = 8 + 1 + namelen + (g->ftype ? 1 : 0) + 2;

	return (len + XFS_DIR2_DATA_ALIGN - 1) & ~(uint32_t)(XFS_DIR2_DATA_ALIGN - 1);
}

static unsigned char fold(unsigned char c, bool ci)
{
	if (ci && ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7)))
		return c + ('a' - 'A');
	return c;
}

static bool same_name(const unsigned char *a, const unsigned char *b, size_t len, bool ci)
{
	for (size_t i = 0; i < len; i++)
		if (fold(a[i], ci) != fold(b[i], ci))
			return false;
	return true;
}

bool fs_dir_name_eq(const struct fs_geom *g, const unsigned char *a, const unsigned char *b,
		    size_t len)
{
	return same_name(a, b, len, g->asciici);
}

/* ---- verifier table field rules ---- */

static int blkhdr_fields(const struct fs_vctx *c, uint64_t blkno, uint64_t owner, const char *what)
{
	int64_t ino = c->ino ? (int64_t)c->ino : FS_NONE;
	int n = 0;

	if (c->ino && owner != c->ino) {
		fs_report(c->fl, FS_C_DIR_OWNER, c->agno, c->daddr, ino, "owner", FS_U(c->ino),
			  FS_U(owner), "directory %s block belongs to inode %llu", what,
			  (unsigned long long)owner);
		n++;
	}
	if (blkno != c->daddr) {
		fs_report(c->fl, FS_C_DIR_BLKNO, c->agno, c->daddr, ino, "blkno", FS_U(c->daddr),
			  FS_U(blkno), "directory %s block says it lives at daddr %llu", what,
			  (unsigned long long)blkno);
		n++;
	}
	return n;
}

int fs_dir3_data_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_blk_hdr *h = buf;

	if (len < DATA_HDR)
		return 0;
	return blkhdr_fields(c, be64(h->blkno), be64(h->owner), "data");
}

int fs_dir3_free_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_free_hdr *h = buf;
	uint32_t maxbests = len > FREE_HDR ? (uint32_t)((len - FREE_HDR) / 2) : 0;
	int n;

	if (len < FREE_HDR)
		return 0;
	n = blkhdr_fields(c, be64(h->hdr.blkno), be64(h->hdr.owner), "free index");
	if (be32(h->nvalid) > maxbests || be32(h->nused) > be32(h->nvalid)) {
		char exp[48];

		snprintf(exp, sizeof(exp), "nused <= nvalid <= %u", maxbests);
		fs_report(c->fl, FS_C_DIR_FREE, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
			  "nvalid", exp, FS_U(be32(h->nvalid)),
			  "free index block counts nvalid %u / nused %u are impossible",
			  be32(h->nvalid), be32(h->nused));
		n++;
	}
	return n;
}

int fs_dir3_leaf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_leaf_hdr *h = buf;
	uint32_t count, stale, room;
	int n;

	if (len < LEAF_HDR)
		return 0;
	n = blkhdr_fields(c, be64(h->info.blkno), be64(h->info.owner), "leaf");
	count = be16(h->count);
	stale = be16(h->stale);
	room = (uint32_t)((len - LEAF_HDR) / LEAF_ENT);
	if (be16(h->info.hdr.magic) == XFS_DIR3_LEAF1_MAGIC) {
		const struct xfs_dir2_leaf_tail *t = (const void *)((const char *)buf + len - LEAF_TAIL);
		uint64_t bests = (uint64_t)be32(t->bestcount) * 2 + LEAF_TAIL;

		room = bests + LEAF_HDR <= len ? (uint32_t)((len - LEAF_HDR - bests) / LEAF_ENT) : 0;
	}
	if (count > room || stale > count) {
		char exp[48];

		snprintf(exp, sizeof(exp), "stale <= count <= %u", room);
		fs_report(c->fl, FS_C_DIR_COUNT, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
			  "hdr.count", exp, FS_U(count),
			  "directory leaf counts (count %u, stale %u) do not fit the block",
			  count, stale);
		n++;
	}
	return n;
}

/* ---- short form ---- */

uint64_t fs_dir_sf_size(const struct fs_geom *g, const void *fork, size_t forklen)
{
	const unsigned char *p = fork;
	uint32_t count, inosize;
	size_t at;

	if (forklen < 2 + 4)
		return 0;
	count = p[0];
	inosize = p[1] ? 8 : 4;
	at = 2 + inosize;
	for (uint32_t i = 0; i < count; i++) {
		if (at + 3 > forklen || !p[at])
			return 0;
		at += 3 + p[at] + (g->ftype ? 1 : 0) + inosize;
		if (at > forklen)
			return 0;
	}
	return at <= forklen ? at : 0;
}

int fs_dir_sf_walk(struct fs_dir_ctx *c, const void *fork, size_t forklen, uint64_t size)
{
	const unsigned char *p = fork, *end, *e;
	const struct fs_geom *g = c->g;
	uint32_t count, i8count, i8seen = 0, inosize, off, nlive = 0;
	const unsigned char *live[256];  /* name length byte of each live entry (count is 8 bits) */
	size_t hdrsize;
	int n = 0;

	if (size > forklen || size < 2 + 4) {
		char exp[48];

		snprintf(exp, sizeof(exp), "6..%zu", forklen);
		REPORT(c, 0, FS_C_DIR_SF, "di_size", exp, FS_U(size),
		       "short form directory size %llu does not fit the inode fork",
		       (unsigned long long)size);
		return 1;
	}
	count = p[0];
	i8count = p[1];
	inosize = i8count ? 8 : 4;
	hdrsize = 2 + inosize;
	if (hdrsize > size) {
		REPORT(c, 0, FS_C_DIR_SF, "i8count", "a header inside di_size", FS_U(i8count),
		       "short form directory header does not fit its size");
		return 1;
	}
	c->parent = inosize == 8 ? get_be64(p + 2) : get_be32(p + 2);
	if (!fs_ino_valid(g, c->parent)) {
		REPORT(c, 0, FS_C_DIR_PARENT, "parent", "a valid inode number", FS_U(c->parent),
		       "short form directory parent %llu cannot exist",
		       (unsigned long long)c->parent);
		n++;
		c->parent = 0;
	}
	i8seen += c->parent > XFS_DIR2_MAX_SHORT_INUM;
	end = p + size;
	e = p + hdrsize;
	/* offsets continue after the block form's header, "." and ".." */
	off = (uint32_t)DATA_HDR + fs_dir_entsize(g, 1) + fs_dir_entsize(g, 2);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t namelen, eoff, elen;
		bool name_bad;
		struct fs_dirent d;
		char field[32];

		snprintf(field, sizeof(field), "list[%u]", i);
		if (e + 3 > end) {
			REPORT(c, 0, FS_C_DIR_SF, "count", "entries inside di_size", FS_U(count),
			       "short form directory entry %u starts past the end", i);
			return n + 1;
		}
		namelen = e[0];
		eoff = get_be16(e + 1);
		elen = 3 + namelen + (g->ftype ? 1 : 0) + inosize;
		if (namelen == 0 || e + elen > end) {
			REPORT(c, 0, FS_C_DIR_NAMELEN, field, "1.. inside di_size", FS_U(namelen),
			       "short form directory entry %u name length is impossible", i);
			return n + 1;
		}
		if (eoff < off) {
			REPORT(c, 0, FS_C_DIR_SF, field, ">= end of the previous entry", FS_U(eoff),
			       "short form directory entry %u offset goes backwards", i);
			n++;
		}
		off = eoff + fs_dir_entsize(g, namelen);
		memset(&d, 0, sizeof(d));
		d.name = e + 3;
		d.namelen = (uint8_t)namelen;
		d.ftype = g->ftype ? e[3 + namelen] : 0;
		d.ino = inosize == 8 ? get_be64(e + 3 + namelen + (g->ftype ? 1 : 0))
				     : get_be32(e + 3 + namelen + (g->ftype ? 1 : 0));
		i8seen += d.ino > XFS_DIR2_MAX_SHORT_INUM;
		e += elen;
		/*
		 * The name's rules are not the kernel's fork verifier's
		 * (xfs_dir2_sf_verify checks the file type and inode number of
		 * every entry, not its name): a bad name does not hide them
		 */
		name_bad = !fs_dir_name_ok(d.name, namelen) || is_dot(d.name, namelen) ||
			   is_dotdot(d.name, namelen);
		if (name_bad) {
			REPORT(c, 0, FS_C_DIR_NAME, field, "no '/' or NUL, not . or ..", NULL,
			       "short form directory entry %u has an invalid name", i);
			n++;
		}
		if (d.ftype >= XFS_DIR3_FT_MAX) {
			REPORT(c, 0, FS_C_DIR_FTYPE, field, "< " "9", FS_U(d.ftype),
			       "directory entry %u file type is unknown", i);
			n++;
		}
		if (!fs_ino_valid(g, d.ino)) {
			REPORT(c, 0, FS_C_DIR_INO, field, "a valid inode number", FS_U(d.ino),
			       "directory entry %u names inode %llu, which cannot exist", i,
			       (unsigned long long)d.ino);
			n++;
			continue;
		}
		if (name_bad)
			continue;
		for (uint32_t k = 0; k < nlive; k++)
			if (live[k][0] == namelen && same_name(live[k] + 3, d.name, namelen, g->asciici)) {
				char name[64];

				snprintf(name, sizeof(name), "%.*s", namelen > 60 ? 60 : (int)namelen,
					 (const char *)d.name);
				REPORT(c, 0, FS_C_DIR_DUP_NAME, field, "one entry per name", name,
				       "short form directory holds the name \"%s\" more than once", name);
				n++;
				break;
			}
		live[nlive++] = d.name - 3;
		c->entries++;
		if (c->entry) {
			int err = c->entry(c->priv, &d);
			if (err < 0)
				return err;
		}
	}
	if (i8seen != i8count) {
		REPORT(c, 0, FS_C_DIR_SF, "i8count", FS_U(i8seen), FS_U(i8count),
		       "short form directory 8-byte inode count is wrong");
		n++;
	}
	if (e != end) {
		REPORT(c, 0, FS_C_DIR_SF, "di_size", FS_U(e - p), FS_U(size),
		       "short form directory size is not the end of its last entry");
		n++;
	}
	/* the entries' offsets must fit one directory block (the kernel's rule) */
	if (off > g->dirblksize) {
		REPORT(c, 0, FS_C_DIR_SF, "offset", FS_U(g->dirblksize), FS_U(off),
		       "short form directory entries' offsets run past a directory block");
		n++;
	}
	return n;
}
