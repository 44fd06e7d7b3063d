// SPDX-License-Identifier: GPL-2.0
/*
 * The realtime section's free space (phase 7, with the realtime inodes):
 * the inode scan notes every extent a realtime file maps (rt blocks, not
 * in the AGs, so not in the model); from them this file computes what the
 * realtime bitmap must say (a set bit is a free rt extent), what the
 * summary must count (free runs per log2 size and bitmap block, at
 * log * rbmblocks + bitmap block) and sb_frextents, and compares each
 * block of the bitmap and summary files with it (findings rt.bitmap,
 * rt.summary, rt.frextents); with the realtime device given, its size
 * bounds every extent (rt.beyond_device, rt.device_small).  Bitmap words
 * and summary counters are in host order, as the kernel keeps them before
 * rtgroups.  Nothing is judged
 * unless every inode's forks were read (a file the scan could not read may
 * own rt extents) and both inodes are usable.  The expected blocks stay in
 * the scan context (xfsx_repair writes them): held whole, so a bitmap
 * larger than RT_MAX_BITMAP is not judged (a streaming comparison would
 * lift that limit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "libfs/format/bmap.h"
#include "libfs/util/vec.h"

#define RT_REPORTS 20              /* per file, then one summary line */
#define RT_MAX_BITMAP (1ull << 30) /* 2^33 rt extents: 32 TiB of 4 KiB extents */

/*
 * With the realtime device given, its size bounds every rt extent a file
 * maps: the first one past its end is reported per file (the map itself
 * may be sound: the device is what is short).
 */
static void bound_by_device(struct scan_ctx *cx, fs_ino_t ino, const struct fs_bmap *m)
{
	const struct fs_geom *g = &cx->fs->g;
	uint64_t dev_blocks;

	if (!cx->fs->rtdev)
		return;
	dev_blocks = cx->fs->rtdev->size >> g->blocklog;
	for (size_t i = 0; i < m->n; i++) {
		const struct fs_bmap_ext *e = &m->ext[i];

		if (e->startblock < dev_blocks && e->blockcount <= dev_blocks - e->startblock)
			continue;
		fs_report(cx->fl, FS_C_RT_BEYOND_DEVICE, fs_ino_to_agno(g, ino), FS_NONE,
			  (int64_t)ino, "startblock", "inside the realtime device",
			  FS_U(e->startblock), "realtime extent at rt block %llu (%llu blocks) "
			  "ends past the end of the realtime device %s (%llu blocks)",
			  (unsigned long long)e->startblock, (unsigned long long)e->blockcount,
			  cx->fs->rtdev->path, (unsigned long long)dev_blocks);
		return;
	}
}

void scan_rt_device(struct scan_ctx *cx)
{
	const struct fs_geom *g = &cx->fs->g;
	uint64_t want = (uint64_t)g->rblocks << g->blocklog;

	if (!cx->fs->rtdev || cx->fs->rtdev->size >= want)
		return;
	fs_report(cx->fl, FS_C_RT_DEVICE_SMALL, FS_NONE, FS_NONE, FS_NONE, "rblocks",
		  FS_U(cx->fs->rtdev->size >> g->blocklog), FS_U(g->rblocks),
		  "the realtime section is %llu blocks (%llu bytes), but the realtime device %s "
		  "holds only %llu bytes: it is not this filesystem's realtime device, or it was "
		  "cut short (the kernel does not mount it so)", (unsigned long long)g->rblocks,
		  (unsigned long long)want, cx->fs->rtdev->path,
		  (unsigned long long)cx->fs->rtdev->size);
}

int scan_rt_note(struct scan_ctx *cx, fs_ino_t ino, const struct fs_bmap *m)
{
	struct scan_rt *rt = &cx->rt;
	int err = 0;

	if (!m->n)
		return 0;
	bound_by_device(cx, ino, m);
	pthread_mutex_lock(&rt->lock);
	for (size_t i = 0; i < m->n && !err; i++) {
		err = FS_VEC_ROOM(rt->ext, rt->n, rt->cap, 64);
		if (!err)
			rt->ext[rt->n++] = (struct scan_rt_ext){ m->ext[i].startblock,
								 m->ext[i].blockcount };
	}
	pthread_mutex_unlock(&rt->lock);
	return err;
}

static void set_bit_free(uint8_t *map, uint64_t rtx, bool free_)
{
	uint32_t w;
	uint8_t *p = map + (rtx / 32) * 4;

	memcpy(&w, p, 4);
	if (free_)
		w |= 1u << (rtx % 32);
	else
		w &= ~(1u << (rtx % 32));
	memcpy(p, &w, 4);
}

static bool bit_free(const uint8_t *map, uint64_t rtx)
{
	uint32_t w;

	memcpy(&w, map + (rtx / 32) * 4, 4);
	return (w >> (rtx % 32)) & 1;
}

