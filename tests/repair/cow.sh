#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Leftover CoW staging extents: a reflinked file
# written with a large CoW extent size hint holds staging extents beyond
# what was written; a copy of the device taken while the filesystem is
# frozen keeps them in the refcount btree (and as OWN_COW rmaps).  Offline
# nothing will remap them: the kernel frees them at mount and xfs_repair
# frees them ("leftover CoW extent").  xfsx_check reports them (warning
# refcount.cow_leftover); one xfsx_repair run (which also replays the
# frozen copy's log) frees them and the usual oracle holds; the files'
# contents are the kernel's.  With and without rmapbt.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "leftover CoW staging extents"
need_kernel_images "leftover CoW staging extents"

mnt="$TMP/mnt"
for rmap in 1 0; do
	what="rmapbt=$rmap"
	img="$TMP/cow-$rmap.img" copy="$TMP/frozen-$rmap.img"
	truncate -s 400M "$img"
	mkfs.xfs -q -f -m reflink=1,rmapbt=$rmap "$img" >/dev/null 2>&1 || { not_ok "$what: mkfs.xfs"; continue; }
	mount_img "$img" "$mnt" || { not_ok "$what: mount"; continue; }
	ok=1
	{
		head -c 8M /dev/urandom >"$mnt/f" && cp --reflink=always "$mnt/f" "$mnt/g" &&
		xfs_io -c "cowextsize 4m" "$mnt/g" && sync -f "$mnt" &&
		xfs_io -c "pwrite -S 0x55 100k 8k" -c fsync "$mnt/g" &&
		xfs_io -c "pwrite -S 0x55 3000k 8k" -c fsync "$mnt/g" &&
		xfs_freeze -f "$mnt" && cp --sparse=always "$img" "$copy"
	} >/dev/null 2>&1 || ok=0
	xfs_freeze -u "$mnt" 2>/dev/null
	md5_f=$(md5sum <"$mnt/f") md5_g=$(md5sum <"$mnt/g")
	umount "$mnt"
	check "$what: frozen copy of a filesystem with CoW writes in progress" [ $ok -eq 1 ]
	[ $ok -eq 1 ] || continue

	# the oracle sees the leftovers (and so must we)
	xfs_repair -n "$copy" >"$TMP/xr.out" 2>&1
	nxr=$(grep -c 'leftover CoW extent' "$TMP/xr.out")
	check "$what: xfs_repair -n reports leftover CoW extents ($nxr)" [ "$nxr" -gt 0 ]
	"$XFSX_CHECK" "$copy" >"$TMP/ck.out" 2>&1
	nck=$(grep -c 'refcount.cow_leftover' "$TMP/ck.out")
	check "$what: xfsx_check reports as many leftover CoW extents ($nck, xfs_repair $nxr)" [ "$nck" -eq "$nxr" ]

	s0=$(img_sha "$copy")
	"$XFSX_REPAIR" -n "$copy" >"$TMP/rn.out" 2>&1; rc=$?
	[ $rc -eq 4 ] && grep -q 'would fix *refcount.cow_leftover' "$TMP/rn.out"
	ok_if "$what: xfsx_repair -n says it would free them (exit $rc)"
	check "$what: xfsx_repair -n wrote nothing" [ "$(img_sha "$copy")" = "$s0" ]
	"$XFSX_REPAIR" "$copy" >"$TMP/rep.out" 2>&1; rc=$?
	[ $rc -eq 1 ] && grep -q '^fixed *refcount.cow_leftover' "$TMP/rep.out"
	ok_if "$what: xfsx_repair freed them in one run (exit $rc)"
	[ $rc -eq 1 ] || sed 's/^/#   /' "$TMP/rep.out" | head -5
	after_repair "$copy" "$what"
	mount -t xfs -o ro,nouuid "$copy" "$mnt" 2>/dev/null && _MOUNTS+=("$mnt")
	[ "$(md5sum <"$mnt/f" 2>/dev/null)" = "$md5_f" ] && [ "$(md5sum <"$mnt/g" 2>/dev/null)" = "$md5_g" ]
	ok_if "$what: both files hold what the kernel last wrote"
	umount "$mnt" 2>/dev/null
	rm -f "$img" "$copy"
done
tap_done
