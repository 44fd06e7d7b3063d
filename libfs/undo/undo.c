// SPDX-License-Identifier: GPL-2.0
/*
 * Undo files: the writer behind --undo-file (a before-write hook on the
 * device that saves each sector's old bytes once, durable before the write
 * that covers them) and the reader behind xfsx_undo (validate the whole
 * file, judge the device, write the old bytes back).  One file covers every
 * device a run writes (the data device, an external log, a realtime
 * device): each is identified in the header, each record names its
 * device.  The layout and the ordering rules are in undo.h.  Nothing here
 * prints.
 */
#include "libfs/undo/undo.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/format.h"

/* ---- encoding ---- */

static void put_le32(unsigned char *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put_le64(unsigned char *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint32_t get_le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t get_le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

static uint32_t crc(const void *p, size_t len)
{
	return fs_crc32c(~0u, p, len);
}

/* header offsets */
enum {
	H_MAGIC = 0, H_VERSION = 8, H_HDRSPACE = 12, H_FLAGS = 16, H_DEVSIZE = 24, H_FPLEN = 32,
	H_FPBEFORE = 40, H_FPAFTER = 44, H_UUIDBEFORE = 48, H_UUIDAFTER = 64, H_NRECS = 80,
	H_SAVED = 88, H_FILELEN = 96, H_CTIME = 104, H_TOOL = 112, H_DEVICE = 176,
	H_ROLES = 432, H_CRC = FS_UNDO_HDR_LEN - 4,
};
/* device descriptor offsets (version 2: one sector at 512 * role) */
enum {
	D_MAGIC = 0, D_ROLE = 8, D_FLAGS = 12, D_DEVSIZE = 16, D_FPLEN = 24, D_FPBEFORE = 32,
	D_FPAFTER = 36, D_UUIDBEFORE = 40, D_UUIDAFTER = 56, D_DEVICE = 72,
	D_CRC = FS_UNDO_HDR_LEN - 4,
};
/* record header offsets */
enum { R_MAGIC = 0, R_FLAGS = 4, R_OFF = 8, R_LEN = 16, R_DCRC = 24, R_HCRC = 28 };

const char *fs_undo_role_name(enum fs_undo_role role)
{
	return role == FS_UNDO_LOG ? "log" : role == FS_UNDO_RT ? "realtime" : "data";
}

static void enc_desc(unsigned char *b, enum fs_undo_role role, const struct fs_undo_devdesc *d)
{
	memcpy(b + D_MAGIC, FS_UNDO_DEV_MAGIC, 8);
	put_le32(b + D_ROLE, role);
	put_le32(b + D_FLAGS, d->flags);
	put_le64(b + D_DEVSIZE, d->dev_size);
	put_le64(b + D_FPLEN, d->fp_len);
	put_le32(b + D_FPBEFORE, d->fp_before);
	put_le32(b + D_FPAFTER, d->fp_after);
	memcpy(b + D_UUIDBEFORE, d->uuid_before, 16);
	memcpy(b + D_UUIDAFTER, d->uuid_after, 16);
	memcpy(b + D_DEVICE, d->device, sizeof(d->device));
	put_le32(b + D_CRC, crc(b, D_CRC));
}

static int dec_desc(const unsigned char *b, enum fs_undo_role role, struct fs_undo_devdesc *d,
		    char *msg, size_t ml)
{
	if (memcmp(b + D_MAGIC, FS_UNDO_DEV_MAGIC, 8) || get_le32(b + D_CRC) != crc(b, D_CRC) ||
	    get_le32(b + D_ROLE) != role) {
		snprintf(msg, ml, "damaged header: the %s device's description (file offset %u) "
			 "has a bad %s", fs_undo_role_name(role), (unsigned)role * FS_UNDO_HDR_LEN,
			 memcmp(b + D_MAGIC, FS_UNDO_DEV_MAGIC, 8) ? "magic" :
			 get_le32(b + D_CRC) != crc(b, D_CRC) ? "checksum" : "role");
		return -EBADMSG;
	}
	memset(d, 0, sizeof(*d));
	d->present = true;
	d->flags = get_le32(b + D_FLAGS);
	d->dev_size = get_le64(b + D_DEVSIZE);
	d->fp_len = get_le64(b + D_FPLEN);
	d->fp_before = get_le32(b + D_FPBEFORE);
	d->fp_after = get_le32(b + D_FPAFTER);
	memcpy(d->uuid_before, b + D_UUIDBEFORE, 16);
	memcpy(d->uuid_after, b + D_UUIDAFTER, 16);
	memcpy(d->device, b + D_DEVICE, sizeof(d->device));
	d->device[sizeof(d->device) - 1] = 0;
	if (d->fp_len > d->dev_size || d->fp_len > FS_UNDO_FP_BYTES) {
		snprintf(msg, ml, "damaged header: the %s device's fingerprint length %llu",
			 fs_undo_role_name(role), (unsigned long long)d->fp_len);
		return -EBADMSG;
	}
	return 0;
}

/* The data device's description from the header's own fields. */
static void data_desc(struct fs_undo_header *h)
{
	struct fs_undo_devdesc *d = &h->devs[FS_UNDO_DATA];

	d->present = true;
	d->flags = h->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER);
	d->dev_size = h->dev_size;
	d->fp_len = h->fp_len;
	d->fp_before = h->fp_before;
	d->fp_after = h->fp_after;
	memcpy(d->uuid_before, h->uuid_before, 16);
	memcpy(d->uuid_after, h->uuid_after, 16);
	memcpy(d->device, h->device, sizeof(d->device));
}

static void enc_header(unsigned char *b, const struct fs_undo_header *h)
{
	uint32_t roles = 1u << FS_UNDO_DATA;

	memset(b, 0, FS_UNDO_HDR_SPACE);
	for (unsigned r = FS_UNDO_DATA + 1; r < FS_UNDO_ROLES; r++)
		if (h->devs[r].present) {
			roles |= 1u << r;
			enc_desc(b + (size_t)r * FS_UNDO_HDR_LEN, r, &h->devs[r]);
		}
	memcpy(b + H_MAGIC, FS_UNDO_MAGIC, 8);
	put_le32(b + H_VERSION, h->version);
	put_le32(b + H_HDRSPACE, FS_UNDO_HDR_SPACE);
	put_le32(b + H_FLAGS, h->flags);
	put_le64(b + H_DEVSIZE, h->dev_size);
	put_le64(b + H_FPLEN, h->fp_len);
	put_le32(b + H_FPBEFORE, h->fp_before);
	put_le32(b + H_FPAFTER, h->fp_after);
	memcpy(b + H_UUIDBEFORE, h->uuid_before, 16);
	memcpy(b + H_UUIDAFTER, h->uuid_after, 16);
	put_le64(b + H_NRECS, h->nrecs);
	put_le64(b + H_SAVED, h->saved_bytes);
	put_le64(b + H_FILELEN, h->file_len);
	put_le64(b + H_CTIME, h->ctime);
	memcpy(b + H_TOOL, h->tool, sizeof(h->tool));
	memcpy(b + H_DEVICE, h->device, sizeof(h->device));
	put_le32(b + H_ROLES, roles);
	put_le32(b + H_CRC, crc(b, H_CRC));
}

/*
 * -EBADMSG with msg when the header is not one we can trust.  have: the
 * bytes of b read (the header space, or less in a short file).
 */
static int dec_header(const unsigned char *b, size_t have, struct fs_undo_header *h, char *msg,
		      size_t ml)
{
	uint32_t roles = 1u << FS_UNDO_DATA;

	if (have < FS_UNDO_HDR_LEN) {
		snprintf(msg, ml, "truncated: %zu bytes, shorter than the %u-byte header", have,
			 FS_UNDO_HDR_LEN);
		return -ENODATA;
	}
	if (memcmp(b + H_MAGIC, FS_UNDO_MAGIC, 8)) {
		snprintf(msg, ml, "not an xfsx undo file (bad magic)");
		return -EBADMSG;
	}
	if (get_le32(b + H_CRC) != crc(b, H_CRC)) {
		snprintf(msg, ml, "damaged header: checksum 0x%08x, computed 0x%08x",
			 get_le32(b + H_CRC), crc(b, H_CRC));
		return -EBADMSG;
	}
	memset(h, 0, sizeof(*h));
	h->version = get_le32(b + H_VERSION);
	if (h->version < 1 || h->version > FS_UNDO_VERSION) {
		snprintf(msg, ml, "undo file version %u; this xfsx_undo reads versions 1 to %u",
			 h->version, FS_UNDO_VERSION);
		return -EBADMSG;
	}
	if (get_le32(b + H_HDRSPACE) != FS_UNDO_HDR_SPACE) {
		snprintf(msg, ml, "damaged header: records start at %u, expected %u",
			 get_le32(b + H_HDRSPACE), FS_UNDO_HDR_SPACE);
		return -EBADMSG;
	}
	h->flags = get_le32(b + H_FLAGS);
	h->dev_size = get_le64(b + H_DEVSIZE);
	h->fp_len = get_le64(b + H_FPLEN);
	h->fp_before = get_le32(b + H_FPBEFORE);
	h->fp_after = get_le32(b + H_FPAFTER);
	memcpy(h->uuid_before, b + H_UUIDBEFORE, 16);
	memcpy(h->uuid_after, b + H_UUIDAFTER, 16);
	h->nrecs = get_le64(b + H_NRECS);
	h->saved_bytes = get_le64(b + H_SAVED);
	h->file_len = get_le64(b + H_FILELEN);
	h->ctime = get_le64(b + H_CTIME);
	memcpy(h->tool, b + H_TOOL, sizeof(h->tool));
	h->tool[sizeof(h->tool) - 1] = 0;
	memcpy(h->device, b + H_DEVICE, sizeof(h->device));
	h->device[sizeof(h->device) - 1] = 0;
	if (h->fp_len > h->dev_size || h->fp_len > FS_UNDO_FP_BYTES) {
		snprintf(msg, ml, "damaged header: fingerprint length %llu",
			 (unsigned long long)h->fp_len);
		return -EBADMSG;
	}
	data_desc(h);
	if (h->version >= 2)
		roles = get_le32(b + H_ROLES);
	if (!(roles & (1u << FS_UNDO_DATA)) || roles >> FS_UNDO_ROLES) {
		snprintf(msg, ml, "damaged header: device set 0x%x", roles);
		return -EBADMSG;
	}
	for (unsigned r = FS_UNDO_DATA + 1; r < FS_UNDO_ROLES; r++) {
		int err;

		if (!(roles & (1u << r)))
			continue;
		if (have < (size_t)(r + 1) * FS_UNDO_HDR_LEN) {
			snprintf(msg, ml, "truncated: %zu bytes, shorter than the header's device "
				 "descriptions", have);
			return -ENODATA;
		}
		err = dec_desc(b + (size_t)r * FS_UNDO_HDR_LEN, r, &h->devs[r], msg, ml);
		if (err)
			return err;
	}
	return 0;
}

static void enc_rec(unsigned char *b, uint32_t flags, uint64_t off, uint64_t len, uint32_t dcrc)
{
	put_le32(b + R_MAGIC, FS_UNDO_REC_MAGIC);
	put_le32(b + R_FLAGS, flags);
	put_le64(b + R_OFF, off);
	put_le64(b + R_LEN, len);
	put_le32(b + R_DCRC, dcrc);
	put_le32(b + R_HCRC, crc(b, R_HCRC));
}

static int full_pread(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int full_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t r = pwrite(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static bool all_zero(const unsigned char *p, size_t len)
{
	return !len || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
}

int fs_undo_fingerprint(struct fs_dev *dev, uint64_t fp_len, uint32_t *out)
{
	unsigned char *buf;
	int err;

	if (fp_len > dev->size)
		return -ENXIO;
	buf = fs_dev_alloc(dev, fp_len ? fp_len : 1);
	if (!buf)
		return -ENOMEM;
	err = fp_len ? fs_dev_read(dev, buf, fp_len, 0) : 0;
	if (!err)
		*out = crc(buf, fp_len);
	free(buf);
	return err;
}

/* The UUID of the XFS primary superblock at the start of dev, if there is one. */
static bool read_xfs_uuid(struct fs_dev *dev, unsigned char uuid[16])
{
	unsigned char *buf;
	bool ok = false;

	if (dev->size < FS_BBSIZE)
		return false;
	buf = fs_dev_alloc(dev, FS_BBSIZE);
	if (!buf)
		return false;
	if (!fs_dev_read(dev, buf, FS_BBSIZE, 0) && get_be32(buf) == XFS_SB_MAGIC) {
		memcpy(uuid, buf + offsetof(struct xfs_dsb, sb_uuid), 16);
		ok = true;
	}
	free(buf);
	return ok;
}

/*
 * The filesystem UUID a log names: the first log record header in the
 * first 256 KiB (a record is at most that long, so one starts there
 * whatever the cycle).
 */
static bool read_log_uuid(struct fs_dev *dev, unsigned char uuid[16])
{
	size_t span = dev->size < (256u << 10) ? (size_t)(dev->size & ~(uint64_t)(FS_BBSIZE - 1)) :
		      256u << 10;
	unsigned char *buf;
	bool ok = false;

	if (span < FS_BBSIZE || !(buf = fs_dev_alloc(dev, span)))
		return false;
	if (!fs_dev_read(dev, buf, span, 0))
		for (size_t i = 0; i + sizeof(struct xlog_rec_header) <= span && !ok; i += FS_BBSIZE) {
			const struct xlog_rec_header *rh = (const void *)(buf + i);

			if (be32(rh->h_magicno) != XLOG_HEADER_MAGIC_NUM)
				continue;
			memcpy(uuid, &rh->h_fs_uuid, 16);
			ok = true;
		}
	free(buf);
	return ok;
}

/* The UUID a device's contents name, by its role (a realtime device names none). */
static bool read_role_uuid(enum fs_undo_role role, struct fs_dev *dev, unsigned char uuid[16])
{
	if (role == FS_UNDO_DATA)
		return read_xfs_uuid(dev, uuid);
	if (role == FS_UNDO_LOG)
		return read_log_uuid(dev, uuid);
	return false;
}

/* ---- the writer ---- */

#define WBUF_BYTES   (4u << 20)
#define PAGE_BITS    (4096u * 8)          /* sectors per bitmap page: 16 MiB of device */
#define PAGE_WORDS   (PAGE_BITS / 64)

/* A bitmap page whose every sector is saved (mkfs discards whole devices). */
static uint64_t full_page[1];
#define FULL_PAGE full_page

struct fs_undo;

/* One device of the run: its hooks' priv. */
struct undo_slot {
	struct fs_undo *u;
	enum fs_undo_role role;
	bool present;
	struct fs_dev *dev;        /* NULL while detached */
	uint64_t size;
	uint64_t **pages;          /* saved sectors, one bit each, allocated on demand */
	size_t npages;
	unsigned char *rbuf;       /* one chunk of old bytes, aligned for this device */
};

struct fs_undo {
	int fd;
	pthread_mutex_t lock;
	struct fs_undo_header h;
	uint64_t wpos;             /* file offset of wbuf[0] */
	unsigned char *wbuf;
	size_t wlen;
	bool unsynced;             /* records appended since the last fdatasync */
	bool finished;
	int failed;                /* sticky: once the file cannot be trusted, no device write */
	struct undo_slot slot[FS_UNDO_ROLES];
	uint64_t zoff, zlen;       /* a zero record being extended */
	enum fs_undo_role zrole;   /* ... on this device */
	char err[320];
};

static uint64_t nsectors(const struct undo_slot *sl)
{
	return (sl->size + FS_UNDO_GRAIN - 1) / FS_UNDO_GRAIN;
}

static bool sector_saved(const struct undo_slot *u, uint64_t s)
{
	const uint64_t *p = u->pages[s / PAGE_BITS];

	if (!p)
		return false;
	if (p == FULL_PAGE)
		return true;
	return p[(s % PAGE_BITS) / 64] >> (s % 64) & 1;
}

/* Mark [s, e) saved; a page that fills up becomes FULL_PAGE (bounded memory). */
static int mark_saved(struct undo_slot *u, uint64_t s, uint64_t e)
{
	while (s < e) {
		uint64_t pg = s / PAGE_BITS, pend = (pg + 1) * PAGE_BITS;
		uint64_t stop = e < pend ? e : pend;
		uint64_t *p = u->pages[pg];

		if (p == FULL_PAGE) {
			s = stop;
			continue;
		}
		if (s == pg * PAGE_BITS && stop == pend) {
			free(p);
			u->pages[pg] = FULL_PAGE;
			s = stop;
			continue;
		}
		if (!p) {
			p = calloc(PAGE_WORDS, sizeof(*p));
			if (!p)
				return -ENOMEM;
			u->pages[pg] = p;
		}
		for (uint64_t k = s; k < stop; k++)
			p[(k % PAGE_BITS) / 64] |= 1ull << (k % 64);
		{
			bool full = true;

			for (size_t w = 0; w < PAGE_WORDS && full; w++)
				full = p[w] == ~0ull;
			if (full) {
				free(p);
				u->pages[pg] = FULL_PAGE;
			}
		}
		s = stop;
	}
	return 0;
}

static int wflush(struct fs_undo *u)
{
	int err;

	if (!u->wlen)
		return 0;
	err = full_pwrite(u->fd, u->wbuf, u->wlen, u->wpos);
	if (err)
		return err;
	u->wpos += u->wlen;
	u->wlen = 0;
	return 0;
}

static int append(struct fs_undo *u, const void *p, size_t len)
{
	int err;

	if (u->wlen + len > WBUF_BYTES) {
		err = wflush(u);
		if (err)
			return err;
	}
	if (len > WBUF_BYTES)
		return -EINVAL;
	memcpy(u->wbuf + u->wlen, p, len);
	u->wlen += len;
	u->unsynced = true;
	return 0;
}

static int emit(struct fs_undo *u, enum fs_undo_role role, uint32_t flags, uint64_t off,
		uint64_t len, const unsigned char *data)
{
	unsigned char rh[FS_UNDO_REC_LEN];
	int err;

	flags |= (uint32_t)role << FS_UNDO_REC_ROLE_SHIFT;
	enc_rec(rh, flags, off, len, data ? crc(data, len) : 0);
	err = append(u, rh, sizeof(rh));
	if (!err && data)
		err = append(u, data, len);
	if (!err) {
		u->h.nrecs++;
		u->h.saved_bytes += len;
	}
	return err;
}

static int zero_flush(struct fs_undo *u)
{
	int err = u->zlen ? emit(u, u->zrole, FS_UNDO_REC_ZERO, u->zoff, u->zlen, NULL) : 0;

	u->zlen = 0;
	return err;
}

static int zero_add(struct fs_undo *u, enum fs_undo_role role, uint64_t off, uint64_t len)
{
	if (u->zlen && u->zrole == role && u->zoff + u->zlen == off) {
		u->zlen += len;
		return 0;
	}
	{
		int err = zero_flush(u);

		if (err)
			return err;
	}
	u->zrole = role;
	u->zoff = off;
	u->zlen = len;
	return 0;
}

/*
 * Save the old bytes of [s, e): holes of an image file without reading
 * them, else read in chunks (aligned to FS_UNDO_CHUNK, so O_DIRECT reads
 * need no bounce buffer past the first), all-zero chunks as zero records.
 */
static int save_range(struct undo_slot *sl, uint64_t s, uint64_t e)
{
	struct fs_undo *u = sl->u;
	struct fs_dev *dev = sl->dev;
	uint64_t pos = s;
	int err = 0;

	while (pos < e && !err) {
		uint64_t data_end = e;

		if (!dev->blockdev) {
			off_t d = lseek(dev->fd, (off_t)pos, SEEK_DATA);

			if (d < 0 && errno == ENXIO)
				d = (off_t)e;           /* a hole to the end of the file */
			if (d >= 0 && (uint64_t)d > pos) {
				uint64_t he = (uint64_t)d < e ? (uint64_t)d : e;

				err = zero_add(u, sl->role, pos, he - pos);
				pos = he;
				continue;
			}
			if (d >= 0) {
				off_t h = lseek(dev->fd, (off_t)pos, SEEK_HOLE);

				if (h >= 0 && (uint64_t)h < e && (uint64_t)h > pos)
					data_end = (uint64_t)h;
			}
		}
		while (pos < data_end && !err) {
			uint64_t ce = (pos / FS_UNDO_CHUNK + 1) * (uint64_t)FS_UNDO_CHUNK;
			size_t n;

			if (ce > data_end)
				ce = data_end;
			n = (size_t)(ce - pos);
			err = fs_dev_read(dev, sl->rbuf, n, pos);
			if (err) {
				snprintf(u->err, sizeof(u->err), "reading the old contents of %s device "
					 "offset %llu (%zu bytes) for the undo file failed: %s",
					 fs_undo_role_name(sl->role), (unsigned long long)pos, n,
					 strerror(-err));
				return err;
			}
			if (all_zero(sl->rbuf, n)) {
				err = zero_add(u, sl->role, pos, n);
			} else {
				err = zero_flush(u);
				if (!err)
					err = emit(u, sl->role, 0, pos, n, sl->rbuf);
			}
			pos = ce;
		}
	}
	if (!err)
		err = zero_flush(u);
	return err;
}

static int undo_hook(void *priv, uint64_t off, uint64_t len)
{
	struct undo_slot *sl = priv;
	struct fs_undo *u = sl->u;
	uint64_t first, last, k;
	int err = 0;

	pthread_mutex_lock(&u->lock);
	if (u->failed) {
		err = u->failed;
		goto out;
	}
	if (off >= sl->size || !len)
		goto out;
	if (len > sl->size - off)
		len = sl->size - off;
	first = off / FS_UNDO_GRAIN;
	last = (off + len + FS_UNDO_GRAIN - 1) / FS_UNDO_GRAIN;     /* exclusive */
	for (k = first; k < last && !err;) {
		uint64_t run;

		if (sl->pages[k / PAGE_BITS] == FULL_PAGE) {
			k = (k / PAGE_BITS + 1) * PAGE_BITS;
			continue;
		}
		if (sector_saved(sl, k)) {
			k++;
			continue;
		}
		for (run = k + 1; run < last && !sector_saved(sl, run); run++)
			;
		{
			uint64_t s = k * FS_UNDO_GRAIN, e = run * FS_UNDO_GRAIN;

			if (e > sl->size)
				e = sl->size;
			err = save_range(sl, s, e);
		}
		if (!err)
			err = mark_saved(sl, k, run);
		k = run;
	}
	if (err) {
		if (!*u->err)
			snprintf(u->err, sizeof(u->err), "writing the undo file failed: %s",
				 strerror(-err));
		u->failed = err;
	}
out:
	pthread_mutex_unlock(&u->lock);
	return err;
}

/* Before a submission reaches the device: its records are durable. */
static int undo_commit(void *priv)
{
	struct fs_undo *u = ((struct undo_slot *)priv)->u;
	int err;

	pthread_mutex_lock(&u->lock);
	err = u->failed;
	if (!err && (u->wlen || u->unsynced)) {
		err = wflush(u);
		if (!err && fdatasync(u->fd) < 0)
			err = -errno;
		if (!err)
			u->unsynced = false;
		if (err) {
			snprintf(u->err, sizeof(u->err), "making the undo file durable failed: %s",
				 strerror(-err));
			u->failed = err;
		}
	}
	pthread_mutex_unlock(&u->lock);
	return err;
}

/* The directory part of path, "." when there is none (malloc'd). */
static char *dir_of(const char *path)
{
	char *dup = strdup(path), *slash;

	if (!dup)
		return NULL;
	slash = strrchr(dup, '/');
	if (slash == dup)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		strcpy(dup, ".");
	return dup;
}

static int sync_parent_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd, err = 0;

	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) < 0)
			err = -errno;
		close(fd);
	}
	free(dir);
	return err;
}

