// SPDX-License-Identifier: GPL-2.0
/*
 * AG headers and the verifier table: clean AGF/AGI/AGFL sectors verify
 * without findings in every feature variant; every field rule of ag.c and
 * every common check of verify.c (magic, CRC, UUID honouring meta_uuid, LSN
 * against the log and its head) fires with its exact code and field when
 * one field is broken, CRC re-stamped unless the CRC is the point; the
 * active free list checks; and the table's rows match the xfsprogs layouts.
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

#define SECT_MAX 4096

static void v_default(struct fx_params *p) { (void)p; }
static void v_rmap(struct fx_params *p) { p->rmapbt = true; }
static void v_plain(struct fx_params *p) { p->finobt = p->reflink = p->inobtcount = p->spinodes = false; }
static void v_finobt_only(struct fx_params *p) { p->reflink = p->inobtcount = false; }
static void v_sect4k(struct fx_params *p) { p->sectsize = 4096; p->rmapbt = true; }
static void v_meta_uuid(struct fx_params *p) { p->meta_uuid = true; }
static void v_1k(struct fx_params *p) { p->blocksize = 1024; p->agblocks = 65536; p->last_ag_blocks = 20000; }

static void make(struct fx *f, void (*v)(struct fx_params *))
{
	struct fx_params p;

	fx_default_params(&p);
	(v ? v : v_default)(&p);
	fx_init(f, &p);
}

static void build(const struct fx *f, enum fs_mtype t, uint32_t agno, unsigned char *buf)
{
	switch (t) {
	case FS_MT_AGF: fx_agf(f, agno, buf); break;
	case FS_MT_AGI: fx_agi(f, agno, buf); break;
	case FS_MT_AGFL: fx_agfl(f, agno, buf); break;
	default: fail();
	}
}

/* Verify one header plus, for the AGFL, the active entries against a clean AGF. */
static int verify(const struct fx *f, enum fs_mtype t, uint32_t agno, const unsigned char *buf,
		  struct fs_findings *fl, bool have_head, const unsigned char *agf_buf)
{
	struct fs_vctx c = fx_vctx(f, agno, fl);
	int n;

	c.have_log_head = have_head;
	n = fs_verify(t, &c, buf, f->g.sectsize);
	if (t == FS_MT_AGFL) {
		_Alignas(8) unsigned char agf[SECT_MAX];
		struct fs_agf a;

		if (!agf_buf) {
			fx_agf(f, agno, agf);
			agf_buf = agf;
		}
		fs_agf_decode(agf_buf, &a);
		n += fs_agfl_check_active(&c, buf, &a);
	}
	return n;
}

/* --- clean headers ----------------------------------------------------------- */

static void test_clean(void **state)
{
	static void (*const vs[])(struct fx_params *) = {
		v_default, v_rmap, v_plain, v_finobt_only, v_sect4k, v_meta_uuid, v_1k,
	};
	_Alignas(8) unsigned char buf[SECT_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		struct fx f;

		make(&f, vs[i]);
		for (uint32_t agno = 0; agno < f.g.agcount; agno++) {
			for (enum fs_mtype t = FS_MT_AGF; t <= FS_MT_AGFL; t++) {
				struct fs_findings fl;
				int n;

				build(&f, t, agno, buf);
				fs_findings_init(&fl);
				n = verify(&f, t, agno, buf, &fl, true, NULL);
				if (n || fl.n) {
					print_message("# variant %zu AG %u type %d\n", i, agno, t);
					fx_dump(&fl);
				}
				assert_int_equal(n, 0);
				assert_int_equal(fl.n, 0);
				fs_findings_free(&fl);
			}
		}
	}
}

/* --- one broken field at a time -------------------------------------------- */

struct ag_case {
	const char *name;
	enum fs_mtype type;
	void (*variant)(struct fx_params *p);
	uint32_t agno;
	void (*mut)(unsigned char *buf, const struct fx *f);
	bool keep_crc;               /* do not re-stamp the CRC after mut */
	bool no_head;                /* the log head is unknown */
	const char *code, *field;    /* NULL code: must stay clean */
};

#define AGF(fld)  (offsetof(struct xfs_agf, fld))
#define AGI(fld)  (offsetof(struct xfs_agi, fld))
#define AGFL(fld) (offsetof(struct xfs_agfl, fld))
#define MUT(name, body) \
	static void mu_##name(unsigned char *b, const struct fx *f) { (void)f; body; }
#define AGLEN(agno) fs_ag_blocks(&f->g, agno)

static void set_slot(unsigned char *b, uint32_t i, uint32_t v)
{
	put_be32(b + sizeof(struct xfs_agfl) + 4 * i, v);
}

