// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/util/vec.h and libfs/util/u32set.h, the scan's two container helpers:
 * growth keeps every element and doubles from the first capacity, an
 * impossible size fails with -ENOMEM leaving the array as it was; the set
 * holds any 32-bit key (0 and UINT32_MAX included) exactly once.
 */
#include <errno.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/util/u32set.h"
#include "libfs/util/vec.h"

struct rec {
	uint64_t a;
	uint32_t b;
};

static void test_vec_push(void **state)
{
	struct rec *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (uint32_t i = 0; i < 10000; i++) {
		assert_int_equal(FS_VEC_ROOM(v, n, cap, 16), 0);
		assert_true(cap > n);
		v[n++] = (struct rec){ (uint64_t)i * 3, i };
	}
	/* 16 doubled until it holds 10000 */
	assert_int_equal(cap, 16384);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(v[i].a, (uint64_t)i * 3);
		assert_int_equal(v[i].b, i);
	}
	free(v);
}

static void test_vec_reserve(void **state)
{
	unsigned char *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(fs_vec_reserve(&v, &cap, 100, 1, 64), 0);
	assert_int_equal(cap, 128);
	memset(v, 0xab, 100);
	/* enough already: nothing moves */
	{
		unsigned char *before = v;

		assert_int_equal(fs_vec_reserve(&v, &cap, 128, 1, 64), 0);
		assert_ptr_equal(v, before);
	}
	/* impossible sizes fail and leave the array alone */
	assert_int_equal(fs_vec_reserve(&v, &cap, SIZE_MAX, 1, 64), -ENOMEM);
	assert_int_equal(fs_vec_reserve(&v, &cap, SIZE_MAX / 4, 8, 64), -ENOMEM);
	assert_int_equal(cap, 128);
	for (int i = 0; i < 100; i++)
		assert_int_equal(v[i], 0xab);
	free(v);
}

static void test_u32set(void **state)
{
	struct fs_u32set s = { 0 };

	(void)state;
	assert_false(fs_u32set_has(&s, 0));
	assert_false(fs_u32set_has(&s, UINT32_MAX));
	for (uint32_t k = 0; k < 5000; k++)
		assert_int_equal(fs_u32set_add(&s, k * 7919u), 1);
	assert_int_equal(fs_u32set_add(&s, UINT32_MAX), 1);
	assert_int_equal(fs_u32set_add(&s, UINT32_MAX), 0);
	for (uint32_t k = 0; k < 5000; k++) {
		assert_true(fs_u32set_has(&s, k * 7919u));
		assert_int_equal(fs_u32set_add(&s, k * 7919u), 0);
		assert_false(fs_u32set_has(&s, k * 7919u + 1));
	}
	assert_true(fs_u32set_has(&s, UINT32_MAX));
	assert_int_equal(s.n, 5000);
	fs_u32set_free(&s);
	assert_false(fs_u32set_has(&s, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vec_push),
		cmocka_unit_test(test_vec_reserve),
		cmocka_unit_test(test_u32set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
