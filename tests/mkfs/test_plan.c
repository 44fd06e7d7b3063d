// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the xfsx_mkfs geometry planner: edge sizes (the smallest
 * allowed, last-AG rounding, huge), stripe alignment, concurrency rules and
 * the AG 0 layout.  Expected numbers are what Debian's mkfs.xfs 6.1 prints
 * for the same size with -m rmapbt=1 -i nrext64=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mkfs/plan.h"

static char err[512];

static int plan_for(uint64_t bytes, const struct mkfs_opts *o, struct mkfs_plan *p)
{
	struct mkfs_topo t = { .size = bytes, .lsect = 512, .psect = 512, .is_file = true,
			       .nr_cpus = 4 };

	return mkfs_plan(o, &t, p, err, sizeof(err));
}

static void defaults(struct mkfs_opts *o)
{
	mkfs_opts_init(o);
}

static void test_smallest_allowed(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	assert_int_equal(plan_for(300ull << 20, &o, &p), 0);
	assert_int_equal(p.agcount, 4);
	assert_int_equal(p.agblocks, 19200);
	assert_int_equal(p.dblocks, 76800);
	assert_int_equal(p.logblocks, 16384);          /* 64 MiB: the realistic minimum */
	assert_int_equal(p.logagno, 2);
	assert_int_equal(p.logagbno, 7);               /* right after the 7 fixed blocks */
	/* one block less is refused, and the message says how much is needed */
	assert_int_not_equal(plan_for((300ull << 20) - 4096, &o, &p), 0);
	assert_non_null(strstr(err, "300 MiB"));
}

static void test_one_gib_layout(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;
	struct mkfs_ag ag;
	static const struct mkfs_rmap want[] = {
		{ 0, 1, XFS_RMAP_OWN_FS }, { 1, 2, XFS_RMAP_OWN_AG }, { 3, 2, XFS_RMAP_OWN_INOBT },
		{ 5, 1, XFS_RMAP_OWN_AG }, { 6, 1, XFS_RMAP_OWN_REFC }, { 7, 6, XFS_RMAP_OWN_AG },
		{ 16, 8, XFS_RMAP_OWN_INODES },
	};

	(void)state;
	defaults(&o);
	assert_int_equal(plan_for(1ull << 30, &o, &p), 0);
	assert_int_equal(p.sb.sb_versionnum, 0xb4a5);
	assert_int_equal(p.sb.sb_features2, 0x18a);
	assert_int_equal(p.sb.sb_features_incompat, 0x2b);
	assert_int_equal(p.sb.sb_features_ro_compat, 0xf);
	assert_int_equal(p.sb.sb_inoalignmt, 8);
	assert_int_equal(p.sb.sb_spino_align, 4);
	assert_int_equal(p.sb.sb_logstart, 131079);
	assert_int_equal(p.rootino, 128);
	assert_int_equal(p.fdblocks, 245724);
	assert_int_equal(p.icount, 64);
	assert_int_equal(p.ifree, 61);

	assert_int_equal(mkfs_ag_layout(&p, 0, &ag), 0);
	assert_int_equal(ag.nrmap, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < ag.nrmap; i++) {
		assert_int_equal(ag.rmap[i].start, want[i].start);
		assert_int_equal(ag.rmap[i].len, want[i].len);
		assert_true(ag.rmap[i].owner == want[i].owner);
	}
	assert_int_equal(ag.freeblks, 65515);
	assert_int_equal(ag.longest, 65512);
	assert_int_equal(ag.agfl_count, 6);
	assert_int_equal(ag.agfl[0], 7);

	/* the log's AG: AGFL after the log, which the rmap names */
	assert_int_equal(mkfs_ag_layout(&p, 2, &ag), 0);
	assert_true(ag.has_log);
	assert_int_equal(ag.agfl[0], 7 + 16384);
	assert_int_equal(ag.freeblks, 49139);
}

static void test_last_ag_rounding(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	/* 1 GiB + one block: AGs round up, the last one is shorter */
	assert_int_equal(plan_for((1ull << 30) + 4096, &o, &p), 0);
	assert_int_equal(p.agcount, 4);
	assert_int_equal(p.agblocks, 65537);
	assert_int_equal(p.dblocks, 262145);
	assert_int_equal(mkfs_ag_length(&p, 3), 262145 - 3 * 65537);

	/* a remainder under 16 MiB is dropped: 10 x 100 MiB + 10 MiB -> 10 AGs */
	o.agsize = 100ull << 20;
	assert_int_equal(plan_for((1010ull) << 20, &o, &p), 0);
	assert_int_equal(p.agcount, 10);
	assert_int_equal(p.dblocks, 10ull * 25600);
	/* ... but not when the user fixed the AG count */
	defaults(&o);
	o.agcount = 64;
	assert_int_not_equal(plan_for((1ull << 30) + 4096, &o, &p), 0);  /* last AG 4034 blocks */
	assert_non_null(strstr(err, "agcount"));
}

