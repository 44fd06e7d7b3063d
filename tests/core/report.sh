#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What xfsx_check's report says: findings that
# follow from another are grouped under their cause, cause first, with a
# count (JSON keeps every record and names the cause); the summary line
# says what was checked (AGs, inodes, directories and entries, blocks,
# time) in correct singular and plural.
. "$XFSX_SRC/tests/lib.sh"

if ! have_xfsprogs; then
	skip "report grouping and summary" "xfsprogs (mkfs.xfs, xfs_db) not installed"
	tap_done
	exit
fi
# a tree from a protofile: files in the root, d1/{data, d2/{x}}, big/{300 files}
src="$TMP/f"; echo data >"$src"
{
	echo /dev/null; echo "0 0"; echo "d--755 0 0"
	for i in $(seq 1 40); do echo "f$i ---644 0 0 $src"; done
	echo "d1 d--755 0 0"; echo "data ---644 0 0 $src"
	echo "d2 d--755 0 0"; echo "x ---644 0 0 $src"; echo "y ---644 0 0 $src"; echo '$'
	echo '$'
	echo "big d--755 0 0"
	for i in $(seq 1 300); do echo "entry_$i ---644 0 0 $src"; done
	echo '$'
	echo '$'
} >"$TMP/p.proto"
base="$TMP/base.img"
truncate -s 512m "$base"
mkfs.xfs -f -q -p "$TMP/p.proto" "$base" >/dev/null 2>&1 || { not_ok "mkfs.xfs -p"; tap_done; exit; }
ino_of() { xfs_db -r -c "ls $1" "$base" 2>/dev/null | awk -v n="$2" '$NF == "(good)" && $(NF-1) == n {print $2}'; }
d1=$(ino_of / d1)
d2=$(ino_of /d1 d2)

# --- the summary line (item 16) ----------------------------------------------------
out=$("$XFSX_CHECK" "$base" | tail -1)
diag "$out"
check "summary: AGs, inodes, directories with entries, blocks, time, clean" \
	grep -Eq "^.*: checked 4 AGs, [0-9]+ inodes, 4 directories with 34[0-9] entries, [0-9]+ btree blocks and [0-9]+ file extents in [0-9.]+ s: 0 errors, 0 warnings, clean$" <<<"$out"
cut="$TMP/cut.img"
cp --sparse=always "$base" "$cut"
truncate -s 100m "$cut"
out=$("$XFSX_CHECK" "$cut" | tail -1)
diag "$out"
check "summary: singular where one (1 AG, not 1 AGs)" grep -q "checked 1 AG, " <<<"$out"
check "summary: plural where two (2 errors)" grep -q ": 2 errors, 0 warnings$" <<<"$out"

# --- grouping (item 5) ---------------------------------------------------------------
img="$TMP/root.img"
cp --sparse=always "$base" "$img"
# magic and inode number: nothing shows it is an inode (a bad magic alone on a
# core naming itself is mended, and the scan walks it)
xfs_db -x -c 'inode 128' -c 'write -d core.magic 0' -c 'write -d v3.inumber 0' "$img" >/dev/null 2>&1
"$XFSX_CHECK" "$img" >"$TMP/root.txt" 2>/dev/null
"$XFSX_CHECK" --json "$img" >"$TMP/root.json" 2>/dev/null
check "root inode damaged: the first line is the cause (inode.magic of inode 128)" \
	grep -q "^error: inode.magic: AG 0 inode 128 " <(head -1 "$TMP/root.txt")
check "root inode damaged: the second line counts what follows from it" \
	grep -Eq "^  \.\.\. and [0-9]+ more findings caused by it: [0-9]+ inode.unreachable \(inodes .*; -v lists them$" <(sed -n 2p "$TMP/root.txt")
check "root inode damaged: no inode.unreachable line of its own" bash -c '! grep -q "^error: inode.unreachable" "$0"' "$TMP/root.txt"
check "root inode damaged: the report is 3 lines (cause, group, summary)" [ "$(wc -l <"$TMP/root.txt")" -eq 3 ]
check "root inode damaged: JSON keeps every record, each naming the root's finding as its cause" \
	python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
u = [x for x in f if x["code"] == "inode.unreachable"]
ok = len(u) > 300 and all(x["cause"] == {"ino": 128, "code": "inode.magic"} for x in u)
ok = ok and [x["cause"] for x in f if x["code"] == "inode.magic"] == [None]
sys.exit(0 if ok else 1)' "$TMP/root.json"

img="$TMP/d1.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c "inode $d1" -c 'write -d core.magic 0' -c 'write -d v3.inumber 0' "$img" >/dev/null 2>&1
"$XFSX_CHECK" "$img" >"$TMP/d1.txt" 2>/dev/null
"$XFSX_CHECK" --json "$img" >"$TMP/d1.json" 2>/dev/null
check "a directory damaged: what lay below it is grouped under it" \
	grep -A1 "^error: inode.magic: AG [0-9]* inode $d1 " "$TMP/d1.txt" | grep -q "caused by it: 3 inode.unreachable (inodes $d2, "
check "a directory damaged: JSON names it as the cause of the subdirectory and its files" \
	python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
d1, d2 = int(sys.argv[2]), int(sys.argv[3])
c = {x["ino"]: x["cause"] for x in f if x["code"] == "inode.unreachable"}
sys.exit(0 if c.get(d2) == {"ino": d1, "code": "inode.magic"} and
         sum(1 for v in c.values() if v and v["ino"] == d1) == 3 else 1)' "$TMP/d1.json" "$d1" "$d2"
rc=0; xfs_repair -n "$img" >/dev/null 2>&1 || rc=$?
check "a directory damaged: xfs_repair -n agrees there is damage (exit $rc)" [ $rc -ne 0 ]
tap_done
