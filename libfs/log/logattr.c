// SPDX-License-Identifier: GPL-2.0
/*
 * Xattr intents in the log (ATTRI items): their decoding and the checks the
 * kernel's recovery makes on each before it goes further
 * (xlog_recover_attri_commit_pass2 and xfs_attri_validate, read for the
 * rules).  A bad ATTRI fails the kernel's whole recovery, done item or
 * not, so the replay refuses it.  The checks, for the non-parent-pointer
 * ops a filesystem without parent pointers can hold: the format region is
 * exactly struct xfs_attri_log_format; no op flag bits outside the type;
 * the op is set, remove or replace; the filter has no bit outside
 * XFS_ATTRI_FILTER_MASK (INCOMPLETE is accepted and ignored); the name is
 * 1..255 bytes without NUL; the value at most 64 KiB and absent for a
 * remove; the name and value regions are their lengths rounded up to 4
 * bytes; the inode number is one the filesystem can have.  The pad word
 * (alfi_igen in newer kernels) is looked at only for parent-pointer ops, so
 * not here.
 *
 * Also what the recovery needs of the intent's inode before it can apply
 * it (fs_log_attri_judge): the kernel fetches the inode as any file
 * (xlog_recover_iget, xfs_iget without trust flags, so no inode btree
 * lookup), and a failure there is a corruption error that stops the whole
 * recovery, so the mount fails.  What makes that fetch fail: the inode's
 * block does not hold inode cores (magic, version, next-unlinked pointer of
 * every inode in it, the buffer verifier), the core fails its checks (CRC,
 * inode number, fields, with them a symlink's inline target and a btree
 * fork's root in the inode: level, record count), the inode is free (mode
 * 0: -ENOENT), a short form directory's entries fail the fork verifier
 * (xfs_dir2_sf_verify: sizes, offsets, inode numbers, file types, not
 * names), a record of its data fork's extent list is bad (a btree's blocks
 * are not read then), or its short form attr fork fails its check.  Past the fetch, an attr fork in blocks
 * the op walks that fail their checks stop it too; which ones it walks
 * depends on the name's hash, so every block of the fork is judged (a
 * refusal where the kernel might pass: the user is told both options).
 */
#include "libfs/log/logattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xfs/xfs_da_format.h>
#include <xfs/xfs_log_format.h>

#include "libfs/format/attr.h"
#include "libfs/format/bmap.h"
#include "libfs/format/dir.h"
#include "libfs/format/endian.h"
#include "libfs/format/findings.h"
#include "libfs/fs.h"
#include "libfs/format/inode.h"
#include "libfs/io/io.h"
#include "libfs/log/logreplay.h"
#include "libfs/format/verify.h"

static int bad(char *why, size_t wl, const char *s, uint32_t v)
{
	if (why && wl)
		snprintf(why, wl, s, v);
	return -EUCLEAN;
}

/* A parent pointer's name: what a directory entry may be called (xfs_dir2_namecheck). */
static bool pptr_name_ok(const unsigned char *name, uint32_t len)
{
	return len && len <= 255 && !memchr(name, 0, len) && !memchr(name, '/', len);
}

/*
 * A parent pointer op (xfs_attri_validate and xlog_recover_attri_commit_pass2
 * for PPTR_SET, PPTR_REMOVE, PPTR_REPLACE): a parent-pointer filesystem;
 * the filter the parent namespace alone; the value exactly a struct
 * xfs_parent_rec naming an inode the filesystem can have; set and remove
 * carry the format, name and value regions, replace the format, old name,
 * new name, old value and new value (the two lengths of a replace are
 * 16-bit halves of alfi_name_len, old first); every name 1..255 bytes
 * without NUL or '/', every region its length rounded up to 4 bytes.
 * alfi_igen (the 6.1 headers' pad word) is the generation the file must
 * have.
 */
