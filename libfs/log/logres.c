// SPDX-License-Identifier: GPL-2.0
/*
 * Transaction log reservations, for one purpose: the minimum log size a
 * geometry allows.  The kernel reserves log space per transaction type from
 * the geometry (how many buffers and inodes a worst-case transaction of that
 * type dirties, each with its log item overhead), multiplies the permanent
 * ones by their roll count, and will not mount a filesystem whose log cannot
 * hold three of the largest.  mkfs.xfs sizes logs from the same number, in
 * the variant kept stable for old kernels (libxfs xfs_log_rlimit.c): rmap
 * heights of 9 with reflink, the early reflink roll counts and refcount
 * splits inside the write/truncate reservations.  A filesystem with parent
 * pointers is new enough to drop that variant (xfsprogs 6.10): its minimum
 * comes from the reservations the kernel really makes, and every namespace
 * transaction also reserves for setting or removing a parent pointer xattr
 * and logging its intent items.  The byte counts here are the kernel's
 * rules, as of xfsprogs 6.10, expressed on struct fs_geom.
 */
#include "libfs/log/logres.h"

/* Roll counts of the permanent reservations (kernel xfs_trans_resv.h). */
enum {
	LC_DEFAULT = 1, LC_DEFAULT_PERM = 2, LC_ITRUNCATE = 2, LC_INACTIVE = 2, LC_CREATE = 2,
	LC_CREATE_TMPFILE = 2, LC_MKDIR = 3, LC_SYMLINK = 3, LC_REMOVE = 2, LC_LINK = 2,
	LC_RENAME = 2, LC_WRITE = 2, LC_ADDAFORK = 2, LC_ATTRINVAL = 1, LC_ATTRSET = 3,
	LC_ATTRRM = 3, LC_WRITE_REFLINK = 8, LC_ITRUNCATE_REFLINK = 8,
};

/* The early-reflink rmapbt height the minimum log size keeps (xfs_trans_space.h). */
#define OLD_REFLINK_RMAP_MAXLEVELS 9

struct lr {
	const struct fs_geom *g;
	bool current;                /* the reservations as made, not the early-reflink variant */
	uint32_t bsize, ssize;
	uint32_t rmap_maxlevels;     /* as the minimum-size variant sees it */
	uint32_t alloc_contig;       /* alloc btree leaf maxrecs - minrecs */
	uint32_t dquot_res;
};

struct resv { uint32_t logres, logcount; };

static uint32_t max2(uint32_t a, uint32_t b) { return a > b ? a : b; }
static uint32_t max3(uint32_t a, uint32_t b, uint32_t c) { return max2(a, max2(b, c)); }
static uint32_t div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* Each logged buffer costs an op header and a buf log format, rounded to 128 bytes. */
static uint32_t buf_res(uint32_t nbufs, uint32_t size)
{
	uint32_t overhead = (sizeof(struct xlog_op_header) + sizeof(struct xfs_buf_log_format) +
			     127) / 128 * 128;

	return nbufs * (size + overhead);
}

/* Inodes are logged in memory format: core + two forks with full bmbt block headers. */
static uint32_t inode_res(const struct lr *r, uint32_t n)
{
	return n * (uint32_t)(4 * sizeof(struct xlog_op_header) +
			      sizeof(struct xfs_inode_log_format) + r->g->inodesize +
			      2 * XFS_BTREE_LBLOCK_CRC_LEN);
}

/* bnobt + cntbt (+ rmapbt) splits for num_ops extent allocations or frees. */
static uint32_t allocfree_blocks(const struct lr *r, uint32_t num_ops)
{
	uint32_t b = num_ops * 2 * (2 * r->g->alloc_maxlevels - 1);

	if (r->g->rmapbt)
		b += num_ops * (2 * r->rmap_maxlevels - 1);
	return b;
}

static uint32_t refcountbt_blocks(const struct lr *r, uint32_t num_ops)
{
	return num_ops * (2 * r->g->refc_maxlevels - 1);
}

static uint32_t inobt_res(const struct lr *r)
{
	return buf_res(r->g->inobt_maxlevels, r->bsize) + buf_res(allocfree_blocks(r, 1), r->bsize);
}

static uint32_t finobt_res(const struct lr *r)
{
	return r->g->finobt ? inobt_res(r) : 0;
}

/* v5 chunk allocation logs no inode buffers (ordered); a free logs headers only. */
static uint32_t inode_chunk_res(const struct lr *r)
{
	return buf_res(allocfree_blocks(r, 1), r->bsize);
}