/* The expected bitmap, summary and free count; 0 or -ENOMEM. */
static int compute(struct scan_ctx *cx)
{
	const struct xfs_sb *sb = &cx->fs->sb;
	struct scan_rt *rt = &cx->rt;
	uint32_t bs = cx->fs->g.blocksize;
	uint64_t bits_per_block = (uint64_t)bs * 8, rextsize = sb->sb_rextsize;
	uint64_t nsum = (uint64_t)(sb->sb_rextslog + 1u) * sb->sb_rbmblocks;

	rt->bmbytes = (uint64_t)sb->sb_rbmblocks * bs;
	rt->sumblocks = (nsum * sizeof(uint32_t) + bs - 1) / bs;
	rt->bitmap = calloc(1, rt->bmbytes ? rt->bmbytes : 1);
	rt->summary = calloc(rt->sumblocks ? rt->sumblocks : 1, bs);
	if (!rt->bitmap || !rt->summary)
		return -ENOMEM;
	memset(rt->bitmap, 0xff, (size_t)(sb->sb_rextents / 32) * 4);
	for (uint64_t x = sb->sb_rextents / 32 * 32; x < sb->sb_rextents; x++)
		set_bit_free(rt->bitmap, x, true);
	for (size_t i = 0; i < rt->n; i++) {
		uint64_t first = rt->ext[i].start / rextsize;
		uint64_t last = (rt->ext[i].start + rt->ext[i].len - 1) / rextsize;

		if (!rt->ext[i].len)
			continue;
		/* the fork checks reported extents outside the device; mark what is inside */
		for (uint64_t x = first; x <= last && x < sb->sb_rextents; x++)
			set_bit_free(rt->bitmap, x, false);
	}
	rt->frextents = 0;
	for (uint64_t x = 0; x < sb->sb_rextents;) {
		uint64_t end = x, len;
		unsigned level = 0;

		uint32_t w;

		memcpy(&w, rt->bitmap + (x / 32) * 4, 4);
		if (x % 32 == 0 && w == 0) {	/* a word of used extents */
			x += 32;
			continue;
		}
		if (!bit_free(rt->bitmap, x)) {
			x++;
			continue;
		}
		while (end < sb->sb_rextents) {
			memcpy(&w, rt->bitmap + (end / 32) * 4, 4);
			if (end % 32 == 0 && w == UINT32_MAX && end + 32 <= sb->sb_rextents)
				end += 32;
			else if (bit_free(rt->bitmap, end))
				end++;
			else
				break;
		}
		len = end - x;
		while (level < sb->sb_rextslog && level < 63 && (len >> (level + 1)))
			level++;
		rt->summary[(uint64_t)level * sb->sb_rbmblocks + x / bits_per_block]++;
		rt->frextents += len;
		x = end;
	}
	return 0;
}

/* Compare nblocks file blocks of ino with want (mask: the bits that count in the last block). */
static int compare_file(struct scan_ctx *cx, fs_ino_t ino, const struct fs_bmap *m,
			const uint8_t *want, uint64_t nblocks, uint64_t want_bytes, bool bitmap,
			bool *bad)
{
	const struct fs_geom *g = &cx->fs->g;
	enum fs_code code = bitmap ? FS_C_RT_BITMAP : FS_C_RT_SUMMARY;
	const char *what = bitmap ? "realtime bitmap" : "realtime summary";
	uint8_t *buf = malloc(g->blocksize);
	size_t nrep = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t fb = 0; fb < nblocks; fb++) {
		uint64_t off = fb * g->blocksize;
		size_t cmp = want_bytes - off < g->blocksize ? (size_t)(want_bytes - off) : g->blocksize;
		fs_fsblock_t fsb;
		struct fs_vctx c;
		bool differ;

		if (!fs_bmap_fsb(g, m, fb, &fsb)) {
			bad[fb] = true;
			if (++nrep <= RT_REPORTS)
				fs_report(cx->fl, code, fs_ino_to_agno(g, ino), FS_NONE, (int64_t)ino,
					  "block", "mapped", "a hole",
					  "%s block %llu is not mapped", what, (unsigned long long)fb);
			continue;
		}
		c = scan_vctx(cx, ino, fsb);
		if (scan_read_agblock(cx, c.agno, fs_fsb_to_agbno(g, fsb), buf)) {
			bad[fb] = true;
			if (++nrep <= RT_REPORTS)
				fs_report(cx->fl, code, c.agno, (int64_t)c.daddr, (int64_t)ino, NULL, NULL,
					  NULL, "%s block %llu could not be read", what,
					  (unsigned long long)fb);
			continue;
		}
		if (bitmap && cmp < g->blocksize) {
			/* the last block: only the bits of existing rt extents count */
			uint64_t bits = cx->fs->sb.sb_rextents - fb * (uint64_t)g->blocksize * 8;
			size_t whole = (size_t)(bits / 32) * 4;
			uint32_t a, b, mask = bits % 32 ? (1u << (bits % 32)) - 1 : 0;

			differ = memcmp(buf, want + off, whole) != 0;
			if (!differ && mask) {
				memcpy(&a, buf + whole, 4);
				memcpy(&b, want + off + whole, 4);
				differ = (a & mask) != (b & mask);
			}
		} else if (bitmap) {
			differ = memcmp(buf, want + off, g->blocksize) != 0;
		} else {
			/* counters past the summary's size must be zero too */
			differ = memcmp(buf, want + off, g->blocksize) != 0;
		}
		if (!differ)
			continue;
		bad[fb] = true;
		if (++nrep <= RT_REPORTS)
			fs_report(cx->fl, code, c.agno, (int64_t)c.daddr, (int64_t)ino, NULL, NULL,
				  NULL, "%s block %llu disagrees with %s", what, (unsigned long long)fb,
				  bitmap ? "the realtime extents the files map" :
				  "the free runs of the realtime bitmap");
	}
	if (nrep > RT_REPORTS)
		fs_report(cx->fl, code, FS_NONE, FS_NONE, (int64_t)ino, NULL, NULL, NULL,
			  "%zu more such %s blocks", nrep - RT_REPORTS, what);
	free(buf);
	return 0;
}

