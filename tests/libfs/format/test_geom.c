// SPDX-License-Identifier: GPL-2.0
/*
 * Geometry derivation: every fs_geom field for hand-checked geometries
 * (including the ones mkfs.xfs 6.1 makes for 1 KiB and 64 KiB blocks), the
 * short last AG, btree height limits against the kernel's formulas, the
 * inode number range edges, unit conversions, AG header offsets, AGFL slot
 * arithmetic, and refusal of superblocks the derivation cannot use.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/libfs/fixture.h"

/* The kernel's xfs_btree_compute_maxlevels, written out independently. */
static uint32_t k_maxlevels(uint32_t leaf_min, uint32_t node_min, uint64_t records)
{
	uint64_t blocks = (records + leaf_min - 1) / leaf_min;
	uint32_t level = 1;

	while (blocks > 1) {
		blocks = (blocks + node_min - 1) / node_min;
		level++;
	}
	return level;
}

/* The kernel's xfs_btree_space_to_height (root holds at least 2 pointers). */
static uint32_t k_space_height(uint32_t node_min, uint64_t leaf_blocks)
{
	uint64_t node_blocks = 2, left = leaf_blocks - 1;
	uint32_t h = 1;

	while (node_blocks < left) {
		left -= node_blocks;
		node_blocks *= node_min;
		h++;
	}
	return h;
}

/*
 * The kernel's xfs_bmap_compute_maxlevels for the data fork: the inode root
 * holds 3 pointers at least (MINDBTPTRS); a level that fits there is the top.
 */
static uint32_t k_bmbt_levels(uint32_t leaf_min, uint32_t node_min, uint64_t records)
{
	uint64_t blocks = (records + leaf_min - 1) / leaf_min;
	uint32_t level;

	for (level = 1; blocks > 1; level++)
		blocks = blocks <= 3 ? 1 : (blocks + node_min - 1) / node_min;
	return level;
}

/* min records per block = (block - header) / entry / 2 for leaves and nodes */
static uint32_t minrecs(uint32_t bs, size_t hdr, size_t entry)
{
	return (uint32_t)((bs - hdr) / entry / 2);
}

static void check_maxlevels(const struct fs_geom *g)
{
	uint32_t bs = g->blocksize;
	size_t sh = XFS_BTREE_SBLOCK_CRC_LEN, lh = XFS_BTREE_LBLOCK_CRC_LEN;

	assert_int_equal(g->alloc_maxlevels,
			 k_maxlevels(minrecs(bs, sh, 8), minrecs(bs, sh, 8 + 4), (g->agblocks + 1ull) / 2));
	assert_int_equal(g->inobt_maxlevels,
			 k_maxlevels(minrecs(bs, sh, 16), minrecs(bs, sh, 4 + 4),
				     (1ull << g->agino_log) / 64));
	if (g->rmapbt) {
		uint32_t node = minrecs(bs, sh, 2 * 20 + 4);
		assert_int_equal(g->rmap_maxlevels, g->reflink ? k_space_height(node, g->agblocks) :
				 k_maxlevels(minrecs(bs, sh, 24), node, g->agblocks));
	} else {
		assert_int_equal(g->rmap_maxlevels, 0);
	}
	if (g->reflink)
		assert_int_equal(g->refc_maxlevels,
				 k_maxlevels(minrecs(bs, sh, 12), minrecs(bs, sh, 4 + 4), g->agblocks));
	else
		assert_int_equal(g->refc_maxlevels, 0);
	/* a data fork of 2^31 (or 2^48 with nrext64) extents, root level in the inode */
	assert_int_equal(g->bmbt_maxlevels_data,
			 k_bmbt_levels(minrecs(bs, lh, 16), minrecs(bs, lh, 8 + 8),
				       g->nrext64 ? (1ull << 48) - 1 : (1ull << 31) - 1));
	/*
	 * and every height within the on-disk limit: 9 (the old XFS_BTREE_MAXLEVELS)
	 * for the short-pointer trees, the rmapbt's own limit (xfs_rmapbt_maxlevels_ondisk:
	 * a reflink tree filling the largest AG of the smallest v5 blocks).
	 */
	assert_in_range(g->alloc_maxlevels, 1, 9);
	assert_in_range(g->inobt_maxlevels, 1, 9);
	assert_in_range(g->rmap_maxlevels, 0,
			k_space_height(minrecs(XFS_MIN_CRC_BLOCKSIZE, sh, 2 * 20 + 4), XFS_MAX_CRC_AG_BLOCKS));
	assert_in_range(g->refc_maxlevels, 0, 9);
	assert_in_range(g->bmbt_maxlevels_data, 2, 10);
}

