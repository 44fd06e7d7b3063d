// SPDX-License-Identifier: GPL-2.0
/*
 * The walk of a block, leaf or node directory: its blocks read through the
 * fork's mapping and verified, the data blocks' entries and free regions
 * checked, the leaf hashes matched with the entries, the DA tree and the
 * free index blocks followed and compared with the data blocks they
 * describe, names checked for duplicates.  Live entries go to the
 * caller's callback (the check's directory graph).
 */
#include "libfs/format/dir.h"
#include "libfs/format/dir_block.h"
#include "libfs/util/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/endian.h"

static uint64_t leaf_fsb(const struct fs_geom *g) { return XFS_DIR2_LEAF_OFFSET >> g->blocklog; }
static uint64_t free_fsb(const struct fs_geom *g) { return XFS_DIR2_FREE_OFFSET >> g->blocklog; }

static bool mapped(const struct fs_bmap *m, uint64_t off)
{
	for (size_t i = 0; i < m->n; i++)
		if (off >= m->ext[i].startoff && off - m->ext[i].startoff < m->ext[i].blockcount)
			return true;
	return false;
}

enum fs_dir_format fs_dir_block_format(const struct fs_geom *g, const struct fs_bmap *m)
{
	uint64_t eof;

	if (!m->n)
		return FS_DIR_BAD;
	eof = m->ext[m->n - 1].startoff + m->ext[m->n - 1].blockcount;
	if (eof == g->dirblkfsbs)
		return FS_DIR_BLOCK;
	if (eof == leaf_fsb(g) + g->dirblkfsbs)
		return FS_DIR_LEAF;
	return FS_DIR_NODE;
}

uint64_t fs_dir_mapped_size(const struct fs_geom *g, const struct fs_bmap *m)
{
	enum fs_dir_format fmt = fs_dir_block_format(g, m);
	uint64_t end = 0;

	if (fmt == FS_DIR_BAD || m->ext[0].startoff != 0)
		return 0;
	if (fmt == FS_DIR_BLOCK)
		return g->dirblksize;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t s = m->ext[i].startoff, e = s + m->ext[i].blockcount;

		if (s >= leaf_fsb(g))
			break;	/* sorted by offset: the leaf and free blocks follow */
		end = e < leaf_fsb(g) ? e : leaf_fsb(g);
	}
	/* whole directory blocks */
	end = (end + g->dirblkfsbs - 1) / g->dirblkfsbs * g->dirblkfsbs;
	return end << g->blocklog;
}

/* (dataptr address, hash) of an entry, from the data side or the leaf side. */
struct hashaddr {
	uint32_t addr, hash;
};

struct harr {
	struct hashaddr *v;
	size_t n, cap;
};

static int harr_add(struct harr *a, uint32_t addr, uint32_t hash)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct hashaddr *nv = realloc(a->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = (struct hashaddr){ addr, hash };
	return 0;
}

static int cmp_ha(const void *x, const void *y)
{
	const struct hashaddr *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->hash < b->hash ? -1 : a->hash > b->hash;
}

/* By address, then hash: two stable passes (hash, then address). */
static void sort_ha(struct harr *a)
{
	bool sorted = true;

	for (size_t i = 1; i < a->n && sorted; i++)
		if (cmp_ha(&a->v[i - 1], &a->v[i]) > 0)
			sorted = false;
	if (sorted)
		return;
	if (fs_sort_u32(a->v, a->n, sizeof(*a->v), offsetof(struct hashaddr, hash)) ||
	    fs_sort_u32(a->v, a->n, sizeof(*a->v), offsetof(struct hashaddr, addr)))
		qsort(a->v, a->n, sizeof(*a->v), cmp_ha);
}

/* Longest free region of each data block seen, in db order. */
struct best {
	uint32_t db;
	uint16_t longest;
	bool indexed;              /* a free index block covers it (node form) */
};

/* Every live name of the directory, for the duplicate rule: hash + bytes in an arena. */
struct name_ref {
	uint32_t hash;
	uint32_t off;              /* in the arena */
	uint8_t len;
	fs_daddr_t daddr;
};

struct walk {
	struct fs_dir_ctx *c;
	const struct fs_geom *g;
	const struct fs_bmap *m;
	enum fs_dir_format fmt;
	unsigned char *buf;
	struct harr data, leaf;
	struct best *bests;
	size_t nbests, capbests;
	uint64_t last_data_db;     /* highest data block seen + 1 */
	int n;                     /* findings */
	unsigned unusable;         /* blocks unreadable or of the wrong type */
	bool gave_up;
	/* node walk */
	uint64_t *visited;
	size_t nvisited, capvisited;
	uint64_t prev_at_level[XFS_DA_NODE_MAXDEPTH + 1];
	uint32_t prev_forw[XFS_DA_NODE_MAXDEPTH + 1];
	fs_daddr_t prev_daddr[XFS_DA_NODE_MAXDEPTH + 1];
	bool have_prev[XFS_DA_NODE_MAXDEPTH + 1];
	uint32_t last_leaf_hash;
	bool have_leaf_hash;
	/* names */
	struct name_ref *names;
	size_t nnames, capnames;
	unsigned char *arena;
	size_t narena, caparena;
};