static int pptr_parse(const struct fs_geom *g, const struct fs_log_item *it,
		      const struct xfs_attri_log_format *f, struct fs_log_attri *a, char *why,
		      size_t wl)
{
	uint32_t op = f->alfi_op_flags, namelen = f->alfi_name_len, newlen = 0, igen, at;
	const unsigned char *raw = it->reg[0].p;
	const uint32_t known = XFS_ATTR_ROOT | XFS_ATTR_SECURE | XFS_ATTR_PARENT | XFS_ATTR_INCOMPLETE;

	memcpy(&igen, raw + 4, 4);
	if (!g->parent)
		return bad(why, wl, "a parent pointer op (%u) on a filesystem without parent pointers",
			   op);
	if (f->alfi_attr_filter & ~known)
		return bad(why, wl, "attr filter %#x", f->alfi_attr_filter);
	if ((f->alfi_attr_filter & (XFS_ATTR_ROOT | XFS_ATTR_SECURE | XFS_ATTR_PARENT)) !=
	    XFS_ATTR_PARENT)
		return bad(why, wl, "parent pointer op with attr filter %#x (not the parent "
			   "namespace alone)", f->alfi_attr_filter);
	if (f->alfi_value_len != sizeof(struct xfs_parent_rec))
		return bad(why, wl, "parent pointer value of %u bytes", f->alfi_value_len);
	if (op == XFS_ATTRI_OP_FLAGS_PPTR_REPLACE) {
		uint16_t h[2];

		memcpy(h, raw + offsetof(struct xfs_attri_log_format, alfi_name_len), sizeof(h));
		namelen = h[0];
		newlen = h[1];
		if (!newlen || newlen > 255)
			return bad(why, wl, "new name of %u bytes", newlen);
	}
	if (!namelen || namelen > 255)
		return bad(why, wl, "name of %u bytes", namelen);
	if (!fs_ino_valid(g, f->alfi_ino))
		return bad(why, wl, "inode %u out of the filesystem", (uint32_t)f->alfi_ino);
	if (it->n != (op == XFS_ATTRI_OP_FLAGS_PPTR_REPLACE ? 5u : 3u))
		return bad(why, wl, "%u regions", it->n);
	at = 1;
	if (it->reg[at].len != ((namelen + 3) & ~3u))
		return bad(why, wl, "name region of %u bytes", it->reg[at].len);
	if (!pptr_name_ok(it->reg[at].p, namelen))
		return bad(why, wl, "a NUL or '/' in a parent pointer name of %u bytes", namelen);
	if (newlen) {
		at++;
		if (it->reg[at].len != ((newlen + 3) & ~3u))
			return bad(why, wl, "new name region of %u bytes", it->reg[at].len);
		if (!pptr_name_ok(it->reg[at].p, newlen))
			return bad(why, wl, "a NUL or '/' in a new parent pointer name of %u bytes",
				   newlen);
	}
	for (uint32_t k = at + 1; k < it->n; k++) {
		struct xfs_parent_rec rec;

		if (it->reg[k].len != sizeof(rec))
			return bad(why, wl, "parent pointer value region of %u bytes", it->reg[k].len);
		memcpy(&rec, it->reg[k].p, sizeof(rec));
		if (!fs_ino_valid(g, be64(rec.p_ino)))
			return bad(why, wl, "parent pointer to inode %u, out of the filesystem",
				   (uint32_t)be64(rec.p_ino));
	}
	*a = (struct fs_log_attri){
		.id = f->alfi_id, .ino = f->alfi_ino, .op = op, .filter = XFS_ATTR_PARENT,
		.namelen = namelen, .valuelen = sizeof(struct xfs_parent_rec),
		.name = it->reg[1].p, .value = it->reg[at + 1].p, .igen = igen,
		.newnamelen = newlen, .newname = newlen ? it->reg[2].p : NULL,
		.newvalue = newlen ? it->reg[at + 2].p : NULL,
	};
	return 0;
}

