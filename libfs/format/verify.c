// SPDX-License-Identifier: GPL-2.0
/*
 * The one verifier table: for each metadata type its magic, where it keeps
 * its CRC, UUID and LSN, and its field rules.  Common checks run here from
 * the row, so every type gets them the same way and names the failed check.
 */
#include "libfs/format/verify.h"

#include <string.h>

#include "libfs/format/ag.h"
#include "libfs/format/attr.h"
#include "libfs/format/dquot.h"
#include "libfs/format/symlink.h"
#include "libfs/format/btree.h"
#include "libfs/format/crc.h"
#include "libfs/format/da.h"
#include "libfs/format/dir.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/sb.h"
#include "libfs/format/btree_ag.h"

#define NONE SIZE_MAX

static int verify_sb_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	size_t before = c->fl->n + c->fl->dropped;
	enum fs_sb_state st = fs_sb_verify(buf, len, c->agno, c->fl);

	(void)st;
	return (int)(c->fl->n + c->fl->dropped - before);
}

static int verify_inobt_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(fs_btree_ops_get(FS_BTREE_INO), c, buf, len);
}

static int verify_finobt_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(fs_btree_ops_get(FS_BTREE_FINO), c, buf, len);
}

static int verify_bmbt_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	return fs_btree_block_verify_fields(fs_btree_ops_get(FS_BTREE_BMBT), c, buf, len);
}

/*
 * Realtime bitmap and summary blocks carry no header (before rtgroups): a
 * bitmap block is any bits; a summary counter counts free extents, so it
 * cannot pass the realtime device's block count.  A block is one fs block.
 */
static int verify_rtbitmap_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	(void)buf;
	if (len == c->g->blocksize)
		return 0;
	fs_report(c->fl, FS_C_RT_BITMAP, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
		  "length", FS_U(c->g->blocksize), FS_U(len),
		  "realtime bitmap block is not one filesystem block");
	return 1;
}

static int verify_rtsummary_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int n = 0;

	if (len != c->g->blocksize)
		n++;
	for (size_t off = 0; off + 4 <= len && !n; off += 4) {
		uint32_t v;

		memcpy(&v, p + off, 4);	/* host order, as the kernel keeps it */
		if (v > c->g->rblocks) {
			fs_report(c->fl, FS_C_RT_SUMMARY, c->agno, c->daddr,
				  c->ino ? (int64_t)c->ino : FS_NONE, "counter",
				  "at most the realtime blocks", FS_U(v),
				  "realtime summary counter at byte %zu is larger than the realtime "
				  "device", off);
			return 1;
		}
	}
	if (n)
		fs_report(c->fl, FS_C_RT_SUMMARY, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
			  "length", FS_U(c->g->blocksize), FS_U(len),
			  "realtime summary block is not one filesystem block");
	return n;
}

#define DIR3_UUID_OFF offsetof(struct xfs_dir3_blk_hdr, uuid)
#define DIR3_LSN_OFF  offsetof(struct xfs_dir3_blk_hdr, lsn)
#define SBLOCK_UUID_OFF offsetof(struct xfs_btree_block, bb_u.s.bb_uuid)
#define SBLOCK_LSN_OFF  offsetof(struct xfs_btree_block, bb_u.s.bb_lsn)

