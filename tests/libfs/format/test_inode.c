// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libfs/format/inode.c: timestamp decoding (legacy, bigtime,
 * before 1970, the bigtime epoch offset), extent counter encodings (legacy
 * and nrext64), flags to FS_XFLAG_*, the bulkstat rdev encoding, inode
 * chunk geometry (clusters, sparse holes, the AG's end, 64 KiB blocks;
 * where an inode lies in a read), and the dinode rules of the verifier
 * table on inodes built in memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <linux/fs.h>

#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "tests/libfs/fixture.h"

#define NS 1000000000ull

/* ---- timestamps ---- */

static uint64_t legacy(int32_t sec, int32_t nsec)
{
	return (uint64_t)(uint32_t)sec << 32 | (uint32_t)nsec;
}

static void test_ts_legacy(void **state)
{
	struct fs_timestamp t;

	(void)state;
	t = fs_inode_decode_ts(legacy(1700000000, 123456789), false);
	assert_int_equal(t.sec, 1700000000);
	assert_int_equal(t.nsec, 123456789);
	t = fs_inode_decode_ts(legacy(0, 0), false);
	assert_int_equal(t.sec, 0);
	assert_int_equal(t.nsec, 0);
	/* the last second of 2038 that fits */
	t = fs_inode_decode_ts(legacy(INT32_MAX, 999999999), false);
	assert_int_equal(t.sec, INT32_MAX);
	assert_int_equal(t.nsec, 999999999);
}

static void test_ts_legacy_pre1970(void **state)
{
	struct fs_timestamp t;

	(void)state;
	/* 1969-12-31 23:59:59: seconds are signed */
	t = fs_inode_decode_ts(legacy(-1, 500000000), false);
	assert_int_equal(t.sec, -1);
	assert_int_equal(t.nsec, 500000000);
	/* 1960-01-01 */
	t = fs_inode_decode_ts(legacy(-315619200, 7), false);
	assert_int_equal(t.sec, -315619200);
	assert_int_equal(t.nsec, 7);
	/* 1901-12-13 20:45:52, the legacy minimum */
	t = fs_inode_decode_ts(legacy(INT32_MIN, 0), false);
	assert_int_equal(t.sec, INT32_MIN);
}

static void test_ts_bigtime(void **state)
{
	struct fs_timestamp t;
	uint64_t off = XFS_BIGTIME_EPOCH_OFFSET;

	(void)state;
	assert_int_equal(off, 1ull << 31);
	/* the bigtime epoch is the legacy minimum */
	t = fs_inode_decode_ts(0, true);
	assert_int_equal(t.sec, INT32_MIN);
	assert_int_equal(t.nsec, 0);
	/* the Unix epoch sits at the offset */
	t = fs_inode_decode_ts(off * NS, true);
	assert_int_equal(t.sec, 0);
	assert_int_equal(t.nsec, 0);
	t = fs_inode_decode_ts((off + 1700000000) * NS + 123456789, true);
	assert_int_equal(t.sec, 1700000000);
	assert_int_equal(t.nsec, 123456789);
	/* after 2038 */
	t = fs_inode_decode_ts((off + 10426838400ull) * NS + 987654321, true);
	assert_int_equal(t.sec, 10426838400ll);
	assert_int_equal(t.nsec, 987654321);
	/* the largest counter: 2^64-1 ns past 1901-12-13 */
	t = fs_inode_decode_ts(UINT64_MAX, true);
	assert_int_equal(t.sec, 18446744073ll - (int64_t)off);
	assert_int_equal(t.nsec, 709551615);
}

static void test_ts_bigtime_pre1970(void **state)
{
	struct fs_timestamp t;
	uint64_t off = XFS_BIGTIME_EPOCH_OFFSET;

	(void)state;
	t = fs_inode_decode_ts((off - 315619200) * NS + 5, true);
	assert_int_equal(t.sec, -315619200);
	assert_int_equal(t.nsec, 5);
	t = fs_inode_decode_ts((off - 1) * NS + 500000000, true);
	assert_int_equal(t.sec, -1);
	assert_int_equal(t.nsec, 500000000);
}

