// SPDX-License-Identifier: GPL-2.0
/*
 * Quota file blocks: the per-record rules of struct xfs_dqblk (the
 * kernel's dquot verifier) and the block-level rule that ids follow the
 * record's place in the file.  Each record carries its own CRC, UUID and
 * LSN, so the verifier table sees one record at a time.
 */
#include "libfs/format/dquot.h"

#include <stdio.h>

#include "libfs/format/endian.h"

#define DQ_SIZE sizeof(struct xfs_dqblk)

uint32_t fs_dquot_per_block(const struct fs_geom *g)
{
	return g->blocksize / DQ_SIZE;
}

int fs_dquot_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_disk_dquot *d = buf;
	struct fs_reporter r = fs_vctx_reporter(c);
	uint8_t type, rec;
	uint32_t id;

	if (len < DQ_SIZE)
		return 0;
	if (d->d_version != XFS_DQUOT_VERSION) {
		fs_reporter_bad(&r, FS_C_DQUOT_VERSION, "d_version", FS_U(XFS_DQUOT_VERSION),
				FS_U(d->d_version), "dquot version is wrong");
		return r.n;
	}
	type = d->d_type;
	rec = type & XFS_DQTYPE_REC_MASK;
	id = be32(d->d_id);
	if ((type & ~XFS_DQTYPE_ANY) ||
	    (rec != XFS_DQTYPE_USER && rec != XFS_DQTYPE_GROUP && rec != XFS_DQTYPE_PROJ)) {
		fs_reporter_bad(&r, FS_C_DQUOT_TYPE, "d_type", "one of user, group, project",
				FS_X(type), "dquot type is invalid");
		return r.n;
	}
	if ((type & XFS_DQTYPE_BIGTIME) && !c->g->bigtime)
		fs_reporter_bad(&r, FS_C_DQUOT_TYPE, "d_type", "no BIGTIME", FS_X(type),
				"dquot has bigtime timers on a filesystem without bigtime");
	if ((type & XFS_DQTYPE_BIGTIME) && id == 0)
		fs_reporter_bad(&r, FS_C_DQUOT_TYPE, "d_type", "no BIGTIME on the default quota",
				FS_X(type), "the default quota record (id 0) has bigtime timers");
	if (id == 0)
		return r.n;	/* id 0 holds the defaults: no usage rules */
	if (d->d_blk_softlimit && be64(d->d_bcount) > be64(d->d_blk_softlimit) && !d->d_btimer)
		fs_reporter_bad(&r, FS_C_DQUOT_TIMER, "d_btimer", "set (over the soft limit)", "0",
				"dquot block usage is over its soft limit without a grace timer");
	if (d->d_ino_softlimit && be64(d->d_icount) > be64(d->d_ino_softlimit) && !d->d_itimer)
		fs_reporter_bad(&r, FS_C_DQUOT_TIMER, "d_itimer", "set (over the soft limit)", "0",
				"dquot inode usage is over its soft limit without a grace timer");
	if (d->d_rtb_softlimit && be64(d->d_rtbcount) > be64(d->d_rtb_softlimit) && !d->d_rtbtimer)
		fs_reporter_bad(&r, FS_C_DQUOT_TIMER, "d_rtbtimer", "set (over the soft limit)",
				"0",
				"dquot realtime usage is over its soft limit without a grace timer");
	return r.n;
}

int fs_dquot_block_verify(const struct fs_vctx *c, const void *buf, size_t len,
			  uint64_t fileblk, uint8_t type)
{
	const uint8_t *p = buf;
	uint32_t per = (uint32_t)(len / DQ_SIZE);
	struct fs_reporter r = fs_vctx_reporter(c);
	int n = 0;

	for (uint32_t i = 0; i < per; i++) {
		const struct xfs_disk_dquot *d = (const void *)(p + (size_t)i * DQ_SIZE);
		uint64_t want = fileblk * per + i;
		int bad = fs_verify(FS_MT_DQUOT, c, d, DQ_SIZE);

		n += bad;
		if (bad)
			continue;	/* a record that failed its own checks says nothing more */
		if (be32(d->d_id) != want) {
			char fld[24];

			snprintf(fld, sizeof(fld), "dquot[%u].d_id", i);
			fs_reporter_bad(&r, FS_C_DQUOT_ID, fld, FS_U(want), FS_U(be32(d->d_id)),
					"dquot id is not the one its place in the quota file says");
		}
		if ((d->d_type & XFS_DQTYPE_REC_MASK) != type)
			fs_reporter_bad(&r, FS_C_DQUOT_TYPE, "d_type", FS_X(type), FS_X(d->d_type),
					"dquot type is not the quota file's");
	}
	return n + r.n;
}
