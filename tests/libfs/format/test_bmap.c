// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libfs/format/bmap.c: bmbt record packing, extents-format and
 * btree-format forks built in memory over the core fixture's geometry
 * (4 KiB blocks, 4 AGs of 16384 blocks, last AG 10000), clean and hostile:
 * wild counts, zero lengths, blocks outside the filesystem or across AG
 * ends, overlaps, bad bmbt blocks (owner, CRC, level, siblings, keys),
 * loops and shared subtrees, unreadable blocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/bmap.h"
#include "libfs/format/btree.h"
#include "libfs/format/endian.h"
#include "tests/libfs/fixture.h"

#define INO 128ull
#define NDISK 32

/* A tiny "device": the blocks a test wrote, looked up by fsblock. */
struct disk {
	struct fx f;
	size_t n;
	fs_fsblock_t fsb[NDISK];
	unsigned char *blk[NDISK];
	unsigned reads;
};

/* The last file block a file of 2^63 - 1 bytes has, with the fixture's 4 KiB blocks. */
#define TOP_OFF ((((UINT64_C(1) << 63) - 1) >> 12) - 1)

static int disk_read(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct disk *d = priv;

	d->reads++;
	for (size_t i = 0; i < d->n; i++)
		if (d->fsb[i] == fsb) {
			memcpy(buf, d->blk[i], d->f.g.blocksize);
			return 0;
		}
	return -EIO;
}

static unsigned char *disk_block(struct disk *d, fs_fsblock_t fsb)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->fsb[i] == fsb)
			return d->blk[i];
	assert_true(d->n < NDISK);
	d->fsb[d->n] = fsb;
	d->blk[d->n] = calloc(1, d->f.g.blocksize);
	assert_non_null(d->blk[d->n]);
	return d->blk[d->n++];
}

static void disk_free(struct disk *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->blk[i]);
}

static fs_fsblock_t fsb(struct disk *d, uint32_t agno, uint32_t agbno)
{
	return fs_agbno_to_fsb(&d->f.g, agno, agbno);
}

static struct fs_bmap_ext ext(uint64_t off, fs_fsblock_t blk, uint64_t len)
{
	return (struct fs_bmap_ext){ .startoff = off, .startblock = blk, .blockcount = len };
}

/* A bmbt block header (long format, v5) with numrecs and siblings; CRC stamped by seal(). */
static unsigned char *mkblock(struct disk *d, fs_fsblock_t at, uint16_t level, uint16_t numrecs,
			      fs_fsblock_t left, fs_fsblock_t right)
{
	unsigned char *b = disk_block(d, at);
	struct xfs_btree_block *h = (struct xfs_btree_block *)b;

	memset(b, 0, d->f.g.blocksize);
	h->bb_magic = to_be32(XFS_BMAP_CRC_MAGIC);
	h->bb_level = to_be16(level);
	h->bb_numrecs = to_be16(numrecs);
	h->bb_u.l.bb_leftsib = to_be64(left);
	h->bb_u.l.bb_rightsib = to_be64(right);
	h->bb_u.l.bb_blkno = to_be64(fs_fsb_to_daddr(&d->f.g, at));
	h->bb_u.l.bb_owner = to_be64(INO);
	memcpy(&h->bb_u.l.bb_uuid, d->f.g.meta_uuid, 16);
	return b;
}

static void seal(struct disk *d, unsigned char *b)
{
	fx_recrc(FS_MT_BMBT, b, d->f.g.blocksize);
}

static void leaf_rec(struct disk *d, unsigned char *b, uint32_t i, struct fs_bmap_ext e)
{
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);

	(void)d;
	fs_bmbt_rec_encode(&e, (void *)fs_btree_rec(ops, b, i));
}

static void node_ent(struct disk *d, unsigned char *b, uint32_t i, uint64_t key, fs_fsblock_t ptr)
{
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);
	uint32_t maxr = fs_btree_maxrecs(ops, d->f.g.blocksize, false);
	unsigned char *k = (unsigned char *)fs_btree_key(ops, b, i);

	put_be64(k, key);
	put_be64(b + XFS_BTREE_LBLOCK_CRC_LEN + (size_t)maxr * 8 + (size_t)i * 8, ptr);
}

/* The inode: a regular file, data fork only, 512-byte inode (336-byte fork). */
struct ino {
	unsigned char dinode[512];
	struct fs_inode ip;
};

