// SPDX-License-Identifier: GPL-2.0
/*
 * Unfinished exchange-range intents (XMI) completed by the replay, as the
 * kernel's recovery completes them (xfs_exchmaps_recover_work,
 * xfs_xmi_item_recover_intent, xfs_exchmaps_init_intent,
 * xfs_exchmaps_finish_one, read for the rules).  The XMI holds what is
 * left of the exchange: the two files (by handle: inode and generation),
 * the file blocks left in each and how many.  Recovery:
 *
 *  - fetches both files by handle (an inode core, in use, of the logged
 *    generation, else corruption: the mount fails, and the replay fails
 *    with -EUCLEAN);
 *  - keeps of the logged flags only the request's (attr fork, set sizes,
 *    only file1's written blocks) and works the rest out again from the
 *    files as they are: the sizes to set are each other's present sizes,
 *    and the reflink flags are cleared afterwards only when the whole of
 *    both files is exchanged from block 0 and exactly one had the flag;
 *  - marks a file reflinked when the other is (xfs_exchmaps_ensure_reflink)
 *    and gives both large extent counters when the filesystem has them;
 *  - then, from the logged offsets on, takes the mapping (or hole) at each
 *    file's offset, as long as the shorter of the two, skips it when both
 *    name the same blocks (or both are holes) or, with only file1's written
 *    blocks asked for, when file1's is a hole or unwritten, and otherwise
 *    unmaps both and maps each into the other file (holes are neither
 *    unmapped nor mapped), raising a file's size to cover a mapping it
 *    gains below the size it will get; at the end sets both sizes and
 *    clears the reflink flags as worked out;
 *  - releases both files, which frees the blocks they map past the size
 *    they had before (xfs_inactive's xfs_free_eofblocks, with the in-core
 *    size recovery never changed: see trim_eof).
 *
 * The unmaps and maps go through the fork rewrite the BUIs use
 * (replay_bmap_apply), and each exchanged mapping joins the open extents
 * as a BUI's would, so the caller's AG rebuild accounts for the rmap and
 * refcount records the exchange changes.  Exchanges of attr forks, or
 * into a directory or symlink (online repair's, which end with a short
 * form conversion) fail the replay with -EOPNOTSUPP naming the intent.
 * Quota usage is not adjusted here (the kernel moves the block counts
 * between the files' dquots).
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/bmap.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"

/* the request's flags, as recovery keeps them (XFS_EXCHMAPS_PARAMS) */
#define XMI_PARAMS (XFS_EXCHMAPS_ATTR_FORK | XFS_EXCHMAPS_SET_SIZES | XFS_EXCHMAPS_INO1_WRITTEN)

static int xmi_fail(struct fs_replay *rp, int err, const struct xfs_xmi_log_format *f,
		    const char *why)
{
	return replay_fail(rp, err, "the unfinished XMI log item (id %#llx: an exchange of file "
			   "blocks %llu and %llu + %llu between inodes %llu and %llu, flags %#llx): %s",
			   (unsigned long long)f->xmi_id, (unsigned long long)f->xmi_startoff1,
			   (unsigned long long)f->xmi_startoff2, (unsigned long long)f->xmi_blockcount,
			   (unsigned long long)f->xmi_inode1, (unsigned long long)f->xmi_inode2,
			   (unsigned long long)f->xmi_flags, why);
}

static uint32_t ino_bbs(const struct fs_geom *g)
{
	return (g->inodesize + BBSIZE - 1) >> BBSHIFT;
}

