// SPDX-License-Identifier: GPL-2.0
/*
 * Geometry planner: turns options and target facts into the superblock and
 * per-AG layout mkfs.xfs 6.10 would choose for the same target (block and
 * sector sizes, AG count and size with stripe alignment, log size and
 * placement, inode alignment), and computes the exact free-space counters
 * the written filesystem will have.  The rules follow xfsprogs' mkfs
 * (calc_default_ag_geometry, align_ag_geometry, calculate_log_size,
 * align_internal_log) and the kernel's allocator choices for the AGFL and
 * the root inode chunk; the code is ours.
 */
#include "mkfs/plan.h"
#include "libfs/log/logres.h"
#include "libfs/format/sb.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB(n, blog) ((uint64_t)(n) << (20 - (blog)))
#define GiB(n, blog) ((uint64_t)(n) << (30 - (blog)))
#define TiB(n, blog) ((uint64_t)(n) << (40 - (blog)))

/* mkfs.xfs's own limits (include/xfs_multidisk.h), not on-disk format facts */
#define AG_MIN_BLOCKS(blog)   ((uint64_t)XFS_MIN_AG_BYTES >> (blog))
#define AG_MAX_BLOCKS(blog)   (((uint64_t)XFS_MAX_AG_BYTES - 1) >> (blog))
#define MULTIDISK_AGLOG       5   /* 32 AGs */
#define NOMULTIDISK_AGLOG     2   /* 4 AGs */
#define MIN_REALISTIC_LOG(blog) MiB(64, blog)
#define MIN_FS_MB             300
/* log blocks one concurrent writer is budgeted (see the man page) */
#define LOG_BLOCKS_PER_WRITER_4K 512u

static int fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * A warning mkfs.xfs gives for the same choice, kept in the plan for main to
 * print: the planner does no I/O.  The words are mkfs.xfs's, so scripts and
 * people that know them read ours.
 */
static void warn(struct mkfs_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct mkfs_plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nwarnings >= MKFS_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->warnings[p->nwarnings++], MKFS_WARNING_LEN, fmt, ap);
	va_end(ap);
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static uint32_t log2_exact(uint64_t v)
{
	return (uint32_t)(63 - __builtin_clzll(v));
}

