// SPDX-License-Identifier: GPL-2.0
/*
 * Undo files: the writer behind --undo-file (a before-write hook on the
 * device that saves each sector's old bytes once, durable before the write
 * that covers them) and the reader behind xfsx_undo (validate the whole
 * file, judge the device, write the old bytes back).  The layout and the
 * ordering rules are in undo.h.  Nothing here prints.
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
	H_CRC = FS_UNDO_HDR_LEN - 4,
};
/* record header offsets */
enum { R_MAGIC = 0, R_FLAGS = 4, R_OFF = 8, R_LEN = 16, R_DCRC = 24, R_HCRC = 28 };

static void enc_header(unsigned char *b, const struct fs_undo_header *h)
{
	memset(b, 0, FS_UNDO_HDR_SPACE);
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
	put_le32(b + H_CRC, crc(b, H_CRC));
}

/* -EBADMSG with msg when the header is not one we can trust. */
static int dec_header(const unsigned char *b, size_t have, struct fs_undo_header *h, char *msg,
		      size_t ml)
{
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
	if (h->version != FS_UNDO_VERSION) {
		snprintf(msg, ml, "undo file version %u; this xfsx_undo reads version %u",
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

/* ---- the writer ---- */

#define WBUF_BYTES   (4u << 20)
#define PAGE_BITS    (4096u * 8)          /* sectors per bitmap page: 16 MiB of device */
#define PAGE_WORDS   (PAGE_BITS / 64)

/* A bitmap page whose every sector is saved (mkfs discards whole devices). */
static uint64_t full_page[1];
#define FULL_PAGE full_page

struct fs_undo {
	struct fs_dev *dev;
	int fd;
	pthread_mutex_t lock;
	struct fs_undo_header h;
	uint64_t wpos;             /* file offset of wbuf[0] */
	unsigned char *wbuf;
	size_t wlen;
	bool unsynced;             /* records appended since the last fdatasync */
	bool finished;
	int failed;                /* sticky: once the file cannot be trusted, no device write */
	uint64_t **pages;          /* saved sectors, one bit each, allocated on demand */
	size_t npages;
	unsigned char *rbuf;       /* one chunk of old bytes */
	uint64_t zoff, zlen;       /* a zero record being extended */
	char err[320];
};

static uint64_t nsectors(const struct fs_undo *u)
{
	return (u->h.dev_size + FS_UNDO_GRAIN - 1) / FS_UNDO_GRAIN;
}

static bool sector_saved(const struct fs_undo *u, uint64_t s)
{
	const uint64_t *p = u->pages[s / PAGE_BITS];

	if (!p)
		return false;
	if (p == FULL_PAGE)
		return true;
	return p[(s % PAGE_BITS) / 64] >> (s % 64) & 1;
}

/* Mark [s, e) saved; a page that fills up becomes FULL_PAGE (bounded memory). */
static int mark_saved(struct fs_undo *u, uint64_t s, uint64_t e)
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

static int emit(struct fs_undo *u, uint32_t flags, uint64_t off, uint64_t len,
		const unsigned char *data)
{
	unsigned char rh[FS_UNDO_REC_LEN];
	int err;

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
	int err = u->zlen ? emit(u, FS_UNDO_REC_ZERO, u->zoff, u->zlen, NULL) : 0;

	u->zlen = 0;
	return err;
}

static int zero_add(struct fs_undo *u, uint64_t off, uint64_t len)
{
	if (u->zlen && u->zoff + u->zlen == off) {
		u->zlen += len;
		return 0;
	}
	{
		int err = zero_flush(u);

		if (err)
			return err;
	}
	u->zoff = off;
	u->zlen = len;
	return 0;
}

/*
 * Save the old bytes of [s, e): holes of an image file without reading
 * them, else read in chunks (aligned to FS_UNDO_CHUNK, so O_DIRECT reads
 * need no bounce buffer past the first), all-zero chunks as zero records.
 */
static int save_range(struct fs_undo *u, uint64_t s, uint64_t e)
{
	struct fs_dev *dev = u->dev;
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

				err = zero_add(u, pos, he - pos);
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
			err = fs_dev_read(dev, u->rbuf, n, pos);
			if (err) {
				snprintf(u->err, sizeof(u->err), "reading the old contents of device "
					 "offset %llu (%zu bytes) for the undo file failed: %s",
					 (unsigned long long)pos, n, strerror(-err));
				return err;
			}
			if (all_zero(u->rbuf, n)) {
				err = zero_add(u, pos, n);
			} else {
				err = zero_flush(u);
				if (!err)
					err = emit(u, 0, pos, n, u->rbuf);
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
	struct fs_undo *u = priv;
	uint64_t first, last, k;
	int err = 0;

	pthread_mutex_lock(&u->lock);
	if (u->failed) {
		err = u->failed;
		goto out;
	}
	if (off >= u->h.dev_size || !len)
		goto out;
	if (len > u->h.dev_size - off)
		len = u->h.dev_size - off;
	first = off / FS_UNDO_GRAIN;
	last = (off + len + FS_UNDO_GRAIN - 1) / FS_UNDO_GRAIN;     /* exclusive */
	for (k = first; k < last && !err;) {
		uint64_t run;

		if (u->pages[k / PAGE_BITS] == FULL_PAGE) {
			k = (k / PAGE_BITS + 1) * PAGE_BITS;
			continue;
		}
		if (sector_saved(u, k)) {
			k++;
			continue;
		}
		for (run = k + 1; run < last && !sector_saved(u, run); run++)
			;
		{
			uint64_t s = k * FS_UNDO_GRAIN, e = run * FS_UNDO_GRAIN;

			if (e > u->h.dev_size)
				e = u->h.dev_size;
			err = save_range(u, s, e);
		}
		if (!err)
			err = mark_saved(u, k, run);
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
	struct fs_undo *u = priv;
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
	if (u->pages)
		for (size_t i = 0; i < u->npages; i++)
			if (u->pages[i] != FULL_PAGE)
				free(u->pages[i]);
	free(u->pages);
	free(u->wbuf);
	free(u->rbuf);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

int fs_undo_create(const char *path, struct fs_dev *dev, const char *tool,
		   const unsigned char *uuid_after, struct fs_undo **out, char *msg, size_t ml)
{
	unsigned char hb[FS_UNDO_HDR_SPACE];
	struct fs_undo *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->lock, NULL);
	u->fd = -1;
	u->dev = dev;
	u->h.version = FS_UNDO_VERSION;
	u->h.dev_size = dev->size;
	u->h.fp_len = dev->size < FS_UNDO_FP_BYTES ? dev->size : FS_UNDO_FP_BYTES;
	u->h.ctime = (uint64_t)time(NULL);
	snprintf(u->h.tool, sizeof(u->h.tool), "%s", tool ? tool : "");
	snprintf(u->h.device, sizeof(u->h.device), "%s", dev->path ? dev->path : "");
	u->npages = (size_t)((nsectors(u) + PAGE_BITS - 1) / PAGE_BITS);
	u->pages = calloc(u->npages ? u->npages : 1, sizeof(*u->pages));
	u->wbuf = malloc(WBUF_BYTES);
	u->rbuf = fs_dev_alloc(dev, FS_UNDO_CHUNK);
	if (!u->pages || !u->wbuf || !u->rbuf) {
		undo_free_mem(u);
		return -ENOMEM;
	}
	err = fs_undo_fingerprint(dev, u->h.fp_len, &u->h.fp_before);
	if (err) {
		snprintf(msg, ml, "reading the first %llu bytes of %s for the undo file's "
			 "fingerprint failed: %s", (unsigned long long)u->h.fp_len, dev->path,
			 strerror(-err));
		undo_free_mem(u);
		return err;
	}
	if (read_xfs_uuid(dev, u->h.uuid_before))
		u->h.flags |= FS_UNDO_UUID_BEFORE;
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
	fs_dev_set_write_hook(dev, undo_hook, u);
	fs_dev_set_write_commit(dev, undo_commit);
	*out = u;
	return 0;
}

int fs_undo_finish(struct fs_undo *u, char *msg, size_t ml)
{
	unsigned char hb[FS_UNDO_HDR_SPACE], uuid[16];
	int err;

	if (u->finished)
		return 0;
	if (!u->dev) {
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
	fs_dev_set_write_hook(u->dev, NULL, NULL);
	fs_dev_set_write_commit(u->dev, NULL);
	pthread_mutex_lock(&u->lock);
	u->finished = true;
	err = wflush(u);
	/* the records first: a torn header rewrite must not be all there is */
	if (!err && fdatasync(u->fd) < 0)
		err = -errno;
	if (!err)
		err = fs_undo_fingerprint(u->dev, u->h.fp_len, &u->h.fp_after);
	if (!err) {
		if (read_xfs_uuid(u->dev, uuid)) {
			memcpy(u->h.uuid_after, uuid, 16);
			u->h.flags |= FS_UNDO_UUID_AFTER;
		} else {
			u->h.flags &= ~(uint32_t)FS_UNDO_UUID_AFTER;
		}
		u->h.flags |= FS_UNDO_COMPLETE;
		u->h.file_len = u->wpos;
		enc_header(hb, &u->h);
		err = full_pwrite(u->fd, hb, FS_UNDO_HDR_LEN, 0);
	}
	if (!err && fsync(u->fd) < 0)
		err = -errno;
	if (err)
		snprintf(msg, ml, "finishing the undo file failed: %s (it still restores what "
			 "was written, as the file of a run that was stopped)", strerror(-err));
	pthread_mutex_unlock(&u->lock);
	return err;
}

void fs_undo_detach(struct fs_undo *u)
{
	if (u->dev && u->dev->before_write_priv == u) {
		fs_dev_set_write_hook(u->dev, NULL, NULL);
		fs_dev_set_write_commit(u->dev, NULL);
	}
	u->dev = NULL;
}

int fs_undo_attach(struct fs_undo *u, struct fs_dev *dev)
{
	if (dev->size != u->h.dev_size)
		return -ENODEV;
	u->dev = dev;
	fs_dev_set_write_hook(dev, undo_hook, u);
	fs_dev_set_write_commit(dev, undo_commit);
	return 0;
}

void fs_undo_free(struct fs_undo *u)
{
	if (!u)
		return;
	if (u->dev && u->dev->before_write_priv == u) {
		fs_dev_set_write_hook(u->dev, NULL, NULL);
		fs_dev_set_write_commit(u->dev, NULL);
	}
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

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every record range inside the device, sector-aligned, no two overlapping. */
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
		if (v[i]->off < v[i - 1]->off + v[i - 1]->len) {
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
	err = full_pread(f->fd, hb, f->file_len < FS_UNDO_HDR_LEN ? f->file_len : FS_UNDO_HDR_LEN, 0);
	if (err && err != -ENODATA) {
		snprintf(msg, ml, "reading the header failed: %s", strerror(-err));
		goto fail;
	}
	err = dec_header(hb, f->file_len < FS_UNDO_HDR_LEN ? f->file_len : FS_UNDO_HDR_LEN, &f->h,
			 msg, ml);
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
		if ((flags & ~(uint32_t)FS_UNDO_REC_ZERO) || !r.len || r.off % FS_UNDO_GRAIN ||
		    r.off > f->h.dev_size || r.len > f->h.dev_size - r.off ||
		    ((r.off + r.len) % FS_UNDO_GRAIN && r.off + r.len != f->h.dev_size) ||
		    (!r.zero && r.len > FS_UNDO_CHUNK)) {
			snprintf(msg, ml, "damaged: record #%zu at file offset %llu names device "
				 "range %llu+%llu (flags 0x%x), not a range this file can hold",
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
	const struct fs_undo_header *h = &f->h;
	unsigned char now[16];
	char a[40], b[40], c[40];
	uint32_t fp;
	int err;

	if (dev->size != h->dev_size) {
		*m = FS_UNDO_WRONG_DEVICE;
		snprintf(msg, ml, "the device holds %llu bytes; the undo file was made for one of "
			 "%llu bytes (%s)", (unsigned long long)dev->size,
			 (unsigned long long)h->dev_size, h->device);
		return 0;
	}
	if (read_xfs_uuid(dev, now) && (h->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER)) &&
	    !((h->flags & FS_UNDO_UUID_BEFORE) && !memcmp(now, h->uuid_before, 16)) &&
	    !((h->flags & FS_UNDO_UUID_AFTER) && !memcmp(now, h->uuid_after, 16))) {
		uuid_str(now, a);
		uuid_str(h->uuid_before, b);
		uuid_str(h->uuid_after, c);
		*m = FS_UNDO_WRONG_DEVICE;
		snprintf(msg, ml, "the device holds the XFS filesystem %s; the undo file was made "
			 "for %s%s%s", a, h->flags & FS_UNDO_UUID_BEFORE ? b : "a device without XFS",
			 h->flags & FS_UNDO_UUID_AFTER ? " leaving " : "",
			 h->flags & FS_UNDO_UUID_AFTER ? c : "");
		return 0;
	}
	err = fs_undo_fingerprint(dev, h->fp_len, &fp);
	if (err) {
		snprintf(msg, ml, "reading the device's first %llu bytes failed: %s",
			 (unsigned long long)h->fp_len, strerror(-err));
		return err;
	}
	if (!(h->flags & FS_UNDO_COMPLETE)) {
		*m = FS_UNDO_MATCH_UNKNOWN;
		snprintf(msg, ml, "the run that wrote this undo file did not finish (killed, or "
			 "stopped by an error): only the device's size%s could be compared%s",
			 h->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER) ?
			 " and filesystem UUID" : "",
			 fp == h->fp_before ? "; its first blocks are as they were before the run" : "");
		return 0;
	}
	if (fp == h->fp_after) {
		*m = FS_UNDO_MATCH;
		snprintf(msg, ml, "the device is as the run left it (first %llu bytes: CRC32c "
			 "0x%08x)", (unsigned long long)h->fp_len, fp);
	} else if (fp == h->fp_before) {
		*m = FS_UNDO_RESTORED;
		snprintf(msg, ml, "the device's first blocks are as they were before the run: "
			 "it looks restored already");
	} else {
		*m = FS_UNDO_CHANGED;
		snprintf(msg, ml, "the device changed since the run: its first %llu bytes have "
			 "CRC32c 0x%08x, the run left 0x%08x", (unsigned long long)h->fp_len, fp,
			 h->fp_after);
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
