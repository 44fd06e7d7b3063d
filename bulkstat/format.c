// SPDX-License-Identifier: GPL-2.0
/*
 * Output of xfsx_bulkstat: the field table (names are struct xfs_bulkstat's
 * members without "bs_"), field selection, and the three renderings of one
 * record: JSON lines, CSV (with a header row) and key=value text.  Numbers
 * are formatted by hand: at millions of records a second printf would be
 * the bottleneck.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bulkstat/bulkstat.h"

enum ftype { T_U64, T_S64, T_U32, T_U16 };
enum fstyle { ST_DEC, ST_OCT, ST_HEX };   /* how text format shows it */

struct field {
	const char *name;
	uint8_t type;
	uint8_t style;
	uint16_t off;
	bool dflt;
};

#define F(n, t, st, m, d) { n, t, st, offsetof(struct xfs_bulkstat, m), d }
static const struct field fields[] = {
	F("ino",             T_U64, ST_DEC, bs_ino, true),
	F("mode",            T_U16, ST_OCT, bs_mode, true),
	F("nlink",           T_U32, ST_DEC, bs_nlink, true),
	F("uid",             T_U32, ST_DEC, bs_uid, true),
	F("gid",             T_U32, ST_DEC, bs_gid, true),
	F("projectid",       T_U32, ST_DEC, bs_projectid, true),
	F("size",            T_U64, ST_DEC, bs_size, true),
	F("blocks",          T_U64, ST_DEC, bs_blocks, true),
	F("extents",         T_U64, ST_DEC, bs_extents64, true),
	F("aextents",        T_U32, ST_DEC, bs_aextents, true),
	F("forkoff",         T_U16, ST_DEC, bs_forkoff, true),
	F("xflags",          T_U64, ST_HEX, bs_xflags, true),
	F("gen",             T_U32, ST_DEC, bs_gen, true),
	F("rdev",            T_U32, ST_HEX, bs_rdev, true),
	F("atime",           T_S64, ST_DEC, bs_atime, true),
	F("atime_nsec",      T_U32, ST_DEC, bs_atime_nsec, true),
	F("mtime",           T_S64, ST_DEC, bs_mtime, true),
	F("mtime_nsec",      T_U32, ST_DEC, bs_mtime_nsec, true),
	F("ctime",           T_S64, ST_DEC, bs_ctime, true),
	F("ctime_nsec",      T_U32, ST_DEC, bs_ctime_nsec, true),
	F("btime",           T_S64, ST_DEC, bs_btime, true),
	F("btime_nsec",      T_U32, ST_DEC, bs_btime_nsec, true),
	F("extsize_blks",    T_U32, ST_DEC, bs_extsize_blks, true),
	F("cowextsize_blks", T_U32, ST_DEC, bs_cowextsize_blks, true),
	/* not in the default set */
	F("blksize",         T_U32, ST_DEC, bs_blksize, false),
	F("extents32",       T_U32, ST_DEC, bs_extents, false),
};
#undef F
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

const char *bs_field_name(unsigned i) { return i < NFIELDS ? fields[i].name : NULL; }
unsigned bs_field_count(void) { return NFIELDS; }

int bs_output_parse_format(struct bs_output *o, const char *name)
{
	if (!strcmp(name, "jsonl") || !strcmp(name, "json"))
		o->format = BS_JSONL;
	else if (!strcmp(name, "csv"))
		o->format = BS_CSV;
	else if (!strcmp(name, "text"))
		o->format = BS_TEXT;
	else
		return -EINVAL;
	return 0;
}

int bs_output_parse_fields(struct bs_output *o, const char *list, char *msg, size_t msglen)
{
	o->nfields = 0;
	if (!list) {
		for (unsigned i = 0; i < NFIELDS; i++)
			if (fields[i].dflt)
				o->fields[o->nfields++] = (uint8_t)i;
		return 0;
	}
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		unsigned i;

		for (i = 0; i < NFIELDS; i++)
			if (strlen(fields[i].name) == n && !strncmp(fields[i].name, p, n))
				break;
		if (i == NFIELDS) {
			snprintf(msg, msglen, "unknown field '%.*s'", (int)n, p);
			return -EINVAL;
		}
		for (unsigned j = 0; j < o->nfields; j++)
			if (o->fields[j] == i) {
				snprintf(msg, msglen, "field '%s' given twice", fields[i].name);
				return -EINVAL;
			}
		if (o->nfields == BS_MAX_FIELDS) {
			snprintf(msg, msglen, "too many fields");
			return -EINVAL;
		}
		o->fields[o->nfields++] = (uint8_t)i;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!o->nfields) {
		snprintf(msg, msglen, "no fields selected");
		return -EINVAL;
	}
	return 0;
}

