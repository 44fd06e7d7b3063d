// SPDX-License-Identifier: GPL-2.0
/*
 * The log items that change blocks, replayed into the overlay as the
 * kernel's per-item recovery applies them (xfs_buf_item_recover.c,
 * xfs_inode_item_recover.c, xfs_icreate_item.c, xfs_dquot_item_recover.c):
 * buffers (their logged regions copied over the block, unless a later
 * cancel record or the block's own newer LSN says otherwise), unlinked
 * pointers logged in inode buffers, inode cores with their forks (a bmbt
 * root converted to its on-disk form), inode chunks created, and quota
 * records.  Each checks its item as the kernel does before it applies it.
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"

/* ---- buffers ---- */

static int note_buf(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, uint64_t lsn,
		    uint16_t blft)
{
	if (rp->nbufs == rp->capbufs) {
		size_t cap = rp->capbufs ? rp->capbufs * 2 : 256;
		struct rbuf *v = realloc(rp->bufs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rp->bufs = v;
		rp->capbufs = cap;
	}
	rp->bufs[rp->nbufs++] = (struct rbuf){ daddr, bbs, lsn, blft };
	return 0;
}

/* The buffer item's format header, checked: its map lies inside the region. */
int replay_buf_format(struct fs_replay *rp, const struct fs_log_item *it,
		      const struct xfs_buf_log_format **out)
{
	const struct xfs_buf_log_format *bf = (const void *)it->reg[0].p;
	size_t base = offsetof(struct xfs_buf_log_format, blf_data_map);

	if (it->reg[0].len < base || bf->blf_map_size > XFS_BLF_DATAMAP_SIZE ||
	    it->reg[0].len < base + bf->blf_map_size * sizeof(unsigned int))
		return replay_fail(rp, -EUCLEAN, "a buffer log item's format header is %u bytes, too short "
			    "for its map", it->reg[0].len);
	*out = bf;
	return 0;
}

static bool map_bit(const struct xfs_buf_log_format *bf, uint32_t bit)
{
	return bit < bf->blf_map_size * NBWORD &&
	       (bf->blf_data_map[bit / NBWORD] & (1u << (bit % NBWORD)));
}

/* The LSN a block carries, when it has one the rule may use (0: replay). */
static uint64_t block_lsn(const struct fs_replay *rp, const unsigned char *b, size_t len)
{
	enum fs_mtype t = fs_mtype_by_magic(b, len);
	const struct fs_verifier *v;

	if (t == FS_MT_SB) {
		const struct xfs_dsb *sb = (const void *)b;
		const void *uuid = rp->fs->g.meta_uuid_feat ? (const void *)&sb->sb_meta_uuid :
							     (const void *)&sb->sb_uuid;

		if (len < sizeof(*sb) || memcmp(uuid, rp->fs->g.meta_uuid, 16))
			return 0;
		return be64(sb->sb_lsn);
	}
	/* inode and quota buffers carry an LSN per object: replayed whatever */
	if (t == FS_MT_NR || t == FS_MT_INODE || t == FS_MT_DQUOT)
		return 0;
	v = fs_verifier_get(t);
	if (!v || v->lsn_off == SIZE_MAX || v->uuid_off == SIZE_MAX ||
	    v->lsn_off + 8 > len || v->uuid_off + 16 > len)
		return 0;
	if (memcmp(b + v->uuid_off, rp->fs->g.meta_uuid, 16))
		return 0;
	return get_be64(b + v->lsn_off);
}

static bool lsn_valid(uint64_t lsn)
{
	return lsn && lsn != UINT64_MAX;
}

/* Unlinked-list updates logged in an inode buffer: only di_next_unlinked is taken. */
static int inode_buffer(struct fs_replay *rp, const struct fs_log_item *it,
			const struct xfs_buf_log_format *bf, unsigned char *b, uint32_t bytes)
{
	const struct fs_geom *g = &rp->fs->g;
	uint32_t bit = 0, reg = 1;
	size_t nu = offsetof(struct xfs_dinode, di_next_unlinked);

	/* walk the runs of the map and their regions side by side */
	while (bit < bf->blf_map_size * NBWORD) {
		uint32_t nbits = 0, start, end;

		while (bit < bf->blf_map_size * NBWORD && !map_bit(bf, bit))
			bit++;
		if (bit >= bf->blf_map_size * NBWORD)
			break;
		while (map_bit(bf, bit + nbits))
			nbits++;
		if (reg >= it->n)
			return replay_fail(rp, -EUCLEAN, "inode buffer item at daddr %lld: map names more "
				    "regions than the item holds", (long long)bf->blf_blkno);
		start = bit * XFS_BLF_CHUNK;
		end = start + (it->reg[reg].len < nbits * XFS_BLF_CHUNK ? it->reg[reg].len :
			       nbits * XFS_BLF_CHUNK);
		for (uint32_t off = 0; off + g->inodesize <= bytes; off += g->inodesize) {
			uint32_t at = off + (uint32_t)nu;
			uint32_t v;

			if (at < start || at + 4 > end)
				continue;
			memcpy(&v, it->reg[reg].p + (at - start), 4);
			if (v == 0)
				return replay_fail(rp, -EUCLEAN, "inode buffer item at daddr %lld: an unlinked "
					    "pointer of 0 at offset %u", (long long)bf->blf_blkno, at);
			memcpy(b + at, &v, 4);
			fs_crc_update(b + off, g->inodesize, XFS_DINODE_CRC_OFF);
		}
		bit += nbits;
		reg++;
	}
	rp->st.inode_buffers++;
	return 0;
}

/*
 * A piece of a directory block larger than a filesystem block whose blocks
 * are not contiguous: logged one piece per item, so no piece holds the
 * whole block its header's LSN and CRC describe.  The kernel replays such
 * pieces without the LSN rule and writes them without a verifier or a new
 * CRC; so do we.
 */
bool replay_partial_dir(const struct fs_replay *rp, unsigned blft, uint32_t bytes)
{
	switch (blft) {
	case XFS_BLFT_DIR_BLOCK_BUF: case XFS_BLFT_DIR_DATA_BUF: case XFS_BLFT_DIR_FREE_BUF:
	case XFS_BLFT_DIR_LEAF1_BUF: case XFS_BLFT_DIR_LEAFN_BUF: case XFS_BLFT_DA_NODE_BUF:
		return bytes < rp->fs->g.dirblksize;
	default:
		return false;
	}
}

int replay_buf_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
{
	const struct xfs_buf_log_format *bf = NULL;
	unsigned char *b;
	uint32_t bytes, bit = 0, reg = 1;
	uint64_t key, *c;
	int err = replay_buf_format(rp, it, &bf);

	if (err)
		return err;
	key = replay_cancel_key(bf->blf_blkno, bf->blf_len);
	c = u64map_find(&rp->cancel, key);
	if (c && *c && *c != MAP_GONE) {
		/* freed later in the log: this version is never replayed */
		if (bf->blf_flags & XFS_BLF_CANCEL)
			(*c)--;
		rp->st.buffers_cancelled++;
		return 0;
	}
	if (bf->blf_flags & XFS_BLF_CANCEL)
		return 0;
	if (!replay_range_ok(rp, bf->blf_blkno, bf->blf_len))
		return replay_fail(rp, -EUCLEAN, "a buffer log item names sectors %lld+%u, outside the "
			    "filesystem", (long long)bf->blf_blkno, bf->blf_len);
	/* quota buffers of a type turned off later in the log are left alone */
	if ((bf->blf_flags & (XFS_BLF_UDQUOT_BUF | XFS_BLF_PDQUOT_BUF | XFS_BLF_GDQUOT_BUF)) &&
	    (!rp->fs->sb.sb_qflags || (rp->quotaoff & bf->blf_flags)))
		return 0;
	bytes = (uint32_t)bf->blf_len << BBSHIFT;
	err = replay_buf_get(rp, (uint64_t)bf->blf_blkno, bf->blf_len, &b);
	if (err)
		return err;
	if (bf->blf_flags & XFS_BLF_INODE_BUF) {
		err = inode_buffer(rp, it, bf, b, bytes);
		goto out;
	}
	if (!replay_partial_dir(rp, xfs_blft_from_flags((struct xfs_buf_log_format *)bf), bytes)) {
		uint64_t have = block_lsn(rp, b, bytes);

		if (lsn_valid(have) && have >= lsn) {
			rp->st.buffers_lsn_skipped++;
			goto out_free;
		}
	}
	while (bit < bf->blf_map_size * NBWORD) {
		uint32_t nbits = 0, off, n;

		while (bit < bf->blf_map_size * NBWORD && !map_bit(bf, bit))
			bit++;
		if (bit >= bf->blf_map_size * NBWORD)
			break;
		while (map_bit(bf, bit + nbits))
			nbits++;
		if (reg >= it->n) {
			err = replay_fail(rp, -EUCLEAN, "buffer item at daddr %lld: its map names more regions "
				   "than the item holds", (long long)bf->blf_blkno);
			goto out_free;
		}
		off = bit * XFS_BLF_CHUNK;
		n = nbits * XFS_BLF_CHUNK;
		if (it->reg[reg].len < n)
			n = it->reg[reg].len;
		if ((uint64_t)off + n > bytes) {
			err = replay_fail(rp, -EUCLEAN, "buffer item at daddr %lld: region at byte %u of %u "
				   "bytes runs past its %u-byte buffer", (long long)bf->blf_blkno, off,
				   n, bytes);
			goto out_free;
		}
		memcpy(b + off, it->reg[reg].p, n);
		bit += nbits;
		reg++;
	}
	err = note_buf(rp, (uint64_t)bf->blf_blkno, bf->blf_len, lsn, xfs_blft_from_flags(
			       (struct xfs_buf_log_format *)bf));
out:
	if (!err)
		err = replay_buf_put(rp, (uint64_t)bf->blf_blkno, bf->blf_len, b);
	if (!err && !(bf->blf_flags & XFS_BLF_INODE_BUF))
		rp->st.buffers++;
out_free:
	free(b);
	return err;
}

/* ---- inodes ---- */

/* A bmbt root as the kernel keeps it in memory (a long-format block) into its on-disk form. */
static int broot_to_disk(struct fs_replay *rp, uint64_t ino, const unsigned char *src,
			 uint32_t slen, unsigned char *dst, uint32_t dlen)
{
	const size_t hdr = XFS_BTREE_LBLOCK_CRC_LEN;
	const struct xfs_btree_block *rb = (const void *)src;
	uint32_t smax, dmax, nrecs;

	if (slen < hdr + sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t) ||
	    dlen < sizeof(struct xfs_bmdr_block) + sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t))
		return replay_fail(rp, -EUCLEAN, "inode %llu: logged btree root of %u bytes does not fit",
			    (unsigned long long)ino, slen);
	smax = (uint32_t)((slen - hdr) / (sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t)));
	dmax = (uint32_t)((dlen - sizeof(struct xfs_bmdr_block)) /
			  (sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t)));
	nrecs = be16(rb->bb_numrecs);
	if (nrecs > smax || nrecs > dmax)
		return replay_fail(rp, -EUCLEAN, "inode %llu: logged btree root holds %u records, room for "
			    "%u", (unsigned long long)ino, nrecs, smax < dmax ? smax : dmax);
	memset(dst, 0, dlen);
	put_be16(dst, be16(rb->bb_level));
	put_be16(dst + 2, (uint16_t)nrecs);
	memcpy(dst + sizeof(struct xfs_bmdr_block), src + hdr, nrecs * sizeof(xfs_bmbt_key_t));
	memcpy(dst + sizeof(struct xfs_bmdr_block) + dmax * sizeof(xfs_bmbt_key_t),
	       src + hdr + smax * sizeof(xfs_bmbt_key_t), nrecs * sizeof(xfs_bmbt_ptr_t));
	return 0;
}

