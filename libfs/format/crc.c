// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32c through isa-l, and the XFS convention for where a structure keeps
 * its own checksum: computed over the whole structure with the checksum
 * field read as zero, stored inverted and little-endian.
 */
#include "libfs/format/crc.h"

#include <endian.h>
#include <string.h>
#include <isa-l/crc.h>

#if defined(HAVE_CRC32_ISCSI_01) && defined(__x86_64__)
unsigned int crc32_iscsi_01(unsigned char *buffer, int len, unsigned int init_crc);

static unsigned int (*crc_fn)(unsigned char *, int, unsigned int) = crc32_iscsi;

__attribute__((constructor)) static void crc_pick(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul"))
		crc_fn = crc32_iscsi_01;
}
#else
#define crc_fn crc32_iscsi
#endif

uint32_t fs_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* isa-l takes an int length: feed large buffers in pieces */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		crc = crc_fn((unsigned char *)p, (int)n, crc);
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
