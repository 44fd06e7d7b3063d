// SPDX-License-Identifier: GPL-2.0
/*
 * Intents in the replay (EFI, RUI, CUI, BUI, ATTRI): each intent item is
 * parsed and kept, its done item (EFD, RUD, CUD, BUD, ATTRD) marks it
 * finished; after the passes the unfinished ones are checked as the
 * kernel's recovery checks them (xfs_*_item.c: extents inside one AG,
 * known types and flags, one mapping per BUI; ATTRIs by logattr.c's
 * rules), a bad one refused as corruption, and their extents handed to
 * the caller in log order (fs_replay_open_extents, fs_replay_open_attris).
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/log/logattr.h"
#include "libfs/util/vec.h"

static const char *const intent_names[FS_INTENT_NR] = { "EFI", "RUI", "CUI", "BUI", "ATTRI",
							"XMI", "ATTRI_PPTR" };

const char *fs_replay_intent_name(unsigned kind)
{
	return kind < FS_INTENT_NR ? intent_names[kind] : "?";
}

/* Room for n more intent extents. */
static struct fs_intent_ext *exts_add(struct fs_replay *rp, uint32_t n)
{
	if (rp->nexts + n > rp->capexts) {
		size_t cap = rp->capexts ? rp->capexts : 256;
		struct fs_intent_ext *v;

		while (cap < rp->nexts + n)
			cap *= 2;
		v = realloc(rp->exts, cap * sizeof(*v));
		if (!v)
			return NULL;
		rp->exts = v;
		rp->capexts = cap;
	}
	rp->nexts += n;
	return rp->exts + rp->nexts - n;
}

/*
 * An intent's payload: the header of its format and its array of n
 * records of rsize bytes each.  The kernel takes only the exact size for
 * the count it states (xfs_*_copy_format); an EFI may come in the 32-bit
 * layout (packed 12-byte records) as well as the 64-bit one.
 */
static int intent_records(struct fs_replay *rp, const struct fs_log_item *it, const char *name,
			  size_t hsize, size_t *rsize, uint32_t *n)
{
	uint32_t len = it->reg[0].len, cnt;

	if (len < hsize)
		return replay_fail(rp, -EUCLEAN, "%s log item of %u bytes, shorter than its header", name,
			    len);
	memcpy(&cnt, it->reg[0].p + 4, 4);
	if (!cnt || cnt > (len - hsize) / 12)
		return replay_fail(rp, -EUCLEAN, "%s log item of %u bytes states %u extents", name, len, cnt);
	if (it->type == XFS_LI_EFI && len == hsize + (size_t)cnt * sizeof(xfs_extent_32_t))
		*rsize = sizeof(xfs_extent_32_t);
	else if (len != hsize + (size_t)cnt * *rsize)
		return replay_fail(rp, -EUCLEAN, "%s log item of %u bytes states %u extents of %zu bytes",
			    name, len, cnt, *rsize);
	*n = cnt;
	return 0;
}

/*
 * An ATTRI, checked as the kernel checks it on sight, and kept (its name
 * and value copied out of the transaction, which the walk frees) in case
 * no done item follows: its index in rp->attris goes to ri->first.
 */
static int attri_keep(struct fs_replay *rp, const struct fs_log_item *it, struct rintent *ri)
{
	struct fs_log_attri a;
	unsigned char *copy;
	char why[200];
	int perr = fs_log_attri_parse(&rp->fs->g, it, &a, why, sizeof(why));

	if (perr)
		return replay_fail(rp, -EUCLEAN, "ATTRI log item (id %#llx): %s",
				   (unsigned long long)ri->id, why);
	if (FS_VEC_ROOM(rp->attris, rp->nattris, rp->capattris, 16))
		return -ENOMEM;
	copy = malloc(a.namelen + a.valuelen + a.newnamelen + (a.newvalue ? a.valuelen : 0));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, a.name, a.namelen);
	if (a.valuelen)
		memcpy(copy + a.namelen, a.value, a.valuelen);
	a.name = copy;
	a.value = a.valuelen ? copy + a.namelen : NULL;
	if (a.newnamelen) {
		unsigned char *nn = copy + a.namelen + a.valuelen;

		memcpy(nn, a.newname, a.newnamelen);
		memcpy(nn + a.newnamelen, a.newvalue, a.valuelen);
		a.newname = nn;
		a.newvalue = nn + a.newnamelen;
	}
	ri->first = (uint32_t)rp->nattris;
	rp->attris[rp->nattris++] = a;
	return 0;
}