/* The entry sizes used above are the headers' own. */
static void test_record_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(xfs_alloc_rec_t), 8);
	assert_int_equal(sizeof(xfs_alloc_key_t) + sizeof(xfs_alloc_ptr_t), 12);
	assert_int_equal(sizeof(xfs_inobt_rec_t), 16);
	assert_int_equal(sizeof(xfs_inobt_key_t) + sizeof(xfs_inobt_ptr_t), 8);
	assert_int_equal(sizeof(struct xfs_rmap_rec), 24);
	assert_int_equal(sizeof(struct xfs_rmap_key), 20);
	assert_int_equal(sizeof(struct xfs_refcount_rec), 12);
	assert_int_equal(sizeof(xfs_bmbt_rec_t), 16);
	assert_int_equal(XFS_BTREE_SBLOCK_CRC_LEN, 56);
	assert_int_equal(XFS_BTREE_LBLOCK_CRC_LEN, 72);
}

static void test_default(void **state)
{
	struct fx f;
	const struct fs_geom *g = &f.g;

	(void)state;
	fx_init_default(&f);
	assert_int_equal(g->blocksize, 4096);
	assert_int_equal(g->blocklog, 12);
	assert_int_equal(g->sectsize, 512);
	assert_int_equal(g->sectlog, 9);
	assert_int_equal(g->inodesize, 512);
	assert_int_equal(g->inodelog, 9);
	assert_int_equal(g->inopblock, 8);
	assert_int_equal(g->inopblog, 3);
	assert_int_equal(g->agblocks, 16384);
	assert_int_equal(g->agblklog, 14);
	assert_int_equal(g->agcount, 4);
	assert_int_equal(g->dblocks, 3 * 16384 + 10000);
	assert_int_equal(g->last_ag_blocks, 10000);
	assert_int_equal(fs_ag_blocks(g, 0), 16384);
	assert_int_equal(fs_ag_blocks(g, 2), 16384);
	assert_int_equal(fs_ag_blocks(g, 3), 10000);
	assert_int_equal(g->dirblksize, 4096);
	assert_int_equal(g->dirblklog, 0);
	assert_int_equal(g->dirblkfsbs, 1);
	assert_int_equal(g->agino_log, 17);
	assert_int_equal(g->inodes_per_chunk, 64);
	assert_int_equal(g->blocks_per_chunk, 8);
	assert_int_equal(g->inoalign, 8);
	assert_int_equal(g->spino_align, 4);
	/* 8 KiB scaled by 512/256 */
	assert_int_equal(g->inode_cluster_size, 16384);
	assert_int_equal(g->blocks_per_cluster, 4);
	assert_int_equal(g->cluster_align, 8);
	assert_int_equal(g->ag_hdr_blocks, 1);
	/* (512 - 36-byte AGFL header) / 4 */
	assert_int_equal(g->agfl_size, 119);
	assert_int_equal(g->agfl_size, (512 - sizeof(struct xfs_agfl)) / sizeof(__be32));
	assert_true(g->log_internal);
	assert_int_equal(g->logblocks, 1024);
	assert_int_equal(g->logsectsize, 512);
	assert_int_equal(g->log_agno, 2);
	assert_int_equal(g->log_agbno, 64);
	assert_int_equal(g->logstart, (2u << 14) | 64);
	assert_int_equal(g->rootino, f.sb.sb_rootino);
	assert_int_equal(g->rbmino, f.sb.sb_rootino + 1);
	assert_int_equal(g->rsumino, f.sb.sb_rootino + 2);
	assert_true(g->crc && g->ftype && g->finobt && g->spinodes && g->reflink && g->inobtcount &&
		    g->bigtime && g->lazysbcount && g->attr2 && g->projid32);
	assert_false(g->rmapbt || g->nrext64 || g->meta_uuid_feat || g->needsrepair || g->quota);
	/* without the meta_uuid feature, metadata is stamped with the user UUID */
	assert_memory_equal(g->uuid, &f.sb.sb_uuid, 16);
	assert_memory_equal(g->meta_uuid, &f.sb.sb_uuid, 16);
	assert_int_equal(fs_geom_max_inodes(g), g->dblocks << 3);
	/* alloc btree: 8192 records / 252 per leaf = 33 leaves, one root */
	assert_int_equal(g->alloc_maxlevels, 2);
	/* data fork: 2^31 extents / 125 per leaf, 125 per node, 3 in the inode root */
	assert_int_equal(g->bmbt_maxlevels_data, 5);
	check_maxlevels(g);
}

