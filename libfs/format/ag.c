// SPDX-License-Identifier: GPL-2.0
/*
 * AG headers: where the AGF, AGI and AGFL live, their decoding into host
 * order, and their field rules (the common magic/CRC/UUID/LSN checks come
 * from the verifier table).
 */
#include "libfs/format/ag.h"

#include <stdlib.h>
#include <string.h>

#include "libfs/format/endian.h"

uint64_t fs_ag_sb_offset(const struct fs_geom *g, fs_agnumber_t agno)
{
	return fs_daddr_to_bytes(fs_ag_daddr(g, agno));
}

uint64_t fs_ag_agf_offset(const struct fs_geom *g, fs_agnumber_t agno)
{
	return fs_ag_sb_offset(g, agno) + 1ull * g->sectsize;
}

uint64_t fs_ag_agi_offset(const struct fs_geom *g, fs_agnumber_t agno)
{
	return fs_ag_sb_offset(g, agno) + 2ull * g->sectsize;
}

uint64_t fs_ag_agfl_offset(const struct fs_geom *g, fs_agnumber_t agno)
{
	return fs_ag_sb_offset(g, agno) + 3ull * g->sectsize;
}

void fs_agf_decode(const void *buf, struct fs_agf *a)
{
	const struct xfs_agf *d = buf;

	a->magic = be32(d->agf_magicnum);
	a->versionnum = be32(d->agf_versionnum);
	a->seqno = be32(d->agf_seqno);
	a->length = be32(d->agf_length);
	a->bno_root = be32(d->agf_roots[XFS_BTNUM_BNOi]);
	a->cnt_root = be32(d->agf_roots[XFS_BTNUM_CNTi]);
	a->rmap_root = be32(d->agf_roots[XFS_BTNUM_RMAPi]);
	a->bno_level = be32(d->agf_levels[XFS_BTNUM_BNOi]);
	a->cnt_level = be32(d->agf_levels[XFS_BTNUM_CNTi]);
	a->rmap_level = be32(d->agf_levels[XFS_BTNUM_RMAPi]);
	a->refc_root = be32(d->agf_refcount_root);
	a->refc_level = be32(d->agf_refcount_level);
	a->flfirst = be32(d->agf_flfirst);
	a->fllast = be32(d->agf_fllast);
	a->flcount = be32(d->agf_flcount);
	a->freeblks = be32(d->agf_freeblks);
	a->longest = be32(d->agf_longest);
	a->btreeblks = be32(d->agf_btreeblks);
	a->rmap_blocks = be32(d->agf_rmap_blocks);
	a->refc_blocks = be32(d->agf_refcount_blocks);
	a->lsn = be64(d->agf_lsn);
}

void fs_agi_decode(const void *buf, struct fs_agi *a)
{
	const struct xfs_agi *d = buf;

	a->magic = be32(d->agi_magicnum);
	a->versionnum = be32(d->agi_versionnum);
	a->seqno = be32(d->agi_seqno);
	a->length = be32(d->agi_length);
	a->count = be32(d->agi_count);
	a->root = be32(d->agi_root);
	a->level = be32(d->agi_level);
	a->freecount = be32(d->agi_freecount);
	a->newino = be32(d->agi_newino);
	a->dirino = be32(d->agi_dirino);
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++)
		a->unlinked[i] = be32(d->agi_unlinked[i]);
	a->free_root = be32(d->agi_free_root);
	a->free_level = be32(d->agi_free_level);
	a->iblocks = be32(d->agi_iblocks);
	a->fblocks = be32(d->agi_fblocks);
	a->lsn = be64(d->agi_lsn);
}

uint32_t fs_agfl_active_count(const struct fs_geom *g, const struct fs_agf *agf)
{
	if (!agf->flcount || agf->flfirst >= g->agfl_size || agf->fllast >= g->agfl_size)
		return 0;
	if (agf->fllast >= agf->flfirst)
		return agf->fllast - agf->flfirst + 1;
	return g->agfl_size - agf->flfirst + agf->fllast + 1;
}

struct agv {
	const struct fs_vctx *c;
	struct fs_reporter r;      /* messages start with the header's name */
};

/* The reporter for header hdr ("AGF") of the block c is told about. */
static struct agv agv_init(const struct fs_vctx *c, const char *hdr)
{
	struct agv v = { .c = c, .r = fs_vctx_reporter(c) };

