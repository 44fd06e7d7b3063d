// SPDX-License-Identifier: GPL-2.0
/*
 * The log reader: finds the head and tail of the log (internal, or on its
 * own device: fs->logdev, from fs_log_offset) as the kernel's recovery
 * does (cycle numbers, holes left by log buffers written out of order, a
 * torn last record found by its length or its CRC), then
 * reads the records from tail to head (split across the end of the log,
 * extended headers for log buffers above 32 KiB, the first word of every
 * data sector given back from the header's cycle data), checks each
 * record's CRC, and assembles operations into transactions: regions
 * continued across records are joined, a transaction is handed to the
 * caller at its commit record, and what has no commit record by the head
 * is dropped, as the kernel drops it.  Everything read is bounds-checked:
 * the log is as hostile as any other disk data.
 */
#include "libfs/log/logread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"

/* as the kernel: a log item never has more regions than a 64 KiB buffer's bitmap runs */
#define MAX_REGIONS (XFS_MAX_BLOCKSIZE / XFS_BLF_CHUNK / 2 + 1)
/* sectors per cycle-data array: one array per 32 KiB of record */
#define CYCLE_SLOTS (XLOG_HEADER_CYCLE_SIZE / BBSIZE)
/* the most log buffers in flight: the head search looks this far back for holes */
#define SCAN_BBS ((XLOG_MAX_ICLOGS * XLOG_MAX_RECORD_BSIZE) / BBSIZE)

static void say(char *msg, size_t ml, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !ml)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, ml, fmt, ap);
	va_end(ap);
}

int fs_log_sector_cycle(struct fs *fs, uint64_t log_off, uint64_t bb, uint32_t *cycle,
			unsigned char *buf)
{
	int err = fs_dev_read(fs->logdev, buf, BBSIZE, log_off + (bb << BBSHIFT));

	if (err)
		return err;
	/* a record header carries its magic first and the cycle second */
	if (get_be32(buf) == XLOG_HEADER_MAGIC_NUM)
		*cycle = get_be32(buf + 4);
	else
		*cycle = get_be32(buf);
	return 0;
}

/* Read n sectors starting at blk, wrapping past the end of the log. */
static int read_log(struct fs *fs, const struct fs_log_info *li, uint32_t blk, uint32_t n,
		    unsigned char *buf)
{
	uint32_t first;
	int err;

	if (blk >= li->log_bbs || n > li->log_bbs)
		return -EINVAL;
	first = li->log_bbs - blk < n ? li->log_bbs - blk : n;
	err = fs_dev_read(fs->logdev, buf, (size_t)first << BBSHIFT,
			  li->log_off + ((uint64_t)blk << BBSHIFT));
	if (!err && first < n)
		err = fs_dev_read(fs->logdev, buf + ((size_t)first << BBSHIFT),
				  (size_t)(n - first) << BBSHIFT, li->log_off);
	return err;
}

static uint32_t blk_sub(const struct fs_log_info *li, uint32_t blk, uint32_t n)
{
	return (uint32_t)(((uint64_t)blk + li->log_bbs - n % li->log_bbs) % li->log_bbs);
}

static uint32_t blk_add(const struct fs_log_info *li, uint32_t blk, uint64_t n)
{
	return (uint32_t)(((uint64_t)blk + n) % li->log_bbs);
}

/* A record header's size in sectors, or 0 when the header makes no sense. */
static uint32_t header_bbs(const struct xlog_rec_header *rh)
{
	uint32_t version = be32(rh->h_version);
	uint32_t hsize = be32(rh->h_size);

	if (!(version & XLOG_VERSION_OKBITS) || (version & ~(uint32_t)XLOG_VERSION_OKBITS))
		return 0;
	if ((version & XLOG_VERSION_2) && hsize > XLOG_HEADER_CYCLE_SIZE) {
		if (hsize > XLOG_MAX_RECORD_BSIZE)
			return 0;
		return (hsize + XLOG_HEADER_CYCLE_SIZE - 1) / XLOG_HEADER_CYCLE_SIZE;
	}
	return 1;
}

