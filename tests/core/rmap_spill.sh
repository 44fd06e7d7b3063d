#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The owners phase's bounded comparison (scan/phase_rmap.c, struct tside:
# a side of more than its cap of reverse mappings is sorted in runs
# spilled to --tmpdir, merged and read back a chunk at a time) gives what
# the in-memory comparison gives.  A small kernel-aged image (rmapbt and
# reflink, 2 AGs) is damaged in its rmap and refcount btrees with
# `xfs_db -x fuzz`, one (field, verb) at a time: every field of two records
# of an rmap leaf and of one refcount record, a leaf's numrecs, and
# blocktrash (by default every third field fuzz and all the others, 35 of
# 95; XFSX_RMAP_SPILL_FULL=1 all; then the first XFSX_RMAP_SPILL_CASES
# cases); each case is checked in memory and with XFSX_TEST_SPILL=3
# and =50 (caps of 3 and 50 tuples a side: runs of 3, merge passes,
# chunks of 1 and of 25), and without -m with XFSX_TEST_RMAP_SOFT=3 (the
# bound a run without -m puts on a big AG, spilled to $TMPDIR; and with
# $TMPDIR unusable, where it stays in memory): byte-identical --json
# (device name, times and memory left out).  Asserted too: the cases found rmap and refcount
# differences, some past the 20 reported per AG (the summaries), and
# nothing is left in the temporary directory.
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"

have_xfsprogs || { skip "rmap spill" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "rmap spill" "needs root and a loop device to age the image"; tap_done; exit; }
base="$TMP/base.img"
if ! age_image "$base" 320M "-m rmapbt=1,reflink=1 -d agcount=2" 2>"$TMP/err"; then
	not_ok "aged base image: $(tail -1 "$TMP/err")"; tap_done; exit
fi
diag "base: 320 MiB, 2 AGs, rmapbt+reflink, aged: $(cat "$TMP/age.out")"
mkdir -p "$TMP/spill"

# norm JSON: the output without what spilling may change (tests/core/spill_norm.py)
norm() { python3 "$XFSX_SRC/tests/core/spill_norm.py" "$1"; }

# a leaf of a btree with records: the root or its first child (the aged
# trees have one or two levels), in the first AG that has records
leaf_of() {	# AGF_ROOT_FIELD -> xfs_db commands that reach a leaf, ';'-separated
	local ag out lvl nr
	for ag in 0 1; do
		out=$(xfs_db -r -c "agf $ag" -c "addr $1" -c "p level numrecs" "$base" 2>/dev/null)
		lvl=$(sed -n 's/^level = //p' <<<"$out"); nr=$(sed -n 's/^numrecs = //p' <<<"$out")
		if [ "${lvl:-0}" -gt 0 ]; then
			echo "agf $ag;addr $1;addr ptrs[1]"; return
		elif [ "${nr:-0}" -gt 0 ]; then
			echo "agf $ag;addr $1"; return
		fi
	done
}

cases=()
rpath=$(leaf_of rmaproot); cpath=$(leaf_of refcntroot)
for r in 2 9; do
	for f in startblock blockcount owner offset extentflag attrfork bmbtblock; do
		for v in zeroes ones random add sub; do
			cases+=("fuzz|$rpath|recs[$r].$f|$v")
		done
	done
done
if [ -n "$cpath" ]; then
	for f in startblock blockcount refcount cowflag; do
		for v in zeroes ones random add sub; do
			cases+=("fuzz|$cpath|recs[1].$f|$v")
		done
	done