struct gcase {
	const char *name;
	struct fx_params p;
	uint32_t ag_hdr_blocks, agfl_size, inopblock, blocks_per_chunk;
	uint32_t inode_cluster_size, blocks_per_cluster, cluster_align, dirblksize, agino_log;
};

static const struct gcase gcases[] = {
	/* 4 KiB sectors: four header sectors fill four blocks; (4096-36)/4 slots */
	{ "sect4k", { 4096, 4096, 512, 4, 16384, 10000, 0, true, false, true, true, true, false },
	  4, 1015, 8, 8, 16384, 4, 8, 4096, 17 },
	/* 1 KiB blocks (mkfs: inoalignmt 32, spino_align 16) */
	{ "1k", { 1024, 512, 512, 4, 262144, 262144, 0, true, false, true, true, true, false },
	  2, 119, 2, 32, 16384, 16, 32, 1024, 19 },
	/* 64 KiB blocks, 512 B inodes: chunk smaller than a block, no alignment (mkfs: 0/0) */
	{ "64k", { 65536, 512, 512, 4, 4096, 4096, 0, true, true, true, true, true, false },
	  1, 119, 128, 1, 65536, 1, 1, 65536, 19 },
	/* 64 KiB blocks, 2 KiB inodes (mkfs: inoalignmt 2, spino_align 1) */
	{ "64k-2k", { 65536, 512, 2048, 4, 4096, 4096, 0, true, true, true, true, true, false },
	  1, 119, 32, 2, 65536, 1, 2, 65536, 17 },
	/* 2 KiB blocks, 1 KiB inodes, 64 KiB directory blocks, rmapbt without reflink */
	{ "2k-dir", { 2048, 512, 1024, 3, 131072, 100000, 5, true, true, false, true, true, true },
	  1, 119, 2, 32, 32768, 16, 32, 65536, 18 },
	/* no sparse inodes, 4 KiB sectors on 4 KiB blocks with 2 KiB inodes */
	{ "plain-2k", { 4096, 4096, 2048, 2, 65536, 65536, 1, false, false, false, false, false, false },
	  4, 1015, 2, 32, 65536, 16, 16, 8192, 17 },
};

static void test_geometries(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gcases) / sizeof(gcases[0]); i++) {
		const struct gcase *k = &gcases[i];
		struct fx f;
		const struct fs_geom *g = &f.g;

		print_message("# geometry %s\n", k->name);
		fx_init(&f, &k->p);
		assert_int_equal(g->blocksize, k->p.blocksize);
		assert_int_equal(g->sectsize, k->p.sectsize);
		assert_int_equal(g->inodesize, k->p.inodesize);
		assert_int_equal(g->ag_hdr_blocks, k->ag_hdr_blocks);
		assert_int_equal(g->agfl_size, k->agfl_size);
		assert_int_equal(g->inopblock, k->inopblock);
		assert_int_equal(1u << g->inopblog, k->inopblock);
		assert_int_equal(g->blocks_per_chunk, k->blocks_per_chunk);
		assert_int_equal(g->inode_cluster_size, k->inode_cluster_size);
		assert_int_equal(g->blocks_per_cluster, k->blocks_per_cluster);
		assert_int_equal(g->cluster_align, k->cluster_align);
		assert_int_equal(g->dirblksize, k->dirblksize);
		assert_int_equal(g->dirblkfsbs, k->dirblksize / k->p.blocksize);
		assert_int_equal(g->agino_log, k->agino_log);
		assert_int_equal(g->last_ag_blocks, k->p.last_ag_blocks);
		assert_int_equal(g->logsectsize, k->p.sectsize);
		assert_int_equal(g->rmapbt, k->p.rmapbt);
		assert_int_equal(g->reflink, k->p.reflink);
		assert_int_equal(g->finobt, k->p.finobt);
		check_maxlevels(g);
	}
}

