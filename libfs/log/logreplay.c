// SPDX-License-Identifier: GPL-2.0
/*
 * Log replay, after the kernel's recovery (xfs_log_recover.c and the
 * per-item *_recover.c files, read for the rules): pass 1 collects the
 * buffer cancellations (a buffer freed later in the log is not replayed
 * before its last cancel record), pass 2 applies each committed
 * transaction in log order with its items in the kernel's order (buffers
 * and icreate, then inodes, dquots and intents, then inode-buffer unlinked
 * updates, then cancels).  The LSN rule keeps newer blocks: a buffer or
 * dquot whose LSN is at or past the transaction's, an inode whose LSN is
 * past it, is not overwritten.  Changes go to an overlay of sectors, never
 * to the device; at the end every replayed block gets its LSN and CRC
 * stamped as the kernel's write verifiers would, and its read verifier
 * run.  Intents are paired with their done items; the unfinished ones are
 * parsed and checked as the kernel's recovery checks them (a bad one is
 * refused as corruption) and handed to the caller with the extents they
 * name (fs_replay_open_extents): completing them is the caller's, since
 * their effect follows from the inode forks the replay leaves.
 */
#include "libfs/log/logreplay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfs/format/ag.h"
#include "libfs/build/bload.h"
#include "libfs/format/bmap.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/crc.h"
#include "libfs/format/inode.h"
#include "libfs/format/endian.h"
#include "libfs/log/logattr.h"
#include "libfs/util/vec.h"
#include "libfs/format/verify.h"

/* the largest buffer a log item may name: an inode cluster or a 64 KiB directory block */
#define MAX_BUF_BBS (1u << 11)

/* ---- a u64 -> u64 open-addressing map (keys never 0 once offset by one) ---- */
struct map {
	uint64_t *k, *v;
	size_t cap, n;
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t *map_find(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->k[i] == key + 1)
			return &m->v[i];
		if (!m->k[i])
			return NULL;
	}
}

static int map_put(struct map *m, uint64_t key, uint64_t val)
{
	uint64_t *slot;

	if ((m->n + 1) * 2 > m->cap) {
		struct map nm = { 0 };

		nm.cap = m->cap ? m->cap * 2 : 1024;
		nm.k = calloc(nm.cap, sizeof(*nm.k));
		nm.v = calloc(nm.cap, sizeof(*nm.v));
		if (!nm.k || !nm.v) {
			free(nm.k);
			free(nm.v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->k[i]) {
				size_t j = hash64(m->k[i] - 1) & (nm.cap - 1);

				while (nm.k[j])
					j = (j + 1) & (nm.cap - 1);
				nm.k[j] = m->k[i];
				nm.v[j] = m->v[i];
			}
		nm.n = m->n;
		free(m->k);
		free(m->v);
		*m = nm;
	}
	slot = map_find(m, key);
	if (slot) {
		*slot = val;
		return 0;
	}
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->k[i]) {
			m->k[i] = key + 1;
			m->v[i] = val;
			m->n++;
			return 0;
		}
}

/* Removal by tombstone value (the maps here are small and short-lived). */
#define MAP_GONE UINT64_MAX

