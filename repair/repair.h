/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_H
#define XFSX_REPAIR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "libfs/format/findings.h"
#include "libfs/fs.h"
#include "scan/scan.h"

/*
 * xfsx_repair: the shared scan (scan/) builds the model and the findings;
 * the repair phases turn them into a complete plan (what to clear, which
 * AGs to rebuild, which blocks to write) held as dirty buffers in the
 * scan's cache; nothing is written until the plan is complete.  Then
 * commit.c writes it under the crash protocol (NEEDSREPAIR first, new
 * blocks, headers, secondaries, the primary with NEEDSREPAIR cleared last).
 *
 * Phases (files):
 *   fix.c            the one decision point: a finding's fix action, "would
 *                    fix" / "fixed", and which findings the plan covers
 *   phase_sb.c       1 superblocks: the primary's geometry by agreement, damaged
 *                    or stale secondaries rewritten from the primary
 *   phase_inodes.c   3 inodes: bad cores cleared, bad attr forks removed, core
 *                    fields set where the right value is known; duplicate claims
 *   phase_names.c    3b the namespace: directories rebuilt, orphans to lost+found,
 *                    link counts
 *   phase_xattrs.c   3d damaged attr forks rebuilt from the entries that verify;
 *                    cleared only where none does
 *   phase_quota.c    3c bad dquots rewritten; quota recounted by the kernel
 *   phase_rebuild.c  2+4 AG headers and btrees rebuilt from the model (AGs whose
 *                    trees and counters already match are left alone)
 *   phase_counters.c 5 superblock counters from what was built
 *   commit.c         the writes, in crash-protocol order; -L's clean log
 */

struct repair_opts {
	bool dry_run;              /* -n: plan and report, write nothing */
	bool zero_log;             /* -L: throw a dirty log away */
	bool json, quiet;
	struct scan_opts scan;
};

/* Per-inode verdicts (kept per link-record slot, beside the link records). */
enum {
	RV_CLEAR = 1,              /* free the inode: its core or data fork is beyond repair */
	RV_ATTR_RESET = 2,         /* remove the attr fork, keep the file */
	RV_FIELDS = 4,             /* rewrite core fields whose right value is known */
	RV_REFLINK = 8,            /* set the reflink flag */
	RV_DIR_NEW = 16,           /* a directory rebuilt into new blocks: its old data fork goes */
	RV_NEW = 32,               /* an inode this repair allocates (lost+found) */
	RV_ATTR_NEW = 64,          /* its attr fork rebuilt from the entries that survive:
				      its old attr blocks go, the new ones stay */
	RV_ATTR_SALVAGE = 128,     /* (planning) its attr fork is damaged: phase_xattrs.c
				      keeps what verifies (RV_ATTR_NEW) or clears it */
};

/* One AG's rebuild, as planned (phase_rebuild.c). */
struct repair_ag {
	bool rebuild;              /* headers and btrees rewritten */
	bool agi_only;             /* (rebuild) no change to free space: inode btrees and AGI */
	/* results, for the AGF/AGI and the superblock counters */
	uint64_t freeblks, flcount, btreeblks, icount, ifree;
	uint32_t blocks_written;
};

/* A core field fix: the value the scan computed (the finding's "expected"). */
struct repair_field_fix {
	fs_ino_t ino;
	int field;                 /* RF_* */
	uint64_t value;
};
enum { RF_NBLOCKS, RF_ONLINK, RF_EXTSIZE, RF_COWEXTSIZE, RF_FLAGS, RF_TIMESTAMP, RF_LSN,
       RF_UNLINKED };

struct fs_log_attri;

/* verify.c: the scan of the planned result, before anything is written. */
struct repair_verified {
	bool ran;                  /* the plan was judged (it changes something) */
	struct fs_findings after;  /* the scan of the planned result */
	bool *after_new;           /* per finding in after: matches none from before the plan */
	const struct fs_finding **after_sorted; /* after's records by key (code, AG, inode, address) */
	size_t nsorted;
	size_t left;               /* errors and warnings in after */
	size_t introduced;         /* ... of which the plan would bring in (after_new) */
};

struct repair_ctx {
	struct fs *fs;
	struct fs_findings *fl;
	struct scan_ctx *sx;
	const struct repair_opts *o;
	const char *path;

