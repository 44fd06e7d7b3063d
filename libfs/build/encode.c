// SPDX-License-Identifier: GPL-2.0
/*
 * Encoders for what a new filesystem holds: superblock, AG headers, btree
 * blocks and records, v3 inodes, the empty short-form directory and the
 * first log record with its unmount record.  Layouts come from the xfsprogs
 * headers; every structure leaves here with its CRC set.
 */
#include "libfs/build/encode.h"

#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/sb.h"

void fs_enc_sb(void *buf, size_t sectsize, const struct xfs_sb *sb)
{
	memset(buf, 0, sectsize);
	fs_sb_to_disk(buf, sb);
	fs_crc_update(buf, sectsize, FS_SB_CRC_OFF);
}

void fs_enc_agf(void *buf, size_t sectsize, const struct fs_agf *a, const unsigned char uuid[16])
{
	struct xfs_agf *d = buf;

	memset(buf, 0, sectsize);
	d->agf_magicnum = to_be32(XFS_AGF_MAGIC);
	d->agf_versionnum = to_be32(XFS_AGF_VERSION);
	d->agf_seqno = to_be32(a->seqno);
	d->agf_length = to_be32(a->length);
	d->agf_roots[XFS_BTNUM_BNOi] = to_be32(a->bno_root);
	d->agf_roots[XFS_BTNUM_CNTi] = to_be32(a->cnt_root);
	d->agf_roots[XFS_BTNUM_RMAPi] = to_be32(a->rmap_root);
	d->agf_levels[XFS_BTNUM_BNOi] = to_be32(a->bno_level);
	d->agf_levels[XFS_BTNUM_CNTi] = to_be32(a->cnt_level);
	d->agf_levels[XFS_BTNUM_RMAPi] = to_be32(a->rmap_level);
	d->agf_flfirst = to_be32(a->flfirst);
	d->agf_fllast = to_be32(a->fllast);
	d->agf_flcount = to_be32(a->flcount);
	d->agf_freeblks = to_be32(a->freeblks);
	d->agf_longest = to_be32(a->longest);
	d->agf_btreeblks = to_be32(a->btreeblks);
	memcpy(&d->agf_uuid, uuid, 16);
	d->agf_rmap_blocks = to_be32(a->rmap_blocks);
	d->agf_refcount_blocks = to_be32(a->refc_blocks);
	d->agf_refcount_root = to_be32(a->refc_root);
	d->agf_refcount_level = to_be32(a->refc_level);
	d->agf_lsn = to_be64(a->lsn);
	fs_crc_update(buf, sectsize, XFS_AGF_CRC_OFF);
}

void fs_enc_agi(void *buf, size_t sectsize, const struct fs_agi *a, const unsigned char uuid[16])
{
	struct xfs_agi *d = buf;

	memset(buf, 0, sectsize);
	d->agi_magicnum = to_be32(XFS_AGI_MAGIC);
	d->agi_versionnum = to_be32(XFS_AGI_VERSION);
	d->agi_seqno = to_be32(a->seqno);
	d->agi_length = to_be32(a->length);
	d->agi_count = to_be32(a->count);
	d->agi_root = to_be32(a->root);
	d->agi_level = to_be32(a->level);
	d->agi_freecount = to_be32(a->freecount);
	d->agi_newino = to_be32(a->newino);
	d->agi_dirino = to_be32(a->dirino);
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
		d->agi_unlinked[i] = to_be32(a->unlinked[i]);
	memcpy(&d->agi_uuid, uuid, 16);
	d->agi_lsn = to_be64(a->lsn);
	d->agi_free_root = to_be32(a->free_root);
	d->agi_free_level = to_be32(a->free_level);
	d->agi_iblocks = to_be32(a->iblocks);
	d->agi_fblocks = to_be32(a->fblocks);
	fs_crc_update(buf, sectsize, XFS_AGI_CRC_OFF);
}

