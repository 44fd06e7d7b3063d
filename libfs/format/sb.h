/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SB_H
#define XFSX_SB_H

#include "libfs/format/format.h"
#include "libfs/format/findings.h"

void fs_sb_from_disk(struct xfs_sb *to, const struct xfs_dsb *from);
void fs_sb_to_disk(struct xfs_dsb *to, const struct xfs_sb *from);
/* Copy one field, named as in findings ("imax_pct", "uuid"): 0, or -ENOENT for no such field. */
int fs_sb_copy_field(struct xfs_sb *to, const struct xfs_sb *from, const char *name);

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

/* Whether a field (named as in findings; "uuid" too) is the same in both; true for unknown names. */
bool fs_sb_field_equal(const struct xfs_sb *a, const struct xfs_sb *b, const char *name);

/* Every field where chosen differs from was is copied from chosen into to. */
void fs_sb_copy_changed(struct xfs_sb *to, const struct xfs_sb *chosen, const struct xfs_sb *was);

/* Highest inode number count the geometry allows (for counter sanity). */
uint64_t fs_geom_max_inodes(const struct fs_geom *g);

/* Name of a feature combination for messages, e.g. "unknown incompat 0x40". */
uint32_t fs_sb_unknown_incompat(const struct xfs_sb *sb);
uint32_t fs_sb_unknown_ro_compat(const struct xfs_sb *sb);

#endif
