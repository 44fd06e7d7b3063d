// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/util/arena.h: allocations read as zeros, keep their bytes across
 * trims (the pages go back to the file and fault in again), a region's last
 * allocation grows in place, a release zeroes what it gives back, the file
 * leaves nothing in the directory, and a missing directory or an
 * impossible size fails cleanly.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "libfs/util/arena.h"

#define REGION (FS_ARENA_STEP * 4)

static char dir[] = "/tmp/xfsx-test-arena.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

static void test_alloc_trim(void **state)
{
	struct fs_arena a;
	uint32_t *v;
	char *s;
	DIR *d;
	struct dirent *de;
	int files = 0;

	(void)state;
	assert_int_equal(fs_arena_open(&a, dir, 2, REGION), 0);
	/* nothing in the directory: the file was unlinked at once */
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		files += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	assert_int_equal(files, 0);
	/* more than one step, so the second mapping is used too */
	v = fs_arena_alloc(&a, 0, FS_ARENA_STEP + 4096, 64);
	assert_non_null(v);
	assert_int_equal((uintptr_t)v % 64, 0);
	for (size_t i = 0; i < (FS_ARENA_STEP + 4096) / 4; i += 1021)
		assert_int_equal(v[i], 0);
	for (size_t i = 0; i < (FS_ARENA_STEP + 4096) / 4; i++)
		v[i] = (uint32_t)i * 2654435761u;
	s = fs_arena_alloc(&a, 1, 6, 1);
	assert_non_null(s);
	memcpy(s, "hello", 6);
	fs_arena_trim(&a);
	for (int k = 0; k < 1000; k++)
		fs_arena_tick(&a);
	for (size_t i = 0; i < (FS_ARENA_STEP + 4096) / 4; i++)
		if (v[i] != (uint32_t)i * 2654435761u)
			fail_msg("word %zu lost across a trim", i);
	assert_string_equal(s, "hello");
	assert_true(fs_arena_bytes(&a) >= FS_ARENA_STEP + 4096 + FS_ARENA_MIN);
	fs_arena_close(&a);
	fs_arena_close(&a);	/* a second close does nothing */
}

static void test_grow_release(void **state)
{
	struct fs_arena a;
	unsigned char *p, *q, *r;
	size_t mark;

	(void)state;
	assert_int_equal(fs_arena_open(&a, dir, 1, REGION), 0);
	p = fs_arena_alloc(&a, 0, 100, 8);
	memset(p, 0xab, 100);
	/* the last allocation grows in place, its bytes kept, the new ones zero */
	q = fs_arena_realloc(&a, 0, p, 100, 9000, 8);
	assert_ptr_equal(q, p);
	assert_int_equal(q[99], 0xab);
	assert_int_equal(q[100], 0);
	assert_int_equal(q[8999], 0);
	mark = fs_arena_mark(&a, 0);
	r = fs_arena_alloc(&a, 0, 3 * 4096 + 17, 1);
	memset(r, 0xcd, 3 * 4096 + 17);
	/* not the last one any more: a copy elsewhere */
	q = fs_arena_realloc(&a, 0, p, 9000, 20000, 8);
	assert_ptr_not_equal(q, p);
	assert_int_equal(q[0], 0xab);
	assert_int_equal(q[19999], 0);
	/* released: back to the mark, and what comes next reads as zeros again */
	fs_arena_release(&a, 0, mark);
	assert_int_equal(fs_arena_mark(&a, 0), mark);
	r = fs_arena_alloc(&a, 0, 3 * 4096 + 17 + 20000, 1);
	for (size_t i = 0; i < 3 * 4096 + 17 + 20000; i++)
		if (r[i])
			fail_msg("byte %zu not zero after release", i);
	assert_int_equal(p[0], 0xab);
	/* an impossible size fails and the error stays */
	assert_null(fs_arena_alloc(&a, 0, REGION, 1));
	assert_int_equal(a.err, -ENOMEM);
	assert_null(fs_arena_alloc(&a, 0, 1, 1));
	fs_arena_close(&a);
}

static void test_bad_dir(void **state)
{
	struct fs_arena a;
	char missing[sizeof(dir) + 16];

	(void)state;
	snprintf(missing, sizeof(missing), "%s/none", dir);
	assert_int_equal(fs_arena_open(&a, missing, 1, REGION), -ENOENT);
	fs_arena_close(&a);
	assert_int_equal(fs_arena_open(&a, dir, 0, REGION), -EINVAL);
	assert_int_equal(fs_arena_open(&a, dir, 1, 4096), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_trim),
		cmocka_unit_test(test_grow_release),
		cmocka_unit_test(test_bad_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
