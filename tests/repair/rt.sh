#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The realtime section's free space (the bitmap and summary recomputed from
# the rt extents), on filesystems Debian mkfs.xfs makes
# with -r rtdev= (rt extent size 1 and 4 blocks): a bitmap word zeroed, a
# summary counter changed, sb_frextents wrong, and a file made realtime
# with xfs_db whose rt extents the bitmap still calls free (its old data
# blocks leak), and the summary inode's fork format invalid and
# the bitmap inode free on disk, both made again in place.
# xfs_repair -n -r reports each; xfsx_check reports the
# expected codes; after ONE xfsx_repair run xfs_repair -n -r is clean,
# xfsx_check is clean, a second run changes nothing, and sb_frextents is
# what xfs_repair counts.  No kernel mount: this one has no realtime
# support (said as a skip when mounting fails).
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "realtime bitmap and summary"
have_xfsprogs || { skip "realtime bitmap and summary" "xfsprogs not installed"; tap_done; exit 0; }

rt="$TMP/rt.img" src="$TMP/src"
truncate -s 256M "$rt"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/a"
echo small >"$src/c"
printf '/\n0 0\nd--755 0 0\na ---644 0 0 %s/a\nc ---644 0 0 %s/c\n$\n' "$src" "$src" >"$TMP/proto"

# byte offset of file block 0 of inode INO in IMG
block0() {
	local fsb
	fsb=$(xfs_db -r -c "inode $2" -c "bmap" "$1" | awk '/startblock/ {print $5; exit}')
	echo $((fsb * 4096))
}

