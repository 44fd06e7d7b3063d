// SPDX-License-Identifier: GPL-2.0
/*
 * Repair step 4 (run.c), inodes: mend, don't clear.  Each finding about an inode
 * becomes a verdict on its link-record slot.  An inode is cleared (RV_CLEAR:
 * freed, its data lost) only when nothing shows it is one (di_ino and the
 * UUID), its type or data fork cannot be read, its data fork claims blocks
 * it cannot own, or the mends below leave the verifier unsatisfied.  Every
 * other inode is mended (apply): magic and version reset, flags masked by
 * xfs_repair's rules, hints whose flag goes zeroed, the attr fork's offset
 * and format found again where both forks then load and map di_nblocks,
 * an impossible extent count replaced by the records present, a
 * directory's impossible di_size by the size its readable data fork
 * implies (its entries then walked and kept by phase_names.c), di_nblocks
 * set from the maps, an attr fork no reader can follow removed (the file
 * kept; phase_xattrs.c salvages one whose entries verify), the CRC
 * re-stamped once the core passes.  Of two inodes claiming one block
 * outside reflink, the damaged one goes, else the later (dup_clears).
 * The changed inodes become dirty buffers (written with the headers);
 * their freed blocks and inode slots reach the AG rebuild through the
 * verdicts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfs/format/attr.h"
#include "libfs/format/dir.h"
#include "libfs/build/encode.h"
#include "libfs/format/endian.h"
#include "libfs/format/symlink.h"
#include "libfs/util/vec.h"
#include "repair/bmbt_keys.h"
#include "repair/buf.h"
#include "repair/phase_inodes.h"
#include "repair/phase_names.h"
#include "repair/rules.h"
#include "repair/symlinks.h"
#include "scan/links.h"

static uint8_t *verdict_of(struct repair_ctx *rx, fs_ino_t ino)
{
	uint64_t slot = scan_links_slot(rx->sx, ino);

	return slot == UINT64_MAX ? NULL : &rx->verdict[slot];
}

static int add_field_fix(struct repair_ctx *rx, fs_ino_t ino, int field, uint64_t value)
{
	if (FS_VEC_ROOM(rx->ffix, rx->nffix, rx->capffix, 64))
		return -ENOMEM;
	rx->ffix[rx->nffix++] = (struct repair_field_fix){ .ino = ino, .field = field,
							   .value = value };
	return 0;
}

/* Byte address of an inode's core on the device, as a daddr plus offset in sectors. */
/* Whether daddr is a block of the inode's attr fork (as its core maps it now). */
static bool in_attr_fork(struct repair_ctx *rx, fs_ino_t ino, fs_daddr_t daddr)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_inode ip;
	struct fs_bmap m = { 0 };
	bool in = false;

	if (repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b))
		return false;
	fs_inode_decode(b->data, &ip);
	if (!scan_load_map(rx->sx, b->data, &ip, XFS_ATTR_FORK, NULL, &m)) {
		for (size_t i = 0; i < m.n && !in; i++) {
			fs_daddr_t d0 = fs_fsb_to_daddr(g, m.ext[i].startblock);

			in = daddr >= d0 && daddr < d0 + (fs_daddr_t)(m.ext[i].blockcount <<
							      (g->blocklog - FS_BBSHIFT));
		}
		fs_bmap_free(&m);
	}
	fs_buf_put(rx->sx->cache, b);
	return in;
}

/*
 * Core fields with a known safe value, as xfs_repair resets them: the v1
 * link count and invalid extent size hints to 0 (with their flags), flags
 * the verifier rejects dropped, legacy nanoseconds past a second to 0.
 */
static const struct {
	enum fs_code code;
	int field;
} field_codes[] = {
	{ FS_C_INODE_ONLINK, RF_ONLINK },
	{ FS_C_INODE_EXTSIZE, RF_EXTSIZE },
	{ FS_C_INODE_COWEXTSIZE, RF_COWEXTSIZE },
	{ FS_C_INODE_FLAGS, RF_FLAGS },
	{ FS_C_INODE_TIMESTAMP, RF_TIMESTAMP },
	{ FS_C_INODE_LSN, RF_LSN },           /* past the log head: 0 is never in the future */
	{ FS_C_INODE_UNLINKED, RF_UNLINKED }, /* names no inode: the list ends here */
};

/* Whether symlink ino was mended (its blocks rewritten), once per inode: 1, 0, -errno. */
static int symlink_mended(struct repair_ctx *rx, fs_ino_t ino)
{
	int r;

	for (size_t i = 0; i < rx->nsymlinks; i++)
		if (rx->symlinks[i].ino == ino)
			return rx->symlinks[i].mended;
	r = repair_symlink_salvage(rx, ino);
	if (r < 0)
		return r;
	if (FS_VEC_ROOM(rx->symlinks, rx->nsymlinks, rx->capsymlinks, 8))
		return -ENOMEM;
	rx->symlinks[rx->nsymlinks++] = (struct repair_symlink){ ino, r > 0 };
	return r;
}

/* Whether inode ino as the cache holds it names itself (di_ino, UUID). */
static bool identified(struct repair_ctx *rx, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	bool ok;

	if (repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b))
		return false;
	ok = scan_inode_identified(g, ino, b->data);
	fs_buf_put(rx->sx->cache, b);
	return ok;
}

/*
 * The di_size a directory's data fork implies, when it can be read: a
 * short form fork's header and entries, else the directory blocks its
 * mapping holds (fs_dir_mapped_size).  0: not a directory, or nothing
 * readable to size it by (the inode goes, as before).
 */
static uint64_t dir_size_of(struct repair_ctx *rx, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_buf *b;
	struct fs_inode ip;
	uint64_t size = 0;

	if (repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b))
		return 0;
	fs_inode_decode(b->data, &ip);
	if (!S_ISDIR(ip.mode) || !scan_inode_identified(g, ino, b->data) ||
	    ((uint32_t)ip.forkoff << 3) >= fs_inode_litino(g)) {
		/* (an attr fork offset past the literal area: no data fork to read) */
	} else if (ip.format == XFS_DINODE_FMT_LOCAL) {
		if (!ip.nextents)
			size = fs_dir_sf_size(g, fs_inode_fork_ptr(b->data, &ip, XFS_DATA_FORK),
					      fs_inode_fork_size(g, &ip, XFS_DATA_FORK));
	} else if (ip.format == XFS_DINODE_FMT_EXTENTS || ip.format == XFS_DINODE_FMT_BTREE) {
		struct fs_bmap m = { 0 };

		if (!scan_load_map(rx->sx, b->data, &ip, XFS_DATA_FORK, NULL, &m) && !m.bad)
			size = fs_dir_mapped_size(g, &m);
		fs_bmap_free(&m);
		/* a size the inode verifier calls inline-sized is no block directory's */
		if (size <= fs_inode_fork_size(g, &ip, XFS_DATA_FORK))
			size = 0;
	}
	fs_buf_put(rx->sx->cache, b);
	return size;
}

