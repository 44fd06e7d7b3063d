// SPDX-License-Identifier: GPL-2.0
/*
 * Inode fork block maps: unpacking bmbt extent records, loading the
 * mappings of an extents-format fork or of a btree-format fork (root in the
 * inode, long-format "BMA3" blocks read through the caller and verified
 * through the verifier table), with the record rules (range, length, order,
 * count, unwritten) and the tree-shape rules (levels, keys, siblings,
 * pointers, loops) reported as bmap.* / bmbt.* findings.
 */
#include "libfs/format/bmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/btree.h"
#include "libfs/format/endian.h"
#include "libfs/format/verify.h"

/* Bit positions of the packed record, from the headers' field widths. */
#define OFF_SHIFT   (64 - BMBT_EXNTFLAG_BITLEN - BMBT_STARTOFF_BITLEN)   /* in l0 */
#define BLK_HI_BITS (BMBT_STARTBLOCK_BITLEN - (64 - BMBT_BLOCKCOUNT_BITLEN))
#define BLK_LO_SHIFT BMBT_BLOCKCOUNT_BITLEN                              /* in l1 */

void fs_bmbt_rec_decode(const void *rec, struct fs_bmap_ext *e)
{
	const unsigned char *p = rec;
	uint64_t l0 = get_be64(p), l1 = get_be64(p + 8);

	e->unwritten = (l0 >> 63) != 0;
	e->startoff = (l0 >> OFF_SHIFT) & BMBT_STARTOFF_MASK;
	e->startblock = ((l0 & ((1ull << BLK_HI_BITS) - 1)) << (64 - BLK_LO_SHIFT)) |
			(l1 >> BLK_LO_SHIFT);
	e->blockcount = l1 & BMBT_BLOCKCOUNT_MASK;
}

void fs_bmbt_rec_encode(const struct fs_bmap_ext *e, void *rec)
{
	unsigned char *p = rec;
	uint64_t sb = e->startblock & ((1ull << BMBT_STARTBLOCK_BITLEN) - 1);
	uint64_t l0 = ((uint64_t)(e->unwritten ? 1 : 0) << 63) |
		      ((e->startoff & BMBT_STARTOFF_MASK) << OFF_SHIFT) |
		      (sb >> (64 - BLK_LO_SHIFT));
	uint64_t l1 = (sb << BLK_LO_SHIFT) | (e->blockcount & BMBT_BLOCKCOUNT_MASK);

	put_be64(p, l0);
	put_be64(p + 8, l1);
}

/* ---- the loader ---- */

struct lvstate {
	unsigned char *buf;        /* the block open at this level */
	fs_fsblock_t prev;         /* previous block of this level (NULLFSBLOCK: none yet) */
	uint64_t prev_right;
	bool known;                /* prev is trustworthy (no skipped subtree since) */
};

struct loader {
	const struct fs_bmap_ctx *c;
	const struct fs_geom *g;
	const struct fs_inode *ip;
	int whichfork;
	const char *fork;          /* "data" / "attr" for messages */
	struct fs_bmap *out;
	size_t cap_ext, cap_bmbt;
	bool rt, unwritten_ok;
	uint64_t next_off;         /* first offset the next record may start at */
	uint64_t nrecs;            /* records seen (valid or not), for the count check */
	uint32_t rejected;         /* bmbt blocks not followed */
	struct lvstate *lv;
	uint32_t nlevels;          /* levels below the root */
	uint64_t *seen;            /* open-addressing set of bmbt blocks; ~0 = empty */
	size_t seen_cap, seen_n;
	int err;
};

static void report(struct loader *l, enum fs_code code, fs_fsblock_t where, const char *field,
		   const char *exp, const char *found, const char *fmt, const char *detail)
{
	const struct fs_geom *g = l->g;
	struct fs_typed val = { .fork = l->whichfork == XFS_ATTR_FORK ? FS_FORK_ATTR : FS_FORK_DATA };
	int64_t ag, daddr = FS_NONE;

	l->out->bad = true;
	if (!l->c->fl)
		return;
	if (where != NULLFSBLOCK && fs_fsb_valid(g, where)) {
		ag = fs_fsb_to_agno(g, where);
		daddr = (int64_t)fs_fsb_to_daddr(g, where);
	} else {
		ag = fs_ino_to_agno(g, l->ip->ino);
	}
	fs_report_val(l->c->fl, &val, code, ag, daddr, (int64_t)l->ip->ino, field, exp, found, fmt,
		      l->fork, detail);
}

