// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the write path (libfs/io/cache.c writeback, libfs/io/io.c write
 * batches and the before-write hook): dirty buffers of real metadata types
 * (the core fixture's AG headers, btree blocks, inodes) flushed on every
 * engine, buffered and O_DIRECT, over an image file whose every sector is
 * stamped with its number, so a byte that should not have changed proves it;
 * and fs_meta_seal, the same check for buffers written outside the cache.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfs/io/cache.h"
#include "libfs/format/dquot.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/util/spill.h"
#include "tests/libfs/fixture.h"

#define IMG_BYTES (64ull << 20)    /* AG 0 and a bit: the rest of the 4-AG fixture is past the end */

static struct fx F;

struct tfix {
	char path[64];
	struct fs_dev *dev;
	struct fs_cache *c;
	int fd;                          /* a plain descriptor for checking what landed */
};

static void stamp(unsigned char *sec, uint64_t n)
{
	for (unsigned i = 0; i < FS_BBSIZE; i += 8)
		put_be64(sec + i, n * 1000 + i / 8);
}

static bool sector_stamped(int fd, uint64_t n)
{
	unsigned char sec[FS_BBSIZE], want[FS_BBSIZE];

	stamp(want, n);
	return pread(fd, sec, FS_BBSIZE, (off_t)(n * FS_BBSIZE)) == FS_BBSIZE &&
	       !memcmp(sec, want, FS_BBSIZE);
}

static bool on_disk(int fd, uint64_t daddr, const void *data, size_t len)
{
	unsigned char *p = malloc(len);
	bool ok = pread(fd, p, len, (off_t)(daddr * FS_BBSIZE)) == (ssize_t)len && !memcmp(p, data, len);

	free(p);
	return ok;
}

static int make_image(struct tfix *t)
{
	unsigned char *chunk = malloc(1 << 20);
	int fd;

	snprintf(t->path, sizeof(t->path), "/var/tmp/xfsx-write.XXXXXX");
	fd = mkstemp(t->path);
	if (fd < 0 || !chunk)
		return -1;
	for (uint64_t c = 0; c < IMG_BYTES >> 20; c++) {
		for (uint32_t s = 0; s < 2048; s++)
			stamp(chunk + (size_t)s * FS_BBSIZE, c * 2048 + s);
		if (write(fd, chunk, 1 << 20) != 1 << 20)
			return -1;
	}
	free(chunk);
	t->fd = fd;
	return 0;
}

static int open_with(void **state, enum fs_io_engine e, bool direct, uint64_t cap)
{
	struct tfix *t = calloc(1, sizeof(*t));
	struct fs_dev_opts o = { .writable = true, .no_direct = !direct, .engine = e };

	if (!t || make_image(t))
		return -1;
	if (fs_dev_open(t->path, &o, &t->dev))
		return -1;
	if (fs_cache_create(t->dev, cap, &t->c))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tfix *t = *state;

	fs_cache_destroy(t->c);
	fs_dev_close(t->dev);
	close(t->fd);
	unlink(t->path);
	free(t);
	return 0;
}

static struct fs_flush_opts fopts(uint8_t wclass)
{
	return (struct fs_flush_opts){ .g = &F.g, .wclass = wclass };
}

/* A dirty AG-0 header sector of type t (valid contents from the fixture). */
static void dirty_header(struct tfix *t, enum fs_mtype type, uint8_t wclass, unsigned char *copy)
{
	uint64_t off = type == FS_MT_AGF ? fs_ag_agf_offset(&F.g, 0) : fs_ag_agi_offset(&F.g, 0);
	struct fs_dirty_info di = { .type = type, .agno = 0, .wclass = wclass };
	struct fs_buf *b;

	assert_int_equal(fs_cache_get_new(t->c, off / FS_BBSIZE, F.g.sectsize, &b), 0);
	for (uint32_t i = 0; i < F.g.sectsize; i++)
		assert_int_equal(b->data[i], 0);
	if (type == FS_MT_AGF)
		fx_agf(&F, 0, b->data);
	else
		fx_agi(&F, 0, b->data);
	/* the CRC is the flush's job: leave a stale one */
	memset(b->data + (type == FS_MT_AGF ? XFS_AGF_CRC_OFF : XFS_AGI_CRC_OFF), 0, 4);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	assert_int_equal(fs_buf_flags(b) & FS_BUF_DIRTY, FS_BUF_DIRTY);
	if (copy)
		memcpy(copy, b->data, F.g.sectsize);
	fs_buf_put(t->c, b);
}

/* A dirty empty bnobt leaf at agbno (one fs block) of AG 0. */
static struct fs_buf *dirty_btree_block(struct tfix *t, fs_agblock_t agbno, uint8_t wclass)
{
	fs_daddr_t d = fs_agbno_to_daddr(&F.g, 0, agbno);
	struct fs_dirty_info di = { .type = FS_MT_BNOBT, .agno = 0, .wclass = wclass };
	struct fs_buf *b;

	assert_int_equal(fs_cache_get_new(t->c, d, F.g.blocksize, &b), 0);
	fs_enc_sblock(b->data, F.g.blocksize, XFS_ABTB_CRC_MAGIC, 0, 1, d, 0, F.g.meta_uuid);
	fs_enc_alloc_rec(fs_sblock_rec(b->data, sizeof(xfs_alloc_rec_t), 0), agbno + 100, 7);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	return b;
}

/* Engines x buffered/direct: headers, a btree block and an inode cluster land, CRCs set. */
static void check_readback(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_result res;
	unsigned char agf[4096], agi[4096];
	fs_daddr_t inod = fs_agbno_to_daddr(&F.g, 0, 64);
	struct fs_dirty_info ii = { .type = FS_MT_INODE, .agno = 0,
				    .ino = fs_agino_to_ino(&F.g, 0, fs_agbno_to_agino(&F.g, 64)) };
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_buf *b, *ib;
	unsigned char blk[4096], ibuf[4 * 4096];

	dirty_header(t, FS_MT_AGF, 0, agf);
	dirty_header(t, FS_MT_AGI, 0, agi);
	b = dirty_btree_block(t, 40, 0);
	memcpy(blk, b->data, F.g.blocksize);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_get_new(t->c, inod, 4 * F.g.blocksize, &ib), 0);
	for (uint32_t i = 0; i < 4 * F.g.blocksize / F.g.inodesize; i++)
		fs_enc_dinode_free(ib->data + (size_t)i * F.g.inodesize, F.g.inodesize, ii.ino + i,
				   F.g.meta_uuid);
	assert_int_equal(fs_buf_mark_dirty(t->c, ib, &ii), 0);
	memcpy(ibuf, ib->data, sizeof(ibuf));
	fs_buf_put(t->c, ib);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 2 * F.g.sectsize + 5 * F.g.blocksize);

	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.buffers, 4);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 0);
	/* the flush stamped the CRCs: what is on disk verifies */
	fs_crc_update(agf, F.g.sectsize, XFS_AGF_CRC_OFF);
	fs_crc_update(agi, F.g.sectsize, XFS_AGI_CRC_OFF);
	fs_crc_update(blk, F.g.blocksize, XFS_BTREE_SBLOCK_CRC_OFF);
	assert_true(on_disk(t->fd, fs_ag_agf_offset(&F.g, 0) / FS_BBSIZE, agf, F.g.sectsize));
	assert_true(on_disk(t->fd, fs_ag_agi_offset(&F.g, 0) / FS_BBSIZE, agi, F.g.sectsize));
	assert_true(on_disk(t->fd, fs_agbno_to_daddr(&F.g, 0, 40), blk, F.g.blocksize));
	assert_true(on_disk(t->fd, inod, ibuf, sizeof(ibuf)));
	/* neighbours untouched: the superblock sector, the AGFL, the blocks around */
	assert_true(sector_stamped(t->fd, 0));
	assert_true(sector_stamped(t->fd, fs_ag_agfl_offset(&F.g, 0) / FS_BBSIZE));
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 40) - 1));
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 41)));
	/* clean again: a second flush writes nothing */
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.writes, 0);
	/* and the buffers read back through the cache as written */
	assert_int_equal(fs_cache_read(t->c, fs_agbno_to_daddr(&F.g, 0, 40), F.g.blocksize, &b), 0);
	assert_memory_equal(b->data, blk, F.g.blocksize);
	assert_int_equal(fs_buf_flags(b) & FS_BUF_DIRTY, 0);
	fs_buf_put(t->c, b);
}