static uint32_t chunk_free_res(const struct lr *r)
{
	uint32_t ialloc_blks = max2(XFS_INODES_PER_CHUNK, r->g->inopblock) >> r->g->inopblog;

	return inode_chunk_res(r) + buf_res(ialloc_blks, 0);
}

static uint32_t bm_maxlevels(const struct lr *r, int whichfork)
{
	return whichfork == XFS_DATA_FORK ? r->g->bmbt_maxlevels_data : r->g->bmbt_maxlevels_attr;
}

/* Blocks of bmbt growth for adding extents covering nblocks (XFS_NEXTENTADD_SPACE_RES). */
static uint32_t nextentadd_blocks(const struct lr *r, uint32_t nblocks, int whichfork)
{
	return div_up(nblocks, r->alloc_contig) * (bm_maxlevels(r, whichfork) - 1);
}

/* Directory/attr entry addition: da btree blocks and their bmbt growth. */
static uint32_t daenter_1b(const struct lr *r, int w)
{
	return w == XFS_DATA_FORK ? r->g->dirblkfsbs : 1;
}

static uint32_t daenter_dbs(int w)
{
	return XFS_DA_NODE_MAXDEPTH + (w == XFS_DATA_FORK ? 2 : 0);
}

static uint32_t daenter_blocks(const struct lr *r, int w)
{
	return daenter_1b(r, w) * daenter_dbs(w);
}

static uint32_t daenter_bmap1b(const struct lr *r, int w)
{
	return nextentadd_blocks(r, daenter_1b(r, w), w);
}

static uint32_t daenter_bmaps(const struct lr *r, int w)
{
	return daenter_dbs(w) * daenter_bmap1b(r, w);
}

static uint32_t dirop_log_count(const struct lr *r)
{
	return daenter_blocks(r, XFS_DATA_FORK) + daenter_bmaps(r, XFS_DATA_FORK) + 1;
}

/* Refcount updates in their own transaction (deferred): nr_ops AGFs and refcountbt splits. */
static uint32_t refcountbt_res(const struct lr *r, uint32_t nr_ops)
{
	if (!r->g->reflink)
		return 0;
	return buf_res(nr_ops, r->ssize) + buf_res(refcountbt_blocks(r, nr_ops), r->bsize);
}

/*
 * Writes and truncates.  The early-reflink form logged the refcountbt
 * splits in the same transaction; now they are a transaction of their own.
 */
static uint32_t write_res(const struct lr *r)
{
	uint32_t t1, t3, adj = 0;

	t1 = inode_res(r, 1) + buf_res(bm_maxlevels(r, XFS_DATA_FORK), r->bsize) +
	     buf_res(3, r->ssize) + buf_res(allocfree_blocks(r, 2), r->bsize);
	/* no realtime device: the rt variant (t2) is 0 */
	t3 = buf_res(5, r->ssize) + buf_res(allocfree_blocks(r, 2), r->bsize);
	if (r->current)
		return r->dquot_res + max3(refcountbt_res(r, 1), t1, t3);
	if (r->g->reflink)
		adj = buf_res(refcountbt_blocks(r, 2), r->bsize);
	return r->dquot_res + max2(t1 + adj, t3 + adj);
}

static uint32_t itruncate_res(const struct lr *r)
{
	uint32_t t1, t2;

	t1 = inode_res(r, 1) + buf_res(bm_maxlevels(r, XFS_DATA_FORK) + 1, r->bsize);
	t2 = buf_res(9, r->ssize) + buf_res(allocfree_blocks(r, 4), r->bsize);
	if (r->current)
		return r->dquot_res + max3(refcountbt_res(r, 2), t1, t2);
	if (r->g->reflink)
		t2 += buf_res(refcountbt_blocks(r, 4), r->bsize);
	return r->dquot_res + max2(t1, t2);
}

static uint32_t attrsetm_res(const struct lr *r);
static uint32_t attrrm_res(const struct lr *r);

/*
 * What one parent pointer intent item logs: its format, the value (a
 * struct xfs_parent_rec) and the longest name; a replace logs two of each.
 */
static uint32_t iovec_len(uint32_t len) { return (len + 3) & ~3u; }

static uint32_t pptr_link_overhead(void)
{
	return (uint32_t)sizeof(struct xfs_attri_log_format) +
	       iovec_len(sizeof(struct xfs_parent_rec)) + iovec_len(MAXNAMELEN - 1);
}

