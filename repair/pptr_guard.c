// SPDX-License-Identifier: GPL-2.0
/*
 * The parent pointer guard, after the decision (run.c's step): on a
 * filesystem with parent pointers every directory entry has an xattr on
 * the file it names, and this version's namespace and xattr phases do not
 * write those xattrs.  So a plan that rebuilds a directory, moves a file
 * to lost+found, sets a link count, clears or makes an inode, or rebuilds
 * or removes an attr fork is refused before anything is written, naming
 * what it would have changed; one that rewrites only AG headers, btrees
 * and counters is written as usual.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "repair/phase_names.h"
#include "repair/phase_xattrs.h"
#include "repair/pptr_guard.h"
#include "scan/links.h"

/* What the plan changes that parent pointers depend on, as words into why ("" none). */
static void what_changes(const struct repair_ctx *rx, char *why, size_t len)
{
	uint64_t rebuilt = 0, moved = 0, nlinks = 0, clear = 0, attrs = 0, made = 0;
	size_t at = 0;

	repair_names_counts(rx, &rebuilt, &moved, &nlinks);
	attrs = repair_xattrs_rebuilt(rx);
	for (uint64_t s = 0; rx->verdict && rx->sx->links && s < rx->sx->links->nslots; s++) {
		uint8_t v = rx->verdict[s];

		clear += !!(v & RV_CLEAR);
		made += !!(v & RV_NEW);
		rebuilt += !!(v & RV_DIR_NEW) && !rx->nm;
		attrs += !!(v & (RV_ATTR_RESET | RV_ATTR_NEW)) && !rx->xa;
	}
	why[0] = 0;
#define SAY(n, what) \
	do { \
		if ((n) && at < len) \
			at += (size_t)snprintf(why + at, len - at, "%s%" PRIu64 " " what, \
					       at ? ", " : "", (uint64_t)(n)); \
	} while (0)
	SAY(rebuilt, "directory rebuild(s)");
	SAY(moved, "move(s) to lost+found");
	SAY(made, "new inode(s) (lost+found)");
	SAY(nlinks, "link count change(s)");
	SAY(clear, "inode(s) cleared");
	SAY(attrs, "attr fork rebuild(s) or removal(s)");
#undef SAY
}

bool repair_pptr_guard(struct repair_ctx *rx)
{
	char why[256];

	if (!rx->fs->g.parent || !rx->planned_writes)
		return false;
	what_changes(rx, why, sizeof(why));
	if (!why[0])
		return false;
	if (rx->o->dry_run) {
		if (!rx->o->quiet)
			fprintf(stderr, "xfsx_repair: %s: note: this filesystem has parent pointers and "
				"the plan makes %s, which this version does not keep in step with "
				"them: a repair would refuse to write it (xfs_repair 6.10 or later "
				"repairs parent pointer filesystems)\n", rx->path, why);
		return false;
	}
	fprintf(stderr, "xfsx_repair: %s: refusing to write: this filesystem has parent pointers "
		"and the plan makes %s, which this version does not keep in step with them; "
		"nothing was written (xfs_repair 6.10 or later repairs parent pointer "
		"filesystems)\n", rx->path, why);
	rx->refused = true;
	rx->planned_writes = false;
	return true;
}