static void ino_init(struct ino *n, uint8_t format, uint64_t nextents)
{
	memset(n, 0, sizeof(*n));
	n->ip.ino = INO;
	n->ip.mode = S_IFREG | 0644;
	n->ip.format = format;
	n->ip.aformat = XFS_DINODE_FMT_EXTENTS;
	n->ip.nextents = nextents;
	n->ip.nrext64 = true;
}

static unsigned char *fork_of(struct ino *n)
{
	return n->dinode + sizeof(struct xfs_dinode);
}

/* Root of a btree fork: level, numrecs, then keys and pointers over a 336-byte fork. */
static void root_ent(struct ino *n, uint16_t level, uint16_t numrecs, uint32_t i, uint64_t key,
		     fs_fsblock_t ptr)
{
	unsigned char *r = fork_of(n);
	uint32_t maxr = (336 - 4) / 16;

	put_be16(r, level);
	put_be16(r + 2, numrecs);
	put_be64(r + 4 + (size_t)i * 8, key);
	put_be64(r + 4 + (size_t)maxr * 8 + (size_t)i * 8, ptr);
}

static int load(struct disk *d, struct ino *n, int whichfork, struct fs_findings *fl,
		struct fs_bmap *m)
{
	struct fs_bmap_ctx c = {
		.g = &d->f.g, .fl = fl, .have_log_head = true, .head_lsn = FX_HEAD_LSN,
		.read_fsblock = disk_read, .priv = d,
	};
	return fs_bmap_load(&c, n->dinode, &n->ip, whichfork, m);
}

static void test_rec_pack(void **state)
{
	struct fs_bmap_ext e = { .startoff = BMBT_STARTOFF_MASK, .startblock = (1ull << 52) - 1,
				 .blockcount = BMBT_BLOCKCOUNT_MASK, .unwritten = true }, o;
	unsigned char rec[16];

	(void)state;
	assert_int_equal(sizeof(struct xfs_bmbt_rec), 16);
	fs_bmbt_rec_encode(&e, rec);
	fs_bmbt_rec_decode(rec, &o);
	assert_true(o.unwritten);
	assert_int_equal(o.startoff, e.startoff);
	assert_int_equal(o.startblock, e.startblock);
	assert_int_equal(o.blockcount, e.blockcount);
	/* all ones on disk is every field at its maximum */
	memset(rec, 0xff, 16);
	fs_bmbt_rec_decode(rec, &o);
	assert_int_equal(o.startblock, (1ull << 52) - 1);
	e = ext(12345, 0x123456789ull, 77);
	fs_bmbt_rec_encode(&e, rec);
	fs_bmbt_rec_decode(rec, &o);
	assert_false(o.unwritten);
	assert_int_equal(o.startoff, 12345);
	assert_int_equal(o.startblock, 0x123456789ull);
	assert_int_equal(o.blockcount, 77);
	/* the layout xfs_db shows: l0 = flag|startoff<<9|startblock>>43 */
	assert_int_equal(get_be64(rec), (12345ull << 9) | (0x123456789ull >> 43));
}

static void test_extents_clean(void **state)
{
	struct disk d = { .n = 0 };
	struct fs_findings fl;
	struct fs_bmap m;
	struct ino n;
	struct fs_bmap_ext e[3];

	(void)state;
	fx_init_default(&d.f);
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 3);
	e[0] = ext(0, fsb(&d, 0, 100), 4);
	e[1] = ext(10, fsb(&d, 1, 200), 1);
	e[2] = ext(11, fsb(&d, 3, 9990), 10);	/* ends exactly at the short last AG's end */
	e[1].unwritten = true;
	for (int i = 0; i < 3; i++)
		fs_bmbt_rec_encode(&e[i], fork_of(&n) + i * 16);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	if (fl.n)
		fx_dump(&fl);
	assert_int_equal(fl.n, 0);
	assert_false(m.bad);
	assert_int_equal(m.n, 3);
	assert_int_equal(m.nbmbt, 0);
	assert_true(m.ext[1].unwritten);
	assert_int_equal(fs_bmap_blocks(&m), 15);
	assert_int_equal(fs_bmap_find(&m, 0), 0);
	assert_int_equal(fs_bmap_find(&m, 3), 0);
	assert_int_equal(fs_bmap_find(&m, 4), -1);
	assert_int_equal(fs_bmap_find(&m, 10), 1);
	assert_int_equal(fs_bmap_find(&m, 20), 2);
	assert_int_equal(fs_bmap_find(&m, 21), -1);
	fs_bmap_free(&m);

	/* no attr fork: nothing; local format: nothing */
	assert_int_equal(load(&d, &n, XFS_ATTR_FORK, &fl, &m), 0);
	assert_int_equal(m.n, 0);
	n.ip.format = XFS_DINODE_FMT_LOCAL;
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(fl.n, 0);
	assert_int_equal(d.reads, 0);
	fs_findings_free(&fl);
}

