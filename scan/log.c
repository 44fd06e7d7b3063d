// SPDX-License-Identifier: GPL-2.0
/*
 * The dirty log for the tools, once replay.c has replayed it: what was
 * found and done in words and JSON, and the unfinished intents' account
 * (the findings their completion explains).  The decisions (refuse,
 * write, show to the scan) stay with the tools.
 */
#include "scan/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/findings.h"

void scan_log_intents(const struct scan_log *sl, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	if (!sl->rp)
		return;
	for (unsigned k = 0; k < FS_INTENT_NR && at < len; k++) {
		uint64_t n = fs_replay_stats(sl->rp)->intents_open[k];

		if (n)
			at += (size_t)snprintf(buf + at, len - at, "%s%" PRIu64 " %s", at ? ", " : "",
					       n, fs_replay_intent_name(k));
	}
}

void scan_log_describe(const struct scan_log *sl, char *buf, size_t len)
{
	const struct fs_replay_stats *st = sl->rp ? fs_replay_stats(sl->rp) : NULL;

	if (!st) {
		snprintf(buf, len, "not replayed");
		return;
	}
	snprintf(buf, len, "%" PRIu64 " transactions in %" PRIu64 " records (%" PRIu64
		 " uncommitted dropped): %" PRIu64 " buffers, %" PRIu64 " inodes, %" PRIu64
		 " inode chunks, %" PRIu64 " dquots replayed, %" PRIu64 " sectors changed in %.3f s",
		 sl->li.transactions, sl->li.records, sl->li.uncommitted, st->buffers, st->inodes,
		 st->icreates, st->dquots, st->sectors, st->seconds);
}

struct acct {
	const struct fs *fs;
	const struct fs_intent_ext *x;
	size_t n;
	bool *ags;                 /* sl->intent_ags */
	bool xmis;                 /* the replay completed exchange-range intents */
};

static bool explained(void *priv, const struct fs_finding *f)
{
	const struct acct *a = priv;
	const struct fs_geom *g = &a->fs->g;
	fs_agblock_t agbno;
	uint64_t lo, hi;

	/*
	 * A CoW staging extent left over: the kernel's mount frees every one
	 * after recovery (xfs_reflink_recover_cow), wherever it is, and a
	 * chain cut between its remap and its CUI leaves one no intent names.
	 * Its AG is rebuilt with the intents' AGs, which frees it.
	 */
	if (f->code == FS_C_REFCOUNT_COW_LEFTOVER && f->ag >= 0 && f->ag < g->agcount) {
		a->ags[f->ag] = true;
		return true;
	}
	/*
	 * An exchange the replay completed moves thousands of mappings: the
	 * scan itemizes a few of the AG tree records that differ and counts
	 * the rest in one finding without a block, in an AG the exchanged
	 * mappings name; that count is the completion too.
	 */
	if (a->xmis && (f->def->flags & FS_FL_INTENT) && f->daddr < 0 && f->ag >= 0 &&
	    f->ag < g->agcount && a->ags[f->ag])
		return true;
	/* the AG trees' view of the blocks an intent names (FS_FL_INTENT) */
	if (!(f->def->flags & FS_FL_INTENT) || f->ag < 0 || f->ag >= g->agcount || f->daddr < 0 ||
	    (uint64_t)f->daddr < fs_ag_daddr(g, (fs_agnumber_t)f->ag))
		return false;
	agbno = fs_daddr_to_agbno(g, (fs_agnumber_t)f->ag, f->daddr);
	lo = agbno;
	hi = (uint64_t)agbno + 1;
	/*
	 * A record's whole range when the finding states it (its typed ranges)
	 * and the range holds the finding's block: it may begin before it (the
	 * rest of a mapping an unmap split).
	 */
	for (int k = 0; k < 2; k++) {
		const struct fs_range *r = k ? &f->val.expected_range : &f->val.found_range;

		if (r->len && r->start <= agbno && agbno < r->start + r->len) {
			if (r->start < lo)
				lo = r->start;
			if (r->start + r->len > hi)
				hi = r->start + r->len;
		}
	}
	for (size_t i = 0; i < a->n; i++)
		if (a->x[i].agno == (fs_agnumber_t)f->ag &&
		    lo < (uint64_t)a->x[i].agbno + a->x[i].len && (uint64_t)a->x[i].agbno < hi)
			return true;
	return false;
}

