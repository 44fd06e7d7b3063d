// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/build/dirbuild.c, the directory encoder shared by mkfs -p and repair:
 * random entry sets in every format (short form, block, leaf, node with
 * one and with several DA levels), names of every length 1..255, every
 * file type, forced hash collisions, inode numbers above 2^32, directory
 * blocks larger than fs blocks (64 KiB on 4 KiB, 8 KiB on 1 KiB) and
 * ascii-ci; each walked back by libfs/format/dir.c with no findings and the same
 * entries (tests/libfs/dir_rt.c).  Entry counts step across every format
 * boundary: the format never shrinks as entries are added and each one is
 * reached.  Bad input is refused with its errno.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "tests/libfs/bload_rt.h"
#include "tests/libfs/dir_rt.h"

struct gcase {
	const char *name;
	uint32_t blocksize, dirblklog, agblklog, agcount;
	bool asciici;
	size_t sf_max;             /* the data fork's literal area */
};

static const struct gcase geoms[] = {
	{ "4k", 4096, 0, 14, 4, false, 512 - 176 },
	{ "1k", 1024, 0, 16, 4, false, 512 - 176 },
	{ "4k, 64k dir blocks", 4096, 4, 16, 4, false, 512 - 176 },
	{ "1k, 8k dir blocks, 2k inodes", 1024, 3, 16, 4, false, 2048 - 176 },
	{ "1k ascii-ci", 1024, 0, 16, 4, true, 512 - 176 },
	{ "4k, inode numbers past 2^32", 4096, 0, 20, 1024, false, 512 - 176 },
};

static void geom(const struct gcase *c, struct fs_geom *g)
{
	assert_int_equal(rt_geom_ex(c->blocksize, c->dirblklog, c->agblklog, c->agcount, c->asciici,
				    g), 0);
}

static int one(const struct gcase *gc, const struct fs_geom *g, size_t n,
	       const struct dir_rt_shape *sh, uint64_t *rng, struct dir_rt_result *res)
{
	unsigned char *arena;
	struct fs_dirbuild_ent *e = dir_rt_entries(g, n, sh, rng, &arena);
	fs_ino_t ino = dir_rt_ino(g, sh->big_inos, rng), parent = dir_rt_ino(g, sh->big_inos, rng);
	int r;

	assert_non_null(e);
	r = dir_rt_roundtrip(g, ino, parent, e, n, gc->sf_max, rng, res);
	if (r)
		print_message("# %s, %zu entries (names %u..%u, collisions %u%%): %s\n", gc->name, n,
			      sh->minlen, sh->maxlen, sh->collide_pct, res->why);
	free(e);
	free(arena);
	return r;
}

/* Counts stepping across every boundary up to a two-level DA tree; each format reached. */
static void test_boundaries(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(geoms) / sizeof(geoms[0]); k++) {
		const struct gcase *gc = &geoms[k];
		struct dir_rt_shape sh = { .minlen = 1, .maxlen = 24, .collide_pct = 10,
					   .big_inos = gc->agcount > 4 };
		struct fs_geom g;
		uint64_t rng = 0x9e3779b97f4a7c15ull + k;
		bool seen[4] = { false };
		uint32_t maxlevels = 0;
		int last = 0;
		size_t limit = gc->blocksize << gc->dirblklog > 4096 ? 30000 : 16000;

		geom(gc, &g);
		for (size_t n = 0; n <= limit; n += n < 64 ? 1 : n < 600 ? 7 : n / 8) {
			struct dir_rt_result res;

			assert_int_equal(one(gc, &g, n, &sh, &rng, &res), 0);
			assert_true((int)res.fmt >= last);
			last = res.fmt;
			seen[res.fmt] = true;
			if (res.levels > maxlevels)
				maxlevels = res.levels;
		}
		for (int f = 0; f < 4; f++)
			if (!seen[f])
				fail_msg("%s: format %d never reached", gc->name, f);
		print_message("# %s: every format reached, DA tree up to %u level(s)\n", gc->name,
			      maxlevels);
		assert_true(maxlevels >= 1);
		if (gc->blocksize == 1024 && !gc->dirblklog)
			assert_true(maxlevels >= 2);
	}
}

/*
 * The narrow step between leaf and node where one LEAFN block is the
 * whole leaf space (the root, no DA node), and the step to a DA node.
 */
