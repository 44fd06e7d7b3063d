// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-checks of an AG's observed owners (the model) with what the AG's
 * reverse-mapping and reference-count btrees say.  The trees are walked
 * again from the cache with findings thrown away (phase 2 reported their
 * blocks and records); a tree with a rejected block is not compared.
 * A tree whose walk skipped part of it is not compared.
 * Both sides are reduced to canonical runs (owner, fork/bmbt/unwritten
 * flags, block range, file offset; maximal where contiguous) and diffed:
 * rmap.missing / rmap.extra / rmap.mismatch, and refcount.* for shared
 * data blocks (how many data-fork mappings cover a block against the
 * refcount records).  CoW staging extents of the refcount btree become
 * model extents (OWN_COW) before ownership is judged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan/links.h"
#include "libfs/format/ag.h"
#include "libfs/format/btree_ag.h"
#include "libfs/format/endian.h"
#include "libfs/util/vec.h"

#define DIFF_REPORTS 20   /* per AG and kind, then one summary */
#define PAIR_MAX 512      /* differences kept per AG for pairing missing with extra */
#define RMAP_SIDE_BYTES (512u << 10)  /* -m: a side's tuples in memory before it spills */
/*
 * No -m: the same for an AG whose side passes 4 MiB (some 175,000
 * mappings), so a worker's lists do not grow with the AG; where the
 * temporary directory cannot be had, the side stays in memory whole.
 */
#define RMAP_SOFT_BYTES (4u << 20)

enum { RF_ATTR = 1, RF_BMBT = 2, RF_UNWRITTEN = 4 };

/*
 * One reverse mapping, from the model or from the rmapbt: 24 bytes (the
 * comparison holds one per extent of the AG on both sides).  File offsets
 * have 54 bits on disk (the rmapbt's and the bmbt's), so 56 hold them.
 */
struct rtuple {
	fs_agblock_t agbno;
	uint32_t len;
	uint64_t owner;
	uint64_t offset : 56;
	uint64_t flags : 8;
};

static bool inode_owner(uint64_t owner)
{
	return owner < XFS_RMAP_OWN_MIN;
}

/* Offsets matter for inode-owned file blocks only (bmbt blocks and static owners have none). */
static bool has_offset(const struct rtuple *t)
{
	return inode_owner(t->owner) && !(t->flags & RF_BMBT);
}

