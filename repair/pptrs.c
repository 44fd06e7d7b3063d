// SPDX-License-Identifier: GPL-2.0
/*
 * Parent pointers as the repaired namespace wants them (pptrs.h): the
 * per-slot marks, the wanted pointers (child slot, parent, its
 * generation, the entry's name), and the reader of one inode's parent
 * pointers from its attr fork (short form, or every attr3 leaf block the
 * fork maps whose header names the inode and the block).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/attr.h"
#include "libfs/format/bmap.h"
#include "libfs/format/inode.h"
#include "libfs/util/vec.h"
#include "repair/buf.h"
#include "repair/pptrs.h"
#include "scan/links.h"

int repair_pptrs_alloc(struct repair_ctx *rx)
{
	struct repair_pptrs *pp;

	if (!rx->fs->g.parent || !rx->sx->links || rx->pp)
		return 0;
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	rx->pp = pp;
	pp->want = calloc(rx->sx->links->nslots + 1, 1);
	return pp->want ? 0 : -ENOMEM;
}

void repair_pptrs_free(struct repair_ctx *rx)
{
	if (!rx->pp)
		return;
	free(rx->pp->want);
	free(rx->pp->v);
	free(rx->pp->names);
	free(rx->pp);
	rx->pp = NULL;
}

int repair_pptrs_plan(struct repair_ctx *rx, const struct fs_finding *f, void *arg)
{
	uint64_t s = f->ino >= 0 ? scan_links_slot(rx->sx, (fs_ino_t)f->ino) : UINT64_MAX;

	(void)arg;
	if (rx->pp && s != UINT64_MAX)
		rx->pp->want[s] |= RP_AFFECTED | RP_FORCE;
	return 0;
}

bool repair_pptrs_rewritten(const struct repair_ctx *rx, int64_t ino)
{
	uint64_t s = ino >= 0 && rx->pp ? scan_links_slot(rx->sx, (fs_ino_t)ino) : UINT64_MAX;

	return s != UINT64_MAX && (rx->pp->want[s] & RP_DONE);
}

int repair_pptrs_add(struct repair_ctx *rx, uint64_t child, fs_ino_t parent, uint32_t gen,
		     const unsigned char *name, uint8_t namelen)
{
	struct repair_pptrs *pp = rx->pp;

	if (FS_VEC_ROOM(pp->v, pp->n, pp->cap, 64) ||
	    fs_vec_reserve(&pp->names, &pp->capnames, pp->nnames + namelen, 1, 4096))
		return -ENOMEM;
	memcpy(pp->names + pp->nnames, name, namelen);
	pp->v[pp->n++] = (struct repair_pptr){ .child = (uint32_t)child, .gen = gen,
					       .parent = parent, .name = pp->nnames,
					       .namelen = namelen };
	pp->nnames += namelen;
	return 0;
}

static int cmp_pptr(const void *pa, const void *pb, void *priv)
{
	const unsigned char *names = priv;
	const struct repair_pptr *a = pa, *b = pb;

	if (a->child != b->child)
		return a->child < b->child ? -1 : 1;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->namelen != b->namelen)
		return a->namelen < b->namelen ? -1 : 1;
	return memcmp(names + a->name, names + b->name, a->namelen);
}

void repair_pptrs_sort(struct repair_ctx *rx)
{
	struct repair_pptrs *pp = rx->pp;
	size_t w = 0;

	if (!pp || !pp->n)
		return;
	qsort_r(pp->v, pp->n, sizeof(*pp->v), cmp_pptr, pp->names);
	/* one pointer per (parent, name): a name twice in a directory is one entry */
	for (size_t i = 0; i < pp->n; i++)
		if (!w || cmp_pptr(&pp->v[w - 1], &pp->v[i], pp->names))
			pp->v[w++] = pp->v[i];
	pp->n = w;
}

