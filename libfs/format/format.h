/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk format as xfsprogs' installed headers define it, plus the unit
 * conversions every layer needs.  Layouts, magics and feature bits are never
 * retyped here: they come from <xfs/xfs_format.h> and friends (xfslibs-dev).
 */
#ifndef XFSX_FORMAT_H
#define XFSX_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <xfs/xfs.h>
#include <xfs/xfs_format.h>
#include <xfs/xfs_da_format.h>
#include <xfs/xfs_log_format.h>

/*
 * Parent pointers and exchange-range (xfsprogs 6.10, Linux 6.10): what
 * older installed headers lack, named and valued as the kernel's
 * xfs_format.h, xfs_da_format.h and xfs_log_format.h have them.  Newer
 * headers define them and these yield.
 */
#ifndef XFS_SB_FEAT_INCOMPAT_EXCHRANGE
#define XFS_SB_FEAT_INCOMPAT_EXCHRANGE	(1 << 6)	/* exchangerange supported */
#endif
#ifndef XFS_SB_FEAT_INCOMPAT_PARENT
#define XFS_SB_FEAT_INCOMPAT_PARENT	(1 << 7)	/* parent pointers */
#endif
#ifndef XFS_ATTR_PARENT
#define XFS_ATTR_PARENT_BIT	3	/* parent pointer attrs */
#define XFS_ATTR_PARENT		(1u << XFS_ATTR_PARENT_BIT)
/* a parent pointer's attr value: the directory naming the file (its name is the attr's) */
struct xfs_parent_rec {
	__be64	p_ino;
	__be32	p_gen;
} __attribute__((packed));
#endif
#ifndef XFS_LI_XMI
#define XFS_LI_XMI		0x1248	/* mapping exchange intent */
#define XFS_LI_XMD		0x1249	/* mapping exchange done */
#endif
#ifndef XFS_ATTRI_OP_FLAGS_PPTR_SET
#define XFS_ATTRI_OP_FLAGS_PPTR_SET	4	/* Set parent pointer */
#define XFS_ATTRI_OP_FLAGS_PPTR_REMOVE	5	/* Remove parent pointer */
#define XFS_ATTRI_OP_FLAGS_PPTR_REPLACE	6	/* Replace parent pointer */
#endif
/*
 * The exchange-range intent and done items (xfs_log_format.h since 6.10):
 * the remaining range of a mapping exchange between two files' forks.
 */
#ifndef XFS_EXCHMAPS_LOGGED_FLAGS
struct xfs_xmi_log_format {
	uint16_t		xmi_type;	/* xmi log item type */
	uint16_t		xmi_size;	/* size of this item */
	uint32_t		__pad;		/* must be zero */
	uint64_t		xmi_id;		/* xmi identifier */
	uint64_t		xmi_inode1;	/* inumber of first file */
	uint64_t		xmi_inode2;	/* inumber of second file */
	uint32_t		xmi_igen1;	/* generation of first file */
	uint32_t		xmi_igen2;	/* generation of second file */
	uint64_t		xmi_startoff1;	/* block offset into file1 */
	uint64_t		xmi_startoff2;	/* block offset into file2 */
	uint64_t		xmi_blockcount;	/* number of blocks */
	uint64_t		xmi_flags;	/* XFS_EXCHMAPS_* */
	int64_t			xmi_isize1;	/* intended file1 size */
	int64_t			xmi_isize2;	/* intended file2 size */
};
#define XFS_EXCHMAPS_ATTR_FORK		(1ULL << 0)
#define XFS_EXCHMAPS_SET_SIZES		(1ULL << 1)
#define XFS_EXCHMAPS_INO1_WRITTEN	(1ULL << 2)
#define XFS_EXCHMAPS_CLEAR_INO1_REFLINK	(1ULL << 3)
#define XFS_EXCHMAPS_CLEAR_INO2_REFLINK	(1ULL << 4)
#define XFS_EXCHMAPS_LOGGED_FLAGS	(XFS_EXCHMAPS_ATTR_FORK | \
					 XFS_EXCHMAPS_SET_SIZES | \
					 XFS_EXCHMAPS_INO1_WRITTEN | \
					 XFS_EXCHMAPS_CLEAR_INO1_REFLINK | \
					 XFS_EXCHMAPS_CLEAR_INO2_REFLINK)
