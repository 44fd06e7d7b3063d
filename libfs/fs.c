// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a filesystem: read and verify the primary superblock, fall back
 * to a secondary when the primary cannot be trusted, refuse v4 and unknown
 * features with a message a user can act on, derive the geometry, open
 * the external log and realtime devices and judge that they are this
 * filesystem's, and find the log head so LSNs can be judged.
 */
#include "libfs/fs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/sb.h"

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
 * Not XFS at all (zeros, another filesystem, no secondary): an operational
 * answer, not damage, so the primary superblock's findings (sb.magic on
 * zeros) are dropped: they would describe an XFS that is not there.
 */
static void not_xfs(struct fs_error *e, struct fs_findings *fl)
{
	if (e)
		e->not_xfs = true;
	fs_findings_free(fl);
	fs_findings_init(fl);
}

#define FS_MAX_VOTERS 32

/*
 * Read the secondaries at the AG boundaries geo's geometry names, at most
 * FS_MAX_VOTERS sampled evenly across the AGs; those that verify (their
 * own findings aside, their geometry usable) go to out.  Returns how many;
 * *sampled says how many boundaries lie inside the device.
 */
static unsigned read_voters(struct fs_dev *dev, const struct xfs_sb *geo, unsigned char *buf,
			    struct fs_findings *scratch, struct xfs_sb *out, unsigned *sampled)
{
	uint64_t agbytes = (uint64_t)geo->sb_agblocks << (geo->sb_blocklog & 63);
	uint32_t n = geo->sb_agcount > 1 ? geo->sb_agcount - 1 : 0;
	uint32_t step = n > FS_MAX_VOTERS ? n / FS_MAX_VOTERS : 1;
	unsigned got = 0;

	*sampled = 0;
	if (!agbytes || geo->sb_blocklog > XFS_MAX_BLOCKSIZE_LOG)
		return 0;
	for (uint64_t agno = 1; agno < geo->sb_agcount && got < FS_MAX_VOTERS; agno += step) {
		uint64_t off = agno * agbytes;
		enum fs_sb_state st;

		if (off + XFS_MAX_SECTORSIZE > dev->size)
			break;
		(*sampled)++;
		if (fs_dev_read(dev, buf, XFS_MAX_SECTORSIZE, off))
			continue;
		fs_findings_clear(scratch);
		st = fs_sb_verify(buf, XFS_MAX_SECTORSIZE, (fs_agnumber_t)agno, scratch);
		if (st != FS_SB_OK && st != FS_SB_DAMAGED)
			continue;
		fs_sb_from_disk(&out[got++], (const void *)buf);
	}
	return got;
}

/*
 * How many of the other AG boundaries of candidate's geometry hold a
 * secondary that verifies and agrees with it (uuid and geometry), out of
 * at most 32 sampled evenly across the AGs.
 */
static void count_votes(struct fs_dev *dev, const struct xfs_sb *cand, unsigned char *buf,
			struct fs_findings *scratch, unsigned *votes, unsigned *sampled)
{
	struct xfs_sb v[FS_MAX_VOTERS];
	unsigned n = read_voters(dev, cand, buf, scratch, v, sampled);