void bs_output_prepare(struct bs_output *o)
{
	for (unsigned k = 0; k < o->nfields; k++) {
		const char *name = fields[o->fields[k]].name;
		int n;

		switch (o->format) {
		case BS_JSONL:
			n = snprintf(o->prefix[k], sizeof(o->prefix[k]), "%s\"%s\":", k ? "," : "{", name);
			break;
		case BS_CSV:
			n = snprintf(o->prefix[k], sizeof(o->prefix[k]), "%s", k ? "," : "");
			break;
		default:
			n = snprintf(o->prefix[k], sizeof(o->prefix[k]), "%s%s=", k ? " " : "", name);
			break;
		}
		o->prefix_len[k] = (uint8_t)n;
	}
}

size_t bs_format_header(const struct bs_output *o, char *buf, size_t len)
{
	size_t at = 0;

	if (o->format != BS_CSV)
		return 0;
	for (unsigned k = 0; k < o->nfields; k++) {
		int n = snprintf(buf + at, len - at, "%s%s", k ? "," : "", fields[o->fields[k]].name);
		if (n < 0 || (size_t)n >= len - at)
			return 0;
		at += (size_t)n;
	}
	if (o->paths) {
		int n = snprintf(buf + at, len - at, ",paths");

		if (n < 0 || (size_t)n >= len - at)
			return 0;
		at += (size_t)n;
	}
	if (at + 1 >= len)
		return 0;
	buf[at++] = '\n';
	return at;
}

static const char digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* Decimal digits of v >= 10: from its bit width (log10(2) ~ 1233/4096), no divisions. */
static inline unsigned ndigits(uint64_t v)
{
	unsigned t = ((64u - (unsigned)__builtin_clzll(v)) * 1233u) >> 12;

	return t + 1 - (v < pow10[t]);
}

/*
 * Decimal digits straight into place, two at a time from the end; 32-bit
 * arithmetic once the value fits (most fields: counts, ids, seconds).
 */
static inline char *put_u64(char *p, uint64_t v)
{
	char *end, *q;
	uint32_t w;

	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	end = q = p + ndigits(v);
	while (v > UINT32_MAX) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	w = (uint32_t)v;
	while (w >= 100) {
		unsigned r = w % 100;

		w /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	if (w >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * w, 2);
	} else {
		*--q = (char)('0' + w);
	}
	return end;
}

static char *put_s64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static char *put_radix(char *p, uint64_t v, unsigned shift, const char *pfx)
{
	char tmp[24];
	char *t = tmp + sizeof(tmp);
	unsigned mask = (1u << shift) - 1;

	do {
		*--t = "0123456789abcdef"[v & mask];
		v >>= shift;
	} while (v);
	while (*pfx)
		*p++ = *pfx++;
	memcpy(p, t, (size_t)(tmp + sizeof(tmp) - t));
	return p + (tmp + sizeof(tmp) - t);
}

size_t bs_format_record(const struct bs_output *o, const struct xfs_bulkstat *bs, char *buf)
{
	const unsigned char *base = (const unsigned char *)bs;
	char *p = buf;

	for (unsigned k = 0; k < o->nfields; k++) {
		const struct field *f = &fields[o->fields[k]];
		const unsigned char *v = base + f->off;
		uint64_t u = 0;
		int64_t s = 0;
		bool sign = false;

		/* a fixed-size copy the compiler inlines; BS_MAX_RECORD leaves the slack */
		memcpy(p, o->prefix[k], sizeof(o->prefix[k]));
		p += o->prefix_len[k];
		switch (f->type) {
		case T_U64: { uint64_t x; memcpy(&x, v, 8); u = x; break; }
		case T_S64: { int64_t x; memcpy(&x, v, 8); s = x; sign = true; break; }
		case T_U32: { uint32_t x; memcpy(&x, v, 4); u = x; break; }
		default:    { uint16_t x; memcpy(&x, v, 2); u = x; break; }
		}
		if (sign)
			p = put_s64(p, s);
		else if (o->format == BS_TEXT && f->style == ST_OCT)
			p = put_radix(p, u, 3, "0");
		else if (o->format == BS_TEXT && f->style == ST_HEX)
			p = put_radix(p, u, 4, "0x");
		else
			p = put_u64(p, u);
	}
	if (o->format == BS_JSONL)
		*p++ = '}';
	*p++ = '\n';
	return (size_t)(p - buf);
}
