// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the xattr, symlink and dquot decoders and verifiers:
 * attr3 leaf blocks (with the name hash check), short form attr forks,
 * remote value blocks, remote symlink blocks and quota blocks, 1 KiB each.
 * With clang -fsanitize=fuzzer it is a libFuzzer target (meson
 * -Dfuzzers=true); otherwise main() replays a deterministic stream of
 * mutated valid blocks, so every build runs it under the sanitizers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/format/attr.h"
#include "libfs/format/crc.h"
#include "libfs/format/da.h"
#include "libfs/format/dquot.h"
#include "libfs/format/endian.h"
#include "libfs/format/symlink.h"
#include "libfs/format/verify.h"

#define BS 1024
#define NTYPES 5
#define INO 131

static struct fs_geom geom;

static void init_geom(void)
{
	geom.blocksize = BS;
	geom.blocklog = 10;
	geom.logblocks = 4096;
	geom.bigtime = true;
	for (int i = 0; i < 16; i++)
		geom.meta_uuid[i] = (unsigned char)(0x40 + i);
}

static uint32_t hash(const uint8_t *name, int len)
{
	return fs_da_hashname(name, (size_t)len);
}

/* touch every byte of a name and value the short form walk hands out */
static void sf_cb(void *priv, const struct fs_attr_ent *e)
{
	unsigned *sum = priv;

	for (uint32_t i = 0; i < e->namelen; i++)
		*sum += e->name[i];
	for (uint32_t i = 0; i < e->valuelen; i++)
		*sum += e->value[i];
}

static void run_one(const uint8_t *data, size_t size)
{
	_Alignas(8) unsigned char blk[BS];
	struct fs_findings fl;
	struct fs_vctx c = { .g = &geom, .agno = 0, .daddr = 80, .have_log_head = true,
			     .head_lsn = (1ull << 32) | 100, .ino = INO };
	uint32_t done = 0;
	unsigned sum = 0;

	if (size < 1)
		return;
	memset(blk, 0, sizeof(blk));
	memcpy(blk, data + 1, size - 1 < BS ? size - 1 : BS);
	fs_findings_init(&fl);
	c.fl = &fl;
	switch (data[0] % NTYPES) {
	case 0: {
		struct fs_attr_leaf_hdr h;
		struct fs_attr_ent e;

		fs_verify(FS_MT_ATTR_LEAF, &c, blk, BS);
		fs_attr_leaf_verify_hashes(&c, blk, BS, hash);
		fs_attr_leaf_hdr_decode(blk, BS, &h);
		for (uint32_t i = 0; i < h.count && i < BS / 8; i++)
			if (fs_attr_leaf_entry(blk, BS, &h, i, &e) && e.local)
				(void)hash(e.name, e.namelen);
		break;
	}
	case 1:
		/* a fork of any size up to the block, the data at its start */
		fs_attr_sf_verify(&c, blk, size > 1 ? (size - 1) % (BS + 1) : 0, sf_cb, &sum);
		break;
	case 2:
		fs_verify(FS_MT_ATTR_RMT, &c, blk, BS);
		break;
	case 3:
		fs_verify(FS_MT_SYMLINK, &c, blk, BS);
		fs_symlink_rmt_verify_piece(&c, blk, BS, 1000, &done);
		fs_symlink_local_verify(&c, blk, get_be16(blk) % 1100);
		break;
	default:
		fs_dquot_block_verify(&c, blk, BS, get_be32(blk + 4) / 7, XFS_DQTYPE_USER);
		break;
	}
	fs_findings_free(&fl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!geom.blocksize)
		init_geom();
	run_one(data, size);
	return 0;
}

#ifndef XFSX_LIBFUZZER
/* xorshift: a fixed stream, so a failure replays exactly */
static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const size_t crc_off[NTYPES] = {
	XFS_ATTR3_LEAF_CRC_OFF, 0, XFS_ATTR3_RMT_CRC_OFF, XFS_SYMLINK_CRC_OFF, XFS_DQUOT_CRC_OFF,
};