/* Whether a header's length fields are sane; fills hdr and data sizes in sectors. */
static bool header_ok(const struct fs_log_info *li, const struct xlog_rec_header *rh,
		      uint32_t *hbbs, uint32_t *dbbs)
{
	uint32_t len = be32(rh->h_len);
	uint32_t h = header_bbs(rh);

	if (be32(rh->h_magicno) != XLOG_HEADER_MAGIC_NUM || !h)
		return false;
	if (len == 0 || len > XLOG_MAX_RECORD_BSIZE || (uint64_t)h * CYCLE_SLOTS * BBSIZE < len)
		return false;
	if (h + BTOBB(len) >= li->log_bbs)
		return false;
	*hbbs = h;
	*dbbs = (uint32_t)BTOBB(len);
	return true;
}

/* The newest sector before blk (going back at most limit) that starts a record header. */
static int find_rec_back(struct fs *fs, const struct fs_log_info *li, uint32_t blk,
			 uint32_t limit, uint32_t *found)
{
	unsigned char *buf = malloc(BBSIZE);
	int err = -ENOENT;

	if (!buf)
		return -ENOMEM;
	if (limit > li->log_bbs)
		limit = li->log_bbs;
	for (uint32_t back = 1; back <= limit; back++) {
		uint32_t b = blk_sub(li, blk, back);
		int e = read_log(fs, li, b, 1, buf);

		if (e) {
			err = e;
			break;
		}
		if (get_be32(buf) == XLOG_HEADER_MAGIC_NUM) {
			*found = b;
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

/*
 * One whole record read into memory: its header sectors and its data, the
 * data's first words given back.  crc_ok says whether its CRC matched.
 */
struct record {
	unsigned char *hdr;        /* hbbs sectors */
	unsigned char *data;       /* dbbs sectors */
	uint32_t hbbs, dbbs, len;
	bool crc_ok;
};

static uint32_t record_crc(const struct record *r)
{
	static const unsigned char zero[4];
	const size_t coff = offsetof(struct xlog_rec_header, h_crc);
	uint32_t crc = ~0u;

	crc = fs_crc32c(crc, r->hdr, coff);
	crc = fs_crc32c(crc, zero, 4);
	crc = fs_crc32c(crc, r->hdr + coff + 4, sizeof(struct xlog_rec_header) - coff - 4);
	for (uint32_t i = 1; i < r->hbbs; i++)
		crc = fs_crc32c(crc, r->hdr + ((size_t)i << BBSHIFT),
				sizeof(struct xlog_rec_ext_header));
	crc = fs_crc32c(crc, r->data, r->len);
	return ~crc;
}

static void record_free(struct record *r)
{
	free(r->hdr);
	free(r->data);
	memset(r, 0, sizeof(*r));
}

static int record_finish(struct record *r);

static int record_read(struct fs *fs, const struct fs_log_info *li, uint32_t blk,
		       struct record *r)
{
	const struct xlog_rec_header *rh;
	int err;

	memset(r, 0, sizeof(*r));
	r->hdr = malloc(BBSIZE);
	if (!r->hdr)
		return -ENOMEM;
	err = read_log(fs, li, blk, 1, r->hdr);
	if (err)
		goto fail;
	rh = (const void *)r->hdr;
	if (!header_ok(li, rh, &r->hbbs, &r->dbbs)) {
		err = -EUCLEAN;
		goto fail;
	}
	r->len = be32(rh->h_len);
	if (r->hbbs > 1) {
		unsigned char *h = realloc(r->hdr, (size_t)r->hbbs << BBSHIFT);

		if (!h) {
			err = -ENOMEM;
			goto fail;
		}
		r->hdr = h;
		err = read_log(fs, li, blk_add(li, blk, 1), r->hbbs - 1, r->hdr + BBSIZE);
		if (err)
			goto fail;
	}
	r->data = malloc((size_t)r->dbbs << BBSHIFT);
	if (!r->data) {
		err = -ENOMEM;
		goto fail;
	}
	err = read_log(fs, li, blk_add(li, blk, r->hbbs), r->dbbs, r->data);
	if (err)
		goto fail;
	err = record_finish(r);
	if (err)
		goto fail;
	return 0;
fail:
	record_free(r);
	return err;
}

/*
 * A record whose header and data are in r: its CRC compared (crc_ok), then
 * the first word of every data sector given back.  -EUCLEAN when the data
 * has more sectors than the header's cycle data covers.
 */
static int record_finish(struct record *r)
{
	const struct xlog_rec_header *rh = (const void *)r->hdr;
	uint32_t stored;

	memcpy(&stored, &rh->h_crc, 4);
	r->crc_ok = le32toh(stored) == record_crc(r);
	/* the first word of every data sector was swapped for the cycle: give it back */
	for (uint32_t i = 0; i < r->dbbs; i++) {
		uint32_t j = i / CYCLE_SLOTS, k = i % CYCLE_SLOTS;
		const __be32 *slot;

		if (j == 0)
			slot = &rh->h_cycle_data[k];
		else if (j < r->hbbs)
			slot = &((const struct xlog_rec_ext_header *)
				 (r->hdr + ((size_t)j << BBSHIFT)))->xh_cycle_data[k];
		else
			return -EUCLEAN;
		memcpy(r->data + ((size_t)i << BBSHIFT), slot, 4);
	}
	return 0;
}

/* The first sector from lo (inclusive) to hi (exclusive) whose cycle is not cycle. */
static int first_other_cycle(struct fs *fs, const struct fs_log_info *li, uint32_t lo,
			     uint32_t hi, uint32_t cycle, uint32_t *found)
{
	unsigned char *buf;
	uint32_t n = hi - lo;
	int err;

	*found = hi;
	if (!n)
		return 0;
	buf = malloc((size_t)n << BBSHIFT);
	if (!buf)
		return -ENOMEM;
	err = read_log(fs, li, lo, n, buf);
	for (uint32_t i = 0; !err && i < n; i++) {
		const unsigned char *s = buf + ((size_t)i << BBSHIFT);
		uint32_t c = get_be32(s) == XLOG_HEADER_MAGIC_NUM ? get_be32(s + 4) : get_be32(s);

		if (c != cycle) {
			*found = lo + i;
			break;
		}
	}
	free(buf);
	return err;
}

/* Binary search: the first sector in (lo, hi] whose cycle is not cycle (sector lo has it). */
static int search_cycle_break(struct fs *fs, const struct fs_log_info *li, uint32_t lo,
			      uint32_t hi, uint32_t cycle, uint32_t *found)
{
	unsigned char *buf = malloc(BBSIZE);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2, c;

		err = fs_log_sector_cycle(fs, li->log_off, mid, &c, buf);
		if (err)
			break;
		if (c == cycle)
			lo = mid;
		else
			hi = mid;
	}
	free(buf);
	*found = hi;
	return err;
}

int fs_log_locate(struct fs *fs, struct fs_log_info *li, char *msg, size_t ml)
{
	const struct fs_geom *g = &fs->g;
	unsigned char *buf;
	uint32_t first, last, head, cycle, rec = 0, starts[XLOG_MAX_ICLOGS];
	struct record r = { 0 };
	unsigned nstarts = 0;
	int err;

	memset(li, 0, sizeof(*li));
	if (!fs->logdev) {
		say(msg, ml, "the external log device was not given");
		return -EOPNOTSUPP;
	}
	li->log_off = fs_log_offset(fs);
	li->log_bbs = (uint32_t)(((uint64_t)g->logblocks << g->blocklog) >> BBSHIFT);
	if (li->log_bbs < 64 || li->log_off + ((uint64_t)li->log_bbs << BBSHIFT) > fs->logdev->size) {
		say(msg, ml, "the log (%u sectors at byte %llu of the %s device) does not fit the "
		    "device", li->log_bbs, (unsigned long long)li->log_off,
		    g->log_internal ? "data" : "log");
		return -EUCLEAN;
	}
	buf = malloc(BBSIZE);
	if (!buf)
		return -ENOMEM;
	err = fs_log_sector_cycle(fs, li->log_off, 0, &first, buf);
	if (!err)
		err = fs_log_sector_cycle(fs, li->log_off, li->log_bbs - 1, &last, buf);
	free(buf);
	if (err)
		goto io;
	if (first == 0) {
		/* never written: nothing to recover */
		li->blank = li->clean = true;
		li->head_cycle = li->tail_cycle = 1;
		return 0;
	}
	cycle = first;
	if (first == last) {
		/* one cycle throughout: the newest record ends at the end of the log */
		head = li->log_bbs;
	} else {
		err = search_cycle_break(fs, li, 0, li->log_bbs - 1, first, &head);
		if (err)
			goto io;
	}
	/*
	 * Log buffers go out in parallel and may land out of order: a sector
	 * of the older cycle shortly before the break is a hole, and the head
	 * is there (the records after it were never all written).
	 */
	{
		uint32_t lo = head > SCAN_BBS ? head - SCAN_BBS : 0, hole;

		err = first_other_cycle(fs, li, lo, head, cycle, &hole);
		if (err)
			goto io;
		head = hole;
	}
	if (head == 0) {
		/* the break was at the start: the newest records are at the end, one cycle back */
		if (cycle < 2) {
			say(msg, ml, "the log's cycle numbers make no sense (cycle %u at block 0)", cycle);
			return -EUCLEAN;
		}
		head = li->log_bbs;
		cycle--;
	}
	/* the head position in the log, and the cycle a record written there would get */
	li->head_blk = head % li->log_bbs;
	li->head_cycle = head == li->log_bbs ? cycle + 1 : cycle;

	/* back to the newest record whose length ends at the head: a shorter one is torn */
	for (;;) {
		const struct xlog_rec_header *rh;
		uint32_t hb, db;

		err = find_rec_back(fs, li, li->head_blk, SCAN_BBS + XLOG_MAX_RECORD_BSIZE / BBSIZE + 8,
				    &rec);
		if (err == -ENOENT) {
			say(msg, ml, "no log record header before the head (block %u)", li->head_blk);
			return -EUCLEAN;
		}
		if (err)
			goto io;
		buf = malloc(BBSIZE);
		if (!buf)
			return -ENOMEM;
		err = read_log(fs, li, rec, 1, buf);
		rh = (const void *)buf;
		if (!err && !header_ok(li, rh, &hb, &db)) {
			free(buf);
			say(msg, ml, "the log record header at block %u is damaged", rec);
			return -EUCLEAN;
		}
		free(buf);
		if (err)
			goto io;
		if (blk_add(li, rec, (uint64_t)hb + db) == li->head_blk)
			break;
		/* the record was not written whole: the head is where it starts */
		li->torn_records++;
		li->head_blk = rec;
		if (nstarts++ > XLOG_MAX_ICLOGS) {
			say(msg, ml, "too many torn log records before block %u", rec);
			return -EUCLEAN;
		}
	}
	/*
	 * The last few records may have been torn by the crash without a hole
	 * showing (a sector of one write landed, another did not): their CRC
	 * says so.  The kernel looks at as many records as log buffers may be
	 * in flight, back to the tail the newest record names; the oldest bad
	 * one and everything after it are dropped.
	 */
	{
		uint32_t tail_blk;

		err = record_read(fs, li, rec, &r);
		if (err == -EUCLEAN) {
			say(msg, ml, "the log record at block %u is damaged", rec);
			return err;
		}
		if (err)
			goto io;
		tail_blk = (uint32_t)be64(((const struct xlog_rec_header *)r.hdr)->h_tail_lsn);
		record_free(&r);
		nstarts = 0;
		starts[nstarts++] = rec;
		while (nstarts < XLOG_MAX_ICLOGS && starts[nstarts - 1] != tail_blk) {
			uint32_t prev, dist = blk_sub(li, starts[nstarts - 1], tail_blk);

			if (!dist || dist > li->log_bbs)
				break;
			err = find_rec_back(fs, li, starts[nstarts - 1],
					    dist < XLOG_MAX_RECORD_BSIZE / BBSIZE + 8 ?
					    dist : XLOG_MAX_RECORD_BSIZE / BBSIZE + 8, &prev);
			if (err == -ENOENT)
				break;
			if (err)
				goto io;
			starts[nstarts++] = prev;
		}
	}
	for (unsigned i = nstarts; i-- > 0;) {
		err = record_read(fs, li, starts[i], &r);
		if (err == -EUCLEAN) {
			/* unreadable as a record: not one of ours; start after it */
			continue;
		}
		if (err)
			goto io;
		if (!r.crc_ok) {
			/* a torn write: this record and the ones after it never completed */
			li->torn_records += i + 1;
			li->head_blk = starts[i];
			record_free(&r);
			if (i + 1 >= nstarts) {
				err = find_rec_back(fs, li, starts[i], XLOG_MAX_RECORD_BSIZE / BBSIZE + 8,
						    &rec);
				if (err) {
					say(msg, ml, "no whole log record before the torn one at block %u",
					    starts[i]);
					return -EUCLEAN;
				}
			} else {
				rec = starts[i + 1];
			}
			break;
		}
		record_free(&r);
	}
	/* the tail, from the newest good record */
	err = record_read(fs, li, rec, &r);
	if (err == -EUCLEAN) {
		say(msg, ml, "the log record at block %u is damaged", rec);
		return err;
	}
	if (err)
		goto io;
	{
		const struct xlog_rec_header *rh = (const void *)r.hdr;
		uint64_t tail = be64(rh->h_tail_lsn);
		const struct xlog_op_header *op = (const void *)r.data;

		li->last_rec_blk = rec;
		li->last_rec_lsn = be64(rh->h_lsn);
		li->tail_blk = (uint32_t)tail;
		li->tail_cycle = (uint32_t)(tail >> 32);
		if (li->tail_blk >= li->log_bbs || li->tail_cycle == 0 ||
		    li->tail_cycle > li->head_cycle) {
			say(msg, ml, "the log's tail (cycle %u block %u) is outside the log",
			    li->tail_cycle, li->tail_blk);
			record_free(&r);
			return -EUCLEAN;
		}
		/* an unmount record as the newest: nothing to recover */
		if (be32(rh->h_num_logops) == 1 && r.len >= sizeof(*op) &&
		    (op->oh_flags & XLOG_UNMOUNT_TRANS)) {
			li->clean = true;
			li->tail_blk = li->head_blk;
			li->tail_cycle = li->head_cycle;
		}
	}
	record_free(&r);
	return 0;
io:
	say(msg, ml, "reading the log failed: %s", strerror(-err));
	return err;
}

/* ---- transactions ---- */

struct trans_set {
	struct fs_log_trans **v;
	size_t n, cap;
};

struct tstate {
	struct fs_log_trans t;
	bool hdr_seen, hdr_partial;
};

static void trans_free(struct fs_log_trans *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		for (uint32_t j = 0; j < t->items[i].n; j++)
			free(t->items[i].reg[j].p);
		free(t->items[i].reg);
	}
	free(t->items);
	free(t);
}

static struct fs_log_trans *trans_find(struct trans_set *s, uint32_t tid, size_t *at)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i]->tid == tid) {
			*at = i;
			return s->v[i];
		}
	return NULL;
}

