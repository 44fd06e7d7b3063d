#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Repair you can trust: what
# the namespace keeps, and allocation that is proven.  One image made as a
# user makes one (xfsx_mkfs, then the kernel fills it: /d with 5 files, /e
# with 100, /a/b/c/x and /a/b/y, /dn a block directory of 50 names, /dl a
# leaf directory of 1000); per damage (xfs_db -x on a copy):
#   - ONE xfsx_repair run exits 1, then the oracle (after_repair: xfs_repair
#     -n and xfsx_check clean, a second run changes nothing, the kernel
#     mounts and writes);
#   - no directory has two parents (a read-only mount's find sees each
#     directory inode once);
#   - against Debian xfs_repair on a copy of the same damage: every path it
#     keeps outside lost+found we keep by name, we keep at least as many
#     paths, and every file content (md5) it keeps we keep;
#   - the kernel survives creates in lost+found (made when missing) and in
#     every directory (several files each; 70 in /e), unmounts, and
#     xfs_repair -n is still clean;
#   - the case's own claim (what was kept, where lost+found went).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"	# imgsum
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "namespace trust"
need_kernel_images "namespace trust"
[ -x "$XFSX_MKFS" ] || { skip "namespace trust" "xfsx_mkfs not built"; tap_done; exit 0; }

base="$TMP/base.img"
mnt="$TMP/mnt"
mkdir -p "$mnt"
truncate -s 1G "$base"
"$XFSX_MKFS" -q "$base" >/dev/null 2>&1 || { not_ok "xfsx_mkfs"; tap_done; exit; }
mount_img "$base" "$mnt" || { not_ok "mount the new image"; tap_done; exit; }
(
	cd "$mnt" || exit 1
	mkdir d e a a/b a/b/c dn dl
	for i in 1 2 3 4 5; do echo "f$i" >d/f$i; done
	for i in $(seq 100); do echo "e$i" >e/f$i; done
	echo cc >a/b/c/x
	echo bb >a/b/y
	for i in $(seq 50); do echo "n$i" >dn/file$i; done
	for i in $(seq 1000); do echo "l$i" >dl/file_with_name_$i; done
) || not_ok "populate the image"
umount "$mnt"
check_clean_base "$base"

ino_of() { xfs_db -r -c "path $2" -c "print v3.inumber" "$1" 2>/dev/null | awk '/inumber =/ {print $3}'; }
field() {	# field IMG INO FIELD: its value
	xfs_db -r -c "inode $2" -c "print $3" "$1" 2>/dev/null | awk -v f="$3" '$1 == f {print $3}'
}
# the first inode after the root that is free on disk (the root's chunk)
first_free() {
	local root args=() i
	root=$(xfs_db -r -c "sb 0" -c "print rootino" "$1" | awk '{print $3}')
	for i in $(seq $((root + 1)) $((root + 63))); do args+=(-c "inode $i" -c "print core.mode"); done
	xfs_db -r "${args[@]}" "$1" 2>/dev/null |
		awk -v r="$root" '{ n++ } $3 == "0" { print r + n; exit }'
}

# snapshot IMG OUT: OUT.paths (sorted), OUT.md5 (contents, sorted), OUT.dup (directory inodes seen twice)
snapshot() {
	local img=$1 out=$2 LC_ALL=C
	: >"$out.paths"; : >"$out.md5"; : >"$out.dup"
	mount -t xfs -o ro,nouuid "$img" "$mnt" 2>/dev/null || return 1
	_MOUNTS+=("$mnt")
	(cd "$mnt" && find . -xdev | sort >"$out.paths" &&
	 find . -xdev -type f -exec md5sum {} + 2>/dev/null | awk '{print $1}' | sort >"$out.md5" &&
	 find . -xdev -type d -printf '%i\n' | sort | uniq -d >"$out.dup")
	umount "$mnt"
}

# writes IMG BUSY: the kernel creates 5 files in lost+found (made when
# missing) and 3 in every directory (70 in BUSY), unmounts; 0 when all worked
writes() {
	local img=$1 busy=$2 rc=0 d i
	mount -t xfs -o nouuid "$img" "$mnt" 2>/dev/null || { echo "mount failed"; return 1; }
	_MOUNTS+=("$mnt")
	(
		mkdir -p "$mnt/lost+found" &&
		for i in 1 2 3 4 5; do echo "new $i" >"$mnt/lost+found/trust_new_$i" || exit 1; done &&
		find "$mnt" -xdev -type d ! -name lost+found -print0 |
			while IFS= read -r -d '' d; do
				for i in 1 2 3; do echo "new $i" >"$d/trust_new_$i" || exit 1; done
			done &&
		for i in $(seq 70); do echo "busy $i" >"$mnt/$busy/trust_busy_$i" || exit 1; done &&
		sync -f "$mnt"
	) >/dev/null 2>&1 || { echo "a create failed"; rc=1; }
	umount "$mnt" || { echo "umount failed"; rc=1; }
	return $rc
}

