// SPDX-License-Identifier: GPL-2.0
/*
 * The findings table and the records made from it.  Every problem any xfsx
 * tool can report is one row of findings.def (stable code, object class,
 * severity, the fix action repair takes for it, flags, summary), found by
 * its enum fs_code; verifiers record instances, and human text and JSON are rendered from the
 * same records so the two never disagree: the one place format (fs_place) and the one
 * grouping, causes first (fs_findings_group), that every tool's report uses.
 */
#include "libfs/format/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const struct fs_finding_def table[FS_C_NR] = {
#define FS_CODE(o, n, str, sev, fix, fl, summ) \
	[FS_C_##o##_##n] = { FS_C_##o##_##n, str, FS_OBJ_##o, FS_SEV_##sev, FS_FIX_##fix, fl, summ },
#include "libfs/format/findings.def"
#undef FS_CODE
};

const struct fs_finding_def *fs_finding_table(size_t *count)
{
	*count = FS_C_NR;
	return table;
}

const struct fs_finding_def *fs_finding_def(enum fs_code code)
{
	return (unsigned)code < FS_C_NR ? &table[code] : NULL;
}

const char *fs_code_name(enum fs_code code)
{
	return (unsigned)code < FS_C_NR ? table[code].code : "unknown";
}

const struct fs_finding_def *fs_finding_lookup(const char *code)
{
	for (size_t i = 0; i < FS_C_NR; i++)
		if (!strcmp(table[i].code, code))
			return &table[i];
	return NULL;
}

void fs_findings_init(struct fs_findings *fl)
{
	memset(fl, 0, sizeof(*fl));
	pthread_mutex_init(&fl->lock, NULL);
}

void fs_findings_free(struct fs_findings *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->v[i].strs);
	free(fl->v);
	pthread_mutex_destroy(&fl->lock);
	memset(fl, 0, sizeof(*fl));
}

/* src's length as it is kept: at most max - 1 bytes (none for NULL). */
static size_t kept_len(const char *src, size_t max)
{
	return src ? strnlen(src, max - 1) : 0;
}

/*
 * f's four strings (NULL: empty; each cut as kept_len says) copied into
 * one new block f->strs, the pointers set into it.
 */
static int own_strings(struct fs_finding *f, const char *field, const char *expected,
		       const char *found, const char *message)
{
	const char *src[4] = { field, expected, found, message };
	const size_t max[4] = { FS_FINDING_FIELD_MAX, FS_FINDING_EXPECTED_MAX,
				FS_FINDING_FOUND_MAX, FS_FINDING_MESSAGE_MAX };
	const char **dst[4] = { &f->field, &f->expected, &f->found, &f->message };
	size_t len[4], total = 0;
	char *p;

	for (int k = 0; k < 4; k++)
		total += (len[k] = kept_len(src[k], max[k])) + 1;
	p = f->strs = malloc(total);
	if (!p)
		return -ENOMEM;
	for (int k = 0; k < 4; k++) {
		if (len[k])
			memcpy(p, src[k], len[k]);
		p[len[k]] = 0;
		*dst[k] = p;
		p += len[k] + 1;
	}
	return 0;
}

/* Record f, whose strings (f->strs) the list takes over, or frees when it cannot keep it. */
static int add(struct fs_findings *fl, const struct fs_finding *f)
{
	int ret = 0;

	pthread_mutex_lock(&fl->lock);
	fl->by_sev[f->def->sev]++;
	if (fl->n == fl->cap) {
		size_t ncap = fl->cap ? fl->cap * 2 : 64;
		struct fs_finding *nv = realloc(fl->v, ncap * sizeof(*nv));
		if (!nv) {
			fl->dropped++;
			free(f->strs);
			ret = -ENOMEM;
			goto out;
		}
		fl->v = nv;
		fl->cap = ncap;
	}
	fl->v[fl->n++] = *f;
out:
	pthread_mutex_unlock(&fl->lock);
	return ret;
}