static uint64_t log_ts(const struct xfs_log_dinode *ld, xfs_log_timestamp_t its)
{
	struct xfs_log_legacy_timestamp lts;
	uint64_t out;

	if (ld->di_version >= 3 && (ld->di_flags2 & XFS_DIFLAG2_BIGTIME))
		return to_be64(its);
	memcpy(&lts, &its, sizeof(lts));
	put_be32(&out, (uint32_t)lts.t_sec);
	put_be32((unsigned char *)&out + 4, (uint32_t)lts.t_nsec);
	return out;
}

/* The logged inode core (host order) onto the on-disk inode, as the kernel converts it. */
static void dinode_from_log(const struct xfs_log_dinode *f, struct xfs_dinode *t, uint64_t lsn)
{
	uint64_t ts;

	t->di_magic = to_be16(f->di_magic);
	t->di_mode = to_be16(f->di_mode);
	t->di_version = f->di_version;
	t->di_format = f->di_format;
	t->di_onlink = 0;
	t->di_uid = to_be32(f->di_uid);
	t->di_gid = to_be32(f->di_gid);
	t->di_nlink = to_be32(f->di_nlink);
	t->di_projid_lo = to_be16(f->di_projid_lo);
	t->di_projid_hi = to_be16(f->di_projid_hi);
	ts = log_ts(f, f->di_atime);
	memcpy(&t->di_atime, &ts, 8);
	ts = log_ts(f, f->di_mtime);
	memcpy(&t->di_mtime, &ts, 8);
	ts = log_ts(f, f->di_ctime);
	memcpy(&t->di_ctime, &ts, 8);
	t->di_size = to_be64((uint64_t)f->di_size);
	t->di_nblocks = to_be64(f->di_nblocks);
	t->di_extsize = to_be32(f->di_extsize);
	t->di_forkoff = f->di_forkoff;
	t->di_aformat = f->di_aformat;
	t->di_dmevmask = to_be32(f->di_dmevmask);
	t->di_dmstate = to_be16(f->di_dmstate);
	t->di_flags = to_be16(f->di_flags);
	t->di_gen = to_be32(f->di_gen);
	if (f->di_version == 3) {
		t->di_changecount = to_be64(f->di_changecount);
		ts = log_ts(f, f->di_crtime);
		memcpy(&t->di_crtime, &ts, 8);
		t->di_flags2 = to_be64(f->di_flags2);
		t->di_cowextsize = to_be32(f->di_cowextsize);
		t->di_ino = to_be64(f->di_ino);
		t->di_lsn = to_be64(lsn);
		memset(t->di_pad2, 0, sizeof(t->di_pad2));
		memcpy(&t->di_uuid, &f->di_uuid, 16);
		t->di_v3_pad = 0;
	} else {
		t->di_flushiter = to_be16(f->di_flushiter);
		memset(t->di_v2_pad, 0, sizeof(t->di_v2_pad));
	}
	if (f->di_version >= 3 && (f->di_flags2 & XFS_DIFLAG2_NREXT64)) {
		t->di_big_nextents = to_be64(f->di_big_nextents);
		t->di_big_anextents = to_be32(f->di_big_anextents);
		t->di_nrext64_pad = to_be16(f->di_nrext64_pad);
	} else {
		t->di_nextents = to_be32(f->di_nextents);
		t->di_anextents = to_be16(f->di_anextents);
	}
}