static void trans_drop(struct trans_set *s, size_t at)
{
	trans_free(s->v[at]);
	s->v[at] = s->v[--s->n];
}

/* A new region of the transaction (xlog_recover_add_to_trans's rules). */
static int add_region(struct tstate *ts, const unsigned char *dp, uint32_t len, char *msg,
		      size_t ml)
{
	struct fs_log_trans *t = &ts->t;
	struct fs_log_item *it;
	unsigned char *p;

	if (!len)
		return 0;
	if (!ts->hdr_seen) {
		/* the transaction header comes first; recovery needs nothing from it */
		if (len > sizeof(struct xfs_trans_header)) {
			say(msg, ml, "transaction %#x: header region of %u bytes", t->tid, len);
			return -EUCLEAN;
		}
		ts->hdr_seen = true;
		ts->hdr_partial = len < sizeof(struct xfs_trans_header);
		return 0;
	}
	ts->hdr_partial = false;
	it = t->n ? &t->items[t->n - 1] : NULL;
	if (!it || it->n == it->total) {
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? t->cap * 2 : 8;
			struct fs_log_item *v = realloc(t->items, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->items = v;
			t->cap = cap;
		}
		it = &t->items[t->n++];
		memset(it, 0, sizeof(*it));
	}
	if (it->total == 0) {
		/* the item's format header: its type and how many regions follow, host order */
		uint16_t type, size;

		if (len < 4) {
			say(msg, ml, "transaction %#x: item format header of %u bytes", t->tid, len);
			return -EUCLEAN;
		}
		memcpy(&type, dp, 2);
		memcpy(&size, dp + 2, 2);
		if (size == 0 || size > MAX_REGIONS) {
			say(msg, ml, "transaction %#x: item of type %#x claims %u regions", t->tid,
			    type, size);
			return -EUCLEAN;
		}
		it->type = type;
		it->total = size;
		it->reg = calloc(size, sizeof(*it->reg));
		if (!it->reg)
			return -ENOMEM;
	}
	if (it->n >= it->total) {
		say(msg, ml, "transaction %#x: item of type %#x has more regions than its %u",
		    t->tid, it->type, it->total);
		return -EUCLEAN;
	}
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	memcpy(p, dp, len);
	it->reg[it->n].p = p;
	it->reg[it->n].len = len;
	it->n++;
	return 0;
}