static uint32_t pptr_replace_overhead(void)
{
	return pptr_link_overhead() + iovec_len(sizeof(struct xfs_parent_rec)) +
	       iovec_len(MAXNAMELEN - 1);
}

static uint32_t rename_res(const struct lr *r)
{
	uint32_t t1 = inode_res(r, 5) + buf_res(2 * dirop_log_count(r), r->bsize);
	uint32_t t2 = buf_res(7, r->ssize) + buf_res(allocfree_blocks(r, 3), r->bsize);
	/* a rename replaces the source's pptr, removes the target's, adds the whiteout's */
	uint32_t overhead = r->dquot_res, rename_ovh, exchange_ovh;

	if (!r->g->parent)
		return overhead + max2(t1, t2);
	rename_ovh = pptr_replace_overhead() + 2 * pptr_link_overhead();
	exchange_ovh = 2 * pptr_replace_overhead();
	overhead += max2(rename_ovh, exchange_ovh);
	return overhead + max3(t1, t2, max2(attrsetm_res(r), attrrm_res(r)));
}

static uint32_t iunlink_remove_res(const struct lr *r)
{
	return buf_res(1, r->ssize) + 2 * r->g->inode_cluster_size;
}

static uint32_t iunlink_add_res(const struct lr *r)
{
	return buf_res(1, r->ssize) + r->g->inode_cluster_size;
}

/*
 * A link, remove or create: its base overhead and the larger of its parts;
 * with parent pointers also the pptr xattr change (t3) and its intent item.
 */
static uint32_t namespace_res(const struct lr *r, uint32_t overhead, uint32_t t1, uint32_t t2,
			      uint32_t t3)
{
	if (!r->g->parent)
		return overhead + max2(t1, t2);
	return overhead + pptr_link_overhead() + max3(t1, t2, t3);
}

static uint32_t link_res(const struct lr *r)
{
	return namespace_res(r, r->dquot_res + iunlink_remove_res(r),
			     inode_res(r, 2) + buf_res(dirop_log_count(r), r->bsize),
			     buf_res(3, r->ssize) + buf_res(allocfree_blocks(r, 1), r->bsize),
			     attrsetm_res(r));
}

static uint32_t remove_res(const struct lr *r)
{
	return namespace_res(r, r->dquot_res + iunlink_add_res(r),
			     inode_res(r, 2) + buf_res(dirop_log_count(r), r->bsize),
			     buf_res(4, r->ssize) + buf_res(allocfree_blocks(r, 2), r->bsize),
			     attrrm_res(r));
}

static uint32_t create_modify_res(const struct lr *r)
{
	return inode_res(r, 2) + buf_res(1, r->ssize) + r->bsize +
	       buf_res(dirop_log_count(r), r->bsize) + finobt_res(r);
}

static uint32_t create_alloc_res(const struct lr *r)
{
	return buf_res(2, r->ssize) + r->ssize + inode_chunk_res(r) + inobt_res(r) + finobt_res(r);
}

static uint32_t icreate_res(const struct lr *r)
{
	return namespace_res(r, r->dquot_res, create_alloc_res(r), create_modify_res(r),
			     attrsetm_res(r));
}

static uint32_t attrsetm_res(const struct lr *r)
{
	return r->dquot_res + inode_res(r, 1) + buf_res(1, r->ssize) +
	       buf_res(XFS_DA_NODE_MAXDEPTH, r->bsize);
}

static uint32_t attrrm_res(const struct lr *r)
{
	return r->dquot_res +
	       max2(inode_res(r, 1) + buf_res(XFS_DA_NODE_MAXDEPTH, r->bsize) +
		    bm_maxlevels(r, XFS_ATTR_FORK) * r->bsize +
		    buf_res(bm_maxlevels(r, XFS_DATA_FORK), 0),
		    buf_res(5, r->ssize) + buf_res(allocfree_blocks(r, 2), r->bsize));
}

static uint32_t attrsetrt_res(const struct lr *r)
{
	return buf_res(1, r->ssize) + buf_res(bm_maxlevels(r, XFS_ATTR_FORK), r->bsize);
}

