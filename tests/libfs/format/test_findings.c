// SPDX-License-Identifier: GPL-2.0
/*
 * Findings: the table's integrity (unique, well-formed codes; the enum
 * indexes it; lookups), the flags rows carry, fs_report's contract (codes
 * out of range refused, strings bounded, severity counts), typed values,
 * the shared reporter, ordering, and the text and JSON renderings of the same records,
 * down to the JSON string escapes.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfs/format/findings.h"

/* Render with fn into a string the caller frees. */
static char *render(void (*fn)(const struct fs_findings *, FILE *), const struct fs_findings *fl)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	assert_non_null(f);
	fn(fl, f);
	fclose(f);
	return s;
}

static char *json_str(const char *in)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	assert_non_null(f);
	fs_json_string(f, in);
	fclose(f);
	return s;
}

static void test_table_integrity(void **state)
{
	size_t n;
	const struct fs_finding_def *t = fs_finding_table(&n);

	(void)state;
	assert_true(n > 40);
	for (size_t i = 0; i < n; i++) {
		const char *c = t[i].code, *dot = strchr(c, '.');

		/* "<object>.<problem>": lower case, digits and underscores */
		assert_non_null(dot);
		assert_true(dot > c && dot[1]);
		assert_null(strchr(dot + 1, '.'));
		for (const char *p = c; *p; p++)
			assert_true(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
				    *p == '_' || *p == '.');
		assert_true(t[i].sev == FS_SEV_INFO || t[i].sev == FS_SEV_WARNING ||
			    t[i].sev == FS_SEV_ERROR);
		assert_non_null(t[i].summary);
		assert_true(strlen(t[i].summary) > 10);
		/* unique, and lookup finds this very row */
		for (size_t j = i + 1; j < n; j++)
			if (!strcmp(c, t[j].code))
				fail_msg("duplicate finding code %s", c);
		assert_ptr_equal(fs_finding_lookup(c), &t[i]);
		/* the enum indexes the table; the code names its object class */
		assert_int_equal(t[i].id, i);
		assert_ptr_equal(fs_finding_def((enum fs_code)i), &t[i]);
		assert_string_equal(fs_code_name((enum fs_code)i), c);
		assert_true((unsigned)t[i].obj < FS_OBJ_NR);
		for (size_t j = 0; j < i; j++)
			if (t[j].obj == t[i].obj)
				assert_memory_equal(t[j].code, c, (size_t)(dot - c + 1));
	}
	assert_int_equal(n, FS_C_NR);
	assert_null(fs_finding_def(FS_C_NR));
	assert_string_equal(fs_code_name(FS_C_NR), "unknown");
	/* names derived from the code string: FS_C_SB_MAGIC is "sb.magic" */
	assert_string_equal(fs_code_name(FS_C_SB_MAGIC), "sb.magic");
	assert_string_equal(fs_code_name(FS_C_REFCOUNT_COW_LEFTOVER), "refcount.cow_leftover");
	assert_int_equal(fs_finding_def(FS_C_SB_COUNTERS)->obj, FS_OBJ_SB);
	assert_int_equal(fs_finding_def(FS_C_LOG_DIRTY)->obj, FS_OBJ_LOG);
	assert_int_equal(fs_finding_def(FS_C_ATTRRMT_LSN)->obj, FS_OBJ_ATTRRMT);
	assert_null(fs_finding_lookup("agf.nonexistent"));
	assert_null(fs_finding_lookup(""));
	assert_null(fs_finding_lookup("agf"));
	/* codes the verifiers and check use */
	{
		static const char *const need[] = {
			"sb.magic", "sb.crc", "sb.version", "sb.feature", "sb.geometry", "sb.log",
			"sb.inodes", "sb.counter", "sb.secondary", "sb.uuid", "sb.primary_bad",
			"sb.garbage", "sb.unreadable",
			"agf.magic", "agf.crc", "agf.uuid", "agf.lsn", "agf.seqno", "agf.length",
			"agf.freelist", "agf.freeblks", "agf.levels", "agf.root", "agf.btreeblks",
			"agi.magic", "agi.crc", "agi.uuid", "agi.lsn", "agi.seqno", "agi.length",
			"agi.count", "agi.levels", "agi.root", "agi.newino", "agi.unlinked",
			"agfl.magic", "agfl.crc", "agfl.uuid", "agfl.lsn", "agfl.seqno", "agfl.bno",
			"log.dirty",
		};
		for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			if (!fs_finding_lookup(need[i]))
				fail_msg("missing finding code %s", need[i]);
	}
	assert_int_equal(fs_finding_lookup("log.dirty")->sev, FS_SEV_WARNING);
}