static int write_header_synced(int fd, const unsigned char *hb)
{
	int err = full_pwrite(fd, hb, FS_UNDO_HDR_SPACE, 0);

	if (!err && fsync(fd) < 0)
		err = -errno;
	return err;
}

/*
 * Create path with its header durable, never over an existing file (it
 * may be the only way back from an earlier run): -EEXIST.  The header is
 * written to an unnamed file (O_TMPFILE) that is then linked in, so the
 * name never shows a file without a whole header, even if the run is
 * killed at that moment.  Where O_TMPFILE or /proc is missing, the file is
 * created in place: a kill before its header is durable leaves a short
 * file from a run that wrote nothing to the device.
 */
static int create_file(const char *path, const unsigned char *hb, int *fdp)
{
	char *dir = dir_of(path), proc[64];
	int fd, err;

	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	free(dir);
	if (fd >= 0) {
		err = write_header_synced(fd, hb);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (!err && linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
			err = -errno;
		if (!err) {
			*fdp = fd;
			return 0;
		}
		close(fd);
		if (err == -EEXIST)
			return err;
		/* no /proc, or linkat refused: the plain way below */
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_header_synced(fd, hb);
	if (err) {
		close(fd);
		unlink(path);
		return err;
	}
	*fdp = fd;
	return 0;
}

static void undo_free_mem(struct fs_undo *u)
{
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++) {
		struct undo_slot *sl = &u->slot[r];

		if (sl->pages)
			for (size_t i = 0; i < sl->npages; i++)
				if (sl->pages[i] != FULL_PAGE)
					free(sl->pages[i]);
		free(sl->pages);
		free(sl->rbuf);
	}
	free(u->wbuf);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

static void hooks_on(struct undo_slot *sl)
{
	fs_dev_set_write_hook(sl->dev, undo_hook, sl);
	fs_dev_set_write_commit(sl->dev, undo_commit);
}

static void hooks_off(struct undo_slot *sl)
{
	if (sl->dev && sl->dev->before_write_priv == sl) {
		fs_dev_set_write_hook(sl->dev, NULL, NULL);
		fs_dev_set_write_commit(sl->dev, NULL);
	}
}

/* One device's slot and identity before the run: 0, or a negative errno with msg. */
static int slot_init(struct fs_undo *u, enum fs_undo_role role, struct fs_dev *dev,
		     struct fs_undo_devdesc *d, char *msg, size_t ml)
{
	struct undo_slot *sl = &u->slot[role];
	int err;

	sl->u = u;
	sl->role = role;
	sl->present = true;
	sl->dev = dev;
	sl->size = dev->size;
	sl->npages = (size_t)((nsectors(sl) + PAGE_BITS - 1) / PAGE_BITS);
	sl->pages = calloc(sl->npages ? sl->npages : 1, sizeof(*sl->pages));
	sl->rbuf = fs_dev_alloc(dev, FS_UNDO_CHUNK);
	if (!sl->pages || !sl->rbuf)
		return -ENOMEM;
	d->present = true;
	d->dev_size = dev->size;
	d->fp_len = dev->size < FS_UNDO_FP_BYTES ? dev->size : FS_UNDO_FP_BYTES;
	snprintf(d->device, sizeof(d->device), "%s", dev->path ? dev->path : "");
	err = fs_undo_fingerprint(dev, d->fp_len, &d->fp_before);
	if (err) {
		snprintf(msg, ml, "reading the first %llu bytes of %s for the undo file's "
			 "fingerprint failed: %s", (unsigned long long)d->fp_len, dev->path,
			 strerror(-err));
		return err;
	}
	if (read_role_uuid(role, dev, d->uuid_before))
		d->flags |= FS_UNDO_UUID_BEFORE;
	return 0;
}

int fs_undo_create(const char *path, struct fs_dev *dev, const char *tool,
		   const unsigned char *uuid_after, struct fs_undo **out, char *msg, size_t ml)
{
	struct fs_dev *devs[FS_UNDO_ROLES] = { [FS_UNDO_DATA] = dev };

	return fs_undo_create_devs(path, devs, tool, uuid_after, out, msg, ml);
}

int fs_undo_create_devs(const char *path, struct fs_dev *const devs[FS_UNDO_ROLES],
			const char *tool, const unsigned char *uuid_after, struct fs_undo **out,
			char *msg, size_t ml)
{
	unsigned char hb[FS_UNDO_HDR_SPACE];
	struct fs_undo *u = calloc(1, sizeof(*u));
	struct fs_undo_devdesc *d0;
	int err = 0;

	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->lock, NULL);
	u->fd = -1;
	u->h.version = FS_UNDO_VERSION;
	u->h.ctime = (uint64_t)time(NULL);
	snprintf(u->h.tool, sizeof(u->h.tool), "%s", tool ? tool : "");
	u->wbuf = malloc(WBUF_BYTES);
	if (!u->wbuf) {
		undo_free_mem(u);
		return -ENOMEM;
	}
	for (unsigned r = 0; r < FS_UNDO_ROLES && !err; r++)
		if (devs[r] || r == FS_UNDO_DATA)
			err = devs[r] ? slot_init(u, r, devs[r], &u->h.devs[r], msg, ml) : -EINVAL;
	if (err) {
		if (err == -ENOMEM || err == -EINVAL)
			snprintf(msg, ml, "%s", strerror(-err));
		undo_free_mem(u);
		return err;
	}
	/* the data device's identity is the header's own fields (as in version 1) */
	d0 = &u->h.devs[FS_UNDO_DATA];
	u->h.dev_size = d0->dev_size;
	u->h.fp_len = d0->fp_len;
	u->h.fp_before = d0->fp_before;
	memcpy(u->h.uuid_before, d0->uuid_before, 16);
	u->h.flags |= d0->flags & FS_UNDO_UUID_BEFORE;
	snprintf(u->h.device, sizeof(u->h.device), "%s", d0->device);
	/* the other devices keep what they name unless the run changes it (finish reads it again) */
	for (unsigned r = FS_UNDO_DATA + 1; r < FS_UNDO_ROLES; r++)
		if (u->h.devs[r].flags & FS_UNDO_UUID_BEFORE) {
			memcpy(u->h.devs[r].uuid_after, u->h.devs[r].uuid_before, 16);
			u->h.devs[r].flags |= FS_UNDO_UUID_AFTER;
		}
	if (uuid_after) {
		memcpy(u->h.uuid_after, uuid_after, 16);
		u->h.flags |= FS_UNDO_UUID_AFTER;
	} else if (u->h.flags & FS_UNDO_UUID_BEFORE) {
		memcpy(u->h.uuid_after, u->h.uuid_before, 16);
		u->h.flags |= FS_UNDO_UUID_AFTER;
	}
	enc_header(hb, &u->h);
	err = create_file(path, hb, &u->fd);
	if (err) {
		snprintf(msg, ml, "cannot create the undo file %s: %s%s", path, strerror(-err),
			 err == -EEXIST ? " (an undo file is never overwritten: move it away or "
			 "name another)" : "");
		undo_free_mem(u);
		return err;
	}
	err = sync_parent_dir(path);
	if (err) {
		snprintf(msg, ml, "making the undo file %s durable failed: %s", path,
			 strerror(-err));
		close(u->fd);
		unlink(path);
		undo_free_mem(u);
		return err;
	}
	u->wpos = FS_UNDO_HDR_SPACE;
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++)
		if (u->slot[r].present)
			hooks_on(&u->slot[r]);
	*out = u;
	return 0;
}