	/* the plan */
	uint8_t *verdict;          /* RV_* per link slot (sx->links->nslots) */
	bool drops;                /* some verdict drops an owner's blocks (clear, attr reset) */
	bool *fixed;               /* per finding in fl: covered by the plan */
	struct repair_ag *ag;      /* per AG */
	bool rewrite_primary;
	bool *rewrite_sb;          /* per AG: the superblock copy in that AG */
	bool counters;             /* superblock counters rewritten */
	bool empty_unlinked;       /* the AGI unlinked lists are emptied (what they held freed) */
	bool quota_recount;        /* quota CHKD flags cleared: the kernel counts again */
	fs_ino_t quota_unhooked[3];  /* quota inodes the superblock stops naming (0: none) */
	bool rt_bitmap_fixed, rt_summary_fixed, rt_frextents_fixed; /* phase_rt.c */
	bool rt_bitmap_remade, rt_summary_remade;  /* (no rt section) made again in place */
	fs_daddr_t *dquot_blocks;  /* quota blocks whose bad records are rewritten */
	size_t ndquot, capdquot;
	struct repair_field_fix *ffix;
	size_t nffix, capffix;
	struct repair_symlink { fs_ino_t ino; bool mended; } *symlinks; /* symlinks.c, tried */
	size_t nsymlinks, capsymlinks;
	uint64_t cleared, attr_resets, field_fixes;
	struct repair_names *nm;   /* the namespace plan (phase_names.c) */
	struct repair_xattrs *xa;  /* the xattr salvage's outcome per inode (phase_xattrs.c) */
	bool planned_writes;       /* anything to write at all */
	/* after a replay: the AGs the unfinished intents name, rebuilt (scan/log.h) */
	const bool *intent_ags;
	/*
	 * after a replay: its BUIs took or freed block map btree blocks, which
	 * the kernel's recovery charges to the inode's dquots and we do not
	 */
	bool replay_bmbt_changed;
	/* after a replay: its unfinished xattr intents, completed by phase_xattrs.c */
	const struct fs_log_attri *attris;
	size_t nattris;
	uint64_t attris_done;      /* completed on their inode's attr fork */
	uint64_t attris_freed;     /* on an inode the unlinked lists' processing frees */
	/* -n: per intent, judged as stopping the kernel's recovery (logattr.c); NULL: none */
	const bool *attri_refused;
	uint64_t attris_refused;   /* on an inode with such an intent: not completed */

	/* inodes an earlier attempt's result blamed (verify.c repair_blame): cleared */
	const fs_ino_t *force_clear;
	size_t nforce_clear;
	/* the plan's result as the scan judged it (verify.c): rx->fixed comes from it */
	struct repair_verified verified;

	/* results */
	struct xfs_sb newsb;       /* the primary as it will be written */
	uint64_t icount, ifree, fdblocks;
	uint64_t blocks_written, writes, bytes_written;
	double phase_seconds[8];
};

/* fix.c */
/* The AG a finding is about (its ag, else its daddr's), or FS_NONE. */
int64_t repair_finding_ag(const struct repair_ctx *rx, const struct fs_finding *f);
/* Mark every finding the plan covers as fixed; returns how many are left. */
size_t repair_decide(struct repair_ctx *rx);
/* Print the fixes: "fixed" / "would fix" / "left", one line per finding. */
void repair_report_text(const struct repair_ctx *rx, FILE *out);
void repair_report_json(const struct repair_ctx *rx, FILE *out);
/*
 * The inodes in use that the plan frees (nothing showed what they held):
 * "cleared ino N (PATH): ... data is lost" lines, or a JSON array of {ino, path}.
 */
size_t repair_report_cleared(const struct repair_ctx *rx, FILE *out, bool json);
/* How many such inodes. */
size_t repair_count_cleared(const struct repair_ctx *rx);
/* The scan of the planned result's findings, each with "new" (none before), or null. */
void repair_report_after_json(const struct repair_ctx *rx, FILE *out);

/*
 * NULL when the model knows every block owner (the AG rebuild and new
 * blocks need that), else why not (phase_rebuild.c).
 */
const char *repair_model_incomplete(const struct repair_ctx *rx);
/* The disk address of an inode's core (phase_inodes.c). */
fs_daddr_t repair_inode_daddr(const struct fs_geom *g, fs_ino_t ino);
/* The fix actions of the namespace (directories to quota): phase_names.c decides. */
static inline bool repair_fix_is_names(enum fs_fix fix)
{
	return fix >= FS_FIX_DIR && fix <= FS_FIX_RT;
}
/* Whether the namespace plan covers a finding with one of those actions. */
bool repair_names_covers(const struct repair_ctx *rx, const struct fs_finding *f);
void repair_names_free(struct repair_ctx *rx);
/* Each inode moved to lost+found: a text line, or a JSON array of {ino, to}. */
void repair_names_print_moves(const struct repair_ctx *rx, FILE *out, bool json);
/* The path inode ino had before the repair, where the namespace tells it; else NULL. */
const char *repair_names_path(const struct repair_ctx *rx, int64_t ino);
/* What the namespace phase did, for the summary. */
void repair_names_counts(const struct repair_ctx *rx, uint64_t *rebuilt, uint64_t *moved,
			 uint64_t *nlinks);

