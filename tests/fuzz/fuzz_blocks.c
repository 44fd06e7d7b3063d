// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz targets for the block decoders and verifiers below the AG headers:
 * one executable per verifier-table row (FUZZ_MTYPE, set by meson): inode
 * and free-inode btree blocks, bno/cnt/rmap/refcount btree blocks, bmbt
 * blocks, v3 dinodes and DA3 node blocks.  Each input is one raw block: it goes
 * through fs_verify() and then through the decoders a scan would call on
 * it (records and keys up to numrecs, record rules, fork pointers and
 * sizes, DA entries).  With clang -fsanitize=fuzzer (meson -Dfuzzers=true)
 * it is a libFuzzer target; otherwise main() replays a fixed stream of
 * mutated valid blocks (or writes them as a seed corpus with --seeds DIR).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/btree.h"
#include "libfs/format/bmap.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/crc.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

#ifndef FUZZ_MTYPE
#error "build with -DFUZZ_MTYPE=FS_MT_..."
#endif

#define BLKSZ 4096
#define AGNO 1
#define AGBLOCKS 16384

static struct fs_geom geom;

/* A plausible geometry: 4 KiB blocks, 512-byte inodes, 4 AGs, every v5 feature we decode. */
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
	memset(&sb.sb_uuid, 0x5a, sizeof(sb.sb_uuid));
	memset(&sb.sb_meta_uuid, 0x5a, sizeof(sb.sb_meta_uuid));
	fs_geom_derive(&sb, &geom);
}

static const struct fs_btree_ops *ops_of(enum fs_mtype t)
{
	switch (t) {
	case FS_MT_INOBT: return fs_btree_ops_get(FS_BTREE_INO);
	case FS_MT_FINOBT: return fs_btree_ops_get(FS_BTREE_FINO);
	case FS_MT_BNOBT: return fs_btree_ag_ops(FS_BTREE_AG_BNO);
	case FS_MT_CNTBT: return fs_btree_ag_ops(FS_BTREE_AG_CNT);
	case FS_MT_RMAPBT: return fs_btree_ag_ops(FS_BTREE_AG_RMAP);
	case FS_MT_REFCBT: return fs_btree_ag_ops(FS_BTREE_AG_REFC);
	case FS_MT_BMBT: return fs_btree_ops_get(FS_BTREE_BMBT);
	default: return NULL;
	}
}

static size_t buf_len(void)
{
	return FUZZ_MTYPE == FS_MT_INODE ? geom.inodesize : BLKSZ;
}

static void vctx(struct fs_vctx *c, struct fs_findings *fl)
{
	memset(c, 0, sizeof(*c));
	c->g = &geom;
	c->fl = fl;
	c->agno = AGNO;
	c->daddr = ((uint64_t)AGNO * AGBLOCKS + 100) << (geom.blocklog - 9);
	c->have_log_head = true;
	c->head_lsn = (1ull << 32) | 100;
	c->ino = ((uint64_t)AGNO << (geom.agblklog + geom.inopblog)) | 200;
}

/* The decoders a scan runs over a block that passed or failed verification. */
static volatile uint64_t sink;

static void decode_btree(const struct fs_btree_ops *ops, const unsigned char *buf)
{
	struct fs_btree_hdr h;
	bool leaf;
	uint32_t max, i;

	fs_btree_hdr_decode(ops, buf, &h);
	leaf = h.level == 0;
	max = fs_btree_maxrecs(ops, BLKSZ, leaf);
	if (h.numrecs > max)
		return;     /* what the walker does: such a block is reported, not read */
	for (i = 0; i < h.numrecs; i++) {
		if (!leaf) {
			const void *k = fs_btree_key(ops, buf, i);
			sink += fs_btree_ptr(ops, buf, BLKSZ, i);
			if (ops->key_cmp && i)
				sink += (uint64_t)ops->key_cmp(fs_btree_key(ops, buf, i - 1), k);
			continue;
		}
		const void *r = fs_btree_rec(ops, buf, i);
		if (ops->rec_key && ops->key_len <= 64) {
			unsigned char key[64];
			ops->rec_key(r, key);
			sink += key[0];
		}
		if (ops->rec_valid)
			sink += ops->rec_valid(&geom, AGNO, r);
		switch (FUZZ_MTYPE) {
		case FS_MT_INOBT:
		case FS_MT_FINOBT: {
			struct fs_inobt_rec ir;
			fs_inobt_rec_decode(&geom, r, &ir);
			sink += fs_inobt_rec_allocmask(&ir);
			sink += (uintptr_t)fs_inobt_rec_problem(&geom, AGNO, &ir);
			break;
		}
		case FS_MT_BNOBT:
		case FS_MT_CNTBT: {
			struct fs_alloc_rec ar;
			fs_alloc_rec_decode(r, &ar);
			sink += (uintptr_t)fs_alloc_rec_problem(&geom, AGNO, &ar);
			break;
		}
		case FS_MT_RMAPBT: {
			struct fs_rmap_rec rr;
			fs_rmap_rec_decode(r, &rr);
			sink += (uintptr_t)fs_rmap_rec_problem(&geom, AGNO, &rr);
			break;
		}
		case FS_MT_REFCBT: {
			struct fs_refc_rec cr;
			fs_refc_rec_decode(r, &cr);
			sink += (uintptr_t)fs_refc_rec_problem(&geom, AGNO, &cr);
			break;
		}
		case FS_MT_BMBT: {
			struct fs_bmap_ext e;
			fs_bmbt_rec_decode(r, &e);
			sink += e.startoff + e.startblock + e.blockcount;
			break;
		}
		default:
			break;
		}
	}
}

