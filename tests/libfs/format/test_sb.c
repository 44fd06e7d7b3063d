// SPDX-License-Identifier: GPL-2.0
/*
 * Superblocks: decode/encode round trip, a clean mkfs-shaped superblock
 * verifies without findings (primary and secondary, in every feature
 * variant), every field rule of fs_sb_verify fires with its exact code and
 * field when that one field is broken (CRC kept valid unless the CRC is the
 * point), and fs_sb_compare_secondary names each differing geometry field.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/libfs/fixture.h"

#define BUFSZ XFS_MAX_SECTORSIZE

/* --- decode / encode ------------------------------------------------------ */

static void test_roundtrip(void **state)
{
	_Alignas(8) unsigned char in[sizeof(struct xfs_dsb)], out[sizeof(struct xfs_dsb)];
	struct xfs_dsb *d = (struct xfs_dsb *)in;
	struct xfs_sb sb;
	uint32_t seed = 99;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++) {
		seed = seed * 1664525u + 1013904223u;
		in[i] = (unsigned char)(seed >> 24);
	}
	d->sb_bad_features2 = d->sb_features2;	/* the encoder always mirrors it */
	fs_sb_from_disk(&sb, d);
	fs_sb_to_disk((struct xfs_dsb *)out, &sb);
	/* every byte survives except the CRC, which encoding leaves to the caller */
	assert_memory_equal(in, out, FS_SB_CRC_OFF);
	assert_memory_equal(in + FS_SB_CRC_OFF + 4, out + FS_SB_CRC_OFF + 4,
			    sizeof(in) - FS_SB_CRC_OFF - 4);

	/* spot checks of widths and byte order, read straight from the buffer */
	assert_int_equal(sb.sb_magicnum, get_be32(in + offsetof(struct xfs_dsb, sb_magicnum)));
	assert_int_equal(sb.sb_dblocks, get_be64(in + offsetof(struct xfs_dsb, sb_dblocks)));
	assert_int_equal(sb.sb_versionnum, get_be16(in + offsetof(struct xfs_dsb, sb_versionnum)));
	assert_int_equal(sb.sb_blocklog, in[offsetof(struct xfs_dsb, sb_blocklog)]);
	assert_int_equal(sb.sb_logsunit, get_be32(in + offsetof(struct xfs_dsb, sb_logsunit)));
	assert_int_equal(sb.sb_features_incompat,
			 get_be32(in + offsetof(struct xfs_dsb, sb_features_incompat)));
	assert_int_equal(sb.sb_pquotino, get_be64(in + offsetof(struct xfs_dsb, sb_pquotino)));
	assert_int_equal(sb.sb_lsn, get_be64(in + offsetof(struct xfs_dsb, sb_lsn)));
	assert_int_equal(sb.sb_crc, fs_crc_stored(in, FS_SB_CRC_OFF));
	assert_memory_equal(&sb.sb_meta_uuid, in + offsetof(struct xfs_dsb, sb_meta_uuid), 16);
	assert_memory_equal(sb.sb_fname, in + offsetof(struct xfs_dsb, sb_fname), XFSLABEL_MAX);
}

/* --- clean variants ------------------------------------------------------- */

static void variant_default(struct fx_params *p) { (void)p; }
static void variant_rmap(struct fx_params *p) { p->rmapbt = true; }
static void variant_plain(struct fx_params *p)
{
	p->finobt = p->reflink = p->inobtcount = p->spinodes = false;
}
static void variant_sect4k(struct fx_params *p) { p->sectsize = 4096; }
static void variant_meta_uuid(struct fx_params *p) { p->meta_uuid = true; }
static void variant_1k(struct fx_params *p)
{
	p->blocksize = 1024; p->inodesize = 512; p->agblocks = 65536; p->last_ag_blocks = 20000;
}
static void variant_64k(struct fx_params *p)
{
	p->blocksize = 65536; p->inodesize = 2048; p->agblocks = 4096; p->last_ag_blocks = 300;
	p->dirblklog = 0;
}
static void variant_64k_512(struct fx_params *p)
{
	/* mkfs 6.1 makes inoalignmt 0 and spino_align 0 here: chunks are smaller than a block */
	p->blocksize = 65536; p->inodesize = 512; p->agblocks = 4096; p->last_ag_blocks = 4096;
	p->rmapbt = true;
}
static void variant_dir(struct fx_params *p) { p->dirblklog = 4; }

struct variant {
	const char *name;
	void (*fn)(struct fx_params *p);
};

static const struct variant variants[] = {
	{ "default", variant_default }, { "rmapbt", variant_rmap }, { "plain", variant_plain },
	{ "sect4k", variant_sect4k }, { "meta_uuid", variant_meta_uuid }, { "1k", variant_1k },
	{ "64k", variant_64k }, { "64k-512", variant_64k_512 }, { "dirblk64k", variant_dir },
};

static void make_variant(struct fx *f, void (*fn)(struct fx_params *))
{
	struct fx_params p;

	fx_default_params(&p);
	fn(&p);
	fx_init(f, &p);
}

