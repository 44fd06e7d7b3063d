// SPDX-License-Identifier: GPL-2.0
/*
 * The "da" btree pieces shared by directories and xattrs: the name hash
 * (plain and ascii-ci) and the v5 DA3 node block (decode, field rules for
 * the verifier table, child-pointer range rules).  Dir and attr leaf
 * formats live in dir.c and attr.c.
 */
#include "libfs/format/da.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libfs/format/endian.h"

static inline uint32_t rol32(uint32_t v, unsigned s)
{
	return s ? (v << s) | (v >> (32 - s)) : v;
}

/* Four bytes at a time, each group folded over the hash rotated by 28 bits. */
uint32_t fs_da_hashname(const unsigned char *name, size_t len)
{
	uint32_t h = 0;

	while (len >= 4) {
		h = ((uint32_t)name[0] << 21) ^ ((uint32_t)name[1] << 14) ^
		    ((uint32_t)name[2] << 7) ^ name[3] ^ rol32(h, 28);
		name += 4;
		len -= 4;
	}
	switch (len) {
	case 3:
		return ((uint32_t)name[0] << 14) ^ ((uint32_t)name[1] << 7) ^ name[2] ^ rol32(h, 21);
	case 2:
		return ((uint32_t)name[0] << 7) ^ name[1] ^ rol32(h, 14);
	case 1:
		return name[0] ^ rol32(h, 7);
	default:
		return h;
	}
}

/* ascii-ci folds A-Z and the latin-1 capitals (not 0xd7, the multiplication sign). */
static unsigned char ci_fold(unsigned char c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7))
		return c + ('a' - 'A');
	return c;
}

uint32_t fs_da_hashname_ci(const unsigned char *name, size_t len)
{
	uint32_t h = 0;

	for (size_t i = 0; i < len; i++)
		h = ci_fold(name[i]) ^ rol32(h, 7);
	return h;
}

uint32_t fs_dir_hashname(const struct fs_geom *g, const unsigned char *name, size_t len)
{
	return g->asciici ? fs_da_hashname_ci(name, len) : fs_da_hashname(name, len);
}

#define NODE_HDR sizeof(struct xfs_da3_node_hdr)

uint32_t fs_da3_node_maxents(size_t len)
{
	return len > NODE_HDR ? (uint32_t)((len - NODE_HDR) / sizeof(struct xfs_da_node_entry)) : 0;
}

int fs_da3_node_decode(const void *buf, size_t len, struct fs_da_node *out)
{
	const struct xfs_da3_node_hdr *h = buf;

	memset(out, 0, sizeof(*out));
	if (len < NODE_HDR)
		return -EINVAL;
	out->forw = be32(h->info.hdr.forw);
	out->back = be32(h->info.hdr.back);
	out->magic = be16(h->info.hdr.magic);
	out->count = be16(h->__count);
	out->level = be16(h->__level);
	out->blkno = be64(h->info.blkno);
	out->owner = be64(h->info.owner);
	out->lsn = be64(h->info.lsn);
	if (out->magic != XFS_DA3_NODE_MAGIC || out->count > fs_da3_node_maxents(len))
		return -EINVAL;
	out->ents = (const struct xfs_da_node_entry *)((const unsigned char *)buf + NODE_HDR);
	return 0;
}

uint32_t fs_da_node_hash(const struct fs_da_node *n, uint32_t i)
{
	return get_be32(&n->ents[i].hashval);
}

uint32_t fs_da_node_before(const struct fs_da_node *n, uint32_t i)
{
	return get_be32(&n->ents[i].before);
}

static int64_t obj_ino(const struct fs_vctx *c)
{
	return c->ino ? (int64_t)c->ino : FS_NONE;
}

int fs_da3_node_verify_fields(const struct fs_vctx *c, const void *buf, size_t len)
{
	struct fs_da_node n;
	int64_t ino = obj_ino(c);
	uint32_t max = fs_da3_node_maxents(len);
	int bad = 0;

	if (len < NODE_HDR)
		return 0;	/* the magic check already said "short buffer" */
	fs_da3_node_decode(buf, len, &n);
	if (c->ino && n.owner != c->ino) {
		fs_report(c->fl, FS_C_DA_OWNER, c->agno, c->daddr, ino, "info.owner", FS_U(c->ino),
			  FS_U(n.owner), "DA node block belongs to inode %llu, not %llu",
			  (unsigned long long)n.owner, (unsigned long long)c->ino);
		bad++;
	}
	if (n.blkno != c->daddr) {
		fs_report(c->fl, FS_C_DA_BLKNO, c->agno, c->daddr, ino, "info.blkno", FS_U(c->daddr),
			  FS_U(n.blkno), "DA node block says it lives at daddr %llu",
			  (unsigned long long)n.blkno);
		bad++;
	}
	/* leaves are level 0 and have their own magic (the kernel's bound on the rest) */
	if (n.level == 0 || n.level > XFS_DA_NODE_MAXDEPTH) {
		char exp[16];

		snprintf(exp, sizeof(exp), "1..%d", XFS_DA_NODE_MAXDEPTH);
		fs_report(c->fl, FS_C_DA_LEVEL, c->agno, c->daddr, ino, "hdr.level", exp, FS_U(n.level),
			  "DA node level %u is impossible", n.level);
		bad++;
	}
	if (n.count == 0 || n.count > max) {
		char exp[32];

		snprintf(exp, sizeof(exp), "1..%u", max);
		fs_report(c->fl, FS_C_DA_COUNT, c->agno, c->daddr, ino, "hdr.count", exp, FS_U(n.count),
			  "DA node entry count %u does not fit the block", n.count);
		return bad + 1;	/* the entries cannot be read */
	}
	n.ents = (const struct xfs_da_node_entry *)((const unsigned char *)buf + NODE_HDR);
	for (uint32_t i = 1; i < n.count; i++) {
		uint32_t prev = fs_da_node_hash(&n, i - 1), cur = fs_da_node_hash(&n, i);

		if (cur < prev) {
			char field[48];

			snprintf(field, sizeof(field), "btree[%u].hashval", i);
			fs_report(c->fl, FS_C_DA_ORDER, c->agno, c->daddr, ino, field,
				  ">= previous hash", FS_X(cur),
				  "DA node hash %#x of entry %u is below the previous entry's %#x",
				  cur, i, prev);
			bad++;
			break;
		}
	}
	return bad;
}

int fs_da3_node_check_ptrs(const struct fs_vctx *vc, const struct fs_da_node *n, uint32_t self,
			   uint32_t lo, uint32_t hi)
{
	int bad = 0;

	if (!n->ents)
		return 0;
	for (uint32_t i = 0; i < n->count; i++) {
		uint32_t b = fs_da_node_before(n, i);

		if (b < lo || b >= hi || b == self) {
			char field[48], exp[48];

			snprintf(field, sizeof(field), "btree[%u].before", i);
			snprintf(exp, sizeof(exp), "in [%u, %u), not %u", lo, hi, self);
			fs_report(vc->fl, FS_C_DA_PTR, vc->agno, vc->daddr, obj_ino(vc), field, exp,
				  FS_U(b), "DA node child pointer %u is outside the fork's range", b);
			bad++;
		}
	}
	return bad;
}