struct xfs_xmd_log_format {
	uint16_t		xmd_type;	/* xmd log item type */
	uint16_t		xmd_size;	/* size of this item */
	uint32_t		__pad;
	uint64_t		xmd_xmi_id;	/* id of corresponding xmi */
};
#endif


/* Units: a daddr is a 512-byte sector, a fsblock is (agno << agblklog | agbno). */
typedef uint64_t fs_daddr_t;
typedef uint64_t fs_fsblock_t;
typedef uint32_t fs_agblock_t;
typedef uint32_t fs_agnumber_t;
typedef uint32_t fs_agino_t;
typedef uint64_t fs_ino_t;

#define FS_BBSHIFT 9
#define FS_BBSIZE  (1u << FS_BBSHIFT)

/* Sizes of the on-disk structures, from the headers' own types. */
#define FS_DSB_SIZE   sizeof(struct xfs_dsb)
#define FS_SB_CRC_OFF offsetof(struct xfs_dsb, sb_crc)

/*
 * Everything later layers derive from a superblock: one struct, filled once
 * by fs_geom_derive() and read everywhere.
 */
struct fs_geom {
	uint32_t blocksize, blocklog;
	uint32_t sectsize, sectlog;
	uint32_t inodesize, inodelog;
	uint32_t inopblock, inopblog;
	uint32_t agblocks, agblklog;
	uint32_t agcount;
	uint32_t last_ag_blocks;        /* the last AG may be shorter */
	uint64_t dblocks;
	uint32_t dirblksize, dirblklog; /* directory block in bytes / log2 blocks */
	uint32_t dirblkfsbs;            /* directory block in fs blocks */
	uint32_t agino_log;             /* bits of an AG inode number */
	uint32_t inodes_per_chunk;      /* XFS_INODES_PER_CHUNK */
	uint32_t blocks_per_chunk;      /* fs blocks holding one full chunk */
	uint32_t inoalign;              /* sb_inoalignmt, in blocks (0 = none) */
	uint32_t spino_align;           /* sparse chunk alignment, blocks */
	uint32_t inode_cluster_size;    /* bytes the kernel reads inodes in */
	uint32_t blocks_per_cluster;
	uint32_t cluster_align;         /* chunk alignment in blocks (1 = none) */
	uint32_t ag_hdr_blocks;         /* blocks taken by sb/agf/agi/agfl at the AG start */
	uint32_t agfl_size;             /* slots in the AGFL */
	uint64_t logstart;              /* fsblock, 0 = external log */
	uint32_t logblocks;
	uint32_t logsectsize;
	bool     log_internal;
	uint32_t log_agno, log_agbno;
	uint64_t rootino, rbmino, rsumino;
	uint64_t rblocks;               /* realtime section, 0 = none */
	/* maximum btree heights this geometry allows */
	uint32_t alloc_maxlevels, inobt_maxlevels, rmap_maxlevels, refc_maxlevels;
	uint32_t bmbt_maxlevels_data, bmbt_maxlevels_attr;
	/* feature summary */
	bool crc, ftype, finobt, spinodes, rmapbt, reflink, inobtcount, bigtime,
	     nrext64, meta_uuid_feat, needsrepair, lazysbcount, attr2, projid32,
	     quota;
	bool parent;                    /* parent pointers: every link has an xattr on its file */
	bool exchrange;                 /* exchange-range (file mapping exchange log intents) */
	bool asciici;                   /* ascii-ci names: directory hashes fold case */
	unsigned char uuid[16];
	unsigned char meta_uuid[16];    /* what metadata blocks are stamped with */
};

static inline fs_daddr_t fs_agbno_to_daddr(const struct fs_geom *g,
					   fs_agnumber_t agno, fs_agblock_t agbno)
{
	return ((uint64_t)agno * g->agblocks + agbno) << (g->blocklog - FS_BBSHIFT);
}

static inline fs_daddr_t fs_ag_daddr(const struct fs_geom *g, fs_agnumber_t agno)
{
	return fs_agbno_to_daddr(g, agno, 0);
}