/*
 * An XMI, as the kernel takes one on sight (xlog_recover_xmi_commit_pass2):
 * exactly a struct xfs_xmi_log_format, its pad word zero; kept as logged,
 * its index in rp->xmis to ri->first.  The rest of its checks wait until
 * it is known unfinished (replay_collect_open).
 */
static int xmi_keep(struct fs_replay *rp, const struct fs_log_item *it, struct rintent *ri)
{
	struct xfs_xmi_log_format f;

	if (it->reg[0].len != sizeof(f))
		return replay_fail(rp, -EUCLEAN, "XMI log item (id %#llx) of %u bytes; the kernel "
				   "takes exactly %zu", (unsigned long long)ri->id, it->reg[0].len,
				   sizeof(f));
	memcpy(&f, it->reg[0].p, sizeof(f));
	if (f.__pad)
		return replay_fail(rp, -EUCLEAN, "XMI log item (id %#llx) with pad word %#x; the "
				   "kernel takes only 0", (unsigned long long)ri->id, f.__pad);
	if (FS_VEC_ROOM(rp->xmis, rp->nxmis, rp->capxmis, 16))
		return -ENOMEM;
	ri->first = (uint32_t)rp->nxmis;
	rp->xmis[rp->nxmis++] = f;
	return 0;
}

/* Parse an intent item's extents (their checks wait until it is known unfinished). */
static int intent_parse(struct fs_replay *rp, const struct fs_log_item *it, int kind,
			struct rintent *ri)
{
	static const size_t hsize[FS_INTENT_NR] = {
		[FS_INTENT_EFI] = sizeof(struct xfs_efi_log_format),
		[FS_INTENT_RUI] = sizeof(struct xfs_rui_log_format),
		[FS_INTENT_CUI] = sizeof(struct xfs_cui_log_format),
		[FS_INTENT_BUI] = sizeof(struct xfs_bui_log_format),
	};
	size_t rsize = kind == FS_INTENT_EFI ? sizeof(xfs_extent_64_t) :
		       kind == FS_INTENT_CUI ? sizeof(struct xfs_phys_extent) :
		       sizeof(struct xfs_map_extent);
	const unsigned char *p;
	struct fs_intent_ext *x;
	uint32_t n = 0;
	int err;

	ri->first = (uint32_t)rp->nexts;
	ri->n = 0;
	if (kind == FS_INTENT_ATTRI)
		return attri_keep(rp, it, ri);
	if (kind == FS_INTENT_XMI)
		return xmi_keep(rp, it, ri);
	err = intent_records(rp, it, fs_replay_intent_name((unsigned)kind), hsize[kind], &rsize,
			     &n);
	if (err)
		return err;
	x = exts_add(rp, n);
	if (!x)
		return -ENOMEM;
	p = it->reg[0].p + hsize[kind];
	for (uint32_t i = 0; i < n; i++, p += rsize, x++) {
		memset(x, 0, sizeof(*x));
		x->kind = (uint8_t)kind;
		if (kind == FS_INTENT_EFI) {
			uint32_t len;

			memcpy(&x->fsb, p, 8);
			memcpy(&len, p + 8, 4);
			x->len = len;
		} else if (kind == FS_INTENT_CUI) {
			struct xfs_phys_extent pe;

			memcpy(&pe, p, sizeof(pe));
			x->fsb = pe.pe_startblock;
			x->len = pe.pe_len;
			x->type = pe.pe_flags & XFS_REFCOUNT_EXTENT_TYPE_MASK;
			x->flags = pe.pe_flags;
		} else {
			struct xfs_map_extent me;

			memcpy(&me, p, sizeof(me));
			x->fsb = me.me_startblock;
			x->len = me.me_len;
			x->owner = me.me_owner;
			x->startoff = me.me_startoff;
			x->type = me.me_flags & 0xff;
			x->flags = me.me_flags;
		}
	}
	ri->n = n;
	return 0;
}