static const struct fs_verifier table[FS_MT_NR] = {
	/* no common checks: fs_sb_verify does them all, with codes of its own */
	[FS_MT_SB] = { FS_MT_SB, "superblock", { 0 }, XFS_SB_MAGIC, 0, NONE, NONE, NONE,
		       verify_sb_fields, 0 },
	[FS_MT_AGF] = { FS_MT_AGF, "AGF",
		{ FS_C_AGF_MAGIC, FS_C_AGF_CRC, FS_C_AGF_UUID, FS_C_AGF_LSN }, XFS_AGF_MAGIC,
			offsetof(struct xfs_agf, agf_magicnum),
			offsetof(struct xfs_agf, agf_crc), offsetof(struct xfs_agf, agf_uuid),
			offsetof(struct xfs_agf, agf_lsn), fs_agf_verify_fields, 0 },
	[FS_MT_BNOBT] = { FS_MT_BNOBT, "free space (bno) btree block",
		{ FS_C_BNOBT_MAGIC, FS_C_BNOBT_CRC, FS_C_BNOBT_UUID, FS_C_BNOBT_LSN }, XFS_ABTB_CRC_MAGIC,
			  offsetof(struct xfs_btree_block, bb_magic), XFS_BTREE_SBLOCK_CRC_OFF,
			  offsetof(struct xfs_btree_block, bb_u.s.bb_uuid),
			  offsetof(struct xfs_btree_block, bb_u.s.bb_lsn), fs_bnobt_verify_fields, 0 },
	[FS_MT_CNTBT] = { FS_MT_CNTBT, "free space (cnt) btree block",
		{ FS_C_CNTBT_MAGIC, FS_C_CNTBT_CRC, FS_C_CNTBT_UUID, FS_C_CNTBT_LSN }, XFS_ABTC_CRC_MAGIC,
			  offsetof(struct xfs_btree_block, bb_magic), XFS_BTREE_SBLOCK_CRC_OFF,
			  offsetof(struct xfs_btree_block, bb_u.s.bb_uuid),
			  offsetof(struct xfs_btree_block, bb_u.s.bb_lsn), fs_cntbt_verify_fields, 0 },
	[FS_MT_RMAPBT] = { FS_MT_RMAPBT, "reverse mapping btree block",
		{ FS_C_RMAPBT_MAGIC, FS_C_RMAPBT_CRC, FS_C_RMAPBT_UUID, FS_C_RMAPBT_LSN }, XFS_RMAP_CRC_MAGIC,
			   offsetof(struct xfs_btree_block, bb_magic), XFS_BTREE_SBLOCK_CRC_OFF,
			   offsetof(struct xfs_btree_block, bb_u.s.bb_uuid),
			   offsetof(struct xfs_btree_block, bb_u.s.bb_lsn), fs_rmapbt_verify_fields, 0 },
	[FS_MT_REFCBT] = { FS_MT_REFCBT, "reference count btree block",
		{ FS_C_REFCBT_MAGIC, FS_C_REFCBT_CRC, FS_C_REFCBT_UUID, FS_C_REFCBT_LSN }, XFS_REFC_CRC_MAGIC,
			   offsetof(struct xfs_btree_block, bb_magic), XFS_BTREE_SBLOCK_CRC_OFF,
			   offsetof(struct xfs_btree_block, bb_u.s.bb_uuid),
			   offsetof(struct xfs_btree_block, bb_u.s.bb_lsn), fs_refcbt_verify_fields, 0 },
	[FS_MT_AGI] = { FS_MT_AGI, "AGI",
		{ FS_C_AGI_MAGIC, FS_C_AGI_CRC, FS_C_AGI_UUID, FS_C_AGI_LSN }, XFS_AGI_MAGIC,
			offsetof(struct xfs_agi, agi_magicnum),
			offsetof(struct xfs_agi, agi_crc), offsetof(struct xfs_agi, agi_uuid),
			offsetof(struct xfs_agi, agi_lsn), fs_agi_verify_fields, 0 },
	[FS_MT_AGFL] = { FS_MT_AGFL, "AGFL",
		{ FS_C_AGFL_MAGIC, FS_C_AGFL_CRC, FS_C_AGFL_UUID, FS_C_AGFL_LSN }, XFS_AGFL_MAGIC,
			 offsetof(struct xfs_agfl, agfl_magicnum), offsetof(struct xfs_agfl, agfl_crc),
			 offsetof(struct xfs_agfl, agfl_uuid), offsetof(struct xfs_agfl, agfl_lsn),
			 fs_agfl_verify_fields, 0 },
	[FS_MT_INOBT] = { FS_MT_INOBT, "inode btree block",
		{ FS_C_INOBT_MAGIC, FS_C_INOBT_CRC, FS_C_INOBT_UUID, FS_C_INOBT_LSN }, XFS_IBT_CRC_MAGIC, 0,
			  XFS_BTREE_SBLOCK_CRC_OFF, SBLOCK_UUID_OFF, SBLOCK_LSN_OFF,
			  verify_inobt_fields, 0 },
	[FS_MT_FINOBT] = { FS_MT_FINOBT, "free inode btree block",
		{ FS_C_FINOBT_MAGIC, FS_C_FINOBT_CRC, FS_C_FINOBT_UUID, FS_C_FINOBT_LSN }, XFS_FIBT_CRC_MAGIC, 0,
			   XFS_BTREE_SBLOCK_CRC_OFF, SBLOCK_UUID_OFF, SBLOCK_LSN_OFF,
			   verify_finobt_fields, 0 },
	[FS_MT_BMBT] = { FS_MT_BMBT, "block map btree block",
		{ FS_C_BMBT_MAGIC, FS_C_BMBT_CRC, FS_C_BMBT_UUID, FS_C_BMBT_LSN }, XFS_BMAP_CRC_MAGIC,
			 offsetof(struct xfs_btree_block, bb_magic), XFS_BTREE_LBLOCK_CRC_OFF,
			 offsetof(struct xfs_btree_block, bb_u.l.bb_uuid),
			 offsetof(struct xfs_btree_block, bb_u.l.bb_lsn), verify_bmbt_fields, 0 },
	[FS_MT_INODE] = { FS_MT_INODE, "inode",
		{ FS_C_INODE_MAGIC, FS_C_INODE_CRC, FS_C_INODE_UUID, FS_C_INODE_LSN }, XFS_DINODE_MAGIC,
			  offsetof(struct xfs_dinode, di_magic), XFS_DINODE_CRC_OFF,
			  offsetof(struct xfs_dinode, di_uuid), offsetof(struct xfs_dinode, di_lsn),
			  fs_inode_verify_fields, 2 },
	[FS_MT_DA_NODE] = { FS_MT_DA_NODE, "DA node block",
		{ FS_C_DA_MAGIC, FS_C_DA_CRC, FS_C_DA_UUID, FS_C_DA_LSN }, XFS_DA3_NODE_MAGIC,
			    offsetof(struct xfs_da3_blkinfo, hdr.magic), XFS_DA3_NODE_CRC_OFF,
			    offsetof(struct xfs_da3_blkinfo, uuid), offsetof(struct xfs_da3_blkinfo, lsn),
			    fs_da3_node_verify_fields, 2 },
	[FS_MT_DIR_BLOCK] = { FS_MT_DIR_BLOCK, "directory block",
		{ FS_C_DIR_MAGIC, FS_C_DIR_CRC, FS_C_DIR_UUID, FS_C_DIR_LSN }, XFS_DIR3_BLOCK_MAGIC, 0,
			      XFS_DIR3_DATA_CRC_OFF, DIR3_UUID_OFF, DIR3_LSN_OFF,
			      fs_dir3_data_verify_fields, 0 },
	[FS_MT_DIR_DATA] = { FS_MT_DIR_DATA, "directory data block",
		{ FS_C_DIR_MAGIC, FS_C_DIR_CRC, FS_C_DIR_UUID, FS_C_DIR_LSN }, XFS_DIR3_DATA_MAGIC, 0,
			     XFS_DIR3_DATA_CRC_OFF, DIR3_UUID_OFF, DIR3_LSN_OFF,
			     fs_dir3_data_verify_fields, 0 },
	[FS_MT_DIR_LEAF1] = { FS_MT_DIR_LEAF1, "directory leaf block",
		{ FS_C_DIR_MAGIC, FS_C_DIR_CRC, FS_C_DIR_UUID, FS_C_DIR_LSN }, XFS_DIR3_LEAF1_MAGIC,
			      offsetof(struct xfs_da3_blkinfo, hdr.magic), XFS_DIR3_LEAF_CRC_OFF,
			      offsetof(struct xfs_da3_blkinfo, uuid), offsetof(struct xfs_da3_blkinfo, lsn),
			      fs_dir3_leaf_verify_fields, 2 },
	[FS_MT_DIR_LEAFN] = { FS_MT_DIR_LEAFN, "directory node leaf block",
		{ FS_C_DIR_MAGIC, FS_C_DIR_CRC, FS_C_DIR_UUID, FS_C_DIR_LSN }, XFS_DIR3_LEAFN_MAGIC,
			      offsetof(struct xfs_da3_blkinfo, hdr.magic), XFS_DIR3_LEAF_CRC_OFF,
			      offsetof(struct xfs_da3_blkinfo, uuid), offsetof(struct xfs_da3_blkinfo, lsn),
			      fs_dir3_leaf_verify_fields, 2 },
	[FS_MT_DIR_FREE] = { FS_MT_DIR_FREE, "directory free index block",
		{ FS_C_DIR_MAGIC, FS_C_DIR_CRC, FS_C_DIR_UUID, FS_C_DIR_LSN }, XFS_DIR3_FREE_MAGIC, 0,
			     XFS_DIR3_FREE_CRC_OFF, DIR3_UUID_OFF, DIR3_LSN_OFF,
			     fs_dir3_free_verify_fields, 0 },
	[FS_MT_ATTR_LEAF] = { FS_MT_ATTR_LEAF, "attr leaf block",
		{ FS_C_ATTR_MAGIC, FS_C_ATTR_CRC, FS_C_ATTR_UUID, FS_C_ATTR_LSN }, XFS_ATTR3_LEAF_MAGIC,
			      offsetof(struct xfs_attr3_leaf_hdr, info.hdr.magic),
			      XFS_ATTR3_LEAF_CRC_OFF, offsetof(struct xfs_attr3_leaf_hdr, info.uuid),
			      offsetof(struct xfs_attr3_leaf_hdr, info.lsn),
			      fs_attr_leaf_verify_fields, 2 },
	[FS_MT_ATTR_RMT] = { FS_MT_ATTR_RMT, "remote attr value block",
		{ FS_C_ATTRRMT_MAGIC, FS_C_ATTRRMT_CRC, FS_C_ATTRRMT_UUID, FS_C_ATTRRMT_LSN },
			     XFS_ATTR3_RMT_MAGIC, offsetof(struct xfs_attr3_rmt_hdr, rm_magic),
			     XFS_ATTR3_RMT_CRC_OFF, offsetof(struct xfs_attr3_rmt_hdr, rm_uuid),
			     NONE /* its own rule: see fs_attr_rmt_verify_fields */,
			     fs_attr_rmt_verify_fields, 0 },
	[FS_MT_SYMLINK] = { FS_MT_SYMLINK, "remote symlink block",
		{ FS_C_SYMLINK_MAGIC, FS_C_SYMLINK_CRC, FS_C_SYMLINK_UUID, FS_C_SYMLINK_LSN }, XFS_SYMLINK_MAGIC,
			    offsetof(struct xfs_dsymlink_hdr, sl_magic), XFS_SYMLINK_CRC_OFF,
			    offsetof(struct xfs_dsymlink_hdr, sl_uuid),
			    offsetof(struct xfs_dsymlink_hdr, sl_lsn), fs_symlink_rmt_verify_fields, 0 },
	[FS_MT_DQUOT] = { FS_MT_DQUOT, "dquot",
		{ FS_C_DQUOT_MAGIC, FS_C_DQUOT_CRC, FS_C_DQUOT_UUID, FS_C_DQUOT_LSN }, XFS_DQUOT_MAGIC,
			  offsetof(struct xfs_disk_dquot, d_magic), XFS_DQUOT_CRC_OFF,
			  offsetof(struct xfs_dqblk, dd_uuid), offsetof(struct xfs_dqblk, dd_lsn),
			  fs_dquot_verify_fields, 2 },
	/* no magic, CRC, UUID or LSN: only their own rules (crc_off NONE) */
	[FS_MT_RTBITMAP] = { FS_MT_RTBITMAP, "realtime bitmap block", { 0 }, 0, NONE, NONE, NONE,
			     NONE, verify_rtbitmap_fields, 0 },
	[FS_MT_RTSUMMARY] = { FS_MT_RTSUMMARY, "realtime summary block", { 0 }, 0, NONE, NONE,
			      NONE, NONE, verify_rtsummary_fields, 0 },
};

