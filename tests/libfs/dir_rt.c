// SPDX-License-Identifier: GPL-2.0
/*
 * Directory encoder round trips (see dir_rt.h): entry generators, an
 * in-memory block store the encoder writes and the walker reads, and the
 * comparison of what walks back with what went in.
 */
#include "tests/libfs/dir_rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/da.h"
#include "tests/libfs/bload_rt.h"

/*
 * Name bytes: anything but NUL and '/'; on ascii-ci filesystems no capital
 * either (its lower case would be the same name).  The index digits at the
 * end of a name also leave out '.', so no name is "." or "..".
 */
static bool foldable(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7);
}

static bool name_byte_ok(const struct fs_geom *g, unsigned char c)
{
	return c && c != '/' && !(g->asciici && foldable(c));
}

static unsigned char any_byte(const struct fs_geom *g, uint64_t *rng)
{
	unsigned char c;

	do
		c = (unsigned char)rt_rand(rng);
	while (!name_byte_ok(g, c));
	return c;
}

/* The digit alphabet: name bytes other than '.'; returns its size. */
static uint32_t digits(const struct fs_geom *g, unsigned char *tab)
{
	uint32_t n = 0;

	for (unsigned c = 1; c < 256; c++)
		if (c != '.' && name_byte_ok(g, (unsigned char)c))
			tab[n++] = (unsigned char)c;
	return n;
}

fs_ino_t dir_rt_ino(const struct fs_geom *g, bool big, uint64_t *rng)
{
	for (;;) {
		uint64_t r = rt_rand(rng);
		fs_agnumber_t agno = (fs_agnumber_t)(r % g->agcount);
		fs_agino_t agino = (fs_agino_t)((r >> 24) & ((1ull << g->agino_log) - 1));
		fs_ino_t ino;

		if (big && ((uint64_t)g->agcount << g->agino_log) > (1ull << 33))
			agno = (fs_agnumber_t)(g->agcount - 1 - r % (g->agcount / 4));
		ino = fs_agino_to_ino(g, agno, agino);
		if (fs_ino_valid(g, ino) && (!big || ino > 0xffffffffull ||
					     ((uint64_t)g->agcount << g->agino_log) <= (1ull << 33)))
			return ino;
	}
}

struct fs_dirbuild_ent *dir_rt_entries(const struct fs_geom *g, size_t n,
				       const struct dir_rt_shape *sh, uint64_t *rng,
				       unsigned char **arena)
{
	struct fs_dirbuild_ent *e = calloc(n ? n : 1, sizeof(*e));
	unsigned char *a = malloc(n * 255 + 1);
	unsigned char tab[256];
	uint32_t ndig = digits(g, tab);
	uint32_t w = 1, minlen = sh->minlen ? sh->minlen : 1, maxlen = sh->maxlen ? sh->maxlen : 255;
	size_t at = 0, base = 0;
	uint32_t ncoll = 0;

	*arena = a;
	if (!e || !a) {
		free(e);
		free(a);
		*arena = NULL;
		return NULL;
	}
	/* the last w bytes spell the index: names are distinct whatever the rest holds */
	for (uint64_t cap = ndig; cap < n; cap *= ndig)
		w++;
	if (minlen < w)
		minlen = w;
	if (maxlen < minlen)
		maxlen = minlen;
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = a + at;
		uint32_t len = minlen + (uint32_t)(rt_rand(rng) % (maxlen - minlen + 1));
		uint32_t idx = (uint32_t)i;
		bool collided = false;

		if (i && sh->collide_pct && rt_rand(rng) % 100 < sh->collide_pct &&
		    e[base].namelen >= w + 2) {
			/*
			 * Flip the low bit of byte k and the high bit of byte k+1 of a 4-byte
			 * group (or of the last partial group): the hash folds both onto one
			 * bit.  Each collision with a base name flips its own pair, before the
			 * index bytes: every name stays distinct, all share the base's hash.
			 */
			uint32_t plen = e[base].namelen - w, seen = 0;

			memcpy(p, e[base].name, e[base].namelen);
			for (uint32_t k = 0; k + 1 < plen && !collided; k++) {
				unsigned char x = p[k] ^ 1, y = p[k + 1] ^ 0x80;

				if (k % 4 == 3 || !name_byte_ok(g, x) || !name_byte_ok(g, y) ||
				    seen++ < ncoll)
					continue;
				p[k] = x;
				p[k + 1] = y;
				collided = true;
			}
			if (collided) {
				len = e[base].namelen;
				ncoll++;
			}
		}
		if (!collided) {
			for (uint32_t k = 0; k + w < len; k++)
				p[k] = any_byte(g, rng);
			for (uint32_t k = 0; k < w; k++, idx /= ndig)
				p[len - 1 - k] = tab[idx % ndig];
			base = i;
			ncoll = 0;
		}
		e[i].name = p;
		e[i].namelen = (uint8_t)len;
		e[i].ftype = (uint8_t)(XFS_DIR3_FT_REG_FILE + rt_rand(rng) % (XFS_DIR3_FT_SYMLINK));
		e[i].ino = dir_rt_ino(g, sh->big_inos && rt_rand(rng) % 3 == 0, rng);
		at += len;
	}
	return e;
}

