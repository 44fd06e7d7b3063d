// SPDX-License-Identifier: GPL-2.0
/*
 * --paths: every path of every inode, from one map of links (child,
 * parent directory, name) built before the records are written.  On an
 * unmounted filesystem with parent pointers the map is every inode's
 * parent pointer xattrs (short form in the inode, leaf blocks read through
 * the attr fork's block map); without them it is one walk of every
 * directory (libfs's directory walker); on a mounted filesystem, one walk
 * of the mounted tree (readdir, not crossing into other mounts).  A path
 * is its link's name under its parent's path, up to the root; the map
 * holds each link once (24 bytes and its name), sorted by child, so a
 * hard-linked file gets every path and a directory its one.  Rendering
 * of the paths member/column for the three formats is here too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkstat/bulkstat.h"
#include "libfs/fs.h"
#include "libfs/format/attr.h"
#include "libfs/format/bmap.h"
#include "libfs/format/dir.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/pptr.h"
#include "libfs/format/verify.h"
#include "libfs/io/io.h"
#include "libfs/util/vec.h"

struct bs_link {
	uint64_t child, parent;
	uint32_t name;             /* offset in names */
	uint8_t namelen;
};

struct bs_paths {
	uint64_t root;
	struct bs_link *v;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
};

static int add_link(struct bs_paths *p, uint64_t child, uint64_t parent, const void *name,
		    size_t len)
{
	if (len == 0 || len > 255 || p->nnames + len > UINT32_MAX)
		return 0;
	if (FS_VEC_ROOM(p->v, p->n, p->cap, 1024))
		return -ENOMEM;
	while (p->nnames + len > p->capnames) {
		size_t cap = p->capnames ? p->capnames * 2 : 65536;
		char *n = realloc(p->names, cap);

		if (!n)
			return -ENOMEM;
		p->names = n;
		p->capnames = cap;
	}
	memcpy(p->names + p->nnames, name, len);
	p->v[p->n++] = (struct bs_link){ child, parent, (uint32_t)p->nnames, (uint8_t)len };
	p->nnames += len;
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct bs_link *x = a, *y = b;

	if (x->child != y->child)
		return x->child < y->child ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

void bs_paths_free(struct bs_paths *p)
{
	if (!p)
		return;
	free(p->v);
	free(p->names);
	free(p);
}

/* ---- offline: from parent pointers or from the directories ---- */

struct build {
	struct fs *fs;
	struct bs_paths *p;
	struct fs_findings scratch;  /* findings of the readers: not this tool's to report */
	unsigned char *blk;
	fs_ino_t ino;
	struct fs_bmap map;
	int err;
};

static int read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct build *b = priv;
	const struct fs_geom *g = &b->fs->g;

	if (!fs_fsb_valid(g, fsb))
		return -ERANGE;
	return fs_dev_read(b->fs->dev, buf, g->blocksize, fs_daddr_to_bytes(fs_fsb_to_daddr(g, fsb)));
}

static void forget_findings(struct build *b)
{
	fs_findings_clear(&b->scratch);
}

static void note_pptr(struct build *b, const struct fs_attr_ent *e)
{
	struct fs_pptr pp;

	if (!b->err && fs_attr_is_pptr(e) && fs_pptr_decode(&b->fs->g, e, &pp) == FS_PPTR_OK)
		b->err = add_link(b->p, b->ino, pp.parent, pp.name, pp.namelen);
}

static void sf_pptr(void *priv, const struct fs_attr_ent *e)
{
	note_pptr(priv, e);
}