int fs_log_attri_parse(const struct fs_geom *g, const struct fs_log_item *it,
		       struct fs_log_attri *a, char *why, size_t wl)
{
	struct xfs_attri_log_format f;
	uint32_t op, want;

	if (it->n < 1 || it->reg[0].len != sizeof(f))
		return bad(why, wl, "format region of %u bytes", it->n ? it->reg[0].len : 0);
	memcpy(&f, it->reg[0].p, sizeof(f));
	op = f.alfi_op_flags & XFS_ATTRI_OP_FLAGS_TYPE_MASK;
	if (f.alfi_op_flags & ~XFS_ATTRI_OP_FLAGS_TYPE_MASK)
		return bad(why, wl, "op flags %#x", f.alfi_op_flags);
	if (op == XFS_ATTRI_OP_FLAGS_PPTR_SET || op == XFS_ATTRI_OP_FLAGS_PPTR_REMOVE ||
	    op == XFS_ATTRI_OP_FLAGS_PPTR_REPLACE)
		return pptr_parse(g, it, &f, a, why, wl);
	if (op != XFS_ATTRI_OP_FLAGS_SET && op != XFS_ATTRI_OP_FLAGS_REMOVE &&
	    op != XFS_ATTRI_OP_FLAGS_REPLACE)
		return bad(why, wl, "unknown op %u", op);
	if (f.alfi_attr_filter & ~XFS_ATTRI_FILTER_MASK)
		return bad(why, wl, "attr filter %#x", f.alfi_attr_filter);
	if (f.alfi_value_len > XFS_XATTR_SIZE_MAX)
		return bad(why, wl, "value of %u bytes", f.alfi_value_len);
	if (op == XFS_ATTRI_OP_FLAGS_REMOVE && f.alfi_value_len)
		return bad(why, wl, "remove with a value of %u bytes", f.alfi_value_len);
	if (!f.alfi_name_len || f.alfi_name_len > 255)
		return bad(why, wl, "name of %u bytes", f.alfi_name_len);
	if (!fs_ino_valid(g, f.alfi_ino))
		return bad(why, wl, "inode %u out of the filesystem", (uint32_t)f.alfi_ino);
	want = 2 + (f.alfi_value_len ? 1 : 0);
	if (it->n != want)
		return bad(why, wl, "%u regions", it->n);
	if (it->reg[1].len != ((f.alfi_name_len + 3) & ~3u))
		return bad(why, wl, "name region of %u bytes", it->reg[1].len);
	if (memchr(it->reg[1].p, 0, f.alfi_name_len))
		return bad(why, wl, "NUL in a name of %u bytes", f.alfi_name_len);
	if (f.alfi_value_len && it->reg[2].len != ((f.alfi_value_len + 3) & ~3u))
		return bad(why, wl, "value region of %u bytes", it->reg[2].len);
	*a = (struct fs_log_attri){
		.id = f.alfi_id, .ino = f.alfi_ino, .op = op,
		.filter = f.alfi_attr_filter & (XFS_ATTR_ROOT | XFS_ATTR_SECURE),
		.namelen = f.alfi_name_len, .valuelen = f.alfi_value_len,
		.name = it->reg[1].p, .value = f.alfi_value_len ? it->reg[2].p : NULL,
	};
	return 0;
}