/*
 * The inode step's plan rules (fix.c's table names each for its action):
 * the verdict one finding gives its inode.  An inode is cleared only when
 * nothing shows it is one (di_ino, UUID), its type or data fork cannot be
 * read, or its data fork claims what others own; every other finding is
 * mended in apply(): fields recomputed from what verifies, a bad attr
 * fork removed or salvaged, the CRC re-stamped on contents that pass.
 * Each returns the inode's verdict byte, or NULL when the finding names
 * no inode a chunk the scan knows holds (nothing to change).
 */
static uint8_t *finding_verdict(struct repair_ctx *rx, const struct fs_finding *f)
{
	return f->ino < 0 ? NULL : verdict_of(rx, (fs_ino_t)f->ino);
}

/*
 * An inode with damage of its own, or a claim the reverse mappings do not
 * back: of two inodes claiming one block, dup_clears lets it go first.
 */
static void mark_suspect(struct repair_ctx *rx, const struct fs_finding *f, uint8_t *suspects)
{
	suspects[scan_links_slot(rx->sx, (fs_ino_t)f->ino)] = 1;
}

int repair_inodes_plan_clear(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);

	if (!v)
		return 0;
	*v |= RV_CLEAR;
	mark_suspect(rx, f, suspects);
	return 0;
}

int repair_inodes_plan_crc(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);

	if (!v)
		return 0;
	/*
	 * The scan judged the contents whatever the CRC said (a CRC hides
	 * nothing): what else is wrong has findings of its own.  apply()
	 * re-stamps the CRC once the core passes.
	 */
	*v |= RV_FIELDS;
	mark_suspect(rx, f, suspects);
	return 0;
}

int repair_inodes_plan_fork(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);

	if (!v)
		return 0;	/* (no inode: two AG structures claim a block, the AG rebuild's) */
	/*
	 * a block another owner holds: dup_clears judges the claims (the
	 * finding may name the innocent one); the inode is rewritten as it
	 * is unless it is cleared there
	 */
	if (f->code == FS_C_BLOCK_DUP) {
		*v |= RV_FIELDS;
		return 0;
	}
	/*
	 * apply() mends the counts from the records present, then loads the
	 * forks: a data fork still bad takes the inode (xfs_repair's rule), a
	 * bad attr fork only the xattrs.
	 */
	*v |= RV_FIELDS;
	mark_suspect(rx, f, suspects);
	return 0;
}

int repair_inodes_plan_field(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	fs_ino_t ino = (fs_ino_t)f->ino;
	uint8_t *v = finding_verdict(rx, f);

	if (!v)
		return 0;
	mark_suspect(rx, f, suspects);
	/* mended, not cleared, when its identity holds (di_ino and UUID, scan_inode_identified) */
	if (f->def->flags & FS_FL_MEND_IF_IDENTIFIED) {
		if (identified(rx, ino))
			*v |= RV_FIELDS;
		else
			*v |= RV_CLEAR;
		return 0;
	}
	for (size_t k = 0; k < sizeof(field_codes) / sizeof(field_codes[0]); k++)
		if (f->code == field_codes[k].code) {
			*v |= RV_FIELDS;
			return add_field_fix(rx, ino, field_codes[k].field, 0);
		}
	if (f->code == FS_C_INODE_REFLINK) {
		*v |= RV_REFLINK;
		return 0;
	}
	/* a directory's size: what its readable data fork implies */
	if (f->code == FS_C_INODE_SIZE) {
		uint64_t size = dir_size_of(rx, ino);

		if (size) {
			*v |= RV_FIELDS;
			return add_field_fix(rx, ino, RF_DIRSIZE, size);
		}
	}
	/* a field whose right value the scan does not know (a size): the inode goes */
	*v |= RV_CLEAR;
	return 0;
}

int repair_inodes_plan_xattr(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);

	(void)suspects;
	if (v)
		*v |= RV_ATTR_SALVAGE;	/* phase_xattrs.c keeps the entries that verify */
	return 0;
}

int repair_inodes_plan_symlink(struct repair_ctx *rx, const struct fs_finding *f, void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);
	int err;

	(void)suspects;
	/* a remote target that survives its blocks' headers is kept */
	if (!v || (*v & RV_CLEAR))
		return 0;
	err = symlink_mended(rx, (fs_ino_t)f->ino);
	if (err < 0)
		return err;
	if (!err)
		*v |= RV_CLEAR;		/* its names are removed by phase_names.c */
	return 0;
}

int repair_inodes_plan_attr_node(struct repair_ctx *rx, const struct fs_finding *f,
				 void *suspects)
{
	uint8_t *v = finding_verdict(rx, f);

	(void)suspects;
	/* a DA node of the xattrs, not of a directory: the attr fork is salvaged */
	if (v && f->daddr >= 0 && in_attr_fork(rx, (fs_ino_t)f->ino, (fs_daddr_t)f->daddr))
		*v |= RV_ATTR_SALVAGE;
	return 0;
}

int repair_inodes_plan_unbacked(struct repair_ctx *rx, const struct fs_finding *f,
				void *suspects)
{
	/* rmap.missing: a block it maps that the rmapbt gives no such owner */
	if (f->code == FS_C_RMAP_MISSING && finding_verdict(rx, f))
		mark_suspect(rx, f, suspects);
	return 0;
}

/* Clear: the inode as chunk initialisation leaves a free one (generation kept). */
static void clear_inode(const struct fs_geom *g, unsigned char *dip, fs_ino_t ino,
			const unsigned char *uuid)
{
	uint32_t gen = get_be32(&((struct xfs_dinode *)dip)->di_gen);

	fs_enc_dinode_free(dip, g->inodesize, ino, uuid);
	put_be32(&((struct xfs_dinode *)dip)->di_gen, gen);
}