static void decode_inode(const unsigned char *buf)
{
	struct fs_inode ip;
	int w;

	fs_inode_decode(buf, &ip);
	sink += fs_inode_xflags(&ip) + fs_inode_bulkstat_rdev(ip.dev);
	sink += (uint64_t)fs_inode_decode_ts(get_be64(buf + offsetof(struct xfs_dinode, di_atime)),
					     ip.bigtime).sec;
	for (w = XFS_DATA_FORK; w <= XFS_ATTR_FORK; w++) {
		uint32_t sz = fs_inode_fork_size(&geom, &ip, w);
		const unsigned char *p = fs_inode_fork_ptr(buf, &ip, w);
		/* the fork must lie inside the inode buffer whatever forkoff says */
		if (p && sz) {
			if (p < buf || p + sz > buf + geom.inodesize)
				abort();
			sink += p[sz - 1];
		}
	}
}

static void decode_da_node(const struct fs_vctx *c, const unsigned char *buf)
{
	struct fs_da_node n;
	uint32_t i;

	if (fs_da3_node_decode(buf, BLKSZ, &n) != 0)
		return;
	for (i = 0; i < n.count; i++)
		sink += fs_da_node_hash(&n, i) + fs_da_node_before(&n, i);
	fs_da3_node_check_ptrs(c, &n, 5, 0, 1u << 20);
}

static void run_one(const uint8_t *data, size_t size)
{
	_Alignas(8) static unsigned char buf[BLKSZ];
	struct fs_findings fl;
	struct fs_vctx c;
	size_t len = buf_len();

	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, size < len ? size : len);
	fs_findings_init(&fl);
	vctx(&c, &fl);
	fs_verify(FUZZ_MTYPE, &c, buf, len);
	if (ops_of(FUZZ_MTYPE))
		decode_btree(ops_of(FUZZ_MTYPE), buf);
	else if (FUZZ_MTYPE == FS_MT_INODE)
		decode_inode(buf);
	else if (FUZZ_MTYPE == FS_MT_DA_NODE)
		decode_da_node(&c, buf);
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
static size_t crc_off(void)
{
	return fs_verifier_get(FUZZ_MTYPE)->crc_off;
}

