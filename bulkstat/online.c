// SPDX-License-Identifier: GPL-2.0
/*
 * The online engine: a mounted XFS asked through XFS_IOC_BULKSTAT (the v5
 * interface, struct xfs_bulk_ireq), printed through the same formatter as
 * the offline engine.  The kernel stops a call at an inode it cannot read
 * without saying which one; the engine then steps through that inode group
 * (XFS_IOC_INUMBERS) one inode at a time to name it, skips it, and goes on.
 * Also: finding the mount point of a block device that is mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bulkstat/bulkstat.h"

#include <linux/fs.h>
#include <xfs/xfs_format.h>

#define BATCH 4096
#define OUTBUF (4u << 20)

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342	/* 'XFSB', statfs f_type (linux/magic.h) */
#endif

int bs_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

struct online {
	const struct bs_opts *o;
	int fd;
	uint32_t flags;            /* request flags the kernel accepted */
	struct xfs_bulkstat_req *req;
	char *out;
	size_t outlen;
	struct bs_paths *paths;    /* --paths: the link map */
	struct bs_buf rec, pathbuf;
	struct bs_result *r;
	int werr;
};

static void emit(struct online *s, struct xfs_bulkstat *bs)
{
	/*
	 * The kernel fills bs_cowextsize_blks only for inodes with the hint
	 * and reuses one buffer per call, so an inode without the hint can
	 * show the previous inode's value (seen on 6.18).  Without the flag
	 * the hint is 0.
	 */
	if (!(bs->bs_xflags & FS_XFLAG_COWEXTSIZE))
		bs->bs_cowextsize_blks = 0;
	/* one meaning for both counters whatever the kernel filled in */
	if (!(s->flags & XFS_BULK_IREQ_NREXT64))
		bs->bs_extents64 = bs->bs_extents;	/* a kernel without the 64-bit counter */
	else
		bs->bs_extents = bs->bs_extents64 > XFS_MAX_EXTCNT_DATA_FORK_SMALL ?
				 (uint32_t)XFS_MAX_EXTCNT_DATA_FORK_SMALL : (uint32_t)bs->bs_extents64;
	if (s->paths) {
		int err = bs_record_with_paths(&s->o->out, s->paths, bs, &s->rec, &s->pathbuf);

		if (err && !s->werr)
			s->werr = err;
		if (OUTBUF - s->outlen < s->rec.len) {
			if (!s->werr)
				s->werr = bs_write_all(s->o->out_fd, s->out, s->outlen);
			s->outlen = 0;
		}
		if (s->rec.len > OUTBUF) {
			if (!s->werr)
				s->werr = bs_write_all(s->o->out_fd, s->rec.p, s->rec.len);
		} else if (!err) {
			memcpy(s->out + s->outlen, s->rec.p, s->rec.len);
			s->outlen += s->rec.len;
		}
		s->r->inodes++;
		return;
	}
	if (OUTBUF - s->outlen < BS_MAX_RECORD) {
		if (!s->werr)
			s->werr = bs_write_all(s->o->out_fd, s->out, s->outlen);
		s->outlen = 0;
	}
	s->outlen += bs_format_record(&s->o->out, bs, s->out + s->outlen);
	s->r->inodes++;
}

/* One XFS_IOC_BULKSTAT call from ino; returns records or negative errno. */
static int call(struct online *s, uint64_t ino, uint32_t icount, uint64_t *next)
{
	struct xfs_bulk_ireq *h = &s->req->hdr;

	for (;;) {
		memset(h, 0, sizeof(*h));
		h->ino = ino;
		h->icount = icount;
		h->flags = s->flags;
		if (s->o->have_ag) {
			h->flags |= XFS_BULK_IREQ_AGNO;
			h->agno = s->o->ag;
		}
		if (ioctl(s->fd, XFS_IOC_BULKSTAT, s->req) == 0)
			break;
		if (errno == EINVAL && (s->flags & XFS_BULK_IREQ_NREXT64)) {
			s->flags &= ~XFS_BULK_IREQ_NREXT64;	/* older kernel */
			continue;
		}
		if (errno == EINVAL && s->o->have_ag && ino != 0) {
			/* a start inode in an earlier AG: the kernel wants the AG's start (0) */
			ino = 0;
			continue;
		}
		return -errno;
	}
	*next = h->ino;
	return (int)h->ocount;
}

/*
 * The call starting at ino failed on some inode.  Find the inode group at
 * or after ino, stat its allocated inodes one by one, report the ones the
 * kernel cannot read, and return where to continue.
 */
