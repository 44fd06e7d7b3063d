/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_UNDO_PRIV_H
#define XFSX_UNDO_PRIV_H

/*
 * What the undo file's writer (undo.c) and reader (undo_read.c) share:
 * the byte order and offsets of the format (undo_format.c encodes and
 * decodes it), whole-file reads and writes, and how a device's contents
 * name a UUID.
 */
#include <endian.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/undo/undo.h"

static inline void put_le32(unsigned char *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void put_le64(unsigned char *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint32_t get_le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t get_le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

static inline uint32_t crc(const void *p, size_t len)
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

void undo_enc_header(unsigned char *b, const struct fs_undo_header *h);
/* -EBADMSG/-ENODATA with msg when the header (have bytes read of it) cannot be trusted. */
int  undo_dec_header(const unsigned char *b, size_t have, struct fs_undo_header *h, char *msg,
		     size_t ml);
void undo_enc_rec(unsigned char *b, uint32_t flags, uint64_t off, uint64_t len, uint32_t dcrc);
int  undo_pread(int fd, void *buf, size_t len, uint64_t off);
int  undo_pwrite(int fd, const void *buf, size_t len, uint64_t off);
/* The UUID a device's contents name, by its role (a realtime device names none). */
bool undo_role_uuid(enum fs_undo_role role, struct fs_dev *dev, unsigned char uuid[16]);

#endif
