/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_MKFS_WRITE_H
#define XFSX_MKFS_WRITE_H

#include <stddef.h>

#include "libfs/format/verify.h"
#include "libfs/io/io.h"
#include "mkfs/plan.h"
#include "mkfs/proto.h"

/*
 * Write the planned filesystem to dev, holding tree when not NULL (-p);
 * logdev: the external log's device (-l logdev=), rtdev: the realtime
 * device (-r rtdev=), NULL when the plan has none.
 * Negative errno, message in err; a failure after the target was touched
 * leaves the primary superblock zeroed (nothing that looks like XFS).
 */
int mkfs_write(struct fs_dev *dev, struct fs_dev *logdev, struct fs_dev *rtdev,
	       const struct mkfs_plan *p, const struct mkfs_opts *o, struct proto_tree *tree,
	       bool progress, char *err, size_t errlen);

/*
 * One metadata object of a buffer about to be written: its CRC stamped and
 * its read verifier run on the new bytes (fs_meta_seal, the check every
 * repair write passes).  0, or -EUCLEAN with err naming the object: the
 * buffer must not be written.  ino: the owner, or an inode buffer's first
 * inode.
 */
int mkfs_seal(const struct fs_geom *g, enum fs_mtype t, fs_agnumber_t agno, fs_ino_t ino,
	      fs_daddr_t daddr, void *buf, uint32_t len, char *err, size_t errlen);

/*
 * Whether XFSX_TEST_FAULT names this fault: the tests make mkfs build a bad
 * block on purpose to show it is refused before it is written
 * (tests/mkfs/verify.sh).
 */
bool mkfs_test_fault(const char *name);

/* Print the geometry in mkfs.xfs's layout. */
void mkfs_print_geometry(const char *target, const char *logdev, const char *rtdev,
			 const struct mkfs_plan *p);

#endif
