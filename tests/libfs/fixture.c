// SPDX-License-Identifier: GPL-2.0
/*
 * In-memory v5 headers for the unit tests: a superblock shaped like
 * mkfs.xfs 6.1 output and AGF/AGI/AGFL sectors consistent with it, so the
 * clean case verifies without findings and each test can break one field.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tests/libfs/fixture.h"

static unsigned ilog2(uint32_t v)
{
	unsigned l = 0;
	while ((1ull << (l + 1)) <= v)
		l++;
	return l;
}

static unsigned log2_up(uint32_t v)
{
	unsigned l = 0;
	while ((1ull << l) < v)
		l++;
	return l;
}

void fx_default_params(struct fx_params *p)
{
	memset(p, 0, sizeof(*p));
	p->blocksize = 4096;
	p->sectsize = 512;
	p->inodesize = 512;
	p->agcount = 4;
	p->agblocks = 16384;
	p->last_ag_blocks = 10000;
	p->finobt = p->reflink = p->inobtcount = p->spinodes = true;
}

static const unsigned char fx_uuid[16] = {
	0x49, 0x0c, 0x63, 0x22, 0x8d, 0x5f, 0x42, 0xf9,
	0x8d, 0xa4, 0x1d, 0x1b, 0x53, 0x95, 0x15, 0x5e };
static const unsigned char fx_meta_uuid[16] = {
	0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x47, 0x08,
	0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };

void fx_init(struct fx *f, const struct fx_params *p)
{
	struct xfs_sb *sb = &f->sb;
	uint32_t cluster;

	memset(f, 0, sizeof(*f));
	f->p = *p;
	sb->sb_magicnum = XFS_SB_MAGIC;
	sb->sb_blocksize = p->blocksize;
	sb->sb_blocklog = (uint8_t)ilog2(p->blocksize);
	sb->sb_sectsize = (uint16_t)p->sectsize;
	sb->sb_sectlog = (uint8_t)ilog2(p->sectsize);
	sb->sb_inodesize = (uint16_t)p->inodesize;
	sb->sb_inodelog = (uint8_t)ilog2(p->inodesize);
	sb->sb_inopblock = (uint16_t)(p->blocksize / p->inodesize);
	sb->sb_inopblog = sb->sb_blocklog - sb->sb_inodelog;
	sb->sb_agblocks = p->agblocks;
	sb->sb_agblklog = (uint8_t)log2_up(p->agblocks);
	sb->sb_agcount = p->agcount;
	sb->sb_dblocks = (uint64_t)(p->agcount - 1) * p->agblocks + p->last_ag_blocks;
	sb->sb_rextsize = p->blocksize >= 4096 ? 1 : 4096 / p->blocksize;
	sb->sb_versionnum = XFS_SB_VERSION_5 | XFS_SB_VERSION_NLINKBIT | XFS_SB_VERSION_ALIGNBIT |
			    XFS_SB_VERSION_LOGV2BIT | XFS_SB_VERSION_EXTFLGBIT |
			    XFS_SB_VERSION_DIRV2BIT | XFS_SB_VERSION_MOREBITSBIT;
	if (p->sectsize != 512) {
		sb->sb_versionnum |= XFS_SB_VERSION_SECTORBIT;
		sb->sb_logsectsize = (uint16_t)p->sectsize;
		sb->sb_logsectlog = sb->sb_sectlog;
	}
	sb->sb_imax_pct = 25;
	/* mkfs: the scaled v5 cluster, or the whole chunk with sparse inodes */
	cluster = (8192u * (p->inodesize / 256)) >> sb->sb_blocklog;
	if (p->spinodes) {
		sb->sb_spino_align = cluster;
		sb->sb_inoalignmt = (64u * p->inodesize) >> sb->sb_blocklog;
	} else {
		sb->sb_inoalignmt = cluster;
	}
	sb->sb_logblocks = 1024;
	sb->sb_logsunit = 1;
	sb->sb_dirblklog = (uint8_t)p->dirblklog;
	sb->sb_features2 = XFS_SB_VERSION2_LAZYSBCOUNTBIT | XFS_SB_VERSION2_ATTR2BIT |
			   XFS_SB_VERSION2_PROJID32BIT | XFS_SB_VERSION2_CRCBIT |
			   XFS_SB_VERSION2_FTYPE;
	sb->sb_bad_features2 = sb->sb_features2;
	sb->sb_features_incompat = XFS_SB_FEAT_INCOMPAT_FTYPE | XFS_SB_FEAT_INCOMPAT_BIGTIME;
	if (p->spinodes)
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_SPINODES;
	if (p->meta_uuid) {
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_META_UUID;
		memcpy(&sb->sb_meta_uuid, fx_meta_uuid, 16);
	}
	if (p->finobt)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_FINOBT;
	if (p->rmapbt)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_RMAPBT;
	if (p->reflink)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_REFLINK;
	if (p->inobtcount)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_INOBTCNT;
	memcpy(&sb->sb_uuid, fx_uuid, 16);
	memcpy(sb->sb_fname, "fixture", 7);
	sb->sb_icount = 64;
	sb->sb_ifree = 61;
	sb->sb_fdblocks = sb->sb_dblocks - 5000;

	assert_int_equal(fs_geom_derive(sb, &f->g), 0);

	/* the log: 1024 blocks in the middle AG, past its btree roots */
	sb->sb_logstart = fs_agbno_to_fsb(&f->g, p->agcount / 2, 64);
	/* root directory chunk: first aligned block after the headers and btree roots */
	{
		uint32_t align = f->g.cluster_align;
		uint32_t blk = (f->g.ag_hdr_blocks + 10 + align - 1) / align * align;
		sb->sb_rootino = fs_agino_to_ino(&f->g, 0, blk << f->g.inopblog);
	}
	sb->sb_rbmino = sb->sb_rootino + 1;
	sb->sb_rsumino = sb->sb_rootino + 2;
	assert_int_equal(fs_geom_derive(sb, &f->g), 0);
}