static int vreport(struct fs_findings *fl, int64_t cause_ino, const struct fs_typed *val,
		   enum fs_code code, int64_t ag, int64_t daddr, int64_t ino, const char *field,
		   const char *expected, const char *found, const char *fmt, va_list ap)
{
	const struct fs_finding_def *def = fs_finding_def(code);
	struct fs_finding f;
	char msg[FS_FINDING_MESSAGE_MAX];

	if (!def)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.code = code;
	f.def = def;
	f.ag = ag;
	f.daddr = daddr;
	f.ino = ino;
	f.cause_ino = cause_ino == ino ? FS_NONE : cause_ino;
	if (val)
		f.val = *val;
	if (fmt)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	if (own_strings(&f, field, expected, found, fmt ? msg : def->summary)) {
		pthread_mutex_lock(&fl->lock);
		fl->by_sev[def->sev]++;
		fl->dropped++;
		pthread_mutex_unlock(&fl->lock);
		return -ENOMEM;
	}
	return add(fl, &f);
}

int fs_report(struct fs_findings *fl, enum fs_code code, int64_t ag, int64_t daddr,
	      int64_t ino, const char *field, const char *expected, const char *found,
	      const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vreport(fl, FS_NONE, NULL, code, ag, daddr, ino, field, expected, found, fmt, ap);
	va_end(ap);
	return ret;
}

int fs_report_val(struct fs_findings *fl, const struct fs_typed *val, enum fs_code code,
		  int64_t ag, int64_t daddr, int64_t ino, const char *field,
		  const char *expected, const char *found, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vreport(fl, FS_NONE, val, code, ag, daddr, ino, field, expected, found, fmt, ap);
	va_end(ap);
	return ret;
}

int fs_report_caused(struct fs_findings *fl, int64_t cause_ino, enum fs_code code, int64_t ag,
		     int64_t daddr, int64_t ino, const char *field, const char *expected,
		     const char *found, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vreport(fl, cause_ino, NULL, code, ag, daddr, ino, field, expected, found, fmt, ap);
	va_end(ap);
	return ret;
}

int fs_findings_add(struct fs_findings *fl, const struct fs_finding *f)
{
	struct fs_finding copy = *f;

	copy.def = fs_finding_def(f->code);
	if (!copy.def)
		return -EINVAL;
	if (own_strings(&copy, f->field, f->expected, f->found, f->message)) {
		pthread_mutex_lock(&fl->lock);
		fl->by_sev[copy.def->sev]++;
		fl->dropped++;
		pthread_mutex_unlock(&fl->lock);
		return -ENOMEM;
	}
	return add(fl, &copy);
}

void fs_reporter_bad(struct fs_reporter *r, enum fs_code code, const char *field,
		     const char *expected, const char *found, const char *fmt, ...)
{
	const struct fs_finding_def *def = fs_finding_def(code);
	struct fs_typed val = { .fork = r->fork };
	char msg[FS_FINDING_MESSAGE_MAX];
	va_list ap;

	r->n++;
	if (!def)
		return;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	} else {
		snprintf(msg, sizeof(msg), "%s", def->summary);
	}
	if (r->prefix)
		fs_report_val(r->fl, &val, code, r->ag, r->daddr, r->ino, field, expected, found,
			      "%s: %s", r->prefix, msg);
	else if (r->prefix_ino)
		fs_report_val(r->fl, &val, code, r->ag, r->daddr, r->ino, field, expected, found,
			      "inode %llu: %s", (unsigned long long)r->ino, msg);
	else
		fs_report_val(r->fl, &val, code, r->ag, r->daddr, r->ino, field, expected, found,
			      "%s", msg);
}

const char *fs_fmt_u64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

const char *fs_fmt_x64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "0x%" PRIx64, v);
	return buf;
}

int fs_findings_move(struct fs_findings *dst, struct fs_findings *src)
{
	int ret = 0;

	if (!src->n && !src->dropped)
		return 0;
	pthread_mutex_lock(&dst->lock);
	if (dst->cap - dst->n < src->n) {
		size_t ncap = dst->cap ? dst->cap : 64;
		struct fs_finding *nv;

		while (ncap - dst->n < src->n)
			ncap *= 2;
		nv = realloc(dst->v, ncap * sizeof(*nv));
		if (nv) {
			dst->v = nv;
			dst->cap = ncap;
		}
	}
	for (size_t i = 0; i < src->n; i++) {
		dst->by_sev[src->v[i].def->sev]++;
		if (dst->n < dst->cap) {
			dst->v[dst->n++] = src->v[i];	/* its strings go with it */
		} else {
			free(src->v[i].strs);
			dst->dropped++;
			ret = -ENOMEM;
		}
	}
	dst->dropped += src->dropped;
	pthread_mutex_unlock(&dst->lock);
	src->n = 0;
	src->dropped = 0;
	memset(src->by_sev, 0, sizeof(src->by_sev));
	return ret;
}