static void test_extents_hostile(void **state)
{
	struct disk d = { .n = 0 };
	struct fs_findings fl;
	struct fs_bmap m;
	struct ino n;
	struct fs_bmap_ext e[9];

	(void)state;
	fx_init_default(&d.f);
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 9);
	e[0] = ext(0, fsb(&d, 0, 100), 0);			/* zero length */
	e[1] = ext(1, fsb(&d, 9, 100), 1);			/* AG 9 does not exist */
	e[2] = ext(2, fsb(&d, 1, 0), 1);			/* on AG 1's headers */
	e[3] = ext(3, fsb(&d, 3, 9999), 2);			/* past the last AG's end */
	e[4] = ext(5, fsb(&d, 0, 16000), 1000);			/* crosses into AG 1 */
	e[5] = ext(10, fsb(&d, 0, 200), 5);			/* fine */
	e[6] = ext(12, fsb(&d, 0, 300), 1);			/* overlaps the previous */
	e[7] = ext(TOP_OFF - 10, fsb(&d, 0, 400), 10);		/* ends at the largest offset: fine */
	e[8] = ext(20, fsb(&d, 0, 500), 1);			/* behind the previous: order */
	for (int i = 0; i < 9; i++)
		fs_bmbt_rec_encode(&e[i], fork_of(&n) + i * 16);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	assert_true(m.bad);
	assert_true(fx_has(&fl, "bmap.blockcount", NULL));
	assert_true(fx_has(&fl, "bmap.startblock", NULL));
	assert_true(fx_has(&fl, "bmap.ag_end", NULL));
	assert_true(fx_has(&fl, "bmap.order", NULL));
	assert_false(fx_has(&fl, "bmap.offset", NULL));
	/* kept: the good one at 10 and the one at the top of the offset range */
	assert_int_equal(m.n, 2);
	assert_int_equal(m.ext[0].startoff, 10);
	assert_int_equal(m.ext[1].startoff, TOP_OFF - 10);
	fs_bmap_free(&m);
	fs_findings_free(&fl);

	/*
	 * past where a file of the largest size the kernel allows ends (2^63 - 1
	 * bytes), though the format could say it: xfs_repair's limit, bmap.offset
	 */
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 2);
	e[0] = ext(TOP_OFF - 10, fsb(&d, 0, 400), 11);
	e[1] = ext(BMBT_STARTOFF_MASK, fsb(&d, 0, 500), 1);
	for (int i = 0; i < 2; i++)
		fs_bmbt_rec_encode(&e[i], fork_of(&n) + i * 16);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	assert_true(m.bad);
	assert_true(fx_has(&fl, "bmap.offset", NULL));
	assert_int_equal(m.n, 0);
	fs_bmap_free(&m);
	fs_findings_free(&fl);

	/* a count far beyond what the fork holds: clamped, reported */
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 1ull << 40);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	assert_true(fx_has(&fl, "bmap.count", NULL));
	assert_true(m.bad);
	fs_bmap_free(&m);
	fs_findings_free(&fl);

	/* unwritten extents: fine in a regular file's data fork, not in an attr fork or a dir */
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 0);
	n.ip.forkoff = 20;	/* data fork 160 bytes, attr fork 176 */
	n.ip.anextents = 1;
	e[0] = ext(0, fsb(&d, 2, 50), 1);
	e[0].unwritten = true;
	fs_bmbt_rec_encode(&e[0], n.dinode + sizeof(struct xfs_dinode) + 160);
	assert_int_equal(load(&d, &n, XFS_ATTR_FORK, &fl, &m), 0);
	assert_int_equal(m.n, 1);
	assert_true(fx_has(&fl, "bmap.unwritten", NULL));
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	fs_findings_init(&fl);
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 1);
	n.ip.mode = S_IFDIR | 0755;
	fs_bmbt_rec_encode(&e[0], fork_of(&n));
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	assert_true(fx_has(&fl, "bmap.unwritten", NULL));
	fs_bmap_free(&m);
	fs_findings_free(&fl);

	/* silent load (fl NULL) still flags bad */
	ino_init(&n, XFS_DINODE_FMT_EXTENTS, 1);
	e[0] = ext(0, fsb(&d, 7, 50), 1);
	fs_bmbt_rec_encode(&e[0], fork_of(&n));
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, NULL, &m), 0);
	assert_true(m.bad);
	assert_int_equal(m.n, 0);
	fs_bmap_free(&m);
	/* bad fork selector */
	assert_int_equal(load(&d, &n, 7, NULL, &m), -EINVAL);
}

