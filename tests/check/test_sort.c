// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for fs_sort_u32: ordered by key, stable for equal keys, for
 * short arrays (insertion sort) and long ones (radix passes), with keys
 * that share bytes (skipped passes) and keys at any offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>

#include "libfs/sort.h"

struct rec {
	uint64_t seq;              /* insertion order, to prove stability */
	uint32_t pad;
	uint32_t key;
};

static void check_sorted(const struct rec *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		assert_true(v[i - 1].key <= v[i].key);
		if (v[i - 1].key == v[i].key)
			assert_true(v[i - 1].seq < v[i].seq);
	}
}

static void run(size_t n, uint32_t mask, uint32_t seed)
{
	struct rec *v = calloc(n ? n : 1, sizeof(*v));
	uint64_t sum = 0, sum2 = 0;

	assert_non_null(v);
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct rec){ .seq = i, .key = ((uint32_t)rand() * 2654435761u) & mask };
		sum += v[i].key;
	}
	assert_int_equal(fs_sort_u32(v, n, sizeof(*v), offsetof(struct rec, key)), 0);
	check_sorted(v, n);
	for (size_t i = 0; i < n; i++)
		sum2 += v[i].key;
	assert_int_equal(sum, sum2);	/* nothing lost or duplicated (as a multiset sum) */
	free(v);
}

static void test_empty_and_one(void **state)
{
	struct rec r = { .seq = 1, .key = 7 };

	(void)state;
	assert_int_equal(fs_sort_u32(NULL, 0, sizeof(r), offsetof(struct rec, key)), 0);
	assert_int_equal(fs_sort_u32(&r, 1, sizeof(r), offsetof(struct rec, key)), 0);
	assert_int_equal(r.key, 7);
}

static void test_short(void **state)
{
	(void)state;
	for (uint32_t seed = 1; seed < 50; seed++)
		run(seed % 33, 0xff, seed);
}

static void test_long_full_keys(void **state)
{
	(void)state;
	run(100000, 0xffffffffu, 3);
}

static void test_long_shared_bytes(void **state)
{
	(void)state;
	/* only the low byte varies: three passes are skipped; many equal keys */
	run(5000, 0x0000000fu, 4);
	run(5000, 0x00ff0000u, 5);
}

static void test_already_sorted_and_reversed(void **state)
{
	struct rec v[1000];

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		v[i] = (struct rec){ .seq = i, .key = (uint32_t)(999 - i) * 70000u };
	assert_int_equal(fs_sort_u32(v, 1000, sizeof(*v), offsetof(struct rec, key)), 0);
	check_sorted(v, 1000);
	assert_int_equal(v[0].seq, 999);
	assert_int_equal(fs_sort_u32(v, 1000, sizeof(*v), offsetof(struct rec, key)), 0);
	check_sorted(v, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_one),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_long_full_keys),
		cmocka_unit_test(test_long_shared_bytes),
		cmocka_unit_test(test_already_sorted_and_reversed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
