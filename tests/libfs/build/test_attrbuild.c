// SPDX-License-Identifier: GPL-2.0
/*
 * libfs/build/attrbuild.c, the xattr encoder mkfs -p uses: random attribute
 * sets in every format (short form; one leaf; a DA node over several
 * leaves; remote values of 1..65536 bytes), every namespace, names of
 * 1..255 bytes, hash collisions from equal names in different
 * namespaces; every block through the verifier table (attr leaf, DA node,
 * remote value) and the leaf hash rule, then the attributes read back
 * with libfs/format/attr.c's decoders (short form walker, leaf entries, remote
 * headers) and compared with what went in.  Parent pointer entries (the
 * parent feature) in all three formats: pptr.c's hash in every leaf entry,
 * each decoded back to its parent.  Bad input is refused.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/attr.h"
#include "libfs/build/attrbuild.h"
#include "libfs/format/da.h"
#include "libfs/format/endian.h"
#include "libfs/format/pptr.h"
#include "tests/libfs/bload_rt.h"

#define INO 131ull
#define BASE_FSB 5000ull

struct store {
	const struct fs_geom *g;
	uint32_t next;             /* logical blocks handed out */
	fs_fsblock_t fsb;          /* next fs block */
};

static int alloc(void *priv, uint32_t n, fs_fsblock_t *fsb)
{
	struct store *s = priv;

	/* a gap between runs: runs need not be neighbours */
	s->fsb += 3;
	*fsb = s->fsb;
	s->fsb += n;
	s->next += n;
	return 0;
}

struct want {
	struct fs_attrbuild_ent *e;
	size_t n;
	unsigned char *arena;
	int *seen;
};

/* The entry of w equal to (flags, name), or -1. */
static int find(const struct want *w, uint8_t flags, const uint8_t *name, uint8_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if ((w->e[i].flags & (XFS_ATTR_ROOT | XFS_ATTR_SECURE)) ==
		    (flags & (XFS_ATTR_ROOT | XFS_ATTR_SECURE)) && w->e[i].namelen == len &&
		    !memcmp(w->e[i].name, name, len))
			return (int)i;
	return -1;
}

static void sf_cb(void *priv, const struct fs_attr_ent *e)
{
	struct want *w = priv;
	int i = find(w, e->flags, e->name, e->namelen);

	if (i < 0 || e->valuelen != w->e[i].valuelen || memcmp(e->value, w->e[i].value, e->valuelen))
		fail_msg("short form entry does not match what went in");
	w->seen[i]++;
}

static struct want gen(uint64_t *rng, size_t n, uint32_t maxval)
{
	struct want w = { .n = n };
	size_t at = 0;

	w.e = calloc(n + 1, sizeof(*w.e));
	w.arena = malloc(n * (255 + 65536) + 1);
	w.seen = calloc(n + 1, sizeof(*w.seen));
	assert_non_null(w.e);
	assert_non_null(w.arena);
	for (size_t i = 0; i < n; i++) {
		struct fs_attrbuild_ent *e = &w.e[i];
		uint32_t len = 1 + (uint32_t)(rt_rand(rng) % 255);
		static const uint8_t ns[3] = { 0, XFS_ATTR_ROOT, XFS_ATTR_SECURE };

		if (len < 6)
			len = 6;
		e->flags = ns[i % 3];
		/* the same name in the three namespaces: one hash, three attributes */
		if (i % 3 && i >= 1) {
			e->name = w.e[i - 1].name;
			e->namelen = w.e[i - 1].namelen;
		} else {
			unsigned char *p = w.arena + at;

			for (uint32_t k = 0; k < len; k++)
				p[k] = (unsigned char)('a' + rt_rand(rng) % 26);
			snprintf((char *)p, 6, "%05u", (unsigned)(i % 100000));
			p[5] = '_';
			e->name = p;
			e->namelen = (uint8_t)len;
			at += len;
		}
		e->valuelen = (uint32_t)(rt_rand(rng) % (maxval + 1));
		e->value = w.arena + at;
		for (uint32_t k = 0; k < e->valuelen; k++)
			w.arena[at + k] = (unsigned char)rt_rand(rng);
		at += e->valuelen;
	}
	return w;
}

static void drop(struct want *w)
{
	free(w->e);
	free(w->arena);
	free(w->seen);
}

static uint32_t hashfn(const uint8_t *name, int len)
{
	return fs_da_hashname(name, (size_t)len);
}