void repair_attr_fork_reset(const struct fs_geom *g, unsigned char *dip)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	struct fs_inode ip;
	uint32_t lit = fs_inode_litino(g);

	fs_inode_decode(dip, &ip);
	if (ip.forkoff && ((uint32_t)ip.forkoff << 3) < lit)
		memset(dip + sizeof(struct xfs_dinode) + ((uint32_t)ip.forkoff << 3), 0,
		       lit - ((uint32_t)ip.forkoff << 3));
	d->di_forkoff = 0;
	d->di_aformat = XFS_DINODE_FMT_EXTENTS;
	if (ip.nrext64)
		d->di_big_anextents = 0;
	else
		d->di_anextents = 0;
}

/* Findings the inode verifier makes on a core (its CRC recomputed first). */
static int core_findings(const struct fs_geom *g, unsigned char *dip, fs_ino_t ino)
{
	struct fs_findings scratch;
	struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .ino = ino };
	int n;

	fs_enc_dinode_finish(dip, g->inodesize);
	fs_findings_init(&scratch);
	vc.fl = &scratch;
	n = fs_verify(FS_MT_INODE, &vc, dip, g->inodesize);
	fs_findings_free(&scratch);
	return n;
}

/*
 * Drop flag bits the verifier rejects: each set bit of di_flags and
 * di_flags2 is cleared in turn and kept cleared when that removes
 * findings.  The verifier's rules decide; none are restated here.
 */
static void drop_bad_flags(const struct fs_geom *g, unsigned char *dip, fs_ino_t ino)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	int best = core_findings(g, dip, ino);

	for (int bit = 0; bit < 16 && best; bit++) {
		uint16_t f = be16(d->di_flags);

		if (!(f & (1u << bit)))
			continue;
		put_be16(&d->di_flags, (uint16_t)(f & ~(1u << bit)));
		int n = core_findings(g, dip, ino);
		if (n < best)
			best = n;
		else
			put_be16(&d->di_flags, f);
	}
	for (int bit = 0; bit < 64 && best; bit++) {
		uint64_t f = be64(d->di_flags2);

		/* bigtime and nrext64 change how other fields read: never dropped */
		if (!(f & (1ull << bit)) || (1ull << bit) == XFS_DIFLAG2_BIGTIME ||
		    (1ull << bit) == XFS_DIFLAG2_NREXT64)
			continue;
		put_be64(&d->di_flags2, f & ~(1ull << bit));
		int n = core_findings(g, dip, ino);
		if (n < best)
			best = n;
		else
			put_be64(&d->di_flags2, f);
	}
}

static void fix_timestamps(unsigned char *dip)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	xfs_timestamp_t *ts[] = { &d->di_atime, &d->di_mtime, &d->di_ctime, &d->di_crtime };

	if (be64(d->di_flags2) & XFS_DIFLAG2_BIGTIME)
		return;
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		struct xfs_legacy_timestamp *lt = (struct xfs_legacy_timestamp *)ts[i];

		if (be32(lt->t_nsec) >= 1000000000u)
			lt->t_nsec = 0;
	}
}

/* Whether an inode's kept data blocks are shared with another kept mapping. */
static bool shares_data(const struct repair_ctx *rx, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;

	for (fs_agnumber_t a = 0; a < g->agcount; a++) {
		size_t n;
		const struct model_ext *e = model_ag_extents(rx->sx->model, a, &n);

		for (size_t i = 0; i < n; i++) {
			if (e[i].cls != MC_DATA || e[i].owner != ino)
				continue;
			for (size_t j = 0; j < n && e[j].agbno < e[i].agbno + e[i].len; j++) {
				uint64_t slot;

				if (j == i || e[j].cls != MC_DATA ||
				    e[j].agbno + e[j].len <= e[i].agbno)
					continue;
				slot = scan_links_slot(rx->sx, (fs_ino_t)e[j].owner);
				if (slot == UINT64_MAX || !(rx->verdict[slot] & RV_CLEAR))
					return true;
			}
		}
	}
	return false;
}

/* Whether an inline (short form) attr fork breaks its rules. */
static bool local_attr_bad(const struct fs_geom *g, const void *dip, const struct fs_inode *ip,
			   fs_ino_t ino)
{
	struct fs_findings scratch;
	struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .ino = ino };
	int n;

	fs_findings_init(&scratch);
	vc.fl = &scratch;
	n = fs_attr_sf_verify(&vc, fs_inode_fork_ptr(dip, ip, XFS_ATTR_FORK),
			      fs_inode_fork_size(g, ip, XFS_ATTR_FORK), NULL, NULL);
	fs_findings_free(&scratch);
	return n != 0;
}

/* Whether an inline symlink target or a device/fifo/socket inode breaks its rules. */
static bool local_data_bad(const struct fs_geom *g, const void *dip, const struct fs_inode *ip,
			   fs_ino_t ino)
{
	struct fs_findings scratch;
	struct fs_vctx vc = { .g = g, .agno = fs_ino_to_agno(g, ino), .ino = ino };
	int n = 0;

	fs_findings_init(&scratch);
	vc.fl = &scratch;
	if (S_ISLNK(ip->mode) && ip->format == XFS_DINODE_FMT_LOCAL)
		n = fs_symlink_local_verify(&vc, fs_inode_fork_ptr(dip, ip, XFS_DATA_FORK), ip->size);
	else if (S_ISCHR(ip->mode) || S_ISBLK(ip->mode) || S_ISFIFO(ip->mode) ||
		 S_ISSOCK(ip->mode))
		n = fs_special_verify(&vc, ip);
	fs_findings_free(&scratch);
	return n != 0;
}

/*
 * Flags dropped by xfs_repair's rules (facts of its process_dinode_int,
 * restated as rules of the format): bits that do not exist, and bits that
 * contradict the file's type or the filesystem's features.  A hint whose
 * flag goes goes with it; bigtime on a filesystem without it takes the
 * timestamps (they cannot be read); large extent counters on one without
 * them move the counters back (mend_counts sets them from the records).
 */
