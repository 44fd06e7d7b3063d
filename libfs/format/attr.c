// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attribute formats of v5 filesystems: decoding and field rules of
 * the short form (inline in the attr fork), attr3 leaf blocks and remote
 * value blocks.  Every offset, length and count read from disk is bounded
 * by the buffer before use; the verifier table (verify.c) runs the common
 * magic/CRC/UUID/LSN checks and then these field rules.
 */
#include "libfs/format/attr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libfs/format/endian.h"
#include "libfs/format/pptr.h"

#define LEAF_HDR_SIZE  sizeof(struct xfs_attr3_leaf_hdr)
#define LEAF_ENT_SIZE  sizeof(struct xfs_attr_leaf_entry)
#define RMT_HDR_SIZE   sizeof(struct xfs_attr3_rmt_hdr)
#define SF_HDR_SIZE    sizeof(struct xfs_attr_sf_hdr)
#define SF_ENT_SIZE    offsetof(struct xfs_attr_sf_entry, nameval)
/* fixed parts of the name structures, before their name bytes */
#define LOCAL_FIXED    offsetof(struct xfs_attr_leaf_name_local, nameval)
#define REMOTE_FIXED   offsetof(struct xfs_attr_leaf_name_remote, name)
#define MAX_BLKSIZE    65536u

static uint32_t align4(uint32_t v)
{
	return (v + XFS_ATTR_LEAF_NAME_ALIGN - 1) & ~(XFS_ATTR_LEAF_NAME_ALIGN - 1);
}

/*
 * The kernel sizes name structures from the structs' sizeof less their one
 * declared name byte: for the remote struct that keeps its tail padding
 * (sizeof 12, name at 9), so a remote entry is larger than its bytes.
 */
uint32_t fs_attr_entsize_local(uint32_t namelen, uint32_t valuelen)
{
	return align4(sizeof(struct xfs_attr_leaf_name_local) - 1 + namelen + valuelen);
}

uint32_t fs_attr_entsize_remote(uint32_t namelen)
{
	return align4(sizeof(struct xfs_attr_leaf_name_remote) - 1 + namelen);
}

uint32_t fs_attr_rmt_blocks(const struct fs_geom *g, uint32_t len)
{
	uint32_t space = g->blocksize - RMT_HDR_SIZE;

	return (uint32_t)(((uint64_t)len + space - 1) / space);
}

void fs_attr_leaf_hdr_decode(const void *buf, size_t blksize, struct fs_attr_leaf_hdr *h)
{
	const struct xfs_attr3_leaf_hdr *d = buf;

	memset(h, 0, sizeof(*h));
	h->forw = be32(d->info.hdr.forw);
	h->back = be32(d->info.hdr.back);
	h->magic = be16(d->info.hdr.magic);
	h->blkno = be64(d->info.blkno);
	h->owner = be64(d->info.owner);
	h->lsn = be64(d->info.lsn);
	h->count = be16(d->count);
	h->usedbytes = be16(d->usedbytes);
	h->firstused = be16(d->firstused);
	/* 0 stands for the block size only where that does not fit 16 bits */
	if (h->firstused == XFS_ATTR3_LEAF_NULLOFF && blksize > 0xffff)
		h->firstused = (uint32_t)blksize;
	h->holes = d->holes;
	for (int i = 0; i < XFS_ATTR_LEAF_MAPSIZE; i++) {
		h->freebase[i] = be16(d->freemap[i].base);
		h->freesize[i] = be16(d->freemap[i].size);
	}
}