int fs_undo_finish(struct fs_undo *u, char *msg, size_t ml)
{
	unsigned char hb[FS_UNDO_HDR_SPACE], uuid[16];
	int err;

	if (u->finished)
		return 0;
	if (!u->slot[FS_UNDO_DATA].dev) {
		/* detached: the records durable, the header left unfinished */
		pthread_mutex_lock(&u->lock);
		u->finished = true;
		err = wflush(u);
		if (!err && fdatasync(u->fd) < 0)
			err = -errno;
		pthread_mutex_unlock(&u->lock);
		if (err)
			snprintf(msg, ml, "writing the undo file failed: %s", strerror(-err));
		return err;
	}
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++)
		hooks_off(&u->slot[r]);
	pthread_mutex_lock(&u->lock);
	u->finished = true;
	err = wflush(u);
	/* the records first: a torn header rewrite must not be all there is */
	if (!err && fdatasync(u->fd) < 0)
		err = -errno;
	/* a device detached and never attached again: the run's after state is unknown */
	for (unsigned r = 0; r < FS_UNDO_ROLES && !err; r++)
		if (u->slot[r].present && !u->slot[r].dev)
			goto unfinished;
	for (unsigned r = 0; r < FS_UNDO_ROLES && !err; r++) {
		struct undo_slot *sl = &u->slot[r];
		struct fs_undo_devdesc *d = &u->h.devs[r];

		if (!sl->present)
			continue;
		err = fs_undo_fingerprint(sl->dev, d->fp_len, &d->fp_after);
		if (err)
			break;
		if (read_role_uuid(sl->role, sl->dev, uuid)) {
			memcpy(d->uuid_after, uuid, 16);
			d->flags |= FS_UNDO_UUID_AFTER;
		} else {
			d->flags &= ~(uint32_t)FS_UNDO_UUID_AFTER;
		}
	}
	if (!err) {
		const struct fs_undo_devdesc *d0 = &u->h.devs[FS_UNDO_DATA];

		u->h.fp_after = d0->fp_after;
		memcpy(u->h.uuid_after, d0->uuid_after, 16);
		u->h.flags = (u->h.flags & ~(uint32_t)FS_UNDO_UUID_AFTER) |
			     (d0->flags & FS_UNDO_UUID_AFTER);
		u->h.flags |= FS_UNDO_COMPLETE;
		u->h.file_len = u->wpos;
		enc_header(hb, &u->h);
		/* the data device's header sector last: it says the file is complete */
		err = full_pwrite(u->fd, hb + FS_UNDO_HDR_LEN, FS_UNDO_HDR_SPACE - FS_UNDO_HDR_LEN,
				  FS_UNDO_HDR_LEN);
		if (!err && fdatasync(u->fd) < 0)
			err = -errno;
		if (!err)
			err = full_pwrite(u->fd, hb, FS_UNDO_HDR_LEN, 0);
	}
	if (!err && fsync(u->fd) < 0)
		err = -errno;
	if (err)
		snprintf(msg, ml, "finishing the undo file failed: %s (it still restores what "
			 "was written, as the file of a run that was stopped)", strerror(-err));
	pthread_mutex_unlock(&u->lock);
	return err;
