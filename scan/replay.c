// SPDX-License-Identifier: GPL-2.0
/*
 * The dirty log made what the tools see, the one sequence check and
 * repair share: the log located and replayed in memory through libfs
 * (logread.c, logreplay.c), then the replay made real in one of two ways
 * (shown to every read of the reopened device, nothing written: check
 * and repair -n; or written through the device's before-write hooks and
 * the log reset: repair) and the filesystem opened again over it, since
 * the superblock may be among what the replay changed (the replayed
 * blocks go to the data device, the log reset to the log's own device).
 * Also the undo file over both devices, made and moved with them.  What
 * to refuse before that, and what to say, stays with the tools.
 */
#include "scan/log.h"

#include <string.h>

#include "libfs/undo/undo.h"

int scan_undo_create(const char *path, const struct fs *fs, const char *tool,
		     struct fs_undo **out, char *msg, size_t ml)
{
	struct fs_dev *devs[FS_UNDO_ROLES] = {
		[FS_UNDO_DATA] = fs->dev, [FS_UNDO_LOG] = fs_log_extdev(fs),
	};

	/* the realtime device is never written: file data is not metadata */
	return fs_undo_create_devs(path, devs, tool, NULL, out, msg, ml);
}

int scan_undo_attach(struct fs_undo *u, const struct fs *fs)
{
	int err = fs_undo_attach(u, fs->dev);

	if (!err && fs_log_extdev(fs))
		err = fs_undo_attach_role(u, FS_UNDO_LOG, fs->logdev);
	return err;
}

int scan_log_replay(struct fs *fs, struct scan_log *sl)
{
	memset(sl, 0, sizeof(*sl));
	sl->err = fs_log_locate(fs, &sl->li, sl->msg, sizeof(sl->msg));
	if (sl->err) {
		/* the simple head search still says whether it is dirty */
		sl->dirty = fs->have_log_head && !fs->log_clean;
		return sl->err;
	}
	sl->located = true;
	sl->dirty = !sl->li.clean;
	if (!sl->dirty)
		return 0;
	sl->err = fs_replay_log(fs, &sl->li, &sl->rp, sl->msg, sizeof(sl->msg));
	sl->replayed = !sl->err;
	return sl->err;
}

int scan_log_reopen(struct scan_log *sl, enum scan_replay_mode mode, const char *path,
		    struct fs_open_opts *oo, struct fs_undo *undo, struct fs **fs,
		    struct fs_findings *fl, struct fs_error *ferr, enum scan_reopen_step *failed,
		    char *msg, size_t ml)
{
	int err;

	if (mode == SCAN_REPLAY_ON_DISK) {
		err = fs_replay_write(*fs, sl->rp, &sl->li, msg, ml);
		if (err) {
			*failed = SCAN_REOPEN_WRITE;
			return err;
		}
	}
	if (undo)
		fs_undo_detach(undo);
	fs_close(*fs);
	*fs = NULL;
	fs_findings_free(fl);
	fs_findings_init(fl);
	if (mode == SCAN_REPLAY_IN_MEMORY) {
		oo->dev.read_patch = fs_replay_patch;
		oo->dev.read_patch_priv = sl->rp;
	}
	err = fs_open(path, oo, fs, fl, ferr);
	if (err) {
		*failed = SCAN_REOPEN_OPEN;
		return err;
	}
	if (undo) {
		err = scan_undo_attach(undo, *fs);
		if (err) {
			*failed = SCAN_REOPEN_UNDO;
			return err;
		}
	}
	/* the scan judges what recovery leaves: no log.dirty (on disk the log is clean now) */
	if (mode == SCAN_REPLAY_IN_MEMORY)
		(*fs)->log_replayed = true;
	/* the kernel recomputes lazy counters after recovery: not a finding */
	if ((*fs)->g.lazysbcount)
		(*fs)->sb_counters_stale = true;
	return 0;
}
