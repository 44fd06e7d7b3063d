#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Damaged inodes and inode btrees: xfs_db breaks an image made by Debian's
# mkfs.xfs and aged by the kernel; xfsx_bulkstat must skip exactly the
# damaged inodes with a message naming each and the failed check, count
# them in its summary, list everything else unchanged, exit 4 only with
# --strict, and never crash (random damage with xfs_db blocktrash too).
. "$XFSX_SRC/tests/lib.sh"
HERE="$XFSX_SRC/tests/bulkstat"

if ! have_xfsprogs || ! have_loop_xfs; then
	skip "damaged inodes" "needs root, loop devices, XFS in the kernel and xfsprogs"
	tap_done; exit
fi

IMG="$TMP/d.img"
MNT="$TMP/mnt"
truncate -s 512M "$IMG"
mkfs.xfs -q -f -d agcount=4 "$IMG" || { not_ok "mkfs.xfs"; tap_done; exit; }
mount_img "$IMG" "$MNT" rw || { not_ok "mount"; tap_done; exit; }
for d in a b c d; do
	mkdir "$MNT/$d"
	for i in $(seq 1 150); do echo "$d$i" > "$MNT/$d/f$i"; done
done
unmount_dir "$MNT"
cp --sparse=always "$IMG" "$TMP/clean.img"

"$XFSX_BULKSTAT" "$IMG" > "$TMP/clean.jsonl"
total=$(wc -l < "$TMP/clean.jsonl")
diag "clean image: $total inodes"
# four inodes of AG 0 well away from the root inode's cluster
mapfile -t victims < <(python3 -c '
import json, sys
inos = [json.loads(l)["ino"] for l in open(sys.argv[1])]
ag0 = [i for i in inos if i < inos[0] + 10000 and i >= inos[0] + 64]
print("\n".join(str(i) for i in ag0[10:14]))' "$TMP/clean.jsonl")
A=${victims[0]} B=${victims[1]} C=${victims[2]} D=${victims[3]}
diag "victims: $A (magic) $B (CRC) $C (format) $D (mode 0)"

# expect_skip NAME STDERR INO CODE
expect_skip() {
	if grep -q "AG [0-9]* inode $3: skipped: $4:" "$2"; then ok "$1"; else
		not_ok "$1"; sed 's/^/# /' "$2"; fi
}
# listed_except OUT INO...: OUT is the clean listing without these inodes
listed_except() {
	local out=$1; shift
	python3 - "$TMP/clean.jsonl" "$out" "$@" <<'PY'
import json, sys
clean = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])]
gone = {int(x) for x in sys.argv[3:]}
want = [r for r in clean if r["ino"] not in gone]
if got != want:
    print("# %d records, expected %d" % (len(got), len(want)))
    sys.exit(1)
PY
}

# 1. CRC and a field the kernel rejects: offline and mounted agree
xfs_db -x -c "inode $B" -c 'write -c core.gen 77' "$IMG" >/dev/null 2>&1
xfs_db -x -c "inode $C" -c 'write -d core.format 7' "$IMG" >/dev/null 2>&1
"$XFSX_BULKSTAT" "$IMG" > "$TMP/o1.jsonl" 2> "$TMP/o1.err"; rc=$?
check "bad CRC and bad format: exit 0 without --strict" test $rc -eq 0
expect_skip "bad CRC: inode $B named with inode.crc" "$TMP/o1.err" "$B" inode.crc
expect_skip "bad format: inode $C named with inode.format" "$TMP/o1.err" "$C" inode.format
check "summary counts 2 damaged inodes" grep -q "; 2 damaged inodes skipped" "$TMP/o1.err"
check "every other inode listed unchanged" listed_except "$TMP/o1.jsonl" "$B" "$C"
"$XFSX_BULKSTAT" --strict "$IMG" > /dev/null 2>&1; rc=$?
check "--strict: exit 4" test $rc -eq 4
if mount_img "$IMG" "$MNT" ro; then
	"$XFSX_BULKSTAT" "$MNT" > "$TMP/m1.jsonl" 2> "$TMP/m1.err"; rc=$?
	unmount_dir "$MNT"
	check "mounted: exit 0" test $rc -eq 0
	check "mounted: the kernel's refusals are named ($B, $C)" \
		sh -c "grep -q 'inode $B: skipped' '$TMP/m1.err' && grep -q 'inode $C: skipped' '$TMP/m1.err'"
	check "mounted: same listing as offline" cmp -s "$TMP/m1.jsonl" "$TMP/o1.jsonl"
