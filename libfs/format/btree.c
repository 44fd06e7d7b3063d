// SPDX-License-Identifier: GPL-2.0
/*
 * Generic btree blocks: the table of btree types (magic, record/key/pointer
 * sizes, ordering), header decoding, the short-format field rules used by
 * the verifier table, and a walker that visits a tree's records in key
 * order while checking the tree's shape (levels, pointers, key order,
 * siblings, loops).  Per-tree record decoders live here too; so far the
 * inode btrees'.
 */
#include "libfs/format/btree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/endian.h"

/* ---- the table of btree types ---- */

static uint32_t inobt_maxlevels(const struct fs_geom *g)
{
	return g->inobt_maxlevels;
}

static void inobt_rec_key(const void *rec, void *key)
{
	/* the key of an inobt record is its startino, first in both */
	memcpy(key, rec, sizeof(((struct xfs_inobt_key *)0)->ir_startino));
}

static int inobt_key_cmp(const void *a, const void *b)
{
	uint32_t x = get_be32(a), y = get_be32(b);

	return x < y ? -1 : x > y;
}

static uint32_t bmbt_maxlevels(const struct fs_geom *g)
{
	/* the data fork's height bounds the attr fork's too */
	return g->bmbt_maxlevels_data;
}

static void bmbt_rec_key(const void *rec, void *key)
{
	/* a bmbt key is the record's startoff: the low 54 bits of l0 above bit 9 */
	uint64_t l0 = get_be64(rec);

	put_be64(key, (l0 >> (64 - BMBT_EXNTFLAG_BITLEN - BMBT_STARTOFF_BITLEN)) & BMBT_STARTOFF_MASK);
}

static int bmbt_key_cmp(const void *a, const void *b)
{
	uint64_t x = get_be64(a), y = get_be64(b);

	return x < y ? -1 : x > y;
}

static const struct fs_btree_ops btree_table[FS_BTREE_NR] = {
	[FS_BTREE_INO] = {
		.type = FS_BTREE_INO, .name = "inode btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_INOBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_INOBT_OWNER, [FS_BTC_BLKNO] = FS_C_INOBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_INOBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_INOBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_INOBT_SIBLING, [FS_BTC_PTR] = FS_C_INOBT_PTR,
			[FS_BTC_KEY] = FS_C_INOBT_KEY, [FS_BTC_ORDER] = FS_C_INOBT_ORDER,
			[FS_BTC_LOOP] = FS_C_INOBT_LOOP, [FS_BTC_DEPTH] = FS_C_INOBT_DEPTH,
			[FS_BTC_REC] = FS_C_INOBT_REC,
		},
		.mtype = FS_MT_INOBT, .magic = XFS_IBT_CRC_MAGIC,
		.rec_len = sizeof(struct xfs_inobt_rec), .key_len = sizeof(struct xfs_inobt_key),
		.ptr_len = sizeof(xfs_inobt_ptr_t), .maxlevels = inobt_maxlevels,
		.rec_key = inobt_rec_key, .key_cmp = inobt_key_cmp,
	},
	[FS_BTREE_FINO] = {
		.type = FS_BTREE_FINO, .name = "free inode btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_FINOBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_FINOBT_OWNER, [FS_BTC_BLKNO] = FS_C_FINOBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_FINOBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_FINOBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_FINOBT_SIBLING, [FS_BTC_PTR] = FS_C_FINOBT_PTR,
			[FS_BTC_KEY] = FS_C_FINOBT_KEY, [FS_BTC_ORDER] = FS_C_FINOBT_ORDER,
			[FS_BTC_LOOP] = FS_C_FINOBT_LOOP, [FS_BTC_DEPTH] = FS_C_FINOBT_DEPTH,
			[FS_BTC_REC] = FS_C_FINOBT_REC,
		},
		.mtype = FS_MT_FINOBT, .magic = XFS_FIBT_CRC_MAGIC,
		.rec_len = sizeof(struct xfs_inobt_rec), .key_len = sizeof(struct xfs_inobt_key),
		.ptr_len = sizeof(xfs_inobt_ptr_t), .maxlevels = inobt_maxlevels,
		.rec_key = inobt_rec_key, .key_cmp = inobt_key_cmp,
	},
	[FS_BTREE_BMBT] = {
		.type = FS_BTREE_BMBT, .name = "block map btree",
		.codes = {
			[FS_BTC_UNREADABLE] = FS_C_BMBT_UNREADABLE,
			[FS_BTC_OWNER] = FS_C_BMBT_OWNER, [FS_BTC_BLKNO] = FS_C_BMBT_BLKNO,
			[FS_BTC_LEVEL] = FS_C_BMBT_LEVEL, [FS_BTC_NUMRECS] = FS_C_BMBT_NUMRECS,
			[FS_BTC_SIBLING] = FS_C_BMBT_SIBLING, [FS_BTC_PTR] = FS_C_BMBT_PTR,
			[FS_BTC_KEY] = FS_C_BMBT_KEY, [FS_BTC_ORDER] = FS_C_BMBT_ORDER,
			[FS_BTC_LOOP] = FS_C_BMBT_LOOP, [FS_BTC_DEPTH] = FS_C_NR,
			[FS_BTC_REC] = FS_C_NR,
		},
		.mtype = FS_MT_BMBT, .magic = XFS_BMAP_CRC_MAGIC, .long_format = true,
		.rec_len = sizeof(struct xfs_bmbt_rec), .key_len = sizeof(xfs_bmbt_key_t),
		.ptr_len = sizeof(xfs_bmbt_ptr_t), .maxlevels = bmbt_maxlevels,
		.rec_key = bmbt_rec_key, .key_cmp = bmbt_key_cmp,
	},
};