bool fs_attr_leaf_entry(const void *buf, size_t blksize, const struct fs_attr_leaf_hdr *h,
			uint32_t idx, struct fs_attr_ent *e)
{
	const uint8_t *p = buf;
	size_t eoff = LEAF_HDR_SIZE + (size_t)idx * LEAF_ENT_SIZE;
	const struct xfs_attr_leaf_entry *d;
	const uint8_t *n;

	(void)h;
	memset(e, 0, sizeof(*e));
	if (eoff + LEAF_ENT_SIZE > blksize)
		return false;
	d = (const void *)(p + eoff);
	e->hash = be32(d->hashval);
	e->nameidx = be16(d->nameidx);
	e->flags = d->flags;
	e->local = d->flags & XFS_ATTR_LOCAL;
	n = p + e->nameidx;
	if (e->local) {
		if ((size_t)e->nameidx + LOCAL_FIXED > blksize)
			return false;
		e->valuelen = get_be16(n);
		e->namelen = n[offsetof(struct xfs_attr_leaf_name_local, namelen)];
		e->name = n + LOCAL_FIXED;
		e->value = e->name + e->namelen;
		e->entsize = fs_attr_entsize_local(e->namelen, e->valuelen);
	} else {
		if ((size_t)e->nameidx + REMOTE_FIXED > blksize)
			return false;
		e->valueblk = get_be32(n);
		e->valuelen = get_be32(n + offsetof(struct xfs_attr_leaf_name_remote, valuelen));
		e->namelen = n[offsetof(struct xfs_attr_leaf_name_remote, namelen)];
		e->name = n + REMOTE_FIXED;
		e->entsize = fs_attr_entsize_remote(e->namelen);
	}
	return (size_t)e->nameidx + e->entsize <= blksize;
}

/* Every finding here is about an attr fork. */
static struct fs_reporter attr_reporter(const struct fs_vctx *c)
{
	struct fs_reporter r = fs_vctx_reporter(c);

	r.fork = FS_FORK_ATTR;
	return r;
}

/*
 * The namespace bits an entry may carry: the parent namespace only where
 * the filesystem has parent pointers (elsewhere the kernel and xfs_repair
 * call it invalid), whatever the installed headers' mask says.
 */
static uint8_t ns_mask(const struct fs_geom *g)
{
	return (uint8_t)((XFS_ATTR_NSP_ONDISK_MASK & ~XFS_ATTR_PARENT) |
			 (g && g->parent ? XFS_ATTR_PARENT : 0));
}

static bool one_namespace(uint8_t flags)
{
	uint8_t ns = flags & (XFS_ATTR_NSP_ONDISK_MASK | XFS_ATTR_PARENT);

	return (ns & (ns - 1)) == 0;
}

/* A parent pointer entry (on a parent pointer filesystem) judged; true when it passes. */
static bool pptr_ok(struct fs_reporter *v, const struct fs_geom *g, const struct fs_attr_ent *e,
		    const char *fld, const char *where, uint32_t i)
{
	struct fs_pptr p;

	switch (fs_pptr_decode(g, e, &p)) {
	case FS_PPTR_OK:
		return true;
	case FS_PPTR_NAME:
		fs_reporter_bad(v, FS_C_PPTR_NAME, fld, "a directory entry name", FS_U(e->namelen),
				"%s entry %u is a parent pointer whose name is empty, holds a '/' or "
				"NUL, or is incomplete", where, i);
		return false;
	case FS_PPTR_VALUE:
		fs_reporter_bad(v, FS_C_PPTR_VALUE, fld, "a local 12-byte value",
				e->local ? FS_U(e->valuelen) : "remote",
				"%s entry %u is a parent pointer whose value is not a parent record",
				where, i);
		return false;
	case FS_PPTR_INO:
		fs_reporter_bad(v, FS_C_PPTR_VALUE, fld, "a directory inode number", FS_U(p.parent),
				"%s entry %u is a parent pointer naming inode %llu, which cannot exist",
				where, i, (unsigned long long)p.parent);
		return false;
	}
	return false;
}