fi
# a leaf whose numrecs drops to 3 (most of its mappings missing) and blocktrash
# by default a sample: every third field fuzz (each field keeps some of its
# verbs), XFSX_RMAP_SPILL_FULL=1 all of them; the numrecs and blocktrash
# cases always (the numrecs one is where an AG passes 20 reports)
if [ -z "${XFSX_RMAP_SPILL_FULL:-}" ]; then
	sample=()
	for ((k = 0; k < ${#cases[@]}; k += 3)); do sample+=("${cases[$k]}"); done
	diag "${#cases[@]} field fuzz cases, a sample of ${#sample[@]} (XFSX_RMAP_SPILL_FULL=1: all)"
	cases=("${sample[@]}")
fi
cases+=("fuzz|$rpath|numrecs|low" "trash|1" "trash|2" "trash|3" "trash|4")
want=${XFSX_RMAP_SPILL_CASES:-${#cases[@]}}
diag "${#cases[@]} cases, running $want"

n=0 same=0 with_rmap=0 with_refc=0 summaries=0 bad=""
for c in "${cases[@]:0:$want}"; do
	IFS='|' read -r kind a b v <<<"$c"	# fuzz|path|field|verb, trash|seed
	img="$TMP/c.img"
	cp --sparse=always "$base" "$img"
	if [ "$kind" = trash ]; then
		xfs_db -x -c blockget -c "blocktrash -s $a -n 8 -t rmapbt -t refcntbt -x 1 -y 8" \
			"$img" >/dev/null 2>&1
	elif [ "$v" = low ]; then
		IFS=';' read -ra p <<<"$a"; args=(); for x in "${p[@]}"; do args+=(-c "$x"); done
		xfs_db -x "${args[@]}" -c "write -d numrecs 3" "$img" >/dev/null 2>&1
	else
		IFS=';' read -ra p <<<"$a"; args=(); for x in "${p[@]}"; do args+=(-c "$x"); done
		xfs_db -x "${args[@]}" -c "fuzz -d $b $v" "$img" >/dev/null 2>&1
	fi
	n=$((n + 1))
	"$XFSX_CHECK" --json "$img" >"$TMP/m.json" 2>/dev/null; mrc=$?
	norm "$TMP/m.json" >"$TMP/m.norm"
	ok=1
	for cap in 3 50; do
		XFSX_TEST_SPILL=$cap "$XFSX_CHECK" --json --tmpdir "$TMP/spill" "$img" >"$TMP/s.json" \
			2>/dev/null; src=$?
		{ [ $mrc -eq $src ] && [ $mrc -ne 8 ] && norm "$TMP/s.json" | cmp -s - "$TMP/m.norm"; } || ok=0
	done
	for tdir in "$TMP/spill" /nonexistent-xfsx-tmp; do
		TMPDIR=$tdir XFSX_TEST_RMAP_SOFT=3 "$XFSX_CHECK" --json "$img" >"$TMP/s.json" \
			2>/dev/null; src=$?
		{ [ $mrc -eq $src ] && norm "$TMP/s.json" | cmp -s - "$TMP/m.norm"; } || ok=0
	done
	if [ $ok = 1 ]; then same=$((same + 1)); else bad="$bad [$c]"; fi
	grep -q '"code": "rmap\.' "$TMP/m.norm" && with_rmap=$((with_rmap + 1))
	grep -q '"code": "refcount\.' "$TMP/m.norm" && with_refc=$((with_refc + 1))
	# 20 or more differences in one AG: the reporting cap reached
	python3 -c 'import collections, json, sys
c = collections.Counter((f["code"], f["ag"]) for f in json.load(open(sys.argv[1]))["findings"]
                        if f["code"].startswith("rmap."))
sys.exit(not c or max(c.values()) < 20)' "$TMP/m.json" && summaries=$((summaries + 1))
done
[ "$same" -eq "$n" ]
ok_if "check with XFSX_TEST_SPILL=3 and =50, and XFSX_TEST_RMAP_SOFT=3 = in memory in $same of $n cases${bad:+:$bad}"
diag "cases with rmap.* findings: $with_rmap, refcount.*: $with_refc, 20 or more in an AG: $summaries"
[ "$with_rmap" -gt 0 ] && [ "$with_refc" -gt 0 ] && [ "$summaries" -gt 0 ]
ok_if "the cases found rmap and refcount differences, 20 or more in an AG in some"
[ -z "$(ls -A "$TMP/spill")" ]
ok_if "nothing left in the temporary directory"
tap_done