unfinished:
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void fs_undo_detach(struct fs_undo *u)
{
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++) {
		hooks_off(&u->slot[r]);
		u->slot[r].dev = NULL;
	}
}

int fs_undo_attach_role(struct fs_undo *u, enum fs_undo_role role, struct fs_dev *dev)
{
	struct undo_slot *sl;

	if ((unsigned)role >= FS_UNDO_ROLES)
		return -ENODEV;
	sl = &u->slot[role];
	if (!sl->present || dev->size != sl->size)
		return -ENODEV;
	sl->dev = dev;
	hooks_on(sl);
	return 0;
}

int fs_undo_attach(struct fs_undo *u, struct fs_dev *dev)
{
	return fs_undo_attach_role(u, FS_UNDO_DATA, dev);
}

void fs_undo_free(struct fs_undo *u)
{
	if (!u)
		return;
	for (unsigned r = 0; r < FS_UNDO_ROLES; r++)
		hooks_off(&u->slot[r]);
	if (u->fd >= 0)
		close(u->fd);
	undo_free_mem(u);
}

const char *fs_undo_error(const struct fs_undo *u)
{
	return u ? u->err : "";
}

uint64_t fs_undo_saved_bytes(const struct fs_undo *u)
{
	return u->h.saved_bytes;
}

