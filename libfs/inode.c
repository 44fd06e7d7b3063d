// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes: decoding a v3 dinode core into host order (legacy and bigtime
 * timestamps, legacy and nrext64 extent counters, fork geometry, flags as
 * FS_XFLAG_*), the dinode field rules the verifier table runs (the
 * kernel's xfs_dinode_verify and xfs_iformat_* checks), and the inode
 * scan: walk an AG's inode btree and read its inode chunks in large
 * coalesced windows through the device's I/O queue, delivering every inode
 * in inode-number order.
 */
#include "libfs/inode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/ag.h"
#include "libfs/btree.h"
#include "libfs/crc.h"
#include "libfs/endian.h"
#include "libfs/fs.h"
#include "libfs/io.h"

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
	int n;
};

static void bad(struct iv *v, const char *code, const char *field, const char *exp,
		const char *found, const char *msg)
{
	fs_report(v->c->fl, code, v->c->agno, (int64_t)v->c->daddr, (int64_t)v->c->ino, field,
		  exp, found, "inode %llu: %s", (unsigned long long)v->c->ino, msg);
	v->n++;
}

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
	const char *code = data ? "inode.format" : "inode.aformat";
	const char *fmtfield = data ? "di_format" : "di_aformat";
	uint32_t fsize = fs_inode_fork_size(g, ip, whichfork);
	uint8_t fmt = data ? ip->format : ip->aformat;
	uint64_t next = data ? ip->nextents : ip->anextents;
	uint64_t maxext = fsize / sizeof(struct xfs_bmbt_rec);

	if (data) {
		if ((S_ISDIR(ip->mode) || S_ISLNK(ip->mode)) && ip->size <= fsize &&
		    fmt != XFS_DINODE_FMT_LOCAL)
			bad(v, code, fmtfield, "local", FS_U(fmt),
			    "directory or symlink small enough to be inline is not in local format");
		if (ip->size > fsize && fmt == XFS_DINODE_FMT_LOCAL)
			bad(v, "inode.size", "di_size", FS_U(fsize), FS_U(ip->size),
			    "local-format data larger than the data fork");
	}
	switch (fmt) {
	case XFS_DINODE_FMT_LOCAL:
		if (data && S_ISREG(ip->mode))
			bad(v, code, fmtfield, "extents or btree", "local",
			    "regular file in local format");
		if (next)
			bad(v, "inode.nextents", data ? "di_nextents" : "di_anextents", "0", FS_U(next),
			    "local-format fork has extents");
		if (data && S_ISLNK(ip->mode) && ip->size > 0 && ip->size <= fsize) {
			const unsigned char *t = fs_inode_fork_ptr(buf, ip, XFS_DATA_FORK);
			if (ip->size > XFS_SYMLINK_MAXLEN)
				bad(v, "inode.size", "di_size", FS_U(XFS_SYMLINK_MAXLEN), FS_U(ip->size),
				    "symlink target too long");
			else if (memchr(t, 0, ip->size - 1))
				bad(v, "inode.format", "symlink", "no NUL in the target", "NUL",
				    "inline symlink target contains a NUL byte");
		}
		break;
	case XFS_DINODE_FMT_EXTENTS:
		if (next > maxext)
			bad(v, "inode.nextents", data ? "di_nextents" : "di_anextents", FS_U(maxext),
			    FS_U(next), "more extents than fit in the fork");
		break;
	case XFS_DINODE_FMT_BTREE: {
		const unsigned char *root = fs_inode_fork_ptr(buf, ip, whichfork);
		uint64_t maxn = fs_inode_max_nextents(ip->nrext64, whichfork);
		uint16_t level, nrecs;

		if (next > maxn) {
			bad(v, "inode.nextents", data ? "di_nextents" : "di_anextents", FS_U(maxn),
			    FS_U(next), "extent count above what the format allows");
			break;
		}
		if (fsize < sizeof(struct xfs_bmdr_block)) {
			bad(v, code, fmtfield, "a fork large enough for a btree root", FS_U(fsize),
			    "btree-format fork too small for its root");
			break;
		}
		level = get_be16(root);
		nrecs = get_be16(root + 2);
		if (next <= maxext)
			bad(v, code, fmtfield, "extents", "btree",
			    "btree-format fork whose extents would fit inline");
		if (nrecs == 0 ||
		    sizeof(struct xfs_bmdr_block) +
		    (size_t)nrecs * (sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t)) > fsize)
			bad(v, code, "bb_numrecs", "records that fit in the fork", FS_U(nrecs),
			    "btree root record count does not fit the fork");
		if (level == 0 || (g->bmbt_maxlevels_data && level > g->bmbt_maxlevels_data))
			bad(v, code, "bb_level", "1..bmbt height", FS_U(level),
			    "btree root level out of range");
		if (next > ip->nblocks)
			bad(v, "inode.nblocks", "di_nblocks", "at least the extent count",
			    FS_U(ip->nblocks), "fewer blocks than extents");
		break;
	}
	default:
		bad(v, code, fmtfield, "local, extents or btree", FS_U(fmt), "fork format invalid");
	}
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
		bad(v, "inode.extsize", "di_extsize", NULL, FS_U(ip->extsize), why);
}

