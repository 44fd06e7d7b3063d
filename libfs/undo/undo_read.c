// SPDX-License-Identifier: GPL-2.0
/*
 * The reader behind xfsx_undo: the whole undo file validated (header,
 * device descriptions, every record's checksums and range), a device
 * judged against what the file says of it (size, the UUID its contents
 * name, the fingerprint of its first bytes), and a record's old bytes
 * written back.  Nothing here prints.
 */
#include "libfs/undo/undo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfs/undo/undo_priv.h"

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
	err = undo_pread(f->fd, hb, f->file_len < FS_UNDO_HDR_SPACE ? f->file_len : FS_UNDO_HDR_SPACE,
			 0);
	if (err && err != -ENODATA) {
		snprintf(msg, ml, "reading the header failed: %s", strerror(-err));
		goto fail;
	}
	err = undo_dec_header(hb, f->file_len < FS_UNDO_HDR_SPACE ? f->file_len : FS_UNDO_HDR_SPACE,
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
		err = undo_pread(f->fd, rh, sizeof(rh), pos);
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
			err = undo_pread(f->fd, data, (size_t)r.len, pos);
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
	if (undo_role_uuid(role, dev, now) && (d->flags & (FS_UNDO_UUID_BEFORE | FS_UNDO_UUID_AFTER)) &&
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
	err = undo_pread(f->fd, buf, (size_t)r->len, r->data_pos);
	if (!err && crc(buf, (size_t)r->len) != r->data_crc)
		err = -EBADMSG;
	if (!err)
		err = fs_dev_write(dev, buf, (size_t)r->len, r->off);
	free(buf);
	return err;
}

