// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 1 of the scan: read the four header sectors of every AG in one batch
 * (one read per AG through the device's engine), verify every superblock,
 * AGF, AGI and AGFL through the verifier table, compare each secondary
 * superblock with the primary, and check the active free list entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "libfs/log/logres.h"
#include "libfs/format/ag.h"
#include "libfs/format/endian.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

static void report_unreadable(struct scan_ctx *cx, fs_agnumber_t agno, long res)
{
	const struct fs_geom *g = &cx->fs->g;
	static const enum fs_code what[] = { FS_C_SB_UNREADABLE, FS_C_AGF_UNREADABLE,
					     FS_C_AGI_UNREADABLE, FS_C_AGFL_UNREADABLE };
	static const char *const name[] = { "superblock", "AGF", "AGI", "AGFL" };

	for (int i = (agno == 0); i < 4; i++)
		fs_report(cx->fl, what[i], agno,
			  (int64_t)(fs_ag_daddr(g, agno) + ((uint64_t)i * g->sectsize >> FS_BBSHIFT)),
			  FS_NONE, NULL, NULL, NULL, "%s of AG %u could not be read: %s", name[i], agno,
			  strerror(res < 0 ? (int)-res : EIO));
}

/*
 * A secondary that differs from the primary is reported against the
 * secondary.  When every secondary compared (two or more) differs from the
 * primary in a field, and all with the same value, the primary is the odd
 * one out: say so once, against AG 0, with the secondaries' value expected.
 */
static void blame_primary(struct scan_ctx *cx, uint32_t compared)
{
	struct fs_findings *fl = cx->fl;
	struct {
		uint16_t field;
		uint64_t found;
		char name[48], found_text[96], primary_text[96];
		uint64_t primary;
		uint32_t n;
		bool mixed;
	} f[32];
	size_t nf = 0;

	if (compared < 2)
		return;
	pthread_mutex_lock(&fl->lock);
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *r = &fl->v[i];
		size_t k;

		if (r->code != FS_C_SB_SECONDARY || r->ag <= 0 ||
		    (r->val.has & (FS_HAS_EXPECTED | FS_HAS_FOUND)) != (FS_HAS_EXPECTED | FS_HAS_FOUND))
			continue;
		for (k = 0; k < nf && f[k].field != r->val.field; k++)
			;
		if (k == nf) {
			if (nf == sizeof(f) / sizeof(f[0]))
				continue;
			f[k].field = r->val.field;
			f[k].found = r->val.found;
			f[k].primary = r->val.expected;
			snprintf(f[k].name, sizeof(f[k].name), "%s", r->field);
			snprintf(f[k].found_text, sizeof(f[k].found_text), "%s", r->found);
			snprintf(f[k].primary_text, sizeof(f[k].primary_text), "%s", r->expected);
			f[k].n = 0;
			f[k].mixed = false;
			nf++;
		}
		f[k].n++;
		if (f[k].found != r->val.found)
			f[k].mixed = true;
	}
	pthread_mutex_unlock(&fl->lock);
	for (size_t k = 0; k < nf; k++) {
		struct fs_typed val = { .field = f[k].field, .has = FS_HAS_EXPECTED | FS_HAS_FOUND,
					.expected = f[k].found, .found = f[k].primary };

		if (f[k].n == compared && !f[k].mixed)
			fs_report_val(fl, &val, FS_C_SB_SECONDARY, 0, 0, FS_NONE, f[k].name,
				      f[k].found_text, f[k].primary_text,
				      "the primary superblock's %s (%s) differs from all %u "
				      "secondaries (%s): the primary is the damaged one", f[k].name,
				      f[k].primary_text, compared, f[k].found_text);
	}
}