static void test_clean_variants(void **state)
{
	_Alignas(8) unsigned char buf[BUFSZ];

	(void)state;
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		struct fx f;
		struct fs_findings fl;

		make_variant(&f, variants[i].fn);
		fx_sb_encode(&f.sb, buf, sizeof(buf));
		for (uint32_t agno = 0; agno < f.sb.sb_agcount; agno++) {
			enum fs_sb_state st;

			fs_findings_init(&fl);
			st = fs_sb_verify(buf, sizeof(buf), agno, &fl);
			if (st != FS_SB_OK || fl.n) {
				print_message("# variant %s AG %u: state %d\n", variants[i].name, agno, st);
				fx_dump(&fl);
			}
			assert_int_equal(st, FS_SB_OK);
			assert_int_equal(fl.n, 0);
			fs_findings_free(&fl);
		}
		/* the verifier table's superblock row says the same */
		fs_findings_init(&fl);
		struct fs_vctx c = fx_vctx(&f, 1, &fl);
		assert_int_equal(fs_verify(FS_MT_SB, &c, buf, f.g.sectsize), 0);
		fs_findings_free(&fl);
	}
}

/* --- one broken field at a time ------------------------------------------- */

/* -1: any state */
#define ANY (-1)

struct sb_case {
	const char *name;
	void (*variant)(struct fx_params *p);  /* NULL: default */
	void (*mut)(struct xfs_sb *sb);        /* host-form change, CRC re-stamped */
	void (*raw)(unsigned char *buf, const struct xfs_sb *sb); /* byte change after encoding */
	bool raw_recrc;                        /* re-stamp the CRC after raw */
	uint32_t agno;
	const char *code, *field;
	int state;
};

#define M(name, body) static void m_##name(struct xfs_sb *sb) { body; }

M(magic, sb->sb_magicnum = 0x58465343)
M(v4, sb->sb_versionnum = (sb->sb_versionnum & ~XFS_SB_VERSION_NUMBITS) | XFS_SB_VERSION_4)
M(v1, sb->sb_versionnum = (sb->sb_versionnum & ~XFS_SB_VERSION_NUMBITS) | XFS_SB_VERSION_1)
M(v0, sb->sb_versionnum &= ~XFS_SB_VERSION_NUMBITS)
M(v6, sb->sb_versionnum = (sb->sb_versionnum & ~XFS_SB_VERSION_NUMBITS) | 6)
M(incompat_unknown, sb->sb_features_incompat |= 1u << 31)
M(ro_compat_unknown, sb->sb_features_ro_compat |= 1u << 30)
M(compat_unknown, sb->sb_features_compat |= 1u << 5)
M(features2_nocrc, sb->sb_features2 &= ~XFS_SB_VERSION2_CRCBIT)
M(log_incompat_unknown, sb->sb_features_log_incompat |= 1u << 20)
M(inprogress, sb->sb_inprogress = 1)
M(sectsize_odd, sb->sb_sectsize = 1000)
M(sectsize_small, sb->sb_sectsize = 256; sb->sb_sectlog = 8)
M(sectsize_zero, sb->sb_sectsize = 0)
M(sectlog, sb->sb_sectlog = 10)
M(blocksize_zero, sb->sb_blocksize = 0)
M(blocksize_odd, sb->sb_blocksize = 3000)
M(blocksize_512, sb->sb_blocksize = 512; sb->sb_blocklog = 9; sb->sb_inopblock = 1; sb->sb_inopblog = 0)
M(blocklog, sb->sb_blocklog = 13)
M(block_lt_sect, sb->sb_sectsize = 4096; sb->sb_sectlog = 12; sb->sb_blocksize = 2048;
  sb->sb_blocklog = 11; sb->sb_inopblock = 4; sb->sb_inopblog = 2; sb->sb_inoalignmt = 16;
  sb->sb_spino_align = 8; sb->sb_agblocks = 32768; sb->sb_agblklog = 15;
  sb->sb_dblocks = 3 * 32768 + 20000)
