#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A filesystem of 10,000 AGs and few inodes (a 15 TiB sparse image made by
# xfsx_mkfs -d agcount=10000 -p): xfsx_check calls it clean; three AGFs
# damaged (freeblks zeroed, a bnobt root pointed at block 0, with xfs_db
# -x write -d) are all fixed by one xfsx_repair run, after which xfsx_check
# calls it clean again.  Memory is asserted from --json
# summary.peak_rss_bytes: under XFSX_MANY_AGS_MIB MiB (default 256) for the
# check and 7/4 of that for the repair, whose verify step scans the result
# again (measured with a release build: 56 and 74 MiB; before the cache cut
# its buffers from a slab and dropped walked btree blocks, 499 and 746 MiB,
# so the bounds catch that coming back and leave 4x of room).  The cache's
# own peak (summary.cache.peak_bytes) is printed too.  Both run with two
# worker threads (check -t 2, repair --threads=2), so the figures do not
# move with the host's CPU count.  The wall times are diagnostics only.
# XFSX_MANY_AGS_ORACLE=1 also runs Debian's xfs_repair -n on the result
# (left out by default: it takes over ten CPU-minutes on 10,000 AGs).
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"
mib=${XFSX_MANY_AGS_MIB:-256}

if ! have_xfsprogs || ! command -v python3 >/dev/null; then
	skip "10,000 AGs" "xfsprogs (xfs_db, xfs_repair) or python3 not installed"
	tap_done
	exit
fi
img="$TMP/ags.img"
if ! truncate -s 15T "$img" 2>/dev/null; then
	skip "10,000 AGs" "$TMP cannot hold a 15 TiB sparse file"
	tap_done
	exit
fi
echo data >"$TMP/f"
printf '/dev/null\n0 0\nd--755 0 0\n a d--755 0 0\n  f ---644 0 0 %s\n $\n g ---644 0 0 %s\n$\n' \
	"$TMP/f" "$TMP/f" >"$TMP/few.proto"
check "xfsx_mkfs makes 10,000 AGs on a 15 TiB sparse file" \
	"$XFSX_MKFS" -q -f -d agcount=10000 -l size=64m -p "$TMP/few.proto" "$img"

# field JSON KEY: summary.KEY of a --json report
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]])' "$1" "$2"; }
# under JSON MIB: its peak_rss_bytes below MIB MiB (says it, either way)
under() {
	local peak
	peak=$(field "$1" peak_rss_bytes) || return 1
	diag "peak RSS $((peak >> 20)) MiB (limit $2 MiB)"
	[ "$peak" -gt 0 ] && [ "$peak" -lt $(($2 << 20)) ]
}

# mem_check NAME JSON MIB: the memory assertion, for the plain build only:
# under ASan (the sanitizer suite) shadow memory and the free quarantine
# multiply the peak, so there it is printed and reported as a skip
if ldd "$XFSX_CHECK" 2>/dev/null | grep -q libasan; then sanitized=1; else sanitized=0; fi
mem_check() {
	if [ "$sanitized" = 1 ]; then
		diag "peak RSS $(($(field "$2" peak_rss_bytes) >> 20)) MiB"
		skip "$1" "a sanitizer build: ASan's shadow memory and quarantine inflate the peak"
	else
		check "$1" under "$2" "$3"
	fi
}

t0=$(date +%s.%N)
"$XFSX_CHECK" -t 2 --json "$img" >"$TMP/check.json"
rc=$?
diag "xfsx_check: $(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)") s wall"
check "xfsx_check calls the 10,000-AG image clean" test "$rc" -eq 0
check "it checked 10,000 AGs" test "$(field "$TMP/check.json" ags)" -eq 10000
diag "xfsx_check's cache peak: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["cache"]["peak_bytes"] >> 20)' "$TMP/check.json") MiB"
mem_check "xfsx_check's peak RSS is under $mib MiB" "$TMP/check.json" "$mib"

xfs_db -x -c "agf 1" -c "write -d freeblks 0" -c "agf 5000" -c "write -d bnoroot 0" \
	-c "agf 9999" -c "write -d freeblks 0" -c "write -d bnoroot 0" "$img" >/dev/null 2>&1
"$XFSX_CHECK" -q "$img"
check "xfsx_check sees the damaged AGFs (exit 4)" test $? -eq 4
t0=$(date +%s.%N)
"$XFSX_REPAIR" --threads=2 --json "$img" >"$TMP/repair.json"
rc=$?
diag "xfsx_repair: $(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)") s wall"
check "xfsx_repair fixes them in one run (exit 1)" test "$rc" -eq 1
check "nothing is left uncorrected" test "$(field "$TMP/repair.json" left)" -eq 0
check "the AGFs of AGs 1, 5000 and 9999 are among the findings" python3 - "$TMP/repair.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ags = {f.get("ag") for f in d["findings"]}
sys.exit(0 if {1, 5000, 9999} <= ags else 1)
PY
mem_check "xfsx_repair's peak RSS is under $((7 * mib / 4)) MiB" "$TMP/repair.json" $((7 * mib / 4))
check "xfsx_check calls the repaired image clean" "$XFSX_CHECK" -q "$img"
if [ "${XFSX_MANY_AGS_ORACLE:-0}" = 1 ]; then
	check "xfs_repair -n calls the repaired image clean" xfs_repair -n "$img"
else
	skip "xfs_repair -n on the repaired image" "XFSX_MANY_AGS_ORACLE=1 runs it (over ten CPU-minutes)"
fi
tap_done