static uint32_t log2_roundup(uint64_t v)
{
	uint32_t l = 0;

	while ((1ull << l) < v)
		l++;
	return l;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void mkfs_opts_init(struct mkfs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->imaxpct = OPT_UNSET;
	o->sparse = o->nrext64 = o->exchange = o->parent = OPT_UNSET;
	o->dsunit = o->dswidth = OPT_UNSET;
	o->lsunit = OPT_UNSET;
	o->data_concurrency = o->log_concurrency = OPT_UNSET;
	o->finobt = o->rmapbt = o->reflink = o->inobtcount = o->bigtime = OPT_UNSET;
	o->progress = OPT_UNSET;
}

static bool feat(int v, bool dflt) { return v == OPT_UNSET ? dflt : v != 0; }

/* xfsprogs' calc_default_ag_geometry: 4 AGs up to 4 TiB, then 1 TiB AGs */
static void default_ag_geometry(uint32_t blog, uint64_t dblocks, bool multidisk,
				uint64_t *agsize, uint64_t *agcount)
{
	uint64_t blocks;
	int shift;

	if (dblocks >= TiB(32, blog) || (!multidisk && dblocks >= TiB(4, blog))) {
		blocks = AG_MAX_BLOCKS(blog);
		goto done;
	}
	if (!multidisk && dblocks >= MiB(128, blog)) {
		shift = NOMULTIDISK_AGLOG;
	} else {
		shift = MULTIDISK_AGLOG;
		if (dblocks <= GiB(512, blog))
			shift--;
		if (dblocks <= GiB(8, blog))
			shift--;
		if (dblocks < MiB(128, blog))
			shift--;
		if (dblocks < MiB(64, blog))
			shift--;
		if (dblocks < MiB(32, blog))
			shift--;
	}
	blocks = dblocks >> shift;
	if ((dblocks & ((1ull << shift) - 1)) && blocks < AG_MAX_BLOCKS(blog))
		blocks++;
done:
	*agsize = blocks;
	*agcount = dblocks / blocks + (dblocks % blocks != 0);
}

/*
 * -d concurrency=N (and the automatic choice on solid-state devices): as
 * many AGs as writers, in multiples of N for large filesystems, never fewer
 * than the default geometry and never smaller than 4 GiB (xfsprogs 6.10).
 */
static void concurrency_ag_geometry(uint32_t blog, uint64_t dblocks, bool multidisk,
				    unsigned nr_threads, uint64_t *agsize, uint64_t *agcount)
{
	uint64_t def_agsize, def_agcount, try_agsize;
	uint64_t try_threads;

	default_ag_geometry(blog, dblocks, multidisk, &def_agsize, &def_agcount);
	try_agsize = def_agsize;
	if (!nr_threads || nr_threads < def_agcount)
		goto out;
	try_threads = nr_threads;
	try_agsize = dblocks / try_threads;
	if (try_agsize < GiB(4, blog)) {
		do {
			try_threads--;
			if (try_threads <= def_agcount) {
				try_agsize = def_agsize;
				goto out;
			}
			try_agsize = dblocks / try_threads;
		} while (try_agsize < GiB(4, blog));
		goto out;
	}
	while (try_agsize > AG_MAX_BLOCKS(blog) && try_agsize > def_agsize) {
		try_threads += nr_threads;
		try_agsize = dblocks / try_threads;
	}
out:
	*agsize = try_agsize;
	*agcount = dblocks / try_agsize + (dblocks % try_agsize != 0);
}

static int plan_sizes(const struct mkfs_opts *o, const struct mkfs_topo *t,
		      struct mkfs_plan *p, char *err, size_t el)
{
	uint32_t lsect = t->lsect ? t->lsect : FS_BBSIZE;
	uint32_t psect = t->psect ? t->psect : lsect;

	p->blocksize = o->blocksize ? o->blocksize : 4096;
	if (!is_pow2(p->blocksize) || p->blocksize < XFS_MIN_CRC_BLOCKSIZE ||
	    p->blocksize > XFS_MAX_BLOCKSIZE)
		return fail(err, el, "block size %u is not a power of two between 1024 and 65536; "
			    "pick one with -b size=", p->blocksize);
	p->blocklog = log2_exact(p->blocksize);

	if (o->sectsize) {
		p->sectsize = o->sectsize;
		if (!is_pow2(p->sectsize) || p->sectsize < XFS_MIN_SECTORSIZE ||
		    p->sectsize > XFS_MAX_SECTORSIZE)
			return fail(err, el, "sector size %u is not a power of two between 512 and "
				    "32768", p->sectsize);
		if (p->sectsize < lsect)
			return fail(err, el, "sector size %u is smaller than the device's logical "
				    "sector size %u; use -s size=%u or larger", p->sectsize, lsect, lsect);
	} else {
		if (psect > XFS_MAX_SECTORSIZE)
			psect = lsect;
		p->sectsize = psect;
		if (p->blocksize < p->sectsize && p->blocksize >= lsect) {
			warn(p, "specified blocksize %u is less than device physical sector size %u\n"
			     "switching to logical sector size %u", p->blocksize, psect, lsect);
			p->sectsize = lsect;
		}
	}
	if (p->sectsize > p->blocksize)
		return fail(err, el, "sector size %u is larger than the block size %u; "
			    "use a larger -b size=", p->sectsize, p->blocksize);
	p->sectlog = log2_exact(p->sectsize);

	p->inodesize = o->inodesize ? o->inodesize : 512;
	if (!is_pow2(p->inodesize) || p->inodesize < 512 || p->inodesize > XFS_DINODE_MAX_SIZE)
		return fail(err, el, "inode size %u must be 512, 1024 or 2048 bytes on a v5 "
			    "(CRC) filesystem", p->inodesize);
	if (p->inodesize > p->blocksize / 2)
		return fail(err, el, "inode size %u cannot be larger than half the block size (%u); "
			    "use a smaller -i size= or a larger -b size=", p->inodesize, p->blocksize);
	p->inodelog = log2_exact(p->inodesize);

	p->dirblocksize = o->dirblocksize ? o->dirblocksize : max_u64(p->blocksize, 4096);
	if (!is_pow2(p->dirblocksize) || p->dirblocksize < p->blocksize ||
	    p->dirblocksize > XFS_MAX_BLOCKSIZE)
		return fail(err, el, "directory block size %u must be a power of two from the block "
			    "size (%u) to 65536", p->dirblocksize, p->blocksize);
	return 0;
}

/* libxfs's stripe geometry check, as mkfs.xfs applies it to what a device reports */
static bool dev_stripe_valid(uint64_t sunit, uint64_t swidth)
{
	if (swidth > INT32_MAX || sunit > swidth)
		return false;
	if (!sunit != !swidth)
		return false;
	return !sunit || swidth % sunit == 0;
}

static int plan_stripe(const struct mkfs_opts *o, const struct mkfs_topo *t,
		       struct mkfs_plan *p, uint64_t dblocks, char *err, size_t el)
{
	uint64_t sunit_bytes = 0, swidth_bytes = 0;
	bool from_dev = false;

	if (o->dsu || o->dsw) {
		if (!o->dsu || !o->dsw)
			return fail(err, el, "both -d su= and sw= must be given");
		sunit_bytes = o->dsu;
		swidth_bytes = o->dsu * o->dsw;
	} else if (o->dsunit != OPT_UNSET || o->dswidth != OPT_UNSET) {
		if (o->dsunit == OPT_UNSET || o->dswidth == OPT_UNSET)
			return fail(err, el, "both -d sunit= and swidth= must be given");
		sunit_bytes = (uint64_t)o->dsunit << FS_BBSHIFT;
		swidth_bytes = (uint64_t)o->dswidth << FS_BBSHIFT;
	}
	if (o->stripe_given) {
		if (!sunit_bytes && !swidth_bytes)
			goto done;          /* sunit=0,swidth=0: no alignment */
		if (!sunit_bytes || !swidth_bytes || swidth_bytes % sunit_bytes ||
		    sunit_bytes % p->sectsize)
			return fail(err, el, "stripe width %llu must be a non-zero multiple of stripe "
				    "unit %llu, which must be a multiple of the sector size %u",
				    (unsigned long long)swidth_bytes, (unsigned long long)sunit_bytes,
				    p->sectsize);
		/* a stripe given that differs from the device's works, but is worth a word */
		if (t->sunit && t->sunit >> FS_BBSHIFT != sunit_bytes >> FS_BBSHIFT)
			warn(p, "xfsx_mkfs: Specified data stripe unit %llu is not the same as the "
			     "volume stripe unit %llu", (unsigned long long)(sunit_bytes >> FS_BBSHIFT),
			     (unsigned long long)(t->sunit >> FS_BBSHIFT));
		if (t->swidth && t->swidth >> FS_BBSHIFT != swidth_bytes >> FS_BBSHIFT)
			warn(p, "xfsx_mkfs: Specified data stripe width %llu is not the same as the "
			     "volume stripe width %llu", (unsigned long long)(swidth_bytes >> FS_BBSHIFT),
			     (unsigned long long)(t->swidth >> FS_BBSHIFT));
	} else if (!dev_stripe_valid(t->sunit, t->swidth)) {
		warn(p, "xfsx_mkfs: Volume reports invalid stripe unit (%llu) and stripe width (%llu), "
		     "ignoring.", (unsigned long long)t->sunit, (unsigned long long)t->swidth);
	} else if (dblocks < GiB(1, p->blocklog)) {
		/* a stripe is not worth the risk of a small log on a small volume (mkfs.xfs) */
		if (t->sunit || t->swidth)
			warn(p, "xfsx_mkfs: small data volume, ignoring data volume stripe unit %llu "
			     "and stripe width %llu", (unsigned long long)(t->sunit >> FS_BBSHIFT),
			     (unsigned long long)(t->swidth >> FS_BBSHIFT));
	} else if (t->sunit && t->sunit != t->swidth) {
		/* the device's topology: a unit and a larger width */
		sunit_bytes = t->sunit;
		swidth_bytes = t->swidth;
		from_dev = true;
	}
	if (sunit_bytes % p->blocksize || swidth_bytes % p->blocksize) {
		if (from_dev)
			goto done;
		return fail(err, el, "stripe unit (%llu) or stripe width (%llu) is not a multiple "
			    "of the block size (%u)", (unsigned long long)sunit_bytes,
			    (unsigned long long)swidth_bytes, p->blocksize);
	}
	if ((swidth_bytes >> p->blocklog) > UINT32_MAX)
		return fail(err, el, "stripe width %llu bytes is too large",
			    (unsigned long long)swidth_bytes);
	p->dsunit = (uint32_t)(sunit_bytes >> p->blocklog);
	p->dswidth = (uint32_t)(swidth_bytes >> p->blocklog);
	/*
	 * The log takes the data stripe unit when none is given for it (and
	 * 512-byte sectors leave it free: plan_log); past 256 KiB plan_log
	 * makes it 32 KiB, which mkfs.xfs says here, before the AG geometry's
	 * words (an explicit -l su/sunit that large is refused instead).
	 */
	if (!o->lsu && o->lsunit == OPT_UNSET && p->sectsize <= FS_BBSIZE && p->dsunit &&
	    (uint64_t)p->dsunit * p->blocksize > XLOG_MAX_RECORD_BSIZE)
		warn(p, "log stripe unit (%llu bytes) is too large (maximum is 256KiB)\n"
		     "log stripe unit adjusted to 32KiB",
		     (unsigned long long)p->dsunit * p->blocksize);
done:
	return 0;
}

/* xfsprogs' align_ag_geometry: AGs start on stripe units, not all on one disk */
static int align_ag(const struct mkfs_opts *o, struct mkfs_plan *p, uint64_t *dblocks,
		    uint64_t *agsize, uint64_t *agcount, char *err, size_t el)
{
	uint32_t blog = p->blocklog, dsunit = p->dsunit;
	uint64_t tmp;

	if (dsunit) {
		if (*agsize % dsunit) {
			tmp = (*agsize + dsunit - 1) / dsunit * dsunit;
			if (tmp > AG_MAX_BLOCKS(blog))
				tmp = *agsize / dsunit * dsunit;
			*agsize = tmp;
			if (!o->agcount)
				*agcount = *dblocks / *agsize + (*dblocks % *agsize != 0);
			if (o->agsize)
				warn(p, "agsize rounded to %llu, sunit = %u", (unsigned long long)*agsize,
				     dsunit);
		}
		if (*agsize % p->dswidth == 0 && p->dswidth != dsunit && *agcount > 1 &&
		    (o->agcount || o->agsize)) {
			/* the user's AG geometry is kept, with mkfs.xfs's advice */
			warn(p, "Warning: AG size is a multiple of stripe width.  This can cause "
			     "performance\nproblems by aligning all AGs on the same disk.  To avoid "
			     "this, run mkfs with\nan AG size that is one stripe unit smaller or "
			     "larger, for example %llu.", (unsigned long long)(*agsize - dsunit));
		} else if (*agsize % p->dswidth == 0 && p->dswidth != dsunit && *agcount > 1) {
			tmp = *agsize - dsunit;
			if (tmp < AG_MIN_BLOCKS(blog)) {
				tmp = *agsize + dsunit;
				if (*dblocks < *agsize)
					tmp = *agsize;
			}
			*agsize = tmp;
			*agcount = *dblocks / *agsize + (*dblocks % *agsize != 0);
		}
	}
	/* a last AG too small to hold its metadata is dropped */
	if (*dblocks % *agsize && *dblocks % *agsize < AG_MIN_BLOCKS(blog)) {
		if (o->agcount)
			return fail(err, el, "with agcount=%llu the last AG would have %llu blocks, "
				    "fewer than the minimum %llu; choose another -d agcount=",
				    (unsigned long long)o->agcount,
				    (unsigned long long)(*dblocks % *agsize),
				    (unsigned long long)AG_MIN_BLOCKS(blog));
		*agcount -= 1;
		*dblocks = *agcount * *agsize;
	}
	if (*agsize < AG_MIN_BLOCKS(blog) || *agsize > AG_MAX_BLOCKS(blog))
		return fail(err, el, "AG size %llu blocks is outside %llu..%llu (16 MiB .. 1 TiB); "
			    "choose another -d agsize= or agcount=", (unsigned long long)*agsize,
			    (unsigned long long)AG_MIN_BLOCKS(blog),
			    (unsigned long long)AG_MAX_BLOCKS(blog));
	if (*agsize > *dblocks)
		return fail(err, el, "AG size %llu blocks is larger than the filesystem (%llu blocks)",
			    (unsigned long long)*agsize, (unsigned long long)*dblocks);
	if (*agcount > XFS_MAX_AGNUMBER)
		return fail(err, el, "%llu AGs are too many; choose a larger -d agsize=",
			    (unsigned long long)*agcount);
	return 0;
}

static int plan_ag(const struct mkfs_opts *o, const struct mkfs_topo *t, struct mkfs_plan *p,
		   uint64_t *dblocks, char *err, size_t el)
{
	uint64_t agsize, agcount;
	int rc;

	if (o->data_concurrency > 0 && (o->agcount || o->agsize))
		return fail(err, el, "-d concurrency= cannot be combined with agcount= or agsize=");
	if (o->agcount && o->agsize)
		return fail(err, el, "-d agcount= and agsize= cannot both be given");
	if (o->data_concurrency > 0) {
		p->data_concurrency = (unsigned)o->data_concurrency;
		concurrency_ag_geometry(p->blocklog, *dblocks, p->dsunit, p->data_concurrency,
					&agsize, &agcount);
	} else if (o->agsize) {
		if (o->agsize % p->blocksize)
			return fail(err, el, "AG size %llu bytes is not a multiple of the block size %u",
				    (unsigned long long)o->agsize, p->blocksize);
		agsize = o->agsize >> p->blocklog;
		agcount = *dblocks / agsize + (*dblocks % agsize != 0);
	} else if (o->agcount) {
		agcount = o->agcount;
		agsize = *dblocks / agcount + (*dblocks % agcount != 0);
	} else if (o->data_concurrency == OPT_UNSET && t->solid_state && t->nr_cpus) {
		p->data_concurrency = t->nr_cpus;
		concurrency_ag_geometry(p->blocklog, *dblocks, p->dsunit, t->nr_cpus,
					&agsize, &agcount);
	} else {
		default_ag_geometry(p->blocklog, *dblocks, p->dsunit, &agsize, &agcount);
	}
	rc = align_ag(o, p, dblocks, &agsize, &agcount, err, el);
	if (rc)
		return rc;
	p->agblocks = (uint32_t)agsize;
	p->agcount = (uint32_t)agcount;
	p->agblklog = log2_roundup(agsize);
	return 0;
}

static void plan_fixed_blocks(struct mkfs_plan *p)
{
	uint32_t agfl_block = (3 * p->sectsize) >> p->blocklog;
	uint32_t next;

	p->hdr_blocks = (4 * p->sectsize + p->blocksize - 1) >> p->blocklog;
	p->bno_root = agfl_block + 1;
	p->cnt_root = p->bno_root + 1;
	p->ino_root = p->cnt_root + 1;
	next = p->ino_root + 1;
	p->fino_root = p->finobt ? next++ : 0;
	p->rmap_root = p->rmapbt ? next++ : 0;
	p->refc_root = p->reflink ? next++ : 0;
	p->prealloc_blocks = next;
	p->agfl_size = (p->sectsize - sizeof(struct xfs_agfl)) / sizeof(__be32);
}

/* Height of a short-form btree indexing `records` at minimum fill. */
static uint32_t sbtree_maxlevels(uint32_t blocksize, size_t rec, size_t keyptr, uint64_t records)
{
	uint64_t minleaf = (blocksize - XFS_BTREE_SBLOCK_CRC_LEN) / rec / 2;
	uint64_t minnode = (blocksize - XFS_BTREE_SBLOCK_CRC_LEN) / keyptr / 2;
	uint64_t blocks = (records + minleaf - 1) / minleaf;
	uint32_t h = 1;

	while (blocks > 1) {
		blocks = (blocks + minnode - 1) / minnode;
		h++;
	}
	return h;
}

static void plan_sb(const struct mkfs_opts *o, struct mkfs_plan *p);

/*
 * The kernel's minimum log for this geometry (three of its largest
 * transactions), from the superblock the plan would write.
 */
/* The geometry the kernel will derive from the superblock the plan would write. */
static int plan_geom(const struct mkfs_opts *o, const struct mkfs_plan *p, struct fs_geom *g,
		     uint32_t *logsunit)
{
	struct mkfs_plan tmp = *p;

	plan_sb(o, &tmp);
	/* mkfs.xfs sizes the log before it sets the inode alignment: same cluster size here */
	tmp.sb.sb_inoalignmt = 0;
	if (fs_geom_derive(&tmp.sb, g))
		return -EINVAL;
	if (logsunit)
		*logsunit = tmp.sb.sb_logsunit;
	return 0;
}

static int reservation_min_logblocks(const struct mkfs_opts *o, const struct mkfs_plan *p,
				     uint32_t *out)
{
	struct fs_geom g;
	uint32_t logsunit;

	if (plan_geom(o, p, &g, &logsunit))
		return -EINVAL;
	*out = fs_log_min_blocks(&g, logsunit);
	return 0;
}

/*
 * The smallest log both placements accept: the kernel's reservations, never
 * under XFS_MIN_LOG_BLOCKS, and with no -l size= on a data section of 1 GiB
 * or more at least XFS_MIN_LOG_BYTES (mkfs.xfs's calculate_log_size).
 */
static int min_log_blocks(const struct mkfs_opts *o, const struct mkfs_plan *p, uint64_t *out,
			  char *err, size_t el)
{
	uint32_t resv_min;

	if (reservation_min_logblocks(o, p, &resv_min))
		return fail(err, el, "the geometry is inconsistent (%u blocks of %u bytes, %u AGs)",
			    (unsigned)p->dblocks, p->blocksize, p->agcount);
	*out = max_u64(XFS_MIN_LOG_BLOCKS, resv_min);
	if (!o->logsize && p->dblocks >= GiB(1, p->blocklog))
		*out = max_u64(*out, XFS_MIN_LOG_BYTES >> p->blocklog);
	return 0;
}

/*
 * The AGFL mkfs fills: xfs_alloc_min_freelist for trees of one level.  It
 * also places the root inode (xfs_ialloc_calc_rootino), and xfs_repair
 * calls a root anywhere else misplaced, so an image follows the rule of the
 * xfs_repair that can check it.  xfsprogs 6.10 counts a split of every
 * level and a new root, then the refill's splits below the old root:
 * min(2, maxlevels) * 2 - 2 per tree (bno, cnt, rmap), none for a tree that
 * never grows past one level; 6.1 counted min(2, maxlevels) per tree and
 * assumed two rmapbt levels.  They differ only where the free space btrees
 * stay one level high (300 MiB with 32 KiB blocks): images with 6.10's
 * features (only 6.10 checks them) take 6.10's rule, the others 6.1's.
 */
static uint32_t min_freelist(const struct mkfs_plan *p, uint32_t rmap_maxlevels)
{
	uint32_t alloc = p->alloc_maxlevels < 2 ? p->alloc_maxlevels : 2;
	uint32_t rmap = rmap_maxlevels < 2 ? rmap_maxlevels : 2;

	if (!p->parent && !p->exchange)
		return 2 * alloc + (p->rmapbt ? 2 : 0);
	return 2 * (alloc * 2 - 2) + (p->rmapbt ? rmap * 2 - 2 : 0);
}

/* Bounds both log placements share (mkfs.xfs's validate_log_size, its words). */
static int log_size_valid(uint64_t logblocks, uint32_t blog, char *err, size_t el)
{
	if (logblocks > XFS_MAX_LOG_BLOCKS)
		return fail(err, el, "log size %llu blocks too large, maximum size is %llu blocks",
			    (unsigned long long)logblocks, (unsigned long long)XFS_MAX_LOG_BLOCKS);
	if ((logblocks << blog) > XFS_MAX_LOG_BYTES)
		return fail(err, el, "log size %llu bytes too large, maximum size is %llu bytes",
			    (unsigned long long)(logblocks << blog),
			    (unsigned long long)XFS_MAX_LOG_BYTES);
	if (logblocks < MIN_REALISTIC_LOG(blog))
		return fail(err, el, "log size %llu blocks is smaller than 64 MiB (%llu blocks), the "
			    "smallest log mkfs.xfs 5.19 and later make; give -l size=64m or more, "
			    "or a larger log device", (unsigned long long)logblocks,
			    (unsigned long long)MIN_REALISTIC_LOG(blog));
	return 0;
}

/*
 * -l logdev=: the log is the whole device unless -l size= says less, starts
 * at its block 0 (sb_logstart 0 says "external"), and no AG holds it.
 */
static int plan_extlog(const struct mkfs_opts *o, struct mkfs_plan *p, char *err, size_t el)
{
	uint32_t blog = p->blocklog;
	uint64_t dev_blocks = p->logdev_blocks, logblocks, min_logblocks = 0;

	if (min_log_blocks(o, p, &min_logblocks, err, el))
		return -EINVAL;
	if (o->log_concurrency > 0)
		return fail(err, el, "-l concurrency= sizes an internal log; an external log is "
			    "its device (or -l size=)");
	/* the log's sector size is the data's here (no -l sectsize= yet) */
	if (p->logdev_lsect > p->sectsize)
		return fail(err, el, "the log device %s has %u-byte sectors, larger than the data "
			    "sector size %u: give -s size=%u", o->logdev, p->logdev_lsect, p->sectsize,
			    p->logdev_lsect);
	if (!dev_blocks)
		return fail(err, el, "the log device %s is empty: an external log needs at least "
			    "%llu bytes", o->logdev, (unsigned long long)(MIN_REALISTIC_LOG(blog) << blog));
	if (o->logsize) {
		logblocks = o->logsize >> blog;
		if (logblocks > dev_blocks)
			return fail(err, el, "-l size=%llu is larger than the log device %s: it holds "
				    "at most %llu blocks", (unsigned long long)o->logsize, o->logdev,
				    (unsigned long long)dev_blocks);
	} else {
		logblocks = dev_blocks;
	}
	/*
	 * Whole log stripe units: a size given must be one (mkfs.xfs's words);
	 * the whole device is cut down to one.  mkfs.xfs 6.1 rounds it up,
	 * past the device's end: a log the kernel could not write.
	 */
	if (p->lsunit && logblocks % p->lsunit) {
		if (o->logsize)
			return fail(err, el, "log size %llu is not a multiple of the log stripe unit %u",
				    (unsigned long long)logblocks, p->lsunit);
		logblocks -= logblocks % p->lsunit;
	}
	if (logblocks < min_logblocks)
		return fail(err, el, "external log device size %llu blocks too small, must be at "
			    "least %llu blocks", (unsigned long long)logblocks,
			    (unsigned long long)min_logblocks);
	if (log_size_valid(logblocks, blog, err, el))
		return -EINVAL;
	p->logblocks = (uint32_t)logblocks;
	p->logstart = 0;
	p->logagno = NULLAGNUMBER;
	p->logagbno = 0;
	return 0;
}

/*
 * -r rtdev=: the realtime section: its size (the device's unless -r size=),
 * extent size (the default: one block, at least 4 KiB), and the sizes of
 * the bitmap (one bit per extent) and summary (a counter per log2 size and
 * bitmap block) files mkfs puts in AG 0.
 */
static int plan_rt(const struct mkfs_opts *o, struct mkfs_plan *p, char *err, size_t el)
{
	uint32_t blog = p->blocklog;
	uint64_t dev_blocks = p->rtdev_blocks, rsumbytes;
	uint32_t rextslog;

	if (!o->rtdev)
		return 0;
	if (o->rtextsize) {
		if (o->rtextsize % p->blocksize)
			return fail(err, el, "illegal rt extent size %llu, not a multiple of %u",
				    (unsigned long long)o->rtextsize, p->blocksize);
		if (o->rtextsize < XFS_MIN_RTEXTSIZE)
			return fail(err, el, "-r extsize=%llu is smaller than 4 KiB, the smallest "
				    "realtime extent", (unsigned long long)o->rtextsize);
		p->rextsize = (uint32_t)(o->rtextsize >> blog);
	} else {
		p->rextsize = p->blocksize < XFS_MIN_RTEXTSIZE ? XFS_MIN_RTEXTSIZE >> blog : 1;
	}
	if (o->rtsize % FS_BBSIZE)
		return fail(err, el, "-r size=%llu is not a multiple of 512 bytes; give a size in "
			    "whole sectors", (unsigned long long)o->rtsize);
	if (o->rtsize) {
		p->rblocks = o->rtsize >> blog;
		if (p->rblocks > dev_blocks)
			return fail(err, el, "-r size=%llu is larger than the realtime device %s: it "
				    "holds at most %llu blocks", (unsigned long long)o->rtsize, o->rtdev,
				    (unsigned long long)dev_blocks);
		if (o->rtsize % p->blocksize)
			warn(p, "warning: rt length %llu not a multiple of %u, truncated to %llu",
			     (unsigned long long)o->rtsize, p->blocksize,
			     (unsigned long long)(p->rblocks << blog));
	} else {
		p->rblocks = dev_blocks;
	}
	if (!p->rblocks)
		return fail(err, el, "the realtime device %s holds no whole block: give a larger "
			    "device", o->rtdev);
	p->rextents = p->rblocks / p->rextsize;
	if (!p->rextents)
		return fail(err, el, "the realtime section (%llu blocks) is smaller than one "
			    "realtime extent (%u blocks): give a smaller -r extsize=",
			    (unsigned long long)p->rblocks, p->rextsize);
	if ((p->rextents + 8ull * p->blocksize - 1) / (8ull * p->blocksize) > UINT32_MAX / 64)
		return fail(err, el, "the realtime section is too large for its bitmap; give a "
			    "larger -r extsize=");
	p->rbmblocks = (uint32_t)((p->rextents + 8ull * p->blocksize - 1) / (8ull * p->blocksize));
	rextslog = (uint32_t)(31 - __builtin_clz((uint32_t)p->rextents | 1));
	if (!(uint32_t)p->rextents)
		rextslog = 0;
	rsumbytes = (uint64_t)sizeof(xfs_suminfo_t) * (rextslog + 1) * p->rbmblocks;
	p->rsumblocks = (uint32_t)((rsumbytes + p->blocksize - 1) >> blog);
	p->rsumsize = p->rsumblocks << blog;
	return 0;
}

static int plan_log(const struct mkfs_opts *o, const struct mkfs_topo *t, struct mkfs_plan *p,
		    char *err, size_t el)
{
	uint32_t blog = p->blocklog;
	uint64_t max_logblocks, min_logblocks = 0, logblocks, usable_overhead;
	uint32_t sunit;

	/* log stripe unit: -l su/sunit, else the data stripe unit (v2 logs) */
	if (o->lsu) {
		if (o->lsu % p->blocksize)
			return fail(err, el, "log stripe unit %llu must be a multiple of the block size "
				    "%u", (unsigned long long)o->lsu, p->blocksize);
		p->lsunit = (uint32_t)(o->lsu >> blog);
	} else if (o->lsunit != OPT_UNSET) {
		if (((uint64_t)o->lsunit << FS_BBSHIFT) % p->blocksize)
			return fail(err, el, "log stripe unit %lld sectors must be a multiple of the "
				    "block size %u", (long long)o->lsunit, p->blocksize);
		p->lsunit = (uint32_t)(((uint64_t)o->lsunit << FS_BBSHIFT) >> blog);
	} else if (p->sectsize > FS_BBSIZE) {
		p->lsunit = 1;       /* log writes must cover whole sectors */
	} else if (p->dsunit && !p->extlog) {
		/* an external log is not on the data's stripe: its own unit only (mkfs.xfs) */
		p->lsunit = p->dsunit;
	}
	if ((uint64_t)p->lsunit * p->blocksize > XLOG_MAX_RECORD_BSIZE) {
		if (o->lsu || o->lsunit != OPT_UNSET)
			return fail(err, el, "log stripe unit %llu bytes is larger than 256 KiB",
				    (unsigned long long)p->lsunit * p->blocksize);
		p->lsunit = (32 * 1024) >> blog;
	}

	if (p->extlog)
		return plan_extlog(o, p, err, el);
	usable_overhead = p->hdr_blocks + 4 /* XFS_ALLOCBT_AGFL_RESERVE */ + 3 +
			  p->finobt + p->rmapbt + p->reflink;
	max_logblocks = p->agblocks - usable_overhead - 1;
	if (min_log_blocks(o, p, &min_logblocks, err, el))
		return -EINVAL;
	/*
	 * No log size helps when the smallest log does not fit in an AG: only
	 * larger AGs do.  mkfs_plan turns this into advice it has tried.
	 */
	if (min_logblocks > max_logblocks) {
		p->log_min_blocks = min_logblocks;
		p->log_max_blocks = max_logblocks;
		return fail(err, el, "the log needs at least %llu blocks but an AG of %u blocks "
			    "holds at most %llu: use fewer, larger AGs or a larger device",
			    (unsigned long long)min_logblocks, p->agblocks,
			    (unsigned long long)max_logblocks);
	}

	if (o->log_concurrency > 0 && o->logsize)
		return fail(err, el, "-l concurrency= cannot be combined with -l size=");
	if (o->logsize) {
		logblocks = o->logsize >> blog;     /* cut to whole blocks, with a warning */
		if (logblocks > max_logblocks)
			return fail(err, el, "internal log size %llu blocks is too large: it must be "
				    "less than %llu blocks to fit in an AG",
				    (unsigned long long)logblocks, (unsigned long long)max_logblocks);
	} else {
		unsigned writers = 0;

		logblocks = (p->dblocks << blog) / 2048 >> blog;
		if (o->log_concurrency > 0)
			writers = (unsigned)o->log_concurrency;
		else if (o->log_concurrency == OPT_UNSET && t->solid_state)
			writers = t->nr_cpus;
		if (writers && p->dblocks >= GiB(1, blog)) {
			/* see the man page: 3/2 of one writer's budget per writer */
			uint64_t per = (uint64_t)LOG_BLOCKS_PER_WRITER_4K * 4096 >> blog;
			uint64_t want = per * 3 / 2 * writers;

			p->log_concurrency = writers;
			logblocks = max_u64(logblocks, min_u64(want, XFS_MAX_LOG_BYTES >> blog));
		}
		logblocks = max_u64(logblocks, MIN_REALISTIC_LOG(blog));
		logblocks = max_u64(logblocks, min_logblocks);
		logblocks = min_u64(logblocks, max_logblocks);
		logblocks = min_u64(logblocks, XFS_MAX_LOG_BLOCKS);
		if ((logblocks << blog) > XFS_MAX_LOG_BYTES)
			logblocks = XFS_MAX_LOG_BYTES >> blog;
	}
	if (logblocks > p->agblocks - p->prealloc_blocks)
		return fail(err, el, "internal log size %llu blocks is too large: it must fit in an "
			    "allocation group", (unsigned long long)logblocks);

	p->logagno = p->agcount / 2;
	p->logstart = ((uint64_t)p->logagno << p->agblklog) | p->prealloc_blocks;
	sunit = p->lsunit ? p->lsunit : p->dsunit;
	if (sunit) {
		uint64_t agstart = (uint64_t)p->logagno << p->agblklog;
		uint64_t tmp;

		if (p->logstart % sunit)
			p->logstart = (p->logstart + sunit - 1) / sunit * sunit;
		if (p->logstart - agstart >= mkfs_ag_length(p, p->logagno))
			return fail(err, el, "because of stripe alignment the internal log cannot "
				    "start inside AG %u; choose other -d/-l stripe options", p->logagno);
		if (logblocks % sunit) {
			if (o->logsize)
				return fail(err, el, "log size %llu blocks is not a multiple of the log "
					    "stripe unit %u blocks", (unsigned long long)logblocks, sunit);
			tmp = (logblocks + sunit - 1) / sunit * sunit;
			if (tmp > XFS_MAX_LOG_BLOCKS || (tmp << blog) > XFS_MAX_LOG_BYTES ||
			    tmp > max_logblocks)
				tmp = logblocks / sunit * sunit;
			logblocks = tmp;
		}
		if (p->logstart - agstart + logblocks > mkfs_ag_length(p, p->logagno) &&
		    logblocks > sunit)
			logblocks -= sunit;
		if (p->logstart - agstart + logblocks > mkfs_ag_length(p, p->logagno))
			return fail(err, el, "because of stripe alignment the internal log (%llu "
				    "blocks) does not fit in its AG", (unsigned long long)logblocks);
	}
	if (logblocks < min_logblocks)
		return fail(err, el, "log size %llu blocks is too small: this geometry needs at least "
			    "%llu blocks (three of the kernel's largest transactions); give a larger "
			    "-l size=", (unsigned long long)logblocks,
			    (unsigned long long)min_logblocks);
	if (logblocks > XFS_MAX_LOG_BLOCKS ||
	    (logblocks << blog) > XFS_MAX_LOG_BYTES)
		return fail(err, el, "log size %llu blocks is outside %llu blocks .. 2 GiB",
			    (unsigned long long)logblocks, (unsigned long long)min_logblocks);
	if (logblocks < MIN_REALISTIC_LOG(blog))
		return fail(err, el, "log size %llu blocks is smaller than 64 MiB (%llu blocks), the "
			    "smallest log mkfs.xfs 5.19 and later make; give -l size=64m or more",
			    (unsigned long long)logblocks,
			    (unsigned long long)MIN_REALISTIC_LOG(blog));
	p->logblocks = (uint32_t)logblocks;
	p->logagbno = (uint32_t)(p->logstart & ((1ull << p->agblklog) - 1));
	return 0;
}

static void plan_sb(const struct mkfs_opts *o, struct mkfs_plan *p)
{
	struct xfs_sb *sb = &p->sb;
	uint32_t cluster = (8192u * (p->inodesize / XFS_DINODE_MIN_SIZE)) >> p->blocklog;

	memset(sb, 0, sizeof(*sb));
	sb->sb_magicnum = XFS_SB_MAGIC;
	sb->sb_blocksize = p->blocksize;
	sb->sb_dblocks = p->dblocks;
	memcpy(&sb->sb_uuid, o->uuid, 16);
	sb->sb_logstart = p->logstart;
	sb->sb_rootino = p->rootino;
	sb->sb_rbmino = p->rootino + 1;
	sb->sb_rsumino = p->rootino + 2;
	sb->sb_rextsize = p->rextsize ? p->rextsize :
			  p->blocksize < XFS_MIN_RTEXTSIZE ? (uint32_t)XFS_MIN_RTEXTSIZE >> p->blocklog : 1u;
	sb->sb_rblocks = p->rblocks;
	sb->sb_rextents = p->rextents;
	sb->sb_frextents = p->rextents;
	sb->sb_rbmblocks = p->rbmblocks;
	sb->sb_rextslog = (uint8_t)(p->rextents ? 31u - (uint32_t)__builtin_clz((uint32_t)p->rextents | 1) : 0u);
	sb->sb_agblocks = p->agblocks;
	sb->sb_agcount = p->agcount;
	sb->sb_logblocks = p->logblocks;
	sb->sb_versionnum = XFS_SB_VERSION_5 | XFS_SB_VERSION_NLINKBIT | XFS_SB_VERSION_EXTFLGBIT |
			    XFS_SB_VERSION_DIRV2BIT | XFS_SB_VERSION_ALIGNBIT |
			    XFS_SB_VERSION_LOGV2BIT | XFS_SB_VERSION_MOREBITSBIT;
	if (p->dsunit)
		sb->sb_versionnum |= XFS_SB_VERSION_DALIGNBIT;
	if (p->sectsize > FS_BBSIZE) {
		sb->sb_versionnum |= XFS_SB_VERSION_SECTORBIT;
		sb->sb_logsectlog = (uint8_t)p->sectlog;
		sb->sb_logsectsize = (uint16_t)p->sectsize;
	}
	sb->sb_sectsize = (uint16_t)p->sectsize;
	sb->sb_inodesize = (uint16_t)p->inodesize;
	sb->sb_inopblock = (uint16_t)(p->blocksize / p->inodesize);
	memcpy(sb->sb_fname, o->label, sizeof(sb->sb_fname));
	sb->sb_blocklog = (uint8_t)p->blocklog;
	sb->sb_sectlog = (uint8_t)p->sectlog;
	sb->sb_inodelog = (uint8_t)p->inodelog;
	sb->sb_inopblog = (uint8_t)(p->blocklog - p->inodelog);
	sb->sb_agblklog = (uint8_t)p->agblklog;
	sb->sb_imax_pct = (uint8_t)p->imaxpct;
	sb->sb_icount = p->icount;
	sb->sb_ifree = p->ifree;
	sb->sb_fdblocks = p->fdblocks;
	sb->sb_inoalignmt = cluster;
	if (p->sparse) {
		sb->sb_spino_align = cluster;
		sb->sb_inoalignmt = (XFS_INODES_PER_CHUNK * p->inodesize) >> p->blocklog;
	}
	sb->sb_unit = p->dsunit;
	sb->sb_width = p->dswidth;
	sb->sb_dirblklog = (uint8_t)(log2_exact(p->dirblocksize) - p->blocklog);
	sb->sb_logsunit = p->lsunit ? p->lsunit * p->blocksize : 1;
	sb->sb_features2 = XFS_SB_VERSION2_LAZYSBCOUNTBIT | XFS_SB_VERSION2_PROJID32BIT |
			   XFS_SB_VERSION2_CRCBIT | XFS_SB_VERSION2_ATTR2BIT;
	sb->sb_bad_features2 = sb->sb_features2;
	sb->sb_features_incompat = XFS_SB_FEAT_INCOMPAT_FTYPE;
	if (p->sparse)
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_SPINODES;
	if (p->bigtime)
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_BIGTIME;
	if (p->nrext64)
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_NREXT64;
	if (p->exchange)
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_EXCHRANGE;
	if (p->parent) {
		sb->sb_features_incompat |= XFS_SB_FEAT_INCOMPAT_PARENT;
		/* set up front, as mkfs.xfs does, so the kernel need not set it at the first pptr */
		sb->sb_versionnum |= XFS_SB_VERSION_ATTRBIT;
	}
	if (p->finobt)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_FINOBT;
	if (p->rmapbt)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_RMAPBT;
	if (p->reflink)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_REFLINK;
	if (p->inobtcount)
		sb->sb_features_ro_compat |= XFS_SB_FEAT_RO_COMPAT_INOBTCNT;
}

/*
 * Feature dependencies, as mkfs.xfs applies them: when a feature needs
 * another that is off, a feature on by default yields (it is dropped); only
 * when both were given explicitly is the command refused.  An explicit
 * feature never turns on a defaulted one behind the user's back either: the
 * needed one was given as 0, or it is on.
 */
struct feat_dep {
	const char *name, *needs;
	size_t off, needs_off;       /* offsets in mkfs_opts (int) and mkfs_plan (bool) */
	size_t poff, needs_poff;
};
#define FEAT_DEP(a, b) { #a, #b, offsetof(struct mkfs_opts, a), offsetof(struct mkfs_opts, b), \
			 offsetof(struct mkfs_plan, a), offsetof(struct mkfs_plan, b) }
