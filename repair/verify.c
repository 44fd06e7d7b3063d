// SPDX-License-Identifier: GPL-2.0
/*
 * The plan judged before the first write: "fixed" means the result was
 * verified.  Once the phases have planned (every change a dirty buffer of
 * the scan's cache, the superblocks as commit.c will encode them), the
 * filesystem is opened a second time, read-only, with a read patch that
 * shows it the plan (the dirty buffers, CRCs stamped and each judged by its
 * read verifier; then the superblocks: secondaries, and the primary with
 * NEEDSREPAIR cleared), on top of whatever the first open showed (a log
 * replayed in memory under -n).  The shared scan runs over that view with
 * every rule it has.  A finding from before the plan that the scan of the
 * result no longer makes is fixed; one it still makes is left; one it makes
 * that nothing before matched (same code and object) is a problem the plan
 * would bring in, and then nothing is written at all (run.c's steps 12
 * to 14: verify, blame, commit).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/build/encode.h"
#include "libfs/format/sb.h"
#include "libfs/util/budget.h"
#include "libfs/util/mem.h"
#include "libfs/util/vec.h"
#include "repair/buf.h"
#include "repair/fix.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/pptrs.h"
#include "repair/verify.h"
#include "scan/links.h"
#include "scan/model.h"
#include "scan/pptr.h"

struct plan_view {
	fs_read_patch_fn base;     /* what the first open already showed (a replay) */
	void *base_priv;
	struct fs_dirty_set *ds;
	struct sb_image {
		uint64_t off;
		unsigned char *data;
	} *sb;
	size_t nsb;
	uint32_t sectsize;
};

static void plan_patch(void *priv, void *buf, size_t len, uint64_t off)
{
	const struct plan_view *pv = priv;

	if (pv->base)
		pv->base(pv->base_priv, buf, len, off);
	fs_dirty_set_patch(pv->ds, buf, len, off);
	/* commit.c writes the superblocks last, over any buffer of the same sector */
	for (size_t i = 0; i < pv->nsb; i++) {
		uint64_t s = pv->sb[i].off, e = s + pv->sectsize;
		uint64_t from = s > off ? s : off, to = e < off + len ? e : off + len;

		if (from < to)
			memcpy((unsigned char *)buf + (from - off), pv->sb[i].data + (from - s),
			       to - from);
	}
}

/* A superblock as commit.c will write it into AG agno's first sector. */
static int add_sb(struct plan_view *pv, const struct fs_geom *g, fs_agnumber_t agno,
		  const struct xfs_sb *sb)
{
	struct sb_image *v = realloc(pv->sb, (pv->nsb + 1) * sizeof(*v));
	unsigned char *d;

	if (!v)
		return -ENOMEM;
	pv->sb = v;
	d = malloc(g->sectsize);
	if (!d)
		return -ENOMEM;
	fs_enc_sb(d, g->sectsize, sb);
	pv->sb[pv->nsb++] = (struct sb_image){ .off = fs_ag_sb_offset(g, agno), .data = d };
	return 0;
}

static void view_free(struct plan_view *pv)
{
	for (size_t i = 0; i < pv->nsb; i++)
		free(pv->sb[i].data);
	free(pv->sb);
	fs_dirty_set_free(pv->ds);
}

/* Findings are the same problem when their code and their object agree. */
static int key_cmp(const struct fs_finding *a, const struct fs_finding *b)
{
	if (a->def != b->def)
		return a->def < b->def ? -1 : 1;
	if (a->ag != b->ag)
		return a->ag < b->ag ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->daddr != b->daddr)
		return a->daddr < b->daddr ? -1 : 1;
	return 0;
}

static int key_qsort(const void *x, const void *y)
{
	return key_cmp(*(const struct fs_finding *const *)x, *(const struct fs_finding *const *)y);
}

static bool judged(const struct fs_finding *f)
{
	return f->def->sev != FS_SEV_INFO;
}

/* The index in the sorted keys v[0..n) of a finding with f's key, or SIZE_MAX. */
static size_t key_find(const struct fs_finding *const *v, size_t n, const struct fs_finding *f)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(v[mid], f);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !key_cmp(v[lo], f) ? lo : SIZE_MAX;
}