#define ENGINE_SETUPS(name, e)                                                                 \
	static int setup_##name##_buf(void **s) { return open_with(s, e, false, 0); }          \
	static int setup_##name##_dio(void **s) { return open_with(s, e, true, 0); }
ENGINE_SETUPS(uring, FS_IO_URING)
ENGINE_SETUPS(aio, FS_IO_AIO)
ENGINE_SETUPS(pread, FS_IO_PREAD)
static int setup_auto_dio(void **s) { return open_with(s, FS_IO_AUTO, true, 0); }
static int setup_capped(void **s) { return open_with(s, FS_IO_AUTO, true, 3 * 4096); }

static void check_direct_used(void **state)
{
	struct tfix *t = *state;

	/* ext4/xfs under /var/tmp take O_DIRECT; the dio tests mean nothing otherwise */
	if (!t->dev->direct)
		skip();
	check_readback(state);
}

/* Contiguous blocks go out as one write; max_write splits them; a gap splits them too. */
static void test_coalesce(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;

	for (fs_agblock_t a = 100; a < 116; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.buffers, 16);
	assert_int_equal(res.writes, 1);
	assert_int_equal(res.bytes, 16 * 4096);

	for (fs_agblock_t a = 100; a < 116; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	o.max_write = 4 * 4096;
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.writes, 4);

	o.max_write = 0;
	for (fs_agblock_t a = 200; a < 204; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	for (fs_agblock_t a = 300; a < 302; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.writes, 2);
	assert_int_equal(res.buffers, 6);
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 204)));
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 299) + 7));
}

