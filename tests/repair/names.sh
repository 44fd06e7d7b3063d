#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The namespace: directory damage and the scenarios a user meets
# after a crash, each on a copy of one kernel-made image holding directories
# in every format (short form, block, leaf, node), a subtree, hard links
# and symlinks (the root is inode 128 with mkfs.xfs's defaults: AG 0).  After ONE xfsx_repair run the oracle holds (xfs_repair -n
# clean, xfsx_check clean, a second run changes nothing, the kernel mounts
# and writes), the case's own claim holds (where an orphan went, a link
# count, lost+found), and no file is lost that Debian xfs_repair keeps on
# a copy of the same damage: the set of (inode, md5) of the regular files
# readable afterwards contains xfs_repair's (lost+found included).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "namespace repair"
need_kernel_images "namespace repair"

base="$TMP/names.img"
mnt="$TMP/mnt"
mkdir -p "$mnt"
truncate -s 512M "$base"
mkfs.xfs -q -f -d agcount=4 "$base" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
mount_img "$base" "$mnt" || { not_ok "mount the new image"; tap_done; exit; }
(
	cd "$mnt" || exit 1
	mkdir sf blk leaf node sub
	for i in 1 2 3; do echo "sf $i" >sf/f$i; done
	for i in $(seq 30); do echo "blk $i" >blk/file_$i; done
	for i in $(seq 300); do echo "leaf $i" >leaf/file_with_a_longer_name_$i; done
	for i in $(seq 2000); do echo "node $i" >node/n$i; done
	mkdir -p sub/a/b
	echo deep >sub/a/b/deep
	echo top >sub/top
	ln sf/f1 blk/hl1
	ln -s sf/f2 sym
) || not_ok "populate the image"
umount "$mnt"
check_clean_base "$base"

ino_of() { xfs_db -r -c "path $2" -c "print v3.inumber" "$1" 2>/dev/null | awk '{print $3}'; }
# the index of NAME in a short-form directory's entry list
sf_index() {
	xfs_db -r -c "path $2" -c "print u3.sfdir3.list" "$1" 2>/dev/null |
		awk -v n="$3" -F'[][]' '/\.name = "/ { split($0, a, "\""); if (a[2] == n) print $2 }'
}
# an inode number no chunk holds (AG 0, far past the few chunks the test makes)
first_free_ino() {
	local mode
	mode=$(xfs_db -r -c "inode 200000" -c "print core.mode" "$1" 2>/dev/null | awk '/core.mode =/ {print $3}')
	[ "${mode:-0}" = 0 ] && echo 200000
}

# files IMG OUT: "ino md5" of every regular file the kernel can read, sorted
files() {
	local img=$1 out=$2 LC_ALL=C
	: >"$out"
	mount -t xfs -o ro,nouuid "$img" "$mnt" 2>/dev/null || return 1
	_MOUNTS+=("$mnt")
	(cd "$mnt" && join -j 2 <(find . -xdev -type f -exec stat -c '%i %n' {} + | sort -k2) \
		<(find . -xdev -type f -exec md5sum {} + 2>/dev/null | sort -k2)) |
		awk '{print $2, $3}' | sort -u >"$out"
	umount "$mnt"
}

KEPT_US=0 KEPT_XR=0
# run_case LABEL CLAIM-FUNCTION xfs_db-commands...
run_case() {
	local label=$1 claim=$2 rc
	shift 2
	local img="$TMP/case.img" xr="$TMP/case-xr.img"
	repair_once "$label" "$base" "$img" "$xr" "$@"
	$claim "$img"
	xfs_repair "$xr" >/dev/null 2>&1
	files "$img" "$TMP/us" && files "$xr" "$TMP/xr" || { not_ok "$label: mount read-only to compare files"; return; }
	local us xrn missing
	us=$(wc -l <"$TMP/us"); xrn=$(wc -l <"$TMP/xr")
	missing=$(comm -13 "$TMP/us" "$TMP/xr" | wc -l)
	KEPT_US=$((KEPT_US + us)); KEPT_XR=$((KEPT_XR + xrn))
	check "$label: files kept: xfsx_repair $us, xfs_repair $xrn; kept by xfs_repair but not by us: $missing" [ "$missing" -eq 0 ]
}