static int seen_add(struct loader *l, uint64_t v)
{
	if ((l->seen_n + 1) * 2 > l->seen_cap) {
		size_t ncap = l->seen_cap ? l->seen_cap * 2 : 64;
		uint64_t *ns = malloc(ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		memset(ns, 0xff, ncap * sizeof(*ns));
		for (size_t i = 0; i < l->seen_cap; i++) {
			uint64_t x = l->seen[i];
			if (x == ~0ull)
				continue;
			for (size_t j = (x * 0x9e3779b97f4a7c15ull) >> 20 & (ncap - 1);;
			     j = (j + 1) & (ncap - 1))
				if (ns[j] == ~0ull) {
					ns[j] = x;
					break;
				}
		}
		free(l->seen);
		l->seen = ns;
		l->seen_cap = ncap;
	}
	for (size_t j = (v * 0x9e3779b97f4a7c15ull) >> 20 & (l->seen_cap - 1);;
	     j = (j + 1) & (l->seen_cap - 1)) {
		if (l->seen[j] == v)
			return 0;
		if (l->seen[j] == ~0ull) {
			l->seen[j] = v;
			l->seen_n++;
			return 1;
		}
	}
}

static int push_ext(struct loader *l, const struct fs_bmap_ext *e)
{
	struct fs_bmap *m = l->out;

	if (m->n == l->cap_ext) {
		size_t ncap = l->cap_ext ? l->cap_ext * 2 : 8;
		struct fs_bmap_ext *nv = realloc(m->ext, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->ext = nv;
		l->cap_ext = ncap;
	}
	m->ext[m->n++] = *e;
	return 0;
}

static int push_bmbt(struct loader *l, fs_fsblock_t fsb)
{
	struct fs_bmap *m = l->out;

	if (m->nbmbt == l->cap_bmbt) {
		size_t ncap = l->cap_bmbt ? l->cap_bmbt * 2 : 8;
		fs_fsblock_t *nv = realloc(m->bmbt, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->bmbt = nv;
		l->cap_bmbt = ncap;
	}
	m->bmbt[m->nbmbt++] = fsb;
	return 0;
}

/* A block of the data device past its AG's headers (where bmbt blocks and extents may be). */
static bool fsb_usable(const struct fs_geom *g, fs_fsblock_t fsb)
{
	return fs_fsb_valid(g, fsb) && fs_fsb_to_agbno(g, fsb) >= g->ag_hdr_blocks;
}

/* "offset N" for a record's messages, formatted only when one is made. */
static const char *rec_at(char *buf, size_t size, const struct fs_bmap_ext *e)
{
	snprintf(buf, size, "offset %llu", (unsigned long long)e->startoff);
	return buf;
}

/* One record: judge it, keep it when it can be trusted.  where: the bmbt leaf or NULL. */
static uint64_t max_fileoff(const struct fs_geom *g)
{
	uint64_t bytes = ((UINT64_C(1) << 63) - 1) >> g->blocklog;

	return bytes - 1 < XFS_MAX_FILEOFF ? bytes - 1 : XFS_MAX_FILEOFF;
}

static int take_rec(struct loader *l, const void *rec, fs_fsblock_t where)
{
	const struct fs_geom *g = l->g;
	struct fs_bmap_ext e;
	char what[64];

	l->nrecs++;
	fs_bmbt_rec_decode(rec, &e);
	if (e.blockcount == 0) {
		report(l, FS_C_BMAP_BLOCKCOUNT, where, "blockcount", "at least 1", "0",
		       "%s fork: extent at %s has no blocks", rec_at(what, sizeof(what), &e));
		return 0;
	}
	/*
	 * The largest file offset: the format's, or where a file of the
	 * largest size the kernel allows (2^63 - 1 bytes) ends, whichever is
	 * less; xfs_repair holds extents to the second, so it is ours too.
	 */
	if (e.startoff + e.blockcount > max_fileoff(g)) {
		report(l, FS_C_BMAP_OFFSET, where, "startoff", FS_U(max_fileoff(g) - e.blockcount),
		       FS_U(e.startoff), "%s fork: extent at %s ends past the largest file offset",
		       rec_at(what, sizeof(what), &e));
		return 0;
	}
	if (l->rt) {
		if (l->c->rblocks && (e.startblock >= l->c->rblocks ||
				      e.blockcount > l->c->rblocks - e.startblock)) {
			report(l, FS_C_BMAP_STARTBLOCK, where, "startblock", "inside the realtime device",
			       FS_U(e.startblock),
			       "%s fork: realtime extent at %s is outside the realtime device",
			       rec_at(what, sizeof(what), &e));
			return 0;
		}
	} else {
		fs_agnumber_t agno = fs_fsb_to_agno(g, e.startblock);
		fs_agblock_t agbno = fs_fsb_to_agbno(g, e.startblock);

		if (!fsb_usable(g, e.startblock)) {
			report(l, FS_C_BMAP_STARTBLOCK, where, "startblock",
			       "a block of the filesystem past its AG headers", FS_X(e.startblock),
			       "%s fork: extent at %s starts outside the filesystem",
			       rec_at(what, sizeof(what), &e));
			return 0;
		}
		if (e.blockcount > fs_ag_blocks(g, agno) - agbno) {
			report(l, FS_C_BMAP_AG_END, where, "blockcount",
			       FS_U(fs_ag_blocks(g, agno) - agbno), FS_U(e.blockcount),
			       "%s fork: extent at %s runs past the end of its AG",
			       rec_at(what, sizeof(what), &e));
			return 0;
		}
	}
	if (e.unwritten && !l->unwritten_ok)
		report(l, FS_C_BMAP_UNWRITTEN, where, "extentflag", "0", "1",
		       "%s fork: extent at %s is unwritten where only regular file data may be",
		       rec_at(what, sizeof(what), &e));
	if (e.startoff < l->next_off) {
		report(l, FS_C_BMAP_ORDER, where, "startoff", FS_U(l->next_off), FS_U(e.startoff),
		       "%s fork: extent at %s overlaps or precedes the previous one; skipped",
		       rec_at(what, sizeof(what), &e));
		return 0;
	}
	l->next_off = e.startoff + e.blockcount;
	return push_ext(l, &e);
}

static void forget_below(struct loader *l, uint32_t level)
{
	for (uint32_t i = 0; i <= level && i < l->nlevels; i++)
		l->lv[i].known = false;
}

/* Verify through the table; true when the block must not be followed. */
static bool verify_block(struct loader *l, fs_fsblock_t fsb, const void *buf)
{
	const struct fs_geom *g = l->g;
	struct fs_findings tmp;
	struct fs_vctx vc = {
		.g = g, .fl = &tmp, .agno = fs_fsb_to_agno(g, fsb),
		.daddr = fs_fsb_to_daddr(g, fsb), .have_log_head = l->c->have_log_head,
		.head_lsn = l->c->head_lsn, .ino = l->ip->ino,
	};
	bool reject = false;

	fs_findings_init(&tmp);
	fs_verify(FS_MT_BMBT, &vc, buf, g->blocksize);
	for (size_t i = 0; i < tmp.n; i++) {
		const struct fs_finding *f = &tmp.v[i];

		/* an LSN past the head alone does not stop the kernel reading a block */
		if (!(f->def->flags & FS_FL_LSN))
			reject = true;
		l->out->bad = true;
		if (l->c->fl)
			fs_findings_add(l->c->fl, f);
	}
	if (tmp.dropped)
		reject = true;
	fs_findings_free(&tmp);
	return reject;
}

/* Walk the subtree at fsb, expected at level, whose parent key is pkey. */
static int walk(struct loader *l, uint32_t level, fs_fsblock_t fsb, uint64_t pkey)
{
	const struct fs_btree_ops *ops = fs_btree_ops_get(FS_BTREE_BMBT);
	const struct fs_geom *g = l->g;
	struct lvstate *L = &l->lv[level];
	struct fs_btree_hdr h;
	int r;

	r = seen_add(l, fsb);
	if (r < 0)
		return r;
	if (r == 0) {
		report(l, FS_C_BMBT_LOOP, fsb, "ptr", "a block not yet visited", FS_U(fsb),
		       "%s fork: bmbt block %s is reached twice (loop or shared subtree)",
		       FS_U(fsb));
		goto rejected;
	}
	if (l->c->read_fsblock(l->c->priv, fsb, L->buf)) {
		report(l, FS_C_BMBT_UNREADABLE, fsb, NULL, NULL, NULL,
		       "%s fork: bmbt block %s could not be read", FS_U(fsb));
		goto rejected;
	}
	if (verify_block(l, fsb, L->buf))
		goto rejected;
	fs_btree_hdr_decode(ops, L->buf, &h);
	if (h.level != level) {
		report(l, FS_C_BMBT_LEVEL, fsb, "bb_level", FS_U(level), FS_U(h.level),
		       "%s fork: bmbt block %s is not at the level its parent implies", FS_U(fsb));
		goto rejected;
	}
	if (h.numrecs == 0) {
		report(l, FS_C_BMBT_NUMRECS, fsb, "bb_numrecs", "at least 1", "0",
		       "%s fork: bmbt block %s is empty", FS_U(fsb));
		goto rejected;
	}
	if (L->known && h.leftsib != L->prev)
		report(l, FS_C_BMBT_SIBLING, fsb, "bb_leftsib",
		       L->prev == NULLFSBLOCK ? "NULL" : FS_U(L->prev),
		       h.leftsib == NULLFSBLOCK ? "NULL" : FS_U(h.leftsib),
		       "%s fork: bmbt block %s: left sibling is not the previous block of its level",
		       FS_U(fsb));
	if (L->known && L->prev != NULLFSBLOCK && L->prev_right != fsb)
		report(l, FS_C_BMBT_SIBLING, L->prev, "bb_rightsib", FS_U(fsb),
		       L->prev_right == NULLFSBLOCK ? "NULL" : FS_U(L->prev_right),
		       "%s fork: bmbt block %s: right sibling is not the next block of its level",
		       FS_U(L->prev));
	L->prev = fsb;
	L->prev_right = h.rightsib;
	L->known = true;
	{
		uint64_t first = level ? get_be64(fs_btree_key(ops, L->buf, 0)) :
			(get_be64(fs_btree_rec(ops, L->buf, 0)) >> OFF_SHIFT) & BMBT_STARTOFF_MASK;
		if (first != pkey)
			report(l, FS_C_BMBT_KEY, fsb, "br_startoff", FS_U(pkey), FS_U(first),
			       "%s fork: bmbt block %s: parent key is not its first key", FS_U(fsb));
	}
	r = push_bmbt(l, fsb);
	if (r)
		return r;
	if (level == 0) {
		for (uint32_t i = 0; i < h.numrecs; i++) {
			r = take_rec(l, fs_btree_rec(ops, L->buf, i), fsb);
			if (r)
				return r;
		}
		return 0;
	}
	for (uint32_t i = 0; i < h.numrecs; i++) {
		uint64_t key = get_be64(fs_btree_key(ops, L->buf, i));
		uint64_t ptr = fs_btree_ptr(ops, L->buf, g->blocksize, i);

		if (i > 0 && key <= get_be64(fs_btree_key(ops, L->buf, i - 1))) {
			report(l, FS_C_BMBT_ORDER, fsb, "br_startoff", "keys in ascending order",
			       FS_U(key), "%s fork: bmbt block %s: node keys out of order; subtree "
			       "skipped", FS_U(fsb));
			l->rejected++;
			forget_below(l, level - 1);
			continue;
		}
		if (!fsb_usable(g, ptr)) {
			report(l, FS_C_BMBT_PTR, fsb, "ptr", "a block of the filesystem past its AG "
			       "headers", FS_X(ptr), "%s fork: bmbt block %s: child pointer outside "
			       "the filesystem", FS_U(fsb));
			l->rejected++;
			forget_below(l, level - 1);
			continue;
		}
		r = walk(l, level - 1, ptr, key);
		if (r)
			return r;
	}
	return 0;
rejected:
	l->rejected++;
	forget_below(l, level);
	return 0;
}

static int load_btree(struct loader *l, const unsigned char *root, uint32_t fsize)
{
	const struct fs_geom *g = l->g;
	uint32_t maxlevels = g->bmbt_maxlevels_data;
	uint16_t level, numrecs;
	uint32_t maxr;
	int err = 0;

	if (fsize < sizeof(struct xfs_bmdr_block) + sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t)) {
		report(l, FS_C_BMBT_ROOT, NULLFSBLOCK, "fork size", "room for a btree root",
		       FS_U(fsize), "%s fork: %s bytes cannot hold a btree root", FS_U(fsize));
		return 0;
	}
	level = get_be16(root);
	numrecs = get_be16(root + 2);
	maxr = (fsize - (uint32_t)sizeof(struct xfs_bmdr_block)) /
	       (uint32_t)(sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t));
	if (level == 0 || (maxlevels && level >= maxlevels)) {
		report(l, FS_C_BMBT_ROOT, NULLFSBLOCK, "bb_level",
		       maxlevels ? FS_U(maxlevels - 1) : "at least 1", FS_U(level),
		       "%s fork: btree root level %s is out of range", FS_U(level));
		return 0;
	}
	if (numrecs == 0 || numrecs > maxr) {
		report(l, FS_C_BMBT_ROOT, NULLFSBLOCK, "bb_numrecs", FS_U(maxr), FS_U(numrecs),
		       "%s fork: btree root record count %s does not fit the fork", FS_U(numrecs));
		return 0;
	}
	l->nlevels = level;
	l->lv = calloc(level, sizeof(*l->lv));
	if (!l->lv)
		return -ENOMEM;
	for (uint32_t i = 0; i < level; i++) {
		l->lv[i].buf = malloc(g->blocksize);
		if (!l->lv[i].buf)
			return -ENOMEM;
		l->lv[i].prev = NULLFSBLOCK;
		l->lv[i].known = true;
	}
	for (uint32_t i = 0; i < numrecs && !err; i++) {
		const unsigned char *kp = root + sizeof(struct xfs_bmdr_block) +
					  (size_t)i * sizeof(xfs_bmdr_key_t);
		const unsigned char *pp = root + sizeof(struct xfs_bmdr_block) +
					  (size_t)maxr * sizeof(xfs_bmdr_key_t) +
					  (size_t)i * sizeof(xfs_bmdr_ptr_t);
		uint64_t key = get_be64(kp), ptr = get_be64(pp);

		if (i > 0 && key <= get_be64(kp - sizeof(xfs_bmdr_key_t))) {
			report(l, FS_C_BMBT_ORDER, NULLFSBLOCK, "br_startoff", "keys in ascending order",
			       FS_U(key), "%s fork: btree root keys out of order at %s; subtree "
			       "skipped", FS_U(i));
			l->rejected++;
			forget_below(l, level - 1);
			continue;
		}
		if (!fsb_usable(g, ptr)) {
			report(l, FS_C_BMBT_PTR, NULLFSBLOCK, "ptr", "a block of the filesystem past its "
			       "AG headers", FS_X(ptr), "%s fork: btree root pointer %s is outside "
			       "the filesystem", FS_X(ptr));
			l->rejected++;
			forget_below(l, level - 1);
			continue;
		}
		err = walk(l, level - 1, ptr, key);
	}
	if (err)
		return err;
	for (uint32_t i = 0; i < level; i++) {
		struct lvstate *L = &l->lv[i];
		if (L->known && L->prev != NULLFSBLOCK && L->prev_right != NULLFSBLOCK)
			report(l, FS_C_BMBT_SIBLING, L->prev, "bb_rightsib", "NULL", FS_U(L->prev_right),
			       "%s fork: bmbt block %s: last block of its level has a right sibling",
			       FS_U(L->prev));
	}
	return 0;
}

size_t fs_bmap_root_children(const struct fs_geom *g, const void *dinode,
			     const struct fs_inode *ip, int whichfork, fs_fsblock_t *out, size_t max)
{
	uint8_t fmt = whichfork == XFS_DATA_FORK ? ip->format : ip->aformat;
	const unsigned char *root;
	uint32_t fsize, maxr;
	uint16_t numrecs;
	size_t n = 0;

	if (fmt != XFS_DINODE_FMT_BTREE || (whichfork == XFS_ATTR_FORK && !ip->forkoff))
		return 0;
	fsize = fs_inode_fork_size(g, ip, whichfork);
	if (fsize < sizeof(struct xfs_bmdr_block) + sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t))
		return 0;
	root = fs_inode_fork_ptr(dinode, ip, whichfork);
	numrecs = get_be16(root + 2);
	maxr = (fsize - (uint32_t)sizeof(struct xfs_bmdr_block)) /
	       (uint32_t)(sizeof(xfs_bmdr_key_t) + sizeof(xfs_bmdr_ptr_t));
	if (get_be16(root) == 0 || numrecs > maxr)
		return 0;
	for (uint32_t i = 0; i < numrecs && n < max; i++) {
		uint64_t ptr = get_be64(root + sizeof(struct xfs_bmdr_block) +
					(size_t)maxr * sizeof(xfs_bmdr_key_t) +
					(size_t)i * sizeof(xfs_bmdr_ptr_t));

		if (fsb_usable(g, ptr))
			out[n++] = ptr;
	}
	return n;
}