/*
 * 1 KiB buffers every 1.5 KiB: the 4 KiB O_DIRECT units are shared by
 * buffers in a chain with gaps between.  With a small max_write the chain
 * is cut into many writes inside shared units (memory stays bounded), and
 * still every buffer lands and every gap keeps its bytes.
 */
static void test_shared_chain_split(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	fs_daddr_t base = fs_agbno_to_daddr(&F.g, 0, 64);
	unsigned char *want = calloc(64, 1024);

	for (unsigned i = 0; i < 64; i++) {
		fs_daddr_t d = base + 3 * i;
		struct fs_dirty_info di = { .type = FS_MT_INODE, .agno = 0,
					    .ino = fs_agino_to_ino(&F.g, 0, (fs_agino_t)d) };
		struct fs_buf *b;

		assert_int_equal(fs_cache_get_new(t->c, d, 1024, &b), 0);
		fs_enc_dinode_free(b->data, 512, di.ino, F.g.meta_uuid);
		fs_enc_dinode_free(b->data + 512, 512, di.ino + 1, F.g.meta_uuid);
		memcpy(want + 1024 * i, b->data, 1024);
		assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
		fs_buf_put(t->c, b);
	}
	o.max_write = 8192;
	if (fs_cache_flush(t->c, &o, &res))
		fail_msg("%s: %s", res.has_code ? fs_code_name(res.code) : "-", res.message);
	assert_int_equal(res.buffers, 64);
	if (t->dev->direct && t->dev->dio_align == 4096)
		assert_true(res.writes >= 96 * 1024 / 8192);
	for (unsigned i = 0; i < 64; i++) {
		assert_true(on_disk(t->fd, base + 3 * i, want + 1024 * i, 1024));
		assert_true(sector_stamped(t->fd, base + 3 * i + 2));
	}
	free(want);
}

/*
 * Two 512-byte buffers in one 4 KiB O_DIRECT unit (AGF and AGI of AG 0):
 * flushed together, or in two classes one after the other, both survive,
 * and the unit's other sectors (superblock, AGFL...) keep their bytes.
 */
static void test_shared_unit(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	unsigned char agf[512], agi[512];
	uint64_t agfd = fs_ag_agf_offset(&F.g, 0) / FS_BBSIZE;
	uint64_t agid = fs_ag_agi_offset(&F.g, 0) / FS_BBSIZE;
	uint32_t freeblks;

	dirty_header(t, FS_MT_AGF, 0, agf);
	dirty_header(t, FS_MT_AGI, 0, agi);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	if (t->dev->direct && t->dev->dio_align > FS_BBSIZE) {
		assert_int_equal(res.writes, 1);
		assert_true(res.rmw_reads >= 1);
	}
	fs_crc_update(agf, 512, XFS_AGF_CRC_OFF);
	fs_crc_update(agi, 512, XFS_AGI_CRC_OFF);
	assert_true(on_disk(t->fd, agfd, agf, 512));
	assert_true(on_disk(t->fd, agid, agi, 512));
	for (uint64_t s = 0; s < 8; s++)
		if (s != agfd && s != agid)
			assert_true(sector_stamped(t->fd, s));

	/* again in two classes: the second flush must not undo the first */
	{
		struct fs_dirty_info di = { .type = FS_MT_AGF, .agno = 0, .wclass = FS_WCLASS_NEW };
		struct fs_buf *b;

		assert_int_equal(fs_cache_read(t->c, agfd, 512, &b), 0);
		freeblks = get_be32(b->data + offsetof(struct xfs_agf, agf_freeblks)) - 1;
		put_be32(b->data + offsetof(struct xfs_agf, agf_longest), 1);
		put_be32(b->data + offsetof(struct xfs_agf, agf_freeblks), freeblks);
		assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
		fs_buf_put(t->c, b);
		assert_int_equal(fs_cache_read(t->c, agid, 512, &b), 0);
		put_be32(b->data + offsetof(struct xfs_agi, agi_freecount), 7);
		di.type = FS_MT_AGI;
		di.wclass = FS_WCLASS_HEADERS;
		assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
		fs_buf_put(t->c, b);
	}
	o.wclass = FS_WCLASS_NEW;
	if (fs_cache_flush(t->c, &o, &res))
		fail_msg("%s: %s", res.has_code ? fs_code_name(res.code) : "-", res.message);
	assert_int_equal(res.buffers, 1);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 512);
	o.wclass = FS_WCLASS_HEADERS;
	o.sync = true;
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.buffers, 1);
	{
		unsigned char sec[512];

		assert_int_equal(pread(t->fd, sec, 512, (off_t)agfd * 512), 512);
		assert_int_equal(get_be32(sec + offsetof(struct xfs_agf, agf_freeblks)), freeblks);
		assert_true(fs_crc_ok(sec, 512, XFS_AGF_CRC_OFF));
		assert_int_equal(pread(t->fd, sec, 512, (off_t)agid * 512), 512);
		assert_int_equal(get_be32(sec + offsetof(struct xfs_agi, agi_freecount)), 7);
		assert_true(fs_crc_ok(sec, 512, XFS_AGI_CRC_OFF));
	}
	assert_true(sector_stamped(t->fd, 0));
}