	*votes = 0;
	for (unsigned i = 0; i < n; i++) {
		fs_findings_clear(scratch);
		if (fs_sb_compare_secondary(cand, &v[i], 1, scratch) == 0)
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
/*
 * The next offset at or after off (rounded down to a chunk) that may hold
 * data: an image file's holes hold no superblock and need not be read.
 */
static uint64_t next_data(const struct fs_dev *dev, uint64_t off, size_t chunk)
{
	off_t d;

	if (dev->blockdev)
		return off;
	d = lseek(dev->fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? dev->size : off;
	return (uint64_t)d / chunk * chunk > off ? (uint64_t)d / chunk * chunk : off;
}

static int find_secondary(struct fs_dev *dev, uint64_t limit, struct xfs_sb *out, uint64_t *where)
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
	if (limit > dev->size)
		limit = dev->size;
	for (uint64_t off = 0; !done && tried < 64; off += chunk) {
		size_t n;

		off = next_data(dev, off, chunk);
		if (off >= limit)
			break;
		n = limit - off < chunk ? limit - off : chunk;
		n -= n % FS_BBSIZE;
		if (!n || fs_dev_read(dev, buf, n, off))
			break;
		for (size_t i = 0; i + FS_BBSIZE <= n && !done; i += FS_BBSIZE) {
			struct xfs_sb sb;
			unsigned votes, sampled;

			if (off + i == 0 || get_be32(buf + i) != XFS_SB_MAGIC)
				continue;
			fs_findings_clear(&scratch);
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

int fs_find_secondary(struct fs_dev *dev, struct xfs_sb *out, uint64_t *where)
{
	return find_secondary(dev, dev->size, out, where);
}

int fs_sb_majority_copy(struct fs *fs, struct xfs_sb *out)
{
	struct xfs_sb *v = calloc(FS_MAX_VOTERS, sizeof(*v));
	unsigned char *buf = fs_dev_alloc(fs->dev, XFS_MAX_SECTORSIZE);
	struct fs_findings scratch;
	unsigned n, sampled;
	uint64_t where;
	int ret = -ENOENT;

	if (!v || !buf) {
		free(v);
		free(buf);
		return -ENOMEM;
	}
	fs_findings_init(&scratch);
	n = read_voters(fs->dev, &fs->sb, buf, &scratch, v, &sampled);
	for (unsigned i = 0; i < n && ret; i++) {
		fs_findings_clear(&scratch);
		if (fs_sb_compare_secondary(&fs->sb, &v[i], 1, &scratch) == 0) {
			*out = v[i];
			ret = 0;
		}
	}
	fs_findings_free(&scratch);
	free(v);
	free(buf);
	return ret ? fs_find_secondary(fs->dev, out, &where) : 0;
}

static bool is_pow2_sect(uint32_t v)
{
	return v >= XFS_MIN_SECTORSIZE && v <= XFS_MAX_SECTORSIZE && !(v & (v - 1));
}

/* Every size field and its log agree: the AG boundaries can be found. */
static bool sb_sizes_agree(const struct xfs_sb *sb)
{
	return sb->sb_blocklog >= XFS_MIN_BLOCKSIZE_LOG && sb->sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG &&
	       sb->sb_blocksize == 1u << sb->sb_blocklog &&
	       sb->sb_sectlog >= XFS_MIN_SECTORSIZE_LOG && sb->sb_sectlog <= XFS_MAX_SECTORSIZE_LOG &&
	       sb->sb_sectsize == 1u << sb->sb_sectlog &&
	       sb->sb_inodelog >= XFS_DINODE_MIN_LOG && sb->sb_inodelog <= XFS_DINODE_MAX_LOG &&
	       sb->sb_inodesize == 1u << sb->sb_inodelog &&
	       sb->sb_agcount > 0 && sb->sb_agblocks > 0;
}

/* Every size field and its log agree on a v5 geometry: XFS in all but the magic. */
static bool sb_looks_like_xfs(const struct xfs_sb *sb)
{
	return (sb->sb_versionnum & XFS_SB_VERSION_NUMBITS) == XFS_SB_VERSION_5 &&
	       sb_sizes_agree(sb);
}

/*
 * Whether ino looks like a root directory: a v5 directory inode that
 * names itself, and (short form) is its own parent.  What xfs_repair
 * asks before it moves the root away from a number the geometry does not
 * predict (a stripe unit changed since mkfs moves the prediction).
 */
static bool plausible_rootdir(struct fs_dev *dev, const struct fs_geom *g, uint64_t ino)
{
	unsigned char *blk;
	const struct xfs_dinode *di;
	uint64_t off;
	bool ok = false;

	if (!fs_ino_valid(g, ino))
		return false;
	off = fs_daddr_to_bytes(fs_agbno_to_daddr(g, fs_ino_to_agno(g, ino),
				fs_agino_to_agbno(g, fs_ino_to_agino(g, ino))));
	if (off + g->blocksize > dev->size || !(blk = fs_dev_alloc(dev, g->blocksize)))
		return false;
	if (!fs_dev_read(dev, blk, g->blocksize, off)) {
		di = (const void *)(blk + ((size_t)fs_agino_to_offset(g, fs_ino_to_agino(g, ino)) << g->inodelog));
		ok = be16(di->di_magic) == XFS_DINODE_MAGIC && di->di_version == 3 &&
		     S_ISDIR(be16(di->di_mode)) && be64(di->di_ino) == ino;
		if (ok && di->di_format == XFS_DINODE_FMT_LOCAL) {
			const unsigned char *sf = (const unsigned char *)di + xfs_dinode_size(3);
			uint64_t parent = sf[1] ? get_be64(sf + 2) : get_be32(sf + 2);

			ok = parent == ino;
		}
	}
	free(blk);
	return ok;
}

/*
 * The root and realtime inode numbers, which the secondaries need not
 * hold (mkfs writes most of them before those inodes exist): the geometry
 * says where mkfs put the root, and the realtime bitmap and summary are
 * the two inodes after it.  A primary root that is not where the geometry
 * predicts is kept only if it looks like a root directory and the
 * predicted one does not.  Findings name each field taken.
 */
static int place_root_inodes(struct fs_dev *dev, struct xfs_sb *sb, const struct xfs_sb *voters,
			     unsigned n, bool rt, struct fs_findings *fl)
{
	struct fs_geom g;
	uint64_t calc, sec = NULLFSINO, root = sb->sb_rootino;
	unsigned best = 0;
	int changed = 0;

	if (fs_geom_derive(sb, &g))
		return 0;
	calc = fs_sb_calc_rootino(sb, &g);
	/* the value most secondaries that hold one agree on */
	for (unsigned i = 0; i < n; i++) {
		unsigned c = 0;

		if (voters[i].sb_rootino == NULLFSINO || !voters[i].sb_rootino)
			continue;
		for (unsigned j = 0; j < n; j++)
			c += voters[j].sb_rootino == voters[i].sb_rootino;
		if (c > best) {
			best = c;
			sec = voters[i].sb_rootino;
		}
	}
	if (root != calc && !plausible_rootdir(dev, &g, root)) {
		if (plausible_rootdir(dev, &g, calc))
			root = calc;
		else if (sec != NULLFSINO && plausible_rootdir(dev, &g, sec))
			root = sec;
		else if (!fs_ino_valid(&g, root))
			root = fs_ino_valid(&g, calc) ? calc : root;
	}
	if (root != sb->sb_rootino) {
		fs_sb_report(fl, FS_C_SB_INODES, 0, 0, "rootino", FS_U(root), FS_U(sb->sb_rootino),
			  "the primary superblock's root inode %llu is neither where the geometry "
			  "puts the root directory nor a root directory: %llu is used",
			  (unsigned long long)sb->sb_rootino, (unsigned long long)root);
		sb->sb_rootino = root;
		changed++;
	}
	if (!rt)
		return changed;
	if (sb->sb_rbmino != root + 1) {
		fs_sb_report(fl, FS_C_SB_RTGEOMETRY, 0, 0, "rbmino", FS_U(root + 1),
			  FS_U(sb->sb_rbmino), "the primary superblock's realtime bitmap inode "
			  "is not the one after the root directory, where mkfs puts it: that one is used");
		sb->sb_rbmino = root + 1;
		changed++;
	}
	if (sb->sb_rsumino != root + 2) {
		fs_sb_report(fl, FS_C_SB_RTGEOMETRY, 0, 0, "rsumino", FS_U(root + 2),
			  FS_U(sb->sb_rsumino), "the primary superblock's realtime summary inode "
			  "is not the second after the root directory, where mkfs puts it: that one is used");
		sb->sb_rsumino = root + 2;
		changed++;
	}
	return changed;
}

/*
 * Whether sb's internal log is where it says: a log record header stamped
 * with sb's UUID in the first 256 KiB of the region (a record is at most
 * that long, so one starts there in any cycle).
 */
static bool log_is_there(struct fs_dev *dev, const struct xfs_sb *sb)
{
	const size_t span = 256 << 10;
	uint64_t agno, agbno, off;
	unsigned char *b;
	bool found = false;

	if (!sb->sb_logstart || sb->sb_agblklog > 31 || sb->sb_blocklog > XFS_MAX_BLOCKSIZE_LOG)
		return false;
	agno = sb->sb_logstart >> sb->sb_agblklog;
	agbno = sb->sb_logstart & ((1ull << sb->sb_agblklog) - 1);
	if (agno >= sb->sb_agcount || agbno + sb->sb_logblocks > sb->sb_agblocks ||
	    ((uint64_t)sb->sb_logblocks << sb->sb_blocklog) < span)
		return false;
	off = (agno * sb->sb_agblocks + agbno) << sb->sb_blocklog;
	if (off + span > dev->size || !(b = fs_dev_alloc(dev, span)))
		return false;
	if (!fs_dev_read(dev, b, span, off))
		for (size_t i = 0; i + sizeof(struct xlog_rec_header) <= span && !found; i += FS_BBSIZE) {
			const struct xlog_rec_header *h = (const void *)(b + i);

			found = be32(h->h_magicno) == XLOG_HEADER_MAGIC_NUM &&
				!memcmp(&h->h_fs_uuid, &sb->sb_uuid, sizeof(h->h_fs_uuid));
		}
	free(b);
	return found;
}

/*
 * Two AGs: one secondary cannot outvote the primary.  The log is the one
 * field that can still be settled, by looking: when the primary's log
 * placement holds no log and the secondary's does, the secondary's is
 * taken (otherwise the log's blocks would be handed to free space).
 */
static int settle_log_tie(struct fs_dev *dev, struct xfs_sb *out, const struct xfs_sb *sec,
			  struct fs_findings *fl)
{
	struct xfs_sb trial = *out;

	if (out->sb_logstart == sec->sb_logstart && out->sb_logblocks == sec->sb_logblocks)
		return 0;
	trial.sb_logstart = sec->sb_logstart;
	trial.sb_logblocks = sec->sb_logblocks;
	if (log_is_there(dev, out) || !log_is_there(dev, &trial))
		return 0;
	fs_sb_report(fl, FS_C_SB_SECONDARY, 0, 0, "logstart", FS_U(sec->sb_logstart),
		  FS_U(out->sb_logstart), "the primary superblock's log (start %llu, %u blocks) "
		  "holds no log record, the only secondary's (start %llu, %u blocks) does: the "
		  "primary is the damaged one and the secondary's log is used",
		  (unsigned long long)out->sb_logstart, out->sb_logblocks,
		  (unsigned long long)sec->sb_logstart, sec->sb_logblocks);
	*out = trial;
	return 1;
}

/*
 * Before anything trusts the primary: vote its shared fields against the
 * secondaries (fs_sb_vote), and place the root and realtime inodes by the
 * geometry.  The secondaries are read at the boundaries the primary's
 * geometry names; when fewer than two verify there although it names
 * three or more AGs, the primary's AG size may be the damage: the
 * geometry most copies on the device agree on (fs_find_secondary) names
 * them instead.  When anything is taken, the result is verified as the
 * primary it will become: when usable, its findings and the vote's go to
 * fl and *out holds it; otherwise nothing is taken (fl untouched).
 * Returns 1 when taken, 0 when not, or -ENOMEM.
 */
static int vote_primary(struct fs_dev *dev, const unsigned char *buf, const struct xfs_sb *p,
			struct xfs_sb *out, struct fs_findings *fl)
{
	struct xfs_sb *voters = calloc(FS_MAX_VOTERS, sizeof(*voters));
	unsigned char *vbuf = fs_dev_alloc(dev, XFS_MAX_SECTORSIZE);
	unsigned char *enc = malloc(XFS_MAX_SECTORSIZE);
	struct fs_findings scratch, vf;
	unsigned n, sampled;
	enum fs_sb_state st;
	int changed, ret = 0;

	if (!voters || !vbuf || !enc) {
		ret = -ENOMEM;
		goto out;
	}
	fs_findings_init(&scratch);
	fs_findings_init(&vf);
	n = read_voters(dev, p, vbuf, &scratch, voters, &sampled);
	if (n < 2 && sampled >= 2) {
		struct xfs_sb cand;
		uint64_t where;

		/*
		 * The primary verified, so its AG size is within a factor of
		 * agcount/(agcount-1) of the true one: AG 1 lies in the first two
		 * of its AGs (or the device is not what it says, and reading all
		 * of it would tell no more).
		 */
		uint64_t agbytes = (uint64_t)p->sb_agblocks << p->sb_blocklog;

		if (find_secondary(dev, 2 * agbytes + (1 << 20), &cand, &where) == 0)
			n = read_voters(dev, &cand, vbuf, &scratch, voters, &sampled);
	}
	changed = fs_sb_vote(p, voters, n, out, &vf);
	if (n == 1 && sampled == 1)
		changed += settle_log_tie(dev, out, &voters[0], &vf);
	changed += place_root_inodes(dev, out, voters, n, true, &vf);
	if (!changed)
		goto done;
	/*
	 * The primary with the taken fields patched in, every other byte as on
	 * disk (bad_features2, the bytes past the fields, a CRC that was
	 * already wrong), judged by every rule of a primary: its findings are
	 * the primary's own, the taken fields aside.
	 */
	{
		struct xfs_dsb was, now;
		uint32_t sect = is_pow2_sect(p->sb_sectsize) ? p->sb_sectsize : FS_BBSIZE;
		bool crc_ok = fs_crc_ok(buf, sect, FS_SB_CRC_OFF);

		fs_sb_to_disk(&was, p);
		fs_sb_to_disk(&now, out);
		memcpy(enc, buf, XFS_MAX_SECTORSIZE);
		for (size_t i = 0; i < sizeof(was); i++)
			if (((unsigned char *)&was)[i] != ((unsigned char *)&now)[i])
				enc[i] = ((unsigned char *)&now)[i];
		sect = is_pow2_sect(out->sb_sectsize) ? out->sb_sectsize : FS_BBSIZE;
		if (crc_ok)
			fs_crc_update(enc, sect, FS_SB_CRC_OFF);
	}
	fs_findings_clear(&scratch);
	st = fs_sb_verify(enc, XFS_MAX_SECTORSIZE, 0, &scratch);
	if (st != FS_SB_OK && st != FS_SB_DAMAGED)
		goto done;
	fs_findings_move(fl, &vf);
	fs_findings_move(fl, &scratch);
	ret = 1;
done:
	fs_findings_free(&scratch);
	fs_findings_free(&vf);
out:
	free(voters);
	free(vbuf);
	free(enc);
	return ret;
}

/*
 * A first sector of zeros (dd over the start of the device) in front of
 * nothing libblkid knows: xfs_repair looks for the secondaries then, and
 * so do we.  Any other content is something else, not a damaged XFS.
 */
static bool wiped_xfs_candidate(const struct fs *fs, const unsigned char *buf)
{
	if (*fs->target.fstype || *fs->target.pttype)
		return false;
	for (size_t i = 0; i < FS_BBSIZE; i++)
		if (buf[i])
			return false;
	return true;
}

int fs_open_device(const char *path, enum fs_target_use use, const struct fs_dev_opts *o,
		   struct fs_dev **out, struct fs_target_info *ti, struct fs_error *e)
{
	int err;

	/* before any open(): a FIFO would block it, a mounted target is refused */
	err = fs_target_check(path, use, ti, e ? e->msg : NULL, e ? sizeof(e->msg) : 0);
	if (err) {
		if (e)
			e->err = err;
		return err;
	}
	err = fs_dev_open(path, o, out);
	if (err)
		return fail(e, err, "cannot open %s: %s", path, strerror(-err));
	return 0;
}

/* Whether two opened devices are one (the same file, or the same block device). */
static bool same_dev(const struct fs_dev *a, const struct fs_dev *b)
{
	struct stat sa, sb;

	if (fstat(a->fd, &sa) || fstat(b->fd, &sb))
		return false;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * One of the filesystem's other devices (what, "log" or "realtime"),
 * opened with the data device's options: no read patch (the replay's
 * overlay is of data device sectors), written only when writable.
 */
static int open_other_device(struct fs *fs, const char *path, const char *what,
			     const struct fs_open_opts *o, bool writable, struct fs_dev **out,
			     struct fs_target_info *ti, struct fs_error *e)
{
	struct fs_dev_opts d = o->dev;
	int err;

	d.read_patch = NULL;
	d.read_patch_priv = NULL;
	d.writable = writable;
	err = fs_open_device(path, o->use, &d, out, ti, e);
	if (err) {
		if (e) {
			char was[sizeof(e->msg)];

			snprintf(was, sizeof(was), "%s", e->msg);
			snprintf(e->msg, sizeof(e->msg), "the %s device: %.230s", what, was);
		}
		return err;
	}
	if (same_dev(fs->dev, *out))
		return fail(e, -EXDEV, "%s: the %s device given is the data device itself", path,
			    what);
	return 0;
}

/*
 * The external log and realtime devices.  The log device must hold this
 * filesystem's log: room for sb_logblocks (its UUID is judged once the
 * head is found: fs_open).  The realtime device is sized by the scan,
 * which reports every extent beyond its end.
 */
static int open_other_devices(struct fs *fs, const char *path, const struct fs_open_opts *o,
			      struct fs_error *e)
{
	uint64_t log_bytes = (uint64_t)fs->g.logblocks << fs->g.blocklog;
	int err;

	if (fs->g.log_internal) {
		fs->logdev = fs->dev;
	} else if (o->logdev) {
		err = open_other_device(fs, o->logdev, "log", o, o->dev.writable, &fs->logdev,
					&fs->log_target, e);
		if (err)
			return err;
		if (fs->logdev->size < log_bytes)
			return fail(e, -EXDEV, "%s: the log device %s holds %llu bytes, but this "
				    "filesystem's log is %u blocks (%llu bytes): it is not this "
				    "filesystem's log device; give the one it was made with "
				    "(-l / --logdev)", path, o->logdev,
				    (unsigned long long)fs->logdev->size, fs->g.logblocks,
				    (unsigned long long)log_bytes);
	} else if (!o->log_not_needed) {
		return fail(e, -ENODEV, "%s: the filesystem's log is on an external device "
			    "(%u blocks), which was not given: name it with -l DEV / --logdev=DEV "
			    "(a filesystem is never judged without its log)", path,
			    fs->g.logblocks);
	}
	if (o->rtdev && fs->g.rblocks) {
		err = open_other_device(fs, o->rtdev, "realtime", o, false, &fs->rtdev,
					&fs->rt_target, e);
		if (err)
			return err;
	}
	return 0;
}

void fs_device_notes(const struct fs *fs, const struct fs_open_opts *o,
		     struct fs_device_notes *n)
{
	memset(n, 0, sizeof(*n));
	if (o->logdev && fs->g.log_internal)
		snprintf(n->logdev, sizeof(n->logdev), "log device %s: this filesystem's log is "
			 "internal (the device is not used)", o->logdev);
	if (o->rtdev && !fs->g.rblocks)
		snprintf(n->rtdev, sizeof(n->rtdev), "realtime device %s: this filesystem has no "
			 "realtime section (the device is not used)", o->rtdev);
	if (fs_rt_unchecked(fs))
		snprintf(n->rt_unchecked, sizeof(n->rt_unchecked), "the filesystem has a realtime "
			 "section (%llu blocks) and its device was not given (-r / --rtdev): "
			 "realtime extents were not checked against the device",
			 (unsigned long long)fs->g.rblocks);
}

int fs_open(const char *path, const struct fs_open_opts *o, struct fs **out,
	    struct fs_findings *fl, struct fs_error *e)
{
	struct fs_open_opts defaults = { .allow_secondary = true };
	struct fs_findings local;
	struct fs *fs;
	unsigned char *buf = NULL;
	enum fs_sb_state st;
	struct xfs_sb sec;
	uint64_t sec_where = 0;
	bool have_sec = false;
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
	err = fs_open_device(path, o->use, &o->dev, &fs->dev, &fs->target, e);
	if (err)
		goto out;
	if (fs->dev->size < XFS_MAX_SECTORSIZE) {
		err = fail(e, -EINVAL, "%s: too small to hold an XFS filesystem (%llu bytes)", path,
			   (unsigned long long)fs->dev->size);
		not_xfs(e, fl);
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
	{
		struct fs_findings ondisk;
		int voted = 0;

		fs_findings_init(&ondisk);
		st = fs_sb_verify(buf, XFS_MAX_SECTORSIZE, 0, &ondisk);
		fs_sb_from_disk(&fs->sb, (const void *)buf);
		fs->sb_disk = fs->sb;
		/*
		 * A primary whose geometry can be read is voted on before it is
		 * trusted (feature bits unknown to this build and a v4 version
		 * number included: the secondaries may show them to be damage).
		 */
		if (o->allow_secondary && sb_sizes_agree(&fs->sb) &&
		    (st == FS_SB_OK || st == FS_SB_DAMAGED || st == FS_SB_UNSUPPORTED ||
		     st == FS_SB_V4)) {
			struct xfs_sb v;

			voted = vote_primary(fs->dev, buf, &fs->sb_disk, &v, fl);
			if (voted < 0) {
				fs_findings_free(&ondisk);
				err = fail(e, voted, "out of memory");
				goto out;
			}
			if (voted) {
				fs->sb = v;
				st = FS_SB_DAMAGED;
			}
		}
		if (!voted)
			fs_findings_move(fl, &ondisk);
		fs_findings_free(&ondisk);
	}
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
		if (!o->allow_secondary ||
		    (!sb_looks_like_xfs(&fs->sb) && !wiped_xfs_candidate(fs, buf))) {
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
			not_xfs(e, fl);
			goto out;
		}
		if (!sb_looks_like_xfs(&fs->sb)) {
			/* a wiped first sector: XFS only if a secondary says so */
			if (fs_find_secondary(fs->dev, &sec, &sec_where)) {
				err = fail(e, -EINVAL, "%s: not an XFS filesystem (the first sector is "
					   "zeroed, no secondary XFS superblock was found, and libblkid "
					   "knows nothing there)", path);
				not_xfs(e, fl);
				goto out;
			}
			have_sec = true;
		}
		/* fall through */
	case FS_SB_UNUSABLE: {
		uint64_t where;
		if (!o->allow_secondary) {
			err = fail(e, -EUCLEAN, "%s: primary superblock is corrupt", path);
			goto out;
		}
		err = have_sec ? 0 : fs_find_secondary(fs->dev, &sec, &sec_where);
		if (err) {
			fail(e, -EUCLEAN, "%s: primary superblock is corrupt and no valid secondary superblock was found",
			     path);
			err = -EUCLEAN;
			goto out;
		}
		fs->sb = sec;
		where = sec_where;
		{
			/*
			 * A secondary may hold no root inode (mkfs writes most before
			 * the root exists): the geometry places it as for a primary
			 * (null realtime inodes are placed after it by fs_geom_derive).
			 */
			struct fs_findings quiet;

			fs_findings_init(&quiet);
			place_root_inodes(fs->dev, &fs->sb, NULL, 0, false, &quiet);
			fs_findings_free(&quiet);
		}
		fs->sb_source = (fs_agnumber_t)(where / ((uint64_t)fs->sb.sb_agblocks << fs->sb.sb_blocklog));
		fs_sb_report(fl, FS_C_SB_PRIMARY_BAD, 0, 0, NULL, NULL, NULL,
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
		fs_sb_report(fl, FS_C_SB_GEOMETRY, 0, 0, "dblocks",
			  FS_U(fs->dev->size >> fs->g.blocklog), FS_U(fs->g.dblocks),
			  "filesystem is larger than the device (%llu bytes)",
			  (unsigned long long)fs->dev->size);
	}
	err = open_other_devices(fs, path, o, e);
	if (err)
		goto out;
	fs_log_find_head(fs);
	if (!fs->g.log_internal && fs->have_log_uuid &&
	    memcmp(fs->log_uuid, &fs->sb.sb_uuid, sizeof(fs->log_uuid))) {
		/*
		 * An external log whose records name another filesystem is another
		 * filesystem's log (a wrong device), never evidence against the
		 * superblock: nothing is judged by it, and only a caller that
		 * throws it away opens it.
		 */
		char lu[37], su[37];

		uuid_unparse_lower(fs->log_uuid, lu);
		uuid_unparse_lower((const unsigned char *)&fs->sb.sb_uuid, su);
		if (!o->log_foreign_ok) {
			err = fail(e, -EXDEV, "%s: the log device %s holds the log of another "
				   "filesystem (its records carry UUID %s; this filesystem is %s): "
				   "give this filesystem's log device (-l / --logdev); if its log is "
				   "lost, xfsx_repair -L writes a clean one there", path, o->logdev,
				   lu, su);
			goto out;
		}
		fs->log_foreign = true;
		fs->have_log_head = true;
		fs->log_clean = false;
	} else if (fs->g.log_internal && fs->have_log_uuid && fs->sb_source == 0 &&
	    memcmp(fs->log_uuid, &fs->sb.sb_uuid, sizeof(fs->log_uuid))) {
		/*
		 * Log records carry the UUID the superblock had when they were
		 * written: a primary that disagrees with its own log has a damaged
		 * UUID, even though then every AG header and secondary seems to be
		 * the odd one.
		 */
		char lu[37], su[37];
		uuid_unparse_lower(fs->log_uuid, lu);
		uuid_unparse_lower((const unsigned char *)&fs->sb.sb_uuid, su);
		fs_sb_report(fl, FS_C_SB_UUID, 0, 0, "uuid", lu, su,
			  "primary superblock UUID differs from the one stamped in the log");
	}
	*out = fs;
	fs = NULL;
	err = 0;
out:
	free(buf);
	if (fs) {
		fs_close(fs);
		fs = NULL;
	}
	if (fl == &local)
		fs_findings_free(&local);
	return err;
}

void fs_close(struct fs *fs)
{
	if (!fs)
		return;
	if (fs->logdev != fs->dev)
		fs_dev_close(fs->logdev);
	fs_dev_close(fs->rtdev);
	fs_dev_close(fs->dev);
	free(fs);
}
