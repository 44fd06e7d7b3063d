// SPDX-License-Identifier: GPL-2.0
/*
 * Unfinished parent pointer xattr intents (ATTRIs with op PPTR_SET,
 * PPTR_REMOVE or PPTR_REPLACE) completed by the replay, as the kernel's
 * recovery completes them (xfs_attr_recover_work, xfs_attri_recover_work,
 * xfs_attr_set_iter, read for the rules):
 *
 *  - the file is fetched by handle (xlog_recover_iget_handle): an inode
 *    core, in use, of the generation the intent names (alfi_igen); else
 *    the recovery stops as corruption (the mount fails), and so does the
 *    replay (-EUCLEAN);
 *  - no attr fork: the state machine starts done (xfs_attr_init_add_state),
 *    nothing changes;
 *  - a short form fork (local, or extents with none, which a set turns
 *    into an empty short form first: xfs_attr_shortform_create): a parent
 *    pointer matches by name and value (the parent's inode and
 *    generation); a set removes the match and appends the entry
 *    (xfs_attr_init_replace_state, since the fork exists), a remove takes
 *    the match out (an absent one is no error: XFS_DA_OP_OKNOENT), a
 *    replace removes the old name and value and appends the new; an add
 *    stamps the change time (xfs_attr_try_sf_addname) and sets the fork
 *    offset as xfs_attr_shortform_bytesfit computes it when the entry does
 *    not fit the fork as it is;
 *  - a fork in blocks, or an add that turns the short form into a leaf
 *    (a name of 255 bytes, no room even past the fork offset move): not
 *    done here; the replay fails with -EOPNOTSUPP naming the intent.
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/inode.h"
#include "libfs/format/verify.h"

/* struct xfs_attr_sf_hdr and one entry's header (namelen, valuelen, flags) */
#define SF_HDR 4u
#define SF_ENT 3u
/* XFS_BMDR_SPACE_CALC(MINDBTPTRS), XFS_BMDR_SPACE_CALC(MINABTPTRS) */
#define BMDR_MIN_DATA (4u + 3u * 16u)
#define BMDR_MIN_ATTR (4u + 2u * 16u)

struct sf_ent {
	uint8_t flags;
	uint8_t namelen, valuelen;
	const unsigned char *name, *value;
};

/* The short form entries of fork (size bytes), bounds-checked: how many, or -1. */
static int sf_parse(const unsigned char *fork, uint32_t size, struct sf_ent *v, int max)
{
	uint32_t tot, at = SF_HDR;
	int n;

	if (size < SF_HDR)
		return -1;
	tot = get_be16(fork);
	n = fork[2];
	if (tot < SF_HDR || tot > size || n > max)
		return -1;
	for (int i = 0; i < n; i++) {
		if (at + SF_ENT > tot || at + SF_ENT + fork[at] + fork[at + 1] > tot || !fork[at])
			return -1;
		v[i] = (struct sf_ent){ .namelen = fork[at], .valuelen = fork[at + 1],
					.flags = fork[at + 2], .name = fork + at + SF_ENT };
		v[i].value = v[i].name + v[i].namelen;
		at += SF_ENT + v[i].namelen + v[i].valuelen;
	}
	return at == tot ? n : -1;
}

/*
 * The fork offset an attr fork of bytes needs (xfs_attr_shortform_bytesfit
 * for attr2, the only kind a v5 filesystem has): the one it has when the
 * bytes fit, else the one that makes room, 0 when none does (the kernel
 * goes to a leaf block then).
 */
static uint32_t bytesfit(const struct fs_geom *g, const struct fs_inode *ip, uint32_t bytes)
{
	uint32_t lit = fs_inode_litino(g), dsize, minoff, maxoff, off;

	if (bytes > lit)
		return 0;
	off = (lit - bytes) >> 3;
	if (ip->format == XFS_DINODE_FMT_DEV)
		return off >= 1 ? 1 : 0;
	if (bytes <= fs_inode_fork_size(g, ip, XFS_ATTR_FORK))
		return ip->forkoff;
	switch (ip->format) {
	case XFS_DINODE_FMT_EXTENTS:
		dsize = (uint32_t)ip->nextents * 16u;
		break;
	case XFS_DINODE_FMT_LOCAL:
		dsize = (uint32_t)ip->size;
		break;
	default:
		/* a data btree with an attr fork keeps its offset: it did not fit */
		return 0;
	}
	minoff = ((dsize > BMDR_MIN_DATA ? dsize : BMDR_MIN_DATA) + 7) >> 3;
	maxoff = (lit - BMDR_MIN_ATTR) >> 3;
	if (off >= maxoff)
		return maxoff;
	return off >= minoff ? off : 0;
}

