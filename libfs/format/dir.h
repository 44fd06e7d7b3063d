/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_DIR_H
#define XFSX_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "libfs/format/bmap.h"
#include "libfs/format/da.h"
#include "libfs/format/format.h"
#include "libfs/format/findings.h"
#include "libfs/format/verify.h"

/*
 * v5 directories in all four formats, decoded and verified:
 *  - short form: entries inline in the inode's data fork;
 *  - block: one directory block "XDB3" (data, leaf entries, tail);
 *  - leaf: data blocks "XDD3" + one "XDL3" (LEAF1) block with bests;
 *  - node: data blocks + a DA btree (DA3 nodes over "XDN3" LEAFN blocks)
 *    + free index blocks "XDF3".
 * Every block goes through the verifier table; the walker then checks
 * what ties blocks together (each data entry has exactly one leaf entry
 * with its hash and address, bestfree tables, bests, stale counts, hash
 * order, the DA tree's levels, keys and siblings).  Findings use the
 * "dir." codes (and "da." for DA3 node blocks).  Each live entry other
 * than "." and ".." is handed to a callback, for the directory graph.
 */

/* One live directory entry (not "." or ".."). */
struct fs_dirent {
	fs_ino_t ino;
	const unsigned char *name; /* not NUL terminated; valid during the callback */
	uint8_t namelen;
	uint8_t ftype;             /* XFS_DIR3_FT_*; 0 without the ftype feature */
	fs_daddr_t daddr;          /* block holding it (0 for short form) */
};

/* Returns 0, or a negative errno that stops the walk (and is returned). */
typedef int (*fs_dirent_fn)(void *priv, const struct fs_dirent *e);

struct fs_dir_ctx {
	const struct fs_geom *g;
	struct fs_findings *fl;
	fs_ino_t ino;              /* the directory */
	fs_agnumber_t agno;        /* its AG, for findings */
	bool have_log_head;
	uint64_t head_lsn;
	/*
	 * Read the directory block starting at logical fs block dablk
	 * (g->dirblksize bytes) into buf and say its disk address.  0, or a
	 * negative errno (the walker reports FS_C_DIR_UNREADABLE).
	 */
	int (*read)(void *priv, uint64_t dablk, void *buf, fs_daddr_t *daddr);
	fs_dirent_fn entry;
	void *priv;
	/* filled by the walk */
	fs_ino_t parent;           /* ".." (0 when not found) */
	uint64_t entries;          /* live entries handed to entry() */
	uint64_t blocks;           /* directory blocks read */
};

enum fs_dir_format { FS_DIR_SHORT, FS_DIR_BLOCK, FS_DIR_LEAF, FS_DIR_NODE, FS_DIR_BAD };

/*
 * Short form: fork/forklen is the data fork's literal area, size the
 * inode's di_size (the bytes in use).  Returns the number of findings, or
 * a negative errno from the callback.
 */
int fs_dir_sf_walk(struct fs_dir_ctx *c, const void *fork, size_t forklen, uint64_t size);

/*
 * The di_size a short form directory's header and entries imply (the
 * header, then count entries each as long as its name length says), or
 * 0 when they do not fit forklen bytes: a size the walk above can read.
 */
uint64_t fs_dir_sf_size(const struct fs_geom *g, const void *fork, size_t forklen);

/*
 * The di_size a block, leaf or node directory's mapping implies: one
 * directory block for the block form, else the end of the last directory
 * block mapped below the leaf offset (as xfs_repair sizes a directory
 * from its data fork); 0 when the mapping is no directory's.
 */
uint64_t fs_dir_mapped_size(const struct fs_geom *g, const struct fs_bmap *m);

/* Which block format a mapping describes (the kernel's isblock/isleaf tests). */
enum fs_dir_format fs_dir_block_format(const struct fs_geom *g, const struct fs_bmap *m);

/*
 * Block, leaf and node forms: walk every block the mapping holds.
 * size is di_size.  Returns the number of findings made, or a negative
 * errno on operational failure (-ENOMEM).
 */
int fs_dir_walk(struct fs_dir_ctx *c, const struct fs_bmap *m, uint64_t size);

/* Name rules: not empty, no '/' and no NUL. */
bool fs_dir_name_ok(const unsigned char *name, size_t len);

/* Two names of len bytes are one directory name (case folded on ascii-ci filesystems). */
bool fs_dir_name_eq(const struct fs_geom *g, const unsigned char *a, const unsigned char *b,
		    size_t len);

/* Bytes one data entry takes for a name length (8-byte aligned). */
uint32_t fs_dir_entsize(const struct fs_geom *g, uint32_t namelen);

/* Field rules for the verifier table rows (header fields: owner = vc->ino, blkno = vc->daddr). */
int fs_dir3_data_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_dir3_leaf_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);
int fs_dir3_free_verify_fields(const struct fs_vctx *c, const void *buf, size_t len);

#endif
