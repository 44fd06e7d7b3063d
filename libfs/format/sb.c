// SPDX-License-Identifier: GPL-2.0
/*
 * Superblocks: decode and encode every v5 field, verify one copy against
 * the rules the kernel and xfs_repair apply, compare secondaries with the
 * primary, and derive the geometry every other layer works from.
 */
#include "libfs/format/sb.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"

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

int fs_sb_copy_field(struct xfs_sb *to, const struct xfs_sb *from, enum fs_sb_field field)
{
	switch (field) {
#define SB_COPY(f, w) case FS_SBF_##f: to->sb_##f = from->sb_##f; return 0;
	SB_SCALAR_FIELDS(SB_COPY)
#undef SB_COPY
	case FS_SBF_uuid:
		memcpy(&to->sb_uuid, &from->sb_uuid, sizeof(to->sb_uuid));
		return 0;
	case FS_SBF_meta_uuid:
		memcpy(&to->sb_meta_uuid, &from->sb_meta_uuid, sizeof(to->sb_meta_uuid));
		return 0;
	default:
		return -ENOENT;
	}
}

enum fs_sb_field fs_sb_field_id(const char *name)
{
	static const char *const names[FS_SBF_NR] = {
#define SB_NAME(f, w) [FS_SBF_##f] = #f,
		SB_SCALAR_FIELDS(SB_NAME)
#undef SB_NAME
		[FS_SBF_uuid] = "uuid", [FS_SBF_meta_uuid] = "meta_uuid",
	};

	for (int i = 1; name && i < FS_SBF_NR; i++)
		if (!strcmp(names[i], name))
			return (enum fs_sb_field)i;
	return FS_SBF_NONE;
}