/* The heights for the largest AGs stay within what the on-disk format allows. */
static void test_maxlevels_large(void **state)
{
	struct xfs_sb sb;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	sb = f.sb;
	/* 1 TiB AGs of 1 KiB blocks, rmapbt + reflink */
	sb.sb_blocksize = 1024; sb.sb_blocklog = 10; sb.sb_inopblock = 2; sb.sb_inopblog = 1;
	sb.sb_agblocks = 1u << 30; sb.sb_agblklog = 30; sb.sb_agcount = 2;
	sb.sb_dblocks = 2ull << 30;
	sb.sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_RMAPBT;
	assert_int_equal(fs_geom_derive(&sb, &f.g), 0);
	check_maxlevels(&f.g);
	assert_true(f.g.alloc_maxlevels > 2);
	/* nrext64 raises the data fork height */
	{
		uint32_t small = f.g.bmbt_maxlevels_data;
		sb.sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_NREXT64;
		assert_int_equal(fs_geom_derive(&sb, &f.g), 0);
		assert_true(f.g.nrext64);
		assert_true(f.g.bmbt_maxlevels_data > small);
		check_maxlevels(&f.g);
	}
}

static void test_meta_uuid(void **state)
{
	struct fx_params p;
	struct fx f;

	(void)state;
	fx_default_params(&p);
	p.meta_uuid = true;
	fx_init(&f, &p);
	assert_true(f.g.meta_uuid_feat);
	assert_memory_equal(f.g.uuid, &f.sb.sb_uuid, 16);
	assert_memory_equal(f.g.meta_uuid, &f.sb.sb_meta_uuid, 16);
	assert_memory_not_equal(f.g.meta_uuid, f.g.uuid, 16);
}

static void test_external_log(void **state)
{
	struct fx f;
	struct xfs_sb sb;

	(void)state;
	fx_init_default(&f);
	sb = f.sb;
	sb.sb_logstart = 0;
	assert_int_equal(fs_geom_derive(&sb, &f.g), 0);
	assert_false(f.g.log_internal);
	assert_int_equal(f.g.log_agno, 0);
	assert_int_equal(f.g.log_agbno, 0);
}

static void test_derive_refuses(void **state)
{
	struct fx f;
	struct fs_geom g;
	struct xfs_sb sb;

	(void)state;
	fx_init_default(&f);
#define REFUSE(stmt) do { sb = f.sb; stmt; assert_int_equal(fs_geom_derive(&sb, &g), -EINVAL); } while (0)
	REFUSE(sb.sb_agblocks = 0);
	REFUSE(sb.sb_agcount = 0);
	REFUSE(sb.sb_blocklog = 8);
	REFUSE(sb.sb_blocklog = 17);
	REFUSE(sb.sb_inodelog = 7);
	REFUSE(sb.sb_inodelog = 12);
	REFUSE(sb.sb_inodelog = 13; sb.sb_blocklog = 12);
	REFUSE(sb.sb_sectlog = 8);
	REFUSE(sb.sb_sectlog = 16);
	REFUSE(sb.sb_dblocks = 3ull * 16384);
	REFUSE(sb.sb_agblklog = 32);
	REFUSE(sb.sb_dirblklog = 5);
#undef REFUSE
	/* and the fixture itself is accepted */
	assert_int_equal(fs_geom_derive(&f.sb, &g), 0);
}