	v.r.ino = FS_NONE;
	v.r.prefix = hdr;
	return v;
}

/* A btree root must sit inside this AG and past its header sectors. */
static void check_root(struct agv *v, enum fs_code code, const char *field, uint32_t root,
		       uint32_t aglen)
{
	const struct fs_geom *g = v->c->g;

	if (root < g->ag_hdr_blocks || root >= aglen) {
		char exp[48];
		snprintf(exp, sizeof(exp), "%u..%u", g->ag_hdr_blocks, aglen - 1);
		fs_reporter_bad(&v->r, code, field, exp, FS_U(root),
				"btree root outside the AG or on its headers");
	}
}

static void check_level(struct agv *v, enum fs_code code, const char *field, uint32_t level,
			uint32_t max)
{
	if (level < 1 || level > max) {
		char exp[32];
		snprintf(exp, sizeof(exp), "1..%u", max);
		fs_reporter_bad(&v->r, code, field, exp, FS_U(level),
				"btree height outside what the geometry allows");
	}
}

int fs_agf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	struct agv v = agv_init(c, "AGF");
	uint32_t aglen = fs_ag_blocks(g, c->agno);
	struct fs_agf a;

	if (len < sizeof(struct xfs_agf))
		return 0;
	fs_agf_decode(buf, &a);

	if (a.versionnum != XFS_AGF_VERSION)
		fs_reporter_bad(&v.r, FS_C_AGF_VERSION, "versionnum", FS_U(XFS_AGF_VERSION),
				FS_U(a.versionnum), "unknown version");
	if (a.seqno != c->agno)
		fs_reporter_bad(&v.r, FS_C_AGF_SEQNO, "seqno", FS_U(c->agno), FS_U(a.seqno),
				"sequence number is not the AG number");
	if (a.length != aglen)
		fs_reporter_bad(&v.r, FS_C_AGF_LENGTH, "length", FS_U(aglen), FS_U(a.length),
				"length is not the AG size");

	if (a.flfirst >= g->agfl_size)
		fs_reporter_bad(&v.r, FS_C_AGF_FREELIST, "flfirst", FS_U(g->agfl_size - 1),
				FS_U(a.flfirst), "free list first index past the AGFL");
	if (a.fllast >= g->agfl_size)
		fs_reporter_bad(&v.r, FS_C_AGF_FREELIST, "fllast", FS_U(g->agfl_size - 1),
				FS_U(a.fllast), "free list last index past the AGFL");
	if (a.flcount > g->agfl_size)
		fs_reporter_bad(&v.r, FS_C_AGF_FREELIST, "flcount", FS_U(g->agfl_size),
				FS_U(a.flcount), "free list count larger than the AGFL");
	else if (a.flfirst < g->agfl_size && a.fllast < g->agfl_size && a.flcount &&
		 fs_agfl_active_count(g, &a) != a.flcount)
		fs_reporter_bad(&v.r, FS_C_AGF_FREELIST, "flcount",
				FS_U(fs_agfl_active_count(g, &a)), FS_U(a.flcount),
				"free list count does not match flfirst..fllast");

	if (a.freeblks > aglen)
		fs_reporter_bad(&v.r, FS_C_AGF_FREEBLKS, "freeblks", "<= AG length",
				FS_U(a.freeblks), "more free blocks than the AG holds");
	if (a.longest > a.freeblks)
		fs_reporter_bad(&v.r, FS_C_AGF_FREEBLKS, "longest", "<= freeblks", FS_U(a.longest),
				"longest free extent larger than all free space");
	if (a.freeblks && !a.longest)
		fs_reporter_bad(&v.r, FS_C_AGF_FREEBLKS, "longest", "> 0 when freeblks > 0",
				FS_U(a.longest), "free space present but no longest extent");

	check_level(&v, FS_C_AGF_LEVELS, "bnolevel", a.bno_level, g->alloc_maxlevels);
	check_level(&v, FS_C_AGF_LEVELS, "cntlevel", a.cnt_level, g->alloc_maxlevels);
	check_root(&v, FS_C_AGF_ROOT, "bnoroot", a.bno_root, aglen);
	check_root(&v, FS_C_AGF_ROOT, "cntroot", a.cnt_root, aglen);
	if (g->rmapbt) {
		check_level(&v, FS_C_AGF_LEVELS, "rmaplevel", a.rmap_level, g->rmap_maxlevels);
		check_root(&v, FS_C_AGF_ROOT, "rmaproot", a.rmap_root, aglen);
		if (a.rmap_blocks < 1 || a.rmap_blocks > aglen)
			fs_reporter_bad(&v.r, FS_C_AGF_BTREEBLKS, "rmapblocks", "1..AG length",
					FS_U(a.rmap_blocks), "rmap btree block count impossible");
	} else if (a.rmap_level || a.rmap_root || a.rmap_blocks) {
		fs_reporter_bad(&v.r, FS_C_AGF_ROOT, "rmaproot", "0 without rmapbt",
				FS_U(a.rmap_root),
				"rmap btree fields set on a filesystem without rmapbt");
	}
	if (g->reflink) {
		check_level(&v, FS_C_AGF_LEVELS, "refcntlevel", a.refc_level, g->refc_maxlevels);
		check_root(&v, FS_C_AGF_ROOT, "refcntroot", a.refc_root, aglen);
		if (a.refc_blocks < 1 || a.refc_blocks > aglen)
			fs_reporter_bad(&v.r, FS_C_AGF_BTREEBLKS, "refcntblocks", "1..AG length",
					FS_U(a.refc_blocks),
					"refcount btree block count impossible");
	} else if (a.refc_level || a.refc_root || a.refc_blocks) {
		fs_reporter_bad(&v.r, FS_C_AGF_ROOT, "refcntroot", "0 without reflink",
				FS_U(a.refc_root),
				"refcount btree fields set on a filesystem without reflink");
	}
	if (a.btreeblks > aglen)
		fs_reporter_bad(&v.r, FS_C_AGF_BTREEBLKS, "btreeblks", "<= AG length",
				FS_U(a.btreeblks), "btree block count larger than the AG");
	return v.r.n;
}