static int add_name(struct walk *w, const struct fs_dirent *d, uint32_t hash)
{
	if (w->nnames == w->capnames) {
		size_t cap = w->capnames ? w->capnames * 2 : 256;
		struct name_ref *nv = realloc(w->names, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		w->names = nv;
		w->capnames = cap;
	}
	if (w->narena + d->namelen > w->caparena) {
		size_t cap = w->caparena ? w->caparena * 2 : 8192;
		unsigned char *nv;

		while (cap < w->narena + d->namelen)
			cap *= 2;
		nv = realloc(w->arena, cap);
		if (!nv)
			return -ENOMEM;
		w->arena = nv;
		w->caparena = cap;
	}
	/* arena offsets are kept in 32 bits: a directory that large is not recorded further */
	if (w->narena > UINT32_MAX - 256)
		return 0;
	memcpy(w->arena + w->narena, d->name, d->namelen);
	w->names[w->nnames++] = (struct name_ref){ hash, (uint32_t)w->narena, d->namelen, d->daddr };
	w->narena += d->namelen;
	return 0;
}

static int cmp_name_hash(const void *x, const void *y)
{
	const struct name_ref *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Two live entries with one name (case folded on ascii-ci filesystems). */
static void dup_names(struct walk *w)
{
	size_t i = 0;

	if (w->nnames < 2)
		return;
	/* stable by hash: equal hashes stay in arena order, as (hash, off) */
	if (fs_sort_u32(w->names, w->nnames, sizeof(*w->names), offsetof(struct name_ref, hash)))
		qsort(w->names, w->nnames, sizeof(*w->names), cmp_name_hash);
	while (i < w->nnames) {
		size_t j = i + 1;

		while (j < w->nnames && w->names[j].hash == w->names[i].hash)
			j++;
		for (size_t a = i; a < j; a++)
			for (size_t b = a + 1; b < j; b++) {
				const struct name_ref *x = &w->names[a], *y = &w->names[b];
				char name[64];

				if (x->len != y->len ||
				    !fs_dir_name_eq(w->g, w->arena + x->off, w->arena + y->off, x->len))
					continue;
				snprintf(name, sizeof(name), "%.*s", x->len > 60 ? 60 : x->len,
					 (const char *)(w->arena + y->off));
				REPORT(w->c, y->daddr, FS_C_DIR_DUP_NAME, "name", "one entry per name", name,
				       "directory holds the name \"%s\" more than once", name);
				w->n++;
			}
		i = j;
	}
}

static int read_block(struct walk *w, uint64_t dablk, fs_daddr_t *daddr)
{
	int err = w->c->read(w->c->priv, dablk, w->buf, daddr);

	if (err) {
		w->unusable++;
		REPORT(w->c, 0, FS_C_DIR_UNREADABLE, NULL, NULL, NULL,
		       "directory block at file block %llu could not be read (%s)",
		       (unsigned long long)dablk, strerror(-err));
		w->n++;
		return err;
	}
	w->c->blocks++;
	return 0;
}

static int verify_as(struct walk *w, enum fs_mtype t, fs_daddr_t daddr)
{
	struct fs_vctx vc = { .g = w->g, .fl = w->c->fl, .agno = w->c->agno, .daddr = daddr,
			      .have_log_head = w->c->have_log_head, .head_lsn = w->c->head_lsn,
			      .ino = w->c->ino };
	size_t before = w->c->fl->n + w->c->fl->dropped;
	const struct fs_verifier *v = fs_verifier_get(t);
	const unsigned char *p = w->buf;
	uint32_t magic = v->magic_size == 2 ? get_be16(p + v->magic_off) : get_be32(p + v->magic_off);
	int r;

	r = fs_verify(t, &vc, w->buf, w->g->dirblksize);
	(void)before;
	w->n += r;
	if (magic != v->magic) {
		w->unusable++;
		return -1;	/* a wrong magic: nothing else can be read */
	}
	return 0;
}

/*
 * A data (or block-form) block whose magic is wrong but whose v3 header
 * still names this directory (owner), its own address (blkno) and this
 * filesystem (uuid) is this directory's block with one damaged word: its
 * entries are still read, each judged by the entry rules, as xfs_repair
 * salvages a directory entry by entry, so a damaged magic (reported) does
 * not lose the block's names.  A leaf or node block's header has other
 * offsets and does not pass for one.
 */
static bool salvageable(const struct walk *w, fs_daddr_t daddr)
{
	const struct xfs_dir3_blk_hdr *h = (const void *)w->buf;

	return w->c->ino && w->g->dirblksize >= DATA_HDR && be64(h->owner) == w->c->ino &&
	       be64(h->blkno) == (uint64_t)daddr &&
	       !memcmp(h->uuid, w->g->meta_uuid, sizeof(h->uuid));
}

/*
 * A mapping gone wrong can name thousands of blocks that are not directory
 * blocks: after a few, say so once and read no more of this directory.
 */
#define DIR_UNUSABLE_MAX 16

static bool give_up(struct walk *w)
{
	if (w->unusable < DIR_UNUSABLE_MAX)
		return false;
	if (!w->gave_up) {
		REPORT(w->c, 0, FS_C_DIR_FORMAT, "u3.bmx", "directory blocks",
		       FS_U(w->unusable),
		       "directory maps at least %u blocks that are not readable directory blocks; "
		       "the rest of it is not read", w->unusable);
		w->n++;
		w->gave_up = true;
	}
	return true;
}

static int add_best(struct walk *w, uint32_t db, uint16_t longest)
{
	if (w->nbests == w->capbests) {
		size_t cap = w->capbests ? w->capbests * 2 : 64;
		struct best *nv = realloc(w->bests, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		w->bests = nv;
		w->capbests = cap;
	}
	w->bests[w->nbests++] = (struct best){ db, longest, false };
	return 0;
}

/* The longest free region of data block db, or NULLDATAOFF for a hole / unread block. */
static int find_best(const struct walk *w, uint32_t db)
{
	size_t lo = 0, hi = w->nbests;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->bests[mid].db == db)
			return w->bests[mid].longest;
		if (w->bests[mid].db < db)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * One data block (or the data part of a block-form block): entries,
 * unused regions, bestfree table.  end is where the data part stops.
 */
static int scan_data(struct walk *w, uint32_t db, fs_daddr_t daddr, uint32_t end)
{
	const struct fs_geom *g = w->g;
	struct fs_dir_ctx *c = w->c;
	const unsigned char *b = w->buf;
	const struct xfs_dir3_data_hdr *h = (const void *)b;
	uint32_t off = DATA_HDR, nent = 0, bfoff[3], bflen[3];
	bool lastfree = false, bfseen[3] = { false, false, false };
	uint16_t longest = 0;
	int err;

	for (int i = 0; i < 3; i++) {
		bfoff[i] = be16(h->best_free[i].offset);
		bflen[i] = be16(h->best_free[i].length);
	}
	/* table shape: descending lengths, empty slots last with offset 0 */
	for (int i = 0; i < 3; i++) {
		bool bad = (!bflen[i] && bfoff[i]) || (i && bflen[i] > bflen[i - 1]) ||
			   (bflen[i] && (bfoff[i] < DATA_HDR || bfoff[i] + bflen[i] > end));
		if (bad) {
			char field[32];

			snprintf(field, sizeof(field), "bestfree[%d]", i);
			REPORT(c, daddr, FS_C_DIR_BESTFREE, field, "descending, inside the block",
			       FS_U(bflen[i]), "directory data block bestfree table is malformed");
			w->n++;
			break;
		}
	}
	while (off < end) {
		const unsigned char *e = b + off;

		if (end - off >= 4 && get_be16(e) == XFS_DIR2_DATA_FREE_TAG) {
			uint32_t len = get_be16(e + 2);
			int slot = -1;

			if (len < 8 || (len & 7) || off + len > end) {
				REPORT(c, daddr, FS_C_DIR_UNUSED, "length", "a multiple of 8 inside the block",
				       FS_U(len), "unused region at offset %u has an impossible length", off);
				w->n++;
				break;
			}
			if (get_be16(e + len - 2) != off) {
				REPORT(c, daddr, FS_C_DIR_TAG, "freetag", FS_U(off), FS_U(get_be16(e + len - 2)),
				       "unused region at offset %u has a wrong tag", off);
				w->n++;
			}
			if (lastfree) {
				REPORT(c, daddr, FS_C_DIR_UNUSED, "freetag", "an entry between free regions",
				       "two adjacent free regions",
				       "unused region at offset %u follows another one", off);
				w->n++;
			}
			for (int i = 0; i < 3; i++)
				if (bflen[i] && bfoff[i] == off)
					slot = i;
			if (slot >= 0) {
				if (bflen[slot] != len) {
					REPORT(c, daddr, FS_C_DIR_BESTFREE, "bestfree.length", FS_U(len),
					       FS_U(bflen[slot]),
					       "bestfree entry for offset %u has the wrong length", off);
					w->n++;
				}
				bfseen[slot] = true;
			} else if (len > bflen[2]) {
				REPORT(c, daddr, FS_C_DIR_BESTFREE, "bestfree", "a slot for this region",
				       FS_U(len), "free region of %u bytes at offset %u is missing "
				       "from the bestfree table", len, off);
				w->n++;
			}
			if (len > longest)
				longest = (uint16_t)len;
			lastfree = true;
			off += len;
			continue;
		}
		/* an entry */
		{
			uint32_t namelen, elen, hash, addr;
			struct fs_dirent d;

			if (end - off < 12) {
				REPORT(c, daddr, FS_C_DIR_NAMELEN, "namelen", "an entry inside the block",
				       NULL, "directory entry at offset %u runs past the data", off);
				w->n++;
				break;
			}
			namelen = e[8];
			elen = fs_dir_entsize(g, namelen);
			if (namelen == 0 || off + elen > end) {
				REPORT(c, daddr, FS_C_DIR_NAMELEN, "namelen", "1.. inside the block",
				       FS_U(namelen), "directory entry at offset %u has an impossible "
				       "name length", off);
				w->n++;
				break;
			}
			if (get_be16(e + elen - 2) != off) {
				REPORT(c, daddr, FS_C_DIR_TAG, "tag", FS_U(off), FS_U(get_be16(e + elen - 2)),
				       "directory entry at offset %u has a wrong tag", off);
				w->n++;
			}
			memset(&d, 0, sizeof(d));
			d.ino = get_be64(e);
			d.name = e + 9;
			d.namelen = (uint8_t)namelen;
			d.ftype = g->ftype ? e[9 + namelen] : 0;
			d.daddr = daddr;
			hash = fs_dir_hashname(g, d.name, namelen);
			addr = (uint32_t)((((uint64_t)db << (g->blocklog + g->dirblklog)) + off) >>
					  XFS_DIR2_DATA_ALIGN_LOG);
			err = harr_add(&w->data, addr, hash);
			if (err)
				return err;
			lastfree = false;
			off += elen;
			if (!fs_dir_name_ok(d.name, namelen)) {
				REPORT(c, daddr, FS_C_DIR_NAME, "name", "no '/' or NUL", NULL,
				       "directory entry at offset %u has an invalid name",
				       off - elen);
				w->n++;
				continue;
			}
			if (db == 0 && nent < 2) {
				bool want_dot = nent == 0;
				bool ok = want_dot ? is_dot(d.name, namelen) : is_dotdot(d.name, namelen);

				nent++;
				/* "." and ".." name directories: xfs_repair checks their file type too */
				if (ok && g->ftype && d.ftype != XFS_DIR3_FT_DIR) {
					REPORT(c, daddr, FS_C_DIR_FTYPE, "ftype", FS_U(XFS_DIR3_FT_DIR),
					       FS_U(d.ftype), "directory's %s entry file type is not "
					       "directory", want_dot ? "\".\"" : "\"..\"");
					w->n++;
				}
				if (!ok) {
					REPORT(c, daddr, want_dot ? FS_C_DIR_DOT : FS_C_DIR_DOTDOT, "name",
					       want_dot ? "." : "..", NULL,
					       "directory's %s entry is missing from the first block",
					       want_dot ? "first (\".\")" : "second (\"..\")");
					w->n++;
				} else if (want_dot) {
					if (d.ino != c->ino) {
						REPORT(c, daddr, FS_C_DIR_DOT, "inumber", FS_U(c->ino),
						       FS_U(d.ino), "\".\" names another inode");
						w->n++;
					}
					continue;
				} else {
					if (!fs_ino_valid(g, d.ino)) {
						REPORT(c, daddr, FS_C_DIR_PARENT, "inumber", "a valid inode number",
						       FS_U(d.ino), "\"..\" names an inode that cannot exist");
						w->n++;
					} else {
						c->parent = d.ino;
					}
					continue;
				}
			}
			if (is_dot(d.name, namelen) || is_dotdot(d.name, namelen)) {
				REPORT(c, daddr, FS_C_DIR_DOT, "name", "only at the start of the first block",
				       (const char *)(is_dot(d.name, namelen) ? "." : ".."),
				       "extra \".\" or \"..\" entry at offset %u", off - elen);
				w->n++;
				continue;
			}
			if (d.ftype >= XFS_DIR3_FT_MAX) {
				REPORT(c, daddr, FS_C_DIR_FTYPE, "ftype", "< 9", FS_U(d.ftype),
				       "directory entry at offset %u file type is unknown", off - elen);
				w->n++;
			}
			if (!fs_ino_valid(g, d.ino)) {
				REPORT(c, daddr, FS_C_DIR_INO, "inumber", "a valid inode number", FS_U(d.ino),
				       "directory entry at offset %u names inode %llu, which cannot exist",
				       off - elen, (unsigned long long)d.ino);
				w->n++;
				continue;
			}
			err = add_name(w, &d, hash);
			if (err)
				return err;
			c->entries++;
			if (c->entry) {
				err = c->entry(c->priv, &d);
				if (err < 0)
					return err;
			}
		}
	}
	for (int i = 0; i < 3; i++)
		if (bflen[i] && !bfseen[i]) {
			char field[32];

			snprintf(field, sizeof(field), "bestfree[%d]", i);
			REPORT(c, daddr, FS_C_DIR_BESTFREE, field, "a free region at its offset",
			       FS_U(bfoff[i]), "bestfree entry names no free region");
			w->n++;
		}
	if (db == 0 && nent < 2) {
		REPORT(c, daddr, nent ? FS_C_DIR_DOTDOT : FS_C_DIR_DOT, "name", nent ? ".." : ".", NULL,
		       "directory's first block lacks \".\" or \"..\"");
		w->n++;
	}
	return add_best(w, db, longest);
}

/* Leaf entries [0, count) at ents: hash order, stale count; live ones to w->leaf. */
static int scan_leaf_ents(struct walk *w, fs_daddr_t daddr, const unsigned char *ents,
			  uint32_t count, uint32_t stale_hdr)
{
	uint32_t stale = 0;
	int err;

	for (uint32_t i = 0; i < count; i++) {
		uint32_t hash = get_be32(ents + i * LEAF_ENT), addr = get_be32(ents + i * LEAF_ENT + 4);

		if (w->have_leaf_hash && hash < w->last_leaf_hash) {
			char field[32];

			snprintf(field, sizeof(field), "ents[%u].hashval", i);
			REPORT(w->c, daddr, FS_C_DIR_HASH_ORDER, field, ">= previous hash", FS_X(hash),
			       "directory leaf hash %#x is below the previous %#x", hash,
			       w->last_leaf_hash);
			w->n++;
		}
		w->last_leaf_hash = hash;
		w->have_leaf_hash = true;
		if (addr == XFS_DIR2_NULL_DATAPTR) {
			stale++;
			continue;
		}
		err = harr_add(&w->leaf, addr, hash);
		if (err)
			return err;
	}
	if (stale != stale_hdr) {
		REPORT(w->c, daddr, FS_C_DIR_STALE, "stale", FS_U(stale), FS_U(stale_hdr),
		       "directory leaf stale count is wrong");
		w->n++;
	}
	return 0;
}

static int data_blocks(struct walk *w)
{
	const struct fs_geom *g = w->g;
	uint64_t lblk = leaf_fsb(g), last = UINT64_MAX;
	int err;

	for (size_t i = 0; i < w->m->n; i++) {
		const struct fs_bmap_ext *x = &w->m->ext[i];

		for (uint64_t o = x->startoff; o < x->startoff + x->blockcount && o < lblk; o++) {
			uint64_t dablk = o & ~(uint64_t)(g->dirblkfsbs - 1);
			uint32_t db = (uint32_t)(dablk >> g->dirblklog);
			fs_daddr_t daddr;

			if (dablk == last)
				continue;
			last = dablk;
			if (give_up(w))
				return 0;
			if (read_block(w, dablk, &daddr))
				continue;
			if (w->fmt == FS_DIR_BLOCK) {
				const unsigned char *b = w->buf;
				uint32_t count, stale, lstart;

				if (verify_as(w, FS_MT_DIR_BLOCK, daddr) && !salvageable(w, daddr))
					continue;
				count = get_be32(b + g->dirblksize - BLOCK_TAIL);
				stale = get_be32(b + g->dirblksize - BLOCK_TAIL + 4);
				if ((uint64_t)count * LEAF_ENT + BLOCK_TAIL + DATA_HDR > g->dirblksize ||
				    stale > count) {
					REPORT(w->c, daddr, FS_C_DIR_COUNT, "tail.count",
					       "leaf entries inside the block", FS_U(count),
					       "block directory leaf count %u (stale %u) does not fit",
					       count, stale);
					w->n++;
					err = scan_data(w, db, daddr, g->dirblksize - BLOCK_TAIL);
				} else {
					lstart = g->dirblksize - BLOCK_TAIL - count * LEAF_ENT;
					err = scan_data(w, db, daddr, lstart);
					if (!err)
						err = scan_leaf_ents(w, daddr, b + lstart, count, stale);
				}
			} else {
				if (verify_as(w, FS_MT_DIR_DATA, daddr) && !salvageable(w, daddr))
					continue;
				err = scan_data(w, db, daddr, g->dirblksize);
			}
			if (err)
				return err;
			if (db + 1ull > w->last_data_db)
				w->last_data_db = db + 1ull;
		}
	}
	return 0;
}

static void mark_indexed(struct walk *w, uint32_t db)
{
	size_t lo = 0, hi = w->nbests;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->bests[mid].db == db) {
			w->bests[mid].indexed = true;
			return;
		}
		if (w->bests[mid].db < db)
			lo = mid + 1;
		else
			hi = mid;
	}
}

static void check_bests(struct walk *w, fs_daddr_t daddr, const char *what, uint32_t db0,
			const unsigned char *bests, uint32_t n, uint32_t *nused)
{
	uint32_t used = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = get_be16(bests + 2 * i);
		int want = find_best(w, db0 + i);

		mark_indexed(w, db0 + i);
		if (v != NULLDATAOFF)
			used++;
		if (want < 0)
			want = NULLDATAOFF;
		if ((uint32_t)want != v) {
			char field[32];

			snprintf(field, sizeof(field), "bests[%u]", i);
			REPORT(w->c, daddr, FS_C_DIR_BESTS, field, FS_U(want), FS_U(v),
			       "%s best free length for data block %u is wrong", what, db0 + i);
			w->n++;
		}
	}
	if (nused)
		*nused = used;
}

