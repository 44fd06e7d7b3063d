# SPDX-License-Identifier: GPL-2.0
# Helpers for the undo tests (source after tests/lib.sh, tests/check/aged_lib.sh
# and tests/repair/repair_lib.sh).
#   XFSX_UNDO             the binary under test ($XFSX_BUILD/undo/xfsx_undo)
#   need_undo NAME        skip the whole test (with the reason) without the
#                         binaries, xfsprogs, root or a loop device
#   damage IMG TYPE AGS   xfs_db damage in every AG 0..AGS-1 (TYPE: bno,
#                         cnt+rmap, agf+agi, secondaries, refcount+inobt)
#   needsrepair IMG       0 when the primary has NEEDSREPAIR set
#   kernel_refuses IMG    0 when the kernel will not mount IMG
#   write_count IMG       device writes a repair of IMG makes (a copy is repaired)
XFSX_UNDO=${XFSX_UNDO:-$XFSX_BUILD/undo/xfsx_undo}

need_undo() {
	[ -x "$XFSX_UNDO" ] && [ -x "$XFSX_REPAIR" ] && [ -x "$XFSX_MKFS" ] ||
		{ skip "$1" "xfsx_undo, xfsx_repair or xfsx_mkfs not built"; tap_done; exit 0; }
	need_kernel_images "$1"
	command -v xfs_io >/dev/null || { skip "$1" "xfs_io not installed (image aging)"; tap_done; exit 0; }
}

damage() {
	local img=$1 type=$2 ags=$3 a
	for ((a = 0; a < ags; a++)); do
		case $type in
		bno) xfs_db -x -c "agf $a" -c "addr bnoroot" -c "write -d magic 0" "$img" ;;
		cnt+rmap) xfs_db -x -c "agf $a" -c "addr cntroot" -c "write -d magic 0" \
			-c "agf $a" -c "addr rmaproot" -c "write -d magic 0" "$img" ;;
		agf+agi) xfs_db -x -c "agf $a" -c "write -d magicnum 0" -c "agi $a" \
			-c "write -d magicnum 0" "$img" ;;
		secondaries) [ "$a" -gt 0 ] && xfs_db -x -c "sb $a" -c "write -d magicnum 0" "$img" ;;
		refcount+inobt) xfs_db -x -c "agf $a" -c "addr refcntroot" -c "write -d magic 0" \
			-c "agi $a" -c "addr root" -c "write -d magic 0" "$img" ;;
		*) echo "unknown damage $type" >&2; return 1 ;;
		esac >/dev/null 2>&1
	done
	return 0
}

needsrepair() {
	local v
	v=$(xfs_db -r -c "sb 0" -c "p features_incompat" "$1" 2>/dev/null | awk '{print $3}')
	[ -n "$v" ] && [ $((v & 0x10)) -ne 0 ]
}

kernel_refuses() {
	mkdir -p "$TMP/refuse.mnt"
	if mount -t xfs -o ro,nouuid "$1" "$TMP/refuse.mnt" 2>/dev/null; then
		umount "$TMP/refuse.mnt"
		return 1
	fi
	return 0
}

# copy IMG sparse (images are mostly holes)
cpimg() { cp --sparse=always "$1" "$2"; }

write_count() {
	cpimg "$1" "$TMP/wc.img"
	"$XFSX_REPAIR" --json "$TMP/wc.img" 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["writes"])'
	rm -f "$TMP/wc.img"
}

# killed_state IMG ORIG_SHA: untouched | needsrepair | repaired | corrupt
killed_state() {
	if [ "$(img_sha "$1")" = "$2" ]; then echo untouched
	elif needsrepair "$1"; then echo needsrepair
	elif xfs_repair -n "$1" >/dev/null 2>&1; then echo repaired
	else echo corrupt
	fi
}

# after_stop IMG UNDO ORIG_SHA LABEL: the guarantees once a repair run with
# --undo-file=UNDO stopped (killed, or a write error) part-way: the image is
# untouched, or NEEDSREPAIR is set and the kernel refuses it, or the run got
# far enough to finish; the undo file restores a copy byte-exact; a second
# xfsx_repair finishes the repair to the oracle (after_repair).
after_stop() {
	local img=$1 undo=$2 orig=$3 what=$4 st rc
	st=$(killed_state "$img" "$orig")
	check "$what: result is the original, NEEDSREPAIR set or fully repaired (got $st)" \
		[ "$st" != corrupt ]
	if [ "$st" = needsrepair ]; then
		check "$what: the kernel refuses to mount it (NEEDSREPAIR)" kernel_refuses "$img"
	fi
	cpimg "$img" "$TMP/restore.img"
	"$XFSX_UNDO" "$undo" "$TMP/restore.img" >"$TMP/undo.out" 2>&1; rc=$?
	check "$what: xfsx_undo exit 0 (got $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || sed 's/^/#   /' "$TMP/undo.out" | tail -3
	check "$what: the undo file restores the original byte-exact (sha256)" \
		[ "$(img_sha "$TMP/restore.img")" = "$orig" ]
	rm -f "$TMP/restore.img"
	if [ "$st" = repaired ]; then
		after_repair "$img" "$what (run had finished its writes)"
		return
	fi
	"$XFSX_REPAIR" "$img" >"$TMP/rerun.out" 2>&1; rc=$?
	check "$what: second xfsx_repair finishes (exit $rc)" [ $rc -eq 1 ]
	[ $rc -eq 1 ] || tail -3 "$TMP/rerun.out" | sed 's/^/#   /'
	needsrepair "$img" && not_ok "$what: NEEDSREPAIR cleared by the second run" ||
		ok "$what: NEEDSREPAIR cleared by the second run"
	after_repair "$img" "$what"
}

# damaged_base NAME: $base, the kernel-aged 8-AG image with the bnobt root
# damaged in every AG (what kill.sh and eio.sh repair), and $orig its sha256;
# ends the test with a failure when aging fails
damaged_base() {
	base="$TMP/base.img"
	if ! age_image "$base" 1G "-m rmapbt=1,reflink=1 -d agcount=8" 2>"$TMP/err"; then
		not_ok "aging the base image: $(tail -1 "$TMP/err")"; tap_done; exit
	fi
	damage "$base" bno 8
	orig=$(img_sha "$base")
}
