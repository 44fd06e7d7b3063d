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
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		struct proto_inode *v = realloc(t->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	*idx = t->n++;
	return 0;
}

static int add_dent(struct proto_inode *dir, uint32_t child, const char *name, size_t len)
{
	if (dir->nents == dir->capents) {
		uint32_t cap = dir->capents ? dir->capents * 2 : 8;
		struct proto_dent *v = realloc(dir->ents, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		dir->ents = v;
		dir->capents = cap;
	}
	dir->ents[dir->nents].name = strndup(name, len);
	if (!dir->ents[dir->nents].name)
		return -ENOMEM;
	dir->ents[dir->nents].namelen = (uint8_t)len;
	dir->ents[dir->nents].child = child;
	dir->nents++;
	return 0;
}

void proto_free(struct proto_tree *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		struct proto_inode *in = &t->v[i];

		for (uint32_t k = 0; k < in->nents; k++)
			free(in->ents[k].name);
		for (uint32_t k = 0; k < in->nxattrs; k++) {
			free(in->xattrs[k].name);
			free(in->xattrs[k].value);
		}
		free(in->ents);
		free(in->xattrs);
		free(in->src);
		free(in->dfork);
		free(in->afork);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
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
static int read_xattrs(struct proto_tree *t, uint32_t idx, const char *at, const char *path,
		       char *err, size_t el)
{
	ssize_t len = llistxattr(at, NULL, 0);
	char *names;
	struct proto_inode *in;

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
			if (!t->warned_system_xattr)
				fprintf(stderr, "xfsx_mkfs: warning: %s: xattr %s has no XFS namespace; "
					"not copied (said once)\n", path, nm);
			t->warned_system_xattr = true;
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
		in = &t->v[idx];
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
	in->t[0] = (struct fs_dinode_time){ sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec };
	in->t[1] = (struct fs_dinode_time){ sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec };
	in->t[2] = (struct fs_dinode_time){ sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec };
	if (sx->stx_mask & STATX_BTIME)
		in->t[3] = (struct fs_dinode_time){ sx->stx_btime.tv_sec, sx->stx_btime.tv_nsec };
	else
		in->t[3] = in->t[2];
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Entries are looked up by their names in the directory, not by full paths:
 * statx and readlink relative to the directory's descriptor, the xattr
 * calls (which have no such form in glibc) relative to the working
 * directory, which is the directory being scanned (read_dir restores it).
 * A full path costs a lookup per component, and three calls per entry.
 */
static int scan_dir(struct proto_tree *t, struct linkmap *lm, int pfd, const char *name,
		    const char *path, uint32_t didx, char *err, size_t el)
{
	/* the root may be reached through a symlink; below it, what statx saw is opened */
	int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			 (pfd == AT_FDCWD ? 0 : O_NOFOLLOW));
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *de;
	char **names = NULL;
	size_t nn = 0, cap = 0;
	int rc = 0;

	if (!d) {
		rc = -errno;
		if (dfd >= 0)
			close(dfd);
		return terr(err, el, "cannot read directory %s: %s", path, strerror(-rc));
	}
	if (fchdir(dfd)) {
		rc = terr(err, el, "cannot enter directory %s: %s", path, strerror(errno));
		goto out;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (nn == cap) {
			char **nv = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));

			if (!nv) {
				rc = terr(err, el, "out of memory");
				goto out;
			}
			names = nv;
		}
		names[nn] = strdup(de->d_name);
		if (!names[nn++]) {
			rc = terr(err, el, "out of memory");
			goto out;
		}
	}
	if (errno) {
		rc = terr(err, el, "cannot read directory %s: %s", path, strerror(errno));
		goto out;
	}
	if (nn)
		qsort(names, nn, sizeof(*names), cmp_name);
	for (size_t i = 0; i < nn && !rc; i++) {
		size_t len = strlen(names[i]);
		char *full;
		struct statx sx;
		uint32_t idx;
		bool found = false;
		uint32_t *slot = NULL;

		if (len > 255) {
			rc = terr(err, el, "%s/%s: name longer than 255 bytes", path, names[i]);
			break;
		}
		if (asprintf(&full, "%s/%s", path, names[i]) < 0) {
			rc = terr(err, el, "out of memory");
			break;
		}
		if (statx(dfd, names[i], AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx)) {
			rc = terr(err, el, "cannot stat %s: %s", full, strerror(errno));
			free(full);
			break;
		}
		if (!S_ISDIR(sx.stx_mode) && sx.stx_nlink > 1) {
			slot = lm_find(lm, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino,
				       &found);
			if (!slot) {
				free(full);
				rc = terr(err, el, "out of memory");
				break;
			}
		}
		if (found) {
			idx = *slot;
			t->v[idx].nlink++;
			if (add_dent(&t->v[didx], idx, names[i], len))
				rc = terr(err, el, "out of memory");
			free(full);
			continue;
		}
		if (new_inode(t, &idx) || add_dent(&t->v[didx], idx, names[i], len)) {
			free(full);
			rc = terr(err, el, "out of memory");
			break;
		}
		if (slot)
			*slot = idx;
		{
			struct proto_inode *in = &t->v[idx];

			in->mode = sx.stx_mode;
			in->uid = sx.stx_uid;
			in->gid = sx.stx_gid;
			in->nlink = 1;
			in->parent = didx;
			stat_times(in, &sx);
			switch (sx.stx_mode & S_IFMT) {
			case S_IFREG:
				in->size = sx.stx_size;
				in->src_blocks = sx.stx_blocks;
				in->src = full;
				full = NULL;
				t->data_bytes += sx.stx_blocks * 512 < sx.stx_size ?
						 sx.stx_blocks * 512 : sx.stx_size;
				break;
			case S_IFLNK: {
				char buf[XFS_SYMLINK_MAXLEN + 1];
				ssize_t n = readlinkat(dfd, names[i], buf, sizeof(buf));

				if (n < 0 || n > XFS_SYMLINK_MAXLEN) {
					rc = n < 0 ? terr(err, el, "cannot read symlink %s: %s", full,
							  strerror(errno)) :
						     terr(err, el, "symlink %s: target longer than %d "
							  "bytes", full, XFS_SYMLINK_MAXLEN);
					break;
				}
				in->src = malloc((size_t)n + 1);
				if (!in->src) {
					rc = terr(err, el, "out of memory");
					break;
				}
				memcpy(in->src, buf, (size_t)n);
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
				rc = terr(err, el, "%s: file type %#o cannot be stored", full,
					  sx.stx_mode & S_IFMT);
			}
		}
		if (!rc) {
			const char *p = full ? full : t->v[idx].src;

			rc = read_xattrs(t, idx, names[i], p, err, el);
		}
		if (!rc && S_ISDIR(sx.stx_mode)) {
			t->v[didx].nlink++;
			t->v[idx].nlink = 2;
			rc = scan_dir(t, lm, dfd, names[i], full, idx, err, el);
			/* back in this directory for the next names */
			if (!rc && fchdir(dfd))
				rc = terr(err, el, "cannot enter directory %s: %s", path,
					  strerror(errno));
		}
		free(full);
	}
out:
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

static int read_dir(const char *path, struct proto_tree *t, char *err, size_t el)
{
	struct linkmap lm = { 0 };
	struct statx sx;
	uint32_t root;
	int rc;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS | STATX_BTIME, &sx))
		return terr(err, el, "cannot stat %s: %s", path, strerror(errno));
	if (new_inode(t, &root))
		return terr(err, el, "out of memory");
	t->v[root].mode = sx.stx_mode;
	t->v[root].uid = sx.stx_uid;
	t->v[root].gid = sx.stx_gid;
	t->v[root].nlink = 2;
	stat_times(&t->v[root], &sx);
	rc = read_xattrs(t, root, path, path, err, el);
	if (!rc) {
		/* scan_dir moves the working directory; the caller's relative paths need it back */
		int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (cwd < 0)
			return terr(err, el, "cannot open the working directory: %s",
				    strerror(errno));
		rc = scan_dir(t, &lm, AT_FDCWD, path, path, root, err, el);
		if (fchdir(cwd) && !rc)
			rc = terr(err, el, "cannot return to the working directory: %s",
				  strerror(errno));
		close(cwd);
	}
	free(lm.v);
	return rc;
}

