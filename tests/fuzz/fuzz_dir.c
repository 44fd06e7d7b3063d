// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for directory decoding (libfs/format/dir.c): an input is a shape
 * byte (block, leaf or node form) and up to six 4 KiB directory blocks,
 * mapped at the logical offsets that shape uses (data blocks from 0, the
 * leaf/DA blocks at XFS_DIR2_LEAF_OFFSET, free index blocks at
 * XFS_DIR2_FREE_OFFSET); fs_dir_walk() reads them through a callback.  The
 * first bytes of the input also go through the short-form walker.  With
 * clang -fsanitize=fuzzer it is a libFuzzer target; otherwise main()
 * replays mutations of blocks with valid headers (magic, owner, address,
 * UUID, CRC) and of a valid short-form directory.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/bmap.h"
#include "libfs/format/crc.h"
#include "libfs/format/dir.h"
#include "libfs/format/endian.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

#define BLKSZ 4096
#define AGBLOCKS 16384
#define MAXBLK 6
#define DIR_INO ((1ull << (14 + 3)) | 200)

static struct fs_geom geom;

static void init_geom(void)
{
	struct xfs_sb sb;

	memset(&sb, 0, sizeof(sb));
	sb.sb_magicnum = XFS_SB_MAGIC;
	sb.sb_blocksize = BLKSZ;
	sb.sb_dblocks = 4 * AGBLOCKS;
	sb.sb_rextsize = 1;
	sb.sb_agblocks = AGBLOCKS;
	sb.sb_agcount = 4;
	sb.sb_logblocks = 1024;
	sb.sb_logstart = 8192;
	sb.sb_versionnum = XFS_SB_VERSION_5 | XFS_SB_VERSION_ALIGNBIT | XFS_SB_VERSION_MOREBITSBIT |
			   XFS_SB_VERSION_DIRV2BIT | XFS_SB_VERSION_EXTFLGBIT;
	sb.sb_sectsize = 512;
	sb.sb_inodesize = 512;
	sb.sb_inopblock = 8;
	sb.sb_blocklog = 12;
	sb.sb_sectlog = 9;
	sb.sb_inodelog = 9;
	sb.sb_inopblog = 3;
	sb.sb_agblklog = 14;
	sb.sb_imax_pct = 25;
	sb.sb_inoalignmt = 8;
	sb.sb_rootino = 128;
	sb.sb_rbmino = 129;
	sb.sb_rsumino = 130;
	sb.sb_logsunit = 1;
	sb.sb_features2 = XFS_SB_VERSION2_LAZYSBCOUNTBIT | XFS_SB_VERSION2_ATTR2BIT |
			  XFS_SB_VERSION2_PROJID32BIT | XFS_SB_VERSION2_CRCBIT | XFS_SB_VERSION2_FTYPE;
	sb.sb_bad_features2 = sb.sb_features2;
	sb.sb_features_incompat = XFS_SB_FEAT_INCOMPAT_FTYPE | XFS_SB_FEAT_INCOMPAT_SPINODES |
				  XFS_SB_FEAT_INCOMPAT_BIGTIME | XFS_SB_FEAT_INCOMPAT_NREXT64;
	sb.sb_features_ro_compat = XFS_SB_FEAT_RO_COMPAT_FINOBT | XFS_SB_FEAT_RO_COMPAT_RMAPBT |
				   XFS_SB_FEAT_RO_COMPAT_REFLINK | XFS_SB_FEAT_RO_COMPAT_INOBTCNT;
	sb.sb_spino_align = 4;
	memset(&sb.sb_meta_uuid, 0x5a, sizeof(sb.sb_meta_uuid));
	memset(&sb.sb_uuid, 0x5a, sizeof(sb.sb_uuid));
	fs_geom_derive(&sb, &geom);
}

#define LEAF_FSB ((1ull << 35) / BLKSZ)
#define FREE_FSB ((1ull << 36) / BLKSZ)

/* the logical block each input block is mapped at, per shape */
static uint64_t logical(unsigned shape, size_t i, size_t n)
{
	switch (shape) {
	case 0:         /* block form: one block */
		return 0;
	case 1:         /* leaf form: data blocks, then the leaf */
		return i + 1 < n ? i : LEAF_FSB;
	default:        /* node form: data blocks, DA node + leafn blocks, a free block */
		if (i + 1 == n)
			return FREE_FSB;
		if (i + 3 >= n && n >= 3)
			return LEAF_FSB + (i + 3 - n);
		return i;
	}
}