int fs_sb_report(struct fs_findings *fl, enum fs_code code, int64_t ag, int64_t daddr,
		 const char *field, const char *expected, const char *found, const char *fmt, ...)
{
	struct fs_typed val = { .field = (uint16_t)fs_sb_field_id(field) };
	char msg[FS_FINDING_MESSAGE_MAX];
	va_list ap;

	if (!fmt)
		return fs_report_val(fl, &val, code, ag, daddr, FS_NONE, field, expected, found,
				     "%s", fs_finding_def(code) ? fs_finding_def(code)->summary : "");
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_report_val(fl, &val, code, ag, daddr, FS_NONE, field, expected, found, "%s",
			     msg);
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

/*
 * The incompat bits this build reads: the installed headers' set and the
 * two later ones it knows (format.h), whatever the headers' version.
 */
#define FS_SB_INCOMPAT_KNOWN \
	((uint32_t)(XFS_SB_FEAT_INCOMPAT_ALL | XFS_SB_FEAT_INCOMPAT_EXCHRANGE | \
		    XFS_SB_FEAT_INCOMPAT_PARENT))

uint32_t fs_sb_unknown_incompat(const struct xfs_sb *sb)
{
	return sb->sb_features_incompat & ~FS_SB_INCOMPAT_KNOWN;
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
	g->parent = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_PARENT;
	g->exchrange = sb->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_EXCHRANGE;
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

static void sb_bad(struct sbv *v, enum fs_code code, const char *field, const char *exp,
		   const char *found, bool fatal, const char *msg)
{
	fs_sb_report(v->fl, code, v->ag, v->daddr, field, exp, found, "%s",
		     msg ? msg : fs_finding_def(code)->summary);
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
		fs_report(fl, FS_C_SB_UNREADABLE, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "superblock buffer too short (%zu bytes)", len);
		return FS_SB_UNUSABLE;
	}
	fs_sb_from_disk(&sb, buf);

	if (sb.sb_magicnum != XFS_SB_MAGIC) {
		sb_bad(&v, FS_C_SB_MAGIC, "magicnum", FS_X(XFS_SB_MAGIC), FS_X(sb.sb_magicnum), true, NULL);
		return FS_SB_NOT_XFS;
	}
	if ((sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) < XFS_SB_VERSION_5 &&
	    (sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) >= XFS_SB_VERSION_1) {
		sb_bad(&v, FS_C_SB_VERSION, "versionnum", "5", FS_U(sb.sb_versionnum & XFS_SB_VERSION_NUMBITS),
		       true, "v4 filesystems are not supported");
		return FS_SB_V4;
	}
	SB_CHECK((sb.sb_versionnum & XFS_SB_VERSION_NUMBITS) == XFS_SB_VERSION_5, FS_C_SB_VERSION,
		 "versionnum", "5", FS_U(sb.sb_versionnum & XFS_SB_VERSION_NUMBITS), true, NULL);
	if (v.bad)
		return FS_SB_UNUSABLE;

	/* the CRC covers one sector: trust sectsize only if it is sane */
	sectsize = sb.sb_sectsize;
	if (!is_pow2(sectsize) || sectsize < XFS_MIN_SECTORSIZE || sectsize > XFS_MAX_SECTORSIZE ||
	    sectsize > len)
		sectsize = FS_BBSIZE;
	if (!fs_crc_ok(buf, sectsize, FS_SB_CRC_OFF))
		sb_bad(&v, FS_C_SB_CRC, "crc", FS_X(fs_crc_compute(buf, sectsize, FS_SB_CRC_OFF)),
		       FS_X(sb.sb_crc), false, NULL);

	/*
	 * Features: an unknown incompat or ro_compat bit means structures we
	 * cannot verify.  An unknown compat bit is harmless by definition (the
	 * kernel mounts with it): said, kept, and nothing else follows from it.
	 */
	if (fs_sb_unknown_incompat(&sb) || fs_sb_unknown_ro_compat(&sb)) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "unsupported feature bits: compat 0x%x ro_compat 0x%x incompat 0x%x",
			 sb.sb_features_compat & XFS_SB_FEAT_COMPAT_UNKNOWN,
			 fs_sb_unknown_ro_compat(&sb), fs_sb_unknown_incompat(&sb));
		/* name the field that holds the unknown bits */
		if (fs_sb_unknown_incompat(&sb))
			sb_bad(&v, FS_C_SB_FEATURE, "features_incompat", FS_X(FS_SB_INCOMPAT_KNOWN),
			       FS_X(sb.sb_features_incompat), true, msg);
		else
			sb_bad(&v, FS_C_SB_FEATURE, "features_ro_compat", FS_X(XFS_SB_FEAT_RO_COMPAT_ALL),
			       FS_X(sb.sb_features_ro_compat), true, msg);
		return FS_SB_UNSUPPORTED;
	}
	if (primary && (sb.sb_features_compat & XFS_SB_FEAT_COMPAT_UNKNOWN))
		fs_sb_report(fl, FS_C_SB_COMPAT_UNKNOWN, agno, FS_NONE, "features_compat",
			  FS_X(XFS_SB_FEAT_COMPAT_ALL), FS_X(sb.sb_features_compat),
			  "compat feature bits 0x%x are unknown to this build: harmless by "
			  "definition (the kernel mounts with them), kept as they are",
			  sb.sb_features_compat & XFS_SB_FEAT_COMPAT_UNKNOWN);
	SB_CHECK(sb.sb_features2 & XFS_SB_VERSION2_CRCBIT, FS_C_SB_FEATURE, "features2",
		 "CRC bit set", FS_X(sb.sb_features2), false, "v5 superblock lacks the CRC feature2 bit");
	SB_CHECK(sb.sb_features2 == sb.sb_bad_features2, FS_C_SB_FEATURE, "bad_features2",
		 FS_X(sb.sb_features2), FS_X(sb.sb_bad_features2), false,
		 "bad_features2 must mirror features2");
	SB_CHECK(!(sb.sb_features_log_incompat & XFS_SB_FEAT_INCOMPAT_LOG_UNKNOWN), FS_C_SB_FEATURE,
		 "features_log_incompat", FS_X(XFS_SB_FEAT_INCOMPAT_LOG_ALL),
		 FS_X(sb.sb_features_log_incompat), false, "unknown log incompat features");

	if (primary)
		SB_CHECK(sb.sb_inprogress == 0, FS_C_SB_INPROGRESS, "inprogress", "0",
			 FS_U(sb.sb_inprogress), false, NULL);
	/*
	 * A copy mkfs left in progress (the secondaries) never holds quota
	 * state: xfs_repair resets quota inodes other than 0/null and flags.
	 */
	if (sb.sb_inprogress == 1) {
#define QINO_NONE(x) ((x) == 0 || (x) == NULLFSINO)
		SB_CHECK(QINO_NONE(sb.sb_uquotino), FS_C_SB_QUOTA, "uquotino", "0 or null",
			 FS_U(sb.sb_uquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(QINO_NONE(sb.sb_gquotino), FS_C_SB_QUOTA, "gquotino", "0 or null",
			 FS_U(sb.sb_gquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(QINO_NONE(sb.sb_pquotino), FS_C_SB_QUOTA, "pquotino", "0 or null",
			 FS_U(sb.sb_pquotino), false, "quota inode in a superblock mkfs left in progress");
		SB_CHECK(sb.sb_qflags == 0, FS_C_SB_QUOTA, "qflags", "0", FS_X(sb.sb_qflags), false,
			 "quota flags in a superblock mkfs left in progress");
#undef QINO_NONE
	}

	/* sector and block sizes */
	SB_CHECK(is_pow2(sb.sb_sectsize) && sb.sb_sectsize >= XFS_MIN_SECTORSIZE &&
		 sb.sb_sectsize <= XFS_MAX_SECTORSIZE, FS_C_SB_GEOMETRY, "sectsize",
		 "power of 2 in 512..32768", FS_U(sb.sb_sectsize), true, NULL);
	SB_CHECK(sb.sb_sectlog <= 31 && sb.sb_sectsize == (1u << sb.sb_sectlog), FS_C_SB_GEOMETRY,
		 "sectlog", FS_U(highbit32(sb.sb_sectsize)), FS_U(sb.sb_sectlog), true, NULL);
	SB_CHECK(is_pow2(sb.sb_blocksize) && sb.sb_blocksize >= XFS_MIN_CRC_BLOCKSIZE &&
		 sb.sb_blocksize <= XFS_MAX_BLOCKSIZE, FS_C_SB_GEOMETRY, "blocksize",
		 "power of 2 in 1024..65536", FS_U(sb.sb_blocksize), true, NULL);
	SB_CHECK(sb.sb_blocklog >= XFS_MIN_BLOCKSIZE_LOG && sb.sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG &&
		 sb.sb_blocksize == (1u << sb.sb_blocklog), FS_C_SB_GEOMETRY, "blocklog",
		 FS_U(highbit32(sb.sb_blocksize)), FS_U(sb.sb_blocklog), true, NULL);
	SB_CHECK(sb.sb_blocksize >= sb.sb_sectsize, FS_C_SB_GEOMETRY, "blocksize",
		 ">= sectsize", FS_U(sb.sb_blocksize), true, "block size smaller than sector size");
	SB_CHECK((uint32_t)sb.sb_dirblklog + sb.sb_blocklog <= XFS_MAX_BLOCKSIZE_LOG, FS_C_SB_GEOMETRY,
		 "dirblklog", "blocklog + dirblklog <= 16", FS_U(sb.sb_dirblklog), true, NULL);

	/* inode geometry */
	SB_CHECK(sb.sb_inodesize == 256 || sb.sb_inodesize == 512 || sb.sb_inodesize == 1024 ||
		 sb.sb_inodesize == 2048, FS_C_SB_INODES, "inodesize", "256, 512, 1024 or 2048",
		 FS_U(sb.sb_inodesize), true, NULL);
	SB_CHECK(sb.sb_inodelog >= XFS_DINODE_MIN_LOG && sb.sb_inodelog <= XFS_DINODE_MAX_LOG &&
		 sb.sb_inodesize == (1u << sb.sb_inodelog), FS_C_SB_INODES, "inodelog",
		 FS_U(highbit32(sb.sb_inodesize)), FS_U(sb.sb_inodelog), true, NULL);
	if (sb.sb_inodesize && sb.sb_blocksize)
		SB_CHECK(sb.sb_inopblock == (sb.sb_blocksize + sb.sb_inodesize - 1) / sb.sb_inodesize,
			 FS_C_SB_INODES, "inopblock", FS_U(sb.sb_blocksize / sb.sb_inodesize),
			 FS_U(sb.sb_inopblock), true, NULL);
	SB_CHECK((int)sb.sb_blocklog - (int)sb.sb_inodelog == (int)sb.sb_inopblog, FS_C_SB_INODES,
		 "inopblog", FS_U(sb.sb_blocklog - sb.sb_inodelog), FS_U(sb.sb_inopblog), true, NULL);
	SB_CHECK(sb.sb_imax_pct <= 100, FS_C_SB_INODES, "imax_pct", "<= 100", FS_U(sb.sb_imax_pct),
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
		SB_CHECK(ok, FS_C_SB_INODES, "inoalignmt",
			 FS_U((sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES) ? chunk : scaled),
			 FS_U(sb.sb_inoalignmt), true, NULL);
		if (sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES)
			SB_CHECK(sb.sb_spino_align == scaled, FS_C_SB_INODES, "spino_align", FS_U(scaled),
				 FS_U(sb.sb_spino_align), true, NULL);
		else
			SB_CHECK(sb.sb_spino_align == 0, FS_C_SB_INODES, "spino_align", "0",
				 FS_U(sb.sb_spino_align), false, NULL);
	}

	/* AG and data geometry */
	SB_CHECK(sb.sb_agcount > 0, FS_C_SB_GEOMETRY, "agcount", "> 0", FS_U(sb.sb_agcount), true, NULL);
	if (!v.bad) {
		uint64_t agbytes = (uint64_t)sb.sb_agblocks << sb.sb_blocklog;

		SB_CHECK(agbytes >= XFS_MIN_AG_BYTES && agbytes <= XFS_MAX_AG_BYTES &&
			 sb.sb_agblocks >= XFS_MIN_AG_BLOCKS, FS_C_SB_GEOMETRY, "agblocks",
			 "16 MiB .. 1 TiB of blocks", FS_U(sb.sb_agblocks), true, NULL);
		SB_CHECK(sb.sb_agblocks && sb.sb_agblklog == log2_roundup32(sb.sb_agblocks),
			 FS_C_SB_GEOMETRY, "agblklog", FS_U(log2_roundup32(sb.sb_agblocks)),
			 FS_U(sb.sb_agblklog), true, NULL);
		SB_CHECK(sb.sb_dblocks > 0 &&
			 sb.sb_dblocks <= (uint64_t)sb.sb_agcount * sb.sb_agblocks &&
			 sb.sb_dblocks >= (uint64_t)(sb.sb_agcount - 1) * sb.sb_agblocks + XFS_MIN_AG_BLOCKS,
			 FS_C_SB_GEOMETRY, "dblocks",
			 "within (agcount-1)*agblocks+64 .. agcount*agblocks", FS_U(sb.sb_dblocks), true, NULL);
		if (sb.sb_agblocks) {
			agcount_calc = (sb.sb_dblocks + sb.sb_agblocks - 1) / sb.sb_agblocks;
			SB_CHECK(agcount_calc == sb.sb_agcount, FS_C_SB_GEOMETRY, "agcount",
				 FS_U(agcount_calc), FS_U(sb.sb_agcount), true, NULL);
		}
	}
	SB_CHECK(sb.sb_shared_vn == 0, FS_C_SB_GEOMETRY, "shared_vn", "0", FS_U(sb.sb_shared_vn),
		 false, NULL);
	SB_CHECK(!(sb.sb_qflags & (XFS_OQUOTA_ENFD | XFS_OQUOTA_CHKD)), FS_C_SB_QUOTA, "qflags",
		 "no OQUOTA bits on v5", FS_X(sb.sb_qflags), false, NULL);

	/* log */
	if (!v.bad) {
		SB_CHECK(sb.sb_logblocks >= XFS_MIN_LOG_BLOCKS && sb.sb_logblocks <= XFS_MAX_LOG_BLOCKS &&
			 ((uint64_t)sb.sb_logblocks << sb.sb_blocklog) <= XFS_MAX_LOG_BYTES,
			 FS_C_SB_LOG, "logblocks", "512 .. 1048576 blocks, at most 2 GiB",
			 FS_U(sb.sb_logblocks), true, NULL);
		if (sb.sb_logstart) {
			uint64_t agno_l = sb.sb_logstart >> sb.sb_agblklog;
			uint64_t agbno_l = sb.sb_logstart & ((1ull << sb.sb_agblklog) - 1);
			bool inside = agno_l < sb.sb_agcount && agbno_l < sb.sb_agblocks &&
				agbno_l + sb.sb_logblocks <= sb.sb_agblocks &&
				agno_l * sb.sb_agblocks + agbno_l + sb.sb_logblocks <= sb.sb_dblocks &&
				agbno_l >= 4;
			SB_CHECK(inside, FS_C_SB_LOG, "logstart", "a block range inside one AG",
				 FS_U(sb.sb_logstart), true, NULL);
		}
		SB_CHECK(sb.sb_logsunit <= 1 || (sb.sb_logsunit % sb.sb_blocksize == 0 &&
			 sb.sb_logsunit <= XLOG_MAX_RECORD_BSIZE), FS_C_SB_LOG, "logsunit",
			 "a multiple of the block size up to 256 KiB", FS_U(sb.sb_logsunit), false, NULL);
		if (sb.sb_versionnum & XFS_SB_VERSION_SECTORBIT)
			SB_CHECK(sb.sb_logsectlog >= XFS_MIN_SECTORSIZE_LOG &&
				 sb.sb_logsectlog <= XFS_MAX_SECTORSIZE_LOG &&
				 sb.sb_logsectsize == (1u << sb.sb_logsectlog), FS_C_SB_LOG, "logsectsize",
				 "2^logsectlog in 512..32768", FS_U(sb.sb_logsectsize), false, NULL);
		else
			SB_CHECK(sb.sb_logsectsize == 0 && sb.sb_logsectlog == 0, FS_C_SB_LOG, "logsectsize",
				 "0 without the sector feature", FS_U(sb.sb_logsectsize), false, NULL);
	}

	/* realtime */
	SB_CHECK((uint64_t)sb.sb_rextsize * sb.sb_blocksize <= XFS_MAX_RTEXTSIZE &&
		 (uint64_t)sb.sb_rextsize * sb.sb_blocksize >= XFS_MIN_RTEXTSIZE, FS_C_SB_RTGEOMETRY,
		 "rextsize", "4 KiB .. 1 GiB in bytes", FS_U(sb.sb_rextsize), false, NULL);
	if (sb.sb_rblocks == 0) {
		SB_CHECK(sb.sb_rextents == 0, FS_C_SB_RTGEOMETRY, "rextents", "0", FS_U(sb.sb_rextents), false, NULL);
		SB_CHECK(sb.sb_rbmblocks == 0, FS_C_SB_RTGEOMETRY, "rbmblocks", "0", FS_U(sb.sb_rbmblocks), false, NULL);
		SB_CHECK(sb.sb_rextslog == 0, FS_C_SB_RTGEOMETRY, "rextslog", "0", FS_U(sb.sb_rextslog), false, NULL);
		SB_CHECK(sb.sb_frextents == 0, FS_C_SB_RTGEOMETRY, "frextents", "0", FS_U(sb.sb_frextents), false, NULL);
	} else if (sb.sb_rextsize) {
		uint64_t rexts = sb.sb_rblocks / sb.sb_rextsize;
		SB_CHECK(sb.sb_rextents == rexts, FS_C_SB_RTGEOMETRY, "rextents", FS_U(rexts),
			 FS_U(sb.sb_rextents), false, NULL);
		SB_CHECK(sb.sb_rextslog == highbit32((uint32_t)sb.sb_rextents), FS_C_SB_RTGEOMETRY, "rextslog",
			 FS_U(highbit32((uint32_t)sb.sb_rextents)), FS_U(sb.sb_rextslog), false, NULL);
		if (sb.sb_blocksize)
			SB_CHECK(sb.sb_rbmblocks == (sb.sb_rextents + 8ull * sb.sb_blocksize - 1) /
				 (8ull * sb.sb_blocksize), FS_C_SB_RTGEOMETRY, "rbmblocks", NULL,
				 FS_U(sb.sb_rbmblocks), false, NULL);
	}

	/* stripe geometry */
	if (sb.sb_versionnum & XFS_SB_VERSION_DALIGNBIT) {
		SB_CHECK(sb.sb_unit && (!sb.sb_agblocks || sb.sb_agblocks % sb.sb_unit == 0),
			 FS_C_SB_STRIPE, "unit", "non-zero, dividing agblocks", FS_U(sb.sb_unit), false, NULL);
		SB_CHECK(sb.sb_width && sb.sb_unit && sb.sb_width % sb.sb_unit == 0, FS_C_SB_STRIPE, "width",
			 "a non-zero multiple of unit", FS_U(sb.sb_width), false, NULL);
	} else {
		SB_CHECK(sb.sb_unit == 0 && sb.sb_width == 0, FS_C_SB_STRIPE, "unit",
			 "0 without the dalign feature", FS_U(sb.sb_unit), false, NULL);
	}

	/* counters: only the primary's are maintained */
	if (primary && !v.bad) {
		uint64_t max_ino = (uint64_t)sb.sb_dblocks << sb.sb_inopblog;
		/* sparse inode chunks hold a multiple of one holemask bit's inodes */
		bool sparse = sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_SPINODES;
		unsigned unit = sparse ? XFS_INODES_PER_HOLEMASK_BIT : XFS_INODES_PER_CHUNK;
		SB_CHECK(sb.sb_icount <= max_ino && sb.sb_icount % unit == 0,
			 FS_C_SB_COUNTER, "icount", sparse ?
			 "a multiple of 4 (sparse chunks) no larger than the inode space" :
			 "a multiple of 64 no larger than the inode space",
			 FS_U(sb.sb_icount), false, NULL);
		SB_CHECK(sb.sb_ifree <= sb.sb_icount, FS_C_SB_COUNTER, "ifree", "<= icount",
			 FS_U(sb.sb_ifree), false, NULL);
		SB_CHECK(sb.sb_fdblocks <= sb.sb_dblocks, FS_C_SB_COUNTER, "fdblocks", "<= dblocks",
			 FS_U(sb.sb_fdblocks), false, NULL);
		SB_CHECK(sb.sb_frextents <= sb.sb_rextents, FS_C_SB_COUNTER, "frextents", "<= rextents",
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
				 FS_C_SB_INODES, "rootino", "an inode number inside the filesystem",
				 FS_U(sb.sb_rootino), false, "root directory inode number cannot exist");
			/*
			 * mkfs always allocates the realtime inodes after the root
			 * (xfs_repair resets a primary's NULL to that place);
			 * old secondaries may hold NULL
			 */
			SB_CHECK((!primary && sb.sb_rbmino == NULLFSINO) || fs_ino_valid(&g, sb.sb_rbmino),
				 FS_C_SB_RTGEOMETRY, "rbmino", primary ? "an inode number inside the filesystem" :
				 "null or an inode number inside the filesystem",
				 FS_U(sb.sb_rbmino), false, "realtime bitmap inode number cannot exist");
			SB_CHECK((!primary && sb.sb_rsumino == NULLFSINO) || fs_ino_valid(&g, sb.sb_rsumino),
				 FS_C_SB_RTGEOMETRY, "rsumino", primary ? "an inode number inside the filesystem" :
				 "null or an inode number inside the filesystem",
				 FS_U(sb.sb_rsumino), false, "realtime summary inode number cannot exist");
#define QINO_OK(x) ((x) == 0 || (x) == NULLFSINO || fs_ino_valid(&g, (x)))
			SB_CHECK(QINO_OK(sb.sb_uquotino), FS_C_SB_QUOTA, "uquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_uquotino),
				 false, "user quota inode number cannot exist");
			SB_CHECK(QINO_OK(sb.sb_gquotino), FS_C_SB_QUOTA, "gquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_gquotino),
				 false, "group quota inode number cannot exist");
			SB_CHECK(QINO_OK(sb.sb_pquotino), FS_C_SB_QUOTA, "pquotino",
				 "0, null or an inode number inside the filesystem", FS_U(sb.sb_pquotino),
				 false, "project quota inode number cannot exist");
#undef QINO_OK
#define QINO_SET(x) ((x) != 0 && (x) != NULLFSINO)
			/* quotas on (the kernel sets the bit) but no quota inode anywhere */
			if (primary && (sb.sb_versionnum & XFS_SB_VERSION_QUOTABIT))
				SB_CHECK(QINO_SET(sb.sb_uquotino) || QINO_SET(sb.sb_gquotino) ||
					 QINO_SET(sb.sb_pquotino), FS_C_SB_QUOTA, "versionnum",
					 "a quota inode when the quota bit is set", FS_X(sb.sb_versionnum),
					 false, "quota bit set but no quota inode");
#undef QINO_SET
		}
	}
	/*
	 * No superblock flag is in use: mkfs writes 0 and xfs_repair calls any
	 * bit, even the historical read-only one, a bad flags field.
	 */
	SB_CHECK(sb.sb_flags == 0, FS_C_SB_FEATURE, "flags", "0", FS_X(sb.sb_flags), false,
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
				sb_bad(&v, FS_C_SB_GARBAGE, at, "0", FS_X(p[i]), false, NULL);
				break;
			}
		}
	}

	if (v.bad)
		return FS_SB_UNUSABLE;
	return v.findings ? FS_SB_DAMAGED : FS_SB_OK;
}