/* The kernel's xfs_agino_range: first aligned block after the AGFL .. last aligned cluster. */
static void test_agino_range(void **state)
{
	struct fx f;
	const struct fs_geom *g = &f.g;

	(void)state;
	fx_init_default(&f);
	/* first: block roundup(1, 8) = 8, agino 64 */
	assert_false(fs_agino_valid(g, 0, 0));
	assert_false(fs_agino_valid(g, 0, 63));
	assert_true(fs_agino_valid(g, 0, 64));
	assert_true(fs_agino_valid(g, 1, 64));
	/* a full AG: 16384 blocks * 8 inodes */
	assert_true(fs_agino_valid(g, 0, 131071));
	assert_false(fs_agino_valid(g, 0, 131072));
	assert_false(fs_agino_valid(g, 0, NULLAGINO));
	/* the short last AG ends at block 10000 */
	assert_true(fs_agino_valid(g, 3, 79999));
	assert_false(fs_agino_valid(g, 3, 80000));
	assert_false(fs_agino_valid(g, 3, 131071));
	/* AGs past the end */
	assert_false(fs_agino_valid(g, 4, 64));
	assert_false(fs_agino_valid(g, UINT32_MAX, 64));

	/* inode numbers */
	assert_true(fs_ino_valid(g, f.sb.sb_rootino));
	assert_true(fs_ino_valid(g, fs_agino_to_ino(g, 3, 79999)));
	assert_false(fs_ino_valid(g, fs_agino_to_ino(g, 3, 80000)));
	assert_false(fs_ino_valid(g, fs_agino_to_ino(g, 4, 64)));
	assert_false(fs_ino_valid(g, NULLFSINO));
	assert_int_equal(fs_ino_to_agno(g, fs_agino_to_ino(g, 2, 777)), 2);
	assert_int_equal(fs_ino_to_agino(g, fs_agino_to_ino(g, 2, 777)), 777);
	assert_int_equal(fs_agino_to_agbno(g, 777), 777 >> 3);
	assert_int_equal(fs_agino_to_offset(g, 777), 777 & 7);
}

static void test_agino_range_unaligned_last_ag(void **state)
{
	struct fx_params p;
	struct fx f;

	(void)state;
	fx_default_params(&p);
	p.last_ag_blocks = 10003;
	fx_init(&f, &p);
	/* the last aligned cluster ends at block 10000 */
	assert_true(fs_agino_valid(&f.g, 3, 79999));
	assert_false(fs_agino_valid(&f.g, 3, 80000));
	assert_false(fs_agino_valid(&f.g, 3, 10003 * 8 - 1));
}

static void test_agino_range_other_geometries(void **state)
{
	struct fx_params p;
	struct fx f;
	struct xfs_sb sb;

	(void)state;
	/* 4 KiB sectors: headers end at block 4, rounded up to 8 */
	fx_default_params(&p);
	p.sectsize = 4096;
	fx_init(&f, &p);
	assert_false(fs_agino_valid(&f.g, 0, 63));
	assert_true(fs_agino_valid(&f.g, 0, 64));

	/* 1 KiB blocks: headers end at block 2, alignment 32 blocks of 2 inodes */
	fx_default_params(&p);
	p.blocksize = 1024; p.agblocks = 65536; p.last_ag_blocks = 65536;
	fx_init(&f, &p);
	assert_false(fs_agino_valid(&f.g, 1, 63));
	assert_true(fs_agino_valid(&f.g, 1, 64));
	assert_true(fs_agino_valid(&f.g, 1, 65536 * 2 - 1));
	assert_false(fs_agino_valid(&f.g, 1, 65536 * 2));

	/* no inode alignment at all: the first inode sits right after the headers */
	fx_init_default(&f);
	sb = f.sb;
	sb.sb_versionnum &= ~XFS_SB_VERSION_ALIGNBIT;
	sb.sb_inoalignmt = 0;
	sb.sb_features_incompat &= ~XFS_SB_FEAT_INCOMPAT_SPINODES;
	sb.sb_spino_align = 0;
	assert_int_equal(fs_geom_derive(&sb, &f.g), 0);
	assert_int_equal(f.g.cluster_align, 1);
	assert_false(fs_agino_valid(&f.g, 0, 7));
	assert_true(fs_agino_valid(&f.g, 0, 8));
	assert_true(fs_agino_valid(&f.g, 3, 79999));
	assert_false(fs_agino_valid(&f.g, 3, 80000));
}