struct hook_log {
	int fd;
	uint64_t off[64], len[64];
	unsigned n;
	bool before;          /* every range still held its old bytes when announced */
	bool fail;
	unsigned commits;     /* commit hook calls */
	unsigned at_commit;   /* ranges announced at the last commit */
	bool commit_before;   /* every announced range still held its old bytes at commit */
};

static int hook(void *priv, uint64_t off, uint64_t len)
{
	struct hook_log *h = priv;

	if (h->n < 64) {
		h->off[h->n] = off;
		h->len[h->n] = len;
	}
	h->n++;
	for (uint64_t s = off / FS_BBSIZE; s < (off + len) / FS_BBSIZE; s++)
		if (!sector_stamped(h->fd, s))
			h->before = false;
	return h->fail ? -EIO : 0;
}

static int commit_hook(void *priv)
{
	struct hook_log *h = priv;

	h->commits++;
	h->at_commit = h->n;
	for (unsigned i = 0; i < h->n && i < 64; i++)
		for (uint64_t s = h->off[i] / FS_BBSIZE; s < (h->off[i] + h->len[i]) / FS_BBSIZE; s++)
			if (!sector_stamped(h->fd, s))
				h->commit_before = false;
	return 0;
}

static bool hook_covers(const struct hook_log *h, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < h->n && i < 64; i++)
		if (h->off[i] <= off && off + len <= h->off[i] + h->len[i])
			return true;
	return false;
}

/* The hook sees every written range before it is written; a failing hook stops the write. */
static void test_write_hook(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	struct hook_log h = { .fd = t->fd, .before = true, .commit_before = true };
	unsigned char sec[512];

	fs_dev_set_write_hook(t->dev, hook, &h);
	fs_dev_set_write_commit(t->dev, commit_hook);
	dirty_header(t, FS_MT_AGF, 0, NULL);
	for (fs_agblock_t a = 100; a < 104; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	fs_buf_put(t->c, dirty_btree_block(t, 500, 0));
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(h.n, res.writes);
	assert_true(h.before);
	assert_true(hook_covers(&h, fs_ag_agf_offset(&F.g, 0), 512));
	assert_true(hook_covers(&h, fs_daddr_to_bytes(fs_agbno_to_daddr(&F.g, 0, 100)), 4 * 4096));
	assert_true(hook_covers(&h, fs_daddr_to_bytes(fs_agbno_to_daddr(&F.g, 0, 500)), 4096));
	/* one batch: one commit, after all three ranges, before any was written */
	assert_int_equal(h.commits, 1);
	assert_int_equal(h.at_commit, 3);
	assert_true(h.commit_before);

	/* fs_dev_write announces its range too */
	memset(sec, 0xee, sizeof(sec));
	h.n = 0;
	assert_int_equal(fs_dev_write(t->dev, sec, 512, 1000 * 512), 0);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.off[0], 1000 * 512);
	assert_int_equal(h.len[0], 512);
	assert_int_equal(h.commits, 2);

	/* a hook that fails: nothing written, buffers stay dirty */
	h.fail = true;
	h.n = 0;
	fs_buf_put(t->c, dirty_btree_block(t, 600, 0));
	assert_true(fs_cache_flush(t->c, &o, &res) < 0);
	assert_true(h.n >= 1);
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 600)));
	assert_int_equal(fs_cache_dirty_bytes(t->c), 4096);
	fs_dev_set_write_hook(t->dev, NULL, NULL);
	fs_dev_set_write_commit(t->dev, NULL);
}