/* common checks, any type: offsets from the verifier table row */
static size_t off_of(enum fs_mtype t, int what)
{
	const struct fs_verifier *v = fs_verifier_get(t);
	return what == 0 ? v->magic_off : what == 1 ? v->crc_off : what == 2 ? v->uuid_off : v->lsn_off;
}
#define COMMON_MUTS(T, tag) \
	MUT(tag##_magic, put_be32(b + off_of(T, 0), XFS_SB_MAGIC)) \
	MUT(tag##_crc, b[off_of(T, 1)] ^= 0x80) \
	MUT(tag##_body, b[f->g.sectsize - 1] ^= 0x01) \
	MUT(tag##_uuid, b[off_of(T, 2) + 15] ^= 0x01) \
	MUT(tag##_user_uuid, memcpy(b + off_of(T, 2), &f->sb.sb_uuid, 16)) \
	MUT(tag##_lsn_ones, put_be64(b + off_of(T, 3), ~0ull)) \
	MUT(tag##_lsn_cycle0, put_be64(b + off_of(T, 3), 5)) \
	MUT(tag##_lsn_past_log, put_be64(b + off_of(T, 3), (1ull << 32) | (1024u * 8))) \
	MUT(tag##_lsn_last_bb, put_be64(b + off_of(T, 3), (1ull << 32) | (1024u * 8 - 1))) \
	MUT(tag##_lsn_future_cycle, put_be64(b + off_of(T, 3), (6ull << 32) | 1)) \
	MUT(tag##_lsn_future_block, put_be64(b + off_of(T, 3), (5ull << 32) | 101)) \
	MUT(tag##_lsn_at_head, put_be64(b + off_of(T, 3), FX_HEAD_LSN)) \
	MUT(tag##_lsn_old, put_be64(b + off_of(T, 3), (4ull << 32) | 8000))

COMMON_MUTS(FS_MT_AGF, agf)
COMMON_MUTS(FS_MT_AGI, agi)
COMMON_MUTS(FS_MT_AGFL, agfl)

#define COMMON_CASES(T, tag, pfx) \
	{ #tag " magic", T, NULL, 1, mu_##tag##_magic, false, false, pfx ".magic", "magicnum" }, \
	{ #tag " crc field", T, NULL, 1, mu_##tag##_crc, true, false, pfx ".crc", "crc" }, \
	{ #tag " body bit, CRC stale", T, NULL, 1, mu_##tag##_body, true, false, pfx ".crc", "crc" }, \
	{ #tag " uuid", T, NULL, 2, mu_##tag##_uuid, false, false, pfx ".uuid", "uuid" }, \
	{ #tag " user uuid on meta_uuid fs", T, v_meta_uuid, 0, mu_##tag##_user_uuid, false, false, \
	  pfx ".uuid", "uuid" }, \
	{ #tag " lsn all ones (NULLCOMMITLSN, ok)", T, NULL, 1, mu_##tag##_lsn_ones, false, false, NULL, NULL }, \
	{ #tag " lsn cycle 0", T, NULL, 1, mu_##tag##_lsn_cycle0, false, false, pfx ".lsn", "lsn" }, \
	{ #tag " lsn past the log", T, NULL, 1, mu_##tag##_lsn_past_log, false, false, pfx ".lsn", "lsn" }, \
	{ #tag " lsn past the log, no head", T, NULL, 1, mu_##tag##_lsn_past_log, false, true, \
	  pfx ".lsn", "lsn" }, \
	{ #tag " lsn future cycle", T, NULL, 3, mu_##tag##_lsn_future_cycle, false, false, pfx ".lsn", "lsn" }, \
	{ #tag " lsn future block", T, NULL, 1, mu_##tag##_lsn_future_block, false, false, pfx ".lsn", "lsn" }, \
	{ #tag " lsn last log sector (ok, no head)", T, NULL, 1, mu_##tag##_lsn_last_bb, false, true, NULL, NULL }, \
	{ #tag " lsn future cycle (ok, no head)", T, NULL, 1, mu_##tag##_lsn_future_cycle, false, true, NULL, NULL }, \
	{ #tag " lsn at the head (ok)", T, NULL, 1, mu_##tag##_lsn_at_head, false, false, NULL, NULL }, \
	{ #tag " lsn older cycle (ok)", T, NULL, 1, mu_##tag##_lsn_old, false, false, NULL, NULL }

/* AGF */
MUT(agf_version, put_be32(b + AGF(agf_versionnum), 2))
MUT(agf_seqno, put_be32(b + AGF(agf_seqno), 2))
MUT(agf_length_short, put_be32(b + AGF(agf_length), 10000))
MUT(agf_length_full_last, put_be32(b + AGF(agf_length), 16384))
MUT(agf_flfirst, put_be32(b + AGF(agf_flfirst), f->g.agfl_size))
MUT(agf_fllast, put_be32(b + AGF(agf_fllast), f->g.agfl_size + 7))
MUT(agf_flcount_big, put_be32(b + AGF(agf_flcount), f->g.agfl_size + 1))
MUT(agf_flcount_mismatch, put_be32(b + AGF(agf_flcount), 3))
MUT(agf_fl_wrap_ok, put_be32(b + AGF(agf_flfirst), f->g.agfl_size - 2);
    put_be32(b + AGF(agf_fllast), 1))
MUT(agf_fl_empty_ok, put_be32(b + AGF(agf_flcount), 0); put_be32(b + AGF(agf_fllast), f->g.agfl_size - 1))
MUT(agf_freeblks_big, put_be32(b + AGF(agf_freeblks), AGLEN(3) + 1))
MUT(agf_freeblks_full_ok, put_be32(b + AGF(agf_freeblks), AGLEN(3)); put_be32(b + AGF(agf_longest), AGLEN(3)))
MUT(agf_longest_big, put_be32(b + AGF(agf_longest), AGLEN(1) - 63))
MUT(agf_longest_zero, put_be32(b + AGF(agf_longest), 0))
MUT(agf_bnolevel0, put_be32(b + AGF(agf_levels[XFS_BTNUM_BNOi]), 0))
MUT(agf_cntlevel99, put_be32(b + AGF(agf_levels[XFS_BTNUM_CNTi]), 99))
MUT(agf_bnolevel_max1, put_be32(b + AGF(agf_levels[XFS_BTNUM_BNOi]), f->g.alloc_maxlevels + 1))
MUT(agf_bnolevel_max_ok, put_be32(b + AGF(agf_levels[XFS_BTNUM_BNOi]), f->g.alloc_maxlevels))
MUT(agf_bnoroot_hdr, put_be32(b + AGF(agf_roots[XFS_BTNUM_BNOi]), f->g.ag_hdr_blocks - 1))
MUT(agf_cntroot_end, put_be32(b + AGF(agf_roots[XFS_BTNUM_CNTi]), AGLEN(3)))
MUT(agf_cntroot_last_ok, put_be32(b + AGF(agf_roots[XFS_BTNUM_CNTi]), AGLEN(3) - 1))
MUT(agf_rmaplevel0, put_be32(b + AGF(agf_levels[XFS_BTNUM_RMAPi]), 0))
MUT(agf_rmaplevel_max1, put_be32(b + AGF(agf_levels[XFS_BTNUM_RMAPi]), f->g.rmap_maxlevels + 1))
MUT(agf_rmaproot, put_be32(b + AGF(agf_roots[XFS_BTNUM_RMAPi]), 0))
MUT(agf_rmapblocks0, put_be32(b + AGF(agf_rmap_blocks), 0))
MUT(agf_rmapblocks_big, put_be32(b + AGF(agf_rmap_blocks), AGLEN(1) + 1))
MUT(agf_rmap_without, put_be32(b + AGF(agf_roots[XFS_BTNUM_RMAPi]), 20))
MUT(agf_refclevel0, put_be32(b + AGF(agf_refcount_level), 0))
MUT(agf_refclevel_max1, put_be32(b + AGF(agf_refcount_level), f->g.refc_maxlevels + 1))
MUT(agf_refcroot, put_be32(b + AGF(agf_refcount_root), AGLEN(1) + 5))
MUT(agf_refcblocks0, put_be32(b + AGF(agf_refcount_blocks), 0))
MUT(agf_refcblocks_big, put_be32(b + AGF(agf_refcount_blocks), AGLEN(1) + 1))
MUT(agf_refc_without, put_be32(b + AGF(agf_refcount_level), 1))
MUT(agf_btreeblks, put_be32(b + AGF(agf_btreeblks), AGLEN(1) + 1))

/* AGI */
MUT(agi_version, put_be32(b + AGI(agi_versionnum), 0))
MUT(agi_seqno, put_be32(b + AGI(agi_seqno), 0))
MUT(agi_length, put_be32(b + AGI(agi_length), 16383))
MUT(agi_length_full_last, put_be32(b + AGI(agi_length), 16384))
MUT(agi_count_big, put_be32(b + AGI(agi_count), (AGLEN(3) << 3) + 64))
MUT(agi_count_max_ok, put_be32(b + AGI(agi_count), AGLEN(3) << 3))
MUT(agi_freecount, put_be32(b + AGI(agi_freecount), 65))
MUT(agi_level0, put_be32(b + AGI(agi_level), 0))
MUT(agi_level_max1, put_be32(b + AGI(agi_level), f->g.inobt_maxlevels + 1))
MUT(agi_root_hdr, put_be32(b + AGI(agi_root), 0))
MUT(agi_root_end, put_be32(b + AGI(agi_root), AGLEN(3)))
MUT(agi_free_level0, put_be32(b + AGI(agi_free_level), 0))
MUT(agi_free_level99, put_be32(b + AGI(agi_free_level), 99))
MUT(agi_free_root, put_be32(b + AGI(agi_free_root), AGLEN(1)))
MUT(agi_free_without, put_be32(b + AGI(agi_free_root), 20); put_be32(b + AGI(agi_free_level), 1))
MUT(agi_newino_hdr, put_be32(b + AGI(agi_newino), 63))
MUT(agi_newino_end, put_be32(b + AGI(agi_newino), AGLEN(3) << 3))
MUT(agi_newino_ok, put_be32(b + AGI(agi_newino), (AGLEN(3) << 3) - 1))
MUT(agi_dirino, put_be32(b + AGI(agi_dirino), 128))
MUT(agi_unlinked0, put_be32(b + AGI(agi_unlinked[0]), 63))
MUT(agi_unlinked63, put_be32(b + AGI(agi_unlinked[63]), AGLEN(3) << 3))
MUT(agi_unlinked_garbage, put_be32(b + AGI(agi_unlinked[17]), 0xdeadbeef))
MUT(agi_unlinked_ok, put_be32(b + AGI(agi_unlinked[5]), 64); put_be32(b + AGI(agi_unlinked[6]), 70))
MUT(agi_iblocks0, put_be32(b + AGI(agi_iblocks), 0))
MUT(agi_iblocks_big, put_be32(b + AGI(agi_iblocks), AGLEN(1) + 1))
MUT(agi_fblocks0, put_be32(b + AGI(agi_fblocks), 0))
MUT(agi_iblocks_without, put_be32(b + AGI(agi_iblocks), 1))

/* AGFL (the clean list: slots 0..3 hold blocks hdr+6..hdr+9) */
MUT(agfl_seqno, put_be32(b + AGFL(agfl_seqno), 7))
MUT(agfl_slot_past_ag, set_slot(b, 50, f->g.agblocks))
MUT(agfl_slot_active_null, set_slot(b, 1, NULLAGBLOCK))
MUT(agfl_slot_active_hdr, set_slot(b, 2, 0))
MUT(agfl_slot_active_dup, set_slot(b, 3, f->g.ag_hdr_blocks + 6))
MUT(agfl_slot_active_past_last_ag, set_slot(b, 0, AGLEN(3) + 5))
MUT(agfl_slot_inactive_zero_ok, set_slot(b, 4, 0); set_slot(b, 100, 0))

#define A(n, T, var, ag, code, field) { #n, T, var, ag, mu_##n, false, false, code, field }

static const struct ag_case cases[] = {
	COMMON_CASES(FS_MT_AGF, agf, "agf"),
	COMMON_CASES(FS_MT_AGI, agi, "agi"),
	COMMON_CASES(FS_MT_AGFL, agfl, "agfl"),

	A(agf_version, FS_MT_AGF, NULL, 1, "agf.version", "versionnum"),
	A(agf_seqno, FS_MT_AGF, NULL, 1, "agf.seqno", "seqno"),
	A(agf_length_short, FS_MT_AGF, NULL, 1, "agf.length", "length"),
	A(agf_length_full_last, FS_MT_AGF, NULL, 3, "agf.length", "length"),
	A(agf_flfirst, FS_MT_AGF, NULL, 1, "agf.freelist", "flfirst"),
	A(agf_fllast, FS_MT_AGF, NULL, 1, "agf.freelist", "fllast"),
	A(agf_flcount_big, FS_MT_AGF, NULL, 1, "agf.freelist", "flcount"),
	A(agf_flcount_mismatch, FS_MT_AGF, NULL, 1, "agf.freelist", "flcount"),
	A(agf_fl_wrap_ok, FS_MT_AGF, NULL, 1, NULL, NULL),
	A(agf_fl_empty_ok, FS_MT_AGF, NULL, 1, NULL, NULL),
	A(agf_freeblks_big, FS_MT_AGF, NULL, 3, "agf.freeblks", "freeblks"),
	A(agf_freeblks_full_ok, FS_MT_AGF, NULL, 3, NULL, NULL),
	A(agf_longest_big, FS_MT_AGF, NULL, 1, "agf.freeblks", "longest"),
	A(agf_longest_zero, FS_MT_AGF, NULL, 1, "agf.freeblks", "longest"),
	A(agf_bnolevel0, FS_MT_AGF, NULL, 1, "agf.levels", "bnolevel"),
	A(agf_cntlevel99, FS_MT_AGF, NULL, 1, "agf.levels", "cntlevel"),
	A(agf_bnolevel_max1, FS_MT_AGF, NULL, 1, "agf.levels", "bnolevel"),
	A(agf_bnolevel_max_ok, FS_MT_AGF, NULL, 1, NULL, NULL),
	A(agf_bnoroot_hdr, FS_MT_AGF, NULL, 1, "agf.root", "bnoroot"),
	A(agf_bnoroot_hdr, FS_MT_AGF, v_sect4k, 1, "agf.root", "bnoroot"),
	A(agf_cntroot_end, FS_MT_AGF, NULL, 3, "agf.root", "cntroot"),
	A(agf_cntroot_last_ok, FS_MT_AGF, NULL, 3, NULL, NULL),
	A(agf_rmaplevel0, FS_MT_AGF, v_rmap, 1, "agf.levels", "rmaplevel"),
	A(agf_rmaplevel_max1, FS_MT_AGF, v_rmap, 1, "agf.levels", "rmaplevel"),
	A(agf_rmaproot, FS_MT_AGF, v_rmap, 1, "agf.root", "rmaproot"),
	A(agf_rmapblocks0, FS_MT_AGF, v_rmap, 1, "agf.btreeblks", "rmapblocks"),
	A(agf_rmapblocks_big, FS_MT_AGF, v_rmap, 1, "agf.btreeblks", "rmapblocks"),
	A(agf_rmap_without, FS_MT_AGF, NULL, 1, "agf.root", "rmaproot"),
	A(agf_refclevel0, FS_MT_AGF, NULL, 1, "agf.levels", "refcntlevel"),
	A(agf_refclevel_max1, FS_MT_AGF, NULL, 1, "agf.levels", "refcntlevel"),
	A(agf_refcroot, FS_MT_AGF, NULL, 1, "agf.root", "refcntroot"),
	A(agf_refcblocks0, FS_MT_AGF, NULL, 1, "agf.btreeblks", "refcntblocks"),
	A(agf_refcblocks_big, FS_MT_AGF, NULL, 1, "agf.btreeblks", "refcntblocks"),
	A(agf_refc_without, FS_MT_AGF, v_plain, 1, "agf.root", "refcntroot"),
	A(agf_btreeblks, FS_MT_AGF, NULL, 1, "agf.btreeblks", "btreeblks"),

	A(agi_version, FS_MT_AGI, NULL, 1, "agi.version", "versionnum"),
	A(agi_seqno, FS_MT_AGI, NULL, 2, "agi.seqno", "seqno"),
	A(agi_length, FS_MT_AGI, NULL, 0, "agi.length", "length"),
	A(agi_length_full_last, FS_MT_AGI, NULL, 3, "agi.length", "length"),
	A(agi_count_big, FS_MT_AGI, NULL, 3, "agi.count", "count"),
	A(agi_count_max_ok, FS_MT_AGI, NULL, 3, NULL, NULL),
	A(agi_freecount, FS_MT_AGI, NULL, 0, "agi.count", "freecount"),
	A(agi_level0, FS_MT_AGI, NULL, 1, "agi.levels", "level"),
	A(agi_level_max1, FS_MT_AGI, NULL, 1, "agi.levels", "level"),
	A(agi_root_hdr, FS_MT_AGI, NULL, 1, "agi.root", "root"),
	A(agi_root_end, FS_MT_AGI, NULL, 3, "agi.root", "root"),
	A(agi_free_level0, FS_MT_AGI, NULL, 1, "agi.levels", "free_level"),
	A(agi_free_level99, FS_MT_AGI, v_finobt_only, 1, "agi.levels", "free_level"),
	A(agi_free_root, FS_MT_AGI, NULL, 1, "agi.root", "free_root"),
	A(agi_free_without, FS_MT_AGI, v_plain, 1, "agi.root", "free_root"),
	A(agi_newino_hdr, FS_MT_AGI, NULL, 0, "agi.newino", "newino"),
	A(agi_newino_end, FS_MT_AGI, NULL, 3, "agi.newino", "newino"),
	A(agi_newino_ok, FS_MT_AGI, NULL, 3, NULL, NULL),
	A(agi_dirino, FS_MT_AGI, NULL, 1, "agi.dirino", "dirino"),
	A(agi_unlinked0, FS_MT_AGI, NULL, 1, "agi.unlinked", "unlinked[0]"),
	A(agi_unlinked63, FS_MT_AGI, NULL, 3, "agi.unlinked", "unlinked[63]"),
	A(agi_unlinked_garbage, FS_MT_AGI, NULL, 2, "agi.unlinked", "unlinked[17]"),
	A(agi_unlinked_ok, FS_MT_AGI, NULL, 1, NULL, NULL),
	A(agi_iblocks0, FS_MT_AGI, NULL, 1, "agi.blocks", "ino_blocks"),
	A(agi_iblocks_big, FS_MT_AGI, NULL, 1, "agi.blocks", "ino_blocks"),
	A(agi_fblocks0, FS_MT_AGI, NULL, 1, "agi.blocks", "fino_blocks"),
	A(agi_iblocks_without, FS_MT_AGI, v_finobt_only, 1, "agi.blocks", "ino_blocks"),

	A(agfl_seqno, FS_MT_AGFL, NULL, 1, "agfl.seqno", "seqno"),
	A(agfl_slot_past_ag, FS_MT_AGFL, NULL, 1, "agfl.bno", "bno[50]"),
	A(agfl_slot_past_ag, FS_MT_AGFL, v_sect4k, 2, "agfl.bno", "bno[50]"),
	A(agfl_slot_active_null, FS_MT_AGFL, NULL, 1, "agfl.bno", "bno[1]"),
	A(agfl_slot_active_hdr, FS_MT_AGFL, NULL, 1, "agfl.bno", "bno[2]"),
	A(agfl_slot_active_dup, FS_MT_AGFL, NULL, 1, "agfl.bno", "bno[3]"),
	A(agfl_slot_active_past_last_ag, FS_MT_AGFL, NULL, 3, "agfl.bno", "bno[0]"),
	A(agfl_slot_inactive_zero_ok, FS_MT_AGFL, NULL, 1, NULL, NULL),
};

static void run_case(const struct ag_case *k)
{
	_Alignas(8) unsigned char buf[SECT_MAX];
	struct fs_findings fl;
	struct fx f;
	int n;

	make(&f, k->variant);
	build(&f, k->type, k->agno, buf);
	k->mut(buf, &f);
	if (!k->keep_crc)
		fx_recrc(k->type, buf, f.g.sectsize);
	fs_findings_init(&fl);
	n = verify(&f, k->type, k->agno, buf, &fl, !k->no_head, NULL);
	if (k->code ? !fx_has(&fl, k->code, k->field) : fl.n != 0) {
		print_message("# case %s: expected %s [%s], got:\n", k->name,
			      k->code ? k->code : "no finding", k->field ? k->field : "*");
		fx_dump(&fl);
		fail_msg("case %s", k->name);
	}
	/* the count returned is the count recorded, and each names its AG and sector */
	assert_int_equal(n, (int)fl.n);
	for (size_t i = 0; i < fl.n; i++) {
		assert_int_equal(fl.v[i].ag, k->agno);
		assert_int_equal(fl.v[i].daddr, (int64_t)fs_ag_daddr(&f.g, k->agno));
		assert_int_equal(fl.v[i].ino, FS_NONE);
	}
	fs_findings_free(&fl);
}

static void test_case(void **state)
{
	run_case(*state);
}

/* --- things the table alone does not show ----------------------------------- */

/* A wrong magic stops the verifier: nothing else in the block means anything. */
static void test_magic_stops(void **state)
{
	_Alignas(8) unsigned char buf[SECT_MAX];
	struct fs_findings fl;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	for (enum fs_mtype t = FS_MT_AGF; t <= FS_MT_AGFL; t++) {
		struct fs_vctx c = fx_vctx(&f, 1, &fl);

		build(&f, t, 1, buf);
		memset(buf + 4, 0xff, f.g.sectsize - 4);	/* everything else garbage too */
		put_be32(buf, 0x12345678);
		fs_findings_init(&fl);
		c.fl = &fl;
		assert_int_equal(fs_verify(t, &c, buf, f.g.sectsize), 1);
		assert_int_equal(fl.n, 1);
		assert_string_equal(fl.v[0].field, "magicnum");
		assert_string_equal(fl.v[0].found, "0x12345678");
		fs_findings_free(&fl);
	}
}

/* Buffers too short for the field rules are reported by magic or left alone, never overrun. */
static void test_short_buffers(void **state)
{
	_Alignas(8) unsigned char buf[SECT_MAX];
	struct fx f;

	(void)state;
	fx_init_default(&f);
	for (enum fs_mtype t = FS_MT_AGF; t <= FS_MT_AGFL; t++) {
		const size_t lens[] = { 0, 3, 100 };

		build(&f, t, 1, buf);
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			unsigned char *copy = malloc(lens[i] ? lens[i] : 1);
			struct fs_findings fl;
			struct fs_vctx c;

			assert_non_null(copy);
			memcpy(copy, buf, lens[i]);
			fs_findings_init(&fl);
			c = fx_vctx(&f, 1, &fl);
			/* too short for the magic: a magic finding; else the CRC cannot match */
			assert_true(fs_verify(t, &c, copy, lens[i]) >= 1);
			if (lens[i] < 4) {
				const char *code = fs_code_name(fs_verifier_get(t)->codes.magic);

				assert_true(fx_has(&fl, code, "magicnum"));
				assert_string_equal(fl.v[0].found, "short buffer");
			} else if (lens[i] < fs_verifier_get(t)->crc_off + 4) {
				enum fs_code code = fs_verifier_get(t)->codes.crc;

				assert_true(fx_has(&fl, fs_code_name(code), "crc"));
				for (size_t k = 0; k < fl.n; k++)
					if (fl.v[k].code == code)
						assert_string_equal(fl.v[k].found, "short buffer");
			}
			fs_findings_free(&fl);
			free(copy);
		}
	}
}

/* The active free list is only judged when the AGF's indexes make sense. */
static void test_agfl_active_needs_sane_agf(void **state)
{
	_Alignas(8) unsigned char agfl[SECT_MAX], agf[SECT_MAX];
	struct fs_findings fl;
	struct fs_agf a;
	struct fx f;

	(void)state;
	fx_init_default(&f);
	fx_agfl(&f, 1, agfl);
	set_slot(agfl, 0, NULLAGBLOCK);
	fx_recrc(FS_MT_AGFL, agfl, f.g.sectsize);
	fx_agf(&f, 1, agf);
	fs_agf_decode(agf, &a);

	/* with the clean AGF the bad active slot is found */
	fs_findings_init(&fl);
	{
		struct fs_vctx c = fx_vctx(&f, 1, &fl);
		assert_int_equal(fs_agfl_check_active(&c, agfl, &a), 1);
		assert_true(fx_has(&fl, "agfl.bno", "bno[0]"));
	}
	fs_findings_free(&fl);

	/* a count that disagrees with first..last: the AGF finding says it, nothing here */
	a.flcount = 3;
	fs_findings_init(&fl);
	{
		struct fs_vctx c = fx_vctx(&f, 1, &fl);
		assert_int_equal(fs_agfl_check_active(&c, agfl, &a), 0);
	}
	fs_findings_free(&fl);

	/* a wrapped list reaches slots at both ends */
	a.flfirst = f.g.agfl_size - 1; a.fllast = 0; a.flcount = 2;
	fx_agfl(&f, 1, agfl);
	set_slot(agfl, f.g.agfl_size - 1, f.g.ag_hdr_blocks + 20);
	set_slot(agfl, 0, f.g.agblocks + 1);
	fs_findings_init(&fl);
	{
		struct fs_vctx c = fx_vctx(&f, 1, &fl);
		assert_int_equal(fs_agfl_check_active(&c, agfl, &a), 1);
		assert_true(fx_has(&fl, "agfl.bno", "bno[0]"));
	}
	fs_findings_free(&fl);
}

/* Decoding reads the xfsprogs layout field by field. */
static void test_decode(void **state)
{
	_Alignas(8) unsigned char buf[SECT_MAX];
	struct fs_agf a;
	struct fs_agi i;
	struct fx f;

	(void)state;
	make(&f, v_rmap);
	fx_agf(&f, 3, buf);
	put_be32(buf + AGF(agf_btreeblks), 7);
	put_be64(buf + AGF(agf_lsn), 0x0000000500000010ull);
	fs_agf_decode(buf, &a);
	assert_int_equal(a.magic, XFS_AGF_MAGIC);
	assert_int_equal(a.versionnum, XFS_AGF_VERSION);
	assert_int_equal(a.seqno, 3);
	assert_int_equal(a.length, 10000);
	assert_int_equal(a.bno_root, f.g.ag_hdr_blocks + 0);
	assert_int_equal(a.cnt_root, f.g.ag_hdr_blocks + 1);
	assert_int_equal(a.rmap_root, f.g.ag_hdr_blocks + 4);
	assert_int_equal(a.refc_root, f.g.ag_hdr_blocks + 5);
	assert_int_equal(a.bno_level, 1);
	assert_int_equal(a.rmap_level, 1);
	assert_int_equal(a.flfirst, 0);
	assert_int_equal(a.fllast, 3);
	assert_int_equal(a.flcount, 4);
	assert_int_equal(a.freeblks, 10000 - 64);
	assert_int_equal(a.longest, 10000 - 80);
	assert_int_equal(a.btreeblks, 7);
	assert_int_equal(a.rmap_blocks, 1);
	assert_int_equal(a.refc_blocks, 1);
	assert_int_equal(a.lsn, 0x0000000500000010ull);

	fx_agi(&f, 0, buf);
	put_be32(buf + AGI(agi_unlinked[63]), 4242);
	fs_agi_decode(buf, &i);
	assert_int_equal(i.magic, XFS_AGI_MAGIC);
	assert_int_equal(i.seqno, 0);
	assert_int_equal(i.length, 16384);
	assert_int_equal(i.count, 64);
	assert_int_equal(i.freecount, 61);
	assert_int_equal(i.root, f.g.ag_hdr_blocks + 2);
	assert_int_equal(i.free_root, f.g.ag_hdr_blocks + 3);
	assert_int_equal(i.newino, fs_ino_to_agino(&f.g, f.sb.sb_rootino));
	assert_int_equal(i.dirino, NULLAGINO);
	assert_int_equal(i.unlinked[0], NULLAGINO);
	assert_int_equal(i.unlinked[63], 4242);
	assert_int_equal(i.iblocks, 1);
	assert_int_equal(i.fblocks, 1);
}

/* The table's rows are the xfsprogs layouts. */
static void test_table(void **state)
{
	(void)state;
	for (int t = 0; t < FS_MT_NR; t++) {
		const struct fs_verifier *v = fs_verifier_get(t);
		assert_non_null(v);
		assert_int_equal(v->type, t);
		assert_non_null(v->name);
		assert_non_null(v->verify_fields);
		/* every code the common checks can make is in the findings table */
		if (v->crc_off != SIZE_MAX) {
			static const char *const sfx[] = { ".magic", ".crc", ".uuid", ".lsn" };
			const enum fs_code codes[] = { v->codes.magic, v->codes.crc, v->codes.uuid,
						       v->codes.lsn };

			for (int k = 0; k < 4; k++) {
				const char *code = fs_code_name(codes[k]);

				/* the row's code for each check is that check's */
				assert_non_null(fs_finding_def(codes[k]));
				assert_true(strlen(code) > strlen(sfx[k]));
				assert_string_equal(code + strlen(code) - strlen(sfx[k]), sfx[k]);
			}
		}
	}
	assert_null(fs_verifier_get(FS_MT_NR));
	assert_int_equal(fs_verifier_get(FS_MT_SB)->magic, XFS_SB_MAGIC);
	assert_int_equal(fs_verifier_get(FS_MT_AGF)->magic, XFS_AGF_MAGIC);
	assert_int_equal(fs_verifier_get(FS_MT_AGF)->crc_off, offsetof(struct xfs_agf, agf_crc));
	assert_int_equal(fs_verifier_get(FS_MT_AGF)->uuid_off, offsetof(struct xfs_agf, agf_uuid));
	assert_int_equal(fs_verifier_get(FS_MT_AGF)->lsn_off, offsetof(struct xfs_agf, agf_lsn));
	assert_int_equal(fs_verifier_get(FS_MT_AGI)->magic, XFS_AGI_MAGIC);
	assert_int_equal(fs_verifier_get(FS_MT_AGI)->crc_off, offsetof(struct xfs_agi, agi_crc));
	assert_int_equal(fs_verifier_get(FS_MT_AGI)->uuid_off, offsetof(struct xfs_agi, agi_uuid));
	assert_int_equal(fs_verifier_get(FS_MT_AGI)->lsn_off, offsetof(struct xfs_agi, agi_lsn));
	assert_int_equal(fs_verifier_get(FS_MT_AGFL)->magic, XFS_AGFL_MAGIC);
	assert_int_equal(fs_verifier_get(FS_MT_AGFL)->crc_off, offsetof(struct xfs_agfl, agfl_crc));
	assert_int_equal(fs_verifier_get(FS_MT_AGFL)->uuid_off, offsetof(struct xfs_agfl, agfl_uuid));
	assert_int_equal(fs_verifier_get(FS_MT_AGFL)->lsn_off, offsetof(struct xfs_agfl, agfl_lsn));
	/* an unknown type verifies nothing and reports nothing */
	{
		struct fs_findings fl;
		struct fx f;
		unsigned char b[16] = { 0 };
		fx_init_default(&f);
		fs_findings_init(&fl);
		struct fs_vctx c = fx_vctx(&f, 0, &fl);
		assert_int_equal(fs_verify(FS_MT_NR, &c, b, sizeof(b)), 0);
		assert_int_equal(fl.n, 0);
		fs_findings_free(&fl);
	}
}

/* fs_lsn_ok on its own: 0 is "never logged"; the rest must sit inside the log. */
static void test_lsn_ok(void **state)
{
	struct fs_findings fl;
	struct fx f;
	struct fs_vctx c;

	(void)state;
	fx_init_default(&f);
	fs_findings_init(&fl);
	c = fx_vctx(&f, 0, &fl);
	assert_true(fs_lsn_ok(&c, 0));
	assert_true(fs_lsn_ok(&c, ~0ull));                 /* NULLCOMMITLSN: the kernel lets it through */
	assert_false(fs_lsn_ok(&c, 7));                     /* cycle 0 */
	assert_true(fs_lsn_ok(&c, (1ull << 32) | 0));
	assert_true(fs_lsn_ok(&c, FX_HEAD_LSN));
	assert_false(fs_lsn_ok(&c, FX_HEAD_LSN + 1));
	assert_false(fs_lsn_ok(&c, (6ull << 32)));
	c.have_log_head = false;
	assert_true(fs_lsn_ok(&c, (6ull << 32)));
	assert_true(fs_lsn_ok(&c, (99ull << 32) | (1024 * 8 - 1)));
	assert_false(fs_lsn_ok(&c, (99ull << 32) | (1024 * 8)));
	fs_findings_free(&fl);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_magic_stops),
		cmocka_unit_test(test_short_buffers),
		cmocka_unit_test(test_agfl_active_needs_sane_agf),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_lsn_ok),
	};
	enum { NF = sizeof(fixed) / sizeof(fixed[0]), NC = sizeof(cases) / sizeof(cases[0]) };
	static struct CMUnitTest tests[NF + NC];
	static char names[NC][96];

	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < NC; i++) {
		snprintf(names[i], sizeof(names[i]), "%s rule: %s (AG %u)",
			 fs_verifier_get(cases[i].type)->name, cases[i].name, cases[i].agno);
		tests[NF + i] = (struct CMUnitTest){ names[i], test_case, NULL, NULL, (void *)&cases[i] };
	}
	return _cmocka_run_group_tests("test_ag", tests, NF + NC, NULL, NULL);
}
