#!/usr/bin/env bash
# A filesystem with a realtime section (Debian mkfs.xfs -r rtdev=; no
# kernel needed, this kernel cannot mount one): the data device must check
# clean, and damage to the realtime bitmap and summary inodes (sizes, type,
# the superblock's pointer, block count) that xfs_repair -n -r reports must
# be reported with the expected code.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "realtime section" "xfsprogs not installed"; tap_done; exit 0; }
data="$TMP/data.img" rt="$TMP/rt.img" img="$TMP/t.img"
truncate -s 512M "$data"
truncate -s 256M "$rt"
mkfs.xfs -q -f -r rtdev="$rt" "$data" || { not_ok "mkfs.xfs -r rtdev="; tap_done; exit; }
rblocks=$(xfs_db -r -c "sb 0" -c "p rblocks" "$data" | awk '{print $3}')
check "the superblock has a realtime section (rblocks = $rblocks)" [ "${rblocks:-0}" -gt 0 ]
xfs_repair -n -r "$rt" "$data" >/dev/null 2>&1; rc=$?
check "xfs_repair -n -r: clean (exit $rc)" [ $rc -eq 0 ]
out=$("$XFSX_CHECK" -j "$data" 2>/dev/null); rc=$?
check "xfsx_check: exit 0 (got $rc)" [ $rc -eq 0 ]
check "xfsx_check: no findings" grep -q '"findings":\[\]' <<<"$out"
rbm=$(xfs_db -r -c "sb 0" -c "p rbmino" "$data" | awk '{print $3}')
rsum=$(xfs_db -r -c "sb 0" -c "p rsumino" "$data" | awk '{print $3}')

# run_case NAME EXPECT_CODE OBJECT FIELD VALUE
run_case() {
	local name=$1 expect=$2 obj=$3 field=$4 value=$5 rrc xrc
	cp --sparse=always "$data" "$img"
	xfs_db -x -c "$obj" -c "write $field $value" "$img" >/dev/null 2>&1
	xfs_repair -n -r "$rt" "$img" >/dev/null 2>&1; rrc=$?
	out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); xrc=$?
	if [ $rrc -eq 0 ]; then
		skip "$name" "xfs_repair -n finds nothing here"
		return
	fi
	check "$name: xfs_repair -n reports it, xfsx_check exits 4 (got $xrc)" [ $xrc -eq 4 ]
	check "$name: finding $expect" grep -q "\"code\":\"$expect\"" <<<"$out"
}
run_case "bitmap inode size" rt.inode "inode $rbm" core.size 4096
run_case "summary inode size" rt.inode "inode $rsum" core.size 0
run_case "bitmap inode is a directory" rt.inode "inode $rbm" core.mode 040755
# the geometry puts the bitmap after the root (xfs_repair: "inconsistent with calculated value")
run_case "superblock names another inode as the bitmap" sb.rtgeometry "sb 0" rbmino $((rsum + 10))
run_case "bitmap inode block count" inode.nblocks "inode $rbm" core.nblocks 9
tap_done
