// SPDX-License-Identifier: GPL-2.0
/*
 * v5 directories: the short form in the inode, the block, leaf and node
 * forms in directory blocks (data "XDB3"/"XDD3", leaf "XDL3"/"XDN3", free
 * index "XDF3", DA3 nodes from da.c).  Owns the verifier table rows of the
 * directory blocks and the walk that ties a directory's blocks together;
 * live entries go to a callback (the check's directory graph).
 */
#include "libfs/format/dir.h"
#include "libfs/util/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/endian.h"

#define DATA_HDR   sizeof(struct xfs_dir3_data_hdr)
#define LEAF_HDR   sizeof(struct xfs_dir3_leaf_hdr)
#define FREE_HDR   sizeof(struct xfs_dir3_free_hdr)
#define LEAF_ENT   sizeof(struct xfs_dir2_leaf_entry)
#define BLOCK_TAIL sizeof(struct xfs_dir2_block_tail)
#define LEAF_TAIL  sizeof(struct xfs_dir2_leaf_tail)

#define REPORT(c, daddr, code, field, exp, found, ...)                                     \
	fs_report((c)->fl, code, (c)->agno, (daddr) ? (int64_t)(daddr) : FS_NONE, (int64_t)(c)->ino, \
		  field, exp, \
		  found, __VA_ARGS__)

bool fs_dir_name_ok(const unsigned char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] == 0)
			return false;
	return true;
}

uint32_t fs_dir_entsize(const struct fs_geom *g, uint32_t namelen)
{
	/* inumber, namelen byte, name, ftype byte (ftype feature), tag; 8-byte aligned */
	uint32_t len = 8 + 1 + namelen + (g->ftype ? 1 : 0) + 2;

	return (len + XFS_DIR2_DATA_ALIGN - 1) & ~(uint32_t)(XFS_DIR2_DATA_ALIGN - 1);
}

static unsigned char fold(unsigned char c, bool ci)
{
	if (ci && ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7)))
		return c + ('a' - 'A');
	return c;
}

static bool same_name(const unsigned char *a, const unsigned char *b, size_t len, bool ci)
{
	for (size_t i = 0; i < len; i++)
		if (fold(a[i], ci) != fold(b[i], ci))
			return false;
	return true;
}

bool fs_dir_name_eq(const struct fs_geom *g, const unsigned char *a, const unsigned char *b,
		    size_t len)
{
	return same_name(a, b, len, g->asciici);
}

static bool is_dot(const unsigned char *n, uint32_t len) { return len == 1 && n[0] == '.'; }
static bool is_dotdot(const unsigned char *n, uint32_t len) { return len == 2 && n[0] == '.' && n[1] == '.'; }

/* ---- verifier table field rules ---- */

static int blkhdr_fields(const struct fs_vctx *c, uint64_t blkno, uint64_t owner, const char *what)
{
	int64_t ino = c->ino ? (int64_t)c->ino : FS_NONE;
	int n = 0;

	if (c->ino && owner != c->ino) {
		fs_report(c->fl, FS_C_DIR_OWNER, c->agno, c->daddr, ino, "owner", FS_U(c->ino),
			  FS_U(owner), "directory %s block belongs to inode %llu", what,
			  (unsigned long long)owner);
		n++;
	}
	if (blkno != c->daddr) {
		fs_report(c->fl, FS_C_DIR_BLKNO, c->agno, c->daddr, ino, "blkno", FS_U(c->daddr),
			  FS_U(blkno), "directory %s block says it lives at daddr %llu", what,
			  (unsigned long long)blkno);
		n++;
	}
	return n;
}

int fs_dir3_data_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_blk_hdr *h = buf;

	if (len < DATA_HDR)
		return 0;
	return blkhdr_fields(c, be64(h->blkno), be64(h->owner), "data");
}