M(dirblklog, sb->sb_dirblklog = 5)
M(inodesize_odd, sb->sb_inodesize = 384)
M(inodesize_big, sb->sb_inodesize = 4096; sb->sb_inodelog = 12; sb->sb_inopblock = 1; sb->sb_inopblog = 0)
M(inodelog, sb->sb_inodelog = 10)
M(inopblock, sb->sb_inopblock = 7)
M(inopblog, sb->sb_inopblog = 4)
M(imax_pct, sb->sb_imax_pct = 101)
M(inoalignmt_sparse, sb->sb_inoalignmt = 4)
M(spino_align, sb->sb_spino_align = 8)
M(inoalignmt_plain, sb->sb_inoalignmt = 3)
M(spino_align_plain, sb->sb_spino_align = 4)
M(agcount_zero, sb->sb_agcount = 0)
M(agcount_wrong, sb->sb_agcount = 5)
M(agblocks_small, sb->sb_agblocks = 100; sb->sb_agblklog = 7)
M(agblklog, sb->sb_agblklog = 15)
M(dblocks_zero, sb->sb_dblocks = 0)
M(dblocks_big, sb->sb_dblocks = 4ull * 16384 + 1)
M(dblocks_tiny_last, sb->sb_dblocks = 3ull * 16384 + 10)
M(shared_vn, sb->sb_shared_vn = 1)
M(qflags_oquota, sb->sb_qflags = XFS_OQUOTA_ENFD)
M(logblocks_small, sb->sb_logblocks = 100)
M(logblocks_big, sb->sb_logblocks = 600000)
M(logstart_hdr, sb->sb_logstart = (2ull << 14) | 1)
M(logstart_agno, sb->sb_logstart = 9ull << 14)
M(logstart_cross, sb->sb_logstart = (2ull << 14) | 16000)
M(logstart_past_end, sb->sb_logstart = (3ull << 14) | 9500)
M(logsunit_odd, sb->sb_logsunit = 1000)
M(logsunit_big, sb->sb_logsunit = 512 * 1024)
M(logsect_nobit, sb->sb_logsectsize = 4096; sb->sb_logsectlog = 12)
M(logsect_mismatch, sb->sb_logsectsize = 2048)
M(rextsize_zero, sb->sb_rextsize = 0)
M(rextsize_big, sb->sb_rextsize = 1u << 20)
M(rextents, sb->sb_rextents = 5)
M(rbmblocks, sb->sb_rbmblocks = 1)
M(rextslog, sb->sb_rextslog = 3)
M(frextents, sb->sb_frextents = 2)
M(rt_ok, sb->sb_rblocks = 100000; sb->sb_rextents = 100000; sb->sb_rextslog = 16;
  sb->sb_rbmblocks = 4; sb->sb_frextents = 100000)
M(rt_rextents, m_rt_ok(sb); sb->sb_rextents = 99999)
M(rt_rextslog, m_rt_ok(sb); sb->sb_rextslog = 17)
M(rt_rbmblocks, m_rt_ok(sb); sb->sb_rbmblocks = 5)
M(rt_frextents, m_rt_ok(sb); sb->sb_frextents = 100001)
M(dalign_ok, sb->sb_versionnum |= XFS_SB_VERSION_DALIGNBIT; sb->sb_unit = 16; sb->sb_width = 64)
M(dalign_unit0, m_dalign_ok(sb); sb->sb_unit = 0)
M(dalign_unit_odd, m_dalign_ok(sb); sb->sb_unit = 3; sb->sb_width = 9)
M(dalign_width0, m_dalign_ok(sb); sb->sb_width = 0)
M(dalign_width_odd, m_dalign_ok(sb); sb->sb_width = 24)
M(nodalign_unit, sb->sb_unit = 16; sb->sb_width = 64)
M(icount_odd, sb->sb_icount = 65)
M(icount_huge, sb->sb_icount = ((4ull * 16384) << 3) + 64)
M(ifree, sb->sb_ifree = 65)
M(fdblocks, sb->sb_fdblocks = 3ull * 16384 + 10001)
M(rootino, sb->sb_rootino = 5)
M(rootino_null, sb->sb_rootino = NULLFSINO)
M(rootino_past_end, sb->sb_rootino = ((uint64_t)4 << 17) | 64)
M(rbmino, sb->sb_rbmino = 1ull << 40)
M(rsumino, sb->sb_rsumino = 3)
M(uquotino, sb->sb_uquotino = 0xdeadbeefcafeull)
M(gquotino, sb->sb_gquotino = 1)
M(pquotino, sb->sb_pquotino = ((uint64_t)3 << 17) | 80000)
M(flags, sb->sb_flags = 0x90)
M(flags_readonly, sb->sb_flags = XFS_SBF_READONLY)
M(quotabit_noino, sb->sb_versionnum |= XFS_SB_VERSION_QUOTABIT)
M(rbmino_null, sb->sb_rbmino = NULLFSINO)
M(rsumino_null, sb->sb_rsumino = NULLFSINO)
/* a primary names its realtime inodes (xfs_repair resets NULL there); quota inodes may be NULL */
M(inodes_ok, sb->sb_uquotino = NULLFSINO;
  sb->sb_gquotino = 0; sb->sb_pquotino = sb->sb_rootino + 3;
  sb->sb_versionnum |= XFS_SB_VERSION_QUOTABIT)
M(meta_uuid_flip, sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_META_UUID;
  memset(&sb->sb_meta_uuid, 0x11, 16))

static void r_crc(unsigned char *buf, const struct xfs_sb *sb)
{
	(void)sb;
	buf[FS_SB_CRC_OFF] ^= 0x01;
}
static void r_data_flip(unsigned char *buf, const struct xfs_sb *sb)
{
	(void)sb;
	buf[offsetof(struct xfs_dsb, sb_fname)] ^= 0x20;	/* a field no rule looks at */
}
static void r_bad_features2(unsigned char *buf, const struct xfs_sb *sb)
{
	put_be32(buf + offsetof(struct xfs_dsb, sb_bad_features2),
		 sb->sb_features2 ^ XFS_SB_VERSION2_PROJID32BIT);
}
static void r_garbage(unsigned char *buf, const struct xfs_sb *sb)
{
	(void)sb;
	buf[FS_DSB_SIZE + 10] = 0x42;
}
static void r_meta_uuid_unused(unsigned char *buf, const struct xfs_sb *sb)
{
	(void)sb;
	buf[offsetof(struct xfs_dsb, sb_meta_uuid) + 3] = 7;	/* no meta_uuid feature */
}
static void r_garbage_last(unsigned char *buf, const struct xfs_sb *sb)
{
	buf[sb->sb_sectsize - 1] = 0x42;
}

