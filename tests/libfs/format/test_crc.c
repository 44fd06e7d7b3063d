// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32c: published vectors (the check value and RFC 3720's iSCSI vectors),
 * agreement with a bit-at-a-time reference over many lengths, chaining, and
 * the XFS convention (CRC field read as zero, stored inverted little-endian)
 * at an arbitrary offset.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/crc.h"
#include "libfs/format/format.h"

/* Reflected CRC32c, polynomial 0x82F63B78, one bit at a time. */
static uint32_t ref_crc32c(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & -(crc & 1));
	}
	return crc;
}

static uint32_t full_crc(const void *p, size_t len)
{
	return ~fs_crc32c(~0u, p, len);
}

static void test_check_value(void **state)
{
	(void)state;
	assert_int_equal(full_crc("123456789", 9), 0xE3069283u);
	assert_int_equal(full_crc("", 0), 0);
	/* a single 'a' */
	assert_int_equal(full_crc("a", 1), 0xC1D04330u);
}

/* RFC 3720 B.4: 32-byte patterns. */
static void test_rfc3720_vectors(void **state)
{
	unsigned char buf[32];

	(void)state;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(full_crc(buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(full_crc(buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (unsigned char)i;
	assert_int_equal(full_crc(buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (unsigned char)(31 - i);
	assert_int_equal(full_crc(buf, 32), 0x113FDB5Cu);
}

static void test_matches_reference(void **state)
{
	static unsigned char buf[70000];
	uint32_t seed = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	/* every length up to 300 (the vector code's tails), then big ones, at odd offsets */
	for (size_t len = 0; len <= 300; len++)
		assert_int_equal(fs_crc32c(~0u, buf + 3, len), ref_crc32c(~0u, buf + 3, len));
	for (size_t len = 4096; len < sizeof(buf) - 7; len += 16381)
		assert_int_equal(fs_crc32c(~0u, buf + 7, len), ref_crc32c(~0u, buf + 7, len));
}

static void test_chaining(void **state)
{
	unsigned char buf[1000];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	for (size_t cut = 0; cut <= sizeof(buf); cut += 37) {
		uint32_t c = fs_crc32c(~0u, buf, cut);
		c = fs_crc32c(c, buf + cut, sizeof(buf) - cut);
		assert_int_equal(c, fs_crc32c(~0u, buf, sizeof(buf)));
	}
}

/* The XFS rule: CRC over the buffer with its 4 CRC bytes zero, inverted, stored LE. */
static void test_update_ok_at_offset(void **state)
{
	unsigned char buf[512], copy[512];
	const size_t offs[] = { 0, 4, 224, 508 };

	(void)state;
	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		size_t off = offs[k];
		uint32_t expect;

		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)(i ^ 0x5a);
		memcpy(copy, buf, sizeof(buf));
		memset(copy + off, 0, 4);
		expect = ~ref_crc32c(~0u, copy, sizeof(copy));

		assert_false(fs_crc_ok(buf, sizeof(buf), off));
		fs_crc_update(buf, sizeof(buf), off);
		assert_true(fs_crc_ok(buf, sizeof(buf), off));
		assert_int_equal(fs_crc_stored(buf, off), expect);
		assert_int_equal(fs_crc_compute(buf, sizeof(buf), off), expect);
		/* stored little-endian */
		assert_int_equal(buf[off], expect & 0xff);
		assert_int_equal(buf[off + 3], expect >> 24);
		/* the bytes around the CRC are untouched */
		assert_memory_equal(buf, copy, off);
		assert_memory_equal(buf + off + 4, copy + off + 4, sizeof(buf) - off - 4);

		/* any flipped bit anywhere breaks it, including inside the CRC field */
		for (size_t i = 0; i < sizeof(buf); i += 61) {
			buf[i] ^= 0x10;
			assert_false(fs_crc_ok(buf, sizeof(buf), off));
			buf[i] ^= 0x10;
		}
		buf[off + 1] ^= 1;
		assert_false(fs_crc_ok(buf, sizeof(buf), off));
		buf[off + 1] ^= 1;
		assert_true(fs_crc_ok(buf, sizeof(buf), off));
	}
}

static void test_offset_out_of_range(void **state)
{
	unsigned char buf[16];

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	/* a CRC field that does not fit is never "ok" and never written */
	assert_false(fs_crc_ok(buf, sizeof(buf), 13));
	fs_crc_update(buf, sizeof(buf), 13);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xaa);
	assert_int_equal(fs_crc_compute(buf, sizeof(buf), 100), 0);
	/* exactly fitting at the end works */
	fs_crc_update(buf, sizeof(buf), 12);
	assert_true(fs_crc_ok(buf, sizeof(buf), 12));
}

/* The superblock CRC offset comes from the header's struct. */
static void test_sb_crc_offset(void **state)
{
	(void)state;
	assert_int_equal(FS_SB_CRC_OFF, offsetof(struct xfs_dsb, sb_crc));
	assert_int_equal(FS_SB_CRC_OFF, 224);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_rfc3720_vectors),
		cmocka_unit_test(test_matches_reference),
		cmocka_unit_test(test_chaining),
		cmocka_unit_test(test_update_ok_at_offset),
		cmocka_unit_test(test_offset_out_of_range),
		cmocka_unit_test(test_sb_crc_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
