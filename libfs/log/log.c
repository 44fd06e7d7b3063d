// SPDX-License-Identifier: GPL-2.0
/*
 * The log, as far as offline tools need it: find the head (the newest
 * record) by the cycle numbers stamped in every log sector, and tell a
 * clean log (head record is an unmount record) from a dirty one, and
 * write a clean log (mkfs, repair -L).  The log is read and written on its
 * own device (fs->logdev: the data device for an internal log, at the
 * offset fs_log_offset gives; an external one from its byte 0).  Reading records and replay are in
 * logread.c and logreplay.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/fs.h"
#include "libfs/log/logread.h"

/* Walk back from the head to the last record header; is it an unmount record? */
static bool head_is_unmount(struct fs *fs, uint64_t log_off, uint64_t head_bb,
			    uint64_t log_bbs, unsigned char *buf)
{
	uint64_t limit = head_bb > 4096 ? 4096 : head_bb;

	for (uint64_t back = 1; back <= limit; back++) {
		uint64_t bb = head_bb - back;
		const struct xlog_rec_header *rh = (const void *)buf;

		if (fs_dev_read(fs->logdev, buf, FS_BBSIZE, log_off + (bb << FS_BBSHIFT)))
			return false;
		if (be32(rh->h_magicno) != XLOG_HEADER_MAGIC_NUM)
			continue;
		/* the log stamps every record with the filesystem's UUID */
		memcpy(fs->log_uuid, &rh->h_fs_uuid, sizeof(fs->log_uuid));
		fs->have_log_uuid = true;
		/* an unmount record: one op, its payload the unmount magic */
		{
			uint32_t len = be32(rh->h_len);
			uint32_t num_ops = be32(rh->h_num_logops);
			uint32_t hsize = be32(rh->h_size);
			/* v2 records larger than 32 KiB carry extra header sectors */
			uint64_t hdr_bbs = (be32(rh->h_version) & XLOG_VERSION_2) &&
				hsize > XLOG_HEADER_CYCLE_SIZE ?
				(hsize + XLOG_HEADER_CYCLE_SIZE - 1) / XLOG_HEADER_CYCLE_SIZE : 1;
			unsigned char *data;
			bool ok = false;

			/* a log stripe unit pads the record up to it (256 KiB at most) */
			if (num_ops != 1 || len == 0 || len > XLOG_MAX_RECORD_BSIZE ||
			    bb + hdr_bbs + (len + FS_BBSIZE - 1) / FS_BBSIZE > log_bbs)
				return false;
			data = malloc(FS_BBSIZE);
			if (!data)
				return false;
			if (!fs_dev_read(fs->logdev, data, FS_BBSIZE, log_off + ((bb + hdr_bbs) << FS_BBSHIFT))) {
				const struct xlog_op_header *op = (const void *)data;
				/* the first word of a data sector was swapped for the cycle */
				uint32_t flags = op->oh_flags;
				ok = (flags & XLOG_UNMOUNT_TRANS) != 0;
			}
			free(data);
			return ok;
		}
	}
	return false;
}

int fs_log_find_head(struct fs *fs)
{
	const struct fs_geom *g = &fs->g;
	uint64_t log_off, log_bbs, lo, hi;
	uint32_t first, last, c;
	unsigned char *buf;
	int err;

	fs->have_log_head = false;
	fs->have_log_uuid = false;
	if (!fs->logdev)
		return -EOPNOTSUPP;
	log_off = fs_log_offset(fs);
	log_bbs = (uint64_t)g->logblocks << (g->blocklog - FS_BBSHIFT);
	if (!log_bbs || log_off + (log_bbs << FS_BBSHIFT) > fs->logdev->size)
		return -EUCLEAN;
	buf = malloc(FS_BBSIZE);
	if (!buf)
		return -ENOMEM;
	err = fs_log_sector_cycle(fs, log_off, 0, &first, buf);
	if (!err)
		err = fs_log_sector_cycle(fs, log_off, log_bbs - 1, &last, buf);
	if (err)
		goto out;

	if (first == last) {
		/* every sector in one cycle: the head is at the end (or the log is blank) */
		fs->log_head_lsn = ((uint64_t)first << 32) | (log_bbs - 1);
		hi = log_bbs;
	} else {
		/* find the first sector still in the previous cycle */
		lo = 0;
		hi = log_bbs - 1;
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			err = fs_log_sector_cycle(fs, log_off, mid, &c, buf);
			if (err)
				goto out;
			if (c == first)
				lo = mid;
			else
				hi = mid;
		}
		fs->log_head_lsn = ((uint64_t)first << 32) | hi;
	}
	fs->have_log_head = first != 0;
	fs->log_clean = first == 0 || head_is_unmount(fs, log_off, hi, log_bbs, buf);
out:
	free(buf);
	return err;
}

/*
 * Every sector of [off, off + len) stamped with cycle in its first word, as
 * the data sectors of records written in that cycle read.
 */