/* A buffer whose new bytes fail their verifier stops the flush: nothing is written. */
static void test_verify_fails(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	struct hook_log h = { .fd = t->fd, .before = true };
	struct fs_buf *bad;

	fs_dev_set_write_hook(t->dev, hook, &h);
	fs_buf_put(t->c, dirty_btree_block(t, 100, 0));
	bad = dirty_btree_block(t, 101, 0);
	/* a level above what the geometry allows: the verifier's bnobt.level */
	put_be16(bad->data + offsetof(struct xfs_btree_block, bb_level), 40);
	fs_buf_put(t->c, bad);
	fs_buf_put(t->c, dirty_btree_block(t, 102, 0));
	fs_buf_put(t->c, dirty_btree_block(t, 900, 0));
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EUCLEAN);
	assert_int_equal(res.type, FS_MT_BNOBT);
	assert_int_equal(res.daddr, fs_agbno_to_daddr(&F.g, 0, 101));
	assert_true(res.has_code);
	assert_int_equal(res.code, FS_C_BNOBT_LEVEL);
	assert_true(strlen(res.message) > 0);
	assert_int_equal(h.n, 0);
	for (fs_agblock_t a = 100; a < 103; a++)
		assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, a)));
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 900)));
	assert_int_equal(fs_cache_dirty_bytes(t->c), 4 * 4096);

	/* a wrong UUID is caught too (the CRC is restamped, so only the verifier can tell) */
	bad = fs_cache_lookup(t->c, fs_agbno_to_daddr(&F.g, 0, 101), 4096);
	assert_non_null(bad);
	put_be16(bad->data + offsetof(struct xfs_btree_block, bb_level), 0);
	bad->data[offsetof(struct xfs_btree_block, bb_u.s.bb_uuid)] ^= 1;
	fs_buf_put(t->c, bad);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EUCLEAN);
	assert_true(res.has_code);
	assert_int_equal(res.code, FS_C_BNOBT_UUID);
	assert_int_equal(h.n, 0);
	fs_dev_set_write_hook(t->dev, NULL, NULL);
}

/*
 * fs_meta_seal, the flush's check for buffers written outside the cache
 * (the log replay, mkfs): a good block comes out byte-identical (its CRC
 * already right) or with its CRC stamped (a stale one); a bad one is
 * refused and named as a flush names it, and nothing it is handed to
 * reaches the device.
 */
static void test_seal(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_dirty_info di = { .type = FS_MT_AGF, .agno = 0 };
	struct fs_dirty_info ii = { .type = FS_MT_INODE, .agno = 0,
				    .ino = fs_agino_to_ino(&F.g, 0, fs_agbno_to_agino(&F.g, 64)) };
	struct fs_flush_result res;
	struct hook_log h = { .fd = t->fd, .before = true };
	fs_daddr_t agfd = fs_ag_agf_offset(&F.g, 0) / FS_BBSIZE;
	unsigned char agf[512], want[512], ib[4096], iwant[4096];
	char msg[512];

	fs_dev_set_write_hook(t->dev, hook, &h);
	fx_agf(&F, 0, want);
	memcpy(agf, want, sizeof(agf));
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), &res), 0);
	assert_memory_equal(agf, want, sizeof(agf));
	/* a stale CRC is stamped: the same bytes as a right one */
	memset(agf + XFS_AGF_CRC_OFF, 0, 4);
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), &res), 0);
	assert_memory_equal(agf, want, sizeof(agf));
	/* an inode cluster: every inode judged, the first inode's number given */
	for (uint32_t i = 0; i < sizeof(ib) / F.g.inodesize; i++)
		fs_enc_dinode_free(ib + (size_t)i * F.g.inodesize, F.g.inodesize, ii.ino + i,
				   F.g.meta_uuid);
	memcpy(iwant, ib, sizeof(ib));
	assert_int_equal(fs_meta_seal(&o, &ii, fs_agbno_to_daddr(&F.g, 0, 64), ib, sizeof(ib), &res),
			 0);
	assert_memory_equal(ib, iwant, sizeof(ib));
	/* the third inode says it is another: refused, that inode named */
	put_be64(ib + 2 * F.g.inodesize + offsetof(struct xfs_dinode, di_ino), ii.ino + 9);
	assert_int_equal(fs_meta_seal(&o, &ii, fs_agbno_to_daddr(&F.g, 0, 64), ib, sizeof(ib), &res),
			 -EUCLEAN);
	assert_int_equal(res.ino, ii.ino + 2);
	assert_int_equal(res.type, FS_MT_INODE);

	/* a wrong magic: refused with the flush's code, the object named */
	agf[0] ^= 0xff;
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), &res), -EUCLEAN);
	assert_int_equal(res.type, FS_MT_AGF);
	assert_int_equal(res.daddr, agfd);
	assert_int_equal(res.agno, 0);
	assert_true(res.has_code);
	assert_int_equal(res.code, FS_C_AGF_MAGIC);
	fs_flush_result_describe(&res, msg, sizeof(msg));
	assert_non_null(strstr(msg, "BUG: an AGF block at daddr"));
	assert_non_null(strstr(msg, "agf.magic"));
	/* a wrong UUID: the CRC is restamped, so only the verifier can tell */
	agf[0] ^= 0xff;
	agf[offsetof(struct xfs_agf, agf_uuid)] ^= 1;
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), &res), -EUCLEAN);
	assert_int_equal(res.code, FS_C_AGF_UUID);
	/* no type, no geometry, no bytes: refused as arguments */
	di.type = FS_MT_NR;
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), &res), -EINVAL);
	di.type = FS_MT_AGF;
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, 0, NULL), -EINVAL);
	o.g = NULL;
	assert_int_equal(fs_meta_seal(&o, &di, agfd, agf, sizeof(agf), NULL), -EINVAL);
	/* the seal never writes */
	assert_int_equal(h.n, 0);
	assert_true(sector_stamped(t->fd, agfd));
	fs_dev_set_write_hook(t->dev, NULL, NULL);
}

