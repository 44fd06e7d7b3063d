// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 6 (run.c), xattrs: an inode whose attr fork the scan found damaged
 * (its "attr."/"attrrmt." findings, a DA node of its attr fork, a bad
 * short form) keeps every attribute that still verifies, and loses only
 * the others.  The entries are collected from what is there: the short
 * form's good entries, or every attr3 leaf block the fork maps (the DA
 * node blocks above them are not needed to find them) whose header names
 * this inode and this block, each entry on its own merits (flags, a name
 * without NUL, the stored hash its name's, a local value inside the block,
 * a remote value whose every block verifies: CRC, owner, offset, length).
 * Names given twice keep their first.  The survivors are re-encoded by
 * libfs's xattr encoder (libfs/build/attrbuild.c, the one mkfs -p uses) in the
 * smallest format that holds them: short form in the inode when it fits
 * the fork, else leaf/node blocks with remote values in blocks free before
 * and after the repair (place.c's allocator; the old blocks are
 * freed by the AG rebuild once the new ones are in place), mapped by an
 * extent list or, when that does not fit, a bmbt (repair_fork_map).  Only when no
 * entry survives (or the new fork cannot be placed) is the fork cleared,
 * forkoff 0.  The report says per inode: kept K, dropped D (their names
 * where a name was there to read), or the fork cleared.
 *
 * The same collect-and-encode completes a replayed log's unfinished xattr
 * intents (ATTRI), as the kernel's recovery completes them after the
 * replay: each inode an ATTRI names has its attributes collected, the
 * intents applied in log order (set: the name created or its value
 * replaced; replace: the same; remove: the name gone, nothing when it is
 * absent), and its fork re-encoded; the AG rebuild then frees the old
 * blocks and accounts the new ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfs/format/attr.h"
#include "libfs/build/attrbuild.h"
#include "libfs/format/bmap.h"
#include "libfs/format/da.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/pptr.h"
#include "libfs/format/inode.h"
#include "libfs/log/logattr.h"
#include "libfs/util/vec.h"
#include "repair/buf.h"
#include "repair/phase_inodes.h"
#include "repair/phase_xattrs.h"
#include "repair/place.h"
#include "repair/pptrs.h"
#include "scan/links.h"

/* Dropped names kept for the report, per inode (the rest only counted). */
#define NAMES_REPORTED 8
/* Leaf blocks looked at per fork, for maps a hostile fork makes huge. */
#define BLOCK_BUDGET (1u << 16)

/* One inode's outcome, for the report. */
struct xa_row {
	fs_ino_t ino;
	uint32_t kept, dropped;
	bool cleared;
	const char *why;           /* (cleared) why nothing was kept */
	size_t names, nnames;      /* dropped names: offsets in xa->text, NUL-separated */
	uint32_t attris;           /* the log's unfinished xattr intents completed here */
	bool pptrs;                /* its parent pointers rewritten from the directory entries */
	uint32_t npptrs;           /* ... how many it has now */
};

struct repair_xattrs {
	struct xa_row *rows;
	size_t nrows, caprows;
	char *text;
	size_t ntext, captext;
	uint64_t rebuilt;
};

/* A surviving entry while it is collected: its name and value in the arena. */
struct xa_ent {
	uint8_t flags, namelen;
	uint32_t valuelen;
	size_t name;               /* offset in arena; the value follows the name */
};

struct xa_collect {
	struct repair_ctx *rx;
	fs_ino_t ino;
	struct xa_ent *v;
	size_t n, cap;
	unsigned char *arena;
	size_t narena, caparena;
	uint32_t dropped;
	uint32_t pbad;             /* parent pointers that failed their rules (not kept) */
	struct xa_row *row;
	int err;
};

/* ---- the report's rows ---- */

static int text_add(struct repair_xattrs *xa, const char *s, size_t len)
{
	if (fs_vec_reserve(&xa->text, &xa->captext, xa->ntext + len + 1, 1, 1024))
		return -ENOMEM;
	memcpy(xa->text + xa->ntext, s, len);
	xa->text[xa->ntext + len] = 0;
	xa->ntext += len + 1;
	return 0;
}

static const char *ns_prefix(uint8_t flags)
{
	if (flags & XFS_ATTR_ROOT)
		return "trusted.";
	if (flags & XFS_ATTR_SECURE)
		return "secure.";
	return "user.";
}

/* A dropped entry: counted, and its name (namespace prefixed) kept for the report. */
static void drop(struct xa_collect *c, uint8_t flags, const uint8_t *name, uint32_t namelen)
{
	struct repair_xattrs *xa = c->rx->xa;
	char buf[16 + 256];
	int len;

	c->dropped++;
	if (!name || !namelen || c->row->nnames >= NAMES_REPORTED)
		return;
	len = snprintf(buf, sizeof(buf), "%s%.*s", ns_prefix(flags), (int)namelen,
		       (const char *)name);
	/* a name with a NUL inside is cut there: the report is text */
	if (len > 0 && !c->err) {
		if (!c->row->nnames)
			c->row->names = xa->ntext;
		c->err = text_add(xa, buf, strnlen(buf, (size_t)len));
		c->row->nnames++;
	}
}

/* ---- collecting the entries that verify ---- */

static bool flags_ok(uint8_t flags)
{
	uint8_t ns = flags & XFS_ATTR_NSP_ONDISK_MASK;

	/* the namespaces the encoder writes; no INCOMPLETE, nothing unknown */
	return !(flags & ~(XFS_ATTR_LOCAL | XFS_ATTR_NSP_ONDISK_MASK)) &&
	       (ns == 0 || ns == XFS_ATTR_ROOT || ns == XFS_ATTR_SECURE);
}

static bool name_ok(const uint8_t *name, uint32_t namelen)
{
	return namelen && !memchr(name, 0, namelen);
}

