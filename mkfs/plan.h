/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The geometry planner: command line choices plus what the target reports
 * (size, sector sizes, stripe topology, rotational or not) in, a complete
 * superblock and per-AG layout out.  Pure computation: no I/O, no printing,
 * so the unit tests can drive it over edge sizes.
 */
#ifndef XFSX_MKFS_PLAN_H
#define XFSX_MKFS_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libfs/format/format.h"

/* Highest AG number (libxfs xfs_types.h; not in the installed headers). */
#ifndef XFS_MAX_AGNUMBER
#define XFS_MAX_AGNUMBER ((uint32_t)(NULLAGNUMBER - 1))
#endif

/* Tri-state feature switch: unset means "the default". */
enum { OPT_UNSET = -1 };

/* What the user asked for; every field at OPT_UNSET / 0 means "default". */
struct mkfs_opts {
	/* -b / -s / -i / -n */
	uint32_t blocksize, sectsize, inodesize, dirblocksize;
	int imaxpct;                 /* -i maxpct= (OPT_UNSET: by size) */
	int sparse, nrext64;         /* -i sparse=, nrext64= */
	int exchange;                /* -i exchange=: exchange-range */
	int parent;                  /* -n parent=: parent pointers */
	/* -d */
	uint64_t dsize;              /* bytes, 0 = whole target */
	uint64_t agcount;            /* 0 = default */
	uint64_t agsize;             /* bytes, 0 = default */
	uint64_t dsu, dsw;           /* stripe unit in bytes, width in units */
	int64_t dsunit, dswidth;     /* in 512-byte sectors; OPT_UNSET = not given */
	bool stripe_given;
	int data_concurrency;        /* OPT_UNSET: automatic (solid state only) */
	/* -l */
	uint64_t logsize;            /* bytes, 0 = default */
	uint64_t lsu;                /* bytes, 0 = default */
	int64_t lsunit;              /* 512-byte sectors, OPT_UNSET = not given */
	int log_concurrency;         /* OPT_UNSET: automatic (solid state only) */
	const char *logdev;          /* -l logdev=: an external log there (NULL: internal) */
	/* -r */
	const char *rtdev;           /* -r rtdev=: a realtime section there (NULL: none) */
	uint64_t rtsize;             /* bytes, 0 = the whole rt device */
	uint64_t rtextsize;          /* bytes, 0 = default */
	/* -m */
	int finobt, rmapbt, reflink, inobtcount, bigtime;
	bool uuid_given;
	unsigned char uuid[16];
	/* -L */
	char label[13];
	bool label_given;
	/* behaviour */
	bool force, noaction, quiet, nodiscard;
	/* -p: a directory or protofile to copy in; --progress (OPT_UNSET: on a terminal) */
	const char *proto;
	int progress;
	const char *undo_file;     /* --undo-file: old contents of every range written go here */
	const char *tmpdir;        /* --tmpdir: where -p keeps its tree (NULL: $TMPDIR, /tmp) */
};

/* What the target reports. */
struct mkfs_topo {
	uint64_t size;               /* bytes */
	uint32_t lsect, psect;       /* logical / physical sector size */
	/*
	 * The device's stripe as mkfs.xfs reads it: libblkid's minimum and
	 * optimal I/O sizes, in bytes rounded down to 512, both 0 when either
	 * is the physical sector size.  Not yet judged: the planner warns
	 * about nonsense and ignores it, as mkfs.xfs does.
	 */
	uint64_t sunit, swidth;
	bool solid_state;            /* block device that says it does not rotate */
	bool is_file;
	/* libblkid: the device starts off its physical sectors; no topology at all */
	bool misaligned, no_topology;
	unsigned nr_cpus;
	/* the external log and realtime devices (-l logdev=, -r rtdev=): bytes */
	uint64_t logdev_size, rtdev_size;
	uint32_t logdev_lsect;       /* the log device's logical sector size (0: 512) */
};

#define MKFS_MAX_WARNINGS 8
#define MKFS_WARNING_LEN 320

/* One reverse-mapping record of a static owner. */
struct mkfs_rmap {
	uint32_t start, len;
	uint64_t owner;              /* XFS_RMAP_OWN_* */
};

#define MKFS_MAX_STATIC_RMAPS 12
#define MKFS_MAX_FREE_EXTENTS 4