/* A file of the XMI, fetched by handle: its inode's bytes (malloc'ed) and core. */
static int get_file(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		    uint32_t gen, unsigned char **out, struct fs_inode *ip)
{
	const struct fs_geom *g = &rp->fs->g;
	unsigned char *b;
	char why[160];
	int err = replay_buf_get(rp, fs_ino_to_daddr(g, ino), ino_bbs(g), &b);

	if (err)
		return err;
	fs_inode_decode(b, ip);
	why[0] = 0;
	if (get_be16(b) != XFS_DINODE_MAGIC || ip->version != 3 || ip->ino != ino)
		snprintf(why, sizeof(why), "inode %llu is not an inode core",
			 (unsigned long long)ino);
	else if (!ip->mode)
		snprintf(why, sizeof(why), "inode %llu is free", (unsigned long long)ino);
	else if (ip->gen != gen)
		snprintf(why, sizeof(why), "inode %llu has generation %u, the intent names %u",
			 (unsigned long long)ino, ip->gen, gen);
	if (why[0]) {
		free(b);
		strncat(why, "; the kernel's recovery stops there (mounting fails)",
			sizeof(why) - strlen(why) - 1);
		return xmi_fail(rp, -EUCLEAN, f, why);
	}
	*out = b;
	return 0;
}

/* An inode changed here (not by the fork rewrite): its CRC, its check, its write. */
static int put_file(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		    unsigned char *b)
{
	const struct fs_geom *g = &rp->fs->g;
	uint64_t daddr = fs_ino_to_daddr(g, ino);
	struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = ino, .agno = fs_ino_to_agno(g, ino) };
	struct fs_findings fl;
	int err;

	fs_crc_update(b, g->inodesize, XFS_DINODE_CRC_OFF);
	err = replay_buf_put(rp, daddr, ino_bbs(g), b);
	if (err)
		return err;
	fs_findings_init(&fl);
	vc.fl = &fl;
	fs_verify(FS_MT_INODE, &vc, b, g->inodesize);
	if (fl.n) {
		char why[200];

		snprintf(why, sizeof(why), "inode %llu fails its check once changed: %s: %.100s",
			 (unsigned long long)ino, fl.v[0].def->code, fl.v[0].message);
		err = xmi_fail(rp, -EUCLEAN, f, why);
	}
	fs_findings_free(&fl);
	return err ? err : replay_note_write(rp, daddr, ino_bbs(g), 0, g->inodesize, FS_MT_INODE,
					     ino);
}

/* The large extent counters (XFS_DIFLAG2_NREXT64), the counts moved to their wide fields. */
static void to_nrext64(struct xfs_dinode *d)
{
	uint32_t next = be32(d->di_nextents);
	uint16_t anext = be16(d->di_anextents);

	d->di_flags2 = to_be64(be64(d->di_flags2) | XFS_DIFLAG2_NREXT64);
	d->di_big_nextents = to_be64(next);
	d->di_big_anextents = to_be32(anext);
	d->di_nrext64_pad = 0;
}

/* One file's mapping at off, at most len blocks: a real extent or a hole. */
struct xmap {
	uint64_t off, len, fsb;
	bool hole, unwritten;
};

static int map_at(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		  uint64_t off, uint64_t len, struct xmap *out)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_bmap_ctx c = { .g = g, .read_fsblock = replay_read_fsblock, .priv = rp };
	struct fs_findings fl;
	struct fs_bmap m = { 0 };
	struct fs_inode ip;
	unsigned char *b;
	uint64_t next = UINT64_MAX;
	int err = replay_buf_get(rp, fs_ino_to_daddr(g, ino), ino_bbs(g), &b);

	if (err)
		return err;
	fs_inode_decode(b, &ip);
	*out = (struct xmap){ .off = off, .len = len, .hole = true };
	if (ip.format != XFS_DINODE_FMT_EXTENTS && ip.format != XFS_DINODE_FMT_BTREE) {
		free(b);
		return xmi_fail(rp, -EOPNOTSUPP, f, "a file's data fork is neither a list of "
				"extents nor a block map btree");
	}
	fs_findings_init(&fl);
	c.fl = &fl;
	err = fs_bmap_load(&c, b, &ip, XFS_DATA_FORK, &m);
	if (!err && (m.bad || fl.n)) {
		char why[200];

		snprintf(why, sizeof(why), "inode %llu's data fork fails its check: %s: %.100s",
			 (unsigned long long)ino, fl.n ? fl.v[0].def->code : "bmap",
			 fl.n ? fl.v[0].message : "damaged");
		err = xmi_fail(rp, -EUCLEAN, f, why);
	}
	for (size_t i = 0; i < m.n && !err; i++) {
		const struct fs_bmap_ext *e = &m.ext[i];

		if (e->startoff <= off && off < e->startoff + e->blockcount) {
			uint64_t rest = e->startoff + e->blockcount - off;

			*out = (struct xmap){ .off = off, .len = rest < len ? rest : len,
					      .fsb = e->startblock + (off - e->startoff),
					      .unwritten = e->unwritten };
			next = 0;
			break;
		}
		if (e->startoff > off && e->startoff < next)
			next = e->startoff;
	}
	if (!err && out->hole && next != UINT64_MAX && next - off < len)
		out->len = next - off;
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	free(b);
	return err;
}