int fs_dir3_free_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_free_hdr *h = buf;
	uint32_t maxbests = len > FREE_HDR ? (uint32_t)((len - FREE_HDR) / 2) : 0;
	int n;

	if (len < FREE_HDR)
		return 0;
	n = blkhdr_fields(c, be64(h->hdr.blkno), be64(h->hdr.owner), "free index");
	if (be32(h->nvalid) > maxbests || be32(h->nused) > be32(h->nvalid)) {
		char exp[48];

		snprintf(exp, sizeof(exp), "nused <= nvalid <= %u", maxbests);
		fs_report(c->fl, FS_C_DIR_FREE, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
			  "nvalid", exp, FS_U(be32(h->nvalid)),
			  "free index block counts nvalid %u / nused %u are impossible",
			  be32(h->nvalid), be32(h->nused));
		n++;
	}
	return n;
}

int fs_dir3_leaf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct xfs_dir3_leaf_hdr *h = buf;
	uint32_t count, stale, room;
	int n;

	if (len < LEAF_HDR)
		return 0;
	n = blkhdr_fields(c, be64(h->info.blkno), be64(h->info.owner), "leaf");
	count = be16(h->count);
	stale = be16(h->stale);
	room = (uint32_t)((len - LEAF_HDR) / LEAF_ENT);
	if (be16(h->info.hdr.magic) == XFS_DIR3_LEAF1_MAGIC) {
		const struct xfs_dir2_leaf_tail *t = (const void *)((const char *)buf + len - LEAF_TAIL);
		uint64_t bests = (uint64_t)be32(t->bestcount) * 2 + LEAF_TAIL;

		room = bests + LEAF_HDR <= len ? (uint32_t)((len - LEAF_HDR - bests) / LEAF_ENT) : 0;
	}
	if (count > room || stale > count) {
		char exp[48];

		snprintf(exp, sizeof(exp), "stale <= count <= %u", room);
		fs_report(c->fl, FS_C_DIR_COUNT, c->agno, c->daddr, c->ino ? (int64_t)c->ino : FS_NONE,
			  "hdr.count", exp, FS_U(count),
			  "directory leaf counts (count %u, stale %u) do not fit the block",
			  count, stale);
		n++;
	}
	return n;
}

/* ---- short form ---- */