/* ---- a dinode in memory ---- */

struct ifx {
	struct fx f;
	unsigned char buf[2048];
	uint64_t ino;
};

static struct xfs_dinode *dino(struct ifx *x) { return (struct xfs_dinode *)x->buf; }

static void ifx_regular(struct ifx *x)
{
	struct xfs_dinode *d;

	fx_init_default(&x->f);
	memset(x->buf, 0, sizeof(x->buf));
	x->ino = 131;
	d = dino(x);
	d->di_magic = to_be16(XFS_DINODE_MAGIC);
	d->di_mode = to_be16(S_IFREG | 0644);
	d->di_version = 3;
	d->di_format = XFS_DINODE_FMT_EXTENTS;
	d->di_nlink = to_be32(1);
	d->di_uid = to_be32(1000);
	d->di_gid = to_be32(100);
	d->di_projid_lo = to_be16(0x1234);
	d->di_projid_hi = to_be16(0x5);
	d->di_size = to_be64(8192);
	d->di_nblocks = to_be64(2);
	d->di_nextents = to_be32(1);
	d->di_gen = to_be32(0xdeadbeef);
	d->di_next_unlinked = to_be32(NULLAGINO);
	d->di_flags2 = to_be64(XFS_DIFLAG2_BIGTIME);
	d->di_atime = to_be64(((uint64_t)XFS_BIGTIME_EPOCH_OFFSET + 100) * NS + 1);
	d->di_mtime = to_be64(((uint64_t)XFS_BIGTIME_EPOCH_OFFSET + 200) * NS + 2);
	d->di_ctime = to_be64(((uint64_t)XFS_BIGTIME_EPOCH_OFFSET + 300) * NS + 3);
	d->di_crtime = to_be64(((uint64_t)XFS_BIGTIME_EPOCH_OFFSET - 400) * NS + 4);
	d->di_ino = to_be64(x->ino);
	memcpy(&d->di_uuid, x->f.g.meta_uuid, 16);
	/* one extent record in the data fork: its content is not judged here */
	fs_crc_update(x->buf, x->f.g.inodesize, XFS_DINODE_CRC_OFF);
}

static void recrc(struct ifx *x)
{
	fs_crc_update(x->buf, x->f.g.inodesize, XFS_DINODE_CRC_OFF);
}

static int verify(struct ifx *x, struct fs_findings *fl)
{
	struct fs_vctx c = fx_vctx(&x->f, 0, fl);

	c.ino = x->ino;
	return fs_verify(FS_MT_INODE, &c, x->buf, x->f.g.inodesize);
}

static void test_decode_core(void **state)
{
	struct ifx x;
	struct fs_inode ip;

	(void)state;
	ifx_regular(&x);
	fs_inode_decode(x.buf, &ip);
	assert_int_equal(ip.mode, S_IFREG | 0644);
	assert_int_equal(ip.nlink, 1);
	assert_int_equal(ip.uid, 1000);
	assert_int_equal(ip.gid, 100);
	assert_int_equal(ip.projid, 0x51234);
	assert_int_equal(ip.size, 8192);
	assert_int_equal(ip.nblocks, 2);
	assert_int_equal(ip.nextents, 1);
	assert_int_equal(ip.gen, 0xdeadbeef);
	assert_true(ip.bigtime);
	assert_int_equal(ip.atime.sec, 100);
	assert_int_equal(ip.atime.nsec, 1);
	assert_int_equal(ip.mtime.sec, 200);
	assert_int_equal(ip.ctime.sec, 300);
	assert_int_equal(ip.crtime.sec, -400);
	assert_int_equal(ip.crtime.nsec, 4);
	assert_int_equal(ip.ino, 131);
}

