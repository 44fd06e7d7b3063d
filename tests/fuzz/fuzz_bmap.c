// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for block-map loading (libfs/format/bmap.c): an input is one v3
 * dinode (512 bytes) followed by up to four filesystem blocks, which the
 * read callback serves for whatever bmbt block the fork's root names
 * (block index = fsblock modulo the blocks given; none given: read error).
 * fs_bmap_root_children() and fs_bmap_load() run over both forks, then
 * lookups over the result.  With
 * clang -fsanitize=fuzzer it is a libFuzzer target; otherwise main()
 * replays mutations of valid inodes (extents and two-level btree forks),
 * or writes them as a seed corpus with --seeds DIR.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/bmap.h"
#include "libfs/format/btree.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

#define BLKSZ 4096
#define ISZ 512
#define AGNO 1
#define AGBLOCKS 16384
#define MAXBLK 4

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
	sb.sb_inodesize = ISZ;
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

static const uint8_t *blocks;
static size_t nblocks;

static int read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	(void)priv;
	if (!nblocks)
		return -EIO;
	memcpy(buf, blocks + (fsb % nblocks) * BLKSZ, BLKSZ);
	return 0;
}

static volatile uint64_t sink;

/* returns the number of findings */
static size_t run_one(const uint8_t *data, size_t size)
{
	_Alignas(8) static unsigned char ino[ISZ];
	struct fs_findings fl;
	struct fs_bmap_ctx c = { .g = &geom, .have_log_head = true, .head_lsn = (1ull << 32) | 100,
				 .read_fsblock = read_fsblock };
	struct fs_inode ip;
	size_t n;

	memset(ino, 0, sizeof(ino));
	memcpy(ino, data, size < ISZ ? size : ISZ);
	blocks = data + ISZ;
	nblocks = size > ISZ ? (size - ISZ) / BLKSZ : 0;
	if (nblocks > MAXBLK)
		nblocks = MAXBLK;
	fs_findings_init(&fl);
	c.fl = &fl;
	fs_inode_decode(ino, &ip);
	for (int w = XFS_DATA_FORK; w <= XFS_ATTR_FORK; w++) {
		struct fs_bmap m;
		fs_fsblock_t kids[8];
		size_t nk = fs_bmap_root_children(&geom, ino, &ip, w, kids, 8);

		for (size_t k = 0; k < nk; k++)
			sink += kids[k];
		memset(&m, 0, sizeof(m));
		if (fs_bmap_load(&c, ino, &ip, w, &m) == 0) {
			for (uint64_t off = 0; off < 64; off += 7)
				sink += (uint64_t)fs_bmap_find(&m, off);
			sink += fs_bmap_blocks(&m);
		}
		fs_bmap_free(&m);
	}
	n = fl.n;
	fs_findings_free(&fl);
	return n;
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
static uint64_t rng = 0x13198a2e03707344ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define INO_NR (((uint64_t)AGNO << (14 + 3)) | 200)

/*
 * A regular file: variant even = extents fork with a few one-block
 * mappings; odd = btree fork whose root (level 1) points at one bmbt leaf,
 * the input's first block.  Returns the input length.
 */
static size_t seed(unsigned char *out, unsigned variant)
{
	struct xfs_dinode *d = (void *)out;
	unsigned char *fork = out + sizeof(*d);
	uint32_t nrec = 2 + variant % 12;
	size_t len = ISZ;

	memset(out, 0, ISZ + BLKSZ);
	d->di_magic = to_be16(XFS_DINODE_MAGIC);
	d->di_version = 3;
	d->di_mode = to_be16(0100644);
	d->di_nlink = to_be32(1);
	d->di_next_unlinked = to_be32(NULLAGINO);
	d->di_ino = to_be64(INO_NR);
	memcpy(&d->di_uuid, geom.meta_uuid, 16);
	d->di_flags2 = to_be64(XFS_DIFLAG2_BIGTIME | XFS_DIFLAG2_NREXT64);
	d->di_aformat = XFS_DINODE_FMT_EXTENTS;
	d->di_big_nextents = to_be64(nrec);
	d->di_size = to_be64((uint64_t)2 * nrec * BLKSZ);
	if (variant % 2 == 0) {
		d->di_format = XFS_DINODE_FMT_EXTENTS;
		nrec = nrec > 10 ? 10 : nrec;   /* what the literal area holds */
		d->di_big_nextents = to_be64(nrec);
		d->di_nblocks = to_be64(nrec);
		for (uint32_t i = 0; i < nrec; i++) {
			struct fs_bmap_ext e = { .startoff = 2u * i,
						 .startblock = fs_agbno_to_fsb(&geom, AGNO, 400 + 3 * i),
						 .blockcount = 1 };
			fs_bmbt_rec_encode(&e, fork + 16 * i);
		}
	} else {
		const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);
		fs_fsblock_t leaf = fs_agbno_to_fsb(&geom, AGNO, 300);
		uint32_t litino = fs_inode_litino(&geom);
		uint32_t rootmax = (litino - 4) / 16;
		struct xfs_btree_block *b = (void *)(out + ISZ);

		d->di_format = XFS_DINODE_FMT_BTREE;
		d->di_nblocks = to_be64(nrec + 1);
		put_be16(fork, 1);                              /* bb_level */
		put_be16(fork + 2, 1);                          /* bb_numrecs */
		put_be64(fork + 4, 0);                          /* key: startoff 0 */
		put_be64(fork + 4 + 8 * rootmax, leaf);         /* ptr */
		b->bb_magic = to_be32(XFS_BMAP_CRC_MAGIC);
		b->bb_level = 0;
		b->bb_numrecs = to_be16(nrec);
		b->bb_u.l.bb_leftsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_rightsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_blkno = to_be64(fs_fsb_to_daddr(&geom, leaf));
		b->bb_u.l.bb_lsn = to_be64((1ull << 32) | 50);
		memcpy(&b->bb_u.l.bb_uuid, geom.meta_uuid, 16);
		b->bb_u.l.bb_owner = to_be64(INO_NR);
		for (uint32_t i = 0; i < nrec; i++) {
			struct fs_bmap_ext e = { .startoff = 2u * i,
						 .startblock = fs_agbno_to_fsb(&geom, AGNO, 400 + 3 * i),
						 .blockcount = 1 };
			fs_bmbt_rec_encode(&e, (void *)fs_btree_rec(ops, out + ISZ, i));
		}
		fs_crc_update(out + ISZ, BLKSZ, XFS_BTREE_LBLOCK_CRC_OFF);
		len += BLKSZ;
	}
	fs_crc_update(out, ISZ, XFS_DINODE_CRC_OFF);
	return len;
}