/* Keep one entry: name and value copied (value may be NULL: valuelen bytes reserved). */
static unsigned char *keep(struct xa_collect *c, uint8_t flags, const uint8_t *name,
			   uint8_t namelen, const uint8_t *value, uint32_t valuelen)
{
	struct xa_ent *e;

	if (FS_VEC_ROOM(c->v, c->n, c->cap, 16) ||
	    fs_vec_reserve(&c->arena, &c->caparena, c->narena + namelen + valuelen, 1, 4096)) {
		c->err = -ENOMEM;
		return NULL;
	}
	e = &c->v[c->n++];
	*e = (struct xa_ent){ .flags = flags & (XFS_ATTR_NSP_ONDISK_MASK | XFS_ATTR_PARENT),
			      .namelen = namelen,
			      .valuelen = valuelen, .name = c->narena };
	memcpy(c->arena + c->narena, name, namelen);
	if (value && valuelen)
		memcpy(c->arena + c->narena + namelen, value, valuelen);
	c->narena += namelen + valuelen;
	return c->arena + e->name + namelen;
}

/*
 * A parent pointer (the parent feature): kept when it passes its rules
 * (a leaf's: and carries its hash); else counted (the pointers of a file whose
 * directories change are made again from the entries: pptrs.c).
 */
static void keep_pptr(struct xa_collect *c, const struct fs_attr_ent *e)
{
	const struct fs_geom *g = &c->rx->fs->g;
	struct fs_pptr p;

	if (fs_pptr_decode(g, e, &p) != FS_PPTR_OK)
		c->pbad++;
	else
		keep(c, XFS_ATTR_PARENT, e->name, e->namelen, e->value, e->valuelen);
}

/* fs_attr_sf_verify hands over the entries that pass its rules. */
static void on_sf_entry(void *priv, const struct fs_attr_ent *e)
{
	struct xa_collect *c = priv;

	if (c->err)
		return;
	if (fs_attr_is_pptr(e) && c->rx->fs->g.parent) {
		keep_pptr(c, e);
		return;
	}
	if (!flags_ok(e->flags) || !name_ok(e->name, e->namelen))
		drop(c, e->flags, e->name, e->namelen);
	else
		keep(c, e->flags, e->name, e->namelen, e->value, e->valuelen);
}

static void collect_sf(struct xa_collect *c, const void *dip, const struct fs_inode *ip)
{
	const struct fs_geom *g = &c->rx->fs->g;
	struct fs_findings scratch;
	struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, c->ino), .ino = c->ino };
	size_t size = fs_inode_fork_size(g, ip, XFS_ATTR_FORK);
	unsigned char *fork;
	uint32_t count;

	if (size < sizeof(struct xfs_attr_sf_hdr) || size > UINT16_MAX)
		return;
	fork = malloc(size);
	if (!fork) {
		c->err = -ENOMEM;
		return;
	}
	/*
	 * The entries are walked up to the fork's end, not to totsize: a
	 * damaged totsize (the one field that says where they stop) must not
	 * lose the entries themselves.
	 */
	memcpy(fork, fs_inode_fork_ptr(dip, ip, XFS_ATTR_FORK), size);
	put_be16(fork + offsetof(struct xfs_attr_sf_hdr, totsize), (uint16_t)size);
	count = fork[offsetof(struct xfs_attr_sf_hdr, count)];
	fs_findings_init(&scratch);
	vc.fl = &scratch;
	fs_attr_sf_verify(&vc, fork, size, on_sf_entry, c);
	fs_findings_free(&scratch);
	free(fork);
	/* the entries the walk never reached (past a broken one) are lost too */
	if (count > c->n + c->dropped)
		c->dropped = count - (uint32_t)c->n;
}


/*
 * A remote value into out (valuelen bytes): every block mapped, read, and
 * verified (CRC, owner, blkno) with the offset and length its place needs.
 */
static bool read_remote(struct xa_collect *c, const struct fs_bmap *m, uint32_t valueblk,
			uint32_t valuelen, unsigned char *out, unsigned char *buf)
{
	struct repair_ctx *rx = c->rx;
	const struct fs_geom *g = &rx->fs->g;
	uint32_t space = g->blocksize - sizeof(struct xfs_attr3_rmt_hdr);
	uint32_t nblocks = fs_attr_rmt_blocks(g, valuelen);

	for (uint32_t i = 0; i < nblocks; i++) {
		uint32_t want_off = i * space;
		uint32_t want_bytes = valuelen - want_off < space ? valuelen - want_off : space;
		struct fs_findings scratch;
		struct fs_attr_rmt_hdr h;
		struct fs_vctx vc;
		fs_fsblock_t fsb;
		int n;

		if (!fs_bmap_fsb(g, m, (uint64_t)valueblk + i, &fsb) ||
		    scan_read_agblock(rx->sx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb), buf))
			return false;
		vc = scan_vctx(rx->sx, c->ino, fsb);
		fs_findings_init(&scratch);
		vc.fl = &scratch;
		fs_verify(FS_MT_ATTR_RMT, &vc, buf, g->blocksize);
		/*
		 * a stale LSN or a foreign UUID under a good CRC, owner and
		 * address says nothing against the bytes of the value (xfs_repair
		 * keeps such a value too); anything else does
		 */
		n = 0;
		for (size_t k = 0; k < scratch.n; k++)
			n += !(scratch.v[k].def->flags & (FS_FL_LSN | FS_FL_UUID));
		fs_findings_free(&scratch);
		fs_attr_rmt_hdr_decode(buf, &h);
		if (n || h.offset != want_off || h.bytes != want_bytes)
			return false;
		memcpy(out + want_off, buf + sizeof(struct xfs_attr3_rmt_hdr), want_bytes);
	}
	return true;
}