PATHS_US=0 PATHS_XR=0
# run_case LABEL CLAIM BUSY xfs_db-commands...
run_case() {
	local label=$1 claim=$2 busy=$3 rc
	shift 3
	local img="$TMP/case.img" xr="$TMP/case-xr.img"
	LABEL=$label
	repair_once "$label" "$base" "$img" "$xr" "$@"
	$claim "$img"
	xfs_repair "$xr" >/dev/null 2>&1
	if snapshot "$img" "$TMP/us" && snapshot "$xr" "$TMP/xr"; then
		local us xrn lost lostc
		us=$(wc -l <"$TMP/us.paths"); xrn=$(wc -l <"$TMP/xr.paths")
		PATHS_US=$((PATHS_US + us)); PATHS_XR=$((PATHS_XR + xrn))
		check "$label: no directory has two parents ($(wc -l <"$TMP/us.dup") seen twice)" \
			[ ! -s "$TMP/us.dup" ]
		lost=$(grep -v '^\./lost+found' "$TMP/xr.paths" | comm -13 "$TMP/us.paths" - | wc -l)
		[ "$lost" -eq 0 ] && [ "$us" -ge "$xrn" ]
		ok_if "$label: paths: xfsx_repair $us, xfs_repair $xrn; kept by name by xfs_repair but not by us: $lost"
		[ "$lost" -eq 0 ] || grep -v '^\./lost+found' "$TMP/xr.paths" | comm -13 "$TMP/us.paths" - | head -3 | sed 's/^/#   /'
		lostc=$(comm -13 "$TMP/us.md5" "$TMP/xr.md5" | wc -l)
		check "$label: file contents kept by xfs_repair but not by us: $lostc" [ "$lostc" -eq 0 ]
	else
		not_ok "$label: mount read-only to compare with xfs_repair"
	fi
	writes "$img" "$busy" >"$TMP/writes.err"; rc=$?
	check "$label: the kernel creates in lost+found and in every directory, unmounts${rc:+$([ $rc -ne 0 ] && echo ": $(cat "$TMP/writes.err")")}" [ $rc -eq 0 ]
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$label: xfs_repair -n clean after those creates (exit $rc)" [ $rc -eq 0 ]
}

# claims, on the repaired image
is_dir() {	# is_dir IMG PATH
	local got
	got=$(xfs_db -r -c "path $2" -c "print core.mode" "$1" 2>/dev/null | awk '/core.mode =/ {print $3}')
	check "$LABEL: $2 is a directory (mode ${got:-none})" [ $((${got:-0} & 0170000)) -eq $((0040000)) ]
}
nlink_is() {	# nlink_is IMG PATH N
	local got
	got=$(xfs_db -r -c "path $2" -c "print core.nlinkv2" "$1" 2>/dev/null | awk '/nlinkv2 =/ {print $3}')
	check "$LABEL: $2 has link count $3 (got ${got:-none})" [ "$got" = "$3" ]
}
names_in() {	# names_in IMG DIR N: DIR holds N names (xfs_db ls, without . and ..)
	local got
	got=$(xfs_db -r -c "path $2" -c "ls" "$1" 2>/dev/null | awk '$(NF-1) != "." && $(NF-1) != ".." {n++} END {print n + 0}')
	check "$LABEL: $2 holds $3 names (got $got)" [ "$got" -eq "$3" ]
}
rt_file() {	# rt_file IMG FIELD: the superblock's rbmino/rsumino is a regular file in use
	local ino mode
	ino=$(xfs_db -r -c "sb 0" -c "print $2" "$1" | awk '{print $3}')
	mode=$(field "$1" "$ino" core.mode)
	check "$LABEL: $2 $ino is a regular file (mode ${mode:-none})" [ "$mode" = "0100000" ]
}