static int leaf1_block(struct walk *w)
{
	const struct fs_geom *g = w->g;
	const unsigned char *b = w->buf;
	const struct xfs_dir3_leaf_hdr *h = (const void *)b;
	fs_daddr_t daddr;
	uint32_t count, bestcount;

	if (read_block(w, leaf_fsb(g), &daddr))
		return 0;
	if (verify_as(w, FS_MT_DIR_LEAF1, daddr))
		return 0;
	/* the only leaf block of a leaf-format directory has no siblings */
	if (h->info.hdr.forw || h->info.hdr.back) {
		bool f = h->info.hdr.forw != 0;

		REPORT(w->c, daddr, FS_C_DA_SIBLING, f ? "info.forw" : "info.back", "0",
		       FS_U(f ? be32(h->info.hdr.forw) : be32(h->info.hdr.back)),
		       "the single leaf block of a leaf-format directory has a sibling pointer");
		w->n++;
	}
	count = be16(h->count);
	bestcount = get_be32(b + g->dirblksize - LEAF_TAIL);
	if ((uint64_t)bestcount * 2 + LEAF_TAIL + LEAF_HDR + (uint64_t)count * LEAF_ENT >
	    g->dirblksize)
		return 0;	/* dir.count already said so */
	if (bestcount != w->last_data_db) {
		REPORT(w->c, daddr, FS_C_DIR_BESTS, "tail.bestcount", FS_U(w->last_data_db),
		       FS_U(bestcount), "leaf block best count is not the number of data blocks");
		w->n++;
	}
	check_bests(w, daddr, "leaf block", 0,
		    b + g->dirblksize - LEAF_TAIL - (size_t)bestcount * 2, bestcount, NULL);
	return scan_leaf_ents(w, daddr, b + LEAF_HDR, count, be16(h->stale));
}