void fs_enc_agfl(void *buf, size_t sectsize, uint32_t seqno, const unsigned char uuid[16],
		 uint32_t first, const uint32_t *blocks, uint32_t count)
{
	struct xfs_agfl *d = buf;
	uint32_t slots = (uint32_t)((sectsize - sizeof(struct xfs_agfl)) / sizeof(__be32));
	unsigned char *bno = (unsigned char *)buf + sizeof(struct xfs_agfl);

	memset(buf, 0, sectsize);
	d->agfl_magicnum = to_be32(XFS_AGFL_MAGIC);
	d->agfl_seqno = to_be32(seqno);
	memcpy(&d->agfl_uuid, uuid, 16);
	for (uint32_t i = 0; i < slots; i++)
		put_be32(bno + 4 * i, NULLAGBLOCK);
	for (uint32_t i = 0; i < count && i < slots; i++)
		put_be32(bno + 4 * ((first + i) % slots), blocks[i]);
	fs_crc_update(buf, sectsize, XFS_AGFL_CRC_OFF);
}

/* A btree block header, short (per-AG) or long (bmbt) form: no siblings, LSN 0, CRC set. */
static void enc_btree_block(void *buf, size_t blocksize, bool long_form, uint32_t magic,
			    uint16_t level, uint16_t numrecs, fs_daddr_t daddr, uint64_t owner,
			    const unsigned char uuid[16])
{
	struct xfs_btree_block *b = buf;

	memset(buf, 0, blocksize);
	b->bb_magic = to_be32(magic);
	b->bb_level = to_be16(level);
	b->bb_numrecs = to_be16(numrecs);
	if (long_form) {
		b->bb_u.l.bb_leftsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_rightsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_blkno = to_be64(daddr);
		memcpy(&b->bb_u.l.bb_uuid, uuid, 16);
		b->bb_u.l.bb_owner = to_be64(owner);
		fs_crc_update(buf, blocksize, XFS_BTREE_LBLOCK_CRC_OFF);
	} else {
		b->bb_u.s.bb_leftsib = to_be32(NULLAGBLOCK);
		b->bb_u.s.bb_rightsib = to_be32(NULLAGBLOCK);
		b->bb_u.s.bb_blkno = to_be64(daddr);
		memcpy(&b->bb_u.s.bb_uuid, uuid, 16);
		b->bb_u.s.bb_owner = to_be32((uint32_t)owner);
		fs_crc_update(buf, blocksize, XFS_BTREE_SBLOCK_CRC_OFF);
	}
}

void fs_enc_sblock(void *buf, size_t blocksize, uint32_t magic, uint16_t level,
		   uint16_t numrecs, fs_daddr_t daddr, fs_agnumber_t agno,
		   const unsigned char uuid[16])
{
	enc_btree_block(buf, blocksize, false, magic, level, numrecs, daddr, agno, uuid);
}

void fs_enc_sblock_finish(void *buf, size_t blocksize)
{
	fs_crc_update(buf, blocksize, XFS_BTREE_SBLOCK_CRC_OFF);
}

void fs_enc_lblock(void *buf, size_t blocksize, uint32_t magic, uint16_t level,
		   uint16_t numrecs, fs_daddr_t daddr, fs_ino_t owner,
		   const unsigned char uuid[16])
{
	enc_btree_block(buf, blocksize, true, magic, level, numrecs, daddr, owner, uuid);
}

void fs_enc_lblock_finish(void *buf, size_t blocksize)
{
	fs_crc_update(buf, blocksize, XFS_BTREE_LBLOCK_CRC_OFF);
}

void fs_enc_alloc_rec(void *rec, uint32_t start, uint32_t len)
{
	xfs_alloc_rec_t *r = rec;

	r->ar_startblock = to_be32(start);
	r->ar_blockcount = to_be32(len);
}