static void mask_flags(const struct fs_geom *g, fs_ino_t ino, unsigned char *dip)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	uint16_t mode = be16(d->di_mode), f = be16(d->di_flags);
	uint64_t f2 = be64(d->di_flags2);
	bool reg = S_ISREG(mode), dir = S_ISDIR(mode);

	f &= XFS_DIFLAG_ANY;
	if ((f & XFS_DIFLAG_REALTIME) && !g->rblocks)
		f &= (uint16_t)~XFS_DIFLAG_REALTIME;
	if ((f & XFS_DIFLAG_NEWRTBM) && ino != g->rbmino)
		f &= (uint16_t)~XFS_DIFLAG_NEWRTBM;
	if (mode && !dir)
		f &= (uint16_t)~(XFS_DIFLAG_RTINHERIT | XFS_DIFLAG_EXTSZINHERIT |
				 XFS_DIFLAG_PROJINHERIT | XFS_DIFLAG_NOSYMLINKS);
	if (mode && !reg)
		f &= (uint16_t)~(XFS_DIFLAG_REALTIME | XFS_DIFLAG_EXTSIZE);
	f2 &= XFS_DIFLAG2_ANY;
	if (mode && !reg && !dir)
		f2 &= ~XFS_DIFLAG2_DAX;
	if (!g->reflink || (mode && !reg) || (f & (XFS_DIFLAG_REALTIME | XFS_DIFLAG_RTINHERIT)))
		f2 &= ~XFS_DIFLAG2_REFLINK;
	if ((f2 & XFS_DIFLAG2_REFLINK) && (f2 & XFS_DIFLAG2_DAX))
		f2 &= ~XFS_DIFLAG2_DAX;
	if (!g->reflink || (mode && !reg && !dir) ||
	    (f & (XFS_DIFLAG_REALTIME | XFS_DIFLAG_RTINHERIT)))
		f2 &= ~XFS_DIFLAG2_COWEXTSIZE;
	if ((f2 & XFS_DIFLAG2_BIGTIME) && !g->bigtime) {
		f2 &= ~XFS_DIFLAG2_BIGTIME;
		d->di_atime = d->di_mtime = d->di_ctime = d->di_crtime = 0;
	}
	if ((f2 & XFS_DIFLAG2_NREXT64) && !g->nrext64) {
		uint64_t n = be64(d->di_big_nextents);
		uint32_t an = be32(d->di_big_anextents);

		f2 &= ~XFS_DIFLAG2_NREXT64;
		d->di_v3_pad = 0;
		put_be32(&d->di_nextents, n > XFS_MAX_EXTCNT_DATA_FORK_SMALL ?
			 XFS_MAX_EXTCNT_DATA_FORK_SMALL : (uint32_t)n);
		put_be16(&d->di_anextents, an > XFS_MAX_EXTCNT_ATTR_FORK_SMALL ?
			 XFS_MAX_EXTCNT_ATTR_FORK_SMALL : (uint16_t)an);
	}
	if (f2 & XFS_DIFLAG2_NREXT64)
		d->di_nrext64_pad = 0;
	else
		d->di_v3_pad = 0;
	if (!(f & (XFS_DIFLAG_EXTSIZE | XFS_DIFLAG_EXTSZINHERIT)))
		d->di_extsize = 0;
	if (!(f2 & XFS_DIFLAG2_COWEXTSIZE))
		d->di_cowextsize = 0;
	put_be16(&d->di_flags, f);
	put_be64(&d->di_flags2, f2);
}

/* Whether an attr fork's place or format is one no reader can follow. */
static bool attr_shape_bad(const struct fs_geom *g, const struct fs_inode *ip)
{
	uint32_t lit = fs_inode_litino(g);

	if (!ip->forkoff)
		return false;
	if (((uint32_t)ip->forkoff << 3) > g->inodesize)
		return true;
	if (ip->format == XFS_DINODE_FMT_DEV)
		return ip->forkoff != (sizeof(uint32_t) + 7) / 8;
	if (ip->forkoff >= (lit >> 3))
		return true;
	return ip->aformat != XFS_DINODE_FMT_LOCAL && ip->aformat != XFS_DINODE_FMT_EXTENTS &&
	       ip->aformat != XFS_DINODE_FMT_BTREE;
}

/* Store a fork's extent count in the counter the inode's flags2 says it uses. */
static void set_count(unsigned char *dip, int fork, uint64_t n)
{
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	bool big = be64(d->di_flags2) & XFS_DIFLAG2_NREXT64;

	if (fork == XFS_DATA_FORK && big)
		put_be64(&d->di_big_nextents, n);
	else if (fork == XFS_DATA_FORK)
		put_be32(&d->di_nextents, (uint32_t)n);
	else if (big)
		put_be32(&d->di_big_anextents, (uint32_t)n);
	else
		put_be16(&d->di_anextents, (uint16_t)n);
}

/*
 * Whether the fork loads without a finding with its extent count set to n
 * (the first n records of an extent list), and the blocks it then maps
 * (extents and bmbt blocks).
 */
static bool prefix_map(struct repair_ctx *rx, const unsigned char *dip, const struct fs_inode *ip,
		       int fork, uint64_t n, uint64_t *blocks)
{
	struct fs_inode t = *ip;
	struct fs_bmap m;
	bool ok;

	if (fork == XFS_DATA_FORK)
		t.nextents = n;
	else
		t.anextents = (uint32_t)n;
	*blocks = 0;
	if (scan_load_map(rx->sx, dip, &t, fork, NULL, &m))
		return false;
	ok = !m.bad;
	if (ok)
		*blocks = fs_bmap_blocks(&m) + m.nbmbt;
	fs_bmap_free(&m);
	return ok;
}

/* Whether the first n records of an extent-list fork load without a finding. */
static bool prefix_loads(struct repair_ctx *rx, const unsigned char *dip,
			 const struct fs_inode *ip, int fork, uint64_t n)
{
	uint64_t blocks;

	return prefix_map(rx, dip, ip, fork, n, &blocks);
}

/*
 * Whether both forks of ip (its counts as stored) load cleanly: each
 * extent list or btree without a finding, an inline attr fork by its own
 * rules, an inline data fork holding its size; *blocks what they map.
 */