void fs_findings_clear(struct fs_findings *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->v[i].strs);
	fl->n = 0;
	fl->dropped = 0;
	memset(fl->by_sev, 0, sizeof(fl->by_sev));
}

bool fs_findings_has(const struct fs_findings *fl, enum fs_code code)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->v[i].code == code)
			return true;
	return false;
}

size_t fs_findings_drop(struct fs_findings *fl, bool (*drop)(void *priv, const struct fs_finding *f),
			void *priv)
{
	size_t w = 0, n = 0;

	pthread_mutex_lock(&fl->lock);
	for (size_t i = 0; i < fl->n; i++) {
		if (drop(priv, &fl->v[i])) {
			fl->by_sev[fl->v[i].def->sev]--;
			free(fl->v[i].strs);
			n++;
			continue;
		}
		fl->v[w++] = fl->v[i];
	}
	fl->n = w;
	pthread_mutex_unlock(&fl->lock);
	return n;
}

size_t fs_findings_count(const struct fs_findings *fl, enum fs_severity min_sev)
{
	size_t n = 0;
	for (int s = min_sev; s <= FS_SEV_ERROR; s++)
		n += fl->by_sev[s];
	return n;
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_finding(const void *pa, const void *pb)
{
	const struct fs_finding *a = pa, *b = pb;
	int c;

	/* log findings first: they qualify everything after them */
	c = cmp_i64(a->def->obj != FS_OBJ_LOG, b->def->obj != FS_OBJ_LOG);
	/*
	 * inodes nothing names (FS_FIX_CONNECT) last: they are what a damaged
	 * directory or a lost entry leaves behind, so their cause, where the
	 * scan found one, is printed before them (causes first)
	 */
	if (!c) c = cmp_i64(a->def->fix == FS_FIX_CONNECT, b->def->fix == FS_FIX_CONNECT);
	if (!c) c = cmp_i64(a->ag, b->ag);
	if (!c) c = cmp_i64(a->daddr, b->daddr);
	if (!c) c = cmp_i64(a->ino, b->ino);
	if (!c) c = cmp_i64(a->code, b->code);
	return c;
}

void fs_findings_sort(struct fs_findings *fl)
{
	if (fl->n > 1)
		qsort(fl->v, fl->n, sizeof(fl->v[0]), cmp_finding);
}

const char *fs_severity_name(enum fs_severity s)
{
	switch (s) {
	case FS_SEV_INFO: return "info";
	case FS_SEV_WARNING: return "warning";
	default: return "error";
	}
}

const char *fs_place(char *buf, size_t len, int64_t ag, int64_t ino, int64_t daddr)
{
	size_t o = 0;

	buf[0] = 0;
	/* each part only when it fits whole: a short buffer loses the tail, never half a number */
#define PART(...) do { \
		int w_ = snprintf(buf + o, len - o, __VA_ARGS__); \
		if (w_ > 0 && (size_t)w_ < len - o) \
			o += (size_t)w_; \
		else \
			buf[o] = 0; \
	} while (0)
	if (ag != FS_NONE)
		PART("%sAG %" PRId64, o ? " " : "", ag);
	if (ino != FS_NONE)
		PART("%sinode %" PRId64, o ? " " : "", ino);
	if (daddr != FS_NONE)
		PART("%sdaddr 0x%" PRIx64, o ? " " : "", (uint64_t)daddr);
#undef PART
	return buf;
}

static enum fs_group_kind group_kind(const struct fs_finding *f, const struct fs_finding *anchor)
{
	if (f->cause_ino != FS_NONE)
		return FS_GROUP_CAUSE;
	if (f->daddr != FS_NONE && f->daddr == anchor->daddr && f->ino == anchor->ino &&
	    f->ag == anchor->ag)
		return FS_GROUP_BLOCK;
	return FS_GROUP_CODE;
}

enum fs_group_kind fs_grouping_kind(const struct fs_findings *fl, const struct fs_grouping *g,
				    size_t i)
{
	if (!g->anchor || i >= fl->n || g->anchor[i] == SIZE_MAX)
		return FS_GROUP_NONE;
	return group_kind(&fl->v[i], &fl->v[g->anchor[i]]);
}

