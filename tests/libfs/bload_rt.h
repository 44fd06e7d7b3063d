/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bulk-loader round trips, shared by the unit test (test_bload) and the
 * fuzz target (tests/fuzz/fuzz_bload): a geometry, valid record sets for
 * every tree type, and "build it into memory, walk it back with libfs's
 * own walkers, compare" with the shape rules checked on the way.
 * No cmocka here: it returns what went wrong as text.
 */
#ifndef XFSX_TEST_BLOAD_RT_H
#define XFSX_TEST_BLOAD_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/build/bload.h"
#include "libfs/format/format.h"

/* 4 AGs of 16384 blocks, 512-byte inodes, finobt, sparse inodes, rmapbt, reflink. */
int rt_geom(uint32_t blocksize, struct fs_geom *g);
/* The same with directory blocks of 2^dirblklog fs blocks, AGs of 2^agblklog blocks, ascii-ci. */
int rt_geom_ex(uint32_t blocksize, uint32_t dirblklog, uint32_t agblklog, uint32_t agcount,
	       bool asciici, struct fs_geom *g);

enum rt_tree { RT_BNO, RT_CNT, RT_RMAP, RT_REFC, RT_INO, RT_FINO, RT_BMBT, RT_NR };
const struct fs_btree_ops *rt_ops(enum rt_tree t);
const char *rt_name(enum rt_tree t);

/* A small PRNG (xorshift64*), so a seed names a case. */
uint64_t rt_rand(uint64_t *state);

/*
 * *n valid records of tree t in key order (fewer when the AG has no room
 * for more: *n says how many), malloc'd, *n * rec_len bytes.  NULL on ENOMEM.
 */
unsigned char *rt_records(const struct fs_geom *g, enum rt_tree t, uint64_t *n, uint64_t *rng);

/* The AG the round trips build in (short format trees, and the bmbt's inode). */
#define RT_AGNO 1

struct rt_result {
	struct fs_bload_geom geom;
	uint32_t nlevels;
	uint64_t blocks;           /* blocks written */
	uint64_t walked_blocks;    /* blocks the walker accepted */
	uint64_t level_seen[FS_BLOAD_MAXLEVELS];
	uint8_t fork_format;
	char why[512];             /* the first thing wrong */
};

/*
 * Build the records into an in-memory store (blocks taken with a stride,
 * so siblings are not neighbours), then walk them back (fs_btree_walk, or
 * fs_bmap_load through an inode for the bmbt) and check: no findings,
 * the same records in the same order, levels and blocks per level as the
 * geometry predicted, every non-root block at least half full and no
 * block over its capacity, slack kept wherever the half-full rule allows.
 * 0 when all holds; -1 with res->why; the loader's negative errno as is
 * (res->why says so) when the build itself failed.
 */
int rt_roundtrip(const struct fs_geom *g, enum rt_tree t, const unsigned char *recs, uint64_t n,
		 const struct fs_bload_slack *slack, struct rt_result *res);

/*
 * The replay driver the round-trip fuzz targets share (their main() when
 * not built for libFuzzer): "--seeds DIR" writes 16 seed inputs (byte 0 =
 * variant), else N (argv[1], default 2000) random inputs are run; one TAP
 * line says how it went.  run_one returns nonzero with why filled on failure.
 */
struct rt_replay {
	size_t insize;             /* bytes per input */
	unsigned variants;         /* seeds cycle byte 0 over these */
	void (*random_input)(uint64_t *rng, uint8_t *in, size_t len);
	int (*run_one)(const uint8_t *in, size_t len, char *why, size_t whylen);
	const char *one;           /* "random directory": a failing case's name */
	const char *all;           /* what the passing line says about them all */
};
int rt_replay_main(int argc, char **argv, const struct rt_replay *r);

#endif