/* What the scan of the result says of each finding from before, and what it adds. */
static int compare(struct repair_ctx *rx)
{
	struct repair_verified *vf = &rx->verified;
	size_t nb = rx->fl->n, na = vf->after.n;
	const struct fs_finding **before = malloc((nb ? nb : 1) * sizeof(*before));
	const struct fs_finding **after = malloc((na ? na : 1) * sizeof(*after));

	vf->after_new = calloc(na ? na : 1, sizeof(*vf->after_new));
	if (!before || !after || !vf->after_new) {
		free(before);
		free(after);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nb; i++)
		before[i] = &rx->fl->v[i];
	for (size_t i = 0; i < na; i++)
		after[i] = &vf->after.v[i];
	qsort(before, nb, sizeof(*before), key_qsort);
	qsort(after, na, sizeof(*after), key_qsort);
	/* kept: later rounds look findings up in it (repair_verified_has) */
	vf->after_sorted = after;
	vf->nsorted = na;
	for (size_t i = 0; i < nb; i++)
		rx->fixed[i] = key_find(after, na, &rx->fl->v[i]) == SIZE_MAX;
	vf->left = vf->introduced = 0;
	for (size_t i = 0; i < na; i++) {
		const struct fs_finding *f = &vf->after.v[i];

		if (!judged(f))
			continue;
		vf->left++;
		if (key_find(before, nb, f) == SIZE_MAX) {
			vf->after_new[i] = true;
			vf->introduced++;
		}
	}
	/* records the scan could not keep are problems nobody can say were fixed */
	vf->left += vf->after.dropped;
	free(before);
	return 0;
}

/*
 * A test switch: XFSX_TEST_FAULT makes the plan a faulty one, so the tests
 * can show that such a plan is caught and nothing is written:
 * plan-new-finding raises the root directory's link count by 7 in a dirty
 * buffer (the scan of the result finds it), plan-bad-block zeroes its magic
 * (the buffer fails its verifier before the scan).
 */
static int test_fault(struct repair_ctx *rx)
{
	const char *f = getenv("XFSX_TEST_FAULT");
	const struct fs_geom *g = &rx->fs->g;
	struct xfs_dinode *d;
	struct fs_buf *b;
	int err;

	if (!f || (strcmp(f, "plan-new-finding") && strcmp(f, "plan-bad-block")))
		return 0;
	err = repair_get_buf(rx, fs_ino_to_daddr(g, g->rootino), g->inodesize, false, &b);
	if (err)
		return err;
	d = (struct xfs_dinode *)b->data;
	if (!strcmp(f, "plan-bad-block"))
		d->di_magic = 0;
	else
		d->di_nlink = to_be32(be32(d->di_nlink) + 7);
	err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(g, g->rootino), g->rootino,
			  FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	return err;
}