#define C(n, var, code, field, st) { #n, var, m_##n, NULL, false, 0, code, field, st }
#define C2(n, var, ag, code, field, st) { #n, var, m_##n, NULL, false, ag, code, field, st }
#define R(n, fn, recrc, var, code, field, st) { #n, var, NULL, fn, recrc, 0, code, field, st }

static const struct sb_case cases[] = {
	C(magic, NULL, "sb.magic", "magicnum", FS_SB_NOT_XFS),
	C(v4, NULL, "sb.version", "versionnum", FS_SB_V4),
	C(v1, NULL, "sb.version", "versionnum", FS_SB_V4),
	C(v0, NULL, "sb.version", "versionnum", FS_SB_UNUSABLE),
	C(v6, NULL, "sb.version", "versionnum", FS_SB_UNUSABLE),
	R(crc, r_crc, false, NULL, "sb.crc", "crc", FS_SB_DAMAGED),
	R(data_flip, r_data_flip, false, NULL, "sb.crc", "crc", FS_SB_DAMAGED),
	R(data_flip_4k, r_data_flip, false, variant_sect4k, "sb.crc", "crc", FS_SB_DAMAGED),
	C(incompat_unknown, NULL, "sb.feature", "features_incompat", FS_SB_UNSUPPORTED),
	C(ro_compat_unknown, NULL, "sb.feature", "features_ro_compat", FS_SB_UNSUPPORTED),
	/* unknown compat bits are harmless by definition: said (info), not refused */
	C(compat_unknown, NULL, "sb.compat_unknown", "features_compat", FS_SB_OK),
	C(features2_nocrc, NULL, "sb.feature", "features2", FS_SB_DAMAGED),
	R(bad_features2, r_bad_features2, true, NULL, "sb.feature", "bad_features2", FS_SB_DAMAGED),
	C(log_incompat_unknown, NULL, "sb.feature", "features_log_incompat", FS_SB_DAMAGED),
	C(inprogress, NULL, "sb.inprogress", "inprogress", FS_SB_DAMAGED),
	C(sectsize_odd, NULL, "sb.geometry", "sectsize", FS_SB_UNUSABLE),
	C(sectsize_small, NULL, "sb.geometry", "sectsize", FS_SB_UNUSABLE),
	C(sectsize_zero, NULL, "sb.geometry", "sectsize", FS_SB_UNUSABLE),
	C(sectlog, NULL, "sb.geometry", "sectlog", FS_SB_UNUSABLE),
	C(blocksize_zero, NULL, "sb.geometry", "blocksize", FS_SB_UNUSABLE),
	C(blocksize_odd, NULL, "sb.geometry", "blocksize", FS_SB_UNUSABLE),
	C(blocksize_512, NULL, "sb.geometry", "blocksize", FS_SB_UNUSABLE),
	C(blocklog, NULL, "sb.geometry", "blocklog", FS_SB_UNUSABLE),
	C(block_lt_sect, NULL, "sb.geometry", "blocksize", FS_SB_UNUSABLE),
	C(dirblklog, NULL, "sb.geometry", "dirblklog", FS_SB_UNUSABLE),
	C(inodesize_odd, NULL, "sb.inodes", "inodesize", FS_SB_UNUSABLE),
	C(inodesize_big, NULL, "sb.inodes", "inodesize", FS_SB_UNUSABLE),
	C(inodelog, NULL, "sb.inodes", "inodelog", FS_SB_UNUSABLE),
	C(inopblock, NULL, "sb.inodes", "inopblock", FS_SB_UNUSABLE),
	C(inopblog, NULL, "sb.inodes", "inopblog", FS_SB_UNUSABLE),
	C(imax_pct, NULL, "sb.inodes", "imax_pct", FS_SB_DAMAGED),
	C(inoalignmt_sparse, NULL, "sb.inodes", "inoalignmt", FS_SB_UNUSABLE),
	C(spino_align, NULL, "sb.inodes", "spino_align", FS_SB_UNUSABLE),
	C(inoalignmt_plain, variant_plain, "sb.inodes", "inoalignmt", FS_SB_UNUSABLE),
	C(spino_align_plain, variant_plain, "sb.inodes", "spino_align", FS_SB_DAMAGED),
	C(agcount_zero, NULL, "sb.geometry", "agcount", FS_SB_UNUSABLE),
	C(agcount_wrong, NULL, "sb.geometry", "agcount", FS_SB_UNUSABLE),
	C(agblocks_small, NULL, "sb.geometry", "agblocks", FS_SB_UNUSABLE),
	C(agblklog, NULL, "sb.geometry", "agblklog", FS_SB_UNUSABLE),
	C(dblocks_zero, NULL, "sb.geometry", "dblocks", FS_SB_UNUSABLE),
	C(dblocks_big, NULL, "sb.geometry", "dblocks", FS_SB_UNUSABLE),
	C(dblocks_tiny_last, NULL, "sb.geometry", "dblocks", FS_SB_UNUSABLE),
	C(shared_vn, NULL, "sb.geometry", "shared_vn", FS_SB_DAMAGED),
	C(qflags_oquota, NULL, "sb.quota", "qflags", FS_SB_DAMAGED),
	C(logblocks_small, NULL, "sb.log", "logblocks", FS_SB_UNUSABLE),
	C(logblocks_big, NULL, "sb.log", "logblocks", FS_SB_UNUSABLE),
	C(logstart_hdr, NULL, "sb.log", "logstart", FS_SB_UNUSABLE),
	C(logstart_agno, NULL, "sb.log", "logstart", FS_SB_UNUSABLE),
	C(logstart_cross, NULL, "sb.log", "logstart", FS_SB_UNUSABLE),
	C(logstart_past_end, NULL, "sb.log", "logstart", FS_SB_UNUSABLE),
	C(logsunit_odd, NULL, "sb.log", "logsunit", FS_SB_DAMAGED),
	C(logsunit_big, NULL, "sb.log", "logsunit", FS_SB_DAMAGED),
	C(logsect_nobit, NULL, "sb.log", "logsectsize", FS_SB_DAMAGED),
	C(logsect_mismatch, variant_sect4k, "sb.log", "logsectsize", FS_SB_DAMAGED),
	C(rextsize_zero, NULL, "sb.rtgeometry", "rextsize", FS_SB_DAMAGED),
	C(rextsize_big, NULL, "sb.rtgeometry", "rextsize", FS_SB_DAMAGED),
	C(rextents, NULL, "sb.rtgeometry", "rextents", FS_SB_DAMAGED),
	C(rbmblocks, NULL, "sb.rtgeometry", "rbmblocks", FS_SB_DAMAGED),
	C(rextslog, NULL, "sb.rtgeometry", "rextslog", FS_SB_DAMAGED),
	C(frextents, NULL, "sb.rtgeometry", "frextents", FS_SB_DAMAGED),
	C(rt_rextents, NULL, "sb.rtgeometry", "rextents", FS_SB_DAMAGED),
	C(rt_rextslog, NULL, "sb.rtgeometry", "rextslog", FS_SB_DAMAGED),
	C(rt_rbmblocks, NULL, "sb.rtgeometry", "rbmblocks", FS_SB_DAMAGED),
	C(rt_frextents, NULL, "sb.counter", "frextents", FS_SB_DAMAGED),
	C(dalign_unit0, NULL, "sb.stripe", "unit", FS_SB_DAMAGED),
	C(dalign_unit_odd, NULL, "sb.stripe", "unit", FS_SB_DAMAGED),
	C(dalign_width0, NULL, "sb.stripe", "width", FS_SB_DAMAGED),
	C(dalign_width_odd, NULL, "sb.stripe", "width", FS_SB_DAMAGED),
	C(nodalign_unit, NULL, "sb.stripe", "unit", FS_SB_DAMAGED),
	C(icount_odd, NULL, "sb.counter", "icount", FS_SB_DAMAGED),
	C(icount_huge, NULL, "sb.counter", "icount", FS_SB_DAMAGED),
	C(ifree, NULL, "sb.counter", "ifree", FS_SB_DAMAGED),
	C(fdblocks, NULL, "sb.counter", "fdblocks", FS_SB_DAMAGED),
	C(rootino, NULL, "sb.inodes", "rootino", FS_SB_DAMAGED),
	C(rootino_null, NULL, "sb.inodes", "rootino", FS_SB_DAMAGED),
	C(rootino_past_end, NULL, "sb.inodes", "rootino", FS_SB_DAMAGED),
	C(rbmino, NULL, "sb.rtgeometry", "rbmino", FS_SB_DAMAGED),
	C(rsumino, NULL, "sb.rtgeometry", "rsumino", FS_SB_DAMAGED),
	C(rbmino_null, NULL, "sb.rtgeometry", "rbmino", FS_SB_DAMAGED),
	C(rsumino_null, NULL, "sb.rtgeometry", "rsumino", FS_SB_DAMAGED),
	C(uquotino, NULL, "sb.quota", "uquotino", FS_SB_DAMAGED),
	C(gquotino, NULL, "sb.quota", "gquotino", FS_SB_DAMAGED),
	C(pquotino, NULL, "sb.quota", "pquotino", FS_SB_DAMAGED),
	C2(rootino, NULL, 2, "sb.inodes", "rootino", FS_SB_DAMAGED),
	C2(uquotino, NULL, 1, "sb.quota", "uquotino", FS_SB_DAMAGED),
	C(flags, NULL, "sb.feature", "flags", FS_SB_DAMAGED),
	C(flags_readonly, NULL, "sb.feature", "flags", FS_SB_DAMAGED),
	C2(flags, NULL, 3, "sb.feature", "flags", FS_SB_DAMAGED),
	C(quotabit_noino, NULL, "sb.quota", "versionnum", FS_SB_DAMAGED),
	R(meta_uuid_unused, r_meta_uuid_unused, true, NULL, "sb.garbage", "byte 251", FS_SB_DAMAGED),
	R(garbage, r_garbage, true, NULL, "sb.garbage", NULL, FS_SB_DAMAGED),
	R(garbage_4k_last, r_garbage_last, true, variant_sect4k, "sb.garbage", NULL, FS_SB_DAMAGED),
	/* the same garbage without a fresh CRC: both findings */
	R(garbage_nocrc, r_garbage, false, NULL, "sb.crc", "crc", FS_SB_DAMAGED),
	R(garbage_nocrc2, r_garbage, false, NULL, "sb.garbage", NULL, FS_SB_DAMAGED),
};