# claims, on the repaired image
in_lost_found() {	# in_lost_found IMG INO: lost+found/INO exists
	local got
	got=$(xfs_db -r -c "path /lost+found/$2" -c "print v3.inumber" "$1" 2>/dev/null | awk '{print $3}')
	check "$LABEL: inode $2 is lost+found/$2" [ "$got" = "$2" ]
}
nlink_is() {	# nlink_is IMG PATH N
	local got
	got=$(xfs_db -r -c "path $2" -c "print core.nlinkv2" "$1" 2>/dev/null | awk '{print $3}')
	check "$LABEL: $2 has link count $3 (got $got)" [ "$got" = "$3" ]
}
moved_from() {	# moved_from INO TEXT: the report's move line for INO says TEXT
	check "$LABEL: the report says where inode $1 was ($2)" \
		grep -q "^moved *inode $1 .*$2" "$TMP/rep.out"
}
is_dir() {	# is_dir IMG PATH
	local got
	got=$(xfs_db -r -c "path $2" -c "print core.mode" "$1" 2>/dev/null | awk '/core.mode =/ {print $3}')
	check "$LABEL: $2 is a directory (mode ${got:-none})" [ $((${got:-0} & 0170000)) -eq $((0040000)) ]
}

ROOT_SUB=$(sf_index "$base" / sub)
INO_SUB=$(ino_of "$base" /sub)
INO_A=$(ino_of "$base" /sub/a)
INO_B=$(ino_of "$base" /sub/a/b)
INO_TOP=$(ino_of "$base" /sub/top)
INO_F1=$(ino_of "$base" /sf/f1)
FREE=$(first_free_ino "$base")
diag "root entry 'sub' is list[$ROOT_SUB]; inodes: sub $INO_SUB, sub/a $INO_A, sub/a/b $INO_B, a free one $FREE"

LABEL="subtree orphaned (the root's entry names a free inode)"
claim() { in_lost_found "$1" "$INO_SUB"; nlink_is "$1" "/lost+found/$INO_SUB/a/b/deep" 1; }
run_case "$LABEL" claim "path /" "write -d u3.sfdir3.list[$ROOT_SUB].inumber.i4 $FREE"

LABEL="directory inode destroyed, children intact"
# the report names the directory b was in (its name there went with a);
# magic and inode number both gone: nothing shows it is an inode
claim() { in_lost_found "$1" "$INO_B"; nlink_is "$1" /sub 2; moved_from "$INO_B" "it was in /sub/a;"; }
run_case "$LABEL" claim "path /sub/a" "fuzz -d v3.inumber zeroes" "fuzz -d core.magic zeroes"

LABEL="directory inode's magic zeroed, the rest intact"
# a v3 core naming itself: the magic is reset (as xfs_repair does), nothing moves
claim() { is_dir "$1" /sub/a; is_dir "$1" /sub/a/b; nlink_is "$1" /sub 3; nlink_is "$1" /sub/a/b/deep 1; }
run_case "$LABEL" claim "path /sub/a" "fuzz -d core.magic zeroes"

LABEL="block directory's block destroyed"
# magic and owner gone: the block is not this directory's
claim() { is_dir "$1" /blk; nlink_is "$1" /sf/f1 1; }
run_case "$LABEL" claim "path /blk" "dblock 0" "fuzz -d bhdr.hdr.owner zeroes" \
	"fuzz -d bhdr.hdr.magic zeroes"

LABEL="block directory's block magic zeroed"
# its header still names the directory: its entries are salvaged (hl1 too)
claim() { is_dir "$1" /blk; nlink_is "$1" /sf/f1 2; nlink_is "$1" /blk/file_30 1; }
run_case "$LABEL" claim "path /blk" "dblock 0" "fuzz -d bhdr.hdr.magic zeroes"

LABEL="leaf directory's leaf block destroyed"
claim() { nlink_is "$1" /leaf/file_with_a_longer_name_7 1; }
run_case "$LABEL" claim "path /leaf" "dblock 8388608" "fuzz -d lhdr.info.hdr.magic zeroes"