static const struct feat_dep feat_deps[] = {
	FEAT_DEP(inobtcount, finobt),   /* the counters live in the finobt's AGI fields */
};

static int plan_feature_deps(const struct mkfs_opts *o, struct mkfs_plan *p, char *err, size_t el)
{
	for (size_t i = 0; i < sizeof(feat_deps) / sizeof(feat_deps[0]); i++) {
		const struct feat_dep *d = &feat_deps[i];
		bool *on = (bool *)((char *)p + d->poff);
		bool needed = *(bool *)((char *)p + d->needs_poff);
		int given = *(const int *)((const char *)o + d->off);

		if (!*on || needed)
			continue;
		if (given == OPT_UNSET) {
			*on = false;
			continue;
		}
		return fail(err, el, "-m %s=1 needs %s=1, and -m %s=0 was given: drop one of them",
			    d->name, d->needs, d->needs);
	}
	return 0;
}

static int plan_once(const struct mkfs_opts *o, const struct mkfs_topo *t, struct mkfs_plan *p,
		     char *err, size_t el)
{
	uint64_t dblocks, bytes;
	uint32_t cluster;
	struct mkfs_ag ag;
	int rc;

	memset(p, 0, sizeof(*p));
	err[0] = 0;
	rc = plan_sizes(o, t, p, err, el);
	if (rc)
		return rc;

	bytes = o->dsize ? o->dsize : t->size;
	if (o->dsize && o->dsize > t->size && !t->is_file)
		return fail(err, el, "-d size=%llu is larger than the device (%llu bytes)",
			    (unsigned long long)o->dsize, (unsigned long long)t->size);
	/* sizes given in bytes: whole sectors, and cut down to whole blocks (as mkfs.xfs) */
	if (o->dsize % FS_BBSIZE)
		return fail(err, el, "-d size=%llu is not a multiple of 512 bytes; give a size in "
			    "whole sectors", (unsigned long long)o->dsize);
	if (o->logsize % FS_BBSIZE)
		return fail(err, el, "-l size=%llu is not a multiple of 512 bytes; give a size in "
			    "whole sectors", (unsigned long long)o->logsize);
	dblocks = bytes >> p->blocklog;
	if (o->dsize % p->blocksize)
		warn(p, "warning: data length %llu not a multiple of %u, truncated to %llu",
		     (unsigned long long)o->dsize, p->blocksize,
		     (unsigned long long)(dblocks << p->blocklog));
	if (o->logsize % p->blocksize)
		warn(p, "warning: log length %llu not a multiple of %u, truncated to %llu",
		     (unsigned long long)o->logsize, p->blocksize,
		     (unsigned long long)(o->logsize >> p->blocklog << p->blocklog));
	if (dblocks < MiB(MIN_FS_MB, p->blocklog))
		return fail(err, el, "the filesystem would be %llu MiB; it must be at least %u MiB "
			    "(as mkfs.xfs since 5.19 requires); use a larger device or image",
			    (unsigned long long)(bytes >> 20), MIN_FS_MB);

	p->extlog = o->logdev != NULL;
	p->logdev_blocks = t->logdev_size >> p->blocklog;
	p->rtdev_blocks = t->rtdev_size >> p->blocklog;
	p->logdev_lsect = t->logdev_lsect;
	/* features: mkfs.xfs 6.10 defaults; no reverse mapping or sharing of rt extents yet */
	if (o->rtdev && o->reflink == 1)
		return fail(err, el, "reflink not supported with realtime devices");
	if (o->rtdev && o->rmapbt == 1)
		return fail(err, el, "rmapbt not supported with realtime devices");
	p->finobt = feat(o->finobt, true);
	p->rmapbt = feat(o->rmapbt, !o->rtdev);
	p->reflink = feat(o->reflink, !o->rtdev);
	p->inobtcount = feat(o->inobtcount, true);
	p->bigtime = feat(o->bigtime, true);
	p->sparse = feat(o->sparse, true);
	p->nrext64 = feat(o->nrext64, true);
	p->parent = feat(o->parent, false);
	/* mkfs.xfs 6.10: parent pointers bring exchange-range (online repair) unless told not to */
	p->exchange = feat(o->exchange, p->parent);
	rc = plan_feature_deps(o, p, err, el);
	if (rc)
		return rc;

	rc = plan_stripe(o, t, p, dblocks, err, el);
	if (rc)
		return rc;
	rc = plan_rt(o, p, err, el);
	if (rc)
		return rc;
	rc = plan_ag(o, t, p, &dblocks, err, el);
	if (rc)
		return rc;
	p->dblocks = dblocks;
	if (dblocks < MiB(MIN_FS_MB, p->blocklog))
		return fail(err, el, "after AG alignment the filesystem would be %llu blocks, less "
			    "than 300 MiB; use a larger device or other -d options",
			    (unsigned long long)dblocks);
	if (p->agcount < 2)
		return fail(err, el, "a filesystem needs at least 2 AGs so the superblock has a "
			    "backup; choose a larger -d agcount= or smaller agsize=");

	if (o->imaxpct != OPT_UNSET) {
		if (o->imaxpct < 0 || o->imaxpct > 100)
			return fail(err, el, "-i maxpct=%d must be between 0 and 100", o->imaxpct);
		p->imaxpct = (uint32_t)o->imaxpct;
	}
	if (o->imaxpct == OPT_UNSET || o->imaxpct == 0)
		p->imaxpct = dblocks < TiB(1, p->blocklog) ? 25 : dblocks < TiB(50, p->blocklog) ? 5 : 1;

	plan_fixed_blocks(p);
	p->alloc_maxlevels = sbtree_maxlevels(p->blocksize, sizeof(xfs_alloc_rec_t),
					      sizeof(xfs_alloc_key_t) + sizeof(xfs_alloc_ptr_t),
					      ((uint64_t)p->agblocks + 1) / 2);
	/* with more than 64 inodes in a block, one allocation fills a block (xfs_ialloc_setup_geometry) */
	p->chunk_inodes = max_u64(XFS_INODES_PER_CHUNK, p->blocksize / p->inodesize);
	p->chunk_blocks = (p->chunk_inodes * p->inodesize) >> p->blocklog;
	cluster = (8192u * (p->inodesize / XFS_DINODE_MIN_SIZE)) >> p->blocklog;
	{
		uint32_t inoalign = p->sparse ? p->chunk_blocks : (cluster ? cluster : 1);
		/*
		 * Stripe-aligned inode chunks when the stripe unit is a multiple
		 * of an inode alignment above one block (xfs_ialloc_setup_geometry:
		 * an sb_inoalignmt of 0 or 1, as with 64 KiB blocks, is no mask,
		 * so no stripe alignment either)
		 */
		p->chunk_align = p->dsunit && inoalign > 1 && !(p->dsunit % inoalign) ?
				 p->dsunit : inoalign;
	}

	{
		struct fs_geom g;

		if (plan_geom(o, p, &g, NULL))
			return fail(err, el, "the geometry is inconsistent (%u blocks of %u bytes, "
				    "%u AGs)", (unsigned)p->dblocks, p->blocksize, p->agcount);
		p->agfl_need = min_freelist(p, g.rmap_maxlevels);
	}
	rc = plan_log(o, t, p, err, el);
	if (rc)
		return rc;

	/* the counters the written filesystem will have */
	for (uint32_t a = 0; a < p->agcount; a++) {
		rc = mkfs_ag_layout(p, a, &ag);
		if (rc)
			return fail(err, el, "AG %u has no room for its metadata (the log, the root "
				    "inode chunk%s does not fit); choose other -d/-l%s options", a,
				    p->rbmblocks ? " or the realtime bitmap and summary" : "",
				    p->rbmblocks ? "/-r" : "");
		p->fdblocks += ag.freeblks + ag.agfl_count;
		if (a == 0)
			p->rootino = (uint64_t)ag.chunk_agbno << (p->blocklog - p->inodelog);
	}
	p->icount = p->chunk_inodes;
	p->ifree = p->chunk_inodes - 3;
	plan_sb(o, p);
	return 0;
}