static inline uint64_t fs_daddr_to_bytes(fs_daddr_t d) { return d << FS_BBSHIFT; }

static inline uint32_t fs_ag_blocks(const struct fs_geom *g, fs_agnumber_t agno)
{
	return agno == g->agcount - 1 ? g->last_ag_blocks : g->agblocks;
}

static inline fs_agnumber_t fs_fsb_to_agno(const struct fs_geom *g, fs_fsblock_t fsb)
{
	return (fs_agnumber_t)(fsb >> g->agblklog);
}

static inline fs_agblock_t fs_fsb_to_agbno(const struct fs_geom *g, fs_fsblock_t fsb)
{
	return (fs_agblock_t)(fsb & ((1ull << g->agblklog) - 1));
}

static inline fs_fsblock_t fs_agbno_to_fsb(const struct fs_geom *g,
					   fs_agnumber_t agno, fs_agblock_t agbno)
{
	return ((uint64_t)agno << g->agblklog) | agbno;
}

static inline fs_daddr_t fs_fsb_to_daddr(const struct fs_geom *g, fs_fsblock_t fsb)
{
	return fs_agbno_to_daddr(g, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb));
}

/* A fsblock names a real block: its AG exists and the block is inside it. */
static inline bool fs_fsb_valid(const struct fs_geom *g, fs_fsblock_t fsb)
{
	fs_agnumber_t agno = fs_fsb_to_agno(g, fsb);
	return agno < g->agcount && fs_fsb_to_agbno(g, fsb) < fs_ag_blocks(g, agno);
}

static inline fs_agnumber_t fs_ino_to_agno(const struct fs_geom *g, fs_ino_t ino)
{
	return (fs_agnumber_t)(ino >> g->agino_log);
}

static inline fs_agino_t fs_ino_to_agino(const struct fs_geom *g, fs_ino_t ino)
{
	return (fs_agino_t)(ino & ((1ull << g->agino_log) - 1));
}

static inline fs_ino_t fs_agino_to_ino(const struct fs_geom *g, fs_agnumber_t agno,
				       fs_agino_t agino)
{
	return ((fs_ino_t)agno << g->agino_log) | agino;
}

static inline fs_agblock_t fs_agino_to_agbno(const struct fs_geom *g, fs_agino_t agino)
{
	return agino >> g->inopblog;
}

static inline fs_agino_t fs_agbno_to_agino(const struct fs_geom *g, fs_agblock_t agbno)
{
	return (fs_agino_t)agbno << g->inopblog;
}

/* The AG block of a disk address known to lie in AG agno. */
static inline fs_agblock_t fs_daddr_to_agbno(const struct fs_geom *g, fs_agnumber_t agno,
					     fs_daddr_t d)
{
	return (fs_agblock_t)((d - fs_agbno_to_daddr(g, agno, 0)) >> (g->blocklog - FS_BBSHIFT));
}

static inline uint32_t fs_agino_to_offset(const struct fs_geom *g, fs_agino_t agino)
{
	return agino & (g->inopblock - 1);
}

/* The sector an inode's core starts in (inodes are sector-aligned in their block). */
static inline fs_daddr_t fs_ino_to_daddr(const struct fs_geom *g, fs_ino_t ino)
{
	fs_agino_t agino = fs_ino_to_agino(g, ino);

	return fs_agbno_to_daddr(g, fs_ino_to_agno(g, ino), fs_agino_to_agbno(g, agino)) +
	       (((uint64_t)fs_agino_to_offset(g, agino) << g->inodelog) >> FS_BBSHIFT);
}

/*
 * An AG inode number can name an inode: it lies in a block past the AG
 * headers and before the AG's end (the kernel's xfs_verify_agino range).
 */
bool fs_agino_valid(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t agino);
bool fs_ino_valid(const struct fs_geom *g, fs_ino_t ino);

/* Log sequence numbers: cycle in the high 32 bits, block (in BBs) in the low. */
static inline uint32_t fs_lsn_cycle(uint64_t lsn) { return (uint32_t)(lsn >> 32); }
static inline uint32_t fs_lsn_block(uint64_t lsn) { return (uint32_t)lsn; }

#endif