enum fs_mtype fs_verifier_by_magic(const void *buf, size_t len, const enum fs_mtype *cand,
				   size_t n)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < n; i++) {
		const struct fs_verifier *v = fs_verifier_get(cand[i]);
		size_t w = v && v->magic_size ? v->magic_size : 4;

		if (!v || v->magic_off == NONE || v->magic_off + w > len)
			continue;
		if ((w == 2 ? get_be16(p + v->magic_off) : get_be32(p + v->magic_off)) == v->magic)
			return cand[i];
	}
	return FS_MT_NR;
}

const struct fs_verifier *fs_verifier_get(enum fs_mtype t)
{
	return t < FS_MT_NR ? &table[t] : NULL;
}

bool fs_lsn_ok(const struct fs_vctx *c, uint64_t lsn)
{
	uint32_t cycle = fs_lsn_cycle(lsn), block = fs_lsn_block(lsn);
	uint64_t log_bbs;

	/*
	 * 0 is "never logged"; NULLCOMMITLSN is what xfs_repair (and mkfs) stamp
	 * into headers they write outside the log (the AGFL above all): the
	 * kernel's xfs_log_check_lsn lets it through by rule, so do we.
	 */
	if (lsn == 0 || lsn == (uint64_t)NULLCOMMITLSN)
		return true;
	log_bbs = (uint64_t)c->g->logblocks << (c->g->blocklog - FS_BBSHIFT);
	if (cycle == 0 || block >= log_bbs)
		return false;
	if (c->have_log_head) {
		uint32_t hc = fs_lsn_cycle(c->head_lsn), hb = fs_lsn_block(c->head_lsn);
		if (cycle > hc || (cycle == hc && block > hb))
			return false;
	}
	return true;
}


