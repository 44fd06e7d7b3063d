#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mend, don't clear.  On copies of one
# kernel-filled image (xfsx_mkfs, 1 GiB: /r of 300 KB with a hard link /r2,
# /d with 20 files (a block directory), /s with 2 (short form), /many with
# 300 xattrs in leaf blocks, /short with a short form attr fork, /abt whose
# attr fork is a btree), one damage each: a core field (nblocks,
# naextents, flags, flags2, version, aformat, magic, a directory's size),
# an attr fork's extent count or bmbt record count, and a stale CRC over
# damage it must not hide (a fuzzed attr leaf count; an extent stretched
# over another file's block).  Per case: ONE xfsx_repair run exits 1, its
# --json says how many inodes it cleared (0 where Debian xfs_repair keeps
# the file), every path and regular file's content (md5, read through a
# read-only mount before the damage and after the repair) is kept, the
# xattrs where xfs_repair keeps them, then the after_repair oracle; and
# Debian xfs_repair on a copy of the same damage keeps no path, file or
# xattr we do not.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "inode mending"
need_kernel_images "inode mending"

mnt="$TMP/mnt"
mkdir -p "$mnt"

# make_base IMG [mkfs options]: the image above, filled by the kernel
make_base() {
	local img=$1; shift
	truncate -s 1G "$img"
	"$XFSX_MKFS" -q "$@" "$img" >/dev/null 2>&1 || return 1
	mount_img "$img" "$mnt" || return 1
	head -c 307200 /dev/urandom >"$mnt/r" && ln "$mnt/r" "$mnt/r2" && mkdir "$mnt/d" &&
	mkdir "$mnt/s" && echo a >"$mnt/s/a" && echo b >"$mnt/s/b" &&
	for i in $(seq 1 20); do head -c $((i * 1000)) /dev/urandom >"$mnt/d/f$i" || return 1; done &&
	python3 - "$mnt" <<'PY' || { umount "$mnt"; return 1; }
import os, sys
d = sys.argv[1]
open(d + "/many", "w").write("many\n")
for i in range(1, 301):
    os.setxattr(d + "/many", "user.attr_%d" % i, b"value-of-attr-%d-%040d" % (i, i))
open(d + "/short", "w").write("short\n")
for n in "abc":
    os.setxattr(d + "/short", "user." + n, n.encode() * 3)
# remote values written between data appends: an attr fork of many extents (a btree)
open(d + "/abt", "w").write("abt\n")
f = open(d + "/filler", "wb")
for i in range(60):
    os.setxattr(d + "/abt", "user.big%d" % i, bytes([i % 256]) * 5000)
    f.write(os.urandom(4096)); f.flush(); os.fsync(f.fileno())
f.close()
# a file of one-block extents (another file's blocks between them)
a, b = open(d + "/frag", "wb"), open(d + "/other", "wb")
for i in range(6):
    for f in (a, b):
        f.write(os.urandom(4096)); f.flush(); os.fsync(f.fileno())
PY
	umount "$mnt"
}

# listing IMG OUT: "path md5" of every path (md5 for regular files, "-" else)
# and OUT.x: "inode name md5" of every xattr, both as the kernel reads them
listing() {
	local img=$1 out=$2
	: >"$out"; : >"$out.x"
	mount -t xfs -o ro,nouuid "$img" "$mnt" 2>/dev/null || return 1
	_MOUNTS+=("$mnt")
	python3 - "$mnt" <<'PY' | LC_ALL=C sort >"$out"
import hashlib, os, stat, sys
top = sys.argv[1]
for d, dirs, files in os.walk(top):
    for nm in dirs + files:
        p = os.path.join(d, nm)
        rel = os.path.relpath(p, top)
        try:
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                print(rel, hashlib.md5(open(p, "rb").read()).hexdigest())
            else:
                print(rel, "-")
        except OSError:
            print(rel, "unreadable")
PY
	python3 "$XFSX_SRC/tests/repair/xattrs_kept.py" "$mnt" | LC_ALL=C sort >"$out.x"
	umount "$mnt"
}

ino_of() { xfs_db -r -c "path $2" -c "print v3.inumber" "$1" 2>/dev/null | awk '{print $3}'; }

base="$TMP/base.img"
make_base "$base" || { not_ok "fill the base image with the kernel"; tap_done; exit; }
check_clean_base "$base"
listing "$base" "$TMP/before" || { not_ok "mount the base image read-only"; tap_done; exit; }
diag "base: $(wc -l <"$TMP/before") paths, $(wc -l <"$TMP/before.x") xattrs"