void fs_enc_inobt_rec(void *rec, uint32_t startino, bool sparse, uint16_t holemask, uint8_t count,
		      uint8_t freecount, uint64_t free_mask)
{
	xfs_inobt_rec_t *r = rec;

	r->ir_startino = to_be32(startino);
	if (sparse) {
		r->ir_u.sp.ir_holemask = to_be16(holemask);
		r->ir_u.sp.ir_count = count;
		r->ir_u.sp.ir_freecount = freecount;
	} else {
		/* without sparse inodes the count is implied and freecount is 32 bits */
		r->ir_u.f.ir_freecount = to_be32(freecount);
	}
	r->ir_free = to_be64(free_mask);
}

void fs_enc_rmap_rec(void *rec, uint32_t start, uint32_t len, uint64_t owner, uint64_t offset)
{
	struct xfs_rmap_rec *r = rec;

	r->rm_startblock = to_be32(start);
	r->rm_blockcount = to_be32(len);
	r->rm_owner = to_be64(owner);
	r->rm_offset = to_be64(offset);
}

void fs_enc_refc_rec(void *rec, uint32_t start, uint32_t len, uint32_t refcount, bool cow)
{
	struct xfs_refcount_rec *r = rec;

	r->rc_startblock = to_be32(cow ? start | XFS_REFC_COWFLAG : start);
	r->rc_blockcount = to_be32(len);
	r->rc_refcount = to_be32(refcount);
}

void fs_enc_dinode_free(void *buf, size_t inodesize, fs_ino_t ino, const unsigned char uuid[16])
{
	struct xfs_dinode *d = buf;

	memset(buf, 0, inodesize);
	d->di_magic = to_be16(XFS_DINODE_MAGIC);
	d->di_version = 3;
	d->di_next_unlinked = to_be32(NULLAGINO);
	d->di_ino = to_be64(ino);
	memcpy(&d->di_uuid, uuid, 16);
	fs_crc_update(buf, inodesize, offsetof(struct xfs_dinode, di_crc));
}

#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC 1000000000ull   /* XFS_BIGTIME_TIME_MAX needs the kernel's name */
#endif

static __be64 enc_time(int64_t sec, uint32_t nsec, bool bigtime)
{
	/* what the inode cannot hold is clamped, as the kernel clamps a utimes() */
	if (nsec >= 1000000000u)
		nsec = 999999999u;
	if (bigtime && sec < -(int64_t)XFS_BIGTIME_EPOCH_OFFSET) {
		sec = -(int64_t)XFS_BIGTIME_EPOCH_OFFSET;
		nsec = 0;
	} else if (bigtime && sec > (int64_t)(XFS_BIGTIME_TIME_MAX - XFS_BIGTIME_EPOCH_OFFSET)) {
		sec = (int64_t)(XFS_BIGTIME_TIME_MAX - XFS_BIGTIME_EPOCH_OFFSET);
		nsec = 999999999u;
	} else if (!bigtime && sec < INT32_MIN) {
		sec = INT32_MIN;
		nsec = 0;
	} else if (!bigtime && sec > INT32_MAX) {
		sec = INT32_MAX;
		nsec = 999999999u;
	}
	if (bigtime)
		return to_be64(((uint64_t)(sec + XFS_BIGTIME_EPOCH_OFFSET)) * 1000000000ull + nsec);
	return to_be64(((uint64_t)(uint32_t)(int32_t)sec << 32) | nsec);
}

void fs_enc_dinode_set_ctime(void *buf, const struct fs_dinode_time *t)
{
	struct xfs_dinode *d = buf;

	d->di_ctime = enc_time(t->sec, t->nsec,
			       (be64(d->di_flags2) & XFS_DIFLAG2_BIGTIME) != 0);
}