/*
 * The smallest log does not fit in an AG: find a change that makes a plan
 * (fewer AGs, else a larger device, else a smaller block size) by planning
 * with it, so the advice given is advice that works.
 */
static void advise_log(const struct mkfs_opts *o, const struct mkfs_topo *t,
		       const struct mkfs_plan *failed, char *err, size_t el)
{
	struct mkfs_opts o2;
	struct mkfs_topo t2;
	struct mkfs_plan *p2 = malloc(sizeof(*p2));
	char e2[256];
	int n = 0;

	if (!p2)
		return;
	n = snprintf(err, el, "the log needs at least %llu blocks but an AG of %u blocks holds at "
		     "most %llu (a larger -l size= cannot help)",
		     (unsigned long long)failed->log_min_blocks, failed->agblocks,
		     (unsigned long long)failed->log_max_blocks);
	if (n < 0 || (size_t)n >= el)
		goto out;
	for (uint32_t ags = failed->agcount - 1; ags >= 2 && o->agsize == 0; ags--) {
		o2 = *o;
		o2.agcount = ags;
		if (plan_once(&o2, t, p2, e2, sizeof(e2)) == 0) {
			snprintf(err + n, el - (size_t)n, "; use fewer, larger AGs: -d agcount=%u works",
				 ags);
			goto out;
		}
	}
	if (o->agsize) {
		o2 = *o;
		o2.agsize = 0;
		if (plan_once(&o2, t, p2, e2, sizeof(e2)) == 0) {
			snprintf(err + n, el - (size_t)n, "; leave out -d agsize= for larger AGs");
			goto out;
		}
	}
	for (uint64_t mult = 2; mult <= 64; mult *= 2) {
		uint64_t bytes = (o->dsize ? o->dsize : t->size) * mult;

		o2 = *o;
		t2 = *t;
		if (o->dsize)
			o2.dsize = bytes;
		else
			t2.size = bytes;
		if (plan_once(&o2, &t2, p2, e2, sizeof(e2)) == 0) {
			snprintf(err + n, el - (size_t)n, "; use a larger device or image: %llu MiB works",
				 (unsigned long long)(bytes >> 20));
			goto out;
		}
	}
	for (uint32_t bs = failed->blocksize / 2; bs >= 4096; bs /= 2) {
		o2 = *o;
		o2.blocksize = bs;
		if (plan_once(&o2, t, p2, e2, sizeof(e2)) == 0) {
			snprintf(err + n, el - (size_t)n, "; a smaller block size works: -b size=%u", bs);
			goto out;
		}
	}
	snprintf(err + n, el - (size_t)n, "; use a much larger device");
out:
	free(p2);
}