/* Every row names a fix action, by family; names are distinct and stable. */
static void test_fix_actions(void **state)
{
	static const struct { const char *code; enum fs_fix fix; } want[] = {
		/*
		 * sb.feature: unknown bits are refused before a repair plans
		 * anything; the rest (flags, bad_features2, features2's CRC bit)
		 * is mended by rewriting the superblock
		 */
		{ "sb.unreadable", FS_FIX_NONE }, { "sb.feature", FS_FIX_SB },
		{ "sb.magic", FS_FIX_SB }, { "sb.secondary", FS_FIX_SB },
		{ "agf.magic", FS_FIX_AGHDR }, { "agi.newino", FS_FIX_AGHDR },
		{ "agf.root", FS_FIX_AG_BTREES }, { "agf.freeblks", FS_FIX_AG_BTREES },
		{ "agfl.bno", FS_FIX_AG_BTREES }, { "bnobt.crc", FS_FIX_AG_BTREES },
		{ "cntbt.order", FS_FIX_AG_BTREES }, { "inobt.rec", FS_FIX_AG_BTREES },
		{ "finobt.mismatch", FS_FIX_AG_BTREES }, { "rmapbt.magic", FS_FIX_AG_BTREES },
		{ "refcbt.rec", FS_FIX_AG_BTREES }, { "freesp.overlap", FS_FIX_AG_BTREES },
		{ "rmap.missing", FS_FIX_AG_BTREES }, { "refcount.extra", FS_FIX_AG_BTREES },
		{ "block.leak", FS_FIX_AG_BTREES },
		{ "inode.magic", FS_FIX_INODE_FIELD }, { "inode.ino", FS_FIX_INODE_CLEAR },
		{ "inode.crc", FS_FIX_INODE_CRC },
		{ "inode.nblocks", FS_FIX_INODE_FIELD }, { "inode.nextents", FS_FIX_INODE_FIELD },
		{ "bmap.startblock", FS_FIX_FORK }, { "bmbt.crc", FS_FIX_FORK },
		{ "dir.bad_hash", FS_FIX_DIR }, { "attr.crc", FS_FIX_XATTR },
		{ "inode.nlink", FS_FIX_NLINK }, { "unlinked.orphan", FS_FIX_CONNECT },
		{ "dir.hardlink", FS_FIX_PARENTS }, { "inode.unreachable", FS_FIX_CONNECT },
		{ "symlink.magic", FS_FIX_SYMLINK }, { "unlinked.pending", FS_FIX_UNLINKED },
		{ "dquot.crc", FS_FIX_QUOTA }, { "rt.inode", FS_FIX_RT },
		{ "log.dirty", FS_FIX_LOG },
	};
	size_t n;
	const struct fs_finding_def *t = fs_finding_table(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_true((unsigned)t[i].fix < FS_FIX_NR);
		/* unreadable AG headers and the format's own limits: nothing to rewrite */
		if (!strcmp(t[i].code, "sb.version") || !strcmp(t[i].code, "agf.unreadable"))
			assert_int_equal(t[i].fix, FS_FIX_NONE);
		/* every btree block problem is fixed by rebuilding the AG's trees */
		if (!strncmp(t[i].code, "bnobt.", 6) || !strncmp(t[i].code, "rmapbt.", 7) ||
		    !strncmp(t[i].code, "finobt.", 7))
			assert_int_equal(t[i].fix, FS_FIX_AG_BTREES);
		if ((!strncmp(t[i].code, "dir.", 4) && strcmp(t[i].code, "dir.hardlink")) ||
		    !strncmp(t[i].code, "da.", 3))
			assert_int_equal(t[i].fix, FS_FIX_DIR);
		if (!strncmp(t[i].code, "bmap.", 5) || !strncmp(t[i].code, "bmbt.", 5))
			assert_int_equal(t[i].fix, FS_FIX_FORK);
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct fs_finding_def *d = fs_finding_lookup(want[i].code);

		assert_non_null(d);
		if (d->fix != want[i].fix)
			fail_msg("%s: fix %s, want %s", want[i].code, fs_fix_name(d->fix),
				 fs_fix_name(want[i].fix));
	}
	for (int a = 0; a < FS_FIX_NR; a++) {
		assert_true(strlen(fs_fix_name((enum fs_fix)a)) > 1);
		for (int b = a + 1; b < FS_FIX_NR; b++)
			assert_string_not_equal(fs_fix_name((enum fs_fix)a), fs_fix_name((enum fs_fix)b));
	}
	assert_string_equal(fs_fix_name(FS_FIX_NONE), "none");
	assert_string_equal(fs_fix_name(FS_FIX_AG_BTREES), "ag_btrees");
	assert_string_equal(fs_fix_name(FS_FIX_NR), "unknown");
}