static bool is_match(const struct sf_ent *e, const unsigned char *name, uint32_t namelen,
		     const unsigned char *value)
{
	return (e->flags & (XFS_ATTR_ROOT | XFS_ATTR_SECURE | XFS_ATTR_PARENT)) == XFS_ATTR_PARENT &&
	       e->namelen == namelen && e->valuelen == sizeof(struct xfs_parent_rec) &&
	       !memcmp(e->name, name, namelen) && !memcmp(e->value, value, e->valuelen);
}

static int pptr_fail(struct fs_replay *rp, int err, const struct fs_log_attri *a, const char *why)
{
	char what[700];

	fs_log_attri_describe(a, what, sizeof(what));
	return replay_fail(rp, err, "the unfinished %s: %s", what, why);
}

/* One parent pointer intent on its file: 1 changed, 0 nothing to do, negative errno. */
static int apply_pptr(struct fs_replay *rp, const struct fs_log_attri *a)
{
	const struct fs_geom *g = &rp->fs->g;
	uint32_t bbs = (g->inodesize + BBSIZE - 1) >> BBSHIFT, asize, tot, newoff;
	uint64_t daddr = fs_ino_to_daddr(g, a->ino);
	struct sf_ent *v = NULL;
	unsigned char *b = NULL, *fork, *out = NULL;
	struct fs_inode ip;
	struct xfs_dinode *d;
	char why[200];
	bool add, stamp = false;
	int n, err;

	err = replay_buf_get(rp, daddr, bbs, &b);
	if (err)
		return err;
	d = (struct xfs_dinode *)b;
	fs_inode_decode(b, &ip);
	if (be16(d->di_magic) != XFS_DINODE_MAGIC || ip.version != 3 || ip.ino != a->ino) {
		err = pptr_fail(rp, -EUCLEAN, a, "its inode is not an inode core; the kernel's "
				"recovery stops there (mounting fails)");
		goto out;
	}
	if (!ip.mode || ip.gen != a->igen) {
		snprintf(why, sizeof(why), "the file is %s; the kernel's recovery stops there "
			 "(mounting fails)", !ip.mode ? "free (mode 0)" : "of another generation");
		if (ip.mode && ip.gen != a->igen)
			snprintf(why, sizeof(why), "the file has generation %u, the intent names %u; "
				 "the kernel's recovery stops there (mounting fails)", ip.gen, a->igen);
		err = pptr_fail(rp, -EUCLEAN, a, why);
		goto out;
	}
	if (!ip.forkoff) {
		rp->st.pptrs_noop++;
		goto out;
	}
	add = a->op != XFS_ATTRI_OP_FLAGS_PPTR_REMOVE;
	if (ip.aformat == XFS_DINODE_FMT_EXTENTS && !ip.anextents) {
		if (!add)
			goto out;
	} else if (ip.aformat != XFS_DINODE_FMT_LOCAL) {
		err = pptr_fail(rp, -EOPNOTSUPP, a, "the file's attr fork is in blocks, where this "
				"version does not complete parent pointer intents (mount the "
				"filesystem to let the kernel's recovery do it)");
		goto out;
	}
	asize = fs_inode_fork_size(g, &ip, XFS_ATTR_FORK);
	fork = (unsigned char *)fs_inode_fork_ptr(b, &ip, XFS_ATTR_FORK);
	v = calloc(256, sizeof(*v));
	out = calloc(1, fs_inode_litino(g));
	if (!v || !out) {
		err = -ENOMEM;
		goto out;
	}
	n = 0;
	if (ip.aformat == XFS_DINODE_FMT_LOCAL) {
		n = sf_parse(fork, asize, v, 255);
		if (n < 0) {
			err = pptr_fail(rp, -EUCLEAN, a, "the file's short form attr fork fails its "
					"check; the kernel's recovery stops there (mounting fails)");
			goto out;
		}
	}
	/* the old entry out: the name and value (set, remove) or the old ones (replace) */
	for (int i = 0; i < n; i++)
		if (is_match(&v[i], a->name, a->namelen, a->value)) {
			memmove(v + i, v + i + 1, (size_t)(n - i - 1) * sizeof(*v));
			n--;
			break;
		}
	if (add) {
		const unsigned char *nm = a->newnamelen ? a->newname : a->name;
		uint32_t nl = a->newnamelen ? a->newnamelen : a->namelen;

		if (n >= 255 || nl >= 255) {
			err = pptr_fail(rp, -EOPNOTSUPP, a, "the add turns the file's short form attr "
					"fork into a leaf block, which this version does not do here "
					"(mount the filesystem to let the kernel's recovery do it)");
			goto out;
		}
		v[n++] = (struct sf_ent){ .flags = XFS_ATTR_PARENT, .namelen = (uint8_t)nl,
					  .valuelen = sizeof(struct xfs_parent_rec), .name = nm,
					  .value = a->newnamelen ? a->newvalue : a->value };
		stamp = true;
	}
	tot = SF_HDR;
	for (int i = 0; i < n; i++)
		tot += SF_ENT + v[i].namelen + v[i].valuelen;
	newoff = ip.forkoff;
	if (add) {
		newoff = bytesfit(g, &ip, tot);
		if (!newoff) {
			err = pptr_fail(rp, -EOPNOTSUPP, a, "the add does not fit the file's short "
					"form attr fork and turns it into a leaf block, which this "
					"version does not do here (mount the filesystem to let the "
					"kernel's recovery do it)");
			goto out;
		}
	}
	/* the new fork, built apart (entries point into the old) then put in place */
	put_be16(out, (uint16_t)tot);
	out[2] = (uint8_t)n;
	out[3] = 0;
	{
		uint32_t at = SF_HDR;

		for (int i = 0; i < n; i++) {
			out[at] = v[i].namelen;
			out[at + 1] = v[i].valuelen;
			out[at + 2] = v[i].flags;
			memcpy(out + at + SF_ENT, v[i].name, v[i].namelen);
			memcpy(out + at + SF_ENT + v[i].namelen, v[i].value, v[i].valuelen);
			at += SF_ENT + v[i].namelen + v[i].valuelen;
		}
	}
	d->di_forkoff = (uint8_t)newoff;
	d->di_aformat = XFS_DINODE_FMT_LOCAL;
	fs_inode_decode(b, &ip);
	fork = (unsigned char *)fs_inode_fork_ptr(b, &ip, XFS_ATTR_FORK);
	asize = fs_inode_fork_size(g, &ip, XFS_ATTR_FORK);
	memset(fork, 0, asize);
	memcpy(fork, out, tot);
	if (stamp) {
		struct timespec ts;
		uint64_t raw;

		clock_gettime(CLOCK_REALTIME, &ts);
		if (ip.bigtime)
			raw = ((uint64_t)ts.tv_sec + 2147483648ull) * 1000000000ull +
			      (uint64_t)ts.tv_nsec;
		else
			raw = ((uint64_t)(uint32_t)ts.tv_sec << 32) | (uint32_t)ts.tv_nsec;
		put_be64(&d->di_ctime, raw);
	}
	fs_crc_update(b, g->inodesize, XFS_DINODE_CRC_OFF);
	err = replay_buf_put(rp, daddr, bbs, b);
	if (!err) {
		struct fs_findings fl;
		struct fs_vctx vc = { .g = g, .daddr = daddr, .ino = a->ino,
				      .agno = fs_ino_to_agno(g, a->ino) };

		fs_findings_init(&fl);
		vc.fl = &fl;
		fs_verify(FS_MT_INODE, &vc, b, g->inodesize);
		if (fl.n) {
			snprintf(why, sizeof(why), "the file fails its check once completed: %s: %.100s",
				 fl.v[0].def->code, fl.v[0].message);
			err = pptr_fail(rp, -EUCLEAN, a, why);
		}
		fs_findings_free(&fl);
		if (!err)
			err = replay_note_write(rp, daddr, bbs, 0, g->inodesize, FS_MT_INODE, a->ino);
		if (!err)
			err = 1;
	}
out:
	free(v);
	free(out);
	free(b);
	return err;
}

int replay_apply_pptrs(struct fs_replay *rp)
{
	for (size_t i = 0; i < rp->nopen_pptrs; i++) {
		int r = apply_pptr(rp, &rp->open_pptrs[i]);

		if (r < 0)
			return r;
		rp->st.pptrs_applied++;
	}
	return 0;
}