/* What the walker's callbacks share: the encoded blocks and the entries read back. */
struct rt_ctx {
	const struct fs_dirbuild *b;
	const fs_fsblock_t *phys;
	void *const *bufs;
	struct fs_dirbuild_ent *v;
	unsigned char *arena;
	size_t n, cap, at;
	bool overflow;
};

static int store_read(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	struct rt_ctx *s = priv;

	for (uint32_t i = 0; i < s->b->nblocks; i++)
		if (fs_dirbuild_lblk(s->b, i) == dablk) {
			memcpy(buf, s->bufs[i], s->b->g->dirblksize);
			*daddr = fs_fsb_to_daddr(s->b->g, s->phys[i]);
			return 0;
		}
	return -EIO;
}

static int on_entry(void *priv, const struct fs_dirent *d)
{
	struct rt_ctx *g = priv;

	if (g->n == g->cap) {
		g->overflow = true;
		return 0;
	}
	memcpy(g->arena + g->at, d->name, d->namelen);
	g->v[g->n++] = (struct fs_dirbuild_ent){ d->ino, g->arena + g->at, d->namelen, d->ftype };
	g->at += d->namelen;
	return 0;
}

static int cmp_ent(const void *x, const void *y)
{
	const struct fs_dirbuild_ent *a = x, *b = y;
	int c = memcmp(a->name, b->name, a->namelen < b->namelen ? a->namelen : b->namelen);

	if (c)
		return c;
	return a->namelen < b->namelen ? -1 : a->namelen > b->namelen;
}