else
	not_ok "read-only mount of the damaged image"
fi

# 2. a bad magic (the kernel would refuse its whole cluster) and an inode
#    allocated in the inobt but free on disk (the kernel skips it silently)
xfs_db -x -c "inode $A" -c 'write -d core.magic 0x1234' "$IMG" >/dev/null 2>&1
xfs_db -x -c "inode $D" -c 'write -d core.mode 0' "$IMG" >/dev/null 2>&1
"$XFSX_BULKSTAT" "$IMG" > "$TMP/o2.jsonl" 2> "$TMP/o2.err"; rc=$?
check "four damaged inodes: exit 0" test $rc -eq 0
expect_skip "bad magic: inode $A named with inode.magic" "$TMP/o2.err" "$A" inode.magic
expect_skip "mode 0: inode $D named with inode.free" "$TMP/o2.err" "$D" inode.free
check "summary counts 4 damaged inodes" grep -q "$((total - 4)) inodes listed; 4 damaged inodes skipped" "$TMP/o2.err"
check "every other inode listed unchanged" listed_except "$TMP/o2.jsonl" "$A" "$B" "$C" "$D"
"$XFSX_BULKSTAT" --strict --threads=1 "$IMG" > /dev/null 2>&1; rc=$?
check "--strict: exit 4" test $rc -eq 4

# 3. a damaged inode btree root and an AGI with a bad CRC: those AGs'
#    inodes cannot be listed, the rest are, and the findings say why
cp --sparse=always "$TMP/clean.img" "$IMG"
xfs_db -x -c 'agi 1' -c 'addr root' -c 'write -d magic 0x12345678' "$IMG" >/dev/null 2>&1
xfs_db -x -c 'agi 2' -c 'write -c seqno 9' "$IMG" >/dev/null 2>&1
"$XFSX_BULKSTAT" "$IMG" > "$TMP/o3.jsonl" 2> "$TMP/o3.err"; rc=$?
check "damaged inobt and AGI: exit 0 without --strict" test $rc -eq 0
check "inobt root damage reported as inobt.magic" grep -q "inobt.magic: AG 1" "$TMP/o3.err"
check "AGI damage reported as agi.crc" grep -q "agi.crc: AG 2" "$TMP/o3.err"
ag0_3=$(python3 -c '
import json, sys
agi = lambda i: i >> int(sys.argv[2])
print(sum(1 for l in open(sys.argv[1]) if agi(json.loads(l)["ino"]) in (0, 3)))' "$TMP/clean.jsonl" \
	"$(xfs_db -r -c 'sb 0' -c 'print agblklog inopblog' "$IMG" | awk '{s += $3} END {print s}')")
check "AGs 0 and 3 still listed in full ($ag0_3 inodes)" test "$(wc -l < "$TMP/o3.jsonl")" -eq "$ag0_3"
"$XFSX_BULKSTAT" --strict "$IMG" > /dev/null 2>&1; rc=$?
check "--strict: exit 4" test $rc -eq 4

# 4. random damage: never a crash
crashes=0
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
	cp --sparse=always "$TMP/clean.img" "$IMG"
	xfs_db -x -c "blocktrash -s $seed -n 40 -t inode -t inobt -x 1 -y 64 -z" "$IMG" >/dev/null 2>&1
	"$XFSX_BULKSTAT" --threads=2 "$IMG" > /dev/null 2> "$TMP/r.err"; rc=$?
	if [ $rc -ge 128 ] || [ $rc -eq 8 ]; then
		crashes=$((crashes + 1)); diag "seed $seed: exit $rc"; tail -3 "$TMP/r.err" | sed 's/^/# /'
	fi
done
check "random damage (12 seeds of xfs_db blocktrash on inodes and inobt): no crash" test $crashes -eq 0

# 5. a truncated image: unreadable chunks are named, no crash
cp --sparse=always "$TMP/clean.img" "$IMG"
truncate -s 300M "$IMG"
"$XFSX_BULKSTAT" "$IMG" > /dev/null 2> "$TMP/t.err"; rc=$?
check "truncated image: no crash (exit $rc)" test $rc -lt 128
tap_done