/* The timestamp encoding is the inode's own flag, not the filesystem's. */
static void test_decode_legacy_inode_on_bigtime_fs(void **state)
{
	struct ifx x;
	struct fs_inode ip;

	(void)state;
	ifx_regular(&x);
	dino(&x)->di_flags2 = 0;
	dino(&x)->di_mtime = to_be64(legacy(-315619200, 42));
	fs_inode_decode(x.buf, &ip);
	assert_false(ip.bigtime);
	assert_int_equal(ip.mtime.sec, -315619200);
	assert_int_equal(ip.mtime.nsec, 42);
}

static void test_extents_legacy(void **state)
{
	struct ifx x;
	struct fs_inode ip;
	struct xfs_dinode *d;

	(void)state;
	ifx_regular(&x);
	d = dino(&x);
	d->di_nextents = to_be32(0x7fffffff);
	d->di_anextents = to_be16(0x7fff);
	fs_inode_decode(x.buf, &ip);
	assert_false(ip.nrext64);
	assert_int_equal(ip.nextents, 0x7fffffff);
	assert_int_equal(ip.anextents, 0x7fff);
}

static void test_extents_nrext64(void **state)
{
	struct ifx x;
	struct fs_inode ip;
	struct xfs_dinode *d;

	(void)state;
	ifx_regular(&x);
	d = dino(&x);
	d->di_flags2 = to_be64(XFS_DIFLAG2_BIGTIME | XFS_DIFLAG2_NREXT64);
	/* large counters: 64-bit data count where v3 padding was, 32-bit attr count */
	d->di_big_nextents = to_be64((1ull << 40) + 3);
	d->di_big_anextents = to_be32(70000);
	d->di_nrext64_pad = 0;
	fs_inode_decode(x.buf, &ip);
	assert_true(ip.nrext64);
	assert_int_equal(ip.nextents, (1ull << 40) + 3);
	assert_int_equal(ip.anextents, 70000);
	/* the same bytes without the flag are the legacy fields */
	d->di_flags2 = to_be64(XFS_DIFLAG2_BIGTIME);
	fs_inode_decode(x.buf, &ip);
	assert_false(ip.nrext64);
	assert_int_equal(ip.nextents, 70000);	/* di_nextents shares di_big_anextents' bytes */
	assert_int_equal(ip.anextents, 0);
}