void fs_enc_dinode(void *buf, size_t inodesize, fs_ino_t ino, const unsigned char uuid[16],
		   const struct fs_dinode_init *in)
{
	struct xfs_dinode *d = buf;
	uint64_t flags2 = in->flags2;

	fs_enc_dinode_free(buf, inodesize, ino, uuid);
	if (in->bigtime)
		flags2 |= XFS_DIFLAG2_BIGTIME;
	if (in->nrext64)
		flags2 |= XFS_DIFLAG2_NREXT64;
	d->di_mode = to_be16(in->mode);
	d->di_format = in->format;
	d->di_uid = to_be32(in->uid);
	d->di_gid = to_be32(in->gid);
	d->di_nlink = to_be32(in->nlink);
	if (in->times) {
		d->di_atime = enc_time(in->times[0].sec, in->times[0].nsec, in->bigtime);
		d->di_mtime = enc_time(in->times[1].sec, in->times[1].nsec, in->bigtime);
		d->di_ctime = enc_time(in->times[2].sec, in->times[2].nsec, in->bigtime);
		d->di_crtime = enc_time(in->times[3].sec, in->times[3].nsec, in->bigtime);
	} else {
		/* atime is left at the epoch, as mkfs.xfs leaves it */
		d->di_atime = enc_time(0, 0, in->bigtime);
		d->di_mtime = enc_time(in->sec, in->nsec, in->bigtime);
		d->di_ctime = enc_time(in->sec, in->nsec, in->bigtime);
		d->di_crtime = enc_time(in->sec, in->nsec, in->bigtime);
	}
	d->di_size = to_be64(in->size);
	d->di_nblocks = to_be64(in->nblocks);
	if (in->nrext64) {
		d->di_big_nextents = to_be64(in->nextents);
		d->di_big_anextents = to_be32(in->anextents);
	} else {
		d->di_nextents = to_be32((uint32_t)in->nextents);
		d->di_anextents = to_be16((uint16_t)in->anextents);
	}
	d->di_forkoff = in->forkoff;
	d->di_aformat = in->aformat ? in->aformat : XFS_DINODE_FMT_EXTENTS;
	d->di_projid_lo = to_be16((uint16_t)in->projid);
	d->di_projid_hi = to_be16((uint16_t)(in->projid >> 16));
	d->di_gen = to_be32(in->gen);
	d->di_flags = to_be16(in->flags);
	d->di_changecount = to_be64(in->changecount);
	d->di_flags2 = to_be64(flags2);
	fs_enc_dinode_finish(buf, inodesize);
}

void *fs_dinode_dfork(void *buf)
{
	return (char *)buf + sizeof(struct xfs_dinode);
}

size_t fs_dinode_litino(size_t inodesize)
{
	return inodesize - sizeof(struct xfs_dinode);
}

void fs_enc_dinode_finish(void *buf, size_t inodesize)
{
	fs_crc_update(buf, inodesize, offsetof(struct xfs_dinode, di_crc));
}

size_t fs_enc_dir_sf_empty(void *dfork, fs_ino_t parent)
{
	struct xfs_dir2_sf_hdr *h = dfork;

	h->count = 0;
	h->i8count = 0;
	/* with i8count 0 the parent takes 4 bytes and the header shrinks by 4 */
	put_be32(h->parent, (uint32_t)parent);
	return sizeof(*h) - 4;
}

/* --- log ----------------------------------------------------------------- */

static uint32_t log_record_sectors(uint32_t lsunit_bytes)
{
	uint32_t len = lsunit_bytes ? lsunit_bytes / FS_BBSIZE : 2;

	return len < 2 ? 2 : len;
}

static uint32_t log_header_sectors(uint32_t lsunit_bytes)
{
	if (lsunit_bytes > XLOG_HEADER_CYCLE_SIZE)
		return (lsunit_bytes + XLOG_HEADER_CYCLE_SIZE - 1) / XLOG_HEADER_CYCLE_SIZE;
	return 1;
}

size_t fs_log_first_record_len(uint32_t lsunit_bytes)
{
	return (size_t)log_record_sectors(lsunit_bytes) * FS_BBSIZE;
}