/* The rest of a region split across records. */
static int add_cont(struct tstate *ts, const unsigned char *dp, uint32_t len, char *msg,
		    size_t ml)
{
	struct fs_log_trans *t = &ts->t;
	struct fs_log_item *it;
	struct fs_log_region *rg;
	unsigned char *p;

	if (ts->hdr_partial || !ts->hdr_seen) {
		ts->hdr_partial = false;
		ts->hdr_seen = true;
		return 0;
	}
	if (!t->n || !t->items[t->n - 1].n) {
		say(msg, ml, "transaction %#x: a continued region with nothing to continue", t->tid);
		return -EUCLEAN;
	}
	it = &t->items[t->n - 1];
	rg = &it->reg[it->n - 1];
	if ((uint64_t)rg->len + len > 16u << 20) {
		say(msg, ml, "transaction %#x: a region grows past 16 MiB", t->tid);
		return -EUCLEAN;
	}
	p = realloc(rg->p, rg->len + len);
	if (!p)
		return -ENOMEM;
	memcpy(p + rg->len, dp, len);
	rg->p = p;
	rg->len += len;
	return 0;
}

static const uint16_t item_types[FS_LOG_ITEM_TYPES - 1] = {
	XFS_LI_EFI, XFS_LI_EFD, XFS_LI_IUNLINK, XFS_LI_INODE, XFS_LI_BUF, XFS_LI_DQUOT,
	XFS_LI_QUOTAOFF, XFS_LI_ICREATE, XFS_LI_RUI, XFS_LI_RUD, XFS_LI_CUI, XFS_LI_CUD,
	XFS_LI_BUI, XFS_LI_BUD, XFS_LI_ATTRI, XFS_LI_ATTRD, XFS_LI_XMI, XFS_LI_XMD,
};
static const char *const item_names[FS_LOG_ITEM_TYPES] = {
	"efi", "efd", "iunlink", "inode", "buf", "dquot", "quotaoff", "icreate", "rui", "rud",
	"cui", "cud", "bui", "bud", "attri", "attrd", "xmi", "xmd", "other",
};