static void check_ag(struct scan_ctx *cx, fs_agnumber_t agno, const unsigned char *hdr,
		     uint32_t *compared)
{
	struct fs *fs = cx->fs;
	const struct fs_geom *g = &fs->g;
	fs_daddr_t base = fs_ag_daddr(g, agno);
	uint32_t sect_bbs = g->sectsize >> FS_BBSHIFT;
	struct fs_vctx c = {
		.g = g, .fl = cx->fl, .agno = agno,
		.have_log_head = fs->have_log_head, .head_lsn = fs->log_head_lsn,
	};
	const unsigned char *agfl = hdr + 3 * g->sectsize;

	/* the primary was verified when the filesystem was opened */
	if (agno > 0) {
		struct xfs_sb sec;

		c.daddr = base;
		if (fs_verify(FS_MT_SB, &c, hdr, g->sectsize) == 0 ||
		    get_be32(hdr) == XFS_SB_MAGIC) {
			fs_sb_from_disk(&sec, (const void *)hdr);
			if (sec.sb_magicnum == XFS_SB_MAGIC) {
				fs_sb_compare_secondary(&fs->sb, &sec, agno, cx->fl);
				(*compared)++;
			}
		}
	}
	c.daddr = base + sect_bbs;
	fs_verify(FS_MT_AGF, &c, hdr + g->sectsize, g->sectsize);
	c.daddr = base + 2 * sect_bbs;
	fs_verify(FS_MT_AGI, &c, hdr + 2 * g->sectsize, g->sectsize);
	c.daddr = base + 3 * sect_bbs;
	fs_verify(FS_MT_AGFL, &c, agfl, g->sectsize);

	/* the active free list can only be judged through a plausible AGF */
	if (get_be32(hdr + g->sectsize) == XFS_AGF_MAGIC && get_be32(agfl) == XFS_AGFL_MAGIC) {
		struct fs_agf agf;
		fs_agf_decode(hdr + g->sectsize, &agf);
		if (agf.flfirst < g->agfl_size && agf.fllast < g->agfl_size)
			fs_agfl_check_active(&c, agfl, &agf);
	}
}

/* Later phases read the AGF and AGFL again: keep them in the cache. */
static void cache_headers(struct scan_ctx *cx, fs_agnumber_t agno, const unsigned char *hdr)
{
	const struct fs_geom *g = &cx->fs->g;
	uint32_t sect_bbs = g->sectsize >> FS_BBSHIFT;

	if (!cx->cache)
		return;
	for (uint32_t i = 1; i < 4; i++)
		fs_cache_insert(cx->cache, fs_ag_daddr(g, agno) + i * sect_bbs, g->sectsize,
				hdr + (size_t)i * g->sectsize, NULL);
}