int mkfs_plan(const struct mkfs_opts *o, const struct mkfs_topo *t, struct mkfs_plan *p,
	      char *err, size_t el)
{
	int rc = plan_once(o, t, p, err, el);

	if (rc && p->log_min_blocks > p->log_max_blocks) {
		struct mkfs_plan failed = *p;

		advise_log(o, t, &failed, err, el);
		*p = failed;
	}
	return rc;
}

/* --- per-AG layout ------------------------------------------------------- */

static void free_remove(struct mkfs_ag *ag, uint32_t i, uint32_t start, uint32_t len)
{
	uint32_t fs = ag->free[i].start, fe = fs + ag->free[i].len;
	uint32_t j;

	if (start == fs && start + len == fe) {
		for (j = i; j + 1 < ag->nfree; j++)
			ag->free[j] = ag->free[j + 1];
		ag->nfree--;
	} else if (start == fs) {
		ag->free[i].start += len;
		ag->free[i].len -= len;
	} else if (start + len == fe) {
		ag->free[i].len -= len;
	} else {
		for (j = ag->nfree; j > i + 1; j--)
			ag->free[j] = ag->free[j - 1];
		ag->nfree++;
		ag->free[i].len = start - fs;
		ag->free[i + 1].start = start + len;
		ag->free[i + 1].len = fe - (start + len);
	}
}

