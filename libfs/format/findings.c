// SPDX-License-Identifier: GPL-2.0
/*
 * The findings table and the records made from it.  Every problem any xfsx
 * tool can report is one row of findings.def (stable code, object class,
 * severity, the fix action repair takes for it, flags, summary), found by
 * its enum fs_code; verifiers record instances, and human text and JSON are rendered from the
 * same records so the two never disagree.
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
	free(fl->v);
	pthread_mutex_destroy(&fl->lock);
	memset(fl, 0, sizeof(*fl));
}

static void copy_str(char *dst, size_t size, const char *src)
{
	if (!src) {
		dst[0] = 0;
		return;
	}
	snprintf(dst, size, "%s", src);
}

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
	copy_str(f.field, sizeof(f.field), field);
	copy_str(f.expected, sizeof(f.expected), expected);
	copy_str(f.found, sizeof(f.found), found);
	if (fmt)
		vsnprintf(f.message, sizeof(f.message), fmt, ap);
	else
		copy_str(f.message, sizeof(f.message), def->summary);
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
	return add(fl, &copy);
}

void fs_reporter_bad(struct fs_reporter *r, enum fs_code code, const char *field,
		     const char *expected, const char *found, const char *fmt, ...)
{
	const struct fs_finding_def *def = fs_finding_def(code);
	struct fs_typed val = { .fork = r->fork };
	char msg[sizeof(((struct fs_finding *)0)->message)];
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
			dst->v[dst->n++] = src->v[i];
		} else {
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

/* (inode, index) of the first finding of each inode that has no cause of its own */
struct ino_first {
	int64_t ino;
	size_t i;
};

static int cmp_ino_first(const void *pa, const void *pb)
{
	const struct ino_first *a = pa, *b = pb;

	return a->ino != b->ino ? cmp_i64(a->ino, b->ino) : (a->i > b->i) - (a->i < b->i);
}

/*
 * anchor[i]: the index of the finding finding i is grouped under (the
 * first causeless finding about its cause_ino), or SIZE_MAX.  NULL when
 * nothing is grouped (or without memory: then nothing is, which is safe).
 */