unsigned fs_log_item_slot(uint16_t type)
{
	for (unsigned i = 0; i < FS_LOG_ITEM_TYPES - 1; i++)
		if (item_types[i] == type)
			return i;
	return FS_LOG_ITEM_TYPES - 1;
}

const char *fs_log_item_name(unsigned slot)
{
	return slot < FS_LOG_ITEM_TYPES ? item_names[slot] : "?";
}

/* The operations of one record (xlog_recover_process_data's rules). */
static int record_ops(struct fs_log_info *li, const struct record *r, struct trans_set *s,
		      fs_log_trans_fn fn, void *priv, char *msg, size_t ml, uint32_t blk)
{
	const struct xlog_rec_header *rh = (const void *)r->hdr;
	uint32_t nops = be32(rh->h_num_logops);
	const unsigned char *dp = r->data, *end = r->data + r->len;
	int err = 0;

	for (uint32_t i = 0; i < nops && dp < end && !err; i++) {
		struct xlog_op_header ohs, *oh = &ohs;	/* op headers need not be aligned */
		struct fs_log_trans *t;
		uint32_t len, tid, flags;
		size_t at;

		if ((size_t)(end - dp) < sizeof(*oh)) {
			say(msg, ml, "log record at block %u: operation %u header runs past the record",
			    blk, i);
			return -EUCLEAN;
		}
		memcpy(&ohs, dp, sizeof(ohs));
		len = be32(oh->oh_len);
		tid = be32(oh->oh_tid);
		dp += sizeof(*oh);
		if (len > (size_t)(end - dp)) {
			say(msg, ml, "log record at block %u: operation %u of %u bytes runs past the "
			    "record", blk, i, len);
			return -EUCLEAN;
		}
		if (oh->oh_clientid != XFS_TRANSACTION && oh->oh_clientid != XFS_LOG) {
			say(msg, ml, "log record at block %u: operation %u has client id %#x", blk, i,
			    oh->oh_clientid);
			return -EUCLEAN;
		}
		li->ops++;
		t = trans_find(s, tid, &at);
		if (!t) {
			/* operations of a transaction that began before the tail are skipped */
			if (oh->oh_flags & XLOG_START_TRANS) {
				struct tstate *ts = calloc(1, sizeof(*ts));
				struct fs_log_trans **v;

				if (!ts)
					return -ENOMEM;
				if (s->n == s->cap) {
					size_t cap = s->cap ? s->cap * 2 : 16;

					v = realloc(s->v, cap * sizeof(*v));
					if (!v) {
						free(ts);
						return -ENOMEM;
					}
					s->v = v;
					s->cap = cap;
				}
				ts->t.tid = tid;
				ts->t.lsn = be64(rh->h_lsn);
				s->v[s->n++] = &ts->t;
			}
			dp += len;
			continue;
		}
		flags = oh->oh_flags & ~XLOG_END_TRANS;
		if (flags & XLOG_WAS_CONT_TRANS)
			flags &= ~XLOG_CONTINUE_TRANS;
		switch (flags) {
		case 0:
		case XLOG_CONTINUE_TRANS:
			err = add_region((struct tstate *)t, dp, len, msg, ml);
			break;
		case XLOG_WAS_CONT_TRANS:
			err = add_cont((struct tstate *)t, dp, len, msg, ml);
			break;
		case XLOG_COMMIT_TRANS:
			/* an item still missing regions at its commit is damage */
			if (t->n && t->items[t->n - 1].n != t->items[t->n - 1].total) {
				say(msg, ml, "transaction %#x: its last item (type %#x) has %u of %u "
				    "regions at the commit", t->tid, t->items[t->n - 1].type,
				    t->items[t->n - 1].n, t->items[t->n - 1].total);
				err = -EUCLEAN;
				break;
			}
			li->transactions++;
			for (uint32_t k = 0; k < t->n; k++)
				li->items[fs_log_item_slot(t->items[k].type)]++;
			if (fn)
				err = fn(priv, t);
			trans_drop(s, at);
			break;
		case XLOG_UNMOUNT_TRANS:
			trans_drop(s, at);
			break;
		default:
			say(msg, ml, "log record at block %u: operation %u of transaction %#x has flags "
			    "%#x", blk, i, tid, oh->oh_flags);
			err = -EUCLEAN;
			break;
		}
		dp += len;
	}
	return err;
}