/* Every leaf block of the attr fork that verifies: its parent pointers. */
static void attr_blocks_pptrs(struct build *b, const void *dip, const struct fs_inode *ip)
{
	const struct fs_geom *g = &b->fs->g;
	struct fs_bmap_ctx bc = { .g = g, .read_fsblock = read_fsblock, .priv = b };

	if (fs_bmap_load(&bc, dip, ip, XFS_ATTR_FORK, &b->map)) {
		b->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < b->map.n && !b->err; i++) {
		const struct fs_bmap_ext *x = &b->map.ext[i];

		for (uint64_t k = 0; k < x->blockcount && !b->err; k++) {
			fs_fsblock_t fsb = x->startblock + k;
			struct fs_vctx c = { .g = g, .fl = &b->scratch, .ino = b->ino,
					     .agno = fs_fsb_to_agno(g, fsb),
					     .daddr = fs_fsb_to_daddr(g, fsb) };
			struct fs_attr_leaf_hdr h;

			if (read_fsblock(b, fsb, b->blk) ||
			    get_be16(b->blk + offsetof(struct xfs_da_blkinfo, magic)) !=
			    XFS_ATTR3_LEAF_MAGIC)
				continue;
			/* LSNs are not judged: the log head is the kernel's business here */
			if (fs_verify(FS_MT_ATTR_LEAF, &c, b->blk, g->blocksize)) {
				bool only_lsn = true;

				for (size_t f = 0; f < b->scratch.n; f++)
					only_lsn &= !!(b->scratch.v[f].def->flags & FS_FL_LSN);
				forget_findings(b);
				if (!only_lsn)
					continue;
			}
			fs_attr_leaf_hdr_decode(b->blk, g->blocksize, &h);
			for (uint32_t e = 0; e < h.count; e++) {
				struct fs_attr_ent ent;

				if (fs_attr_leaf_entry(b->blk, g->blocksize, &h, e, &ent))
					note_pptr(b, &ent);
			}
		}
	}
	fs_bmap_free(&b->map);
	b->map = (struct fs_bmap){ 0 };
}

static int dir_entry(void *priv, const struct fs_dirent *d)
{
	struct build *b = priv;

	return add_link(b->p, d->ino, b->ino, d->name, d->namelen);
}

static int read_dirblk(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr)
{
	struct build *b = priv;
	const struct fs_geom *g = &b->fs->g;

	for (uint32_t i = 0; i < g->dirblkfsbs; i++) {
		fs_fsblock_t fsb;
		int err;

		if (!fs_bmap_fsb(g, &b->map, dablk + i, &fsb))
			return -ENODATA;
		if (i == 0)
			*daddr = fs_fsb_to_daddr(g, fsb);
		err = read_fsblock(b, fsb, (unsigned char *)buf + ((size_t)i << g->blocklog));
		if (err)
			return err;
	}
	return 0;
}

static void dir_links(struct build *b, const void *dip, const struct fs_inode *ip)
{
	const struct fs_geom *g = &b->fs->g;
	struct fs_dir_ctx dc = { .g = g, .fl = &b->scratch, .ino = b->ino,
				 .agno = fs_ino_to_agno(g, b->ino), .read = read_dirblk,
				 .entry = dir_entry, .priv = b };
	struct fs_bmap_ctx bc = { .g = g, .read_fsblock = read_fsblock, .priv = b };
	int n;

	if (ip->format == XFS_DINODE_FMT_LOCAL) {
		n = fs_dir_sf_walk(&dc, fs_inode_fork_ptr(dip, ip, XFS_DATA_FORK),
				   fs_inode_fork_size(g, ip, XFS_DATA_FORK), ip->size);
	} else {
		n = fs_bmap_load(&bc, dip, ip, XFS_DATA_FORK, &b->map);
		if (!n)
			n = fs_dir_walk(&dc, &b->map, ip->size);
		fs_bmap_free(&b->map);
		b->map = (struct fs_bmap){ 0 };
	}
	if (n < 0 && !b->err)
		b->err = n;
}

static int on_inode(void *priv, const struct fs_inode_scan_item *it)
{
	struct build *b = priv;
	const struct fs_geom *g = &b->fs->g;
	struct fs_vctx vc = { .g = g, .fl = &b->scratch, .agno = it->agno, .ino = it->ino,
			      .daddr = fs_ino_to_daddr(g, it->ino) };
	struct fs_inode ip;
	bool bad;

	if (!it->dinode)
		return 0;
	bad = fs_verify(FS_MT_INODE, &vc, it->dinode, g->inodesize) > 0;
	for (size_t f = 0; bad && f < b->scratch.n; f++)
		bad = !(b->scratch.v[f].def->flags & FS_FL_LSN);
	forget_findings(b);
	if (bad)
		return 0;	/* the record's engine says it is damaged */
	fs_inode_decode(it->dinode, &ip);
	if (ip.mode == 0)
		return 0;
	b->ino = it->ino;
	if (g->parent) {
		if (ip.forkoff && ip.aformat == XFS_DINODE_FMT_LOCAL)
			fs_attr_sf_verify(&vc, fs_inode_fork_ptr(it->dinode, &ip, XFS_ATTR_FORK),
					  fs_inode_fork_size(g, &ip, XFS_ATTR_FORK), sf_pptr, b);
		else if (ip.forkoff && ip.anextents)
			attr_blocks_pptrs(b, it->dinode, &ip);
	} else if (S_ISDIR(ip.mode)) {
		dir_links(b, it->dinode, &ip);
	}
	forget_findings(b);
	return b->err;
}

