// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 7 (run.c), quota.  A quota file block with findings gets every
 * record that fails verification (magic, version, CRC, its type, the id
 * its place says) rewritten as the kernel's own dquot repair rewrites one
 * (zero usage, limits and timers; libfs/build/encode.c fs_enc_dqblk); the
 * records that verify are kept.  And when this repair changes what users
 * use (inodes cleared, forks removed, directories rebuilt) or a dquot was
 * rewritten, the superblock's quota CHKD flags are cleared, so the kernel
 * counts usage afresh at the next mount, as xfs_repair leaves it.  So
 * too when the log replay's BUIs took or freed block map btree blocks:
 * the kernel's recovery charges those to the inode's dquots, ours does not.
 * A quota inode the superblock names that is not an in-use regular file
 * (or that this repair clears) is no longer named: its superblock field
 * becomes NULLFSINO and its type's CHKD flag is cleared, so a quota mount
 * makes a new quota file and counts usage (with no quota inode left,
 * quotas are switched off: the quota bit and flags cleared, as xfs_repair
 * does).  xfs_repair clears such an
 * inode; here the inode itself is left to the other phases (a directory
 * stays the directory it is, with its files).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/dquot.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/util/vec.h"
#include "repair/buf.h"
#include "repair/phase_quota.h"
#include "repair/rules.h"
#include "scan/links.h"

/* The quota file a finding's inode is, and its record type; false if none. */
static bool quota_file(const struct repair_ctx *rx, int64_t ino, uint8_t *type)
{
	const struct xfs_sb *sb = &rx->fs->sb;

	if (ino <= 0 || (uint64_t)ino == NULLFSINO)
		return false;
	if ((uint64_t)ino == sb->sb_uquotino)
		*type = XFS_DQTYPE_USER;
	else if ((uint64_t)ino == sb->sb_gquotino)
		*type = XFS_DQTYPE_GROUP;
	else if ((uint64_t)ino == sb->sb_pquotino)
		*type = XFS_DQTYPE_PROJ;
	else
		return false;
	return true;
}

/* The file block of quota file ino that lives at daddr, or -ENOENT. */
static int file_block(struct repair_ctx *rx, fs_ino_t ino, fs_daddr_t daddr, uint64_t *fileblk)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_bmap m = { 0 };
	int err = repair_data_map(rx, ino, &m);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m.n && err; i++) {
		fs_daddr_t d0 = fs_fsb_to_daddr(g, m.ext[i].startblock);
		uint64_t bbs = (uint64_t)1 << (g->blocklog - FS_BBSHIFT);

		if (daddr >= d0 && (uint64_t)(daddr - d0) < m.ext[i].blockcount * bbs &&
		    (daddr - d0) % bbs == 0) {
			*fileblk = m.ext[i].startoff + (uint64_t)(daddr - d0) / bbs;
			err = 0;
		}
	}
	fs_bmap_free(&m);
	return err;
}

/* Rewrite the records of one quota block that do not verify; how many. */
static int mend_block(struct repair_ctx *rx, fs_ino_t ino, uint8_t type, fs_daddr_t daddr,
		      uint32_t *mended)
{
	const struct fs_geom *g = &rx->fs->g;
	uint32_t per = fs_dquot_per_block(g);
	uint64_t fileblk;
	struct fs_buf *b;
	int err = file_block(rx, ino, daddr, &fileblk);

	*mended = 0;
	if (err)
		return err == -ENOENT ? 0 : err;
	err = repair_get_buf(rx, daddr, g->blocksize, false, &b);
	if (err)
		return err;
	for (uint32_t i = 0; i < per; i++) {
		struct xfs_dqblk *q = (struct xfs_dqblk *)b->data + i;
		uint32_t id = (uint32_t)(fileblk * per + i);
		struct fs_findings scratch;
		struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .daddr = daddr,
				      .have_log_head = rx->fs->have_log_head,
				      .head_lsn = rx->fs->log_head_lsn, .ino = ino };
		int n;

		fs_findings_init(&scratch);
		vc.fl = &scratch;
		n = fs_verify(FS_MT_DQUOT, &vc, q, sizeof(*q));
		fs_findings_free(&scratch);
		if (!n && be32(q->dd_diskdq.d_id) == id &&
		    (q->dd_diskdq.d_type & XFS_DQTYPE_REC_MASK) == type)
			continue;
		fs_enc_dqblk(q, id, type, g->meta_uuid);
		(*mended)++;
	}
	if (*mended)
		err = repair_mark(rx, b, FS_MT_DQUOT, fs_ino_to_agno(g, ino), ino,
				  FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	return err;
}