/* --- the fields every copy shares, and the vote over them ------------------ */

/* Every scalar field by name, for the code that works field by field. */
struct sb_field {
	const char *name;
	size_t off;
	uint8_t size;
};
#define SB_FIELD_ROW(f, w) { #f, offsetof(struct xfs_sb, sb_##f), sizeof(((struct xfs_sb *)0)->sb_##f) },
static const struct sb_field sb_fields[] = { SB_SCALAR_FIELDS(SB_FIELD_ROW) };
_Static_assert(sizeof(sb_fields) / sizeof(sb_fields[0]) == FS_SBF_uuid - FS_SBF_NONE - 1,
	       "sb_fields and enum fs_sb_field list the same fields");
#undef SB_FIELD_ROW

/* sb_fields is in FS_SBF_ order: the identifier of a row */
static enum fs_sb_field sb_field_of(const struct sb_field *f)
{
	return (enum fs_sb_field)(FS_SBF_NONE + 1 + (f - sb_fields));
}

static const struct sb_field *sb_field_named(const char *name)
{
	for (size_t i = 0; i < sizeof(sb_fields) / sizeof(sb_fields[0]); i++)
		if (!strcmp(sb_fields[i].name, name))
			return &sb_fields[i];
	return NULL;
}

static uint64_t sb_get(const struct xfs_sb *sb, const struct sb_field *f)
{
	const unsigned char *p = (const unsigned char *)sb + f->off;
	uint64_t v8; uint32_t v4; uint16_t v2;

	switch (f->size) {
	case 1: return *p;
	case 2: memcpy(&v2, p, 2); return v2;
	case 4: memcpy(&v4, p, 4); return v4;
	default: memcpy(&v8, p, 8); return v8;
	}
}