int fs_dir_sf_walk(struct fs_dir_ctx *c, const void *fork, size_t forklen, uint64_t size)
{
	const unsigned char *p = fork, *end, *e;
	const struct fs_geom *g = c->g;
	uint32_t count, i8count, i8seen = 0, inosize, off, nlive = 0;
	const unsigned char *live[256];  /* name length byte of each live entry (count is 8 bits) */
	size_t hdrsize;
	int n = 0;

	if (size > forklen || size < 2 + 4) {
		char exp[48];

		snprintf(exp, sizeof(exp), "6..%zu", forklen);
		REPORT(c, 0, FS_C_DIR_SF, "di_size", exp, FS_U(size),
		       "short form directory size %llu does not fit the inode fork",
		       (unsigned long long)size);
		return 1;
	}
	count = p[0];
	i8count = p[1];
	inosize = i8count ? 8 : 4;
	hdrsize = 2 + inosize;
	if (hdrsize > size) {
		REPORT(c, 0, FS_C_DIR_SF, "i8count", "a header inside di_size", FS_U(i8count),
		       "short form directory header does not fit its size");
		return 1;
	}
	c->parent = inosize == 8 ? get_be64(p + 2) : get_be32(p + 2);
	if (!fs_ino_valid(g, c->parent)) {
		REPORT(c, 0, FS_C_DIR_PARENT, "parent", "a valid inode number", FS_U(c->parent),
		       "short form directory parent %llu cannot exist",
		       (unsigned long long)c->parent);
		n++;
		c->parent = 0;
	}
	i8seen += c->parent > XFS_DIR2_MAX_SHORT_INUM;
	end = p + size;
	e = p + hdrsize;
	/* offsets continue after the block form's header, "." and ".." */
	off = (uint32_t)DATA_HDR + fs_dir_entsize(g, 1) + fs_dir_entsize(g, 2);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t namelen, eoff, elen;
		bool name_bad;
		struct fs_dirent d;
		char field[32];

		snprintf(field, sizeof(field), "list[%u]", i);
		if (e + 3 > end) {
			REPORT(c, 0, FS_C_DIR_SF, "count", "entries inside di_size", FS_U(count),
			       "short form directory entry %u starts past the end", i);
			return n + 1;
		}
		namelen = e[0];
		eoff = get_be16(e + 1);
		elen = 3 + namelen + (g->ftype ? 1 : 0) + inosize;
		if (namelen == 0 || e + elen > end) {
			REPORT(c, 0, FS_C_DIR_NAMELEN, field, "1.. inside di_size", FS_U(namelen),
			       "short form directory entry %u name length is impossible", i);
			return n + 1;
		}
		if (eoff < off) {
			REPORT(c, 0, FS_C_DIR_SF, field, ">= end of the previous entry", FS_U(eoff),
			       "short form directory entry %u offset goes backwards", i);
			n++;
		}
		off = eoff + fs_dir_entsize(g, namelen);
		memset(&d, 0, sizeof(d));
		d.name = e + 3;
		d.namelen = (uint8_t)namelen;
		d.ftype = g->ftype ? e[3 + namelen] : 0;
		d.ino = inosize == 8 ? get_be64(e + 3 + namelen + (g->ftype ? 1 : 0))
				     : get_be32(e + 3 + namelen + (g->ftype ? 1 : 0));
		i8seen += d.ino > XFS_DIR2_MAX_SHORT_INUM;
		e += elen;
		/*
		 * The name's rules are not the kernel's fork verifier's
		 * (xfs_dir2_sf_verify checks the file type and inode number of
		 * every entry, not its name): a bad name does not hide them
		 */
		name_bad = !fs_dir_name_ok(d.name, namelen) || is_dot(d.name, namelen) ||
			   is_dotdot(d.name, namelen);
		if (name_bad) {
			REPORT(c, 0, FS_C_DIR_NAME, field, "no '/' or NUL, not . or ..", NULL,
			       "short form directory entry %u has an invalid name", i);
			n++;
		}
		if (d.ftype >= XFS_DIR3_FT_MAX) {
			REPORT(c, 0, FS_C_DIR_FTYPE, field, "< " "9", FS_U(d.ftype),
			       "directory entry %u file type is unknown", i);
			n++;
		}
		if (!fs_ino_valid(g, d.ino)) {
			REPORT(c, 0, FS_C_DIR_INO, field, "a valid inode number", FS_U(d.ino),
			       "directory entry %u names inode %llu, which cannot exist", i,
			       (unsigned long long)d.ino);
			n++;
			continue;
		}
		if (name_bad)
			continue;
		for (uint32_t k = 0; k < nlive; k++)
			if (live[k][0] == namelen && same_name(live[k] + 3, d.name, namelen, g->asciici)) {
				char name[64];

				snprintf(name, sizeof(name), "%.*s", namelen > 60 ? 60 : (int)namelen,
					 (const char *)d.name);
				REPORT(c, 0, FS_C_DIR_DUP_NAME, field, "one entry per name", name,
				       "short form directory holds the name \"%s\" more than once", name);
				n++;
				break;
			}
		live[nlive++] = d.name - 3;
		c->entries++;
		if (c->entry) {
			int err = c->entry(c->priv, &d);
			if (err < 0)
				return err;
		}
	}
	if (i8seen != i8count) {
		REPORT(c, 0, FS_C_DIR_SF, "i8count", FS_U(i8seen), FS_U(i8count),
		       "short form directory 8-byte inode count is wrong");
		n++;
	}
	if (e != end) {
		REPORT(c, 0, FS_C_DIR_SF, "di_size", FS_U(e - p), FS_U(size),
		       "short form directory size is not the end of its last entry");
		n++;
	}
	/* the entries' offsets must fit one directory block (the kernel's rule) */
	if (off > g->dirblksize) {
		REPORT(c, 0, FS_C_DIR_SF, "offset", FS_U(g->dirblksize), FS_U(off),
		       "short form directory entries' offsets run past a directory block");
		n++;
	}
	return n;
}

/* ---- block forms ---- */

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
				    !same_name(w->arena + x->off, w->arena + y->off, x->len, w->g->asciici))
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