int bs_paths_build_offline(struct fs *fs, struct bs_paths **out)
{
	struct build b = { .fs = fs };
	struct fs_inode_scan *scan = NULL;
	struct fs_findings fl;
	int err;

	*out = NULL;
	b.p = calloc(1, sizeof(*b.p));
	b.blk = malloc((size_t)fs->g.dirblksize > fs->g.blocksize ? fs->g.dirblksize :
		       fs->g.blocksize);
	fs_findings_init(&b.scratch);
	fs_findings_init(&fl);
	err = b.p && b.blk ? fs_inode_scan_create(fs, NULL, &scan) : -ENOMEM;
	for (fs_agnumber_t a = 0; !err && a < fs->g.agcount; a++) {
		err = fs_inode_scan_ag_range(scan, a, 0, 0, NULLAGINO, &fl, on_inode, &b);
		if (err == -EUCLEAN)
			err = 0;	/* the records' own pass says the AG cannot be listed */
	}
	fs_inode_scan_destroy(scan);
	fs_findings_free(&fl);
	fs_findings_free(&b.scratch);
	free(b.blk);
	if (err) {
		bs_paths_free(b.p);
		return err < 0 ? err : -EIO;
	}
	b.p->root = fs->g.rootino;
	qsort(b.p->v, b.p->n, sizeof(*b.p->v), cmp_link);
	*out = b.p;
	return 0;
}

/* ---- online: the mounted tree ---- */

static int walk_dir(struct bs_paths *p, int dfd, uint64_t dino, dev_t dev, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int err = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		struct stat st;
		int cfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		err = add_link(p, de->d_ino, dino, de->d_name, strlen(de->d_name));
		if (err || de->d_type != DT_DIR || depth > 4096)
			continue;
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;	/* gone since, or not ours to read: its files get no path */
		if (fstat(cfd, &st) || st.st_dev != dev) {
			close(cfd);	/* another filesystem mounted here */
			continue;
		}
		err = walk_dir(p, cfd, st.st_ino, dev, depth + 1);
	}
	closedir(d);
	return err;
}

int bs_paths_build_online(const char *mnt, struct bs_paths **out)
{
	struct bs_paths *p = calloc(1, sizeof(*p));
	struct stat st;
	int fd, err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		bs_paths_free(p);
		return err;
	}
	p->root = st.st_ino;
	err = walk_dir(p, fd, st.st_ino, st.st_dev, 0);
	if (err) {
		bs_paths_free(p);
		return err;
	}
	qsort(p->v, p->n, sizeof(*p->v), cmp_link);
	*out = p;
	return 0;
}

/* ---- paths and their rendering ---- */

static const struct bs_link *first_link(const struct bs_paths *p, uint64_t ino, size_t *n)
{
	size_t lo = 0, hi = p->n, e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].child < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (e = lo; e < p->n && p->v[e].child == ino; e++)
		;
	*n = e - lo;
	return *n ? &p->v[lo] : NULL;
}

static int buf_put(struct bs_buf *b, const void *s, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n)
			return -ENOMEM;
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	return 0;
}

/*
 * The path of link l into path (bytes, not terminated): its ancestors'
 * names from the root down.  A chain that does not reach the root (a
 * directory with no link known, or a loop) starts "?INO" naming the
 * topmost directory reached.
 */
static int link_path(const struct bs_paths *p, const struct bs_link *l, struct bs_buf *path)
{
	const struct bs_link *chain[4096];
	unsigned depth = 0;
	uint64_t top;

	path->len = 0;
	for (;;) {
		size_t n;

		chain[depth++] = l;
		top = l->parent;
		if (top == p->root || depth == sizeof(chain) / sizeof(chain[0]))
			break;
		l = first_link(p, top, &n);
		if (!l)
			break;
	}
	if (top != p->root) {
		char t[32];
		int k = snprintf(t, sizeof(t), "?%llu", (unsigned long long)top);

		if (buf_put(path, t, (size_t)k))
			return -ENOMEM;
	}
	while (depth--) {
		if (buf_put(path, "/", 1) ||
		    buf_put(path, p->names + chain[depth]->name, chain[depth]->namelen))
			return -ENOMEM;
	}
	return 0;
}