int fs_verify(enum fs_mtype t, const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_verifier *v = fs_verifier_get(t);
	const unsigned char *p = buf;
	/* inode verifiers name the inode; 0 is never an inode number */
	int64_t ino = c->ino ? (int64_t)c->ino : FS_NONE;
	uint32_t magic = 0;
	size_t msize;
	int n = 0;

	if (!v || !v->verify_fields)
		return 0;
	if (v->crc_off == NONE)		/* self-contained (superblock) */
		return v->verify_fields(c, buf, len);

	msize = v->magic_size ? v->magic_size : 4;
	if (len >= v->magic_off + msize)
		magic = msize == 2 ? get_be16(p + v->magic_off) : get_be32(p + v->magic_off);
	if (len < v->magic_off + msize || magic != v->magic) {
		fs_report(c->fl, v->codes.magic, c->agno, c->daddr, ino, "magicnum", FS_X(v->magic),
			  len >= v->magic_off + msize ? FS_X(magic) : "short buffer",
			  "%s magic number is wrong", v->name);
		return 1;
	}
	if (!fs_crc_ok(buf, len, v->crc_off)) {
		fs_report(c->fl, v->codes.crc, c->agno, c->daddr, ino, "crc",
			  FS_X(fs_crc_compute(buf, len, v->crc_off)),
			  /* a buffer too short to hold the CRC field has nothing stored to show */
			  v->crc_off + 4 <= len ? FS_X(fs_crc_stored(buf, v->crc_off)) : "short buffer",
			  "%s CRC does not match its contents", v->name);
		n++;
	}
	if (v->uuid_off != NONE && len >= v->uuid_off + 16 &&
	    memcmp(p + v->uuid_off, c->g->meta_uuid, 16)) {
		fs_report(c->fl, v->codes.uuid, c->agno, c->daddr, ino, "uuid", NULL, NULL,
			  "%s UUID does not match the filesystem", v->name);
		n++;
	}
	if (v->lsn_off != NONE && len >= v->lsn_off + 8 && !fs_lsn_ok(c, get_be64(p + v->lsn_off))) {
		uint64_t lsn = get_be64(p + v->lsn_off);
		char found[40];

		snprintf(found, sizeof(found), "%u/%u", fs_lsn_cycle(lsn), fs_lsn_block(lsn));
		fs_report(c->fl, v->codes.lsn, c->agno, c->daddr, ino, "lsn",
			  c->have_log_head ? "at or before the log head" : "inside the log", found,
			  "%s LSN (cycle/block) is beyond the log", v->name);
		n++;
	}
	return n + v->verify_fields(c, buf, len);
}

enum fs_mtype fs_mtype_by_magic(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (len >= 4 && get_be32(p) == XFS_SB_MAGIC)
		return FS_MT_SB;
	for (int t = 0; t < FS_MT_NR; t++) {
		const struct fs_verifier *v = &table[t];
		size_t msize = v->magic_size ? v->magic_size : 4;

		if (t == FS_MT_SB || v->magic_off == NONE || v->magic_off + msize > len)
			continue;
		if ((msize == 2 ? get_be16(p + v->magic_off) : get_be32(p + v->magic_off)) == v->magic)
			return (enum fs_mtype)t;
	}
	return FS_MT_NR;
}

uint32_t fs_verify_unit(const struct fs_geom *g, enum fs_mtype t, uint32_t len)
{
	uint32_t u = len;

	if (t == FS_MT_INODE)
		u = g->inodesize;
	else if (t == FS_MT_DQUOT)
		u = sizeof(struct xfs_dqblk);
	else if (t == FS_MT_ATTR_RMT)
		u = g->blocksize;	/* a header a block; a remote symlink has one an extent */
	return u && u < len ? u : len;
}