const char *fs_group_kind_name(enum fs_group_kind k)
{
	return k == FS_GROUP_CAUSE ? "cause" : k == FS_GROUP_BLOCK ? "block" :
	       k == FS_GROUP_CODE ? "code" : "none";
}

/* (key, index): an inode's first causeless finding, or the findings of one block */
struct key_idx {
	int64_t ag, ino, daddr;
	size_t i;
};

static int cmp_key_idx(const void *pa, const void *pb)
{
	const struct key_idx *a = pa, *b = pb;
	int c = cmp_i64(a->ag, b->ag);

	if (!c)
		c = cmp_i64(a->ino, b->ino);
	if (!c)
		c = cmp_i64(a->daddr, b->daddr);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

struct group_sort {
	const size_t *anchor;
	const struct fs_findings *fl;
};

/* grouped findings in print order: by anchor, kind, code, then position */
static int cmp_members(const void *pa, const void *pb, void *arg)
{
	const struct group_sort *gs = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = cmp_i64((int64_t)gs->anchor[a], (int64_t)gs->anchor[b]);

	if (!c)
		c = cmp_i64(group_kind(&gs->fl->v[a], &gs->fl->v[gs->anchor[a]]),
			    group_kind(&gs->fl->v[b], &gs->fl->v[gs->anchor[b]]));
	if (!c)
		c = cmp_i64(gs->fl->v[a].code, gs->fl->v[b].code);
	return c ? c : cmp_i64((int64_t)a, (int64_t)b);
}

/*
 * Of FS_GROUP_CODE_MIN or more findings of one code that are neither
 * grouped nor anchors (and with no cause known: the files of a directory
 * whose entries were lost), all but the first go under the first.
 */
static void code_groups(const struct fs_findings *fl, size_t *anchor)
{
	size_t first[FS_C_NR], count[FS_C_NR];
	bool *is_anchor = calloc(fl->n, sizeof(*is_anchor));

	if (!is_anchor)
		return;		/* without memory these keep their lines */
	for (size_t i = 0; i < fl->n; i++)
		if (anchor[i] != SIZE_MAX)
			is_anchor[anchor[i]] = true;
	for (size_t c = 0; c < FS_C_NR; c++)
		first[c] = SIZE_MAX, count[c] = 0;
	for (size_t i = 0; i < fl->n; i++) {
		enum fs_code c = fl->v[i].code;

		if (anchor[i] != SIZE_MAX || is_anchor[i] || (unsigned)c >= FS_C_NR)
			continue;
		if (first[c] == SIZE_MAX)
			first[c] = i;
		count[c]++;
	}
	for (size_t i = 0; i < fl->n; i++) {
		enum fs_code c = fl->v[i].code;

		if (anchor[i] != SIZE_MAX || is_anchor[i] || (unsigned)c >= FS_C_NR ||
		    count[c] < FS_GROUP_CODE_MIN || first[c] == i)
			continue;
		anchor[i] = first[c];
	}
	free(is_anchor);
}

/*
 * Causes first.  A finding with a cause_ino goes under the first causeless
 * finding about that inode; of FS_GROUP_BLOCK_MIN or more causeless
 * findings about one block (the same AG, inode and daddr: one bad attr
 * leaf gives hundreds), all but the first go under the first.  An anchor
 * that is itself grouped passes its members on to its own anchor, so a
 * group never hides under a hidden line.
 */
int fs_findings_group(const struct fs_findings *fl, struct fs_grouping *g)
{
	struct key_idx *idx;
	size_t n = 0;

	*g = (struct fs_grouping){ 0 };
	if (!fl->n)
		return 0;
	idx = malloc(fl->n * sizeof(*idx));
	g->anchor = malloc(fl->n * sizeof(*g->anchor));
	g->order = malloc(fl->n * sizeof(*g->order));
	if (!idx || !g->anchor || !g->order) {
		free(idx);
		fs_grouping_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < fl->n; i++)
		g->anchor[i] = SIZE_MAX;
	/* the findings of one block */
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *f = &fl->v[i];

		if (f->cause_ino == FS_NONE && f->daddr != FS_NONE)
			idx[n++] = (struct key_idx){ f->ag, f->ino, f->daddr, i };
	}
	qsort(idx, n, sizeof(*idx), cmp_key_idx);
	for (size_t k = 0; k < n;) {
		size_t end = k + 1;

		while (end < n && idx[end].ag == idx[k].ag && idx[end].ino == idx[k].ino &&
		       idx[end].daddr == idx[k].daddr)
			end++;
		for (size_t j = k + 1; end - k >= FS_GROUP_BLOCK_MIN && j < end; j++)
			g->anchor[idx[j].i] = idx[k].i;
		k = end;
	}
	/* each inode's first causeless finding, for the findings it causes */
	n = 0;
	for (size_t i = 0; i < fl->n; i++)
		if (fl->v[i].cause_ino == FS_NONE && fl->v[i].ino != FS_NONE)
			idx[n++] = (struct key_idx){ 0, fl->v[i].ino, 0, i };
	qsort(idx, n, sizeof(*idx), cmp_key_idx);
	for (size_t i = 0; i < fl->n; i++) {
		size_t lo = 0, hi = n, a;
		int64_t want = fl->v[i].cause_ino;

		if (want == FS_NONE)
			continue;
		while (lo < hi) {	/* the first entry for want: its lowest index */
			size_t mid = lo + (hi - lo) / 2;

			if (idx[mid].ino < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= n || idx[lo].ino != want)
			continue;	/* the cause has no finding of its own: a line of its own */
		a = idx[lo].i;
		g->anchor[i] = g->anchor[a] != SIZE_MAX ? g->anchor[a] : a;
	}
	free(idx);
	code_groups(fl, g->anchor);
	for (size_t i = 0; i < fl->n; i++)
		if (g->anchor[i] != SIZE_MAX)
			g->order[g->n++] = i;
	if (!g->n) {
		fs_grouping_free(g);
		return 0;
	}
	struct group_sort gs = { g->anchor, fl };

	qsort_r(g->order, g->n, sizeof(*g->order), cmp_members, &gs);
	return 0;
}

void fs_grouping_free(struct fs_grouping *g)
{
	free(g->anchor);
	free(g->order);
	*g = (struct fs_grouping){ 0 };
}

size_t fs_grouping_members(const struct fs_grouping *g, size_t anchor, size_t *pos)
{
	size_t lo = 0, hi = g->n, end;

	if (!g->anchor) {
		*pos = 0;
		return 0;
	}
	while (lo < hi) {	/* order is sorted by anchor first */
		size_t mid = lo + (hi - lo) / 2;

		if (g->anchor[g->order[mid]] < anchor)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < g->n && g->anchor[g->order[end]] == anchor; end++)
		;
	*pos = lo;
	return end - lo;
}

static void write_one_text(const struct fs_finding *f, FILE *out)
{
	char place[FS_PLACE_LEN];

	fprintf(out, "%s: %s", fs_severity_name(f->def->sev), f->def->code);
	/* "code: AG n inode i daddr 0xd: message", or "code: message" with no place */
	fs_place(place, sizeof(place), f->ag, f->ino, f->daddr);
	if (place[0])
		fprintf(out, ": %s", place);
	fprintf(out, ": %s", f->message);
	if (f->field[0])
		fprintf(out, " [%s", f->field);
	if (f->field[0] && (f->expected[0] || f->found[0]))
		fprintf(out, ": expected %s, found %s", f->expected[0] ? f->expected : "?",
			f->found[0] ? f->found : "?");
	if (f->field[0])
		fputc(']', out);
	fputc('\n', out);
}

void fs_group_write_codes(const struct fs_findings *fl, const struct fs_grouping *g,
			  const size_t *m, size_t n, FILE *out)
{
	for (size_t k = 0; k < n;) {
		const struct fs_finding_def *def = fl->v[m[k]].def;
		bool cause = fs_grouping_kind(fl, g, m[k]) != FS_GROUP_BLOCK;
		size_t end = k, shown = 0;

		while (end < n && fl->v[m[end]].def == def)
			end++;
		fprintf(out, "%s%zu %s", k ? "; " : "", end - k, def->code);
		/* a cause's consequences, or the same kind, are other inodes: the first few */
		for (size_t j = k; cause && j < end && shown < 5; j++) {
			const struct fs_finding *f = &fl->v[m[j]];

			if (f->ino == FS_NONE)
				continue;
			fprintf(out, "%s%" PRId64, shown ? ", " : end - k > 1 ? " (inodes " :
				" (inode ", f->ino);
			shown++;
		}
		if (shown)
			fprintf(out, "%s)", end - k > shown ? ", ..." : "");
		k = end;
	}
}

void fs_group_write_line(const struct fs_findings *fl, const struct fs_grouping *g,
			 const size_t *m, size_t n, const char *how, FILE *out)
{
	enum fs_group_kind kind = fs_grouping_kind(fl, g, m[0]);

	fprintf(out, "  ... and %zu more %s %s%s%s: ", n, n == 1 ? "finding" : "findings",
		kind == FS_GROUP_CAUSE ? "caused by it" : kind == FS_GROUP_BLOCK ?
		"in the same block" : "of the same kind", how ? ", " : "", how ? how : "");
	fs_group_write_codes(fl, g, m, n, out);
	fputs("; -v lists them\n", out);
}

void fs_findings_write_text(const struct fs_findings *fl, FILE *out)
{
	fs_findings_write_text_v(fl, out, 0);
}

void fs_findings_write_text_v(const struct fs_findings *fl, FILE *out, int verbose)
{
	struct fs_grouping g;

	fs_findings_group(fl, &g);	/* without memory nothing is grouped: every line */
	for (size_t i = 0; i < fl->n; i++) {
		size_t pos, nm;

		if (g.anchor && g.anchor[i] != SIZE_MAX)
			continue;	/* printed as part of its cause's group */
		write_one_text(&fl->v[i], out);
		nm = fs_grouping_members(&g, i, &pos);
		for (size_t k = 0; verbose && k < nm; k++)
			write_one_text(&fl->v[g.order[pos + k]], out);
		/* one line per kind: what it causes, what else its block holds */
		for (size_t k = 0; !verbose && k < nm;) {
			size_t end = k + 1;
			enum fs_group_kind kind = fs_grouping_kind(fl, &g, g.order[pos + k]);

			while (end < nm && fs_grouping_kind(fl, &g, g.order[pos + end]) == kind)
				end++;
			fs_group_write_line(fl, &g, g.order + pos + k, end - k, NULL, out);
			k = end;
		}
	}
	fs_grouping_free(&g);
	if (fl->dropped)
		fprintf(out, "error: %zu further findings were not kept (out of memory)\n",
			fl->dropped);
}

void fs_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void json_opt_int(FILE *out, const char *key, int64_t v)
{
	fprintf(out, ",\"%s\":", key);
	if (v == FS_NONE)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, v);
}