const struct fs_btree_ops *fs_btree_ops_get(enum fs_btree_type t)
{
	return t < FS_BTREE_NR ? &btree_table[t] : NULL;
}

/* ---- block layout ---- */

size_t fs_btree_hdr_len(const struct fs_btree_ops *ops)
{
	return ops->long_format ? XFS_BTREE_LBLOCK_CRC_LEN : XFS_BTREE_SBLOCK_CRC_LEN;
}

void fs_btree_hdr_decode(const struct fs_btree_ops *ops, const void *block,
			 struct fs_btree_hdr *h)
{
	const struct xfs_btree_block *b = block;

	h->magic = be32(b->bb_magic);
	h->level = be16(b->bb_level);
	h->numrecs = be16(b->bb_numrecs);
	if (ops->long_format) {
		h->leftsib = be64(b->bb_u.l.bb_leftsib);
		h->rightsib = be64(b->bb_u.l.bb_rightsib);
		h->blkno = be64(b->bb_u.l.bb_blkno);
		h->lsn = be64(b->bb_u.l.bb_lsn);
		h->owner = be64(b->bb_u.l.bb_owner);
		h->crc = le32toh(b->bb_u.l.bb_crc);
	} else {
		uint32_t l = be32(b->bb_u.s.bb_leftsib), r = be32(b->bb_u.s.bb_rightsib);

		h->leftsib = l;
		h->rightsib = r;
		h->blkno = be64(b->bb_u.s.bb_blkno);
		h->lsn = be64(b->bb_u.s.bb_lsn);
		h->owner = be32(b->bb_u.s.bb_owner);
		h->crc = le32toh(b->bb_u.s.bb_crc);
	}
}

static size_t node_entry_keys_len(const struct fs_btree_ops *ops)
{
	return (size_t)ops->key_len * (ops->overlapping ? 2 : 1);
}

uint32_t fs_btree_maxrecs(const struct fs_btree_ops *ops, size_t blocksize, bool leaf)
{
	size_t hdr = fs_btree_hdr_len(ops);

	if (blocksize <= hdr)
		return 0;
	if (leaf)
		return (uint32_t)((blocksize - hdr) / ops->rec_len);
	return (uint32_t)((blocksize - hdr) / (node_entry_keys_len(ops) + ops->ptr_len));
}

const void *fs_btree_rec(const struct fs_btree_ops *ops, const void *block, uint32_t i)
{
	return (const unsigned char *)block + fs_btree_hdr_len(ops) + (size_t)i * ops->rec_len;
}