static int cmp_tuple(const void *pa, const void *pb)
{
	const struct rtuple *a = pa, *b = pb;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	if (a->agbno != b->agbno)
		return a->agbno < b->agbno ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

/*
 * Whether v, the next tuple in cmp_tuple order, continues p (p grown to
 * cover it) or is covered by it: the step of canonical(), which the
 * spilled path (struct tside) takes one tuple at a time.
 */
static bool absorb(struct rtuple *p, const struct rtuple *v)
{
	uint64_t pend = (uint64_t)p->agbno + p->len;
	uint64_t vend = (uint64_t)v->agbno + v->len;

	if (p->owner != v->owner || p->flags != v->flags)
		return false;
	if (!has_offset(p) && v->agbno <= pend) {
		/*
		 * Static owners and bmbt blocks: one block may be claimed
		 * twice by the same kind of owner (two inode chunks in a
		 * 64 KiB block, a sparse chunk's runs): the union counts.
		 */
		if (vend > pend && vend - p->agbno <= UINT32_MAX)
			p->len = (uint32_t)(vend - p->agbno);
		return true;
	}
	if (pend == v->agbno && p->offset + p->len == v->offset &&
	    (uint64_t)p->len + v->len <= UINT32_MAX) {
		p->len += v->len;
		return true;
	}
	return false;
}

/* Sort and merge contiguous runs: the same mapping set always gives the same list. */
static size_t canonical(struct rtuple *v, size_t n)
{
	size_t w = 0;

	if (n)
		qsort(v, n, sizeof(*v), cmp_tuple);
	for (size_t i = 0; i < n; i++)
		if (!w || !absorb(&v[w - 1], &v[i]))
			v[w++] = v[i];
	return w;
}

struct tvec {
	struct rtuple *v;
	size_t n, cap;
};

static int tvec_push(struct tvec *t, const struct rtuple *x)
{
	if (FS_VEC_ROOM(t->v, t->n, t->cap, 256))
		return -ENOMEM;
	t->v[t->n++] = *x;
	return 0;
}

/*
 * One side of the comparison as a canonical list, read in cmp_tuple order.
 * Unbounded (cap 0, no -m): the whole list in memory, as canonical()
 * makes it.  Bounded (cap tuples, -m or XFSX_TEST_SPILL): gathered
 * tuples past cap are sorted and spilled as runs; their k-way merge goes
 * through absorb() one tuple at a time into chunks of cap / 2 written
 * in order, which the comparison reads back one chunk at a time.  A side
 * that never filled cap stays in memory.  Either way the same list.
 */
struct tside {
	struct tvec mem;             /* gathering; then the list, or the chunk read */
	size_t cap;                  /* 0: unbounded */
	struct fs_spill **sp;        /* the AG's spill (bounded, shared by both sides) */
	const char *dir;             /* where it is made, at the first run written */
	bool open_failed;
	bool soft;                   /* no -m: a spill that cannot be made leaves it unbounded */
	struct fs_spill_run *runs;   /* sorted runs while gathering, chunks after */
	size_t nruns, capruns;
	bool spilled;
	struct rtuple p;             /* merging: the tuple absorbing the next ones */
	bool have_p;
	size_t chunk, at;            /* reading: the next chunk, the next tuple in mem */
	int err;
};

static size_t chunk_cap(const struct tside *s)
{
	return s->cap / 2 ? s->cap / 2 : 1;
}

static int tside_write(struct tside *s, struct fs_spill_run **runs, size_t *nruns,
		       size_t *capruns)
{
	int err;

	if (FS_VEC_ROOM(*runs, *nruns, *capruns, 16))
		return -ENOMEM;
	if (!*s->sp) {
		err = fs_spill_open(s->dir, sizeof(struct rtuple), s->sp);
		s->open_failed = err != 0;
		if (err)
			return err;
	}
	err = fs_spill_write(*s->sp, s->mem.v, s->mem.n, &(*runs)[*nruns]);
	if (err)
		return err;
	(*nruns)++;
	s->mem.n = 0;
	return 0;
}

static int tside_push(struct tside *s, const struct rtuple *t)
{
	if (s->cap && s->mem.n == s->cap) {
		int err;

		qsort(s->mem.v, s->mem.n, sizeof(*s->mem.v), cmp_tuple);
		err = tside_write(s, &s->runs, &s->nruns, &s->capruns);
		if (err && s->soft && !s->spilled) {
			/* no temporary file (not made, or its first run not written): whole after all */
			s->cap = 0;
			s->open_failed = false;
		} else if (err) {
			return err;
		} else {
			s->spilled = true;
		}
	}
	if (s->cap && s->mem.n == s->mem.cap) {
		/* grown by doubling up to cap: a small AG's side costs what it holds */
		size_t ncap = s->mem.cap ? 2 * s->mem.cap : 4096;
		struct rtuple *v;

		ncap = ncap < s->cap ? ncap : s->cap;
		v = realloc(s->mem.v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->mem.v = v;
		s->mem.cap = ncap;
	}
	return tvec_push(&s->mem, t);
}

struct chunker {
	struct tside *s;
	struct fs_spill_run *out;
	size_t nout, capout;
};

static int chunk_put(struct chunker *c, const struct rtuple *t)
{
	struct tside *s = c->s;

	if (s->mem.n == chunk_cap(s)) {
		int err = tside_write(s, &c->out, &c->nout, &c->capout);

		if (err)
			return err;
	}
	s->mem.v[s->mem.n++] = *t;
	return 0;
}

static int merged(void *priv, const void *rec)
{
	struct chunker *c = priv;
	struct tside *s = c->s;
	const struct rtuple *t = rec;

	if (s->have_p && absorb(&s->p, t))
		return 0;
	if (s->have_p) {
		int err = chunk_put(c, &s->p);

		if (err)
			return err;
	}
	s->p = *t;
	s->have_p = true;
	return 0;
}

/* Gathering done: the side becomes its canonical list. */
static int tside_done(struct tside *s)
{
	struct chunker c = { .s = s };
	int err;

	if (!s->spilled) {
		s->mem.n = canonical(s->mem.v, s->mem.n);
		return 0;
	}
	qsort(s->mem.v, s->mem.n, sizeof(*s->mem.v), cmp_tuple);
	err = s->mem.n ? tside_write(s, &s->runs, &s->nruns, &s->capruns) : 0;
	if (!err)
		err = fs_spill_merge(*s->sp, s->runs, s->nruns, cmp_tuple, merged, &c);
	if (!err && s->have_p)
		err = chunk_put(&c, &s->p);
	if (!err && s->mem.n)
		err = tside_write(s, &c.out, &c.nout, &c.capout);
	free(s->runs);
	s->runs = c.out;
	s->nruns = c.nout;
	s->capruns = c.capout;
	/* the chunks are read into the buffer's first half: the rest goes */
	free(s->mem.v);
	s->mem = (struct tvec){ 0 };
	s->chunk = 0;
	return err;
}

/* The next tuple of the list, or NULL at its end or on an error (s->err). */
static const struct rtuple *tside_peek(struct tside *s)
{
	while (s->at >= s->mem.n && s->spilled && s->chunk < s->nruns && !s->err) {
		const struct fs_spill_run *r = &s->runs[s->chunk];

		if (!s->mem.v) {
			s->mem.v = malloc(chunk_cap(s) * sizeof(*s->mem.v));
			if (!s->mem.v) {
				s->err = -ENOMEM;
				break;
			}
			s->mem.cap = chunk_cap(s);
		}
		if (r->n > s->mem.cap) {
			s->err = -EIO;
			break;
		}
		s->err = fs_spill_read(*s->sp, r, s->mem.v);
		fs_spill_discard(*s->sp, r);
		s->mem.n = (size_t)r->n;
		s->at = 0;
		s->chunk++;
	}
	return s->at < s->mem.n && !s->err ? &s->mem.v[s->at] : NULL;
}

static void tside_free(struct tside *s)
{
	free(s->mem.v);
	free(s->runs);
	*s = (struct tside){ 0 };
}

/* ---- walking the AGF's trees again, silently ---- */

struct rwalk {
	struct scan_ctx *cx;       /* first: the walk's reader takes it from here */
	fs_agnumber_t agno;
	bool rmap;
	struct tside *rm;          /* rmap records (while the rmap btree is walked) */
	struct fs_refc_rec *rc;    /* refcount records (shared and CoW) */
	size_t nrc, caprc;
	int err;
};

static int rw_rec(void *priv, const void *rec)
{
	struct rwalk *r = priv;
	const struct fs_geom *g = &r->cx->fs->g;

	if (r->rmap) {
		struct fs_rmap_rec x;
		struct rtuple t;

		fs_rmap_rec_decode(rec, &x);
		if (fs_rmap_rec_problem(g, r->agno, &x))
			return 0;	/* reported in phase 2; not a mapping to compare */
		t = (struct rtuple){ .agbno = x.startblock, .len = x.blockcount, .owner = x.owner,
				     .offset = x.offset,
				     .flags = (uint8_t)((x.attr_fork ? RF_ATTR : 0) |
							(x.bmbt_block ? RF_BMBT : 0) |
							(x.unwritten ? RF_UNWRITTEN : 0)) };
		if (!has_offset(&t))
			t.offset = 0;
		return tside_push(r->rm, &t);
	} else {
		struct fs_refc_rec x;

		fs_refc_rec_decode(rec, &x);
		if (fs_refc_rec_problem(g, r->agno, &x))
			return 0;
		if (FS_VEC_ROOM(r->rc, r->nrc, r->caprc, 64))
			return -ENOMEM;
		r->rc[r->nrc++] = x;
		return 0;
	}
}

/* true when the tree was walked whole (no block rejected). */
static bool walk_silently(struct rwalk *r, enum fs_btree_ag_type type, fs_agblock_t root,
			  uint32_t levels)
{
	struct fs_findings scratch;
	struct fs_btree_walk w;
	bool shaky = false;
	int err;

	if (!scan_btree_walk_init(r->cx, fs_btree_ag_ops(type), r->agno, root, levels, &scratch,
				  r, &w))
		return false;
	w.visit_rec = rw_rec;
	r->rmap = type == FS_BTREE_AG_RMAP;
	fs_findings_init(&scratch);
	err = fs_btree_walk(&w);
	/*
	 * A skipped subtree (key order, pointer, loop, height) leaves records
	 * out: compare only a tree walked whole.  A parent key or sibling that
	 * disagrees skips nothing.
	 */
	for (size_t i = 0; i < scratch.n; i++)
		if (scratch.v[i].def->flags & FS_FL_SKIPS_SUBTREE)
			shaky = true;
	if (scratch.dropped)
		shaky = true;
	fs_findings_free(&scratch);
	if (err < 0) {
		r->err = err;
		return false;
	}
	return err == 0 && w.bad_blocks == 0 && !shaky;
}

/* ---- rmap ---- */

static void tuple_text(char *buf, size_t len, const struct rtuple *t)
{
	snprintf(buf, len, "%u+%u owner %lld%s%s%s", t->agbno, t->len, (long long)t->owner,
		 t->flags & RF_ATTR ? " attr" : "", t->flags & RF_BMBT ? " bmbt" : "",
		 t->flags & RF_UNWRITTEN ? " unwritten" : "");
	if (has_offset(t)) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, " offset %llu", (unsigned long long)t->offset);
	}
}

