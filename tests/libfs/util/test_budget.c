// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/util/budget.h, the run's -m: a plan splits the cap between the
 * fixed part, the model and the cache (each at least its floor) or names
 * the smallest cap; a charge comes out of the model's share down to its
 * floor, then the cache's down to its floor; a charge that does not fit names the smallest cap whose plan
 * holds every charge, and that cap, planned afresh, takes them all; fixed
 * bytes released go back to the model's share.
 */
#include <errno.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "libfs/util/budget.h"

#define MIB (1ull << 20)

static void test_plan(void **state)
{
	struct fs_budget b;
	uint64_t min = 0;

	(void)state;
	assert_int_equal(fs_budget_plan(&b, 8 * MIB, 6 * MIB, &min), -ERANGE);
	assert_int_equal(min, 11);
	assert_int_equal(fs_budget_min_mib(6 * MIB, 0), 11);
	assert_int_equal(fs_budget_plan(&b, 11 * MIB, 6 * MIB, &min), 0);
	assert_true(b.cache >= FS_BUDGET_CACHE_FLOOR && b.model >= FS_BUDGET_MODEL_FLOOR);
	assert_int_equal(b.fixed + b.cache + b.model, 11 * MIB);
	assert_int_equal(fs_budget_plan(&b, 100 * MIB, 6 * MIB, &min), 0);
	assert_int_equal(b.model, 47 * MIB);
	assert_int_equal(b.cache, 47 * MIB);
}

static void test_charge(void **state)
{
	struct fs_budget b;
	uint64_t min = 0;

	(void)state;
	assert_int_equal(fs_budget_plan(&b, 100 * MIB, 6 * MIB, &min), 0);
	assert_int_equal(fs_budget_charge(&b, 10 * MIB), 0);
	assert_int_equal(b.model, 37 * MIB);
	assert_int_equal(fs_budget_need(&b, 36 * MIB, &min), 0);
	assert_int_equal(b.model, FS_BUDGET_MODEL_FLOOR);
	assert_int_equal(b.cache, 47 * MIB);	/* the cache's share only once the model's is spent */
	assert_int_equal(fs_budget_need(&b, 43 * MIB, &min), 0);
	assert_int_equal(b.cache, FS_BUDGET_CACHE_FLOOR);
	assert_int_equal(fs_budget_need(&b, 1, &min), -ERANGE);
	assert_true(min > 100);
	/* no cap: nothing is refused */
	assert_int_equal(fs_budget_need(&(struct fs_budget){ 0 }, 1ull << 40, &min), 0);
}

/* the cap a refusal names holds every charge, for small and large charges */
static void test_named_cap_holds(void **state)
{
	static const uint64_t charges[] = { 1, 100 << 10, 3 * MIB, 7 * MIB + 1, 500 * MIB };

	(void)state;
	for (size_t i = 0; i < sizeof(charges) / sizeof(charges[0]); i++) {
		struct fs_budget b;
		uint64_t min = 0, again = 0;

		assert_int_equal(fs_budget_plan(&b, 12 * MIB, 7 * MIB, &min), 0);
		if (fs_budget_need(&b, charges[i], &min) == 0)
			continue;
		assert_int_equal(fs_budget_plan(&b, min * MIB, 7 * MIB, &again), 0);
		assert_int_equal(fs_budget_need(&b, charges[i], &again), 0);
		assert_int_equal(fs_budget_plan(&b, (min - 1) * MIB, 7 * MIB, &again), 0);
		assert_int_equal(fs_budget_need(&b, charges[i], &again), -ERANGE);
		assert_int_equal(again, min);
	}
}

/* fixed bytes released (smaller I/O windows) go to the model's share; a charge then fits */
static void test_release(void **state)
{
	struct fs_budget b;
	uint64_t min = 0;

	(void)state;
	assert_int_equal(fs_budget_plan(&b, 64 * MIB, 22 * MIB, &min), 0);
	assert_int_equal(fs_budget_need(&b, 40 * MIB, &min), -ERANGE);
	assert_int_equal(fs_budget_plan(&b, 64 * MIB, 22 * MIB, &min), 0);
	fs_budget_release(&b, 16 * MIB);
	assert_int_equal(b.fixed, 6 * MIB);
	assert_int_equal(b.planned_fixed, 6 * MIB);
	assert_int_equal(b.fixed + b.cache + b.model, 64 * MIB);
	assert_int_equal(fs_budget_need(&b, 40 * MIB, &min), 0);
	assert_int_equal(b.fixed + b.cache + b.model, 64 * MIB);
	assert_true(b.cache >= FS_BUDGET_CACHE_FLOOR && b.model >= FS_BUDGET_MODEL_FLOOR);
	/* no cap: nothing to release */
	b = (struct fs_budget){ 0 };
	fs_budget_release(&b, MIB);
	assert_int_equal(b.fixed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_charge),
		cmocka_unit_test(test_named_cap_holds),
		cmocka_unit_test(test_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
