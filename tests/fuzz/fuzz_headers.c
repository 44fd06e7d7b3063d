// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the header decoders and verifiers: superblock, AGF, AGI
 * and AGFL.  With clang -fsanitize=fuzzer it is a libFuzzer target
 * (meson -Dfuzzers=true); otherwise main() below replays a deterministic
 * stream of mutated valid headers, so every build exercises it under the
 * sanitizers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/ag.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

#define SECT 512

/* A plausible 4-AG geometry: 4 KiB blocks, 512-byte inodes, 512-byte sectors. */
static void make_sb(struct xfs_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->sb_magicnum = XFS_SB_MAGIC;
	sb->sb_blocksize = 4096;
	sb->sb_dblocks = 4 * 16384;
	sb->sb_rextsize = 1;
	sb->sb_agblocks = 16384;
	sb->sb_agcount = 4;
	sb->sb_logblocks = 1024;
	sb->sb_logstart = 8192;
	sb->sb_versionnum = XFS_SB_VERSION_5 | XFS_SB_VERSION_ALIGNBIT | XFS_SB_VERSION_MOREBITSBIT |
			    XFS_SB_VERSION_DIRV2BIT | XFS_SB_VERSION_EXTFLGBIT;
	sb->sb_sectsize = SECT;
	sb->sb_inodesize = 512;
	sb->sb_inopblock = 8;
	sb->sb_blocklog = 12;
	sb->sb_sectlog = 9;
	sb->sb_inodelog = 9;
	sb->sb_inopblog = 3;
	sb->sb_agblklog = 14;
	sb->sb_imax_pct = 25;
	sb->sb_inoalignmt = 8;
	sb->sb_rootino = 128;
	sb->sb_rbmino = 129;
	sb->sb_rsumino = 130;
	sb->sb_logsunit = 1;
	sb->sb_features2 = XFS_SB_VERSION2_LAZYSBCOUNTBIT | XFS_SB_VERSION2_ATTR2BIT |
			   XFS_SB_VERSION2_PROJID32BIT | XFS_SB_VERSION2_CRCBIT | XFS_SB_VERSION2_FTYPE;
	sb->sb_bad_features2 = sb->sb_features2;
	sb->sb_features_incompat = XFS_SB_FEAT_INCOMPAT_FTYPE | XFS_SB_FEAT_INCOMPAT_SPINODES;
	sb->sb_features_ro_compat = XFS_SB_FEAT_RO_COMPAT_FINOBT | XFS_SB_FEAT_RO_COMPAT_RMAPBT |
				    XFS_SB_FEAT_RO_COMPAT_REFLINK;
	sb->sb_spino_align = 4;
}

static struct fs_geom geom;

static void run_one(const uint8_t *data, size_t size)
{
	/* disk buffers are always aligned; so is this one */
	_Alignas(8) unsigned char sect[SECT];
	struct fs_findings fl;
	struct fs_vctx c = { .g = &geom, .agno = 1, .daddr = 8, .have_log_head = true,
			     .head_lsn = (1ull << 32) | 100 };
	struct xfs_sb sb;
	struct fs_geom g2;
	enum fs_mtype t;

	if (size < 1)
		return;
	t = data[0] % 4;
	memset(sect, 0, sizeof(sect));
	memcpy(sect, data + 1, size - 1 < SECT ? size - 1 : SECT);
	fs_findings_init(&fl);
	c.fl = &fl;

	/* the superblock path decodes and derives geometry from whatever it got */
	if (t == FS_MT_SB) {
		if (fs_sb_verify(sect, SECT, 0, &fl) <= FS_SB_DAMAGED) {
			fs_sb_from_disk(&sb, (const void *)sect);
			if (fs_geom_derive(&sb, &g2) == 0) {
				/* every derived helper must stay in range on a verified geometry */
				(void)fs_agino_valid(&g2, g2.agcount - 1, 0);
				(void)fs_ino_valid(&g2, sb.sb_rootino);
			}
		}
	} else {
		fs_verify(t, &c, sect, SECT);
		if (t == FS_MT_AGFL) {
			struct fs_agf agf;
			memset(&agf, 0, sizeof(agf));
			agf.flfirst = data[0] % geom.agfl_size;
			agf.fllast = (data[0] * 7u) % geom.agfl_size;
			agf.flcount = fs_agfl_active_count(&geom, &(struct fs_agf){
				.flfirst = agf.flfirst, .fllast = agf.fllast, .flcount = 1 });
			fs_agfl_check_active(&c, sect, &agf);
		}
	}
	fs_findings_free(&fl);
}