int repair_verify_plan(struct repair_ctx *rx, char *msg, size_t ml)
{
	const struct fs_geom *g = &rx->fs->g;
	struct repair_verified *vf = &rx->verified;
	struct plan_view pv = {
		.base = rx->fs->dev->read_patch, .base_priv = rx->fs->dev->read_patch_priv,
		.sectsize = g->sectsize,
	};
	struct fs_flush_opts fo = {
		.g = g, .wclass = FS_WCLASS_ALL,
		.have_log_head = rx->fs->have_log_head, .head_lsn = rx->fs->log_head_lsn,
	};
	struct fs_flush_result res = { 0 };
	struct fs_open_opts oo = {
		.allow_secondary = true, .use = FS_TARGET_INSPECT,
		.dev = { .cached_reads = true, .read_patch = plan_patch, .read_patch_priv = &pv },
		.logdev = rx->o->logdev, .rtdev = rx->o->rtdev, .log_foreign_ok = rx->o->zero_log,
	};
	struct scan_opts so = rx->o->scan;
	struct scan_ctx sx = { 0 };
	struct fs_error ferr = { 0 };
	struct fs *fs = NULL;
	struct xfs_sb primary = rx->newsb;
	int err;

	fs_findings_init(&vf->after);
	vf->ran = true;
	err = test_fault(rx);
	if (!err)
		err = fs_cache_dirty_set(rx->sx->cache, &fo, &pv.ds, &res);
	if (err == -EUCLEAN) {
		/*
		 * A block the plan would write fails its verifier: a problem the
		 * plan brings in, caught before the first write (not half-way
		 * through the commit); the run writes nothing and says so.
		 */
		if (!res.has_code || fs_report(&vf->after, res.code, res.agno, res.daddr,
				      res.ino ? (int64_t)res.ino : FS_NONE, NULL, NULL, NULL,
				      "the repair's plan would write this %s block so: %s",
				      fs_verifier_get(res.type) ? fs_verifier_get(res.type)->name :
				      "metadata", res.message) ||
		    !(vf->after_new = calloc(1, sizeof(*vf->after_new)))) {
			char place[FS_PLACE_LEN];

			snprintf(msg, ml, "the repair's plan holds a %s block at %s that "
				 "fails its verifier (%s: %s); nothing was written",
				 fs_verifier_get(res.type) ? fs_verifier_get(res.type)->name :
				 "metadata", fs_place(place, sizeof(place), FS_NONE, FS_NONE,
						      (int64_t)res.daddr),
				 res.has_code ? fs_code_name(res.code) : "unknown", res.message);
			return err;
		}
		vf->after_new[0] = true;
		vf->left = vf->introduced = 1;
		return 0;
	}
	if (err) {
		snprintf(msg, ml, "judging the repair's plan failed: %s%s%s; nothing was written",
			 strerror(-err), res.message[0] ? ": " : "", res.message);
		return err;
	}
	/* the superblocks as commit.c writes them: secondaries, then the primary */
	for (fs_agnumber_t a = 1; a < g->agcount && !err; a++)
		if (rx->rewrite_sb[a])
			err = add_sb(&pv, g, a, &rx->newsb);
	primary.sb_features_incompat &= ~(uint32_t)XFS_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	if (!err)
		err = add_sb(&pv, g, 0, &primary);
	if (err) {
		snprintf(msg, ml, "judging the repair's plan: %s; nothing was written",
			 strerror(-err));
		view_free(&pv);
		return err;
	}

	err = fs_open(rx->path, &oo, &fs, &vf->after, &ferr);
	if (err) {
		/* the planned superblock is not one the tools can open: nothing is fixed */
		snprintf(msg, ml, "the repair's planned result cannot be opened (%s); nothing was "
			 "written", ferr.msg);
		view_free(&pv);
		return -EUCLEAN;
	}
	/* what the first open was told about the log holds for the result too */
	fs->log_replayed = rx->fs->log_replayed;
	if (rx->o->zero_log) {
		fs->log_clean = true;	/* commit.c writes a clean log */
		fs->log_foreign = false;
	} else
		fs->log_clean = rx->fs->log_clean;
	if (!rx->counters)
		fs->sb_counters_stale = fs->sb_counters_stale || rx->fs->sb_counters_stale;
	if (so.mem_bytes) {
		/*
		 * -m is the run's, not each scan's: the scan of the result plans
		 * its budget from what the process does not hold already (the
		 * plan's dirty buffers, the findings, what the report needs),
		 * never below the smallest budget the first scan could run with.
		 * Given the whole of -m it spent it beside that: bench-scale's
		 * damaged aged image of 5M inodes under -m 256 peaked at 415 MiB,
		 * with this (and the first scan freed) at 236 MiB.
		 */
		struct fs_mem_sample now;
		uint64_t floor = rx->sx->budget.fixed + FS_BUDGET_CACHE_FLOOR +
				 FS_BUDGET_MODEL_FLOOR;

		fs_mem_sample(&now, 0);
		so.mem_bytes = so.mem_bytes > now.rss_bytes + floor ? so.mem_bytes - now.rss_bytes :
			       floor > so.mem_bytes ? so.mem_bytes : floor;
	}
	so.progress_prefix = "verify: ";
	sx.fs = fs;
	sx.fl = &vf->after;
	sx.opts = &so;
	err = scan_run(&sx);
	scan_teardown(&sx);
	fs_close(fs);
	view_free(&pv);
	if (err) {
		snprintf(msg, ml, "the scan of the repair's planned result failed: %s; nothing was "
			 "written", strerror(-err));
		return err;
	}
	fs_findings_sort(&vf->after);
	err = compare(rx);
	if (err)
		snprintf(msg, ml, "judging the repair's plan: %s; nothing was written",
			 strerror(-err));
	return err;
}

bool repair_verified_has(const struct repair_verified *vf, const struct fs_finding *f)
{
	size_t i;

	if (!vf->ran || !vf->after_sorted)
		return false;
	i = key_find(vf->after_sorted, vf->nsorted, f);
	/* the first of equal keys: any of them judged */
	for (; i < vf->nsorted && !key_cmp(vf->after_sorted[i], f); i++)
		if (judged(vf->after_sorted[i]))
			return true;
	return false;
}

static int cmp_ino(const void *a, const void *b)
{
	fs_ino_t x = *(const fs_ino_t *)a, y = *(const fs_ino_t *)b;

	return x < y ? -1 : x > y;
}