/*
 * A two-level tree: root (level 2) -> node A (level 1) -> leaves L1, L2, L3
 * holding 100 extents each (offsets 2i, one block each: every other block).
 */
#define PER_LEAF 100
static void build_tree(struct disk *d, struct ino *n)
{
	fs_fsblock_t A = fsb(d, 0, 1000), L[3] = { fsb(d, 0, 1001), fsb(d, 1, 50), fsb(d, 2, 60) };
	unsigned char *a, *l;

	ino_init(n, XFS_DINODE_FMT_BTREE, 3 * PER_LEAF);
	n->ip.nblocks = 3 * PER_LEAF + 4;
	root_ent(n, 2, 1, 0, 0, A);
	a = mkblock(d, A, 1, 3, NULLFSBLOCK, NULLFSBLOCK);
	for (int j = 0; j < 3; j++) {
		node_ent(d, a, (uint32_t)j, (uint64_t)j * PER_LEAF * 2, L[j]);
		l = mkblock(d, L[j], 0, PER_LEAF, j ? L[j - 1] : NULLFSBLOCK,
			    j < 2 ? L[j + 1] : NULLFSBLOCK);
		for (int i = 0; i < PER_LEAF; i++) {
			uint64_t off = ((uint64_t)j * PER_LEAF + (uint64_t)i) * 2;
			leaf_rec(d, l, (uint32_t)i, ext(off, fsb(d, 3, 2000 + (uint32_t)off), 1));
		}
		seal(d, l);
	}
	seal(d, a);
}

static void test_btree_clean(void **state)
{
	struct disk d = { .n = 0 };
	struct fs_findings fl;
	struct fs_bmap m;
	struct ino n;

	(void)state;
	fx_init_default(&d.f);
	fs_findings_init(&fl);
	build_tree(&d, &n);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	if (fl.n)
		fx_dump(&fl);
	assert_int_equal(fl.n, 0);
	assert_false(m.bad);
	assert_int_equal(m.n, 3 * PER_LEAF);
	assert_int_equal(m.nbmbt, 4);
	assert_int_equal(m.bmbt[0], fsb(&d, 0, 1000));
	assert_int_equal(fs_bmap_blocks(&m), 3 * PER_LEAF);
	assert_int_equal(fs_bmap_find(&m, 598), 299);
	assert_int_equal(fs_bmap_find(&m, 599), -1);
	for (size_t i = 1; i < m.n; i++)
		assert_true(m.ext[i].startoff > m.ext[i - 1].startoff);
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	disk_free(&d);
}

/* The root's children for readahead: what the root points to, nothing outside the fs. */
static void test_root_children(void **state)
{
	struct disk d = { .n = 0 };
	fs_fsblock_t kids[4];
	struct ino n;

	(void)state;
	fx_init_default(&d.f);
	build_tree(&d, &n);
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_DATA_FORK, kids, 4), 1);
	assert_int_equal(kids[0], fsb(&d, 0, 1000));
	/* no attr fork, or an extents fork: nothing */
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_ATTR_FORK, kids, 4), 0);
	/* three children, one pointing past the filesystem: two; max respected */
	root_ent(&n, 2, 3, 1, 100, fsb(&d, 1, 77));
	root_ent(&n, 2, 3, 2, 200, ~0ull >> 1);
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_DATA_FORK, kids, 4), 2);
	assert_int_equal(kids[1], fsb(&d, 1, 77));
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_DATA_FORK, kids, 1), 1);
	/* a record count the fork cannot hold: unusable */
	root_ent(&n, 2, 500, 0, 0, fsb(&d, 0, 1000));
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_DATA_FORK, kids, 4), 0);
	n.ip.format = XFS_DINODE_FMT_EXTENTS;
	assert_int_equal(fs_bmap_root_children(&d.f.g, n.dinode, &n.ip, XFS_DATA_FORK, kids, 4), 0);
	disk_free(&d);
}

