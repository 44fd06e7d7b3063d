// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for fs_sort_u32: ordered by key, stable for equal keys, for
 * short arrays (insertion sort) and long ones (radix passes), with keys
 * that share bytes (skipped passes) and keys at any offset; fs_sort_u32_cmp
 * gives the order of a stable sort by its comparator, for short runs of
 * equal keys (insertion sort) and long ones (qsort).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>

#include "libfs/util/sort.h"

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

static int cmp_key_pad(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pad < b->pad ? -1 : a->pad > b->pad;
}

/* the reference: key, then pad, then insertion order (stability) */
static int cmp_ref(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c = cmp_key_pad(pa, pb);

	return c ? c : (a->seq < b->seq ? -1 : a->seq > b->seq);
}

static void run_cmp(size_t n, uint32_t kmask, uint32_t pmask, uint32_t seed)
{
	struct rec *v = calloc(n ? n : 1, sizeof(*v)), *r = calloc(n ? n : 1, sizeof(*r));

	assert_non_null(v);
	assert_non_null(r);
	srand(seed);
	for (size_t i = 0; i < n; i++)
		v[i] = r[i] = (struct rec){ .seq = i, .key = ((uint32_t)rand() * 2654435761u) & kmask,
					    .pad = (uint32_t)rand() & pmask };
	assert_int_equal(fs_sort_u32_cmp(v, n, sizeof(*v), offsetof(struct rec, key), cmp_key_pad), 0);
	qsort(r, n, sizeof(*r), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].seq, r[i].seq);
		assert_int_equal(v[i].key, r[i].key);
	}
	free(v);
	free(r);
}

static void test_cmp_ties(void **state)
{
	(void)state;
	run_cmp(0, ~0u, 3, 1);
	run_cmp(20, 7, 3, 2);              /* short array, short runs */
	run_cmp(5000, ~0u, 3, 3);          /* almost no ties */
	run_cmp(5000, 0x3ff00, 3, 4);      /* runs of about 5 */
	run_cmp(5000, 0x30000, 0xff, 5);   /* four runs of about 1250 (qsort) */
	run_cmp(5000, 0, 1, 6);            /* one run: only the comparator orders */
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
		cmocka_unit_test(test_cmp_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