static void test_xflags(void **state)
{
	static const struct { uint16_t di; uint32_t fs; } one[] = {
		{ XFS_DIFLAG_REALTIME, FS_XFLAG_REALTIME }, { XFS_DIFLAG_PREALLOC, FS_XFLAG_PREALLOC },
		{ XFS_DIFLAG_IMMUTABLE, FS_XFLAG_IMMUTABLE }, { XFS_DIFLAG_APPEND, FS_XFLAG_APPEND },
		{ XFS_DIFLAG_SYNC, FS_XFLAG_SYNC }, { XFS_DIFLAG_NOATIME, FS_XFLAG_NOATIME },
		{ XFS_DIFLAG_NODUMP, FS_XFLAG_NODUMP }, { XFS_DIFLAG_RTINHERIT, FS_XFLAG_RTINHERIT },
		{ XFS_DIFLAG_PROJINHERIT, FS_XFLAG_PROJINHERIT },
		{ XFS_DIFLAG_NOSYMLINKS, FS_XFLAG_NOSYMLINKS }, { XFS_DIFLAG_EXTSIZE, FS_XFLAG_EXTSIZE },
		{ XFS_DIFLAG_EXTSZINHERIT, FS_XFLAG_EXTSZINHERIT },
		{ XFS_DIFLAG_NODEFRAG, FS_XFLAG_NODEFRAG }, { XFS_DIFLAG_FILESTREAM, FS_XFLAG_FILESTREAM },
	};
	struct fs_inode ip;

	(void)state;
	memset(&ip, 0, sizeof(ip));
	assert_int_equal(fs_inode_xflags(&ip), 0);
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		ip.flags = one[i].di;
		assert_int_equal(fs_inode_xflags(&ip), one[i].fs);
	}
	/* the rt bitmap format flag has no FS_XFLAG */
	ip.flags = XFS_DIFLAG_NEWRTBM;
	assert_int_equal(fs_inode_xflags(&ip), 0);
	ip.flags = 0;
	ip.flags2 = XFS_DIFLAG2_DAX;
	assert_int_equal(fs_inode_xflags(&ip), FS_XFLAG_DAX);
	ip.flags2 = XFS_DIFLAG2_COWEXTSIZE;
	assert_int_equal(fs_inode_xflags(&ip), FS_XFLAG_COWEXTSIZE);
	/* reflink, bigtime and nrext64 are not user-visible flags */
	ip.flags2 = XFS_DIFLAG2_REFLINK | XFS_DIFLAG2_BIGTIME | XFS_DIFLAG2_NREXT64;
	assert_int_equal(fs_inode_xflags(&ip), 0);
	/* HASATTR follows the attr fork offset */
	ip.flags2 = 0;
	ip.forkoff = 24;
	assert_int_equal(fs_inode_xflags(&ip), FS_XFLAG_HASATTR);
	ip.flags = XFS_DIFLAG_APPEND | XFS_DIFLAG_NODUMP;
	ip.flags2 = XFS_DIFLAG2_COWEXTSIZE;
	assert_int_equal(fs_inode_xflags(&ip),
			 FS_XFLAG_HASATTR | FS_XFLAG_APPEND | FS_XFLAG_NODUMP | FS_XFLAG_COWEXTSIZE);
}

static void test_rdev(void **state)
{
	(void)state;
	/* on disk: sysv layout, major << 18 | minor */
	assert_int_equal(fs_inode_bulkstat_rdev(4u << 18 | 5), 4u << 18 | 5);
	assert_int_equal(fs_inode_bulkstat_rdev(300u << 18 | 70000), 300u << 18 | 70000);
	/* the kernel keeps 9 bits of the major */
	assert_int_equal(fs_inode_bulkstat_rdev(600u << 18 | 1), (600u & 0x1ff) << 18 | 1);
	assert_int_equal(fs_inode_bulkstat_rdev(0), 0);
}

static void test_fork_geometry(void **state)
{
	struct ifx x;
	struct fs_inode ip;
	uint32_t lit;

	(void)state;
	ifx_regular(&x);
	lit = x.f.g.inodesize - (uint32_t)sizeof(struct xfs_dinode);
	assert_int_equal(fs_inode_litino(&x.f.g), lit);
	fs_inode_decode(x.buf, &ip);
	assert_int_equal(fs_inode_fork_size(&x.f.g, &ip, XFS_DATA_FORK), lit);
	assert_int_equal(fs_inode_fork_size(&x.f.g, &ip, XFS_ATTR_FORK), 0);
	ip.forkoff = 15;
	assert_int_equal(fs_inode_fork_size(&x.f.g, &ip, XFS_DATA_FORK), 120);
	assert_int_equal(fs_inode_fork_size(&x.f.g, &ip, XFS_ATTR_FORK), lit - 120);
	assert_ptr_equal(fs_inode_fork_ptr(x.buf, &ip, XFS_ATTR_FORK),
			 x.buf + sizeof(struct xfs_dinode) + 120);
	assert_int_equal(fs_inode_max_nextents(false, XFS_DATA_FORK), XFS_MAX_EXTCNT_DATA_FORK_SMALL);
	assert_int_equal(fs_inode_max_nextents(true, XFS_DATA_FORK), XFS_MAX_EXTCNT_DATA_FORK_LARGE);
	assert_int_equal(fs_inode_max_nextents(false, XFS_ATTR_FORK), XFS_MAX_EXTCNT_ATTR_FORK_SMALL);
	assert_int_equal(fs_inode_max_nextents(true, XFS_ATTR_FORK), XFS_MAX_EXTCNT_ATTR_FORK_LARGE);
}

