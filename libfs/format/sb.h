/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SB_H
#define XFSX_SB_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"

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

/*
 * The superblock's fields as identifiers, as a superblock finding carries
 * the field it names (val.field): FS_SBF_<field>, and the two UUIDs.
 */
enum fs_sb_field {
	FS_SBF_NONE,
#define FS_SBF_ROW(f, w) FS_SBF_##f,
	SB_SCALAR_FIELDS(FS_SBF_ROW)
#undef FS_SBF_ROW
	FS_SBF_uuid,
	FS_SBF_meta_uuid,
	FS_SBF_NR
};

/* The field a finding's field name ("imax_pct", "uuid") is, or FS_SBF_NONE. */
enum fs_sb_field fs_sb_field_id(const char *name);

/*
 * fs_report for a superblock finding (no inode): a field that is one of
 * the superblock's is carried typed too (val.field), for repair to copy.
 */
int fs_sb_report(struct fs_findings *fl, enum fs_code code, int64_t ag, int64_t daddr,
		 const char *field, const char *expected, const char *found, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

void fs_sb_from_disk(struct xfs_sb *to, const struct xfs_dsb *from);
void fs_sb_to_disk(struct xfs_dsb *to, const struct xfs_sb *from);
/* Copy one field: 0, or -ENOENT for FS_SBF_NONE. */
int fs_sb_copy_field(struct xfs_sb *to, const struct xfs_sb *from, enum fs_sb_field field);

/* Derive the geometry from a superblock that passed fs_sb_verify(). */
int fs_geom_derive(const struct xfs_sb *sb, struct fs_geom *g);

/* Outcome of verifying one superblock. */
enum fs_sb_state {
	FS_SB_OK = 0,
	FS_SB_DAMAGED,      /* findings, but the geometry is usable */
	FS_SB_UNUSABLE,     /* geometry cannot be trusted (or not XFS at all) */
	FS_SB_NOT_XFS,      /* magic is not XFSB */
	FS_SB_V4,           /* a v4 (non-CRC) filesystem */
	FS_SB_UNSUPPORTED,  /* feature bits this build does not understand */
};

/*
 * Verify a superblock sector (buf holds at least len bytes; the CRC covers
 * sb_sectsize bytes).  agno says which copy it is: 0 is the primary.
 * Every failed rule becomes a finding with the field named.
 */
enum fs_sb_state fs_sb_verify(const void *buf, size_t len, fs_agnumber_t agno,
			      struct fs_findings *fl);

/*
 * Compare a secondary superblock's geometry fields with the primary's; a
 * finding names each field that differs.  Returns the number of differences.
 */
int fs_sb_compare_secondary(const struct xfs_sb *primary, const struct xfs_sb *sec,
			    fs_agnumber_t agno, struct fs_findings *fl);

/*
 * Vote the primary's shared fields (geometry, features, UUIDs: what every
 * copy holds alike) against the secondaries read: where two or more of
 * them, and more than half, agree on a value the primary lacks, *out takes
 * their value and a finding against AG 0 names the field.  Returns the
 * number of fields taken from the secondaries (0: *out is the primary).
 */
int fs_sb_vote(const struct xfs_sb *primary, const struct xfs_sb *voters, unsigned n,
	       struct xfs_sb *out, struct fs_findings *fl);

/* Where mkfs puts the root directory for this geometry (as the kernel and xfs_repair compute it). */
uint64_t fs_sb_calc_rootino(const struct xfs_sb *sb, const struct fs_geom *g);

/* Whether a field is the same in both; true for FS_SBF_NONE. */
bool fs_sb_field_equal(const struct xfs_sb *a, const struct xfs_sb *b, enum fs_sb_field field);

/* Every field where chosen differs from was is copied from chosen into to. */
void fs_sb_copy_changed(struct xfs_sb *to, const struct xfs_sb *chosen, const struct xfs_sb *was);

/* Highest inode number count the geometry allows (for counter sanity). */
uint64_t fs_geom_max_inodes(const struct fs_geom *g);

/* Name of a feature combination for messages, e.g. "unknown incompat 0x40". */
uint32_t fs_sb_unknown_incompat(const struct xfs_sb *sb);
uint32_t fs_sb_unknown_ro_compat(const struct xfs_sb *sb);

#endif