/* Unmap or map one mapping (a hole: nothing) in a file, as a BUI does; joins the open extents. */
static int bmap_one(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		    int type, uint64_t off, const struct xmap *mp)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_intent_ext x = { .kind = FS_INTENT_BUI, .type = (uint8_t)type, .owner = ino,
				   .startoff = off, .fsb = mp->fsb, .len = (uint32_t)mp->len,
				   .flags = mp->unwritten ? XFS_BMAP_EXTENT_UNWRITTEN : 0,
				   .agno = fs_fsb_to_agno(g, mp->fsb),
				   .agbno = fs_fsb_to_agbno(g, mp->fsb) };
	struct fs_intent_ext *o;
	char why[240] = "";
	int r;

	if (mp->hole)
		return 0;
	r = replay_bmap_apply(rp, &x, why, sizeof(why));
	if (r < 0)
		return r;
	if (!r) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%s file blocks %llu+%llu of inode %llu could not be "
			 "done: %s", type == 1 ? "mapping" : "unmapping", (unsigned long long)off,
			 (unsigned long long)mp->len, (unsigned long long)ino, why);
		return xmi_fail(rp, -EOPNOTSUPP, f, msg);
	}
	o = replay_open_add(rp, 1);
	if (!o)
		return -ENOMEM;
	*o = x;
	return 0;
}

/* A file's size raised to cover [0, end blocks) but not past limit (xfs_exchmaps_update_size). */
static int raise_size(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		      uint32_t gen, uint64_t end, int64_t limit)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_inode ip;
	unsigned char *b;
	uint64_t len;
	int err;

	if (limit < 0)
		return 0;
	len = end << g->blocklog;
	if (len > (uint64_t)limit)
		len = (uint64_t)limit;
	err = get_file(rp, f, ino, gen, &b, &ip);
	if (err)
		return err;
	if (len > ip.size) {
		((struct xfs_dinode *)b)->di_size = to_be64(len);
		err = put_file(rp, f, ino, b);
	}
	free(b);
	return err;
}

static int set_core(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		    uint32_t gen, int64_t size, uint64_t set2, uint64_t clear2, bool nrext64)
{
	struct fs_inode ip;
	struct xfs_dinode *d;
	unsigned char *b = NULL;
	uint64_t fl2;
	int err = get_file(rp, f, ino, gen, &b, &ip);

	if (err)
		return err;
	d = (struct xfs_dinode *)b;
	if (nrext64 && !ip.nrext64)
		to_nrext64(d);
	fl2 = (be64(d->di_flags2) | set2) & ~clear2;
	d->di_flags2 = to_be64(fl2);
	if (size >= 0)
		d->di_size = to_be64((uint64_t)size);
	err = put_file(rp, f, ino, b);
	free(b);
	return err;
}