size_t repair_pptrs_of(const struct repair_ctx *rx, uint64_t s, const struct repair_pptr **v)
{
	const struct repair_pptrs *pp = rx->pp;
	size_t lo = 0, hi, end;

	*v = NULL;
	if (!pp)
		return 0;
	hi = pp->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pp->v[mid].child < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < pp->n && pp->v[end].child == s; end++)
		;
	*v = pp->v + lo;
	return end - lo;
}

/* ---- reading one inode's parent pointers ---- */

struct pread {
	struct repair_ctx *rx;
	int (*fn)(void *priv, const struct fs_pptr *p);
	void *priv;
	int err;
};

static void on_sf(void *priv, const struct fs_attr_ent *e)
{
	struct pread *r = priv;
	struct fs_pptr p;

	if (!r->err && fs_attr_is_pptr(e) && fs_pptr_decode(&r->rx->fs->g, e, &p) == FS_PPTR_OK)
		r->err = r->fn(r->priv, &p);
}

static void read_leaf(struct pread *r, const unsigned char *buf)
{
	const struct fs_geom *g = &r->rx->fs->g;
	struct fs_attr_leaf_hdr h;
	uint32_t count;

	fs_attr_leaf_hdr_decode(buf, g->blocksize, &h);
	count = h.count;
	for (uint32_t i = 0; i < count && !r->err; i++) {
		struct fs_attr_ent e;
		struct fs_pptr p;

		if (fs_attr_leaf_entry(buf, g->blocksize, &h, i, &e) && fs_attr_is_pptr(&e) &&
		    fs_pptr_decode(g, &e, &p) == FS_PPTR_OK && fs_attr_ent_hashval(g, &e) == e.hash)
			r->err = r->fn(r->priv, &p);
	}
}

int repair_pptrs_read(struct repair_ctx *rx, fs_ino_t ino,
		      int (*fn)(void *priv, const struct fs_pptr *p), void *priv)
{
	const struct fs_geom *g = &rx->fs->g;
	struct pread r = { .rx = rx, .fn = fn, .priv = priv };
	struct fs_buf *b;
	struct fs_inode ip;
	int err;

	err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		return err;
	fs_inode_decode(b->data, &ip);
	if (ip.mode && ip.forkoff && ip.aformat == XFS_DINODE_FMT_LOCAL) {
		struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .ino = ino };
		struct fs_findings scratch;
		size_t size = fs_inode_fork_size(g, &ip, XFS_ATTR_FORK);

		fs_findings_init(&scratch);
		vc.fl = &scratch;
		if (size >= sizeof(struct xfs_attr_sf_hdr))
			fs_attr_sf_verify(&vc, fs_inode_fork_ptr(b->data, &ip, XFS_ATTR_FORK), size,
					  on_sf, &r);
		fs_findings_free(&scratch);
	} else if (ip.mode && ip.forkoff) {
		struct fs_bmap m = { 0 };
		unsigned char *buf = malloc(g->blocksize);

		err = buf ? scan_load_map(rx->sx, b->data, &ip, XFS_ATTR_FORK, NULL, &m) : -ENOMEM;
		for (size_t i = 0; !err && i < m.n && !r.err; i++)
			for (uint64_t k = 0; k < m.ext[i].blockcount && k < 4096 && !r.err; k++) {
				fs_fsblock_t fsb = m.ext[i].startblock + k;
				struct fs_attr_leaf_hdr h;

				if (!fs_fsb_valid(g, fsb) ||
				    scan_read_agblock(rx->sx, fs_fsb_to_agno(g, fsb),
						      fs_fsb_to_agbno(g, fsb), buf))
					continue;
				fs_attr_leaf_hdr_decode(buf, g->blocksize, &h);
				if (h.magic == XFS_ATTR3_LEAF_MAGIC && h.owner == ino &&
				    h.blkno == (uint64_t)fs_fsb_to_daddr(g, fsb))
					read_leaf(&r, buf);
			}
		if (err == -ENOMEM)
			r.err = err;
		fs_bmap_free(&m);
		free(buf);
	}
	fs_buf_put(rx->sx->cache, b);
	return r.err;
}