const void *fs_btree_key(const struct fs_btree_ops *ops, const void *block, uint32_t i)
{
	return (const unsigned char *)block + fs_btree_hdr_len(ops) +
	       (size_t)i * node_entry_keys_len(ops);
}

/* Pointers follow maxrecs keys, not numrecs: their place depends on the block size. */
uint64_t fs_btree_ptr(const struct fs_btree_ops *ops, const void *block, size_t blocksize,
		      uint32_t i)
{
	uint32_t maxr = fs_btree_maxrecs(ops, blocksize, false);
	const unsigned char *p = (const unsigned char *)block + fs_btree_hdr_len(ops) +
				 (size_t)maxr * node_entry_keys_len(ops) + (size_t)i * ops->ptr_len;

	return ops->ptr_len == 8 ? get_be64(p) : get_be32(p);
}

/* ---- field rules for the verifier table ---- */

static void breport(const struct fs_btree_ops *ops, const struct fs_vctx *c,
		    enum fs_btree_check what, const char *field, const char *exp, const char *found,
		    const char *msg)
{
	struct fs_reporter r = fs_vctx_reporter(c);

	r.prefix = ops->name;
	fs_reporter_bad(&r, ops->codes[what], field, exp, found, "%s", msg);
}

static bool sib_ok(const struct fs_geom *g, fs_agnumber_t agno, uint64_t sib)
{
	return sib == NULLAGBLOCK || (sib < fs_ag_blocks(g, agno) && sib >= g->ag_hdr_blocks);
}

static bool lsib_ok(const struct fs_geom *g, uint64_t sib)
{
	return sib == NULLFSBLOCK ||
	       (fs_fsb_valid(g, sib) && fs_fsb_to_agbno(g, sib) >= g->ag_hdr_blocks);
}

/*
 * The header rules every btree block obeys.  Short format: the owner is
 * the AG, siblings are blocks of that AG.  Long format (bmbt): the owner
 * is the inode, siblings are filesystem blocks.
 */
int fs_btree_block_verify_fields(const struct fs_btree_ops *ops, const struct fs_vctx *c,
				 const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	const bool lf = ops->long_format;
	const uint64_t want_owner = lf ? c->ino : c->agno;
	const uint64_t nullsib = lf ? NULLFSBLOCK : NULLAGBLOCK;
	const char *sib_where = lf ? "a block of the filesystem" : "a block of this AG";
	struct fs_btree_hdr h;
	uint32_t maxr;
	int n = 0;

	if (len < fs_btree_hdr_len(ops))
		return 0;	/* the common checks already said the block is short */
	fs_btree_hdr_decode(ops, buf, &h);
	if (h.owner != want_owner) {
		breport(ops, c, FS_BTC_OWNER, "bb_owner", FS_U(want_owner), FS_U(h.owner),
			lf ? "block belongs to another inode" : "block belongs to another AG");
		n++;
	}
	if (h.blkno != c->daddr) {
		breport(ops, c, FS_BTC_BLKNO, "bb_blkno", FS_U(c->daddr), FS_U(h.blkno),
			"block says it lives elsewhere");
		n++;
	}
	if (ops->maxlevels && h.level >= ops->maxlevels(g)) {
		breport(ops, c, FS_BTC_LEVEL, "bb_level", FS_U(ops->maxlevels(g) - 1), FS_U(h.level),
			"block level is above what the geometry allows");
		n++;
	}
	maxr = fs_btree_maxrecs(ops, len, h.level == 0);
	if (h.numrecs > maxr) {
		breport(ops, c, FS_BTC_NUMRECS, "bb_numrecs", FS_U(maxr), FS_U(h.numrecs),
			"more records than the block can hold");
		n++;
	}
	for (int right = 0; right < 2; right++) {
		uint64_t sib = right ? h.rightsib : h.leftsib;

		if (lf ? lsib_ok(g, sib) : sib_ok(g, c->agno, sib))
			continue;
		breport(ops, c, FS_BTC_SIBLING, right ? "bb_rightsib" : "bb_leftsib", sib_where,
			lf ? FS_X(sib) : FS_U(sib),
			right ? (lf ? "right sibling outside the filesystem" :
				 "right sibling outside the AG") :
				(lf ? "left sibling outside the filesystem" :
				 "left sibling outside the AG"));
		n++;
	}
	if (h.leftsib != nullsib && h.leftsib == h.rightsib) {
		breport(ops, c, FS_BTC_SIBLING, "bb_rightsib", "different from bb_leftsib",
			FS_U(h.rightsib), "left and right siblings are the same block");
		n++;
	}
	return n;
}

