#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A repair that stopped part-way leaves NEEDSREPAIR on the primary (the
# crash protocol's first write): the kernel refuses to mount, xfsx_check
# reports sb.needsrepair as xfs_repair -n reports it, and the next
# xfsx_repair run finishes: the bit is cleared and the corpus oracle holds.
# Two states: the bit alone (stopped just before the last write), and the
# bit with the AG damage still there (stopped before the headers switched).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "a repair stopped part-way"
have_xfsprogs || { skip "a repair stopped part-way" "xfsprogs not installed"; tap_done; exit; }

img="$TMP/resume.img"
for state in "bit" "bit+damage"; do
	rm -f "$img"; truncate -s 512M "$img"
	mkfs.xfs -q -f -m rmapbt=1,reflink=1 "$img" >/dev/null 2>&1 || { not_ok "$state: mkfs.xfs"; continue; }
	if [ "$state" = "bit+damage" ]; then
		xfs_db -x -c "agf 1" -c "addr bnoroot" -c "write -d magic 0" "$img" >/dev/null 2>&1
	fi
	v=$(xfs_db -r -c "sb 0" -c "p features_incompat" "$img" | awk '{print $3}')
	xfs_db -x -c "sb 0" -c "write -d features_incompat $((v | 0x10))" "$img" >/dev/null 2>&1
	xfs_repair -n "$img" >"$TMP/xr" 2>&1; rc=$?
	check "$state: xfs_repair -n says it needs repair (exit $rc)" [ $rc -ne 0 ]
	"$XFSX_CHECK" --json "$img" >"$TMP/c.json" 2>/dev/null; rc=$?
	check "$state: xfsx_check exit 4 (got $rc)" [ $rc -eq 4 ]
	check "$state: xfsx_check reports sb.needsrepair" grep -q '"code":"sb.needsrepair"' "$TMP/c.json"
	if have_loop_xfs; then
		mkdir -p "$TMP/mnt"
		if mount -t xfs -o loop "$img" "$TMP/mnt" 2>/dev/null; then
			umount "$TMP/mnt"
			not_ok "$state: the kernel refuses to mount it"
		else
			ok "$state: the kernel refuses to mount it"
		fi
	else
		skip "$state: the kernel refuses to mount it" "needs root and a loop device"
	fi
	"$XFSX_REPAIR" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$state: xfsx_repair fixed it (exit $rc)" [ $rc -eq 1 ]
	v=$(xfs_db -r -c "sb 0" -c "p features_incompat" "$img" | awk '{print $3}')
	check "$state: NEEDSREPAIR cleared (features_incompat $v)" [ $((v & 0x10)) -eq 0 ]
	after_repair "$img" "$state"
done
tap_done
