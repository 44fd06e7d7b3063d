/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_RULES_H
#define XFSX_REPAIR_RULES_H

#include "repair/plan.h"

/*
 * What a phase needs of the decision table (fix.c): the points at which
 * the phases plan from findings, and the walk that hands every finding to
 * its fix action's plan rule for one of them.  fix.c holds the table and
 * includes the phases' headers for their rules; a phase includes this
 * header, never fix.h, so the table sits above the phases.
 */
enum repair_plan_step {
	REPAIR_PLAN_SB,            /* phase_sb.c: which superblock copies are rewritten */
	REPAIR_PLAN_SB_FIELDS,     /* phase_sb.c: the primary's fields taken from the vote */
	REPAIR_PLAN_INODES,        /* phase_inodes.c: the verdicts (arg: its suspect bytes) */
	REPAIR_PLAN_NAMES,         /* phase_names.c: which directories are rebuilt, and (parent
				      feature) which files' parent pointers are rewritten */
	REPAIR_PLAN_QUOTA,         /* phase_quota.c: which dquot blocks are rewritten */
	REPAIR_PLAN_RT,            /* phase_rt.c: whether a realtime inode (arg: its number)
				      has findings, so is made again */
	REPAIR_PLAN_AGS,           /* phase_rebuild.c: which AGs are rebuilt, and whether the
				      superblock counters are */
	REPAIR_PLAN_MODEL,         /* place.c: whether the model misses owners (a finding
				      about an inode the scan could not read) */
};

/*
 * Every finding, in order, whose action's row has a plan rule for step,
 * through that rule.  A rule returns 0 to go on, a negative errno to stop
 * (returned), or a positive answer to stop (returned: a question answered).
 */
int repair_plan_findings(struct repair_ctx *rx, enum repair_plan_step step, void *arg);

#endif
