/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGREPLAY_PRIV_H
#define XFSX_LOGREPLAY_PRIV_H

/*
 * The log replay's state, shared by its files (and by its unit tests,
 * nothing else): the overlay and its maps (logreplay_overlay.c), the
 * items (logreplay_items.c), the intents (logreplay_intents.c), the BUIs
 * applied (logreplay_bui.c) and the passes that drive them (logreplay.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/io/cache.h"
#include "libfs/log/logreplay.h"

/* the largest buffer a log item may name: an inode cluster or a 64 KiB directory block */
#define MAX_BUF_BBS (1u << 11)

/* A u64 -> u64 open-addressing map (keys never 0 once offset by one). */
struct u64map {
	uint64_t *k, *v;
	size_t cap, n;
};
/* Removal by tombstone value (the maps here are small and short-lived). */
#define MAP_GONE UINT64_MAX

uint64_t *u64map_find(const struct u64map *m, uint64_t key);
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);
void u64map_free(struct u64map *m);

struct rbuf {                      /* a block replayed by a buffer item */
	uint64_t daddr;
	uint32_t bbs;
	uint64_t lsn;              /* the last transaction that changed it */
	uint16_t blft;
};

struct rinode {                    /* an inode replayed by an inode item */
	uint64_t daddr;            /* its cluster buffer */
	uint32_t off;              /* byte offset in it */
	uint64_t ino;
};

struct rintent {                   /* an intent item seen in the log */
	uint8_t kind;
	bool done;                 /* its done item followed */
	uint64_t id;
	uint32_t first, n;         /* its extents in exts */
};

/*
 * An object the replay writes, judged when the replay finishes and again
 * just before the write, by the cache flush's own check (fs_meta_seal).
 */
struct rwrite {
	uint64_t daddr;            /* the sectors that hold it */
	uint32_t bbs;
	uint32_t off, len;         /* its bytes among them */
	struct fs_dirty_info info; /* type, AG, owner (FS_MT_INODE: the first inode's number) */
};

struct fs_replay {
	struct fs *fs;
	struct u64map sect;        /* sector -> index in data */
	unsigned char *data;
	size_t ndata, capdata;
	struct u64map cancel;      /* (blkno << 16 | len) -> pending cancel records */
	struct u64map intents;     /* id * FS_INTENT_NR + kind -> index in ints + 1 */
	struct rintent *ints;      /* every intent item, in log order */
	size_t nints, capints;
	struct fs_intent_ext *exts; /* their extents (rintent.first, .n) */
	size_t nexts, capexts;
	struct fs_intent_ext *open; /* the unfinished intents' extents, checked */
	size_t nopen;
	struct fs_log_attri *attris; /* every ATTRI (rintent.first), name and value copied */
	size_t nattris, capattris;
	struct fs_log_attri *open_attris; /* the unfinished ones, in log order (not pptr ops) */
	size_t nopen_attris;
	struct fs_log_attri *open_pptrs; /* the unfinished parent pointer ones, in log order */
	size_t nopen_pptrs;
	struct xfs_xmi_log_format *xmis; /* every XMI (rintent.first), as logged */
	size_t nxmis, capxmis;
	struct xfs_xmi_log_format *open_xmis; /* the unfinished ones, checked, in log order */
	size_t nopen_xmis;
	struct rbuf *bufs;
	size_t nbufs, capbufs;
	struct rinode *inos;
	size_t ninos, capinos;
	struct rwrite *writes;     /* every object the replay writes that has a verifier */
	size_t nwrites, capwrites;
	uint32_t quotaoff;         /* dquot types whose quota was turned off in the log */
	struct fs_replay_stats st;
	char bui_why[320];         /* why the first BUI not applied was not */
	char *msg;
	size_t ml;
};

/* msg (when the caller gave one) says what went wrong; returns err. */
int replay_fail(struct fs_replay *rp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Sectors [daddr, daddr + bbs) inside the filesystem and the device, at most MAX_BUF_BBS. */
bool replay_range_ok(const struct fs_replay *rp, int64_t daddr, uint64_t bbs);
/* A malloc'ed copy of [daddr, daddr + bbs) as the replay sees it: the overlay over the device. */
int replay_buf_get(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, unsigned char **out);
/* [daddr, daddr + bbs) into the overlay. */
int replay_buf_put(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, const unsigned char *b);
/*
 * The bytes [off, off + len) of sectors [daddr, daddr + bbs) are an object
 * of type t (owner ino: see struct rwrite) the write must verify.
 */
int replay_note_write(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, uint32_t off,
		      uint32_t len, enum fs_mtype t, fs_ino_t ino);
/*
 * Every noted object's CRC stamped and its verifier run on the overlay's
 * bytes (fs_meta_seal): 0, or -EUCLEAN with res naming the first that
 * fails and *bad its entry.
 */
int replay_check_writes(struct fs_replay *rp, struct fs_flush_result *res,
			const struct rwrite **bad);
uint64_t replay_cancel_key(int64_t blkno, uint32_t len);
/* Whether a cancel record later in the log still stands for (blkno, len). */
bool replay_is_cancelled(const struct fs_replay *rp, int64_t blkno, uint32_t len);

/* The items (logreplay_items.c); lsn is the transaction's. */
int replay_buf_format(struct fs_replay *rp, const struct fs_log_item *it,
		      const struct xfs_buf_log_format **out);
bool replay_partial_dir(const struct fs_replay *rp, unsigned blft, uint32_t bytes);
int replay_buf_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn);
int replay_inode_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn);
int replay_icreate_item(struct fs_replay *rp, const struct fs_log_item *it);
int replay_dquot_item(struct fs_replay *rp, const struct fs_log_item *it, uint64_t lsn);

/* Intents (logreplay_intents.c): an intent or done item; then the unfinished ones collected. */
int replay_intent_item(struct fs_replay *rp, const struct fs_log_item *it, int kind, bool done);
int replay_collect_open(struct fs_replay *rp);

/* Every unfinished BUI applied to its fork where it can be (logreplay_bui.c). */
int replay_apply_buis(struct fs_replay *rp);
/*
 * One mapping put into (map) or taken out of (unmap) an inode's fork, as
 * an unfinished BUI's is (x: kind FS_INTENT_BUI, owner, startoff, fsb,
 * len, type 1 map / 2 unmap, flags XFS_BMAP_EXTENT_*): 1 done, 0 not (why
 * says why), negative errno.
 */
int replay_bmap_apply(struct fs_replay *rp, const struct fs_intent_ext *x, char *why, size_t wl);
/* Room for n more open extents (rp->open); NULL when out of memory. */
struct fs_intent_ext *replay_open_add(struct fs_replay *rp, size_t n);

/* Every unfinished parent pointer ATTRI completed (logreplay_pptr.c). */
int replay_apply_pptrs(struct fs_replay *rp);
/* Every unfinished XMI completed (logreplay_xmi.c). */
int replay_apply_xmis(struct fs_replay *rp);

#endif
