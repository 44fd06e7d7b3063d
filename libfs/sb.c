// SPDX-License-Identifier: GPL-2.0
/*
 * Superblocks: decode and encode every v5 field, verify one copy against
 * the rules the kernel and xfs_repair apply, compare secondaries with the
 * primary, and derive the geometry every other layer works from.
 */
#include "libfs/sb.h"

#include <errno.h>
#include <string.h>

#include "libfs/crc.h"
#include "libfs/endian.h"

/*
 * Every scalar superblock field with its width in bits, in on-disk order:
 * one list, expanded once to decode and once to encode, so the two can
 * never disagree about a field.  8-bit fields need no swapping.
 */
#define SB_SCALAR_FIELDS(X) \
	X(magicnum, 32) X(blocksize, 32) X(dblocks, 64) X(rblocks, 64) \
	X(rextents, 64) X(logstart, 64) X(rootino, 64) X(rbmino, 64) \
	X(rsumino, 64) X(rextsize, 32) X(agblocks, 32) X(agcount, 32) \
	X(rbmblocks, 32) X(logblocks, 32) X(versionnum, 16) X(sectsize, 16) \
	X(inodesize, 16) X(inopblock, 16) X(blocklog, 8) X(sectlog, 8) \
	X(inodelog, 8) X(inopblog, 8) X(agblklog, 8) X(rextslog, 8) \
	X(inprogress, 8) X(imax_pct, 8) X(icount, 64) X(ifree, 64) \
	X(fdblocks, 64) X(frextents, 64) X(uquotino, 64) X(gquotino, 64) \
	X(qflags, 16) X(flags, 8) X(shared_vn, 8) X(inoalignmt, 32) \
	X(unit, 32) X(width, 32) X(dirblklog, 8) X(logsectlog, 8) \
	X(logsectsize, 16) X(logsunit, 32) X(features2, 32) \
	X(features_compat, 32) X(features_ro_compat, 32) X(features_incompat, 32) \
	X(features_log_incompat, 32) X(spino_align, 32) X(pquotino, 64) X(lsn, 64)

static inline uint8_t be8(uint8_t v) { return v; }
static inline uint8_t to_be8(uint8_t v) { return v; }

/* The byte arrays (UUIDs, label) copied as they are. */
static void sb_copy_bytes(void *to_uuid, void *to_fname, void *to_meta, const void *from_uuid,
			  const void *from_fname, const void *from_meta)
{
	memcpy(to_uuid, from_uuid, sizeof(uuid_t));
	memcpy(to_fname, from_fname, XFSLABEL_MAX);
	memcpy(to_meta, from_meta, sizeof(uuid_t));
}

void fs_sb_from_disk(struct xfs_sb *to, const struct xfs_dsb *from)
{
	memset(to, 0, sizeof(*to));
#define SB_DECODE(f, w) to->sb_##f = be##w(from->sb_##f);
	SB_SCALAR_FIELDS(SB_DECODE)
#undef SB_DECODE
	to->sb_bad_features2 = be32(from->sb_bad_features2);
	to->sb_crc = fs_crc_stored(from, FS_SB_CRC_OFF);
	sb_copy_bytes(&to->sb_uuid, to->sb_fname, &to->sb_meta_uuid, &from->sb_uuid,
		      from->sb_fname, &from->sb_meta_uuid);
}

int fs_sb_copy_field(struct xfs_sb *to, const struct xfs_sb *from, const char *name)
{
#define SB_COPY(f, w) if (!strcmp(name, #f)) { to->sb_##f = from->sb_##f; return 0; }
	SB_SCALAR_FIELDS(SB_COPY)
#undef SB_COPY
	if (!strcmp(name, "uuid")) {
		memcpy(&to->sb_uuid, &from->sb_uuid, sizeof(to->sb_uuid));
		return 0;
	}
	if (!strcmp(name, "meta_uuid")) {
		memcpy(&to->sb_meta_uuid, &from->sb_meta_uuid, sizeof(to->sb_meta_uuid));
		return 0;
	}
	return -ENOENT;
}

void fs_sb_to_disk(struct xfs_dsb *to, const struct xfs_sb *from)
{
	memset(to, 0, sizeof(*to));
#define SB_ENCODE(f, w) to->sb_##f = to_be##w(from->sb_##f);
	SB_SCALAR_FIELDS(SB_ENCODE)
#undef SB_ENCODE
	/* the kernel always writes bad_features2 as a copy of features2 */
	to->sb_bad_features2 = to_be32(from->sb_features2);
	sb_copy_bytes(&to->sb_uuid, to->sb_fname, &to->sb_meta_uuid, &from->sb_uuid,
		      from->sb_fname, &from->sb_meta_uuid);
}

uint32_t fs_sb_unknown_incompat(const struct xfs_sb *sb)
{
	return sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_UNKNOWN;
}

uint32_t fs_sb_unknown_ro_compat(const struct xfs_sb *sb)
{
	return sb->sb_features_ro_compat & XFS_SB_FEAT_RO_COMPAT_UNKNOWN;
}

static unsigned log2_roundup32(uint32_t v)
{
	unsigned l = 0;
	while (l < 32 && (1ull << l) < v)
		l++;
	return l;
}