static int fail(struct dir_rt_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* What walked back against what went in: the same (name, ino, ftype) set. */
static int compare(const struct fs_geom *g, struct rt_ctx *rc, const struct fs_dirbuild_ent *ents,
		   size_t n, struct fs_dirbuild_ent *want, struct dir_rt_result *res)
{
	res->walked = rc->n;
	if (rc->overflow || rc->n != n)
		return fail(res, "walked %zu%s entries, want %zu", rc->n, rc->overflow ? "+" : "", n);
	memcpy(want, ents, n * sizeof(*want));
	qsort(want, n, sizeof(*want), cmp_ent);
	qsort(rc->v, n, sizeof(*rc->v), cmp_ent);
	for (size_t i = 0; i < n; i++) {
		const struct fs_dirbuild_ent *a = &want[i], *b = &rc->v[i];

		if (cmp_ent(a, b) || a->ino != b->ino || (g->ftype && a->ftype != b->ftype))
			return fail(res, "entry %zu (name length %u): ino %llu ftype %u, walked back "
				    "ino %llu ftype %u name length %u", i, a->namelen,
				    (unsigned long long)a->ino, a->ftype, (unsigned long long)b->ino,
				    b->ftype, b->namelen);
	}
	return 0;
}

int dir_rt_roundtrip(const struct fs_geom *g, fs_ino_t ino, fs_ino_t parent,
		     const struct fs_dirbuild_ent *ents, size_t n, size_t sf_max, uint64_t *rng,
		     struct dir_rt_result *res)
{
	struct fs_dirbuild *b = NULL;
	struct fs_findings fl;
	struct rt_ctx rc = { 0 };
	fs_fsblock_t *phys = NULL;
	void **bufs = NULL;
	struct fs_bmap_ext *ext = NULL;
	unsigned char *fork = NULL;
	struct fs_dirbuild_ent *want = NULL;
	struct fs_dir_ctx c = { .g = g, .ino = ino, .agno = fs_ino_to_agno(g, ino),
				.read = store_read, .entry = on_entry, .priv = &rc };
	int ret, walked;

	memset(res, 0, sizeof(*res));
	fs_findings_init(&fl);
	c.fl = &fl;
	ret = fs_dirbuild_plan(g, ino, parent, ents, n, sf_max, &b);
	if (ret) {
		snprintf(res->why, sizeof(res->why), "plan: %s", strerror(-ret));
		goto out;
	}
	res->fmt = b->fmt;
	res->nblocks = b->nblocks;
	res->levels = b->levels;
	rc.b = b;
	rc.cap = n;
	rc.v = calloc(n + 1, sizeof(*rc.v));
	rc.arena = malloc(n * 255 + 1);
	want = malloc((n + 1) * sizeof(*want));
	if (!rc.v || !rc.arena || !want) {
		ret = fail(res, "out of memory");
		goto out;
	}
	if (b->fmt == FS_DIR_SHORT) {
		fork = malloc(sf_max);
		if (!fork) {
			ret = fail(res, "out of memory");
			goto out;
		}
		memset(fork, 0xa5, sf_max);
		fs_dirbuild_sf(b, fork);
		if (b->size != b->sf_bytes || b->sf_bytes > sf_max || b->nblocks) {
			ret = fail(res, "short form size %llu / %u", (unsigned long long)b->size,
				   b->sf_bytes);
			goto out;
		}
		walked = fs_dir_sf_walk(&c, fork, sf_max, b->size);
	} else {
		struct fs_bmap m = { 0 };
		fs_agnumber_t agno = (fs_agnumber_t)(rt_rand(rng) % g->agcount);
		fs_agblock_t agbno = 64;

		phys = calloc(b->nblocks, sizeof(*phys));
		bufs = calloc(b->nblocks, sizeof(*bufs));
		ext = calloc(b->nblocks, sizeof(*ext));
		if (!phys || !bufs || !ext) {
			ret = fail(res, "out of memory");
			goto out;
		}
		for (uint32_t i = 0; i < b->nblocks; i++) {
			/* mostly contiguous, sometimes a gap or another AG */
			uint64_t r = rt_rand(rng) % 8;

			if (r == 0) {
				agbno += 1 + (fs_agblock_t)(rt_rand(rng) % 64);
			} else if (r == 1) {
				agno = (fs_agnumber_t)(rt_rand(rng) % g->agcount);
				agbno = 64 + (fs_agblock_t)(rt_rand(rng) % 1024);
			}
			if (agbno + b->fsbs >= fs_ag_blocks(g, agno))
				agbno = 64;
			phys[i] = fs_agbno_to_fsb(g, agno, agbno);
			agbno += b->fsbs;
			bufs[i] = malloc(g->dirblksize);
			if (!bufs[i]) {
				ret = fail(res, "out of memory");
				goto out;
			}
			memset(bufs[i], 0xa5, g->dirblksize);
		}
		ret = fs_dirbuild_encode(b, phys, bufs);
		if (ret) {
			snprintf(res->why, sizeof(res->why), "encode: %s", strerror(-ret));
			goto out;
		}
		m.ext = ext;
		m.n = fs_dirbuild_extents(b, phys, ext);
		res->nextents = (uint32_t)m.n;
		for (size_t i = 1; i < m.n; i++)
			if (ext[i].startoff < ext[i - 1].startoff + ext[i - 1].blockcount) {
				ret = fail(res, "extents out of order at %zu", i);
				goto out;
			}
		if (fs_dir_block_format(g, &m) != b->fmt) {
			ret = fail(res, "mapping reads as format %d, planned %d",
				   fs_dir_block_format(g, &m), b->fmt);
			goto out;
		}
		rc.phys = phys;
		rc.bufs = bufs;
		walked = fs_dir_walk(&c, &m, b->size);
	}
	if (walked < 0) {
		ret = fail(res, "walk: %s", strerror(-walked));
		goto out;
	}
	if (fl.n) {
		const struct fs_finding *f = &fl.v[0];

		ret = fail(res, "%zu findings, first %s (%s): %s", fl.n, f->def->code,
			   f->field, f->message);
		goto out;
	}
	if (c.parent != parent) {
		ret = fail(res, "parent %llu, want %llu", (unsigned long long)c.parent,
			   (unsigned long long)parent);
		goto out;
	}
	ret = compare(g, &rc, ents, n, want, res);
out:
	fs_findings_free(&fl);
	free(fork);
	if (bufs)
		for (uint32_t i = 0; i < b->nblocks; i++)
			free(bufs[i]);
	free(bufs);
	free(phys);
	free(ext);
	free(rc.v);
	free(rc.arena);
	free(want);
	fs_dirbuild_free(b);
	return ret;
}