/* Damage one thing in a fresh tree, load, expect a code (and the map flagged bad). */
typedef void (*damage_fn)(struct disk *d, struct ino *n);

static void expect(damage_fn fn, const char *code, bool want_count_ok)
{
	struct disk d = { .n = 0 };
	struct fs_findings fl;
	struct fs_bmap m;
	struct ino n;

	fx_init_default(&d.f);
	fs_findings_init(&fl);
	build_tree(&d, &n);
	fn(&d, &n);
	assert_int_equal(load(&d, &n, XFS_DATA_FORK, &fl, &m), 0);
	if (!fx_has(&fl, code, NULL)) {
		fx_dump(&fl);
		fail_msg("expected %s", code);
	}
	assert_true(m.bad);
	if (want_count_ok)
		assert_int_equal(m.n, 3 * PER_LEAF);
	assert_true(d.reads <= 16);	/* no block read over and over */
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	disk_free(&d);
}

static unsigned char *blk(struct disk *d, uint32_t agno, uint32_t agbno)
{
	return disk_block(d, fsb(d, agno, agbno));
}

static void dmg_owner(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 1, 50);
	(void)n;
	((struct xfs_btree_block *)b)->bb_u.l.bb_owner = to_be64(INO + 1);
	seal(d, b);
}
static void dmg_crc(struct disk *d, struct ino *n)
{
	(void)n;
	blk(d, 1, 50)[200] ^= 1;
}
static void dmg_magic(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 0, 1000);
	(void)n;
	((struct xfs_btree_block *)b)->bb_magic = to_be32(XFS_ABTB_CRC_MAGIC);
	seal(d, b);
}
static void dmg_blkno(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 2, 60);
	(void)n;
	((struct xfs_btree_block *)b)->bb_u.l.bb_blkno = to_be64(8);
	seal(d, b);
}
static void dmg_uuid(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 2, 60);
	(void)n;
	((unsigned char *)&((struct xfs_btree_block *)b)->bb_u.l.bb_uuid)[3] ^= 0x40;
	seal(d, b);
}
static void dmg_level(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 2, 60);
	(void)n;
	((struct xfs_btree_block *)b)->bb_level = to_be16(1);
	seal(d, b);
}
static void dmg_numrecs(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 0, 1001);
	(void)n;
	((struct xfs_btree_block *)b)->bb_numrecs = to_be16(60000);
	seal(d, b);
}
static void dmg_empty(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 0, 1001);
	(void)n;
	((struct xfs_btree_block *)b)->bb_numrecs = 0;
	seal(d, b);
}
static void dmg_sibling(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 1, 50);
	(void)n;
	((struct xfs_btree_block *)b)->bb_u.l.bb_rightsib = to_be64(fsb(d, 0, 5000));
	seal(d, b);
}
static void dmg_sibling_wild(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 1, 50);
	(void)n;
	((struct xfs_btree_block *)b)->bb_u.l.bb_leftsib = to_be64(1ull << 50);
	seal(d, b);
}
static void dmg_last_sibling(struct disk *d, struct ino *n)
{
	unsigned char *b = blk(d, 2, 60);
	(void)n;
	((struct xfs_btree_block *)b)->bb_u.l.bb_rightsib = to_be64(fsb(d, 0, 1001));
	seal(d, b);
}
static void dmg_key(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	node_ent(d, a, 1, 201, fsb(d, 1, 50));	/* first key of the leaf is 200 */
	seal(d, a);
}
static void dmg_key_order(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	node_ent(d, a, 2, 5, fsb(d, 2, 60));
	seal(d, a);
}
static void dmg_ptr(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	node_ent(d, a, 1, 200, fsb(d, 8, 1));	/* AG 8 does not exist */
	seal(d, a);
}
static void dmg_ptr_headers(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	node_ent(d, a, 1, 200, fsb(d, 1, 0));	/* AG 1 headers */
	seal(d, a);
}
static void dmg_shared(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	/* two entries lead to the same leaf: a shared subtree */
	node_ent(d, a, 1, 200, fsb(d, 0, 1001));
	seal(d, a);
}
static void dmg_self(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	/* a node pointing at itself: loop (or level) */
	node_ent(d, a, 1, 200, fsb(d, 0, 1000));
	seal(d, a);
}
static void dmg_unreadable(struct disk *d, struct ino *n)
{
	unsigned char *a = blk(d, 0, 1000);
	(void)n;
	node_ent(d, a, 1, 200, fsb(d, 1, 5555));	/* nothing written there */
	seal(d, a);
}
static void dmg_rec(struct disk *d, struct ino *n)
{
	unsigned char *l = blk(d, 1, 50);
	(void)n;
	leaf_rec(d, l, 10, ext(220, fsb(d, 3, 9995), 10));	/* past the short last AG */
	seal(d, l);
}
static void dmg_count(struct disk *d, struct ino *n)
{
	(void)d;
	n->ip.nextents = 3 * PER_LEAF + 1;
}
static void dmg_root_level(struct disk *d, struct ino *n)
{
	(void)d;
	put_be16(fork_of(n), 60);
}
static void dmg_root_numrecs(struct disk *d, struct ino *n)
{
	(void)d;
	put_be16(fork_of(n) + 2, 1000);
}
static void dmg_root_ptr(struct disk *d, struct ino *n)
{
	root_ent(n, 2, 1, 0, 0, ~0ull);
	(void)d;
}
static void dmg_root_key(struct disk *d, struct ino *n)
{
	root_ent(n, 2, 1, 0, 7, fsb(d, 0, 1000));
}