/* Encode, verify every block, read every attribute back. Returns the format seen. */
static int roundtrip(const struct fs_geom *g, struct want *w, size_t litsize)
{
	struct fs_attrbuild *ab;
	struct store st = { .g = g, .fsb = BASE_FSB };
	struct fs_attrbuild_io io = { alloc, &st };
	struct fs_findings fl;
	uint32_t nb, bs = g->blocksize;
	unsigned char *blocks;
	fs_fsblock_t *fsbs;
	uint32_t sf;
	int fmt;

	assert_int_equal(fs_attrbuild_plan(g, INO, w->e, w->n, &ab), 0);
	fs_findings_init(&fl);
	sf = fs_attrbuild_sf_size(ab);
	if (sf && sf <= litsize) {
		unsigned char *fork = calloc(1, litsize);
		struct fs_vctx vc = { .g = g, .fl = &fl, .ino = INO };

		fs_attrbuild_sf(ab, fork);
		assert_int_equal(fs_attr_sf_verify(&vc, fork, litsize, sf_cb, w), 0);
		free(fork);
		fmt = 0;
		goto check;
	}
	assert_int_equal(fs_attrbuild_layout(ab, &io), 0);
	nb = fs_attrbuild_nblocks(ab);
	assert_int_equal(nb, st.next);
	blocks = malloc((size_t)nb * bs);
	fsbs = calloc(nb, sizeof(*fsbs));
	for (uint32_t i = 0; i < nb; i++)
		assert_int_equal(fs_attrbuild_encode(ab, i, blocks + (size_t)i * bs, &fsbs[i]), 0);
	fmt = 1;
	for (uint32_t i = 0; i < nb; i++) {
		unsigned char *b = blocks + (size_t)i * bs;
		struct fs_vctx vc = { .g = g, .fl = &fl, .ino = INO,
				      .daddr = fs_fsb_to_daddr(g, fsbs[i]) };
		uint16_t magic16 = get_be16(b + 8);

		if (get_be32(b) == XFS_ATTR3_RMT_MAGIC) {
			assert_int_equal(fs_verify(FS_MT_ATTR_RMT, &vc, b, bs), 0);
			continue;
		}
		if (magic16 == XFS_DA3_NODE_MAGIC) {
			assert_true(i == 0 || fmt == 2);
			assert_int_equal(fs_verify(FS_MT_DA_NODE, &vc, b, bs), 0);
			fmt = 2;
			continue;
		}
		assert_int_equal(magic16, XFS_ATTR3_LEAF_MAGIC);
		assert_int_equal(fs_verify(FS_MT_ATTR_LEAF, &vc, b, bs), 0);
		assert_int_equal(fs_attr_leaf_verify_hashes(&vc, b, bs, hashfn), 0);
		{
			struct fs_attr_leaf_hdr h;

			fs_attr_leaf_hdr_decode(b, bs, &h);
			for (uint32_t k = 0; k < h.count; k++) {
				struct fs_attr_ent e;
				int x;

				assert_true(fs_attr_leaf_entry(b, bs, &h, k, &e));
				x = find(w, e.flags, e.name, e.namelen);
				assert_true(x >= 0);
				assert_int_equal(e.valuelen, w->e[x].valuelen);
				if (e.local) {
					assert_memory_equal(e.value, w->e[x].value, e.valuelen);
				} else {
					/* the value from its remote blocks, piece by piece */
					uint32_t done = 0, blk = e.valueblk;

					assert_true(e.valueblk < nb);
					while (done < e.valuelen) {
						struct fs_attr_rmt_hdr rh;
						const unsigned char *r;

						assert_true(blk < nb);
						r = blocks + (size_t)blk * bs;
						fs_attr_rmt_hdr_decode(r, &rh);
						assert_int_equal(rh.offset, done);
						assert_int_equal(rh.owner, INO);
						assert_memory_equal(r + sizeof(struct xfs_attr3_rmt_hdr),
								    w->e[x].value + done, rh.bytes);
						done += rh.bytes;
						blk++;
					}
				}
				w->seen[x]++;
			}
		}
	}
	free(blocks);
	free(fsbs);
check:
	if (fl.n)
		fail_msg("%zu findings, first %s", fl.n, fl.v[0].def->code);
	for (size_t i = 0; i < w->n; i++)
		assert_int_equal(w->seen[i], 1);
	fs_findings_free(&fl);
	fs_attrbuild_free(ab);
	return fmt;
}