static void run_case(const struct sb_case *k)
{
	_Alignas(8) unsigned char buf[BUFSZ];
	struct fx f;
	struct fs_findings fl;
	struct xfs_sb sb;
	enum fs_sb_state st;

	make_variant(&f, k->variant ? k->variant : variant_default);
	sb = f.sb;
	if (k->mut)
		k->mut(&sb);
	fx_sb_encode(&sb, buf, sizeof(buf));
	if (k->raw) {
		k->raw(buf, &sb);
		if (k->raw_recrc)
			fs_crc_update(buf, f.g.sectsize, FS_SB_CRC_OFF);
	}
	fs_findings_init(&fl);
	st = fs_sb_verify(buf, sizeof(buf), k->agno, &fl);
	if (!fx_has(&fl, k->code, k->field) || (k->state != ANY && (int)st != k->state)) {
		print_message("# case %s: expected %s [%s] state %d, got state %d:\n", k->name,
			      k->code, k->field ? k->field : "*", k->state, st);
		fx_dump(&fl);
		fail_msg("case %s", k->name);
	}
	/* a finding always names the AG it was found in */
	for (size_t i = 0; i < fl.n; i++)
		assert_int_equal(fl.v[i].ag, k->agno);
	fs_findings_free(&fl);
}

static void test_field_rule(void **state)
{
	run_case(*state);
}