void fs_log_attri_describe(const struct fs_log_attri *a, char *buf, size_t len)
{
	static const char *const ops[] = { [XFS_ATTRI_OP_FLAGS_SET] = "set",
					   [XFS_ATTRI_OP_FLAGS_REMOVE] = "remove",
					   [XFS_ATTRI_OP_FLAGS_REPLACE] = "replace",
					   [XFS_ATTRI_OP_FLAGS_PPTR_SET] = "parent pointer set",
					   [XFS_ATTRI_OP_FLAGS_PPTR_REMOVE] = "parent pointer remove",
					   [XFS_ATTRI_OP_FLAGS_PPTR_REPLACE] = "parent pointer replace" };
	const char *ns = a->filter & XFS_ATTR_PARENT ? "parent:" :
			 a->filter & XFS_ATTR_ROOT ? "trusted." :
			 a->filter & XFS_ATTR_SECURE ? "security." : "user.";
	char name[4 * 255 + 1];
	size_t at = 0;

	/* the name as text: bytes outside printable ASCII as \xNN */
	for (uint32_t i = 0; i < a->namelen && at + 5 < sizeof(name); i++) {
		unsigned char ch = a->name[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '"')
			name[at++] = (char)ch;
		else
			at += (size_t)snprintf(name + at, sizeof(name) - at, "\\x%02x", ch);
	}
	name[at] = 0;
	if (fs_log_attri_is_pptr(a)) {
		struct xfs_parent_rec rec;

		memcpy(&rec, a->value, sizeof(rec));
		snprintf(buf, len, "xattr intent %#llx (%s of \"%s%s\" -> directory %llu gen %u%s "
			 "on inode %llu gen %u)", (unsigned long long)a->id, ops[a->op], ns, name,
			 (unsigned long long)be64(rec.p_ino), be32(rec.p_gen),
			 a->newnamelen ? ", with a new name" : "", (unsigned long long)a->ino, a->igen);
		return;
	}
	snprintf(buf, len, "xattr intent %#llx (%s of \"%s%s\"%s%.0u%s on inode %llu)",
		 (unsigned long long)a->id,
		 a->op < sizeof(ops) / sizeof(ops[0]) && ops[a->op] ? ops[a->op] : "?", ns, name,
		 a->valuelen ? ", a value of " : "", a->valuelen, a->valuelen ? " bytes" : "",
		 (unsigned long long)a->ino);
}

/* Reads for the judge: straight from the device (its read patch, if any, applied). */
struct judge_io {
	struct fs *fs;
	void *buf;
};

static int judge_read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct judge_io *j = priv;
	const struct fs_geom *g = &j->fs->g;

	if (!fs_fsb_valid(g, fsb))
		return -EUCLEAN;
	return fs_dev_read(j->fs->dev, buf, g->blocksize,
			   (uint64_t)fs_fsb_to_daddr(g, fsb) << FS_BBSHIFT);
}

/*
 * The first error finding of fl as "what: code (message)", the nskip codes
 * of skip left out; true when there was one.
 */
static bool first_error_but(const struct fs_findings *fl, const enum fs_code *skip,
			    size_t nskip, const char *what, char *why, size_t wl)
{
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *f = &fl->v[i];
		bool skipped = false;

		for (size_t k = 0; k < nskip && !skipped; k++)
			skipped = f->code == skip[k];
		if (f->def->sev != FS_SEV_ERROR || skipped)
			continue;
		snprintf(why, wl, "%s fails its check: %s (%s)", what, f->def->code,
			 f->message[0] ? f->message : f->def->summary);
		return true;
	}
	return false;
}

static bool first_error(const struct fs_findings *fl, const char *what, char *why, size_t wl)
{
	return first_error_but(fl, NULL, 0, what, why, wl);
}

/*
 * A short form directory's data fork as the fetch checks it
 * (xfs_iformat_data_fork: xfs_dir2_sf_verify): the walker's rules but for
 * those about names (characters, "." and "..", one entry per name), which
 * the kernel's fork verifier does not apply.
 */