uint64_t fs_undo_records(const struct fs_undo *u)
{
	return u->h.nrecs;
}

/* ---- the reader ---- */

static int cmp_rec_off(const void *a, const void *b)
{
	const struct fs_undo_rec *x = *(const struct fs_undo_rec * const *)a;
	const struct fs_undo_rec *y = *(const struct fs_undo_rec * const *)b;

	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every record range inside its device, sector-aligned, no two on one device overlapping. */
static int check_ranges(struct fs_undo_file *f, char *msg, size_t ml)
{
	const struct fs_undo_rec **v;

	if (!f->nrecs)
		return 0;
	v = malloc(f->nrecs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->nrecs; i++)
		v[i] = &f->recs[i];
	qsort(v, f->nrecs, sizeof(*v), cmp_rec_off);
	for (size_t i = 1; i < f->nrecs; i++)
		if (v[i]->role == v[i - 1]->role && v[i]->off < v[i - 1]->off + v[i - 1]->len) {
			snprintf(msg, ml, "damaged: records #%zu and #%zu overlap (device offsets "
				 "%llu+%llu and %llu+%llu)", (size_t)(v[i - 1] - f->recs),
				 (size_t)(v[i] - f->recs), (unsigned long long)v[i - 1]->off,
				 (unsigned long long)v[i - 1]->len, (unsigned long long)v[i]->off,
				 (unsigned long long)v[i]->len);
			free(v);
			return -EBADMSG;
		}
	free(v);
	return 0;
}

static int add_rec(struct fs_undo_file *f, size_t *cap, const struct fs_undo_rec *r)
{
	if (f->nrecs == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct fs_undo_rec *nv = realloc(f->recs, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		f->recs = nv;
		*cap = nc;
	}
	f->recs[f->nrecs++] = *r;
	f->saved_bytes += r->len;
	return 0;
}

int fs_undo_file_open(const char *path, struct fs_undo_file **out, char *msg, size_t ml)
{
	struct fs_undo_file *f = calloc(1, sizeof(*f));
	unsigned char hb[FS_UNDO_HDR_SPACE], rh[FS_UNDO_REC_LEN];
	unsigned char *data = malloc(FS_UNDO_CHUNK);
	struct stat st;
	size_t cap = 0;
	uint64_t pos;
	bool complete;
	int err;

	if (!f || !data) {
		free(f);
		free(data);
		return -ENOMEM;
	}
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		err = -errno;
		snprintf(msg, ml, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		snprintf(msg, ml, "not a regular file");
		goto fail;
	}
	f->file_len = (uint64_t)st.st_size;
	memset(hb, 0, sizeof(hb));
	err = full_pread(f->fd, hb, f->file_len < FS_UNDO_HDR_SPACE ? f->file_len : FS_UNDO_HDR_SPACE,
			 0);
	if (err && err != -ENODATA) {
		snprintf(msg, ml, "reading the header failed: %s", strerror(-err));
		goto fail;
	}
	err = dec_header(hb, f->file_len < FS_UNDO_HDR_SPACE ? f->file_len : FS_UNDO_HDR_SPACE,
			 &f->h, msg, ml);
	if (err)
		goto fail;
	complete = f->h.flags & FS_UNDO_COMPLETE;
	if (complete && f->file_len < f->h.file_len) {
		snprintf(msg, ml, "truncated: %llu bytes, its header says the run left %llu",
			 (unsigned long long)f->file_len, (unsigned long long)f->h.file_len);
		err = -ENODATA;
		goto fail;
	}
	if (complete && f->file_len > f->h.file_len) {
		snprintf(msg, ml, "damaged: %llu bytes, its header says the run left %llu "
			 "(data appended after the run finished)", (unsigned long long)f->file_len,
			 (unsigned long long)f->h.file_len);
		err = -EBADMSG;
		goto fail;
	}
	if (f->file_len < FS_UNDO_HDR_SPACE) {
		if (complete || f->file_len > FS_UNDO_HDR_LEN) {
			snprintf(msg, ml, "truncated: %llu bytes, shorter than the %u-byte header "
				 "block", (unsigned long long)f->file_len, FS_UNDO_HDR_SPACE);
			err = -ENODATA;
			goto fail;
		}
	}
	for (pos = FS_UNDO_HDR_SPACE; pos < f->file_len;) {
		uint64_t left = f->file_len - pos;
		struct fs_undo_rec r = { 0 };
		uint32_t flags;
		uint64_t dsize;
		size_t idx = f->nrecs;

		/*
		 * An unfinished file may end in a record that was being
		 * appended when the run died: never synced, so the write it
		 * covered never began.  Anything else that fails is damage.
		 */
		if (left < FS_UNDO_REC_LEN) {
			if (!complete) {
				f->torn_bytes = left;
				break;
			}
			snprintf(msg, ml, "truncated inside record #%zu (file offset %llu)", idx,
				 (unsigned long long)pos);
			err = -ENODATA;
			goto fail;
		}
		err = full_pread(f->fd, rh, sizeof(rh), pos);
		if (err) {
			snprintf(msg, ml, "reading record #%zu failed: %s", idx, strerror(-err));
			goto fail;
		}
		if (get_le32(rh + R_MAGIC) != FS_UNDO_REC_MAGIC ||
		    get_le32(rh + R_HCRC) != crc(rh, R_HCRC)) {
			if (!complete && left <= FS_UNDO_REC_LEN + FS_UNDO_CHUNK) {
				f->torn_bytes = left;
				break;
			}
			snprintf(msg, ml, "damaged: record #%zu at file offset %llu has a bad %s",
				 idx, (unsigned long long)pos,
				 get_le32(rh + R_MAGIC) != FS_UNDO_REC_MAGIC ? "magic" : "checksum");
			err = -EBADMSG;
			goto fail;
		}
		flags = get_le32(rh + R_FLAGS);
		r.off = get_le64(rh + R_OFF);
		r.len = get_le64(rh + R_LEN);
		r.data_crc = get_le32(rh + R_DCRC);
		r.zero = flags & FS_UNDO_REC_ZERO;
		r.role = (uint8_t)((flags & FS_UNDO_REC_ROLE_MASK) >> FS_UNDO_REC_ROLE_SHIFT);
		dsize = r.role < FS_UNDO_ROLES ? f->h.devs[r.role].dev_size : 0;
		if ((flags & ~(uint32_t)(FS_UNDO_REC_ZERO | FS_UNDO_REC_ROLE_MASK)) ||
		    r.role >= FS_UNDO_ROLES || !f->h.devs[r.role].present ||
		    !r.len || r.off % FS_UNDO_GRAIN ||
		    r.off > dsize || r.len > dsize - r.off ||
		    ((r.off + r.len) % FS_UNDO_GRAIN && r.off + r.len != dsize) ||
		    (!r.zero && r.len > FS_UNDO_CHUNK)) {
			snprintf(msg, ml, "damaged: record #%zu at file offset %llu names device "
				 "range %llu+%llu (flags 0x%x), not a range of a device this file "
				 "covers",
				 idx, (unsigned long long)pos, (unsigned long long)r.off,
				 (unsigned long long)r.len, flags);
			err = -EBADMSG;
			goto fail;
		}
		pos += FS_UNDO_REC_LEN;
		if (!r.zero) {
			if (f->file_len - pos < r.len) {
				if (!complete) {
					f->torn_bytes = left;
					break;
				}
				snprintf(msg, ml, "truncated inside record #%zu's data", idx);
				err = -ENODATA;
				goto fail;
			}
			err = full_pread(f->fd, data, (size_t)r.len, pos);
			if (err) {
				snprintf(msg, ml, "reading record #%zu failed: %s", idx,
					 strerror(-err));
				goto fail;
			}
			if (crc(data, (size_t)r.len) != r.data_crc) {
				if (!complete && pos + r.len == f->file_len) {
					f->torn_bytes = left;
					break;
				}
				snprintf(msg, ml, "damaged: record #%zu (device offset %llu, %llu "
					 "bytes, file offset %llu): its data fails its checksum", idx,
					 (unsigned long long)r.off, (unsigned long long)r.len,
					 (unsigned long long)(pos - FS_UNDO_REC_LEN));
				err = -EBADMSG;
				goto fail;
			}
			r.data_pos = pos;
			pos += r.len;
		}
		err = add_rec(f, &cap, &r);
		if (err)
			goto fail;
	}
	if (complete && (f->nrecs != f->h.nrecs || f->saved_bytes != f->h.saved_bytes)) {
		snprintf(msg, ml, "damaged: %zu records of %llu bytes, its header says %llu of %llu",
			 f->nrecs, (unsigned long long)f->saved_bytes,
			 (unsigned long long)f->h.nrecs, (unsigned long long)f->h.saved_bytes);
		err = -EBADMSG;
		goto fail;
	}
	err = check_ranges(f, msg, ml);
	if (err)
		goto fail;
	free(data);
	*out = f;
	return 0;
fail:
	free(data);
	fs_undo_file_close(f);
	return err;
}

void fs_undo_file_close(struct fs_undo_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->recs);
	free(f);
}

static void uuid_str(const unsigned char *u, char *out)
{
	for (int i = 0, o = 0; i < 16; i++) {
		o += sprintf(out + o, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			out[o++] = '-';
	}
}

int fs_undo_file_match(const struct fs_undo_file *f, struct fs_dev *dev,
		       enum fs_undo_match *m, char *msg, size_t ml)
{
	return fs_undo_file_match_role(f, FS_UNDO_DATA, dev, m, msg, ml);
}

int fs_undo_file_match_role(const struct fs_undo_file *f, enum fs_undo_role role,
			    struct fs_dev *dev, enum fs_undo_match *m, char *msg, size_t ml)
{
	const struct fs_undo_devdesc *d;
	unsigned char now[16];
	char a[40], b[40], c[40];
	const char *what = role == FS_UNDO_LOG ? "the log of the XFS filesystem" :
			   "the XFS filesystem";
	uint32_t fp;
	int err;

	if ((unsigned)role >= FS_UNDO_ROLES || !f->h.devs[role].present) {
		snprintf(msg, ml, "the undo file has no %s device", fs_undo_role_name(role));
		return -ENODEV;
	}
	d = &f->h.devs[role];
	if (dev->size != d->dev_size) {
		*m = FS_UNDO_WRONG_DEVICE;
		snprintf(msg, ml, "the device holds %llu bytes; the undo file was made for one of "
			 "%llu bytes (%s)", (unsigned long long)dev->size,
			 (unsigned long long)d->dev_size, d->device);
		return 0;
	}
	if (read_role_uuid(role, dev, now) && (d->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER)) &&
	    !((d->flags & FS_UNDO_UUID_BEFORE) && !memcmp(now, d->uuid_before, 16)) &&
	    !((d->flags & FS_UNDO_UUID_AFTER) && !memcmp(now, d->uuid_after, 16))) {
		uuid_str(now, a);
		uuid_str(d->uuid_before, b);
		uuid_str(d->uuid_after, c);
		*m = FS_UNDO_WRONG_DEVICE;
		snprintf(msg, ml, "the device holds %s %s; the undo file was made for %s%s%s", what,
			 a, d->flags & FS_UNDO_UUID_BEFORE ? b : "a device without one",
			 d->flags & FS_UNDO_UUID_AFTER ? " leaving " : "",
			 d->flags & FS_UNDO_UUID_AFTER ? c : "");
		return 0;
	}
	err = fs_undo_fingerprint(dev, d->fp_len, &fp);
	if (err) {
		snprintf(msg, ml, "reading the device's first %llu bytes failed: %s",
			 (unsigned long long)d->fp_len, strerror(-err));
		return err;
	}
	if (!(f->h.flags & FS_UNDO_COMPLETE)) {
		*m = FS_UNDO_MATCH_UNKNOWN;
		snprintf(msg, ml, "the run that wrote this undo file did not finish (killed, or "
			 "stopped by an error): only the device's size%s could be compared%s",
			 d->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER) ?
			 (role == FS_UNDO_LOG ? " and the UUID its log records carry" :
			  " and filesystem UUID") : "",
			 fp == d->fp_before ? "; its first blocks are as they were before the run" : "");
		return 0;
	}
	if (fp == d->fp_after) {
		*m = FS_UNDO_MATCH;
		snprintf(msg, ml, "the device is as the run left it (first %llu bytes: CRC32c "
			 "0x%08x)", (unsigned long long)d->fp_len, fp);
	} else if (fp == d->fp_before) {
		*m = FS_UNDO_RESTORED;
		snprintf(msg, ml, "the device's first blocks are as they were before the run: "
			 "it looks restored already");
	} else {
		*m = FS_UNDO_CHANGED;
		snprintf(msg, ml, "the device changed since the run: its first %llu bytes have "
			 "CRC32c 0x%08x, the run left 0x%08x", (unsigned long long)d->fp_len, fp,
			 d->fp_after);
	}
	return 0;
}

int fs_undo_file_apply(const struct fs_undo_file *f, size_t i, struct fs_dev *dev)
{
	const struct fs_undo_rec *r = &f->recs[i];
	unsigned char *buf;
	int err;

	if (r->zero) {
		/* a punched hole reads as zeroes and keeps an image sparse; BLKZEROOUT on devices */
		if (dev->blockdev)
			return fs_dev_zero_range(dev, r->off, r->len);
		return fs_dev_discard_range(dev, r->off, r->len);
	}
	buf = fs_dev_alloc(dev, r->len);
	if (!buf)
		return -ENOMEM;
	err = full_pread(f->fd, buf, (size_t)r->len, r->data_pos);
	if (!err && crc(buf, (size_t)r->len) != r->data_crc)
		err = -EBADMSG;
	if (!err)
		err = fs_dev_write(dev, buf, (size_t)r->len, r->off);
	free(buf);
	return err;
}