/* Every entry of one leaf block (in buf) that verifies; the rest dropped. */
static void collect_leaf(struct xa_collect *c, const struct fs_bmap *m, unsigned char *buf,
			 unsigned char *rbuf)
{
	const struct fs_geom *g = &c->rx->fs->g;
	uint32_t bs = g->blocksize, hdr = sizeof(struct xfs_attr3_leaf_hdr);
	uint32_t ent = sizeof(struct xfs_attr_leaf_entry);
	struct fs_attr_leaf_hdr h;
	uint32_t count, table_end;

	bool mended = false;

	fs_attr_leaf_hdr_decode(buf, bs, &h);
	count = h.count;
	if (count > (bs - hdr) / ent)
		count = (bs - hdr) / ent;
	/*
	 * A count whose entry table runs into the names is damage to the
	 * count, not to the entries: the table ends where the names begin
	 * (firstused), and the slots past the real entries, empty there,
	 * are not xattrs that were lost.
	 */
	if (h.firstused >= hdr && h.firstused <= bs && hdr + count * ent > h.firstused) {
		count = (h.firstused - hdr) / ent;
		mended = true;
	}
	table_end = hdr + count * ent;
	for (uint32_t i = 0; i < count && !c->err; i++) {
		struct fs_attr_ent e;
		bool fits = fs_attr_leaf_entry(buf, bs, &h, i, &e);
		unsigned char *val;

		if (mended && !e.hash && !e.nameidx)
			continue;	/* an empty slot of the table */
		if (!fits || e.nameidx < table_end) {
			drop(c, e.flags, NULL, 0);
			continue;
		}
		if (fs_attr_is_pptr(&e) && g->parent) {
			if (fs_attr_ent_hashval(g, &e) != e.hash)
				c->pbad++;
			else
				keep_pptr(c, &e);
			continue;
		}
		if (!flags_ok(e.flags) || !name_ok(e.name, e.namelen) ||
		    fs_da_hashname(e.name, e.namelen) != e.hash ||
		    (!e.local && (e.valueblk == 0 || e.valuelen > XFS_XATTR_SIZE_MAX))) {
			drop(c, e.flags, e.name, e.namelen);
			continue;
		}
		if (e.local) {
			keep(c, e.flags, e.name, e.namelen, e.value, e.valuelen);
			continue;
		}
		/* a remote value: kept only when all of it reads back verified */
		val = keep(c, e.flags, e.name, e.namelen, NULL, e.valuelen);
		if (val && !read_remote(c, m, e.valueblk, e.valuelen, val, rbuf)) {
			c->n--;
			c->narena -= e.namelen + e.valuelen;
			/* buf is this leaf still: rbuf took the value blocks */
			drop(c, e.flags, e.name, e.namelen);
		}
	}
}

/*
 * Every leaf block the fork maps: attr3 leaf magic, and a header naming
 * this inode and this block (a block of the fork that is something else,
 * node or value or garbage, holds no entries to find).
 */
static void collect_blocks(struct xa_collect *c, const struct fs_bmap *m)
{
	struct repair_ctx *rx = c->rx;
	const struct fs_geom *g = &rx->fs->g;
	unsigned char *buf = malloc(g->blocksize), *rbuf = malloc(g->blocksize);
	uint32_t budget = BLOCK_BUDGET;

	if (!buf || !rbuf) {
		c->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->n && !c->err; i++) {
		const struct fs_bmap_ext *x = &m->ext[i];

		for (uint64_t b = 0; b < x->blockcount && budget && !c->err; b++, budget--) {
			fs_fsblock_t fsb = x->startblock + b;
			struct fs_attr_leaf_hdr h;

			if (!fs_fsb_valid(g, fsb) ||
			    scan_read_agblock(rx->sx, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb),
					      buf))
				continue;
			fs_attr_leaf_hdr_decode(buf, g->blocksize, &h);
			if (h.magic != XFS_ATTR3_LEAF_MAGIC || h.owner != c->ino ||
			    h.blkno != (uint64_t)fs_fsb_to_daddr(g, fsb))
				continue;
			collect_leaf(c, m, buf, rbuf);
		}
	}
out:
	free(buf);
	free(rbuf);
}

static int cmp_ent(const void *pa, const void *pb, void *priv)
{
	const unsigned char *arena = priv;
	const struct xa_ent *a = pa, *b = pb;
	int d = (int)a->flags - (int)b->flags;

	if (!d)
		d = (int)a->namelen - (int)b->namelen;
	if (!d)
		d = memcmp(arena + a->name, arena + b->name, a->namelen);
	/* equal names: the first found first (the arena grows in the order found) */
	return d ? d : (a->name > b->name) - (a->name < b->name);
}

/* A name given twice (in one namespace) keeps its first. */
static void dedupe(struct xa_collect *c)
{
	size_t w = 0;

	if (!c->n)
		return;
	qsort_r(c->v, c->n, sizeof(*c->v), cmp_ent, c->arena);
	for (size_t i = 0; i < c->n; i++) {
		const struct xa_ent *p = w ? &c->v[w - 1] : NULL, *e = &c->v[i];

		/* parent pointers: one name in several directories is several */
		if (p && !(e->flags & XFS_ATTR_PARENT) && p->flags == e->flags &&
		    p->namelen == e->namelen &&
		    !memcmp(c->arena + p->name, c->arena + e->name, e->namelen)) {
			drop(c, e->flags, c->arena + e->name, e->namelen);
			continue;
		}
		c->v[w++] = c->v[i];
	}
	c->n = w;
}

/* The collected entries as the encoder takes them (pointing into c's arena); NULL: -ENOMEM. */
static struct fs_attrbuild_ent *build_ents(const struct xa_collect *c)
{
	struct fs_attrbuild_ent *ents = calloc(c->n ? c->n : 1, sizeof(*ents));