static void json_opt_str(FILE *out, const char *key, const char *v)
{
	fprintf(out, ",\"%s\":", key);
	if (!v[0])
		fputs("null", out);
	else
		fs_json_string(out, v);
}

const char *fs_fix_name(enum fs_fix fix)
{
	static const char *const names[FS_FIX_NR] = {
		[FS_FIX_NONE] = "none", [FS_FIX_SB] = "sb", [FS_FIX_AGHDR] = "aghdr",
		[FS_FIX_AG_BTREES] = "ag_btrees", [FS_FIX_INODE_CLEAR] = "inode_clear",
		[FS_FIX_INODE_FIELD] = "inode_field", [FS_FIX_INODE_CRC] = "inode_crc",
		[FS_FIX_FORK] = "fork",
		[FS_FIX_DIR] = "dir", [FS_FIX_PARENTS] = "parents", [FS_FIX_NLINK] = "nlink",
		[FS_FIX_CONNECT] = "lost_found", [FS_FIX_XATTR] = "xattr",
		[FS_FIX_SYMLINK] = "symlink", [FS_FIX_UNLINKED] = "unlinked",
		[FS_FIX_QUOTA] = "quota", [FS_FIX_RT] = "rt", [FS_FIX_LOG] = "log",
		[FS_FIX_PPTR] = "pptr",
	};

	return (unsigned)fix < FS_FIX_NR ? names[fix] : "unknown";
}