/* Whether the quota inode ino cannot serve: not in use, not a regular file, or cleared. */
static bool quota_ino_unusable(const struct repair_ctx *rx, fs_ino_t ino)
{
	uint64_t slot = scan_links_slot(rx->sx, ino);
	const struct link_rec *r;

	if (slot == UINT64_MAX)
		return true;
	r = &rx->sx->links->rec[slot];
	return !(r->flags & LR_SEEN) || r->type != XFS_DIR3_FT_REG_FILE ||
	       (rx->verdict[slot] & RV_CLEAR);
}

static void unhook_quota_inodes(struct repair_ctx *rx)
{
	struct xfs_sb *sb = &rx->newsb;
	uint64_t *field[3] = { &sb->sb_uquotino, &sb->sb_gquotino, &sb->sb_pquotino };
	static const uint16_t chkd[3] = { XFS_UQUOTA_CHKD, XFS_GQUOTA_CHKD, XFS_PQUOTA_CHKD };

	if (!rx->sx->links)
		return;
	for (int t = 0; t < 3; t++) {
		fs_ino_t ino = *field[t];

		if (!ino || ino == NULLFSINO || !fs_ino_valid(&rx->fs->g, ino) ||
		    !quota_ino_unusable(rx, ino))
			continue;
		rx->quota_unhooked[t] = ino;
		*field[t] = NULLFSINO;
		sb->sb_qflags &= (uint16_t)~chkd[t];
		rx->counters = true;
		rx->planned_writes = true;
	}
	/* no quota inode left at all: quotas off, as xfs_repair leaves them */
	if ((rx->quota_unhooked[0] || rx->quota_unhooked[1] || rx->quota_unhooked[2]) &&
	    (!*field[0] || *field[0] == NULLFSINO) && (!*field[1] || *field[1] == NULLFSINO) &&
	    (!*field[2] || *field[2] == NULLFSINO)) {
		sb->sb_versionnum &= (uint16_t)~XFS_SB_VERSION_QUOTABIT;
		sb->sb_qflags = 0;
	}
}

int repair_quota_plan_block(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	uint32_t mended;
	uint8_t type;
	int err;

	(void)arg;
	if (f->daddr < 0 || !quota_file(rx, f->ino, &type))
		return 0;
	for (size_t k = 0; k < rx->ndquot; k++)
		if (rx->dquot_blocks[k] == (fs_daddr_t)f->daddr)
			return 0;
	err = mend_block(rx, (fs_ino_t)f->ino, type, (fs_daddr_t)f->daddr, &mended);
	if (err || !mended)
		return err;
	err = FS_VEC_ROOM(rx->dquot_blocks, rx->ndquot, rx->capdquot, 8);
	if (!err)
		rx->dquot_blocks[rx->ndquot++] = (fs_daddr_t)f->daddr;
	rx->planned_writes = true;
	return err;
}

int repair_phase_quota(struct repair_ctx *rx)
{
	const uint16_t acct = XFS_UQUOTA_ACCT | XFS_GQUOTA_ACCT | XFS_PQUOTA_ACCT;
	int err = repair_plan_findings(rx, REPAIR_PLAN_QUOTA, NULL);

	if (!err && (rx->fs->sb.sb_qflags & acct) &&
	    (rx->drops || rx->ndquot || rx->replay_bmbt_changed))
		rx->quota_recount = true;
	if (!err)
		unhook_quota_inodes(rx);
	return err;
}