	for (size_t i = 0; ents && i < c->n; i++)
		ents[i] = (struct fs_attrbuild_ent){
			.flags = c->v[i].flags, .namelen = c->v[i].namelen,
			.name = c->arena + c->v[i].name, .valuelen = c->v[i].valuelen,
			.value = c->arena + c->v[i].name + c->v[i].namelen };
	return ents;
}

/* ---- the new fork ---- */

/* The blocks the attr fork maps now (extents and bmbt blocks). */
static uint64_t fork_blocks(const struct fs_bmap *m)
{
	uint64_t n = m->nbmbt;

	for (size_t i = 0; i < m->n; i++)
		n += m->ext[i].blockcount;
	return n;
}

static void set_anextents(struct xfs_dinode *d, const struct fs_inode *ip, uint32_t n)
{
	if (ip->nrext64)
		put_be32(&d->di_big_anextents, n);
	else
		put_be16(&d->di_anextents, (uint16_t)n);
}

/* The extents the encoder's blocks make, in attr block order. */
struct xa_place {
	struct repair_ctx *rx;
	fs_ino_t ino;
	struct fs_bmap_ext *ext;
	size_t n, cap;
	uint32_t next;             /* the next logical attr block */
};

static int on_alloc(void *priv, uint32_t nblocks, fs_fsblock_t *fsb)
{
	struct xa_place *p = priv;
	int err = repair_place(p->rx, p->ino, nblocks, fsb);

	if (err)
		return err;
	if (p->n && p->ext[p->n - 1].startblock + p->ext[p->n - 1].blockcount == *fsb) {
		p->ext[p->n - 1].blockcount += nblocks;
	} else {
		if (FS_VEC_ROOM(p->ext, p->n, p->cap, 8))
			return -ENOMEM;
		p->ext[p->n++] = (struct fs_bmap_ext){ .startoff = p->next, .startblock = *fsb,
						       .blockcount = nblocks };
	}
	p->next += nblocks;
	return 0;
}

static const enum fs_mtype attr_types[] = { FS_MT_ATTR_LEAF, FS_MT_DA_NODE, FS_MT_ATTR_RMT };

/*
 * The survivors as blocks: placed, encoded, marked NEW; the fork's extents
 * into afork (asize bytes): a list, or a bmbt when they do not fit (its
 * format in *format).  -ENOSPC without room for the blocks: nothing is
 * marked or added to the model then.
 */
static int write_blocks(struct repair_ctx *rx, fs_ino_t ino, struct fs_attrbuild *ab,
			unsigned char *afork, uint32_t asize, uint64_t *nblocks, uint32_t *next,
			uint8_t *format)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xa_place p = { .rx = rx, .ino = ino };
	struct fs_attrbuild_io io = { .alloc = on_alloc, .priv = &p };
	uint32_t nb;
	unsigned char *tmp = NULL;
	int err;

	if (!rx->nm)
		return -ENOSPC;	/* the namespace phase did not run: no allocator */
	uint64_t bmbt = 0;

	err = fs_attrbuild_layout(ab, &io);
	nb = fs_attrbuild_nblocks(ab);
	if (!err && !(tmp = malloc(g->blocksize)))
		err = -ENOMEM;
	/* encode all first (scratch): a block the encoder refuses leaves nothing marked */
	for (uint32_t i = 0; i < nb && !err; i++) {
		fs_fsblock_t fsb;

		err = fs_attrbuild_encode(ab, i, tmp, &fsb);
	}
	for (uint32_t i = 0; i < nb && !err; i++) {
		struct fs_buf *b;
		fs_fsblock_t fsb;
		enum fs_mtype t;

		err = fs_attrbuild_encode(ab, i, tmp, &fsb);
		if (!err)
			err = repair_get_buf(rx, fs_fsb_to_daddr(g, fsb), g->blocksize, true, &b);
		if (err)
			break;
		memcpy(b->data, tmp, g->blocksize);
		t = fs_verifier_by_magic(b->data, g->blocksize, attr_types,
					 sizeof(attr_types) / sizeof(attr_types[0]));
		err = t == FS_MT_NR ? -EUCLEAN :
		      repair_mark(rx, b, t, fs_fsb_to_agno(g, fsb), ino, FS_WCLASS_NEW);
		fs_buf_put(rx->sx->cache, b);
	}
	memset(afork, 0, asize);
	for (size_t i = 0; i < p.n && !err; i++)
		err = model_add(rx->sx->model, fs_fsb_to_agno(g, p.ext[i].startblock),
				fs_fsb_to_agbno(g, p.ext[i].startblock),
				(uint32_t)p.ext[i].blockcount, MC_ATTR, ino, p.ext[i].startoff,
				MODEL_EXT_NEW);
	if (!err)
		err = repair_fork_map(rx, ino, XFS_ATTR_FORK, p.ext, p.n, afork, asize, format,
				      &bmbt);
	*nblocks = nb + bmbt;
	*next = (uint32_t)p.n;
	free(tmp);
	free(p.ext);
	return err;
}

/*
 * An attr fork for an inode with none (the parent feature: its pointers
 * are to be written): the data fork keeps what it holds (a local fork its
 * size, extents their records, a device its number; a btree root is not
 * moved: false), the attr fork takes the short form size sf at the end of
 * the literal area, or for blocks the half the data fork leaves.
 */