int replay_inode_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
{
	const struct fs_geom *g = &rp->fs->g;
	const uint32_t core = sizeof(struct xfs_dinode);
	struct xfs_inode_log_format in;
	struct xfs_log_dinode ld;
	struct xfs_dinode *dip;
	unsigned char *b;
	uint32_t fields, bytes, dsize, asize, fork_room;
	uint64_t nblocks, next;
	int err;

	if (it->reg[0].len != sizeof(in))
		return replay_fail(rp, -EOPNOTSUPP, "an inode log item in the 32-bit layout (%u bytes) is "
			    "not replayed by this version", it->reg[0].len);
	memcpy(&in, it->reg[0].p, sizeof(in));
	if (in.ilf_size < 2 || it->n < 2)
		return replay_fail(rp, -EUCLEAN, "inode %llu: log item without its core",
			    (unsigned long long)in.ilf_ino);
	if (replay_is_cancelled(rp, in.ilf_blkno, (uint32_t)in.ilf_len)) {
		rp->st.inodes_cancelled++;
		return 0;
	}
	if (in.ilf_len <= 0 || !replay_range_ok(rp, in.ilf_blkno, (uint64_t)in.ilf_len) ||
	    in.ilf_boffset < 0 || in.ilf_boffset % g->inodesize ||
	    (uint64_t)in.ilf_boffset + g->inodesize > ((uint64_t)in.ilf_len << BBSHIFT))
		return replay_fail(rp, -EUCLEAN, "inode %llu: log item names buffer %lld+%d offset %d, "
			    "outside the filesystem or the buffer", (unsigned long long)in.ilf_ino,
			    (long long)in.ilf_blkno, in.ilf_len, in.ilf_boffset);
	if (it->reg[1].len != sizeof(ld))
		return replay_fail(rp, -EUCLEAN, "inode %llu: logged core of %u bytes, expected %zu",
			    (unsigned long long)in.ilf_ino, it->reg[1].len, sizeof(ld));
	memcpy(&ld, it->reg[1].p, sizeof(ld));
	if (ld.di_magic != XFS_DINODE_MAGIC)
		return replay_fail(rp, -EUCLEAN, "inode %llu: logged core has magic %#x",
			    (unsigned long long)in.ilf_ino, ld.di_magic);
	bytes = (uint32_t)in.ilf_len << BBSHIFT;
	err = replay_buf_get(rp, (uint64_t)in.ilf_blkno, (uint32_t)in.ilf_len, &b);
	if (err)
		return err;
	dip = (struct xfs_dinode *)(b + in.ilf_boffset);
	if (be16(dip->di_magic) != XFS_DINODE_MAGIC) {
		err = replay_fail(rp, -EUCLEAN, "inode %llu: the inode on disk (daddr %lld offset %d) has "
			   "magic %#x", (unsigned long long)in.ilf_ino, (long long)in.ilf_blkno,
			   in.ilf_boffset, be16(dip->di_magic));
		goto out;
	}
	if (dip->di_version >= 3) {
		uint64_t have = be64(dip->di_lsn);

		if (lsn_valid(have) && have > lsn) {
			rp->st.inodes_lsn_skipped++;
			goto out;
		}
	}
	/* the kernel's sanity rules on the logged core */
	if ((S_ISREG(ld.di_mode) && ld.di_format != XFS_DINODE_FMT_EXTENTS &&
	     ld.di_format != XFS_DINODE_FMT_BTREE) ||
	    (S_ISDIR(ld.di_mode) && ld.di_format != XFS_DINODE_FMT_EXTENTS &&
	     ld.di_format != XFS_DINODE_FMT_BTREE && ld.di_format != XFS_DINODE_FMT_LOCAL)) {
		err = replay_fail(rp, -EUCLEAN, "inode %llu: logged core has data fork format %d for mode "
			   "%#o", (unsigned long long)in.ilf_ino, ld.di_format, ld.di_mode);
		goto out;
	}
	nblocks = ld.di_nblocks;
	next = (ld.di_version >= 3 && (ld.di_flags2 & XFS_DIFLAG2_NREXT64)) ?
		ld.di_big_nextents + (uint64_t)ld.di_big_anextents :
		(uint64_t)ld.di_nextents + ld.di_anextents;
	if (next > nblocks || (uint32_t)ld.di_forkoff * 8 > g->inodesize - core) {
		err = replay_fail(rp, -EUCLEAN, "inode %llu: logged core has %llu extents for %llu blocks "
			   "or fork offset %u", (unsigned long long)in.ilf_ino,
			   (unsigned long long)next, (unsigned long long)nblocks, ld.di_forkoff);
		goto out;
	}
	dinode_from_log(&ld, dip, lsn);
	fields = in.ilf_fields;
	if (fields & XFS_ILOG_DEV)
		put_be32((unsigned char *)dip + core, in.ilf_u.ilfu_rdev);
	fork_room = g->inodesize - core;
	dsize = dip->di_forkoff ? (uint32_t)dip->di_forkoff * 8 : fork_room;
	asize = fork_room - (dip->di_forkoff ? dsize : fork_room);
	if (fields & (XFS_ILOG_DOWNER | XFS_ILOG_AOWNER)) {
		err = replay_fail(rp, -EOPNOTSUPP, "inode %llu: a btree owner change (extent swap) is not "
			   "replayed by this version", (unsigned long long)in.ilf_ino);
		goto out;
	}
	if (in.ilf_size > 2) {
		uint32_t r = 2;

		if (fields & XFS_ILOG_DFORK) {
			const struct fs_log_region *src = r < it->n ? &it->reg[r] : NULL;

			if (!src) {
				err = replay_fail(rp, -EUCLEAN, "inode %llu: data fork region missing",
					   (unsigned long long)in.ilf_ino);
				goto out;
			}
			switch (fields & XFS_ILOG_DFORK) {
			case XFS_ILOG_DDATA:
			case XFS_ILOG_DEXT:
				if (src->len > fork_room) {
					err = replay_fail(rp, -EUCLEAN, "inode %llu: logged data fork of %u "
						   "bytes, room for %u", (unsigned long long)in.ilf_ino,
						   src->len, fork_room);
					goto out;
				}
				memcpy((unsigned char *)dip + core, src->p, src->len);
				break;
			case XFS_ILOG_DBROOT:
				err = broot_to_disk(rp, in.ilf_ino, src->p, src->len,
						    (unsigned char *)dip + core, dsize);
				if (err)
					goto out;
				break;
			default:
				err = replay_fail(rp, -EUCLEAN, "inode %llu: data fork flags %#x",
					   (unsigned long long)in.ilf_ino, fields & XFS_ILOG_DFORK);
				goto out;
			}
			r++;
		}
		if (fields & XFS_ILOG_AFORK) {
			const struct fs_log_region *src = r < it->n ? &it->reg[r] : NULL;
			unsigned char *ap = (unsigned char *)dip + core + dsize;

			if (!src || !dip->di_forkoff) {
				err = replay_fail(rp, -EUCLEAN, "inode %llu: attr fork logged without its "
					   "region or fork offset", (unsigned long long)in.ilf_ino);
				goto out;
			}
			switch (fields & XFS_ILOG_AFORK) {
			case XFS_ILOG_ADATA:
			case XFS_ILOG_AEXT:
				if (src->len > asize) {
					err = replay_fail(rp, -EUCLEAN, "inode %llu: logged attr fork of %u "
						   "bytes, room for %u", (unsigned long long)in.ilf_ino,
						   src->len, asize);
					goto out;
				}
				memcpy(ap, src->p, src->len);
				break;
			case XFS_ILOG_ABROOT:
				err = broot_to_disk(rp, in.ilf_ino, src->p, src->len, ap, asize);
				if (err)
					goto out;
				break;
			default:
				err = replay_fail(rp, -EUCLEAN, "inode %llu: attr fork flags %#x",
					   (unsigned long long)in.ilf_ino, fields & XFS_ILOG_AFORK);
				goto out;
			}
		}
	}
	fs_crc_update(dip, g->inodesize, XFS_DINODE_CRC_OFF);
	err = replay_buf_put(rp, (uint64_t)in.ilf_blkno, (uint32_t)in.ilf_len, b);
	if (!err && rp->ninos == rp->capinos) {
		size_t cap = rp->capinos ? rp->capinos * 2 : 256;
		struct rinode *v = realloc(rp->inos, cap * sizeof(*v));

		if (!v)
			err = -ENOMEM;
		else {
			rp->inos = v;
			rp->capinos = cap;
		}
	}
	if (!err) {
		rp->inos[rp->ninos++] = (struct rinode){ (uint64_t)in.ilf_blkno,
							 (uint32_t)in.ilf_boffset, in.ilf_ino };
		rp->st.inodes++;
	}
out:
	free(b);
	(void)bytes;
	return err;
}

