// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the log's writers: the clean log (fs_log_write_clean and
 * fs_log_write_record, what mkfs, repair -L and the replay's reset write)
 * and the replay's write of its overlay (fs_replay_write), over an image
 * file whose every sector is stamped with its number.  A good record or
 * block lands byte for byte as it was built; a bad one is refused before
 * any byte of anything reaches the device (the device's before-write hook
 * counts every range announced, the stamps show nothing changed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/fs.h"
#include "libfs/log/logread.h"
#include "libfs/log/logreplay_priv.h"
#include "tests/libfs/fixture.h"

#define IMG_BYTES (48ull << 20)    /* AG 0's first 48 MiB of the 4-AG fixture */
#define LOG_OFF   (32ull << 20)    /* a 2 MiB log inside it */
#define LOG_BYTES (2ull << 20)

static struct fx F;

struct tfix {
	char path[64];
	struct fs_dev *dev;
	int fd;
	unsigned writes;           /* ranges the before-write hook saw */
};

static void stamp(unsigned char *sec, uint64_t n)
{
	for (unsigned i = 0; i < FS_BBSIZE; i += 8)
		put_be64(sec + i, n * 1000 + i / 8);
}

static bool range_stamped(int fd, uint64_t off, uint64_t len)
{
	unsigned char sec[FS_BBSIZE], want[FS_BBSIZE];

	for (uint64_t s = off / FS_BBSIZE; s < (off + len) / FS_BBSIZE; s++) {
		stamp(want, s);
		if (pread(fd, sec, FS_BBSIZE, (off_t)(s * FS_BBSIZE)) != FS_BBSIZE ||
		    memcmp(sec, want, FS_BBSIZE))
			return false;
	}
	return true;
}

static bool on_disk(int fd, uint64_t off, const void *data, size_t len)
{
	unsigned char *p = malloc(len);
	bool ok = p && pread(fd, p, len, (off_t)off) == (ssize_t)len && !memcmp(p, data, len);

	free(p);
	return ok;
}

static int count_writes(void *priv, uint64_t off, uint64_t len)
{
	struct tfix *t = priv;

	(void)off;
	(void)len;
	t->writes++;
	return 0;
}

static int setup(void **state)
{
	struct tfix *t = calloc(1, sizeof(*t));
	struct fs_dev_opts o = { .writable = true, .no_direct = true };
	unsigned char *chunk = malloc(1 << 20);

	if (!t || !chunk)
		return -1;
	snprintf(t->path, sizeof(t->path), "/var/tmp/xfsx-logwrite.XXXXXX");
	t->fd = mkstemp(t->path);
	if (t->fd < 0)
		return -1;
	for (uint64_t c = 0; c < IMG_BYTES >> 20; c++) {
		for (uint32_t s = 0; s < 2048; s++)
			stamp(chunk + (size_t)s * FS_BBSIZE, c * 2048 + s);
		if (write(t->fd, chunk, 1 << 20) != 1 << 20)
			return -1;
	}
	free(chunk);
	if (fs_dev_open(t->path, &o, &t->dev))
		return -1;
	fs_dev_set_write_hook(t->dev, count_writes, t);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tfix *t = *state;

	fs_dev_close(t->dev);
	close(t->fd);
	unlink(t->path);
	free(t);
	return 0;
}

static const unsigned char *uuid(void)
{
	return (const unsigned char *)&F.sb.sb_uuid;
}

/* The record fs_log_write_clean writes, built as mkfs always built it. */
static size_t record(unsigned char *buf, uint32_t lsunit, uint32_t cycle)
{
	return fs_enc_log_unmount_record(buf, lsunit, uuid(), cycle);
}

/* Cycle 1 (mkfs) and a later one (-L, the replay's reset): the same bytes as ever, read back clean. */
static void test_clean_log(void **state)
{
	struct tfix *t = *state;
	static unsigned char rec[256 << 10], sec[FS_BBSIZE];
	const uint32_t lsunits[] = { 512, 4096, 32768, 65536, 262144 };
	char msg[256];

	for (size_t i = 0; i < sizeof(lsunits) / sizeof(lsunits[0]); i++)
		for (uint32_t cycle = 1; cycle <= 3; cycle += 2) {
			size_t n = record(rec, lsunits[i], cycle);

			assert_int_equal(fs_log_check_clean_record(rec, n, LOG_BYTES >> 9, cycle, uuid(),
								   msg, sizeof(msg)), 0);
			assert_int_equal(fs_log_write_clean(t->dev, LOG_OFF, LOG_BYTES, lsunits[i], uuid(),
							    cycle, msg, sizeof(msg)), 0);
			assert_true(on_disk(t->fd, LOG_OFF, rec, n));
			/* the rest reads as the cycle before: zeros in cycle 1, else its stamp */
			for (uint64_t off = LOG_OFF + n; off < LOG_OFF + LOG_BYTES; off += 64 * 1024) {
				assert_int_equal(pread(t->fd, sec, sizeof(sec), (off_t)off), sizeof(sec));
				assert_int_equal(get_be32(sec), cycle - 1);
			}
		}
	/* outside the log: untouched */
	assert_true(range_stamped(t->fd, LOG_OFF - 4096, 4096));
	assert_true(range_stamped(t->fd, LOG_OFF + LOG_BYTES, 4096));
}

/* A bad record is refused by the reader's checks: not a byte of the log is written. */
static void test_bad_record(void **state)
{
	struct tfix *t = *state;
	static unsigned char rec[64 << 10];
	struct xlog_rec_header *rh = (void *)rec;
	size_t n;
	char msg[256];

	/* a flipped byte in the unmount payload: the CRC no longer matches */
	n = record(rec, 4096, 2);
	rec[600] ^= 1;
	assert_int_equal(fs_log_write_record(t->dev, LOG_OFF, LOG_BYTES, rec, n, uuid(), 2, msg,
					     sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "CRC"));
	assert_non_null(strstr(msg, "nothing of the log was written"));
	/* the record of another cycle than the one asked for */
	n = record(rec, 4096, 2);
	assert_int_equal(fs_log_write_record(t->dev, LOG_OFF, LOG_BYTES, rec, n, uuid(), 3, msg,
					     sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "cycle"));
	/* another filesystem's UUID */
	n = record(rec, 4096, 2);
	assert_int_equal(fs_log_write_record(t->dev, LOG_OFF, LOG_BYTES, rec, n,
					     (const unsigned char *)"0123456789abcdef", 2, msg,
					     sizeof(msg)), -EUCLEAN);
	/* a record longer than its header says (the head would not follow it) */
	n = record(rec, 4096, 2);
	assert_int_equal(fs_log_write_record(t->dev, LOG_OFF, LOG_BYTES, rec, n + FS_BBSIZE, uuid(),
					     2, msg, sizeof(msg)), -EUCLEAN);
	/* a damaged header */
	n = record(rec, 4096, 2);
	rh->h_version = to_be32(7);
	assert_int_equal(fs_log_write_record(t->dev, LOG_OFF, LOG_BYTES, rec, n, uuid(), 2, msg,
					     sizeof(msg)), -EUCLEAN);
	assert_int_equal(t->writes, 0);
	assert_true(range_stamped(t->fd, LOG_OFF, LOG_BYTES));
}

/* Not an unmount record, though its CRC is right: not a clean log. */
static void test_not_unmount(void **state)
{
	static unsigned char rec[8192];
	struct xlog_rec_header *rh = (void *)rec;
	size_t n = record(rec, 4096, 1);
	struct xlog_op_header op;
	uint32_t crc;
	char msg[256];

	(void)state;
	/* the op header's flags live in the header's cycle data slot 0's word and after */
	memcpy(&op, rec + FS_BBSIZE, sizeof(op));
	op.oh_flags = 0;
	memcpy(rec + FS_BBSIZE, &op, sizeof(op));
	memcpy(&rh->h_cycle_data[0], rec + FS_BBSIZE, 4);
	put_be32(rec + FS_BBSIZE, 1);
	{
		/* the CRC made right again, as the encoder computes it */
		struct xlog_rec_header h = *rh;

		h.h_crc = 0;
		crc = fs_crc32c(~0u, &h, sizeof(h));
		crc = fs_crc32c(crc, rec + FS_BBSIZE, be32(rh->h_len));
		rh->h_crc = htole32(~crc);
	}
	assert_int_equal(fs_log_check_clean_record(rec, n, LOG_BYTES >> 9, 1, uuid(), msg,
						   sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "unmount"));
}

/* A replay over the stamped image: the fixture's geometry, no log of its own. */
static struct fs *replay_fs(struct tfix *t, struct fs_replay **rp)
{
	struct fs *fs = calloc(1, sizeof(*fs));

	assert_non_null(fs);
	fs->dev = t->dev;
	fs->logdev = t->dev;	/* an internal log: on the data device */
	fs->sb = F.sb;
	fs->g = F.g;
	*rp = calloc(1, sizeof(**rp));
	assert_non_null(*rp);
	(*rp)->fs = fs;
	return fs;
}

/* One AG-0 header sector into the overlay, noted as the replay notes what it writes. */
static void overlay_header(struct fs_replay *rp, enum fs_mtype type, const unsigned char *sec)
{
	uint64_t off = type == FS_MT_AGF ? fs_ag_agf_offset(&F.g, 0) : fs_ag_agi_offset(&F.g, 0);

	assert_int_equal(replay_buf_put(rp, off >> 9, 1, sec), 0);
	assert_int_equal(replay_note_write(rp, off >> 9, 1, 0, FS_BBSIZE, type, 0), 0);
}

static void test_replay_writes(void **state)
{
	struct tfix *t = *state;
	struct fs_replay *rp;
	struct fs *fs = replay_fs(t, &rp);
	struct fs_log_info li = { .log_off = LOG_OFF, .log_bbs = LOG_BYTES >> 9, .head_cycle = 4 };
	unsigned char agf[FS_BBSIZE], agi[FS_BBSIZE], rec[8192];
	char msg[512];

	fx_agf(&F, 0, agf);
	fx_agi(&F, 0, agi);
	overlay_header(rp, FS_MT_AGF, agf);
	overlay_header(rp, FS_MT_AGI, agi);
	assert_int_equal(fs_replay_write(fs, rp, &li, msg, sizeof(msg)), 0);
	/* the blocks as built, byte for byte; the log reset clean a cycle past the head */
	assert_true(on_disk(t->fd, fs_ag_agf_offset(&F.g, 0), agf, sizeof(agf)));
	assert_true(on_disk(t->fd, fs_ag_agi_offset(&F.g, 0), agi, sizeof(agi)));
	assert_true(on_disk(t->fd, LOG_OFF, rec,
			    record(rec, fs_log_lsunit_bytes(&F.sb), li.head_cycle + 1)));
	/* nothing else: the superblock sector and the AGFL keep their stamps */
	assert_true(range_stamped(t->fd, 0, FS_BBSIZE));
	assert_true(range_stamped(t->fd, fs_ag_agfl_offset(&F.g, 0), FS_BBSIZE));
	fs_replay_free(rp);
	free(fs);
}

static void test_replay_refuses(void **state)
{
	struct tfix *t = *state;
	struct fs_replay *rp;
	struct fs *fs = replay_fs(t, &rp);
	struct fs_log_info li = { .log_off = LOG_OFF, .log_bbs = LOG_BYTES >> 9, .head_cycle = 4 };
	unsigned char agf[FS_BBSIZE], agi[FS_BBSIZE];
	char msg[512];

	fx_agf(&F, 0, agf);
	fx_agi(&F, 0, agi);
	overlay_header(rp, FS_MT_AGF, agf);
	/* changed after the replay judged it: its length past the AG's (the CRC would be stamped) */
	put_be32(agi + offsetof(struct xfs_agi, agi_length), F.g.agblocks + 1);
	overlay_header(rp, FS_MT_AGI, agi);
	assert_int_equal(fs_replay_write(fs, rp, &li, msg, sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "BUG: an AGI block at daddr"));
	assert_non_null(strstr(msg, "before its first write"));
	/* nothing written: not the good AGF, not the log */
	assert_int_equal(t->writes, 0);
	assert_true(range_stamped(t->fd, fs_ag_agf_offset(&F.g, 0), FS_BBSIZE));
	assert_true(range_stamped(t->fd, fs_ag_agi_offset(&F.g, 0), FS_BBSIZE));
	assert_true(range_stamped(t->fd, LOG_OFF, LOG_BYTES));
	fs_replay_free(rp);
	free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_record, setup, teardown),
		cmocka_unit_test(test_not_unmount),
		cmocka_unit_test_setup_teardown(test_replay_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_refuses, setup, teardown),
	};

	fx_init_default(&F);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