static void map_free(struct map *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ---- the replay state ---- */

struct rbuf {                      /* a block replayed by a buffer item */
	uint64_t daddr;
	uint32_t bbs;
	uint64_t lsn;              /* the last transaction that changed it */
	uint16_t blft;
};

struct rinode {                    /* an inode replayed by an inode item */
	uint64_t daddr;            /* its cluster buffer */
	uint32_t off;              /* byte offset in it */
	uint64_t ino;
};

struct rintent {                   /* an intent item seen in the log */
	uint8_t kind;
	bool done;                 /* its done item followed */
	uint64_t id;
	uint32_t first, n;         /* its extents in exts */
};

struct fs_replay {
	struct fs *fs;
	struct map sect;           /* sector -> index in data */
	unsigned char *data;
	size_t ndata, capdata;
	struct map cancel;         /* (blkno << 16 | len) -> pending cancel records */
	struct map intents;        /* id * FS_INTENT_NR + kind -> index in ints + 1 */
	struct rintent *ints;      /* every intent item, in log order */
	size_t nints, capints;
	struct fs_intent_ext *exts; /* their extents (rintent.first, .n) */
	size_t nexts, capexts;
	struct fs_intent_ext *open; /* the unfinished intents' extents, checked */
	size_t nopen;
	struct fs_log_attri *attris; /* every ATTRI (rintent.first), name and value copied */
	size_t nattris, capattris;
	struct fs_log_attri *open_attris; /* the unfinished ones, in log order */
	size_t nopen_attris;
	struct rbuf *bufs;
	size_t nbufs, capbufs;
	struct rinode *inos;
	size_t ninos, capinos;
	uint32_t quotaoff;         /* dquot types whose quota was turned off in the log */
	struct fs_replay_stats st;
	char bui_why[320];         /* why the first BUI not applied was not */
	char *msg;
	size_t ml;
};

static int fail(struct fs_replay *rp, int err, const char *fmt, ...)
{
	va_list ap;

	if (rp->msg && rp->ml) {
		va_start(ap, fmt);
		vsnprintf(rp->msg, rp->ml, fmt, ap);
		va_end(ap);
	}
	return err;
}

static bool range_ok(const struct fs_replay *rp, int64_t daddr, uint64_t bbs)
{
	const struct fs_geom *g = &rp->fs->g;
	uint64_t fs_bbs = g->dblocks << (g->blocklog - BBSHIFT);

	return daddr >= 0 && bbs > 0 && bbs <= MAX_BUF_BBS && (uint64_t)daddr + bbs <= fs_bbs &&
	       (((uint64_t)daddr + bbs) << BBSHIFT) <= rp->fs->dev->size;
}

/* The current contents of [daddr, daddr + bbs): the overlay over the device. */
static int buf_get(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, unsigned char **out)
{
	unsigned char *b = malloc((size_t)bbs << BBSHIFT);
	int err;

	if (!b)
		return -ENOMEM;
	err = fs_dev_read(rp->fs->dev, b, (size_t)bbs << BBSHIFT, daddr << BBSHIFT);
	if (err) {
		free(b);
		return fail(rp, err, "reading sectors %llu+%u for replay failed: %s",
			    (unsigned long long)daddr, bbs, strerror(-err));
	}
	/* fs_dev_read patched it already when the overlay is installed; if not, do it here */
	if (rp->fs->dev->read_patch_priv != rp)
		fs_replay_patch(rp, b, (size_t)bbs << BBSHIFT, daddr << BBSHIFT);
	*out = b;
	return 0;
}

static int buf_put(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, const unsigned char *b)
{
	for (uint32_t i = 0; i < bbs; i++) {
		uint64_t *idx = map_find(&rp->sect, daddr + i);
		size_t at;

		if (idx) {
			at = *idx;
		} else {
			int err;

			if (rp->ndata == rp->capdata) {
				size_t cap = rp->capdata ? rp->capdata * 2 : 4096;
				unsigned char *d = realloc(rp->data, cap << BBSHIFT);

				if (!d)
					return -ENOMEM;
				rp->data = d;
				rp->capdata = cap;
			}
			at = rp->ndata++;
			err = map_put(&rp->sect, daddr + i, at);
			if (err)
				return err;
		}
		memcpy(rp->data + (at << BBSHIFT), b + ((size_t)i << BBSHIFT), BBSIZE);
	}
	return 0;
}

void fs_replay_patch(void *priv, void *buf, size_t len, uint64_t off)
{
	const struct fs_replay *rp = priv;
	uint64_t first = off >> BBSHIFT, last = (off + len + BBSIZE - 1) >> BBSHIFT;

	if (!rp || !rp->sect.n || !len)
		return;
	for (uint64_t s = first; s < last; s++) {
		const uint64_t *idx = map_find(&rp->sect, s);
		uint64_t so = s << BBSHIFT, from, to;

		if (!idx)
			continue;
		from = so > off ? so : off;
		to = so + BBSIZE < off + len ? so + BBSIZE : off + len;
		memcpy((unsigned char *)buf + (from - off), rp->data + (*idx << BBSHIFT) + (from - so),
		       to - from);
	}
}

static uint64_t cancel_key(int64_t blkno, uint32_t len)
{
	return ((uint64_t)blkno << 16) ^ len;
}

static bool is_cancelled(const struct fs_replay *rp, int64_t blkno, uint32_t len)
{
	const uint64_t *c = map_find(&rp->cancel, cancel_key(blkno, len));

	return c && *c && *c != MAP_GONE;
}

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

/* ---- buffers ---- */

/* The buffer item's format header, checked: its map lies inside the region. */
static int buf_format(struct fs_replay *rp, const struct fs_log_item *it,
		      const struct xfs_buf_log_format **out)
{
	const struct xfs_buf_log_format *bf = (const void *)it->reg[0].p;
	size_t base = offsetof(struct xfs_buf_log_format, blf_data_map);

	if (it->reg[0].len < base || bf->blf_map_size > XFS_BLF_DATAMAP_SIZE ||
	    it->reg[0].len < base + bf->blf_map_size * sizeof(unsigned int))
		return fail(rp, -EUCLEAN, "a buffer log item's format header is %u bytes, too short "
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
			return fail(rp, -EUCLEAN, "inode buffer item at daddr %lld: map names more "
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
				return fail(rp, -EUCLEAN, "inode buffer item at daddr %lld: an unlinked "
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
static bool partial_dir(const struct fs_replay *rp, unsigned blft, uint32_t bytes)
{
	switch (blft) {
	case XFS_BLFT_DIR_BLOCK_BUF: case XFS_BLFT_DIR_DATA_BUF: case XFS_BLFT_DIR_FREE_BUF:
	case XFS_BLFT_DIR_LEAF1_BUF: case XFS_BLFT_DIR_LEAFN_BUF: case XFS_BLFT_DA_NODE_BUF:
		return bytes < rp->fs->g.dirblksize;
	default:
		return false;
	}
}

static int replay_buf(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
{
	const struct xfs_buf_log_format *bf = NULL;
	unsigned char *b;
	uint32_t bytes, bit = 0, reg = 1;
	uint64_t key, *c;
	int err = buf_format(rp, it, &bf);

	if (err)
		return err;
	key = cancel_key(bf->blf_blkno, bf->blf_len);
	c = map_find(&rp->cancel, key);
	if (c && *c && *c != MAP_GONE) {
		/* freed later in the log: this version is never replayed */
		if (bf->blf_flags & XFS_BLF_CANCEL)
			(*c)--;
		rp->st.buffers_cancelled++;
		return 0;
	}
	if (bf->blf_flags & XFS_BLF_CANCEL)
		return 0;
	if (!range_ok(rp, bf->blf_blkno, bf->blf_len))
		return fail(rp, -EUCLEAN, "a buffer log item names sectors %lld+%u, outside the "
			    "filesystem", (long long)bf->blf_blkno, bf->blf_len);
	/* quota buffers of a type turned off later in the log are left alone */
	if ((bf->blf_flags & (XFS_BLF_UDQUOT_BUF | XFS_BLF_PDQUOT_BUF | XFS_BLF_GDQUOT_BUF)) &&
	    (!rp->fs->sb.sb_qflags || (rp->quotaoff & bf->blf_flags)))
		return 0;
	bytes = (uint32_t)bf->blf_len << BBSHIFT;
	err = buf_get(rp, (uint64_t)bf->blf_blkno, bf->blf_len, &b);
	if (err)
		return err;
	if (bf->blf_flags & XFS_BLF_INODE_BUF) {
		err = inode_buffer(rp, it, bf, b, bytes);
		goto out;
	}
	if (!partial_dir(rp, xfs_blft_from_flags((struct xfs_buf_log_format *)bf), bytes)) {
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
			err = fail(rp, -EUCLEAN, "buffer item at daddr %lld: its map names more regions "
				   "than the item holds", (long long)bf->blf_blkno);
			goto out_free;
		}
		off = bit * XFS_BLF_CHUNK;
		n = nbits * XFS_BLF_CHUNK;
		if (it->reg[reg].len < n)
			n = it->reg[reg].len;
		if ((uint64_t)off + n > bytes) {
			err = fail(rp, -EUCLEAN, "buffer item at daddr %lld: region at byte %u of %u "
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
		err = buf_put(rp, (uint64_t)bf->blf_blkno, bf->blf_len, b);
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
		return fail(rp, -EUCLEAN, "inode %llu: logged btree root of %u bytes does not fit",
			    (unsigned long long)ino, slen);
	smax = (uint32_t)((slen - hdr) / (sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t)));
	dmax = (uint32_t)((dlen - sizeof(struct xfs_bmdr_block)) /
			  (sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t)));
	nrecs = be16(rb->bb_numrecs);
	if (nrecs > smax || nrecs > dmax)
		return fail(rp, -EUCLEAN, "inode %llu: logged btree root holds %u records, room for "
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

static int replay_inode(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
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
		return fail(rp, -EOPNOTSUPP, "an inode log item in the 32-bit layout (%u bytes) is "
			    "not replayed by this version", it->reg[0].len);
	memcpy(&in, it->reg[0].p, sizeof(in));
	if (in.ilf_size < 2 || it->n < 2)
		return fail(rp, -EUCLEAN, "inode %llu: log item without its core",
			    (unsigned long long)in.ilf_ino);
	if (is_cancelled(rp, in.ilf_blkno, (uint32_t)in.ilf_len)) {
		rp->st.inodes_cancelled++;
		return 0;
	}
	if (in.ilf_len <= 0 || !range_ok(rp, in.ilf_blkno, (uint64_t)in.ilf_len) ||
	    in.ilf_boffset < 0 || in.ilf_boffset % g->inodesize ||
	    (uint64_t)in.ilf_boffset + g->inodesize > ((uint64_t)in.ilf_len << BBSHIFT))
		return fail(rp, -EUCLEAN, "inode %llu: log item names buffer %lld+%d offset %d, "
			    "outside the filesystem or the buffer", (unsigned long long)in.ilf_ino,
			    (long long)in.ilf_blkno, in.ilf_len, in.ilf_boffset);
	if (it->reg[1].len != sizeof(ld))
		return fail(rp, -EUCLEAN, "inode %llu: logged core of %u bytes, expected %zu",
			    (unsigned long long)in.ilf_ino, it->reg[1].len, sizeof(ld));
	memcpy(&ld, it->reg[1].p, sizeof(ld));
	if (ld.di_magic != XFS_DINODE_MAGIC)
		return fail(rp, -EUCLEAN, "inode %llu: logged core has magic %#x",
			    (unsigned long long)in.ilf_ino, ld.di_magic);
	bytes = (uint32_t)in.ilf_len << BBSHIFT;
	err = buf_get(rp, (uint64_t)in.ilf_blkno, (uint32_t)in.ilf_len, &b);
	if (err)
		return err;
	dip = (struct xfs_dinode *)(b + in.ilf_boffset);
	if (be16(dip->di_magic) != XFS_DINODE_MAGIC) {
		err = fail(rp, -EUCLEAN, "inode %llu: the inode on disk (daddr %lld offset %d) has "
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
		err = fail(rp, -EUCLEAN, "inode %llu: logged core has data fork format %d for mode "
			   "%#o", (unsigned long long)in.ilf_ino, ld.di_format, ld.di_mode);
		goto out;
	}
	nblocks = ld.di_nblocks;
	next = (ld.di_version >= 3 && (ld.di_flags2 & XFS_DIFLAG2_NREXT64)) ?
		ld.di_big_nextents + (uint64_t)ld.di_big_anextents :
		(uint64_t)ld.di_nextents + ld.di_anextents;
	if (next > nblocks || (uint32_t)ld.di_forkoff * 8 > g->inodesize - core) {
		err = fail(rp, -EUCLEAN, "inode %llu: logged core has %llu extents for %llu blocks "
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
		err = fail(rp, -EOPNOTSUPP, "inode %llu: a btree owner change (extent swap) is not "
			   "replayed by this version", (unsigned long long)in.ilf_ino);
		goto out;
	}
	if (in.ilf_size > 2) {
		uint32_t r = 2;

		if (fields & XFS_ILOG_DFORK) {
			const struct fs_log_region *src = r < it->n ? &it->reg[r] : NULL;

			if (!src) {
				err = fail(rp, -EUCLEAN, "inode %llu: data fork region missing",
					   (unsigned long long)in.ilf_ino);
				goto out;
			}
			switch (fields & XFS_ILOG_DFORK) {
			case XFS_ILOG_DDATA:
			case XFS_ILOG_DEXT:
				if (src->len > fork_room) {
					err = fail(rp, -EUCLEAN, "inode %llu: logged data fork of %u "
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
				err = fail(rp, -EUCLEAN, "inode %llu: data fork flags %#x",
					   (unsigned long long)in.ilf_ino, fields & XFS_ILOG_DFORK);
				goto out;
			}
			r++;
		}
		if (fields & XFS_ILOG_AFORK) {
			const struct fs_log_region *src = r < it->n ? &it->reg[r] : NULL;
			unsigned char *ap = (unsigned char *)dip + core + dsize;

			if (!src || !dip->di_forkoff) {
				err = fail(rp, -EUCLEAN, "inode %llu: attr fork logged without its "
					   "region or fork offset", (unsigned long long)in.ilf_ino);
				goto out;
			}
			switch (fields & XFS_ILOG_AFORK) {
			case XFS_ILOG_ADATA:
			case XFS_ILOG_AEXT:
				if (src->len > asize) {
					err = fail(rp, -EUCLEAN, "inode %llu: logged attr fork of %u "
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
				err = fail(rp, -EUCLEAN, "inode %llu: attr fork flags %#x",
					   (unsigned long long)in.ilf_ino, fields & XFS_ILOG_AFORK);
				goto out;
			}
		}
	}
	fs_crc_update(dip, g->inodesize, XFS_DINODE_CRC_OFF);
	err = buf_put(rp, (uint64_t)in.ilf_blkno, (uint32_t)in.ilf_len, b);
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

/* ---- icreate, dquots, intents ---- */

static int replay_icreate(struct fs_replay *rp, const struct fs_log_item *it)
{
	const struct fs_geom *g = &rp->fs->g;
	struct xfs_icreate_log ic;
	uint32_t agno, agbno, count, isize, length, gen, cbbs, per, nclusters, cancelled = 0;
	uint64_t start;

	if (it->reg[0].len < sizeof(ic))
		return fail(rp, -EUCLEAN, "an icreate log item of %u bytes", it->reg[0].len);
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
		return fail(rp, -EUCLEAN, "icreate log item: AG %u block %u, %u inodes of %u bytes "
			    "in %u blocks do not fit the geometry", agno, agbno, count, isize, length);
	cbbs = g->blocks_per_cluster << (g->blocklog - BBSHIFT);
	per = (g->blocks_per_cluster << g->blocklog) / isize;
	nclusters = length / g->blocks_per_cluster;
	start = fs_agbno_to_daddr(g, agno, agbno);
	/* a chunk freed later in the log is not initialised (the kernel's rule: any cluster) */
	for (uint32_t c = 0; c < nclusters; c++)
		cancelled += is_cancelled(rp, (int64_t)(start + (uint64_t)c * cbbs), cbbs);
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
		err = buf_put(rp, daddr, cbbs, b);
		free(b);
		if (err)
			return err;
	}
	rp->st.icreates++;
	return 0;
}

static int replay_dquot(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn)
{
	const struct fs_geom *g = &rp->fs->g;
	struct xfs_dq_logformat dq;
	const struct xfs_disk_dquot *rec;
	struct xfs_dqblk *dqb;
	unsigned char *b;
	uint32_t bbs;
	int err;

	if (it->reg[0].len < sizeof(dq) || it->n < 2)
		return fail(rp, -EUCLEAN, "a dquot log item of %u bytes", it->reg[0].len);
	memcpy(&dq, it->reg[0].p, sizeof(dq));
	if (it->reg[1].len < sizeof(struct xfs_disk_dquot) ||
	    it->reg[1].len > sizeof(struct xfs_dqblk))
		return fail(rp, -EUCLEAN, "dquot %u: logged record of %u bytes", dq.qlf_id,
			    it->reg[1].len);
	rec = (const void *)it->reg[1].p;
	if (!rp->fs->sb.sb_qflags || (rp->quotaoff & (rec->d_type & XFS_DQTYPE_REC_MASK))) {
		rp->st.dquots_skipped++;
		return 0;
	}
	bbs = (uint32_t)dq.qlf_len << (g->blocklog - BBSHIFT);
	if (dq.qlf_len != 1 || !range_ok(rp, dq.qlf_blkno, bbs) ||
	    dq.qlf_boffset % sizeof(struct xfs_dqblk) ||
	    (uint64_t)dq.qlf_boffset + sizeof(struct xfs_dqblk) > (uint64_t)bbs << BBSHIFT)
		return fail(rp, -EUCLEAN, "dquot %u: log item names buffer %lld+%d offset %u",
			    dq.qlf_id, (long long)dq.qlf_blkno, dq.qlf_len, dq.qlf_boffset);
	err = buf_get(rp, (uint64_t)dq.qlf_blkno, bbs, &b);
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
	err = buf_put(rp, (uint64_t)dq.qlf_blkno, bbs, b);
	free(b);
	if (!err)
		rp->st.dquots++;
	return err;
}

static const char *const intent_names[FS_INTENT_NR] = { "EFI", "RUI", "CUI", "BUI", "ATTRI" };

const char *fs_replay_intent_name(unsigned kind)
{
	return kind < FS_INTENT_NR ? intent_names[kind] : "?";
}

/* Room for n more intent extents. */
static struct fs_intent_ext *exts_add(struct fs_replay *rp, uint32_t n)
{
	if (rp->nexts + n > rp->capexts) {
		size_t cap = rp->capexts ? rp->capexts : 256;
		struct fs_intent_ext *v;

		while (cap < rp->nexts + n)
			cap *= 2;
		v = realloc(rp->exts, cap * sizeof(*v));
		if (!v)
			return NULL;
		rp->exts = v;
		rp->capexts = cap;
	}
	rp->nexts += n;
	return rp->exts + rp->nexts - n;
}

/*
 * An intent's payload: the header of its format and its array of n
 * records of rsize bytes each.  The kernel takes only the exact size for
 * the count it states (xfs_*_copy_format); an EFI may come in the 32-bit
 * layout (packed 12-byte records) as well as the 64-bit one.
 */
static int intent_records(struct fs_replay *rp, const struct fs_log_item *it, const char *name,
			  size_t hsize, size_t *rsize, uint32_t *n)
{
	uint32_t len = it->reg[0].len, cnt;

	if (len < hsize)
		return fail(rp, -EUCLEAN, "%s log item of %u bytes, shorter than its header", name,
			    len);
	memcpy(&cnt, it->reg[0].p + 4, 4);
	if (!cnt || cnt > (len - hsize) / 12)
		return fail(rp, -EUCLEAN, "%s log item of %u bytes states %u extents", name, len, cnt);
	if (it->type == XFS_LI_EFI && len == hsize + (size_t)cnt * sizeof(xfs_extent_32_t))
		*rsize = sizeof(xfs_extent_32_t);
	else if (len != hsize + (size_t)cnt * *rsize)
		return fail(rp, -EUCLEAN, "%s log item of %u bytes states %u extents of %zu bytes",
			    name, len, cnt, *rsize);
	*n = cnt;
	return 0;
}

/*
 * An ATTRI, checked as the kernel checks it on sight, and kept (its name
 * and value copied out of the transaction, which the walk frees) in case
 * no done item follows: its index in rp->attris goes to ri->first.
 */
static int attri_keep(struct fs_replay *rp, const struct fs_log_item *it, struct rintent *ri)
{
	struct fs_log_attri a;
	unsigned char *copy;
	char why[160];
	int perr = fs_log_attri_parse(&rp->fs->g, it, &a, why, sizeof(why));

	/* one this version cannot complete is not damage: say which it is */
	if (perr)
		return fail(rp, perr == -EOPNOTSUPP ? perr : -EUCLEAN, "ATTRI log item: %s", why);
	if (FS_VEC_ROOM(rp->attris, rp->nattris, rp->capattris, 16))
		return -ENOMEM;
	copy = malloc(a.namelen + a.valuelen);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, a.name, a.namelen);
	if (a.valuelen)
		memcpy(copy + a.namelen, a.value, a.valuelen);
	a.name = copy;
	a.value = a.valuelen ? copy + a.namelen : NULL;
	ri->first = (uint32_t)rp->nattris;
	rp->attris[rp->nattris++] = a;
	return 0;
}

/* Parse an intent item's extents (their checks wait until it is known unfinished). */
static int intent_parse(struct fs_replay *rp, const struct fs_log_item *it, int kind,
			struct rintent *ri)
{
	static const size_t hsize[FS_INTENT_NR] = {
		[FS_INTENT_EFI] = sizeof(struct xfs_efi_log_format),
		[FS_INTENT_RUI] = sizeof(struct xfs_rui_log_format),
		[FS_INTENT_CUI] = sizeof(struct xfs_cui_log_format),
		[FS_INTENT_BUI] = sizeof(struct xfs_bui_log_format),
	};
	size_t rsize = kind == FS_INTENT_EFI ? sizeof(xfs_extent_64_t) :
		       kind == FS_INTENT_CUI ? sizeof(struct xfs_phys_extent) :
		       sizeof(struct xfs_map_extent);
	const unsigned char *p;
	struct fs_intent_ext *x;
	uint32_t n = 0;
	int err;

	ri->first = (uint32_t)rp->nexts;
	ri->n = 0;
	if (kind == FS_INTENT_ATTRI)
		return attri_keep(rp, it, ri);
	err = intent_records(rp, it, fs_replay_intent_name((unsigned)kind), hsize[kind], &rsize,
			     &n);
	if (err)
		return err;
	x = exts_add(rp, n);
	if (!x)
		return -ENOMEM;
	p = it->reg[0].p + hsize[kind];
	for (uint32_t i = 0; i < n; i++, p += rsize, x++) {
		memset(x, 0, sizeof(*x));
		x->kind = (uint8_t)kind;
		if (kind == FS_INTENT_EFI) {
			uint32_t len;

			memcpy(&x->fsb, p, 8);
			memcpy(&len, p + 8, 4);
			x->len = len;
		} else if (kind == FS_INTENT_CUI) {
			struct xfs_phys_extent pe;

			memcpy(&pe, p, sizeof(pe));
			x->fsb = pe.pe_startblock;
			x->len = pe.pe_len;
			x->type = pe.pe_flags & XFS_REFCOUNT_EXTENT_TYPE_MASK;
			x->flags = pe.pe_flags;
		} else {
			struct xfs_map_extent me;

			memcpy(&me, p, sizeof(me));
			x->fsb = me.me_startblock;
			x->len = me.me_len;
			x->owner = me.me_owner;
			x->startoff = me.me_startoff;
			x->type = me.me_flags & 0xff;
			x->flags = me.me_flags;
		}
	}
	ri->n = n;
	return 0;
}

/* Intents and done items all keep their id (or the intent's id) at byte 8. */
static int replay_intent(struct fs_replay *rp, const struct fs_log_item *it, int kind, bool done)
{
	uint64_t id, key, *v;
	int err;

	if (it->reg[0].len < 16)
		return fail(rp, -EUCLEAN, "an intent log item (type %#x) of %u bytes", it->type,
			    it->reg[0].len);
	memcpy(&id, it->reg[0].p + 8, 8);
	/* ids are unique only per kind: key by both */
	key = id * FS_INTENT_NR + (uint64_t)kind;
	if (done) {
		v = map_find(&rp->intents, key);
		if (v && *v && *v != MAP_GONE) {
			rp->ints[*v - 1].done = true;
			*v = MAP_GONE;
			rp->st.intents_done++;
		}
		return 0;
	}
	if (rp->nints == rp->capints) {
		size_t cap = rp->capints ? rp->capints * 2 : 64;
		struct rintent *nv = realloc(rp->ints, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		rp->ints = nv;
		rp->capints = cap;
	}
	rp->ints[rp->nints] = (struct rintent){ .kind = (uint8_t)kind, .id = id };
	err = intent_parse(rp, it, kind, &rp->ints[rp->nints]);
	if (err)
		return err;
	rp->nints++;
	return map_put(&rp->intents, key, rp->nints);
}

/* A fsblock extent inside one AG of the filesystem (the kernel's xfs_verify_fsbext). */
static bool fsbext_ok(const struct fs_geom *g, uint64_t fsb, uint32_t len)
{
	fs_agnumber_t agno = fs_fsb_to_agno(g, fsb);
	fs_agblock_t agbno = fs_fsb_to_agbno(g, fsb);

	return len && fs_fsb_valid(g, fsb) && len <= fs_ag_blocks(g, agno) - agbno;
}

/* An unfinished intent's extent, checked as the kernel's recovery checks it. */
static bool intent_ext_ok(const struct fs_geom *g, const struct fs_intent_ext *x)
{
	if (!fsbext_ok(g, x->fsb, x->len))
		return false;
	switch (x->kind) {
	case FS_INTENT_EFI:
		return true;
	case FS_INTENT_CUI:
		/* the refcount intent types: increase, decrease, alloc CoW, free CoW */
		return !(x->flags & ~XFS_REFCOUNT_EXTENT_FLAGS) && x->type >= 1 && x->type <= 4;
	case FS_INTENT_RUI:
		if (x->flags & ~XFS_RMAP_EXTENT_FLAGS || x->type < XFS_RMAP_EXTENT_MAP ||
		    x->type > XFS_RMAP_EXTENT_FREE)
			return false;
		/* an inode owner names an inode and a file range; the others are the special ones */
		if (XFS_RMAP_NON_INODE_OWNER(x->owner))
			return true;
		return fs_ino_valid(g, x->owner) && x->startoff < x->startoff + x->len &&
		       x->startoff + x->len <= XFS_MAX_FILEOFF;
	case FS_INTENT_BUI:
		/* (one mapping per item, checked by the caller): map or unmap, of a real inode */
		return fs_ino_valid(g, x->owner) && !(x->flags & ~XFS_BMAP_EXTENT_FLAGS) &&
		       (x->type == 1 || x->type == 2) && x->startoff < x->startoff + x->len &&
		       x->startoff + x->len <= XFS_MAX_FILEOFF;
	default:
		return false;
	}
}

/* The unfinished intents, checked; their extents in log order. */
static int collect_open(struct fs_replay *rp)
{
	const struct fs_geom *g = &rp->fs->g;
	size_t n = 0, na = 0;

	for (size_t i = 0; i < rp->nints; i++)
		if (!rp->ints[i].done) {
			n += rp->ints[i].n;
			na += rp->ints[i].kind == FS_INTENT_ATTRI;
		}
	rp->open = malloc((n ? n : 1) * sizeof(*rp->open));
	rp->open_attris = malloc((na ? na : 1) * sizeof(*rp->open_attris));
	if (!rp->open || !rp->open_attris)
		return -ENOMEM;
	for (size_t i = 0; i < rp->nints; i++) {
		const struct rintent *ri = &rp->ints[i];

		if (ri->done)
			continue;
		rp->st.intents_open[ri->kind]++;
		if (ri->kind == FS_INTENT_ATTRI)
			rp->open_attris[rp->nopen_attris++] = rp->attris[ri->first];
		if (ri->kind == FS_INTENT_BUI && ri->n != 1)
			return fail(rp, -EUCLEAN, "an unfinished BUI log item (id %#llx) holds %u "
				    "mappings; the kernel takes exactly one", (unsigned long long)ri->id,
				    ri->n);
		for (uint32_t k = 0; k < ri->n; k++) {
			struct fs_intent_ext *x = &rp->open[rp->nopen++];

			*x = rp->exts[ri->first + k];
			if (!intent_ext_ok(g, x))
				return fail(rp, -EUCLEAN, "an unfinished %s log item (id %#llx) names "
					    "%u blocks at fsblock %llu (flags %#x) that do not fit the "
					    "filesystem; the kernel's recovery refuses it as corruption",
					    fs_replay_intent_name(ri->kind), (unsigned long long)ri->id,
					    x->len, (unsigned long long)x->fsb, x->flags);
			x->agno = fs_fsb_to_agno(g, x->fsb);
			x->agbno = fs_fsb_to_agbno(g, x->fsb);
		}
	}
	return 0;
}

/* bmbt blocks read for a BUI's fork: through the replay's view of the device */
static int bui_read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct fs_replay *rp = priv;
	const struct fs_geom *g = &rp->fs->g;
	unsigned char *b = NULL;
	int err = buf_get(rp, fs_fsb_to_daddr(g, fsb), g->blocksize >> BBSHIFT, &b);

	if (err)
		return err;
	memcpy(buf, b, g->blocksize);
	free(b);
	return 0;
}

/*
 * The rebuilt bmbt of a BUI's fork goes into the fork's own old bmbt
 * blocks, then into the new ones the caller took for it (bui_take_blocks),
 * each block verified and put in the replay's view as any replayed block.
 */
struct bui_bmbt {
	struct fs_replay *rp;
	fs_ino_t ino;
	const fs_fsblock_t *old, *fresh;
	size_t nold, used, nfresh, usedfresh;
};

static int bui_bmbt_alloc(void *priv, uint64_t *ptr)
{
	struct bui_bmbt *bb = priv;

	if (bb->used < bb->nold)
		*ptr = bb->old[bb->used++];
	else if (bb->usedfresh < bb->nfresh)
		*ptr = bb->fresh[bb->usedfresh++];
	else
		return -ENOSPC;
	return 0;
}

static int bui_bmbt_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct bui_bmbt *bb = priv;
	const struct fs_geom *g = &bb->rp->fs->g;
	uint64_t daddr = fs_fsb_to_daddr(g, ptr);
	struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = bb->ino,
			      .agno = fs_fsb_to_agno(g, ptr) };
	struct fs_findings fl;
	int err = 0;

	(void)level;
	fs_findings_init(&fl);
	vc.fl = &fl;
	fs_verify(FS_MT_BMBT, &vc, block, g->blocksize);
	if (fl.n)
		err = fail(bb->rp, -EUCLEAN, "a bmbt block of inode %llu rebuilt for its unfinished "
			   "BUI fails its check: %s: %s", (unsigned long long)bb->ino,
			   fl.v[0].def->code, fl.v[0].message);
	fs_findings_free(&fl);
	return err ? err : buf_put(bb->rp, daddr, g->blocksize >> BBSHIFT, block);
}

/*
 * Blocks a completed BUI changed the fate of, single blocks joining the
 * open extents as kind EFI: the old bmbt blocks it no longer uses are
 * free (flags 0), as the kernel frees them (an EFI of its own), and the
 * new ones it took are in use (FS_INTENT_EXT_TAKEN).  Either way the
 * caller's AG rebuild covers their AGs and what the scan finds about them
 * is accounted to the completion.
 */
static int bui_open_blocks(struct fs_replay *rp, const fs_fsblock_t *v, size_t n, uint32_t flags)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_intent_ext *o;

	if (!n)
		return 0;
	o = realloc(rp->open, (rp->nopen + n) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	rp->open = o;
	for (size_t i = 0; i < n; i++)
		o[rp->nopen++] = (struct fs_intent_ext){
			.kind = FS_INTENT_EFI, .flags = flags, .fsb = v[i], .len = 1,
			.agno = fs_fsb_to_agno(g, v[i]), .agbno = fs_fsb_to_agbno(g, v[i]) };
	return 0;
}

/*
 * New bmbt blocks for a BUI whose fork needs more than it had, taken as
 * the kernel's bmbt allocator takes them (near the inode: its AG first,
 * then the others in order) from the space free after the replay: each
 * AG's bno btree read through the replay's view, skipping the blocks on
 * its AGFL and every block an open extent names (an unfinished intent's,
 * whose fate is still pending, or one an earlier BUI freed or took).  The
 * AGF, the AGFL and every bno btree block walked must pass their
 * verifiers, and each record its own rules, before a block is taken.
 */
struct bui_take {
	struct fs_replay *rp;
	fs_agnumber_t agno;
	const uint32_t *agfl;      /* the AG's active AGFL entries */
	uint32_t nagfl;
	fs_fsblock_t *out;
	size_t need, got;
	char *why;                 /* set when a block read is bad */
	size_t wl;
};

static int bui_take_read(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, void *buf)
{
	struct bui_take *t = priv;

	return bui_read_fsblock(t->rp, fs_agbno_to_fsb(&t->rp->fs->g, agno, agbno), buf);
}

/* The first block at or past b that neither the AGFL nor an open extent holds. */
static uint64_t bui_take_skip(const struct bui_take *t, uint64_t b)
{
	bool moved = true;

	while (moved) {
		moved = false;
		for (uint32_t i = 0; i < t->nagfl; i++)
			if (t->agfl[i] == b) {
				b++;
				moved = true;
			}
		for (size_t i = 0; i < t->rp->nopen; i++) {
			const struct fs_intent_ext *o = &t->rp->open[i];

			if (o->kind != FS_INTENT_ATTRI && o->agno == t->agno && o->agbno <= b &&
			    b < (uint64_t)o->agbno + o->len) {
				b = (uint64_t)o->agbno + o->len;
				moved = true;
			}
		}
	}
	return b;
}

static int bui_take_rec(void *priv, const void *rec)
{
	struct bui_take *t = priv;
	const struct fs_geom *g = &t->rp->fs->g;
	struct fs_alloc_rec r;
	const char *bad;
	uint64_t end;

	fs_alloc_rec_decode(rec, &r);
	bad = fs_alloc_rec_problem(g, t->agno, &r);
	if (bad) {
		snprintf(t->why, t->wl, "AG %u's free space record %u+%u is bad: %s", t->agno,
			 r.startblock, r.blockcount, bad);
		return 1;
	}
	end = (uint64_t)r.startblock + r.blockcount;
	/* the blocks this BUI took are not open yet: records ascend, so they lie before b */
	for (uint64_t b = bui_take_skip(t, r.startblock); b < end && t->got < t->need;
	     b = bui_take_skip(t, b + 1))
		t->out[t->got++] = fs_agbno_to_fsb(g, t->agno, (fs_agblock_t)b);
	return t->got == t->need;
}

/* Free blocks of AG t->agno into t->out: 0 (t->why set when something read was bad), or negative errno. */
static int bui_take_ag(struct bui_take *t)
{
	const struct fs_geom *g = &t->rp->fs->g;
	uint32_t sbbs = g->sectsize >> BBSHIFT, *agfl = NULL, n = 0;
	unsigned char *agf_b = NULL, *agfl_b = NULL;
	struct fs_findings fl;
	struct fs_vctx vc = { .g = g, .agno = t->agno };
	struct fs_btree_walk w;
	struct fs_agf agf;
	const char *what = "AGF";
	int err;

	fs_findings_init(&fl);
	vc.fl = &fl;
	vc.daddr = (fs_daddr_t)(fs_ag_agf_offset(g, t->agno) >> BBSHIFT);
	err = buf_get(t->rp, (uint64_t)vc.daddr, sbbs, &agf_b);
	if (err)
		goto out;
	fs_verify(FS_MT_AGF, &vc, agf_b, g->sectsize);
	if (fl.n)
		goto bad;
	fs_agf_decode(agf_b, &agf);
	if (!agf.freeblks)
		goto out;	/* nothing free here, as the AGF says; another AG may have some */
	what = "AGFL";
	vc.daddr = (fs_daddr_t)(fs_ag_agfl_offset(g, t->agno) >> BBSHIFT);
	err = buf_get(t->rp, (uint64_t)vc.daddr, sbbs, &agfl_b);
	if (err)
		goto out;
	fs_verify(FS_MT_AGFL, &vc, agfl_b, g->sectsize);
	if (!fl.n && (agf.flfirst >= g->agfl_size || agf.fllast >= g->agfl_size ||
		      agf.flcount != fs_agfl_active_count(g, &agf))) {
		snprintf(t->why, t->wl, "AG %u's AGF free list bounds are bad (first %u, last %u, "
			 "count %u)", t->agno, agf.flfirst, agf.fllast, agf.flcount);
		goto out;
	}
	if (!fl.n)
		fs_agfl_check_active(&vc, agfl_b, &agf);
	if (fl.n)
		goto bad;
	agfl = calloc(agf.flcount + 1, sizeof(*agfl));
	if (!agfl) {
		err = -ENOMEM;
		goto out;
	}
	for (; n < agf.flcount; n++)
		agfl[n] = get_be32(agfl_b + sizeof(struct xfs_agfl) +
				   fs_agfl_slot(g, &agf, n) * sizeof(__be32));
	t->agfl = agfl;
	t->nagfl = n;
	what = "free space btree";
	w = (struct fs_btree_walk){ .ops = fs_btree_ag_ops(FS_BTREE_AG_BNO), .g = g, .fl = &fl,
				    .vc = { .g = g, .agno = t->agno }, .root = agf.bno_root,
				    .nlevels = agf.bno_level, .read_block = bui_take_read,
				    .visit_rec = bui_take_rec, .priv = t };
	err = fs_btree_walk(&w);
	t->agfl = NULL;
	t->nagfl = 0;
	if (err > 0)
		err = 0;	/* stopped: enough blocks, or a bad record (t->why) */
	if (err || !fl.n)
		goto out;
bad:
	snprintf(t->why, t->wl, "AG %u's %s (daddr %lld) fails its check: %s: %.80s", t->agno, what,
		 (long long)fl.v[0].daddr, fl.v[0].def->code, fl.v[0].message);
out:
	fs_findings_free(&fl);
	free(agfl);
	free(agf_b);
	free(agfl_b);
	return err;
}

/* need new bmbt blocks for inode ino into out: 1 taken, 0 not (why says why), negative errno */
static int bui_take_blocks(struct fs_replay *rp, fs_ino_t ino, size_t need, fs_fsblock_t *out,
			   char *why, size_t wl)
{
	const struct fs_geom *g = &rp->fs->g;
	fs_agnumber_t first = fs_ino_to_agno(g, ino);
	struct bui_take t = { .rp = rp, .out = out, .need = need, .why = why, .wl = wl };

	for (fs_agnumber_t k = 0; k < g->agcount && t.got < need; k++) {
		int err;

		t.agno = (first + k) % g->agcount;
		err = bui_take_ag(&t);
		if (err)
			return err;
		if (why[0])
			return 0;
	}
	if (t.got < need) {
		snprintf(why, wl, "no free block for the new bmbt block of inode %llu (%zu needed, "
			 "%zu free)", (unsigned long long)ino, need, t.got);
		return 0;
	}
	return 1;
}

/*
 * An unfinished BUI's mapping applied to its inode's fork, as the kernel's
 * recovery finishes it (xfs_bmap_finish_one): map puts the extent into a
 * hole (xfs_bmapi_remap, merged with neighbours it continues as
 * xfs_bmap_add_extent_hole_real merges), unmap takes the range out
 * (__xfs_bunmapi with XFS_BMAPI_REMAP: the blocks' fate is the refcount
 * and free intents', which the caller's rebuild derives from the forks);
 * di_nblocks and the extent count follow.  The fork, a list of extents or
 * a block map btree, is read whole, changed as a list and written back:
 * a list in the inode when it fits (the kernel's btree-to-extents rule),
 * else a bmbt packed full by the bulk loader in the fork's old bmbt
 * blocks; the kernel splits and joins blocks one by one, so its tree may
 * use more blocks than ours (never fewer: it keeps blocks at least half
 * full and ours are full), the mappings are the same.  A fork that needs
 * more bmbt blocks than it had (a list that must become a btree, a btree
 * that needs another leaf) takes the new ones from the space free after
 * the replay (bui_take_blocks), as the kernel's bmbt allocator does; only
 * a filesystem with no free block left (or whose free space records are
 * damaged) leaves the BUI unapplied.  1 applied, 0 not (why in *why),
 * negative errno.
 */
static int apply_bui(struct fs_replay *rp, const struct fs_intent_ext *x, char *why, size_t wl)
{
	const struct fs_geom *g = &rp->fs->g;
	int whichfork = (x->flags & XFS_BMAP_EXTENT_ATTR_FORK) ? XFS_ATTR_FORK : XFS_DATA_FORK;
	const char *fname = whichfork == XFS_DATA_FORK ? "data" : "attr";
	uint32_t bbs = (g->inodesize + BBSIZE - 1) >> BBSHIFT, fsize;
	uint64_t daddr = fs_ino_to_daddr(g, x->owner), n, nn = 0, nblocks, end, nbmbt = 0;
	struct fs_bmap_ext *v = NULL, nw = { .startoff = x->startoff, .startblock = x->fsb,
					     .blockcount = x->len,
					     .unwritten = (x->flags & XFS_BMAP_EXTENT_UNWRITTEN) != 0 };
	struct fs_bmap m = { 0 };
	fs_fsblock_t *fresh = NULL;
	size_t nfresh = 0;
	struct xfs_dinode *d;
	struct fs_inode ip;
	unsigned char *b, *fork;
	uint8_t fmt, newfmt = XFS_DINODE_FMT_EXTENTS;
	int err;

	err = buf_get(rp, daddr, bbs, &b);
	if (err)
		return err;
	d = (struct xfs_dinode *)b;
	fs_inode_decode(b, &ip);
	n = whichfork == XFS_DATA_FORK ? ip.nextents : ip.anextents;
	fmt = whichfork == XFS_DATA_FORK ? ip.format : ip.aformat;
	fsize = fs_inode_fork_size(g, &ip, whichfork);
	err = 0;
	if (be16(d->di_magic) != XFS_DINODE_MAGIC || ip.version != 3 || ip.ino != x->owner) {
		snprintf(why, wl, "inode %llu is not an inode core", (unsigned long long)x->owner);
		goto out;
	}
	if ((fmt != XFS_DINODE_FMT_EXTENTS && fmt != XFS_DINODE_FMT_BTREE) ||
	    (fmt == XFS_DINODE_FMT_EXTENTS && n > fsize / sizeof(struct xfs_bmbt_rec))) {
		snprintf(why, wl, "inode %llu's %s fork is neither a list of extents in the inode "
			 "nor a block map btree", (unsigned long long)x->owner, fname);
		goto out;
	}
	fork = (unsigned char *)fs_inode_fork_ptr(b, &ip, whichfork);
	{
		/* the whole fork as a list: the bmbt walker check uses, reading the replayed view */
		struct fs_findings fl;
		struct fs_bmap_ctx c = { .g = g, .read_fsblock = bui_read_fsblock, .priv = rp };

		fs_findings_init(&fl);
		c.fl = &fl;
		err = fs_bmap_load(&c, b, &ip, whichfork, &m);
		if (!err && (m.bad || fl.n))
			snprintf(why, wl, "inode %llu's %s fork fails its check before the BUI: %s: %.100s",
				 (unsigned long long)x->owner, fname,
				 fl.n ? fl.v[0].def->code : "bmap", fl.n ? fl.v[0].message : "damaged");
		fs_findings_free(&fl);
		if (err || why[0])
			goto out;
		n = m.n;
		nbmbt = m.nbmbt;
	}
	v = calloc(n + 2, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	nblocks = ip.nblocks;
	end = x->startoff + x->len;
	for (uint64_t i = 0; i < n; i++) {
		struct fs_bmap_ext e = m.ext[i];
		uint64_t eend, cut;

		eend = e.startoff + e.blockcount;
		if (x->type == 1 || eend <= x->startoff || e.startoff >= end) {
			if (x->type == 1 && eend > x->startoff && e.startoff < end) {
				snprintf(why, wl, "inode %llu already maps file block %llu, where the BUI "
					 "maps a new extent", (unsigned long long)x->owner,
					 (unsigned long long)(e.startoff > x->startoff ? e.startoff :
							      x->startoff));
				goto out;
			}
			v[nn++] = e;
			continue;
		}
		/* unmap: what lies before and after the range stays */
		cut = (eend < end ? eend : end) - (e.startoff > x->startoff ? e.startoff : x->startoff);
		if (cut > nblocks) {
			snprintf(why, wl, "inode %llu counts fewer blocks than the BUI unmaps",
				 (unsigned long long)x->owner);
			goto out;
		}
		nblocks -= cut;
		if (e.startoff < x->startoff)
			v[nn++] = (struct fs_bmap_ext){ e.startoff, e.startblock,
							x->startoff - e.startoff, e.unwritten };
		if (eend > end)
			v[nn++] = (struct fs_bmap_ext){ end, e.startblock + (end - e.startoff),
							eend - end, e.unwritten };
	}
	if (x->type == 1) {
		uint64_t at = 0;
		bool left, right;

		while (at < nn && v[at].startoff < x->startoff)
			at++;
		left = at > 0 && v[at - 1].startoff + v[at - 1].blockcount == nw.startoff &&
		       v[at - 1].startblock + v[at - 1].blockcount == nw.startblock &&
		       v[at - 1].unwritten == nw.unwritten &&
		       v[at - 1].blockcount + nw.blockcount <= XFS_MAX_BMBT_EXTLEN;
		right = at < nn && nw.startoff + nw.blockcount == v[at].startoff &&
			nw.startblock + nw.blockcount == v[at].startblock &&
			v[at].unwritten == nw.unwritten &&
			v[at].blockcount + nw.blockcount <= XFS_MAX_BMBT_EXTLEN;
		if (left && right &&
		    v[at - 1].blockcount + nw.blockcount + v[at].blockcount > XFS_MAX_BMBT_EXTLEN)
			right = false;
		if (left) {
			v[at - 1].blockcount += nw.blockcount;
			if (right) {
				v[at - 1].blockcount += v[at].blockcount;
				memmove(v + at, v + at + 1, (nn - at - 1) * sizeof(*v));
				nn--;
			}
		} else if (right) {
			v[at].startoff = nw.startoff;
			v[at].startblock = nw.startblock;
			v[at].blockcount += nw.blockcount;
		} else {
			memmove(v + at + 1, v + at, (nn - at) * sizeof(*v));
			v[at] = nw;
			nn++;
		}
		nblocks += x->len;
	}
	if (nn * sizeof(struct xfs_bmbt_rec) > fsize) {
		struct fs_bload_geom geo;
		struct fs_bload_slack full = { 0, 0 };

		err = fs_bload_compute_geometry(fs_btree_ops_get(FS_BTREE_BMBT), g->blocksize, nn,
						&full, fsize, &geo);
		if (err) {
			snprintf(why, wl, "inode %llu's %s fork of %llu extents has no block map "
				 "btree shape (%s)", (unsigned long long)x->owner, fname,
				 (unsigned long long)nn, strerror(-err));
			err = 0;
			goto out;
		}
		if (geo.nblocks > nbmbt) {
			/* more bmbt blocks than the fork had: new ones from free space */
			nfresh = geo.nblocks - nbmbt;
			fresh = calloc(nfresh, sizeof(*fresh));
			if (!fresh) {
				err = -ENOMEM;
				goto out;
			}
			err = bui_take_blocks(rp, x->owner, nfresh, fresh, why, wl);
			if (err <= 0)
				goto out;
			err = 0;
		}
	}
	{
		struct bui_bmbt bb = { .rp = rp, .ino = x->owner, .old = m.bmbt, .nold = m.nbmbt,
				       .fresh = fresh, .nfresh = nfresh };
		uint64_t written = 0;

		memset(fork, 0, fsize);
		err = fs_bload_fork(g, x->owner, v, nn, fork, fsize, bui_bmbt_alloc, bui_bmbt_write,
				    &bb, &newfmt, &written);
		if (err)
			goto out;
		err = bui_open_blocks(rp, m.bmbt + bb.used, m.nbmbt - bb.used, 0);
		if (!err)
			err = bui_open_blocks(rp, fresh, bb.usedfresh, FS_INTENT_EXT_TAKEN);
		if (err)
			goto out;
		if (bb.usedfresh)
			rp->st.bui_bmbt_taken++;
		if (m.nbmbt > bb.used)
			rp->st.bui_bmbt_freed++;
		nblocks = nblocks - nbmbt + written;
	}
	if (whichfork == XFS_DATA_FORK)
		d->di_format = newfmt;
	else
		d->di_aformat = newfmt;
	d->di_nblocks = to_be64(nblocks);
	if (whichfork == XFS_DATA_FORK && ip.nrext64)
		d->di_big_nextents = to_be64(nn);
	else if (whichfork == XFS_DATA_FORK)
		d->di_nextents = to_be32((uint32_t)nn);
	else if (ip.nrext64)
		d->di_big_anextents = to_be32((uint32_t)nn);
	else
		d->di_anextents = to_be16((uint16_t)nn);
	fs_crc_update(b, g->inodesize, XFS_DINODE_CRC_OFF);
	err = buf_put(rp, daddr, bbs, b);
	if (!err) {
		struct fs_findings fl;
		struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = x->owner,
				      .agno = fs_ino_to_agno(g, x->owner) };

		/* the changed inode passes the inode verifier, as any replayed one */
		fs_findings_init(&fl);
		vc.fl = &fl;
		fs_verify(FS_MT_INODE, &vc, b, g->inodesize);
		if (fl.n)
			err = fail(rp, -EUCLEAN, "inode %llu fails its check after its unfinished "
				   "BUI was applied: %s: %s", (unsigned long long)x->owner,
				   fl.v[0].def->code, fl.v[0].message);
		fs_findings_free(&fl);
		if (!err)
			err = 1;
	}
out:
	fs_bmap_free(&m);
	free(fresh);
	free(v);
	free(b);
	return err;
}

/* Every unfinished BUI, in log order; those that cannot be applied are counted and named. */
static int apply_buis(struct fs_replay *rp)
{
	for (size_t i = 0; i < rp->nopen; i++) {
		struct fs_intent_ext x = rp->open[i];	/* a copy: apply_bui may grow rp->open */
		char why[200] = "";
		int r;

		if (x.kind != FS_INTENT_BUI)
			continue;
		r = apply_bui(rp, &x, why, sizeof(why));
		if (r < 0)
			return r;
		if (r) {
			rp->st.buis_applied++;
		} else {
			rp->st.buis_unapplied++;
			if (!rp->bui_why[0])
				snprintf(rp->bui_why, sizeof(rp->bui_why), "an unfinished BUI (%s of "
					 "file blocks %llu+%u): %s", rp->open[i].type == 1 ? "map" : "unmap",
					 (unsigned long long)rp->open[i].startoff, rp->open[i].len, why);
		}
	}
	return 0;
}

const char *fs_replay_bui_unapplied(const struct fs_replay *rp)
{
	return rp->st.buis_unapplied ? rp->bui_why : NULL;
}

size_t fs_replay_open_extents(const struct fs_replay *rp, const struct fs_intent_ext **out)
{
	*out = rp->open;
	return rp->nopen;
}

size_t fs_replay_open_attris(const struct fs_replay *rp, const struct fs_log_attri **out)
{
	*out = rp->open_attris;
	return rp->nopen_attris;
}

/* ---- the passes ---- */

static int pass1(void *priv, const struct fs_log_trans *t)
{
	struct fs_replay *rp = priv;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct fs_log_item *it = &t->items[i];

		if (!it->n || !it->reg[0].len)
			return fail(rp, -EUCLEAN, "transaction %#x: an empty log item", t->tid);
		if (it->type == XFS_LI_BUF) {
			const struct xfs_buf_log_format *bf = NULL;
			int err = buf_format(rp, it, &bf);
			uint64_t *c;

			if (err)
				return err;
			if (!(bf->blf_flags & XFS_BLF_CANCEL))
				continue;
			c = map_find(&rp->cancel, cancel_key(bf->blf_blkno, bf->blf_len));
			if (c && *c != MAP_GONE)
				(*c)++;
			else if ((err = map_put(&rp->cancel, cancel_key(bf->blf_blkno, bf->blf_len), 1)))
				return err;
		} else if (it->type == XFS_LI_QUOTAOFF) {
			struct xfs_qoff_logformat q;

			if (it->reg[0].len < sizeof(q))
				return fail(rp, -EUCLEAN, "a quotaoff log item of %u bytes", it->reg[0].len);
			memcpy(&q, it->reg[0].p, sizeof(q));
			/* quota types whose records are not replayed (the kernel's mapping) */
			if (q.qf_flags & XFS_UQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_USER;
			if (q.qf_flags & XFS_PQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_PROJ;
			if (q.qf_flags & XFS_GQUOTA_ACCT)
				rp->quotaoff |= XFS_DQTYPE_GROUP;
		}
	}
	return 0;
}

/* The kernel's item order inside a transaction: 0 buffers/icreate, 1 the rest, 2 inode buffers, 3 cancels. */
static int item_class(const struct fs_log_item *it)
{
	if (it->type == XFS_LI_BUF && it->reg[0].len >= offsetof(struct xfs_buf_log_format, blf_len)) {
		const struct xfs_buf_log_format *bf = (const void *)it->reg[0].p;

		if (bf->blf_flags & XFS_BLF_CANCEL)
			return 3;
		if (bf->blf_flags & XFS_BLF_INODE_BUF)
			return 2;
		return 0;
	}
	return it->type == XFS_LI_ICREATE ? 0 : 1;
}

static int replay_item(struct fs_replay *rp, const struct fs_log_trans *t,
		       const struct fs_log_item *it)
{
	switch (it->type) {
	case XFS_LI_BUF:      return replay_buf(rp, it, t->lsn);
	case XFS_LI_INODE:    return replay_inode(rp, it, t->lsn);
	case XFS_LI_ICREATE:  return replay_icreate(rp, it);
	case XFS_LI_DQUOT:    return replay_dquot(rp, it, t->lsn);
	case XFS_LI_QUOTAOFF: return 0;
	case XFS_LI_EFI:      return replay_intent(rp, it, FS_INTENT_EFI, false);
	case XFS_LI_EFD:      return replay_intent(rp, it, FS_INTENT_EFI, true);
	case XFS_LI_RUI:      return replay_intent(rp, it, FS_INTENT_RUI, false);
	case XFS_LI_RUD:      return replay_intent(rp, it, FS_INTENT_RUI, true);
	case XFS_LI_CUI:      return replay_intent(rp, it, FS_INTENT_CUI, false);
	case XFS_LI_CUD:      return replay_intent(rp, it, FS_INTENT_CUI, true);
	case XFS_LI_BUI:      return replay_intent(rp, it, FS_INTENT_BUI, false);
	case XFS_LI_BUD:      return replay_intent(rp, it, FS_INTENT_BUI, true);
	case XFS_LI_ATTRI:    return replay_intent(rp, it, FS_INTENT_ATTRI, false);
	case XFS_LI_ATTRD:    return replay_intent(rp, it, FS_INTENT_ATTRI, true);
	default:
		return fail(rp, -EOPNOTSUPP, "transaction %#x (LSN %u/%u) holds a log item of type "
			    "%#x%s, which this version does not replay", t->tid,
			    (unsigned)(t->lsn >> 32), (unsigned)t->lsn, it->type,
			    it->type == XFS_LI_XMI ? " (XMI: an exchange-range intent)" :
			    it->type == XFS_LI_XMD ? " (XMD: an exchange-range done)" : "");
	}
}

static int pass2(void *priv, const struct fs_log_trans *t)
{
	struct fs_replay *rp = priv;

	for (int cls = 0; cls < 4; cls++) {
		/* inode buffers and cancels went to the head of their lists: taken newest first */
		bool reverse = cls >= 2;

		for (uint32_t k = 0; k < t->n; k++) {
			const struct fs_log_item *it = &t->items[reverse ? t->n - 1 - k : k];
			int err;

			if (item_class(it) != cls)
				continue;
			err = replay_item(rp, t, it);
			if (err)
				return err;
		}
	}
	return 0;
}

static int cmp_rbuf(const void *x, const void *y)
{
	const struct rbuf *a = x, *b = y;

	if (a->daddr != b->daddr)
		return a->daddr < b->daddr ? -1 : 1;
	if (a->bbs != b->bbs)
		return a->bbs < b->bbs ? -1 : 1;
	return a->lsn < b->lsn ? -1 : a->lsn > b->lsn;
}

/*
 * Every block a buffer item replayed gets what the kernel's write
 * verifier gives it at writeback: the transaction's LSN and a fresh CRC;
 * then its read verifier runs, as the kernel's does when it reads it next.
 */
static int finish(struct fs_replay *rp)
{
	const struct fs_geom *g = &rp->fs->g;
	struct fs_findings fl;
	int err = 0;

	if (rp->nbufs)
		qsort(rp->bufs, rp->nbufs, sizeof(*rp->bufs), cmp_rbuf);
	fs_findings_init(&fl);
	for (size_t i = 0; i < rp->nbufs && !err; i++) {
		const struct rbuf *r = &rp->bufs[i];
		uint32_t bytes = r->bbs << BBSHIFT, unit;
		const struct fs_verifier *v;
		enum fs_mtype t;
		unsigned char *b;

		/* the newest of the same key carries the LSN */
		if (i + 1 < rp->nbufs && rp->bufs[i + 1].daddr == r->daddr && rp->bufs[i + 1].bbs == r->bbs)
			continue;
		if (partial_dir(rp, r->blft, bytes))
			continue;
		err = buf_get(rp, r->daddr, r->bbs, &b);
		if (err)
			break;
		t = fs_mtype_by_magic(b, bytes);
		if (t == FS_MT_NR) {
			/* no header of a type we know (a realtime bitmap, a stale block): as logged */
			free(b);
			continue;
		}
		v = fs_verifier_get(t);
		unit = fs_verify_unit(g, t, bytes);
		for (uint32_t off = 0; off + unit <= bytes; off += unit) {
			unsigned char *p = b + off;
			struct fs_vctx vc = {
				.g = g, .fl = &fl, .daddr = r->daddr + off / BBSIZE,
				.agno = (fs_agnumber_t)(r->daddr /
						((uint64_t)g->agblocks << (g->blocklog - BBSHIFT))),
			};

			if (t == FS_MT_SB) {
				put_be64(p + offsetof(struct xfs_dsb, sb_lsn), r->lsn);
				fs_crc_update(p, unit, FS_SB_CRC_OFF);
			} else if (t == FS_MT_INODE || t == FS_MT_DQUOT) {
				/* these carry their own LSN per record, set by their own items */
				fs_crc_update(p, unit, v->crc_off);
			} else {
				if (v->lsn_off != SIZE_MAX && v->lsn_off + 8 <= unit)
					put_be64(p + v->lsn_off, r->lsn);
				if (v->crc_off != SIZE_MAX)
					fs_crc_update(p, unit, v->crc_off);
			}
			/* owner-dependent checks need the owner: take the block's own claim */
			if (t == FS_MT_BMBT)
				vc.ino = be64(((const struct xfs_btree_block *)p)->bb_u.l.bb_owner);
			else if (t == FS_MT_DIR_BLOCK || t == FS_MT_DIR_DATA || t == FS_MT_DIR_FREE)
				vc.ino = get_be64(p + offsetof(struct xfs_dir3_blk_hdr, owner));
			else if (t == FS_MT_DA_NODE || t == FS_MT_DIR_LEAF1 || t == FS_MT_DIR_LEAFN ||
				 t == FS_MT_ATTR_LEAF)
				vc.ino = get_be64(p + offsetof(struct xfs_da3_blkinfo, owner));
			if (t != FS_MT_INODE && t != FS_MT_SB)
				fs_verify(t, &vc, p, unit);
		}
		if (fl.n) {
			err = fail(rp, -EUCLEAN, "the replayed %s at daddr %llu fails its check: %s: %s",
				   v->name, (unsigned long long)r->daddr, fl.v[0].def->code,
				   fl.v[0].message);
			free(b);
			break;
		}
		err = buf_put(rp, r->daddr, r->bbs, b);
		free(b);
	}
	/* every replayed inode passes the inode verifier, as the kernel demands after each */
	for (size_t i = 0; i < rp->ninos && !err; i++) {
		const struct rinode *ri = &rp->inos[i];
		uint32_t bbs = (g->inodesize + BBSIZE - 1) >> BBSHIFT;
		uint64_t daddr = ri->daddr + (ri->off >> BBSHIFT);
		unsigned char *b;
		struct fs_vctx vc = {
			.g = g, .fl = &fl, .daddr = daddr, .ino = ri->ino,
			.agno = fs_ino_to_agno(g, ri->ino),
		};

		err = buf_get(rp, daddr, bbs, &b);
		if (err)
			break;
		fs_verify(FS_MT_INODE, &vc, b, g->inodesize);
		free(b);
		if (fl.n)
			err = fail(rp, -EUCLEAN, "the replayed inode %llu fails its check: %s: %s",
				   (unsigned long long)ri->ino, fl.v[0].def->code, fl.v[0].message);
	}
	fs_findings_free(&fl);
	return err;
}

int fs_replay_log(struct fs *fs, struct fs_log_info *li, struct fs_replay **out, char *msg,
		  size_t ml)
{
	struct fs_replay *rp = calloc(1, sizeof(*rp));
	struct timespec t0, t1;
	int err;

	*out = NULL;
	if (!rp)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rp->fs = fs;
	rp->msg = msg;
	rp->ml = ml;
	err = fs_log_walk(fs, li, pass1, rp, msg, ml);
	if (!err)
		err = fs_log_walk(fs, li, pass2, rp, msg, ml);
	if (!err)
		err = finish(rp);
	if (!err)
		err = collect_open(rp);
	if (!err)
		err = apply_buis(rp);
	if (err) {
		fs_replay_free(rp);
		return err;
	}
	rp->st.sectors = rp->ndata;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rp->st.seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	rp->msg = NULL;
	rp->ml = 0;
	*out = rp;
	return 0;
}

const struct fs_replay_stats *fs_replay_stats(const struct fs_replay *rp)
{
	return &rp->st;
}

uint64_t fs_replay_intents_open(const struct fs_replay *rp)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < FS_INTENT_NR; i++)
		n += rp->st.intents_open[i];
	return n;
}

void fs_replay_install(struct fs_dev *dev, struct fs_replay *rp)
{
	fs_dev_set_read_patch(dev, rp ? fs_replay_patch : NULL, rp);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The log-incompat feature bits (LOG_XATTRS among them) say what the log
 * may hold; the kernel clears them when it leaves a clean log behind
 * (xfs_clear_incompat_log_features at unmount), so the replay that resets
 * the log clears them in the primary superblock too.
 */
static int clear_log_incompat(struct fs_replay *rp)
{
	uint32_t bbs = rp->fs->g.sectsize >> BBSHIFT;
	struct xfs_dsb *d;
	unsigned char *b;
	int err;

	if (!bbs)
		return -EUCLEAN;
	err = buf_get(rp, XFS_SB_DADDR, bbs, &b);
	if (err)
		return err;
	d = (struct xfs_dsb *)b;
	err = 0;
	if (be32(d->sb_magicnum) == XFS_SB_MAGIC && d->sb_features_log_incompat) {
		d->sb_features_log_incompat = 0;
		fs_crc_update(b, bbs << BBSHIFT, FS_SB_CRC_OFF);
		err = buf_put(rp, XFS_SB_DADDR, bbs, b);
	}
	free(b);
	return err;
}

int fs_replay_write(struct fs *fs, struct fs_replay *rp, const struct fs_log_info *li, char *msg,
		    size_t ml)
{
	const struct fs_geom *g = &fs->g;
	uint64_t *secs;
	unsigned char *run = NULL;
	size_t n = 0;
	int err;

	rp->msg = msg;
	rp->ml = ml;
	err = clear_log_incompat(rp);
	rp->msg = NULL;
	rp->ml = 0;
	if (err)
		return err;
	secs = malloc((rp->ndata ? rp->ndata : 1) * sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	for (size_t i = 0; i < rp->sect.cap; i++)
		if (rp->sect.k[i])
			secs[n++] = rp->sect.k[i] - 1;
	qsort(secs, n, sizeof(*secs), cmp_u64);
	run = malloc(1u << 20);
	if (!run) {
		free(secs);
		return -ENOMEM;
	}
	/* sorted, coalesced runs of up to 1 MiB */
	for (size_t i = 0; i < n && !err;) {
		size_t j = i;

		while (j + 1 < n && secs[j + 1] == secs[j] + 1 && (j + 1 - i) < (1u << 20) / BBSIZE)
			j++;
		for (size_t k = i; k <= j; k++)
			memcpy(run + ((k - i) << BBSHIFT),
			       rp->data + (*map_find(&rp->sect, secs[k]) << BBSHIFT), BBSIZE);
		err = fs_dev_write(fs->dev, run, (j - i + 1) << BBSHIFT, secs[i] << BBSHIFT);
		if (err)
			snprintf(msg, ml, "writing replayed sectors %llu+%zu failed: %s",
				 (unsigned long long)secs[i], j - i + 1, strerror(-err));
		i = j + 1;
	}
	free(run);
	free(secs);
	if (!err) {
		err = fs_dev_flush(fs->dev);
		if (err)
			snprintf(msg, ml, "flushing the replayed blocks failed: %s", strerror(-err));
	}
	if (err)
		return err;
	/* the log, now replayed, becomes a clean one past every LSN the replay stamped */
	err = fs_log_write_clean(fs->dev, li->log_off, (uint64_t)li->log_bbs << BBSHIFT,
				 fs_log_lsunit_bytes(&fs->sb), (const unsigned char *)&fs->sb.sb_uuid,
				 li->head_cycle + 1);
	if (!err)
		err = fs_dev_flush(fs->dev);
	if (err)
		snprintf(msg, ml, "resetting the log after replay failed: %s", strerror(-err));
	(void)g;
	return err;
}

void fs_replay_free(struct fs_replay *rp)
{
	if (!rp)
		return;
	map_free(&rp->sect);
	map_free(&rp->cancel);
	map_free(&rp->intents);
	free(rp->ints);
	free(rp->exts);
	free(rp->open);
	for (size_t i = 0; i < rp->nattris; i++)
		free((void *)rp->attris[i].name);
	free(rp->attris);
	free(rp->open_attris);
	free(rp->data);
	free(rp->bufs);
	free(rp->inos);
	free(rp);
}