void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out)
{
	fs_findings_write_json_array_ex(fl, out, NULL, NULL);
}

/*
 * Per finding, the index of its group in the "groups" array (SIZE_MAX:
 * none): groups in the order of their anchors, a cause's before its
 * block's.  calls each(priv, group, anchor, members, n) when given.
 */
static size_t *group_numbers(const struct fs_findings *fl, const struct fs_grouping *g,
			     void (*each)(void *priv, size_t k, size_t anchor, const size_t *m,
					  size_t n), void *priv)
{
	size_t *num, k = 0;

	if (!g->anchor)
		return NULL;
	num = malloc(fl->n * sizeof(*num));
	if (!num)
		return NULL;
	for (size_t i = 0; i < fl->n; i++)
		num[i] = SIZE_MAX;
	for (size_t p = 0; p < g->n;) {
		size_t end = p + 1, a = g->anchor[g->order[p]];
		enum fs_group_kind kind = fs_grouping_kind(fl, g, g->order[p]);

		while (end < g->n && g->anchor[g->order[end]] == a &&
		       fs_grouping_kind(fl, g, g->order[end]) == kind)
			end++;
		for (size_t j = p; j < end; j++)
			num[g->order[j]] = k;
		if (each)
			each(priv, k, a, g->order + p, end - p);
		k++;
		p = end;
	}
	return num;
}

