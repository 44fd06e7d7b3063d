#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Byte-exact restore (sha256) from undo files: xfsx_repair --undo-file on a
# kernel-aged 8-AG image with five kinds of damage in every AG (every AG
# rebuilt, or every secondary rewritten); xfsx_mkfs --undo-file over an
# ext4 image holding data, with -f over an existing XFS, and on a loop
# device (BLKDISCARD/BLKZEROOUT recorded); a dirty log replayed before the
# repair; xfsx_undo -n writes nothing;
# a second xfsx_undo of the same file is harmless.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"
. "$XFSX_SRC/tests/undo/undo_lib.sh"

need_undo "undo restore"

base="$TMP/base.img"
if ! age_image "$base" 1G "-m rmapbt=1,reflink=1 -d agcount=8" 2>"$TMP/err"; then
	not_ok "aging the base image: $(tail -1 "$TMP/err")"; tap_done; exit
fi
img="$TMP/img"
for type in bno cnt+rmap agf+agi secondaries refcount+inobt; do
	cpimg "$base" "$img"
	damage "$img" "$type" 8
	orig=$(img_sha "$img")
	rm -f "$TMP/u"
	"$XFSX_REPAIR" --undo-file="$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$type in every AG: xfsx_repair --undo-file fixed it (exit $rc)" [ $rc -eq 1 ]
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$type: xfs_repair -n clean after the repair (exit $rc)" [ $rc -eq 0 ]
	check "$type: the repair wrote something" [ "$(img_sha "$img")" != "$orig" ]
	after=$(img_sha "$img")
	"$XFSX_UNDO" -n -v "$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$type: xfsx_undo -n exit 0 (got $rc) and wrote nothing" \
		[ $rc -eq 0 -a "$(img_sha "$img")" = "$after" ]
	check "$type: -n -v lists the ranges" grep -q "^would restore" "$TMP/out"
	"$XFSX_UNDO" "$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$type: xfsx_undo exit 0 (got $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || tail -3 "$TMP/out" | sed 's/^/#   /'
	check "$type: restored byte-exact (sha256)" [ "$(img_sha "$img")" = "$orig" ]
	"$XFSX_UNDO" "$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$type: a second xfsx_undo changes nothing (exit $rc)" \
		[ $rc -eq 0 -a "$(img_sha "$img")" = "$orig" ]
done

# a dirty log: the replay (written before the scan, then the filesystem
# opened again) is covered by the same undo file
cpimg "$base" "$img"
if mount_img "$img" "$TMP/dmnt"; then
	for i in $(seq 1 200); do echo "file $i" >"$TMP/dmnt/dirty$i"; done
	mkdir "$TMP/dmnt/dirtydir"
	xfs_io -x -c "shutdown -f" "$TMP/dmnt"
	umount "$TMP/dmnt"
	orig=$(img_sha "$img")
	rm -f "$TMP/u"
	"$XFSX_REPAIR" --undo-file="$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "dirty log: xfsx_repair --undo-file replayed it (exit $rc)" \
		[ $rc -le 1 -a "$(img_sha "$img")" != "$orig" ]
	grep -q "replayed and reset" "$TMP/out" || diag "no replay reported: $(head -2 "$TMP/out")"
	"$XFSX_UNDO" "$TMP/u" "$img" >"$TMP/out" 2>&1; rc=$?
	check "dirty log: xfsx_undo exit 0 (got $rc)" [ $rc -eq 0 ]
	check "dirty log: restored byte-exact, log dirty again (sha256)" [ "$(img_sha "$img")" = "$orig" ]
else
	not_ok "dirty log: mounting the aged image"
fi

# undo file size: the bytes written plus small headers at most
cpimg "$base" "$img"; damage "$img" bno 8; rm -f "$TMP/u"
"$XFSX_REPAIR" --json --undo-file="$TMP/u" "$img" >"$TMP/j" 2>/dev/null
written=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["bytes_written"])' "$TMP/j")
usize=$(stat -c %s "$TMP/u")
check "undo file ($usize bytes) ≤ bytes written ($written) + 4 KiB + 32 bytes per 512" \
	[ "$usize" -le $((written + 4096 + written / 16)) ]