# run_case LABEL KEEP CLEARED DAMAGE...: DAMAGE is the xfs_db command list
# (-c ... pairs) made on a copy of $BASE.  KEEP: "all" (every path, file
# and xattr of the base comes back) or "files" (every path and file; the
# xattrs at least xfs_repair's).  CLEARED: the inodes_cleared --json must
# report.  CLAIM, when set, is run after the repair (extra assertions).
CLAIM=
run_case() {
	local label=$1 keep=$2 cleared=$3 rc json ncl
	shift 3
	local img="$TMP/case.img" xr="$TMP/case-xr.img"
	cp --sparse=always "$BASE" "$img"
	xfs_db -x "$@" "$img" >/dev/null 2>&1
	cp --sparse=always "$img" "$xr"
	local xrc
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	"$XFSX_CHECK" -v "$img" >"$TMP/check.out" 2>&1; xrc=$?	# -v: every finding on its line
	# (xfs_repair 6.1 misses a forkoff that leaves /r unreadable by the kernel; xfsx_check does not)
	check "$label: the damage is there (xfs_repair -n exit $rc, xfsx_check exit $xrc)" \
		[ $rc -ne 0 -o $xrc -eq 4 ]
	"$XFSX_REPAIR" --json "$img" >"$TMP/rep.json" 2>"$TMP/rep.err"; rc=$?
	check "$label: xfsx_repair fixed it in one run (exit $rc)" [ $rc -eq 1 ]
	[ $rc -eq 1 ] || head -3 "$TMP/rep.err" | sed 's/^/#   /'
	ncl=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["inodes_cleared"])' \
		"$TMP/rep.json" 2>/dev/null)
	check "$label: --json inodes_cleared $cleared (got ${ncl:-none})" [ "${ncl:-x}" = "$cleared" ]
	[ -n "$CLAIM" ] && $CLAIM
	after_repair "$img" "$label"
	listing "$img" "$TMP/us" || { not_ok "$label: mount the repaired image read-only"; return; }
	xfs_repair "$xr" >/dev/null 2>&1
	listing "$xr" "$TMP/xr" || { not_ok "$label: mount xfs_repair's copy read-only"; return; }
	local lost_us lost_xr xmiss
	lost_us=$(LC_ALL=C comm -23 "$BEFORE" "$TMP/us" | wc -l)
	lost_xr=$(LC_ALL=C comm -23 "$BEFORE" "$TMP/xr" | wc -l)
	check "$label: paths and file contents lost: $lost_us, no more than xfs_repair's $lost_xr" \
		[ "$lost_us" -le "$lost_xr" ]
	if [ "$keep" = all ] || [ "$keep" = files ]; then
		check "$label: every path and file of the base kept, content equal ($lost_us lost)" \
			[ "$lost_us" -eq 0 ]
		[ "$lost_us" -eq 0 ] || LC_ALL=C comm -23 "$BEFORE" "$TMP/us" | head -3 | sed 's/^/#   lost: /'
	fi
	xmiss=$(LC_ALL=C comm -13 "$TMP/us.x" "$TMP/xr.x" | wc -l)
	check "$label: xattrs kept: xfsx_repair $(wc -l <"$TMP/us.x"), xfs_repair $(wc -l <"$TMP/xr.x"), kept by xfs_repair only: $xmiss" \
		[ "$xmiss" -eq 0 ]
	if [ "$keep" = all ]; then
		check "$label: every xattr of the base kept ($(wc -l <"$TMP/us.x") of $(wc -l <"$BEFORE.x"))" \
			cmp -s "$BEFORE.x" "$TMP/us.x"
	fi
}

BASE=$base BEFORE="$TMP/before"

# reproduction 1: core fields of /r, CRC kept valid; xfs_repair mends each
for d in "core.nblocks 0" "core.naextents 16777216" "core.flags 0xffff" \
	 "v3.flags2 0xffffffffffffffff" "core.version 2" "core.aformat 7" "core.magic 0"; do
	run_case "/r $d" all 0 -c "path /r" -c "write -d $d"
done
# a data extent count past what the fork holds: the records present (xfs_repair loses /r, /r2)
run_case "/r core.nextents 1000" all 0 -c "path /r" -c "write -d core.nextents 1000"
# a damaged attr fork offset: the one where both forks load and map di_nblocks is found
# again (xfs_repair loses /many whole; leaves /r unreadable; drops /abt's and /short's xattrs)
run_case "/r core.forkoff 1" all 0 -c "path /r" -c "write -d core.forkoff 1"
run_case "/many core.forkoff 1" all 0 -c "path /many" -c "write -d core.forkoff 1"
run_case "/abt core.forkoff 2" all 0 -c "path /abt" -c "write -d core.forkoff 2"
run_case "/short core.forkoff 3" all 0 -c "path /short" -c "write -d core.forkoff 3"
# an attr fork's format, extent count, bmbt record counts: the attr fork goes or is mended
# a damaged attr fork format: the format its fork loads under (xfs_repair drops the xattrs)
run_case "/many core.aformat 7" all 0 -c "path /many" -c "write -d core.aformat 7"
run_case "/abt core.aformat 7 (attr btree)" all 0 -c "path /abt" -c "write -d core.aformat 7"
run_case "/short core.aformat 7 (short form)" all 0 -c "path /short" -c "write -d core.aformat 7"
run_case "/many core.naextents 16777216" files 0 -c "path /many" -c "write -d core.naextents 16777216"
run_case "/abt core.naextents 16777216 (attr btree)" files 0 \
	-c "path /abt" -c "write -d core.naextents 16777216"