/* ---- inode chunk geometry ---- */

static void test_chunk_clusters(void **state)
{
	struct fx f;
	struct fs_icluster cl[XFS_INODES_PER_CHUNK];
	fs_agino_t startino;

	(void)state;
	fx_init_default(&f);
	/* 4 KiB blocks, 512-byte inodes: 16 KiB clusters of four blocks, two a chunk */
	assert_int_equal(f.g.blocks_per_cluster, 4);
	startino = fs_agbno_to_agino(&f.g, 64);
	assert_int_equal(fs_ichunk_clusters(&f.g, 0, startino, 0, cl), 2);
	assert_int_equal(cl[0].agbno, 64);
	assert_int_equal(cl[0].blocks, 4);
	assert_int_equal(cl[1].agbno, 68);
	assert_int_equal(cl[1].blocks, 4);
	/* the first 32 inodes sparse: only the second cluster */
	assert_true(fs_ichunk_in_hole(0x00ff, 31));
	assert_false(fs_ichunk_in_hole(0x00ff, 32));
	assert_int_equal(fs_ichunk_clusters(&f.g, 0, startino, 0x00ff, cl), 1);
	assert_int_equal(cl[0].agbno, 68);
	assert_int_equal(fs_ichunk_clusters(&f.g, 0, startino, 0xffff, cl), 0);
	/* the last AG has 10000 blocks: a cluster at its end is cut, one past it left out */
	startino = fs_agbno_to_agino(&f.g, 9998);
	assert_int_equal(fs_ichunk_clusters(&f.g, 3, startino, 0, cl), 1);
	assert_int_equal(cl[0].agbno, 9998);
	assert_int_equal(cl[0].blocks, 2);
}

static void test_chunk_clusters_64k(void **state)
{
	struct fx_params p;
	struct fx f;
	struct fs_icluster cl[XFS_INODES_PER_CHUNK];

	(void)state;
	fx_default_params(&p);
	p.blocksize = 65536;
	p.agblocks = 4096;
	p.last_ag_blocks = 4096;
	fx_init(&f, &p);
	/* a block holds two chunks: both name the one block as their cluster */
	assert_int_equal(f.g.blocks_per_cluster, 1);
	assert_int_equal(fs_ichunk_clusters(&f.g, 1, fs_agbno_to_agino(&f.g, 10), 0, cl), 1);
	assert_int_equal(cl[0].agbno, 10);
	assert_int_equal(cl[0].blocks, 1);
	assert_int_equal(fs_ichunk_clusters(&f.g, 1, fs_agbno_to_agino(&f.g, 10) + 64, 0, cl), 1);
	assert_int_equal(cl[0].agbno, 10);
}

static void test_inode_in_read(void **state)
{
	struct fx f;
	unsigned char data[16384];
	fs_agino_t first;
	uint64_t off;

	(void)state;
	fx_init_default(&f);
	first = fs_agbno_to_agino(&f.g, 64);
	off = fs_inode_byte(&f.g, 2, first);
	assert_int_equal(off, ((uint64_t)2 * 16384 + 64) * 4096);
	assert_int_equal(fs_inode_byte(&f.g, 2, first + 9), off + 9 * 512);
	/* a read of the cluster [off, off + 16 KiB) holds its 32 inodes */
	assert_ptr_equal(fs_inode_in_read(&f.g, 2, first, off, data, sizeof(data)), data);
	assert_ptr_equal(fs_inode_in_read(&f.g, 2, first + 31, off, data, sizeof(data)),
			 data + 31 * 512);
	assert_null(fs_inode_in_read(&f.g, 2, first + 32, off, data, sizeof(data)));
	/* one byte short of the last inode, or starting past the first: not held */
	assert_null(fs_inode_in_read(&f.g, 2, first + 31, off, data, sizeof(data) - 1));
	assert_null(fs_inode_in_read(&f.g, 2, first, off + 512, data, sizeof(data)));
	assert_ptr_equal(fs_inode_in_read(&f.g, 2, first + 1, off + 512, data, 512), data);
}