static int step_over_damage(struct online *s, uint64_t ino, uint64_t *next)
{
	/* one inode group: the request header and its one record, allocated together */
	struct xfs_inumbers_req *in = calloc(1, sizeof(*in) + sizeof(struct xfs_inumbers));
	const struct xfs_inumbers *g;
	uint64_t cur;
	int n, ret = 1;

	if (!in)
		return -ENOMEM;
	g = &in->inumbers[0];
	in->hdr.ino = ino;
	in->hdr.icount = 1;
	if (s->o->have_ag) {
		in->hdr.flags = XFS_BULK_IREQ_AGNO;
		in->hdr.agno = s->o->ag;
	}
	if (ioctl(s->fd, XFS_IOC_INUMBERS, in) < 0) {
		ret = -errno;
		goto out;
	}
	if (in->hdr.ocount == 0) {
		ret = 0;	/* nothing further: the caller ends */
		goto out;
	}
	for (unsigned i = 0; i < 64; i++) {
		uint64_t want = g->xi_startino + i;

		if (want < ino || !(g->xi_allocmask & (1ull << i)))
			continue;
		n = call(s, want, 1, &cur);
		if (n < 0) {
			if (n != -EFSCORRUPTED && n != -EIO && n != -EFSBADCRC) {
				ret = n;
				goto out;
			}
			fprintf(stderr, "xfsx_bulkstat: inode %" PRIu64 ": skipped: the kernel cannot read it: %s\n",
				want, strerror(-n));
			s->r->damaged++;
			continue;
		}
		/* the kernel answers with the next inode it will show: only "want" is ours here */
		if (n == 1 && s->req->bulkstat[0].bs_ino == want)
			emit(s, &s->req->bulkstat[0]);
	}
	*next = g->xi_startino + 64;
out:
	free(in);
	return ret;
}

int bs_run_online(const char *mnt, const struct bs_opts *o, struct bs_result *r)
{
	struct online s = { .o = o, .r = r, .flags = XFS_BULK_IREQ_NREXT64 };
	struct statfs sfs;
	uint64_t ino = o->start_ino, next;
	int rc = XFSX_EXIT_CLEAN;

	if (o->include_internal)
		fprintf(stderr, "xfsx_bulkstat: %s is mounted: the kernel never reports internal inodes; --include-internal has no effect\n",
			mnt);
	s.fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.fd < 0) {
		fprintf(stderr, "xfsx_bulkstat: %s: %s\n", mnt, strerror(errno));
		return XFSX_EXIT_OPERATIONAL;
	}
	if (fstatfs(s.fd, &sfs) == 0 && sfs.f_type != XFS_SUPER_MAGIC) {
		fprintf(stderr, "xfsx_bulkstat: %s is not on an XFS filesystem\n", mnt);
		close(s.fd);
		return XFSX_EXIT_OPERATIONAL;
	}
	if (o->want_paths) {
		int err = bs_paths_build_online(mnt, &s.paths);

		if (err) {
			fprintf(stderr, "xfsx_bulkstat: %s: cannot gather the paths: %s\n", mnt,
				strerror(-err));
			close(s.fd);
			return XFSX_EXIT_OPERATIONAL;
		}
	}
	s.req = calloc(1, XFS_BULKSTAT_REQ_SIZE(BATCH));
	s.out = malloc(OUTBUF);
	if (!s.req || !s.out) {
		fprintf(stderr, "xfsx_bulkstat: out of memory\n");
		rc = XFSX_EXIT_OPERATIONAL;
		goto out;
	}
	s.outlen = bs_format_header(&o->out, s.out, OUTBUF);
	for (;;) {
		int n = call(&s, ino, BATCH, &next);

		if (n == -EFSCORRUPTED || n == -EIO || n == -EFSBADCRC) {
			n = step_over_damage(&s, ino, &next);
			if (n == 0)
				break;
			if (n > 0) {
				ino = next;
				continue;
			}
		}
		if (n < 0) {
			fprintf(stderr, "xfsx_bulkstat: %s: XFS_IOC_BULKSTAT: %s%s\n", mnt, strerror(-n),
				n == -EPERM || n == -EACCES ? " (it needs CAP_SYS_ADMIN)" : "");
			rc = XFSX_EXIT_OPERATIONAL;
			break;
		}
		if (n == 0)
			break;
		for (int i = 0; i < n; i++)
			emit(&s, &s.req->bulkstat[i]);
		if (s.werr)
			break;
		ino = next;
	}
	if (!s.werr && s.outlen)
		s.werr = bs_write_all(o->out_fd, s.out, s.outlen);
	if (s.werr && s.werr != -EPIPE) {
		fprintf(stderr, "xfsx_bulkstat: writing the output: %s\n", strerror(-s.werr));
		rc = XFSX_EXIT_OPERATIONAL;
	}
out:
	bs_paths_free(s.paths);
	free(s.rec.p);
	free(s.pathbuf.p);
	free(s.req);
	free(s.out);
	close(s.fd);
	return rc;
}