INO_D=$(ino_of "$base" /d)
INO_F1=$(ino_of "$base" /d/f1)
INO_F50=$(ino_of "$base" /e/f50)
AG_F50=$(xfs_db -r -c "convert ino $INO_F50 agno" "$base" | awk '{print $1 + 0}')
FREE=$(first_free "$base")
RSUM=$(xfs_db -r -c "sb 0" -c "print rsumino" "$base" | awk '{print $3}')
RBM=$(xfs_db -r -c "sb 0" -c "print rbmino" "$base" | awk '{print $3}')
diag "inodes: /d $INO_D, /e/f50 $INO_F50 (AG $AG_F50), first free $FREE, rbm $RBM, rsum $RSUM"

# 4 as filed: a directory's magic zeroed (CRC valid) is mended, nothing
# moves; the first free inode's broken CRC is not taken for anything
claim() { is_dir "$1" /d; names_in "$1" /d 5; nlink_is "$1" /d/f3 1; }
run_case "4: /d's core.magic 0, free inode $FREE's CRC broken" claim d "path /d" \
	"write -d core.magic 0" "inode $FREE" "write -c core.gen 5"

# 4: /d destroyed (magic and number), the first free inode's CRC broken:
# lost+found is made in another inode, free by every source
claim() {
	local lf; lf=$(ino_of "$1" /lost+found)
	[ -n "$lf" ] && [ "$lf" != "$FREE" ]
	ok_if "$LABEL: lost+found (${lf:-none}) is not the damaged free inode $FREE"
	names_in "$1" /lost+found 5
	nlink_is "$1" "/lost+found/$INO_F1" 1
}
run_case "4: /d destroyed, free inode $FREE's CRC broken" claim lost+found \
	"path /d" "write -d v3.inumber 5" "write -d core.magic 0" "inode $FREE" "write -c core.gen 5"

# 5: the inode btree root of f50's AG lost, f50's magic damaged: f50 kept, in use
claim() { nlink_is "$1" /e/f50 1; names_in "$1" /e 100; }
run_case "5: inobt root magic 0, /e/f50 core.magic 0x4a4e" claim e \
	"path /e/f50" "write -d core.magic 0x4a4e" "agi $AG_F50" "addr root" "write -d magic 0"

# 5: the same, f50 not proving itself (its number gone too): freed on disk
claim() {
	local m; m=$(field "$1" "$INO_F50" core.magic)/$(field "$1" "$INO_F50" core.mode)
	check "$LABEL: inode $INO_F50 is free on disk with a good magic (magic/mode $m)" [ "$m" = "0x494e/0" ]
}
run_case "5: inobt root magic 0, /e/f50 magic and number damaged" claim e \
	"path /e/f50" "write -d v3.inumber 7" "write -d core.magic 0x4a4e" "agi $AG_F50" \
	"addr root" "write -d magic 0"

# 6: a bad flag on a directory: mended, the directory keeps its one parent
claim() { is_dir "$1" /a/b/c; nlink_is "$1" /a/b 3; nlink_is "$1" /a/b/y 1; }
run_case "6: /a/b core.realtime 1" claim a/b "path /a/b" "write core.realtime 1"
run_case "6: /a/b v3.reflink 1" claim a/b "path /a/b" "write -d v3.reflink 1"

# 7: the realtime summary and bitmap inodes are mended or made again in place
claim() { rt_file "$1" rsumino; }
run_case "7: rsumino core.magic 0" claim d "inode $RSUM" "write -d core.magic 0"
run_case "7: rsumino core.mode 0" claim d "inode $RSUM" "write -d core.mode 0"
claim() { rt_file "$1" rbmino; }
run_case "7: rbmino core.format 5" claim d "inode $RBM" "write -d core.format 5"

# 9: names: a directory inode's magic, a data block's magic
claim() { names_in "$1" /dn 50; }
run_case "9: /dn core.magic 0 (CRC valid)" claim dn "path /dn" "write -d core.magic 0"
run_case "9: /dn block magic 0, CRC broken" claim dn "path /dn" "dblock 0" "write -c bhdr.hdr.magic 0"
claim() { names_in "$1" /dl 1000; }
run_case "9: /dl data block 1 magic 0 (CRC valid)" claim dl "path /dl" "dblock 1" "write -d dhdr.hdr.magic 0"
run_case "9: /dl data block 1 magic 0, CRC broken" claim dl "path /dl" "dblock 1" "write -c dhdr.hdr.magic 0"

diag "paths kept over all cases: xfsx_repair $PATHS_US, xfs_repair $PATHS_XR"
tap_done
