#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Xattr salvage: on copies of one kernel-made image holding a
# file with a multi-block (node) attr fork, one with remote values and one
# with a short form fork, one damage each: a leaf entry's name, a remote
# value block, every block of the fork, a short form entry's flags.  After
# ONE xfsx_repair run the oracle holds (xfs_repair -n clean, xfsx_check
# clean, a second run changes nothing, the kernel mounts and writes), only
# the damaged xattrs are gone (or the fork is cleared and the report says
# so), and every (inode, xattr name, value md5) Debian xfs_repair keeps on
# a copy of the same damage is kept by us too.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "xattr salvage"
need_kernel_images "xattr salvage"

base="$TMP/attrs.img"
mnt="$TMP/mnt"
mkdir -p "$mnt"
truncate -s 512M "$base"
mkfs.xfs -q -f -d agcount=4 "$base" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
mount_img "$base" "$mnt" || { not_ok "mount the new image"; tap_done; exit; }
python3 - "$mnt" <<'PY' || not_ok "populate the image"
import os, sys
d = sys.argv[1]
for f in ("many", "remote", "short"):
    open(os.path.join(d, f), "w").write(f + "\n")
for i in range(1, 201):
    os.setxattr(d + "/many", "user.attr_%d" % i, b"value-of-attr-%d-%040d" % (i, i))
os.setxattr(d + "/many", "trusted.t1", b"tval")
for i in range(1, 6):
    os.setxattr(d + "/remote", "user.small%d" % i, b"s%d" % i)
os.setxattr(d + "/remote", "user.big1", b"a" * 6000)
os.setxattr(d + "/remote", "user.big2", os.urandom(9000))
for n in "abc":
    os.setxattr(d + "/short", "user." + n, n.encode() * 3)
PY
umount "$mnt"
check_clean_base "$base"

ino_of() { xfs_db -r -c "path $2" -c "print v3.inumber" "$1" 2>/dev/null | awk '{print $3}'; }
BS=$(xfs_db -r -c "sb 0" -c "print blocksize" "$base" | awk '{print $3}')
AGBLOCKS=$(xfs_db -r -c "sb 0" -c "print agblocks" "$base" | awk '{print $3}')
# the blocks of a file's attr fork, in attr block order, as block numbers of the device
attr_fsbs() {
	xfs_db -r -c "path $2" -c "bmap -a" "$1" 2>/dev/null | awk -v agb="$AGBLOCKS" \
		'{ split($6, a, "[()/]"); for (k = 0; k < $8; k++) print a[2] * agb + a[3] + k }'
}
zero_fsb() { dd if=/dev/zero of="$1" bs="$BS" seek="$2" count=1 conv=notrunc status=none; }

# xattrs IMG OUT: "ino name md5" of every xattr the kernel reads, sorted
xattrs() {
	local img=$1 out=$2
	: >"$out"
	mount -t xfs -o ro,nouuid "$img" "$mnt" 2>/dev/null || return 1
	_MOUNTS+=("$mnt")
	python3 "$XFSX_SRC/tests/repair/xattrs_kept.py" "$mnt" | LC_ALL=C sort >"$out"
	umount "$mnt"
}

KEPT_US=0 KEPT_XR=0
# run_case LABEL CLAIM DAMAGE: DAMAGE IMG damages the copy
run_case() {
	local label=$1 claim=$2 damage=$3 rc
	local img="$TMP/case.img" xr="$TMP/case-xr.img"
	cp --sparse=always "$base" "$img"
	$damage "$img"
	cp --sparse=always "$img" "$xr"
	local xrc
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	"$XFSX_CHECK" -q "$img" >/dev/null 2>&1; xrc=$?
	# (xfs_repair 6.1 does not judge a short form entry's namespace bits; the kernel does)
	check "$label: the damage is there (xfs_repair -n exit $rc, xfsx_check exit $xrc)" \
		all "[ $rc -ne 0 ] || [ $xrc -ne 0 ]"
	"$XFSX_REPAIR" "$img" >"$TMP/rep.out" 2>&1; rc=$?
	check "$label: xfsx_repair fixed it in one run (exit $rc)" [ $rc -eq 1 ]
	grep -e 'xattrs kept' -e 'attr fork cleared' "$TMP/rep.out" | sed 's/^/#   /'
	after_repair "$img" "$label"
	xattrs "$img" "$TMP/us" || { not_ok "$label: mount read-only to list xattrs"; return; }
	$claim "$img"
	xfs_repair "$xr" >/dev/null 2>&1
	xattrs "$xr" "$TMP/xr" || { not_ok "$label: mount xfs_repair's copy read-only"; return; }
	local us xrn missing
	us=$(wc -l <"$TMP/us"); xrn=$(wc -l <"$TMP/xr")
	missing=$(LC_ALL=C comm -13 "$TMP/us" "$TMP/xr" | wc -l)
	KEPT_US=$((KEPT_US + us)); KEPT_XR=$((KEPT_XR + xrn))
	check "$label: xattrs kept: xfsx_repair $us, xfs_repair $xrn; kept by xfs_repair but not by us: $missing" [ "$missing" -eq 0 ]
}