/* A valid block of each type: a leaf of a few names, headers, dquots. */
static void seed(int t, uint8_t *b)
{
	memset(b, 0, BS);
	switch (t) {
	case 0: {
		struct xfs_attr3_leaf_hdr *h = (void *)b;
		uint32_t top = BS, used = 0;
		const char *names[] = { "user.a", "user.bb", "trusted.ccc" };

		h->info.hdr.magic = to_be16(XFS_ATTR3_LEAF_MAGIC);
		h->info.blkno = to_be64(80);
		h->info.owner = to_be64(INO);
		memcpy(&h->info.uuid, geom.meta_uuid, 16);
		h->count = to_be16(3);
		for (int i = 0; i < 3; i++) {
			struct xfs_attr_leaf_entry *e = (void *)(b + sizeof(*h) + i * sizeof(*e));
			uint32_t nl = (uint32_t)strlen(names[i]), sz = fs_attr_entsize_local(nl, 5);

			top -= sz;
			put_be16(b + top, 5);
			b[top + 2] = (uint8_t)nl;
			memcpy(b + top + 3, names[i], nl);
			memcpy(b + top + 3 + nl, "value", 5);
			e->hashval = to_be32(hash((const uint8_t *)names[i], (int)nl));
			e->nameidx = to_be16(top);
			e->flags = XFS_ATTR_LOCAL;
			used += sz;
		}
		h->usedbytes = to_be16(used);
		h->firstused = to_be16(top);
		break;
	}
	case 1: {
		size_t off = sizeof(struct xfs_attr_sf_hdr);
		for (int i = 0; i < 4; i++) {
			b[off] = 3;
			b[off + 1] = 2;
			memcpy(b + off + 3, "abcde", 5);
			off += 8;
		}
		put_be16(b, (uint16_t)off);
		b[2] = 4;
		break;
	}
	case 2: {
		struct xfs_attr3_rmt_hdr *h = (void *)b;
		h->rm_magic = to_be32(XFS_ATTR3_RMT_MAGIC);
		h->rm_bytes = to_be32(500);
		h->rm_owner = to_be64(INO);
		h->rm_blkno = to_be64(80);
		h->rm_lsn = to_be64(~0ull);
		memcpy(&h->rm_uuid, geom.meta_uuid, 16);
		break;
	}
	case 3: {
		struct xfs_dsymlink_hdr *h = (void *)b;
		h->sl_magic = to_be32(XFS_SYMLINK_MAGIC);
		h->sl_bytes = to_be32(968);
		h->sl_owner = to_be64(INO);
		h->sl_blkno = to_be64(80);
		memcpy(&h->sl_uuid, geom.meta_uuid, 16);
		memset(b + sizeof(*h), 'p', 968);
		break;
	}
	default:
		for (uint32_t i = 0; i < BS / sizeof(struct xfs_dqblk); i++) {
			struct xfs_dqblk *q = (void *)(b + i * sizeof(*q));
			q->dd_diskdq.d_magic = to_be16(XFS_DQUOT_MAGIC);
			q->dd_diskdq.d_version = XFS_DQUOT_VERSION;
			q->dd_diskdq.d_type = XFS_DQTYPE_USER;
			q->dd_diskdq.d_id = to_be32(i);
			memcpy(&q->dd_uuid, geom.meta_uuid, 16);
			fs_crc_update(q, sizeof(*q), XFS_DQUOT_CRC_OFF);
		}
		return;
	}
	if (t != 1)
		fs_crc_update(b, BS, crc_off[t]);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	uint8_t in[BS + 1];

	init_geom();
	for (unsigned long i = 0; i < iters; i++) {
		int t = (int)(i % NTYPES);
		int flips = 1 + (int)(next() % 8);

		in[0] = (uint8_t)t;
		if (i % 16 == 15) {
			for (size_t j = 1; j < sizeof(in); j++)
				in[j] = (uint8_t)next();
		} else {
			seed(t, in + 1);
			for (int f = 0; f < flips; f++) {
				size_t pos = 1 + next() % BS;
				/* mostly in the headers and the entry table, where the rules are */
				if (next() % 4)
					pos = 1 + next() % 128;
				in[pos] = (next() % 3) ? (uint8_t)next() : (uint8_t)(in[pos] ^ (1u << (next() % 8)));
			}
			/* half the time keep the CRC valid so the field rules are reached */
			if (next() % 2 && t != 1 && t != 4)
				fs_crc_update(in + 1, BS, crc_off[t]);
		}
		run_one(in, (i % 7 == 6) ? 1 + next() % sizeof(in) : sizeof(in));
	}
	printf("1..1\nok 1 - %lu mutated attr leaf/short form/remote value/symlink/dquot inputs "
	       "verified without a crash\n", iters);
	return 0;
}
#endif