static bool new_forkoff(const struct fs_geom *g, struct xfs_dinode *d, const struct fs_inode *ip,
			uint32_t sf)
{
	uint32_t lit = fs_inode_litino(g), need, off;

	switch (ip->format) {
	case XFS_DINODE_FMT_DEV:
		need = 8;
		break;
	case XFS_DINODE_FMT_LOCAL:
		need = (uint32_t)((ip->size + 7) & ~7ull);
		break;
	case XFS_DINODE_FMT_EXTENTS:
		need = (uint32_t)(ip->nextents * sizeof(struct xfs_bmbt_rec));
		break;
	default:
		return false;
	}
	if (need >= lit)
		return false;
	if (ip->format == XFS_DINODE_FMT_DEV)
		off = 8;	/* (a device's fork offset is fixed) */
	else if (sf && ((sf + 7) & ~7u) <= lit - need)
		off = lit - ((sf + 7) & ~7u);
	else
		off = need > lit / 2 ? need : lit / 2;
	if (lit - off < sizeof(struct xfs_bmbt_rec) || off / 8 > UINT8_MAX || !(off / 8))
		return false;
	d->di_forkoff = (uint8_t)(off / 8);
	d->di_aformat = XFS_DINODE_FMT_EXTENTS;
	memset((unsigned char *)d + sizeof(struct xfs_dinode) + off, 0, lit - off);
	return true;
}

/*
 * Rebuild one inode's attr fork from c's survivors (none: the fork is
 * cleared).  dip is its core (a dirty buffer); *cleared_why says why a fork
 * with survivors was cleared after all.
 */
static int rebuild(struct repair_ctx *rx, struct xa_collect *c, unsigned char *dip,
		   const char **cleared_why)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	struct fs_attrbuild_ent *ents = NULL;
	struct fs_attrbuild *ab = NULL;
	struct fs_bmap m = { 0 };
	struct fs_inode ip;
	uint64_t had = 0, now = 0;
	uint32_t asize, sf, next = 0;
	unsigned char *afork;
	int err;

	fs_inode_decode(dip, &ip);
	err = scan_load_map(rx->sx, dip, &ip, XFS_ATTR_FORK, NULL, &m);
	if (err)
		return err;
	had = fork_blocks(&m);
	fs_bmap_free(&m);
	asize = fs_inode_fork_size(g, &ip, XFS_ATTR_FORK);
	afork = (unsigned char *)fs_inode_fork_ptr(dip, &ip, XFS_ATTR_FORK);
	*cleared_why = "no entry survived";
	if (c->n) {
		ents = build_ents(c);
		if (!ents)
			return -ENOMEM;
		err = fs_attrbuild_plan(g, c->ino, ents, c->n, &ab);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			*cleared_why = "the encoder refused the entries";
			err = 0;
			goto clear;
		}
		sf = fs_attrbuild_sf_size(ab);
		if (!ip.forkoff) {
			/* no fork (removed: parent pointers to keep): one beside the data fork */
			if (!new_forkoff(g, d, &ip, sf)) {
				*cleared_why = "no room beside the data fork for an attr fork";
				goto clear;
			}
			fs_inode_decode(dip, &ip);
			asize = fs_inode_fork_size(g, &ip, XFS_ATTR_FORK);
			afork = (unsigned char *)fs_inode_fork_ptr(dip, &ip, XFS_ATTR_FORK);
		}
		if (sf && sf <= asize) {
			memset(afork, 0, asize);
			fs_attrbuild_sf(ab, afork);
			d->di_aformat = XFS_DINODE_FMT_LOCAL;
			set_anextents(d, &ip, 0);
		} else {
			uint8_t format = XFS_DINODE_FMT_EXTENTS;

			err = write_blocks(rx, c->ino, ab, afork, asize, &now, &next, &format);
			if (err == -ENOSPC || err == -EFBIG) {
				*cleared_why = err == -ENOSPC ? "no free blocks for the new fork" :
					       "the new fork's block map would be too tall";
				err = 0;
				now = 0;
				goto clear;
			}
			if (err)
				goto out;
			d->di_aformat = format;
			set_anextents(d, &ip, next);
		}
		rx->verdict[scan_links_slot(rx->sx, c->ino)] |= RV_ATTR_NEW;
		c->row->kept = (uint32_t)c->n;
		put_be64(&d->di_nblocks, ip.nblocks - had + now);
		goto out;
	}
clear:
	/* the old blocks go with the fork (the AG rebuild frees them) */
	repair_attr_fork_reset(g, dip);
	rx->verdict[scan_links_slot(rx->sx, c->ino)] |= RV_ATTR_RESET;
	put_be64(&d->di_nblocks, ip.nblocks - had);
	c->row->cleared = true;
	c->row->why = *cleared_why;
	rx->attr_resets++;
	c->dropped += (uint32_t)c->n;
	c->n = 0;
out:
	fs_attrbuild_free(ab);
	free(ents);
	return err;
}

/* A log's unfinished xattr intent, naming this inode. */
struct attri_ref {
	fs_ino_t ino;
	size_t i;                  /* its index in rx->attris: log order */
};

static int cmp_attri_ref(const void *pa, const void *pb)
{
	const struct attri_ref *a = pa, *b = pb;

	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* The entry of this namespace and name among those collected, or c->n. */
static size_t find_ent(const struct xa_collect *c, uint8_t flags, const uint8_t *name,
		       uint32_t namelen)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].flags == flags && c->v[i].namelen == namelen &&
		    !memcmp(c->arena + c->v[i].name, name, namelen))
			return i;
	return c->n;
}

/* The collected parent pointer of this name and value, or c->n. */
static size_t find_pptr(const struct xa_collect *c, const uint8_t *name, uint32_t namelen,
			const uint8_t *value, uint32_t valuelen)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].flags == XFS_ATTR_PARENT && c->v[i].namelen == namelen &&
		    c->v[i].valuelen == valuelen &&
		    !memcmp(c->arena + c->v[i].name, name, namelen) &&
		    !memcmp(c->arena + c->v[i].name + namelen, value, valuelen))
			return i;
	return c->n;
}

/* The collected entries fit a short form fork of asize bytes (the rule rebuild() follows). */
static bool sf_fits(struct xa_collect *c, uint32_t asize)
{
	struct fs_attrbuild_ent *ents;
	struct fs_attrbuild *ab = NULL;
	uint32_t sf = 0;

	if (!c->n)
		return true;
	ents = build_ents(c);
	if (!ents) {
		c->err = -ENOMEM;
		return false;
	}
	if (!fs_attrbuild_plan(&c->rx->fs->g, c->ino, ents, c->n, &ab))
		sf = fs_attrbuild_sf_size(ab);
	fs_attrbuild_free(ab);
	free(ents);
	return sf && sf <= asize;
}

