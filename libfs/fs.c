// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a filesystem: read and verify the primary superblock, fall back
 * to a secondary when the primary cannot be trusted, refuse v4 and unknown
 * features with a message a user can act on, derive the geometry, and find
 * the log head so LSNs can be judged.
 */
#include "libfs/fs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "libfs/endian.h"
#include "libfs/sb.h"

static int fail(struct fs_error *e, int err, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		e->err = err;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

/*
 * How many of the other AG boundaries of candidate's geometry hold a
 * secondary that verifies and agrees with it (uuid and geometry), out of
 * at most 32 sampled evenly across the AGs.
 */
static void count_votes(struct fs_dev *dev, const struct xfs_sb *cand, unsigned char *buf,
			struct fs_findings *scratch, unsigned *votes, unsigned *sampled)
{
	uint64_t agbytes = (uint64_t)cand->sb_agblocks << cand->sb_blocklog;
	uint32_t n = cand->sb_agcount > 1 ? cand->sb_agcount - 1 : 0;
	uint32_t step = n > 32 ? n / 32 : 1;

	*votes = *sampled = 0;
	for (uint32_t agno = 1; agno < cand->sb_agcount; agno += step) {
		uint64_t off = agno * agbytes;
		struct xfs_sb sb;

		if (off + XFS_MAX_SECTORSIZE > dev->size)
			break;
		(*sampled)++;
		if (fs_dev_read(dev, buf, XFS_MAX_SECTORSIZE, off))
			continue;
		scratch->n = 0;
		if (fs_sb_verify(buf, XFS_MAX_SECTORSIZE, agno, scratch) != FS_SB_OK)
			continue;
		fs_sb_from_disk(&sb, (const void *)buf);
		scratch->n = 0;
		if (fs_sb_compare_secondary(cand, &sb, agno, scratch) == 0)
			(*votes)++;
	}
}

/*
 * Scan the device for secondary superblocks, as xfs_repair does when the
 * primary is gone, and choose by agreement rather than by position: a
 * candidate (a verifying superblock at an AG boundary of its own geometry)
 * wins once a majority of the AG boundaries its geometry names hold
 * secondaries that agree with it.  A stray or stale superblock (an old
 * filesystem's, a damaged copy) loses to the geometry the others share.
 * Without a majority anywhere, the candidate with the most votes wins.
 * Returns the byte offset of the chosen copy.
 */
int fs_find_secondary(struct fs_dev *dev, struct xfs_sb *out, uint64_t *where)
{
	const size_t chunk = 1 << 20;
	unsigned char *buf = fs_dev_alloc(dev, chunk);
	unsigned char *vbuf = fs_dev_alloc(dev, XFS_MAX_SECTORSIZE);
	struct fs_findings scratch;
	unsigned best_votes = 0, tried = 0;
	int ret = -ENOENT;
	bool done = false;

	if (!buf || !vbuf) {
		free(buf);
		free(vbuf);
		return -ENOMEM;
	}
	fs_findings_init(&scratch);
	/* 64 candidates bound the work on a device full of old superblocks */
	for (uint64_t off = 0; off < dev->size && !done && tried < 64; off += chunk) {
		size_t n = dev->size - off < chunk ? dev->size - off : chunk;
		n -= n % FS_BBSIZE;
		if (!n || fs_dev_read(dev, buf, n, off))
			break;
		for (size_t i = 0; i + FS_BBSIZE <= n && !done; i += FS_BBSIZE) {
			struct xfs_sb sb;
			unsigned votes, sampled;

			if (off + i == 0 || get_be32(buf + i) != XFS_SB_MAGIC)
				continue;
			scratch.n = 0;
			if (fs_sb_verify(buf + i, n - i, 1, &scratch) != FS_SB_OK)
				continue;
			fs_sb_from_disk(&sb, (const void *)(buf + i));
			/* a real secondary sits at an AG boundary of its own geometry */
			if (!sb.sb_agblocks ||
			    (off + i) % ((uint64_t)sb.sb_agblocks << sb.sb_blocklog) != 0)
				continue;
			tried++;
			count_votes(dev, &sb, vbuf, &scratch, &votes, &sampled);
			if (ret == -ENOENT || votes > best_votes) {
				*out = sb;
				*where = off + i;
				best_votes = votes;
				ret = 0;
			}
			/* the candidate itself is one of the sampled boundaries */
			if (sampled && votes * 2 > sampled)
				done = true;
		}
	}
	fs_findings_free(&scratch);
	free(buf);
	free(vbuf);
	return ret;
}

/* Every size field and its log agree on a v5 geometry: XFS in all but the magic. */
static bool sb_looks_like_xfs(const struct xfs_sb *sb)
{
	return (sb->sb_versionnum & XFS_SB_VERSION_NUMBITS) == XFS_SB_VERSION_5 &&
	       sb->sb_blocklog >= XFS_MIN_BLOCKSIZE_LOG && sb->sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG &&
	       sb->sb_blocksize == 1u << sb->sb_blocklog &&
	       sb->sb_sectlog >= XFS_MIN_SECTORSIZE_LOG && sb->sb_sectlog <= XFS_MAX_SECTORSIZE_LOG &&
	       sb->sb_sectsize == 1u << sb->sb_sectlog &&
	       sb->sb_inodelog >= XFS_DINODE_MIN_LOG && sb->sb_inodelog <= XFS_DINODE_MAX_LOG &&
	       sb->sb_inodesize == 1u << sb->sb_inodelog &&
	       sb->sb_agcount > 0 && sb->sb_agblocks > 0;
}

int fs_open(const char *path, const struct fs_open_opts *o, struct fs **out,
	    struct fs_findings *fl, struct fs_error *e)
{
	struct fs_open_opts defaults = { .allow_secondary = true };
	struct fs_findings local;
	struct fs *fs;
	unsigned char *buf = NULL;
	enum fs_sb_state st;
	int err;

	if (!o)
		o = &defaults;
	if (!fl) {
		fs_findings_init(&local);
		fl = &local;
	}
	fs = calloc(1, sizeof(*fs));
	if (!fs) {
		err = fail(e, -ENOMEM, "out of memory");
		goto out;
	}
	if (o->dev.engine == FS_IO_AUTO && (err = fs_target_io_engine_env(e ? e->msg : NULL,
									 e ? sizeof(e->msg) : 0))) {
		if (e)
			e->err = err;
		goto out;
	}
	/* before any open(): a FIFO would block it, a mounted target is refused */
	err = fs_target_check(path, o->use, &fs->target, e ? e->msg : NULL, e ? sizeof(e->msg) : 0);
	if (err) {
		if (e)
			e->err = err;
		goto out;
	}
	err = fs_dev_open(path, &o->dev, &fs->dev);
	if (err) {
		fail(e, err, "cannot open %s: %s", path, strerror(-err));
		goto out;
	}
	if (fs->dev->size < XFS_MAX_SECTORSIZE) {
		err = fail(e, -EINVAL, "%s: too small to hold an XFS filesystem (%llu bytes)", path,
			   (unsigned long long)fs->dev->size);
		goto out;
	}
	buf = fs_dev_alloc(fs->dev, XFS_MAX_SECTORSIZE);
	if (!buf) {
		err = fail(e, -ENOMEM, "out of memory");
		goto out;
	}
	err = fs_dev_read(fs->dev, buf, XFS_MAX_SECTORSIZE, 0);
	if (err) {
		fail(e, err, "%s: cannot read the primary superblock: %s", path, strerror(-err));
		goto out;
	}
	st = fs_sb_verify(buf, XFS_MAX_SECTORSIZE, 0, fl);
	fs_sb_from_disk(&fs->sb, (const void *)buf);
	switch (st) {
	case FS_SB_V4:
		err = fail(e, -EPROTONOSUPPORT,
			   "%s: v4 filesystems are not supported (superblock version %u); xfsx handles v5 (CRC) filesystems only",
			   path, fs->sb.sb_versionnum & XFS_SB_VERSION_NUMBITS);
		goto out;
	case FS_SB_UNSUPPORTED:
		err = fail(e, -EOPNOTSUPP,
			   "%s: unsupported filesystem features (incompat 0x%x, ro_compat 0x%x unknown to this build)",
			   path, fs_sb_unknown_incompat(&fs->sb), fs_sb_unknown_ro_compat(&fs->sb));
		goto out;
	case FS_SB_NOT_XFS:
		/*
		 * A wrong magic in front of an otherwise XFS-shaped superblock is a
		 * damaged primary: look for a secondary as xfs_repair would.  Anything
		 * else (zeros, another filesystem, random data) is simply not XFS.
		 */
		if (!o->allow_secondary || !sb_looks_like_xfs(&fs->sb)) {
			const char *t = fs->target.fstype;

			if (*t && strcmp(t, "xfs"))
				err = fail(e, -EINVAL, "%s: not an XFS filesystem: libblkid finds %s %s "
					   "filesystem there", path, fs_target_article(t), t);
			else if (*fs->target.pttype)
				err = fail(e, -EINVAL, "%s: not an XFS filesystem: libblkid finds %s %s "
					   "partition table there (give the partition, not the disk)",
					   path, fs_target_article(fs->target.pttype), fs->target.pttype);
			else
				err = fail(e, -EINVAL, "%s: not an XFS filesystem (superblock magic "
					   "0x%08x, and nothing libblkid knows)", path,
					   fs->sb.sb_magicnum);
			goto out;
		}
		/* fall through */
	case FS_SB_UNUSABLE: {
		uint64_t where;
		if (!o->allow_secondary) {
			err = fail(e, -EUCLEAN, "%s: primary superblock is corrupt", path);
			goto out;
		}
		err = fs_find_secondary(fs->dev, &fs->sb, &where);
		if (err) {
			fail(e, -EUCLEAN, "%s: primary superblock is corrupt and no valid secondary superblock was found",
			     path);
			err = -EUCLEAN;
			goto out;
		}
		fs->sb_source = (fs_agnumber_t)(where / ((uint64_t)fs->sb.sb_agblocks << fs->sb.sb_blocklog));
		fs_report(fl, "sb.primary_bad", 0, 0, FS_NONE, NULL, NULL, NULL,
			  "primary superblock unusable; geometry taken from the secondary in AG %u",
			  fs->sb_source);
		/*
		 * A secondary is a copy from mkfs or growfs time: its counters are
		 * never kept current (and its realtime inode numbers may be null:
		 * fs_geom_derive places them after the root inode).
		 */
		fs->sb_counters_stale = true;
		break;
	}
	default:
		break;
	}
	err = fs_geom_derive(&fs->sb, &fs->g);
	if (err) {
		fail(e, -EUCLEAN, "%s: superblock geometry cannot be used", path);
		goto out;
	}
	if ((uint64_t)fs->g.dblocks << fs->g.blocklog > fs->dev->size) {
		/* not fatal: the header reads past the end will say what is missing */
		fs_report(fl, "sb.geometry", 0, 0, FS_NONE, "dblocks",
			  FS_U(fs->dev->size >> fs->g.blocklog), FS_U(fs->g.dblocks),
			  "filesystem is larger than the device (%llu bytes)",
			  (unsigned long long)fs->dev->size);
	}
	fs_log_find_head(fs);
	/*
	 * Log records carry the UUID the superblock had when they were written:
	 * a primary that disagrees with its own log has a damaged UUID, even
	 * though then every AG header and secondary seems to be the odd one.
	 */
	if (fs->have_log_uuid && fs->sb_source == 0 &&
	    memcmp(fs->log_uuid, &fs->sb.sb_uuid, sizeof(fs->log_uuid))) {
		char lu[37], su[37];
		uuid_unparse_lower(fs->log_uuid, lu);
		uuid_unparse_lower((const unsigned char *)&fs->sb.sb_uuid, su);
		fs_report(fl, "sb.uuid", 0, 0, FS_NONE, "uuid", lu, su,
			  "primary superblock UUID differs from the one stamped in the log");
	}
	*out = fs;
	fs = NULL;
	err = 0;
out:
	free(buf);
	if (fs) {
		fs_dev_close(fs->dev);
		free(fs);
	}
	if (fl == &local)
		fs_findings_free(&local);
	return err;
}

void fs_close(struct fs *fs)
{
	if (!fs)
		return;
	fs_dev_close(fs->dev);
	free(fs);
}
