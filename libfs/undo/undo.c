// SPDX-License-Identifier: GPL-2.0
/*
 * Undo files: the writer behind --undo-file (a before-write hook on the
 * device that saves each sector's old bytes once, durable before the write
 * that covers them; the reader behind xfsx_undo is undo_read.c, the format
 * both use undo_format.c).  One file covers every device a run writes
 * (the data device, an external log, a realtime device): each is
 * identified in the header, each record names its device.  The layout and
 * the ordering rules are in undo.h.  Nothing here prints.
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

#include "libfs/format/format.h"
#include "libfs/undo/undo_priv.h"

static bool all_zero(const unsigned char *p, size_t len)
{
	return !len || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
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
	err = undo_pwrite(u->fd, u->wbuf, u->wlen, u->wpos);
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
	undo_enc_rec(rh, flags, off, len, data ? crc(data, len) : 0);
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
	int err = undo_pwrite(fd, hb, FS_UNDO_HDR_SPACE, 0);

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
	if (undo_role_uuid(role, dev, d->uuid_before))
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
	undo_enc_header(hb, &u->h);
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
		if (undo_role_uuid(sl->role, sl->dev, uuid)) {
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
		undo_enc_header(hb, &u->h);
		/* the data device's header sector last: it says the file is complete */
		err = undo_pwrite(u->fd, hb + FS_UNDO_HDR_LEN, FS_UNDO_HDR_SPACE - FS_UNDO_HDR_LEN,
				  FS_UNDO_HDR_LEN);
		if (!err && fdatasync(u->fd) < 0)
			err = -errno;
		if (!err)
			err = undo_pwrite(u->fd, hb, FS_UNDO_HDR_LEN, 0);
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

