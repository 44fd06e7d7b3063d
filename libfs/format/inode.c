// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes: decoding a v3 dinode core into host order (legacy and bigtime
 * timestamps, legacy and nrext64 extent counters, fork geometry, flags as
 * FS_XFLAG_*), the dinode field rules the verifier table runs (the
 * kernel's xfs_dinode_verify and xfs_iformat_* checks), the geometry of
 * inode chunks on disk (which clusters hold a chunk's inodes, where an
 * inode lies in a read), and bulkstat's inode scan: walk an AG's inode
 * btree and read its inode chunks in large coalesced windows through the
 * device's I/O queue, delivering every inode in inode-number order.
 *
 * The check scan's phase 4 (scan/phase_inodes.c) shares the chunk
 * geometry (it takes its cluster list from fs_ichunk_clusters, this scan
 * its inode addresses from fs_inode_byte and fs_inode_in_read) but not
 * the reading: its chunks come from the in-core model (the inode btrees
 * and the chunks the rmapbt or a probe found, which no inobt walk sees),
 * read as whole clusters through fs_ra_stream on the worker's queue with
 * many windows in flight and handed out in completion order, each inode's
 * work standing alone.  This scan walks the inobt
 * itself, checking records as they arrive, and must deliver in inode
 * order because bulkstat's output is in that order: two batches read in
 * turn by a reader thread of its own.  One reader for both would make the
 * check scan wait on its oldest window or bulkstat reorder what it read.
 */
#include "libfs/format/inode.h"
#include "libfs/format/symlink.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/ag.h"
#include "libfs/format/btree.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/fs.h"
#include "libfs/io/io.h"

/* ---- decoding ---- */

struct fs_timestamp fs_inode_decode_ts(uint64_t raw, bool bigtime)
{
	struct fs_timestamp t;

	if (bigtime) {
		t.sec = xfs_bigtime_to_unix(raw / 1000000000ull);
		t.nsec = (uint32_t)(raw % 1000000000ull);
	} else {
		/* struct xfs_legacy_timestamp: be32 seconds then be32 nanoseconds, both signed */
		t.sec = (int32_t)(uint32_t)(raw >> 32);
		t.nsec = (uint32_t)raw;
	}
	return t;
}

void fs_inode_decode(const void *dinode, struct fs_inode *o)
{
	const struct xfs_dinode *d = dinode;

	memset(o, 0, sizeof(*o));
	o->mode = be16(d->di_mode);
	o->version = d->di_version;
	o->format = d->di_format;
	o->aformat = (uint8_t)d->di_aformat;
	o->uid = be32(d->di_uid);
	o->gid = be32(d->di_gid);
	if (o->version == 1) {
		o->nlink = be16(d->di_onlink);
		o->projid = 0;
	} else {
		o->nlink = be32(d->di_nlink);
		o->projid = (uint32_t)be16(d->di_projid_hi) << 16 | be16(d->di_projid_lo);
	}
	if (o->version >= 3) {
		o->flags2 = be64(d->di_flags2);
		o->bigtime = o->flags2 & XFS_DIFLAG2_BIGTIME;
		o->nrext64 = o->flags2 & XFS_DIFLAG2_NREXT64;
		o->changecount = be64(d->di_changecount);
		o->lsn = be64(d->di_lsn);
		o->cowextsize = be32(d->di_cowextsize);
		o->ino = be64(d->di_ino);
		o->crtime = fs_inode_decode_ts(be64(d->di_crtime), o->bigtime);
	}
	o->atime = fs_inode_decode_ts(be64(d->di_atime), o->bigtime);
	o->mtime = fs_inode_decode_ts(be64(d->di_mtime), o->bigtime);
	o->ctime = fs_inode_decode_ts(be64(d->di_ctime), o->bigtime);
	o->size = be64(d->di_size);
	o->nblocks = be64(d->di_nblocks);
	o->extsize = be32(d->di_extsize);
	if (o->nrext64) {
		o->nextents = be64(d->di_big_nextents);
		o->anextents = be32(d->di_big_anextents);
	} else {
		o->nextents = be32(d->di_nextents);
		o->anextents = be16(d->di_anextents);
	}
	o->forkoff = d->di_forkoff;
	o->flags = be16(d->di_flags);
	o->gen = be32(d->di_gen);
	o->next_unlinked = be32(d->di_next_unlinked);
	if (o->format == XFS_DINODE_FMT_DEV)
		o->dev = get_be32((const unsigned char *)dinode + xfs_dinode_size(o->version));
}

uint32_t fs_inode_litino(const struct fs_geom *g)
{
	return g->inodesize - (uint32_t)sizeof(struct xfs_dinode);
}

uint32_t fs_inode_fork_size(const struct fs_geom *g, const struct fs_inode *ip, int whichfork)
{
	uint32_t lit = fs_inode_litino(g), boff = (uint32_t)ip->forkoff << 3;

	if (whichfork == XFS_DATA_FORK)
		return ip->forkoff ? (boff < lit ? boff : lit) : lit;
	return ip->forkoff && boff < lit ? lit - boff : 0;
}

const void *fs_inode_fork_ptr(const void *dinode, const struct fs_inode *ip, int whichfork)
{
	const unsigned char *d = (const unsigned char *)dinode + sizeof(struct xfs_dinode);

	return whichfork == XFS_DATA_FORK ? d : d + ((size_t)ip->forkoff << 3);
}

uint64_t fs_inode_max_nextents(bool nrext64, int whichfork)
{
	if (whichfork == XFS_DATA_FORK)
		return nrext64 ? XFS_MAX_EXTCNT_DATA_FORK_LARGE : XFS_MAX_EXTCNT_DATA_FORK_SMALL;
	return nrext64 ? XFS_MAX_EXTCNT_ATTR_FORK_LARGE : XFS_MAX_EXTCNT_ATTR_FORK_SMALL;
}

uint32_t fs_inode_xflags(const struct fs_inode *ip)
{
	static const struct { uint32_t di, fs; } map1[] = {
		{ XFS_DIFLAG_REALTIME, FS_XFLAG_REALTIME },
		{ XFS_DIFLAG_PREALLOC, FS_XFLAG_PREALLOC },
		{ XFS_DIFLAG_IMMUTABLE, FS_XFLAG_IMMUTABLE },
		{ XFS_DIFLAG_APPEND, FS_XFLAG_APPEND },
		{ XFS_DIFLAG_SYNC, FS_XFLAG_SYNC },
		{ XFS_DIFLAG_NOATIME, FS_XFLAG_NOATIME },
		{ XFS_DIFLAG_NODUMP, FS_XFLAG_NODUMP },
		{ XFS_DIFLAG_RTINHERIT, FS_XFLAG_RTINHERIT },
		{ XFS_DIFLAG_PROJINHERIT, FS_XFLAG_PROJINHERIT },
		{ XFS_DIFLAG_NOSYMLINKS, FS_XFLAG_NOSYMLINKS },
		{ XFS_DIFLAG_EXTSIZE, FS_XFLAG_EXTSIZE },
		{ XFS_DIFLAG_EXTSZINHERIT, FS_XFLAG_EXTSZINHERIT },
		{ XFS_DIFLAG_NODEFRAG, FS_XFLAG_NODEFRAG },
		{ XFS_DIFLAG_FILESTREAM, FS_XFLAG_FILESTREAM },
	};
	static const struct { uint64_t di; uint32_t fs; } map2[] = {
		{ XFS_DIFLAG2_DAX, FS_XFLAG_DAX },
		{ XFS_DIFLAG2_COWEXTSIZE, FS_XFLAG_COWEXTSIZE },
	};
	uint32_t x = 0;

	/* NEWRTBM (rt bitmap format) has no FS_XFLAG: the kernel does not report it */
	for (size_t i = 0; i < sizeof(map1) / sizeof(map1[0]); i++)
		if (ip->flags & map1[i].di)
			x |= map1[i].fs;
	for (size_t i = 0; i < sizeof(map2) / sizeof(map2[0]); i++)
		if (ip->flags2 & map2[i].di)
			x |= map2[i].fs;
	if (ip->forkoff)
		x |= FS_XFLAG_HASATTR;
	return x;
}

uint32_t fs_inode_bulkstat_rdev(uint32_t dev)
{
	/*
	 * On disk: sysv layout, 14-bit major above an 18-bit minor.  The kernel
	 * keeps 9 bits of the major when it makes a dev_t (xfs_to_linux_dev_t)
	 * and bulkstat re-encodes with sysv_encode_dev(): minor | major << 18.
	 */
	uint32_t major = (dev >> 18) & 0x1ff, minor = dev & 0x3ffff;

	return minor | major << 18;
}

/* ---- verification ---- */

struct iv {
	const struct fs_vctx *c;
	struct fs_reporter r;      /* messages start "inode N: " */
};

static bool mode_type_valid(uint16_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return true;
	default:
		return false;
	}
}