static void test_report_unknown(void **state)
{
	struct fs_findings fl;

	(void)state;
	fs_findings_init(&fl);
	assert_int_equal(fs_report(&fl, FS_C_NR, 1, 2, 3, "f", "e", "x", "m"), -EINVAL);
	assert_int_equal(fs_report(&fl, (enum fs_code)-1, 1, 2, 3, NULL, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(fl.n, 0);
	assert_int_equal(fs_findings_count(&fl, FS_SEV_INFO), 0);
	assert_false(fs_findings_has(&fl, FS_C_NR));
	fs_findings_free(&fl);
}

/* Flags by row: what repair and the scan read instead of lists of codes. */
static void test_flags(void **state)
{
	size_t n;
	const struct fs_finding_def *t = fs_finding_table(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const char *dot = strchr(t[i].code, '.');

		/* the check flags are exactly the rows of those checks */
		assert_int_equal(!!(t[i].flags & FS_FL_LSN), !strcmp(dot, ".lsn"));
		assert_int_equal(!!(t[i].flags & FS_FL_CRC), !strcmp(dot, ".crc"));
		assert_int_equal(!!(t[i].flags & FS_FL_UUID), !strcmp(dot, ".uuid"));
		if (t[i].flags & (FS_FL_MEND_IF_IDENTIFIED | FS_FL_IDENTITY | FS_FL_KEEPS_FORKS))
			assert_int_equal(t[i].obj, FS_OBJ_INODE);
		if (t[i].flags & FS_FL_IDENTITY)
			assert_true(t[i].flags & FS_FL_MEND_IF_IDENTIFIED);
		if (t[i].flags & FS_FL_MEND_IF_IDENTIFIED)
			assert_int_equal(t[i].fix, FS_FIX_INODE_FIELD);
	}
	assert_true(fs_finding_def(FS_C_INODE_MAGIC)->flags & FS_FL_IDENTITY);
	assert_true(fs_finding_def(FS_C_INODE_VERSION)->flags & FS_FL_IDENTITY);
	assert_false(fs_finding_def(FS_C_INODE_FLAGS)->flags & FS_FL_IDENTITY);
	assert_true(fs_finding_def(FS_C_INODE_FLAGS)->flags & FS_FL_MEND_IF_IDENTIFIED);
	assert_false(fs_finding_def(FS_C_INODE_SIZE)->flags & FS_FL_MEND_IF_IDENTIFIED);
	assert_true(fs_finding_def(FS_C_UNLINKED_LINKED)->flags & FS_FL_KEEPS_CONTENTS);
	assert_true(fs_finding_def(FS_C_INODE_SIZE)->flags & FS_FL_KEEPS_FORKS);
	assert_false(fs_finding_def(FS_C_INODE_SIZE)->flags & FS_FL_KEEPS_CONTENTS);
	assert_true(fs_finding_def(FS_C_BLOCK_DUP)->flags & FS_FL_INTENT);
	assert_false(fs_finding_def(FS_C_REFCOUNT_COW_LEFTOVER)->flags & FS_FL_INTENT);
	assert_true(fs_finding_def(FS_C_RMAPBT_LOOP)->flags & FS_FL_SKIPS_SUBTREE);
	assert_false(fs_finding_def(FS_C_RMAPBT_KEY)->flags & FS_FL_SKIPS_SUBTREE);
	assert_false(fs_finding_def(FS_C_RMAPBT_SIBLING)->flags & FS_FL_SKIPS_SUBTREE);
}

/* Typed values travel with the record; the reporter puts its place and prefix on each finding. */
static void test_typed_and_reporter(void **state)
{
	struct fs_findings fl, copy;
	struct fs_typed val = { .fork = FS_FORK_ATTR, .field = 7, .has = FS_HAS_FOUND, .found = 42,
				.found_range = { 10, 5 } };
	struct fs_reporter r = { .ag = 2, .daddr = 0x80, .ino = 131, .prefix = "AGF" };

	(void)state;
	fs_findings_init(&fl);
	fs_findings_init(&copy);
	assert_int_equal(fs_report_val(&fl, &val, FS_C_RMAP_EXTRA, 1, 2, 3, "rmap record", NULL,
				       "10+5 owner 3", "m"), 0);
	assert_int_equal(fl.v[0].code, FS_C_RMAP_EXTRA);
	assert_int_equal(fl.v[0].val.fork, FS_FORK_ATTR);
	assert_int_equal(fl.v[0].val.field, 7);
	assert_int_equal(fl.v[0].val.has, FS_HAS_FOUND);
	assert_int_equal(fl.v[0].val.found, 42);
	assert_int_equal(fl.v[0].val.found_range.start, 10);
	assert_int_equal(fl.v[0].val.found_range.len, 5);
	assert_int_equal(fl.v[0].val.expected_range.len, 0);
	/* a plain report carries nothing typed */
	assert_int_equal(fs_report(&fl, FS_C_AGF_CRC, 1, 2, FS_NONE, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(fl.v[1].val.fork, FS_FORK_NONE);
	assert_int_equal(fl.v[1].val.has, 0);
	/* a copy is the record as it was */
	assert_int_equal(fs_findings_add(&copy, &fl.v[0]), 0);
	assert_int_equal(copy.n, 1);
	assert_int_equal(copy.by_sev[FS_SEV_ERROR], 1);
	assert_ptr_equal(copy.v[0].def, fs_finding_def(FS_C_RMAP_EXTRA));
	assert_int_equal(copy.v[0].code, fl.v[0].code);
	assert_int_equal(copy.v[0].ag, fl.v[0].ag);
	assert_int_equal(copy.v[0].daddr, fl.v[0].daddr);
	assert_int_equal(copy.v[0].ino, fl.v[0].ino);
	assert_memory_equal(&copy.v[0].val, &fl.v[0].val, sizeof(fl.v[0].val));
	assert_string_equal(copy.v[0].field, fl.v[0].field);
	assert_string_equal(copy.v[0].expected, fl.v[0].expected);
	assert_string_equal(copy.v[0].found, fl.v[0].found);
	assert_string_equal(copy.v[0].message, fl.v[0].message);
	assert_ptr_not_equal(copy.v[0].strs, fl.v[0].strs);	/* its own strings */

	r.fl = &fl;
	fs_reporter_bad(&r, FS_C_AGF_SEQNO, "seqno", "2", "3", "sequence number %s", "wrong");
	r.prefix = NULL;
	r.fork = FS_FORK_DATA;
	fs_reporter_bad(&r, FS_C_AGF_LENGTH, NULL, NULL, NULL, NULL);
	fs_reporter_bad(&r, FS_C_NR, NULL, NULL, NULL, "x");
	assert_int_equal(r.n, 3);
	assert_int_equal(fl.n, 4);
	assert_int_equal(fl.v[2].code, FS_C_AGF_SEQNO);
	assert_int_equal(fl.v[2].ag, 2);
	assert_int_equal(fl.v[2].daddr, 0x80);
	assert_int_equal(fl.v[2].ino, 131);
	assert_string_equal(fl.v[2].field, "seqno");
	assert_string_equal(fl.v[2].message, "AGF: sequence number wrong");
	assert_string_equal(fl.v[3].message, fs_finding_def(FS_C_AGF_LENGTH)->summary);
	assert_int_equal(fl.v[3].val.fork, FS_FORK_DATA);
	fs_findings_free(&copy);
	fs_findings_free(&fl);
}

static void test_report_fields(void **state)
{
	struct fs_findings fl;
	char big[600];

	(void)state;
	fs_findings_init(&fl);
	assert_int_equal(fs_report(&fl, FS_C_AGF_CRC, 1, 0x40001, FS_NONE, "crc", FS_X(0xabc),
				   FS_U(42), "AGF %s %d", "CRC", 7), 0);
	assert_int_equal(fl.n, 1);
	assert_string_equal(fl.v[0].def->code, "agf.crc");
	assert_int_equal(fl.v[0].ag, 1);
	assert_int_equal(fl.v[0].daddr, 0x40001);
	assert_int_equal(fl.v[0].ino, FS_NONE);
	assert_string_equal(fl.v[0].field, "crc");
	assert_string_equal(fl.v[0].expected, "0xabc");
	assert_string_equal(fl.v[0].found, "42");
	assert_string_equal(fl.v[0].message, "AGF CRC 7");

	/* NULL strings are empty; a NULL format takes the table's summary */
	assert_int_equal(fs_report(&fl, FS_C_AGI_DIRINO, 2, FS_NONE, FS_NONE, NULL, NULL, NULL, NULL), 0);
	assert_string_equal(fl.v[1].field, "");
	assert_string_equal(fl.v[1].expected, "");
	assert_string_equal(fl.v[1].found, "");
	assert_string_equal(fl.v[1].message, fs_finding_lookup("agi.dirino")->summary);

	/* over-long strings are cut, never overflow */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(fs_report(&fl, FS_C_SB_GEOMETRY, 0, 0, 0, big, big, big, "%s", big), 0);
	assert_int_equal(strlen(fl.v[2].field), FS_FINDING_FIELD_MAX - 1);
	assert_int_equal(strlen(fl.v[2].expected), FS_FINDING_EXPECTED_MAX - 1);
	assert_int_equal(strlen(fl.v[2].found), FS_FINDING_FOUND_MAX - 1);
	assert_int_equal(strlen(fl.v[2].message), FS_FINDING_MESSAGE_MAX - 1);

	/* severity counts */
	assert_int_equal(fs_report(&fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(fl.by_sev[FS_SEV_ERROR], 3);
	assert_int_equal(fl.by_sev[FS_SEV_WARNING], 1);
	assert_int_equal(fs_findings_count(&fl, FS_SEV_ERROR), 3);
	assert_int_equal(fs_findings_count(&fl, FS_SEV_WARNING), 4);
	assert_int_equal(fs_findings_count(&fl, FS_SEV_INFO), 4);
	assert_true(fs_findings_has(&fl, FS_C_LOG_DIRTY));
	assert_true(fs_findings_has(&fl, FS_C_AGF_CRC));
	assert_false(fs_findings_has(&fl, FS_C_AGF_MAGIC));
	fs_findings_free(&fl);
}

static void test_number_formats(void **state)
{
	(void)state;
	assert_string_equal(FS_U(0), "0");
	assert_string_equal(FS_U(UINT64_MAX), "18446744073709551615");
	assert_string_equal(FS_X(0), "0x0");
	assert_string_equal(FS_X(0x58465342), "0x58465342");
	assert_string_equal(FS_X(UINT64_MAX), "0xffffffffffffffff");
}

static void test_growth(void **state)
{
	struct fs_findings fl;

	(void)state;
	fs_findings_init(&fl);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(fs_report(&fl, FS_C_AGFL_BNO, i % 7, i, FS_NONE, NULL, NULL, NULL, "n%d", i), 0);
	assert_int_equal(fl.n, 1000);
	assert_int_equal(fl.dropped, 0);
	assert_string_equal(fl.v[999].message, "n999");
	fs_findings_free(&fl);
}

struct thr { struct fs_findings *fl; int id; };

static void *reporter(void *arg)
{
	struct thr *t = arg;
	for (int i = 0; i < 500; i++)
		fs_report(t->fl, FS_C_AGI_UNLINKED, t->id, i, FS_NONE, NULL, NULL, NULL, NULL);
	return NULL;
}

/* Workers report into one list: nothing lost, nothing torn. */
static void test_threads(void **state)
{
	struct fs_findings fl;
	pthread_t th[4];
	struct thr a[4];
	size_t per[4] = { 0 };

	(void)state;
	fs_findings_init(&fl);
	for (int i = 0; i < 4; i++) {
		a[i] = (struct thr){ &fl, i };
		assert_int_equal(pthread_create(&th[i], NULL, reporter, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(fl.n, 2000);
	assert_int_equal(fl.by_sev[FS_SEV_ERROR], 2000);
	for (size_t i = 0; i < fl.n; i++) {
		assert_in_range(fl.v[i].ag, 0, 3);
		per[fl.v[i].ag]++;
		assert_string_equal(fl.v[i].def->code, "agi.unlinked");
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(per[i], 500);
	fs_findings_free(&fl);
}

static void test_sort(void **state)
{
	struct fs_findings fl;

	(void)state;
	fs_findings_init(&fl);
	fs_report(&fl, FS_C_AGI_CRC, 2, 16, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_AGF_CRC, 2, 8, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_AGF_SEQNO, 2, 8, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_AGF_MAGIC, 2, 8, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_SB_SECONDARY, 1, FS_NONE, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_SB_CRC, 0, 0, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, NULL, NULL, NULL, NULL);
	fs_findings_sort(&fl);
	/* log first, then by AG, sector, inode, and table order within one sector */
	assert_string_equal(fl.v[0].def->code, "log.dirty");
	assert_string_equal(fl.v[1].def->code, "sb.crc");
	assert_string_equal(fl.v[2].def->code, "sb.secondary");
	assert_string_equal(fl.v[3].def->code, "agf.magic");
	assert_string_equal(fl.v[4].def->code, "agf.crc");
	assert_string_equal(fl.v[5].def->code, "agf.seqno");
	assert_string_equal(fl.v[6].def->code, "agi.crc");
	fs_findings_free(&fl);
}

static void test_text(void **state)
{
	struct fs_findings fl;
	char *s;

	(void)state;
	fs_findings_init(&fl);
	fs_report(&fl, FS_C_AGF_FREEBLKS, 1, 0x40001, FS_NONE, "freeblks", "<= AG length", "99999",
		  "AGF: more free blocks than the AG holds");
	fs_report(&fl, FS_C_AGI_DIRINO, 3, FS_NONE, 131, "dirino", NULL, NULL, "dirino set");
	fs_report(&fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, FS_NONE, NULL, NULL, NULL, NULL);
	fs_report(&fl, FS_C_SB_UUID, 2, FS_NONE, FS_NONE, "uuid", NULL, "x", "uuid differs");
	s = render(fs_findings_write_text, &fl);
	assert_string_equal(s,
		"error: agf.freeblks: AG 1 daddr 0x40001: AGF: more free blocks than the AG holds"
		" [freeblks: expected <= AG length, found 99999]\n"
		"error: agi.dirino: AG 3 inode 131: dirino set [dirino]\n"
		"warning: log.dirty: log is dirty: mount the filesystem to replay it; later findings may be spurious\n"
		"error: sb.uuid: AG 2: uuid differs [uuid: expected ?, found x]\n");
	free(s);
	/* records not kept are said */
	fl.dropped = 3;
	s = render(fs_findings_write_text, &fl);
	assert_non_null(strstr(s, "error: 3 further findings were not kept (out of memory)\n"));
	free(s);
	fs_findings_free(&fl);

	/* nothing to say: nothing written */
	fs_findings_init(&fl);
	s = render(fs_findings_write_text, &fl);
	assert_string_equal(s, "");
	free(s);
	fs_findings_free(&fl);
}

static void test_json(void **state)
{
	struct fs_findings fl;
	char *s;

	(void)state;
	fs_findings_init(&fl);
	s = render(fs_findings_write_json_array, &fl);
	assert_string_equal(s, "[]");
	free(s);

	fs_report(&fl, FS_C_AGF_FREEBLKS, 1, 0x40001, FS_NONE, "freeblks", "<= AG length", "99999",
		  "AGF: \"quoted\"");
	fs_report(&fl, FS_C_LOG_DIRTY, FS_NONE, FS_NONE, 7, NULL, NULL, NULL, "tab\there");
	s = render(fs_findings_write_json_array, &fl);
	assert_string_equal(s,
		"[{\"code\":\"agf.freeblks\",\"severity\":\"error\",\"ag\":1,\"daddr\":262145,\"ino\":null,"
		"\"field\":\"freeblks\",\"expected\":\"<= AG length\",\"found\":\"99999\","
		"\"message\":\"AGF: \\\"quoted\\\"\",\"fixable\":true,\"fix\":\"ag_btrees\",\"cause\":null,\"group\":null},"
		"{\"code\":\"log.dirty\",\"severity\":\"warning\",\"ag\":null,\"daddr\":null,\"ino\":7,"
		"\"field\":null,\"expected\":null,\"found\":null,\"message\":\"tab\\there\",\"fixable\":true,\"fix\":\"log\",\"cause\":null,\"group\":null}]");
	free(s);
	fs_findings_free(&fl);
}

static void write_text_verbose(const struct fs_findings *fl, FILE *out)
{
	fs_findings_write_text_v(fl, out, 1);
}

/* one place format: AG, inode, daddr in hex, only the parts that apply */
static void test_place(void **state)
{
	char b[FS_PLACE_LEN];

	(void)state;
	assert_string_equal(fs_place(b, sizeof(b), 1, 131, 0x80040), "AG 1 inode 131 daddr 0x80040");
	assert_string_equal(fs_place(b, sizeof(b), FS_NONE, 131, FS_NONE), "inode 131");
	assert_string_equal(fs_place(b, sizeof(b), 2, FS_NONE, 16), "AG 2 daddr 0x10");
	assert_string_equal(fs_place(b, sizeof(b), FS_NONE, FS_NONE, FS_NONE), "");
	/* a short buffer keeps whole parts */
	assert_string_equal(fs_place(b, 12, 1, 131, 16), "AG 1");
}

/*
 * The many findings of one block go under the first of them; the many of
 * one code with no cause under the first of that code; few stay lines of
 * their own.  -v (verbose) prints every line; JSON keeps every record and
 * counts each group.
 */
static void test_grouped_block_code(void **state)
{
	struct fs_findings fl;
	char *s;

	(void)state;
	fs_findings_init(&fl);
	fs_report(&fl, FS_C_ATTR_COUNT, 0, 0x70, 131, "count", NULL, NULL, "count bad");
	for (int i = 0; i < 40; i++)
		fs_report(&fl, FS_C_ATTR_NAMEIDX, 0, 0x70, 131, NULL, NULL, NULL, "name %d", i);
	for (int i = 0; i < 3; i++)	/* three in one block: not grouped */
		fs_report(&fl, FS_C_ATTR_NAMEIDX, 0, 0x90, 132, NULL, NULL, NULL, "few %d", i);
	for (int i = 0; i < 12; i++)
		fs_report(&fl, FS_C_INODE_UNREACHABLE, 1, FS_NONE, 5000 + i, NULL, NULL, NULL,
			  "lost %d", i);
	fs_findings_sort(&fl);
	s = render(fs_findings_write_text, &fl);
	assert_non_null(strstr(s, "error: attr.count: AG 0 inode 131 daddr 0x70: count bad [count]\n"
			       "  ... and 40 more findings in the same block: 40 attr.nameidx; "
			       "-v lists them\n"));
	assert_null(strstr(s, "name 0"));
	assert_non_null(strstr(s, "few 0") && strstr(s, "few 2"));
	assert_non_null(strstr(s, "lost 0\n  ... and 11 more findings of the same kind: 11 "
			       "inode.unreachable (inodes 5001, 5002, 5003, 5004, 5005, ...); "
			       "-v lists them\n"));
	assert_null(strstr(s, "lost 1\n"));
	free(s);
	s = render(write_text_verbose, &fl);
	assert_non_null(strstr(s, "name 39") && strstr(s, "lost 11") && strstr(s, "few 1"));
	assert_null(strstr(s, "more findings"));
	free(s);
	s = render(fs_findings_write_groups_json, &fl);
	assert_non_null(strstr(s, "{\"finding\":0,\"kind\":\"block\",\"code\":\"attr.count\","
			       "\"ag\":0,\"ino\":131,\"daddr\":112,\"count\":40,\"codes\":"
			       "{\"attr.nameidx\":40}}"));
	assert_non_null(strstr(s, "\"kind\":\"code\",\"code\":\"inode.unreachable\",\"ag\":1,"
			       "\"ino\":5000,\"daddr\":null,\"count\":11,"));
	free(s);
	s = render(fs_findings_write_json_array, &fl);
	{
		size_t n = 0, g0 = 0;

		for (const char *p = s; (p = strstr(p, "\"code\":")); p++)
			n++;
		for (const char *p = s; (p = strstr(p, "\"group\":0")); p++)
			g0++;
		assert_int_equal(n, 56);	/* every record */
		assert_int_equal(g0, 40);
	}
	free(s);
	fs_findings_free(&fl);
}

/*
 * Findings that follow from another: in text, under
 * their cause with a count per code, not on lines of their own; in JSON,
 * every record, naming the cause.  A cause with no finding of its own
 * leaves its consequences on their own lines.
 */
static void test_grouped(void **state)
{
	struct fs_findings fl;
	char *s;

	(void)state;
	fs_findings_init(&fl);
	for (int i = 0; i < 7; i++)
		fs_report_caused(&fl, 128, FS_C_INODE_UNREACHABLE, 0, FS_NONE, 131 + i, NULL, NULL,
				 NULL, "unreachable %d", i);
	fs_report_caused(&fl, 128, FS_C_INODE_NLINK, 0, FS_NONE, 140, NULL, NULL, NULL, "nlink");
	fs_report_caused(&fl, 999, FS_C_INODE_UNREACHABLE, 3, FS_NONE, 1000, NULL, NULL, NULL,
			 "no cause on record");
	fs_report(&fl, FS_C_INODE_MAGIC, 0, 0x80, 128, "magicnum", NULL, NULL, "root inode magic");
	/* a cause equal to the inode itself is no cause */
	fs_report_caused(&fl, 77, FS_C_INODE_NLINK, 0, FS_NONE, 77, NULL, NULL, NULL, "self");
	fs_findings_sort(&fl);
	s = render(fs_findings_write_text, &fl);
	/* the cause's line, then the group line right under it */
	assert_non_null(strstr(s, "root inode magic [magicnum]\n  ... and 8 more findings caused "
			       "by it: 1 inode.nlink (inode 140); 7 inode.unreachable (inodes "
			       "131, 132, 133, 134, 135, ...); -v lists them\n"));
	assert_null(strstr(s, "unreachable 0"));          /* grouped: no line of its own */
	assert_non_null(strstr(s, "no cause on record")); /* cause 999 has no finding */
	assert_non_null(strstr(s, "inode 77: self"));
	free(s);
	s = render(fs_findings_write_json_array, &fl);
	assert_non_null(strstr(s, "\"ino\":131,\"field\":null,\"expected\":null,\"found\":null,"
			       "\"message\":\"unreachable 0\",\"fixable\""));
	assert_non_null(strstr(s, "\"cause\":{\"ino\":128,\"code\":\"inode.magic\"}"));
	assert_non_null(strstr(s, "\"cause\":{\"ino\":999,\"code\":null}"));
	/* every record is there: 11 codes, 11 causes */
	{
		size_t n = 0;

		for (const char *p = s; (p = strstr(p, "\"cause\":")); p++)
			n++;
		assert_int_equal(n, 11);
	}
	free(s);
	fs_findings_free(&fl);
}

static void test_json_escapes(void **state)
{
	char *s;

	(void)state;
	s = json_str("plain");
	assert_string_equal(s, "\"plain\"");
	free(s);
	s = json_str("");
	assert_string_equal(s, "\"\"");
	free(s);
	s = json_str("a\"b\\c\nd\te\rf\x01g\x1fh\x7f");
	assert_string_equal(s, "\"a\\\"b\\\\c\\nd\\te\\u000df\\u0001g\\u001fh\\u007f\"");
	free(s);
	/* bytes past ASCII (a label may hold anything) come out as escapes, so the JSON stays ASCII */
	s = json_str("\xff\x80/");
	assert_string_equal(s, "\"\\u00ff\\u0080/\"");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_integrity),
		cmocka_unit_test(test_fix_actions),
		cmocka_unit_test(test_report_unknown),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_typed_and_reporter),
		cmocka_unit_test(test_report_fields),
		cmocka_unit_test(test_number_formats),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_grouped_block_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