static void verify_cowextsize(struct iv *v, const struct fs_geom *g, const struct fs_inode *ip)
{
	bool rt = ip->flags & XFS_DIFLAG_REALTIME;
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
	else if (hint && rt)
		why = "CoW extent size hint on a realtime file";
	else if (ip->cowextsize > XFS_MAX_BMBT_EXTLEN)
		why = "CoW extent size hint longer than an extent can be";
	else if (ip->cowextsize > g->agblocks / 2)
		why = "CoW extent size hint larger than half an AG";
	if (why)
		bad(v, "inode.cowextsize", "di_cowextsize", NULL, FS_U(ip->cowextsize), why);
}

int fs_inode_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	const struct xfs_dinode *d = buf;
	struct iv v = { .c = c };
	struct fs_inode ip;
	uint32_t lit = fs_inode_litino(g);

	if (len < sizeof(struct xfs_dinode) || len < g->inodesize)
		return 0;	/* the common checks already said the buffer is short */
	fs_inode_decode(buf, &ip);

	if (ip.version != 3) {
		bad(&v, "inode.version", "di_version", "3", FS_U(ip.version),
		    "inode version is not 3 on a v5 filesystem");
		return v.n;	/* nothing else is laid out as expected */
	}
	if (ip.ino != c->ino)
		bad(&v, "inode.ino", "di_ino", FS_U(c->ino), FS_U(ip.ino),
		    "inode number stored in the inode is not its own");
	if (ip.size & (1ull << 63))
		bad(&v, "inode.size", "di_size", "below 2^63", FS_U(ip.size), "negative size");
	if (ip.mode && !mode_type_valid(ip.mode)) {
		bad(&v, "inode.mode", "di_mode", "a known file type", FS_X(ip.mode),
		    "unknown file type");
		return v.n;
	}
	/* empty directories and symlinks exist only while being freed (nlink 0) */
	if ((S_ISLNK(ip.mode) || S_ISDIR(ip.mode)) && ip.size == 0 && ip.nlink)
		bad(&v, "inode.size", "di_size", "nonzero", "0",
		    "zero-length directory or symlink");
	if (ip.nrext64) {
		if (!g->nrext64)
			bad(&v, "inode.nrext64", "di_flags2", "no NREXT64", "NREXT64",
			    "large extent counters on a filesystem without them");
		if (d->di_nrext64_pad)
			bad(&v, "inode.nrext64", "di_nrext64_pad", "0", FS_U(be16(d->di_nrext64_pad)),
			    "padding next to the large attr extent counter is not zero");
	} else if (d->di_v3_pad) {
		bad(&v, "inode.nrext64", "di_v3_pad", "0", FS_X(be64(d->di_v3_pad)),
		    "padding where large extent counters would be is not zero");
	}
	if (ip.mode && ip.nextents + ip.anextents > ip.nblocks)
		bad(&v, "inode.nblocks", "di_nblocks", "at least the extent count",
		    FS_U(ip.nblocks), "fewer blocks than extents");
	if (S_ISDIR(ip.mode) &&
	    ip.nextents > ((uint64_t)XFS_DIR2_MAX_SPACES * XFS_DIR2_SPACE_SIZE >> g->blocklog))
		bad(&v, "inode.nextents", "di_nextents", "what a directory can have",
		    FS_U(ip.nextents), "directory has more extents than a directory can");
	if (ip.mode && ((uint32_t)ip.forkoff << 3) > g->inodesize)
		bad(&v, "inode.forkoff", "di_forkoff", NULL, FS_U(ip.forkoff),
		    "attr fork starts past the end of the inode");
	if (ip.forkoff) {
		if (ip.format == XFS_DINODE_FMT_DEV) {
			if (ip.forkoff != (sizeof(uint32_t) + 7) / 8)
				bad(&v, "inode.forkoff", "di_forkoff", "1", FS_U(ip.forkoff),
				    "device inode attr fork offset is not right after the device number");
		} else if (ip.format <= XFS_DINODE_FMT_BTREE && ip.forkoff >= (lit >> 3)) {
			bad(&v, "inode.forkoff", "di_forkoff", FS_U((lit >> 3) - 1), FS_U(ip.forkoff),
			    "attr fork offset leaves no room for it");
		}
	}
	if (v.n)
		return v.n;	/* fork geometry below depends on these */

	switch (ip.mode & S_IFMT) {
	case S_IFIFO: case S_IFCHR: case S_IFBLK: case S_IFSOCK:
		if (ip.format != XFS_DINODE_FMT_DEV)
			bad(&v, "inode.format", "di_format", "dev", FS_U(ip.format),
			    "special file not in device format");
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
			bad(&v, "inode.aformat", "di_aformat", "0 or extents", FS_U(ip.aformat),
			    "attr fork format set on an inode without an attr fork");
		if (ip.anextents)
			bad(&v, "inode.nextents", "di_anextents", "0", FS_U(ip.anextents),
			    "attr extents on an inode without an attr fork");
	}
	verify_extsize(&v, g, &ip);
	if ((ip.flags2 & (XFS_DIFLAG2_REFLINK | XFS_DIFLAG2_COWEXTSIZE)) && !g->reflink)
		bad(&v, "inode.flags", "di_flags2", "no REFLINK/COWEXTSIZE", FS_X(ip.flags2),
		    "reflink flags on a filesystem without reflink");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) && !S_ISREG(ip.mode))
		bad(&v, "inode.flags", "di_flags2", NULL, FS_X(ip.flags2),
		    "reflink flag on a file that is not regular");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) && (ip.flags & XFS_DIFLAG_REALTIME))
		bad(&v, "inode.flags", "di_flags2", NULL, FS_X(ip.flags2),
		    "reflink flag on a realtime file");
	if ((ip.flags2 & XFS_DIFLAG2_REFLINK) && (ip.flags2 & XFS_DIFLAG2_DAX))
		bad(&v, "inode.flags", "di_flags2", NULL, FS_X(ip.flags2),
		    "reflink and DAX flags together");
	verify_cowextsize(&v, g, &ip);
	if (ip.bigtime && !g->bigtime)
		bad(&v, "inode.flags", "di_flags2", "no BIGTIME", "BIGTIME",
		    "bigtime timestamps on a filesystem without bigtime");
	if (ip.next_unlinked != NULLAGINO &&
	    !fs_agino_valid(g, fs_ino_to_agno(g, c->ino), ip.next_unlinked))
		bad(&v, "inode.unlinked", "di_next_unlinked", "NULL or an inode of this AG",
		    FS_U(ip.next_unlinked), "unlinked list pointer names no inode");
	return v.n;
}