static bool forks_load(struct repair_ctx *rx, const unsigned char *dip, const struct fs_inode *ip,
		       fs_ino_t ino, uint64_t *blocks)
{
	const struct fs_geom *g = &rx->fs->g;

	*blocks = 0;
	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK; fork++) {
		uint8_t fmt = fork == XFS_DATA_FORK ? ip->format : ip->aformat;
		uint64_t n = fork == XFS_DATA_FORK ? ip->nextents : ip->anextents;
		struct fs_bmap m;
		bool ok;

		if (fork == XFS_ATTR_FORK && !ip->forkoff)
			return !n;
		if (fmt == XFS_DINODE_FMT_LOCAL) {
			if (n || (fork == XFS_DATA_FORK &&
				  ip->size > fs_inode_fork_size(g, ip, XFS_DATA_FORK)) ||
			    (fork == XFS_ATTR_FORK && local_attr_bad(g, dip, ip, ino)))
				return false;
			continue;
		}
		if (fmt == XFS_DINODE_FMT_DEV) {
			if (n || fork == XFS_ATTR_FORK)
				return false;
			continue;
		}
		if (fmt != XFS_DINODE_FMT_EXTENTS && fmt != XFS_DINODE_FMT_BTREE)
			return false;
		if (fmt == XFS_DINODE_FMT_EXTENTS &&
		    n > fs_inode_fork_size(g, ip, fork) / sizeof(struct xfs_bmbt_rec))
			return false;
		if (scan_load_map(rx->sx, dip, ip, fork, NULL, &m))
			return false;
		ok = !m.bad;
		*blocks += fs_bmap_blocks(&m) + m.nbmbt;
		fs_bmap_free(&m);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * A damaged attr fork offset moves both forks: the data fork's records
 * no longer fit, the attr fork is read from the wrong bytes.  When the
 * forks do not load as the inode stands, every offset is tried: the one
 * where both forks load with their stored counts and map di_nblocks
 * blocks is the inode's (0: no attr fork, when only the data fork then
 * holds di_nblocks).  Returns whether di_forkoff was set.
 */
static bool mend_forkoff(struct repair_ctx *rx, unsigned char *dip, fs_ino_t ino)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_inode ip;
	uint64_t blocks;
	uint32_t lit8 = fs_inode_litino(g) >> 3;

	fs_inode_decode(dip, &ip);
	if (ip.format == XFS_DINODE_FMT_DEV || !ip.nblocks)
		return false;	/* nothing to tell offsets apart by */
	if (forks_load(rx, dip, &ip, ino, &blocks) && blocks == ip.nblocks)
		return false;
	for (uint32_t f = 1; f < lit8; f++) {
		struct fs_inode t = ip;

		t.forkoff = (uint8_t)f;
		if (f != ip.forkoff && forks_load(rx, dip, &t, ino, &blocks) &&
		    blocks == ip.nblocks) {
			((struct xfs_dinode *)dip)->di_forkoff = (uint8_t)f;
			return true;
		}
	}
	return false;
}

/*
 * A damaged attr fork format: the format under which the attr fork loads
 * cleanly by its own rules and both forks map di_nblocks blocks is the
 * fork's (inline first: its rules are the strictest; an empty extent list
 * loads under any bytes).  Returns whether di_aformat was set.
 */
static bool mend_aformat(struct repair_ctx *rx, unsigned char *dip, fs_ino_t ino)
{
	static const uint8_t fmts[] = { XFS_DINODE_FMT_LOCAL, XFS_DINODE_FMT_BTREE,
					XFS_DINODE_FMT_EXTENTS };
	struct fs_inode ip;
	uint64_t blocks;

	fs_inode_decode(dip, &ip);
	if (!ip.forkoff || ip.aformat == XFS_DINODE_FMT_LOCAL ||
	    ip.aformat == XFS_DINODE_FMT_EXTENTS || ip.aformat == XFS_DINODE_FMT_BTREE)
		return false;
	for (size_t i = 0; i < sizeof(fmts); i++) {
		struct fs_inode t = ip;

		t.aformat = fmts[i];
		if (fmts[i] == XFS_DINODE_FMT_LOCAL && t.anextents)
			continue;
		if (forks_load(rx, dip, &t, ino, &blocks) && blocks == ip.nblocks) {
			((struct xfs_dinode *)dip)->di_aformat = fmts[i];
			return true;
		}
	}
	return false;
}

/* The blocks fork maps with its extent count set to n (0 when it does not load cleanly). */
static uint64_t prefix_blocks(struct repair_ctx *rx, const unsigned char *dip,
			      const struct fs_inode *ip, int fork, uint64_t n)
{
	uint64_t blocks;

	prefix_map(rx, dip, ip, fork, n, &blocks);
	return blocks;
}

/*
 * An extent list whose count is more than its fork holds: the records
 * present are the longest run from the first that load, cut where the
 * blocks they map and the other fork's make di_nblocks (when the count
 * alone was damaged, that cut drops the stale records the kernel leaves
 * past the real ones).
 */
static uint64_t extents_present(struct repair_ctx *rx, const unsigned char *dip,
				const struct fs_inode *ip, int fork)
{
	const struct fs_geom *g = &rx->fs->g;
	uint64_t maxext = fs_inode_fork_size(g, ip, fork) / sizeof(struct xfs_bmbt_rec);
	uint64_t n, other = 0, k;
	int ofork = fork == XFS_DATA_FORK ? XFS_ATTR_FORK : XFS_DATA_FORK;
	struct fs_bmap m;

	for (n = 0; n < maxext && prefix_loads(rx, dip, ip, fork, n + 1); n++)
		;
	if (!scan_load_map(rx->sx, dip, ip, ofork, NULL, &m)) {
		if (!m.bad)
			other = fs_bmap_blocks(&m) + m.nbmbt;
		fs_bmap_free(&m);
	}
	for (k = n; k > 0; k--)
		if (prefix_blocks(rx, dip, ip, fork, k) + other == ip->nblocks)
			return k;
	return n;
}

/*
 * The extent counts from the records actually present, where the count
 * itself is impossible: an extent list claiming more records than its
 * fork holds keeps the records present (extents_present); a btree's count
 * is the records its leaves hold, when the tree loads with it.  A count
 * the fork can hold is kept: a record in it that does not load is damage
 * to the map, judged as such (a bad data fork takes the inode, as
 * xfs_repair's does; a bad attr fork goes).  Inline and device forks have none;
 * an inode without an attr fork has no attr extents and the extents
 * format.  Returns whether a count changed.
 */