static void test_btree_hostile(void **state)
{
	(void)state;
	expect(dmg_owner, "bmbt.owner", false);
	expect(dmg_crc, "bmbt.crc", false);
	expect(dmg_magic, "bmbt.magic", false);
	expect(dmg_blkno, "bmbt.blkno", false);
	expect(dmg_uuid, "bmbt.uuid", false);
	expect(dmg_level, "bmbt.level", false);
	expect(dmg_numrecs, "bmbt.numrecs", false);
	expect(dmg_empty, "bmbt.numrecs", false);
	expect(dmg_sibling, "bmbt.sibling", true);
	expect(dmg_sibling_wild, "bmbt.sibling", false);
	expect(dmg_last_sibling, "bmbt.sibling", true);
	expect(dmg_key, "bmbt.key", true);
	expect(dmg_key_order, "bmbt.order", false);
	expect(dmg_ptr, "bmbt.ptr", false);
	expect(dmg_ptr_headers, "bmbt.ptr", false);
	expect(dmg_shared, "bmbt.loop", false);
	expect(dmg_self, "bmbt.loop", false);
	expect(dmg_unreadable, "bmbt.unreadable", false);
	expect(dmg_rec, "bmap.ag_end", false);
	expect(dmg_count, "bmap.count", true);
	expect(dmg_root_level, "bmbt.root", false);
	expect(dmg_root_numrecs, "bmbt.root", false);
	expect(dmg_root_ptr, "bmbt.ptr", false);
	expect(dmg_root_key, "bmbt.key", true);
}

/* The verifier table row: a lone bmbt block through fs_verify. */
static void test_verifier_row(void **state)
{
	const struct fs_verifier *v = fs_verifier_get(FS_MT_BMBT);
	struct disk d = { .n = 0 };
	struct fs_findings fl;
	struct fs_vctx c;
	unsigned char *b;

	(void)state;
	fx_init_default(&d.f);
	assert_non_null(v);
	assert_int_equal(v->codes.magic, FS_C_BMBT_MAGIC);
	assert_int_equal(v->codes.lsn, FS_C_BMBT_LSN);
	assert_int_equal(v->magic, XFS_BMAP_CRC_MAGIC);
	b = mkblock(&d, fsb(&d, 1, 77), 0, 1, NULLFSBLOCK, NULLFSBLOCK);
	leaf_rec(&d, b, 0, ext(0, fsb(&d, 1, 78), 1));
	seal(&d, b);
	fs_findings_init(&fl);
	c = fx_vctx(&d.f, 1, &fl);
	c.daddr = fs_fsb_to_daddr(&d.f.g, fsb(&d, 1, 77));
	c.ino = INO;
	assert_int_equal(fs_verify(FS_MT_BMBT, &c, b, d.f.g.blocksize), 0);
	c.ino = INO + 64;
	assert_int_equal(fs_verify(FS_MT_BMBT, &c, b, d.f.g.blocksize), 1);
	assert_true(fx_has(&fl, "bmbt.owner", "bb_owner"));
	fs_findings_free(&fl);
	disk_free(&d);
}