/* One byte sequence of valid UTF-8 at s (its length), or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	size_t n = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;

	if (!n || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* JSON string contents: '"', '\\' and control bytes escaped, bytes that are not UTF-8 as \u00XX. */
static int put_json(struct bs_buf *b, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	int err = 0;

	for (size_t i = 0; i < len && !err;) {
		char t[8];
		size_t n;

		if (u[i] == '"' || u[i] == '\\') {
			t[0] = '\\';
			t[1] = (char)u[i];
			err = buf_put(b, t, 2);
			i++;
		} else if (u[i] >= 0x20 && u[i] < 0x7f) {
			err = buf_put(b, s + i, 1);
			i++;
		} else if (u[i] >= 0x80 && (n = utf8_len(u + i, len - i))) {
			err = buf_put(b, s + i, n);
			i += n;
		} else {
			snprintf(t, sizeof(t), "\\u%04x", u[i]);
			err = buf_put(b, t, 6);
			i++;
		}
	}
	return err;
}

/* CSV field contents: '"' doubled (the field is quoted). */
static int put_csv(struct bs_buf *b, const char *s, size_t len)
{
	int err = 0;

	for (size_t i = 0; i < len && !err; i++)
		err = s[i] == '"' ? buf_put(b, "\"\"", 2) : buf_put(b, s + i, 1);
	return err;
}

struct span {
	size_t off, len;
	const char *base;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = memcmp(x->base + x->off, y->base + y->off, x->len < y->len ? x->len : y->len);

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

int bs_paths_render(const struct bs_paths *p, enum bs_format fmt, uint64_t ino,
		    struct bs_buf *out, struct bs_buf *scratch)
{
	size_t n = 0;
	const struct bs_link *l = first_link(p, ino, &n);
	struct bs_buf one = { 0 };
	struct span *sp = NULL;
	int err;

	switch (fmt) {
	case BS_JSONL: err = buf_put(out, ",\"paths\":[", 10); break;
	case BS_CSV:   err = buf_put(out, ",\"", 2); break;
	default:       err = buf_put(out, " paths=\"", 8); break;
	}
	if (!err && ino == p->root) {
		err = fmt == BS_JSONL ? buf_put(out, "\"/\"", 3) : buf_put(out, "/", 1);
		n = 0;
	}
	/* every path into scratch, then in byte order: the same whatever order the links came in */
	scratch->len = 0;
	if (n && !err)
		sp = malloc(n * sizeof(*sp));
	if (n && !sp)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		err = link_path(p, &l[i], &one);
		sp[i].off = scratch->len;
		sp[i].len = one.len;
		if (!err)
			err = buf_put(scratch, one.p, one.len);
	}
	for (size_t i = 0; i < n && !err; i++)
		sp[i].base = scratch->p;
	if (!err && n > 1)
		qsort(sp, n, sizeof(*sp), cmp_span);
	for (size_t i = 0; i < n && !err; i++) {
		const char *s = scratch->p + sp[i].off;

		if (fmt == BS_JSONL) {
			err = buf_put(out, i ? ",\"" : "\"", i ? 2 : 1);
			if (!err)
				err = put_json(out, s, sp[i].len);
			if (!err)
				err = buf_put(out, "\"", 1);
		} else {
			/* no path holds "//": it parts them */
			if (i)
				err = buf_put(out, "//", 2);
			if (!err)
				err = put_csv(out, s, sp[i].len);
		}
	}
	free(sp);
	free(one.p);
	if (!err)
		err = fmt == BS_JSONL ? buf_put(out, "]}\n", 3) : buf_put(out, "\"\n", 2);
	return err;
}

int bs_record_with_paths(const struct bs_output *o, const struct bs_paths *p,
			 const struct xfs_bulkstat *bs, struct bs_buf *out, struct bs_buf *scratch)
{
	char rec[BS_MAX_RECORD];
	size_t n = bs_format_record(o, bs, rec);

	/* the record without its end ("}\n" or "\n"), the paths after it */
	n -= o->format == BS_JSONL ? 2 : 1;
	out->len = 0;
	if (buf_put(out, rec, n))
		return -ENOMEM;
	return bs_paths_render(p, o->format, bs->bs_ino, out, scratch);
}
