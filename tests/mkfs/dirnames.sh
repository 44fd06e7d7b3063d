#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The directory encoder (libfs/build/dirbuild.c, shared by mkfs -p and repair)
# read back by the kernel (the proof of the encoders): dirnames.py
# makes directories sized for every format (short form, block, leaf, node,
# a 20,000-entry node directory) with random names of every length 1..255,
# every file type, and groups of 2..4 names sharing one directory name hash
# (checked with the hash itself).  xfsx_mkfs -p copies the tree with 4 KiB
# and with 1 KiB blocks and 1 KiB directory blocks (two DA node levels);
# each image: xfs_repair -n and
# xfsx_check clean, and the kernel's listing of every directory (names,
# types) equals the source's, and a lookup (stat) of every name succeeds.
. "$(dirname "$0")/../lib.sh"

DN="$XFSX_SRC/tests/mkfs/dirnames.py"
need_kernel_images "directory encoder read back by the kernel"
[ -x "$XFSX_MKFS" ] || { skip "directory encoder read back by the kernel" "xfsx_mkfs not built"; tap_done; exit 0; }

src="$TMP/src"
python3 "$DN" make "$src" 20261126 >"$TMP/make.log" 2>&1
check "source tree made ($(grep '^#' "$TMP/make.log" | tr -d '#'))" [ $? -eq 0 ]
python3 "$DN" list "$src" >"$TMP/src.list"
groups=$(grep -o '[0-9]* colliding' "$TMP/make.log" | awk '{print $1}')
check "the source has colliding names (${groups:-0})" [ "${groups:-0}" -gt 100 ]

for bs in 4096 1024; do
	nopt=(); [ $bs = 1024 ] && nopt=(-n size=1024)
	img="$TMP/d-$bs.img"
	rm -f "$img"
	truncate -s 512M "$img"
	"$XFSX_MKFS" -f -b size=$bs "${nopt[@]}" -p "$src" "$img" >"$TMP/mkfs.out" 2>&1; rc=$?
	check "blocksize $bs: xfsx_mkfs -p exit 0 (got $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || { sed 's/^/#   /' "$TMP/mkfs.out" | head -5; continue; }
	xfs_repair -n "$img" >"$TMP/xr.out" 2>&1; rc=$?
	check "blocksize $bs: xfs_repair -n clean (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || grep -v -e '^Phase' -e '^ *-' "$TMP/xr.out" | head -4 | sed 's/^/#   /'
	"$XFSX_CHECK" "$img" >/dev/null 2>&1; rc=$?
	check "blocksize $bs: xfsx_check clean (exit $rc)" [ $rc -eq 0 ]
	fmt=$(xfs_db -r -c "path /bignode" -c "print core.format" "$img" 2>/dev/null | awk '{print $3}')
	check "blocksize $bs: the large directory is not in the inode (format $fmt)" [ "${fmt:-0}" -ge 2 ]
	if [ $bs = 1024 ]; then
		lvl=$(xfs_db -r -c "path /bignode" -c "dblock 33554432" -c "type dir3" -c "print nhdr.level" "$img" 2>/dev/null | awk '{print $3}')
		check "blocksize $bs: its DA btree has two node levels (root level ${lvl:-?})" [ "${lvl:-0}" -ge 2 ]
	fi
	mount_img "$img" "$TMP/mnt" ro || { not_ok "blocksize $bs: kernel mount"; continue; }
	python3 "$DN" list "$TMP/mnt" >"$TMP/dst.list" 2>"$TMP/list.err"
	diff -q "$TMP/src.list" "$TMP/dst.list" >/dev/null; rc=$?
	check "blocksize $bs: the kernel lists every directory as the source ($(wc -l <"$TMP/dst.list") entries)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || diff "$TMP/src.list" "$TMP/dst.list" | head -4 | sed 's/^/#   /'
	# every name looked up (the kernel's hash lookup, not a readdir)
	missing=$(cd "$src" && find . -mindepth 2 -print0 | (cd "$TMP/mnt" && xargs -0 stat -c %i >/dev/null 2>&1; echo $?))
	check "blocksize $bs: every name found by lookup" [ "$missing" = 0 ]
	umount "$TMP/mnt"
	rm -f "$img"
done
tap_done