/* Random forks and random bmbt blocks (some with plausible headers): no crash, bounded work. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

struct rdisk {
	struct fx f;
	unsigned reads;
};

static int rdisk_read(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct rdisk *d = priv;
	struct xfs_btree_block *h = buf;
	unsigned char *b = buf;

	d->reads++;
	if (rnd() % 8 == 0)
		return -EIO;
	for (uint32_t i = 0; i < d->f.g.blocksize; i += 8)
		put_be64(b + i, rnd() % 4 ? rnd() : rnd() % 64);
	if (rnd() % 4) {
		/* a block that passes the verifier, with random records and pointers */
		h->bb_magic = to_be32(XFS_BMAP_CRC_MAGIC);
		h->bb_level = to_be16((uint16_t)(rnd() % 3));
		h->bb_numrecs = to_be16((uint16_t)(rnd() % 300));
		h->bb_u.l.bb_leftsib = to_be64(rnd() % 2 ? NULLFSBLOCK : rnd() % 70000);
		h->bb_u.l.bb_rightsib = to_be64(rnd() % 2 ? NULLFSBLOCK : rnd() % 70000);
		h->bb_u.l.bb_blkno = to_be64(fs_fsb_to_daddr(&d->f.g, fsb));
		h->bb_u.l.bb_owner = to_be64(INO);
		h->bb_u.l.bb_lsn = 0;
		memcpy(&h->bb_u.l.bb_uuid, d->f.g.meta_uuid, 16);
		/* node pointers into a small range so that loops and revisits happen */
		if (be16(h->bb_level))
			for (uint32_t i = 0; i < 300; i++)
				node_ent((struct disk *)d, b, i, i * 7, fs_agbno_to_fsb(&d->f.g, (uint32_t)(rnd() % 4),
								 (uint32_t)(1 + rnd() % 16)));
		fx_recrc(FS_MT_BMBT, b, d->f.g.blocksize);
	}
	return 0;
}

static void test_random(void **state)
{
	struct rdisk d = { .reads = 0 };

	(void)state;
	fx_init_default(&d.f);
	for (int it = 0; it < 3000; it++) {
		struct fs_bmap_ctx c = {
			.g = &d.f.g, .fl = NULL, .read_fsblock = rdisk_read, .priv = &d,
		};
		struct fs_findings fl;
		struct fs_bmap m;
		struct ino n;
		unsigned char *r = fork_of(&n);
		int err;

		ino_init(&n, rnd() % 2 ? XFS_DINODE_FMT_BTREE : XFS_DINODE_FMT_EXTENTS, rnd() % 64);
		n.ip.forkoff = (uint8_t)(rnd() % 3 == 0 ? rnd() % 50 : 0);
		n.ip.anextents = (uint32_t)(rnd() % 40);
		n.ip.aformat = rnd() % 2 ? XFS_DINODE_FMT_BTREE : XFS_DINODE_FMT_EXTENTS;
		for (size_t i = 0; i + 8 <= 512 - sizeof(struct xfs_dinode); i += 8)
			put_be64(r + i, rnd() % 2 ? rnd() : rnd() % 20000);
		put_be16(r, (uint16_t)(rnd() % 4));
		put_be16(r + 2, (uint16_t)(rnd() % 24));
		fs_findings_init(&fl);
		c.fl = rnd() % 2 ? &fl : NULL;
		d.reads = 0;
		err = fs_bmap_load(&c, n.dinode, &n.ip, rnd() % 2 ? XFS_DATA_FORK : XFS_ATTR_FORK, &m);
		assert_int_equal(err, 0);
		/* every block read once at most: the loop set bounds the walk */
		assert_true(d.reads <= 4 * 16 + 24);
		for (size_t i = 1; i < m.n; i++)
			assert_true(m.ext[i].startoff >= m.ext[i - 1].startoff + m.ext[i - 1].blockcount);
		fs_bmap_free(&m);
		fs_findings_free(&fl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_pack),
		cmocka_unit_test(test_extents_clean),
		cmocka_unit_test(test_extents_hostile),
		cmocka_unit_test(test_btree_clean),
		cmocka_unit_test(test_root_children),
		cmocka_unit_test(test_btree_hostile),
		cmocka_unit_test(test_verifier_row),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