/* Valid variations that must not be flagged. */
static void test_valid_variations(void **state)
{
	static void (*const ok[])(struct xfs_sb *) = { m_rt_ok, m_dalign_ok, m_meta_uuid_flip,
							m_inodes_ok };
	_Alignas(8) unsigned char buf[BUFSZ];
	struct fx f;
	struct fs_findings fl;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct xfs_sb sb;

		fx_init_default(&f);
		sb = f.sb;
		ok[i](&sb);
		fx_sb_encode(&sb, buf, sizeof(buf));
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_verify(buf, sizeof(buf), 0, &fl), FS_SB_OK);
		if (fl.n)
			fx_dump(&fl);
		assert_int_equal(fl.n, 0);
		fs_findings_free(&fl);
	}
}

/* Rules that apply to the primary only: counters and inprogress on a secondary are stale by design. */
static void test_secondary_exemptions(void **state)
{
	static void (*const muts[])(struct xfs_sb *) = {
		m_inprogress, m_icount_odd, m_icount_huge, m_ifree, m_fdblocks,
		m_rootino_null,	/* old mkfs left NULL root inodes in secondaries */
		m_quotabit_noino,	/* the kernel sets the quota bit in the primary only */
	};
	_Alignas(8) unsigned char buf[BUFSZ];
	struct fx f;

	(void)state;
	fx_init_default(&f);
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		struct fs_findings fl;
		struct xfs_sb sb = f.sb;

		muts[i](&sb);
		fx_sb_encode(&sb, buf, sizeof(buf));
		/* the primary flags it ... */
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_verify(buf, sizeof(buf), 0, &fl), FS_SB_DAMAGED);
		fs_findings_free(&fl);
		/* ... a secondary does not */
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_verify(buf, sizeof(buf), 3, &fl), FS_SB_OK);
		assert_int_equal(fl.n, 0);
		fs_findings_free(&fl);
	}
}

/*
 * Buffers shorter than a sector: reported, never read past their end (the
 * copies are heap buffers of exactly that length, so ASan sees any overrun).
 */
static void test_short_buffer(void **state)
{
	_Alignas(8) unsigned char buf[BUFSZ];
	const size_t lens[] = { 0, 100, FS_DSB_SIZE - 1, FS_DSB_SIZE, FS_BBSIZE - 1 };
	struct fx f;
	struct fs_findings fl;

	(void)state;
	fx_init_default(&f);
	fx_sb_encode(&f.sb, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *copy = malloc(lens[i] ? lens[i] : 1);

		assert_non_null(copy);
		memcpy(copy, buf, lens[i]);
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_verify(copy, lens[i], 2, &fl), FS_SB_UNUSABLE);
		assert_true(fx_has(&fl, "sb.unreadable", NULL));
		assert_int_equal(fl.v[0].ag, 2);
		fs_findings_free(&fl);
		free(copy);
	}
	/* exactly one 512-byte sector is enough */
	{
		unsigned char *copy = malloc(FS_BBSIZE);
		assert_non_null(copy);
		memcpy(copy, buf, FS_BBSIZE);
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_verify(copy, FS_BBSIZE, 0, &fl), FS_SB_OK);
		assert_int_equal(fl.n, 0);
		fs_findings_free(&fl);
		free(copy);
	}
}