static const uint8_t *blocks;
static size_t nblocks;
static unsigned shape;

static int read_block(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	(void)priv;
	for (size_t i = 0; i < nblocks; i++)
		if (logical(shape, i, nblocks) == dablk) {
			memcpy(buf, blocks + i * BLKSZ, BLKSZ);
			*daddr = (fs_daddr_t)(AGBLOCKS + 1000 + i) << 3;
			return 0;
		}
	return -EIO;
}

static int on_entry(void *priv, const struct fs_dirent *e)
{
	(void)priv;
	return e->namelen == 0 && e->ino == 0 ? 0 : 0;
}

static void run_one(const uint8_t *data, size_t size)
{
	struct fs_findings fl;
	struct fs_dir_ctx c;
	struct fs_bmap_ext ext[MAXBLK];
	struct fs_bmap m = { .ext = ext };
	uint8_t sf[336];

	if (size < 2)
		return;
	shape = data[0] % 3;
	fs_findings_init(&fl);
	memset(&c, 0, sizeof(c));
	c.g = &geom;
	c.fl = &fl;
	c.ino = DIR_INO;
	c.agno = 1;
	c.have_log_head = true;
	c.head_lsn = (1ull << 32) | 100;
	c.read = read_block;
	c.entry = on_entry;

	/* short form over the first bytes, size taken from the input */
	memset(sf, 0, sizeof(sf));
	memcpy(sf, data + 2, size - 2 < sizeof(sf) ? size - 2 : sizeof(sf));
	fs_dir_sf_walk(&c, sf, sizeof(sf), data[1]);

	blocks = data + 2;
	nblocks = (size - 2) / BLKSZ;
	if (nblocks > MAXBLK)
		nblocks = MAXBLK;
	if (shape == 0 && nblocks > 1)
		nblocks = 1;
	for (size_t i = 0; i < nblocks; i++) {
		/* the walker wants mappings in offset order: logical() is ascending */
		ext[i] = (struct fs_bmap_ext){ .startoff = logical(shape, i, nblocks),
					       .startblock = ((uint64_t)1 << 14) | (1000 + i),
					       .blockcount = 1 };
	}
	m.n = nblocks;
	if (nblocks) {
		memset(&c.parent, 0, sizeof(c.parent));
		fs_dir_walk(&c, &m, shape == 0 ? BLKSZ : (uint64_t)nblocks * BLKSZ);
	}
	fs_findings_free(&fl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!geom.blocksize)
		init_geom();
	run_one(data, size);
	return 0;
}

#ifndef XFSX_LIBFUZZER
static uint64_t rng = 0xa4093822299f31d0ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The header of a v5 directory block of the given magic, as a walk would find it at index i. */
static void block_hdr(unsigned char *b, uint32_t magic, size_t i)
{
	struct xfs_dir3_blk_hdr *h = (void *)b;
	fs_daddr_t daddr = (fs_daddr_t)(AGBLOCKS + 1000 + i) << 3;

	if (magic == XFS_DIR3_LEAF1_MAGIC || magic == XFS_DIR3_LEAFN_MAGIC ||
	    magic == XFS_DA3_NODE_MAGIC) {
		struct xfs_da3_blkinfo *d = (void *)b;
		d->hdr.magic = to_be16((uint16_t)magic);
		d->blkno = to_be64(daddr);
		d->owner = to_be64(DIR_INO);
		d->lsn = to_be64((1ull << 32) | 50);
		memcpy(&d->uuid, geom.meta_uuid, 16);
		return;
	}
	h->magic = to_be32(magic);
	h->blkno = to_be64(daddr);
	h->owner = to_be64(DIR_INO);
	h->lsn = to_be64((1ull << 32) | 50);
	memcpy(&h->uuid, geom.meta_uuid, 16);
}

static size_t crc_of(uint32_t magic)
{
	switch (magic) {
	case XFS_DIR3_LEAF1_MAGIC:
	case XFS_DIR3_LEAFN_MAGIC: return XFS_DIR3_LEAF_CRC_OFF;
	case XFS_DA3_NODE_MAGIC: return XFS_DA3_NODE_CRC_OFF;
	case XFS_DIR3_FREE_MAGIC: return XFS_DIR3_FREE_CRC_OFF;
	default: return XFS_DIR3_DATA_CRC_OFF;
	}
}