/* ---- icreate, dquots ---- */

int replay_icreate_item(struct fs_replay *rp, const struct fs_log_item *it)
{
	const struct fs_geom *g = &rp->fs->g;
	struct xfs_icreate_log ic;
	uint32_t agno, agbno, count, isize, length, gen, cbbs, per, nclusters, cancelled = 0;
	uint64_t start;

	if (it->reg[0].len < sizeof(ic))
		return replay_fail(rp, -EUCLEAN, "an icreate log item of %u bytes", it->reg[0].len);
	memcpy(&ic, it->reg[0].p, sizeof(ic));
	agno = be32(ic.icl_ag);
	agbno = be32(ic.icl_agbno);
	count = be32(ic.icl_count);
	isize = be32(ic.icl_isize);
	length = be32(ic.icl_length);
	gen = be32(ic.icl_gen);
	if (agno >= g->agcount || !length || agbno >= fs_ag_blocks(g, agno) ||
	    length > fs_ag_blocks(g, agno) - agbno || isize != g->inodesize || !count ||
	    (uint64_t)count * isize != (uint64_t)length << g->blocklog ||
	    !g->blocks_per_cluster || length % g->blocks_per_cluster)
		return replay_fail(rp, -EUCLEAN, "icreate log item: AG %u block %u, %u inodes of %u bytes "
			    "in %u blocks do not fit the geometry", agno, agbno, count, isize, length);
	cbbs = g->blocks_per_cluster << (g->blocklog - BBSHIFT);
	per = (g->blocks_per_cluster << g->blocklog) / isize;
	nclusters = length / g->blocks_per_cluster;
	start = fs_agbno_to_daddr(g, agno, agbno);
	/* a chunk freed later in the log is not initialised (the kernel's rule: any cluster) */
	for (uint32_t c = 0; c < nclusters; c++)
		cancelled += replay_is_cancelled(rp, (int64_t)(start + (uint64_t)c * cbbs), cbbs);
	if (cancelled)
		return 0;
	for (uint32_t c = 0; c < nclusters; c++) {
		uint64_t daddr = start + (uint64_t)c * cbbs;
		unsigned char *b = calloc(cbbs, BBSIZE);
		int err;

		if (!b)
			return -ENOMEM;
		for (uint32_t i = 0; i < per; i++) {
			struct xfs_dinode *d = (void *)(b + (size_t)i * isize);
			uint64_t ino = fs_agino_to_ino(g, agno, fs_agbno_to_agino(g, agbno) +
						       c * per + i);

			d->di_magic = to_be16(XFS_DINODE_MAGIC);
			d->di_version = 3;
			d->di_gen = to_be32(gen);
			d->di_next_unlinked = to_be32(NULLAGINO);
			d->di_ino = to_be64(ino);
			memcpy(&d->di_uuid, g->meta_uuid, 16);
			fs_crc_update(d, isize, XFS_DINODE_CRC_OFF);
		}
		err = replay_buf_put(rp, daddr, cbbs, b);
		free(b);
		if (!err)
			err = replay_note_write(rp, daddr, cbbs, 0, cbbs << BBSHIFT, FS_MT_INODE,
						fs_agino_to_ino(g, agno, fs_agbno_to_agino(g, agbno) +
								c * per));
		if (err)
			return err;
	}
	rp->st.icreates++;
	return 0;
}