struct groups_json {
	const struct fs_findings *fl;
	const struct fs_grouping *g;
	FILE *out;
};

static void write_group_json(void *priv, size_t k, size_t anchor, const size_t *m, size_t n)
{
	const struct groups_json *gj = priv;
	const struct fs_findings *fl = gj->fl;
	const struct fs_grouping *g = gj->g;
	const struct fs_finding *f = &fl->v[anchor];
	FILE *out = gj->out;

	fprintf(out, "%s{\"finding\":%zu,\"kind\":\"%s\",\"code\":", k ? "," : "", anchor,
		fs_group_kind_name(fs_grouping_kind(fl, g, m[0])));
	fs_json_string(out, f->def->code);
	json_opt_int(out, "ag", f->ag);
	json_opt_int(out, "ino", f->ino);
	json_opt_int(out, "daddr", f->daddr);
	fprintf(out, ",\"count\":%zu,\"codes\":{", n);
	for (size_t j = 0; j < n;) {
		const struct fs_finding_def *def = fl->v[m[j]].def;
		size_t end = j;

		while (end < n && fl->v[m[end]].def == def)
			end++;
		if (j)
			fputc(',', out);
		fs_json_string(out, def->code);
		fprintf(out, ":%zu", end - j);
		j = end;
	}
	fputs("}}", out);
}

void fs_findings_write_groups_json(const struct fs_findings *fl, FILE *out)
{
	struct fs_grouping g;
	struct groups_json gj = { fl, &g, out };

	fs_findings_group(fl, &g);
	fputc('[', out);
	free(group_numbers(fl, &g, write_group_json, &gj));
	fputc(']', out);
	fs_grouping_free(&g);
}

void fs_findings_write_json_array_ex(const struct fs_findings *fl, FILE *out,
				     void (*extra)(void *priv, size_t i, FILE *out), void *priv)
{
	struct fs_grouping g;
	size_t *anchor, *num;

	fs_findings_group(fl, &g);
	anchor = g.anchor;
	num = group_numbers(fl, &g, NULL, NULL);
	fputc('[', out);
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *f = &fl->v[i];

		fputs(i ? ",{" : "{", out);
		fputs("\"code\":", out);
		fs_json_string(out, f->def->code);
		fprintf(out, ",\"severity\":\"%s\"", fs_severity_name(f->def->sev));
		json_opt_int(out, "ag", f->ag);
		json_opt_int(out, "daddr", f->daddr);
		json_opt_int(out, "ino", f->ino);
		json_opt_str(out, "field", f->field);
		json_opt_str(out, "expected", f->expected);
		json_opt_str(out, "found", f->found);
		json_opt_str(out, "message", f->message);
		fprintf(out, ",\"fixable\":%s,\"fix\":\"%s\"", f->def->fix != FS_FIX_NONE ? "true" : "false",
			fs_fix_name(f->def->fix));
		/* the cause: the inode, and the code of its own finding when there is one */
		if (f->cause_ino == FS_NONE) {
			fputs(",\"cause\":null", out);
		} else {
			fprintf(out, ",\"cause\":{\"ino\":%" PRId64 ",\"code\":", f->cause_ino);
			if (anchor && anchor[i] != SIZE_MAX)
				fs_json_string(out, fl->v[anchor[i]].def->code);
			else
				fputs("null", out);
			fputc('}', out);
		}
		/* the entry of "groups" it is counted in: not on its own line in the text */
		if (num && num[i] != SIZE_MAX)
			fprintf(out, ",\"group\":%zu", num[i]);
		else
			fputs(",\"group\":null", out);
		if (extra)
			extra(priv, i, out);
		fputc('}', out);
	}
	fputc(']', out);
	free(num);
	fs_grouping_free(&g);
}