# all "SHELL CONDITION": one claim made of several tests, for check
all() { eval "$1"; }
# claims, on the repaired image's xattr list ($TMP/us) and report ($TMP/rep.out)
count_of() { awk -v i="$1" '$1 == i' "$TMP/us" | wc -l; }
has() { grep -q "^$1 $2 " "$TMP/us"; }
reported() { grep -q -- "$1" "$TMP/rep.out"; }

MANY=$(ino_of "$base" /many)
REMOTE=$(ino_of "$base" /remote)
SHORT=$(ino_of "$base" /short)
ALL=$(( 201 + 7 + 3 ))

LABEL="a leaf entry's name damaged in a multi-block attr fork"
NAME3=$(xfs_db -r -c "inode $MANY" -c "ablock 1" -c "print nvlist[3].name" "$base" | sed 's/.*= "\(.*\)"/\1/')
BAD3="${NAME3%?}X"
diag "inode $MANY: attr block 1 entry 3 is user.$NAME3; damaged to user.$BAD3"
damage() { xfs_db -x -c "inode $MANY" -c "ablock 1" -c "write -d nvlist[3].name \"$BAD3\"" "$1" >/dev/null 2>&1; }
claim() {
	check "$LABEL: user.$NAME3 gone, the other 200 kept ($(count_of "$MANY") on inode $MANY)" \
		all '[ "$(count_of "$MANY")" -eq 200 ] && ! has "$MANY" "user.$NAME3"'
	check "$LABEL: report says kept 200, dropped 1 by name" \
		reported "inode $MANY: xattrs kept 200, dropped 1: user.$BAD3"
	check "$LABEL: nothing else lost ($(wc -l <"$TMP/us") of $((ALL - 1)))" [ "$(wc -l <"$TMP/us")" -eq $((ALL - 1)) ]
}
run_case "$LABEL" claim damage

LABEL="a remote value block destroyed"
VBLK=$(xfs_db -r -c "inode $REMOTE" -c "ablock 0" -c "print nvlist" "$base" |
	awk '/valueblk/ { split($1, a, "[][]"); blk[a[2]] = $3 } /name = "big2"/ { split($1, a, "[][]"); print blk[a[2]] }')
VFSB=$(attr_fsbs "$base" /remote | sed -n "$((VBLK + 1))p")
diag "inode $REMOTE: user.big2's value starts at attr block $VBLK, fs block $VFSB"
damage() { zero_fsb "$1" "$VFSB"; }
claim() {
	check "$LABEL: only user.big2 gone ($(count_of "$REMOTE") of 7 on inode $REMOTE)" \
		all '[ "$(count_of "$REMOTE")" -eq 6 ] && ! has "$REMOTE" user.big2 && has "$REMOTE" user.big1'
	check "$LABEL: report says kept 6, dropped 1 by name" \
		reported "inode $REMOTE: xattrs kept 6, dropped 1: user.big2"
}
run_case "$LABEL" claim damage

LABEL="every block of an attr fork destroyed"
damage() { local b; for b in $(attr_fsbs "$base" /many); do zero_fsb "$1" "$b"; done; }
claim() {
	check "$LABEL: inode $MANY has no xattrs left, the others all kept" \
		all '[ "$(count_of "$MANY")" -eq 0 ] && [ "$(wc -l <"$TMP/us")" -eq 10 ]'
	check "$LABEL: report says its fork was cleared" reported "inode $MANY: attr fork cleared"
	local fo
	fo=$(xfs_db -r -c "inode $MANY" -c "print core.forkoff" "$1" | awk '{print $3}')
	check "$LABEL: forkoff 0 (got $fo)" [ "$fo" = 0 ]
}
run_case "$LABEL" claim damage

LABEL="a short form entry with two namespaces"
damage() { xfs_db -x -c "inode $SHORT" -c "write -d a.sfattr.list[1].root 1" \
	-c "write -d a.sfattr.list[1].secure 1" "$1" >/dev/null 2>&1; }
claim() {
	check "$LABEL: user.b gone, user.a and user.c kept" \
		all '[ "$(count_of "$SHORT")" -eq 2 ] && has "$SHORT" user.a && has "$SHORT" user.c'
	check "$LABEL: report says kept 2, dropped 1" reported "inode $SHORT: xattrs kept 2, dropped 1"
}
run_case "$LABEL" claim damage

diag "xattrs kept over all cases: xfsx_repair $KEPT_US, xfs_repair $KEPT_XR"
tap_done