static void test_formats(void **state)
{
	static const uint32_t bsz[] = { 1024, 4096, 65536 };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct fs_geom g;
		uint64_t rng = 42 + k;
		bool seen[3] = { false };

		assert_int_equal(rt_geom_ex(bsz[k], 0, 14, 4, false, &g), 0);
		for (size_t n = 1; n < 600; n = n * 2 + 1)
			for (uint32_t maxval = 0; maxval <= 65536; maxval = maxval ? maxval * 8 : 30) {
				struct want w = gen(&rng, n, maxval);

				seen[roundtrip(&g, &w, 336)] = true;
				drop(&w);
				if (maxval == 65536)
					break;
				if (maxval * 8 > 65536)
					maxval = 65536 / 8;
			}
		for (int f = 0; f < 3; f++)
			if (!seen[f])
				fail_msg("%u-byte blocks: format %d never made", bsz[k], f);
	}
}

static void test_refused(void **state)
{
	struct fs_geom g;
	struct fs_attrbuild *ab;
	struct fs_attrbuild_ent e[2] = {
		{ 0, 3, (const unsigned char *)"abc", 1, (const unsigned char *)"x" },
		{ 0, 3, (const unsigned char *)"abc", 1, (const unsigned char *)"y" },
	};

	(void)state;
	assert_int_equal(rt_geom_ex(4096, 0, 14, 4, false, &g), 0);
	assert_int_equal(fs_attrbuild_plan(&g, INO, e, 2, &ab), -EEXIST);
	e[1].flags = XFS_ATTR_SECURE;   /* another namespace: allowed */
	assert_int_equal(fs_attrbuild_plan(&g, INO, e, 2, &ab), 0);
	fs_attrbuild_free(ab);
	e[1].flags = XFS_ATTR_LOCAL;    /* not a namespace */
	assert_int_equal(fs_attrbuild_plan(&g, INO, e, 2, &ab), -EINVAL);
	e[1].flags = 0;
	e[1].namelen = 0;
	assert_int_equal(fs_attrbuild_plan(&g, INO, e, 2, &ab), -EINVAL);
	e[1].namelen = 3;
	e[1].valuelen = 65537;
	assert_int_equal(fs_attrbuild_plan(&g, INO, e, 2, &ab), -EINVAL);
}

/* npptr parent pointers (names repeat across two parents) and one user xattr */
struct pptrs {
	struct fs_attrbuild_ent e[1001];
	struct xfs_parent_rec rec[1000];
	char names[1000][40];
	uint32_t seen[1001];
	size_t n;
};

static void pptrs_make(struct pptrs *p, size_t npptr)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < npptr; i++) {
		int len = snprintf(p->names[i], sizeof(p->names[i]), "link_name_%04zu", i / 2);

		put_be64(&p->rec[i].p_ino, 200 + (i % 2) * 1000);   /* the same name in two directories */
		put_be32(&p->rec[i].p_gen, (uint32_t)i);
		p->e[i] = (struct fs_attrbuild_ent){ XFS_ATTR_PARENT, (uint8_t)len,
			(const unsigned char *)p->names[i], sizeof(p->rec[i]),
			(const unsigned char *)&p->rec[i] };
	}
	p->e[npptr] = (struct fs_attrbuild_ent){ 0, 4, (const unsigned char *)"user", 3,
		(const unsigned char *)"abc" };
	p->n = npptr + 1;
}

/* The entry went in: a parent pointer by name and value, the user xattr by name. */
static void pptr_seen(struct pptrs *p, const struct fs_geom *g, const struct fs_attr_ent *e)
{
	struct fs_pptr pp;

	if (!fs_attr_is_pptr(e)) {
		assert_int_equal(e->namelen, 4);
		p->seen[p->n - 1]++;
		return;
	}
	assert_int_equal(fs_pptr_decode(g, e, &pp), FS_PPTR_OK);
	for (size_t i = 0; i + 1 < p->n; i++)
		if (p->e[i].namelen == e->namelen && !memcmp(p->e[i].name, e->name, e->namelen) &&
		    pp.parent == get_be64(&p->rec[i].p_ino) && pp.gen == get_be32(&p->rec[i].p_gen)) {
			p->seen[i]++;
			return;
		}
	fail_msg("a parent pointer that did not go in");
}

static struct { struct pptrs *p; const struct fs_geom *g; } sf_ctx;