run_case "/abt attr bmbt leaf numrecs 0" files 0 \
	-c "path /abt" -c "addr a.bmbt.ptrs[1]" -c "write -d numrecs 0"
run_case "/abt attr bmbt root numrecs 5" files 0 -c "path /abt" -c "write -d a.bmbt.numrecs 5"
run_case "/d core.magic 0 (a directory)" all 0 -c "path /d" -c "write -d core.magic 0"
# a flag that does not belong on a directory: dropped, the directory walked and kept
# (once its children were moved to lost+found and left in /d too)
run_case "/d core.realtime 1 (a directory)" all 0 -c "path /d" -c "write -d core.realtime 1"

# a directory's impossible size: mended from its readable data fork (the size its entries,
# or its mapped blocks, imply), every entry kept; not cleared
run_case "/s core.size 1000 (a short form directory)" all 0 -c "path /s" -c "write -d core.size 1000"
run_case "/d core.size 0 (a block directory)" all 0 -c "path /d" -c "write -d core.size 0"

# reproduction 8: a stale CRC hides nothing
MANY=$(ino_of "$base" /many)
attr_seen() {
	local n
	n=$(grep -c "^error: attr\.[a-z]*: .* inode $MANY " "$TMP/check.out")
	check "CRC-bad /many: xfsx_check judged its attr blocks anyway ($n attr findings)" [ "$n" -gt 1 ]
	check "CRC-bad /many: the report leaves nothing ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["left"])' "$TMP/rep.json") left)" \
		grep -q '"left":0,' "$TMP/rep.json"
}
CLAIM=attr_seen
run_case "/many attr leaf hdr.count fuzzed under a stale CRC" all 0 \
	-c "path /many" -c "ablock 1" -c "fuzz -d hdr.count random" -c "path /many" -c "write -c core.gen 1"
share_seen() {
	check "stretched /d/f1: xfsx_check saw the extent the stale CRC covers" \
		grep -q -e 'inode\.reflink' -e 'block\.dup' -e 'refcount\.' "$TMP/check.out"
}
CLAIM=share_seen
run_case "/d/f1 extent stretched over /d/f2's block under a stale CRC (reflink)" files 0 \
	-c "path /d/f1" -c "write -c u3.bmx[0].blockcount 2"
CLAIM=

# the same without reflink: a duplicate claim; the damaged claimant goes, the other stays
base2="$TMP/base2.img"
if make_base "$base2" -m reflink=0; then
	listing "$base2" "$TMP/before2"
	BASE=$base2 BEFORE="$TMP/before2"
	run_case "/d/f1 extent stretched over /d/f2's block under a stale CRC (no reflink)" none 1 \
		-c "path /d/f1" -c "write -c u3.bmx[0].blockcount 2"
	check "no reflink: /d/f2 kept with its content" grep -q "^d/f2 $(grep '^d/f2 ' "$TMP/before2" | cut -d' ' -f2)\$" "$TMP/us"
	# a valid CRC over a shifted extent: the rmapbt backs /d/f2's claim, not /d/f1's
	run_case "/d/f1 startblock moved onto /d/f2's block (no reflink, CRC valid)" none 1 \
		-c "path /d/f1" -c "fuzz -d u3.bmx[0].startblock lastbit"
	check "no reflink, shifted: /d/f2 kept with its content" grep -q "^d/f2 $(grep '^d/f2 ' "$TMP/before2" | cut -d' ' -f2)\$" "$TMP/us"
	# one file mapping a block twice: its data fork is bad (xfs_repair clears it too)
	F1=$(xfs_db -r -c "path /frag" -c "print u3.bmx[1].startblock" "$base2" | awk '/startblock =/ {print $3}')
	diag "/frag: extent 1 at block ${F1:-?}"
	run_case "/frag extent 0 moved onto its own extent 1 (no reflink)" none 1 \
		-c "path /frag" -c "write -d u3.bmx[0].startblock $F1"
else
	not_ok "fill a base image without reflink"
fi
tap_done
