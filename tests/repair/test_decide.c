// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of repair's decision table (repair/fix.c) on made-up findings
 * and made-up plans: every fix action has its row; each action's covered
 * rule says covered and not covered as the plan state it reads changes;
 * the freed-inode rule, the superblock's share of the AG findings and the
 * action a report line names; the walk hands findings to the plan rules
 * of one step only.  The namespace plan's own state (which directories
 * were written, which inodes the root reaches) is phase_names.c's: the
 * two questions the table asks of it are answered here (--wrap).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "repair/fix.h"
#include "scan/links.h"
#include "scan/model.h"

/* phase_names.c's answers, as the test sets them */
static bool names_built, names_reached, names_restored, names_moved = true;

bool __wrap_repair_names_built(const struct repair_ctx *rx, uint64_t slot);
bool __wrap_repair_names_reached(const struct repair_ctx *rx, uint64_t slot);
bool __wrap_repair_names_restored_slot(const struct repair_ctx *rx, uint64_t slot);
bool __wrap_repair_names_moved_slot(const struct repair_ctx *rx, uint64_t slot);

bool __wrap_repair_names_moved_slot(const struct repair_ctx *rx, uint64_t slot)
{
	(void)rx;
	return slot != UINT64_MAX && names_moved;
}

bool __wrap_repair_names_restored_slot(const struct repair_ctx *rx, uint64_t slot)
{
	(void)rx;
	return slot != UINT64_MAX && names_restored;
}

bool __wrap_repair_names_built(const struct repair_ctx *rx, uint64_t slot)
{
	(void)rx;
	return slot != UINT64_MAX && names_built;
}

bool __wrap_repair_names_reached(const struct repair_ctx *rx, uint64_t slot)
{
	(void)rx;
	return slot != UINT64_MAX && names_reached;
}

/* One inode chunk, in AG 0 at agino 64: inodes 64..127 are slots 0..63. */
#define AGS 4
#define INO 70              /* slot 6 */
#define SLOT 6
#define NOCHUNK_INO 500     /* in AG 0, in no chunk: no slot */

struct world {
	struct fs fs;
	struct scan_ctx sx;
	struct scan_links links;
	uint64_t ag_base[AGS + 1];
	struct repair_opts o;
	struct fs_findings fl;
	struct repair_ctx rx;
	uint8_t verdict[64];
	struct repair_ag ag[AGS];
	bool rewrite_sb[AGS];
	fs_daddr_t dquot[2];
	struct fs_finding_def def[FS_FIX_NR];
	struct fs_finding_def sb_def;   /* an AG-kind row about the superblock */
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct fs_geom *g;
	struct model_ichunk ic = { .startino = 64, .count = 64, .where = MODEL_IC_INOBT };

	if (!w)
		return -1;
	g = &w->fs.g;
	g->agcount = AGS;
	g->agblocks = g->last_ag_blocks = 1000;
	g->agblklog = 10;
	g->blocklog = 12;
	g->inopblog = 3;
	g->agino_log = g->agblklog + g->inopblog;
	w->sx.fs = &w->fs;
	if (model_create(g, &w->sx.model) || model_add_ichunk(w->sx.model, 0, &ic) ||
	    model_ag_finish_ichunks(w->sx.model, 0))
		return -1;
	for (int a = 1; a <= AGS; a++)
		w->ag_base[a] = 64;
	w->links.nslots = 64;
	w->links.ag_base = w->ag_base;
	w->sx.links = &w->links;
	fs_findings_init(&w->fl);
	w->rx = (struct repair_ctx){ .fs = &w->fs, .fl = &w->fl, .sx = &w->sx, .o = &w->o,
				     .verdict = w->verdict, .ag = w->ag,
				     .rewrite_sb = w->rewrite_sb, .dquot_blocks = w->dquot };
	for (int a = 0; a < FS_FIX_NR; a++)
		w->def[a] = (struct fs_finding_def){ .code = "test.made_up", .obj = FS_OBJ_INODE,
						     .sev = FS_SEV_ERROR, .fix = (enum fs_fix)a,
						     .summary = "made up" };
	w->sb_def = w->def[FS_FIX_AG_BTREES];
	w->sb_def.obj = FS_OBJ_SB;
	names_built = names_reached = false;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	free(w->rx.fixed);
	fs_findings_free(&w->fl);
	model_destroy(w->sx.model);
	free(w);
	return 0;
}