/* Every reservation, in the kernel's struct xfs_trans_resv order (ties keep the first). */
static size_t all_resv(const struct lr *r, struct resv *v)
{
	const struct fs_geom *g = r->g;
	uint32_t adj = (g->reflink || g->rmapbt) + g->reflink + g->rmapbt;
	uint32_t write_count = g->reflink ? LC_WRITE_REFLINK : g->rmapbt ? LC_WRITE : LC_WRITE + adj;
	uint32_t trunc_count = g->reflink ? LC_ITRUNCATE_REFLINK :
			       g->rmapbt ? LC_ITRUNCATE : LC_ITRUNCATE + adj;
	/* the rolls a namespace change needs for its parent pointer xattr */
	uint32_t pset = g->parent ? LC_ATTRSET : 0, prm = g->parent ? LC_ATTRRM : 0;
	uint32_t write = write_res(r);
	size_t n = 0;

	if (r->current) {
		write_count = LC_WRITE + adj;
		trunc_count = LC_ITRUNCATE + adj;
	}
	v[n++] = (struct resv){ write, write_count };                           /* write */
	v[n++] = (struct resv){ itruncate_res(r), trunc_count };                /* itruncate */
	v[n++] = (struct resv){ rename_res(r), LC_RENAME + max2(pset, prm) };  /* rename */
	v[n++] = (struct resv){ link_res(r), LC_LINK + pset };                  /* link */
	v[n++] = (struct resv){ remove_res(r), LC_REMOVE + prm };               /* remove */
	v[n++] = (struct resv){ icreate_res(r) + buf_res(1, XFS_SYMLINK_MAXLEN),
				LC_SYMLINK + pset };                            /* symlink */
	v[n++] = (struct resv){ icreate_res(r), LC_CREATE + pset };             /* create */
	v[n++] = (struct resv){ r->dquot_res + create_alloc_res(r) + iunlink_add_res(r),
				LC_CREATE_TMPFILE };                            /* create_tmpfile */
	v[n++] = (struct resv){ icreate_res(r), LC_MKDIR + pset };              /* mkdir */
	v[n++] = (struct resv){ r->dquot_res + inode_res(r, 1) + buf_res(3, r->ssize) +
				iunlink_remove_res(r) + chunk_free_res(r) + inobt_res(r) +
				finobt_res(r), LC_INACTIVE };                   /* ifree */
	v[n++] = (struct resv){ r->dquot_res + inode_res(r, 1) + buf_res(1, r->ssize),
				0 };                                            /* ichange */
	v[n++] = (struct resv){ buf_res(3, r->ssize) + buf_res(allocfree_blocks(r, 1), r->bsize),
				LC_DEFAULT_PERM };                              /* growdata */
	v[n++] = (struct resv){ r->dquot_res + inode_res(r, 1) + buf_res(2, r->ssize) +
				buf_res(1, g->dirblksize) +
				buf_res(daenter_bmap1b(r, XFS_DATA_FORK) + 1, r->bsize) +
				buf_res(allocfree_blocks(r, 1), r->bsize),
				LC_ADDAFORK };                                  /* addafork */
	v[n++] = (struct resv){ inode_res(r, 1), 0 };                           /* writeid */
	v[n++] = (struct resv){ max2(inode_res(r, 1) +
				     buf_res(bm_maxlevels(r, XFS_ATTR_FORK), r->bsize),
				     buf_res(9, r->ssize) +
				     buf_res(allocfree_blocks(r, 4), r->bsize)),
				LC_ATTRINVAL };                                 /* attrinval */
	v[n++] = (struct resv){ attrsetm_res(r), LC_ATTRSET };                  /* attrsetm */
	v[n++] = (struct resv){ attrsetrt_res(r), 0 };                          /* attrsetrt */
	v[n++] = (struct resv){ attrrm_res(r), LC_ATTRRM };                     /* attrrm */
	v[n++] = (struct resv){ buf_res(1, r->ssize), 0 };                      /* clearagi */
	v[n++] = (struct resv){ buf_res(2, r->ssize) +
				buf_res(bm_maxlevels(r, XFS_DATA_FORK), r->bsize) +
				inode_res(r, 1) + buf_res(allocfree_blocks(r, 1), r->bsize),
				LC_DEFAULT_PERM };                              /* growrtalloc */
	v[n++] = (struct resv){ buf_res(1, r->bsize), 0 };                      /* growrtzero */
	/* no realtime device: the summary file is empty */
	v[n++] = (struct resv){ buf_res(1, r->ssize) + inode_res(r, 2) + buf_res(1, r->bsize) +
				buf_res(1, 0), 0 };                             /* growrtfree */
	v[n++] = (struct resv){ buf_res(1, sizeof(struct xfs_disk_dquot)),
				LC_DEFAULT };                                   /* qm_setqlim */
	v[n++] = (struct resv){ write + buf_res(1, r->bsize * XFS_DQUOT_CLUSTER_SIZE_FSB - 1),
				write_count };                                  /* qm_dqalloc */
	v[n++] = (struct resv){ buf_res(1, r->ssize), LC_DEFAULT };             /* sb */
	v[n++] = (struct resv){ inode_res(r, 1), 0 };                           /* fsyncts */
	return n;
}