/* Nothing dirty, nothing written: reads alone never reach the device's write side. */
static void test_clean_writes_nothing(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	struct hook_log h = { .fd = t->fd, .before = true };
	struct fs_buf *b;

	fs_dev_set_write_hook(t->dev, hook, &h);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	for (uint64_t d = 0; d < 64; d += 8) {
		assert_int_equal(fs_cache_read(t->c, d, 4096, &b), 0);
		fs_buf_put(t->c, b);
	}
	/* a buffer obtained for overwrite but never marked stays unwritten */
	assert_int_equal(fs_cache_get_new(t->c, 4096, 4096, &b), 0);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.writes, 0);
	assert_int_equal(res.buffers, 0);
	assert_int_equal(h.n, 0);
	assert_true(sector_stamped(t->fd, 4096));
	fs_dev_set_write_hook(t->dev, NULL, NULL);
}

/* Dirty buffers count against the cap: -ENOSPC past it, a query before. */
static void test_budget(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_dirty_info di = { .type = FS_MT_BNOBT, .agno = 0 };
	struct fs_buf *b;

	assert_true(fs_cache_dirty_fits(t->c, 3 * 4096));
	assert_false(fs_cache_dirty_fits(t->c, 3 * 4096 + 1));
	for (fs_agblock_t a = 100; a < 103; a++)
		fs_buf_put(t->c, dirty_btree_block(t, a, 0));
	assert_false(fs_cache_dirty_fits(t->c, 1));
	assert_int_equal(fs_cache_get_new(t->c, fs_agbno_to_daddr(&F.g, 0, 103), 4096, &b), 0);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), -ENOSPC);
	assert_int_equal(fs_buf_flags(b) & FS_BUF_DIRTY, 0);
	/* marking an already dirty buffer again costs nothing */
	{
		struct fs_buf *d = fs_cache_lookup(t->c, fs_agbno_to_daddr(&F.g, 0, 100), 4096);

		assert_non_null(d);
		assert_int_equal(fs_buf_mark_dirty(t->c, d, &di), 0);
		fs_buf_put(t->c, d);
	}
	assert_int_equal(fs_cache_dirty_bytes(t->c), 3 * 4096);
	assert_int_equal(fs_cache_flush(t->c, &o, NULL), 0);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 0);
	/* flushed buffers are clean and evictable: the fourth fits now */
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_flush(t->c, &o, NULL), -EUCLEAN);	/* zeroed: no magic */
}

/*
 * With a staging file, dirty buffers past the cap leave memory instead of
 * being refused; a lookup reads one back, a dirty set's patch and a flush
 * see every byte, and the written staged buffers leave the cache.
 */
static void test_staging(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	struct fs_dirty_set *ds;
	struct fs_spill *sp;
	unsigned char want[8][4096], got[4096];
	const size_t crc = XFS_BTREE_SBLOCK_CRC_OFF;

	assert_int_equal(fs_spill_open("/tmp", 1, &sp), 0);
	fs_cache_set_stage(t->c, sp, 0);
	for (fs_agblock_t a = 0; a < 8; a++) {
		struct fs_buf *b = dirty_btree_block(t, 100 + a, 0);

		memcpy(want[a], b->data, 4096);
		fs_buf_put(t->c, b);
	}
	assert_int_equal(fs_cache_dirty_bytes(t->c), 8 * 4096);
	assert_true(fs_cache_staged_bytes(t->c) >= 5 * 4096);
	assert_true(fs_cache_dirty_fits(t->c, 100 * 4096));
	{
		/* the oldest was staged: looked up, it comes back whole and stays dirty */
		struct fs_buf *b = fs_cache_lookup(t->c, fs_agbno_to_daddr(&F.g, 0, 100), 4096);

		assert_non_null(b);
		assert_memory_equal(b->data, want[0], 4096);
		assert_true(fs_buf_flags(b) & FS_BUF_DIRTY);
		fs_buf_put(t->c, b);
	}
	assert_int_equal(fs_cache_dirty_set(t->c, &o, &ds, &res), 0);
	for (fs_agblock_t a = 0; a < 8; a++) {
		memset(got, 0, sizeof(got));
		fs_dirty_set_patch(ds, got, 4096, fs_daddr_to_bytes(fs_agbno_to_daddr(&F.g, 0, 100 + a)));
		assert_memory_equal(got, want[a], crc);
		assert_memory_equal(got + crc + 4, want[a] + crc + 4, 4096 - crc - 4);
	}
	fs_dirty_set_free(ds);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_int_equal(res.buffers, 8);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 0);
	assert_int_equal(fs_cache_staged_bytes(t->c), 0);
	assert_int_equal(fs_cache_stage_error(t->c), 0);
	for (fs_agblock_t a = 0; a < 8; a++) {
		assert_int_equal(pread(t->fd, got, 4096,
				       (off_t)fs_daddr_to_bytes(fs_agbno_to_daddr(&F.g, 0, 100 + a))),
				 4096);
		assert_memory_equal(got, want[a], crc);
		assert_memory_equal(got + crc + 4, want[a] + crc + 4, 4096 - crc - 4);
	}
	fs_cache_destroy(t->c);
	t->c = NULL;
	fs_spill_close(sp);
}