/*
 * The blocks past a file's EOF taken out, as the kernel's release of the
 * files after recovery does (xfs_inactive: xfs_free_eofblocks, a regular
 * file without the prealloc or append-only flag).  Its EOF there is the
 * in-core size (XFS_ISIZE: the VFS size), which recovery read from the
 * inode before the exchange and which SET_SIZES does not change (it sets
 * the on-disk size only): isize.  So a mapping the exchange moved past a
 * file's old size is freed, even below the size it ends with (seen on
 * kernel 6.18), and one past its new size but below its old one stays.
 */
static int trim_eof(struct fs_replay *rp, const struct xfs_xmi_log_format *f, fs_ino_t ino,
		    uint32_t gen, uint64_t isize)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_bmap_ctx c = { .g = g, .read_fsblock = replay_read_fsblock, .priv = rp };
	struct fs_bmap m = { 0 };
	struct fs_inode ip;
	unsigned char *b;
	uint64_t end;
	int err = get_file(rp, f, ino, gen, &b, &ip);

	if (err)
		return err;
	if (!S_ISREG(ip.mode) || (ip.flags & (XFS_DIFLAG_PREALLOC | XFS_DIFLAG_APPEND))) {
		free(b);
		return 0;
	}
	end = (isize + g->blocksize - 1) >> g->blocklog;
	err = fs_bmap_load(&c, b, &ip, XFS_DATA_FORK, &m);
	free(b);
	for (size_t i = m.n; i-- > 0 && !err;) {
		const struct fs_bmap_ext *e = &m.ext[i];
		uint64_t cut = e->startoff > end ? e->startoff : end;
		struct xmap r;

		if (e->startoff + e->blockcount <= end)
			break;
		r = (struct xmap){ .off = cut, .len = e->startoff + e->blockcount - cut,
				   .fsb = e->startblock + (cut - e->startoff),
				   .unwritten = e->unwritten };
		err = bmap_one(rp, f, ino, 2, cut, &r);
		if (!err)
			rp->st.xmi_eof_trimmed += r.len;
	}
	fs_bmap_free(&m);
	return err;
}