/* xfs_dinode_verify_fork plus the shape checks of xfs_iformat_extents/btree/local. */
static void verify_fork(struct iv *v, const struct fs_geom *g, const void *buf,
			const struct fs_inode *ip, int whichfork)
{
	bool data = whichfork == XFS_DATA_FORK;
	enum fs_code code = data ? FS_C_INODE_FORMAT : FS_C_INODE_AFORMAT;
	const char *fmtfield = data ? "di_format" : "di_aformat";
	uint32_t fsize = fs_inode_fork_size(g, ip, whichfork);
	uint8_t fmt = data ? ip->format : ip->aformat;
	uint64_t next = data ? ip->nextents : ip->anextents;
	uint64_t maxext = fsize / sizeof(struct xfs_bmbt_rec);

	if (data) {
		if ((S_ISDIR(ip->mode) || S_ISLNK(ip->mode)) && ip->size <= fsize &&
		    fmt != XFS_DINODE_FMT_LOCAL)
			fs_reporter_bad(&v->r, code, fmtfield, "local", FS_U(fmt),
					"directory or symlink small enough to be inline is not in local format");
		if (ip->size > fsize && fmt == XFS_DINODE_FMT_LOCAL)
			fs_reporter_bad(&v->r, FS_C_INODE_SIZE, "di_size", FS_U(fsize),
					FS_U(ip->size),
					"local-format data larger than the data fork");
	}
	switch (fmt) {
	case XFS_DINODE_FMT_LOCAL:
		if (data && S_ISREG(ip->mode))
			fs_reporter_bad(&v->r, code, fmtfield, "extents or btree", "local",
					"regular file in local format");
		if (next)
			fs_reporter_bad(&v->r, FS_C_INODE_NEXTENTS,
					data ? "di_nextents" : "di_anextents", "0", FS_U(next),
					"local-format fork has extents");
		if (data && S_ISLNK(ip->mode) && ip->size > 0 && ip->size <= fsize) {
			/* the inline target's own rules (symlink.c) */
			v->r.n += fs_symlink_local_verify(v->c, fs_inode_fork_ptr(buf, ip, XFS_DATA_FORK),
							ip->size);
		}
		break;
	case XFS_DINODE_FMT_EXTENTS:
		if (next > maxext)
			fs_reporter_bad(&v->r, FS_C_INODE_NEXTENTS,
					data ? "di_nextents" : "di_anextents", FS_U(maxext),
					FS_U(next), "more extents than fit in the fork");
		break;
	case XFS_DINODE_FMT_BTREE: {
		const unsigned char *root = fs_inode_fork_ptr(buf, ip, whichfork);
		uint64_t maxn = fs_inode_max_nextents(ip->nrext64, whichfork);
		uint16_t level, nrecs;

		if (next > maxn) {
			fs_reporter_bad(&v->r, FS_C_INODE_NEXTENTS,
					data ? "di_nextents" : "di_anextents", FS_U(maxn),
					FS_U(next), "extent count above what the format allows");
			break;
		}
		if (fsize < sizeof(struct xfs_bmdr_block)) {
			fs_reporter_bad(&v->r, code, fmtfield,
					"a fork large enough for a btree root", FS_U(fsize),
					"btree-format fork too small for its root");
			break;
		}
		level = get_be16(root);
		nrecs = get_be16(root + 2);
		if (next <= maxext)
			fs_reporter_bad(&v->r, code, fmtfield, "extents", "btree",
					"btree-format fork whose extents would fit inline");
		if (nrecs == 0 ||
		    sizeof(struct xfs_bmdr_block) +
		    (size_t)nrecs * (sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t)) > fsize)
			fs_reporter_bad(&v->r, code, "bb_numrecs", "records that fit in the fork",
					FS_U(nrecs),
					"btree root record count does not fit the fork");
		if (level == 0 || (g->bmbt_maxlevels_data && level > g->bmbt_maxlevels_data))
			fs_reporter_bad(&v->r, code, "bb_level", "1..bmbt height", FS_U(level),
					"btree root level out of range");
		if (next > ip->nblocks)
			fs_reporter_bad(&v->r, FS_C_INODE_NBLOCKS, "di_nblocks",
					"at least the extent count", FS_U(ip->nblocks),
					"fewer blocks than extents");
		break;
	}
	default:
		fs_reporter_bad(&v->r, code, fmtfield, "local, extents or btree", FS_U(fmt),
				"fork format invalid");
	}
}