/* Insert an rmap record in block order, merging with a same-owner neighbour. */
static void rmap_add(struct mkfs_ag *ag, uint32_t start, uint32_t len, uint64_t owner, bool merge)
{
	uint32_t i = 0, j;

	while (i < ag->nrmap && ag->rmap[i].start < start)
		i++;
	if (merge && i > 0 && ag->rmap[i - 1].owner == owner &&
	    ag->rmap[i - 1].start + ag->rmap[i - 1].len == start) {
		ag->rmap[i - 1].len += len;
		if (i < ag->nrmap && ag->rmap[i].owner == owner &&
		    ag->rmap[i - 1].start + ag->rmap[i - 1].len == ag->rmap[i].start) {
			ag->rmap[i - 1].len += ag->rmap[i].len;
			for (j = i; j + 1 < ag->nrmap; j++)
				ag->rmap[j] = ag->rmap[j + 1];
			ag->nrmap--;
		}
		return;
	}
	if (merge && i < ag->nrmap && ag->rmap[i].owner == owner && start + len == ag->rmap[i].start) {
		ag->rmap[i].start = start;
		ag->rmap[i].len += len;
		return;
	}
	for (j = ag->nrmap; j > i; j--)
		ag->rmap[j] = ag->rmap[j - 1];
	ag->rmap[i] = (struct mkfs_rmap){ start, len, owner };
	ag->nrmap++;
}

