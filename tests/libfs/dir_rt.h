/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Directory encoder round trips, shared by the unit test (test_dirbuild)
 * and the fuzz target (tests/fuzz/fuzz_dirbuild): random entry sets
 * (names of every length, every file type, forced hash collisions, inode
 * numbers above 2^32), encoded by libfs/build/dirbuild.c into memory at random
 * physical blocks, walked back through libfs/format/dir.c (whose reads run the
 * verifier table on every block) and compared.  No cmocka: what went
 * wrong comes back as text.
 */
#ifndef XFSX_TEST_DIR_RT_H
#define XFSX_TEST_DIR_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/build/dirbuild.h"

/* How a generated set looks. */
struct dir_rt_shape {
	uint32_t minlen, maxlen;   /* name lengths, 1..255 */
	unsigned collide_pct;      /* share of names made to collide with the previous one's hash */
	bool big_inos;             /* some inode numbers above 2^32 (the geometry must allow them) */
};

/*
 * n entries with distinct names (malloc'd; the names live in *arena,
 * free both).  NULL on ENOMEM.
 */
struct fs_dirbuild_ent *dir_rt_entries(const struct fs_geom *g, size_t n,
				       const struct dir_rt_shape *shape, uint64_t *rng,
				       unsigned char **arena);

/* A valid inode number of g, above 2^32 when big and the geometry allows it. */
fs_ino_t dir_rt_ino(const struct fs_geom *g, bool big, uint64_t *rng);

struct dir_rt_result {
	enum fs_dir_format fmt;
	uint32_t nblocks, levels, nextents;
	uint64_t walked;           /* entries the walker returned */
	char why[512];
};

/*
 * Plan, encode (blocks at random physical places, contiguous runs
 * sometimes), walk back with fs_dir_sf_walk / fs_dir_walk and compare:
 * no findings, the parent, every entry (ino, ftype, name) exactly once.
 * 0 when all holds; -1 with res->why; the encoder's negative errno as is.
 */
int dir_rt_roundtrip(const struct fs_geom *g, fs_ino_t ino, fs_ino_t parent,
		     const struct fs_dirbuild_ent *ents, size_t n, size_t sf_max, uint64_t *rng,
		     struct dir_rt_result *res);

#endif