int scan_phase_headers(struct scan_ctx *cx)
{
	struct fs *fs = cx->fs;
	const struct fs_geom *g = &fs->g;
	size_t hdr_len = 4 * (size_t)g->sectsize;
	/* read whole alignment units so O_DIRECT accepts every request */
	size_t align = fs->dev->direct ? fs->dev->dio_align : FS_BBSIZE;
	size_t rd_len = (hdr_len + align - 1) / align * align;
	const uint32_t batch = 256;
	uint32_t compared = 0;
	struct fs_io_req *reqs;
	struct fs_ioq *q;
	unsigned char *bufs;
	int err;

	err = fs_ioq_create(fs->dev, &q);
	if (err)
		return err;
	reqs = calloc(batch, sizeof(*reqs));
	bufs = fs_dev_alloc(fs->dev, (size_t)batch * rd_len);
	if (!reqs || !bufs) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * A damaged or truncated filesystem can claim AGs past the device end:
	 * say so once instead of failing one read per AG (there may be billions).
	 */
	uint64_t agbytes = (uint64_t)g->agblocks << g->blocklog;
	uint64_t fit = fs->dev->size < hdr_len ? 0 : (fs->dev->size - hdr_len) / agbytes + 1;
	fs_agnumber_t readable = fit < g->agcount ? (fs_agnumber_t)fit : g->agcount;
	/*
	 * Nothing is claimed about what was not read: the later phases skip
	 * these AGs, and the rules that need every AG (link counts,
	 * reachability, the superblock counters) are not judged at all.
	 */
	cx->ags_past_end = g->agcount - readable;
	if (readable < g->agcount) {
		char ags[40];

		if (readable + 1 == g->agcount)
			snprintf(ags, sizeof(ags), "AG %u starts", readable);
		else
			snprintf(ags, sizeof(ags), "AGs %u..%u start", readable, g->agcount - 1);
		fs_sb_report(cx->fl, FS_C_SB_GEOMETRY, readable, FS_NONE, "agcount",
			  FS_U(readable), FS_U(g->agcount),
			  "%s beyond the end of the device (%llu bytes) and cannot be read: "
			  "nothing is claimed about %s blocks and inodes, and link counts, "
			  "reachability and the superblock counters (which need every AG) are "
			  "not checked", ags, (unsigned long long)fs->dev->size,
			  readable + 1 == g->agcount ? "its" : "their");
	}

	/* the kernel will not mount a log that cannot hold three of its largest transactions */
	if (g->log_internal && g->logblocks >= XFS_MIN_LOG_BLOCKS) {
		uint32_t min_log = fs_log_min_blocks(g, fs->sb.sb_logsunit);

		if (g->logblocks < min_log)
			fs_sb_report(cx->fl, FS_C_SB_LOG, 0, 0, "logblocks",
				  FS_U(min_log), FS_U(g->logblocks),
				  "the log (%u blocks) is smaller than this geometry's minimum of %u "
				  "blocks: the kernel refuses to mount it", g->logblocks, min_log);
	}

	for (fs_agnumber_t first = 0; first < readable; first += batch) {
		uint32_t n = readable - first < batch ? readable - first : batch;

		for (uint32_t i = 0; i < n; i++) {
			reqs[i] = (struct fs_io_req){
				.off = fs_ag_sb_offset(g, first + i),
				.len = rd_len,
				.buf = bufs + (size_t)i * rd_len,
			};
			/* the last AG may end closer to the device end than a full unit */
			if (reqs[i].off + reqs[i].len > fs->dev->size && reqs[i].off + hdr_len <= fs->dev->size)
				reqs[i].len = fs->dev->size - reqs[i].off;
		}
		err = fs_ioq_read_batch(q, reqs, n);
		if (err)
			goto out;
		for (uint32_t i = 0; i < n; i++) {
			if (reqs[i].result < (long)hdr_len &&
			    !(reqs[i].result == -EINVAL && reqs[i].off + hdr_len <= fs->dev->size)) {
				report_unreadable(cx, first + i, reqs[i].result);
				continue;
			}
			if (reqs[i].result == -EINVAL) {
				/* an unaligned tail: read it synchronously */
				if (fs_dev_read(fs->dev, reqs[i].buf, hdr_len, reqs[i].off)) {
					report_unreadable(cx, first + i, -EIO);
					continue;
				}
			}
			check_ag(cx, first + i, reqs[i].buf, &compared);
			cx->headers_read += 4;
			cache_headers(cx, first + i, reqs[i].buf);
		}
		cx->ags_checked += n;
		scan_progress_add(cx, n);
	}
	blame_primary(cx, compared);
	/*
	 * The primary's LSN, judged once the log head is known (the kernel
	 * refuses to mount a superblock stamped beyond it, as from the future).
	 */
	{
		struct fs_vctx c = { .g = g, .fl = cx->fl, .agno = 0,
				     .have_log_head = fs->have_log_head, .head_lsn = fs->log_head_lsn };

		if (!fs_lsn_ok(&c, fs->sb.sb_lsn))
			fs_sb_report(cx->fl, FS_C_SB_LSN, 0, 0, "lsn", "at or before the log head",
				  FS_X(fs->sb.sb_lsn), "the primary superblock's LSN 0x%llx is beyond "
				  "the log head: the kernel refuses to mount it",
				  (unsigned long long)fs->sb.sb_lsn);
	}
	/*
	 * A repair that stopped part-way (or an upgrade) leaves NEEDSREPAIR on
	 * the primary: the kernel refuses to mount until a repair clears it, as
	 * xfs_repair -n says.  A state, not a damaged field: the superblock
	 * verifier (which repair's own first write passes) does not judge it.
	 */
	if (cx->fs->sb.sb_features_incompat & XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR)
		fs_sb_report(cx->fl, FS_C_SB_NEEDSREPAIR, 0, 0, "features_incompat",
			  "no NEEDSREPAIR", "NEEDSREPAIR",
			  "the filesystem is marked as needing repair: the kernel will not mount it "
			  "until a repair finishes");
out:
	free(bufs);
	free(reqs);
	fs_ioq_destroy(q);
	return err;
}