static struct fs_finding finding(struct world *w, enum fs_fix fix, int64_t ag, int64_t ino)
{
	return (struct fs_finding){ .def = &w->def[fix], .ag = ag, .daddr = FS_NONE, .ino = ino,
				    .cause_ino = FS_NONE };
}

static bool covered(struct world *w, const struct fs_finding *f)
{
	return repair_finding_covered(&w->rx, f);
}

/* ---- the table itself ---- */

static void test_every_action_has_a_row(void **state)
{
	(void)state;
	for (int a = 0; a < FS_FIX_NR; a++) {
		const struct repair_action *r = &repair_actions[a];

		if (r->fix != (enum fs_fix)a || !r->covered)
			fail_msg("fix action %s (%d) has no row in repair_actions", fs_fix_name(a), a);
		for (int k = 0; k < REPAIR_PLAN_RULES; k++)
			if (r->plan[k].plan && r->plan[k].step > REPAIR_PLAN_MODEL)
				fail_msg("action %s: a plan rule for no step", fs_fix_name(a));
	}
}

/* No action has two rules for one step: the walk would hand a finding over twice. */
static void test_one_rule_per_step(void **state)
{
	(void)state;
	for (int a = 0; a < FS_FIX_NR; a++)
		for (int j = 0; j < REPAIR_PLAN_RULES; j++)
			for (int k = j + 1; k < REPAIR_PLAN_RULES; k++)
				if (repair_actions[a].plan[j].plan && repair_actions[a].plan[k].plan)
					assert_int_not_equal(repair_actions[a].plan[j].step,
							     repair_actions[a].plan[k].step);
}

/* ---- each action's covered rule, both ways ---- */

static void test_none(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_NONE, 0, INO);

	assert_false(covered(w, &f));
	w->rewrite_sb[0] = w->rx.rewrite_primary = w->ag[0].rebuild = true;
	assert_false(covered(w, &f));
}

static void test_sb(void **state)
{
	struct world *w = *state;
	struct fs_finding sec = finding(w, FS_FIX_SB, 2, FS_NONE);
	struct fs_finding pri = finding(w, FS_FIX_SB, 0, FS_NONE);

	assert_false(covered(w, &sec));
	assert_false(covered(w, &pri));
	w->rewrite_sb[2] = true;
	assert_true(covered(w, &sec));
	assert_false(covered(w, &pri));
	w->rewrite_sb[2] = false;
	w->rx.rewrite_primary = true;
	assert_false(covered(w, &sec));   /* a secondary's copy, not the primary */
	assert_true(covered(w, &pri));
}

static void test_ag_rebuild(void **state)
{
	struct world *w = *state;
	enum fs_fix fixes[] = { FS_FIX_AGHDR, FS_FIX_AG_BTREES };

	for (size_t i = 0; i < 2; i++) {
		struct fs_finding f = finding(w, fixes[i], 1, FS_NONE);

		w->ag[1].rebuild = false;
		assert_false(covered(w, &f));
		w->ag[0].rebuild = w->ag[2].rebuild = true;
		assert_false(covered(w, &f));
		w->ag[1].rebuild = true;
		assert_true(covered(w, &f));
	}
}

/* An AG-kind finding about the primary superblock: the counters settle it, no AG. */
static void test_sb_exception(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_AG_BTREES, 0, FS_NONE);
	struct fs_finding noag = finding(w, FS_FIX_AGHDR, FS_NONE, FS_NONE);

	f.def = &w->sb_def;
	w->ag[0].rebuild = true;
	assert_false(covered(w, &f));
	w->rx.counters = true;
	assert_false(covered(w, &f));     /* counters recomputed, but the primary not written */
	w->rx.rewrite_primary = true;
	assert_true(covered(w, &f));
	/* the same with no AG at all */
	assert_true(covered(w, &noag));
	w->rx.counters = false;
	assert_false(covered(w, &noag));
	/* an AG-kind finding about an AG's own header in AG 0 is that AG's */
	f.def = &w->def[FS_FIX_AG_BTREES];
	f.ag = 0;
	assert_true(covered(w, &f));
	w->ag[0].rebuild = false;
	assert_false(covered(w, &f));
}

