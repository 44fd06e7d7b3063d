// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the plan, under the crash protocol: the primary
 * superblock gets NEEDSREPAIR first (the kernel refuses to mount while it
 * is set) and is flushed; then new blocks (btrees nothing points to yet),
 * then the AG headers and inode cores that switch to them, then the
 * secondary superblocks, and last the primary with its counters and
 * NEEDSREPAIR cleared.  Each step is a flush of one write class of the
 * cache's dirty buffers (every buffer passes its read verifier first:
 * a failure stops the run before that class is written) followed by a
 * device flush.  A crash anywhere leaves either the original or a
 * filesystem the kernel will not mount until a rerun finishes the job.
 * -L's clean log is written after NEEDSREPAIR is set.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libfs/build/encode.h"
#include "libfs/format/sb.h"
#include "libfs/util/spill.h"
#include "repair/buf.h"
#include "repair/commit.h"

/* A superblock sector into a dirty buffer of the class. */
static int put_sb(struct repair_ctx *rx, fs_agnumber_t agno, const struct xfs_sb *sb,
		  uint8_t wclass)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	int err = repair_get_buf(rx, fs_ag_sb_offset(g, agno) >> FS_BBSHIFT, g->sectsize, true, &b);

	if (err)
		return err;
	fs_enc_sb(b->data, g->sectsize, sb);
	err = repair_mark(rx, b, FS_MT_SB, agno, 0, wclass);
	fs_buf_put(rx->sx->cache, b);
	return err;
}

static int flush(struct repair_ctx *rx, uint8_t wclass, const char *what, char *msg, size_t ml)
{
	struct fs_flush_opts fo = {
		.g = &rx->fs->g, .wclass = wclass, .sync = true,
		.have_log_head = rx->fs->have_log_head, .head_lsn = rx->fs->log_head_lsn,
	};
	struct fs_flush_result res = { 0 };
	int err = fs_cache_flush(rx->sx->cache, &fo, &res);

	rx->blocks_written += res.buffers;
	rx->writes += res.writes;
	rx->bytes_written += res.bytes;
	if (!err)
		return 0;
	char place[FS_PLACE_LEN];

	if (err == -EUCLEAN)
		snprintf(msg, ml, "BUG: a %s block at %s fails its verifier before it is written "
			 "(%s: %s); the write stopped there (%s)",
			 fs_verifier_get(res.type) ? fs_verifier_get(res.type)->name : "metadata",
			 fs_place(place, sizeof(place), res.agno, res.ino ? (int64_t)res.ino : FS_NONE,
				  (int64_t)res.daddr),
			 res.has_code ? fs_code_name(res.code) : "unknown", res.message, what);
	else
		snprintf(msg, ml, "writing %s failed at %s (%u bytes): %s; NEEDSREPAIR "
			 "stays set: run xfsx_repair again", what,
			 fs_place(place, sizeof(place), FS_NONE, FS_NONE, (int64_t)res.daddr),
			 res.len, strerror(-err));
	return err;
}

int repair_zero_log(struct fs *fs, char *msg, size_t ml)
{
	return fs_log_reset(fs, msg, ml);
}

int repair_commit(struct repair_ctx *rx, char *msg, size_t ml)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xfs_sb mark = rx->newsb;
	bool dirty_log = rx->fs->have_log_head && !rx->fs->log_clean;
	int err = fs_cache_stage_error(rx->sx->cache);

	/* -m: a changed block staged in the temporary directory that could not be read back */
	if (err) {
		snprintf(msg, ml, "the repair's changed blocks staged in the temporary directory "
			 "%s could not be written or read back: %s; nothing was written",
			 rx->sx->stage ? fs_spill_dir(rx->sx->stage) : "?", strerror(-err));
		return err;
	}
	/* 1: NEEDSREPAIR on the primary, durable before anything else changes */
	mark.sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	err = put_sb(rx, 0, &mark, FS_WCLASS_PRIMARY);
	if (!err)
		err = flush(rx, FS_WCLASS_PRIMARY, "the primary superblock (NEEDSREPAIR)", msg, ml);
	if (err)
		return err;
	/* 2: the log, when -L throws a dirty one away */
	if (rx->o->zero_log && dirty_log) {
		err = repair_zero_log(rx->fs, msg, ml);
		if (err)
			return err;
	}
	/* 3, 4: new blocks, then the headers and inodes that point at them */
	err = flush(rx, FS_WCLASS_NEW, "new btree blocks", msg, ml);
	if (!err)
		err = flush(rx, FS_WCLASS_HEADERS, "AG headers and inodes", msg, ml);
	if (err)
		return err;
	/* 5: secondaries as copies of the new primary */
	for (fs_agnumber_t a = 1; a < g->agcount && !err; a++)
		if (rx->rewrite_sb[a])
			err = put_sb(rx, a, &rx->newsb, FS_WCLASS_SECONDARY);
	if (!err)
		err = flush(rx, FS_WCLASS_SECONDARY, "secondary superblocks", msg, ml);
	if (err)
		return err;
	/* 6: the primary, counters set and NEEDSREPAIR cleared: mountable again */
	rx->newsb.sb_features_incompat &= ~(uint32_t)XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	err = put_sb(rx, 0, &rx->newsb, FS_WCLASS_PRIMARY);
	if (!err)
		err = flush(rx, FS_WCLASS_PRIMARY, "the primary superblock", msg, ml);
	return err;
}