/* ---- the inode scan ---- */

struct pending {
	struct fs_inobt_rec rec;
	uint64_t off, end;         /* bytes wanted: first..last inode of interest */
	uint32_t win;              /* window holding it */
};

struct window {
	uint64_t off;              /* aligned start */
	uint64_t want_end;         /* end of the last range it covers (unaligned) */
	size_t len;                /* aligned length read */
	size_t buf_off;            /* where in the batch buffer */
};

struct fs_inode_scan {
	struct fs *fs;
	struct fs_inode_scan_opts o;
	struct fs_ioq *q;
	size_t align;
	unsigned char *buf;
	size_t buf_cap;
	struct window *wins;
	struct fs_io_req *reqs;
	size_t win_cap;
	struct pending *pend;
	size_t npend, pend_cap;
	uint64_t pend_bytes;
	/* the AG being scanned */
	fs_agnumber_t agno;
	fs_agino_t start;
	struct fs_findings *fl;
	fs_inode_scan_fn fn;
	void *priv;
	struct fs_inode_scan_stats st;
};

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
		s->o.batch_bytes = 16u << 20;
	s->align = fs->dev->direct && fs->dev->dio_align > FS_BBSIZE ? fs->dev->dio_align : FS_BBSIZE;
	/* a window never exceeds window_max plus alignment on both ends */
	if (s->o.window_max < (size_t)XFS_INODES_PER_CHUNK * fs->g.inodesize)
		s->o.window_max = (size_t)XFS_INODES_PER_CHUNK * fs->g.inodesize;
	s->buf_cap = s->o.batch_bytes + s->o.window_max + 2 * s->align;
	s->buf = fs_dev_alloc(fs->dev, s->buf_cap);
	if (!s->buf) {
		free(s);
		return -ENOMEM;
	}
	err = fs_ioq_create(fs->dev, &s->q);
	if (err) {
		free(s->buf);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void fs_inode_scan_destroy(struct fs_inode_scan *s)
{
	if (!s)
		return;
	fs_ioq_destroy(s->q);
	free(s->buf);
	free(s->wins);
	free(s->reqs);
	free(s->pend);
	free(s);
}

void fs_inode_scan_get_stats(const struct fs_inode_scan *s, struct fs_inode_scan_stats *st)
{
	*st = s->st;
}

static uint64_t inode_byte(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t agino)
{
	return fs_daddr_to_bytes(fs_agbno_to_daddr(g, agno, fs_agino_to_agbno(g, agino))) +
	       (uint64_t)fs_agino_to_offset(g, agino) * g->inodesize;
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

static int grow_windows(struct fs_inode_scan *s, size_t need)
{
	if (need <= s->win_cap)
		return 0;
	size_t ncap = s->win_cap ? s->win_cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	struct window *nw = realloc(s->wins, ncap * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	s->wins = nw;
	struct fs_io_req *nr = realloc(s->reqs, ncap * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	s->reqs = nr;
	s->win_cap = ncap;
	return 0;
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Read the windows of one batch; each request carries its own result. */
static int read_windows(struct fs_inode_scan *s, size_t nwin)
{
	struct fs_dev *dev = s->fs->dev;
	int err;

	for (size_t i = 0; i < nwin; i++) {
		struct window *w = &s->wins[i];

		s->reqs[i] = (struct fs_io_req){ .off = w->off, .len = w->len, .buf = s->buf + w->buf_off };
		/* the device may end inside the last window */
		if (w->off < dev->size && w->off + w->len > dev->size && w->want_end <= dev->size)
			s->reqs[i].len = dev->size - w->off;
	}
	err = fs_ioq_read_batch(s->q, s->reqs, nwin);
	if (err)
		return err;
	for (size_t i = 0; i < nwin; i++) {
		struct fs_io_req *r = &s->reqs[i];

		if (r->result == -EINVAL) {
			/* an unaligned tail: the synchronous path bounces it */
			int e = fs_dev_read(dev, r->buf, r->len, r->off);
			r->result = e ? e : (long)r->len;
		}
		s->st.windows++;
		if (r->result > 0)
			s->st.bytes_read += (uint64_t)r->result;
	}
	return 0;
}

static int deliver(struct fs_inode_scan *s, size_t first, size_t last)
{
	const struct fs_geom *g = &s->fs->g;

	for (size_t p = first; p < last; p++) {
		struct pending *pd = &s->pend[p];
		uint64_t m = wanted_mask(s, &pd->rec);
		const struct window *w;
		const struct fs_io_req *r;

		if (!m)
			continue;
		w = &s->wins[pd->win];
		r = &s->reqs[pd->win];
		s->st.chunks++;
		for (unsigned i = 0; i < XFS_INODES_PER_CHUNK; i++) {
			struct fs_inode_scan_item it;
			uint64_t at;
			int ret;

			if (!(m & (1ull << i)))
				continue;
			it.agno = s->agno;
			it.agino = pd->rec.startino + i;
			it.ino = fs_agino_to_ino(g, s->agno, it.agino);
			it.free = pd->rec.free & (1ull << i);
			it.rec = &pd->rec;
			at = inode_byte(g, s->agno, it.agino);
			if (r->result < 0 || at < w->off ||
			    at + g->inodesize > w->off + (uint64_t)r->result) {
				it.dinode = NULL;
				it.read_err = r->result < 0 ? (int)r->result : -EIO;
			} else {
				it.dinode = s->buf + w->buf_off + (at - w->off);
				it.read_err = 0;
			}
			ret = s->fn(s->priv, &it);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Plan windows over the pending records, read them batch by batch, deliver. */
static int flush_pending(struct fs_inode_scan *s)
{
	size_t p = 0;
	int ret = 0;

	while (p < s->npend && !ret) {
		size_t first = p, nwin = 0, used = 0;

		while (p < s->npend) {
			struct pending *pd = &s->pend[p];
			struct window *w = nwin ? &s->wins[nwin - 1] : NULL;

			if (pd->end <= pd->off) {	/* nothing wanted in this chunk */
				pd->win = nwin ? (uint32_t)(nwin - 1) : 0;
				p++;
				continue;
			}
			if (w && pd->off >= w->want_end && pd->off - w->want_end <= s->o.gap_max &&
			    pd->end - w->off <= s->o.window_max) {
				size_t nlen = align_up(pd->end - w->off, s->align);
				if (used - w->len + nlen <= s->buf_cap) {
					used += nlen - w->len;
					w->len = nlen;
					w->want_end = pd->end;
					pd->win = (uint32_t)(nwin - 1);
					p++;
					continue;
				}
			}
			/* a new window */
			{
				uint64_t off = pd->off / s->align * s->align;
				size_t len = align_up(pd->end - off, s->align);

				if (nwin && used + len > s->buf_cap)
					break;	/* the batch is full */
				if (nwin && used >= s->o.batch_bytes)
					break;
				ret = grow_windows(s, nwin + 1);
				if (ret)
					return ret;
				w = &s->wins[nwin];
				w->off = off;
				w->len = len;
				w->want_end = pd->end;
				w->buf_off = used;
				used += len;
				pd->win = (uint32_t)nwin++;
				p++;
			}
		}
		if (nwin) {
			ret = read_windows(s, nwin);
			if (ret)
				return ret;
		}
		ret = deliver(s, first, p);
	}
	s->npend = 0;
	s->pend_bytes = 0;
	return ret;
}

struct scan_walk {
	struct fs_inode_scan *s;
	struct fs_findings *fl;
};

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
	struct pending *pd;
	uint64_t m;

	fs_inobt_rec_decode(g, rec, &r);
	why = fs_inobt_rec_problem(g, s->agno, &r);
	if (why) {
		fs_report(s->fl, "inobt.rec", s->agno, FS_NONE, FS_NONE, "startino", NULL,
			  FS_U(r.startino), "inode btree record for AG inode %u: %s; chunk skipped",
			  r.startino, why);
		return 0;
	}
	if ((uint64_t)r.startino + XFS_INODES_PER_CHUNK <= s->start)
		return 0;
	m = wanted_mask(s, &r);
	if (s->npend == s->pend_cap) {
		size_t ncap = s->pend_cap ? s->pend_cap * 2 : 256;
		struct pending *np = realloc(s->pend, ncap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->pend = np;
		s->pend_cap = ncap;
	}
	pd = &s->pend[s->npend++];
	pd->rec = r;
	if (m) {
		unsigned lo = (unsigned)__builtin_ctzll(m), hi = 63 - (unsigned)__builtin_clzll(m);
		pd->off = inode_byte(g, s->agno, r.startino + lo);
		pd->end = inode_byte(g, s->agno, r.startino + hi) + g->inodesize;
		s->pend_bytes += pd->end - pd->off;
	} else {
		pd->off = pd->end = 0;
	}
	if (s->pend_bytes >= s->o.batch_bytes)
		return flush_pending(s);
	return 0;
}

int fs_inode_scan_ag(struct fs_inode_scan *s, fs_agnumber_t agno, fs_agino_t start_agino,
		     struct fs_findings *fl, fs_inode_scan_fn fn, void *priv)
{
	struct fs *fs = s->fs;
	const struct fs_geom *g = &fs->g;
	struct fs_vctx vc = {
		.g = g, .fl = fl, .agno = agno,
		.daddr = fs_ag_daddr(g, agno) + (2ull * g->sectsize >> FS_BBSHIFT),
		.have_log_head = fs->have_log_head, .head_lsn = fs->log_head_lsn,
	};
	struct fs_btree_walk w = { 0 };
	unsigned char *agibuf;
	struct fs_agi agi;
	int err;

	if (agno >= g->agcount)
		return -EINVAL;
	agibuf = fs_dev_alloc(fs->dev, g->sectsize);
	if (!agibuf)
		return -ENOMEM;
	err = fs_dev_read(fs->dev, agibuf, g->sectsize, fs_ag_agi_offset(g, agno));
	if (err) {
		fs_report(fl, "agi.unreadable", agno, (int64_t)vc.daddr, FS_NONE, NULL, NULL, NULL,
			  "AGI of AG %u could not be read: %s", agno, strerror(-err));
		free(agibuf);
		return -EUCLEAN;
	}
	fs_verify(FS_MT_AGI, &vc, agibuf, g->sectsize);
	fs_agi_decode(agibuf, &agi);
	/* the root and height are only as good as the header's integrity */
	if (agi.magic != XFS_AGI_MAGIC || !fs_crc_ok(agibuf, g->sectsize, offsetof(struct xfs_agi, agi_crc)) || agi.seqno != agno) {
		free(agibuf);
		return -EUCLEAN;
	}
	free(agibuf);

	s->agno = agno;
	s->start = start_agino;
	s->fl = fl;
	s->fn = fn;
	s->priv = priv;
	s->npend = 0;
	s->pend_bytes = 0;

	w.ops = fs_btree_ops_get(FS_BTREE_INO);
	w.g = g;
	w.fl = fl;
	w.vc = vc;
	w.root = agi.root;
	w.nlevels = agi.level;
	w.read_block = scan_read_block;
	w.visit_rec = scan_visit_rec;
	w.priv = s;
	err = fs_btree_walk(&w);
	s->st.btree_blocks += w.blocks;
	if (!err)
		err = flush_pending(s);
	s->npend = 0;
	return err;
}