/*
 * Only a realtime geometry the superblock rules accept is judged (they
 * report the rest): the sizes computed here come from it.
 */
static bool geometry_ok(const struct scan_ctx *cx)
{
	const struct xfs_sb *sb = &cx->fs->sb;
	uint64_t bits = (uint64_t)cx->fs->g.blocksize * 8;
	unsigned log = 0;

	while (log < 63 && (sb->sb_rextents >> (log + 1)))
		log++;
	/* the expected bitmap is held whole: past RT_MAX_BITMAP the section is not judged */
	if ((uint64_t)sb->sb_rbmblocks * cx->fs->g.blocksize > RT_MAX_BITMAP)
		return false;
	return sb->sb_rblocks && sb->sb_rextents == sb->sb_rblocks / sb->sb_rextsize &&
	       sb->sb_rbmblocks == (sb->sb_rextents + bits - 1) / bits &&
	       sb->sb_rextslog == log;
}

int scan_rt_compute(struct scan_ctx *cx, bool forks_known)
{
	const struct xfs_sb *sb = &cx->fs->sb;
	int err;

	if (cx->rt.computed)
		return 0;
	if (!sb->sb_rextents || !sb->sb_rextsize || (!cx->forks_complete && !forks_known) ||
	    !geometry_ok(cx))
		return 0;
	err = compute(cx);
	if (!err)
		cx->rt.computed = true;
	return err;
}

int scan_rt_check(struct scan_ctx *cx, const struct fs_bmap *bm, const struct fs_bmap *sum)
{
	const struct xfs_sb *sb = &cx->fs->sb;
	struct scan_rt *rt = &cx->rt;
	int err;

	err = scan_rt_compute(cx, false);
	if (err || !rt->computed)
		return err;
	rt->bad_bm = calloc(sb->sb_rbmblocks ? sb->sb_rbmblocks : 1, sizeof(bool));
	rt->bad_sum = calloc(rt->sumblocks ? rt->sumblocks : 1, sizeof(bool));
	if (!rt->bad_bm || !rt->bad_sum)
		return -ENOMEM;
	err = compare_file(cx, sb->sb_rbmino, bm, rt->bitmap, sb->sb_rbmblocks, rt->bmbytes, true,
			   rt->bad_bm);
	if (!err)
		err = compare_file(cx, sb->sb_rsumino, sum, (const uint8_t *)rt->summary,
				   rt->sumblocks, rt->sumblocks * (uint64_t)cx->fs->g.blocksize,
				   false, rt->bad_sum);
	if (err)
		return err;
	if (sb->sb_frextents != rt->frextents) {
		rt->frextents_bad = true;
		fs_report(cx->fl, FS_C_RT_FREXTENTS, 0, 0, FS_NONE, "sb_frextents",
			  FS_U(rt->frextents), FS_U(sb->sb_frextents),
			  "superblock says %llu free realtime extents; the bitmap has %llu",
			  (unsigned long long)sb->sb_frextents, (unsigned long long)rt->frextents);
	}
	rt->judged = true;
	return 0;
}

void scan_rt_free(struct scan_ctx *cx)
{
	struct scan_rt *rt = &cx->rt;

	free(rt->ext);
	free(rt->bitmap);
	free(rt->summary);
	free(rt->bad_bm);
	free(rt->bad_sum);
	rt->ext = NULL;
	rt->bitmap = NULL;
	rt->summary = NULL;
	rt->bad_bm = rt->bad_sum = NULL;
	rt->n = rt->cap = 0;
	rt->judged = rt->computed = false;
}
