// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the directory encoder (libfs/build/dirbuild.c): an input picks
 * a geometry (block and directory block sizes, ascii-ci, inode numbers
 * past 2^32), an entry count, name lengths and a share of hash collisions,
 * and seeds the entry generator with the rest of its bytes; the directory
 * is encoded into memory and must walk back through libfs/format/dir.c with no
 * findings and the same entries (tests/libfs/dir_rt.c).  Anything else
 * aborts.  With clang -fsanitize=fuzzer it is a libFuzzer target;
 * otherwise main() replays random inputs, or writes seeds with --seeds DIR.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/libfs/bload_rt.h"
#include "tests/libfs/dir_rt.h"

#define HDR 8

static const struct {
	uint32_t blocksize, dirblklog, agblklog, agcount, inodesize;
	bool asciici;
} gdefs[] = {
	{ 4096, 0, 14, 4, 512, false },
	{ 1024, 0, 16, 4, 512, false },
	{ 4096, 4, 16, 4, 512, false },
	{ 1024, 3, 16, 4, 2048, false },
	{ 2048, 1, 16, 4, 1024, true },
	{ 4096, 0, 20, 1024, 512, false },
};
#define NGEOM (sizeof(gdefs) / sizeof(gdefs[0]))
static struct fs_geom geoms[NGEOM];

static void init_geoms(void)
{
	for (unsigned i = 0; i < NGEOM; i++)
		if (rt_geom_ex(gdefs[i].blocksize, gdefs[i].dirblklog, gdefs[i].agblklog,
			       gdefs[i].agcount, gdefs[i].asciici, &geoms[i])) {
			fprintf(stderr, "fuzz_dirbuild: geometry %u\n", i);
			abort();
		}
}

/*
 * Input: [0] geometry, [1..2] entry count (little-endian, below 4096),
 * [3] shortest name, [4] longest, [5] collision percent, [6] literal area
 * (0: the inode's, else that many 8-byte units), the rest seeds the entries.
 */
static int run_one(const uint8_t *data, size_t size, char *why, size_t whylen)
{
	uint8_t hdr[HDR] = { 0 };
	unsigned gi;
	const struct fs_geom *g;
	struct dir_rt_shape sh;
	struct dir_rt_result res;
	struct fs_dirbuild_ent *e;
	unsigned char *arena;
	uint64_t rng = 0x243f6a8885a308d3ull;
	size_t n, sf_max;
	fs_ino_t ino, parent;
	int ret;

	memcpy(hdr, data, size < HDR ? size : HDR);
	gi = hdr[0] % NGEOM;
	g = &geoms[gi];
	n = (hdr[1] | (size_t)hdr[2] << 8) % 4096;
	sh.minlen = 1 + hdr[3] % 255;
	sh.maxlen = 1 + hdr[4] % 255;
	if (sh.maxlen < sh.minlen)
		sh.maxlen = sh.minlen;
	sh.collide_pct = hdr[5] % 101;
	sh.big_inos = gdefs[gi].agcount > 4;
	sf_max = hdr[6] ? (size_t)hdr[6] * 8 : gdefs[gi].inodesize - 176u;
	for (size_t i = HDR; i < size; i++)
		rng = (rng ^ data[i]) * 0x100000001b3ull;
	if (!rng)
		rng = 1;
	e = dir_rt_entries(g, n, &sh, &rng, &arena);
	if (!e)
		return 0;
	ino = dir_rt_ino(g, sh.big_inos, &rng);
	parent = dir_rt_ino(g, sh.big_inos, &rng);
	ret = dir_rt_roundtrip(g, ino, parent, e, n, sf_max, &rng, &res);
	if (ret)
		snprintf(why, whylen, "geometry %u (%u-byte blocks, %u-byte dir blocks), %zu entries, "
			 "names %u..%u, %u%% collisions, literal area %zu: %s", gi, g->blocksize,
			 g->dirblksize, n, sh.minlen, sh.maxlen, sh.collide_pct, sf_max, res.why);
	free(e);
	free(arena);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[768];

	if (!geoms[0].blocksize)
		init_geoms();
	if (run_one(data, size, why, sizeof(why))) {
		fprintf(stderr, "fuzz_dirbuild: %s\n", why);
		abort();
	}
	return 0;
}

#ifndef XFSX_LIBFUZZER
static void random_input(uint64_t *rng, uint8_t *in, size_t len)
{
	for (size_t i = 0; i < len; i++)
		in[i] = (uint8_t)(rt_rand(rng) >> 24);
	/* mostly small directories (fast), some up to thousands of entries */
	if (rt_rand(rng) % 4)
		in[2] = 0, in[1] = (uint8_t)(rt_rand(rng) % 256);
	if (rt_rand(rng) % 2)
		in[6] = 0;
}

int main(int argc, char **argv)
{
	static const struct rt_replay r = {
		.insize = HDR + 16, .variants = NGEOM, .random_input = random_input,
		.run_one = run_one, .one = "random directory encodes and walks back, case",
		.all = "random directories (6 geometries, every format) encoded and walked back unchanged",
	};

	init_geoms();
	return rt_replay_main(argc, argv, &r);
}
#endif