LABEL="node directory's first data block destroyed"
claim() { is_dir "$1" /node; }
run_case "$LABEL" claim "path /node" "dblock 0" "fuzz -d dhdr.hdr.magic zeroes"

LABEL="a directory with two parents"
claim() { nlink_is "$1" /sub/a 3; nlink_is "$1" /blk/hl1 1; }
SF_F1=$(sf_index "$base" /sf f1)
run_case "$LABEL" claim "path /sf" "write -d u3.sfdir3.list[$SF_F1].inumber.i4 $INO_A" \
	"write -d u3.sfdir3.list[$SF_F1].filetype 2"

LABEL="the root's core destroyed"
claim() { is_dir "$1" /; is_dir "$1" /lost+found; in_lost_found "$1" "$INO_SUB"; }
run_case "$LABEL" claim "inode $(ino_of "$base" /)" "fuzz -d v3.inumber zeroes" \
	"fuzz -d core.magic zeroes"

LABEL="an inode on an AGI unlinked list that a directory still names"
claim() { nlink_is "$1" /sf/f2 1; }
INO_F2=$(ino_of "$base" /sf/f2)
run_case "$LABEL" claim "inode $INO_F2" "write -d core.nlinkv2 0" "agi 0" \
	"write -d unlinked[$((INO_F2 % 64))] $INO_F2"

LABEL="a loop of directories cut off from the root"
claim() { in_lost_found "$1" "$INO_A"; is_dir "$1" "/lost+found/$INO_A/b"; }
SUB_A=$(sf_index "$base" /sub a)
B_DEEP=$(sf_index "$base" /sub/a/b deep)
run_case "$LABEL" claim "path /sub/a/b" "write -d u3.sfdir3.list[$B_DEEP].inumber.i4 $INO_A" \
	"write -d u3.sfdir3.list[$B_DEEP].filetype 2" "path /sub" \
	"write -d u3.sfdir3.list[$SUB_A].inumber.i4 $FREE"

LABEL="link count wrong"
# the fix names the file by a path (it has two: /sf/f1 and /blk/hl1)
claim() {
	nlink_is "$1" /sf/f1 2
	check "$LABEL: the report names the inode with a path" \
		grep -Eq "^fixed +inode.nlink .*inode $INO_F1( daddr 0x[0-9a-f]+)? \((/sf/f1|/blk/hl1)\)" "$TMP/rep.out"
}
run_case "$LABEL" claim "path /sf/f1" "write -d core.nlinkv2 7"

LABEL="lost+found is a regular file"
# the regular file lost+found is moved with its old path named
claim() { is_dir "$1" /lost+found; in_lost_found "$1" "$INO_SUB"; moved_from "$INO_LF" "from /lost+found to"; }
cp --sparse=always "$base" "$TMP/lf.img"
mount_img "$TMP/lf.img" "$mnt" && { echo "not a dir" >"$mnt/lost+found"; umount "$mnt"; }
orig=$base; base="$TMP/lf.img"
INO_LF=$(ino_of "$base" /lost+found)
ROOT_SUB=$(sf_index "$base" / sub)
run_case "$LABEL" claim "path /" "write -d u3.sfdir3.list[$ROOT_SUB].inumber.i4 $FREE"
base=$orig

# quota inodes (this kernel has no XFS quota: the quota bit and flags are set
# with xfs_db): the superblock names a directory or a free inode as the user
# quota file.  xfs_repair clears that directory; we stop naming it and keep it.
INO_SF=$(ino_of "$base" /sf)
VN=$(xfs_db -r -c "sb 0" -c "print versionnum" "$base" | awk '{print $3}')
QVN=$(printf '%#x' $((VN | 0x40)))
quota_off() {
	local got
	got=$(xfs_db -r -c "sb 0" -c "print uquotino" -c "print qflags" "$1" 2>/dev/null | awk '{printf "%s ", $3}')
	check "$LABEL: the superblock names no user quota inode, quotas off (uquotino qflags: $got)" \
		[ "$got" = "null 0 " ]
}
LABEL="the user quota inode is a directory"
claim() { quota_off "$1"; is_dir "$1" /sf; nlink_is "$1" /sf/f2 1; }
run_case "$LABEL" claim "sb 0" "write versionnum $QVN" "write qflags 7" "write uquotino $INO_SF"
LABEL="the user quota inode is not in use"
claim() { quota_off "$1"; }
run_case "$LABEL" claim "sb 0" "write versionnum $QVN" "write qflags 7" "write uquotino $FREE"