/*
 * The intents on the collected entries, in log order, as the kernel's
 * recovery applies them (xfs_attr_set with its recovery flag): a set or a
 * replace leaves the name with the logged value whether or not it was
 * there; a remove of an absent name changes nothing.  Returns whether the
 * chain stamps the change time: the kernel's short form add
 * (xfs_attr_try_sf_addname) does, recovery's included; a set that goes
 * to leaf blocks, and a remove, do not.  So the fork's form is followed
 * from intent to intent (sf: short form, or no fork, at the start): a set
 * that does not fit the short form turns it into blocks, a remove after
 * which all fit turns it back (the kernel's leaf shrink), and only a set
 * made while it is short form stamps.
 */
static bool apply_attris(struct xa_collect *c, const struct attri_ref *refs, size_t nrefs,
			 bool sf, uint32_t asize)
{
	bool stamp = false;

	for (size_t k = 0; k < nrefs && !c->err; k++) {
		const struct fs_log_attri *a = &c->rx->attris[refs[k].i];
		/* a parent pointer (the replay hands on those on forks in blocks): by name and value */
		bool pp = fs_log_attri_is_pptr(a);
		uint8_t flags = pp ? XFS_ATTR_PARENT : (uint8_t)(a->filter & XFS_ATTR_NSP_ONDISK_MASK);
		size_t at = pp ? find_pptr(c, a->name, a->namelen, a->value, a->valuelen)
			       : find_ent(c, flags, a->name, a->namelen);
		bool rm = a->op == XFS_ATTRI_OP_FLAGS_REMOVE || a->op == XFS_ATTRI_OP_FLAGS_PPTR_REMOVE;
		bool rep = a->op == XFS_ATTRI_OP_FLAGS_PPTR_REPLACE && a->newnamelen;

		if (at < c->n) {
			memmove(c->v + at, c->v + at + 1, (c->n - at - 1) * sizeof(*c->v));
			c->n--;
		}
		if (!rm) {
			/* (the log's checks: names 1..255 bytes, a parent pointer's value 12) */
			keep(c, flags, rep ? a->newname : a->name,
			     (uint8_t)(rep ? a->newnamelen : a->namelen),
			     rep ? a->newvalue : a->value, a->valuelen);
			if (sf && sf_fits(c, asize))
				stamp = true;
			else
				sf = false;
		} else if (!sf && sf_fits(c, asize)) {
			sf = true;
		}
	}
	return stamp;
}

/* ---- parent pointers (the parent feature) ---- */

static void pptr_value(const struct repair_pptr *w, unsigned char rec[12])
{
	put_be64(rec + offsetof(struct xfs_parent_rec, p_ino), w->parent);
	put_be32(rec + offsetof(struct xfs_parent_rec, p_gen), w->gen);
}

/* A parent pointer as one 64-bit key: its name's digest, its parent and generation mixed in. */
static uint64_t pptr_key(const unsigned char *name, uint8_t namelen, fs_ino_t parent, uint32_t gen)
{
	return fs_name_digest(name, namelen) ^ (parent * 0x9e3779b97f4a7c15ull) ^
	       ((uint64_t)gen * 0xc2b2ae3d27d4eb4full);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/*
 * Whether the parent pointers collected are the wanted ones (w, nw), no
 * more, no fewer: both as sorted keys (a file with thousands of links is
 * not compared pair by pair).  -ENOMEM as c->err.
 */
static bool pptrs_same(struct xa_collect *c, const unsigned char *names,
		       const struct repair_pptr *w, size_t nw)
{
	uint64_t *a, *b;
	size_t np = 0;
	bool same;

	for (size_t i = 0; i < c->n; i++)
		np += !!(c->v[i].flags & XFS_ATTR_PARENT);
	if (np != nw)
		return false;
	if (!nw)
		return true;
	a = malloc(nw * sizeof(*a));
	b = malloc(nw * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		c->err = -ENOMEM;
		return false;
	}
	np = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct xa_ent *e = &c->v[i];
		const unsigned char *v = c->arena + e->name + e->namelen;

		if (!(e->flags & XFS_ATTR_PARENT))
			continue;
		/* (kept only when it decoded: a 12-byte value) */
		a[np++] = pptr_key(c->arena + e->name, e->namelen,
				   get_be64(v + offsetof(struct xfs_parent_rec, p_ino)),
				   get_be32(v + offsetof(struct xfs_parent_rec, p_gen)));
	}
	for (size_t k = 0; k < nw; k++)
		b[k] = pptr_key(names + w[k].name, w[k].namelen, w[k].parent, w[k].gen);
	qsort(a, nw, sizeof(*a), cmp_u64);
	qsort(b, nw, sizeof(*b), cmp_u64);
	same = !memcmp(a, b, nw * sizeof(*a));
	free(a);
	free(b);
	return same;
}

/* The collected parent pointers replaced by the wanted ones. */
static void pptrs_replace(struct xa_collect *c, const unsigned char *names,
			  const struct repair_pptr *w, size_t nw)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		if (!(c->v[i].flags & XFS_ATTR_PARENT))
			c->v[k++] = c->v[i];
	c->n = k;
	for (size_t i = 0; i < nw && !c->err; i++) {
		unsigned char rec[12];

		pptr_value(&w[i], rec);
		keep(c, XFS_ATTR_PARENT, names + w[i].name, w[i].namelen, rec, sizeof(rec));
	}
}