/* ---- verifier rules ---- */

static void test_verify_good(void **state)
{
	struct ifx x;
	struct fs_findings fl;

	(void)state;
	fs_findings_init(&fl);
	ifx_regular(&x);
	if (verify(&x, &fl))
		fx_dump(&fl);
	assert_int_equal(fl.n, 0);
	fs_findings_free(&fl);
}

typedef void (*damage_fn)(struct ifx *x);

static void expect(damage_fn fn, bool keep_crc, const char *code)
{
	struct ifx x;
	struct fs_findings fl;

	fs_findings_init(&fl);
	ifx_regular(&x);
	fn(&x);
	if (keep_crc)
		recrc(&x);
	verify(&x, &fl);
	assert_non_null(fs_finding_lookup(code));
	if (!fs_findings_has(&fl, fs_finding_lookup(code)->id)) {
		print_message("expected %s, got:\n", code);
		fx_dump(&fl);
	}
	assert_true(fs_findings_has(&fl, fs_finding_lookup(code)->id));
	/* every finding names the inode */
	for (size_t i = 0; i < fl.n; i++)
		assert_int_equal(fl.v[i].ino, (int64_t)x.ino);
	fs_findings_free(&fl);
}

static void d_magic(struct ifx *x) { dino(x)->di_magic = to_be16(0x1234); }
static void d_crc(struct ifx *x) { dino(x)->di_gen ^= 1; }
static void d_version(struct ifx *x) { dino(x)->di_version = 2; }
static void d_ino(struct ifx *x) { dino(x)->di_ino = to_be64(999); }
static void d_uuid(struct ifx *x) { ((unsigned char *)&dino(x)->di_uuid)[3] ^= 0xff; }
static void d_mode(struct ifx *x) { dino(x)->di_mode = to_be16(0170000 | 0644); }
static void d_size(struct ifx *x) { dino(x)->di_size = to_be64(1ull << 63); }
static void d_dirsize0(struct ifx *x)
{
	dino(x)->di_mode = to_be16(S_IFDIR | 0755);
	dino(x)->di_size = 0;
}
static void d_localreg(struct ifx *x) { dino(x)->di_format = XFS_DINODE_FMT_LOCAL; dino(x)->di_nextents = 0; }
static void d_format(struct ifx *x) { dino(x)->di_format = 7; }
static void d_nextents(struct ifx *x)
{
	dino(x)->di_nextents = to_be32(100);
	dino(x)->di_nblocks = to_be64(1000);
}
static void d_nblocks(struct ifx *x) { dino(x)->di_nblocks = 0; }
static void d_extsize(struct ifx *x) { dino(x)->di_extsize = to_be32(16); }
static void d_cowextsize(struct ifx *x)
{
	dino(x)->di_flags2 |= to_be64(XFS_DIFLAG2_COWEXTSIZE);
	dino(x)->di_cowextsize = 0;
}
static void d_nrext64(struct ifx *x) { dino(x)->di_flags2 |= to_be64(XFS_DIFLAG2_NREXT64); }
static void d_v3pad(struct ifx *x) { dino(x)->di_v3_pad = to_be64(1); }
static void d_forkoff(struct ifx *x) { dino(x)->di_forkoff = 255; }
static void d_aformat(struct ifx *x) { dino(x)->di_aformat = XFS_DINODE_FMT_LOCAL; }
static void d_special(struct ifx *x)
{
	dino(x)->di_mode = to_be16(S_IFCHR | 0600);
	dino(x)->di_format = XFS_DINODE_FMT_EXTENTS;
}
static void d_unlinked(struct ifx *x) { dino(x)->di_next_unlinked = to_be32(5); }
static void d_btree_small(struct ifx *x) { dino(x)->di_format = XFS_DINODE_FMT_BTREE; }