static void test_huge(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	assert_int_equal(plan_for(15ull << 40, &o, &p), 0);
	assert_int_equal(p.agcount, 15);
	assert_int_equal(p.agblocks, 268435455);
	assert_int_equal(p.dblocks, 4026531825ull);   /* the 15-block tail is dropped */
	assert_int_equal(p.logblocks, 521728);
	assert_int_equal(p.imaxpct, 5);

	/* 1 PiB: 1 TiB AGs, 1% inodes, nothing overflows */
	assert_int_equal(plan_for(1ull << 50, &o, &p), 0);
	assert_int_equal(p.agblocks, 268435455);
	assert_true((uint64_t)p.agcount * p.agblocks >= p.dblocks);
	assert_true(p.dblocks - (uint64_t)(p.agcount - 1) * p.agblocks >= (16u << 20) / 4096);
	assert_int_equal(p.imaxpct, 1);
	assert_int_equal(p.logagno, p.agcount / 2);
}

static void test_stripe(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	o.dsu = 64 << 10;
	o.dsw = 4;
	o.stripe_given = true;
	assert_int_equal(plan_for(2ull << 30, &o, &p), 0);
	/* multidisk: 8 AGs, AG size moved off the stripe width by one unit */
	assert_int_equal(p.agcount, 8);
	assert_int_equal(p.agblocks, 65520);
	assert_int_equal(p.dblocks, 524160);
	assert_int_equal(p.dsunit, 16);
	assert_int_equal(p.dswidth, 64);
	assert_int_equal(p.lsunit, 16);
	assert_int_equal(p.logagbno % 16, 0);
	assert_int_equal(p.logblocks % 16, 0);

	/* a stripe that is not a multiple of the block size is refused */
	o.dsu = 6 << 10;
	assert_int_not_equal(plan_for(2ull << 30, &o, &p), 0);
}

static void test_concurrency(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p, base;
	struct mkfs_topo t = { .size = 1ull << 40, .lsect = 512, .psect = 512, .nr_cpus = 8 };

	(void)state;
	defaults(&o);
	assert_int_equal(plan_for(1ull << 40, &o, &base), 0);
	assert_int_equal(base.agcount, 4);
	o.data_concurrency = 16;
	assert_int_equal(plan_for(1ull << 40, &o, &p), 0);
	assert_int_equal(p.agcount, 16);
	/* never fewer AGs than the default, never AGs under 4 GiB */
	o.data_concurrency = 2;
	assert_int_equal(plan_for(1ull << 40, &o, &p), 0);
	assert_int_equal(p.agcount, 4);
	o.data_concurrency = 1000;
	assert_int_equal(plan_for(1ull << 40, &o, &p), 0);
	assert_true((uint64_t)p.agblocks * 4096 >= (4ull << 30));
	assert_int_equal(p.agcount, 256);

	/* solid-state device, nothing asked: one AG and log share per CPU */
	defaults(&o);
	t.solid_state = true;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.agcount, 8);
	assert_int_equal(p.log_concurrency, 8);
	assert_true(p.logblocks >= base.logblocks);
	/* ... and an image file (rotational unknown) keeps the default geometry */
	t.solid_state = false;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.agcount, 4);

	/* -l concurrency grows the log past the default on a small filesystem */
	defaults(&o);
	o.log_concurrency = 64;
	assert_int_equal(plan_for(4ull << 30, &o, &p), 0);
	assert_int_equal(p.logblocks, 64 * 768);
	o.logsize = 128ull << 20;
	assert_int_not_equal(plan_for(4ull << 30, &o, &p), 0);
}