static bool visit(struct walk *w, uint64_t dablk, int *err)
{
	size_t lo = 0, hi = w->nvisited;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->visited[mid] == dablk)
			return false;
		if (w->visited[mid] < dablk)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (w->nvisited == w->capvisited) {
		size_t cap = w->capvisited ? w->capvisited * 2 : 64;
		uint64_t *nv = realloc(w->visited, cap * sizeof(*nv));

		if (!nv) {
			*err = -ENOMEM;
			return false;
		}
		w->visited = nv;
		w->capvisited = cap;
	}
	memmove(w->visited + lo + 1, w->visited + lo, (w->nvisited - lo) * sizeof(*w->visited));
	w->visited[lo] = dablk;
	w->nvisited++;
	return true;
}

/* Sibling links of one level: this block's back is the previous block, whose forw is this. */
static void siblings(struct walk *w, fs_daddr_t daddr, unsigned level, uint64_t dablk,
		     uint32_t back, uint32_t forw)
{
	uint64_t prev = w->have_prev[level] ? w->prev_at_level[level] : 0;

	if (back != prev) {
		REPORT(w->c, daddr, FS_C_DA_SIBLING, "info.back", FS_U(prev), FS_U(back),
		       "directory btree block's back pointer does not name its left neighbour");
		w->n++;
	}
	if (w->have_prev[level] && w->prev_forw[level] != dablk) {
		REPORT(w->c, w->prev_daddr[level], FS_C_DA_SIBLING, "info.forw", FS_U(dablk),
		       FS_U(w->prev_forw[level]),
		       "directory btree block's forward pointer does not name its right neighbour");
		w->n++;
	}
	w->prev_at_level[level] = dablk;
	w->prev_forw[level] = forw;
	w->prev_daddr[level] = daddr;
	w->have_prev[level] = true;
}