/* Mark [start, end) used; false when any byte of it already was. */
static bool claim(uint8_t *used, uint32_t start, uint32_t end)
{
	bool clash = false;
	uint32_t b = start;

	/* bit by bit to a byte boundary, then whole bytes: entries are 4-byte aligned */
	for (; b < end && (b & 7); b++) {
		clash |= (used[b >> 3] >> (b & 7)) & 1;
		used[b >> 3] |= (uint8_t)(1u << (b & 7));
	}
	for (; b + 8 <= end; b += 8) {
		clash |= used[b >> 3] != 0;
		used[b >> 3] = 0xff;
	}
	for (; b < end; b++) {
		clash |= (used[b >> 3] >> (b & 7)) & 1;
		used[b >> 3] |= (uint8_t)(1u << (b & 7));
	}
	return !clash;
}

/* "freemap[i]", likewise */
static const char *mapf(char buf[24], int i)
{
	snprintf(buf, 24, "freemap[%d]", i);
	return buf;
}

/* "list[i]" of a short form entry, likewise */
static const char *listf(char buf[24], uint32_t i)
{
	snprintf(buf, 24, "list[%u]", i);
	return buf;
}

/* "entries[i]": a field name built only for a finding (not per entry: the hot path) */
static const char *entf(char buf[32], uint32_t i)
{
	snprintf(buf, 32, "entries[%u]", i);
	return buf;
}