static void test_inode_core(void **state)
{
	struct world *w = *state;
	enum fs_fix fixes[] = { FS_FIX_INODE_CLEAR, FS_FIX_INODE_CRC };

	for (size_t i = 0; i < 2; i++) {
		struct fs_finding f = finding(w, fixes[i], 0, INO);

		w->verdict[SLOT] = 0;
		assert_false(covered(w, &f));
		w->verdict[SLOT] = RV_REFLINK | RV_ATTR_RESET;
		assert_false(covered(w, &f));
		w->verdict[SLOT] = RV_FIELDS;
		assert_true(covered(w, &f));
		w->verdict[SLOT] = RV_CLEAR;
		assert_true(covered(w, &f));
		w->verdict[SLOT] = RV_FIELDS;
		f.ino = NOCHUNK_INO;     /* an inode no chunk holds: no verdict */
		assert_false(covered(w, &f));
	}
}

static void test_inode_field(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_INODE_FIELD, 0, INO);

	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_RESET;
	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_REFLINK;
	assert_true(covered(w, &f));
	w->verdict[SLOT] = RV_FIELDS;
	assert_true(covered(w, &f));
}

static void test_fork(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_FORK, 0, INO);
	struct fs_finding agf = finding(w, FS_FIX_FORK, 3, FS_NONE);

	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_REFLINK;
	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_RESET;
	assert_true(covered(w, &f));
	w->verdict[SLOT] = RV_FIELDS;
	assert_true(covered(w, &f));
	/* no inode: two AG structures claim a block, the AG rebuild settles it */
	assert_false(covered(w, &agf));
	w->ag[0].rebuild = true;
	assert_false(covered(w, &agf));
	w->ag[3].rebuild = true;
	assert_true(covered(w, &agf));
}

static void test_dir(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_DIR, 0, INO);
	struct fs_finding noslot = finding(w, FS_FIX_DIR, 0, NOCHUNK_INO);

	assert_false(covered(w, &f));
	names_built = true;
	assert_true(covered(w, &f));
	assert_false(covered(w, &noslot));
	names_built = false;
	/* a DA node of the xattrs: the attr fork rebuilt or removed */
	w->verdict[SLOT] = RV_ATTR_NEW;
	assert_true(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_RESET;
	assert_true(covered(w, &f));
	w->verdict[SLOT] = RV_FIELDS;
	assert_false(covered(w, &f));
}

static void test_parents_nlink(void **state)
{
	struct world *w = *state;
	static char namespace_planned;
	enum fs_fix fixes[] = { FS_FIX_PARENTS, FS_FIX_NLINK };

	for (size_t i = 0; i < 2; i++) {
		struct fs_finding f = finding(w, fixes[i], 0, INO);
		struct fs_finding noslot = finding(w, fixes[i], 0, NOCHUNK_INO);

		w->rx.nm = NULL;
		assert_false(covered(w, &f));
		w->rx.nm = (struct repair_names *)&namespace_planned;
		assert_true(covered(w, &f));
		assert_false(covered(w, &noslot));
	}
	w->rx.nm = NULL;
}

static void test_connect(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_CONNECT, 0, INO);

	assert_false(covered(w, &f));
	names_reached = true;
	assert_true(covered(w, &f));
	f.ino = NOCHUNK_INO;
	assert_false(covered(w, &f));
}

static void test_xattr(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_XATTR, 0, INO);

	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_SALVAGE | RV_FIELDS;   /* salvage asked, not done */
	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_NEW;
	assert_true(covered(w, &f));
	w->verdict[SLOT] = RV_ATTR_RESET;
	assert_true(covered(w, &f));
}

static void test_symlink(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_SYMLINK, 0, INO);

	/* mended in place: the verify scan says whether it is fixed, not the plan */
	w->verdict[SLOT] = RV_FIELDS;
	assert_false(covered(w, &f));
	w->verdict[SLOT] = RV_CLEAR;
	assert_true(covered(w, &f));
}

static void test_unlinked(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_UNLINKED, 2, FS_NONE);

	assert_false(covered(w, &f));
	w->ag[2].rebuild = true;
	assert_false(covered(w, &f));     /* the AGI rewritten, the lists not emptied */
	w->rx.empty_unlinked = true;
	assert_true(covered(w, &f));
	w->ag[2].rebuild = false;
	assert_false(covered(w, &f));
}

static void test_quota(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_QUOTA, 0, INO);

	f.daddr = 4096;
	assert_false(covered(w, &f));
	w->dquot[0] = 8;
	w->rx.ndquot = 1;
	assert_false(covered(w, &f));
	w->dquot[1] = 4096;
	w->rx.ndquot = 2;
	assert_true(covered(w, &f));
	w->rx.ndquot = 0;
	w->rx.quota_unhooked[1] = INO;    /* the superblock stops naming its inode */
	assert_true(covered(w, &f));
}