static void test_leafn_root(void **state)
{
	const struct gcase *gc = &geoms[0];
	struct dir_rt_shape sh = { .minlen = 200, .maxlen = 200 };
	struct fs_geom g;
	uint64_t rng = 7;
	bool leafn_root = false, node = false;

	(void)state;
	geom(gc, &g);
	for (size_t n = 440; n < 520; n++) {
		struct dir_rt_result res;

		assert_int_equal(one(gc, &g, n, &sh, &rng, &res), 0);
		if (res.fmt == FS_DIR_NODE && res.levels == 0)
			leafn_root = true;
		if (res.fmt == FS_DIR_NODE && res.levels == 1)
			node = true;
	}
	assert_true(leafn_root);
	assert_true(node);
}

/* Names of every length 1..255, in sets small and large (short form to node). */
static void test_name_lengths(void **state)
{
	static const size_t counts[] = { 1, 5, 40, 300, 700 };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		const struct gcase *gc = &geoms[k];
		struct fs_geom g;
		uint64_t rng = 0x243f6a8885a308d3ull + k;
		bool seen[4] = { false };

		geom(gc, &g);
		for (uint32_t len = 1; len <= 255; len++)
			for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
				struct dir_rt_shape sh = { .minlen = len, .maxlen = len };
				struct dir_rt_result res;
				size_t n = counts[c];

				/* 252 one-byte names exist (no NUL, '/' or '.') */
				if (len == 1 && n > 252)
					n = 252;
				assert_int_equal(one(gc, &g, n, &sh, &rng, &res), 0);
				seen[res.fmt] = true;
			}
		/* 700 names fill more than one leaf block of 4 KiB, not of 64 KiB */
		for (int f = 0; f < (gc->dirblklog ? 3 : 4); f++)
			assert_true(seen[f]);
	}
}

/* Half the names collide with their neighbour's hash: leaf order, DA keys, duplicates rule. */
static void test_collisions(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(geoms) / sizeof(geoms[0]); k++) {
		const struct gcase *gc = &geoms[k];
		struct dir_rt_shape sh = { .minlen = 6, .maxlen = 255, .collide_pct = 60,
					   .big_inos = gc->agcount > 4 };
		struct fs_geom g;
		uint64_t rng = 0x452821e638d01377ull + k;

		geom(gc, &g);
		for (size_t n = 2; n < 6000; n = n * 3 + 1) {
			struct dir_rt_result res;

			assert_int_equal(one(gc, &g, n, &sh, &rng, &res), 0);
		}
	}
}

static void test_refused(void **state)
{
	struct fs_geom g, gci;
	struct fs_dirbuild *b;
	fs_ino_t ino = 200, parent = 128;
	struct fs_dirbuild_ent e[2] = {
		{ 300, (const unsigned char *)"abc", 3, XFS_DIR3_FT_REG_FILE },
		{ 301, (const unsigned char *)"abc", 3, XFS_DIR3_FT_DIR },
	};

	(void)state;
	assert_int_equal(rt_geom_ex(4096, 0, 14, 4, false, &g), 0);
	assert_int_equal(rt_geom_ex(4096, 0, 14, 4, true, &gci), 0);
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EEXIST);
	assert_null(b);
	e[1].name = (const unsigned char *)"ABC";
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), 0);
	fs_dirbuild_free(b);
	assert_int_equal(fs_dirbuild_plan(&gci, ino, parent, e, 2, 336, &b), -EEXIST);
	e[1].name = (const unsigned char *)"a/c";
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].name = (const unsigned char *)"..";
	e[1].namelen = 2;
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].name = (const unsigned char *)".";
	e[1].namelen = 1;
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].namelen = 0;
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].name = (const unsigned char *)"ok";
	e[1].namelen = 2;
	e[1].ftype = XFS_DIR3_FT_MAX;
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].ftype = XFS_DIR3_FT_DIR;
	e[1].ino = 1;              /* inside the AG headers */
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 2, 336, &b), -EINVAL);
	e[1].ino = 301;
	assert_int_equal(fs_dirbuild_plan(&g, ino, 0, e, 2, 336, &b), -EINVAL);
	/* no literal area: an empty directory is a block */
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 0, 0, &b), 0);
	assert_int_equal(b->fmt, FS_DIR_BLOCK);
	assert_int_equal(b->nblocks, 1);
	assert_int_equal(b->size, 4096);
	fs_dirbuild_free(b);
	assert_int_equal(fs_dirbuild_plan(&g, ino, parent, e, 0, 336, &b), 0);
	assert_int_equal(b->fmt, FS_DIR_SHORT);
	assert_int_equal(b->size, 6);
	fs_dirbuild_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_leafn_root),
		cmocka_unit_test(test_name_lengths),
		cmocka_unit_test(test_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