static void sb_set(struct xfs_sb *sb, const struct sb_field *f, uint64_t v)
{
	unsigned char *p = (unsigned char *)sb + f->off;
	uint32_t v4 = (uint32_t)v; uint16_t v2 = (uint16_t)v; uint8_t v1 = (uint8_t)v;

	switch (f->size) {
	case 1: *p = v1; break;
	case 2: memcpy(p, &v2, 2); break;
	case 4: memcpy(p, &v4, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/*
 * The fields every copy holds alike, with the bits of each that must
 * agree.  Geometry only: mkfs and the kernel leave counters, quota and the
 * root/realtime inode numbers of secondaries stale or null.  Left out, as
 * xfs_repair leaves them out: the attr and quota version bits (set on first
 * use), sb_unit/sb_width (sunit/swidth mount options), sb_imax_pct (growfs
 * -m), the NEEDSREPAIR bit (set on the primary alone during upgrades), the
 * log incompat bits (the kernel sets and clears them on the primary), and
 * compat bits unknown to this build (harmless by definition: the kernel
 * mounts with them, so a primary may carry one its secondaries lack).
 */
static const struct {
	const char *name;
	uint64_t mask;
} sb_shared[] = {
	{ "blocksize", ~0ull }, { "dblocks", ~0ull }, { "rblocks", ~0ull },
	{ "rextents", ~0ull }, { "logstart", ~0ull }, { "rextsize", ~0ull },
	{ "agblocks", ~0ull }, { "agcount", ~0ull }, { "rbmblocks", ~0ull },
	{ "logblocks", ~0ull }, { "sectsize", ~0ull }, { "inodesize", ~0ull },
	{ "inopblock", ~0ull }, { "blocklog", ~0ull }, { "sectlog", ~0ull },
	{ "inodelog", ~0ull }, { "inopblog", ~0ull }, { "agblklog", ~0ull },
	{ "rextslog", ~0ull }, { "inoalignmt", ~0ull }, { "dirblklog", ~0ull },
	{ "logsectlog", ~0ull }, { "logsectsize", ~0ull }, { "logsunit", ~0ull },
	{ "features2", ~0ull }, { "features_compat", XFS_SB_FEAT_COMPAT_ALL },
	{ "features_ro_compat", ~0ull }, { "spino_align", ~0ull },
	{ "versionnum", (uint16_t)~(XFS_SB_VERSION_ATTRBIT | XFS_SB_VERSION_QUOTABIT) },
	{ "features_incompat", (uint32_t)~XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR },
};
#define SB_NSHARED (sizeof(sb_shared) / sizeof(sb_shared[0]))

/* Bit fields read better in hex. */
static bool sb_field_hex(const char *name)
{
	return !strncmp(name, "features", 8) || !strcmp(name, "versionnum");
}

int fs_sb_compare_secondary(const struct xfs_sb *p, const struct xfs_sb *s,
			    fs_agnumber_t agno, struct fs_findings *fl)
{
	int n = 0;

	for (size_t i = 0; i < SB_NSHARED; i++) {
		const struct sb_field *f = sb_field_named(sb_shared[i].name);
		uint64_t pv = sb_get(p, f), sv = sb_get(s, f);
		struct fs_typed val;

		if (!((pv ^ sv) & sb_shared[i].mask))
			continue;
		val = (struct fs_typed){ .field = (uint16_t)sb_field_of(f),
					 .has = FS_HAS_EXPECTED | FS_HAS_FOUND,
					 .expected = pv, .found = sv };
		if (sb_field_hex(f->name))
			fs_report_val(fl, &val, FS_C_SB_SECONDARY, agno, FS_NONE, FS_NONE, f->name,
				      FS_X(pv), FS_X(sv),
				      "secondary superblock %s differs from the primary", f->name);
		else
			fs_report_val(fl, &val, FS_C_SB_SECONDARY, agno, FS_NONE, FS_NONE, f->name,
				      FS_U(pv), FS_U(sv),
				      "secondary superblock %s differs from the primary", f->name);
		n++;
	}
	if (memcmp(&p->sb_uuid, &s->sb_uuid, sizeof(p->sb_uuid))) {
		fs_sb_report(fl, FS_C_SB_UUID, agno, FS_NONE, "uuid", NULL, NULL,
			  "secondary superblock UUID differs from the primary");
		n++;
	}
	if ((p->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_META_UUID) &&
	    memcmp(&p->sb_meta_uuid, &s->sb_meta_uuid, sizeof(p->sb_meta_uuid))) {
		fs_sb_report(fl, FS_C_SB_UUID, agno, FS_NONE, "meta_uuid", NULL, NULL,
			  "secondary superblock metadata UUID differs from the primary");
		n++;
	}
	return n;
}

bool fs_sb_field_equal(const struct xfs_sb *a, const struct xfs_sb *b, enum fs_sb_field field)
{
	if (field > FS_SBF_NONE && field < FS_SBF_uuid)
		return sb_get(a, &sb_fields[field - FS_SBF_NONE - 1]) ==
		       sb_get(b, &sb_fields[field - FS_SBF_NONE - 1]);
	if (field == FS_SBF_uuid)
		return !memcmp(&a->sb_uuid, &b->sb_uuid, sizeof(a->sb_uuid));
	if (field == FS_SBF_meta_uuid)
		return !memcmp(&a->sb_meta_uuid, &b->sb_meta_uuid, sizeof(a->sb_meta_uuid));
	return true;
}

void fs_sb_copy_changed(struct xfs_sb *to, const struct xfs_sb *chosen, const struct xfs_sb *was)
{
	for (size_t i = 0; i < sizeof(sb_fields) / sizeof(sb_fields[0]); i++)
		if (sb_get(chosen, &sb_fields[i]) != sb_get(was, &sb_fields[i]))
			sb_set(to, &sb_fields[i], sb_get(chosen, &sb_fields[i]));
	if (memcmp(&chosen->sb_uuid, &was->sb_uuid, sizeof(was->sb_uuid)))
		memcpy(&to->sb_uuid, &chosen->sb_uuid, sizeof(to->sb_uuid));
	if (memcmp(&chosen->sb_meta_uuid, &was->sb_meta_uuid, sizeof(was->sb_meta_uuid)))
		memcpy(&to->sb_meta_uuid, &chosen->sb_meta_uuid, sizeof(to->sb_meta_uuid));
}

/* The value most voters hold (masked) and how many hold it. */
static uint64_t vote_scalar(const struct xfs_sb *v, unsigned n, const struct sb_field *f,
			    uint64_t mask, unsigned *count)
{
	uint64_t best = 0;

	*count = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t x = sb_get(&v[i], f) & mask;
		unsigned c = 0;

		for (unsigned j = 0; j < n; j++)
			c += (sb_get(&v[j], f) & mask) == x;
		if (c > *count) {
			*count = c;
			best = x;
		}
	}
	return best;
}

static const uuid_t *vote_uuid(const struct xfs_sb *v, unsigned n, bool meta, unsigned *count)
{
	const uuid_t *best = NULL;

	*count = 0;
	for (unsigned i = 0; i < n; i++) {
		const uuid_t *x = meta ? &v[i].sb_meta_uuid : &v[i].sb_uuid;
		unsigned c = 0;

		for (unsigned j = 0; j < n; j++)
			c += !memcmp(x, meta ? &v[j].sb_meta_uuid : &v[j].sb_uuid, sizeof(*x));
		if (c > *count) {
			*count = c;
			best = x;
		}
	}
	return best;
}

/* A majority of two or more of the secondaries read holds the value. */
static bool vote_carries(unsigned count, unsigned n)
{
	return count >= 2 && 2 * count > n;
}

int fs_sb_vote(const struct xfs_sb *p, const struct xfs_sb *voters, unsigned n,
	       struct xfs_sb *out, struct fs_findings *fl)
{
	int changed = 0;
	unsigned count;

	*out = *p;
	for (size_t i = 0; i < SB_NSHARED; i++) {
		const struct sb_field *f = sb_field_named(sb_shared[i].name);
		uint64_t m = sb_shared[i].mask, pv = sb_get(p, f), best;
		char exp[24], found[24];

		if (!m)
			continue;
		best = vote_scalar(voters, n, f, m, &count);
		if (!vote_carries(count, n) || best == (pv & m))
			continue;
		sb_set(out, f, (pv & ~m) | best);
		if (sb_field_hex(f->name)) {
			fs_fmt_x64(exp, best);
			fs_fmt_x64(found, pv & m);
		} else {
			snprintf(exp, sizeof(exp), "%llu", (unsigned long long)best);
			snprintf(found, sizeof(found), "%llu", (unsigned long long)(pv & m));
		}
		fs_sb_report(fl, FS_C_SB_SECONDARY, 0, 0, f->name, exp, found,
			  "the primary superblock's %s (%s) differs from %u of the %u secondaries "
			  "read, which agree on %s: the primary is the damaged one and the "
			  "secondaries' value is used", f->name, found, count, n, exp);
		changed++;
	}
	for (int meta = 0; meta < 2; meta++) {
		const uuid_t *best;
		uuid_t *dst = meta ? &out->sb_meta_uuid : &out->sb_uuid;

		if (meta && !(out->sb_features_incompat & XFS_SB_FEAT_INCOMPAT_META_UUID))
			break;
		best = vote_uuid(voters, n, meta, &count);
		if (!best || !vote_carries(count, n) || !memcmp(best, dst, sizeof(*dst)))
			continue;
		memcpy(dst, best, sizeof(*dst));
		fs_sb_report(fl, FS_C_SB_UUID, 0, 0, meta ? "meta_uuid" : "uuid", NULL, NULL,
			  "the primary superblock's %s differs from %u of the %u secondaries read, "
			  "which agree: the primary is the damaged one and the secondaries' value "
			  "is used", meta ? "metadata UUID" : "UUID", count, n);
		changed++;
	}
	return changed;
}

/*
 * Where mkfs puts the root directory: the first inode chunk after the AG
 * headers, the free space and inode btree roots, the blocks mkfs puts on
 * the free list, the optional btree roots and (in AG 0) the log, rounded
 * up to the inode alignment (the stripe unit when inodes are stripe
 * aligned).  The rule the kernel and xfs_repair share.
 */
uint64_t fs_sb_calc_rootino(const struct xfs_sb *sb, const struct fs_geom *g)
{
	uint64_t first = (4ull * sb->sb_sectsize + sb->sb_blocksize - 1) / sb->sb_blocksize;
	uint32_t align = 0;

	first += 2;	/* the by-size free space root and the inode btree root */
	/* the free list as mkfs fills it for one-level free space btrees, and one past it */
	first += 2 * (g->alloc_maxlevels < 2 ? g->alloc_maxlevels : 2) + 1;
	if (g->finobt)
		first++;
	if (g->rmapbt)
		first += 1 + (g->rmap_maxlevels < 2 ? g->rmap_maxlevels : 2);
	if (g->reflink)
		first++;
	if (g->log_internal && g->log_agno == 0)
		first += g->logblocks;
	if ((sb->sb_versionnum & XFS_SB_VERSION_DALIGNBIT) && sb->sb_unit &&
	    (sb->sb_versionnum & XFS_SB_VERSION_ALIGNBIT) &&
	    sb->sb_inoalignmt >= g->blocks_per_cluster && sb->sb_inoalignmt > 1 &&
	    !(sb->sb_unit & (sb->sb_inoalignmt - 1)))
		align = sb->sb_unit;
	else if ((sb->sb_versionnum & XFS_SB_VERSION_ALIGNBIT) && sb->sb_inoalignmt > 1)
		align = sb->sb_inoalignmt;
	if (align)
		first = (first + align - 1) / align * align;
	return fs_agino_to_ino(g, 0, (fs_agino_t)(first << g->inopblog));
}