/* The blocks of a tuple, as a finding carries them typed beside tuple_text's words. */
static struct fs_range tuple_range(const struct rtuple *t)
{
	return (struct fs_range){ t->agbno, t->len };
}

static bool overlap(const struct rtuple *a, const struct rtuple *b)
{
	return a->owner == b->owner && a->agbno < (uint64_t)b->agbno + b->len &&
	       b->agbno < (uint64_t)a->agbno + a->len;
}

/* Both lists canonical (tside_done()).  0, or the error reading them back (nothing reported). */
static int compare_rmap(struct scan_ctx *cx, fs_agnumber_t agno, struct tside *obs,
			struct tside *rm, bool complete)
{
	const struct fs_geom *g = &cx->fs->g;
	struct rtuple miss[PAIR_MAX], extra[PAIR_MAX];
	bool mpaired[PAIR_MAX] = { false }, xpaired[PAIR_MAX] = { false };
	size_t nmiss = 0, nextra = 0, tmiss = 0, textra = 0, nmm = 0, rmiss = 0, rextra = 0;
	char a[96], b[96];
	struct fs_typed val;

	for (;;) {
		const struct rtuple *o = tside_peek(obs), *r = tside_peek(rm);
		int c;

		if (!o && !r)
			break;
		c = !o ? 1 : !r ? -1 : cmp_tuple(o, r);
		if (c == 0) {
			obs->at++;
			rm->at++;
		} else if (c < 0) {
			if (nmiss < PAIR_MAX)
				miss[nmiss++] = *o;
			tmiss++;
			obs->at++;
		} else {
			if (nextra < PAIR_MAX)
				extra[nextra++] = *r;
			textra++;
			rm->at++;
		}
	}
	if (obs->err || rm->err)
		return obs->err ? obs->err : rm->err;
	/*
	 * A mapping the tree has for the same owner and blocks, but different:
	 * a mismatch per overlapping pair.  One record may overlap several on
	 * the other side (a tree record 10+5 where the model has 10+3 and
	 * 14+1: block 13 is the difference, 14 is mapped); each pair is one
	 * mismatch naming both, and no side of a pair is also reported as
	 * missing or extra.
	 */
	for (size_t m = 0; m < nmiss; m++) {
		for (size_t x = 0; x < nextra; x++) {
			if ((mpaired[m] && xpaired[x]) || !overlap(&miss[m], &extra[x]))
				continue;
			tuple_text(a, sizeof(a), &miss[m]);
			tuple_text(b, sizeof(b), &extra[x]);
			val = (struct fs_typed){ .expected_range = tuple_range(&miss[m]),
						 .found_range = tuple_range(&extra[x]) };
			if (++nmm <= DIFF_REPORTS)
				fs_report_val(cx->fl, &val, FS_C_RMAP_MISMATCH, agno,
					  (int64_t)fs_agbno_to_daddr(g, agno, miss[m].agbno),
					  inode_owner(miss[m].owner) ? (int64_t)miss[m].owner : FS_NONE,
					  "rmap record", a, b,
					  "reverse mapping %s differs from the observed owner %s", b, a);
			tmiss -= !mpaired[m];
			textra -= !xpaired[x];
			mpaired[m] = xpaired[x] = true;
		}
	}
	for (size_t m = 0; m < nmiss; m++) {
		if (mpaired[m] || ++rmiss > DIFF_REPORTS)
			continue;
		tuple_text(a, sizeof(a), &miss[m]);
		val = (struct fs_typed){ .expected_range = tuple_range(&miss[m]) };
		fs_report_val(cx->fl, &val, FS_C_RMAP_MISSING, agno,
			  (int64_t)fs_agbno_to_daddr(g, agno, miss[m].agbno),
			  inode_owner(miss[m].owner) ? (int64_t)miss[m].owner : FS_NONE,
			  "rmap record", a, "none",
			  "blocks %s are in use but the reverse mapping btree does not say so", a);
	}
	/* with part of the inodes unscanned, a mapping nobody was seen to own proves nothing */
	if (complete)
		for (size_t x = 0; x < nextra; x++) {
			if (xpaired[x] || ++rextra > DIFF_REPORTS)
				continue;
			tuple_text(b, sizeof(b), &extra[x]);
			val = (struct fs_typed){ .found_range = tuple_range(&extra[x]) };
			fs_report_val(cx->fl, &val, FS_C_RMAP_EXTRA, agno,
				  (int64_t)fs_agbno_to_daddr(g, agno, extra[x].agbno),
				  inode_owner(extra[x].owner) ? (int64_t)extra[x].owner : FS_NONE,
				  "rmap record", "none", b,
				  "reverse mapping %s names an owner that does not use those blocks", b);
		}
	if (tmiss > rmiss && rmiss > DIFF_REPORTS)
		fs_report(cx->fl, FS_C_RMAP_MISSING, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more block ranges in use lack a reverse mapping", tmiss - DIFF_REPORTS);
	if (complete && textra > DIFF_REPORTS)
		fs_report(cx->fl, FS_C_RMAP_EXTRA, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more reverse mappings name owners that do not use those blocks",
			  textra - DIFF_REPORTS);
	if (nmm > DIFF_REPORTS)
		fs_report(cx->fl, FS_C_RMAP_MISMATCH, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more reverse mappings differ from the observed owners",
			  nmm - DIFF_REPORTS);
	return 0;
}

/* The model's extents of this AG as reverse mappings (free space has none). */
static int observed_mappings(struct scan_ctx *cx, fs_agnumber_t agno, struct tside *out)
{
	struct model_cursor c;
	const struct model_ext *e;
	int err = 0;

	/*
	 * Unbounded, sized once: a doubling array would hold up to twice the
	 * AG's extents.  Bounded, the side spills past its cap and the
	 * model's extents come a piece at a time.
	 */
	if (!out->cap) {
		size_t want = model_ag_count(cx->model, agno) -
			      model_ag_extents_filter(cx->model, agno, MODEL_CLASS_BIT(MC_FREE),
						      NULL, NULL);

		out->mem.v = malloc((want ? want : 1) * sizeof(*out->mem.v));
		if (!out->mem.v)
			return -ENOMEM;
		out->mem.cap = want ? want : 1;
	}
	for (model_cursor_open(cx->model, agno, &c); !err && (e = model_cursor_peek(&c));
	     model_cursor_next(&c)) {
		struct rtuple t = { .agbno = e->agbno, .len = e->len,
				    .owner = model_rmap_owner(e->cls, e->owner) };

		switch (e->cls) {
		case MC_FREE:
			continue;
		case MC_DATA:
		case MC_ATTR:
			t.offset = e->offset;
			t.flags = (uint8_t)((e->cls == MC_ATTR ? RF_ATTR : 0) |
					    (e->flags & MODEL_EXT_UNWRITTEN ? RF_UNWRITTEN : 0));
			break;
		case MC_BMBT:
			t.flags = (uint8_t)(RF_BMBT | (e->flags & MODEL_EXT_ATTRFORK ? RF_ATTR : 0));
			break;
		default:
			break;
		}
		err = tside_push(out, &t);
	}
	if (!err)
		err = model_cursor_close(&c);
	else
		(void)model_cursor_close(&c);
	return err;
}

/* ---- refcount ---- */

struct crun {
	fs_agblock_t start;
	uint32_t len;
	uint32_t count;
};

struct cvec {
	struct crun *v;
	size_t n, cap;
};

static int cvec_push(struct cvec *c, fs_agblock_t start, uint64_t len, uint32_t count)
{
	struct crun *p = c->n ? &c->v[c->n - 1] : NULL;

	if (p && p->count == count && (uint64_t)p->start + p->len == start &&
	    (uint64_t)p->len + len <= UINT32_MAX) {
		p->len += (uint32_t)len;
		return 0;
	}
	if (FS_VEC_ROOM(c->v, c->n, c->cap, 64))
		return -ENOMEM;
	c->v[c->n++] = (struct crun){ start, (uint32_t)len, count };
	return 0;
}

static int run_push(void *priv, fs_agblock_t start, uint32_t len, uint32_t count)
{
	return cvec_push(priv, start, len, count);
}

/* Runs of blocks covered by two or more data-fork mappings, with their count. */
static int shared_runs(struct scan_ctx *cx, fs_agnumber_t agno, struct cvec *out)
{
	return model_ag_shared_runs(cx->model, agno, NULL, run_push, out);
}

static void compare_refcount(struct scan_ctx *cx, fs_agnumber_t agno, const struct cvec *seen,
			     const struct cvec *disk)
{
	const struct fs_geom *g = &cx->fs->g;
	size_t i = 0, j = 0, nrep[3] = { 0 };
	static const enum fs_code codes[3] = { FS_C_REFCOUNT_MISSING, FS_C_REFCOUNT_EXTRA,
					       FS_C_REFCOUNT_MISMATCH };
	uint64_t pos = 0;
	/* the pending difference, reported once it stops growing */
	int kind = -1;
	uint64_t kstart = 0, kend = 0;
	uint32_t kc = 0, kr = 0;

	for (;;) {
		const struct crun *s, *d;
		uint64_t next = UINT64_MAX;
		uint32_t c = 0, r = 0;
		int k;

		while (i < seen->n && (uint64_t)seen->v[i].start + seen->v[i].len <= pos)
			i++;
		while (j < disk->n && (uint64_t)disk->v[j].start + disk->v[j].len <= pos)
			j++;
		s = i < seen->n ? &seen->v[i] : NULL;
		d = j < disk->n ? &disk->v[j] : NULL;
		if (!s && !d)
			break;
		if (s) {
			if (s->start > pos)
				next = s->start;
			else {
				c = s->count;
				next = (uint64_t)s->start + s->len;
			}
		}
		if (d) {
			if (d->start > pos) {
				if (d->start < next)
					next = d->start;
			} else {
				r = d->count;
				if ((uint64_t)d->start + d->len < next)
					next = (uint64_t)d->start + d->len;
			}
		}
		k = c == r ? -1 : r == 0 ? 0 : c < 2 ? 1 : 2;
		if (k != kind || kc != c || kr != r || kend != pos) {
			if (kind >= 0 && ++nrep[kind] <= DIFF_REPORTS) {
				char range[48];
				snprintf(range, sizeof(range), "%llu+%llu", (unsigned long long)kstart,
					 (unsigned long long)(kend - kstart));
				fs_report(cx->fl, codes[kind], agno,
					  (int64_t)fs_agbno_to_daddr(g, agno, (fs_agblock_t)kstart),
					  FS_NONE, "refcount", FS_U(kc), FS_U(kr),
					  "blocks %s are mapped by %u data forks but the refcount "
					  "btree says %u", range, kc, kr);
			}
			kind = k;
			kstart = pos;
			kc = c;
			kr = r;
		}
		kend = next;
		pos = next;
	}
	if (kind >= 0 && ++nrep[kind] <= DIFF_REPORTS)
		fs_report(cx->fl, codes[kind], agno,
			  (int64_t)fs_agbno_to_daddr(g, agno, (fs_agblock_t)kstart), FS_NONE,
			  "refcount", FS_U(kc), FS_U(kr),
			  "blocks %llu+%llu are mapped by %u data forks but the refcount btree "
			  "says %u", (unsigned long long)kstart,
			  (unsigned long long)(kend - kstart), kc, kr);
	for (int k = 0; k < 3; k++)
		if (nrep[k] > DIFF_REPORTS)
			fs_report(cx->fl, codes[k], agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
				  "%zu more such block ranges", nrep[k] - DIFF_REPORTS);
}

struct reflink_sweep {
	struct scan_ctx *cx;
	fs_agnumber_t agno;
	size_t nrep;
	uint64_t last_owner;
};

/* One data extent, once its neighbours on both sides are known. */
static void reflink_judge(struct reflink_sweep *w, const struct model_ext *e, bool shared)
{
	const struct fs_geom *g = &w->cx->fs->g;
	const struct link_rec *r;
	uint64_t s;

	if (!shared || e->owner == w->last_owner)
		return;
	s = scan_links_slot(w->cx, e->owner);
	if (s == UINT64_MAX)
		return;
	r = &w->cx->links->rec[s];
	if (!(r->flags & LR_SEEN) || (r->flags & (LR_BAD | LR_REFLINK)))
		return;
	w->last_owner = e->owner;	/* its extents are often neighbours: say it once */
	if (++w->nrep <= DIFF_REPORTS)
		fs_report(w->cx->fl, FS_C_INODE_REFLINK, w->agno,
			  (int64_t)fs_agbno_to_daddr(g, w->agno, e->agbno), (int64_t)e->owner,
			  "di_flags2", "REFLINK", "no REFLINK",
			  "inode %llu shares data blocks %u+%u but lacks the reflink flag",
			  (unsigned long long)e->owner, e->agbno, e->len);
}

/*
 * Every inode whose data fork shares a block (with another fork or with
 * itself) needs the reflink flag: xfs_repair sets it where it is missing
 * (its clearing where nothing is shared is an optimisation, not a fix).
 * Over the AG's data extents in block order, an extent overlaps another
 * when an earlier one ends past its start or the next one starts before
 * its end.
 */
static void check_reflink_flags(struct scan_ctx *cx, fs_agnumber_t agno)
{
	struct reflink_sweep w = { .cx = cx, .agno = agno, .last_owner = UINT64_MAX };
	struct model_cursor c;
	const struct model_ext *e;
	struct model_ext pending;    /* the previous data extent, judged once the next is seen */
	bool have = false, pending_shared = false;
	uint64_t maxend = 0;

	if (!cx->links)
		return;
	for (model_cursor_open(cx->model, agno, &c); (e = model_cursor_peek(&c));
	     model_cursor_next(&c)) {
		if (e->cls != MC_DATA)
			continue;
		if (have)
			reflink_judge(&w, &pending,
				      pending_shared || e->agbno < (uint64_t)pending.agbno + pending.len);
		pending_shared = have && maxend > e->agbno;
		if ((uint64_t)e->agbno + e->len > maxend)
			maxend = (uint64_t)e->agbno + e->len;
		pending = *e;
		have = true;
	}
	if (have)
		reflink_judge(&w, &pending, pending_shared);
	(void)model_cursor_close(&c);
	if (w.nrep > DIFF_REPORTS)
		fs_report(cx->fl, FS_C_INODE_REFLINK, agno, FS_NONE, FS_NONE, NULL, NULL, NULL,
			  "%zu more shared extents of inodes without the reflink flag",
			  w.nrep - DIFF_REPORTS);
}

/* ---- per AG ---- */

struct scan_rmap_ag {
	struct rwalk rw;
	struct fs_agf agf;
	bool have_agf, rmap_ok, refc_ok;
};

int scan_rmap_prepare(struct scan_ctx *cx, fs_agnumber_t agno, struct scan_rmap_ag **out)
{
	const struct fs_geom *g = &cx->fs->g;
	struct scan_rmap_ag *s = calloc(1, sizeof(*s));
	struct fs_buf *b;
	struct fs_agf *agf;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->rw.cx = cx;
	s->rw.agno = agno;
	agf = &s->agf;
	*out = s;
	if (!g->rmapbt && !g->reflink)
		return 0;
	if (fs_cache_read(cx->cache, fs_ag_daddr(g, agno) + (g->sectsize >> FS_BBSHIFT),
			  g->sectsize, &b))
		return 0;
	s->have_agf = get_be32(b->data) == XFS_AGF_MAGIC;
	if (s->have_agf)
		fs_agf_decode(b->data, agf);
	fs_buf_put(cx->cache, b);
	if (!s->have_agf)
		return 0;
	if (g->reflink) {
		s->refc_ok = walk_silently(&s->rw, FS_BTREE_AG_REFC, agf->refc_root, agf->refc_level);
		/* CoW staging extents are owned (by CoW) until remapped or freed */
		size_t ncow = 0;

		for (size_t i = 0; i < s->rw.nrc && !s->rw.err; i++)
			if (s->rw.rc[i].cow) {
				int err = model_add(cx->model, agno, s->rw.rc[i].startblock,
						    s->rw.rc[i].blockcount, MC_COW, 0, 0, 0);
				if (err == -ENOMEM)
					s->rw.err = err;
				/*
				 * Offline, no write is in flight: staging extents are leftovers
				 * of a crash, which the kernel's mount and xfs_repair free.
				 */
				if (++ncow <= DIFF_REPORTS)
					fs_report(cx->fl, FS_C_REFCOUNT_COW_LEFTOVER, agno,
						  (int64_t)fs_agbno_to_daddr(g, agno,
									     s->rw.rc[i].startblock),
						  FS_NONE, NULL, NULL, NULL,
						  "CoW staging extent %u+%u is left over", s->rw.rc[i].startblock,
						  s->rw.rc[i].blockcount);
			}
		if (ncow > DIFF_REPORTS)
			fs_report(cx->fl, FS_C_REFCOUNT_COW_LEFTOVER, agno, FS_NONE, FS_NONE, NULL, NULL,
				  NULL, "%zu more leftover CoW staging extents", ncow - DIFF_REPORTS);
	}
	/* the rmap btree is walked by scan_rmap_compare: its records are not held meanwhile */
	return s->rw.err;
}

/* Drop a vector's unused tail (a canonical list is often much shorter). */
static void tvec_shrink(struct tvec *t)
{
	struct rtuple *v;

	if (t->n >= t->cap || !t->n)
		return;
	v = realloc(t->v, t->n * sizeof(*v));
	if (v) {
		t->v = v;
		t->cap = t->n;
	}
}

/*
 * -m: hold need bytes of lists (both sides) within the model's share,
 * waiting while other workers hold theirs; alone, a worker goes on
 * whatever its AG needs (bounded by RMAP_SIDE_BYTES a side, plus a
 * merge's buffers).
 */
static void rmap_hold(struct scan_ctx *cx, uint64_t need)
{
	pthread_mutex_lock(&cx->rmap_lock);
	while (cx->rmap_held && cx->rmap_held + need > cx->budget.model)
		pthread_cond_wait(&cx->rmap_cv, &cx->rmap_lock);
	cx->rmap_held += need;
	pthread_mutex_unlock(&cx->rmap_lock);
}

static void rmap_unhold(struct scan_ctx *cx, uint64_t need)
{
	pthread_mutex_lock(&cx->rmap_lock);
	cx->rmap_held -= need;
	pthread_cond_broadcast(&cx->rmap_cv);
	pthread_mutex_unlock(&cx->rmap_lock);
}

/*
 * Tuples a side holds before it spills: with the model spilling (-m),
 * RMAP_SIDE_BYTES; XFSX_TEST_SPILL=N, N (at least 2: tests/core/spill.sh
 * and tests/core/rmap_spill.sh, thousands of runs and merge passes);
 * without -m, RMAP_SOFT_BYTES (XFSX_TEST_RMAP_SOFT=N: N) when there is a
 * temporary directory, else no bound.
 */
static size_t side_cap(const struct scan_ctx *cx)
{
	const char *test = getenv("XFSX_TEST_SPILL");

	if (!cx->spill) {
		const char *soft = getenv("XFSX_TEST_RMAP_SOFT");	/* tests: N tuples */

		if (!cx->rmap_soft_dir)
			return 0;
		if (soft && *soft && strtol(soft, NULL, 10) > 0)
			return strtol(soft, NULL, 10) > 2 ? (size_t)strtol(soft, NULL, 10) : 2;
		return RMAP_SOFT_BYTES / sizeof(struct rtuple);
	}
	if (test && *test) {
		long b = strtol(test, NULL, 10);

		return b > 2 ? (size_t)b : 2;
	}
	return RMAP_SIDE_BYTES / sizeof(struct rtuple);
}

/*
 * The AG's reverse mappings both ways, one side at a time: the model's
 * (made canonical, the model's extents then let go of when they spill),
 * then the tree's, then compared in cmp_tuple order.  Unbounded, the peak
 * is the two canonical lists, 24 bytes an extent each; bounded, a side
 * past cap tuples spills (struct tside) and the peak is cap tuples and a
 * merge's buffers, whatever the AG's size.
 */
static int rmap_ag(struct scan_ctx *cx, fs_agnumber_t agno, struct scan_rmap_ag *s)
{
	struct fs_spill *sp = NULL;
	struct tside obs = { .cap = side_cap(cx), .sp = &sp }, rm = obs;
	uint64_t need = 0;
	int err = 0;

	if (obs.cap && cx->spill) {
		obs.dir = rm.dir = fs_spill_dir(cx->spill);
	} else if (obs.cap) {
		obs.dir = rm.dir = cx->rmap_soft_dir;
		obs.soft = rm.soft = true;
	}
	if (cx->opts->mem_bytes) {
		size_t n = model_ag_count(cx->model, agno);

		need = 2 * (uint64_t)(obs.cap && n > obs.cap ? obs.cap : n) * sizeof(struct rtuple);
		/* a merge's buffers: 16 KiB a run, 64 runs at most (libfs/util/spill.c) */
		if (obs.cap && n > obs.cap)
			need += (n / obs.cap + 1 < 64 ? n / obs.cap + 1 : 64) * (16u << 10);
		rmap_hold(cx, need);
	}
	err = observed_mappings(cx, agno, &obs);
	if (!err)
		err = tside_done(&obs);
	if (err)
		goto out;
	if (!obs.cap)
		tvec_shrink(&obs.mem);
	model_ag_release(cx->model, agno);	/* spilling: read back by later queries */
	s->rw.rm = &rm;
	s->rmap_ok = walk_silently(&s->rw, FS_BTREE_AG_RMAP, s->agf.rmap_root, s->agf.rmap_level);
	s->rw.rm = NULL;
	err = s->rw.err;
	if (!err && s->rmap_ok)
		err = tside_done(&rm);
	if (!err && s->rmap_ok)
		err = compare_rmap(cx, agno, &obs, &rm, cx->forks_complete);
out:
	/* the spill's own failure (its directory full, vanished...) names the directory */
	if (err && (obs.open_failed || rm.open_failed || (sp && fs_spill_error(sp))))
		cx->spill_failed = fs_spill_dir(cx->spill);
	tside_free(&rm);
	tside_free(&obs);
	fs_spill_close(sp);
	if (need)
		rmap_unhold(cx, need);
	return err;
}

int scan_rmap_compare(struct scan_ctx *cx, fs_agnumber_t agno, struct scan_rmap_ag *s)
{
	const struct fs_geom *g = &cx->fs->g;
	int err = 0;

	if (g->rmapbt && s->have_agf)
		err = rmap_ag(cx, agno, s);
	if (!err && g->reflink && s->refc_ok && cx->forks_complete) {
		struct cvec seen = { 0 }, disk = { 0 };

		err = shared_runs(cx, agno, &seen);
		for (size_t i = 0; i < s->rw.nrc && !err; i++)
			if (!s->rw.rc[i].cow)
				err = cvec_push(&disk, s->rw.rc[i].startblock, s->rw.rc[i].blockcount,
						s->rw.rc[i].refcount);
		if (!err)
			compare_refcount(cx, agno, &seen, &disk);
		free(seen.v);
		free(disk.v);
	}
	if (!err && g->reflink && cx->forks_complete)
		check_reflink_flags(cx, agno);
	return err;
}

void scan_rmap_free(struct scan_rmap_ag *s)
{
	if (!s)
		return;
	free(s->rw.rc);
	free(s);
}
