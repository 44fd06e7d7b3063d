// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/format/pptr.c: the parent pointer hash against values a kernel-made
 * image holds (xfs_db 6.10 printed hashval, name and parent of leaf
 * entries), with a parent above 2^32 and on ascii-ci; decoding of a parent
 * entry and each rule it can fail (name empty, with '/' or NUL, incomplete;
 * value not 12 local bytes; parent not an inode); short form forks with
 * parent entries: passed on a parent pointer filesystem, invalid flags on
 * one without; the name digest tells names apart.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/attr.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/format/pptr.h"
#include "tests/libfs/fixture.h"

#define S(x) (const uint8_t *)(x), sizeof(x) - 1

static void test_hash_oracle(void **st)
{
	struct fx f;

	(void)st;
	fx_init_default(&f);
	/* xfs_db 6.10 on an image the kernel populated: entries[i].hashval, nvlist[i] */
	assert_int_equal(fs_parent_hashval(&f.g, S("t"), 133), 0xf1);
	assert_int_equal(fs_parent_hashval(&f.g, S("l5"), 133), 0x36b0);
	assert_int_equal(fs_parent_hashval(&f.g, S("h2"), 655488), 0xa34b2);
	/* both halves of the parent's number are mixed in */
	assert_int_equal(fs_parent_hashval(&f.g, S("h2"), (5ull << 32) | 655488), 0xa34b2 ^ 5);
	/* ascii-ci: the directory hash folds case, so the parent pointer hash does too */
	f.g.asciici = true;
	assert_int_equal(fs_parent_hashval(&f.g, S("T"), 133), fs_parent_hashval(&f.g, S("t"), 133));
	f.g.asciici = false;
	assert_int_not_equal(fs_parent_hashval(&f.g, S("T"), 133), 0xf1);
}

static uint8_t rec[12];

static struct fs_attr_ent pent(const char *name, uint64_t parent, uint32_t gen)
{
	struct fs_attr_ent e = { .flags = XFS_ATTR_PARENT | XFS_ATTR_LOCAL, .local = true };

	put_be64(rec, parent);
	put_be32(rec + 8, gen);
	e.name = (const uint8_t *)name;
	e.namelen = (uint8_t)strlen(name);
	e.value = rec;
	e.valuelen = sizeof(rec);
	return e;
}

static void test_decode(void **st)
{
	struct fx f;
	struct fs_pptr p;
	struct fs_attr_ent e;

	(void)st;
	fx_init_default(&f);
	e = pent("file", 128, 0xdeadbeef);
	assert_true(fs_attr_is_pptr(&e));
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_OK);
	assert_int_equal(p.parent, 128);
	assert_int_equal(p.gen, 0xdeadbeef);
	assert_int_equal(p.namelen, 4);
	assert_memory_equal(p.name, "file", 4);
	assert_int_equal(fs_attr_ent_hashval(&f.g, &e), fs_parent_hashval(&f.g, S("file"), 128));
	/* a user xattr hashes by its name alone */
	e.flags = XFS_ATTR_LOCAL;
	assert_false(fs_attr_is_pptr(&e));
	assert_int_equal(fs_attr_ent_hashval(&f.g, &e), fs_da_hashname(S("file")));

	e = pent("a/b", 128, 1);
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_NAME);
	e = pent("ab", 128, 1);
	e.namelen = 0;
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_NAME);
	e = pent("a\0b", 128, 1);
	e.namelen = 3;
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_NAME);
	e = pent("ab", 128, 1);
	e.flags |= XFS_ATTR_INCOMPLETE;
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_NAME);
	e = pent("ab", 128, 1);
	e.valuelen = 11;
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_VALUE);
	assert_int_equal(fs_attr_ent_hashval(&f.g, &e), 0);
	e = pent("ab", 128, 1);
	e.local = false;
	e.value = NULL;
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_VALUE);
	e = pent("ab", 0, 1);
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_INO);
	e = pent("ab", ~0ull, 1);
	assert_int_equal(fs_pptr_decode(&f.g, &e, &p), FS_PPTR_INO);
	assert_string_equal(fs_pptr_problem_name(FS_PPTR_INO), "parent inode");
}

/* A short form attr fork of one user xattr and one parent pointer (value: parent, gen). */
static size_t build_sf(uint8_t *p, uint64_t parent, const char *pname)
{
	size_t off = sizeof(struct xfs_attr_sf_hdr);
	size_t n = strlen(pname);

	memset(p, 0, 128);
	p[off] = 1; p[off + 1] = 1; p[off + 2] = 0;		/* namelen, valuelen, flags */
	p[off + 3] = 'u'; p[off + 4] = 'v';
	off += 5;
	p[off] = (uint8_t)n; p[off + 1] = 12; p[off + 2] = XFS_ATTR_PARENT;
	memcpy(p + off + 3, pname, n);
	put_be64(p + off + 3 + n, parent);
	put_be32(p + off + 3 + n + 8, 42);
	off += 3 + n + 12;
	put_be16(p, (uint16_t)off);
	p[2] = 2;
	return off;
}

static int npptr;
static void count_pptr(void *priv, const struct fs_attr_ent *e)
{
	(void)priv;
	npptr += fs_attr_is_pptr(e);
}

static void test_shortform(void **st)
{
	struct fs_findings fl;
	struct fx f;
	struct fs_vctx c;
	uint8_t p[128];
	size_t n;

	(void)st;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = fx_vctx(&f, 0, &fl);
	n = build_sf(p, 128, "child");
	/* without the parent feature the namespace bit is invalid, as the kernel says */
	assert_true(fs_attr_sf_verify(&c, p, n, count_pptr, NULL) > 0);
	assert_true(fx_has(&fl, "attr.sf_flags", NULL));
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	f.g.parent = true;
	c = fx_vctx(&f, 0, &fl);
	npptr = 0;
	assert_int_equal(fs_attr_sf_verify(&c, p, n, count_pptr, NULL), 0);
	assert_int_equal(npptr, 1);
	n = build_sf(p, 0, "child");
	npptr = 0;
	assert_true(fs_attr_sf_verify(&c, p, n, count_pptr, NULL) > 0);
	assert_true(fx_has(&fl, "pptr.value", NULL));
	assert_int_equal(npptr, 0);
	fs_findings_free(&fl);

	fs_findings_init(&fl);
	n = build_sf(p, 128, "a/b");
	assert_true(fs_attr_sf_verify(&c, p, n, NULL, NULL) > 0);
	assert_true(fx_has(&fl, "pptr.name", NULL));
	fs_findings_free(&fl);
}

static void test_digest(void **st)
{
	(void)st;
	assert_int_equal(fs_name_digest(S("abc")), fs_name_digest(S("abc")));
	assert_int_not_equal(fs_name_digest(S("abc")), fs_name_digest(S("abd")));
	assert_int_not_equal(fs_name_digest(S("a")), fs_name_digest(S("a\0")));
	assert_int_not_equal(fs_name_digest(S("ab")), fs_name_digest(S("ba")));
	/* 64 bits: no collision among many short names */
	{
		enum { N = 20000 };
		uint64_t *d = malloc(N * sizeof(*d));
		char b[16];

		assert_non_null(d);
		for (int i = 0; i < N; i++) {
			int k = snprintf(b, sizeof(b), "f%d", i);

			d[i] = fs_name_digest((const uint8_t *)b, (size_t)k);
			for (int j = 0; j < i; j++)
				if (d[j] == d[i])
					fail_msg("digest collision: %d and %d", i, j);
		}
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_oracle),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_shortform),
		cmocka_unit_test(test_digest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
