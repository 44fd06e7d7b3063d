/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_PLAN_H
#define XFSX_REPAIR_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "libfs/format/findings.h"
#include "libfs/fs.h"
#include "scan/scan.h"

/*
 * One repair plan: the shared scan (scan/) builds the model and the
 * findings; the phases (run.c's table, in run order) turn them into
 * verdicts, rebuilt AGs and dirty buffers in the scan's cache, all held
 * here; nothing is written until the plan is complete and judged
 * (verify.c), then commit.c writes it under the crash protocol.
 */
struct fs_log_attri;
struct repair_run;
struct repair_names;
struct repair_xattrs;
struct repair_pptrs;
struct repair_space;

/*
 * The steps of one round, in the order run.c's table runs them; every
 * repair_phase_* file's opening paragraph gives its step number (from 1).
 */
enum repair_phase {
	REPAIR_PH_SCAN,            /* the shared scan (scan/): model, findings, graph */
	REPAIR_PH_INTENTS,         /* after a replay: the unfinished intents accounted */
	REPAIR_PH_SB,              /* phase_sb.c */
	REPAIR_PH_INODES,          /* phase_inodes.c */
	REPAIR_PH_NAMES,           /* phase_names.c */
	REPAIR_PH_XATTRS,          /* phase_xattrs.c (after the namespace: its blocks are placed
				      among the rebuilt directories') */
	REPAIR_PH_QUOTA,           /* phase_quota.c */
	REPAIR_PH_RT,              /* phase_rt.c */
	REPAIR_PH_REBUILD,         /* phase_rebuild.c */
	REPAIR_PH_COUNTERS,        /* phase_counters.c */
	REPAIR_PH_DECIDE,          /* fix.c: which findings the plan covers */
	REPAIR_PH_VERIFY,          /* verify.c: the planned result scanned */
	REPAIR_PH_BLAME,           /* verify.c: a plan that brings in problems made again */
	REPAIR_PH_COMMIT,          /* commit.c: the plan written */
	REPAIR_PH_NR
};

/* What the command line asks for (main.c). */
struct repair_opts {
	bool dry_run;              /* -n: plan and report, write nothing */
	bool zero_log;             /* -L: throw a dirty log away */
	bool no_replay;            /* --no-replay: refuse a dirty log */
	bool json, quiet;
	const char *undo_path;     /* --undo-file */
	const char *logdev, *rtdev; /* xfs_repair's -l and -r */
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
       RF_UNLINKED, RF_DIRSIZE };

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

/*
 * What the blame and the report read of the first scan's per-inode state
 * (link records, verdicts, the namespace's per-slot flags), taken once the
 * plan is decided (verify.c repair_keep_for_report): the scan of the
 * planned result then starts with that state freed, not beside it.
 */
struct repair_kept {
	bool taken;
	fs_ino_t *blameable;       /* inodes with judged findings the plan keeps: sorted */
	size_t nblameable;
	fs_ino_t *lost;            /* inodes in use the plan frees, their data lost: slot order */
	size_t nlost;
	const char **action;       /* per finding in fl: repair_action_taken's answer */
};

struct repair_ctx {
	struct fs *fs;
	struct fs_findings *fl;
	struct scan_ctx *sx;
	const struct repair_opts *o;
	const char *path;
	struct repair_run *run;    /* the run this plan is a round of (run.c) */
	int round;                 /* 0: the first */

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
	struct repair_pptrs *pp;   /* (parent feature) the parent pointers wanted (pptrs.c) */
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
	struct repair_kept kept;

	/* results */
	struct xfs_sb newsb;       /* the primary as it will be written */
	uint64_t icount, ifree, fdblocks;
	uint64_t blocks_written, writes, bytes_written;
	size_t left;               /* errors and warnings the plan leaves (dropped ones too) */
	double phase_seconds[REPAIR_PH_NR]; /* wall time of each step */
	struct fs_mem_sample phase_mem[REPAIR_PH_NR]; /* memory at each step's end (util/mem.h) */
	struct repair_space *space; /* where new blocks may go, per AG (place.c) */
};

#endif