static void pptr_sf_cb(void *priv, const struct fs_attr_ent *e)
{
	(void)priv;
	pptr_seen(sf_ctx.p, sf_ctx.g, e);
}

/* Encode, verify, read back; the format made: 0 short form, 1 one leaf, 2 node. */
static int pptr_roundtrip(const struct fs_geom *g, struct pptrs *p)
{
	struct fs_attrbuild *ab;
	struct store st = { .g = g, .fsb = BASE_FSB };
	struct fs_attrbuild_io io = { alloc, &st };
	struct fs_findings fl;
	uint32_t bs = g->blocksize, sf;
	unsigned char *b = malloc(bs);
	int fmt = 1;

	assert_non_null(b);
	fs_findings_init(&fl);
	assert_int_equal(fs_attrbuild_plan(g, INO, p->e, p->n, &ab), 0);
	sf = fs_attrbuild_sf_size(ab);
	if (sf && sf <= 336) {
		unsigned char fork[336] = { 0 };
		struct fs_vctx vc = { .g = g, .fl = &fl, .ino = INO };

		fs_attrbuild_sf(ab, fork);
		sf_ctx.p = p;
		sf_ctx.g = g;
		assert_int_equal(fs_attr_sf_verify(&vc, fork, sizeof(fork), pptr_sf_cb, NULL), 0);
		fmt = 0;
	} else {
		assert_int_equal(fs_attrbuild_layout(ab, &io), 0);
		for (uint32_t i = 0; i < fs_attrbuild_nblocks(ab); i++) {
			fs_fsblock_t fsb;
			struct fs_vctx vc = { .g = g, .fl = &fl, .ino = INO };
			struct fs_attr_leaf_hdr h;
			uint32_t last = 0;

			assert_int_equal(fs_attrbuild_encode(ab, i, b, &fsb), 0);
			vc.daddr = fs_fsb_to_daddr(g, fsb);
			if (get_be16(b + 8) == XFS_DA3_NODE_MAGIC) {
				assert_int_equal(fs_verify(FS_MT_DA_NODE, &vc, b, bs), 0);
				fmt = 2;
				continue;
			}
			assert_int_equal(fs_verify(FS_MT_ATTR_LEAF, &vc, b, bs), 0);
			fs_attr_leaf_hdr_decode(b, bs, &h);
			for (uint32_t k = 0; k < h.count; k++) {
				struct fs_attr_ent e;

				assert_true(fs_attr_leaf_entry(b, bs, &h, k, &e));
				/* the hash the kernel looks the entry up by, in order */
				assert_int_equal(e.hash, fs_attr_ent_hashval(g, &e));
				assert_true(e.hash >= last);
				last = e.hash;
				pptr_seen(p, g, &e);
			}
		}
	}
	if (fl.n)
		fail_msg("%zu findings, first %s", fl.n, fl.v[0].def->code);
	for (size_t i = 0; i < p->n; i++)
		assert_int_equal(p->seen[i], 1);
	fs_findings_free(&fl);
	fs_attrbuild_free(ab);
	free(b);
	return fmt;
}

static void test_pptr(void **state)
{
	struct fs_geom g;
	struct fs_attrbuild *ab;
	struct pptrs *p = malloc(sizeof(*p));
	static const size_t counts[3] = { 3, 40, 1000 };

	(void)state;
	assert_non_null(p);
	assert_int_equal(rt_geom_ex(4096, 0, 14, 4, false, &g), 0);
	pptrs_make(p, 2);
	/* no parent pointers where the feature is off */
	assert_int_equal(fs_attrbuild_plan(&g, INO, p->e, p->n, &ab), -EINVAL);
	g.parent = true;
	for (int f = 0; f < 3; f++) {
		pptrs_make(p, counts[f]);
		assert_int_equal(pptr_roundtrip(&g, p), f);
	}
	/* one name in one directory once; the value must be a parent record; no '/' */
	pptrs_make(p, 2);
	p->rec[1] = p->rec[0];
	assert_int_equal(fs_attrbuild_plan(&g, INO, p->e, p->n, &ab), -EEXIST);
	pptrs_make(p, 2);
	p->e[0].valuelen = 11;
	assert_int_equal(fs_attrbuild_plan(&g, INO, p->e, p->n, &ab), -EINVAL);
	pptrs_make(p, 2);
	p->names[0][3] = '/';
	assert_int_equal(fs_attrbuild_plan(&g, INO, p->e, p->n, &ab), -EINVAL);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_pptr),
		cmocka_unit_test(test_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