int fs_attr_leaf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	struct fs_reporter v = attr_reporter(c);
	struct fs_attr_leaf_hdr h;
	uint8_t used[MAX_BLKSIZE / 8];
	uint32_t blksize, maxcount, count, firstused_bound, last_hash = 0, firstb, usedbs = 0;
	bool all_decoded = true;

	if (len < LEAF_HDR_SIZE)
		return 0;	/* the common checks said the buffer is short */
	blksize = len > MAX_BLKSIZE ? MAX_BLKSIZE : (uint32_t)len;
	fs_attr_leaf_hdr_decode(buf, blksize, &h);

	if (c->ino && h.owner != c->ino)
		fs_reporter_bad(&v, FS_C_ATTR_OWNER, "owner", FS_U(c->ino), FS_U(h.owner),
				"attr leaf block belongs to another inode");
	if (h.blkno != c->daddr)
		fs_reporter_bad(&v, FS_C_ATTR_BLKNO, "blkno", FS_U(c->daddr), FS_U(h.blkno),
				"attr leaf block says it lives at another address");

	firstused_bound = h.firstused;
	if (h.firstused > blksize || h.firstused < LEAF_HDR_SIZE) {
		fs_reporter_bad(&v, FS_C_ATTR_FIRSTUSED, "firstused",
				"between the header and the block end", FS_U(h.firstused),
				"attr leaf first used byte is outside the name area");
		firstused_bound = LEAF_HDR_SIZE;
	}
	maxcount = (blksize - LEAF_HDR_SIZE) / LEAF_ENT_SIZE;
	count = h.count;
	if (LEAF_HDR_SIZE + (size_t)h.count * LEAF_ENT_SIZE >
	    (h.firstused > blksize || h.firstused < LEAF_HDR_SIZE ? blksize : h.firstused)) {
		fs_reporter_bad(&v, FS_C_ATTR_COUNT, "count",
				"entries that end before the name area", FS_U(h.count),
				"attr leaf entry table runs into the name area");
		if (count > maxcount)
			count = maxcount;
		all_decoded = false;
	}

	memset(used, 0, (blksize + 7) / 8);
	claim(used, 0, LEAF_HDR_SIZE + count * LEAF_ENT_SIZE);
	firstb = blksize;
	for (uint32_t i = 0; i < count; i++) {
		struct fs_attr_ent e;
		bool fits = fs_attr_leaf_entry(buf, blksize, &h, i, &e);
		char f[32];

		if (e.hash < last_hash)
			fs_reporter_bad(&v, FS_C_ATTR_ORDER, entf(f, i),
					"hash at least the previous entry's", FS_X(e.hash),
					"attr leaf entry %u is out of hash order", i);
		last_hash = e.hash;
		if (e.nameidx < firstused_bound || e.nameidx >= blksize) {
			fs_reporter_bad(&v, FS_C_ATTR_NAMEIDX, entf(f, i), "inside the name area",
					FS_U(e.nameidx),
					"attr leaf entry %u name offset is outside the name area",
					i);
			all_decoded = false;
			continue;
		}
		if (!fits) {
			fs_reporter_bad(&v, FS_C_ATTR_ENTRY, entf(f, i), "inside the block",
					FS_U(e.nameidx + e.entsize),
					"attr leaf entry %u name/value runs past the block end", i);
			all_decoded = false;
			continue;
		}
		if (e.flags & ~(XFS_ATTR_LOCAL | ns_mask(c->g) | XFS_ATTR_INCOMPLETE) ||
		    !one_namespace(e.flags))
			fs_reporter_bad(&v, FS_C_ATTR_FLAGS, entf(f, i),
					"LOCAL/INCOMPLETE and one namespace", FS_X(e.flags),
					"attr leaf entry %u has invalid flags", i);
		if (e.flags & XFS_ATTR_INCOMPLETE)
			fs_reporter_bad(&v, FS_C_ATTR_INCOMPLETE, entf(f, i), "complete",
					"INCOMPLETE",
					"attr leaf entry %u is marked incomplete (interrupted set/remove)",
					i);
		if ((e.flags & ns_mask(c->g) & XFS_ATTR_PARENT) && one_namespace(e.flags))
			pptr_ok(&v, c->g, &e, entf(f, i), "attr leaf", i);
		else if (e.namelen == 0 || memchr(e.name, 0, e.namelen))
			fs_reporter_bad(&v, FS_C_ATTR_NAME, entf(f, i), "a name without NUL",
					FS_U(e.namelen),
					"attr leaf entry %u has an empty name or a NUL inside it",
					i);
		if (!e.local && e.valueblk == 0 && !(e.flags & XFS_ATTR_INCOMPLETE))
			fs_reporter_bad(&v, FS_C_ATTR_REMOTE, entf(f, i), "a value block", "0",
					"attr leaf entry %u has a remote value at block 0", i);
		if (!e.local && e.valuelen > XFS_XATTR_SIZE_MAX)
			fs_reporter_bad(&v, FS_C_ATTR_REMOTE, entf(f, i), FS_U(XFS_XATTR_SIZE_MAX),
					FS_U(e.valuelen),
					"attr leaf entry %u remote value is larger than a value can be",
					i);
		if (!claim(used, e.nameidx, e.nameidx + e.entsize))
			fs_reporter_bad(&v, FS_C_ATTR_OVERLAP, entf(f, i),
					"bytes no other entry uses", FS_U(e.nameidx),
					"attr leaf entry %u name/value overlaps another entry or the table",
					i);
		usedbs += e.entsize;
		if (e.nameidx < firstb)
			firstb = e.nameidx;
	}
	/* as xfs_repair: with no holes firstused is exact, and never past a name */
	if (all_decoded && firstused_bound == h.firstused &&
	    ((h.holes == 0 && firstb != h.firstused) || h.firstused > firstb))
		fs_reporter_bad(&v, FS_C_ATTR_FIRSTUSED, "firstused", FS_U(firstb),
				FS_U(h.firstused),
				"attr leaf first used byte disagrees with its entries");
	if (all_decoded && usedbs != h.usedbytes)
		fs_reporter_bad(&v, FS_C_ATTR_USEDBYTES, "usedbytes", FS_U(usedbs),
				FS_U(h.usedbytes),
				"attr leaf used byte count disagrees with its entries");
	for (int i = 0; i < XFS_ATTR_LEAF_MAPSIZE; i++) {
		uint32_t base = h.freebase[i], size = h.freesize[i];
		char fld[24];

		if ((base & 3) || (size & 3) || base > blksize || size > blksize ||
		    base + size > blksize)
			fs_reporter_bad(&v, FS_C_ATTR_FREEMAP,
					mapf(fld, i),
					"4-byte aligned, inside the block", FS_U(base),
					"attr leaf free map region %d (base %u size %u) is invalid",
					i, base, size);
	}
	return v.n;
}