int fs_bmap_load(const struct fs_bmap_ctx *c, const void *dinode, const struct fs_inode *ip,
		 int whichfork, struct fs_bmap *out)
{
	struct loader l;
	uint8_t fmt = whichfork == XFS_DATA_FORK ? ip->format : ip->aformat;
	uint64_t claimed = whichfork == XFS_DATA_FORK ? ip->nextents : ip->anextents;
	uint32_t fsize;
	const unsigned char *fork;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (whichfork != XFS_DATA_FORK && whichfork != XFS_ATTR_FORK)
		return -EINVAL;
	if (whichfork == XFS_ATTR_FORK && !ip->forkoff)
		return 0;
	if (fmt != XFS_DINODE_FMT_EXTENTS && fmt != XFS_DINODE_FMT_BTREE)
		return 0;	/* local, device, or a format the inode verifier reports */
	/* an empty list (most small files' attr forks, empty files): nothing to load */
	if (fmt == XFS_DINODE_FMT_EXTENTS && !claimed)
		return 0;
	l = (struct loader){
		.c = c, .g = c->g, .ip = ip, .whichfork = whichfork, .out = out,
		.fork = whichfork == XFS_DATA_FORK ? "data" : "attr",
	};
	fsize = fs_inode_fork_size(c->g, ip, whichfork);
	fork = fs_inode_fork_ptr(dinode, ip, whichfork);
	l.rt = whichfork == XFS_DATA_FORK && (ip->flags & XFS_DIFLAG_REALTIME);
	l.unwritten_ok = whichfork == XFS_DATA_FORK && S_ISREG(ip->mode);

	if (fmt == XFS_DINODE_FMT_EXTENTS) {
		uint64_t maxext = fsize / sizeof(struct xfs_bmbt_rec), n = claimed;

		if (n > maxext) {
			report(&l, FS_C_BMAP_COUNT, NULLFSBLOCK, "nextents", FS_U(maxext), FS_U(n),
			       "%s fork: extent count %s is more than the fork holds", FS_U(n));
			n = maxext;
		}
		for (uint64_t i = 0; i < n && !err; i++)
			err = take_rec(&l, fork + i * sizeof(struct xfs_bmbt_rec), NULLFSBLOCK);
	} else {
		err = load_btree(&l, fork, fsize);
		if (!err && !l.rejected && l.nrecs != claimed)
			report(&l, FS_C_BMAP_COUNT, NULLFSBLOCK, "nextents", FS_U(l.nrecs), FS_U(claimed),
			       "%s fork: the inode claims %s extents, the btree holds the number "
			       "expected", FS_U(claimed));
	}
	if (l.rejected)
		out->bad = true;
	if (l.lv)
		for (uint32_t i = 0; i < l.nlevels; i++)
			free(l.lv[i].buf);
	free(l.lv);
	free(l.seen);
	if (err) {
		fs_bmap_free(out);
		return err < 0 ? err : -EIO;
	}
	return 0;
}

void fs_bmap_free(struct fs_bmap *m)
{
	free(m->ext);
	free(m->bmbt);
	m->ext = NULL;
	m->bmbt = NULL;
	m->n = m->nbmbt = 0;
}

ssize_t fs_bmap_find(const struct fs_bmap *m, uint64_t off)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fs_bmap_ext *e = &m->ext[mid];

		if (off < e->startoff)
			hi = mid;
		else if (off - e->startoff >= e->blockcount)
			lo = mid + 1;
		else
			return (ssize_t)mid;
	}
	return -1;
}

bool fs_bmap_fsb(const struct fs_geom *g, const struct fs_bmap *m, uint64_t off,
		 fs_fsblock_t *fsb)
{
	ssize_t i = fs_bmap_find(m, off);

	if (i < 0)
		return false;
	*fsb = m->ext[i].startblock + (off - m->ext[i].startoff);
	return fs_fsb_valid(g, *fsb);
}

uint64_t fs_bmap_blocks(const struct fs_bmap *m)
{
	uint64_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->ext[i].blockcount;
	return n;
}
