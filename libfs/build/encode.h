/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Encoders for the metadata a new filesystem holds: superblock sector, AGF,
 * AGI, AGFL, short- and long-form btree blocks and their records, v3 inodes, the
 * short-form directory, and a log record carrying an unmount record.  Each
 * takes host-order values and leaves a buffer ready to write, CRC included
 * (the *_finish helpers recompute it after further edits).
 */
#ifndef XFSX_ENCODE_H
#define XFSX_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/format/ag.h"
#include "libfs/format/format.h"

/* A superblock sector (sectsize bytes): zeroed, encoded, CRC set. */
void fs_enc_sb(void *buf, size_t sectsize, const struct xfs_sb *sb);

/* AGF / AGI sectors from host-order values; uuid is the metadata UUID. */
void fs_enc_agf(void *buf, size_t sectsize, const struct fs_agf *agf, const unsigned char uuid[16]);
void fs_enc_agi(void *buf, size_t sectsize, const struct fs_agi *agi, const unsigned char uuid[16]);

/*
 * AGFL sector: every slot NULLAGBLOCK except count entries starting at slot
 * first (wrapping), holding blocks[].
 */
void fs_enc_agfl(void *buf, size_t sectsize, uint32_t seqno, const unsigned char uuid[16],
		 uint32_t first, const uint32_t *blocks, uint32_t count);

/* Short-form (per-AG) btree block header; records follow at fs_sblock_rec(). */
void fs_enc_sblock(void *buf, size_t blocksize, uint32_t magic, uint16_t level,
		   uint16_t numrecs, fs_daddr_t daddr, fs_agnumber_t agno,
		   const unsigned char uuid[16]);
void fs_enc_sblock_finish(void *buf, size_t blocksize);
static inline void *fs_sblock_rec(void *buf, size_t recsize, unsigned i)
{
	return (char *)buf + XFS_BTREE_SBLOCK_CRC_LEN + (size_t)i * recsize;
}

/*
 * Long-form (bmbt) btree block header: owner is the inode, siblings
 * NULLFSBLOCK; records follow at fs_lblock_rec().
 */
void fs_enc_lblock(void *buf, size_t blocksize, uint32_t magic, uint16_t level,
		   uint16_t numrecs, fs_daddr_t daddr, fs_ino_t owner,
		   const unsigned char uuid[16]);
void fs_enc_lblock_finish(void *buf, size_t blocksize);
static inline void *fs_lblock_rec(void *buf, size_t recsize, unsigned i)
{
	return (char *)buf + XFS_BTREE_LBLOCK_CRC_LEN + (size_t)i * recsize;
}

void fs_enc_alloc_rec(void *rec, uint32_t start, uint32_t len);
void fs_enc_inobt_rec(void *rec, uint32_t startino, bool sparse, uint16_t holemask, uint8_t count,
		      uint8_t freecount, uint64_t free_mask);
void fs_enc_rmap_rec(void *rec, uint32_t start, uint32_t len, uint64_t owner, uint64_t offset);
/* Reference count record; cow: a CoW staging extent (start gets XFS_REFC_COWFLAG). */
void fs_enc_refc_rec(void *rec, uint32_t start, uint32_t len, uint32_t refcount, bool cow);
/* (bmbt records: fs_bmbt_rec_encode in libfs/format/bmap.h) */

/*
 * A v3 inode that exists but is not in use, as inode chunk initialisation
 * leaves it: magic, version 3, null unlinked pointer, its number, UUID, CRC.
 */
void fs_enc_dinode_free(void *buf, size_t inodesize, fs_ino_t ino, const unsigned char uuid[16]);

/* A timestamp; outside what the inode can hold it is clamped (bigtime: 1901..2486). */
struct fs_dinode_time {
	int64_t sec;
	uint32_t nsec;
};

/*
 * Set an inode's change time, encoded as its own bigtime flag says (the
 * caller refreshes the CRC: fs_enc_dinode_finish).
 */
void fs_enc_dinode_set_ctime(void *buf, const struct fs_dinode_time *t);

/* Fields of an inode in use (times in seconds/nanoseconds since the epoch). */
struct fs_dinode_init {
	uint16_t mode;
	uint8_t format;          /* XFS_DINODE_FMT_* of the data fork */
	uint32_t nlink, uid, gid;
	uint64_t size;
	uint16_t flags;          /* XFS_DIFLAG_* */
	uint64_t flags2;         /* XFS_DIFLAG2_* (bigtime, nrext64 are set from the options) */
	int64_t sec;
	uint32_t nsec;
	uint64_t changecount;
	bool bigtime, nrext64;
	/*
	 * Inodes made from a source (mkfs -p); left zero, the inode is as
	 * above: atime at the epoch, the other times sec/nsec, no blocks.
	 */
	const struct fs_dinode_time *times;  /* atime, mtime, ctime, crtime (4 entries) */
	uint64_t nblocks, nextents;
	uint32_t anextents;
	uint8_t forkoff;         /* attr fork offset in 8-byte units (0: no attr fork) */
	uint8_t aformat;         /* XFS_DINODE_FMT_* of the attr fork (0: extents) */
	uint32_t projid, gen;
};
void fs_enc_dinode(void *buf, size_t inodesize, fs_ino_t ino, const unsigned char uuid[16],
		   const struct fs_dinode_init *in);
/* Data fork start and CRC recompute after the fork was filled in. */
void *fs_dinode_dfork(void *buf);
/* Bytes of the literal area (both forks) of an inode of inodesize bytes. */
size_t fs_dinode_litino(size_t inodesize);
void fs_enc_dinode_finish(void *buf, size_t inodesize);

/*
 * A dquot record as the kernel's dquot repair leaves one it cannot trust:
 * zero usage, limits and timers; magic, version, type (XFS_DQTYPE_*), id,
 * the metadata UUID, CRC.  buf holds one struct xfs_dqblk.
 */
void fs_enc_dqblk(void *buf, uint32_t id, uint8_t type, const unsigned char uuid[16]);

/*
 * Empty short-form directory (no entries, 4-byte parent) into a data fork;
 * returns its size in bytes (the directory inode's di_size).
 */
size_t fs_enc_dir_sf_empty(void *dfork, fs_ino_t parent);

/*
 * The one log record of a clean log at block 0 of a cycle (1 for a freshly
 * formatted log, another for a log reset past metadata LSNs): a record
 * header with LSN and tail (cycle, 0), holding one unmount record, padded
 * to the log stripe unit (lsunit_bytes, 0 for none) with every sector
 * stamped with the cycle.  buf must hold fs_log_first_record_len() bytes;
 * returns that length.
 */
size_t fs_log_first_record_len(uint32_t lsunit_bytes);
size_t fs_enc_log_unmount_record(void *buf, uint32_t lsunit_bytes, const unsigned char uuid[16],
				 uint32_t cycle);

#endif