static int apply_xmi(struct fs_replay *rp, const struct xfs_xmi_log_format *f)
{
	const struct fs_geom *g = &rp->fs->g;
	uint64_t flags = f->xmi_flags & XMI_PARAMS, clear1 = 0, clear2 = 0;
	uint64_t so1 = f->xmi_startoff1, so2 = f->xmi_startoff2, cnt = f->xmi_blockcount;
	int64_t isize1 = -1, isize2 = -1;
	struct fs_inode ip1, ip2;
	unsigned char *b1 = NULL, *b2 = NULL;
	unsigned rs = 0;
	int err;

	if (flags & XFS_EXCHMAPS_ATTR_FORK)
		return xmi_fail(rp, -EOPNOTSUPP, f, "an exchange of attr forks (online repair's), "
				"which this version does not complete (mount the filesystem to let "
				"the kernel's recovery do it)");
	err = get_file(rp, f, f->xmi_inode1, f->xmi_igen1, &b1, &ip1);
	if (!err)
		err = get_file(rp, f, f->xmi_inode2, f->xmi_igen2, &b2, &ip2);
	free(b1);
	free(b2);
	if (err)
		return err;
	if (S_ISDIR(ip2.mode) || S_ISLNK(ip2.mode))
		return xmi_fail(rp, -EOPNOTSUPP, f, "an exchange into a directory or symlink "
				"(online repair's), which this version does not complete (mount the "
				"filesystem to let the kernel's recovery do it)");
	/* what recovery works out again (xfs_exchmaps_init_intent) */
	if (flags & XFS_EXCHMAPS_SET_SIZES) {
		isize1 = (int64_t)ip2.size;
		isize2 = (int64_t)ip1.size;
	}
	rs = (ip1.flags2 & XFS_DIFLAG2_REFLINK ? 1u : 0u) | (ip2.flags2 & XFS_DIFLAG2_REFLINK ? 2u : 0u);
	if ((rs == 1 || rs == 2) && !so1 && !so2 &&
	    cnt == (ip1.size + g->blocksize - 1) >> g->blocklog &&
	    cnt == (ip2.size + g->blocksize - 1) >> g->blocklog) {
		clear1 = rs & 1 ? XFS_DIFLAG2_REFLINK : 0;
		clear2 = rs & 2 ? XFS_DIFLAG2_REFLINK : 0;
	}
	/* xfs_exchmaps_ensure_reflink, xfs_exchmaps_upgrade_extent_counts */
	err = set_core(rp, f, f->xmi_inode1, f->xmi_igen1, -1, rs & 2 ? XFS_DIFLAG2_REFLINK : 0, 0,
		       g->nrext64);
	if (!err)
		err = set_core(rp, f, f->xmi_inode2, f->xmi_igen2, -1,
			       rs & 1 ? XFS_DIFLAG2_REFLINK : 0, 0, g->nrext64);
	while (!err && cnt) {
		struct xmap r1, r2;

		err = map_at(rp, f, f->xmi_inode1, so1, cnt, &r1);
		if (err)
			break;
		if ((flags & XFS_EXCHMAPS_INO1_WRITTEN) && (r1.hole || r1.unwritten)) {
			so1 += r1.len;
			so2 += r1.len;
			cnt -= r1.len;
			continue;
		}
		err = map_at(rp, f, f->xmi_inode2, so2, r1.len, &r2);
		if (err)
			break;
		if (r2.len < r1.len)
			r1.len = r2.len;
		if (r1.hole == r2.hole && (r1.hole || r1.fsb == r2.fsb)) {
			if (!r1.hole && r1.unwritten != r2.unwritten) {
				err = xmi_fail(rp, -EUCLEAN, f, "both files map the same blocks, one "
					       "written, one not; the kernel's recovery stops there "
					       "(mounting fails)");
				break;
			}
		} else {
			err = bmap_one(rp, f, f->xmi_inode1, 2, so1, &r1);
			if (!err)
				err = bmap_one(rp, f, f->xmi_inode2, 2, so2, &r2);
			if (!err)
				err = bmap_one(rp, f, f->xmi_inode1, 1, so1, &r2);
			if (!err)
				err = bmap_one(rp, f, f->xmi_inode2, 1, so2, &r1);
			if (!err && !r2.hole)
				err = raise_size(rp, f, f->xmi_inode1, f->xmi_igen1, so1 + r1.len,
						 isize1);
			if (!err && !r1.hole)
				err = raise_size(rp, f, f->xmi_inode2, f->xmi_igen2, so2 + r1.len,
						 isize2);
			rp->st.xmi_steps++;
		}
		so1 += r1.len;
		so2 += r1.len;
		cnt -= r1.len;
	}
	/* the end: the sizes, then the reflink flags */
	if (!err && (isize1 >= 0 || clear1))
		err = set_core(rp, f, f->xmi_inode1, f->xmi_igen1, isize1, 0, clear1, false);
	if (!err && (isize2 >= 0 || clear2))
		err = set_core(rp, f, f->xmi_inode2, f->xmi_igen2, isize2, 0, clear2, false);
	if (!err)
		err = trim_eof(rp, f, f->xmi_inode1, f->xmi_igen1, ip1.size);
	if (!err && f->xmi_inode2 != f->xmi_inode1)
		err = trim_eof(rp, f, f->xmi_inode2, f->xmi_igen2, ip2.size);
	return err;
}

int replay_apply_xmis(struct fs_replay *rp)
{
	for (size_t i = 0; i < rp->nopen_xmis; i++) {
		int err = apply_xmi(rp, &rp->open_xmis[i]);

		if (err)
			return err;
		rp->st.xmis_applied++;
	}
	return 0;
}