int fs_attr_leaf_verify_hashes(const struct fs_vctx *c, const void *buf, size_t len,
			       fs_attr_hash_fn hashfn)
{
	struct fs_reporter v = attr_reporter(c);
	struct fs_attr_leaf_hdr h;
	uint32_t blksize, count;

	if (len < LEAF_HDR_SIZE || !hashfn)
		return 0;
	blksize = len > MAX_BLKSIZE ? MAX_BLKSIZE : (uint32_t)len;
	fs_attr_leaf_hdr_decode(buf, blksize, &h);
	count = h.count;
	if (count > (blksize - LEAF_HDR_SIZE) / LEAF_ENT_SIZE)
		count = (blksize - LEAF_HDR_SIZE) / LEAF_ENT_SIZE;
	for (uint32_t i = 0; i < count; i++) {
		struct fs_attr_ent e;
		uint32_t want;
		char fld[32];

		if (!fs_attr_leaf_entry(buf, blksize, &h, i, &e) || e.nameidx < LEAF_HDR_SIZE ||
		    e.namelen == 0)
			continue;	/* the field rules report these */
		if (e.flags & ns_mask(c->g) & XFS_ATTR_PARENT) {
			/* a parent pointer's hash mixes in its value: judged when that is one */
			if (!e.local || e.valuelen != sizeof(struct xfs_parent_rec))
				continue;	/* pptr.value: the field rules report it */
			want = fs_attr_ent_hashval(c->g, &e);
			if (want == e.hash)
				continue;
			snprintf(fld, sizeof(fld), "entries[%u].hashval", i);
			fs_reporter_bad(&v, FS_C_PPTR_HASH, fld, FS_X(want), FS_X(e.hash),
					"attr leaf entry %u is a parent pointer whose hash does not "
					"match its name and parent", i);
			continue;
		}
		want = hashfn(e.name, e.namelen);
		if (want == e.hash)
			continue;
		snprintf(fld, sizeof(fld), "entries[%u].hashval", i);
		fs_reporter_bad(&v, FS_C_ATTR_HASH, fld, FS_X(want), FS_X(e.hash),
				"attr leaf entry %u hash does not match its name", i);
	}
	return v.n;
}

int fs_attr_sf_verify(const struct fs_vctx *c, const void *fork, size_t forksize,
		      fs_attr_ent_fn cb, void *priv)
{
	const uint8_t *p = fork;
	struct fs_reporter v = attr_reporter(c);
	uint32_t totsize, count, off;

	if (forksize < SF_HDR_SIZE) {
		fs_reporter_bad(&v, FS_C_ATTR_SF_SIZE, "totsize", "a fork holding the header",
				FS_U(forksize), "short form attr fork is smaller than its header");
		return v.n;
	}
	totsize = get_be16(p + offsetof(struct xfs_attr_sf_hdr, totsize));
	count = p[offsetof(struct xfs_attr_sf_hdr, count)];
	if (totsize < SF_HDR_SIZE || totsize > forksize) {
		fs_reporter_bad(&v, FS_C_ATTR_SF_SIZE, "hdr.totsize", FS_U(forksize), FS_U(totsize),
				"short form attr size is outside the attr fork");
		return v.n;
	}
	off = SF_HDR_SIZE;
	for (uint32_t i = 0; i < count; i++) {
		struct fs_attr_ent e = { 0 };
		uint32_t next;
		char fld[24];

		/* the fixed part and at least one name byte must fit */
		if (off + SF_ENT_SIZE >= totsize) {
			fs_reporter_bad(&v, FS_C_ATTR_SF_ENTRY, listf(fld, i), FS_U(count), FS_U(i),
					"short form attr entry %u starts past the end (count too large)",
					i);
			return v.n;
		}
		e.namelen = p[off + offsetof(struct xfs_attr_sf_entry, namelen)];
		e.valuelen = p[off + offsetof(struct xfs_attr_sf_entry, valuelen)];
		e.flags = p[off + offsetof(struct xfs_attr_sf_entry, flags)];
		e.local = true;
		e.name = p + off + SF_ENT_SIZE;
		e.value = e.name + e.namelen;
		next = off + SF_ENT_SIZE + e.namelen + e.valuelen;
		if (next > totsize) {
			fs_reporter_bad(&v, FS_C_ATTR_SF_ENTRY, listf(fld, i), FS_U(totsize), FS_U(next),
					"short form attr entry %u runs past the end", i);
			return v.n;
		}
		if (e.namelen == 0 || memchr(e.name, 0, e.namelen))
			fs_reporter_bad(&v, FS_C_ATTR_SF_NAME, listf(fld, i), "a name without NUL",
					FS_U(e.namelen),
					"short form attr entry %u has an empty name or a NUL inside it",
					i);
		else if ((e.flags & ~ns_mask(c->g)) || !one_namespace(e.flags))
			fs_reporter_bad(&v, FS_C_ATTR_SF_FLAGS, listf(fld, i),
					"one namespace flag at most", FS_X(e.flags),
					"short form attr entry %u has invalid flags", i);
		else if (fs_attr_is_pptr(&e) &&
			 !pptr_ok(&v, c->g, &e, listf(fld, i), "short form attr", i))
			;
		else if (cb)
			cb(priv, &e);
		off = next;
	}
	if (off != totsize)
		fs_reporter_bad(&v, FS_C_ATTR_SF_SIZE, "hdr.totsize", FS_U(off), FS_U(totsize),
				"short form attr size is not where its %u entries end", count);
	return v.n;
}