/* The last block of each level has no right neighbour. */
static void siblings_end(struct walk *w)
{
	for (unsigned l = 0; l <= XFS_DA_NODE_MAXDEPTH; l++)
		if (w->have_prev[l] && w->prev_forw[l]) {
			REPORT(w->c, w->prev_daddr[l], FS_C_DA_SIBLING, "info.forw", "0",
			       FS_U(w->prev_forw[l]),
			       "last directory btree block of a level has a forward pointer");
			w->n++;
		}
}

/*
 * One block of the leaf-space btree: a DA node or a LEAFN.  level_want is
 * the level the parent implies (-1 at the root).  *maxhash gets the
 * subtree's highest hash.  Forward sibling pointers are checked from the
 * saved per-level forw values.
 */
static int tree_block(struct walk *w, uint64_t dablk, int level_want, uint32_t *maxhash,
		      bool *known)
{
	const struct fs_geom *g = w->g;
	uint64_t lo = leaf_fsb(g), hi = free_fsb(g);
	fs_daddr_t daddr;
	uint16_t magic;
	int err = 0;

	*maxhash = 0;
	*known = false;
	if (!visit(w, dablk, &err)) {
		if (err)
			return err;
		REPORT(w->c, 0, FS_C_DA_LOOP, "before", "each block once", FS_U(dablk),
		       "directory btree block at file block %llu is reached twice",
		       (unsigned long long)dablk);
		w->n++;
		return 0;
	}
	if (give_up(w) || read_block(w, dablk, &daddr))
		return 0;
	magic = get_be16(w->buf + offsetof(struct xfs_da3_blkinfo, hdr.magic));
	if (magic == XFS_DIR3_LEAFN_MAGIC) {
		const struct xfs_dir3_leaf_hdr *h = (const void *)w->buf;
		uint32_t count;

		if (level_want > 0) {
			REPORT(w->c, daddr, FS_C_DA_LEVEL, "level", FS_U(level_want), "0 (leaf)",
			       "directory btree leaf found where a node of level %d belongs", level_want);
			w->n++;
		}
		if (verify_as(w, FS_MT_DIR_LEAFN, daddr))
			return 0;
		count = be16(h->count);
		if ((uint64_t)count * LEAF_ENT + LEAF_HDR > g->dirblksize)
			return 0;
		siblings(w, daddr, 0, dablk, be32(h->info.hdr.back), be32(h->info.hdr.forw));
		if (count) {
			*maxhash = get_be32(w->buf + LEAF_HDR + (size_t)(count - 1) * LEAF_ENT);
			*known = true;
		}
		return scan_leaf_ents(w, daddr, w->buf + LEAF_HDR, count, be16(h->stale));
	}
	{
		struct fs_da_node n;
		struct fs_vctx vc = { .g = g, .fl = w->c->fl, .agno = w->c->agno, .daddr = daddr,
				      .ino = w->c->ino };
		struct xfs_da_node_entry *ents;
		uint32_t count;
		int level;

		if (verify_as(w, FS_MT_DA_NODE, daddr))
			return 0;
		if (fs_da3_node_decode(w->buf, g->dirblksize, &n) || n.count == 0 ||
		    n.level == 0 || n.level > XFS_DA_NODE_MAXDEPTH)
			return 0;
		level = n.level;
		if (level_want >= 0 && level != level_want) {
			REPORT(w->c, daddr, FS_C_DA_LEVEL, "hdr.level", FS_U(level_want), FS_U(level),
			       "directory btree node level is wrong for its place in the tree");
			w->n++;
			return 0;
		}
		siblings(w, daddr, (unsigned)level, dablk, n.back, n.forw);
		w->n += fs_da3_node_check_ptrs(&vc, &n, (uint32_t)dablk, (uint32_t)lo, (uint32_t)hi);
		/* the buffer is reused below: keep the entries */
		count = n.count;
		ents = malloc(count * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		memcpy(ents, n.ents, count * sizeof(*ents));
		for (uint32_t i = 0; i < count && !err; i++) {
			uint32_t child = be32(ents[i].before), key = be32(ents[i].hashval), cmax;
			bool cknown;

			if (child < lo || child >= hi || child == dablk)
				continue;
			err = tree_block(w, child, level - 1, &cmax, &cknown);
			if (!err && cknown && cmax != key) {
				char field[32];

				snprintf(field, sizeof(field), "btree[%u].hashval", i);
				REPORT(w->c, daddr, FS_C_DA_HASH, field, FS_X(cmax), FS_X(key),
				       "directory btree key is not its child's highest hash");
				w->n++;
			}
		}
		if (count) {
			*maxhash = be32(ents[count - 1].hashval);
			*known = true;
		}
		free(ents);
		return err;
	}
}

/* Whether the tree walk reached dablk (visited is sorted). */
static bool was_visited(const struct walk *w, uint64_t dablk)
{
	size_t lo = 0, hi = w->nvisited;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->visited[mid] == dablk)
			return true;
		if (w->visited[mid] < dablk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Every mapped block of the leaf space belongs to the DA btree (xfs_repair reads them all). */
static void orphan_leaf_blocks(struct walk *w)
{
	const struct fs_geom *g = w->g;
	uint64_t lo = leaf_fsb(g), hi = free_fsb(g), last = UINT64_MAX;
	unsigned orphans = 0;
	uint64_t first = 0;

	for (size_t i = 0; i < w->m->n; i++) {
		const struct fs_bmap_ext *x = &w->m->ext[i];
		uint64_t o = x->startoff < lo ? lo : x->startoff;

		for (; o < x->startoff + x->blockcount && o < hi; o++) {
			uint64_t dablk = o & ~(uint64_t)(g->dirblkfsbs - 1);

			if (dablk == last)
				continue;
			last = dablk;
			if (!was_visited(w, dablk) && !orphans++)
				first = dablk;
		}
	}
	if (orphans) {
		REPORT(w->c, 0, FS_C_DIR_LEAF, "u3.bmx", "every leaf-space block in the btree",
		       FS_U(first), "%u leaf-space block(s) of the directory are not reached from "
		       "its btree root (first at file block %llu)", orphans,
		       (unsigned long long)first);
		w->n++;
	}
}

static int free_blocks(struct walk *w)
{
	const struct fs_geom *g = w->g;
	uint64_t fblk = free_fsb(g), last = UINT64_MAX;
	uint32_t maxbests = (g->dirblksize - (uint32_t)FREE_HDR) / 2;

	for (size_t i = 0; i < w->m->n; i++) {
		const struct fs_bmap_ext *x = &w->m->ext[i];
		uint64_t o = x->startoff < fblk ? fblk : x->startoff;

		for (; o < x->startoff + x->blockcount; o++) {
			uint64_t dablk = o & ~(uint64_t)(g->dirblkfsbs - 1);
			const struct xfs_dir3_free_hdr *h = (const void *)w->buf;
			uint64_t want_first = ((dablk - fblk) >> g->dirblklog) * maxbests;
			uint32_t nvalid, nused;
			fs_daddr_t daddr;

			if (dablk == last)
				continue;
			last = dablk;
			if (give_up(w))
				return 0;
			if (read_block(w, dablk, &daddr))
				continue;
			if (verify_as(w, FS_MT_DIR_FREE, daddr))
				continue;
			nvalid = be32(h->nvalid);
			if (be32(h->firstdb) != want_first) {
				REPORT(w->c, daddr, FS_C_DIR_FREE, "firstdb", FS_U(want_first),
				       FS_U(be32(h->firstdb)),
				       "free index block's first data block is wrong");
				w->n++;
				continue;
			}
			if (nvalid > maxbests)
				continue;	/* reported by the verifier */
			check_bests(w, daddr, "free index", (uint32_t)want_first,
				    w->buf + FREE_HDR, nvalid, &nused);
			if (nused != be32(h->nused)) {
				REPORT(w->c, daddr, FS_C_DIR_FREE, "nused", FS_U(nused), FS_U(be32(h->nused)),
				       "free index block's used count is wrong");
				w->n++;
			}
		}
	}
	return 0;
}

/* Every data entry has exactly one leaf entry with its address and hash, and no more. */
static void match_leaf(struct walk *w)
{
	size_t i = 0, j = 0;
	unsigned missing = 0, extra = 0, badhash = 0;

	sort_ha(&w->data);
	sort_ha(&w->leaf);
	while (i < w->data.n || j < w->leaf.n) {
		if (j >= w->leaf.n || (i < w->data.n && w->data.v[i].addr < w->leaf.v[j].addr)) {
			missing++;
			i++;
		} else if (i >= w->data.n || w->leaf.v[j].addr < w->data.v[i].addr) {
			extra++;
			j++;
		} else {
			if (w->data.v[i].hash != w->leaf.v[j].hash)
				badhash++;
			i++;
			j++;
		}
	}
	if (badhash) {
		REPORT(w->c, 0, FS_C_DIR_BAD_HASH, "hashval", "the hash of the entry's name", NULL,
		       "%u directory leaf entries carry a hash that is not their name's", badhash);
		w->n++;
	}
	if (missing || extra) {
		char found[64];

		snprintf(found, sizeof(found), "%u without, %u extra", missing, extra);
		REPORT(w->c, 0, FS_C_DIR_LEAF, "address", "one leaf entry per data entry", found,
		       "directory leaf entries do not match the data entries");
		w->n++;
	}
}

int fs_dir_walk(struct fs_dir_ctx *c, const struct fs_bmap *m, uint64_t size)
{
	const struct fs_geom *g = c->g;
	struct walk w = { .c = c, .g = g, .m = m };
	int err = 0;

	w.fmt = fs_dir_block_format(g, m);
	if (w.fmt == FS_DIR_BAD || m->ext[0].startoff != 0) {
		REPORT(c, 0, FS_C_DIR_FORMAT, "u3.bmx", "a mapped first directory block",
		       m->n ? FS_U(m->ext[0].startoff) : "no mappings",
		       "directory has no first data block");
		return 1;
	}
	w.buf = malloc(g->dirblksize);
	if (!w.buf)
		return -ENOMEM;
	err = data_blocks(&w);
	if (!err && w.fmt == FS_DIR_BLOCK && size != g->dirblksize) {
		REPORT(c, 0, FS_C_DIR_SIZE, "di_size", FS_U(g->dirblksize), FS_U(size),
		       "block directory size is not one directory block");
		w.n++;
	}
	if (!err && w.fmt != FS_DIR_BLOCK &&
	    size != w.last_data_db << (g->blocklog + g->dirblklog)) {
		REPORT(c, 0, FS_C_DIR_SIZE, "di_size", FS_U(w.last_data_db << (g->blocklog + g->dirblklog)),
		       FS_U(size), "directory size is not the end of its last data block");
		w.n++;
	}
	if (!err && w.fmt == FS_DIR_LEAF)
		err = leaf1_block(&w);
	if (!err && w.fmt == FS_DIR_NODE) {
		uint32_t maxh;
		bool known;

		if (!mapped(m, leaf_fsb(g))) {
			REPORT(c, 0, FS_C_DIR_FORMAT, "u3.bmx", "a mapped leaf block",
			       FS_U(leaf_fsb(g)), "node directory has no btree root block");
			w.n++;
		} else {
			err = tree_block(&w, leaf_fsb(g), -1, &maxh, &known);
			siblings_end(&w);
			if (!err && !w.gave_up)
				orphan_leaf_blocks(&w);
		}
		if (!err)
			err = free_blocks(&w);
		for (size_t i = 0; !err && i < w.nbests; i++)
			if (!w.bests[i].indexed) {
				REPORT(c, 0, FS_C_DIR_BESTS, "firstdb", "a free index entry for every data block",
				       FS_U(w.bests[i].db),
				       "data block %u has no entry in the free index", w.bests[i].db);
				w.n++;
				break;
			}
	}
	if (!err) {
		match_leaf(&w);
		dup_names(&w);
	}
	free(w.buf);
	free(w.names);
	free(w.arena);
	free(w.data.v);
	free(w.leaf.v);
	free(w.bests);
	free(w.visited);
	return err ? err : w.n;
}