static bool mend_counts(struct repair_ctx *rx, unsigned char *dip)
{
	const struct fs_geom *g = &rx->fs->g;
	struct xfs_dinode *d = (struct xfs_dinode *)dip;
	bool changed = false;

	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK; fork++) {
		struct fs_inode ip;
		uint64_t claimed, n;
		uint8_t fmt;

		fs_inode_decode(dip, &ip);
		claimed = fork == XFS_DATA_FORK ? ip.nextents : ip.anextents;
		fmt = fork == XFS_DATA_FORK ? ip.format : ip.aformat;
		n = claimed;
		if (fork == XFS_ATTR_FORK && !ip.forkoff) {
			if (fmt != XFS_DINODE_FMT_EXTENTS && fmt != 0)
				d->di_aformat = XFS_DINODE_FMT_EXTENTS;
			n = 0;
		} else if (fmt == XFS_DINODE_FMT_LOCAL || fmt == XFS_DINODE_FMT_DEV) {
			n = 0;
		} else if (fmt == XFS_DINODE_FMT_EXTENTS) {
			uint64_t maxext = fs_inode_fork_size(g, &ip, fork) / sizeof(struct xfs_bmbt_rec);

			if (claimed > maxext)
				n = extents_present(rx, dip, &ip, fork);
		} else if (fmt == XFS_DINODE_FMT_BTREE) {
			struct fs_bmap m;

			if (!scan_load_map(rx->sx, dip, &ip, fork, NULL, &m)) {
				if (m.bad && m.n != claimed) {
					struct fs_inode t = ip;
					struct fs_bmap m2;

					if (fork == XFS_DATA_FORK)
						t.nextents = m.n;
					else
						t.anextents = (uint32_t)m.n;
					if (!scan_load_map(rx->sx, dip, &t, fork, NULL, &m2)) {
						if (!m2.bad)
							n = m.n;
						fs_bmap_free(&m2);
					}
				}
				fs_bmap_free(&m);
			}
		}
		if (n != claimed) {
			set_count(dip, fork, n);
			changed = true;
		}
	}
	return changed;
}

/* The blocks both forks map (extents and bmbt blocks); a removed attr fork maps none. */
static uint64_t forks_blocks(const struct fs_bmap *m, uint8_t v)
{
	uint64_t n = 0;

	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK; fork++) {
		if (fork == XFS_ATTR_FORK && (v & RV_ATTR_RESET))
			continue;
		for (size_t i = 0; i < m[fork].n; i++)
			n += m[fork].ext[i].blockcount;
		n += m[fork].nbmbt;
	}
	return n;
}

/*
 * A kept inode's forks, loaded from its mended core: a bad data fork means
 * the inode goes after all, a bad attr fork is removed; di_nblocks is set
 * to what the forks map; inodes whose forks the scan could not load (their
 * core was in the way) have them added to the model now.
 */
static int settle_forks(struct repair_ctx *rx, fs_ino_t ino, unsigned char *dip, uint8_t *vp,
			bool unread)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fs_bmap m[2];
	struct fs_inode ip;
	int err = 0;

	fs_inode_decode(dip, &ip);
	memset(m, 0, sizeof(m));
	/* a node key is its child's first key: mended before the forks load */
	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK && err >= 0; fork++)
		err = repair_bmbt_keys(rx, ino, dip, fork);
	if (err < 0)
		return err;
	err = 0;
	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK && !err; fork++) {
		err = scan_load_map(rx->sx, dip, &ip, fork, NULL, &m[fork]);
		if (!err && m[fork].bad && fork == XFS_DATA_FORK) {
			*vp |= RV_CLEAR;
			goto out;
		}
		if (!err && m[fork].bad) {
			*vp |= RV_ATTR_RESET;
			repair_attr_fork_reset(g, dip);
			fs_bmap_free(&m[fork]);
			memset(&m[fork], 0, sizeof(m[fork]));
			rx->attr_resets++;
		}
	}
	if (err)
		goto out;
	/* inline data a re-stamped core may hide: a bad inline symlink, a bad device inode */
	if (local_data_bad(g, dip, &ip, ino)) {
		*vp |= RV_CLEAR;
		goto out;
	}
	/*
	 * an inline attr fork is judged by its own rules (a core re-stamped
	 * may hide a bad one): phase_xattrs.c keeps its good entries
	 */
	if (!(*vp & RV_ATTR_RESET) && ip.forkoff && ip.aformat == XFS_DINODE_FMT_LOCAL &&
	    local_attr_bad(g, dip, &ip, ino))
		*vp |= RV_ATTR_SALVAGE;
	put_be64(&((struct xfs_dinode *)dip)->di_nblocks, forks_blocks(m, *vp));
	drop_bad_flags(g, dip, ino);
	/*
	 * What the verifier still finds may lie in the attr fork's shape (a
	 * btree root its extents would fit beside, say): the attr fork goes
	 * before the file does.
	 */
	if (core_findings(g, dip, ino) && ip.forkoff && !(*vp & RV_ATTR_RESET)) {
		*vp |= RV_ATTR_RESET;
		*vp &= (uint8_t)~RV_ATTR_SALVAGE;
		repair_attr_fork_reset(g, dip);
		rx->attr_resets++;
		put_be64(&((struct xfs_dinode *)dip)->di_nblocks, forks_blocks(m, *vp));
	}
	/* what the mends could not make valid goes */
	if (core_findings(g, dip, ino)) {
		*vp |= RV_CLEAR;
		goto out;
	}
	fs_inode_decode(dip, &ip);
	for (int fork = XFS_DATA_FORK; fork <= XFS_ATTR_FORK && unread && !err; fork++)
		if (fork == XFS_DATA_FORK || !(*vp & RV_ATTR_RESET))
			err = scan_model_add_fork(rx->sx, ino, &ip, fork, &m[fork]);
out:
	fs_bmap_free(&m[0]);
	fs_bmap_free(&m[1]);
	return err;
}