/*
 * di_flags and di_flags2 bits that exist, and that fit the file's type and
 * the filesystem (xfs_repair's process_dinode_int checks the same).
 */
static void verify_flags(struct iv *v, const struct fs_geom *g, const struct fs_inode *ip)
{
	const uint16_t dir_only = XFS_DIFLAG_RTINHERIT | XFS_DIFLAG_EXTSZINHERIT |
				  XFS_DIFLAG_PROJINHERIT | XFS_DIFLAG_NOSYMLINKS;
	/* fs_geom_derive places it after the root when the superblock has it null */
	uint64_t rbmino = g->rbmino;
	const char *why = NULL;

	if (ip->flags & ~XFS_DIFLAG_ANY)
		why = "unknown flag bits";
	else if ((ip->flags & XFS_DIFLAG_REALTIME) && !g->rblocks)
		why = "realtime flag on a filesystem without a realtime section";
	else if ((ip->flags & XFS_DIFLAG_NEWRTBM) && v->c->ino != rbmino)
		why = "NEWRTBM flag on an inode that is not the realtime bitmap";
	else if (ip->mode && (ip->flags & dir_only) && !S_ISDIR(ip->mode))
		why = "directory-only flags (RTINHERIT, EXTSZINHERIT, PROJINHERIT, NOSYMLINKS) "
		      "on a non-directory";
	else if (ip->mode && (ip->flags & (XFS_DIFLAG_REALTIME | XFS_DIFLAG_EXTSIZE)) &&
		 !S_ISREG(ip->mode))
		why = "file-only flags (REALTIME, EXTSIZE) on a non-regular file";
	if (why)
		fs_reporter_bad(&v->r, FS_C_INODE_FLAGS, "di_flags", NULL, FS_X(ip->flags), "%s",
				why);
	why = NULL;
	if (ip->flags2 & ~XFS_DIFLAG2_ANY)
		why = "unknown flags2 bits";
	else if (ip->mode && (ip->flags2 & XFS_DIFLAG2_DAX) &&
		 !(S_ISREG(ip->mode) || S_ISDIR(ip->mode)))
		why = "DAX flag on a special file";
	if (why)
		fs_reporter_bad(&v->r, FS_C_INODE_FLAGS, "di_flags2", NULL, FS_X(ip->flags2), "%s",
				why);
}

static void verify_extsize(struct iv *v, const struct fs_geom *g, const struct fs_inode *ip)
{
	bool rt = ip->flags & XFS_DIFLAG_REALTIME;
	bool hint = ip->flags & XFS_DIFLAG_EXTSIZE;
	bool inherit = ip->flags & XFS_DIFLAG_EXTSZINHERIT;
	const char *why = NULL;

	if ((hint || inherit) && !(S_ISDIR(ip->mode) || S_ISREG(ip->mode)))
		why = "extent size hint on a file that is neither directory nor regular";
	else if (hint && !S_ISREG(ip->mode))
		why = "EXTSIZE flag on a non-regular file";
	else if (inherit && !S_ISDIR(ip->mode))
		why = "EXTSZINHERIT flag on a non-directory";
	else if ((hint || inherit) && ip->extsize == 0)
		why = "extent size hint flag with a zero hint";
	else if (ip->mode && !(hint || inherit) && ip->extsize != 0)
		why = "extent size hint without its flag";
	else if (ip->extsize > XFS_MAX_BMBT_EXTLEN)
		why = "extent size hint longer than an extent can be";
	else if (!rt && ip->extsize > g->agblocks / 2)
		why = "extent size hint larger than half an AG";
	/* realtime hints must be multiples of the rt extent size: not judged here */
	if (why)
		fs_reporter_bad(&v->r, FS_C_INODE_EXTSIZE, "di_extsize", NULL, FS_U(ip->extsize),
				"%s", why);
}

static void verify_cowextsize(struct iv *v, const struct fs_geom *g, const struct fs_inode *ip)
{
	bool hint = ip->flags2 & XFS_DIFLAG2_COWEXTSIZE;
	const char *why = NULL;

	if (hint && !g->reflink)
		why = "CoW extent size hint on a filesystem without reflink";
	else if (hint && !(S_ISDIR(ip->mode) || S_ISREG(ip->mode)))
		why = "CoW extent size hint on a file that is neither directory nor regular";
	else if (hint && ip->cowextsize == 0)
		why = "CoW extent size hint flag with a zero hint";
	else if (ip->mode && !hint && ip->cowextsize != 0)
		why = "CoW extent size hint without its flag";
	else if (hint && (ip->flags & (XFS_DIFLAG_REALTIME | XFS_DIFLAG_RTINHERIT)))
		why = "CoW extent size hint on a realtime file or directory";
	else if (ip->cowextsize > XFS_MAX_BMBT_EXTLEN)
		why = "CoW extent size hint longer than an extent can be";
	else if (ip->cowextsize > g->agblocks / 2)
		why = "CoW extent size hint larger than half an AG";
	if (why)
		fs_reporter_bad(&v->r, FS_C_INODE_COWEXTSIZE, "di_cowextsize", NULL,
				FS_U(ip->cowextsize), "%s", why);
}