/* Intents and done items all keep their id (or the intent's id) at byte 8. */
int replay_intent_item(struct fs_replay *rp, const struct fs_log_item *it, int kind, bool done)
{
	uint64_t id, key, *v;
	int err;

	if (it->reg[0].len < 16)
		return replay_fail(rp, -EUCLEAN, "an intent log item (type %#x) of %u bytes", it->type,
			    it->reg[0].len);
	memcpy(&id, it->reg[0].p + 8, 8);
	if (done && kind == FS_INTENT_XMI && it->reg[0].len != sizeof(struct xfs_xmd_log_format))
		return replay_fail(rp, -EUCLEAN, "XMD log item of %u bytes; the kernel takes exactly %zu",
				   it->reg[0].len, sizeof(struct xfs_xmd_log_format));
	/* ids are unique only per kind: key by both */
	key = id * FS_INTENT_NR + (uint64_t)kind;
	if (done) {
		v = u64map_find(&rp->intents, key);
		if (v && *v && *v != MAP_GONE) {
			rp->ints[*v - 1].done = true;
			*v = MAP_GONE;
			rp->st.intents_done++;
		}
		return 0;
	}
	if (rp->nints == rp->capints) {
		size_t cap = rp->capints ? rp->capints * 2 : 64;
		struct rintent *nv = realloc(rp->ints, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		rp->ints = nv;
		rp->capints = cap;
	}
	rp->ints[rp->nints] = (struct rintent){ .kind = (uint8_t)kind, .id = id };
	err = intent_parse(rp, it, kind, &rp->ints[rp->nints]);
	if (err)
		return err;
	rp->nints++;
	return u64map_put(&rp->intents, key, rp->nints);
}

/* A fsblock extent inside one AG of the filesystem (the kernel's xfs_verify_fsbext). */
static bool fsbext_ok(const struct fs_geom *g, uint64_t fsb, uint32_t len)
{
	fs_agnumber_t agno = fs_fsb_to_agno(g, fsb);
	fs_agblock_t agbno = fs_fsb_to_agbno(g, fsb);

	return len && fs_fsb_valid(g, fsb) && len <= fs_ag_blocks(g, agno) - agbno;
}

/* An unfinished intent's extent, checked as the kernel's recovery checks it. */
static bool intent_ext_ok(const struct fs_geom *g, const struct fs_intent_ext *x)
{
	if (!fsbext_ok(g, x->fsb, x->len))
		return false;
	switch (x->kind) {
	case FS_INTENT_EFI:
		return true;
	case FS_INTENT_CUI:
		/* the refcount intent types: increase, decrease, alloc CoW, free CoW */
		return !(x->flags & ~XFS_REFCOUNT_EXTENT_FLAGS) && x->type >= 1 && x->type <= 4;
	case FS_INTENT_RUI:
		if (x->flags & ~XFS_RMAP_EXTENT_FLAGS || x->type < XFS_RMAP_EXTENT_MAP ||
		    x->type > XFS_RMAP_EXTENT_FREE)
			return false;
		/* an inode owner names an inode and a file range; the others are the special ones */
		if (XFS_RMAP_NON_INODE_OWNER(x->owner))
			return true;
		return fs_ino_valid(g, x->owner) && x->startoff < x->startoff + x->len &&
		       x->startoff + x->len <= XFS_MAX_FILEOFF;
	case FS_INTENT_BUI:
		/* (one mapping per item, checked by the caller): map or unmap, of a real inode */
		return fs_ino_valid(g, x->owner) && !(x->flags & ~XFS_BMAP_EXTENT_FLAGS) &&
		       (x->type == 1 || x->type == 2) && x->startoff < x->startoff + x->len &&
		       x->startoff + x->len <= XFS_MAX_FILEOFF;
	default:
		return false;
	}
}

/* The unfinished intents, checked; their extents in log order. */
int replay_collect_open(struct fs_replay *rp)
{
	const struct fs_geom *g = &rp->fs->g;
	size_t n = 0, na = 0;

	for (size_t i = 0; i < rp->nints; i++)
		if (!rp->ints[i].done) {
			n += rp->ints[i].n;
			na += rp->ints[i].kind == FS_INTENT_ATTRI;
		}
	rp->open = malloc((n ? n : 1) * sizeof(*rp->open));
	rp->open_attris = malloc((na ? na : 1) * sizeof(*rp->open_attris));
	rp->open_pptrs = malloc((na ? na : 1) * sizeof(*rp->open_pptrs));
	rp->open_xmis = malloc((rp->nxmis ? rp->nxmis : 1) * sizeof(*rp->open_xmis));
	if (!rp->open || !rp->open_attris || !rp->open_pptrs || !rp->open_xmis)
		return -ENOMEM;
	for (size_t i = 0; i < rp->nints; i++) {
		const struct rintent *ri = &rp->ints[i];

		if (ri->done)
			continue;
		if (ri->kind == FS_INTENT_ATTRI && fs_log_attri_is_pptr(&rp->attris[ri->first])) {
			rp->st.intents_open[FS_INTENT_PPTR]++;
			rp->open_pptrs[rp->nopen_pptrs++] = rp->attris[ri->first];
			continue;
		}
		rp->st.intents_open[ri->kind]++;
		if (ri->kind == FS_INTENT_ATTRI)
			rp->open_attris[rp->nopen_attris++] = rp->attris[ri->first];
		if (ri->kind == FS_INTENT_XMI) {
			const struct xfs_xmi_log_format *f = &rp->xmis[ri->first];
			const char *bad = NULL;

			/* xfs_xmi_validate */
			if (!g->exchrange)
				bad = "on a filesystem without exchange-range";
			else if (f->xmi_flags & ~XFS_EXCHMAPS_LOGGED_FLAGS)
				bad = "with unknown flags";
			else if (!fs_ino_valid(g, f->xmi_inode1) || !fs_ino_valid(g, f->xmi_inode2))
				bad = "naming an inode outside the filesystem";
			else if (!f->xmi_blockcount ||
				 f->xmi_startoff1 + f->xmi_blockcount <= f->xmi_startoff1 ||
				 f->xmi_startoff1 + f->xmi_blockcount > XFS_MAX_FILEOFF ||
				 f->xmi_startoff2 + f->xmi_blockcount <= f->xmi_startoff2 ||
				 f->xmi_startoff2 + f->xmi_blockcount > XFS_MAX_FILEOFF)
				bad = "whose file ranges do not fit a file";
			/*
			 * The sizes SET_SIZES logs are the files' (xfs_exchmaps_init_intent);
			 * recovery works them out again, yet a 6.18 kernel refuses a
			 * negative one (-1 is what is logged without SET_SIZES)
			 */
			else if ((f->xmi_flags & XFS_EXCHMAPS_SET_SIZES) &&
				 (f->xmi_isize1 < 0 || f->xmi_isize2 < 0))
				bad = "that sets a file's size to a negative one";
			if (bad)
				return replay_fail(rp, -EUCLEAN, "an unfinished XMI log item (id %#llx: "
						   "inodes %llu and %llu, file blocks %llu and %llu + "
						   "%llu, flags %#llx) %s; the kernel's recovery refuses it "
						   "as corruption", (unsigned long long)ri->id,
						   (unsigned long long)f->xmi_inode1,
						   (unsigned long long)f->xmi_inode2,
						   (unsigned long long)f->xmi_startoff1,
						   (unsigned long long)f->xmi_startoff2,
						   (unsigned long long)f->xmi_blockcount,
						   (unsigned long long)f->xmi_flags, bad);
			rp->open_xmis[rp->nopen_xmis++] = *f;
		}
		if (ri->kind == FS_INTENT_BUI && ri->n != 1)
			return replay_fail(rp, -EUCLEAN, "an unfinished BUI log item (id %#llx) holds %u "
				    "mappings; the kernel takes exactly one", (unsigned long long)ri->id,
				    ri->n);
		for (uint32_t k = 0; k < ri->n; k++) {
			struct fs_intent_ext *x = &rp->open[rp->nopen++];

			*x = rp->exts[ri->first + k];
			if (!intent_ext_ok(g, x))
				return replay_fail(rp, -EUCLEAN, "an unfinished %s log item (id %#llx) names "
					    "%u blocks at fsblock %llu (flags %#x) that do not fit the "
					    "filesystem; the kernel's recovery refuses it as corruption",
					    fs_replay_intent_name(ri->kind), (unsigned long long)ri->id,
					    x->len, (unsigned long long)x->fsb, x->flags);
			x->agno = fs_fsb_to_agno(g, x->fsb);
			x->agbno = fs_fsb_to_agbno(g, x->fsb);
		}
	}
	return 0;
}

size_t fs_replay_open_extents(const struct fs_replay *rp, const struct fs_intent_ext **out)
{
	*out = rp->open;
	return rp->nopen;
}

size_t fs_replay_open_attris(const struct fs_replay *rp, const struct fs_log_attri **out)
{
	*out = rp->open_attris;
	return rp->nopen_attris;
}