static int apply(struct repair_ctx *rx, fs_ino_t ino, uint64_t slot)
{
	const struct fs_geom *g = &rx->fs->g;
	uint8_t *vp = &rx->verdict[slot];
	bool unread = rx->sx->links->rec[slot].flags & LR_FORKS_UNREAD;
	struct fs_buf *b;
	struct xfs_dinode *d;
	int err = 0;

	err = repair_get_buf(rx, fs_ino_to_daddr(g, ino), g->inodesize, false, &b);
	if (err)
		return err;
	d = (struct xfs_dinode *)b->data;
	/* nothing shows it is inode ino: it goes (xfs_repair's rule for di_ino and UUID) */
	if (!(*vp & RV_CLEAR) && !scan_inode_identified(g, ino, b->data))
		*vp |= RV_CLEAR;
	if (!(*vp & RV_CLEAR)) {
		struct fs_inode ip;

		/* its identity holds: magic and version are mended, as xfs_repair resets them */
		put_be16(&d->di_magic, XFS_DINODE_MAGIC);
		d->di_version = 3;
		if (*vp & RV_ATTR_RESET) {
			repair_attr_fork_reset(g, b->data);
			rx->attr_resets++;
		}
		for (size_t i = 0; i < rx->nffix; i++) {
			const struct repair_field_fix *ff = &rx->ffix[i];

			if (ff->ino != ino)
				continue;
			switch (ff->field) {
			case RF_NBLOCKS:
				break;	/* settle_forks sets it from the forks */
			case RF_ONLINK:
				d->di_onlink = 0;
				break;
			case RF_EXTSIZE:
				d->di_extsize = 0;
				put_be16(&d->di_flags, be16(d->di_flags) &
					 (uint16_t)~(XFS_DIFLAG_EXTSIZE | XFS_DIFLAG_EXTSZINHERIT));
				break;
			case RF_COWEXTSIZE:
				d->di_cowextsize = 0;
				put_be64(&d->di_flags2, be64(d->di_flags2) & ~XFS_DIFLAG2_COWEXTSIZE);
				break;
			case RF_FLAGS:
				break;	/* mask_flags, below */
			case RF_TIMESTAMP:
				fix_timestamps(b->data);
				break;
			case RF_LSN:
				d->di_lsn = 0;
				break;
			case RF_UNLINKED:
				put_be32(&d->di_next_unlinked, NULLAGINO);
				break;
			case RF_DIRSIZE:
				put_be64(&d->di_size, ff->value);
				break;
			}
			rx->field_fixes++;
		}
		if ((*vp & RV_REFLINK) && shares_data(rx, ino)) {
			put_be64(&d->di_flags2, be64(d->di_flags2) | XFS_DIFLAG2_REFLINK);
			rx->field_fixes++;
		}
		mask_flags(g, ino, b->data);
		if (mend_aformat(rx, b->data, ino))
			rx->field_fixes++;
		if (mend_forkoff(rx, b->data, ino))
			rx->field_fixes++;
		/* an attr fork no reader can follow goes; the file stays */
		fs_inode_decode(b->data, &ip);
		if (!(*vp & RV_ATTR_RESET) && attr_shape_bad(g, &ip)) {
			repair_attr_fork_reset(g, b->data);
			*vp |= RV_ATTR_RESET;
			rx->attr_resets++;
		}
		mend_counts(rx, b->data);
		err = settle_forks(rx, ino, b->data, vp, unread);
	}
	if (!err && (*vp & RV_CLEAR)) {
		clear_inode(g, b->data, ino, g->meta_uuid);
		rx->cleared++;
	}
	if (!err)
		err = repair_mark(rx, b, FS_MT_INODE, fs_ino_to_agno(g, ino), ino,
				  FS_WCLASS_HEADERS);
	fs_buf_put(rx->sx->cache, b);
	rx->planned_writes = true;
	return err;
}

/*
 * Whether an inode's own metadata is damaged (a finding about its core or
 * forks other than the duplicate claim itself, or a block it maps that the
 * reverse mappings do not give it): its claims are the suspect ones where
 * it and an undamaged inode claim the same block.
 */
static bool damaged(const uint8_t *suspect, struct repair_ctx *rx, uint64_t owner)
{
	uint64_t slot = scan_links_slot(rx->sx, (fs_ino_t)owner);

	return slot != UINT64_MAX && suspect && suspect[slot];
}

/*
 * block.dup between an inode's fork and another owner: when one claimant
 * is damaged and the other is not, the damaged one goes (its core is what
 * lies, as a stretched extent with a stale CRC does), the other is kept;
 * when nothing tells them apart, the later inode goes (xfs_repair keeps
 * the first claim it meets in inode order).  A claim on a block no inode
 * can own (AG metadata, inode chunks) takes its inode.
 */
static void dup_clears(struct repair_ctx *rx, const uint8_t *suspect, bool second)
{
	const struct fs_geom *g = &rx->fs->g;

	for (fs_agnumber_t a = 0; a < g->agcount; a++) {
		size_t n;
		const struct model_ext *e = model_ag_extents(rx->sx->model, a, &n);
		fs_agblock_t reach = 0;
		size_t far = SIZE_MAX;

		/* extents sorted by start: an extent starting inside an earlier one overlaps it */
		for (size_t i = 0; i < n; i++) {
			const struct model_ext *x = &e[i];
			bool xin = x->cls >= MC_DATA && x->cls <= MC_BMBT;

			if (x->cls == MC_FREE || x->cls == MC_AGFL || x->cls == MC_COW ||
			    (x->cls >= MC_BNOBT && x->cls <= MC_FINOBT))
				continue;	/* rebuilt anyway, or judged by the refcounts */
			if (far != SIZE_MAX && x->agbno < reach) {
				const struct model_ext *y = &e[far];
				bool yin = y->cls >= MC_DATA && y->cls <= MC_BMBT;

				bool self = xin && yin && x->owner == y->owner;

				/*
				 * one inode mapping a block twice (a data or attr
				 * extent moved onto another of its own): its map is
				 * bad, as xfs_repair finds it claiming a used block;
				 * the same extent listed twice is the model's, and a
				 * file may share its own data under reflink
				 */
				if (self && x->cls == y->cls && (x->cls == MC_DATA || x->cls == MC_ATTR) &&
				    !((x->flags | y->flags) & MODEL_EXT_NEW) &&
				    !(g->reflink && x->cls == MC_DATA) &&
				    !(x->agbno == y->agbno && x->len == y->len && x->offset == y->offset)) {
					uint8_t *v = verdict_of(rx, x->owner);

					/* (the second pass applies only clears) */
					if (v)
						*v |= x->cls == MC_DATA || second ? RV_CLEAR
										  : RV_ATTR_RESET;
				}
				if (!(g->reflink && x->cls == MC_DATA && y->cls == MC_DATA) &&
				    !(x->cls == MC_INODES && y->cls == MC_INODES) && !self) {
					uint8_t *v;
					bool xd = xin && damaged(suspect, rx, x->owner);
					bool yd = yin && damaged(suspect, rx, y->owner);

					/*
					 * nothing tells the claims apart: the later inode
					 * goes, as xfs_repair's phase 3 (in inode order)
					 * keeps the first claim and clears the second
					 */
					if (xin && yin && xd == yd) {
						xd = x->owner > y->owner;
						yd = !xd;
					}
					if (xin && (!yin || xd) && (v = verdict_of(rx, x->owner)))
						*v |= RV_CLEAR;
					if (yin && (!xin || yd) && (v = verdict_of(rx, y->owner)))
						*v |= RV_CLEAR;
				}
			}
			if (far == SIZE_MAX || x->agbno + x->len > reach) {
				reach = x->agbno + x->len;
				far = i;
			}
		}
		model_ag_release(rx->sx->model, a);	/* spilling: one AG in memory at a time */
	}
}