/* xorshift: a fixed stream, so a failure replays exactly */
static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A valid block of the target's type (level 0 or 1, CRC correct), so mutations reach the field rules. */
static void seed(unsigned char *out, unsigned variant)
{
	struct fs_vctx c;
	size_t len = buf_len();
	const struct fs_btree_ops *ops = ops_of(FUZZ_MTYPE);

	memset(out, 0, BLKSZ);
	vctx(&c, NULL);
	if (ops && ops->long_format) {
		/* a bmbt block of the inode c.ino: one-block mappings at even offsets */
		struct xfs_btree_block *b = (void *)out;
		uint16_t level = variant % 2, n = 1 + variant % 20;
		size_t maxr = fs_btree_maxrecs(ops, BLKSZ, false);
		b->bb_magic = to_be32(ops->magic);
		b->bb_level = to_be16(level);
		b->bb_numrecs = to_be16(n);
		b->bb_u.l.bb_leftsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_rightsib = to_be64(NULLFSBLOCK);
		b->bb_u.l.bb_blkno = to_be64(c.daddr);
		b->bb_u.l.bb_lsn = to_be64((1ull << 32) | 50);
		memcpy(&b->bb_u.l.bb_uuid, geom.meta_uuid, 16);
		b->bb_u.l.bb_owner = to_be64(c.ino);
		for (uint16_t i = 0; i < n; i++) {
			fs_fsblock_t fsb = fs_agbno_to_fsb(&geom, AGNO, 300 + 2 * i);
			if (level) {
				put_be64((unsigned char *)fs_btree_key(ops, out, i), 100u * i);
				put_be64(out + fs_btree_hdr_len(ops) + maxr * ops->key_len + i * ops->ptr_len,
					 fsb);
			} else {
				struct fs_bmap_ext e = { .startoff = 2u * i, .startblock = fsb,
							 .blockcount = 1 };
				fs_bmbt_rec_encode(&e, (void *)fs_btree_rec(ops, out, i));
			}
		}
	} else if (ops) {
		struct xfs_btree_block *b = (void *)out;
		uint16_t level = variant % 2, n = 1 + variant % 20;
		b->bb_magic = to_be32(ops->magic);
		b->bb_level = to_be16(level);
		b->bb_numrecs = to_be16(n);
		b->bb_u.s.bb_leftsib = to_be32(NULLAGBLOCK);
		b->bb_u.s.bb_rightsib = to_be32(NULLAGBLOCK);
		b->bb_u.s.bb_blkno = to_be64(c.daddr);
		b->bb_u.s.bb_lsn = to_be64((1ull << 32) | 50);
		memcpy(&b->bb_u.s.bb_uuid, geom.meta_uuid, 16);
		b->bb_u.s.bb_owner = to_be32(AGNO);
		for (uint16_t i = 0; i < n; i++) {
			uint32_t start = 64 + 16 * i;
			if (level) {
				unsigned char *k = (unsigned char *)fs_btree_key(ops, out, i);
				/* every key type starts with a be32 start (block or agino) */
				put_be32(k, FUZZ_MTYPE == FS_MT_INOBT || FUZZ_MTYPE == FS_MT_FINOBT ?
					 start * 64 : start);
				if (FUZZ_MTYPE == FS_MT_CNTBT)
					put_be32(k, 2), put_be32(k + 4, start);
				continue;
			}
			unsigned char *r = (unsigned char *)fs_btree_rec(ops, out, i);
			switch (FUZZ_MTYPE) {
			case FS_MT_INOBT:
			case FS_MT_FINOBT:
				put_be32(r, start * 64);              /* startino (agino) */
				put_be16(r + 4, 0);                   /* holemask */
				r[6] = 64;                            /* count */
				r[7] = 2;                             /* freecount */
				put_be64(r + 8, 3);                   /* free mask */
				break;
			case FS_MT_BNOBT:
			case FS_MT_CNTBT:
				put_be32(r, FUZZ_MTYPE == FS_MT_CNTBT ? (uint32_t)(64 + 16 * (n - 1 - i)) : start);
				put_be32(r + 4, FUZZ_MTYPE == FS_MT_CNTBT ? 2 + i : 2);
				break;
			case FS_MT_RMAPBT:
				put_be32(r, start);
				put_be32(r + 4, 4);
				put_be64(r + 8, 131 + i);             /* owner: an inode */
				put_be64(r + 16, 8 * i);              /* offset */
				break;
			case FS_MT_REFCBT:
				put_be32(r, start);
				put_be32(r + 4, 4);
				put_be32(r + 8, 2);
				break;
			default:
				break;
			}
		}
		if (level)
			for (uint16_t i = 0; i < n; i++) {
				/* pointers: blocks inside the AG past its headers */
				size_t maxr = fs_btree_maxrecs(ops, BLKSZ, false);
				unsigned char *p = out + fs_btree_hdr_len(ops) +
					maxr * ops->key_len * (ops->overlapping ? 2 : 1) + i * ops->ptr_len;
				put_be32(p, 200 + i);
			}
	} else if (FUZZ_MTYPE == FS_MT_INODE) {
		struct xfs_dinode *d = (void *)out;
		d->di_magic = to_be16(XFS_DINODE_MAGIC);
		d->di_version = 3;
		d->di_mode = to_be16((variant % 3 == 0 ? 0040755 : variant % 3 == 1 ? 0100644 : 0120777));
		d->di_format = variant % 2 || variant % 3 == 1 ? XFS_DINODE_FMT_EXTENTS :
			       XFS_DINODE_FMT_LOCAL;
		d->di_nlink = to_be32(1);
		d->di_next_unlinked = to_be32(NULLAGINO);
		d->di_ino = to_be64(c.ino);
		memcpy(&d->di_uuid, geom.meta_uuid, 16);
		d->di_forkoff = variant % 4 == 0 ? 0 : 15;
		d->di_aformat = d->di_forkoff ? XFS_DINODE_FMT_LOCAL : XFS_DINODE_FMT_EXTENTS;
		d->di_flags2 = to_be64(XFS_DIFLAG2_BIGTIME | XFS_DIFLAG2_NREXT64);
		d->di_lsn = to_be64((1ull << 32) | 50);
		if (d->di_format == XFS_DINODE_FMT_EXTENTS) {
			/* two extents of one block: startoff 0 and 2 */
			unsigned char *e = out + sizeof(*d);
			d->di_big_nextents = to_be64(2);
			d->di_nblocks = to_be64(2);
			d->di_size = to_be64(3 * BLKSZ);
			put_be64(e, ((uint64_t)0 << 9) | ((uint64_t)(AGBLOCKS + 300) >> 43));
			put_be64(e + 8, ((uint64_t)(AGBLOCKS + 300) << 21) | 1);
			put_be64(e + 16, ((uint64_t)2 << 9));
			put_be64(e + 24, ((uint64_t)(AGBLOCKS + 310) << 21) | 1);
		} else {
			/* a short-form directory with no entries, or a symlink target */
			d->di_size = to_be64(6);
			if (variant % 3 == 2)
				memcpy(out + sizeof(*d), "target", 6);
		}
	} else if (FUZZ_MTYPE == FS_MT_DA_NODE) {
		struct xfs_da3_intnode *nd = (void *)out;
		uint16_t n = 2 + variant % 30;
		nd->hdr.info.hdr.magic = to_be16(XFS_DA3_NODE_MAGIC);
		nd->hdr.info.blkno = to_be64(c.daddr);
		nd->hdr.info.owner = to_be64(c.ino);
		nd->hdr.info.lsn = to_be64((1ull << 32) | 50);
		memcpy(&nd->hdr.info.uuid, geom.meta_uuid, 16);
		nd->hdr.__count = to_be16(n);
		nd->hdr.__level = to_be16(1 + variant % 2);
		for (uint16_t i = 0; i < n; i++) {
			nd->__btree[i].hashval = to_be32(1000u * (i + 1));
			nd->__btree[i].before = to_be32(10 + i);
		}
	}
	if (crc_off() != SIZE_MAX)
		fs_crc_update(out, len, crc_off());
}

