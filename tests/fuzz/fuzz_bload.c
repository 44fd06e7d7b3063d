// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the btree bulk loader (libfs/build/bload.c): an input picks a
 * tree type, a block size, the slack and a record count, and seeds the
 * record generator with the rest of its bytes; the records (valid, in key
 * order) are bulk loaded into memory and must walk back through libfs's
 * own walkers (fs_btree_walk, fs_bmap_load) with no findings, the same
 * records, and the shape the geometry predicted (tests/libfs/bload_rt.c).
 * Anything else aborts.  With clang -fsanitize=fuzzer it is a libFuzzer
 * target; otherwise main() replays random inputs, or writes seeds with
 * --seeds DIR.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/libfs/bload_rt.h"

#define HDR 8

static struct fs_geom geoms[4];         /* 512, 1024, 2048, 4096-byte blocks */

static void init_geoms(void)
{
	for (unsigned i = 0; i < 4; i++)
		if (rt_geom(512u << i, &geoms[i])) {
			fprintf(stderr, "fuzz_bload: geometry for %u-byte blocks\n", 512u << i);
			abort();
		}
}

/*
 * Input: [0] tree, [1] block size, [2] leaf slack, [3] node slack (signed),
 * [4..5] record count (little-endian, below 4096), the rest seeds the records.
 */
static int run_one(const uint8_t *data, size_t size, char *why, size_t whylen)
{
	uint8_t hdr[HDR] = { 0 };
	enum rt_tree t;
	const struct fs_geom *g;
	struct fs_bload_slack slack;
	uint64_t n, rng = 0x243f6a8885a308d3ull;
	unsigned char *recs;
	struct rt_result res;
	int ret;

	memcpy(hdr, data, size < HDR ? size : HDR);
	t = (enum rt_tree)(hdr[0] % RT_NR);
	g = &geoms[hdr[1] % 4];
	slack.leaf = (int8_t)hdr[2];
	slack.node = (int8_t)hdr[3];
	n = (hdr[4] | (uint64_t)hdr[5] << 8) % 4096;
	for (size_t i = HDR; i < size; i++)
		rng = (rng ^ data[i]) * 0x100000001b3ull;
	if (!rng)
		rng = 1;
	recs = rt_records(g, t, &n, &rng);
	if (!recs)
		return 0;
	ret = rt_roundtrip(g, t, recs, n, &slack, &res);
	if (ret)
		snprintf(why, whylen, "%s, %u-byte blocks, %llu records, slack %d/%d: %s", rt_name(t),
			 g->blocksize, (unsigned long long)n, slack.leaf, slack.node, res.why);
	free(recs);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[768];

	if (!geoms[0].blocksize)
		init_geoms();
	if (run_one(data, size, why, sizeof(why))) {
		fprintf(stderr, "fuzz_bload: %s\n", why);
		abort();
	}
	return 0;
}

#ifndef XFSX_LIBFUZZER
static void random_input(uint64_t *rng, uint8_t *in, size_t len)
{
	for (size_t i = 0; i < len; i++)
		in[i] = (uint8_t)(rt_rand(rng) >> 24);
	/* mostly small trees (fast), some up to thousands of records */
	if (rt_rand(rng) % 4)
		in[5] = 0, in[4] = (uint8_t)(rt_rand(rng) % 256);
}

int main(int argc, char **argv)
{
	static const struct rt_replay r = {
		.insize = HDR + 16, .variants = RT_NR, .random_input = random_input,
		.run_one = run_one, .one = "random record set loads and walks back, case",
		.all = "random record sets (7 tree types, 4 block sizes, any slack) bulk loaded and walked back unchanged",
	};

	init_geoms();
	return rt_replay_main(argc, argv, &r);
}
#endif