static uint32_t magic_at(unsigned shp, size_t i, size_t n)
{
	uint64_t l = logical(shp, i, n);
	if (shp == 0)
		return XFS_DIR3_BLOCK_MAGIC;
	if (l == FREE_FSB)
		return XFS_DIR3_FREE_MAGIC;
	if (l == LEAF_FSB)
		return shp == 1 ? XFS_DIR3_LEAF1_MAGIC : XFS_DA3_NODE_MAGIC;
	if (l > LEAF_FSB)
		return XFS_DIR3_LEAFN_MAGIC;
	return XFS_DIR3_DATA_MAGIC;
}

/* returns the input length */
static size_t seed(uint8_t *in, unsigned variant)
{
	unsigned shp = variant % 3;
	size_t n = shp == 0 ? 1 : shp == 1 ? 2 + variant % 3 : 4 + variant % 3;
	uint8_t *sf = in + 2;

	memset(in, 0, 2 + MAXBLK * BLKSZ);
	in[0] = (uint8_t)shp;
	/* a short-form directory: parent 128, one entry "a" -> inode 131 (file) */
	sf[0] = 1;                 /* count */
	sf[1] = 0;                 /* i8count */
	put_be32(sf + 2, 128);     /* parent */
	sf[6] = 1;                 /* namelen */
	put_be16(sf + 7, 0x60);    /* offset */
	sf[9] = 'a';
	sf[10] = XFS_DIR3_FT_REG_FILE;
	put_be32(sf + 11, 131);
	in[1] = 15;                /* di_size */
	for (size_t i = 0; i < n; i++) {
		/* built aligned, then copied: the input's blocks start at offset 2 */
		_Alignas(8) static uint8_t b[BLKSZ];
		uint32_t magic = magic_at(shp, i, n);
		if (i == 0 && variant % 2)
			continue;  /* keep the short-form seed alone in the first block */
		memcpy(b, in + 2 + i * BLKSZ, BLKSZ);
		block_hdr(b, magic, i);
		fs_crc_update(b, BLKSZ, crc_of(magic));
		memcpy(in + 2 + i * BLKSZ, b, BLKSZ);
	}
	return 2 + n * BLKSZ;
}

int main(int argc, char **argv)
{
	static uint8_t in[2 + MAXBLK * BLKSZ];
	unsigned long iters = 20000;

	init_geom();
	if (argc > 2 && strcmp(argv[1], "--seeds") == 0) {
		for (unsigned v = 0; v < 12; v++) {
			char path[4096];
			size_t len = seed(in, v);
			FILE *f;
			snprintf(path, sizeof(path), "%s/seed-%02u", argv[2], v);
			f = fopen(path, "wb");
			if (!f || fwrite(in, 1, len, f) != len) {
				perror(path);
				return 1;
			}
			fclose(f);
		}
		return 0;
	}
	if (argc > 1)
		iters = strtoul(argv[1], NULL, 10);
	for (unsigned long i = 0; i < iters; i++) {
		unsigned v = (unsigned)(next() % 12);
		size_t len = seed(in, v);
		int flips = 1 + (int)(next() % 16);
		for (int f = 0; f < flips; f++) {
			size_t blk = next() % ((len - 2) / BLKSZ);
			size_t pos = 2 + blk * BLKSZ + ((next() % 4) ? next() % 192 : next() % BLKSZ);
			if (next() % 8 == 0)
				pos = 2 + next() % 32;     /* the short-form directory */
			in[pos] = (next() % 3) ? (uint8_t)next() : (uint8_t)(in[pos] ^ (1u << (next() % 8)));
		}
		if (next() % 2)
			for (size_t b = 0; b < (len - 2) / BLKSZ; b++) {
				_Alignas(8) static uint8_t blk[BLKSZ];
				memcpy(blk, in + 2 + b * BLKSZ, BLKSZ);
				fs_crc_update(blk, BLKSZ, crc_of(magic_at(v % 3, b, (len - 2) / BLKSZ)));
				memcpy(in + 2 + b * BLKSZ, blk, BLKSZ);
			}
		run_one(in, len);
	}
	printf("1..1\nok 1 - %lu mutated directories (short form; block, leaf and node forms from "
	       "blocks with valid headers) walked without a crash\n", iters);
	return 0;
}
#endif