# a directory rebuilt where free space is all single blocks: its new blocks
# need more extents than the inode holds, so it gets a bmbt (bulk loader)
LABEL="a large directory rebuilt into fragmented free space (bmbt)"
claim() {
	local fmt
	fmt=$(xfs_db -r -c "path /big" -c "print core.format" "$1" 2>/dev/null | awk '{print $3}')
	check "$LABEL: /big's data fork is a btree (format $fmt)" [ "$fmt" = 3 ]
	nlink_is "$1" /big/entry_with_a_fairly_long_name_to_take_room_in_blocks_5999 1
}
frag="$TMP/frag.img"
truncate -s 400M "$frag"
if mkfs.xfs -q -f -m reflink=0 "$frag" >/dev/null 2>&1 && mount_img "$frag" "$mnt"; then
	(
		cd "$mnt" || exit 1
		xfs_io -x -c "resblks 0" . >/dev/null	# the reserve pool too
		mkdir big && cd big || exit 1
		for i in $(seq 6000); do : >"entry_with_a_fairly_long_name_to_take_room_in_blocks_$i"; done
		cd .. || exit 1
		# a file whose 8,000 xattrs take about 160 attr leaf blocks (more than any
		# free run left below)
		python3 -c 'import os
open("xa", "w").close()
for i in range(8000):
    os.setxattr("xa", "user.attr_%04d" % i, b"v" * 60)' || exit 1
		avail=$(df -B1 --output=avail . | tail -1)
		fallocate -l $((avail - 64 * 1024)) fill || exit 1
		# 7000 single free blocks: room for the rebuild, the new btrees, the
		# kernel's reserve pool at mount (5%) and the mount cycle's writes, and
		# no run long enough for the directory
		punch=()
		for i in $(seq 0 2 14000); do punch+=(-c "fpunch $((i * 4096)) 4096"); done
		xfs_io "${punch[@]}" fill || exit 1
	) || not_ok "$LABEL: populate and fragment the image"
	umount "$mnt"
	orig=$base; base=$frag
	run_case "$LABEL" claim "path /big" "dblock 0" "fuzz -d dhdr.hdr.magic zeroes"
	# an attr fork salvaged into the same space gets a bmbt too
	LABEL="an attr fork salvaged into fragmented free space (bmbt)"
	XA=$(ino_of "$base" /xa)
	XNAME=$(xfs_db -r -c "inode $XA" -c "ablock 1" -c "print nvlist[3].name" "$base" | sed 's/.*= "\(.*\)"/\1/')
	claim() {
		local fmt n
		fmt=$(xfs_db -r -c "inode $XA" -c "print core.aformat" "$1" 2>/dev/null | awk '{print $3}')
		check "$LABEL: /xa's attr fork is a btree (format $fmt)" [ "$fmt" = 3 ]
		n=$(mount -t xfs -o ro,nouuid "$1" "$mnt" 2>/dev/null &&
			python3 -c 'import os, sys
n = 0
for i in range(8000):	# (listxattr stops at 64 KiB of names)
    try:
        n += os.getxattr(sys.argv[1], "user.attr_%04d" % i) == b"v" * 60
    except OSError:
        pass
print(n)' "$mnt/xa"; umount "$mnt" 2>/dev/null)
		check "$LABEL: 7,999 of its 8,000 xattrs kept (${n:-?})" [ "${n:-0}" = 7999 ]
	}
	run_case "$LABEL" claim "inode $XA" "ablock 1" "write -d nvlist[3].name \"${XNAME%?}X\""
	base=$orig
	rm -f "$frag"
else
	not_ok "$LABEL: make the image"
fi

diag "files kept over all cases: xfsx_repair $KEPT_US, xfs_repair $KEPT_XR"
tap_done