/* Two dirty buffers covering the same sectors: refused, nothing written. */
static void test_overlap_refused(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_ALL);
	struct fs_flush_result res;
	struct fs_dirty_info di = { .type = FS_MT_AGF, .agno = 0 };
	struct fs_buf *b;

	fs_buf_put(t->c, dirty_btree_block(t, 100, 0));
	assert_int_equal(fs_cache_get_new(t->c, fs_agbno_to_daddr(&F.g, 0, 100) + 1, 512, &b), 0);
	fx_agf(&F, 0, b->data);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EEXIST);
	assert_true(sector_stamped(t->fd, fs_agbno_to_daddr(&F.g, 0, 100)));
}

/*
 * Coherency: a clean cached block holding the AG headers sees the AGF
 * written under its own key; a dirty buffer of another class overlapping
 * the flushed one is refused too.
 */
static void test_overlap_coherent(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_NEW);
	struct fs_flush_result res;
	unsigned char agf[512];
	uint64_t agfd = fs_ag_agf_offset(&F.g, 0) / FS_BBSIZE;
	struct fs_buf *whole, *b;
	struct fs_dirty_info di = { .type = FS_MT_BNOBT, .agno = 0, .wclass = FS_WCLASS_HEADERS };

	assert_int_equal(fs_cache_read(t->c, 0, 4096, &whole), 0);
	assert_true(sector_stamped(t->fd, agfd));
	dirty_header(t, FS_MT_AGF, FS_WCLASS_NEW, agf);
	fs_crc_update(agf, 512, XFS_AGF_CRC_OFF);
	o.wclass = FS_WCLASS_NEW;
	assert_int_equal(fs_cache_flush(t->c, &o, &res), 0);
	assert_memory_equal(whole->data + agfd * FS_BBSIZE, agf, 512);
	fs_buf_put(t->c, whole);

	/* the AGF dirty again in one class, the block around it in another */
	dirty_header(t, FS_MT_AGF, FS_WCLASS_NEW, NULL);
	assert_int_equal(fs_cache_read(t->c, 0, 4096, &b), 0);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EEXIST);
	o.wclass = FS_WCLASS_HEADERS;
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EEXIST);
}

/*
 * The crash protocol's first and last writes: the primary superblock with
 * NEEDSREPAIR set, then cleared; each flushed alone with a device flush,
 * CRC restamped, verified; the rest of its unit untouched.
 */
static void test_superblock_needsrepair(void **state)
{
	struct tfix *t = *state;
	struct fs_flush_opts o = fopts(FS_WCLASS_PRIMARY);
	struct fs_flush_result res;
	struct fs_dirty_info di = { .type = FS_MT_SB, .agno = 0, .wclass = FS_WCLASS_PRIMARY };
	struct xfs_sb sb = F.sb;
	unsigned char sec[512];
	struct fs_buf *b;

	o.sync = true;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			sb.sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
		else
			sb.sb_features_incompat &= ~XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
		assert_int_equal(fs_cache_get_new(t->c, 0, F.g.sectsize, &b), 0);
		fx_sb_encode(&sb, b->data, F.g.sectsize);
		memset(b->data + FS_SB_CRC_OFF, 0, 4);	/* the flush's job */
		assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
		fs_buf_put(t->c, b);
		if (fs_cache_flush(t->c, &o, &res))
			fail_msg("%s: %s", res.has_code ? fs_code_name(res.code) : "-", res.message);
		assert_int_equal(res.buffers, 1);
		assert_int_equal(pread(t->fd, sec, sizeof(sec), 0), (ssize_t)sizeof(sec));
		assert_true(fs_crc_ok(sec, F.g.sectsize, FS_SB_CRC_OFF));
		assert_int_equal(!!(get_be32(sec + offsetof(struct xfs_dsb, sb_features_incompat)) &
				    XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR), pass == 0);
		assert_true(sector_stamped(t->fd, 1));
	}
	/* a superblock its verifier rejects is not written */
	sb.sb_agblocks = 0;
	assert_int_equal(fs_cache_get_new(t->c, 0, F.g.sectsize, &b), 0);
	fx_sb_encode(&sb, b->data, F.g.sectsize);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), 0);
	fs_buf_put(t->c, b);
	assert_int_equal(fs_cache_flush(t->c, &o, &res), -EUCLEAN);
	assert_int_equal(res.type, FS_MT_SB);
	assert_true(res.has_code);
	assert_int_equal(fs_finding_def(res.code)->obj, FS_OBJ_SB);
	assert_int_equal(pread(t->fd, sec, sizeof(sec), 0), (ssize_t)sizeof(sec));
	assert_int_equal(get_be32(sec + offsetof(struct xfs_dsb, sb_agblocks)), F.sb.sb_agblocks);
}