static void test_verify_damage(void **state)
{
	(void)state;
	expect(d_magic, true, "inode.magic");
	expect(d_crc, false, "inode.crc");
	expect(d_version, true, "inode.version");
	expect(d_ino, true, "inode.ino");
	expect(d_uuid, true, "inode.uuid");
	expect(d_mode, true, "inode.mode");
	expect(d_size, true, "inode.size");
	expect(d_dirsize0, true, "inode.size");
	expect(d_localreg, true, "inode.format");
	expect(d_format, true, "inode.format");
	expect(d_nextents, true, "inode.nextents");
	expect(d_nblocks, true, "inode.nblocks");
	expect(d_extsize, true, "inode.extsize");
	expect(d_cowextsize, true, "inode.cowextsize");
	expect(d_nrext64, true, "inode.nrext64");	/* the fixture has no nrext64 */
	expect(d_v3pad, true, "inode.nrext64");
	expect(d_forkoff, true, "inode.forkoff");
	expect(d_aformat, true, "inode.aformat");
	expect(d_special, true, "inode.format");
	expect(d_unlinked, true, "inode.unlinked");
	expect(d_btree_small, true, "inode.format");
}

/* Bigtime inodes on a filesystem without the feature are rejected. */
static void test_verify_bigtime_feature(void **state)
{
	struct ifx x;
	struct fs_findings fl;
	struct fs_vctx c;

	(void)state;
	fs_findings_init(&fl);
	ifx_regular(&x);
	x.f.g.bigtime = false;
	c = fx_vctx(&x.f, 0, &fl);
	c.ino = x.ino;
	fs_verify(FS_MT_INODE, &c, x.buf, x.f.g.inodesize);
	assert_true(fs_findings_has(&fl, FS_C_INODE_FLAGS));
	fs_findings_free(&fl);
}

/* Random bytes with a valid CRC: findings, never a crash. */
static void test_verify_random(void **state)
{
	struct ifx x;
	struct fs_findings fl;
	unsigned seed = 12345;

	(void)state;
	ifx_regular(&x);
	fs_findings_init(&fl);
	for (int round = 0; round < 20000; round++) {
		struct fs_inode ip;

		ifx_regular(&x);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245 + 12345;
			x.buf[(seed >> 8) % sizeof(struct xfs_dinode) + ((seed >> 4) & 1) * 100] ^=
				(unsigned char)(seed >> 16);
		}
		recrc(&x);
		verify(&x, &fl);
		fs_inode_decode(x.buf, &ip);
		(void)fs_inode_xflags(&ip);
		fs_findings_clear(&fl);
	}
	fs_findings_free(&fl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ts_legacy),
		cmocka_unit_test(test_ts_legacy_pre1970),
		cmocka_unit_test(test_ts_bigtime),
		cmocka_unit_test(test_ts_bigtime_pre1970),
		cmocka_unit_test(test_decode_core),
		cmocka_unit_test(test_decode_legacy_inode_on_bigtime_fs),
		cmocka_unit_test(test_extents_legacy),
		cmocka_unit_test(test_extents_nrext64),
		cmocka_unit_test(test_xflags),
		cmocka_unit_test(test_rdev),
		cmocka_unit_test(test_fork_geometry),
		cmocka_unit_test(test_chunk_clusters),
		cmocka_unit_test(test_chunk_clusters_64k),
		cmocka_unit_test(test_inode_in_read),
		cmocka_unit_test(test_verify_good),
		cmocka_unit_test(test_verify_damage),
		cmocka_unit_test(test_verify_bigtime_feature),
		cmocka_unit_test(test_verify_random),
	};

	return cmocka_run_group_tests_name("inode", tests, NULL, NULL);
}