int main(int argc, char **argv)
{
	_Alignas(8) static unsigned char in[ISZ + BLKSZ];
	unsigned long iters = 50000;

	init_geom();
	if (argc > 2 && strcmp(argv[1], "--seeds") == 0) {
		for (unsigned v = 0; v < 16; v++) {
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
	for (unsigned v = 0; v < 16; v++) {
		size_t len = seed(in, v), n = run_one(in, len);
		if (n) {
			printf("1..1\nnot ok 1 - bmap seed %u loads without findings (%zu findings)\n", v, n);
			return 1;
		}
	}
	for (unsigned long i = 0; i < iters; i++) {
		size_t len = seed(in, (unsigned)(next() % 16));
		int flips = 1 + (int)(next() % 8);
		for (int f = 0; f < flips; f++) {
			size_t pos = next() % len;
			/* mostly the inode core and fork, and the bmbt header and first records */
			if (next() % 4)
				pos = (next() % 2 && len > ISZ) ? ISZ + next() % 256 : 0x60 + next() % 200;
			in[pos] = (next() % 3) ? (uint8_t)next() : (uint8_t)(in[pos] ^ (1u << (next() % 8)));
		}
		if (next() % 2) {
			fs_crc_update(in, ISZ, XFS_DINODE_CRC_OFF);
			if (len > ISZ)
				fs_crc_update(in + ISZ, BLKSZ, XFS_BTREE_LBLOCK_CRC_OFF);
		}
		run_one(in, len);
	}
	printf("1..2\nok 1 - 16 seed inodes (extents and btree forks) load without findings\n"
	       "ok 2 - %lu mutated inodes + bmbt blocks loaded without a crash\n", iters);
	return 0;
}
#endif