static bool judge_sf_dir(const struct fs_vctx *vc, const unsigned char *dip,
			 const struct fs_inode *ip, char *why, size_t wl)
{
	static const enum fs_code not_the_kernels[] = { FS_C_DIR_NAME, FS_C_DIR_DUP_NAME };
	struct fs_dir_ctx dc = { .g = vc->g, .fl = vc->fl, .ino = vc->ino, .agno = vc->agno };
	char what[64];

	fs_dir_sf_walk(&dc, fs_inode_fork_ptr(dip, ip, XFS_DATA_FORK),
		       fs_inode_fork_size(vc->g, ip, XFS_DATA_FORK), ip->size);
	snprintf(what, sizeof(what), "inode %llu's short form directory",
		 (unsigned long long)vc->ino);
	return first_error_but(vc->fl, not_the_kernels,
			       sizeof(not_the_kernels) / sizeof(not_the_kernels[0]), what, why, wl);
}

/* Every block of an extents or btree attr fork: a leaf, node or remote value block that verifies. */
static int judge_fork_blocks(struct judge_io *j, fs_ino_t ino, const void *dip,
			     const struct fs_inode *ip, char *why, size_t wl)
{
	static const enum fs_mtype kinds[] = { FS_MT_ATTR_LEAF, FS_MT_DA_NODE, FS_MT_ATTR_RMT };
	const struct fs_geom *g = &j->fs->g;
	struct fs_findings fl;
	struct fs_bmap m = { 0 };
	struct fs_bmap_ctx bc = { .g = g, .read_fsblock = judge_read_fsblock, .priv = j };
	uint32_t budget = 1u << 16;
	int err;

	fs_findings_init(&fl);
	bc.fl = &fl;
	err = fs_bmap_load(&bc, dip, ip, XFS_ATTR_FORK, &m);
	if (!err && first_error(&fl, "the attr fork's block map", why, wl))
		err = -EUCLEAN;
	for (size_t i = 0; i < m.n && !err; i++) {
		for (uint64_t b = 0; b < m.ext[i].blockcount && budget && !err; b++, budget--) {
			fs_fsblock_t fsb = m.ext[i].startblock + b;
			struct fs_vctx vc = { .g = g, .fl = &fl, .agno = fs_fsb_to_agno(g, fsb),
					      .daddr = fs_fsb_to_daddr(g, fsb), .ino = ino };
			char what[96];
			enum fs_mtype t;

			err = judge_read_fsblock(j, fsb, j->buf);
			if (err) {
				snprintf(why, wl, "attr fork block %llu cannot be read",
					 (unsigned long long)(m.ext[i].startoff + b));
				if (err == -EUCLEAN)
					break;
				continue;
			}
			t = fs_verifier_by_magic(j->buf, g->blocksize, kinds,
						 sizeof(kinds) / sizeof(kinds[0]));
			if (t == FS_MT_NR) {
				snprintf(why, wl, "attr fork block %llu (disk block %llu) is not an xattr "
					 "block (magic %#x)", (unsigned long long)(m.ext[i].startoff + b),
					 (unsigned long long)fsb, get_be32(j->buf));
				err = -EUCLEAN;
				break;
			}
			fs_findings_free(&fl);
			fs_findings_init(&fl);
			fs_verify(t, &vc, j->buf, g->blocksize);
			snprintf(what, sizeof(what), "attr fork block %llu (disk block %llu)",
				 (unsigned long long)(m.ext[i].startoff + b), (unsigned long long)fsb);
			if (first_error(&fl, what, why, wl))
				err = -EUCLEAN;
		}
	}
	fs_bmap_free(&m);
	fs_findings_free(&fl);
	return err;
}