/* Bad arguments. */
static void test_args(void **state)
{
	struct tfix *t = *state;
	struct fs_dirty_info di = { .type = FS_MT_NR };
	struct fs_buf *b;

	assert_int_equal(fs_cache_get_new(t->c, 0, 0, &b), -EINVAL);
	assert_int_equal(fs_cache_get_new(t->c, IMG_BYTES / FS_BBSIZE, 512, &b), -ENXIO);
	assert_int_equal(fs_cache_flush(t->c, NULL, NULL), -EINVAL);
	assert_int_equal(fs_cache_get_new(t->c, 8, 512, &b), 0);
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), -EINVAL);
	di.type = FS_MT_AGF;
	di.wclass = FS_WCLASS_NR;
	assert_int_equal(fs_buf_mark_dirty(t->c, b, &di), -EINVAL);
	assert_int_equal(fs_cache_dirty_bytes(t->c), 0);
	fs_buf_put(t->c, b);
}

/*
 * The dquot a repair writes for one it cannot trust (fs_enc_dqblk): a
 * block of them passes the block verifier with ids from their place, and
 * one flipped byte in a record is caught (its CRC).
 */
static void test_dqblk(void **state)
{
	struct fx f;
	struct fs_findings fl;
	struct fs_vctx vc;
	uint32_t per;
	unsigned char *blk;

	(void)state;
	fx_init_default(&f);
	per = fs_dquot_per_block(&f.g);
	blk = calloc(1, f.g.blocksize);
	assert_non_null(blk);
	for (uint32_t i = 0; i < per; i++)
		fs_enc_dqblk(blk + i * sizeof(struct xfs_dqblk), 3 * per + i, XFS_DQTYPE_GROUP,
			     f.g.meta_uuid);
	fs_findings_init(&fl);
	vc = fx_vctx(&f, 0, &fl);
	assert_int_equal(fs_dquot_block_verify(&vc, blk, f.g.blocksize, 3, XFS_DQTYPE_GROUP), 0);
	/* the wrong place (ids of block 3 read as block 4) and a flipped byte are findings */
	assert_true(fs_dquot_block_verify(&vc, blk, f.g.blocksize, 4, XFS_DQTYPE_GROUP) > 0);
	fs_findings_free(&fl);
	fs_findings_init(&fl);
	vc = fx_vctx(&f, 0, &fl);
	blk[2 * sizeof(struct xfs_dqblk) + 40] ^= 1;
	assert_true(fs_dquot_block_verify(&vc, blk, f.g.blocksize, 3, XFS_DQTYPE_GROUP) > 0);
	assert_true(fx_has(&fl, "dquot.crc", NULL));
	fs_findings_free(&fl);
	free(blk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dqblk),
		cmocka_unit_test_setup_teardown(check_readback, setup_uring_buf, teardown),
		cmocka_unit_test_setup_teardown(check_direct_used, setup_uring_dio, teardown),
		cmocka_unit_test_setup_teardown(check_readback, setup_aio_buf, teardown),
		cmocka_unit_test_setup_teardown(check_direct_used, setup_aio_dio, teardown),
		cmocka_unit_test_setup_teardown(check_readback, setup_pread_buf, teardown),
		cmocka_unit_test_setup_teardown(check_direct_used, setup_pread_dio, teardown),
		cmocka_unit_test_setup_teardown(test_coalesce, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_shared_unit, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_shared_chain_split, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_shared_chain_split, setup_uring_buf, teardown),
		cmocka_unit_test_setup_teardown(test_shared_unit, setup_pread_buf, teardown),
		cmocka_unit_test_setup_teardown(test_write_hook, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_verify_fails, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_seal, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_clean_writes_nothing, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup_capped, teardown),
		cmocka_unit_test_setup_teardown(test_staging, setup_capped, teardown),
		cmocka_unit_test_setup_teardown(test_overlap_refused, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_overlap_coherent, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_superblock_needsrepair, setup_auto_dio, teardown),
		cmocka_unit_test_setup_teardown(test_args, setup_auto_dio, teardown),
	};

	fx_init_default(&F);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
