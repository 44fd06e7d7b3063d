// SPDX-License-Identifier: GPL-2.0
/*
 * The writer: puts a planned filesystem on the device.  Free space is never
 * written: the target is discarded (or, with -K, only the ranges that must
 * read as zero are zeroed) by offload, then each AG gets one write holding
 * its header sectors and btree roots, AG 0 its inode chunk, and the log its
 * first record.  The primary superblock goes last, with inprogress cleared
 * only after everything else is on stable storage.  Every metadata block
 * passes the check repair's writes pass (its CRC stamped, its read verifier
 * run: mkfs_seal) before the buffer holding it is written, and the log's
 * record the log reader's checks.
 */
#include "mkfs/write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libfs/build/encode.h"
#include "libfs/format/bmap.h"
#include "libfs/format/crc.h"
#include "libfs/fs.h"
#include "libfs/format/sb.h"
#include "libfs/io/cache.h"

#define WHACK_BYTES (128 * 1024)   /* old signatures live in the first/last 128 KiB */

static int werr(char *err, size_t el, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int werr(char *err, size_t el, int rc, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(err, el, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (rc < 0 && n < el)
		snprintf(err + n, el - n, ": %s", strerror(-rc));
	return rc < 0 ? rc : -EIO;
}

int mkfs_seal(const struct fs_geom *g, enum fs_mtype t, fs_agnumber_t agno, fs_ino_t ino,
	      fs_daddr_t daddr, void *buf, uint32_t len, char *err, size_t el)
{
	/* no log head to judge LSNs by: mkfs stamps none beyond the new log's */
	struct fs_flush_opts fo = { .g = g };
	struct fs_dirty_info di = { .type = t, .agno = agno, .ino = ino };
	struct fs_flush_result res;
	struct xfs_dsb *d = buf;
	int rc;

	if (t == FS_MT_SB && len >= sizeof(*d) && d->sb_inprogress) {
		/*
		 * inprogress is the crash protocol's mark, set on purpose until
		 * the primary is rewritten last: the rest is judged on a copy
		 * without it, and the block gets the CRC of what it holds.
		 */
		unsigned char *copy = malloc(len);

		if (!copy)
			return werr(err, el, -ENOMEM, "checking a superblock");
		memcpy(copy, buf, len);
		((struct xfs_dsb *)copy)->sb_inprogress = 0;
		rc = fs_meta_seal(&fo, &di, daddr, copy, len, &res);
		free(copy);
		if (!rc)
			fs_crc_update(buf, len, FS_SB_CRC_OFF);
	} else {
		rc = fs_meta_seal(&fo, &di, daddr, buf, len, &res);
	}
	if (rc == -EUCLEAN)
		fs_flush_result_describe(&res, err, el);
	else if (rc)
		werr(err, el, rc, "checking a metadata block at daddr %llu",
		     (unsigned long long)daddr);
	return rc;
}

bool mkfs_test_fault(const char *name)
{
	const char *f = getenv("XFSX_TEST_FAULT");

	return f && !strcmp(f, name);
}

/*
 * The metadata blocks of encode_ag's buffer, each through mkfs_seal: the
 * four header sectors and the btree roots.
 */
static int seal_ag(const struct fs_geom *g, const struct mkfs_plan *p, uint32_t agno,
		   unsigned char *agbuf, char *err, size_t el)
{
	const struct { enum fs_mtype t; uint32_t off, len; bool on; } obj[] = {
		{ FS_MT_SB, 0, p->sectsize, true },
		{ FS_MT_AGF, p->sectsize, p->sectsize, true },
		{ FS_MT_AGI, 2 * p->sectsize, p->sectsize, true },
		{ FS_MT_AGFL, 3 * p->sectsize, p->sectsize, true },
		{ FS_MT_BNOBT, p->bno_root << p->blocklog, p->blocksize, true },
		{ FS_MT_CNTBT, p->cnt_root << p->blocklog, p->blocksize, true },
		{ FS_MT_INOBT, p->ino_root << p->blocklog, p->blocksize, true },
		{ FS_MT_FINOBT, p->fino_root << p->blocklog, p->blocksize, p->finobt },
		{ FS_MT_RMAPBT, p->rmap_root << p->blocklog, p->blocksize, p->rmapbt },
		{ FS_MT_REFCBT, p->refc_root << p->blocklog, p->blocksize, p->reflink },
	};
	fs_daddr_t base = fs_ag_daddr(g, agno);

	for (size_t i = 0; i < sizeof(obj) / sizeof(obj[0]); i++) {
		int rc;

		if (!obj[i].on)
			continue;
		rc = mkfs_seal(g, obj[i].t, agno, 0, base + obj[i].off / FS_BBSIZE,
			       agbuf + obj[i].off, obj[i].len, err, el);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_cnt(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;   /* {start, len} pairs: by length, then start */

	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void block_at(const struct mkfs_plan *p, unsigned char *agbuf, uint32_t agbno,
		     void **out)
{
	*out = agbuf + ((size_t)agbno << p->blocklog);
}

/*
 * Secondary superblocks: as the primary, minus the counters and rt inodes;
 * like mkfs.xfs, only the last AG's and the middle one's name the root inode.
 */
static void secondary_sb(const struct mkfs_plan *p, uint32_t agno, struct xfs_sb *sb)
{
	*sb = p->sb;
	if (agno != p->agcount - 1 && !(p->agcount > 2 && agno == (p->agcount - 1) / 2))
		sb->sb_rootino = NULLFSINO;
	sb->sb_rbmino = NULLFSINO;
	sb->sb_rsumino = NULLFSINO;
	sb->sb_inprogress = 1;
	sb->sb_icount = 0;
	sb->sb_ifree = 0;
	sb->sb_fdblocks = p->fdblocks + p->chunk_blocks;
	/* mkfs.xfs writes them before it makes the rt files and frees the rt extents */
	if (p->rbmblocks)
		sb->sb_fdblocks += (uint64_t)p->rbmblocks + p->rsumblocks;
	sb->sb_frextents = 0;
}

/* Encode the fixed blocks [0, prealloc_blocks) of one AG into agbuf. */
static void encode_ag(const struct mkfs_plan *p, const struct mkfs_ag *ag, unsigned char *agbuf)
{
	const unsigned char *uuid = (const unsigned char *)&p->sb.sb_uuid;
	size_t ss = p->sectsize, bs = p->blocksize;
	struct fs_geom g = { .blocklog = p->blocklog, .agblocks = p->agblocks };
	struct fs_agf agf = { 0 };
	struct fs_agi agi = { 0 };
	struct xfs_sb sb;
	void *blk;
	uint32_t recs[MKFS_MAX_FREE_EXTENTS][2];
	bool is0 = ag->agno == 0;
	uint32_t agino0 = ag->chunk_agbno << (p->blocklog - p->inodelog);

	memset(agbuf, 0, (size_t)p->prealloc_blocks << p->blocklog);

	/* sector 0: superblock (AG 0's is rewritten last with inprogress cleared) */
	if (is0) {
		sb = p->sb;
		sb.sb_inprogress = 1;
	} else {
		secondary_sb(p, ag->agno, &sb);
	}
	fs_enc_sb(agbuf, ss, &sb);

	agf.seqno = ag->agno;
	agf.length = ag->length;
	agf.bno_root = p->bno_root;
	agf.cnt_root = p->cnt_root;
	agf.bno_level = agf.cnt_level = 1;
	if (p->rmapbt) {
		agf.rmap_root = p->rmap_root;
		agf.rmap_level = 1;
		agf.rmap_blocks = 1;
	}
	if (p->reflink) {
		agf.refc_root = p->refc_root;
		agf.refc_level = 1;
		agf.refc_blocks = 1;
	}
	/* the kernel's AGF init leaves slot 0 unused: the list runs from slot 1 */
	agf.flfirst = 1;
	agf.fllast = ag->agfl_count;
	agf.flcount = ag->agfl_count;
	agf.freeblks = ag->freeblks;
	agf.longest = ag->longest;
	fs_enc_agf(agbuf + ss, ss, &agf, uuid);

	agi.seqno = ag->agno;
	agi.length = ag->length;
	agi.count = is0 ? p->chunk_inodes : 0;
	agi.root = p->ino_root;
	agi.level = 1;
	agi.freecount = is0 ? p->chunk_inodes - 3 : 0;
	agi.newino = is0 ? agino0 : NULLAGINO;
	agi.dirino = NULLAGINO;
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
		agi.unlinked[i] = NULLAGINO;
	if (p->finobt) {
		agi.free_root = p->fino_root;
		agi.free_level = 1;
	}
	if (p->inobtcount) {
		agi.iblocks = 1;
		agi.fblocks = p->finobt ? 1 : 0;
	}
	fs_enc_agi(agbuf + 2 * ss, ss, &agi, uuid);
	fs_enc_agfl(agbuf + 3 * ss, ss, ag->agno, uuid, 1, ag->agfl, ag->agfl_count);

	/* free space by block, then by size */
	for (uint32_t i = 0; i < ag->nfree; i++) {
		recs[i][0] = ag->free[i].start;
		recs[i][1] = ag->free[i].len;
	}
	block_at(p, agbuf, p->bno_root, &blk);
	fs_enc_sblock(blk, bs, XFS_ABTB_CRC_MAGIC, 0, (uint16_t)ag->nfree,
		      fs_agbno_to_daddr(&g, ag->agno, p->bno_root), ag->agno, uuid);
	for (uint32_t i = 0; i < ag->nfree; i++)
		fs_enc_alloc_rec(fs_sblock_rec(blk, sizeof(xfs_alloc_rec_t), i), recs[i][0], recs[i][1]);
	fs_enc_sblock_finish(blk, bs);

	qsort(recs, ag->nfree, sizeof(recs[0]), cmp_cnt);
	block_at(p, agbuf, p->cnt_root, &blk);
	fs_enc_sblock(blk, bs, XFS_ABTC_CRC_MAGIC, 0, (uint16_t)ag->nfree,
		      fs_agbno_to_daddr(&g, ag->agno, p->cnt_root), ag->agno, uuid);
	for (uint32_t i = 0; i < ag->nfree; i++)
		fs_enc_alloc_rec(fs_sblock_rec(blk, sizeof(xfs_alloc_rec_t), i), recs[i][0], recs[i][1]);
	fs_enc_sblock_finish(blk, bs);

	/* inode btrees: AG 0 holds the root chunk with three inodes in use */
	for (int fino = 0; fino < 2; fino++) {
		uint32_t root = fino ? p->fino_root : p->ino_root;

		if (fino && !p->finobt)
			continue;
		block_at(p, agbuf, root, &blk);
		/* one record per 64 inodes of the root allocation, the first with 3 in use */
		uint16_t nrec = is0 ? (uint16_t)(p->chunk_inodes / XFS_INODES_PER_CHUNK) : 0;

		fs_enc_sblock(blk, bs, fino ? XFS_FIBT_CRC_MAGIC : XFS_IBT_CRC_MAGIC, 0, nrec,
			      fs_agbno_to_daddr(&g, ag->agno, root), ag->agno, uuid);
		for (uint16_t r = 0; r < nrec; r++)
			fs_enc_inobt_rec(fs_sblock_rec(blk, sizeof(xfs_inobt_rec_t), r),
					 agino0 + r * XFS_INODES_PER_CHUNK, p->sparse, 0,
					 XFS_INODES_PER_CHUNK, r ? XFS_INODES_PER_CHUNK :
					 XFS_INODES_PER_CHUNK - 3, r ? ~0ull : ~0ull << 3);
		fs_enc_sblock_finish(blk, bs);
	}

	if (p->rmapbt) {
		block_at(p, agbuf, p->rmap_root, &blk);
		fs_enc_sblock(blk, bs, XFS_RMAP_CRC_MAGIC, 0, (uint16_t)ag->nrmap,
			      fs_agbno_to_daddr(&g, ag->agno, p->rmap_root), ag->agno, uuid);
		for (uint32_t i = 0; i < ag->nrmap; i++)
			fs_enc_rmap_rec(fs_sblock_rec(blk, sizeof(struct xfs_rmap_rec), i),
					ag->rmap[i].start, ag->rmap[i].len, ag->rmap[i].owner, 0);
		fs_enc_sblock_finish(blk, bs);
	}
	if (p->reflink) {
		block_at(p, agbuf, p->refc_root, &blk);
		fs_enc_sblock(blk, bs, XFS_REFC_CRC_MAGIC, 0, 0,
			      fs_agbno_to_daddr(&g, ag->agno, p->refc_root), ag->agno, uuid);
	}
}

static void now_or_epoch(int64_t *sec, uint32_t *nsec)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	struct timespec ts;

	/* reproducible images: the time a build system asks for */
	if (sde && *sde) {
		char *end;
		long long v = strtoll(sde, &end, 10);

		if (!*end && v >= 0) {
			*sec = v;
			*nsec = 0;
			return;
		}
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
}

/* One extent at file block 0 into an inode's data fork (the rt bitmap and summary). */
static void encode_one_extent(unsigned char *ino, size_t is, uint64_t fsb, uint64_t len)
{
	struct fs_bmap_ext e = { .startoff = 0, .startblock = fsb, .blockcount = len };

	fs_bmbt_rec_encode(&e, fs_dinode_dfork(ino));
	fs_enc_dinode_finish(ino, is);
}

/*
 * The root inode chunk: root directory, rt bitmap and summary (each one
 * extent in AG 0 when there is a realtime section, else empty), the rest free.
 */
static void encode_chunk(const struct mkfs_plan *p, const struct mkfs_ag *ag, unsigned char *buf)
{
	const unsigned char *uuid = (const unsigned char *)&p->sb.sb_uuid;
	struct fs_dinode_init in = { .bigtime = p->bigtime, .nrext64 = p->nrext64, .changecount = 2 };
	size_t is = p->inodesize;

	now_or_epoch(&in.sec, &in.nsec);
	for (uint32_t i = 0; i < p->chunk_inodes; i++)
		fs_enc_dinode_free(buf + i * is, is, p->rootino + i, uuid);

	in.mode = S_IFDIR | 0755;
	in.format = XFS_DINODE_FMT_LOCAL;
	in.nlink = 2;
	in.size = fs_enc_dir_sf_empty(fs_dinode_dfork(buf), p->rootino);
	fs_enc_dinode(buf, is, p->rootino, uuid, &in);
	fs_enc_dir_sf_empty(fs_dinode_dfork(buf), p->rootino);
	fs_enc_dinode_finish(buf, is);

	in.mode = S_IFREG;
	in.format = XFS_DINODE_FMT_EXTENTS;
	in.nlink = 1;
	in.size = 0;
	in.flags = XFS_DIFLAG_NEWRTBM;
	if (p->rbmblocks) {
		/* the changes mkfs.xfs's transactions count: made, sized, filled (and freed) */
		in.changecount = 4;
		in.size = (uint64_t)p->rbmblocks << p->blocklog;
		in.nblocks = p->rbmblocks;
		in.nextents = 1;
	}
	fs_enc_dinode(buf + is, is, p->rootino + 1, uuid, &in);
	if (p->rbmblocks)
		encode_one_extent(buf + is, is, ag->rbm_agbno, p->rbmblocks);
	in.flags = 0;
	if (p->rbmblocks) {
		in.changecount = 3;
		in.size = p->rsumsize;
		in.nblocks = p->rsumblocks;
	}
	fs_enc_dinode(buf + 2 * is, is, p->rootino + 2, uuid, &in);
	if (p->rbmblocks)
		encode_one_extent(buf + 2 * is, is, ag->rsum_agbno, p->rsumblocks);
}

/*
 * Bytes [off, off + len) of the rt bitmap: a set bit is a free extent, and
 * all are free; words of 32 bits in host order, as the kernel keeps them.
 */
static void encode_rtbitmap(const struct mkfs_plan *p, uint64_t off, unsigned char *buf, size_t len)
{
	uint64_t full = p->rextents / 32;
	uint32_t rem = (uint32_t)(p->rextents % 32);

	for (size_t i = 0; i < len; i += 4) {
		uint64_t w = (off + i) / 4;
		uint32_t word = w < full ? 0xffffffffu : w == full && rem ? (1u << rem) - 1 : 0;

		memcpy(buf + i, &word, 4);
	}
}

/* Discard (unless -K) and zero the first and last 128 KiB of a device mkfs takes whole. */
static int clear_dev(struct fs_dev *dev, bool nodiscard, bool ends)
{
	int rc;

	if (!nodiscard) {
		rc = fs_dev_discard_range(dev, 0, dev->size);
		if (rc < 0 && rc != -EOPNOTSUPP && rc != -ENOTTY && rc != -EINVAL)
			return rc;
	}
	if (!ends)
		return 0;
	rc = fs_dev_zero_range(dev, 0, dev->size < WHACK_BYTES ? dev->size : WHACK_BYTES);
	if (rc < 0)
		return rc;
	if (dev->size > WHACK_BYTES) {
		uint64_t tail = dev->size - WHACK_BYTES;

		tail &= ~(uint64_t)(FS_BBSIZE - 1);
		rc = fs_dev_zero_range(dev, tail, dev->size - tail);
	}
	return rc;
}

/*
 * An XFS that was there may have secondary superblocks where the new one
 * has free space; xfs_repair's superblock search could find them later.
 * Zero every old AG's superblock sector (as mkfs.xfs does), by offload.
 */
static int zap_old_xfs(struct fs_dev *dev)
{
	size_t len = dev->dio_align > FS_BBSIZE ? dev->dio_align : FS_BBSIZE;
	unsigned char *buf = fs_dev_alloc(dev, len);
	struct xfs_sb old;
	uint64_t agbytes;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (dev->size < len || fs_dev_read(dev, buf, len, 0) < 0)
		goto out;
	fs_sb_from_disk(&old, (const struct xfs_dsb *)buf);
	if (old.sb_magicnum != XFS_SB_MAGIC || old.sb_blocklog < 9 || old.sb_blocklog > 16 ||
	    old.sb_sectlog < 9 || old.sb_sectlog > 15 || !old.sb_agblocks || !old.sb_agcount)
		goto out;
	agbytes = (uint64_t)old.sb_agblocks << old.sb_blocklog;
	for (uint64_t a = 1; a < old.sb_agcount; a++) {
		uint64_t off = a * agbytes;

		if (off + (1u << old.sb_sectlog) > dev->size)
			break;
		rc = fs_dev_zero_range(dev, off, 1u << old.sb_sectlog);
		if (rc < 0)
			break;
	}
out:
	free(buf);
	return rc;
}

#define RT_CHUNK (8u << 20)   /* bitmap bytes per write */

/*
 * The rt bitmap and summary files' blocks in AG 0 (plain data: no headers,
 * no CRC).  The bitmap in writes of 8 MiB at most; the summary zeroed by
 * offload, then the block holding its one count (every extent is one free
 * run: counted at its log2 size, bitmap block 0) written.
 */
static int write_rt_files(struct fs_dev *dev, const struct fs_geom *g, const struct mkfs_plan *p,
			  const struct mkfs_ag *ag, char *err, size_t el)
{
	uint64_t bmlen = (uint64_t)p->rbmblocks << p->blocklog;
	uint64_t bmoff = fs_daddr_to_bytes(fs_agbno_to_daddr(g, 0, ag->rbm_agbno));
	uint64_t sumoff = fs_daddr_to_bytes(fs_agbno_to_daddr(g, 0, ag->rsum_agbno));
	uint64_t idx = (uint64_t)p->sb.sb_rextslog * p->rbmblocks;     /* the count's word */
	uint64_t cblk = (idx * 4) >> p->blocklog;
	size_t buflen = bmlen < RT_CHUNK ? (size_t)bmlen : RT_CHUNK;
	unsigned char *buf = fs_dev_alloc(dev, buflen < p->blocksize ? p->blocksize : buflen);
	uint32_t one = 1;
	int rc = 0;

	if (!buf)
		return werr(err, el, -ENOMEM, "allocating a buffer for the realtime bitmap");
	for (uint64_t off = 0; off < bmlen; off += buflen) {
		size_t n = bmlen - off < buflen ? (size_t)(bmlen - off) : buflen;

		encode_rtbitmap(p, off, buf, n);
		rc = fs_dev_write(dev, buf, n, bmoff + off);
		if (rc < 0) {
			rc = werr(err, el, rc, "writing the realtime bitmap");
			goto out;
		}
	}
	rc = fs_dev_zero_range(dev, sumoff, (uint64_t)p->rsumblocks << p->blocklog);
	if (rc < 0) {
		rc = werr(err, el, rc, "zeroing the realtime summary");
		goto out;
	}
	memset(buf, 0, p->blocksize);
	memcpy(buf + ((idx * 4) & (p->blocksize - 1)), &one, 4);
	rc = fs_dev_write(dev, buf, p->blocksize, sumoff + (cblk << p->blocklog));
	if (rc < 0)
		rc = werr(err, el, rc, "writing the realtime summary");
out:
	free(buf);
	return rc;
}

int mkfs_write(struct fs_dev *dev, struct fs_dev *logdev, struct fs_dev *rtdev,
	       const struct mkfs_plan *p, const struct mkfs_opts *o, struct proto_tree *tree,
	       bool progress, char *err, size_t el)
{
	struct fs_dev *ldev = p->extlog ? logdev : dev;
	struct xfs_sb sb = p->sb;
	struct fs_geom g;
	uint64_t log_off;
	uint64_t log_bytes = (uint64_t)p->logblocks << p->blocklog;
	size_t agbuf_len = (size_t)p->prealloc_blocks << p->blocklog;
	size_t chunk_len = (size_t)p->chunk_blocks << p->blocklog;
	unsigned char *agbuf = NULL, *chunk = NULL;
	struct mkfs_ag ag;
	int rc;

	rc = fs_geom_derive(&p->sb, &g);
	if (rc)
		return werr(err, el, rc, "deriving the geometry");
	log_off = p->extlog ? 0 : fs_daddr_to_bytes(fs_agbno_to_daddr(&g, p->logagno, p->logagbno));
	if ((p->extlog && !logdev) || (p->rblocks && !rtdev)) {
		rc = werr(err, el, -EINVAL, "the plan names a log or realtime device not opened");
		goto out;
	}
	agbuf = fs_dev_alloc(dev, agbuf_len);
	chunk = fs_dev_alloc(dev, chunk_len);
	if (!agbuf || !chunk) {
		rc = werr(err, el, -ENOMEM, "allocating write buffers");
		goto out;
	}

	/*
	 * Clear what was there: discard everything (files: punch a hole), then
	 * zero by offload the ranges that must read as zero even where discard
	 * does not zero: the log, and the first and last 128 KiB of the target
	 * where other filesystems and RAID/partition tables keep signatures.
	 */
	rc = zap_old_xfs(dev);
	if (rc < 0)
		goto zero_fail;
	rc = clear_dev(dev, o->nodiscard, true);
	if (rc < 0)
		goto zero_fail;
	/* an external log device as the data device (its log is zeroed whole below) */
	if (p->extlog) {
		rc = clear_dev(logdev, o->nodiscard, true);
		if (rc < 0) {
			dev = logdev;
			goto zero_fail;
		}
	}
	/*
	 * The realtime device as mkfs.xfs leaves it: discarded, and the last
	 * block of the section zeroed (written: the section's end is there).
	 */
	if (p->rblocks) {
		rc = clear_dev(rtdev, o->nodiscard, false);
		if (!rc)
			rc = fs_dev_zero_range(rtdev, (p->rblocks - 1) << p->blocklog, p->blocksize);
		if (rc < 0) {
			dev = rtdev;
			goto zero_fail;
		}
	}

	/* AG headers and btree roots, last AG first so AG 0 is the last written */
	for (uint32_t a = p->agcount; a-- > 0;) {
		rc = mkfs_ag_layout(p, a, &ag);
		if (rc < 0) {
			rc = werr(err, el, rc, "laying out AG %u", a);
			goto out;
		}
		encode_ag(p, &ag, agbuf);
		if (a == p->agcount - 1 && mkfs_test_fault("mkfs-bad-header"))
			memset(agbuf + p->sectsize, 0, 4);	/* the AGF's magic */
		rc = seal_ag(&g, p, a, agbuf, err, el);
		if (rc < 0)
			goto unmake;
		rc = fs_dev_write(dev, agbuf, agbuf_len, fs_daddr_to_bytes(fs_ag_daddr(&g, a)));
		if (rc < 0) {
			rc = werr(err, el, rc, "writing the headers of AG %u", a);
			goto out;
		}
		if (a == 0 && p->rbmblocks) {
			rc = write_rt_files(dev, &g, p, &ag, err, el);
			if (rc < 0)
				goto out;
		}
		if (a == 0) {
			encode_chunk(p, &ag, chunk);
			rc = mkfs_seal(&g, FS_MT_INODE, 0, p->rootino,
				       fs_agbno_to_daddr(&g, 0, ag.chunk_agbno), chunk,
				       (uint32_t)chunk_len, err, el);
			if (rc < 0)
				goto unmake;
			rc = fs_dev_write(dev, chunk, chunk_len,
					  fs_daddr_to_bytes(fs_agbno_to_daddr(&g, 0, ag.chunk_agbno)));
			if (rc < 0) {
				rc = werr(err, el, rc, "writing the root inode chunk");
				goto out;
			}
		}
	}

	{
		char why[320];

		rc = fs_log_write_clean(ldev, log_off, log_bytes, fs_log_lsunit_bytes(&p->sb),
					(const unsigned char *)&p->sb.sb_uuid, 1, why, sizeof(why));
		if (rc == -EUCLEAN) {
			snprintf(err, el, "%s", why);
			goto unmake;
		}
		if (rc < 0) {
			rc = werr(err, el, rc, "writing a clean log (%llu bytes at offset %llu)",
				  (unsigned long long)log_bytes, (unsigned long long)log_off);
			goto out;
		}
	}

	/* -p: the tree, with every AG's trees and headers rebuilt around it */
	if (tree) {
		rc = proto_populate(dev, p, tree, &sb, progress, err, el);
		if (rc < 0)
			goto unmake;
	}

	/* everything else is durable before the primary says the filesystem is complete */
	rc = fs_dev_flush(dev);
	if (rc < 0) {
		rc = werr(err, el, rc, "flushing %s", dev->path);
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		struct fs_dev *d = i ? (p->rblocks ? rtdev : NULL) : (p->extlog ? logdev : NULL);

		if (d && (rc = fs_dev_flush(d)) < 0) {
			rc = werr(err, el, rc, "flushing %s", d->path);
			goto unmake;
		}
	}
	fs_enc_sb(agbuf, p->sectsize, &sb);
	rc = mkfs_seal(&g, FS_MT_SB, 0, 0, XFS_SB_DADDR, agbuf, p->sectsize, err, el);
	if (rc < 0)
		goto unmake;
	rc = fs_dev_write(dev, agbuf, p->sectsize, 0);
	if (rc < 0) {
		rc = werr(err, el, rc, "writing the primary superblock");
		goto out;
	}
	rc = fs_dev_flush(dev);
	if (rc < 0)
		rc = werr(err, el, rc, "flushing %s", dev->path);
	goto out;

unmake:
	/* a half-made filesystem must not look like one: the primary goes */
	if (fs_dev_zero_range(dev, 0, p->sectsize) < 0) {
		memset(agbuf, 0, p->sectsize);
		fs_dev_write(dev, agbuf, p->sectsize, 0);
	}
	fs_dev_flush(dev);
	goto out;
zero_fail:
	rc = werr(err, el, rc, "clearing %s by discard/zero-range offload (xfsx_mkfs never "
		  "writes zero buffers)", dev->path);
out:
	free(agbuf);
	free(chunk);
	return rc;
}