int fs_agi_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	struct agv v = agv_init(c, "AGI");
	uint32_t aglen = fs_ag_blocks(g, c->agno);
	uint64_t max_inodes = (uint64_t)aglen << g->inopblog;
	struct fs_agi a;

	if (len < sizeof(struct xfs_agi))
		return 0;
	fs_agi_decode(buf, &a);

	if (a.versionnum != XFS_AGI_VERSION)
		fs_reporter_bad(&v.r, FS_C_AGI_VERSION, "versionnum", FS_U(XFS_AGI_VERSION),
				FS_U(a.versionnum), "unknown version");
	if (a.seqno != c->agno)
		fs_reporter_bad(&v.r, FS_C_AGI_SEQNO, "seqno", FS_U(c->agno), FS_U(a.seqno),
				"sequence number is not the AG number");
	if (a.length != aglen)
		fs_reporter_bad(&v.r, FS_C_AGI_LENGTH, "length", FS_U(aglen), FS_U(a.length),
				"length is not the AG size");
	if (a.count > max_inodes)
		fs_reporter_bad(&v.r, FS_C_AGI_COUNT, "count", "<= inodes the AG can hold",
				FS_U(a.count), "more inodes than the AG can hold");
	if (a.freecount > a.count)
		fs_reporter_bad(&v.r, FS_C_AGI_COUNT, "freecount", "<= count", FS_U(a.freecount),
				"more free inodes than inodes");
	check_level(&v, FS_C_AGI_LEVELS, "level", a.level, g->inobt_maxlevels);
	check_root(&v, FS_C_AGI_ROOT, "root", a.root, aglen);
	if (g->finobt) {
		check_level(&v, FS_C_AGI_LEVELS, "free_level", a.free_level, g->inobt_maxlevels);
		check_root(&v, FS_C_AGI_ROOT, "free_root", a.free_root, aglen);
	} else if (a.free_level || a.free_root) {
		fs_reporter_bad(&v.r, FS_C_AGI_ROOT, "free_root", "0 without finobt",
				FS_U(a.free_root),
				"free inode btree fields set on a filesystem without finobt");
	}
	if (a.newino != NULLAGINO && !fs_agino_valid(g, c->agno, a.newino))
		fs_reporter_bad(&v.r, FS_C_AGI_NEWINO, "newino", "null or a valid AG inode",
				FS_U(a.newino), "newest inode number cannot exist in this AG");
	if (a.dirino != NULLAGINO)
		fs_reporter_bad(&v.r, FS_C_AGI_DIRINO, "dirino", "null", FS_U(a.dirino),
				"dirino is unused and must be null");
	for (int i = 0; i < XFS_AGI_UNLINKED_BUCKETS; i++) {
		if (a.unlinked[i] != NULLAGINO && !fs_agino_valid(g, c->agno, a.unlinked[i])) {
			char field[24];
			snprintf(field, sizeof(field), "unlinked[%d]", i);
			fs_reporter_bad(&v.r, FS_C_AGI_UNLINKED, field, "null or a valid AG inode",
					FS_U(a.unlinked[i]),
					"unlinked bucket points at an inode that cannot exist");
		}
	}
	if (g->inobtcount) {
		if (a.iblocks < 1 || a.iblocks > aglen)
			fs_reporter_bad(&v.r, FS_C_AGI_BLOCKS, "ino_blocks", "1..AG length",
					FS_U(a.iblocks), "inode btree block count impossible");
		if (g->finobt && (a.fblocks < 1 || a.fblocks > aglen))
			fs_reporter_bad(&v.r, FS_C_AGI_BLOCKS, "fino_blocks", "1..AG length",
					FS_U(a.fblocks), "free inode btree block count impossible");
	} else if (a.iblocks || a.fblocks) {
		fs_reporter_bad(&v.r, FS_C_AGI_BLOCKS, "ino_blocks", "0 without inobtcount",
				FS_U(a.iblocks),
				"inode btree block counters set without the inobtcount feature");
	}
	return v.r.n;
}