static void test_refusals(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	o.blocksize = 3000;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	defaults(&o);
	o.inodesize = 256;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	assert_non_null(strstr(err, "v5"));
	defaults(&o);
	o.sectsize = 8192;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	defaults(&o);
	o.logsize = 32ull << 20;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	assert_non_null(strstr(err, "64 MiB"));
	defaults(&o);
	o.agcount = 1;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	/* inobtcount needs finobt: a default inobtcount yields to an explicit finobt=0 */
	defaults(&o);
	o.finobt = 0;
	assert_int_equal(plan_for(10ull << 30, &o, &p), 0);
	assert_false(p.inobtcount);
	assert_false(p.finobt);
	/* ...and both given explicitly is refused, naming both */
	defaults(&o);
	o.finobt = 0;
	o.inobtcount = 1;
	assert_int_not_equal(plan_for(10ull << 30, &o, &p), 0);
	assert_non_null(strstr(err, "inobtcount=1"));
	assert_non_null(strstr(err, "finobt=0"));
	/* an explicit inobtcount with the default finobt is fine */
	defaults(&o);
	o.inobtcount = 1;
	assert_int_equal(plan_for(10ull << 30, &o, &p), 0);
	assert_true(p.inobtcount && p.finobt);
}

/* 64 KiB blocks, 4 GiB: mkfs.xfs 6.1 (-m rmapbt=1 -i nrext64=1) makes this geometry. */
/* the warnings of one plan, joined by '|' (each one's own newlines kept) */
static const char *warnings_of(const struct mkfs_plan *p)
{
	static char buf[MKFS_MAX_WARNINGS * MKFS_WARNING_LEN];

	buf[0] = 0;
	for (uint32_t i = 0; i < p->nwarnings; i++) {
		if (i)
			strcat(buf, "|");
		strcat(buf, p->warnings[i]);
	}
	return buf;
}

/*
 * Warnings about what a block device reports, which image files and loop
 * devices cannot show mkfs.xfs (tests/mkfs/warnings.sh compares the rest
 * with it): words and numbers as mkfs.xfs 6.1 prints them for the same
 * topology (stripes in 512-byte sectors, bytes where it says bytes).
 */
static void test_device_warnings(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;
	struct mkfs_topo t = { .size = 4ull << 30, .lsect = 512, .psect = 512, .nr_cpus = 4 };

	(void)state;
	defaults(&o);
	/* a stripe reported by the device is used, silently */
	t.sunit = 64 << 10;
	t.swidth = 256 << 10;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nwarnings, 0);
	assert_int_equal(p.dsunit, 16);
	assert_int_equal(p.dswidth, 64);

	/* one given that differs: kept, and both differences said */
	o.dsu = 128 << 10;
	o.dsw = 4;
	o.stripe_given = true;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p),
		"xfsx_mkfs: Specified data stripe unit 256 is not the same as the volume stripe unit 128|"
		"xfsx_mkfs: Specified data stripe width 1024 is not the same as the volume stripe width 512");
	assert_int_equal(p.dsunit, 32);
	/* the same unit, another width: only the width */
	o.dsu = 64 << 10;
	o.dsw = 8;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p),
		"xfsx_mkfs: Specified data stripe width 1024 is not the same as the volume stripe width 512");
	/* no alignment asked for: nothing to compare */
	o.dsu = o.dsw = 0;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nwarnings, 0);
	assert_int_equal(p.dsunit, 0);

	/* nonsense from the device is ignored with a word (width not a multiple) */
	defaults(&o);
	t.sunit = 64 << 10;
	t.swidth = 96 << 10;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p), "xfsx_mkfs: Volume reports invalid stripe unit (65536) "
			    "and stripe width (98304), ignoring.");
	assert_int_equal(p.dsunit, 0);
	t.swidth = 0;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p), "xfsx_mkfs: Volume reports invalid stripe unit (65536) "
			    "and stripe width (0), ignoring.");

	/* under 1 GiB a device's stripe is ignored, and mkfs.xfs says so */
	t.size = 512ull << 20;
	t.swidth = 256 << 10;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p), "xfsx_mkfs: small data volume, ignoring data volume "
			    "stripe unit 128 and stripe width 512");
	assert_int_equal(p.dsunit, 0);

	/* a block smaller than the physical sector: the logical one, with a word */
	t.size = 4ull << 30;
	t.sunit = t.swidth = 0;
	t.psect = 4096;
	o.blocksize = 2048;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p), "specified blocksize 2048 is less than device physical "
			    "sector size 4096\nswitching to logical sector size 512");
	assert_int_equal(p.sectsize, 512);
	/* not when the sector size is given */
	o.sectsize = 512;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nwarnings, 0);

	/* warnings said before a later refusal are kept for main to print */
	defaults(&o);
	t.psect = 512;
	o.dsize = (4ull << 30) - 512;
	o.logsize = 1 << 20;
	assert_int_not_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(warnings_of(&p), "warning: data length 4294966784 not a multiple of "
			    "4096, truncated to 4294963200");
}