void fx_init_default(struct fx *f)
{
	struct fx_params p;

	fx_default_params(&p);
	fx_init(f, &p);
}

void fx_sb_encode(const struct xfs_sb *sb, unsigned char *buf, size_t len)
{
	size_t crc_len = sb->sb_sectsize <= len ? sb->sb_sectsize : len;

	memset(buf, 0, len);
	fs_sb_to_disk((struct xfs_dsb *)buf, sb);
	fs_crc_update(buf, crc_len, FS_SB_CRC_OFF);
}

/* Block layout of a fixture AG, after its header blocks. */
enum { R_BNO, R_CNT, R_INO, R_FINO, R_RMAP, R_REFC, R_AGFL0 };

static uint32_t fx_block(const struct fx *f, int which)
{
	return f->g.ag_hdr_blocks + (uint32_t)which;
}

void fx_agf(const struct fx *f, uint32_t agno, unsigned char *buf)
{
	struct xfs_agf *a = (struct xfs_agf *)buf;
	uint32_t aglen = fs_ag_blocks(&f->g, agno);

	memset(buf, 0, f->g.sectsize);
	a->agf_magicnum = to_be32(XFS_AGF_MAGIC);
	a->agf_versionnum = to_be32(XFS_AGF_VERSION);
	a->agf_seqno = to_be32(agno);
	a->agf_length = to_be32(aglen);
	a->agf_roots[XFS_BTNUM_BNOi] = to_be32(fx_block(f, R_BNO));
	a->agf_roots[XFS_BTNUM_CNTi] = to_be32(fx_block(f, R_CNT));
	a->agf_levels[XFS_BTNUM_BNOi] = to_be32(1);
	a->agf_levels[XFS_BTNUM_CNTi] = to_be32(1);
	if (f->p.rmapbt) {
		a->agf_roots[XFS_BTNUM_RMAPi] = to_be32(fx_block(f, R_RMAP));
		a->agf_levels[XFS_BTNUM_RMAPi] = to_be32(1);
		a->agf_rmap_blocks = to_be32(1);
	}
	if (f->p.reflink) {
		a->agf_refcount_root = to_be32(fx_block(f, R_REFC));
		a->agf_refcount_level = to_be32(1);
		a->agf_refcount_blocks = to_be32(1);
	}
	a->agf_flfirst = to_be32(0);
	a->agf_fllast = to_be32(3);
	a->agf_flcount = to_be32(4);
	a->agf_freeblks = to_be32(aglen - 64);
	a->agf_longest = to_be32(aglen - 80);
	memcpy(&a->agf_uuid, f->g.meta_uuid, 16);
	fx_recrc(FS_MT_AGF, buf, f->g.sectsize);
}