int fs_inode_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	const struct xfs_dinode *d = buf;
	struct iv v = { .c = c, .r = fs_vctx_reporter(c) };
	struct fs_inode ip;
	uint32_t lit = fs_inode_litino(g);

	if (len < sizeof(struct xfs_dinode) || len < g->inodesize)
		return 0;	/* the common checks already said the buffer is short */
	v.r.ino = (int64_t)c->ino;
	/* "inode N: " put before its findings' messages, not formatted per inode (1% of a scan) */
	v.r.prefix_ino = true;
	fs_inode_decode(buf, &ip);
	if (c->decoded)
		*c->decoded = ip;

	if (ip.version != 3) {
		fs_reporter_bad(&v.r, FS_C_INODE_VERSION, "di_version", "3", FS_U(ip.version),
				"inode version is not 3 on a v5 filesystem");
		return v.r.n;	/* nothing else is laid out as expected */
	}
	/* v1's link count field: xfs_repair wants it 0 in later versions */
	if (d->di_onlink)
		fs_reporter_bad(&v.r, FS_C_INODE_ONLINK, "di_onlink", "0", FS_U(be16(d->di_onlink)),
				"obsolete version 1 link count is not zero");
	if (ip.ino != c->ino)
		fs_reporter_bad(&v.r, FS_C_INODE_INO, "di_ino", FS_U(c->ino), FS_U(ip.ino),
				"inode number stored in the inode is not its own");
	if (ip.size & (1ull << 63))
		fs_reporter_bad(&v.r, FS_C_INODE_SIZE, "di_size", "below 2^63", FS_U(ip.size),
				"negative size");
	if (ip.mode && !mode_type_valid(ip.mode)) {
		fs_reporter_bad(&v.r, FS_C_INODE_MODE, "di_mode", "a known file type",
				FS_X(ip.mode), "unknown file type");
		return v.r.n;
	}
	/* empty directories and symlinks exist only while being freed (nlink 0) */
	if ((S_ISLNK(ip.mode) || S_ISDIR(ip.mode)) && ip.size == 0 && ip.nlink)
		fs_reporter_bad(&v.r, FS_C_INODE_SIZE, "di_size", "nonzero", "0",
				"zero-length directory or symlink");
	if (ip.nrext64) {
		if (!g->nrext64)
			fs_reporter_bad(&v.r, FS_C_INODE_NREXT64, "di_flags2", "no NREXT64",
					"NREXT64",
					"large extent counters on a filesystem without them");
		if (d->di_nrext64_pad)
			fs_reporter_bad(&v.r, FS_C_INODE_NREXT64, "di_nrext64_pad", "0",
					FS_U(be16(d->di_nrext64_pad)),
					"padding next to the large attr extent counter is not zero");
	} else if (d->di_v3_pad) {
		fs_reporter_bad(&v.r, FS_C_INODE_NREXT64, "di_v3_pad", "0",
				FS_X(be64(d->di_v3_pad)),
				"padding where large extent counters would be is not zero");
	}
	if (ip.mode && ip.nextents + ip.anextents > ip.nblocks)
		fs_reporter_bad(&v.r, FS_C_INODE_NBLOCKS, "di_nblocks", "at least the extent count",
				FS_U(ip.nblocks), "fewer blocks than extents");
	if (S_ISDIR(ip.mode) &&
	    ip.nextents > ((uint64_t)XFS_DIR2_MAX_SPACES * XFS_DIR2_SPACE_SIZE >> g->blocklog))
		fs_reporter_bad(&v.r, FS_C_INODE_NEXTENTS, "di_nextents",
				"what a directory can have", FS_U(ip.nextents),
				"directory has more extents than a directory can");
	if (ip.mode && ((uint32_t)ip.forkoff << 3) > g->inodesize)
		fs_reporter_bad(&v.r, FS_C_INODE_FORKOFF, "di_forkoff", NULL, FS_U(ip.forkoff),
				"attr fork starts past the end of the inode");
	if (ip.forkoff) {
		if (ip.format == XFS_DINODE_FMT_DEV) {
			if (ip.forkoff != (sizeof(uint32_t) + 7) / 8)
				fs_reporter_bad(&v.r, FS_C_INODE_FORKOFF, "di_forkoff", "1",
						FS_U(ip.forkoff),
						"device inode attr fork offset is not right after the device number");
		} else if (ip.format <= XFS_DINODE_FMT_BTREE && ip.forkoff >= (lit >> 3)) {
			fs_reporter_bad(&v.r, FS_C_INODE_FORKOFF, "di_forkoff",
					FS_U((lit >> 3) - 1), FS_U(ip.forkoff),
					"attr fork offset leaves no room for it");
		}
	}
	if (v.r.n)
		return v.r.n;	/* fork geometry below depends on these */

	switch (ip.mode & S_IFMT) {
	case S_IFIFO: case S_IFCHR: case S_IFBLK: case S_IFSOCK:
		if (ip.format != XFS_DINODE_FMT_DEV)
			fs_reporter_bad(&v.r, FS_C_INODE_FORMAT, "di_format", "dev",
					FS_U(ip.format), "special file not in device format");
		break;
	case S_IFREG: case S_IFLNK: case S_IFDIR:
		verify_fork(&v, g, buf, &ip, XFS_DATA_FORK);
		break;
	default:
		break;	/* mode 0: an unused inode */
	}
	if (ip.forkoff) {
		verify_fork(&v, g, buf, &ip, XFS_ATTR_FORK);
	} else {
		if (ip.aformat != 0 && ip.aformat != XFS_DINODE_FMT_EXTENTS)
			fs_reporter_bad(&v.r, FS_C_INODE_AFORMAT, "di_aformat", "0 or extents",
					FS_U(ip.aformat),
					"attr fork format set on an inode without an attr fork");
		if (ip.anextents)
			fs_reporter_bad(&v.r, FS_C_INODE_NEXTENTS, "di_anextents", "0",
					FS_U(ip.anextents),
					"attr extents on an inode without an attr fork");
	}
	verify_flags(&v, g, &ip);
	verify_extsize(&v, g, &ip);
	if ((ip.flags2 & (XFS_DIFLAG2_REFLINK | XFS_DIFLAG2_COWEXTSIZE)) && !g->reflink)
		fs_reporter_bad(&v.r, FS_C_INODE_FLAGS, "di_flags2", "no REFLINK/COWEXTSIZE",
				FS_X(ip.flags2), "reflink flags on a filesystem without reflink");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) && !S_ISREG(ip.mode))
		fs_reporter_bad(&v.r, FS_C_INODE_FLAGS, "di_flags2", NULL, FS_X(ip.flags2),
				"reflink flag on a file that is not regular");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) &&
	    (ip.flags & (XFS_DIFLAG_REALTIME | XFS_DIFLAG_RTINHERIT)))
		fs_reporter_bad(&v.r, FS_C_INODE_FLAGS, "di_flags2", NULL, FS_X(ip.flags2),
				"reflink flag on a realtime file or directory");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) && (ip.flags2 & XFS_DIFLAG2_DAX))
		fs_reporter_bad(&v.r, FS_C_INODE_FLAGS, "di_flags2", NULL, FS_X(ip.flags2),
				"reflink and DAX flags together");
	verify_cowextsize(&v, g, &ip);
	if (ip.bigtime && !g->bigtime)
		fs_reporter_bad(&v.r, FS_C_INODE_FLAGS, "di_flags2", "no BIGTIME", "BIGTIME",
				"bigtime timestamps on a filesystem without bigtime");
	/* legacy timestamps: xfs_repair resets nanoseconds of a second or more */
	if (!ip.bigtime) {
		static const struct { size_t off; const char *name; } ts[] = {
			{ offsetof(struct xfs_dinode, di_atime), "di_atime" },
			{ offsetof(struct xfs_dinode, di_mtime), "di_mtime" },
			{ offsetof(struct xfs_dinode, di_ctime), "di_ctime" },
			{ offsetof(struct xfs_dinode, di_crtime), "di_crtime" },
		};
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			uint32_t nsec = get_be32((const unsigned char *)buf + ts[i].off + 4);
			if (nsec >= 1000000000u)
				fs_reporter_bad(&v.r, FS_C_INODE_TIMESTAMP, ts[i].name,
						"nanoseconds < 1000000000", FS_U(nsec),
						"legacy timestamp nanoseconds out of range");
		}
	}
	if (ip.next_unlinked != NULLAGINO &&
	    !fs_agino_valid(g, fs_ino_to_agno(g, c->ino), ip.next_unlinked))
		fs_reporter_bad(&v.r, FS_C_INODE_UNLINKED, "di_next_unlinked",
				"NULL or an inode of this AG", FS_U(ip.next_unlinked),
				"unlinked list pointer names no inode");
	/* only unlinked (nlink 0) inodes are on a list; xfs_repair clears it on the rest */
	else if (ip.next_unlinked != NULLAGINO && ip.mode && ip.nlink)
		fs_reporter_bad(&v.r, FS_C_UNLINKED_LINKED, "di_next_unlinked", "NULL",
				FS_U(ip.next_unlinked),
				"inode with links has an unlinked list pointer");
	return v.r.n;
}