/*
 * Apply the verdicts: every inode with one (only newly cleared ones when
 * again: cleared_before, a bit a slot, says which were cleared already).
 */
static int apply_all(struct repair_ctx *rx, const uint64_t *cleared_before)
{
	struct scan_links *lk = rx->sx->links;
	const struct fs_geom *g = &rx->fs->g;
	int err = 0;

	for (fs_agnumber_t a = 0; a < g->agcount && !err; a++) {
		size_t nic;
		const struct model_ichunk *ic = model_ag_ichunks(rx->sx->model, a, &nic);

		/* slots are 64 per chunk in the model's chunk order */
		for (uint64_t s = lk->ag_base[a]; s < lk->ag_base[a + 1] && !err; s++) {
			uint64_t k = (s - lk->ag_base[a]) / XFS_INODES_PER_CHUNK;

			if (!rx->verdict[s] || k >= nic)
				continue;
			if (cleared_before && (!(rx->verdict[s] & RV_CLEAR) ||
					       (cleared_before[s / 64] & (1ull << (s % 64)))))
				continue;
			err = apply(rx, fs_agino_to_ino(g, a, ic[k].startino +
				    (fs_agino_t)((s - lk->ag_base[a]) % XFS_INODES_PER_CHUNK)), s);
		}
	}
	return err;
}

static int finish_model(struct repair_ctx *rx)
{
	int err = 0;

	for (fs_agnumber_t a = 0; a < rx->fs->g.agcount && !err; a++)
		err = model_ag_finish(rx->sx->model, a);
	return err;
}

/*
 * The AGI unlinked lists with a clean log (or one replayed): what the
 * kernel would have freed is freed (inodes on a list with no links that
 * no directory names), an inode on a list that still has links or names
 * is only taken off it, and the
 * lists are emptied (the AG rebuild writes empty buckets).  An inode with
 * no links on no list is an orphan: phase_names.c names it in lost+found.
 */
bool repair_unlinked_frees(const struct repair_ctx *rx, uint64_t s)
{
	const struct link_rec *r = &rx->sx->links->rec[s];

	return (r->flags & (LR_SEEN | LR_ON_UNLINKED)) == (LR_SEEN | LR_ON_UNLINKED) &&
	       r->nlink8 == 0 && repair_names_scan_unnamed(rx, s);
}

static int plan_unlinked(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	int err = 0;

	/* (an unlinked-list finding, in the walk of the findings, asks for it) */
	if (!rx->empty_unlinked)
		return 0;
	for (uint64_t s = 0; s < lk->nslots && !err; s++) {
		const struct link_rec *r = &lk->rec[s];
		fs_agnumber_t agno;

		if ((r->flags & (LR_SEEN | LR_ON_UNLINKED)) != (LR_SEEN | LR_ON_UNLINKED))
			continue;
		/* still named by a directory: kept, its link count set by phase_names.c */
		if (repair_unlinked_frees(rx, s)) {
			rx->verdict[s] |= RV_CLEAR;
		} else {
			rx->verdict[s] |= RV_FIELDS;
			err = add_field_fix(rx, scan_slot_ino(rx->sx, s, &agno), RF_UNLINKED, 0);
		}
	}
	return err;
}

int repair_phase_inodes(struct repair_ctx *rx)
{
	struct scan_links *lk = rx->sx->links;
	uint64_t *before = NULL;   /* a bit a slot: cleared before the second duplicate pass */
	uint8_t *suspect;
	int err = 0;

	if (!lk)
		return 0;
	rx->verdict = calloc(lk->nslots ? lk->nslots : 1, 1);
	if (!rx->verdict)
		return -ENOMEM;
	suspect = calloc(lk->nslots ? lk->nslots : 1, 1);
	if (!suspect)
		return -ENOMEM;
	/* the verdicts, the suspects, and whether the AGI unlinked lists are emptied */
	err = repair_plan_findings(rx, REPAIR_PLAN_INODES, suspect);
	/* what an earlier attempt kept and its result showed it should not have */
	for (size_t i = 0; i < rx->nforce_clear; i++) {
		uint8_t *v = verdict_of(rx, rx->force_clear[i]);

		if (v)
			*v |= RV_CLEAR;
	}
	if (!err)
		err = plan_unlinked(rx);
	if (err) {
		free(suspect);
		return err;
	}
	dup_clears(rx, suspect, false);
	err = apply_all(rx, NULL);
	/*
	 * Forks loaded only now may claim blocks others own: the duplicate
	 * rule once more over the completed model, then the new clears.
	 */
	if (!err)
		err = finish_model(rx);
	if (!err) {
		/* a bit a slot, not a copy of the verdicts: 20M inodes, 2.4 MiB, not 19 */
		before = calloc(lk->nslots / 64 + 1, sizeof(*before));
		if (!before) {
			free(suspect);
			return -ENOMEM;
		}
		for (uint64_t s = 0; s < lk->nslots; s++)
			if (rx->verdict[s] & RV_CLEAR)
				before[s / 64] |= 1ull << (s % 64);
		dup_clears(rx, suspect, true);
		err = apply_all(rx, before);
		free(before);
	}
	free(suspect);
	for (uint64_t s = 0; s < lk->nslots && !rx->drops; s++)
		rx->drops = (rx->verdict[s] & (RV_CLEAR | RV_ATTR_RESET)) != 0;
	return err;
}