void fx_agi(const struct fx *f, uint32_t agno, unsigned char *buf)
{
	struct xfs_agi *a = (struct xfs_agi *)buf;

	memset(buf, 0, f->g.sectsize);
	a->agi_magicnum = to_be32(XFS_AGI_MAGIC);
	a->agi_versionnum = to_be32(XFS_AGI_VERSION);
	a->agi_seqno = to_be32(agno);
	a->agi_length = to_be32(fs_ag_blocks(&f->g, agno));
	a->agi_root = to_be32(fx_block(f, R_INO));
	a->agi_level = to_be32(1);
	if (agno == 0) {
		a->agi_count = to_be32(64);
		a->agi_freecount = to_be32(61);
		a->agi_newino = to_be32(fs_ino_to_agino(&f->g, f->sb.sb_rootino));
	} else {
		a->agi_newino = to_be32(NULLAGINO);
	}
	a->agi_dirino = to_be32(NULLAGINO);
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
		a->agi_unlinked[i] = to_be32(NULLAGINO);
	if (f->p.finobt) {
		a->agi_free_root = to_be32(fx_block(f, R_FINO));
		a->agi_free_level = to_be32(1);
	}
	if (f->p.inobtcount) {
		a->agi_iblocks = to_be32(1);
		a->agi_fblocks = to_be32(f->p.finobt ? 1 : 0);
	}
	memcpy(&a->agi_uuid, f->g.meta_uuid, 16);
	fx_recrc(FS_MT_AGI, buf, f->g.sectsize);
}

void fx_agfl(const struct fx *f, uint32_t agno, unsigned char *buf)
{
	struct xfs_agfl *a = (struct xfs_agfl *)buf;
	unsigned char *slots = buf + sizeof(struct xfs_agfl);

	memset(buf, 0, f->g.sectsize);
	a->agfl_magicnum = to_be32(XFS_AGFL_MAGIC);
	a->agfl_seqno = to_be32(agno);
	memcpy(&a->agfl_uuid, f->g.meta_uuid, 16);
	for (uint32_t i = 0; i < f->g.agfl_size; i++)
		put_be32(slots + 4 * i, i < 4 ? fx_block(f, R_AGFL0) + i : NULLAGBLOCK);
	fx_recrc(FS_MT_AGFL, buf, f->g.sectsize);
}

void fx_recrc(enum fs_mtype t, unsigned char *buf, size_t len)
{
	if (t == FS_MT_SB)
		fs_crc_update(buf, len, FS_SB_CRC_OFF);
	else
		fs_crc_update(buf, len, fs_verifier_get(t)->crc_off);
}

struct fs_vctx fx_vctx(const struct fx *f, uint32_t agno, struct fs_findings *fl)
{
	struct fs_vctx c = {
		.g = &f->g, .fl = fl, .agno = agno, .daddr = fs_ag_daddr(&f->g, agno),
		.have_log_head = true, .head_lsn = FX_HEAD_LSN,
	};
	return c;
}

bool fx_has(const struct fs_findings *fl, const char *code, const char *field)
{
	for (size_t i = 0; i < fl->n; i++)
		if (!strcmp(fl->v[i].def->code, code) && (!field || !strcmp(fl->v[i].field, field)))
			return true;
	return false;
}

void fx_dump(const struct fs_findings *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		print_message("#   finding %s field '%s' expected '%s' found '%s': %s\n",
			      fl->v[i].def->code, fl->v[i].field, fl->v[i].expected,
			      fl->v[i].found, fl->v[i].message);
}