static void test_rt(void **state)
{
	struct world *w = *state;
	struct fs_finding bm = finding(w, FS_FIX_RT, 0, INO);
	struct fs_finding sum = finding(w, FS_FIX_RT, 0, INO + 1);
	struct fs_finding frext = finding(w, FS_FIX_RT, FS_NONE, FS_NONE);

	w->fs.sb.sb_rbmino = INO;
	w->fs.sb.sb_rsumino = INO + 1;
	w->rx.rt_bitmap_fixed = w->rx.rt_summary_fixed = w->rx.rt_frextents_fixed = true;
	/* not judged: the realtime inodes are not what they should be */
	assert_false(covered(w, &bm));
	assert_false(covered(w, &sum));
	assert_false(covered(w, &frext));
	w->rx.rt_bitmap_remade = true;    /* made again in place */
	assert_true(covered(w, &bm));
	assert_false(covered(w, &sum));
	w->sx.rt.judged = true;
	assert_true(covered(w, &sum));
	assert_true(covered(w, &frext));
	w->rx.rt_summary_fixed = w->rx.rt_frextents_fixed = false;
	assert_false(covered(w, &sum));
	assert_false(covered(w, &frext));
}

static void test_log(void **state)
{
	struct world *w = *state;
	struct fs_finding f = finding(w, FS_FIX_LOG, FS_NONE, FS_NONE);

	assert_false(covered(w, &f));
	assert_false(repair_log_thrown_away(&w->rx, &f));
	w->o.zero_log = true;
	assert_true(covered(w, &f));
	assert_true(repair_log_thrown_away(&w->rx, &f));
	f = finding(w, FS_FIX_SB, 0, FS_NONE);
	assert_false(repair_log_thrown_away(&w->rx, &f));
}

/* ---- the rules next to the table ---- */

/*
 * Whatever is wrong with an inode the plan frees or makes anew is gone
 * with it; not a names finding (freed: the namespace must have been
 * planned; made anew: its own rule), nor the unlinked lists, quota or
 * realtime, whose rules alone decide.
 */
static void test_freed_inode(void **state)
{
	struct world *w = *state;
	static char namespace_planned;

	for (int a = 0; a < FS_FIX_NR; a++) {
		struct fs_finding f = finding(w, (enum fs_fix)a, 0, INO);
		bool gone = a <= FS_FIX_FORK || a == FS_FIX_LOG || a == FS_FIX_PPTR;
		bool own = a == FS_FIX_XATTR || a == FS_FIX_SYMLINK;
		bool names = a >= FS_FIX_DIR && a <= FS_FIX_CONNECT;

		w->rx.nm = NULL;
		w->verdict[SLOT] = 0;
		if (covered(w, &f))
			fail_msg("%s: covered with nothing planned", fs_fix_name(a));
		w->verdict[SLOT] = RV_CLEAR;
		if (covered(w, &f) != (gone || own))
			fail_msg("%s: freed inode: covered %d", fs_fix_name(a), covered(w, &f));
		w->rx.nm = (struct repair_names *)&namespace_planned;
		if (covered(w, &f) != (gone || own || names))
			fail_msg("%s: freed inode, namespace planned: covered %d", fs_fix_name(a),
				 covered(w, &f));
		w->rx.nm = NULL;
		w->verdict[SLOT] = RV_NEW;
		if (covered(w, &f) != gone)
			fail_msg("%s: inode made anew: covered %d", fs_fix_name(a), covered(w, &f));
	}
	w->verdict[SLOT] = 0;
}