/* ---- inode chunk geometry ---- */

unsigned fs_ichunk_clusters(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t startino,
			    uint16_t holemask, struct fs_icluster out[XFS_INODES_PER_CHUNK])
{
	uint32_t bpc = g->blocks_per_cluster ? g->blocks_per_cluster : 1;
	uint32_t aglen = fs_ag_blocks(g, agno);
	fs_agblock_t chunk_agbno = fs_agino_to_agbno(g, startino), last = NULLAGBLOCK;
	unsigned n = 0;

	for (unsigned i = 0; i < XFS_INODES_PER_CHUNK; i++) {
		fs_agblock_t u;

		if (fs_ichunk_in_hole(holemask, i))
			continue;
		u = chunk_agbno + (fs_agino_to_agbno(g, startino + i) - chunk_agbno) / bpc * bpc;
		if (u == last || u >= aglen)
			continue;
		last = u;
		out[n++] = (struct fs_icluster){ u, u + bpc <= aglen ? bpc : aglen - u };
	}
	return n;
}

/* ---- the inode scan ---- */

/*
 * Reads are planned as records arrive from the inobt walk: each record's
 * wanted inodes extend the current window (when the gap is small and the
 * window stays under window_max) or open a new one.  A batch is a buffer of
 * windows; two batches alternate, and a reader thread per scanner reads one
 * while the caller's callback works through the other, so the device and
 * the CPU are busy at the same time.
 */

struct pending {
	struct fs_inobt_rec rec;
	uint32_t win;              /* window holding its wanted inodes */
};

struct window {
	uint64_t off;              /* aligned start */
	uint64_t want_end;         /* end of the last range it covers (unaligned) */
	size_t len;                /* aligned length read */
	size_t buf_off;            /* where in the batch buffer */
	const unsigned char *map;  /* resident in the page cache: read in place, not copied */
};

struct batch {
	unsigned char *buf;
	size_t used;
	struct window *wins;
	struct fs_io_req *reqs;    /* per window: its read (or the mapped one's length) */
	struct fs_io_req *io;      /* the reads issued (priv: the window's index) */
	size_t nwin, win_cap;
	struct pending *pend;
	size_t npend, pend_cap;
	/* reader hand-off */
	bool queued, done;
	int err;
};

