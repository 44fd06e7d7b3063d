#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "Not XFS" is an operational answer, not a fixable finding: on a zeroed
# or ext4 image xfsx_check, xfsx_repair (and -n) and xfsx_bulkstat exit 8,
# say why on stderr only (stdout empty), and under --json report an error
# with "not_xfs": true and no findings.  A primary superblock zeroed in
# front of intact secondaries stays a finding (exit 4) that xfsx_repair
# fixes from the secondary, after which the check is clean.
. "$XFSX_SRC/tests/lib.sh"

XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"

# json_not_xfs JSON: an error object, "not_xfs": true, no findings
json_not_xfs() {
	python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print("# not one JSON object:", e)
    sys.exit(1)
ok = "not an XFS" in d.get("error", "") and d.get("not_xfs") is True and d.get("findings") == []
if not ok:
    print("# got:", json.dumps(d)[:300])
sys.exit(0 if ok else 1)
PY
}

# text_case LABEL WANT_STDERR TOOL ARGS...: exit 8, stdout empty, stderr says it
text_case() {
	local what=$1 pat=$2 rc; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	check "$what: exit 8 (got $rc)" [ $rc -eq 8 ]
	check "$what: nothing on stdout" [ ! -s "$TMP/out" ]
	[ -s "$TMP/out" ] && sed -n '1,3s/^/#   /p' "$TMP/out"
	check "$what: stderr says $pat" grep -q "$pat" "$TMP/err"
}

# json_case LABEL TOOL ARGS...: exit 8 and the JSON error object
json_case() {
	local what=$1 rc; shift
	"$@" >"$TMP/out.json" 2>/dev/null; rc=$?
	check "$what --json: exit 8 (got $rc)" [ $rc -eq 8 ]
	check "$what --json: error, not_xfs, no findings" json_not_xfs "$TMP/out.json"
}

# every_tool NAME IMG: the four tools on an image that is not XFS
every_tool() {
	local name=$1 img=$2 before
	before=$(sha256sum <"$img")
	text_case "$name: xfsx_check" "not an XFS filesystem" "$XFSX_CHECK" "$img"
	json_case "$name: xfsx_check" "$XFSX_CHECK" --json "$img"
	text_case "$name: xfsx_repair -n" "not an XFS filesystem" "$XFSX_REPAIR" -n "$img"
	json_case "$name: xfsx_repair -n" "$XFSX_REPAIR" -n --json "$img"
	text_case "$name: xfsx_repair" "not an XFS filesystem" "$XFSX_REPAIR" "$img"
	json_case "$name: xfsx_repair" "$XFSX_REPAIR" --json "$img"
	text_case "$name: xfsx_bulkstat" "not an XFS filesystem" "$XFSX_BULKSTAT" "$img"
	check "$name: image unchanged" [ "$before" = "$(sha256sum <"$img")" ]
}

truncate -s 64m "$TMP/zero.img"
every_tool "zeroed image" "$TMP/zero.img"

if ! command -v mkfs.ext4 >/dev/null; then
	skip "ext4 image" "mkfs.ext4 not installed"
else
	truncate -s 64m "$TMP/ext4.img"
	if mkfs.ext4 -q -F "$TMP/ext4.img" >/dev/null 2>&1; then
		every_tool "ext4 image" "$TMP/ext4.img"
	else
		skip "ext4 image" "mkfs.ext4 failed on an image file"
	fi
fi

if ! have_xfsprogs; then
	skip "zeroed primary superblock with secondaries" "xfsprogs (mkfs.xfs, xfs_db) not installed"
	tap_done
	exit
fi

# the primary superblock's sector zeroed: the secondaries are found, so it
# is damage (a finding repair fixes), not "not XFS"
img="$TMP/zero0.img"
truncate -s 512m "$img" && mkfs.xfs -f -q "$img" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
dd if=/dev/zero of="$img" bs=512 count=1 conv=notrunc status=none
"$XFSX_CHECK" --json "$img" >"$TMP/z0.json" 2>"$TMP/z0.err"; rc=$?
check "zeroed primary: check exits 4 (got $rc)" [ $rc -eq 4 ]
check "zeroed primary: a fixable superblock finding, not not_xfs" python3 - "$TMP/z0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sb = [f for f in d["findings"] if f["code"].startswith("sb.") and f.get("fixable")]
ok = bool(sb) and "not_xfs" not in d and "error" not in d
if not ok:
    print("# got:", json.dumps(d)[:300])
sys.exit(0 if ok else 1)
PY
"$XFSX_REPAIR" -n "$img" >"$TMP/z0n.out" 2>&1; rc=$?
check "zeroed primary: repair -n exits 4 (got $rc)" [ $rc -eq 4 ]
"$XFSX_REPAIR" "$img" >"$TMP/z0r.out" 2>&1; rc=$?
check "zeroed primary: repair exits 1, fixed (got $rc)" [ $rc -eq 1 ]
[ $rc -eq 1 ] || sed -n '1,6s/^/#   /p' "$TMP/z0r.out"
"$XFSX_CHECK" "$img" >"$TMP/z0c.out" 2>&1; rc=$?
check "zeroed primary: check after repair is clean (got $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed -n '1,6s/^/#   /p' "$TMP/z0c.out"
xfs_repair -n "$img" >"$TMP/z0x.out" 2>&1; rc=$?
check "zeroed primary: xfs_repair -n agrees after repair (got $rc)" [ $rc -eq 0 ]

tap_done