static int blame_one(const struct repair_ctx *rx, int64_t ino, fs_ino_t **v, size_t *n)
{
	fs_ino_t *nv, key = (fs_ino_t)ino;

	/* only an inode with findings of its own before the plan, which it kept */
	if (ino < 0 || !bsearch(&key, rx->kept.blameable, rx->kept.nblameable,
				sizeof(*rx->kept.blameable), cmp_ino))
		return 0;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = key;
	*v = nv;
	return 0;
}

int repair_blame(const struct repair_ctx *rx, fs_ino_t **v, size_t *n)
{
	const struct repair_verified *vf = &rx->verified;
	size_t w = 0;
	int err = 0;

	for (size_t i = 0; vf->ran && vf->after_new && i < vf->after.n && !err; i++) {
		if (!vf->after_new[i])
			continue;
		err = blame_one(rx, vf->after.v[i].ino, v, n);
		if (!err)
			err = blame_one(rx, vf->after.v[i].cause_ino, v, n);
	}
	/* sorted, each inode once (earlier attempts' inodes included) */
	if (*n)
		qsort(*v, *n, sizeof(**v), cmp_ino);
	for (size_t i = 0; i < *n; i++)
		if (!w || (*v)[w - 1] != (*v)[i])
			(*v)[w++] = (*v)[i];
	*n = w;
	return err;
}

/* Whether links slot s is an inode in use that the plan frees: its data is lost. */
static bool lost(const struct repair_ctx *rx, uint64_t s)
{
	return (rx->verdict[s] & RV_CLEAR) && !(rx->verdict[s] & RV_NEW) &&
	       (rx->sx->links->rec[s].flags & LR_SEEN) && !repair_unlinked_frees(rx, s);
}

int repair_keep_for_report(struct repair_ctx *rx)
{
	struct repair_kept *k = &rx->kept;
	const char **action;
	size_t nb = 0, w = 0, cap = 0;

	repair_kept_free(rx);
	action = malloc((rx->fl->n ? rx->fl->n : 1) * sizeof(*action));
	k->blameable = malloc((rx->fl->n ? rx->fl->n : 1) * sizeof(*k->blameable));
	if (!action || !k->blameable) {
		free(action);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rx->fl->n; i++) {
		const struct fs_finding *f = &rx->fl->v[i];
		uint64_t slot;

		action[i] = repair_action_taken(rx, f);
		/* repair_blame's inodes: findings of their own, neither cleared nor new */
		if (f->ino < 0 || !judged(f) || !rx->verdict)
			continue;
		slot = scan_links_slot(rx->sx, (fs_ino_t)f->ino);
		if (slot != UINT64_MAX && !(rx->verdict[slot] & (RV_CLEAR | RV_NEW)))
			k->blameable[nb++] = (fs_ino_t)f->ino;
	}
	qsort(k->blameable, nb, sizeof(*k->blameable), cmp_ino);
	for (size_t i = 0; i < nb; i++)
		if (!w || k->blameable[w - 1] != k->blameable[i])
			k->blameable[w++] = k->blameable[i];
	k->nblameable = w;
	for (uint64_t s = 0; rx->sx->links && rx->verdict && s < rx->sx->links->nslots; s++) {
		if (!lost(rx, s))
			continue;
		if (FS_VEC_ROOM(k->lost, k->nlost, cap, 64)) {
			free(action);
			return -ENOMEM;
		}
		k->lost[k->nlost++] = scan_slot_ino(rx->sx, s, &(fs_agnumber_t){ 0 });
	}
	k->action = action;
	k->taken = true;
	return 0;
}

void repair_release_scan(struct repair_ctx *rx)
{
	struct scan_ctx *sx = rx->sx;

	repair_names_drop_slots(rx);
	repair_pptrs_free(rx);
	free(rx->verdict);
	rx->verdict = NULL;
	scan_pptrs_destroy(sx);
	scan_links_destroy(sx);
	model_destroy(sx->model);
	sx->model = NULL;
	/* what was freed lies among what stays: given back to the system */
	malloc_trim(0);
}

void repair_kept_free(struct repair_ctx *rx)
{
	struct repair_kept *k = &rx->kept;

	free(k->blameable);
	free(k->lost);
	free(k->action);
	*k = (struct repair_kept){ 0 };
}

void repair_verified_free(struct repair_ctx *rx)
{
	if (!rx->verified.ran)
		return;
	fs_findings_free(&rx->verified.after);
	free(rx->verified.after_new);
	free(rx->verified.after_sorted);
	rx->verified.after_new = NULL;
	rx->verified.after_sorted = NULL;
}