/* Worst-case log space of one transaction unit: headers, split records, padding. */
static uint32_t unit_res(uint32_t unit_bytes, uint32_t logsunit)
{
	const uint32_t iclog_size = XLOG_MAX_RECORD_BSIZE;          /* v2 logs */
	const uint32_t hdr_size = (iclog_size / XLOG_HEADER_CYCLE_SIZE) * FS_BBSIZE;
	const uint32_t space = iclog_size - hdr_size;
	const uint32_t oph = sizeof(struct xlog_op_header);
	uint32_t nhdr;

	unit_bytes += oph + sizeof(struct xfs_trans_header) + oph;  /* trans header, start rec */
	nhdr = div_up(unit_bytes, space);
	unit_bytes += oph * nhdr;                                   /* split records */
	while (!nhdr || div_up(unit_bytes, space) > nhdr) {
		unit_bytes += oph;
		nhdr++;
	}
	unit_bytes += hdr_size * nhdr + hdr_size;                   /* + the commit record's */
	unit_bytes += logsunit > 1 ? 2 * logsunit : 2 * FS_BBSIZE;  /* roundoff, twice */
	return unit_bytes;
}

uint32_t fs_log_min_blocks(const struct fs_geom *g, uint32_t logsunit_bytes)
{
	/* features newer than 2023 (parent pointers) take the reservations as they are */
	bool current = g->parent;
	struct lr r = {
		.g = g, .current = current, .bsize = g->blocksize, .ssize = g->sectsize,
		.rmap_maxlevels = g->rmapbt && g->reflink && !current ? OLD_REFLINK_RMAP_MAXLEVELS :
				  g->rmap_maxlevels,
		.dquot_res = (uint32_t)(sizeof(struct xfs_dq_logformat) +
					sizeof(struct xfs_disk_dquot)) * 6,
	};
	uint32_t leaf_max = (uint32_t)((g->blocksize - XFS_BTREE_SBLOCK_CRC_LEN) /
				       sizeof(xfs_alloc_rec_t));
	struct resv v[32], best = { 0, 0 };
	uint64_t space = 0, max_logres, bbs, attr_space;
	uint32_t local_max, nblks, lsunit_bb = 0;
	size_t n;

	r.alloc_contig = leaf_max - leaf_max / 2;
	n = all_resv(&r, v);
	for (size_t i = 0; i < n; i++) {
		uint64_t t = v[i].logcount > 1 ? (uint64_t)v[i].logres * v[i].logcount : v[i].logres;

		if (t > space) {
			space = t;
			best = v[i];
		}
	}

	/* setting the largest local attribute at mount time (attrsetm plus attrsetrt per block) */
	local_max = (uint32_t)xfs_attr_leaf_entsize_local_max((int)g->blocksize) - MAXNAMELEN - 1;
	nblks = daenter_blocks(&r, XFS_ATTR_FORK) + daenter_bmaps(&r, XFS_ATTR_FORK) +
		div_up(local_max, g->blocksize);
	/* the early form counted bmbt growth for local_max blocks where it meant bytes */
	nblks += nextentadd_blocks(&r, current ? div_up(local_max, g->blocksize) : local_max,
				   XFS_ATTR_FORK);
	attr_space = attrsetm_res(&r) + (uint64_t)attrsetrt_res(&r) * nblks;
	if (attr_space > space) {
		best.logres = (uint32_t)attr_space;
		best.logcount = LC_ATTRSET;
	}

	max_logres = unit_res(best.logres, logsunit_bytes);
	if (best.logcount > 1)
		max_logres *= best.logcount;
	if (logsunit_bytes > 1)
		lsunit_bb = logsunit_bytes / FS_BBSIZE;
	/* two maximal transactions (plus stripe padding) must fit in half the log */
	bbs = (max_logres + FS_BBSIZE - 1) / FS_BBSIZE;
	if (lsunit_bb)
		bbs = (bbs + lsunit_bb - 1) / lsunit_bb * lsunit_bb + 2 * lsunit_bb;
	else
		bbs += 2 * FS_BBSIZE;
	bbs *= XFS_MIN_LOG_FACTOR;
	return (uint32_t)((bbs + (1u << (g->blocklog - FS_BBSHIFT)) - 1) >> (g->blocklog - FS_BBSHIFT));
}