/*
 * New blocks for a rebuilt directory or attr fork: fsbs contiguous blocks
 * free before and after the repair, near inode ino (phase_names.c, once
 * repair_phase_names has run: rx->nm).  0 or -ENOSPC.
 */
int repair_place(struct repair_ctx *rx, fs_ino_t ino, uint32_t fsbs, fs_fsblock_t *fsb);
/*
 * A rebuilt fork's extents into its fork area (size bytes): an extent list
 * when they fit, else a bmbt from the bulk loader in new blocks (in the
 * model, as the fork's).  *format the fork format, *bmbt its blocks.
 */
int repair_fork_map(struct repair_ctx *rx, fs_ino_t ino, int whichfork,
		    const struct fs_bmap_ext *ext, size_t n, void *fork, size_t size,
		    uint8_t *format, uint64_t *bmbt);
/*
 * The inode in links slot s is one the AGI unlinked lists' processing frees
 * (on a list, no links, no directory names it); phase_inodes.c.
 */
bool repair_unlinked_frees(const struct repair_ctx *rx, uint64_t s);
/*
 * symlinks.c: a remote symlink whose blocks' headers are damaged but whose
 * target survives, its blocks written again in place: 1; 0 when it cannot
 * be mended (the caller removes it); negative errno.
 */
int repair_symlink_salvage(struct repair_ctx *rx, fs_ino_t ino);
/*
 * bmbt_keys.c: set every node key of a btree-format fork (the root in the
 * core at dip, node blocks as dirty buffers) to its child's first key.
 * 1 when a root key changed, 0, or a negative errno.
 */
int repair_bmbt_keys(struct repair_ctx *rx, fs_ino_t ino, unsigned char *dip, int fork);
/* Remove an inode's attr fork in its core (forkoff 0, no extents); phase_inodes.c. */
void repair_attr_fork_reset(const struct fs_geom *g, unsigned char *dip);
/* phase_xattrs.c: per inode, what the salvage kept, dropped or cleared. */
void repair_xattrs_print(const struct repair_ctx *rx, FILE *out, bool json);
uint64_t repair_xattrs_rebuilt(const struct repair_ctx *rx);
void repair_xattrs_free(struct repair_ctx *rx);

/* phases */
int repair_phase_sb(struct repair_ctx *rx);
int repair_phase_inodes(struct repair_ctx *rx);
int repair_phase_names(struct repair_ctx *rx);
int repair_phase_xattrs(struct repair_ctx *rx);
int repair_phase_quota(struct repair_ctx *rx);
bool repair_quota_covers(const struct repair_ctx *rx, const struct fs_finding *f);
int repair_phase_rt(struct repair_ctx *rx);
bool repair_rt_covers(const struct repair_ctx *rx, const struct fs_finding *f);
int repair_phase_rebuild(struct repair_ctx *rx);
int repair_phase_counters(struct repair_ctx *rx);

/*
 * verify.c: open the filesystem again with the plan shown to its reads and
 * run the scan over it; rx->fixed[i] is then whether finding i is gone,
 * rx->verified what is left and what the plan would bring in.  0, or a
 * negative errno with msg saying why (nothing written either way).
 */
int repair_verify_plan(struct repair_ctx *rx, char *msg, size_t ml);
void repair_verified_free(struct repair_ctx *rx);
/*
 * The inodes to blame for what the plan would bring in: named by a new
 * finding (or its cause), with findings of their own before the plan, kept
 * by it (not cleared).  Added to *v (sorted, no repeats); 0 or -ENOMEM.
 */
int repair_blame(const struct repair_ctx *rx, fs_ino_t **v, size_t *n);
/* Whether the scan of the planned result still makes finding f (its code, its object). */
bool repair_verified_has(const struct repair_verified *vf, const struct fs_finding *f);

/* commit.c: write the plan (crash protocol); -L's clean log. */
int repair_commit(struct repair_ctx *rx, char *err, size_t errlen);
int repair_zero_log(struct fs *fs, char *err, size_t errlen);

/* Read-modify helpers over the scan's cache (commit.c). */
int repair_get_buf(struct repair_ctx *rx, fs_daddr_t daddr, uint32_t len, bool fresh,
		   struct fs_buf **out);
int repair_mark(struct repair_ctx *rx, struct fs_buf *b, enum fs_mtype type, fs_agnumber_t agno,
		fs_ino_t ino, uint8_t wclass);
/* Inode ino's data fork map, the inode read through the cache (silently). */
int repair_data_map(struct repair_ctx *rx, fs_ino_t ino, struct fs_bmap *m);

#endif