static void test_action_taken(void **state)
{
	struct world *w = *state;
	struct fs_finding field = finding(w, FS_FIX_INODE_FIELD, 0, INO);
	struct fs_finding clear = finding(w, FS_FIX_INODE_CLEAR, 0, INO);
	struct fs_finding dir = finding(w, FS_FIX_DIR, 0, INO);
	struct fs_finding sb = finding(w, FS_FIX_SB, 0, FS_NONE);
	struct fs_finding fork = finding(w, FS_FIX_FORK, 0, INO);

	assert_string_equal(repair_action_taken(&w->rx, &sb), "sb");
	assert_string_equal(repair_action_taken(&w->rx, &field), "inode_field");
	assert_string_equal(repair_action_taken(&w->rx, &fork), "fork");
	{
		/* an orphan named again from its parent pointer, not moved to lost+found */
		struct fs_finding conn = finding(w, FS_FIX_CONNECT, 0, INO);

		assert_string_equal(repair_action_taken(&w->rx, &conn), "lost_found");
		names_restored = true;
		assert_string_equal(repair_action_taken(&w->rx, &conn), "restored by name");
		names_restored = false;
		/* reached without a move: its directory, walked once mended, names it */
		names_reached = true;
		names_moved = false;
		assert_string_equal(repair_action_taken(&w->rx, &conn), "kept in its directory");
		names_moved = true;
		assert_string_equal(repair_action_taken(&w->rx, &conn), "lost_found");
		names_reached = false;
	}
	/* a row that clears, on an inode its repair mended */
	w->verdict[SLOT] = RV_FIELDS;
	assert_string_equal(repair_action_taken(&w->rx, &clear), "inode_field");
	/* any inode finding settled by clearing the inode */
	w->verdict[SLOT] = RV_CLEAR;
	assert_string_equal(repair_action_taken(&w->rx, &clear), "inode_clear");
	assert_string_equal(repair_action_taken(&w->rx, &field), "inode_clear");
	assert_string_equal(repair_action_taken(&w->rx, &fork), "inode_clear");
	/* not a names finding: what the namespace did is named */
	assert_string_equal(repair_action_taken(&w->rx, &dir), "dir");
	/* with no inode a cleared verdict is nobody's */
	assert_string_equal(repair_action_taken(&w->rx, &sb), "sb");
}

/* ---- the walk and the decision ---- */

/* Into the plan's findings (the code is any: only the made-up row is read). */
static void add(struct world *w, struct fs_finding f)
{
	assert_int_equal(fs_report(&w->fl, FS_C_SB_MAGIC, f.ag, f.daddr, f.ino, NULL, NULL, NULL,
				   NULL), 0);
	w->fl.v[w->fl.n - 1].def = f.def;
}

static void test_walk(void **state)
{
	struct world *w = *state;
	struct fs_finding f;
	fs_ino_t rt_ino = INO;

	add(w, finding(w, FS_FIX_SB, 2, FS_NONE));
	add(w, finding(w, FS_FIX_SB, 0, FS_NONE));
	add(w, finding(w, FS_FIX_AGHDR, 1, FS_NONE));
	f = finding(w, FS_FIX_AG_BTREES, 0, FS_NONE);
	f.def = &w->sb_def;
	add(w, f);
	add(w, finding(w, FS_FIX_FORK, 3, FS_NONE));
	add(w, finding(w, FS_FIX_UNLINKED, 2, FS_NONE));
	add(w, finding(w, FS_FIX_NONE, 0, FS_NONE));
	assert_int_equal(w->fl.n, 7);

	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_SB, NULL), 0);
	assert_true(w->rewrite_sb[2]);
	assert_false(w->rewrite_sb[1] || w->rewrite_sb[3]);
	assert_true(w->rx.rewrite_primary);
	assert_false(w->ag[1].rebuild);   /* not this step's */

	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_AGS, NULL), 0);
	assert_true(w->ag[1].rebuild);
	assert_true(w->rx.counters);      /* the superblock's, not AG 0's */
	assert_false(w->ag[0].rebuild);
	assert_true(w->ag[3].rebuild);
	assert_false(w->ag[2].rebuild);   /* the lists are not emptied */
	w->rx.empty_unlinked = true;
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_AGS, NULL), 0);
	assert_true(w->ag[2].rebuild);

	/* the questions: a report-only finding about an inode, an rt inode's finding */
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_MODEL, NULL), 0);
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_RT, &rt_ino), 0);
	add(w, finding(w, FS_FIX_NONE, 0, INO));
	add(w, finding(w, FS_FIX_RT, 0, INO));
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_MODEL, NULL), 1);
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_RT, &rt_ino), 1);
	rt_ino = INO + 1;
	assert_int_equal(repair_plan_findings(&w->rx, REPAIR_PLAN_RT, &rt_ino), 0);

	/* the decision over them: fixed per finding, the rest counted left */
	assert_int_equal(repair_decide(&w->rx), 3);   /* the two report-only ones and rt */
	for (size_t i = 0; i < 6; i++)
		assert_true(w->rx.fixed[i]);
	for (size_t i = 6; i < 9; i++)
		assert_false(w->rx.fixed[i]);
	/* an info finding left is not counted */
	w->def[FS_FIX_RT].sev = FS_SEV_INFO;
	assert_int_equal(repair_decide(&w->rx), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_action_has_a_row),
		cmocka_unit_test(test_one_rule_per_step),
		cmocka_unit_test_setup_teardown(test_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ag_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sb_exception, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inode_core, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inode_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parents_nlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlinked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freed_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
