// SPDX-License-Identifier: GPL-2.0
/*
 * xfsx_mkfs -p's sources: a directory tree read with lstat/statx, readdir,
 * readlink and the xattr calls (hard links found by device and inode
 * number, names sorted so the result does not depend on readdir order),
 * or an mkfs.xfs protofile parsed token by token (errors name the line and
 * column).  Both produce the same in-memory tree (proto.h); nothing is
 * written here.
 */
#include "mkfs/proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int terr(char *err, size_t el, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int terr(char *err, size_t el, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, el, fmt, ap);
	va_end(ap);
	return -1;
}

static int new_inode(struct proto_tree *t, uint32_t *idx)
{
	if (t->n == t->cap) {
		/* the inode region holds v alone: it grows in place, so by steps, not doubling */
		uint32_t cap = t->cap < UINT32_MAX - 65536 ? t->cap + 65536 : UINT32_MAX;
		struct proto_inode *v;

		if (cap == t->cap)
			return -ENOMEM;
		v = fs_arena_realloc(&t->ar, PROTO_AR_INODES, t->v, (size_t)t->cap * sizeof(*v),
				     (size_t)cap * sizeof(*v), 64);
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	fs_arena_tick(&t->ar);
	*idx = t->n++;
	return 0;
}

_Static_assert(sizeof(struct proto_inode) <= 192, "struct proto_inode grew: see proto.h");

/* A NUL-terminated copy of s[0..len) in t's arena; NULL out of memory. */
static char *pool_str(struct proto_tree *t, const char *s, size_t len)
{
	char *p = fs_arena_alloc(&t->ar, PROTO_AR_HEAP, len + 1, 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = 0;
	return p;
}

/* A copy of n bytes in t's arena; NULL out of memory. */
static void *pool_dup(struct proto_tree *t, const void *v, size_t n)
{
	void *p = fs_arena_alloc(&t->ar, PROTO_AR_HEAP, n ? n : 1, 8);

	if (p && n)
		memcpy(p, v, n);
	return p;
}

/*
 * The xattrs read into malloc'd memory (read_xattrs) moved into the arena;
 * the malloc'd ones freed either way.  0 or -ENOMEM.
 */
static int move_xattrs(struct proto_tree *t, struct proto_inode *in)
{
	struct proto_xattr *v = NULL;
	int rc = 0;

	if (in->nxattrs)
		v = pool_dup(t, in->xattrs, (size_t)in->nxattrs * sizeof(*v));
	for (uint32_t k = 0; k < in->nxattrs; k++) {
		if (v) {
			v[k].name = pool_str(t, in->xattrs[k].name, in->xattrs[k].namelen);
			v[k].value = pool_dup(t, in->xattrs[k].value, in->xattrs[k].valuelen);
			if (!v[k].name || !v[k].value)
				rc = -ENOMEM;
		}
		free(in->xattrs[k].name);
		free(in->xattrs[k].value);
	}
	free(in->xattrs);
	if (in->nxattrs && !v)
		rc = -ENOMEM;
	in->xattrs = rc ? NULL : v;
	if (rc)
		in->nxattrs = 0;
	return rc;
}

static uint32_t name_hash(const char *name, size_t len);

/* The pool's copy of path, one per distinct path (a protofile's sources); NULL out of memory. */
static char *pool_src(struct proto_tree *t, const char *path)
{
	size_t len = strlen(path), i;

	if (2 * (t->src_n + 1) > t->src_cap) {
		size_t cap = t->src_cap ? 2 * t->src_cap : 1024;
		char **nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return NULL;
		for (size_t j = 0; j < t->src_cap; j++) {
			if (!t->src_set[j])
				continue;
			i = name_hash(t->src_set[j], strlen(t->src_set[j])) & (cap - 1);
			while (nv[i])
				i = (i + 1) & (cap - 1);
			nv[i] = t->src_set[j];
		}
		free(t->src_set);
		t->src_set = nv;
		t->src_cap = cap;
	}
	i = name_hash(path, len) & (t->src_cap - 1);
	for (; t->src_set[i]; i = (i + 1) & (t->src_cap - 1))
		if (!strcmp(t->src_set[i], path))
			return t->src_set[i];
	t->src_set[i] = pool_str(t, path, len);
	if (t->src_set[i])
		t->src_n++;
	return t->src_set[i];
}

static int add_dent(struct proto_tree *t, struct proto_inode *dir, uint32_t child, const char *name,
		    size_t len)
{
	if (dir->nents == dir->capents) {
		uint32_t cap = dir->capents ? dir->capents * 2 : 8;
		struct proto_dent *v = fs_arena_realloc(&t->ar, PROTO_AR_HEAP, dir->ents,
							(size_t)dir->capents * sizeof(*v),
							(size_t)cap * sizeof(*v), 8);

		if (!v)
			return -ENOMEM;
		dir->ents = v;
		dir->capents = cap;
	}
	dir->ents[dir->nents].name = pool_str(t, name, len);
	if (!dir->ents[dir->nents].name)
		return -ENOMEM;
	dir->ents[dir->nents].namelen = (uint8_t)len;
	dir->ents[dir->nents].child = child;
	dir->nents++;
	return 0;
}

void proto_free(struct proto_tree *t)
{
	/* everything the tree holds is in the arena, but the protofile's path set */
	fs_arena_close(&t->ar);
	free(t->src_set);
	memset(t, 0, sizeof(*t));
}

int proto_nomem(const struct proto_tree *t, char *err, size_t el)
{
	if (t->ar.err && t->ar.err != -ENOMEM)
		snprintf(err, el, "the temporary directory %s cannot hold the tree: %s", t->ar.dir,
			 strerror(-t->ar.err));
	else if (t->ar.err)
		snprintf(err, el, "out of memory (the tree outgrew its arena in %s)", t->ar.dir);
	else
		snprintf(err, el, "out of memory");
	return -1;
}

int proto_reserve(struct proto_tree *t, bool parent, char *err, size_t el)
{
	/*
	 * Per inode, generously: a chunk slot (4), rmap records (24, twice for
	 * the doubling), an extent list (16 a extent, most files one), the
	 * parent pointer links (12); the scratch: the placement queue and the
	 * rmap records encoded per AG.
	 */
	size_t heap = (size_t)t->n * (4 + 48 + 32 + (parent ? 24 : 0)) + ((size_t)1 << 20);
	size_t scratch = (size_t)t->n * 32 + ((size_t)1 << 20);

	if (fs_arena_reserve(&t->ar, PROTO_AR_HEAP, heap) ||
	    fs_arena_reserve(&t->ar, PROTO_AR_SCRATCH, scratch))
		return proto_nomem(t, err, el);
	return 0;
}

/* ---- directory source ---- */

/* Hard links: (dev, ino) of sources with more than one link, to their inode index. */
struct linkmap {
	struct lm_ent { uint64_t dev, ino; uint32_t idx; bool used; } *v;
	size_t cap, n;
};

static uint32_t *lm_find(struct linkmap *m, uint64_t dev, uint64_t ino, bool *found)
{
	size_t h;

	if (m->n * 2 >= m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct lm_ent *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].used) {
				size_t j = (m->v[i].ino * 0x9e3779b97f4a7c15ull ^ m->v[i].dev) & (cap - 1);

				while (v[j].used)
					j = (j + 1) & (cap - 1);
				v[j] = m->v[i];
			}
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	h = (ino * 0x9e3779b97f4a7c15ull ^ dev) & (m->cap - 1);
	while (m->v[h].used) {
		if (m->v[h].dev == dev && m->v[h].ino == ino) {
			*found = true;
			return &m->v[h].idx;
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->v[h].used = true;
	m->v[h].dev = dev;
	m->v[h].ino = ino;
	m->n++;
	*found = false;
	return &m->v[h].idx;
}

/* POSIX ACL xattr (linux format) to the XFS on-disk ACL stored as trusted SGI_ACL_*. */
static int acl_to_xfs(const unsigned char *v, size_t len, unsigned char **out, uint32_t *outlen)
{
	size_t n;
	unsigned char *x;

	if (len < 4 || (len - 4) % 8 || v[0] != 2 || v[1] || v[2] || v[3])
		return -EINVAL;
	n = (len - 4) / 8;
	x = calloc(1, 4 + n * 12);
	if (!x)
		return -ENOMEM;
	x[0] = (unsigned char)(n >> 24);
	x[1] = (unsigned char)(n >> 16);
	x[2] = (unsigned char)(n >> 8);
	x[3] = (unsigned char)n;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = v + 4 + i * 8;
		unsigned tag = e[0] | e[1] << 8, perm = e[2] | e[3] << 8;
		uint32_t id = (uint32_t)e[4] | (uint32_t)e[5] << 8 | (uint32_t)e[6] << 16 |
			      (uint32_t)e[7] << 24;
		unsigned char *d = x + 4 + i * 12;

		/* ACL_USER (2) and ACL_GROUP (8) carry an id; the others ACL_UNDEFINED_ID */
		if (tag != 2 && tag != 8)
			id = 0xffffffffu;
		d[0] = 0; d[1] = 0; d[2] = (unsigned char)(tag >> 8); d[3] = (unsigned char)tag;
		d[4] = (unsigned char)(id >> 24); d[5] = (unsigned char)(id >> 16);
		d[6] = (unsigned char)(id >> 8); d[7] = (unsigned char)id;
		d[8] = (unsigned char)(perm >> 8); d[9] = (unsigned char)perm;
	}
	*out = x;
	*outlen = (uint32_t)(4 + n * 12);
	return 0;
}

/* at: the name the xattr calls use (relative to the working directory); path: for messages */
static int read_xattrs(struct proto_inode *in, bool *warned, const char *at, const char *path,
		       char *err, size_t el)
{
	ssize_t len = llistxattr(at, NULL, 0);
	char *names;

	if (len < 0)
		return errno == ENOTSUP || errno == ENOSYS ? 0 :
		       terr(err, el, "cannot list the xattrs of %s: %s", path, strerror(errno));
	if (len == 0)
		return 0;
	names = malloc((size_t)len);
	if (!names)
		return terr(err, el, "out of memory");
	len = llistxattr(at, names, (size_t)len);
	if (len < 0) {
		free(names);
		return terr(err, el, "cannot list the xattrs of %s: %s", path, strerror(errno));
	}
	/*
	 * An XFS source lists an ACL twice to root: as system.posix_acl_* and as
	 * the trusted.SGI_ACL_* it is stored as.  Keep the first (converted) one.
	 */
	bool acl_a = false, acl_d = false;

	for (char *nm = names; nm < names + len; nm += strlen(nm) + 1) {
		acl_a |= !strcmp(nm, "system.posix_acl_access");
		acl_d |= !strcmp(nm, "system.posix_acl_default");
	}
	for (char *nm = names; nm < names + len; nm += strlen(nm) + 1) {
		struct proto_xattr x = { 0 };

		if ((acl_a && !strcmp(nm, "trusted.SGI_ACL_FILE")) ||
		    (acl_d && !strcmp(nm, "trusted.SGI_ACL_DEFAULT")))
			continue;
		const char *rest;
		ssize_t vl;
		unsigned char *val;

		if (!strncmp(nm, "user.", 5)) {
			rest = nm + 5;
		} else if (!strncmp(nm, "trusted.", 8)) {
			rest = nm + 8;
			x.flags = XFS_ATTR_ROOT;
		} else if (!strncmp(nm, "security.", 9)) {
			rest = nm + 9;
			x.flags = XFS_ATTR_SECURE;
		} else if (!strcmp(nm, "system.posix_acl_access")) {
			rest = "SGI_ACL_FILE";
			x.flags = XFS_ATTR_ROOT;
		} else if (!strcmp(nm, "system.posix_acl_default")) {
			rest = "SGI_ACL_DEFAULT";
			x.flags = XFS_ATTR_ROOT;
		} else {
			if (!__atomic_exchange_n(warned, true, __ATOMIC_RELAXED))
				fprintf(stderr, "xfsx_mkfs: warning: %s: xattr %s has no XFS namespace; "
					"not copied (said once)\n", path, nm);
			continue;
		}
		if (!*rest || strlen(rest) > 255) {
			free(names);
			return terr(err, el, "%s: xattr name %s is empty or longer than 255 bytes",
				    path, nm);
		}
		vl = lgetxattr(at, nm, NULL, 0);
		if (vl < 0) {
			free(names);
			return terr(err, el, "cannot read xattr %s of %s: %s", nm, path,
				    strerror(errno));
		}
		val = malloc((size_t)vl + 1);
		if (!val || (vl = lgetxattr(at, nm, val, (size_t)vl)) < 0) {
			free(val);
			free(names);
			return terr(err, el, "cannot read xattr %s of %s: %s", nm, path,
				    strerror(errno));
		}
		if (!strncmp(nm, "system.", 7)) {
			unsigned char *xv;
			uint32_t xl;

			if (acl_to_xfs(val, (size_t)vl, &xv, &xl)) {
				free(val);
				free(names);
				return terr(err, el, "%s: %s is not a POSIX ACL this version knows", path,
					    nm);
			}
			free(val);
			val = xv;
			vl = xl;
		}
		if (vl > 65536) {
			free(val);
			free(names);
			return terr(err, el, "%s: xattr %s is larger than XFS stores", path, nm);
		}
		x.name = strdup(rest);
		x.namelen = (uint8_t)strlen(rest);
		x.value = val;
		x.valuelen = (uint32_t)vl;
		{
			struct proto_xattr *nv = realloc(in->xattrs, (in->nxattrs + 1) * sizeof(*nv));

			if (!nv || !x.name) {
				free(x.name);
				free(val);
				free(names);
				return terr(err, el, "out of memory");
			}
			in->xattrs = nv;
			in->xattrs[in->nxattrs++] = x;
		}
	}
	free(names);
	return 0;
}

static void stat_times(struct proto_inode *in, const struct statx *sx)
{
	proto_set_time(in, 0, sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec);
	proto_set_time(in, 1, sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec);
	proto_set_time(in, 2, sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec);
	if (sx->stx_mask & STATX_BTIME)
		proto_set_time(in, 3, sx->stx_btime.tv_sec, sx->stx_btime.tv_nsec);
	else
		proto_set_time(in, 3, in->tsec[2], in->tnsec[2]);
}

/*
 * -p DIR is read in two steps.  First the directories are scanned, each
 * by one thread of a small pool (a directory at a time per thread, so no
 * two threads look up names in one directory: that contends on its
 * dentry): readdir, the names sorted, statx, readlink and the xattr calls
 * for each entry, and the subdirectories queued for the pool.  Then one
 * thread walks the result depth first, in name order, and builds the tree:
 * inode indexes, hard links (by device and inode number), link counts,
 * and the first error met in that order, so the tree and the error do not
 * depend on which thread scanned what.
 *
 * Entries are looked up by their names in the directory, not by full
 * paths: statx and readlink relative to the directory's descriptor, the
 * xattr calls (which have no such form in glibc) relative to the working
 * directory, which the scanning thread moves into the directory (each
 * pool thread has its own working directory: unshare(CLONE_FS)).  A full
 * path costs a lookup per component, and three calls per entry.
 */
struct sdir;

/* One entry as the scan found it. */
struct sent {
	char *name;
	size_t len;
	struct proto_inode in;     /* what statx, readlink and the xattr calls gave */
	uint64_t dev, ino, nlink;  /* of the source: hard links */
	struct sdir *sub;          /* a directory: its scan */
	char *err;                 /* what failed at this entry (the scan of its directory
				    * stopped there), or NULL */
	bool late;                 /* err came after statx: a second name of a hard link
				    * has nothing more read, so it does not count there */
};

struct sdir {
	char *path;                /* as given (relative to the caller's working directory) */
	bool follow;               /* the root: may be reached through a symlink */
	struct sent *e;
	size_t n;
	char *err;                 /* the directory could not be read */
};

struct scan {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sdir **q;           /* directories to scan */
	size_t nq, capq, active;
	int cwd;                   /* the caller's working directory */
	bool warned;               /* the "no XFS namespace" warning was given */
	bool nomem;
	/*
	 * The entries, their names and source paths go to the tree's arena
	 * (the scan of a large tree is as large as the tree), one thread at a
	 * time: alock.
	 */
	struct fs_arena *ar;
	pthread_mutex_t alock;
};

static void nomem(struct scan *s)
{
	__atomic_store_n(&s->nomem, true, __ATOMIC_RELAXED);
}

/* A copy of old[0..oldlen) in newlen bytes of the arena (old: NULL or the arena's); NULL: nomem. */
static void *scan_realloc(struct scan *s, void *old, size_t oldlen, size_t newlen)
{
	void *p;

	pthread_mutex_lock(&s->alock);
	p = fs_arena_realloc(s->ar, PROTO_AR_HEAP, old, oldlen, newlen, 8);
	pthread_mutex_unlock(&s->alock);
	if (!p)
		nomem(s);
	return p;
}

/* A NUL-terminated copy of str[0..len) in the arena; NULL: nomem. */
static char *scan_str(struct scan *s, const char *str, size_t len)
{
	char *p;

	pthread_mutex_lock(&s->alock);
	p = fs_arena_alloc(s->ar, PROTO_AR_HEAP, len + 1, 1);
	pthread_mutex_unlock(&s->alock);
	if (!p) {
		nomem(s);
		return NULL;
	}
	memcpy(p, str, len);
	p[len] = 0;
	return p;
}

/* A message for err into *where (a copy); the scan goes on without one when memory is out. */
static void scan_err(struct scan *s, char **where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void scan_err(struct scan *s, char **where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(where, fmt, ap) < 0) {
		*where = NULL;
		nomem(s);
	}
	va_end(ap);
}

static int cmp_sent(const void *a, const void *b)
{
	return strcmp(((const struct sent *)a)->name, ((const struct sent *)b)->name);
}

static void sdir_free(struct sdir *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		struct sent *e = &d->e[i];

		/* the name, the source path or target and d->e are the arena's */
		for (uint32_t k = 0; k < e->in.nxattrs; k++) {
			free(e->in.xattrs[k].name);
			free(e->in.xattrs[k].value);
		}
		free(e->in.xattrs);
		free(e->err);
		sdir_free(e->sub);
	}
	free(d->path);
	free(d->err);
	free(d);
}

static int scan_push(struct scan *s, struct sdir *d)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (s->nq == s->capq) {
		size_t cap = s->capq ? s->capq * 2 : 64;
		struct sdir **v = realloc(s->q, cap * sizeof(*v));

		if (v) {
			s->q = v;
			s->capq = cap;
		}
	}
	if (s->nq < s->capq) {
		s->q[s->nq++] = d;
		pthread_cond_signal(&s->cond);
	} else {
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* One entry of directory d (descriptor dfd, the working directory): statx, readlink, xattrs. */
static void scan_entry(struct scan *s, struct sdir *d, int dfd, struct sent *e)
{
	struct proto_inode *in = &e->in;
	struct statx sx;
	char msg[512];
	char *full;

	if (e->len > 255) {
		scan_err(s, &e->err, "%s/%s: name longer than 255 bytes", d->path, e->name);
		return;
	}
	if (asprintf(&full, "%s/%s", d->path, e->name) < 0) {
		nomem(s);
		return;
	}
	if (statx(dfd, e->name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx)) {
		scan_err(s, &e->err, "cannot stat %s: %s", full, strerror(errno));
		free(full);
		return;
	}
	e->late = true;
	e->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	e->ino = sx.stx_ino;
	e->nlink = sx.stx_nlink;
	in->mode = sx.stx_mode;
	in->uid = sx.stx_uid;
	in->gid = sx.stx_gid;
	stat_times(in, &sx);
	switch (sx.stx_mode & S_IFMT) {
	case S_IFREG:
		in->size = sx.stx_size;
		in->src_blocks = sx.stx_blocks;
		in->src = scan_str(s, full, strlen(full));
		if (!in->src) {
			free(full);
			return;
		}
		break;
	case S_IFLNK: {
		char buf[XFS_SYMLINK_MAXLEN + 1];
		ssize_t n = readlinkat(dfd, e->name, buf, sizeof(buf));

		if (n < 0 || n > XFS_SYMLINK_MAXLEN) {
			if (n < 0)
				scan_err(s, &e->err, "cannot read symlink %s: %s", full, strerror(errno));
			else
				scan_err(s, &e->err, "symlink %s: target longer than %d bytes", full,
					 XFS_SYMLINK_MAXLEN);
			free(full);
			return;
		}
		in->src = scan_str(s, buf, (size_t)n);
		if (!in->src) {
			free(full);
			return;
		}
		in->srclen = (uint32_t)n;
		in->size = (uint64_t)n;
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
		in->rdev = (sx.stx_rdev_major << 18) | (sx.stx_rdev_minor & 0x3ffff);
		break;
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFDIR:
		break;
	default:
		scan_err(s, &e->err, "%s: file type %#o cannot be stored", full,
			 sx.stx_mode & S_IFMT);
		free(full);
		return;
	}
	if (read_xattrs(in, &s->warned, e->name, full ? full : in->src, msg, sizeof(msg))) {
		scan_err(s, &e->err, "%s", msg);
	} else if (S_ISDIR(sx.stx_mode)) {
		/* queued whole: another thread may take it at once */
		e->sub = calloc(1, sizeof(*e->sub));
		if (e->sub)
			e->sub->path = full;
		if (!e->sub || scan_push(s, e->sub)) {
			free(e->sub);
			e->sub = NULL;
			nomem(s);
		} else {
			full = NULL;
		}
	}
	free(full);
}

/* Directory d: its names, sorted, and each entry scanned until the first that fails. */
static void scan_one(struct scan *s, struct sdir *d)
{
	int dfd = openat(s->cwd, d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			 (d->follow ? 0 : O_NOFOLLOW));
	DIR *dir = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *de;
	size_t cap = 0;

	if (!dir) {
		scan_err(s, &d->err, "cannot read directory %s: %s", d->path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return;
	}
	if (fchdir(dfd)) {
		scan_err(s, &d->err, "cannot enter directory %s: %s", d->path, strerror(errno));
		goto out;
	}
	errno = 0;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (d->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct sent *v = scan_realloc(s, d->e, cap * sizeof(*v), ncap * sizeof(*v));

			if (!v)
				goto out;
			d->e = v;
			cap = ncap;
		}
		memset(&d->e[d->n], 0, sizeof(d->e[0]));
		d->e[d->n].len = strlen(de->d_name);
		d->e[d->n].name = scan_str(s, de->d_name, d->e[d->n].len);
		if (!d->e[d->n++].name)
			goto out;
		errno = 0;
	}
	if (errno) {
		scan_err(s, &d->err, "cannot read directory %s: %s", d->path, strerror(errno));
		goto out;
	}
	if (d->n)
		qsort(d->e, d->n, sizeof(*d->e), cmp_sent);
	for (size_t i = 0; i < d->n && !__atomic_load_n(&s->nomem, __ATOMIC_RELAXED); i++) {
		struct sent *e = &d->e[i];

		scan_entry(s, d, dfd, e);
		/* past a failure nothing more counts, unless it may be a hard link's second name */
		if (e->err && !(e->late && !S_ISDIR(e->in.mode) && e->nlink > 1))
			d->n = i + 1;
	}
out:
	closedir(dir);
}

static void *scan_main(void *arg)
{
	struct scan *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		if (s->nq) {
			struct sdir *d = s->q[--s->nq];

			s->active++;
			pthread_mutex_unlock(&s->lock);
			scan_one(s, d);
			pthread_mutex_lock(&s->lock);
			if (!--s->active && !s->nq)
				pthread_cond_broadcast(&s->cond);
			continue;
		}
		if (!s->active)
			break;
		pthread_cond_wait(&s->cond, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* A pool thread: its own working directory first (else it leaves the work to the others). */
static void *scan_helper(void *arg)
{
	if (unshare(CLONE_FS))
		return NULL;
	return scan_main(arg);
}

/* The scanned directory d into t as the children of didx, depth first in name order. */
static int build_dir(struct proto_tree *t, struct linkmap *lm, struct sdir *d, uint32_t didx,
		     char *err, size_t el)
{
	if (d->err)
		return terr(err, el, "%s", d->err);
	for (size_t i = 0; i < d->n; i++) {
		struct sent *e = &d->e[i];
		uint32_t idx, *slot = NULL;
		bool found = false;

		if (e->err && !e->late)
			return terr(err, el, "%s", e->err);
		if (!S_ISDIR(e->in.mode) && e->nlink > 1) {
			slot = lm_find(lm, e->dev, e->ino, &found);
			if (!slot)
				return terr(err, el, "out of memory");
		}
		if (found) {
			t->v[*slot].nlink++;
			if (add_dent(t, &t->v[didx], *slot, e->name, e->len))
				return terr(err, el, "out of memory");
			continue;
		}
		if (e->err)
			return terr(err, el, "%s", e->err);
		if (new_inode(t, &idx) || add_dent(t, &t->v[didx], idx, e->name, e->len))
			return terr(err, el, "out of memory");
		if (slot)
			*slot = idx;
		/* the xattrs move to the tree (the source path or target is the arena's already) */
		t->v[idx] = e->in;
		memset(&e->in, 0, sizeof(e->in));
		if (move_xattrs(t, &t->v[idx]))
			return terr(err, el, "out of memory");
		t->v[idx].nlink = 1;
		t->v[idx].parent = didx;
		if (S_ISREG(t->v[idx].mode))
			t->data_bytes += t->v[idx].src_blocks * 512 < t->v[idx].size ?
					 t->v[idx].src_blocks * 512 : t->v[idx].size;
		if (S_ISDIR(t->v[idx].mode)) {
			int rc;

			t->v[didx].nlink++;
			t->v[idx].nlink = 2;
			if (!e->sub)
				return terr(err, el, "out of memory");
			rc = build_dir(t, lm, e->sub, idx, err, el);
			if (rc)
				return rc;
			/* what is left of it (names, messages) is not needed any more */
			sdir_free(e->sub);
			e->sub = NULL;
		}
	}
	return 0;
}

#define SCAN_THREADS_MAX 4

static int read_dir(const char *path, struct proto_tree *t, char *err, size_t el)
{
	struct scan s = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			  .ar = &t->ar, .alock = PTHREAD_MUTEX_INITIALIZER };
	struct linkmap lm = { 0 };
	struct sdir *top = calloc(1, sizeof(*top));
	pthread_t th[SCAN_THREADS_MAX];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nth = 0;
	struct statx sx;
	uint32_t root;
	int rc;

	if (!top || !(top->path = strdup(path))) {
		free(top);
		return terr(err, el, "out of memory");
	}
	top->follow = true;
	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS | STATX_BTIME, &sx)) {
		rc = terr(err, el, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if (new_inode(t, &root)) {
		rc = terr(err, el, "out of memory");
		goto out;
	}
	t->v[root].mode = sx.stx_mode;
	t->v[root].uid = sx.stx_uid;
	t->v[root].gid = sx.stx_gid;
	t->v[root].nlink = 2;
	stat_times(&t->v[root], &sx);
	rc = read_xattrs(&t->v[root], &s.warned, path, path, err, el);
	if (!rc && move_xattrs(t, &t->v[root]))
		rc = terr(err, el, "out of memory");
	if (rc)
		goto out;
	/* the scan moves this thread's working directory; the caller's relative paths need it back */
	s.cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s.cwd < 0) {
		rc = terr(err, el, "cannot open the working directory: %s", strerror(errno));
		goto out;
	}
	s.q = malloc(sizeof(*s.q));
	if (!s.q) {
		rc = terr(err, el, "out of memory");
		goto out;
	}
	s.q[s.nq++] = top;
	s.capq = 1;
	while (nth + 1 < (ncpu > 0 ? (unsigned long)ncpu : 1) && nth + 1 < SCAN_THREADS_MAX &&
	       !pthread_create(&th[nth], NULL, scan_helper, &s))
		nth++;
	scan_main(&s);
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (fchdir(s.cwd))
		rc = terr(err, el, "cannot return to the working directory: %s", strerror(errno));
	else if (s.nomem)
		rc = terr(err, el, "out of memory");
	else
		rc = build_dir(t, &lm, top, root, err, el);
out:
	t->warned_system_xattr = s.warned;
	if (s.cwd > 0)
		close(s.cwd);
	free(s.q);
	sdir_free(top);
	free(lm.v);
	return rc;
}

/* ---- protofile source ---- */

/*
 * The protofile is read through a window (LX_WINDOW bytes, larger only for
 * a longer token), not whole: a protofile of millions of lines is tens of
 * megabytes.  A token is valid until the next next_token.
 */
#define LX_WINDOW (64u << 10)

struct lexer {
	const char *path;
	FILE *f;
	char *buf;
	size_t len, pos, cap;      /* buf[0..len) read, pos the next byte */
	bool eof, failed;          /* failed: a read error or out of memory (the parse stops) */
	unsigned line, col;        /* of the current position */
	unsigned tline, tcol;      /* of the last token */
};

/*
 * More of the file into the window, keeping buf[*keep..len) (moved to the
 * front; *keep and pos follow): false at the end of the file.
 */
static bool lx_more(struct lexer *lx, size_t *keep)
{
	size_t n;

	if (lx->eof)
		return false;
	if (*keep) {
		memmove(lx->buf, lx->buf + *keep, lx->len - *keep);
		lx->len -= *keep;
		lx->pos -= *keep;
		*keep = 0;
	}
	if (lx->len == lx->cap) {
		size_t cap = lx->cap ? lx->cap * 2 : LX_WINDOW;
		char *nb = realloc(lx->buf, cap);

		if (!nb) {
			lx->eof = lx->failed = true;
			return false;
		}
		lx->buf = nb;
		lx->cap = cap;
	}
	n = fread(lx->buf + lx->len, 1, lx->cap - lx->len, lx->f);
	lx->len += n;
	if (!n) {
		lx->eof = true;
		lx->failed = ferror(lx->f) != 0;
		return false;
	}
	return true;
}

/* A byte at pos (the window refilled when needed), keeping buf[*keep..) */
static bool lx_have(struct lexer *lx, size_t *keep)
{
	return lx->pos < lx->len || lx_more(lx, keep);
}

/* The next whitespace-separated token; ':' starts a comment to the end of the line. */
static const char *next_token(struct lexer *lx, size_t *len)
{
	size_t k;

	for (;;) {
		while ((k = lx->pos, lx_have(lx, &k)) &&
		       (lx->buf[lx->pos] == ' ' || lx->buf[lx->pos] == '\t' ||
			lx->buf[lx->pos] == '\n' || lx->buf[lx->pos] == '\r')) {
			if (lx->buf[lx->pos] == '\n') {
				lx->line++;
				lx->col = 1;
			} else {
				lx->col++;
			}
			lx->pos++;
		}
		if ((k = lx->pos, lx_have(lx, &k)) && lx->buf[lx->pos] == ':') {
			while ((k = lx->pos, lx_have(lx, &k)) && lx->buf[lx->pos] != '\n')
				lx->pos++;
			continue;
		}
		break;
	}
	lx->tline = lx->line;
	lx->tcol = lx->col;
	if (k = lx->pos, !lx_have(lx, &k))
		return NULL;
	{
		size_t s = lx->pos;

		/* the token's bytes are kept (s follows them) when the window moves */
		while (lx_have(lx, &s) && lx->buf[lx->pos] != ' ' && lx->buf[lx->pos] != '\t' &&
		       lx->buf[lx->pos] != '\n' && lx->buf[lx->pos] != '\r') {
			lx->pos++;
			lx->col++;
		}
		*len = lx->pos - s;
		return lx->buf + s;
	}
}

static int lx_err(struct lexer *lx, char *err, size_t el, const char *what, const char *tok,
		  size_t len)
{
	if (tok)
		return terr(err, el, "%s:%u:%u: %s, found \"%.*s\"", lx->path, lx->tline, lx->tcol,
			    what, (int)(len > 64 ? 64 : len), tok);
	return terr(err, el, "%s:%u:%u: %s, found the end of the file", lx->path, lx->tline,
		    lx->tcol, what);
}

/*
 * A number as mkfs.xfs reads one (strtoll, base 0): decimal, 0x hex, or
 * octal with a leading 0 ("010" is 8), a sign allowed, kept to 32 bits as
 * its int is ("-1" is 4294967295).  What mkfs.xfs turns silently into -1
 * (no number, trailing garbage) is refused here, with its place.
 */
static int lx_number(struct lexer *lx, uint64_t *v, char *err, size_t el, const char *what)
{
	size_t len;
	const char *tok = next_token(lx, &len);
	char buf[32], *end;
	long long x;

	if (!tok || !len || len >= sizeof(buf))
		return lx_err(lx, err, el, what, tok, len);
	memcpy(buf, tok, len);
	buf[len] = 0;
	errno = 0;
	x = strtoll(buf, &end, 0);
	if (errno || end == buf || *end || x < INT32_MIN || x > (long long)UINT32_MAX)
		return lx_err(lx, err, el, what, tok, len);
	*v = (uint32_t)x;
	return 0;
}

/* "d--755": type, setuid, setgid, three octal digits. */
static int lx_mode(struct lexer *lx, uint32_t *mode, char *err, size_t el)
{
	size_t len;
	const char *tok = next_token(lx, &len);
	uint32_t m = 0;

	if (!tok || len != 6)
		return lx_err(lx, err, el, "expected a mode like d--755 or ---644", tok, len);
	switch (tok[0]) {
	case '-': m = S_IFREG; break;
	case 'b': m = S_IFBLK; break;
	case 'c': m = S_IFCHR; break;
	case 'd': m = S_IFDIR; break;
	case 'p': m = S_IFIFO; break;
	case 'l': m = S_IFLNK; break;
	case 's': m = S_IFSOCK; break;
	default:
		return lx_err(lx, err, el, "file type must be one of -bcdpls", tok, len);
	}
	if (tok[1] == 'u')
		m |= S_ISUID;
	else if (tok[1] != '-')
		return lx_err(lx, err, el, "second mode character must be u or -", tok, len);
	if (tok[2] == 'g')
		m |= S_ISGID;
	else if (tok[2] != '-')
		return lx_err(lx, err, el, "third mode character must be g or -", tok, len);
	for (int i = 3; i < 6; i++) {
		if (tok[i] < '0' || tok[i] > '7')
			return lx_err(lx, err, el, "permissions must be three octal digits", tok, len);
		m |= (uint32_t)(tok[i] - '0') << (3 * (5 - i));
	}
	*mode = m;
	return 0;
}

static int proto_entry(struct lexer *lx, struct proto_tree *t, uint32_t idx, int depth, char *err,
		       size_t el);

/*
 * A directory's names so far, to refuse one used twice: open addressing on
 * a hash of the name, holding entry index + 1 (a directory of 100,000
 * names is checked in linear time, not quadratic).
 */
struct nameset {
	uint32_t *v;
	uint32_t mask, n;
};

/* FNV-1a: the da name hash's low bits collide for names alike ("f000001", "f000002") */
static uint32_t name_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* 1 if dir's entry of that name exists, 0 once entry k is recorded, -1 out of memory */
static int nameset_add(struct nameset *h, const struct proto_inode *dir, uint32_t k)
{
	const struct proto_dent *e = &dir->ents[k];
	uint32_t i;

	if (2 * (h->n + 1) > h->mask + 1 || !h->v) {
		uint32_t cap = h->v ? 2 * (h->mask + 1) : 64;
		uint32_t *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return -1;
		for (uint32_t j = 0; h->v && j <= h->mask; j++) {
			if (!h->v[j])
				continue;
			const struct proto_dent *o = &dir->ents[h->v[j] - 1];

			i = name_hash(o->name, o->namelen) & (cap - 1);
			while (nv[i])
				i = (i + 1) & (cap - 1);
			nv[i] = h->v[j];
		}
		free(h->v);
		h->v = nv;
		h->mask = cap - 1;
	}
	i = name_hash(e->name, e->namelen) & h->mask;
	for (; h->v[i]; i = (i + 1) & h->mask) {
		const struct proto_dent *o = &dir->ents[h->v[i] - 1];

		if (o->namelen == e->namelen && !memcmp(o->name, e->name, e->namelen))
			return 1;
	}
	h->v[i] = k + 1;
	h->n++;
	return 0;
}

/* Entries of directory didx up to its "$". */
static int proto_dir(struct lexer *lx, struct proto_tree *t, uint32_t didx, int depth, char *err,
		     size_t el)
{
	struct nameset names = { 0 };
	int rc = -1;

	if (depth > 4096)
		return terr(err, el, "%s:%u: directories nested too deep", lx->path, lx->line);
	for (;;) {
		size_t len;
		const char *name = next_token(lx, &len);
		uint32_t idx;
		int dup;

		/* the end of the file ends every open directory, as in mkfs.xfs */
		if (!name) {
			rc = 0;
			break;
		}
		if (len == 1 && name[0] == '$') {
			rc = 0;
			break;
		}
		if (len > 255) {
			lx_err(lx, err, el, "name longer than 255 bytes", name, len);
			break;
		}
		if (memchr(name, '/', len) || (len == 1 && name[0] == '.') ||
		    (len == 2 && name[0] == '.' && name[1] == '.')) {
			lx_err(lx, err, el, "a name cannot hold '/' or be . or ..", name, len);
			break;
		}
		if (add_dent(t, &t->v[didx], 0, name, len)) {
			terr(err, el, "out of memory");
			break;
		}
		dup = nameset_add(&names, &t->v[didx], t->v[didx].nents - 1);
		if (dup) {
			struct proto_inode *d = &t->v[didx];

			/* the entry goes again: it names no inode (its name stays in the pool) */
			d->nents--;
			if (dup < 0)
				terr(err, el, "out of memory");
			else
				lx_err(lx, err, el, "name already used in this directory", name, len);
			break;
		}
		if (new_inode(t, &idx)) {
			terr(err, el, "out of memory");
			break;
		}
		t->v[didx].ents[t->v[didx].nents - 1].child = idx;
		t->v[idx].parent = didx;
		if (proto_entry(lx, t, idx, depth, err, el))
			break;
		if (S_ISDIR(t->v[idx].mode))
			t->v[didx].nlink++;
	}
	free(names.v);
	return rc;
}

static int proto_entry(struct lexer *lx, struct proto_tree *t, uint32_t idx, int depth, char *err,
		       size_t el)
{
	struct timespec now;
	uint64_t uid, gid;
	uint32_t mode = 0;
	struct proto_inode *in;

	if (lx_mode(lx, &mode, err, el) || lx_number(lx, &uid, err, el, "expected a user id") ||
	    lx_number(lx, &gid, err, el, "expected a group id"))
		return -1;
	in = &t->v[idx];
	in->mode = mode;
	in->uid = (uint32_t)uid;
	in->gid = (uint32_t)gid;
	in->nlink = S_ISDIR(mode) ? 2 : 1;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 4; i++)
		proto_set_time(in, i, now.tv_sec, (uint32_t)now.tv_nsec);
	switch (mode & S_IFMT) {
	case S_IFREG: {
		size_t len;
		const char *src = next_token(lx, &len);
		struct stat st;
		char *real, *tok;
		int fd, e = 0;

		if (!src)
			return lx_err(lx, err, el, "expected the file to copy", NULL, 0);
		/* the token, until the path kept is known (the pool keeps each path once) */
		tok = strndup(src, len);
		if (!tok)
			return terr(err, el, "out of memory");
		/*
		 * What mkfs.xfs copies: whatever it can open for reading (a
		 * symbolic link followed), as long as fstat says it holds.  A
		 * device or FIFO says 0 (/dev/null is the usual empty file) and
		 * is never read; a FIFO is opened without waiting for a writer.
		 */
		fd = open(tok, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			e = errno;
		else if (S_ISDIR(st.st_mode))
			e = EISDIR;
		if (fd >= 0)
			close(fd);
		if (e) {
			terr(err, el, "%s:%u:%u: cannot copy %s: %s", lx->path, lx->tline, lx->tcol,
			     tok, strerror(e));
			free(tok);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			in->src = pool_src(t, tok);
			free(tok);
			return in->src ? 0 : terr(err, el, "out of memory");
		}
		/* the file itself: the readers open it without following links */
		real = realpath(tok, NULL);
		if (!real) {
			terr(err, el, "%s:%u:%u: cannot copy %s: %s", lx->path, lx->tline, lx->tcol,
			     tok, strerror(errno));
			free(tok);
			return -1;
		}
		free(tok);
		in->src = pool_src(t, real);
		free(real);
		if (!in->src)
			return terr(err, el, "out of memory");
		in->size = (uint64_t)st.st_size;
		in->src_blocks = (uint64_t)st.st_blocks;
		t->data_bytes += (uint64_t)st.st_size;
		return 0;
	}
	case S_IFBLK:
	case S_IFCHR: {
		uint64_t maj, min;

		if (lx_number(lx, &maj, err, el, "expected a major device number") ||
		    lx_number(lx, &min, err, el, "expected a minor device number"))
			return -1;
		in->rdev = (uint32_t)((maj << 18) | (min & 0x3ffff));
		return 0;
	}
	case S_IFLNK: {
		size_t len;
		const char *target = next_token(lx, &len);

		if (!target)
			return lx_err(lx, err, el, "expected the symlink target", NULL, 0);
		if (len > XFS_SYMLINK_MAXLEN)
			return lx_err(lx, err, el, "symlink target too long", target, len);
		in->src = pool_str(t, target, len);
		if (!in->src)
			return terr(err, el, "out of memory");
		in->srclen = (uint32_t)len;
		in->size = len;
		return 0;
	}
	case S_IFDIR:
		return proto_dir(lx, t, idx, depth + 1, err, el);
	default:
		return 0;
	}
}

static int read_protofile(const char *path, struct proto_tree *t, char *err, size_t el)
{
	struct lexer lx = { .path = path, .line = 1, .col = 1 };
	FILE *f = fopen(path, "r");
	size_t len;
	uint32_t root;
	int rc;

	if (!f)
		return terr(err, el, "cannot open %s: %s", path, strerror(errno));
	lx.f = f;
	/* the boot image and the two counts: kept for compatibility, ignored as mkfs.xfs does */
	rc = -1;
	if (!next_token(&lx, &len))
		lx_err(&lx, err, el, "expected the first (boot image) line", NULL, 0);
	else if (!next_token(&lx, &len))
		lx_err(&lx, err, el, "expected the block count", NULL, 0);
	else if (!next_token(&lx, &len))
		lx_err(&lx, err, el, "expected the inode count", NULL, 0);
	else {
		if (new_inode(t, &root)) {
			terr(err, el, "out of memory");
		} else if (!proto_entry(&lx, t, root, 0, err, el)) {
			if (!S_ISDIR(t->v[root].mode))
				terr(err, el, "%s: the root must be a directory (d--755 ...)", path);
			else
				rc = 0;
		}
	}
	/* a read that failed ended the file early: whatever the parse made of that, say so */
	if (lx.failed)
		rc = terr(err, el, "cannot read %s", path);
	fclose(f);
	free(t->src_set);	/* the paths stay in the pool; no more are added */
	t->src_set = NULL;
	t->src_cap = t->src_n = 0;
	free(lx.buf);
	return rc;
}

int proto_read(const char *path, const char *tmpdir, struct proto_tree *t, char *err, size_t el)
{
	struct stat st;
	int rc;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st))
		return terr(err, el, "cannot read %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return terr(err, el, "%s is neither a directory nor a protofile", path);
	rc = fs_arena_open(&t->ar, tmpdir, PROTO_AR_NREGIONS, PROTO_AR_REGION_BYTES);
	if (rc)
		return terr(err, el, "cannot make a temporary file in %s (for the tree of %s): %s",
			    tmpdir, path, strerror(-rc));
	rc = S_ISDIR(st.st_mode) ? read_dir(path, t, err, el) : read_protofile(path, t, err, el);
	/* the parse stops at its first failure: an arena that failed is why */
	if (rc && t->ar.err)
		rc = proto_nomem(t, err, el);
	return rc;
}
