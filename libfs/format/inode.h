/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_INODE_H
#define XFSX_INODE_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

struct fs;
struct fs_ioq;
struct fs_inobt_rec;

/* A timestamp as the kernel hands it to user space. */
struct fs_timestamp {
	int64_t sec;
	uint32_t nsec;
};

/*
 * The core of a v3 dinode in host order, every field decoded the way the
 * kernel's xfs_inode_from_disk() reads it: timestamps through the inode's
 * own bigtime flag, extent counters through its own nrext64 flag.
 */
struct fs_inode {
	fs_ino_t ino;              /* as stored in di_ino */
	uint16_t mode;
	uint8_t version;
	uint8_t format, aformat;   /* XFS_DINODE_FMT_* of the data / attr fork */
	uint32_t uid, gid;
	uint32_t nlink;
	uint32_t projid;           /* hi << 16 | lo */
	struct fs_timestamp atime, mtime, ctime, crtime;
	uint64_t size;
	uint64_t nblocks;
	uint32_t extsize;          /* blocks */
	uint32_t cowextsize;       /* blocks */
	uint64_t nextents;         /* data fork, either encoding */
	uint32_t anextents;        /* attr fork, either encoding */
	uint8_t forkoff;           /* attr fork offset in 8-byte units; 0 = no attr fork */
	uint16_t flags;            /* XFS_DIFLAG_* */
	uint64_t flags2;           /* XFS_DIFLAG2_* */
	uint32_t gen;
	uint32_t next_unlinked;
	uint64_t changecount;
	uint64_t lsn;
	uint32_t dev;              /* XFS_DINODE_FMT_DEV: the on-disk (sysv) device number */
	bool bigtime;              /* timestamps are bigtime encoded */
	bool nrext64;              /* large extent counters */
};

/*
 * Decode one on-disk timestamp (the 8 bytes as a big-endian value already
 * converted to host order).  Legacy: signed 32-bit seconds and nanoseconds.
 * Bigtime: unsigned nanoseconds since the bigtime epoch (1901-12-13).
 */
struct fs_timestamp fs_inode_decode_ts(uint64_t raw, bool bigtime);

/* The core of an inode buffer (at least sizeof(struct xfs_dinode) bytes). */
void fs_inode_decode(const void *dinode, struct fs_inode *out);

/* Data and attribute fork geometry, as the XFS_DFORK_* macros define them. */
uint32_t fs_inode_litino(const struct fs_geom *g);
uint32_t fs_inode_fork_size(const struct fs_geom *g, const struct fs_inode *ip, int whichfork);
const void *fs_inode_fork_ptr(const void *dinode, const struct fs_inode *ip, int whichfork);
/* Largest extent count a fork format allows (the kernel's xfs_iext_max_nextents). */
uint64_t fs_inode_max_nextents(bool nrext64, int whichfork);

/* FS_XFLAG_* as the kernel's xfs_ip2xflags() reports them, HASATTR included. */
uint32_t fs_inode_xflags(const struct fs_inode *ip);

/*
 * The device number of a special file as XFS_IOC_BULKSTAT reports it: the
 * on-disk sysv number turned into a Linux dev_t by the kernel, then
 * encoded back with sysv_encode_dev().
 */
uint32_t fs_inode_bulkstat_rdev(uint32_t ondisk_dev);

/*
 * Field rules of a v3 dinode for the verifier table (xfs_dinode_verify and
 * the fork-format checks of xfs_iformat_*): version, inode number, size,
 * mode, fork formats and sizes, extent counters against nblocks, fork
 * offset, extent size hints, flags the features allow.  c->ino is the
 * inode number the buffer should hold.  The common magic/CRC/UUID/LSN
 * checks come from the table row.
 */
int fs_inode_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/*
 * ---- inode chunks on disk: the geometry both inode readers use ----
 *
 * The bulkstat scan below and the check scan's phase 4
 * (scan/phase_inodes.c) read inode chunks their own ways (see inode.c's
 * opening paragraph for why); where a chunk's inodes are, which clusters
 * hold them and where an inode lies in what was read is described here
 * once: phase 4 lists clusters, the bulkstat scan addresses inodes.
 */

/* Byte address on the device of inode agino of AG agno. */
static inline uint64_t fs_inode_byte(const struct fs_geom *g, fs_agnumber_t agno,
				     fs_agino_t agino)
{
	return fs_daddr_to_bytes(fs_agbno_to_daddr(g, agno, fs_agino_to_agbno(g, agino))) +
	       (uint64_t)fs_agino_to_offset(g, agino) * g->inodesize;
}

