/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_VERIFY_H
#define XFSX_VERIFY_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"

/* Every kind of metadata block libfs knows how to verify. */
enum fs_mtype {
	FS_MT_SB,
	FS_MT_AGF,
	FS_MT_AGI,
	FS_MT_AGFL,
	FS_MT_INOBT,               /* inode btree block (IAB3) */
	FS_MT_FINOBT,              /* free inode btree block (FIB3) */
	FS_MT_INODE,               /* one v3 dinode (inodesize bytes) */
	FS_MT_BNOBT,               /* free space by block btree block (AB3B) */
	FS_MT_CNTBT,               /* free space by size btree block (AB3C) */
	FS_MT_RMAPBT,              /* reverse mapping btree block (RMB3) */
	FS_MT_REFCBT,              /* reference count btree block (R3FC) */
	FS_MT_DA_NODE,             /* dir/attr DA3 node block (0x3ebe); vc.ino = owner */
	FS_MT_BMBT,                /* block map btree block (BMA3); c->ino is the owner */
	FS_MT_DIR_BLOCK,           /* single-block directory (XDB3); vc.ino = owner */
	FS_MT_DIR_DATA,            /* directory data block (XDD3) */
	FS_MT_DIR_LEAF1,           /* directory leaf, leaf form (0x3df1) */
	FS_MT_DIR_LEAFN,           /* directory leaf, node form (0x3dff) */
	FS_MT_DIR_FREE,            /* directory free index block (XDF3) */
	FS_MT_ATTR_LEAF,           /* attr3 leaf block (0x3bee) */
	FS_MT_ATTR_RMT,            /* remote attr value block (XARM), one fs block */
	FS_MT_SYMLINK,             /* remote symlink block (XSLM), one fs block */
	FS_MT_DQUOT,               /* one quota record (struct xfs_dqblk) */
	FS_MT_RTBITMAP,            /* realtime bitmap block (no header: v5 before rtgroups) */
	FS_MT_RTSUMMARY,           /* realtime summary block (no header) */
	FS_MT_NR
};

struct fs_inode;

/* What a verifier is told about the block it is looking at. */
struct fs_vctx {
	const struct fs_geom *g;
	struct fs_findings *fl;
	fs_agnumber_t agno;
	fs_daddr_t daddr;
	bool have_log_head;        /* head_lsn is the log's current head */
	uint64_t head_lsn;
	uint64_t ino;              /* FS_MT_INODE: the inode number the buffer should hold */
	/*
	 * FS_MT_INODE: when set, the core as fs_inode_decode gives it, stored
	 * once the field rules ran (left as it was when they did not: a bad
	 * magic or CRC), so a caller need not decode the inode again.
	 */
	struct fs_inode *decoded;
};

/* A reporter at the block a verifier is told about (its inode, when it has one). */
static inline struct fs_reporter fs_vctx_reporter(const struct fs_vctx *c)
{
	return (struct fs_reporter){
		.fl = c->fl, .ag = c->agno, .daddr = (int64_t)c->daddr,
		.ino = c->ino ? (int64_t)c->ino : FS_NONE,
	};
}

/*
 * One row per metadata type, like libxfs' buf_ops: the common checks
 * (magic, CRC, UUID, LSN) run from the row's offsets, then the type's own
 * field rules, each failure reported with the row's code for it.
 */
struct fs_verifier_codes {
	enum fs_code magic, crc, uuid, lsn;
};

struct fs_verifier {
	enum fs_mtype type;
	const char *name;          /* for messages: "AGF" */
	struct fs_verifier_codes codes;  /* of the common checks the row has */
	uint32_t magic;
	size_t magic_off;
	size_t crc_off;            /* SIZE_MAX: none */
	size_t uuid_off;           /* SIZE_MAX: none */
	size_t lsn_off;            /* SIZE_MAX: none */
	/* type-specific rules; returns the number of findings it made */
	int (*verify_fields)(const struct fs_vctx *c, const void *buf, size_t len);
	uint8_t magic_size;        /* bytes of magic at magic_off: 0 means 4, or 2 (inodes) */
};

const struct fs_verifier *fs_verifier_get(enum fs_mtype t);
/*
 * Which of the types in cand[0..n) the block's magic says it is (for a
 * writer that built a block of one of several kinds), or FS_MT_NR.
 */
enum fs_mtype fs_verifier_by_magic(const void *buf, size_t len, const enum fs_mtype *cand,
				   size_t n);

/*
 * Run a row's checks over one block: returns the number of findings made
 * (0 = clean).  A wrong magic stops there: nothing else in the block means
 * anything.
 */
int fs_verify(enum fs_mtype t, const struct fs_vctx *c, const void *buf, size_t len);

/* The type whose magic the block starts with (FS_MT_NR: none). */
enum fs_mtype fs_mtype_by_magic(const void *buf, size_t len);

/*
 * The unit a buffer of a type is checked and checksummed in: an inode, a
 * quota record, a filesystem block (remote xattr values, symlinks), else
 * the whole buffer.
 */
uint32_t fs_verify_unit(const struct fs_geom *g, enum fs_mtype t, uint32_t len);

/* LSN sanity against the log geometry and, when known, the log head. */
bool fs_lsn_ok(const struct fs_vctx *c, uint64_t lsn);

#endif
