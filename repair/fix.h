/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_REPAIR_FIX_H
#define XFSX_REPAIR_FIX_H

#include "repair/plan.h"
#include "repair/rules.h"

/* fix.c: the decision table, one row per fix action (enum fs_fix). */

/* A row's plan rule: what one finding of its action makes of the plan at one step. */
typedef int (*repair_plan_fn)(struct repair_ctx *rx, const struct fs_finding *f, void *arg);
/* A row's covered rule: whether the plan the phases made settles one finding of its action. */
typedef bool (*repair_covered_fn)(const struct repair_ctx *rx, const struct fs_finding *f);

/* What the plan freeing (RV_CLEAR) or making anew (RV_NEW) a finding's inode does to it. */
enum repair_freed {
	REPAIR_FREED_GONE,         /* freed or made anew: whatever was wrong went with it */
	REPAIR_FREED_OWN,          /* freed: its own xattrs or target went with it */
	REPAIR_FREED_NAMES,        /* freed: settled when the namespace was planned (the
				      directories that named it rebuilt, the counts taken) */
	REPAIR_FREED_APART,        /* nothing: the row's covered rule alone decides */
};

#define REPAIR_PLAN_RULES 2        /* the most steps that plan from one action's findings */

struct repair_action {
	enum fs_fix fix;           /* the row's own index: a row left out reads FS_FIX_NONE */
	enum repair_freed freed;
	/* the steps that plan from its findings, each with its rule; none: planned wholesale */
	struct repair_plan_rule {
		enum repair_plan_step step;
		repair_plan_fn plan;
	} plan[REPAIR_PLAN_RULES];
	repair_covered_fn covered;
};

/* The table, indexed by enum fs_fix. */
extern const struct repair_action repair_actions[FS_FIX_NR];

/* The AG a finding is about (its ag, else its daddr's, else its inode's), or FS_NONE. */
int64_t repair_finding_ag(const struct repair_ctx *rx, const struct fs_finding *f);
/* Whether the plan covers a finding: the freed-inode rule, then its row's covered rule. */
bool repair_finding_covered(const struct repair_ctx *rx, const struct fs_finding *f);
/* Mark every finding the plan covers as fixed; returns how many are left. */
size_t repair_decide(struct repair_ctx *rx);
/*
 * The action a fixed finding's report line names: its row's, unless the
 * inode's verdict says otherwise (cleared, or mended where the row clears), or
 * (lost_found) the orphan was named again from its parent pointer: "restored by name".
 */
const char *repair_action_taken(const struct repair_ctx *rx, const struct fs_finding *f);
/* Whether a finding is the dirty log, and -L throws it away (not replayed). */
bool repair_log_thrown_away(const struct repair_ctx *rx, const struct fs_finding *f);

#endif
