// SPDX-License-Identifier: GPL-2.0
/*
 * The undo file's format (undo.h): its header and device descriptions
 * encoded and decoded, its record headers encoded, whole-file reads and
 * writes, the fingerprint of a device's first bytes and the UUID its
 * contents name.  Shared by the writer (undo.c) and the reader
 * (undo_read.c); nothing here prints.
 */
#include "libfs/undo/undo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfs/format/endian.h"
#include "libfs/format/format.h"
#include "libfs/undo/undo_priv.h"

/* ---- encoding ---- */


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

void undo_enc_header(unsigned char *b, const struct fs_undo_header *h)
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
int undo_dec_header(const unsigned char *b, size_t have, struct fs_undo_header *h, char *msg,
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

void undo_enc_rec(unsigned char *b, uint32_t flags, uint64_t off, uint64_t len, uint32_t dcrc)
{
	put_le32(b + R_MAGIC, FS_UNDO_REC_MAGIC);
	put_le32(b + R_FLAGS, flags);
	put_le64(b + R_OFF, off);
	put_le64(b + R_LEN, len);
	put_le32(b + R_DCRC, dcrc);
	put_le32(b + R_HCRC, crc(b, R_HCRC));
}

int undo_pread(int fd, void *buf, size_t len, uint64_t off)
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

int undo_pwrite(int fd, const void *buf, size_t len, uint64_t off)
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
bool undo_role_uuid(enum fs_undo_role role, struct fs_dev *dev, unsigned char uuid[16])
{
	if (role == FS_UNDO_DATA)
		return read_xfs_uuid(dev, uuid);
	if (role == FS_UNDO_LOG)
		return read_log_uuid(dev, uuid);
	return false;
}

