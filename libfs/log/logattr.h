/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGATTR_H
#define XFSX_LOGATTR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "libfs/format/format.h"
#include "libfs/log/logread.h"

/* An xattr intent (ATTRI) as the log states it, its name and value in the item's regions. */
struct fs_log_attri {
	uint64_t id, ino;
	uint32_t op;               /* XFS_ATTRI_OP_FLAGS_SET / REMOVE / REPLACE / PPTR_* */
	uint32_t filter;           /* XFS_ATTR_ROOT / SECURE / PARENT (INCOMPLETE dropped) */
	uint32_t namelen, valuelen;
	const unsigned char *name, *value;   /* point into the item */
	/*
	 * Parent pointer ops (PPTR_SET, PPTR_REMOVE, PPTR_REPLACE): the
	 * generation the file must have (alfi_igen), and for a replace the
	 * new name and value (the value a struct xfs_parent_rec, as value).
	 */
	uint32_t igen;
	uint32_t newnamelen;
	const unsigned char *newname, *newvalue;
};

/* Whether an ATTRI is a parent pointer op. */
static inline bool fs_log_attri_is_pptr(const struct fs_log_attri *a)
{
	return a->op == XFS_ATTRI_OP_FLAGS_PPTR_SET || a->op == XFS_ATTRI_OP_FLAGS_PPTR_REMOVE ||
	       a->op == XFS_ATTRI_OP_FLAGS_PPTR_REPLACE;
}

/*
 * Decode and check an ATTRI item as the kernel checks it when it meets one
 * in the log (whether or not its done item follows): 0, or -EUCLEAN with
 * why saying what is wrong.
 */
int fs_log_attri_parse(const struct fs_geom *g, const struct fs_log_item *it,
		       struct fs_log_attri *a, char *why, size_t wl);

/* "xattr intent 0x... (set of "user.name", a value of N bytes, on inode I)" for messages. */
void fs_log_attri_describe(const struct fs_log_attri *a, char *buf, size_t len);

struct fs;
/*
 * Whether the kernel's recovery gets past the intent's inode (see
 * logattr.c): read through fs's device, so the caller shows it the
 * replayed log first (a read patch).  0: it does; -EUCLEAN: the kernel's
 * recovery stops there (the mount fails), why says on what; another
 * negative errno: operational (-ENOMEM, a failed read).
 */
int fs_log_attri_judge(struct fs *fs, const struct fs_log_attri *a, char *why, size_t wl);

struct fs_replay;
typedef void (*fs_attri_bad_fn)(void *priv, const struct fs_log_attri *a, const char *why);
/*
 * fs_log_attri_judge over every unfinished ATTRI of the replay rp, the
 * replay shown to the reads meanwhile (as it was after, when it already
 * was): on_bad for each the kernel's recovery stops at, in log order, and
 * once per inode that several name (a log the kernel does not write, and
 * whose recovery does not follow log order), why saying what mounting does.
 * Returns how many, or a negative errno (operational).
 */
int fs_replay_judge_attris(struct fs *fs, struct fs_replay *rp, fs_attri_bad_fn on_bad,
			   void *priv);
#endif
