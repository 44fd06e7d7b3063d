/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit-test fixture: a v5 superblock and AG headers built in memory the way
 * mkfs.xfs 6.1 lays them out (4 KiB blocks, 512-byte inodes, sparse inodes,
 * finobt, reflink, inobtcount by default), CRCs stamped with fs_crc_update.
 * Layouts come from the xfsprogs headers; nothing is retyped.
 */
#ifndef XFSX_TEST_FIXTURE_H
#define XFSX_TEST_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/format/ag.h"
#include "libfs/format/crc.h"
#include "libfs/format/endian.h"
#include "libfs/format/findings.h"
#include "libfs/format/sb.h"
#include "libfs/format/verify.h"

struct fx_params {
	uint32_t blocksize, sectsize, inodesize;
	uint32_t agcount, agblocks, last_ag_blocks;
	uint32_t dirblklog;
	bool finobt, rmapbt, reflink, inobtcount, spinodes, meta_uuid;
};

struct fx {
	struct fx_params p;
	struct xfs_sb sb;
	struct fs_geom g;
};

/* 4 KiB blocks, 512 B sectors and inodes, 4 AGs of 16384 blocks, last AG 10000. */
void fx_default_params(struct fx_params *p);
/* Build sb + geometry from params; fails the test if derivation fails. */
void fx_init(struct fx *f, const struct fx_params *p);
void fx_init_default(struct fx *f);

/* Encode a superblock (host form) into a sector buffer of len bytes, CRC over sectsize. */
void fx_sb_encode(const struct xfs_sb *sb, unsigned char *buf, size_t len);

/* Valid headers for AG agno (buf: sectsize bytes). */
void fx_agf(const struct fx *f, uint32_t agno, unsigned char *buf);
void fx_agi(const struct fx *f, uint32_t agno, unsigned char *buf);
void fx_agfl(const struct fx *f, uint32_t agno, unsigned char *buf);

/* Re-stamp the CRC of a header of type t after a field was changed. */
void fx_recrc(enum fs_mtype t, unsigned char *buf, size_t len);

/* A verifier context for AG agno with a log head at cycle 5, block 100. */
struct fs_vctx fx_vctx(const struct fx *f, uint32_t agno, struct fs_findings *fl);

/* Is there a finding with this code (and field, when field is not NULL)? */
bool fx_has(const struct fs_findings *fl, const char *code, const char *field);
/* Print every finding (for a failing assertion's context). */
void fx_dump(const struct fs_findings *fl);

#define FX_HEAD_LSN ((5ull << 32) | 100)

#endif