/* ---- the walker ---- */

/* Blocks already visited: an open-addressing set of AG block numbers. */
struct blkset {
	uint32_t *slot;            /* NULLAGBLOCK = empty */
	size_t cap, n;
};

static int blkset_grow(struct blkset *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 256;
	uint32_t *ns = malloc(ncap * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	memset(ns, 0xff, ncap * sizeof(*ns));
	for (size_t i = 0; i < s->cap; i++) {
		uint32_t v = s->slot[i];
		if (v == NULLAGBLOCK)
			continue;
		for (size_t j = (v * 2654435761u) & (ncap - 1);; j = (j + 1) & (ncap - 1)) {
			if (ns[j] == NULLAGBLOCK) {
				ns[j] = v;
				break;
			}
		}
	}
	free(s->slot);
	s->slot = ns;
	s->cap = ncap;
	return 0;
}

/* 1 if newly added, 0 if already present, negative errno. */
static int blkset_add(struct blkset *s, uint32_t v)
{
	if ((s->n + 1) * 2 > s->cap) {
		int err = blkset_grow(s);
		if (err)
			return err;
	}
	for (size_t j = (v * 2654435761u) & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
		if (s->slot[j] == v)
			return 0;
		if (s->slot[j] == NULLAGBLOCK) {
			s->slot[j] = v;
			s->n++;
			return 1;
		}
	}
}

#define KEYBUF 64

struct wlevel {
	unsigned char *buf;        /* the block currently open at this level */
	fs_agblock_t agbno;
	uint32_t numrecs;
	uint32_t next;             /* next entry to visit */
	bool open;
	fs_agblock_t prev;         /* last accepted block of this level, for sibling links */
	bool prev_known;           /* prev is trustworthy (no skipped subtree since) */
	uint64_t prev_rightsib;
	/*
	 * Overlapping trees: the highest key found below the open block
	 * (hi, once have_hi), whether part of its subtree was skipped
	 * (hi_partial: then it is not judged), and the high key its parent
	 * stores for it (parent_hi, when it has a parent).
	 */
	unsigned char hi[KEYBUF], parent_hi[KEYBUF];
	bool have_hi, hi_partial, has_parent_hi;
};

struct walker {
	struct fs_btree_walk *w;
	struct wlevel *lv;
	struct blkset seen;
	unsigned char lastkey[KEYBUF];
	bool have_lastkey;
	size_t bs;
	int stop;                  /* a callback's nonzero return */
};

/* Keys must ascend strictly, or (overlapping trees) never descend. */
static bool keys_misordered(const struct fs_btree_ops *ops, const void *prev, const void *next)
{
	int c = ops->key_cmp(prev, next);

	return ops->overlapping ? c > 0 : c >= 0;
}

static void wreport(struct walker *k, enum fs_btree_check what, fs_agblock_t agbno,
		    const char *field, const char *exp, const char *found, const char *fmt,
		    const char *detail)
{
	struct fs_btree_walk *w = k->w;

	fs_report(w->fl, w->ops->codes[what], w->vc.agno,
		  agbno == NULLAGBLOCK ? FS_NONE : (int64_t)fs_agbno_to_daddr(w->g, w->vc.agno, agbno),
		  FS_NONE, field, exp, found, fmt, w->ops->name, detail);
}

static void fold_hi(const struct fs_btree_ops *ops, struct wlevel *L, const void *key)
{
	if (!L->have_hi || ops->key_cmp(key, L->hi) > 0) {
		memcpy(L->hi, key, ops->key_len);
		L->have_hi = true;
	}
}

/*
 * A block of an overlapping tree is done: the high key its parent stores
 * for it must be the highest key of its subtree (what the kernel keeps
 * there; xfs_repair rejects a record or key above it), and that key
 * counts toward the parent's own.
 */
static void close_hi(struct walker *k, uint32_t level)
{
	const struct fs_btree_ops *ops = k->w->ops;
	struct wlevel *L = &k->lv[level];
	struct wlevel *P = level + 1 < k->w->nlevels ? &k->lv[level + 1] : NULL;

	if (!ops->overlapping || !ops->rec_high_key)
		return;
	if (L->hi_partial) {
		if (P)
			P->hi_partial = true;
		return;
	}
	if (!L->have_hi)
		return;
	if (L->has_parent_hi && ops->key_cmp(L->hi, L->parent_hi) != 0)
		wreport(k, FS_BTC_KEY, L->agbno, "high key", "the highest key of the child's subtree",
			ops->key_cmp(L->hi, L->parent_hi) > 0 ? "a lower key" : "a higher key",
			"%s: block %s: parent's high key is not the highest key below it",
			FS_U(L->agbno));
	if (P)
		fold_hi(ops, P, L->hi);
}

/* Part of the subtree under this level's open block was not walked. */
static void hi_skipped(struct walker *k, uint32_t level)
{
	if (level < k->w->nlevels)
		k->lv[level].hi_partial = true;
}

static bool ptr_ok(const struct fs_btree_walk *w, uint64_t p)
{
	return p >= w->g->ag_hdr_blocks && p < fs_ag_blocks(w->g, w->vc.agno);
}

/* After a subtree was skipped, sibling links at lower levels cannot be judged. */
static void forget_siblings_below(struct walker *k, uint32_t level)
{
	for (uint32_t l = 0; l < level; l++)
		k->lv[l].prev_known = false;
}

/*
 * Run the verifier table on a block; every finding goes to the walk's list.
 * 1 when the block must not be followed, 0 when it may, negative errno.
 * An LSN beyond the log head alone does not stop the walk: the kernel does
 * not judge a block by it when reading (and xfs_repair -L leaves such LSNs).
 * Nor does a CRC alone: a CRC failure hides nothing, the block's contents
 * are judged by every other rule, and a block that passes them is followed
 * (as xfs_repair reads a suspect block's records), its CRC reported.
 */
static int verify_block(struct walker *k, struct fs_vctx *vc, const void *buf)
{
	struct fs_btree_walk *w = k->w;
	struct fs_findings tmp;
	bool reject = false;

	fs_findings_init(&tmp);
	vc->fl = &tmp;
	fs_verify(w->ops->mtype, vc, buf, k->bs);
	vc->fl = w->fl;
	for (size_t i = 0; i < tmp.n; i++) {
		const struct fs_finding *f = &tmp.v[i];

		if (!(f->def->flags & (FS_FL_LSN | FS_FL_CRC)))
			reject = true;
		fs_findings_add(w->fl, f);
	}
	if (tmp.dropped)
		reject = true;
	fs_findings_free(&tmp);
	return reject;
}

/*
 * Read, verify and open one block at the expected level.  Returns 1 when
 * it is open, 0 when it was rejected (reported), negative errno.
 */
static int open_block(struct walker *k, uint32_t level, fs_agblock_t agbno, const void *parent_key)
{
	struct fs_btree_walk *w = k->w;
	const struct fs_btree_ops *ops = w->ops;
	struct wlevel *L = &k->lv[level];
	struct fs_btree_hdr h;
	struct fs_vctx vc = w->vc;
	int err;

	err = blkset_add(&k->seen, agbno);
	if (err < 0)
		return err;
	if (err == 0) {
		wreport(k, FS_BTC_LOOP, agbno, "ptr", "a block not yet visited", FS_U(agbno),
			"%s: block %s is reached twice (the tree has a loop or shared subtree)",
			FS_U(agbno));
		goto rejected;
	}
	err = w->read_block(w->priv, w->vc.agno, agbno, L->buf);
	if (err) {
		wreport(k, FS_BTC_UNREADABLE, agbno, NULL, NULL, NULL, "%s: block %s could not be read",
			FS_U(agbno));
		goto rejected;
	}
	vc.daddr = fs_agbno_to_daddr(w->g, w->vc.agno, agbno);
	err = verify_block(k, &vc, L->buf);
	if (err < 0)
		return err;
	if (err) {
		/* a block that failed a check is not followed: its pointers are suspect */
		goto rejected;
	}
	fs_btree_hdr_decode(ops, L->buf, &h);
	if (h.level != level) {
		char exp[16];
		snprintf(exp, sizeof(exp), "%u", level);
		wreport(k, FS_BTC_LEVEL, agbno, "bb_level", exp, FS_U(h.level),
			"%s: block %s is not at the level its parent implies", FS_U(agbno));
		goto rejected;
	}
	if (h.numrecs == 0 && !(level == w->nlevels - 1 && level == 0)) {
		wreport(k, FS_BTC_NUMRECS, agbno, "bb_numrecs", "at least 1", "0",
			"%s: block %s is empty but is not an empty root", FS_U(agbno));
		goto rejected;
	}
	/* sibling links: the left sibling is the previous block of this level */
	if (L->prev_known) {
		if (h.leftsib != L->prev)
			wreport(k, FS_BTC_SIBLING, agbno, "bb_leftsib",
				L->prev == NULLAGBLOCK ? "NULL" : FS_U(L->prev),
				h.leftsib == NULLAGBLOCK ? "NULL" : FS_U(h.leftsib),
				"%s: block %s: left sibling is not the previous block of its level",
				FS_U(agbno));
		if (L->prev != NULLAGBLOCK && L->prev_rightsib != agbno)
			wreport(k, FS_BTC_SIBLING, L->prev, "bb_rightsib", FS_U(agbno),
				L->prev_rightsib == NULLAGBLOCK ? "NULL" : FS_U(L->prev_rightsib),
				"%s: block %s: right sibling is not the next block of its level",
				FS_U(L->prev));
	}
	/* the parent's key is the lowest key of this block */
	if (parent_key && h.numrecs > 0) {
		unsigned char first[KEYBUF];
		const void *fk;

		if (level == 0) {
			ops->rec_key(fs_btree_rec(ops, L->buf, 0), first);
			fk = first;
		} else {
			fk = fs_btree_key(ops, L->buf, 0);
		}
		if (ops->overlapping ? ops->key_cmp(parent_key, fk) > 0 :
				       ops->key_cmp(parent_key, fk) != 0)
			wreport(k, FS_BTC_KEY, agbno, "key", "the first key of the child",
				"a different key", "%s: block %s: parent key does not match its first key",
				FS_U(agbno));
	}
	L->agbno = agbno;
	L->numrecs = h.numrecs;
	L->next = 0;
	L->open = true;
	L->have_hi = L->hi_partial = false;
	L->has_parent_hi = ops->overlapping && parent_key;
	if (L->has_parent_hi)
		memcpy(L->parent_hi, (const unsigned char *)parent_key + ops->key_len, ops->key_len);
	L->prev = agbno;
	L->prev_known = true;
	L->prev_rightsib = h.rightsib;
	w->blocks++;
	if (w->visit_block)
		k->stop = w->visit_block(w->priv, level, agbno, L->buf);
	return 1;
rejected:
	w->bad_blocks++;
	hi_skipped(k, level + 1);
	L->open = false;
	L->prev_known = false;
	forget_siblings_below(k, level);
	return 0;
}

static void visit_leaf(struct walker *k)
{
	struct fs_btree_walk *w = k->w;
	const struct fs_btree_ops *ops = w->ops;
	struct wlevel *L = &k->lv[0];
	uint32_t misordered = 0;

	for (uint32_t i = 0; i < L->numrecs && !k->stop; i++) {
		const void *rec = fs_btree_rec(ops, L->buf, i);
		unsigned char key[KEYBUF];

		if (ops->rec_valid && !ops->rec_valid(w->g, w->vc.agno, rec)) {
			L->hi_partial = true;
			w->records++;
			k->stop = w->visit_rec(w->priv, rec);
			continue;
		}
		ops->rec_key(rec, key);
		if (k->have_lastkey && keys_misordered(ops, k->lastkey, key)) {
			char where[16];
			/* one report per block: a shifted run would otherwise flood */
			if (!misordered++) {
				snprintf(where, sizeof(where), "%u", i);
				wreport(k, FS_BTC_ORDER, L->agbno, "record", "keys in ascending order", where,
					"%s: block %s: record out of key order; skipped",
					FS_U(L->agbno));
			}
			L->hi_partial = true;
			continue;
		}
		if (ops->overlapping && ops->rec_high_key) {
			unsigned char hk[KEYBUF];

			ops->rec_high_key(rec, hk);
			fold_hi(ops, L, hk);
		}
		memcpy(k->lastkey, key, ops->key_len);
		k->have_lastkey = true;
		w->records++;
		k->stop = w->visit_rec(w->priv, rec);
	}
	if (misordered > 1) {
		char n[16];
		snprintf(n, sizeof(n), "%u", misordered);
		wreport(k, FS_BTC_ORDER, L->agbno, "record", "keys in ascending order", n,
			"%s: block %s: more records out of key order (count in 'found'); skipped",
			FS_U(L->agbno));
	}
}

/* At the end of the walk, the last block of each level must have no right sibling. */
static void check_level_ends(struct walker *k)
{
	for (uint32_t l = 0; l < k->w->nlevels; l++) {
		struct wlevel *L = &k->lv[l];
		if (L->prev_known && L->prev != NULLAGBLOCK && L->prev_rightsib != NULLAGBLOCK)
			wreport(k, FS_BTC_SIBLING, L->prev, "bb_rightsib", "NULL", FS_U(L->prev_rightsib),
				"%s: block %s: last block of its level has a right sibling",
				FS_U(L->prev));
	}
}

int fs_btree_walk(struct fs_btree_walk *w)
{
	const struct fs_btree_ops *ops = w->ops;
	struct walker k = { .w = w, .bs = w->g->blocksize };
	uint32_t maxlevels = ops->maxlevels ? ops->maxlevels(w->g) : 0;
	uint32_t top, l;
	int err = 0, ret;

	w->blocks = w->records = 0;
	w->bad_blocks = 0;
	if (ops->key_len > KEYBUF || ops->long_format)
		return -EOPNOTSUPP;	/* long-format trees are rooted in inodes: not yet */
	if (w->nlevels == 0 || (maxlevels && w->nlevels > maxlevels)) {
		char exp[24];
		snprintf(exp, sizeof(exp), "1..%u", maxlevels);
		wreport(&k, FS_BTC_DEPTH, NULLAGBLOCK, "levels", exp, FS_U(w->nlevels),
			"%s: tree height %s is outside what the geometry allows", FS_U(w->nlevels));
		return 0;
	}
	if (!ptr_ok(w, w->root)) {
		wreport(&k, FS_BTC_PTR, NULLAGBLOCK, "root", "a block of this AG past its headers",
			FS_U(w->root), "%s: root block %s is outside the AG", FS_U(w->root));
		return 0;
	}
	top = w->nlevels - 1;
	k.lv = calloc(w->nlevels, sizeof(*k.lv));
	if (!k.lv)
		return -ENOMEM;
	for (l = 0; l < w->nlevels; l++) {
		k.lv[l].buf = malloc(k.bs);
		if (!k.lv[l].buf) {
			err = -ENOMEM;
			goto out;
		}
		k.lv[l].prev = NULLAGBLOCK;
		k.lv[l].prev_known = true;
	}

	ret = open_block(&k, top, w->root, NULL);
	if (ret < 0) {
		err = ret;
		goto out;
	}
	/* iterative depth-first walk: lv[l] holds the open block of level l */
	l = top;
	while (!k.stop) {
		struct wlevel *L = &k.lv[l];
		uint32_t i;
		uint64_t child;
		const void *key;

		if (!L->open) {
			if (l == top)
				break;
			close_hi(&k, l);
			l++;
			continue;
		}
		if (l == 0) {
			visit_leaf(&k);
			L->open = false;
			continue;
		}
		if (L->next >= L->numrecs) {
			L->open = false;
			continue;
		}
		i = L->next++;
		child = fs_btree_ptr(ops, L->buf, k.bs, i);
		key = fs_btree_key(ops, L->buf, i);
		if (i > 0 && keys_misordered(ops, fs_btree_key(ops, L->buf, i - 1), key)) {
			char where[16];
			snprintf(where, sizeof(where), "%u", i);
			wreport(&k, FS_BTC_ORDER, L->agbno, "key", "keys in ascending order", where,
				"%s: block %s: node keys out of order; subtree skipped",
				FS_U(L->agbno));
			forget_siblings_below(&k, l);
			hi_skipped(&k, l);
			continue;
		}
		if (!ptr_ok(w, child)) {
			wreport(&k, FS_BTC_PTR, L->agbno, "ptr", "a block of this AG past its headers",
				FS_U(child), "%s: block %s: child pointer outside the AG",
				FS_U(L->agbno));
			forget_siblings_below(&k, l);
			hi_skipped(&k, l);
			continue;
		}
		ret = open_block(&k, l - 1, (fs_agblock_t)child, key);
		if (ret < 0) {
			err = ret;
			goto out;
		}
		if (ret == 1)
			l--;
	}
	if (k.stop)
		err = k.stop;
	else
		check_level_ends(&k);
out:
	if (k.lv)
		for (l = 0; l < w->nlevels; l++)
			free(k.lv[l].buf);
	free(k.lv);
	free(k.seen.slot);
	return err;
}

/* ---- inode btree records ---- */

void fs_inobt_rec_decode(const struct fs_geom *g, const void *rec, struct fs_inobt_rec *out)
{
	const struct xfs_inobt_rec *r = rec;

	out->startino = be32(r->ir_startino);
	out->free = be64(r->ir_free);
	if (g->spinodes) {
		out->holemask = be16(r->ir_u.sp.ir_holemask);
		out->count = r->ir_u.sp.ir_count;
		out->freecount = r->ir_u.sp.ir_freecount;
	} else {
		uint32_t fc = be32(r->ir_u.f.ir_freecount);

		out->holemask = 0;
		out->count = XFS_INODES_PER_CHUNK;
		out->freecount = fc > 255 ? 255 : (uint8_t)fc;
	}
}

uint64_t fs_inobt_rec_allocmask(const struct fs_inobt_rec *r)
{
	uint64_t mask = 0;

	for (unsigned i = 0; i < XFS_INOBT_HOLEMASK_BITS; i++)
		if (!(r->holemask & (1u << i)))
			mask |= xfs_inobt_maskn(i * XFS_INODES_PER_HOLEMASK_BIT,
						XFS_INODES_PER_HOLEMASK_BIT);
	return mask;
}

const char *fs_inobt_rec_problem(const struct fs_geom *g, fs_agnumber_t agno,
				 const struct fs_inobt_rec *r)
{
	uint64_t alloc = fs_inobt_rec_allocmask(r);
	unsigned holes = (unsigned)__builtin_popcount(r->holemask);

	/*
	 * Chunks start on a block boundary aligned as inode allocation aligns
	 * them (cluster_align blocks), or on a 64-inode boundary inside a
	 * block that holds more than one chunk (64 KiB blocks).
	 */
	if (g->inopblock >= XFS_INODES_PER_CHUNK) {
		if (r->startino % XFS_INODES_PER_CHUNK)
			return "startino is not aligned to a chunk";
	} else if (fs_agino_to_offset(g, r->startino) != 0 ||
		   fs_agino_to_agbno(g, r->startino) % (g->cluster_align ? g->cluster_align : 1)) {
		return "startino is not aligned to a chunk";
	}
	if (!fs_agino_valid(g, agno, r->startino) ||
	    !fs_agino_valid(g, agno, r->startino + XFS_INODES_PER_CHUNK - 1))
		return "chunk lies outside the AG's inode range";
	if (r->holemask && !g->spinodes)
		return "sparse chunk on a filesystem without sparse inodes";
	if (r->count < XFS_INODES_PER_HOLEMASK_BIT || r->count > XFS_INODES_PER_CHUNK)
		return "inode count out of range";
	if (r->count != XFS_INODES_PER_CHUNK - holes * XFS_INODES_PER_HOLEMASK_BIT)
		return "inode count does not match the hole mask";
	if ((r->free & ~alloc) != ~alloc)
		return "inodes in holes are not marked free";
	if ((unsigned)__builtin_popcountll(r->free & alloc) != r->freecount)
		return "free count does not match the free mask";
	return NULL;
}