/* A garbage sectsize must not steer the CRC past the buffer. */
static void test_crc_with_bad_sectsize(void **state)
{
	_Alignas(8) unsigned char buf[BUFSZ];
	struct fx f;
	struct fs_findings fl;
	struct xfs_sb sb;

	(void)state;
	fx_init_default(&f);
	sb = f.sb;
	sb.sb_sectsize = 65535 & ~1;
	fx_sb_encode(&sb, buf, 512);
	fs_findings_init(&fl);
	assert_int_equal(fs_sb_verify(buf, 512, 0, &fl), FS_SB_UNUSABLE);
	assert_true(fx_has(&fl, "sb.geometry", "sectsize"));
	fs_findings_free(&fl);
}

/* --- secondaries against the primary -------------------------------------- */

struct sec_field {
	const char *name;
	size_t off, size;
};

#define SF(f) { &(#f)[3], offsetof(struct xfs_sb, f), sizeof(((struct xfs_sb *)0)->f) }

static const struct sec_field sec_fields[] = {
	SF(sb_blocksize), SF(sb_dblocks), SF(sb_rblocks), SF(sb_rextents), SF(sb_logstart),
	SF(sb_rextsize), SF(sb_agblocks), SF(sb_agcount), SF(sb_rbmblocks), SF(sb_logblocks),
	SF(sb_versionnum), SF(sb_sectsize), SF(sb_inodesize), SF(sb_inopblock), SF(sb_blocklog),
	SF(sb_sectlog), SF(sb_inodelog), SF(sb_inopblog), SF(sb_agblklog), SF(sb_rextslog),
	SF(sb_inoalignmt), SF(sb_dirblklog),
	SF(sb_logsectlog), SF(sb_logsectsize), SF(sb_logsunit), SF(sb_features2),
	SF(sb_features_ro_compat), SF(sb_features_incompat),
	SF(sb_spino_align),
};

static void test_compare_secondary(void **state)
{
	struct fx f;
	struct fs_findings fl;

	(void)state;
	fx_init_default(&f);

	fs_findings_init(&fl);
	assert_int_equal(fs_sb_compare_secondary(&f.sb, &f.sb, 1, &fl), 0);
	assert_int_equal(fl.n, 0);
	fs_findings_free(&fl);

	for (size_t i = 0; i < sizeof(sec_fields) / sizeof(sec_fields[0]); i++) {
		struct xfs_sb s = f.sb;

		((unsigned char *)&s)[sec_fields[i].off] ^= 0x04;
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&f.sb, &s, 3, &fl), 1);
		if (!fx_has(&fl, "sb.secondary", sec_fields[i].name)) {
			fx_dump(&fl);
			fail_msg("field %s", sec_fields[i].name);
		}
		assert_int_equal(fl.v[0].ag, 3);
		fs_findings_free(&fl);
	}

	/*
	 * counters, root inode, label and LSN are not compared: secondaries keep
	 * mkfs-time values; nor what the kernel changes in the primary alone
	 * (attr/quota version bits on first use, stripe geometry from mount
	 * options, imax_pct from growfs -m, needsrepair during upgrades)
	 */
	{
		struct xfs_sb s = f.sb;
		s.sb_icount = 0; s.sb_ifree = 0; s.sb_fdblocks = 1; s.sb_rootino = NULLFSINO;
		s.sb_lsn = 12345; s.sb_fname[0] = 'x'; s.sb_inprogress = 1;
		s.sb_versionnum ^= XFS_SB_VERSION_ATTRBIT | XFS_SB_VERSION_QUOTABIT;
		s.sb_unit = 16; s.sb_width = 64; s.sb_imax_pct = 5;
		s.sb_features_incompat ^= XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
		s.sb_features_log_incompat = 1; s.sb_qflags = 1; s.sb_uquotino = 77;
		s.sb_features_compat = 1u << 8;	/* unknown compat bits: kept, not compared */
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&f.sb, &s, 1, &fl), 0);
		fx_dump(&fl);
		fs_findings_free(&fl);
	}
	/* while any other version or incompat bit is a difference */
	{
		struct xfs_sb s = f.sb;
		s.sb_versionnum ^= XFS_SB_VERSION_DALIGNBIT;
		s.sb_features_incompat ^= XFS_SB_FEAT_INCOMPAT_NREXT64;
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&f.sb, &s, 1, &fl), 2);
		assert_true(fx_has(&fl, "sb.secondary", "versionnum"));
		assert_true(fx_has(&fl, "sb.secondary", "features_incompat"));
		fs_findings_free(&fl);
	}
	/* UUID, and the metadata UUID when the feature says it matters */
	{
		struct xfs_sb s = f.sb;
		((unsigned char *)&s.sb_uuid)[5] ^= 1;
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&f.sb, &s, 1, &fl), 1);
		assert_true(fx_has(&fl, "sb.uuid", "uuid"));
		fs_findings_free(&fl);
	}
	{
		struct fx_params p;
		struct fx fm;
		struct xfs_sb s;

		fx_default_params(&p);
		p.meta_uuid = true;
		fx_init(&fm, &p);
		s = fm.sb;
		((unsigned char *)&s.sb_meta_uuid)[0] ^= 1;
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&fm.sb, &s, 2, &fl), 1);
		assert_true(fx_has(&fl, "sb.uuid", "meta_uuid"));
		fs_findings_free(&fl);
		/* without the feature the field is unused */
		s = f.sb;
		((unsigned char *)&s.sb_meta_uuid)[0] ^= 1;
		fs_findings_init(&fl);
		assert_int_equal(fs_sb_compare_secondary(&f.sb, &s, 2, &fl), 0);
		fs_findings_free(&fl);
	}
}