/* Inode i of a chunk is in one of its sparse holes (holemask: the inobt's ir_holemask). */
static inline bool fs_ichunk_in_hole(uint16_t holemask, unsigned i)
{
	return holemask & (1u << (i / XFS_INODES_PER_HOLEMASK_BIT));
}

/*
 * An inode cluster, the unit the kernel reads inodes in: blocks_per_cluster
 * blocks counted from the chunk's first block (one block when a block
 * holds more than a cluster, and then two chunks), cut at the AG's end.
 */
struct fs_icluster {
	fs_agblock_t agbno;
	uint32_t blocks;
};

/*
 * The clusters holding the inodes of chunk startino of AG agno (those in
 * its sparse holes left out), in disk order; returns how many.  A cluster
 * that would start past the AG's end is left out too.
 */
unsigned fs_ichunk_clusters(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t startino,
			    uint16_t holemask, struct fs_icluster out[XFS_INODES_PER_CHUNK]);

/*
 * Inode agino of AG agno within len bytes read from device byte off into
 * data, or NULL when they do not hold it whole.
 */
static inline const unsigned char *fs_inode_in_read(const struct fs_geom *g, fs_agnumber_t agno,
						    fs_agino_t agino, uint64_t off,
						    const unsigned char *data, uint64_t len)
{
	uint64_t at = fs_inode_byte(g, agno, agino);

	if (at < off || at - off > len || len - (at - off) < g->inodesize)
		return NULL;
	return data + (at - off);
}

/* ---- inode scan: every inode of an AG, chunk by chunk, in inode order ---- */

struct fs_inode_scan_opts {
	size_t window_max;         /* largest single read (default 2 MiB) */
	size_t gap_max;            /* join chunks separated by at most this many bytes (default 256 KiB) */
	size_t batch_bytes;        /* bytes in flight per batch of reads (default 16 MiB) */
	bool free_inodes;          /* also deliver inodes the inobt marks free (not holes) */
};

/* One inode delivered by the scan. */
struct fs_inode_scan_item {
	fs_ino_t ino;
	fs_agnumber_t agno;
	fs_agino_t agino;
	const void *dinode;        /* inodesize bytes; NULL when its chunk could not be read */
	int read_err;              /* negative errno when dinode is NULL */
	bool free;                 /* the inobt says free */
	const struct fs_inobt_rec *rec;
};

/* Returns 0 to continue, nonzero to stop the scan (the value is returned). */
typedef int (*fs_inode_scan_fn)(void *priv, const struct fs_inode_scan_item *it);

struct fs_inode_scan;

/* One scanner per thread: it owns the I/O queue and the read buffers. */
int  fs_inode_scan_create(struct fs *fs, const struct fs_inode_scan_opts *o,
			  struct fs_inode_scan **out);
void fs_inode_scan_destroy(struct fs_inode_scan *s);

/*
 * Scan one range of an AG: read its AGI, walk its inode btree, and for the
 * records whose startino is in [lo, end) (lo 0, end NULLAGINO: the whole
 * AG) read the chunks in coalesced windows and deliver each inode at or
 * after start_agino in inode-number order.  Problems with the AGI, the
 * btree or its records go to fl as findings (those records are skipped).
 * Every range walks the whole inode btree, but only the range with lo 0
 * reports the AGI's and the btree blocks' findings, so ranges that cover
 * the AG report each problem once; ranges let callers cut an AG into
 * pieces of work.  Returns 0, a callback's nonzero value, -EUCLEAN when
 * the AGI cannot be trusted (nothing scanned), or another negative errno
 * on operational failure.
 */
int fs_inode_scan_ag_range(struct fs_inode_scan *s, fs_agnumber_t agno, fs_agino_t start_agino,
			   fs_agino_t lo, fs_agino_t end, struct fs_findings *fl,
			   fs_inode_scan_fn fn, void *priv);

/*
 * The startino of every sound inode btree record of the AG, in btree
 * order, without reading any inode (where to cut it into ranges).  *out
 * belongs to the scanner and is valid until its next call.  Findings are
 * left to the scans; -EUCLEAN when the AGI cannot be trusted.
 */
int fs_inode_scan_ag_chunks(struct fs_inode_scan *s, fs_agnumber_t agno, const fs_agino_t **out,
			    size_t *n);

/* Counters of the scanner's work, cumulative over its AGs. */
struct fs_inode_scan_stats {
	uint64_t chunks, windows, bytes_read, btree_blocks;
};
void fs_inode_scan_get_stats(const struct fs_inode_scan *s, struct fs_inode_scan_stats *st);

#endif