# mkfs over an ext4 image holding data
e="$TMP/e.img"
truncate -s 400M "$e"
if command -v mkfs.ext4 >/dev/null && mkfs.ext4 -q -F "$e" >/dev/null 2>&1; then
	mkdir -p "$TMP/emnt"
	if mount -o loop "$e" "$TMP/emnt" 2>/dev/null; then
		_MOUNTS+=("$TMP/emnt")
		head -c 60M /dev/urandom >"$TMP/emnt/data"
		cp -r "$XFSX_SRC/libfs" "$TMP/emnt/"
		dsum=$(sha256sum <"$TMP/emnt/data")
		umount "$TMP/emnt"
		orig=$(img_sha "$e")
		rm -f "$TMP/u"
		"$XFSX_MKFS" -q --undo-file="$TMP/u" "$e" >/dev/null 2>&1; rc=$?
		check "mkfs without -f refuses ext4 and makes no undo file (exit $rc)" \
			[ $rc -ne 0 -a ! -e "$TMP/u" -a "$(img_sha "$e")" = "$orig" ]
		"$XFSX_MKFS" -q -f --undo-file="$TMP/u" "$e" >"$TMP/out" 2>&1; rc=$?
		check "mkfs -f --undo-file over ext4 (exit $rc)" [ $rc -eq 0 ]
		xfs_repair -n "$e" >/dev/null 2>&1
		check "mkfs over ext4: xfs_repair -n clean" [ $? -eq 0 ]
		"$XFSX_UNDO" "$TMP/u" "$e" >"$TMP/out" 2>&1; rc=$?
		check "mkfs over ext4: xfsx_undo exit 0 (got $rc)" [ $rc -eq 0 ]
		check "mkfs over ext4: restored byte-exact (sha256)" [ "$(img_sha "$e")" = "$orig" ]
		if mount -o loop,ro "$e" "$TMP/emnt" 2>/dev/null; then
			check "mkfs over ext4: the restored ext4 mounts and its data reads back" \
				[ "$(sha256sum <"$TMP/emnt/data")" = "$dsum" ]
			umount "$TMP/emnt"
		else
			not_ok "mkfs over ext4: the restored ext4 mounts"
		fi
	else
		skip "mkfs over ext4" "cannot loop-mount ext4"
	fi
else
	skip "mkfs over ext4" "mkfs.ext4 not installed"
fi

# mkfs -f over an existing XFS (the aged image), on the file and on a loop device
for where in file loopdev; do
	cpimg "$base" "$img"
	orig=$(img_sha "$img")
	target=$img
	if [ $where = loopdev ]; then
		target=$(loop_attach "$img") || { not_ok "mkfs -f on a loop device: losetup"; continue; }
	fi
	rm -f "$TMP/u"
	"$XFSX_MKFS" -q -f --undo-file="$TMP/u" "$target" >"$TMP/out" 2>&1; rc=$?
	check "mkfs -f over XFS ($where): exit $rc" [ $rc -eq 0 ]
	xfs_repair -n "$target" >/dev/null 2>&1
	check "mkfs -f over XFS ($where): xfs_repair -n clean" [ $? -eq 0 ]
	"$XFSX_UNDO" "$TMP/u" "$target" >"$TMP/out" 2>&1; rc=$?
	check "mkfs -f over XFS ($where): xfsx_undo exit 0 (got $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || tail -3 "$TMP/out" | sed 's/^/#   /'
	if [ $where = loopdev ]; then
		losetup -d "$target"
	fi
	check "mkfs -f over XFS ($where): restored byte-exact (sha256)" [ "$(img_sha "$img")" = "$orig" ]
done
tap_done