static const __be32 *agfl_slots(const void *buf)
{
	return (const __be32 *)((const char *)buf + sizeof(struct xfs_agfl));
}

int fs_agfl_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	const struct fs_geom *g = c->g;
	struct agv v = agv_init(c, "AGFL");
	const struct xfs_agfl *d = buf;
	const __be32 *slot = agfl_slots(buf);

	if (len < sizeof(struct xfs_agfl) + g->agfl_size * sizeof(__be32))
		return 0;
	if (be32(d->agfl_seqno) != c->agno)
		fs_reporter_bad(&v.r, FS_C_AGFL_SEQNO, "seqno", FS_U(c->agno),
				FS_U(be32(d->agfl_seqno)), "sequence number is not the AG number");
	for (uint32_t i = 0; i < g->agfl_size; i++) {
		uint32_t b = be32(slot[i]);
		if (b != NULLAGBLOCK && b >= g->agblocks) {
			char field[24];
			snprintf(field, sizeof(field), "bno[%u]", i);
			fs_reporter_bad(&v.r, FS_C_AGFL_BNO, field, "null or < agblocks", FS_U(b),
					"free list slot holds a block past the AG");
		}
	}
	return v.r.n;
}

int fs_agfl_check_active(const struct fs_vctx *c, const void *buf, const struct fs_agf *agf)
{
	const struct fs_geom *g = c->g;
	struct agv v = agv_init(c, "AGFL");
	const __be32 *slot = agfl_slots(buf);
	uint32_t aglen = fs_ag_blocks(g, c->agno);
	uint32_t n = fs_agfl_active_count(g, agf);
	uint32_t *seen;

	if (n == 0 || agf->flcount != n)
		return 0;	/* the AGF finding already says why nothing can be checked */
	seen = calloc(n, sizeof(*seen));
	if (!seen)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = fs_agfl_slot(g, agf, i);
		uint32_t b = be32(slot[s]);
		char field[24];

		snprintf(field, sizeof(field), "bno[%u]", s);
		if (b == NULLAGBLOCK || b >= aglen || b < g->ag_hdr_blocks) {
			fs_reporter_bad(&v.r, FS_C_AGFL_BNO, field,
					"a block of this AG past its headers", FS_U(b),
					"active free list slot does not hold a usable block");
			continue;
		}
		for (uint32_t j = 0; j < i; j++) {
			if (seen[j] == b) {
				fs_reporter_bad(&v.r, FS_C_AGFL_BNO, field, "each block once",
						FS_U(b), "block listed twice on the free list");
				break;
			}
		}
		seen[i] = b;
	}
	free(seen);
	return v.r.n;
}