/* The lowest free extent that holds len blocks gives its first len. */
static int take_first(struct mkfs_ag *ag, uint32_t len, uint32_t *agbno)
{
	for (uint32_t i = 0; i < ag->nfree; i++) {
		if (ag->free[i].len >= len) {
			*agbno = ag->free[i].start;
			free_remove(ag, i, *agbno, len);
			return 0;
		}
	}
	return -ENOSPC;
}

int mkfs_ag_layout(const struct mkfs_plan *p, uint32_t agno, struct mkfs_ag *ag)
{
	uint32_t need;

	memset(ag, 0, sizeof(*ag));
	ag->agno = agno;
	ag->length = mkfs_ag_length(p, agno);
	if (ag->length <= p->prealloc_blocks)
		return -ENOSPC;

	/* static owners, as the kernel's AG header init writes them (unmerged) */
	rmap_add(ag, 0, p->bno_root, XFS_RMAP_OWN_FS, false);
	rmap_add(ag, p->bno_root, 2, XFS_RMAP_OWN_AG, false);
	rmap_add(ag, p->ino_root, p->finobt ? 2 : 1, XFS_RMAP_OWN_INOBT, false);
	if (p->rmapbt)
		rmap_add(ag, p->rmap_root, 1, XFS_RMAP_OWN_AG, false);
	if (p->reflink)
		rmap_add(ag, p->refc_root, 1, XFS_RMAP_OWN_REFC, false);

	ag->has_log = !p->extlog && agno == p->logagno;
	if (ag->has_log) {
		uint32_t log_end = p->logagbno + p->logblocks;

		if (log_end > ag->length)
			return -ENOSPC;
		if (p->logagbno > p->prealloc_blocks)
			ag->free[ag->nfree++] = (typeof(ag->free[0])){ p->prealloc_blocks,
								   p->logagbno - p->prealloc_blocks };
		if (log_end < ag->length)
			ag->free[ag->nfree++] = (typeof(ag->free[0])){ log_end, ag->length - log_end };
		rmap_add(ag, p->logagbno, p->logblocks, XFS_RMAP_OWN_LOG, false);
	} else {
		ag->free[ag->nfree++] = (typeof(ag->free[0])){ p->prealloc_blocks,
							   ag->length - p->prealloc_blocks };
	}

	/*
	 * Fill the AGFL as xfs_alloc_fix_freelist does: by-size allocations
	 * (the smallest free extent that holds what is still needed, lowest
	 * block first; else the largest), blocks queued in ascending order.
	 */
	need = p->agfl_need;
	while (ag->agfl_count < need) {
		uint32_t want = need - ag->agfl_count, best = UINT32_MAX, i, take, start;

		for (i = 0; i < ag->nfree; i++) {
			if (ag->free[i].len >= want &&
			    (best == UINT32_MAX || ag->free[i].len < ag->free[best].len))
				best = i;
		}
		if (best == UINT32_MAX) {
			for (i = 0; i < ag->nfree; i++)
				if (best == UINT32_MAX || ag->free[i].len > ag->free[best].len)
					best = i;
		}
		if (best == UINT32_MAX)
			return -ENOSPC;
		take = ag->free[best].len < want ? ag->free[best].len : want;
		start = ag->free[best].start;
		free_remove(ag, best, start, take);
		for (i = 0; i < take; i++)
			ag->agfl[ag->agfl_count++] = start + i;
		if (p->rmapbt)
			rmap_add(ag, start, take, XFS_RMAP_OWN_AG, true);
	}

	/* the root inode chunk: first aligned block that fits, near the inobt root */
	if (agno == 0) {
		uint32_t i;

		for (i = 0; i < ag->nfree; i++) {
			uint32_t s = (ag->free[i].start + p->chunk_align - 1) / p->chunk_align *
				     p->chunk_align;
			if (s + p->chunk_blocks <= ag->free[i].start + ag->free[i].len) {
				free_remove(ag, i, s, p->chunk_blocks);
				ag->chunk_agbno = s;
				ag->has_inodes = true;
				rmap_add(ag, s, p->chunk_blocks, XFS_RMAP_OWN_INODES, false);
				break;
			}
		}
		if (!ag->has_inodes)
			return -ENOSPC;
		/*
		 * The rt bitmap, then the summary: each in one extent, the
		 * lowest that holds it (where mkfs.xfs's allocator puts them:
		 * after the AGFL, before or after the root chunk).
		 */
		if (p->rbmblocks) {
			if (take_first(ag, p->rbmblocks, &ag->rbm_agbno) ||
			    take_first(ag, p->rsumblocks, &ag->rsum_agbno))
				return -ENOSPC;
		}
	}

	for (uint32_t i = 0; i < ag->nfree; i++) {
		ag->freeblks += ag->free[i].len;
		if (ag->free[i].len > ag->longest)
			ag->longest = ag->free[i].len;
	}
	return 0;
}