static void init_geom(void)
{
	struct xfs_sb sb;

	make_sb(&sb);
	fs_geom_derive(&sb, &geom);
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
/* xorshift: a fixed stream, so a failure replays exactly */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Seed buffers: a valid header of each type, CRC correct, so mutations reach the field rules. */
static void seed(enum fs_mtype t, unsigned char *dst)
{
	_Alignas(8) unsigned char out[SECT];
	struct xfs_sb sb;

	memset(out, 0, SECT);
	make_sb(&sb);
	switch (t) {
	case FS_MT_SB:
		fs_sb_to_disk((struct xfs_dsb *)out, &sb);
		fs_crc_update(out, SECT, FS_SB_CRC_OFF);
		break;
	case FS_MT_AGF: {
		struct xfs_agf *a = (void *)out;
		a->agf_magicnum = to_be32(XFS_AGF_MAGIC);
		a->agf_versionnum = to_be32(XFS_AGF_VERSION);
		a->agf_seqno = to_be32(1);
		a->agf_length = to_be32(16384);
		for (int i = 0; i < XFS_BTNUM_AGF; i++) {
			a->agf_roots[i] = to_be32(4 + i);
			a->agf_levels[i] = to_be32(1);
		}
		a->agf_refcount_root = to_be32(8);
		a->agf_refcount_level = to_be32(1);
		a->agf_rmap_blocks = to_be32(1);
		a->agf_refcount_blocks = to_be32(1);
		a->agf_flfirst = to_be32(0);
		a->agf_fllast = to_be32(3);
		a->agf_flcount = to_be32(4);
		a->agf_freeblks = to_be32(16000);
		a->agf_longest = to_be32(16000);
		memcpy(&a->agf_uuid, geom.meta_uuid, 16);
		fs_crc_update(out, SECT, offsetof(struct xfs_agf, agf_crc));
		break;
	}
	case FS_MT_AGI: {
		struct xfs_agi *a = (void *)out;
		a->agi_magicnum = to_be32(XFS_AGI_MAGIC);
		a->agi_versionnum = to_be32(XFS_AGI_VERSION);
		a->agi_seqno = to_be32(1);
		a->agi_length = to_be32(16384);
		a->agi_root = to_be32(5);
		a->agi_level = to_be32(1);
		a->agi_free_root = to_be32(6);
		a->agi_free_level = to_be32(1);
		a->agi_newino = to_be32(NULLAGINO);
		a->agi_dirino = to_be32(NULLAGINO);
		for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
			a->agi_unlinked[i] = to_be32(NULLAGINO);
		memcpy(&a->agi_uuid, geom.meta_uuid, 16);
		fs_crc_update(out, SECT, offsetof(struct xfs_agi, agi_crc));
		break;
	}
	default: {
		struct xfs_agfl *a = (void *)out;
		__be32 *slot = (__be32 *)(out + sizeof(*a));
		a->agfl_magicnum = to_be32(XFS_AGFL_MAGIC);
		a->agfl_seqno = to_be32(1);
		memcpy(&a->agfl_uuid, geom.meta_uuid, 16);
		for (uint32_t i = 0; i < geom.agfl_size; i++)
			slot[i] = to_be32(i < 4 ? 10 + i : NULLAGBLOCK);
		fs_crc_update(out, SECT, offsetof(struct xfs_agfl, agfl_crc));
		break;
	}
	}
	memcpy(dst, out, SECT);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	uint8_t in[SECT + 1];

	init_geom();
	for (unsigned long i = 0; i < iters; i++) {
		enum fs_mtype t = (enum fs_mtype)(i % 4);
		int flips = 1 + (int)(next() % 8);

		in[0] = (uint8_t)t;
		if (i % 16 == 15) {
			for (size_t j = 1; j < sizeof(in); j++)
				in[j] = (uint8_t)next();
		} else {
			seed(t, in + 1);
			for (int f = 0; f < flips; f++) {
				size_t pos = 1 + next() % SECT;
				/* mostly inside the structures, where the rules are */
				if (next() % 4)
					pos = 1 + next() % 256;
				in[pos] = (next() % 3) ? (uint8_t)next() : (uint8_t)(in[pos] ^ (1u << (next() % 8)));
			}
			/* half the time keep the CRC valid so field rules are reached */
			if (next() % 2) {
				size_t off = t == FS_MT_SB ? FS_SB_CRC_OFF : t == FS_MT_AGF ?
					offsetof(struct xfs_agf, agf_crc) : t == FS_MT_AGI ?
					offsetof(struct xfs_agi, agi_crc) : offsetof(struct xfs_agfl, agfl_crc);
				fs_crc_update(in + 1, SECT, off);
			}
		}
		run_one(in, sizeof(in));
	}
	printf("1..1\nok 1 - %lu mutated superblock/AGF/AGI/AGFL inputs verified without a crash\n", iters);
	return 0;
}
#endif