/*
 * -l logdev= and -r rtdev=: Debian mkfs.xfs 6.1 (-i nrext64=1) on a 1 GiB data
 * image, a 100 MiB log and a 500 MiB (then 10 GiB) realtime image.
 */
static void test_devices(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;
	struct mkfs_ag ag;
	struct mkfs_topo t = { .size = 1ull << 30, .lsect = 512, .psect = 512, .is_file = true,
			       .nr_cpus = 4, .logdev_size = 100ull << 20, .rtdev_size = 500ull << 20 };

	(void)state;
	defaults(&o);
	o.logdev = "log.img";
	o.rtdev = "rt.img";
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.sb.sb_logstart, 0);
	assert_int_equal(p.sb.sb_logblocks, 25600);
	assert_int_equal(p.sb.sb_rblocks, 128000);
	assert_int_equal(p.sb.sb_rextents, 128000);
	assert_int_equal(p.sb.sb_frextents, 128000);
	assert_int_equal(p.sb.sb_rbmblocks, 4);
	assert_int_equal(p.sb.sb_rextslog, 16);
	assert_int_equal(p.sb.sb_rextsize, 1);
	assert_int_equal(p.sb.sb_fdblocks, 262111);
	assert_false(p.rmapbt);
	assert_false(p.reflink);
	for (uint32_t a = 0; a < p.agcount; a++) {
		assert_int_equal(mkfs_ag_layout(&p, a, &ag), 0);
		assert_false(ag.has_log);
	}
	assert_int_equal(mkfs_ag_layout(&p, 0, &ag), 0);
	assert_int_equal(ag.rbm_agbno, 9);           /* after the AGFL, before the root chunk */
	assert_int_equal(ag.rsum_agbno, 13);
	assert_int_equal(ag.chunk_agbno, 16);
	assert_int_equal(ag.freeblks, 65514);

	/* a bitmap too long for the gap before the root chunk goes past it */
	t.rtdev_size = 10ull << 30;
	assert_int_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(p.sb.sb_rbmblocks, 80);
	assert_int_equal(mkfs_ag_layout(&p, 0, &ag), 0);
	assert_int_equal(ag.rbm_agbno, 24);
	assert_int_equal(ag.rsum_agbno, 9);

	/* mkfs.xfs's refusals */
	o.rmapbt = 1;
	assert_int_not_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "rmapbt not supported with realtime devices"));
	o.rmapbt = OPT_UNSET;
	o.rtextsize = 6144;
	assert_int_not_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "illegal rt extent size 6144, not a multiple of 4096"));
	o.rtextsize = 0;
	t.logdev_size = 5ull << 20;
	assert_int_not_equal(mkfs_plan(&o, &t, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "external log device size 1280 blocks too small"));
}

static void test_large_blocks(void **state)
{
	struct mkfs_opts o;
	struct mkfs_plan p;

	(void)state;
	defaults(&o);
	o.blocksize = 65536;
	assert_int_equal(plan_for(4ull << 30, &o, &p), 0);
	assert_int_equal(p.agcount, 4);
	assert_int_equal(p.agblocks, 16384);
	assert_int_equal(p.logblocks, 2570);       /* the reservation minimum, above 64 MiB */
	assert_int_equal(p.logagno, 2);
	assert_int_equal(p.logagbno, 7);
	/* 128 inodes in a block: the root allocation is one block, two inobt records */
	assert_int_equal(p.chunk_inodes, 128);
	assert_int_equal(p.chunk_blocks, 1);
	assert_int_equal(p.icount, 128);
	assert_int_equal(p.ifree, 125);
	assert_int_equal(p.rootino, 1664);
	/* a log below the minimum is refused with the minimum in the message */
	o.logsize = 64ull << 20;
	assert_int_not_equal(plan_for(4ull << 30, &o, &p), 0);
	assert_non_null(strstr(err, "needs at least 2570 blocks"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smallest_allowed),
		cmocka_unit_test(test_one_gib_layout),
		cmocka_unit_test(test_last_ag_rounding),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_stripe),
		cmocka_unit_test(test_concurrency),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_large_blocks),
		cmocka_unit_test(test_device_warnings),
		cmocka_unit_test(test_devices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