/* ---- protofile source ---- */

struct lexer {
	const char *path;
	char *buf;
	size_t len, pos;
	unsigned line, col;        /* of the current position */
	unsigned tline, tcol;      /* of the last token */
};

/* The next whitespace-separated token; ':' starts a comment to the end of the line. */
static const char *next_token(struct lexer *lx, size_t *len)
{
	for (;;) {
		while (lx->pos < lx->len && (lx->buf[lx->pos] == ' ' || lx->buf[lx->pos] == '\t' ||
					     lx->buf[lx->pos] == '\n' || lx->buf[lx->pos] == '\r')) {
			if (lx->buf[lx->pos] == '\n') {
				lx->line++;
				lx->col = 1;
			} else {
				lx->col++;
			}
			lx->pos++;
		}
		if (lx->pos < lx->len && lx->buf[lx->pos] == ':') {
			while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
				lx->pos++;
			continue;
		}
		break;
	}
	lx->tline = lx->line;
	lx->tcol = lx->col;
	if (lx->pos >= lx->len)
		return NULL;
	{
		size_t s = lx->pos;

		while (lx->pos < lx->len && lx->buf[lx->pos] != ' ' && lx->buf[lx->pos] != '\t' &&
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

static int lx_number(struct lexer *lx, uint64_t *v, char *err, size_t el, const char *what)
{
	size_t len;
	const char *tok = next_token(lx, &len);
	uint64_t x = 0;

	if (!tok || !len)
		return lx_err(lx, err, el, what, tok, len);
	for (size_t i = 0; i < len; i++) {
		if (tok[i] < '0' || tok[i] > '9' || x > UINT32_MAX)
			return lx_err(lx, err, el, what, tok, len);
		x = x * 10 + (uint64_t)(tok[i] - '0');
	}
	if (x > UINT32_MAX)
		return lx_err(lx, err, el, what, tok, len);
	*v = x;
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

		if (!name) {
			lx_err(lx, err, el, "expected a name or $ ending the directory", NULL, 0);
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
		if (add_dent(&t->v[didx], 0, name, len)) {
			terr(err, el, "out of memory");
			break;
		}
		dup = nameset_add(&names, &t->v[didx], t->v[didx].nents - 1);
		if (dup) {
			struct proto_inode *d = &t->v[didx];

			/* the entry goes again: it names no inode */
			free(d->ents[--d->nents].name);
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
		in->t[i] = (struct fs_dinode_time){ now.tv_sec, (uint32_t)now.tv_nsec };
	switch (mode & S_IFMT) {
	case S_IFREG: {
		size_t len;
		const char *src = next_token(lx, &len);
		struct stat st;

		if (!src)
			return lx_err(lx, err, el, "expected the file to copy", NULL, 0);
		in->src = strndup(src, len);
		if (!in->src)
			return terr(err, el, "out of memory");
		if (stat(in->src, &st) || !S_ISREG(st.st_mode))
			return terr(err, el, "%s:%u:%u: cannot copy %s: %s", lx->path, lx->tline,
				    lx->tcol, in->src, errno && !S_ISREG(st.st_mode) ?
				    strerror(errno) : "not a regular file");
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
		in->src = strndup(target, len);
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
	uint64_t dummy;
	size_t len;
	uint32_t root;
	int rc;

	if (!f)
		return terr(err, el, "cannot open %s: %s", path, strerror(errno));
	{
		size_t cap = 65536;

		lx.buf = malloc(cap);
		while (lx.buf) {
			size_t n = fread(lx.buf + lx.len, 1, cap - lx.len, f);

			lx.len += n;
			if (lx.len < cap)
				break;
			char *nb = realloc(lx.buf, cap *= 2);

			if (!nb) {
				free(lx.buf);
				lx.buf = NULL;
			}
			lx.buf = nb;
		}
	}
	if (!lx.buf || ferror(f)) {
		fclose(f);
		free(lx.buf);
		return terr(err, el, "cannot read %s", path);
	}
	fclose(f);
	/* the boot line and the two numbers: kept for compatibility, ignored */
	rc = -1;
	if (!next_token(&lx, &len))
		lx_err(&lx, err, el, "expected the first (boot image) line", NULL, 0);
	else if (!lx_number(&lx, &dummy, err, el, "expected the block count") &&
		 !lx_number(&lx, &dummy, err, el, "expected the inode count")) {
		if (new_inode(t, &root)) {
			terr(err, el, "out of memory");
		} else if (!proto_entry(&lx, t, root, 0, err, el)) {
			if (!S_ISDIR(t->v[root].mode))
				terr(err, el, "%s: the root must be a directory (d--755 ...)", path);
			else
				rc = 0;
		}
	}
	free(lx.buf);
	return rc;
}

int proto_read(const char *path, struct proto_tree *t, char *err, size_t el)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st))
		return terr(err, el, "cannot read %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return read_dir(path, t, err, el);
	if (S_ISREG(st.st_mode))
		return read_protofile(path, t, err, el);
	return terr(err, el, "%s is neither a directory nor a protofile", path);
}