int fs_log_attri_judge(struct fs *fs, const struct fs_log_attri *a, char *why, size_t wl)
{
	const struct fs_geom *g = &fs->g;
	struct judge_io j = { .fs = fs };
	fs_agnumber_t agno = fs_ino_to_agno(g, a->ino);
	fs_agino_t agino = fs_ino_to_agino(g, a->ino);
	fs_daddr_t blk = fs_agbno_to_daddr(g, agno, fs_agino_to_agbno(g, agino));
	struct fs_findings fl;
	struct fs_inode ip;
	const unsigned char *dip;
	int err;

	if (!fs_ino_valid(g, a->ino)) {
		snprintf(why, wl, "inode %llu is outside the filesystem", (unsigned long long)a->ino);
		return -EUCLEAN;
	}
	j.buf = fs_dev_alloc(fs->dev, g->blocksize);
	if (!j.buf)
		return -ENOMEM;
	err = fs_dev_read(fs->dev, j.buf, g->blocksize, (uint64_t)blk << FS_BBSHIFT);
	if (err) {
		snprintf(why, wl, "inode %llu's block cannot be read", (unsigned long long)a->ino);
		goto out;
	}
	/* the inode buffer's verifier: every inode of the block */
	for (uint32_t k = 0; k < g->inopblock; k++) {
		const struct xfs_dinode *d =
			(const void *)((const unsigned char *)j.buf + ((size_t)k << g->inodelog));
		uint32_t next = get_be32(&d->di_next_unlinked);

		if (get_be16(&d->di_magic) != XFS_DINODE_MAGIC || d->di_version != 3 ||
		    (next != NULLAGINO && !fs_agino_valid(g, agno, next))) {
			snprintf(why, wl, "inode %llu's block (disk block %llu) does not hold inode "
				 "cores: %s of its inode %u", (unsigned long long)a->ino,
				 (unsigned long long)fs_agbno_to_fsb(g, agno,
								     fs_agino_to_agbno(g, agino)),
				 get_be16(&d->di_magic) != XFS_DINODE_MAGIC ? "the magic" :
				 d->di_version != 3 ? "the version" : "the next-unlinked pointer", k);
			err = -EUCLEAN;
			goto out;
		}
	}
	dip = (const unsigned char *)j.buf + ((size_t)fs_agino_to_offset(g, agino) << g->inodelog);
	fs_inode_decode(dip, &ip);
	if (!ip.mode) {
		snprintf(why, wl, "inode %llu is free (mode 0)", (unsigned long long)a->ino);
		err = -EUCLEAN;
		goto out;
	}
	fs_findings_init(&fl);
	{
		struct fs_vctx vc = { .g = g, .fl = &fl, .agno = agno,
				      .daddr = fs_ino_to_daddr(g, a->ino), .ino = a->ino };
		char what[64];

		snprintf(what, sizeof(what), "inode %llu", (unsigned long long)a->ino);
		fs_verify(FS_MT_INODE, &vc, dip, g->inodesize);
		if (first_error(&fl, what, why, wl))
			err = -EUCLEAN;
		/*
		 * A local data fork: a symlink's target was judged with the
		 * core (fs_inode_verify_fields applies xfs_symlink_shortform_verify's
		 * rules), a directory's entries are judged here; a btree data
		 * fork's root was too (the bmdr checks of xfs_iformat_btree),
		 * its blocks are not read by the fetch
		 */
		if (!err && S_ISDIR(ip.mode) && ip.format == XFS_DINODE_FMT_LOCAL) {
			fs_findings_free(&fl);
			fs_findings_init(&fl);
			if (judge_sf_dir(&vc, dip, &ip, why, wl))
				err = -EUCLEAN;
		}
		if (!err && ip.forkoff && ip.aformat == XFS_DINODE_FMT_LOCAL) {
			fs_findings_free(&fl);
			fs_findings_init(&fl);
			fs_attr_sf_verify(&vc, fs_inode_fork_ptr(dip, &ip, XFS_ATTR_FORK),
					  fs_inode_fork_size(g, &ip, XFS_ATTR_FORK), NULL, NULL);
			snprintf(what, sizeof(what), "inode %llu's short form attr fork",
				 (unsigned long long)a->ino);
			if (first_error(&fl, what, why, wl))
				err = -EUCLEAN;
		}
	}
	fs_findings_free(&fl);
	if (!err && ip.format == XFS_DINODE_FMT_EXTENTS) {
		/*
		 * The fetch reads an extent list into memory checking every
		 * record (xfs_iformat_extents); a btree's blocks it does not read
		 */
		struct fs_bmap m = { 0 };
		struct fs_bmap_ctx bc = { .g = g, .fl = &fl, .read_fsblock = judge_read_fsblock,
					  .priv = &j };
		char what[64];

		fs_findings_init(&fl);
		err = fs_bmap_load(&bc, dip, &ip, XFS_DATA_FORK, &m);
		snprintf(what, sizeof(what), "inode %llu's data fork", (unsigned long long)a->ino);
		if (!err && first_error(&fl, what, why, wl))
			err = -EUCLEAN;
		fs_bmap_free(&m);
		fs_findings_free(&fl);
	}
	if (!err && ip.forkoff &&
	    (ip.aformat == XFS_DINODE_FMT_EXTENTS || ip.aformat == XFS_DINODE_FMT_BTREE))
		err = judge_fork_blocks(&j, a->ino, dip, &ip, why, wl);
out:
	free(j.buf);
	return err;
}