static void test_units(void **state)
{
	struct fx f;
	const struct fs_geom *g = &f.g;

	(void)state;
	fx_init_default(&f);
	/* a daddr is 512 bytes; 4 KiB blocks are 8 of them */
	assert_int_equal(fs_agbno_to_daddr(g, 0, 1), 8);
	assert_int_equal(fs_agbno_to_daddr(g, 1, 0), 16384 * 8);
	assert_int_equal(fs_ag_daddr(g, 3), 3ull * 16384 * 8);
	assert_int_equal(fs_daddr_to_bytes(fs_ag_daddr(g, 2)), 2ull * 16384 * 4096);
	/* fsblocks pack agno above agblklog bits */
	assert_int_equal(fs_agbno_to_fsb(g, 2, 5), (2ull << 14) | 5);
	assert_int_equal(fs_fsb_to_agno(g, (2ull << 14) | 5), 2);
	assert_int_equal(fs_fsb_to_agbno(g, (2ull << 14) | 5), 5);
	assert_int_equal(fs_fsb_to_daddr(g, (2ull << 14) | 5), (2ull * 16384 + 5) * 8);
	assert_true(fs_fsb_valid(g, fs_agbno_to_fsb(g, 3, 9999)));
	assert_false(fs_fsb_valid(g, fs_agbno_to_fsb(g, 3, 10000)));
	assert_false(fs_fsb_valid(g, fs_agbno_to_fsb(g, 4, 0)));
	assert_true(fs_fsb_valid(g, fs_agbno_to_fsb(g, 0, 16383)));
	/* LSN halves */
	assert_int_equal(fs_lsn_cycle(FX_HEAD_LSN), 5);
	assert_int_equal(fs_lsn_block(FX_HEAD_LSN), 100);
}

static void test_header_offsets(void **state)
{
	struct fx_params p;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	assert_int_equal(fs_ag_sb_offset(&f.g, 0), 0);
	assert_int_equal(fs_ag_agf_offset(&f.g, 0), 512);
	assert_int_equal(fs_ag_agi_offset(&f.g, 0), 1024);
	assert_int_equal(fs_ag_agfl_offset(&f.g, 0), 1536);
	assert_int_equal(fs_ag_sb_offset(&f.g, 3), 3ull * 16384 * 4096);
	assert_int_equal(fs_ag_agfl_offset(&f.g, 3), 3ull * 16384 * 4096 + 1536);
	/* the same order by sectors of 4 KiB */
	fx_default_params(&p);
	p.sectsize = 4096;
	fx_init(&f, &p);
	assert_int_equal(fs_ag_agf_offset(&f.g, 1), 16384ull * 4096 + 4096);
	assert_int_equal(fs_ag_agi_offset(&f.g, 1), 16384ull * 4096 + 8192);
	assert_int_equal(fs_ag_agfl_offset(&f.g, 1), 16384ull * 4096 + 12288);
}

static void test_agfl_active(void **state)
{
	struct fx f;
	struct fs_agf a;

	(void)state;
	fx_init_default(&f);
	memset(&a, 0, sizeof(a));
	/* empty */
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 0);
	/* contiguous */
	a.flfirst = 0; a.fllast = 3; a.flcount = 4;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 4);
	a.flfirst = 5; a.fllast = 5; a.flcount = 1;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 1);
	/* wrapping past the last slot (119 slots) */
	a.flfirst = 117; a.fllast = 1; a.flcount = 4;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 4);
	assert_int_equal(fs_agfl_slot(&f.g, &a, 0), 117);
	assert_int_equal(fs_agfl_slot(&f.g, &a, 1), 118);
	assert_int_equal(fs_agfl_slot(&f.g, &a, 2), 0);
	assert_int_equal(fs_agfl_slot(&f.g, &a, 3), 1);
	/* a full list */
	a.flfirst = 0; a.fllast = 118; a.flcount = 119;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 119);
	/* indexes outside the AGFL count nothing */
	a.flfirst = 119; a.fllast = 3; a.flcount = 4;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 0);
	a.flfirst = 0; a.fllast = 1000;
	assert_int_equal(fs_agfl_active_count(&f.g, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_sizes),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_geometries),
		cmocka_unit_test(test_maxlevels_large),
		cmocka_unit_test(test_meta_uuid),
		cmocka_unit_test(test_external_log),
		cmocka_unit_test(test_derive_refuses),
		cmocka_unit_test(test_agino_range),
		cmocka_unit_test(test_agino_range_unaligned_last_ag),
		cmocka_unit_test(test_agino_range_other_geometries),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_header_offsets),
		cmocka_unit_test(test_agfl_active),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
