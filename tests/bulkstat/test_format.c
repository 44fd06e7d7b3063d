// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test for bulkstat's hand-made number formatting (format.c): every
 * digit-count boundary of 64-bit values, negative timestamps and the
 * 32-bit fast path's edge, against snprintf's rendering of the same record
 * in CSV (all fields).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bulkstat/bulkstat.h"

static void one(uint64_t u, int64_t s)
{
	struct bs_output o = { 0 };
	struct xfs_bulkstat bs = { 0 };
	char got[BS_MAX_RECORD + 64], want[256], msg[64];

	assert_int_equal(bs_output_parse_format(&o, "csv"), 0);
	assert_int_equal(bs_output_parse_fields(&o, "ino,size,atime,nlink", msg, sizeof(msg)), 0);
	bs_output_prepare(&o);
	bs.bs_ino = u;
	bs.bs_size = u + 1;
	bs.bs_atime = s;
	bs.bs_nlink = (uint32_t)u;
	got[bs_format_record(&o, &bs, got)] = 0;
	snprintf(want, sizeof(want), "%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu32 "\n",
		 u, u + 1, s, (uint32_t)u);
	assert_string_equal(got, want);
}

static void test_boundaries(void **state)
{
	uint64_t p = 1;

	(void)state;
	one(0, 0);
	one(UINT64_MAX - 1, INT64_MIN);
	one(UINT64_MAX - 1, INT64_MAX);
	one(UINT32_MAX, -1);
	one((uint64_t)UINT32_MAX + 1, (int64_t)UINT32_MAX + 1);
	for (int d = 0; d < 20; d++, p *= 10) {
		one(p - 1, -(int64_t)p);
		one(p, (int64_t)p - 1);
		one(p + 1, (int64_t)p);
		one(p * 2 - 1, -(int64_t)p + 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boundaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