/* Indices into an ATTRI array by inode, then log order. */
static int cmp_by_ino(const void *pa, const void *pb, void *priv)
{
	const struct fs_log_attri *v = priv;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (v[a].ino != v[b].ino)
		return v[a].ino < v[b].ino ? -1 : 1;
	return (a > b) - (a < b);
}

int fs_replay_judge_attris(struct fs *fs, struct fs_replay *rp, fs_attri_bad_fn on_bad,
			   void *priv)
{
	const struct fs_log_attri *v;
	size_t n = fs_replay_open_attris(rp, &v);
	bool shown = fs->dev->read_patch_priv == rp;
	int bad = 0, err = 0;

	size_t *byino = n > 1 ? malloc(n * sizeof(*byino)) : NULL;

	if (n > 1 && !byino)
		return -ENOMEM;
	for (size_t i = 0; byino && i < n; i++)
		byino[i] = i;
	if (byino)
		qsort_r(byino, n, sizeof(*byino), cmp_by_ino, (void *)v);
	if (!shown)
		fs_replay_install(fs->dev, rp);
	for (size_t i = 0; i < n && err >= 0; i++) {
		char why[400];
		size_t same = 0, first = i;

		/*
		 * Several unfinished on one inode: not a log the kernel writes (an
		 * xattr op holds the inode locked through its chain, so its done
		 * item is logged before the next op's intent), and not one its
		 * recovery replays in log order: it runs every intent's first
		 * step, then the rest of each (a set removes the old name first
		 * and adds the new one last), so with kernel 6.18 a set before a
		 * remove of the same name survives it, a set after the fork's last
		 * name went is lost, and other such logs fail the mount or hang
		 * it.  Said once, at the inode's first intent.
		 */
		if (byino) {
			size_t lo = 0, hi = n;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (v[byino[mid]].ino < v[i].ino)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* equal inodes sort by log order: the first is the first intent */
			first = byino[lo];
			while (lo + same < n && v[byino[lo + same]].ino == v[i].ino)
				same++;
		}
		if (same > 1 && first == i) {
			bad++;
			snprintf(why, sizeof(why), "it is one of %zu unfinished xattr intents on inode "
				 "%llu, a log the kernel does not write and whose recovery does not "
				 "follow log order (mounting may drop some of them, fail, or hang)",
				 same, (unsigned long long)v[i].ino);
			if (on_bad)
				on_bad(priv, &v[i], why);
			continue;
		}
		err = fs_log_attri_judge(fs, &v[i], why, sizeof(why));
		if (err == -EUCLEAN) {
			size_t at = strlen(why);

			bad++;
			err = 0;
			snprintf(why + at, sizeof(why) - at, "; the kernel's recovery stops there too "
				 "(mounting fails)");
			if (on_bad)
				on_bad(priv, &v[i], why);
		}
	}
	if (!shown)
		fs_replay_install(fs->dev, NULL);
	free(byino);
	return err < 0 ? err : bad;
}