int replay_dquot_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
{
	const struct fs_geom *g = &rp->fs->g;
	struct xfs_dq_logformat dq;
	const struct xfs_disk_dquot *rec;
	struct xfs_dqblk *dqb;
	unsigned char *b;
	uint32_t bbs;
	int err;

	if (it->reg[0].len < sizeof(dq) || it->n < 2)
		return replay_fail(rp, -EUCLEAN, "a dquot log item of %u bytes", it->reg[0].len);
	memcpy(&dq, it->reg[0].p, sizeof(dq));
	if (it->reg[1].len < sizeof(struct xfs_disk_dquot) ||
	    it->reg[1].len > sizeof(struct xfs_dqblk))
		return replay_fail(rp, -EUCLEAN, "dquot %u: logged record of %u bytes", dq.qlf_id,
			    it->reg[1].len);
	rec = (const void *)it->reg[1].p;
	if (!rp->fs->sb.sb_qflags || (rp->quotaoff & (rec->d_type & XFS_DQTYPE_REC_MASK))) {
		rp->st.dquots_skipped++;
		return 0;
	}
	bbs = (uint32_t)dq.qlf_len << (g->blocklog - BBSHIFT);
	if (dq.qlf_len != 1 || !replay_range_ok(rp, dq.qlf_blkno, bbs) ||
	    dq.qlf_boffset % sizeof(struct xfs_dqblk) ||
	    (uint64_t)dq.qlf_boffset + sizeof(struct xfs_dqblk) > (uint64_t)bbs << BBSHIFT)
		return replay_fail(rp, -EUCLEAN, "dquot %u: log item names buffer %lld+%d offset %u",
			    dq.qlf_id, (long long)dq.qlf_blkno, dq.qlf_len, dq.qlf_boffset);
	err = replay_buf_get(rp, (uint64_t)dq.qlf_blkno, bbs, &b);
	if (err)
		return err;
	dqb = (struct xfs_dqblk *)(b + dq.qlf_boffset);
	if (lsn_valid(be64(dqb->dd_lsn)) && be64(dqb->dd_lsn) >= lsn) {
		rp->st.dquots_skipped++;
		free(b);
		return 0;
	}
	memcpy(&dqb->dd_diskdq, it->reg[1].p, it->reg[1].len);
	fs_crc_update(dqb, sizeof(*dqb), XFS_DQUOT_CRC_OFF);
	err = replay_buf_put(rp, (uint64_t)dq.qlf_blkno, bbs, b);
	free(b);
	if (!err)
		err = replay_note_write(rp, (uint64_t)dq.qlf_blkno, bbs, dq.qlf_boffset,
					sizeof(*dqb), FS_MT_DQUOT, 0);
	if (!err)
		rp->st.dquots++;
	return err;
}