int scan_log_account(struct scan_log *sl, const struct fs *fs, struct fs_findings *fl,
		     bool completing)
{
	struct acct a = { .fs = fs };

	sl->completing = completing;
	if (!sl->rp)
		return 0;
	a.n = fs_replay_open_extents(sl->rp, &a.x);
	if (!a.n)
		return 0;
	free(sl->intent_ags);
	sl->intent_ags = calloc(fs->g.agcount, sizeof(*sl->intent_ags));
	if (!sl->intent_ags)
		return -ENOMEM;
	for (size_t i = 0; i < a.n; i++)
		sl->intent_ags[a.x[i].agno] = true;
	a.ags = sl->intent_ags;
	a.xmis = fs_replay_stats(sl->rp)->xmis_applied > 0;
	sl->accounted += fs_findings_drop(fl, explained, &a);
	return 0;
}

void scan_log_json(const struct scan_log *sl, FILE *out)
{
	const struct fs_log_info *li = &sl->li;

	fprintf(out, "{\"dirty\":%s,\"located\":%s", sl->dirty ? "true" : "false",
		sl->located ? "true" : "false");
	if (sl->located)
		fprintf(out, ",\"head\":{\"cycle\":%u,\"block\":%u},\"tail\":{\"cycle\":%u,"
			"\"block\":%u},\"last_record\":{\"block\":%u},\"offset\":%" PRIu64 ",\"sectors\":%u,"
			"\"torn_records\":%u", li->head_cycle, li->head_blk, li->tail_cycle, li->tail_blk,
			li->last_rec_blk, li->log_off, li->log_bbs, li->torn_records);
	if (sl->dirty && sl->located) {
		bool any = false;

		fprintf(out, ",\"records\":%" PRIu64 ",\"transactions\":%" PRIu64 ",\"uncommitted\":%"
			PRIu64 ",\"ops\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"items\":{", li->records,
			li->transactions, li->uncommitted, li->ops, li->bytes);
		for (unsigned i = 0; i < FS_LOG_ITEM_TYPES; i++)
			if (li->items[i]) {
				fprintf(out, "%s\"%s\":%" PRIu64, any ? "," : "", fs_log_item_name(i),
					li->items[i]);
				any = true;
			}
		fputc('}', out);
	}
	fprintf(out, ",\"replayed\":%s", sl->replayed ? "true" : "false");
	if (sl->rp) {
		const struct fs_replay_stats *st = fs_replay_stats(sl->rp);

		fprintf(out, ",\"replay\":{\"buffers\":%" PRIu64 ",\"buffers_lsn_skipped\":%" PRIu64
			",\"buffers_cancelled\":%" PRIu64 ",\"inode_buffers\":%" PRIu64 ",\"inodes\":%"
			PRIu64 ",\"inodes_lsn_skipped\":%" PRIu64 ",\"inodes_cancelled\":%" PRIu64
			",\"icreates\":%" PRIu64 ",\"dquots\":%" PRIu64 ",\"intents_done\":%" PRIu64
			",\"sectors\":%" PRIu64 ",\"seconds\":%.3f,\"intents_open\":{",
			st->buffers, st->buffers_lsn_skipped, st->buffers_cancelled, st->inode_buffers,
			st->inodes, st->inodes_lsn_skipped, st->inodes_cancelled, st->icreates,
			st->dquots, st->intents_done, st->sectors, st->seconds);
		for (unsigned k = 0; k < FS_INTENT_NR; k++)
			fprintf(out, "%s\"%s\":%" PRIu64, k ? "," : "", fs_replay_intent_name(k),
				st->intents_open[k]);
		/* what became of them: completed by this run, or left to recovery and accounted */
		fprintf(out, "},\"intents_completed\":%s,\"intent_findings_accounted\":%" PRIu64
			",\"buis_applied\":%" PRIu64 ",\"buis_unapplied\":%" PRIu64
			",\"bui_bmbt_taken\":%" PRIu64 ",\"bui_bmbt_freed\":%" PRIu64
			",\"pptrs_applied\":%" PRIu64 ",\"xmis_applied\":%" PRIu64
			",\"xmi_steps\":%" PRIu64 "}",
			sl->completing ? "true" : "false", sl->accounted, st->buis_applied,
			st->buis_unapplied, st->bui_bmbt_taken, st->bui_bmbt_freed,
			st->pptrs_applied, st->xmis_applied, st->xmi_steps);
	}
	if (sl->err) {
		fputs(",\"error\":", out);
		fs_json_string(out, sl->msg);
	}
	fputc('}', out);
}

void scan_log_free(struct scan_log *sl)
{
	fs_replay_free(sl->rp);
	sl->rp = NULL;
	free(sl->intent_ags);
	sl->intent_ags = NULL;
}