int fs_log_walk(struct fs *fs, struct fs_log_info *li, fs_log_trans_fn fn, void *priv,
		char *msg, size_t ml)
{
	struct trans_set s = { 0 };
	uint32_t blk = li->tail_blk;
	uint64_t walked = 0;
	int err = 0;

	li->records = li->ops = li->transactions = li->uncommitted = li->bytes = 0;
	memset(li->items, 0, sizeof(li->items));
	if (li->clean || li->blank)
		return 0;
	while (blk != li->head_blk) {
		struct record r;
		uint32_t step;

		err = record_read(fs, li, blk, &r);
		if (err == -EUCLEAN) {
			say(msg, ml, "the log record at block %u (between tail %u and head %u) is "
			    "damaged", blk, li->tail_blk, li->head_blk);
			break;
		}
		if (err) {
			say(msg, ml, "reading the log failed: %s", strerror(-err));
			break;
		}
		step = r.hbbs + r.dbbs;
		walked += step;
		if (walked > li->log_bbs || blk_sub(li, li->head_blk, blk) < step) {
			record_free(&r);
			say(msg, ml, "the log record at block %u runs past the head (block %u)", blk,
			    li->head_blk);
			err = -EUCLEAN;
			break;
		}
		if (!r.crc_ok) {
			record_free(&r);
			say(msg, ml, "the log record at block %u fails its CRC (the kernel refuses "
			    "such a log too)", blk);
			err = -EUCLEAN;
			break;
		}
		li->records++;
		li->bytes += r.len;
		err = record_ops(li, &r, &s, fn, priv, msg, ml, blk);
		record_free(&r);
		if (err)
			break;
		blk = blk_add(li, blk, step);
	}
	/* what has no commit record by the head never happened */
	li->uncommitted = s.n;
	for (size_t i = 0; i < s.n; i++)
		trans_free(s.v[i]);
	free(s.v);
	return err;
}