void fs_attr_rmt_hdr_decode(const void *buf, struct fs_attr_rmt_hdr *h)
{
	const struct xfs_attr3_rmt_hdr *d = buf;

	h->offset = be32(d->rm_offset);
	h->bytes = be32(d->rm_bytes);
	h->owner = be64(d->rm_owner);
	h->blkno = be64(d->rm_blkno);
	h->lsn = be64(d->rm_lsn);
}

int fs_attr_rmt_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	struct fs_reporter v = attr_reporter(c);
	struct fs_attr_rmt_hdr h;

	if (len < RMT_HDR_SIZE)
		return 0;
	fs_attr_rmt_hdr_decode(buf, &h);
	if (h.owner == 0 || (c->ino && h.owner != c->ino))
		fs_reporter_bad(&v, FS_C_ATTRRMT_OWNER, "rm_owner", FS_U(c->ino), FS_U(h.owner),
				"remote attr value block belongs to another inode");
	if (h.blkno != c->daddr)
		fs_reporter_bad(&v, FS_C_ATTRRMT_BLKNO, "rm_blkno", FS_U(c->daddr), FS_U(h.blkno),
				"remote attr value block says it lives at another address");
	if (h.bytes > len - RMT_HDR_SIZE)
		fs_reporter_bad(&v, FS_C_ATTRRMT_BYTES, "rm_bytes", FS_U(len - RMT_HDR_SIZE),
				FS_U(h.bytes), "remote attr value block holds more bytes than fit");
	/* values are written unlogged, stamped NULLCOMMITLSN (-1); else as any block */
	if (h.lsn != (uint64_t)-1 && !fs_lsn_ok(c, h.lsn)) {
		char found[40];

		snprintf(found, sizeof(found), "%u/%u", fs_lsn_cycle(h.lsn), fs_lsn_block(h.lsn));
		fs_reporter_bad(&v, FS_C_ATTRRMT_LSN, "rm_lsn", "-1 or inside the log", found,
				"remote attr value block LSN is beyond the log");
	}
	if ((uint64_t)h.offset + h.bytes > XFS_XATTR_SIZE_MAX)
		fs_reporter_bad(&v, FS_C_ATTRRMT_OFFSET, "rm_offset", FS_U(XFS_XATTR_SIZE_MAX),
				FS_U((uint64_t)h.offset + h.bytes),
				"remote attr value block ends past the largest value");
	return v.n;
}
