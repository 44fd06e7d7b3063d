#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Findings are typed: the C sources of the tools name a finding by its
# enum fs_code, never by the text of its code, and decide on typed values,
# never on display strings.  Over libfs scan repair check bulkstat undo
# mkfs: no string literal that is a finding code (findings.def alone holds
# them), no strcmp/strncmp against a code-shaped literal or a code member,
# no comparison of ->def->code, no sscanf/strto* of a finding's expected,
# found, message or field; every row's enum name is its code string in
# capitals; every code has a report site; nothing but the findings table
# and repair's decision table (repair/fix.c, fix.h) looks at a row's fix
# action (->fix, FS_FIX_*): the phases reach it through that table.
. "$XFSX_SRC/tests/lib.sh"

src=$XFSX_SRC
dirs="libfs scan repair check bulkstat undo mkfs"
def="$src/libfs/format/findings.def"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the code strings: findings.def's rows (a tree from before it: the table's rows)
if [ -f "$def" ]; then
	grep -oP '^FS_CODE\([A-Z0-9_]+, [A-Z0-9_]+, "\K[a-z0-9_]+\.[a-z0-9_]+(?=")' "$def" > "$tmp/codes"
else
	find "$src/libfs" -name findings.c -exec grep -ohP '^\s*\{ "\K[a-z0-9_]+\.[a-z0-9_]+(?=",)' {} + \
		> "$tmp/codes"
fi
ncodes=$(wc -l < "$tmp/codes")
check "the findings table has its codes ($ncodes)" [ "$ncodes" -gt 300 ]

sources() {
	(cd "$src" && find $dirs -name '*.[ch]' | sort)
}

# 1. a code string as a literal anywhere in the C sources
sed 's/.*/"&"/' "$tmp/codes" > "$tmp/literals"
(cd "$src" && sources | xargs grep -nF -f "$tmp/literals") > "$tmp/hits1" || true
check "no finding code as a string literal in the C sources ($(wc -l < "$tmp/hits1") found)" \
	[ ! -s "$tmp/hits1" ]
head -5 "$tmp/hits1" | sed 's/^/# /'

# 2. strcmp/strncmp against a code-shaped literal (a code's object with its dot,
# a dot with a code's second half) or a code member; findings.c's
# fs_finding_lookup, the string lookup for tests and command lines, is the one
objs=$(cut -d. -f1 "$tmp/codes" | sort -u | paste -sd'|')
names=$(cut -d. -f2 "$tmp/codes" | sort -u | paste -sd'|')
(cd "$src" && sources | grep -v '/findings\.c$' | xargs grep -nP \
	"\\bstrn?cmp\\s*\\([^;]*(\"($objs)\\.[a-z0-9_]*\"|\"[a-z0-9_]*\\.($names)\"|(->|\\.)code\\b)") \
	> "$tmp/hits2" || true
check "no strcmp/strncmp of finding codes ($(wc -l < "$tmp/hits2") found)" [ ! -s "$tmp/hits2" ]
head -5 "$tmp/hits2" | sed 's/^/# /'

# 3. the code text of a row compared or searched
(cd "$src" && sources | xargs grep -nP \
	'def->code\s*[=!]=|[=!]=\s*[a-z_>.\[\]-]*def->code\b|\bstr[r]?chr\s*\([^;]*def->code|def->code\s*\+') \
	> "$tmp/hits3" || true
check "no comparison of ->def->code ($(wc -l < "$tmp/hits3") found)" [ ! -s "$tmp/hits3" ]
head -5 "$tmp/hits3" | sed 's/^/# /'

# 4. a finding's display strings parsed back
(cd "$src" && sources | xargs grep -nP \
	'\b(sscanf|strto[a-z]+|atoi|atol|atoll)\s*\([^;]*(->|\.)(expected|found|message|field)\b') \
	> "$tmp/hits4" || true
check "no sscanf/strto* of expected/found/message/field ($(wc -l < "$tmp/hits4") found)" \
	[ ! -s "$tmp/hits4" ]
head -5 "$tmp/hits4" | sed 's/^/# /'

# 5. FS_C_<OBJ>_<NAME> is "obj.name" mechanically, and each is reported somewhere
if [ -f "$def" ]; then
	grep -oP '^FS_CODE\(\K[A-Z0-9_]+, [A-Z0-9_]+, "[a-z0-9_.]+"' "$def" |
		sed -E 's/^([A-Z0-9_]+), ([A-Z0-9_]+), "(.*)"$/\1 \2 \3/' > "$tmp/rows"
	bad=$(awk '{ if (tolower($1) "." tolower($2) != $3) print $3 }' "$tmp/rows")
	check "every row's enum name is its code in capitals${bad:+ (not:$bad)}" [ -z "$bad" ]
	(cd "$src" && sources | grep -vE '^libfs/format/findings\.[ch]$' | xargs cat) > "$tmp/all"
	grep -oP '\bFS_C_[A-Z0-9_]+\b' "$tmp/all" | sort -u > "$tmp/used"
	unreported=""
	while read -r obj name code; do
		grep -qx "FS_C_${obj}_${name}" "$tmp/used" || unreported="$unreported $code"
	done < "$tmp/rows"
	check "every finding code has a report site${unreported:+ (none for:$unreported)}" \
		[ -z "$unreported" ]
else
	not_ok "every row's enum name is its code in capitals (no findings.def)"
	not_ok "every finding code has a report site (no findings.def)"
fi
# 6. a finding's fix action is read in two places: the findings table itself
# (findings.h/.c: the enum, the names, the JSON "fix") and repair's decision
# table (repair/fix.c, and fix.h's table declaration)
fix_allowed='^(libfs/format/findings\.[ch]|repair/fix\.[ch]):'
(cd "$src" && sources | xargs grep -nP '(->|\.)fix\b|\bFS_FIX_') > "$tmp/fixuse" || true
grep -vE "$fix_allowed" "$tmp/fixuse" > "$tmp/hits6" || true
check "the fix action is read only by findings.[ch] and repair/fix.[ch] ($(wc -l < "$tmp/hits6") found)" \
	[ ! -s "$tmp/hits6" ]
head -5 "$tmp/hits6" | sed 's/^/# /'
check "the decision table reads it ($(grep -c '^repair/fix\.c:' "$tmp/fixuse") lines in repair/fix.c)" \
	grep -q '^repair/fix\.c:.*FS_FIX_' "$tmp/fixuse"
tap_done