int fs_log_check_clean_record(const void *buf, size_t len, uint32_t log_bbs, uint32_t cycle,
			      const unsigned char uuid[16], char *msg, size_t ml)
{
	const struct xlog_rec_header *rh = buf;
	const uint64_t lsn = (uint64_t)cycle << 32;
	struct fs_log_info li = { .log_bbs = log_bbs };
	struct trans_set set = { 0 };
	const struct xlog_op_header *op;
	struct record r = { 0 };
	int err;

	if (len < BBSIZE || len % BBSIZE || !cycle) {
		say(msg, ml, "a log record of %zu bytes in cycle %u", len, cycle);
		return -EUCLEAN;
	}
	/* the reader's own rules, in the order it applies them */
	if (!header_ok(&li, rh, &r.hbbs, &r.dbbs)) {
		say(msg, ml, "the log record header is damaged");
		return -EUCLEAN;
	}
	if (((size_t)r.hbbs + r.dbbs) << BBSHIFT != len) {
		/* the head search would not land right after it */
		say(msg, ml, "the log record is %u sectors long, its buffer %zu", r.hbbs + r.dbbs,
		    len / BBSIZE);
		return -EUCLEAN;
	}
	for (size_t i = 0; i < len / BBSIZE; i++) {
		const unsigned char *sp = (const unsigned char *)buf + i * BBSIZE;
		uint32_t c = get_be32(sp) == XLOG_HEADER_MAGIC_NUM ? get_be32(sp + 4) : get_be32(sp);

		if (c != cycle || (i == 0) != (get_be32(sp) == XLOG_HEADER_MAGIC_NUM)) {
			say(msg, ml, "log sector %zu of the record reads as cycle %u, not %u", i, c,
			    cycle);
			return -EUCLEAN;
		}
	}
	if (be64(rh->h_lsn) != lsn || be64(rh->h_tail_lsn) != lsn ||
	    memcmp(&rh->h_fs_uuid, uuid, 16)) {
		say(msg, ml, "the log record's LSN, tail or UUID is not that of block 0 of cycle %u "
		    "of this filesystem", cycle);
		return -EUCLEAN;
	}
	r.len = be32(rh->h_len);
	r.hdr = malloc((size_t)r.hbbs << BBSHIFT);
	r.data = malloc((size_t)r.dbbs << BBSHIFT);
	if (!r.hdr || !r.data) {
		record_free(&r);
		return -ENOMEM;
	}
	memcpy(r.hdr, buf, (size_t)r.hbbs << BBSHIFT);
	memcpy(r.data, (const unsigned char *)buf + ((size_t)r.hbbs << BBSHIFT),
	       (size_t)r.dbbs << BBSHIFT);
	err = record_finish(&r);
	if (!err && !r.crc_ok) {
		say(msg, ml, "the log record fails its CRC");
		err = -EUCLEAN;
	}
	if (!err)
		err = record_ops(&li, &r, &set, NULL, NULL, msg, ml, 0);
	op = (const void *)r.data;
	/* what fs_log_locate calls clean: one operation, the unmount record */
	if (!err && !(be32(rh->h_num_logops) == 1 && r.len >= sizeof(*op) &&
		      (op->oh_flags & XLOG_UNMOUNT_TRANS) && op->oh_clientid == XFS_LOG)) {
		say(msg, ml, "the log record is not an unmount record");
		err = -EUCLEAN;
	}
	for (size_t i = 0; i < set.n; i++)
		trans_free(set.v[i]);
	free(set.v);
	record_free(&r);
	return err;
}