size_t fs_enc_log_unmount_record(void *buf, uint32_t lsunit_bytes, const unsigned char uuid[16],
				 uint32_t cycle)
{
	const uint64_t lsn = (uint64_t)cycle << 32;    /* block 0 of the cycle */
	uint32_t sectors = log_record_sectors(lsunit_bytes);
	uint32_t hdrs = log_header_sectors(lsunit_bytes);
	uint32_t total = lsunit_bytes > 2 * FS_BBSIZE ? lsunit_bytes : 2 * FS_BBSIZE;
	unsigned char *p = buf;
	struct xlog_rec_header *h = buf;
	struct xlog_op_header *op;
	struct xfs_unmount_log_format um = { .magic = XLOG_UNMOUNT_TYPE };
	unsigned char *data;
	uint32_t crc, h_len;

	memset(buf, 0, (size_t)sectors * FS_BBSIZE);
	h_len = total - hdrs * FS_BBSIZE;
	h->h_magicno = to_be32(XLOG_HEADER_MAGIC_NUM);
	h->h_cycle = to_be32(cycle);
	h->h_version = to_be32(2);
	h->h_len = to_be32(h_len);
	h->h_lsn = to_be64(lsn);
	h->h_tail_lsn = to_be64(lsn);
	h->h_prev_block = to_be32(0xffffffffu);
	h->h_num_logops = to_be32(1);
	h->h_fmt = to_be32(XLOG_FMT);
	memcpy(&h->h_fs_uuid, uuid, 16);
	h->h_size = to_be32(lsunit_bytes > XLOG_BIG_RECORD_BSIZE ? lsunit_bytes :
			    XLOG_BIG_RECORD_BSIZE);
	/* extended headers for records over 32 KiB carry only their cycle */
	for (uint32_t i = 1; i < hdrs; i++)
		put_be32(p + (size_t)i * FS_BBSIZE, cycle);

	/* the unmount operation (a dummy transaction id marks a userspace writer) */
	data = p + (size_t)hdrs * FS_BBSIZE;
	op = (struct xlog_op_header *)data;
	op->oh_tid = to_be32(0xb0c0d0d0);
	op->oh_len = to_be32(sizeof(um));
	op->oh_clientid = XFS_LOG;
	op->oh_flags = XLOG_UNMOUNT_TRANS;
	memcpy(data + sizeof(*op), &um, sizeof(um));
	/* every data sector starts with the cycle; the word it hides goes in the header */
	memcpy(&h->h_cycle_data[0], data, 4);
	put_be32(data, cycle);
	for (uint32_t i = hdrs + 1; i < sectors; i++)
		put_be32(p + (size_t)i * FS_BBSIZE, cycle);

	/* xlog_cksum: the header, the extended headers, then h_len bytes of data */
	crc = fs_crc32c(~0u, h, sizeof(*h));
	for (uint32_t i = 1; i < hdrs; i++)
		crc = fs_crc32c(crc, p + (size_t)i * FS_BBSIZE, sizeof(struct xlog_rec_ext_header));
	crc = fs_crc32c(crc, data, h_len);
	h->h_crc = htole32(~crc);
	return (size_t)sectors * FS_BBSIZE;
}

void fs_enc_dqblk(void *buf, uint32_t id, uint8_t type, const unsigned char uuid[16])
{
	struct xfs_dqblk *q = buf;

	memset(q, 0, sizeof(*q));
	put_be16(&q->dd_diskdq.d_magic, XFS_DQUOT_MAGIC);
	q->dd_diskdq.d_version = XFS_DQUOT_VERSION;
	q->dd_diskdq.d_type = type;
	put_be32(&q->dd_diskdq.d_id, id);
	memcpy(q->dd_uuid, uuid, sizeof(q->dd_uuid));
	fs_crc_update(buf, sizeof(*q), XFS_DQUOT_CRC_OFF);
}