#define STR2(x) #x
#define STR(x) STR2(x)

int main(int argc, char **argv)
{
	_Alignas(8) static unsigned char in[BLKSZ];
	unsigned long iters = 200000;
	size_t len;

	init_geom();
	len = buf_len();
	if (argc > 2 && strcmp(argv[1], "--seeds") == 0) {
		/* a seed corpus for libFuzzer: valid blocks of every variant */
		for (unsigned v = 0; v < 16; v++) {
			char path[4096];
			FILE *f;
			seed(in, v);
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
	/* the seeds themselves must verify clean: otherwise mutations test nothing */
	for (unsigned v = 0; v < 16; v++) {
		struct fs_findings fl;
		struct fs_vctx c;
		int n;
		seed(in, v);
		fs_findings_init(&fl);
		vctx(&c, &fl);
		n = fs_verify(FUZZ_MTYPE, &c, in, len);
		if (n) {
			printf("1..1\nnot ok 1 - seed %u of %s verifies clean (%d findings: %s %s)\n", v,
			       STR(FUZZ_MTYPE), n, fl.n ? fl.v[0].def->code : "", fl.n ? fl.v[0].message : "");
			fs_findings_free(&fl);
			return 1;
		}
		fs_findings_free(&fl);
	}
	for (unsigned long i = 0; i < iters; i++) {
		int flips = 1 + (int)(next() % 8);
		if (i % 16 == 15) {
			for (size_t j = 0; j < len; j++)
				in[j] = (uint8_t)next();
		} else {
			seed(in, (unsigned)(next() % 16));
			for (int f = 0; f < flips; f++) {
				size_t pos = next() % len;
				/* mostly in the header and the first records, where the rules are */
				if (next() % 4)
					pos = next() % (len < 256 ? len : 256);
				in[pos] = (next() % 3) ? (uint8_t)next() : (uint8_t)(in[pos] ^ (1u << (next() % 8)));
			}
			/* half the time keep the CRC valid so field rules are reached */
			if (next() % 2 && crc_off() != SIZE_MAX)
				fs_crc_update(in, len, crc_off());
		}
		run_one(in, len);
	}
	printf("1..2\nok 1 - 16 seed blocks of %s verify clean\n"
	       "ok 2 - %lu mutated %s blocks verified and decoded without a crash\n",
	       STR(FUZZ_MTYPE), iters, STR(FUZZ_MTYPE));
	return 0;
}
#endif