/*
 * The vote: two or more secondaries, more than half of those read, agreeing
 * on a value the primary lacks carry the field; one secondary, a split, or
 * a difference only in what secondaries leave stale carries nothing.
 */
static void test_vote(void **state)
{
	struct fx f;
	struct fs_findings fl;
	struct xfs_sb p, v[3], out;

	(void)state;
	fx_init_default(&f);
	for (int i = 0; i < 3; i++) {
		v[i] = f.sb;
		v[i].sb_icount = 0;	/* stale counters and quota state are not voted */
		v[i].sb_uquotino = NULLFSINO;
		v[i].sb_features_compat = 0;
	}
	p = f.sb;
	p.sb_logstart = 0;
	p.sb_features_ro_compat = 0;
	p.sb_features_compat = 1u << 8;	/* an unknown compat bit stays */
	p.sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;	/* the primary's alone */
	memset(&p.sb_uuid, 0, sizeof(p.sb_uuid));
	fs_findings_init(&fl);
	assert_int_equal(fs_sb_vote(&p, v, 3, &out, &fl), 3);
	assert_true(fx_has(&fl, "sb.secondary", "logstart"));
	assert_true(fx_has(&fl, "sb.secondary", "features_ro_compat"));
	assert_true(fx_has(&fl, "sb.uuid", "uuid"));
	for (size_t i = 0; i < fl.n; i++)
		assert_int_equal(fl.v[i].ag, 0);
	assert_int_equal(out.sb_logstart, f.sb.sb_logstart);
	assert_int_equal(out.sb_features_ro_compat, f.sb.sb_features_ro_compat);
	assert_int_equal(out.sb_features_compat, 1u << 8);
	assert_true(out.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR);
	assert_int_equal(out.sb_icount, f.sb.sb_icount);
	assert_memory_equal(&out.sb_uuid, &f.sb.sb_uuid, sizeof(out.sb_uuid));
	fs_findings_free(&fl);

	/* one secondary alone does not outvote the primary */
	fs_findings_init(&fl);
	assert_int_equal(fs_sb_vote(&p, v, 1, &out, &fl), 0);
	assert_int_equal(fl.n, 0);
	assert_int_equal(out.sb_logstart, 0);
	fs_findings_free(&fl);

	/* nor does a split: one of three agrees with the primary, two differ from each other */
	v[0].sb_logstart = 0;
	v[1].sb_logstart = f.sb.sb_logstart + 8;
	p = f.sb;
	p.sb_logstart = 0;
	fs_findings_init(&fl);
	assert_int_equal(fs_sb_vote(&p, v, 3, &out, &fl), 0);
	fs_findings_free(&fl);
}

/* The root inode the geometry predicts is where mkfs put it. */
static void test_calc_rootino(void **state)
{
	struct fx f;

	(void)state;
	fx_init_default(&f);
	assert_true(fs_ino_valid(&f.g, fs_sb_calc_rootino(&f.sb, &f.g)));
	assert_int_equal(fs_sb_calc_rootino(&f.sb, &f.g), f.sb.sb_rootino);
}

static void test_unknown_feature_helpers(void **state)
{
	struct fx f;
	struct xfs_sb sb;

	(void)state;
	fx_init_default(&f);
	sb = f.sb;
	assert_int_equal(fs_sb_unknown_incompat(&sb), 0);
	assert_int_equal(fs_sb_unknown_ro_compat(&sb), 0);
	sb.sb_features_incompat |= 1u << 31;
	sb.sb_features_ro_compat |= 1u << 29;
	assert_int_equal(fs_sb_unknown_incompat(&sb), 1u << 31);
	assert_int_equal(fs_sb_unknown_ro_compat(&sb), 1u << 29);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_clean_variants),
		cmocka_unit_test(test_valid_variations),
		cmocka_unit_test(test_secondary_exemptions),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_crc_with_bad_sectsize),
		cmocka_unit_test(test_compare_secondary),
		cmocka_unit_test(test_unknown_feature_helpers),
		cmocka_unit_test(test_vote),
		cmocka_unit_test(test_calc_rootino),
	};
	enum { NF = sizeof(fixed) / sizeof(fixed[0]), NC = sizeof(cases) / sizeof(cases[0]) };
	static struct CMUnitTest tests[NF + NC];
	static char names[NC][64];

	/* one TAP line per broken field */
	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < NC; i++) {
		snprintf(names[i], sizeof(names[i]), "sb field rule: %s (AG %u)", cases[i].name,
			 cases[i].agno);
		tests[NF + i] = (struct CMUnitTest){ names[i], test_field_rule, NULL, NULL,
						     (void *)&cases[i] };
	}
	return _cmocka_run_group_tests("test_sb", tests, NF + NC, NULL, NULL);
}