static struct xa_row *new_row(struct repair_xattrs *xa, fs_ino_t ino)
{
	if (FS_VEC_ROOM(xa->rows, xa->nrows, xa->caprows, 16))
		return NULL;
	xa->rows[xa->nrows] = (struct xa_row){ .ino = ino };
	return &xa->rows[xa->nrows++];
}

/*
 * One inode's attr fork collected and encoded again: damaged (must), with
 * the log's intents on it (refs), or (pptrs) with the parent pointers the
 * namespace wants, which leave it as it is when it holds them already.
 */
static int salvage(struct repair_ctx *rx, fs_ino_t ino, const struct attri_ref *refs,
		   size_t nrefs, bool pptrs, bool must)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xa_collect c = { .rx = rx, .ino = ino };
	size_t rowix;
	struct fs_buf *b;
	struct fs_inode ip;
	const char *why = NULL;
	bool was_sf, stamp = false;
	int err;

	err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		return err;
	fs_inode_decode(b->data, &ip);
	/*
	 * A free inode an intent names (-n only: a repair refused the log
	 * before the scan, as the kernel's recovery stops there): nothing to do.
	 */
	if (!ip.mode) {
		fs_buf_put(rx->sx->cache, b);
		return 0;
	}
	/*
	 * No attr fork (forkoff 0: a symlink, an O_TMPFILE file): the
	 * kernel's recovery completes the intents doing nothing (its state
	 * machine starts at xfs_attr_init_add_state, done without a fork; the
	 * fork is added by xfs_attr_set before the intent is logged, not by
	 * recovery), and so does this.
	 */
	if (!ip.forkoff && nrefs) {
		fs_buf_put(rx->sx->cache, b);
		rx->attris_done += nrefs;
		return 0;
	}
	if (!new_row(rx->xa, ino)) {
		fs_buf_put(rx->sx->cache, b);
		return -ENOMEM;
	}
	rowix = rx->xa->nrows - 1;
	c.row = &rx->xa->rows[rowix];
	/* short form to the kernel (xfs_attr_is_shortform): local, or extents without one */
	was_sf = !ip.forkoff || ip.aformat == XFS_DINODE_FMT_LOCAL ||
		 (ip.aformat == XFS_DINODE_FMT_EXTENTS && !ip.anextents);
	if (ip.forkoff && ip.aformat == XFS_DINODE_FMT_LOCAL) {
		collect_sf(&c, b->data, &ip);
	} else if (ip.forkoff) {
		struct fs_bmap m = { 0 };

		err = scan_load_map(rx->sx, b->data, &ip, XFS_ATTR_FORK, NULL, &m);
		if (!err)
			collect_blocks(&c, &m);
		fs_bmap_free(&m);
	}
	if (!err)
		err = c.err;
	if (!err)
		dedupe(&c);
	if (!err)
		stamp = apply_attris(&c, refs, nrefs, was_sf,
				     fs_inode_fork_size(g, &ip, XFS_ATTR_FORK));
	if (!err)
		err = c.err;
	c.row = &rx->xa->rows[rowix];	/* drop() may have grown the text, not the rows */
	if (!err && pptrs) {
		uint64_t s = scan_links_slot(rx->sx, ino);
		const struct repair_pptr *w;
		size_t nw = repair_pptrs_of(rx, s, &w);

		bool same = !must && !nrefs && !c.pbad && !c.dropped &&
			    pptrs_same(&c, rx->pp->names, w, nw);

		if (c.err) {
			err = c.err;
		} else if (same) {
			/* right as it is: nothing written */
			rx->xa->nrows--;
			fs_buf_put(rx->sx->cache, b);
			free(c.v);
			free(c.arena);
			return 0;
		}
		pptrs_replace(&c, rx->pp->names, w, nw);
		err = c.err;
		c.row->pptrs = true;
		c.row->npptrs = (uint32_t)nw;
		rx->pp->want[s] |= RP_DONE;
		rx->pp->rewritten++;
	}
	if (!err)
		err = rebuild(rx, &c, b->data, &why);
	if (!err && nrefs && !c.row->cleared && stamp) {
		/* a short form add in the chain (apply_attris): the kernel stamps the change time */
		struct timespec ts;
		struct fs_dinode_time t;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = (struct fs_dinode_time){ .sec = ts.tv_sec, .nsec = (uint32_t)ts.tv_nsec };
		fs_enc_dinode_set_ctime(b->data, &t);
	}
	if (!err) {
		c.row->dropped = c.dropped;
		if (!c.row->cleared)
			rx->xa->rebuilt++;
		/* a remove of the last name leaves no fork, as the kernel's does */
		if (!c.row->cleared || !c.dropped) {
			c.row->attris = (uint32_t)nrefs;
			rx->attris_done += nrefs;
		}
		fs_enc_dinode_finish(b->data, g->inodesize);
		err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(g, ino), ino,
				  FS_WCLASS_HEADERS);
		rx->planned_writes = true;
		rx->drops = true;
	}
	fs_buf_put(rx->sx->cache, b);
	free(c.v);
	free(c.arena);
	return err;
}

/*
 * One of an inode's intents stops the kernel's recovery (-n only: a repair
 * refused the log before the scan): none of them is completed, the run
 * only says what a repair would refuse.
 */
static bool refused(const struct repair_ctx *rx, const struct attri_ref *refs, size_t nrefs)
{
	for (size_t k = 0; rx->attri_refused && k < nrefs; k++)
		if (rx->attri_refused[refs[k].i])
			return true;
	return false;
}

