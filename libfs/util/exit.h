/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_EXIT_H
#define XFSX_EXIT_H

/*
 * The exit statuses of the tools, after fsck(8), named once for all of
 * them.  libfs never exits: a function returns a negative errno or records
 * a finding, and the tool's main turns that into one of these.
 *   xfsx_check, xfsx_bulkstat  0, 4, 8, 16
 *   xfsx_repair                0, 1, 4, 8, 16 (its xfs_repair personality
 *                              maps them to xfs_repair's own: repair/main.c)
 *   xfsx_undo                  0, 1, 2, 4, 8, 16
 * (xfsx_mkfs exits 0 or 1, as mkfs.xfs.)
 */
enum xfsx_exit {
	XFSX_EXIT_CLEAN = 0,        /* nothing wrong; undo: restored */
	XFSX_EXIT_FIXED = 1,        /* repair: errors found, all fixed */
	XFSX_EXIT_UNDO_REFUSED = 1, /* undo: another device, or one changed since the run */
	XFSX_EXIT_UNDO_BADFILE = 2, /* undo: the undo file damaged, truncated or unreadable */
	XFSX_EXIT_UNCORRECTED = 4,  /* errors left uncorrected: check and bulkstat found
				       corruption, repair did not fix all (or -n) */
	XFSX_EXIT_UNDO_MISMATCH = 4, /* undo: restored, but the first blocks differ from
					before the run */
	XFSX_EXIT_OPERATIONAL = 8,  /* cannot open, refused, an I/O or output error */
	XFSX_EXIT_USAGE = 16,
};

#endif