for ext in 4k 16k; do
	base="$TMP/base-$ext.img"
	truncate -s 512M "$base"
	if ! mkfs.xfs -q -f -r rtdev="$rt",extsize=$ext -p "$TMP/proto" "$base" >/dev/null 2>&1; then
		not_ok "rt extsize $ext: mkfs.xfs -r rtdev= -p"
		continue
	fi
	xfs_repair -n -r "$rt" "$base" >/dev/null 2>&1; rc=$?
	check "rt extsize $ext: the new filesystem is clean by xfs_repair -n -r (exit $rc)" [ $rc -eq 0 ]
	"$XFSX_CHECK" "$base" >/dev/null 2>&1; rc=$?
	check "rt extsize $ext: and by xfsx_check (exit $rc)" [ $rc -eq 0 ]
	rbm=$(xfs_db -r -c "sb 0" -c "print rbmino" "$base" | awk '{print $3}')
	rsum=$(xfs_db -r -c "sb 0" -c "print rsumino" "$base" | awk '{print $3}')
	fino=$(xfs_db -r -c "path /a" -c "print v3.inumber" "$base" | awk '{print $3}')
	frext=$(xfs_db -r -c "sb 0" -c "print frextents" "$base" | awk '{print $3}')

	# run_case LABEL "codes expected" DAMAGE-COMMAND...
	run_case() {
		local label="rt extsize $ext: $1" codes=$2 img="$TMP/case.img" rc out s1 s2 xr want got
		shift 2
		cp --sparse=always "$base" "$img"
		"$@" "$img"
		xfs_repair -n -r "$rt" "$img" >"$TMP/xr.out" 2>&1; rc=$?
		check "$label: xfs_repair -n -r reports it (exit $rc)" [ $rc -ne 0 ]
		want=$(awk '/sb_frextents .*, counted/ {print $4}' "$TMP/xr.out")
		out=$("$XFSX_CHECK" -j "$img" 2>/dev/null)
		for c in $codes; do
			check "$label: xfsx_check reports $c" grep -q "\"code\":\"$c\"" <<<"$out"
		done
		"$XFSX_REPAIR" "$img" >"$TMP/rep.out" 2>&1; rc=$?
		check "$label: xfsx_repair fixed it in one run (exit $rc)" [ $rc -eq 1 ]
		[ $rc -eq 1 ] || grep -v '^fixed' "$TMP/rep.out" | head -4 | sed 's/^/#   /'
		xfs_repair -n -r "$rt" "$img" >"$TMP/xr2.out" 2>&1; xr=$?
		check "$label: xfs_repair -n -r clean after one run (exit $xr)" [ $xr -eq 0 ]
		[ $xr -eq 0 ] || grep -v -e '^Phase' -e '^ *-' "$TMP/xr2.out" | head -3 | sed 's/^/#   /'
		"$XFSX_CHECK" "$img" >/dev/null 2>&1; rc=$?
		check "$label: xfsx_check clean after one run (exit $rc)" [ $rc -eq 0 ]
		s1=$(img_sha "$img")
		"$XFSX_REPAIR" "$img" >/dev/null 2>&1; rc=$?
		s2=$(img_sha "$img")
		[ $rc -eq 0 ] && [ "$s1" = "$s2" ]
		ok_if "$label: a second xfsx_repair exits 0 and changes nothing (exit $rc)"
		got=$(xfs_db -r -c "sb 0" -c "print frextents" "$img" | awk '{print $3}')
		check "$label: sb_frextents $got, as xfs_repair counts (${want:-$frext})" \
			[ "$got" = "${want:-$frext}" ]
	}
	zero_word() { printf '\0\0\0\0' | dd of="$1" bs=1 seek=$(($(block0 "$1" "$rbm") + 8)) conv=notrunc status=none; }
	bump_counter() { printf '\7' | dd of="$1" bs=1 seek=$(block0 "$1" "$rsum") conv=notrunc status=none; }
	bad_frext() { xfs_db -x -c "sb 0" -c "write frextents 5" "$1" >/dev/null; }
	# /a's data block range becomes an rt range at block 1000 (aligned to both extent sizes)
	make_rt() { xfs_db -x -c "inode $fino" -c "write core.realtime 1" -c "write u3.bmx[0].startblock 1000" "$1" >/dev/null; }
	run_case "bitmap word zeroed" "rt.bitmap" zero_word
	run_case "summary counter changed" "rt.summary" bump_counter
	run_case "sb_frextents wrong" "rt.frextents" bad_frext
	run_case "a realtime file the bitmap calls free" "rt.bitmap rt.summary rt.frextents block.leak" make_rt
	# a realtime inode that cannot be kept is made again in place
	# (new blocks holding what the files call for), never left cleared
	bad_sum_format() { xfs_db -x -c "inode $rsum" -c "write -d core.format 5" "$1" >/dev/null 2>&1; }
	free_bitmap() { xfs_db -x -c "inode $rbm" -c "write -d core.mode 0" "$1" >/dev/null 2>&1; }
	run_case "the summary inode's fork format invalid" "inode.format" bad_sum_format
	run_case "the bitmap inode free on disk" "rt.inode" free_bitmap
done

# the kernel judge, when it can: it mounts the clean base, then the repaired image
l=$(have_loop_xfs && losetup -f --show "$rt" 2>/dev/null) && _LOOPS+=("$l")
mkdir -p "$TMP/mnt"
if [ -n "$l" ] && mount -t xfs -o ro,rtdev="$l" "$base" "$TMP/mnt" 2>/dev/null; then
	umount "$TMP/mnt"
	mount -t xfs -o ro,rtdev="$l" "$TMP/case.img" "$TMP/mnt" 2>/dev/null; rc=$?
	[ $rc -eq 0 ] && _MOUNTS+=("$TMP/mnt")
	[ $rc -eq 0 ] && ls "$TMP/mnt/a" >/dev/null
	ok_if "the kernel mounts the last repaired image (exit $rc) and lists it"
	[ $rc -eq 0 ] && umount "$TMP/mnt"
else
	skip "kernel mount of a repaired realtime filesystem" "this kernel does not mount realtime filesystems (or no root/loop device)"
fi
tap_done
