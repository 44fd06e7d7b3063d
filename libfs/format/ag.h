/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_AG_H
#define XFSX_AG_H

#include "libfs/format/format.h"
#include "libfs/format/verify.h"

/* AGF in host order: what later layers need to walk an AG. */
struct fs_agf {
	uint32_t magic, versionnum, seqno, length;
	uint32_t bno_root, cnt_root, rmap_root, refc_root;
	uint32_t bno_level, cnt_level, rmap_level, refc_level;
	uint32_t flfirst, fllast, flcount;
	uint32_t freeblks, longest, btreeblks, rmap_blocks, refc_blocks;
	uint64_t lsn;
};

struct fs_agi {
	uint32_t magic, versionnum, seqno, length;
	uint32_t count, root, level, freecount, newino, dirino;
	uint32_t free_root, free_level, iblocks, fblocks;
	uint32_t unlinked[XFS_AGI_UNLINKED_BUCKETS];
	uint64_t lsn;
};

void fs_agf_decode(const void *buf, struct fs_agf *agf);
void fs_agi_decode(const void *buf, struct fs_agi *agi);

/* Byte offsets of an AG's header sectors. */
uint64_t fs_ag_sb_offset(const struct fs_geom *g, fs_agnumber_t agno);
uint64_t fs_ag_agf_offset(const struct fs_geom *g, fs_agnumber_t agno);
uint64_t fs_ag_agi_offset(const struct fs_geom *g, fs_agnumber_t agno);
uint64_t fs_ag_agfl_offset(const struct fs_geom *g, fs_agnumber_t agno);

/* Number of AGFL slots in use between flfirst and fllast (as the kernel counts them). */
uint32_t fs_agfl_active_count(const struct fs_geom *g, const struct fs_agf *agf);
/* The slot of the i-th active AGFL entry. */
static inline uint32_t fs_agfl_slot(const struct fs_geom *g, const struct fs_agf *agf, uint32_t i)
{
	return (agf->flfirst + i) % g->agfl_size;
}

/* Field rules, for the verifier table. */
int fs_agf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_agi_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_agfl_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

/*
 * Cross-check the active AGFL entries against the AGF (every active slot
 * holds a block of this AG outside its headers, no block twice).
 */
int fs_agfl_check_active(const struct fs_vctx *c, const void *agfl_buf, const struct fs_agf *agf);

#endif
