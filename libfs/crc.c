// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32c through isa-l, and the XFS convention for where a structure keeps
 * its own checksum: computed over the whole structure with the checksum
 * field read as zero, stored inverted and little-endian.
 */
#include "libfs/crc.h"

#include <endian.h>
#include <string.h>
#include <isa-l/crc.h>

uint32_t fs_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* isa-l takes an int length: feed large buffers in pieces */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

uint32_t fs_crc_compute(const void *buf, size_t len, size_t crc_off)
{
	static const unsigned char zero[4];
	const unsigned char *p = buf;
	uint32_t crc = ~0u;

	if (crc_off + 4 > len)
		return 0;
	crc = fs_crc32c(crc, p, crc_off);
	crc = fs_crc32c(crc, zero, 4);
	crc = fs_crc32c(crc, p + crc_off + 4, len - crc_off - 4);
	return ~crc;
}

uint32_t fs_crc_stored(const void *buf, size_t crc_off)
{
	uint32_t v;

	memcpy(&v, (const unsigned char *)buf + crc_off, 4);
	return le32toh(v);
}

bool fs_crc_ok(const void *buf, size_t len, size_t crc_off)
{
	if (crc_off + 4 > len)
		return false;
	return fs_crc_stored(buf, crc_off) == fs_crc_compute(buf, len, crc_off);
}

void fs_crc_update(void *buf, size_t len, size_t crc_off)
{
	uint32_t v;

	if (crc_off + 4 > len)
		return;
	v = htole32(fs_crc_compute(buf, len, crc_off));
	memcpy((unsigned char *)buf + crc_off, &v, 4);
}
