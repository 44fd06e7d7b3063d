/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_LOGREAD_H
#define XFSX_LOGREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/fs.h"

/*
 * Reading the log (internal or external: fs->logdev) as the kernel's recovery does: where its head
 * and tail are, then its records from tail to head, their operations
 * assembled into transactions; and a clean record checked by the same
 * rules before a writer puts it in the log.  Nothing here writes.
 */

/* Item type slots for counting (XFS_LI_* minus XFS_LI_EFI; "other" last). */
enum { FS_LOG_ITEM_TYPES = 19 };

struct fs_log_info {
	uint64_t log_off;          /* byte offset of the log on its device (fs->logdev; external: 0) */
	uint32_t log_bbs;          /* log size in 512-byte sectors */
	uint32_t head_blk, head_cycle;   /* where the next record would go */
	uint32_t tail_blk, tail_cycle;   /* the oldest record recovery needs */
	uint32_t last_rec_blk;     /* the newest whole record */
	uint64_t last_rec_lsn;
	bool blank;                /* never written (cycle 0 everywhere) */
	bool clean;                /* the newest record is an unmount record */
	uint32_t torn_records;     /* records dropped at the head (torn write, CRC) */
	/* filled by fs_log_walk */
	uint64_t records, ops, transactions, uncommitted, bytes;
	uint64_t items[FS_LOG_ITEM_TYPES];
};

/* One region of an item, as logged (host order as the log has it). */
struct fs_log_region {
	unsigned char *p;
	uint32_t len;
};

struct fs_log_item {
	uint16_t type;             /* XFS_LI_* */
	uint32_t total;            /* regions the format header announced */
	uint32_t n;                /* regions present */
	struct fs_log_region *reg;
};

struct fs_log_trans {
	uint32_t tid;
	uint64_t lsn;              /* the record the transaction started in */
	uint32_t n, cap;
	struct fs_log_item *items;
};

/*
 * Find head and tail.  0, or negative errno with msg saying what is wrong
 * with the log (-EUCLEAN: no record header before the head, a bad record
 * header, a CRC failure older than the last few records).
 */
int fs_log_locate(struct fs *fs, struct fs_log_info *li, char *msg, size_t ml);

/*
 * Every committed transaction from tail to head, in log order, handed to
 * fn (which may not keep pointers into it).  Transactions without a commit
 * record by the head are dropped (counted in li->uncommitted).  A nonzero
 * return from fn stops the walk and is returned.  Counters in li are reset
 * and filled.
 */
typedef int (*fs_log_trans_fn)(void *priv, const struct fs_log_trans *t);
int fs_log_walk(struct fs *fs, struct fs_log_info *li, fs_log_trans_fn fn, void *priv,
		char *msg, size_t ml);

/* Name of an item type ("buf", "inode", "efi", ...) and its counter slot. */
const char *fs_log_item_name(unsigned slot);
unsigned fs_log_item_slot(uint16_t type);

/*
 * A clean log's first record, as a writer is about to put it at block 0 of
 * a log of log_bbs sectors (len bytes: the whole record), judged by this
 * reader's own rules before the write: the header's lengths, every
 * sector's cycle (what the head search reads), LSN and tail at block 0 of
 * cycle, the UUID, the CRC, the operation headers, and the one operation
 * an unmount record, as fs_log_locate tells a clean log.  0, or -EUCLEAN
 * with msg saying what is wrong.
 */
int fs_log_check_clean_record(const void *buf, size_t len, uint32_t log_bbs, uint32_t cycle,
			      const unsigned char uuid[16], char *msg, size_t ml);

/* Sector cycle helper shared with log.c's head search. */
int fs_log_sector_cycle(struct fs *fs, uint64_t log_off, uint64_t bb, uint32_t *cycle,
			unsigned char *buf);

#endif