int repair_phase_xattrs(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	const struct fs_geom *g = &rx->fs->g;
	struct attri_ref *refs = NULL;
	size_t at = 0;
	int err = 0;

	if (!lk || !rx->verdict)
		return 0;
	rx->xa = calloc(1, sizeof(*rx->xa));
	if (!rx->xa)
		return -ENOMEM;
	if (rx->nattris) {
		refs = malloc(rx->nattris * sizeof(*refs));
		if (!refs)
			return -ENOMEM;
		for (size_t i = 0; i < rx->nattris; i++)
			refs[i] = (struct attri_ref){ .ino = rx->attris[i].ino, .i = i };
		qsort(refs, rx->nattris, sizeof(*refs), cmp_attri_ref);
	}
	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		uint8_t v = rx->verdict[s];
		fs_agnumber_t agno;
		fs_ino_t ino;
		struct xa_row *r;
		size_t nrefs = 0;

		ino = scan_slot_ino(rx->sx, s, &agno);
		if (rx->nattris) {
			size_t lo = 0, hi = rx->nattris;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (refs[mid].ino < ino)
					lo = mid + 1;
				else
					hi = mid;
			}
			at = lo;
			while (at + nrefs < rx->nattris && refs[at + nrefs].ino == ino)
				nrefs++;
		}
		/*
		 * An inode the unlinked lists' processing frees: the kernel's
		 * recovery completes its intents (xlog_recover_iget marks it
		 * XFS_IRECOVERY, so it is not freed on release), then frees it
		 * with its attr fork.  The fork is gone either way: nothing to
		 * build, with -n too (the lists are processed by the real run,
		 * after the replay is written).
		 */
		if (nrefs && refused(rx, refs + at, nrefs)) {
			rx->attris_refused += nrefs;
			continue;
		}
		if (nrefs && repair_unlinked_frees(rx, s)) {
			rx->attris_freed += nrefs;
			continue;
		}
		bool pa = rx->pp && (rx->pp->want[s] & RP_AFFECTED);

		if ((v & RV_CLEAR) || ((v & RV_NEW) && !pa))
			continue;
		/* no allocator (the namespace phase did not run): a fork is not placed, so not touched */
		if (!rx->nm && !(v & RV_ATTR_SALVAGE))
			nrefs = 0;
		if ((v & RV_ATTR_RESET) && !pa) {
			/* phase 3 removed it (its block map is beyond use): say so */
			r = new_row(rx->xa, ino);
			if (!r)
				return -ENOMEM;
			r->cleared = true;
			r->why = "its block map is damaged";
			continue;
		}
		if ((v & RV_ATTR_SALVAGE) || nrefs || pa) {
			rx->verdict[s] &= (uint8_t)~RV_ATTR_SALVAGE;
			err = salvage(rx, ino, refs + at, nrefs, pa,
				      v & (RV_ATTR_SALVAGE | RV_ATTR_RESET));
		}
	}
	free(refs);
	for (fs_agnumber_t a = 0; a < g->agcount && !err; a++)
		err = model_ag_finish(rx->sx->model, a);
	return err;
}

void repair_xattrs_free(struct repair_ctx *rx)
{
	if (!rx->xa)
		return;
	free(rx->xa->rows);
	free(rx->xa->text);
	free(rx->xa);
	rx->xa = NULL;
}

uint64_t repair_xattrs_rebuilt(const struct repair_ctx *rx)
{
	return rx->xa ? rx->xa->rebuilt : 0;
}

/* A name for text output: bytes outside printable ASCII as \xNN. */
static void print_name(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s >= 0x20 && *s < 0x7f && *s != '\\')
			fputc(*s, out);
		else
			fprintf(out, "\\x%02x", (unsigned char)*s);
}

void repair_xattrs_print(const struct repair_ctx *rx, FILE *out, bool json)
{
	const struct repair_xattrs *xa = rx->xa;
	const char *done = rx->o->dry_run ? "would fix" : "fixed";

	if (json)
		fputs("[", out);
	for (size_t i = 0; xa && i < xa->nrows; i++) {
		const struct xa_row *r = &xa->rows[i];
		const char *nm = r->nnames ? xa->text + r->names : NULL;

		if (json) {
			fprintf(out, "%s{\"ino\":%" PRIu64 ",\"kept\":%u,\"dropped\":%u,"
				"\"cleared\":%s,\"log_attris\":%u", i ? "," : "", (uint64_t)r->ino,
				r->kept, r->dropped, r->cleared ? "true" : "false", r->attris);
			if (r->cleared) {
				fputs(",\"why\":", out);
				fs_json_string(out, r->why);
			}
			if (r->pptrs)
				fprintf(out, ",\"parent_pointers\":%u", r->npptrs);
			fputs(",\"dropped_names\":[", out);
			for (size_t k = 0; k < r->nnames; k++, nm += strlen(nm) + 1) {
				if (k)
					fputc(',', out);
				fs_json_string(out, nm);
			}
			fputs("]}", out);
			continue;
		}
		if (r->attris && !r->dropped)
			fprintf(out, "%-9s inode %" PRIu64 ": the log's %u unfinished xattr intent(s) "
				"completed (%u xattrs now)", rx->o->dry_run ? "would do" : "done",
				(uint64_t)r->ino, r->attris, r->cleared ? 0 : r->kept);
		else if (r->cleared)
			fprintf(out, "%-9s inode %" PRIu64 ": attr fork cleared (%s)", done,
				(uint64_t)r->ino, r->why);
		else if (r->pptrs && !r->dropped && !r->attris)
			fprintf(out, "%-9s inode %" PRIu64 ": parent pointers written from the "
				"directory entries naming it (%u)", done, (uint64_t)r->ino, r->npptrs);
		else
			fprintf(out, "%-9s inode %" PRIu64 ": xattrs kept %u, dropped %u%s", done,
				(uint64_t)r->ino, r->kept, r->dropped,
				r->attris ? " (the log's unfinished xattr intents completed)" : "");
		for (size_t k = 0; k < r->nnames; k++, nm += strlen(nm) + 1) {
			fputs(k ? ", " : ": ", out);
			print_name(out, nm);
		}
		if (r->dropped > r->nnames && r->nnames)
			fputs(", ...", out);
		fputc('\n', out);
	}
	if (json)
		fputs("]", out);
}