struct fs_inode_scan {
	struct fs *fs;
	struct fs_inode_scan_opts o;
	struct fs_ioq *q;
	size_t align;
	size_t buf_cap;
	struct batch b[2];
	unsigned fill;             /* the batch records go to */
	/* the reader thread */
	pthread_t reader;
	bool have_reader, quit;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* the AG being scanned */
	fs_agnumber_t agno;
	fs_agino_t start;
	uint64_t lo, end;          /* records whose startino is in [lo, end) are this scan's */
	fs_agino_t *chunks;        /* fs_inode_scan_ag_chunks: startinos collected, not read */
	size_t nchunks, chunks_cap;
	bool collect;
	struct fs_findings *fl;
	fs_inode_scan_fn fn;
	void *priv;
	int stop;                  /* a callback's nonzero return, or an error */
	struct fs_inode_scan_stats st;
};

static void read_batch(struct fs_inode_scan *s, struct batch *b);

static void *reader_main(void *arg)
{
	struct fs_inode_scan *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct batch *b = NULL;

		while (!s->quit && !(b = s->b[0].queued ? &s->b[0] : s->b[1].queued ? &s->b[1] : NULL))
			pthread_cond_wait(&s->cond, &s->lock);
		if (!b)
			break;
		b->queued = false;
		pthread_mutex_unlock(&s->lock);
		read_batch(s, b);
		pthread_mutex_lock(&s->lock);
		b->done = true;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int fs_inode_scan_create(struct fs *fs, const struct fs_inode_scan_opts *o,
			 struct fs_inode_scan **out)
{
	struct fs_inode_scan *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->fs = fs;
	if (o)
		s->o = *o;
	if (!s->o.window_max)
		s->o.window_max = 2u << 20;
	if (!s->o.gap_max)
		s->o.gap_max = 256u << 10;
	if (!s->o.batch_bytes)
		s->o.batch_bytes = 8u << 20;
	if (s->o.window_max < (size_t)XFS_INODES_PER_CHUNK * fs->g.inodesize)
		s->o.window_max = (size_t)XFS_INODES_PER_CHUNK * fs->g.inodesize;
	if (s->o.batch_bytes < s->o.window_max)
		s->o.batch_bytes = s->o.window_max;
	s->align = fs->dev->direct && fs->dev->dio_align > FS_BBSIZE ? fs->dev->dio_align : FS_BBSIZE;
	/* a batch closes once it holds batch_bytes; one more window may follow */
	s->buf_cap = s->o.batch_bytes + s->o.window_max + 2 * s->align;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	for (int i = 0; i < 2; i++) {
		s->b[i].buf = fs_dev_alloc(fs->dev, s->buf_cap);
		if (!s->b[i].buf) {
			fs_inode_scan_destroy(s);
			return -ENOMEM;
		}
	}
	err = fs_ioq_create(fs->dev, &s->q);
	if (err) {
		fs_inode_scan_destroy(s);
		return err;
	}
	/* without a reader thread the batches are read in line, one at a time */
	s->have_reader = pthread_create(&s->reader, NULL, reader_main, s) == 0;
	*out = s;
	return 0;
}

void fs_inode_scan_destroy(struct fs_inode_scan *s)
{
	if (!s)
		return;
	if (s->have_reader) {
		pthread_mutex_lock(&s->lock);
		s->quit = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reader, NULL);
	}
	fs_ioq_destroy(s->q);
	for (int i = 0; i < 2; i++) {
		free(s->b[i].buf);
		free(s->b[i].wins);
		free(s->b[i].reqs);
		free(s->b[i].io);
		free(s->b[i].pend);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->chunks);
	free(s);
}

void fs_inode_scan_get_stats(const struct fs_inode_scan *s, struct fs_inode_scan_stats *st)
{
	*st = s->st;
}

