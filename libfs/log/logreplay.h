/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGREPLAY_H
#define XFSX_LOGREPLAY_H

#include "libfs/log/logattr.h"
#include "libfs/log/logread.h"

/*
 * Log replay into memory: every committed transaction from tail to head
 * applied, in log order, to an image of the sectors it changes (an overlay
 * on the device).  The overlay can then be shown to readers of the device
 * (fs_replay_install: xfsx_check sees the filesystem as recovery leaves
 * it, nothing written) or written to it (fs_replay_write: xfsx_repair).
 */
struct fs_replay;

/* Kinds of intent item, for counting the unfinished. */
/*
 * FS_INTENT_PPTR counts the unfinished ATTRIs with a parent pointer op
 * (their items are ATTRIs, paired with ATTRDs as any).
 */
enum { FS_INTENT_EFI, FS_INTENT_RUI, FS_INTENT_CUI, FS_INTENT_BUI, FS_INTENT_ATTRI,
       FS_INTENT_XMI, FS_INTENT_PPTR, FS_INTENT_NR };

struct fs_replay_stats {
	uint64_t buffers, buffers_lsn_skipped, buffers_cancelled;
	uint64_t inode_buffers;        /* unlinked-list updates in inode buffers */
	uint64_t inodes, inodes_lsn_skipped, inodes_cancelled;
	uint64_t icreates, dquots, dquots_skipped;
	uint64_t intents_done;         /* intent items whose done item is in the log */
	uint64_t intents_open[FS_INTENT_NR];  /* unfinished at the head */
	uint64_t buis_applied;         /* unfinished BUIs whose mapping the replay made */
	uint64_t buis_unapplied;       /* and those it could not (fs_replay_bui_unapplied) */
	uint64_t bui_bmbt_taken;       /* applied ones whose fork took new bmbt blocks */
	uint64_t bui_bmbt_freed;       /* applied ones whose fork freed bmbt blocks */
	uint64_t pptrs_applied;        /* unfinished parent pointer ATTRIs the replay completed */
	uint64_t pptrs_noop;           /* of those, on a file without an attr fork: nothing to do */
	uint64_t xmis_applied;         /* unfinished exchange-range intents the replay completed */
	uint64_t xmi_steps;            /* mapping pairs they exchanged */
	uint64_t xmi_eof_trimmed;      /* blocks past a file's EOF freed after them */
	uint64_t sectors;              /* sectors the overlay holds */
	double seconds;
};

/*
 * One extent an unfinished intent names, as logged (host order) and
 * checked as the kernel's recovery checks it.  type is the item's type
 * code (XFS_RMAP_EXTENT_*, the refcount intent types 1..4, XFS_BMAP
 * map 1 / unmap 2; 0 for an EFI), flags its whole flags word.  The
 * replay adds single blocks of kind EFI for the BUIs it applied: the old
 * bmbt blocks a fork no longer uses (flags 0: free, as the kernel's own
 * EFI frees them) and the new ones it took from free space
 * (FS_INTENT_EXT_TAKEN: in use, owned by the inode's bmbt, where the AG's
 * free space btrees still say free).
 */
#define FS_INTENT_EXT_TAKEN (1u << 31)
struct fs_intent_ext {
	uint8_t kind;              /* FS_INTENT_* */
	uint8_t type;
	uint32_t flags;
	uint64_t fsb;              /* start block (fsblock number) */
	uint32_t len;
	fs_agnumber_t agno;
	fs_agblock_t agbno;
	uint64_t owner;            /* RUI: the rmap owner; BUI: the inode */
	uint64_t startoff;         /* RUI, BUI: the file offset */
};

/*
 * Replay the log li describes (fs_log_locate) into memory.  0: done (the
 * stats may still show unfinished intents, which this replay does not
 * complete: fs_replay_open_extents hands them to the caller);
 * -EUCLEAN/-EOPNOTSUPP: an item could not be replayed or an unfinished
 * intent is malformed, msg names it (nothing is kept); other negative
 * errno: I/O or memory.
 */
int fs_replay_log(struct fs *fs, struct fs_log_info *li, struct fs_replay **out, char *msg,
		  size_t ml);
const struct fs_replay_stats *fs_replay_stats(const struct fs_replay *rp);
uint64_t fs_replay_intents_open(const struct fs_replay *rp);
const char *fs_replay_intent_name(unsigned kind);
/*
 * Unfinished BUIs are applied to their inode's fork by the replay, as
 * recovery applies them: a list of extents in the inode or a block map
 * btree, new bmbt blocks taken from free space when the fork needs more;
 * one is left unapplied only when its fork is damaged, when no block is
 * free for its new bmbt blocks, or when the free space it would take them
 * from fails its check.  NULL when every one was applied, else why the
 * first was not.
 */
const char *fs_replay_bui_unapplied(const struct fs_replay *rp);
/* The extents the unfinished intents name, in log order (ATTRI: none). */
size_t fs_replay_open_extents(const struct fs_replay *rp, const struct fs_intent_ext **out);
/*
 * Unfinished parent pointer ATTRIs (PPTR_SET, PPTR_REMOVE, PPTR_REPLACE)
 * and exchange-range intents (XMI) are completed by the replay itself, as
 * recovery completes them (logreplay_pptr.c, logreplay_xmi.c): the file's
 * short form attr fork edited, the two files' mappings exchanged through
 * the same fork rewrite the BUIs use.  One the replay cannot complete the
 * way the kernel would (an attr fork in blocks, an attr-fork or directory
 * exchange) fails the replay with -EOPNOTSUPP naming it; one the kernel's
 * recovery refuses (its file freed, another generation) with -EUCLEAN.
 *
 * The unfinished xattr intents of the other ops, in log order, checked (fs_log_attri_parse;
 * name and value owned by rp).  Recovery completes each on its inode's
 * attributes after the replay: set (creates or replaces), remove (of an
 * absent name: nothing), replace; the replay leaves that to its caller
 * (xfsx_repair's xattr phase re-encodes the fork).
 */
size_t fs_replay_open_attris(const struct fs_replay *rp, const struct fs_log_attri **out);

/*
 * Show the overlay to every later read of dev (readahead, cache, inode
 * streams, synchronous reads).  rp must outlive dev or be removed first
 * (fs_replay_install(dev, NULL)).
 */
void fs_replay_install(struct fs_dev *dev, struct fs_replay *rp);
/* The read-patch function itself, for fs_dev_opts (open with the overlay already on). */
void fs_replay_patch(void *priv, void *buf, size_t len, uint64_t off);

/*
 * Write the overlay to the device (through fs_dev_write, so the device's
 * before-write hooks, the undo file among them, see every range), flush,
 * then reset the log to a clean one a cycle past the head.
 */
int fs_replay_write(struct fs *fs, struct fs_replay *rp, const struct fs_log_info *li, char *msg,
		    size_t ml);
void fs_replay_free(struct fs_replay *rp);

#endif
