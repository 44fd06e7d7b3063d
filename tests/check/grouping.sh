#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Causes first, in xfsx_check and xfsx_repair alike: one bad attr leaf
# block (its entry count fuzzed) gives hundreds of findings about that
# block; a 300-entry directory whose first data block is zeroed leaves its
# files unreachable.  The text report prints the first finding and one line
# counting the rest ("... and N more findings in the same block" / "of the
# same kind"; -v lists them), -v prints every finding, JSON keeps every
# record and adds "groups" with the counts, and repair's text report is
# grouped the same way.  The findings and exit codes are the same with and
# without -v.
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"

have_xfsprogs || { skip "grouped reports" "xfsprogs not installed"; tap_done; exit; }
command -v python3 >/dev/null || { skip "grouped reports" "needs python3"; tap_done; exit; }

# after FILE REGEX1 REGEX2: the line after the one matching REGEX1 matches REGEX2
after() { grep -A1 -E -- "$2" "$1" | sed -n 2p | grep -Eq -- "$3"; }
# count_lines FILE REGEX
count_lines() { grep -Ec -- "$2" "$1"; }
# json_check FILE EXPR: python over the report d, findings f, groups g
json_check() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); f = d["findings"]; g = d["groups"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

# ---- a directory of 300 files, its first data block zeroed (no mount needed) ----
src="$TMP/f"; echo data >"$src"
{
	echo /dev/null; echo "0 0"; echo "d--755 0 0"
	echo "d d--755 0 0"
	for i in $(seq 1 300); do echo "file_$i ---644 0 0 $src"; done
	echo '$'
	echo '$'
} >"$TMP/p.proto"
dimg="$TMP/dir.img"
truncate -s 320m "$dimg"
mkfs.xfs -f -q -p "$TMP/p.proto" "$dimg" >/dev/null 2>&1 || { not_ok "mkfs.xfs -p"; tap_done; exit; }
dino=$(xfs_db -r -c "ls /" "$dimg" 2>/dev/null | awk '$NF == "(good)" && $(NF-1) == "d" {print $2}')
fsb=$(xfs_db -r -c "inode $dino" -c "bmap" "$dimg" 2>/dev/null | awk '$2 == "offset" && $3 == 0 {print $5; exit}')
dd_=$(xfs_db -r -c "convert fsb ${fsb:-0} daddr" "$dimg" 2>/dev/null | awk '{print $1 + 0}')
diag "directory /d is inode $dino, its first data block fsblock $fsb, daddr $dd_"
[ -n "$fsb" ] && dd if=/dev/zero of="$dimg" bs=512 seek="$dd_" count=8 conv=notrunc status=none
"$XFSX_CHECK" "$dimg" >"$TMP/d.txt" 2>/dev/null; rc=$?
"$XFSX_CHECK" -v "$dimg" >"$TMP/d.v" 2>/dev/null; vrc=$?
"$XFSX_CHECK" -j "$dimg" >"$TMP/d.json" 2>/dev/null; jrc=$?
dir_exits_4() { [ $rc -eq 4 ] && [ $vrc -eq 4 ] && [ $jrc -eq 4 ]; }
check "zeroed directory block: exit 4 with and without -v and --json ($rc, $vrc, $jrc)" dir_exits_4
nu=$(python3 -c 'import json,sys; print(sum(x["code"] == "inode.unreachable" for x in json.load(open(sys.argv[1]))["findings"]))' "$TMP/d.json")
diag "inode.unreachable findings in JSON: $nu"
check "zeroed directory block: many files unreachable ($nu)" [ "${nu:-0}" -ge 100 ]
dir_text_grouped() { [ "$(count_lines "$TMP/d.txt" '^error: inode\.unreachable: ')" -eq 1 ] && grep -Eq "^  \.\.\. and $((nu - 1)) more findings of the same kind: $((nu - 1)) inode\.unreachable \(inodes [0-9, .]+\); -v lists them$" "$TMP/d.txt"; }
check "zeroed directory block: the text has one inode.unreachable line and one counting the other $((nu - 1))" dir_text_grouped
check "zeroed directory block: the text is short ($(wc -l <"$TMP/d.txt") lines)" [ "$(wc -l <"$TMP/d.txt")" -lt 12 ]
# causes first: the damaged directory's own findings come before the inodes it no longer names
dir_cause_first() {
	local d u
	d=$(grep -n '^error: dir\.' "$1" | head -1 | cut -d: -f1)
	u=$(grep -n '^error: inode\.unreachable: ' "$1" | head -1 | cut -d: -f1)
	[ -n "$d" ] && [ -n "$u" ] && [ "$d" -lt "$u" ] && ! grep -n '^error: dir\.' "$1" | cut -d: -f1 | awk -v u="$u" '$1 > u {bad=1} END {exit !bad}'
}
check "zeroed directory block: every directory finding is printed before the unreachable files" dir_cause_first "$TMP/d.txt"
check "zeroed directory block: the same order with -v" dir_cause_first "$TMP/d.v"
dir_verbose_all() { [ "$(count_lines "$TMP/d.v" '^error: inode\.unreachable: ')" -eq "$nu" ] && ! grep -q "more findings" "$TMP/d.v"; }
check "zeroed directory block: -v lists every inode.unreachable ($(count_lines "$TMP/d.v" '^error: inode\.unreachable: '))" dir_verbose_all
check "zeroed directory block: JSON has every finding and a group counting them" \
	json_check "$TMP/d.json" 'len(f) == d["summary"]["findings"] and any(x["kind"] == "code" and x["code"] == "inode.unreachable" and x["count"] == '"$((nu - 1))"' and x["codes"] == {"inode.unreachable": '"$((nu - 1))"'} and f[x["finding"]]["code"] == "inode.unreachable" and f[x["finding"]]["group"] is None for x in g) and sum(1 for x in f if x["group"] is not None) == sum(x["count"] for x in g)'
"$XFSX_REPAIR" -n "$dimg" >"$TMP/dr.txt" 2>/dev/null; rrc=$?
"$XFSX_REPAIR" -n -v "$dimg" >"$TMP/dr.v" 2>/dev/null; rvrc=$?
check "repair -n: the same exit with and without -v ($rrc, $rvrc)" [ $rrc -eq $rvrc ]
dir_repair_grouped() { [ "$(count_lines "$TMP/dr.txt" '^would fix inode\.unreachable ')" -eq 1 ] && grep -Eq "^  \.\.\. and $((nu - 1)) more findings of the same kind, would fix \[lost_found\]: $((nu - 1)) inode\.unreachable " "$TMP/dr.txt"; }
check "repair -n: one inode.unreachable line, one counting the rest with the action" dir_repair_grouped
dir_moves_counted() { [ "$(count_lines "$TMP/dr.txt" '^would move ')" -eq 20 ] && grep -Eq "^  \.\.\. and $((nu - 20)) more inodes to /lost\+found; -v lists them$" "$TMP/dr.txt"; }
check "repair -n: the moves to /lost+found are counted past 20" dir_moves_counted
dir_repair_verbose_all() { [ "$(count_lines "$TMP/dr.v" '^would fix inode\.unreachable ')" -eq "$nu" ] && [ "$(count_lines "$TMP/dr.v" '^would move ')" -eq "$nu" ]; }
check "repair -n -v: every line ($(count_lines "$TMP/dr.v" '^would fix inode\.unreachable ') unreachable, $(count_lines "$TMP/dr.v" '^would move ') moves)" dir_repair_verbose_all
check "repair -n: the place as check prints it (AG n inode N)" \
	grep -Eq "^would fix +dir\.[a-z_]+ AG [0-9]+ inode $dino( daddr 0x[0-9a-f]+)? \(/d\): " "$TMP/dr.txt"

# ---- one attr leaf block of a file with 2000 xattrs (the kernel writes them) ----
if ! have_loop_xfs; then
	skip "bad attr leaf block grouped" "needs root and a loop device to set xattrs with the kernel"
	tap_done; exit
fi
aimg="$TMP/attr.img"
truncate -s 320M "$aimg"
mkfs.xfs -q -f "$aimg" || { not_ok "mkfs.xfs"; tap_done; exit; }
mount_img "$aimg" "$TMP/mnt" || { not_ok "mount"; tap_done; exit; }
python3 -c '
import os, sys
p = os.path.join(sys.argv[1], "many"); open(p, "w").close()
for i in range(2000): os.setxattr(p, "user.node%05d" % i, b"x" * 20)' "$TMP/mnt" || not_ok "setxattr"
many=$(stat -c %i "$TMP/mnt/many")
unmount_dir "$TMP/mnt"
xfs_db -x -c "inode $many" -c "ablock 1" -c "type attr" -c "fuzz -d hdr.count random" "$aimg" >/dev/null 2>&1
"$XFSX_CHECK" "$aimg" >"$TMP/a.txt" 2>/dev/null; rc=$?
"$XFSX_CHECK" -v "$aimg" >"$TMP/a.v" 2>/dev/null; vrc=$?
"$XFSX_CHECK" -j "$aimg" >"$TMP/a.json" 2>/dev/null; jrc=$?
attr_exits_4() { [ $rc -eq 4 ] && [ $vrc -eq 4 ] && [ $jrc -eq 4 ]; }
check "bad attr leaf: exit 4 with and without -v and --json ($rc, $vrc, $jrc)" attr_exits_4
read -r anchor daddr nblock < <(python3 -c '
import json, sys
from collections import Counter
f = json.load(open(sys.argv[1]))["findings"]
c = Counter((x["ino"], x["daddr"]) for x in f if x["daddr"] is not None and x["cause"] is None)
(ino, daddr), n = c.most_common(1)[0]
first = next(x for x in f if (x["ino"], x["daddr"]) == (ino, daddr))
print(first["code"], daddr, n)' "$TMP/a.json")
diag "the block with most findings: daddr $daddr, $nblock findings, the first $anchor"
hex=$(printf '0x%x' "${daddr:-0}")
check "bad attr leaf: one block holds hundreds of findings ($nblock)" [ "${nblock:-0}" -ge 100 ]
check "bad attr leaf: its first finding, then one line counting the other $((nblock - 1))" \
	after "$TMP/a.txt" "^error: $anchor: AG 0 inode $many daddr $hex: " "^  \.\.\. and $((nblock - 1)) more findings in the same block: [0-9]+ attr\.[a-z_]+.*; -v lists them$"
check "bad attr leaf: the text is short ($(wc -l <"$TMP/a.txt") lines)" [ "$(wc -l <"$TMP/a.txt")" -lt 10 ]
check "bad attr leaf: -v prints every finding of the block ($(count_lines "$TMP/a.v" " inode $many daddr $hex: "))" \
	[ "$(count_lines "$TMP/a.v" " inode $many daddr $hex: ")" -eq "$nblock" ]
check "bad attr leaf: JSON keeps every finding, the group counts the block's" \
	json_check "$TMP/a.json" 'len(f) == d["summary"]["findings"] and any(x["kind"] == "block" and x["ino"] == '"$many"' and x["daddr"] == '"$daddr"' and x["count"] == '"$((nblock - 1))"' and sum(x["codes"].values()) == x["count"] for x in g)'
"$XFSX_REPAIR" -n "$aimg" >"$TMP/ar.txt" 2>/dev/null; rrc=$?
"$XFSX_REPAIR" -n -v "$aimg" >"$TMP/ar.v" 2>/dev/null; rvrc=$?
check "repair -n: exit $rrc with and without -v ($rvrc)" [ $rrc -eq $rvrc ]
check "repair -n: the block's first finding, then one line counting the rest with the action" \
	after "$TMP/ar.txt" "^would fix +$anchor AG 0 inode $many daddr $hex \(/many\): " "^  \.\.\. and $((nblock - 1)) more findings in the same block, would fix \[xattr\]: "
attr_repair_short_verbose_all() { [ "$(wc -l <"$TMP/ar.txt")" -lt 10 ] && [ "$(count_lines "$TMP/ar.v" " inode $many daddr $hex ")" -eq "$nblock" ]; }
check "repair -n: the text is short ($(wc -l <"$TMP/ar.txt") lines), -v has every line ($(count_lines "$TMP/ar.v" " inode $many daddr $hex "))" attr_repair_short_verbose_all
tap_done