/* Inodes of a record the caller wants: allocated space, past start, free ones if asked. */
static uint64_t wanted_mask(const struct fs_inode_scan *s, const struct fs_inobt_rec *r)
{
	uint64_t m = fs_inobt_rec_allocmask(r);

	if (!s->o.free_inodes)
		m &= ~r->free;
	if (s->start > r->startino) {
		uint32_t skip = s->start - r->startino;
		m = skip >= 64 ? 0 : m & ~((1ull << skip) - 1);
	}
	return m;
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/*
 * Read one batch's windows (reader thread, or in line).  A window whose
 * pages are all in the page cache is not read at all: its inodes are
 * handed out from the device's mapping (copying them cost a third of a warm
 * bulkstat's time); the others go to the queue in one batch.
 */
static void read_batch(struct fs_inode_scan *s, struct batch *b)
{
	struct fs_dev *dev = s->fs->dev;
	size_t nio = 0;

	for (size_t i = 0; i < b->nwin; i++) {
		struct window *w = &b->wins[i];
		size_t len = w->len;

		/* the device may end inside the last window */
		if (w->off < dev->size && w->off + w->len > dev->size && w->want_end <= dev->size)
			len = dev->size - w->off;
		w->map = fs_dev_resident(dev, w->off, len);
		b->reqs[i] = (struct fs_io_req){ .off = w->off, .len = len, .buf = b->buf + w->buf_off,
						 .result = w->map ? (long)len : 0 };
		if (!w->map)
			b->io[nio++] = (struct fs_io_req){ .off = w->off, .len = len,
							   .buf = b->buf + w->buf_off,
							   .priv = (void *)(uintptr_t)i };
	}
	b->err = nio ? fs_ioq_read_batch(s->q, b->io, nio) : 0;
	if (b->err)
		return;
	for (size_t k = 0; k < nio; k++) {
		struct fs_io_req *r = &b->reqs[(uintptr_t)b->io[k].priv];

		r->result = b->io[k].result;
		if (r->result == -EINVAL) {
			/* an unaligned tail: the synchronous path bounces it */
			int e = fs_dev_read(dev, r->buf, r->len, r->off);
			r->result = e ? e : (long)r->len;
		}
	}
}

static void submit(struct fs_inode_scan *s, struct batch *b)
{
	b->done = false;
	if (!s->have_reader) {
		read_batch(s, b);
		b->done = true;
		return;
	}
	pthread_mutex_lock(&s->lock);
	b->queued = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void wait_batch(struct fs_inode_scan *s, struct batch *b)
{
	if (!s->have_reader)
		return;
	pthread_mutex_lock(&s->lock);
	while (!b->done)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void reset_batch(struct batch *b)
{
	b->used = 0;
	b->nwin = 0;
	b->npend = 0;
	b->done = false;
	b->queued = false;
	b->err = 0;
}

/* Hand a read batch's inodes to the callback, in inode order. */
static int deliver(struct fs_inode_scan *s, struct batch *b)
{
	const struct fs_geom *g = &s->fs->g;
	int ret = 0;

	if (b->err)
		return b->err;
	for (size_t i = 0; i < b->nwin; i++) {
		s->st.windows++;
		if (b->reqs[i].result > 0)
			s->st.bytes_read += (uint64_t)b->reqs[i].result;
	}
	for (size_t p = 0; p < b->npend; p++) {
		struct pending *pd = &b->pend[p];
		uint64_t m = wanted_mask(s, &pd->rec);
		const struct window *w = &b->wins[pd->win];
		const struct fs_io_req *r = &b->reqs[pd->win];

		s->st.chunks++;
		for (unsigned i = 0; i < XFS_INODES_PER_CHUNK; i++) {
			struct fs_inode_scan_item it;

			if (!(m & (1ull << i)))
				continue;
			it.agno = s->agno;
			it.agino = pd->rec.startino + i;
			it.ino = fs_agino_to_ino(g, s->agno, it.agino);
			it.free = pd->rec.free & (1ull << i);
			it.rec = &pd->rec;
			it.dinode = r->result < 0 ? NULL :
				    fs_inode_in_read(g, s->agno, it.agino, w->off,
						     w->map ? w->map : b->buf + w->buf_off,
						     (uint64_t)r->result);
			it.read_err = it.dinode ? 0 : r->result < 0 ? (int)r->result : -EIO;
			ret = s->fn(s->priv, &it);
			if (ret)
				break;
		}
		if (ret)
			break;
	}
	/* windows read in place: their pages leave the resident set */
	for (size_t i = 0; i < b->nwin; i++)
		if (b->wins[i].map)
			fs_dev_resident_done(s->fs->dev, b->wins[i].map, b->reqs[i].len);
	return ret;
}

/*
 * The filling batch is complete: start reading it, then deliver the batch
 * read before it (older inodes first) and make that one the filling batch.
 */
static int rotate(struct fs_inode_scan *s)
{
	struct batch *cur = &s->b[s->fill], *prev = &s->b[!s->fill];
	int ret = 0;

	submit(s, cur);
	if (prev->npend) {
		wait_batch(s, prev);
		ret = deliver(s, prev);
	}
	reset_batch(prev);
	s->fill = !s->fill;
	return ret;
}

/* At the end of an AG (or on a stop): finish and deliver whatever is left, in order. */
static int drain(struct fs_inode_scan *s, bool deliver_them)
{
	struct batch *cur = &s->b[s->fill], *prev = &s->b[!s->fill];
	int ret = 0;

	if (cur->npend)
		submit(s, cur);
	if (prev->npend) {
		wait_batch(s, prev);
		if (deliver_them)
			ret = deliver(s, prev);
	}
	if (cur->npend) {
		wait_batch(s, cur);
		if (deliver_them && !ret)
			ret = deliver(s, cur);
	}
	reset_batch(prev);
	reset_batch(cur);
	return ret;
}

static int batch_add_window(struct batch *b, uint64_t off, size_t len, uint64_t want_end)
{
	if (b->nwin == b->win_cap) {
		size_t ncap = b->win_cap ? b->win_cap * 2 : 64;
		struct window *nw = realloc(b->wins, ncap * sizeof(*nw));
		struct fs_io_req *nr;

		if (!nw)
			return -ENOMEM;
		b->wins = nw;
		nr = realloc(b->reqs, ncap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		b->reqs = nr;
		nr = realloc(b->io, ncap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		b->io = nr;
		b->win_cap = ncap;
	}
	b->wins[b->nwin] = (struct window){ .off = off, .len = len, .want_end = want_end,
					    .buf_off = b->used };
	b->used += len;
	b->nwin++;
	return 0;
}

/* Place one record's wanted byte range [off, end) in the filling batch. */
static int plan_record(struct fs_inode_scan *s, const struct fs_inobt_rec *r, uint64_t off,
		       uint64_t end)
{
	struct batch *b = &s->b[s->fill];
	struct window *w = b->nwin ? &b->wins[b->nwin - 1] : NULL;
	struct pending *pd;
	int err;

	if (w && off >= w->want_end && off - w->want_end <= s->o.gap_max &&
	    end - w->off <= s->o.window_max) {
		size_t nlen = align_up(end - w->off, s->align);

		if (b->used - w->len + nlen <= s->buf_cap) {
			b->used += nlen - w->len;
			w->len = nlen;
			w->want_end = end;
			goto add;
		}
	}
	{
		uint64_t aoff = off / s->align * s->align;
		size_t len = align_up(end - aoff, s->align);

		if (b->nwin && (b->used >= s->o.batch_bytes || b->used + len > s->buf_cap)) {
			err = rotate(s);
			if (err)
				return err;
			b = &s->b[s->fill];
		}
		err = batch_add_window(b, aoff, len, end);
		if (err)
			return err;
	}
add:
	if (b->npend == b->pend_cap) {
		size_t ncap = b->pend_cap ? b->pend_cap * 2 : 256;
		struct pending *np = realloc(b->pend, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		b->pend = np;
		b->pend_cap = ncap;
	}
	pd = &b->pend[b->npend++];
	pd->rec = *r;
	pd->win = (uint32_t)(b->nwin - 1);
	return 0;
}

static int scan_read_block(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct fs_inode_scan *s = priv;
	const struct fs_geom *g = &s->fs->g;

	return fs_dev_read(s->fs->dev, buf, g->blocksize,
			   fs_daddr_to_bytes(fs_agbno_to_daddr(g, agno, agbno)));
}

static int scan_visit_rec(void *priv, const void *rec)
{
	struct fs_inode_scan *s = priv;
	const struct fs_geom *g = &s->fs->g;
	struct fs_inobt_rec r;
	const char *why;
	uint64_t m;
	unsigned lo, hi;

	fs_inobt_rec_decode(g, rec, &r);
	/* another range's record: that scan checks and reads it */
	if (r.startino < s->lo || r.startino >= s->end)
		return 0;
	why = fs_inobt_rec_problem(g, s->agno, &r);
	if (why) {
		fs_report(s->fl, FS_C_INOBT_REC, s->agno, FS_NONE, FS_NONE, "startino", NULL,
			  FS_U(r.startino), "inode btree record for AG inode %u: %s; chunk skipped",
			  r.startino, why);
		return 0;
	}
	if (s->collect) {
		if (s->nchunks == s->chunks_cap) {
			size_t ncap = s->chunks_cap ? s->chunks_cap * 2 : 1024;
			fs_agino_t *nv = realloc(s->chunks, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			s->chunks = nv;
			s->chunks_cap = ncap;
		}
		s->chunks[s->nchunks++] = r.startino;
		return 0;
	}
	m = wanted_mask(s, &r);
	if (!m)
		return 0;
	lo = (unsigned)__builtin_ctzll(m);
	hi = 63 - (unsigned)__builtin_clzll(m);
	return plan_record(s, &r, fs_inode_byte(g, s->agno, r.startino + lo),
			   fs_inode_byte(g, s->agno, r.startino + hi) + g->inodesize);
}

/*
 * The walk behind every scan: records in [lo, end) go to scan_visit_rec's
 * checks and reads (or, collecting, to s->chunks).  AGI and btree block
 * findings go to fl only for the range that starts the AG (lo 0): every
 * range walks the whole tree, and each finding is reported once.
 */
static int scan_ag(struct fs_inode_scan *s, fs_agnumber_t agno, fs_agino_t start_agino,
		   fs_agino_t lo, fs_agino_t end, bool collect, struct fs_findings *fl,
		   fs_inode_scan_fn fn, void *priv)
{
	struct fs *fs = s->fs;
	const struct fs_geom *g = &fs->g;
	struct fs_findings quiet;
	struct fs_findings *tfl = lo == 0 && !collect ? fl : &quiet;
	struct fs_vctx vc = {
		.g = g, .fl = tfl, .agno = agno,
		.daddr = fs_ag_daddr(g, agno) + (2ull * g->sectsize >> FS_BBSHIFT),
		.have_log_head = fs->have_log_head, .head_lsn = fs->log_head_lsn,
	};
	struct fs_btree_walk w = { 0 };
	unsigned char *agibuf;
	struct fs_agi agi;
	int err, derr;

	if (agno >= g->agcount)
		return -EINVAL;
	agibuf = fs_dev_alloc(fs->dev, g->sectsize);
	if (!agibuf)
		return -ENOMEM;
	fs_findings_init(&quiet);
	err = fs_dev_read(fs->dev, agibuf, g->sectsize, fs_ag_agi_offset(g, agno));
	if (err) {
		fs_report(tfl, FS_C_AGI_UNREADABLE, agno, (int64_t)vc.daddr, FS_NONE, NULL, NULL, NULL,
			  "AGI of AG %u could not be read: %s", agno, strerror(-err));
		free(agibuf);
		fs_findings_free(&quiet);
		return -EUCLEAN;
	}
	fs_verify(FS_MT_AGI, &vc, agibuf, g->sectsize);
	fs_agi_decode(agibuf, &agi);
	/* the root and height are only as good as the header's integrity */
	if (agi.magic != XFS_AGI_MAGIC || !fs_crc_ok(agibuf, g->sectsize, offsetof(struct xfs_agi, agi_crc)) ||
	    agi.seqno != agno) {
		free(agibuf);
		fs_findings_free(&quiet);
		return -EUCLEAN;
	}
	free(agibuf);

	s->agno = agno;
	s->start = start_agino;
	s->lo = lo;
	s->end = end == NULLAGINO ? UINT64_MAX : end;	/* NULLAGINO: to the AG's end */
	s->collect = collect;
	s->nchunks = 0;
	s->fl = collect ? &quiet : fl;
	s->fn = fn;
	s->priv = priv;
	reset_batch(&s->b[0]);
	reset_batch(&s->b[1]);
	s->fill = 0;

	w.ops = fs_btree_ops_get(FS_BTREE_INO);
	w.g = g;
	w.fl = tfl;
	w.vc = vc;
	w.root = agi.root;
	w.nlevels = agi.level;
	w.read_block = scan_read_block;
	w.visit_rec = scan_visit_rec;
	w.priv = s;
	err = fs_btree_walk(&w);
	s->st.btree_blocks += w.blocks;
	/* in flight reads must finish before the buffers can be reused */
	derr = drain(s, err == 0);
	s->collect = false;
	fs_findings_free(&quiet);
	return err ? err : derr;
}

int fs_inode_scan_ag_range(struct fs_inode_scan *s, fs_agnumber_t agno, fs_agino_t start_agino,
			   fs_agino_t lo, fs_agino_t end, struct fs_findings *fl,
			   fs_inode_scan_fn fn, void *priv)
{
	return scan_ag(s, agno, start_agino, lo, end, false, fl, fn, priv);
}

int fs_inode_scan_ag_chunks(struct fs_inode_scan *s, fs_agnumber_t agno, const fs_agino_t **out,
			    size_t *n)
{
	int err = scan_ag(s, agno, 0, 0, NULLAGINO, true, NULL, NULL, NULL);

	*out = s->chunks;
	*n = err ? 0 : s->nchunks;
	return err;
}