static size_t *group_anchors(const struct fs_findings *fl)
{
	struct ino_first *idx = NULL;
	size_t *anchor = NULL, n = 0;
	bool any = false;

	for (size_t i = 0; i < fl->n && !any; i++)
		any = fl->v[i].cause_ino != FS_NONE;
	if (!any)
		return NULL;
	idx = malloc(fl->n * sizeof(*idx));
	anchor = malloc(fl->n * sizeof(*anchor));
	if (!idx || !anchor) {
		free(idx);
		free(anchor);
		return NULL;
	}
	for (size_t i = 0; i < fl->n; i++)
		if (fl->v[i].cause_ino == FS_NONE && fl->v[i].ino != FS_NONE)
			idx[n++] = (struct ino_first){ fl->v[i].ino, i };
	qsort(idx, n, sizeof(*idx), cmp_ino_first);
	for (size_t i = 0; i < fl->n; i++) {
		size_t lo = 0, hi = n;
		int64_t want = fl->v[i].cause_ino;

		anchor[i] = SIZE_MAX;
		if (want == FS_NONE)
			continue;
		while (lo < hi) {	/* the first entry for want: its lowest index */
			size_t mid = lo + (hi - lo) / 2;

			if (idx[mid].ino < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && idx[lo].ino == want)
			anchor[i] = idx[lo].i;
	}
	free(idx);
	return anchor;
}

static void write_one_text(const struct fs_finding *f, FILE *out)
{
	fprintf(out, "%s: %s", fs_severity_name(f->def->sev), f->def->code);
	/* "code: AG n inode i daddr d: message", or "code: message" with no place */
	if (f->ag != FS_NONE || f->ino != FS_NONE || f->daddr != FS_NONE)
		fputc(':', out);
	if (f->ag != FS_NONE)
		fprintf(out, " AG %" PRId64, f->ag);
	if (f->ino != FS_NONE)
		fprintf(out, " inode %" PRId64, f->ino);
	if (f->daddr != FS_NONE)
		fprintf(out, " daddr 0x%" PRIx64, f->daddr);
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

struct group_sort {
	const size_t *anchor;
	const struct fs_findings *fl;
};

/* grouped findings in print order: by anchor, then code, then position */
static int cmp_grouped(const void *pa, const void *pb, void *arg)
{
	const struct group_sort *gs = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = cmp_i64((int64_t)gs->anchor[a], (int64_t)gs->anchor[b]);

	if (!c)
		c = cmp_i64(gs->fl->v[a].code, gs->fl->v[b].code);
	return c ? c : cmp_i64((int64_t)a, (int64_t)b);
}

/*
 * The findings grouped under one cause, g[0..n) (all with the same anchor,
 * sorted by code): per code, how many and the first few inodes.
 */
static void write_group_text(const struct fs_findings *fl, const size_t *g, size_t n, FILE *out)
{
	fprintf(out, "  ... %zu more %s follow%s from it:", n, n == 1 ? "finding" : "findings",
		n == 1 ? "s" : "");
	for (size_t k = 0; k < n;) {
		const struct fs_finding_def *def = fl->v[g[k]].def;
		size_t end = k, shown = 0;

		while (end < n && fl->v[g[end]].def == def)
			end++;
		fprintf(out, "%s %zu %s (", k ? ";" : "", end - k, def->code);
		for (size_t j = k; j < end && shown < 5; j++, shown++) {
			const struct fs_finding *f = &fl->v[g[j]];

			if (f->ino != FS_NONE)
				fprintf(out, "%s%" PRId64, shown ? ", " : end - k > 1 ? "inodes " :
					"inode ", f->ino);
			else
				fprintf(out, "%s%s", shown ? ", " : "", f->message);
		}
		fprintf(out, "%s)", end - k > shown ? ", ..." : "");
		k = end;
	}
	fputc('\n', out);
}

void fs_findings_write_text(const struct fs_findings *fl, FILE *out)
{
	size_t *anchor = group_anchors(fl);
	size_t *g = NULL, ng = 0, k = 0;

	if (anchor) {
		g = malloc(fl->n * sizeof(*g));
		if (!g) {
			free(anchor);
			anchor = NULL;	/* without memory, every finding on its own line */
		}
	}
	if (anchor) {
		for (size_t i = 0; i < fl->n; i++)
			if (anchor[i] != SIZE_MAX)
				g[ng++] = i;
		struct group_sort gs = { anchor, fl };

		qsort_r(g, ng, sizeof(*g), cmp_grouped, &gs);
	}
	for (size_t i = 0; i < fl->n; i++) {
		size_t end;

		if (anchor && anchor[i] != SIZE_MAX)
			continue;	/* printed as part of its cause's group */
		write_one_text(&fl->v[i], out);
		/* anchors come in index order, as the groups are sorted */
		while (k < ng && anchor[g[k]] < i)
			k++;
		for (end = k; end < ng && anchor[g[end]] == i; end++)
			;
		if (end > k)
			write_group_text(fl, g + k, end - k, out);
		k = end;
	}
	free(g);
	free(anchor);
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
	};

	return (unsigned)fix < FS_FIX_NR ? names[fix] : "unknown";
}

void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out)
{
	fs_findings_write_json_array_ex(fl, out, NULL, NULL);
}

void fs_findings_write_json_array_ex(const struct fs_findings *fl, FILE *out,
				     void (*extra)(void *priv, size_t i, FILE *out), void *priv)
{
	size_t *anchor = group_anchors(fl);

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
		if (extra)
			extra(priv, i, out);
		fputc('}', out);
	}
	fputc(']', out);
	free(anchor);
}