static unsigned highbit32(uint32_t v)
{
	return v ? 31 - __builtin_clz(v) : 0;
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* Height a btree needs to index `records` at the given minimum fill. */
static uint32_t btree_maxlevels(const uint32_t minrecs[2], uint64_t records)
{
	uint64_t blocks = (records + minrecs[0] - 1) / minrecs[0];
	uint32_t h = 1;

	while (blocks > 1) {
		blocks = (blocks + minrecs[1] - 1) / minrecs[1];
		h++;
	}
	return h;
}

/*
 * Height of a fork's bmbt, root in the inode included, as the kernel's
 * xfs_bmap_compute_maxlevels counts it: a level that fits in the inode root
 * (MINDBTPTRS pointers at least) is the last one.
 */
static uint32_t bmbt_maxlevels(const uint32_t minrecs[2], uint64_t records, uint64_t rootrecs)
{
	/* xfs_bmdr_maxrecs(XFS_BMDR_SPACE_CALC(n)) is n itself: rootrecs is MIN[DA]BTPTRS */
	uint64_t blocks = (records + minrecs[0] - 1) / minrecs[0];
	uint32_t level;

	for (level = 1; blocks > 1; level++)
		blocks = blocks <= rootrecs ? 1 : (blocks + minrecs[1] - 1) / minrecs[1];
	return level;
}

/* Height of a btree that could consume `leaf_blocks` blocks at the given fanout. */
static uint32_t btree_space_to_height(const uint32_t minrecs[2], uint64_t leaf_blocks)
{
	uint64_t node_blocks = 2, left;
	uint32_t h = 1;

	if (leaf_blocks < 1)
		return 0;
	left = leaf_blocks - 1;
	while (node_blocks < left) {
		left -= node_blocks;
		node_blocks *= minrecs[1];
		h++;
	}
	return h;
}

static void btree_minrecs(uint32_t blocksize, size_t hdr, size_t rec, size_t keyptr,
			  uint32_t out[2])
{
	out[0] = (uint32_t)((blocksize - hdr) / rec / 2);
	out[1] = (uint32_t)((blocksize - hdr) / keyptr / 2);
}

uint64_t fs_geom_max_inodes(const struct fs_geom *g)
{
	return g->dblocks << g->inopblog;
}

int fs_geom_derive(const struct xfs_sb *sb, struct fs_geom *g)
{
	uint32_t mr[2];
	size_t sblock = XFS_BTREE_SBLOCK_CRC_LEN, lblock = XFS_BTREE_LBLOCK_CRC_LEN;

	if (sb->sb_agblocks == 0 || sb->sb_agcount == 0 || sb->sb_blocklog < 9 ||
	    sb->sb_blocklog > 16 || sb->sb_inodelog < 8 || sb->sb_inodelog > 11 ||
	    sb->sb_inodelog > sb->sb_blocklog || sb->sb_sectlog < 9 || sb->sb_sectlog > 15 ||
	    sb->sb_dblocks <= (uint64_t)(sb->sb_agcount - 1) * sb->sb_agblocks ||
	    sb->sb_agblklog > 31 || sb->sb_dirblklog + sb->sb_blocklog > 16)
		return -EINVAL;

	memset(g, 0, sizeof(*g));
	g->blocksize = 1u << sb->sb_blocklog;
	g->blocklog = sb->sb_blocklog;
	g->sectsize = 1u << sb->sb_sectlog;
	g->sectlog = sb->sb_sectlog;
	g->inodesize = 1u << sb->sb_inodelog;
	g->inodelog = sb->sb_inodelog;
	g->inopblog = sb->sb_blocklog - sb->sb_inodelog;
	g->inopblock = 1u << g->inopblog;
	g->agblocks = sb->sb_agblocks;
	g->agblklog = sb->sb_agblklog;
	g->agcount = sb->sb_agcount;
	g->dblocks = sb->sb_dblocks;
	g->last_ag_blocks = (uint32_t)(sb->sb_dblocks - (uint64_t)(sb->sb_agcount - 1) * sb->sb_agblocks);
	g->dirblklog = sb->sb_dirblklog;
	g->dirblksize = g->blocksize << sb->sb_dirblklog;
	g->dirblkfsbs = 1u << sb->sb_dirblklog;
	g->agino_log = g->agblklog + g->inopblog;
	g->inodes_per_chunk = XFS_INODES_PER_CHUNK;
	g->blocks_per_chunk = XFS_INODES_PER_CHUNK >> g->inopblog;
	if (!g->blocks_per_chunk)
		g->blocks_per_chunk = 1;
	g->inoalign = (sb->sb_versionnum & XFS_SB_VERSION_ALIGNBIT) ? sb->sb_inoalignmt : 0;
	g->spino_align = sb->sb_spino_align;
	/*
	 * v5 scales the 8 KiB inode cluster by inode size when alignment allows;
	 * the kernel then reads whole blocks, so a cluster is never smaller
	 * than one block (xfs_ialloc_setup_geometry).
	 */
	g->inode_cluster_size = 8192;
	if (sb->sb_inoalignmt >= ((8192u * (g->inodesize / XFS_DINODE_MIN_SIZE)) >> g->blocklog))
		g->inode_cluster_size = 8192u * (g->inodesize / XFS_DINODE_MIN_SIZE);
	g->blocks_per_cluster = g->inode_cluster_size >> g->blocklog;
	if (!g->blocks_per_cluster)
		g->blocks_per_cluster = 1;
	g->inode_cluster_size = g->blocks_per_cluster << g->blocklog;
	g->cluster_align = g->inoalign >= g->blocks_per_cluster && g->inoalign ? g->inoalign : 1;
	/* sb, AGF, AGI and AGFL take one sector each from the AG start */
	g->ag_hdr_blocks = (4 * g->sectsize + g->blocksize - 1) / g->blocksize;
	g->agfl_size = (g->sectsize - sizeof(struct xfs_agfl)) / sizeof(__be32);
	g->logstart = sb->sb_logstart;
	g->logblocks = sb->sb_logblocks;
	g->log_internal = sb->sb_logstart != 0;
	g->logsectsize = sb->sb_logsectsize ? sb->sb_logsectsize : FS_BBSIZE;
	if (g->log_internal) {
		g->log_agno = fs_fsb_to_agno(g, sb->sb_logstart);
		g->log_agbno = fs_fsb_to_agbno(g, sb->sb_logstart);
	}
	g->rootino = sb->sb_rootino;
	/*
	 * mkfs.xfs writes the secondaries before the realtime inodes exist, so
	 * a secondary has them null: they are the two after the root inode in
	 * its chunk, as xfs_repair also assumes when it rebuilds the primary.
	 */
	g->rbmino = sb->sb_rbmino && sb->sb_rbmino != NULLFSINO ? sb->sb_rbmino :
		    sb->sb_rootino + 1;
	g->rsumino = sb->sb_rsumino && sb->sb_rsumino != NULLFSINO ? sb->sb_rsumino :
		     sb->sb_rootino + 2;
	g->rblocks = sb->sb_rblocks;

	g->crc = (sb->sb_versionnum & XFS_SB_VERSION_NUMBITS) == XFS_SB_VERSION_5;
	g->ftype = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_FTYPE;
	g->asciici = sb->sb_versionnum & XFS_SB_VERSION_BORGBIT;
	g->spinodes = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES;
	g->meta_uuid_feat = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_META_UUID;
	g->bigtime = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_BIGTIME;
	g->needsrepair = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	g->nrext64 = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_NREXT64;
	g->finobt = sb->sb_features_ro_compat & XFS_SB_FEAT_RO_COMPAT_FINOBT;
	g->rmapbt = sb->sb_features_ro_compat & XFS_SB_FEAT_RO_COMPAT_RMAPBT;
	g->reflink = sb->sb_features_ro_compat & XFS_SB_FEAT_RO_COMPAT_REFLINK;
	g->inobtcount = sb->sb_features_ro_compat & XFS_SB_FEAT_RO_COMPAT_INOBTCNT;
	g->lazysbcount = sb->sb_features2 & XFS_SB_VERSION2_LAZYSBCOUNTBIT;
	g->attr2 = sb->sb_features2 & XFS_SB_VERSION2_ATTR2BIT;
	g->projid32 = sb->sb_features2 & XFS_SB_VERSION2_PROJID32BIT;
	g->quota = sb->sb_versionnum & XFS_SB_VERSION_QUOTABIT;
	memcpy(g->uuid, &sb->sb_uuid, 16);
	memcpy(g->meta_uuid, g->meta_uuid_feat ? (const void *)&sb->sb_meta_uuid :
	       (const void *)&sb->sb_uuid, 16);

	/* btree heights, as the kernel sizes them for this geometry */
	btree_minrecs(g->blocksize, sblock, sizeof(xfs_alloc_rec_t),
		      sizeof(xfs_alloc_key_t) + sizeof(xfs_alloc_ptr_t), mr);
	g->alloc_maxlevels = btree_maxlevels(mr, ((uint64_t)g->agblocks + 1) / 2);
	btree_minrecs(g->blocksize, sblock, sizeof(xfs_inobt_rec_t),
		      sizeof(xfs_inobt_key_t) + sizeof(xfs_inobt_ptr_t), mr);
	g->inobt_maxlevels = btree_maxlevels(mr, (1ull << g->agino_log) >> XFS_INODES_PER_CHUNK_LOG);
	btree_minrecs(g->blocksize, sblock, sizeof(struct xfs_rmap_rec),
		      2 * sizeof(struct xfs_rmap_key) + sizeof(xfs_rmap_ptr_t), mr);
	g->rmap_maxlevels = !g->rmapbt ? 0 : g->reflink ?
		btree_space_to_height(mr, g->agblocks) : btree_maxlevels(mr, g->agblocks);
	btree_minrecs(g->blocksize, sblock, sizeof(struct xfs_refcount_rec),
		      sizeof(struct xfs_refcount_key) + sizeof(xfs_refcount_ptr_t), mr);
	g->refc_maxlevels = g->reflink ? btree_maxlevels(mr, g->agblocks) : 0;
	btree_minrecs(g->blocksize, lblock, sizeof(xfs_bmbt_rec_t),
		      sizeof(xfs_bmbt_key_t) + sizeof(xfs_bmbt_ptr_t), mr);
	g->bmbt_maxlevels_data = bmbt_maxlevels(mr, g->nrext64 ? XFS_MAX_EXTCNT_DATA_FORK_LARGE :
						XFS_MAX_EXTCNT_DATA_FORK_SMALL, MINDBTPTRS);
	g->bmbt_maxlevels_attr = bmbt_maxlevels(mr, g->nrext64 ? XFS_MAX_EXTCNT_ATTR_FORK_LARGE :
						XFS_MAX_EXTCNT_ATTR_FORK_SMALL, MINABTPTRS);
	return 0;
}

bool fs_agino_valid(const struct fs_geom *g, fs_agnumber_t agno, fs_agino_t agino)
{
	uint32_t agblocks;
	uint64_t end;
	fs_agino_t first, last;

	if (agno >= g->agcount)
		return false;
	agblocks = fs_ag_blocks(g, agno);
	/*
	 * The kernel's range: from the first cluster-aligned block after the
	 * headers to the end of the last aligned cluster in the AG.
	 */
	first = (fs_agino_t)(((uint64_t)(g->ag_hdr_blocks + g->cluster_align - 1) /
			      g->cluster_align * g->cluster_align) << g->inopblog);
	end = (uint64_t)agblocks / g->cluster_align * g->cluster_align;
	if (end << g->inopblog == 0)
		return false;
	last = (fs_agino_t)((end << g->inopblog) - 1);
	return agino >= first && agino <= last && agino < (1ull << g->agino_log);
}

bool fs_ino_valid(const struct fs_geom *g, fs_ino_t ino)
{
	fs_agnumber_t agno = fs_ino_to_agno(g, ino);
	fs_agino_t agino = fs_ino_to_agino(g, ino);

	return fs_agino_to_ino(g, agno, agino) == ino && fs_agino_valid(g, agno, agino);
}

/* --- verification --------------------------------------------------------- */

struct sbv {
	struct fs_findings *fl;
	int64_t ag, daddr;
	int bad;       /* geometry can't be used */
	int findings;
};

static void sb_bad(struct sbv *v, const char *code, const char *field, const char *exp,
		   const char *found, bool fatal, const char *msg)
{
	fs_report(v->fl, code, v->ag, v->daddr, FS_NONE, field, exp, found, "%s",
		  msg ? msg : fs_finding_lookup(code)->summary);
	v->findings++;
	if (fatal)
		v->bad++;
}

#define SB_CHECK(cond, code, field, exp, found, fatal, msg) \
	do { if (!(cond)) sb_bad(&v, code, field, exp, found, fatal, msg); } while (0)

enum fs_sb_state fs_sb_verify(const void *buf, size_t len, fs_agnumber_t agno,
			      struct fs_findings *fl)
{
	struct sbv v = { .fl = fl, .ag = agno, .daddr = FS_NONE };
	struct xfs_sb sb;
	uint64_t agcount_calc;
	uint32_t sectsize;
	bool primary = agno == 0;

	/* a superblock lives in a sector: anything shorter cannot be CRC-checked */
	if (len < FS_BBSIZE) {
		fs_report(fl, "sb.unreadable", agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "superblock buffer too short (%zu bytes)", len);
		return FS_SB_UNUSABLE;
	}
	fs_sb_from_disk(&sb, buf);

	if (sb.sb_magicnum != XFS_SB_MAGIC) {
		sb_bad(&v, "sb.magic", "magicnum", FS_X(XFS_SB_MAGIC), FS_X(sb.sb_magicnum), true, NULL);
		return FS_SB_NOT_XFS;
	}
	if ((sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) < XFS_SB_VERSION_5 &&
	    (sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) >= XFS_SB_VERSION_1) {
		sb_bad(&v, "sb.version", "versionnum", "5", FS_U(sb.sb_versionnum & XFS_SB_VERSION_NUMBITS),
		       true, "v4 filesystems are not supported");
		return FS_SB_V4;
	}
	SB_CHECK((sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) == XFS_SB_VERSION_5, "sb.version",
		 "versionnum", "5", FS_U(sb.sb_versionnum & XFS_SB_VERSION_NUMBITS), true, NULL);
	if (v.bad)
		return FS_SB_UNUSABLE;

	/* the CRC covers one sector: trust sectsize only if it is sane */
	sectsize = sb.sb_sectsize;
	if (!is_pow2(sectsize) || sectsize < XFS_MIN_SECTORSIZE || sectsize > XFS_MAX_SECTORSIZE ||
	    sectsize > len)
		sectsize = FS_BBSIZE;
	if (!fs_crc_ok(buf, sectsize, FS_SB_CRC_OFF))
		sb_bad(&v, "sb.crc", "crc", FS_X(fs_crc_compute(buf, sectsize, FS_SB_CRC_OFF)),
		       FS_X(sb.sb_crc), false, NULL);

	/* features: an unknown bit means structures we cannot verify */
	if (fs_sb_unknown_incompat(&sb) || fs_sb_unknown_ro_compat(&sb) ||
	    (sb.sb_features_compat & XFS_SB_FEAT_COMPAT_UNKNOWN)) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "unsupported feature bits: compat 0x%x ro_compat 0x%x incompat 0x%x",
			 sb.sb_features_compat & XFS_SB_FEAT_COMPAT_UNKNOWN,
			 fs_sb_unknown_ro_compat(&sb), fs_sb_unknown_incompat(&sb));
		/* name the field that holds the unknown bits */
		if (fs_sb_unknown_incompat(&sb))
			sb_bad(&v, "sb.feature", "features_incompat", FS_X(XFS_SB_FEAT_INCOMPAT_ALL),
			       FS_X(sb.sb_features_incompat), true, msg);
		else if (fs_sb_unknown_ro_compat(&sb))
			sb_bad(&v, "sb.feature", "features_ro_compat", FS_X(XFS_SB_FEAT_RO_COMPAT_ALL),
			       FS_X(sb.sb_features_ro_compat), true, msg);
		else
			sb_bad(&v, "sb.feature", "features_compat", FS_X(XFS_SB_FEAT_COMPAT_ALL),
			       FS_X(sb.sb_features_compat), true, msg);
		return FS_SB_UNSUPPORTED;
	}
	SB_CHECK(sb.sb_features2 & XFS_SB_VERSION2_CRCBIT, "sb.feature", "features2",
		 "CRC bit set", FS_X(sb.sb_features2), false, "v5 superblock lacks the CRC feature2 bit");
	SB_CHECK(sb.sb_features2 == sb.sb_bad_features2, "sb.feature", "bad_features2",
		 FS_X(sb.sb_features2), FS_X(sb.sb_bad_features2), false,
		 "bad_features2 must mirror features2");
	SB_CHECK(!(sb.sb_features_log_incompat & XFS_SB_FEAT_INCOMPAT_LOG_UNKNOWN), "sb.feature",
		 "features_log_incompat", FS_X(XFS_SB_FEAT_INCOMPAT_LOG_ALL),
		 FS_X(sb.sb_features_log_incompat), false, "unknown log incompat features");

	if (primary)
		SB_CHECK(sb.sb_inprogress == 0, "sb.inprogress", "inprogress", "0",
			 FS_U(sb.sb_inprogress), false, NULL);
	/*
	 * A copy mkfs left in progress (the secondaries) never holds quota
	 * state: xfs_repair resets quota inodes other than 0/null and flags.
	 */
	if (sb.sb_inprogress == 1) {
#define QINO_NONE(x) ((x) == 0 || (x) == NULLFSINO)
		SB_CHECK(QINO_NONE(sb.sb_uquotino), "sb.quota", "uquotino", "0 or null",
			 FS_U(sb.sb_uquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(QINO_NONE(sb.sb_gquotino), "sb.quota", "gquotino", "0 or null",
			 FS_U(sb.sb_gquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(QINO_NONE(sb.sb_pquotino), "sb.quota", "pquotino", "0 or null",
			 FS_U(sb.sb_pquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(sb.sb_qflags == 0, "sb.quota", "qflags", "0", FS_X(sb.sb_qflags), false,
			 "quota flags in a superblock mkfs left in progress");
#undef QINO_NONE
	}

	/* sector and block sizes */
	SB_CHECK(is_pow2(sb.sb_sectsize) && sb.sb_sectsize >= XFS_MIN_SECTORSIZE &&
		 sb.sb_sectsize <= XFS_MAX_SECTORSIZE, "sb.geometry", "sectsize",
		 "power of 2 in 512..32768", FS_U(sb.sb_sectsize), true, NULL);
	SB_CHECK(sb.sb_sectlog <= 31 && sb.sb_sectsize == (1u << sb.sb_sectlog), "sb.geometry",
		 "sectlog", FS_U(highbit32(sb.sb_sectsize)), FS_U(sb.sb_sectlog), true, NULL);
	SB_CHECK(is_pow2(sb.sb_blocksize) && sb.sb_blocksize >= XFS_MIN_CRC_BLOCKSIZE &&
		 sb.sb_blocksize <= XFS_MAX_BLOCKSIZE, "sb.geometry", "blocksize",
		 "power of 2 in 1024..65536", FS_U(sb.sb_blocksize), true, NULL);
	SB_CHECK(sb.sb_blocklog >= XFS_MIN_BLOCKSIZE_LOG && sb.sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG &&
		 sb.sb_blocksize == (1u << sb.sb_blocklog), "sb.geometry", "blocklog",
		 FS_U(highbit32(sb.sb_blocksize)), FS_U(sb.sb_blocklog), true, NULL);
	SB_CHECK(sb.sb_blocksize >= sb.sb_sectsize, "sb.geometry", "blocksize",
		 ">= sectsize", FS_U(sb.sb_blocksize), true, "block size smaller than sector size");
	SB_CHECK((uint32_t)sb.sb_dirblklog + sb.sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG, "sb.geometry",
		 "dirblklog", "blocklog + dirblklog <= 16", FS_U(sb.sb_dirblklog), true, NULL);

	/* inode geometry */
	SB_CHECK(sb.sb_inodesize == 256 || sb.sb_inodesize == 512 || sb.sb_inodesize == 1024 ||
		 sb.sb_inodesize == 2048, "sb.inodes", "inodesize", "256, 512, 1024 or 2048",
		 FS_U(sb.sb_inodesize), true, NULL);
	SB_CHECK(sb.sb_inodelog >= XFS_DINODE_MIN_LOG && sb.sb_inodelog <= XFS_DINODE_MAX_LOG &&
		 sb.sb_inodesize == (1u << sb.sb_inodelog), "sb.inodes", "inodelog",
		 FS_U(highbit32(sb.sb_inodesize)), FS_U(sb.sb_inodelog), true, NULL);
	if (sb.sb_inodesize && sb.sb_blocksize)
		SB_CHECK(sb.sb_inopblock == (sb.sb_blocksize + sb.sb_inodesize - 1) / sb.sb_inodesize,
			 "sb.inodes", "inopblock", FS_U(sb.sb_blocksize / sb.sb_inodesize),
			 FS_U(sb.sb_inopblock), true, NULL);
	SB_CHECK((int)sb.sb_blocklog - (int)sb.sb_inodelog == (int)sb.sb_inopblog, "sb.inodes",
		 "inopblog", FS_U(sb.sb_blocklog - sb.sb_inodelog), FS_U(sb.sb_inopblog), true, NULL);
	SB_CHECK(sb.sb_imax_pct <= 100, "sb.inodes", "imax_pct", "<= 100", FS_U(sb.sb_imax_pct),
		 false, NULL);
	if (!v.bad) {
		/* alignment rules as xfs_repair applies them */
		uint32_t big = (8192u >> sb.sb_blocklog);
		uint32_t scaled = (uint32_t)((8192ull * sb.sb_inodesize / XFS_DINODE_MIN_SIZE) >> sb.sb_blocklog);
		uint32_t chunk = (uint32_t)(((uint64_t)sb.sb_inodesize * XFS_INODES_PER_CHUNK) >> sb.sb_blocklog);
		bool ok = true;

		if (sb.sb_versionnum & XFS_SB_VERSION_ALIGNBIT) {
			ok = sb.sb_inoalignmt == big || sb.sb_inoalignmt == scaled;
			if (sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES)
				ok = sb.sb_inoalignmt == chunk;
		}
		SB_CHECK(ok, "sb.inodes", "inoalignmt",
			 FS_U((sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES) ? chunk : scaled),
			 FS_U(sb.sb_inoalignmt), true, NULL);
		if (sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES)
			SB_CHECK(sb.sb_spino_align == scaled, "sb.inodes", "spino_align", FS_U(scaled),
				 FS_U(sb.sb_spino_align), true, NULL);
		else
			SB_CHECK(sb.sb_spino_align == 0, "sb.inodes", "spino_align", "0",
				 FS_U(sb.sb_spino_align), false, NULL);
	}

	/* AG and data geometry */
	SB_CHECK(sb.sb_agcount > 0, "sb.geometry", "agcount", "> 0", FS_U(sb.sb_agcount), true, NULL);
	if (!v.bad) {
		uint64_t agbytes = (uint64_t)sb.sb_agblocks << sb.sb_blocklog;

		SB_CHECK(agbytes >= XFS_MIN_AG_BYTES && agbytes <= XFS_MAX_AG_BYTES &&
			 sb.sb_agblocks >= XFS_MIN_AG_BLOCKS, "sb.geometry", "agblocks",
			 "16 MiB .. 1 TiB of blocks", FS_U(sb.sb_agblocks), true, NULL);
		SB_CHECK(sb.sb_agblocks && sb.sb_agblklog == log2_roundup32(sb.sb_agblocks),
			 "sb.geometry", "agblklog", FS_U(log2_roundup32(sb.sb_agblocks)),
			 FS_U(sb.sb_agblklog), true, NULL);
		SB_CHECK(sb.sb_dblocks > 0 &&
			 sb.sb_dblocks <= (uint64_t)sb.sb_agcount * sb.sb_agblocks &&
			 sb.sb_dblocks >= (uint64_t)(sb.sb_agcount - 1) * sb.sb_agblocks + XFS_MIN_AG_BLOCKS,
			 "sb.geometry", "dblocks",
			 "within (agcount-1)*agblocks+64 .. agcount*agblocks", FS_U(sb.sb_dblocks), true, NULL);
		if (sb.sb_agblocks) {
			agcount_calc = (sb.sb_dblocks + sb.sb_agblocks - 1) / sb.sb_agblocks;
			SB_CHECK(agcount_calc == sb.sb_agcount, "sb.geometry", "agcount",
				 FS_U(agcount_calc), FS_U(sb.sb_agcount), true, NULL);
		}
	}
	SB_CHECK(sb.sb_shared_vn == 0, "sb.geometry", "shared_vn", "0", FS_U(sb.sb_shared_vn),
		 false, NULL);
	SB_CHECK(!(sb.sb_qflags & (XFS_OQUOTA_ENFD | XFS_OQUOTA_CHKD)), "sb.quota", "qflags",
		 "no OQUOTA bits on v5", FS_X(sb.sb_qflags), false, NULL);

	/* log */
	if (!v.bad) {
		SB_CHECK(sb.sb_logblocks >= XFS_MIN_LOG_BLOCKS && sb.sb_logblocks <= XFS_MAX_LOG_BLOCKS &&
			 ((uint64_t)sb.sb_logblocks << sb.sb_blocklog) <= XFS_MAX_LOG_BYTES,
			 "sb.log", "logblocks", "512 .. 1048576 blocks, at most 2 GiB",
			 FS_U(sb.sb_logblocks), true, NULL);
		if (sb.sb_logstart) {
			uint64_t agno_l = sb.sb_logstart >> sb.sb_agblklog;
			uint64_t agbno_l = sb.sb_logstart & ((1ull << sb.sb_agblklog) - 1);
			bool inside = agno_l < sb.sb_agcount && agbno_l < sb.sb_agblocks &&
				agbno_l + sb.sb_logblocks <= sb.sb_agblocks &&
				agno_l * sb.sb_agblocks + agbno_l + sb.sb_logblocks <= sb.sb_dblocks &&
				agbno_l >= 4;
			SB_CHECK(inside, "sb.log", "logstart", "a block range inside one AG",
				 FS_U(sb.sb_logstart), true, NULL);
		}
		SB_CHECK(sb.sb_logsunit <= 1 || (sb.sb_logsunit % sb.sb_blocksize == 0 &&
			 sb.sb_logsunit <= XLOG_MAX_RECORD_BSIZE), "sb.log", "logsunit",
			 "a multiple of the block size up to 256 KiB", FS_U(sb.sb_logsunit), false, NULL);
		if (sb.sb_versionnum & XFS_SB_VERSION_SECTORBIT)
			SB_CHECK(sb.sb_logsectlog >= XFS_MIN_SECTORSIZE_LOG &&
				 sb.sb_logsectlog <= XFS_MAX_SECTORSIZE_LOG &&
				 sb.sb_logsectsize == (1u << sb.sb_logsectlog), "sb.log", "logsectsize",
				 "2^logsectlog in 512..32768", FS_U(sb.sb_logsectsize), false, NULL);
		else
			SB_CHECK(sb.sb_logsectsize == 0 && sb.sb_logsectlog == 0, "sb.log", "logsectsize",
				 "0 without the sector feature", FS_U(sb.sb_logsectsize), false, NULL);
	}

	/* realtime */
	SB_CHECK((uint64_t)sb.sb_rextsize * sb.sb_blocksize <= XFS_MAX_RTEXTSIZE &&
		 (uint64_t)sb.sb_rextsize * sb.sb_blocksize >= XFS_MIN_RTEXTSIZE, "sb.rtgeometry",
		 "rextsize", "4 KiB .. 1 GiB in bytes", FS_U(sb.sb_rextsize), false, NULL);
	if (sb.sb_rblocks == 0) {
		SB_CHECK(sb.sb_rextents == 0, "sb.rtgeometry", "rextents", "0", FS_U(sb.sb_rextents), false, NULL);
		SB_CHECK(sb.sb_rbmblocks == 0, "sb.rtgeometry", "rbmblocks", "0", FS_U(sb.sb_rbmblocks), false, NULL);
		SB_CHECK(sb.sb_rextslog == 0, "sb.rtgeometry", "rextslog", "0", FS_U(sb.sb_rextslog), false, NULL);
		SB_CHECK(sb.sb_frextents == 0, "sb.rtgeometry", "frextents", "0", FS_U(sb.sb_frextents), false, NULL);
	} else if (sb.sb_rextsize) {
		uint64_t rexts = sb.sb_rblocks / sb.sb_rextsize;
		SB_CHECK(sb.sb_rextents == rexts, "sb.rtgeometry", "rextents", FS_U(rexts),
			 FS_U(sb.sb_rextents), false, NULL);
		SB_CHECK(sb.sb_rextslog == highbit32((uint32_t)sb.sb_rextents), "sb.rtgeometry", "rextslog",
			 FS_U(highbit32((uint32_t)sb.sb_rextents)), FS_U(sb.sb_rextslog), false, NULL);
		if (sb.sb_blocksize)
			SB_CHECK(sb.sb_rbmblocks == (sb.sb_rextents + 8ull * sb.sb_blocksize - 1) /
				 (8ull * sb.sb_blocksize), "sb.rtgeometry", "rbmblocks", NULL,
				 FS_U(sb.sb_rbmblocks), false, NULL);
	}

	/* stripe geometry */
	if (sb.sb_versionnum & XFS_SB_VERSION_DALIGNBIT) {
		SB_CHECK(sb.sb_unit && (!sb.sb_agblocks || sb.sb_agblocks % sb.sb_unit == 0),
			 "sb.stripe", "unit", "non-zero, dividing agblocks", FS_U(sb.sb_unit), false, NULL);
		SB_CHECK(sb.sb_width && sb.sb_unit && sb.sb_width % sb.sb_unit == 0, "sb.stripe", "width",
			 "a non-zero multiple of unit", FS_U(sb.sb_width), false, NULL);
	} else {
		SB_CHECK(sb.sb_unit == 0 && sb.sb_width == 0, "sb.stripe", "unit",
			 "0 without the dalign feature", FS_U(sb.sb_unit), false, NULL);
	}

	/* counters: only the primary's are maintained */
	if (primary && !v.bad) {
		uint64_t max_ino = (uint64_t)sb.sb_dblocks << sb.sb_inopblog;
		/* sparse inode chunks hold a multiple of one holemask bit's inodes */
		bool sparse = sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES;
		unsigned unit = sparse ? XFS_INODES_PER_HOLEMASK_BIT : XFS_INODES_PER_CHUNK;
		SB_CHECK(sb.sb_icount <= max_ino && sb.sb_icount % unit == 0,
			 "sb.counter", "icount", sparse ?
			 "a multiple of 4 (sparse chunks) no larger than the inode space" :
			 "a multiple of 64 no larger than the inode space",
			 FS_U(sb.sb_icount), false, NULL);
		SB_CHECK(sb.sb_ifree <= sb.sb_icount, "sb.counter", "ifree", "<= icount",
			 FS_U(sb.sb_ifree), false, NULL);
		SB_CHECK(sb.sb_fdblocks <= sb.sb_dblocks, "sb.counter", "fdblocks", "<= dblocks",
			 FS_U(sb.sb_fdblocks), false, NULL);
		SB_CHECK(sb.sb_frextents <= sb.sb_rextents, "sb.counter", "frextents", "<= rextents",
			 FS_U(sb.sb_frextents), false, NULL);
	}

	/*
	 * Inode numbers the superblock names must exist: the root directory
	 * always (secondaries written by old mkfs may hold NULL), the realtime
	 * inodes and quota inodes when set (quota inodes may also read 0).
	 */
	if (!v.bad) {
		struct fs_geom g;

		if (fs_geom_derive(&sb, &g) == 0) {
			SB_CHECK(fs_ino_valid(&g, sb.sb_rootino) || (!primary && sb.sb_rootino == NULLFSINO),
				 "sb.inodes", "rootino", "an inode number inside the filesystem",
				 FS_U(sb.sb_rootino), false, "root directory inode number cannot exist");
			/*
			 * mkfs always allocates the realtime inodes after the root
			 * (xfs_repair resets a primary's NULL to that place);
			 * old secondaries may hold NULL
			 */
			SB_CHECK((!primary && sb.sb_rbmino == NULLFSINO) || fs_ino_valid(&g, sb.sb_rbmino),
				 "sb.rtgeometry", "rbmino", primary ? "an inode number inside the filesystem" :
				 "null or an inode number inside the filesystem",
				 FS_U(sb.sb_rbmino), false, "realtime bitmap inode number cannot exist");
			SB_CHECK((!primary && sb.sb_rsumino == NULLFSINO) || fs_ino_valid(&g, sb.sb_rsumino),
				 "sb.rtgeometry", "rsumino", primary ? "an inode number inside the filesystem" :
				 "null or an inode number inside the filesystem",
				 FS_U(sb.sb_rsumino), false, "realtime summary inode number cannot exist");
#define QINO_OK(x) ((x) == 0 || (x) == NULLFSINO || fs_ino_valid(&g, (x)))
			SB_CHECK(QINO_OK(sb.sb_uquotino), "sb.quota", "uquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_uquotino),
				 false, "user quota inode number cannot exist");
			SB_CHECK(QINO_OK(sb.sb_gquotino), "sb.quota", "gquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_gquotino),
				 false, "group quota inode number cannot exist");
			SB_CHECK(QINO_OK(sb.sb_pquotino), "sb.quota", "pquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_pquotino),
				 false, "project quota inode number cannot exist");
#undef QINO_OK
#define QINO_SET(x) ((x) != 0 && (x) != NULLFSINO)
			/* quotas on (the kernel sets the bit) but no quota inode anywhere */
			if (primary && (sb.sb_versionnum & XFS_SB_VERSION_QUOTABIT))
				SB_CHECK(QINO_SET(sb.sb_uquotino) || QINO_SET(sb.sb_gquotino) ||
					 QINO_SET(sb.sb_pquotino), "sb.quota", "versionnum",
					 "a quota inode when the quota bit is set", FS_X(sb.sb_versionnum),
					 false, "quota bit set but no quota inode");
#undef QINO_SET
		}
	}
	/*
	 * No superblock flag is in use: mkfs writes 0 and xfs_repair calls any
	 * bit, even the historical read-only one, a bad flags field.
	 */
	SB_CHECK(sb.sb_flags == 0, "sb.feature", "flags", "0", FS_X(sb.sb_flags), false,
		 "superblock flags field is not zero");

	/*
	 * The rest of the sector past the last field in use must be zero; without
	 * the meta_uuid feature that field is unused too (as xfs_repair sees it).
	 */
	{
		const unsigned char *p = buf;
		size_t end = sectsize <= len ? sectsize : len;
		size_t start = (sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_META_UUID) ?
			FS_DSB_SIZE : offsetof(struct xfs_dsb, sb_meta_uuid);
		for (size_t i = start; i < end; i++) {
			if (p[i]) {
				char at[32];
				snprintf(at, sizeof(at), "byte %zu", i);
				sb_bad(&v, "sb.garbage", at, "0", FS_X(p[i]), false, NULL);
				break;
			}
		}
	}

	if (v.bad)
		return FS_SB_UNUSABLE;
	return v.findings ? FS_SB_DAMAGED : FS_SB_OK;
}

#define CMP_FIELD(f) do { \
	if (p->f != s->f) { \
		fs_report(fl, "sb.secondary", agno, FS_NONE, FS_NONE, &#f[3], FS_U(p->f), FS_U(s->f), \
			  "secondary superblock %s differs from the primary", &#f[3]); \
		n++; \
	} } while (0)

int fs_sb_compare_secondary(const struct xfs_sb *p, const struct xfs_sb *s,
			    fs_agnumber_t agno, struct fs_findings *fl)
{
	int n = 0;

	/*
	 * Geometry only: mkfs and the kernel leave counters, quota and even the
	 * root/realtime inode numbers of secondaries stale or null.  Fields the
	 * kernel changes in the primary alone are not compared either: the
	 * attr and quota version bits (set on first use), sb_unit/sb_width
	 * (sunit/swidth mount options), sb_imax_pct (growfs -m), and the
	 * needsrepair bit (set on the primary during upgrades), as xfs_repair
	 * does not compare them.
	 */
	const uint16_t vmask = (uint16_t)~(XFS_SB_VERSION_ATTRBIT | XFS_SB_VERSION_QUOTABIT);
	const uint32_t imask = ~(uint32_t)XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;

	CMP_FIELD(sb_blocksize); CMP_FIELD(sb_dblocks); CMP_FIELD(sb_rblocks);
	CMP_FIELD(sb_rextents); CMP_FIELD(sb_logstart); CMP_FIELD(sb_rextsize);
	CMP_FIELD(sb_agblocks); CMP_FIELD(sb_agcount); CMP_FIELD(sb_rbmblocks);
	CMP_FIELD(sb_logblocks); CMP_FIELD(sb_sectsize);
	CMP_FIELD(sb_inodesize); CMP_FIELD(sb_inopblock); CMP_FIELD(sb_blocklog);
	CMP_FIELD(sb_sectlog); CMP_FIELD(sb_inodelog); CMP_FIELD(sb_inopblog);
	CMP_FIELD(sb_agblklog); CMP_FIELD(sb_rextslog);
	CMP_FIELD(sb_inoalignmt);
	CMP_FIELD(sb_dirblklog); CMP_FIELD(sb_logsectlog); CMP_FIELD(sb_logsectsize);
	CMP_FIELD(sb_logsunit); CMP_FIELD(sb_features2); CMP_FIELD(sb_features_compat);
	CMP_FIELD(sb_features_ro_compat);
	CMP_FIELD(sb_spino_align);
	if ((p->sb_versionnum & vmask) != (s->sb_versionnum & vmask)) {
		fs_report(fl, "sb.secondary", agno, FS_NONE, FS_NONE, "versionnum",
			  FS_X(p->sb_versionnum), FS_X(s->sb_versionnum),
			  "secondary superblock versionnum differs from the primary");
		n++;
	}
	if ((p->sb_features_incompat & imask) != (s->sb_features_incompat & imask)) {
		fs_report(fl, "sb.secondary", agno, FS_NONE, FS_NONE, "features_incompat",
			  FS_X(p->sb_features_incompat), FS_X(s->sb_features_incompat),
			  "secondary superblock features_incompat differs from the primary");
		n++;
	}
	if (memcmp(&p->sb_uuid, &s->sb_uuid, sizeof(p->sb_uuid))) {
		fs_report(fl, "sb.uuid", agno, FS_NONE, FS_NONE, "uuid", NULL, NULL,
			  "secondary superblock UUID differs from the primary");
		n++;
	}
	if ((p->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_META_UUID) &&
	    memcmp(&p->sb_meta_uuid, &s->sb_meta_uuid, sizeof(p->sb_meta_uuid))) {
		fs_report(fl, "sb.uuid", agno, FS_NONE, FS_NONE, "meta_uuid", NULL, NULL,
			  "secondary superblock metadata UUID differs from the primary");
		n++;
	}
	return n;
}