static int stamp_cycle(struct fs_dev *dev, uint64_t off, uint64_t len, uint32_t cycle)
{
	const size_t chunk = 1 << 20;
	unsigned char *buf = fs_dev_alloc(dev, chunk);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0, chunk);
	for (size_t i = 0; i < chunk; i += FS_BBSIZE)
		put_be32(buf + i, cycle);
	for (uint64_t done = 0; done < len && !err; done += chunk) {
		uint64_t n = len - done < chunk ? len - done : chunk;

		err = fs_dev_write(dev, buf, (size_t)n, off + done);
	}
	free(buf);
	return err;
}

int fs_log_write_record(struct fs_dev *dev, uint64_t log_off, uint64_t log_bytes,
			const void *rec, size_t rec_len, const unsigned char uuid[16],
			uint32_t cycle, char *msg, size_t ml)
{
	char why[200];
	int err;

	if (cycle == 0 || rec_len > log_bytes || log_off + log_bytes > dev->size ||
	    log_bytes >> FS_BBSHIFT > UINT32_MAX) {
		snprintf(msg, ml, "a log of %llu bytes at byte %llu does not fit the device",
			 (unsigned long long)log_bytes, (unsigned long long)log_off);
		return -EINVAL;
	}
	/* the log must read back clean to our own reader: judged before anything is written */
	err = fs_log_check_clean_record(rec, rec_len, (uint32_t)(log_bytes >> FS_BBSHIFT), cycle,
					uuid, why, sizeof(why));
	if (err) {
		snprintf(msg, ml, "BUG: the clean log's record fails the log reader's checks before "
			 "it is written (%s); nothing of the log was written", why);
		return err;
	}
	/*
	 * Cycle 1 (a new log): zeroed sectors read as cycle 0, and the head
	 * search stops right after the one record.  A later cycle (a log thrown
	 * away past the metadata's LSNs): log readers accept a partly zeroed
	 * log only in cycle 1, so the rest of the log reads as the previous
	 * cycle, as a log that has wrapped does; the head is again right after
	 * the record.
	 */
	if (cycle == 1)
		err = fs_dev_zero_range(dev, log_off, log_bytes);
	else
		err = stamp_cycle(dev, log_off + rec_len, log_bytes - rec_len, cycle - 1);
	if (!err)
		err = fs_dev_write(dev, rec, rec_len, log_off);
	if (err)
		snprintf(msg, ml, "writing the log (%llu bytes at byte %llu) failed: %s",
			 (unsigned long long)log_bytes, (unsigned long long)log_off, strerror(-err));
	return err;
}

int fs_log_write_clean(struct fs_dev *dev, uint64_t log_off, uint64_t log_bytes,
		       uint32_t lsunit_bytes, const unsigned char uuid[16], uint32_t cycle,
		       char *msg, size_t ml)
{
	size_t rec_len = fs_log_first_record_len(lsunit_bytes);
	unsigned char *rec;
	int err;

	if (rec_len > log_bytes) {
		snprintf(msg, ml, "a log of %llu bytes cannot hold its first record (%zu bytes)",
			 (unsigned long long)log_bytes, rec_len);
		return -EINVAL;
	}
	rec = fs_dev_alloc(dev, rec_len);
	if (!rec)
		return -ENOMEM;
	fs_enc_log_unmount_record(rec, lsunit_bytes, uuid, cycle);
	err = fs_log_write_record(dev, log_off, log_bytes, rec, rec_len, uuid, cycle, msg, ml);
	free(rec);
	return err;
}

int fs_log_reset(struct fs *fs, char *msg, size_t ml)
{
	const struct fs_geom *g = &fs->g;
	uint64_t off = fs_log_offset(fs);
	uint64_t len = (uint64_t)g->logblocks << g->blocklog;
	/* above every LSN metadata can carry: the head's cycle (or more) plus one */
	uint32_t cycle = (fs->have_log_head ? fs_lsn_cycle(fs->log_head_lsn) : 1) + 1;

	if (!fs->logdev) {
		snprintf(msg, ml, "the external log device was not given");
		return -EOPNOTSUPP;
	}
	return fs_log_write_clean_fs(fs, off, len, cycle, "zeroing the log", msg, ml);
}

int fs_log_write_clean_fs(struct fs *fs, uint64_t log_off, uint64_t log_bytes, uint32_t cycle,
			  const char *what, char *msg, size_t ml)
{
	char why[320];
	int err;

	err = fs_log_write_clean(fs->logdev, log_off, log_bytes, fs_log_lsunit_bytes(&fs->sb),
				 (const unsigned char *)&fs->sb.sb_uuid, cycle, why, sizeof(why));
	if (err == -EUCLEAN) {
		snprintf(msg, ml, "%s", why);
		return err;
	}
	if (!err)
		err = fs_dev_flush(fs->logdev);
	if (err)
		snprintf(msg, ml, "%s failed: %s", what, strerror(-err));
	return err;
}

uint32_t fs_log_lsunit_bytes(const struct xfs_sb *sb)
{
	/* as mkfs.xfs: records are padded to the log stripe unit, else to the log sector */
	return sb->sb_logsunit > 1 ? sb->sb_logsunit : sb->sb_logsectsize;
}
