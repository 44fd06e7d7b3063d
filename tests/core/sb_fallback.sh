#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A destroyed primary superblock: xfsx_check takes the geometry from a
# secondary (sb.primary_bad, exit 4), checks every AG with it (no spurious
# AG header findings), and --geometry reports the secondary's values as
# xfs_db prints them.  With no usable superblock anywhere it says so.
. "$XFSX_SRC/tests/lib.sh"

here="$XFSX_SRC/tests/core"
tool() { python3 "$here/coretool.py" "$@"; }

if ! have_xfsprogs; then
	skip "primary superblock fallback" "xfsprogs (mkfs.xfs, xfs_db) not installed"
	tap_done
	exit
fi

base="$TMP/base.img"
truncate -s 1g "$base" && mkfs.xfs -f -q -m rmapbt=1 "$base" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
agcount=$(xfs_db -r -c 'sb 0' -c 'print agcount' "$base" | awk '{print $3}')

# only_sb_findings JSON: every finding is about superblocks (AG headers read fine)
only_sb_findings() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
other = [f["code"] for f in d["findings"] if not f["code"].startswith("sb.")]
if other:
    print("# unexpected findings:", other)
sys.exit(1 if other else 0)
PY
}

# all AGs checked with the geometry found, and nothing but superblock findings
ags_and_only_sb() {
	local ags
	ags=$(tool get "$1" summary.ags 2>/dev/null)
	[ "$ags" = "$2" ] || { diag "AGs checked: $ags, wanted $2"; return 1; }
	only_sb_findings "$1"
}

# fallback NAME XFS_DB_COMMANDS...: damage sb 0, expect the fallback to AG 1
fallback() {
	local name=$1 img="$TMP/fb.img" rc; shift
	cp --sparse=always "$base" "$img"
	local args=()
	for c in "$@"; do args+=(-c "$c"); done
	xfs_db -x "${args[@]}" "$img" >"$TMP/fb-db.out" 2>&1
	"$XFSX_CHECK" --json "$img" >"$TMP/fb.json" 2>"$TMP/fb.err"; rc=$?
	check "$name: exit 4" test $rc -eq 4
	check "$name: sb.primary_bad in AG 0" tool has "$TMP/fb.json" sb.primary_bad 0
	check "$name: geometry taken from AG 1" test "$(tool get "$TMP/fb.json" filesystem.sb_source_ag 2>/dev/null)" = 1
	check "$name: all $agcount AGs checked, only superblock findings" ags_and_only_sb "$TMP/fb.json" "$agcount"
	"$XFSX_CHECK" --geometry --json "$img" >"$TMP/fb-geo.json" 2>/dev/null
	# xfs_db cannot open the damaged image (or divides by a zero agblocks):
	# AG 1's copy is untouched, so print it from the pristine image
	xfs_db -r -c 'sb 1' -c print "$base" >"$TMP/fb-db.txt" 2>/dev/null
	check "$name: --geometry --json equals xfs_db sb 1" python3 "$here/xfsdb_compare.py" "$TMP/fb-db.txt" "$TMP/fb-geo.json"
	"$XFSX_CHECK" "$img" >"$TMP/fb.txt" 2>&1
	check "$name: text output names the secondary used" grep -q "geometry taken from the secondary in AG 1" "$TMP/fb.txt"
}

fallback "magic destroyed (CRC valid)" 'sb 0' 'write -d magicnum 0'
fallback "magic random, CRC stale" 'sb 0' 'fuzz -c magicnum random'
fallback "blocksize fuzzed, magic kept" 'sb 0' 'write -d blocksize 12345'
fallback "agblocks zeroed" 'sb 0' 'write -d agblocks 0'
fallback "sector size and log size wrong" 'sb 0' 'write -d sectsize 3' 'write -d logblocks 1'

# AG 1's copy damaged too: the next good secondary is used
cp --sparse=always "$base" "$TMP/fb2.img"
xfs_db -x -c 'sb 0' -c 'write -d blocksize 0' -c 'sb 1' -c 'write -d magicnum 0' "$TMP/fb2.img" >/dev/null 2>&1
"$XFSX_CHECK" --json "$TMP/fb2.img" >"$TMP/fb2.json" 2>/dev/null; rc=$?
check "primary and AG 1 bad: exit 4" test $rc -eq 4
check "primary and AG 1 bad: geometry from AG 2" test "$(tool get "$TMP/fb2.json" filesystem.sb_source_ag 2>/dev/null)" = 2
check "primary and AG 1 bad: AG 1's superblock reported" tool has "$TMP/fb2.json" sb.magic 1

# nothing usable anywhere: corruption, said in words
cp --sparse=always "$base" "$TMP/none.img"
cmds=(-c 'sb 0' -c 'write -d blocksize 0')
for ((i = 1; i < agcount; i++)); do cmds+=(-c "sb $i" -c 'write -d magicnum 0'); done
xfs_db -x "${cmds[@]}" "$TMP/none.img" >/dev/null 2>&1
"$XFSX_CHECK" "$TMP/none.img" >"$TMP/none.out" 2>"$TMP/none.err"; rc=$?
check "no usable superblock at all: exit 4" test $rc -eq 4
check "no usable superblock at all: says no valid secondary was found" \
	grep -q "no valid secondary superblock was found" "$TMP/none.err"

# a zeroed first sector (dd over the start) in front of intact secondaries:
# the secondaries are found, as xfs_repair finds them
cp --sparse=always "$base" "$TMP/zero0.img"
dd if=/dev/zero of="$TMP/zero0.img" bs=512 count=1 conv=notrunc status=none
"$XFSX_CHECK" --json "$TMP/zero0.img" >"$TMP/zero0.json" 2>"$TMP/zero0.err"; rc=$?
check "zeroed sector 0: exit 4 (got $rc)" test $rc -eq 4
check "zeroed sector 0: sb.primary_bad in AG 0" tool has "$TMP/zero0.json" sb.primary_bad 0
check "zeroed sector 0: geometry taken from AG 1" \
	test "$(tool get "$TMP/zero0.json" filesystem.sb_source_ag 2>/dev/null)" = 1

# zeros everywhere, or something else in sector 0: not XFS, said so
truncate -s 64m "$TMP/zeros.img"
"$XFSX_CHECK" "$TMP/zeros.img" >/dev/null 2>"$TMP/zeros.err"; rc=$?
check "all zeros: exit 8, not an XFS filesystem" \
	bash -c 'test "$0" -eq 8 && grep -q "not an XFS filesystem" "$1"' $rc "$TMP/zeros.err"
cp --sparse=always "$base" "$TMP/junk0.img"
printf 'not a filesystem at all, just some text in the first sector' |
	dd of="$TMP/junk0.img" bs=512 count=1 conv=notrunc status=none
"$XFSX_CHECK" "$TMP/junk0.img" >/dev/null 2>"$TMP/junk0.err"; rc=$?
check "text over sector 0: exit 8, not an XFS filesystem" \
	bash -c 'test "$0" -eq 8 && grep -q "not an XFS filesystem" "$1"' $rc "$TMP/junk0.err"

tap_done