/* Layout of one AG as mkfs leaves it. */
struct mkfs_ag {
	uint32_t agno, length;
	uint32_t agfl[16];           /* AGFL blocks, in slot order from flfirst */
	uint32_t agfl_count;
	struct { uint32_t start, len; } free[MKFS_MAX_FREE_EXTENTS];
	uint32_t nfree;              /* free extents, by block number */
	uint32_t freeblks, longest;
	struct mkfs_rmap rmap[MKFS_MAX_STATIC_RMAPS];
	uint32_t nrmap;
	bool has_log, has_inodes;
	uint32_t chunk_agbno;        /* the root inode chunk (AG 0) */
	uint32_t rbm_agbno, rsum_agbno; /* the rt bitmap and summary files' blocks (AG 0) */
};

struct mkfs_plan {
	struct xfs_sb sb;            /* the primary superblock, host order */
	uint32_t blocksize, blocklog, sectsize, sectlog, inodesize, inodelog;
	uint32_t dirblocksize;
	uint64_t dblocks;
	uint32_t agcount, agblocks, agblklog;
	uint32_t dsunit, dswidth;    /* fs blocks */
	uint32_t lsunit;             /* fs blocks */
	uint32_t logblocks, logagno, logagbno;
	uint64_t logstart;           /* fsblock; 0 for an external log */
	bool extlog;                 /* the log is on its own device (-l logdev=) */
	uint64_t logdev_blocks, rtdev_blocks; /* the devices' sizes in fs blocks */
	uint32_t logdev_lsect;       /* the log device's logical sector size */
	/* the realtime section (-r rtdev=): 0 blocks when there is none */
	uint64_t rblocks, rextents;
	uint32_t rextsize;           /* fs blocks */
	uint32_t rbmblocks, rsumblocks, rsumsize;  /* rt bitmap and summary files (AG 0) */
	uint32_t imaxpct;
	bool finobt, rmapbt, reflink, inobtcount, bigtime, sparse, nrext64;
	bool exchange, parent;
	/* fixed AG block numbers (same in every AG) */
	uint32_t hdr_blocks;         /* blocks holding sb/agf/agi/agfl sectors */
	uint32_t bno_root, cnt_root, ino_root, fino_root, rmap_root, refc_root;
	uint32_t prealloc_blocks;    /* first block past the fixed blocks */
	uint32_t agfl_size;          /* slots */
	uint32_t agfl_need;          /* blocks mkfs puts on each AGFL */
	uint32_t chunk_inodes;       /* inodes one allocation makes: 64, or a block's worth */
	uint32_t chunk_blocks, chunk_align;
	uint32_t alloc_maxlevels;
	uint32_t data_concurrency, log_concurrency; /* 0: the rule did not apply */
	uint64_t icount, ifree, fdblocks;
	uint64_t rootino;
	/* set when the smallest log (min) is larger than an AG can hold (max) */
	uint64_t log_min_blocks, log_max_blocks;
	/*
	 * What mkfs.xfs 6.1 warns about for the same options and target, in
	 * its words and order, for main to print on stderr (also when the plan
	 * fails later: mkfs.xfs has said them by then).
	 */
	uint32_t nwarnings;
	char warnings[MKFS_MAX_WARNINGS][MKFS_WARNING_LEN];
};

/* Blocks in AG agno (the last AG may be shorter). */
static inline uint32_t mkfs_ag_length(const struct mkfs_plan *p, uint32_t agno)
{
	return agno == p->agcount - 1 ?
		(uint32_t)(p->dblocks - (uint64_t)(p->agcount - 1) * p->agblocks) : p->agblocks;
}

/*
 * Fill *p from the options and the target.  On error returns -EINVAL and
 * writes a sentence naming the problem and the way out into err.
 */
int mkfs_plan(const struct mkfs_opts *o, const struct mkfs_topo *t, struct mkfs_plan *p,
	      char *err, size_t errlen);

/* Layout of AG agno under plan p (AG headers, btree roots, log, AGFL, inodes). */
int mkfs_ag_layout(const struct mkfs_plan *p, uint32_t agno, struct mkfs_ag *ag);

void mkfs_opts_init(struct mkfs_opts *o);

#endif
