# SPDX-License-Identifier: GPL-2.0
# Helpers for the xfsx_repair tests (source after tests/lib.sh).
#   XFSX_REPAIR      the binary under test: $XFSX_BUILD/repair/xfsx_repair by
#                    default; set it to tests/repair/xfs_repair_wrap.sh to
#                    validate the harness against Debian's xfs_repair.
#   need_repair NAME without the binary the whole test is one
#                    `ok 1 - NAME # SKIP xfsx_repair not built` and exits
#                    (never a pass).
#   repair_ran RC    0 or 1 (nothing wrong / errors fixed): the run completed
#   img_sha IMG      sha256 of the whole file (sparse-aware, imgsum)
XFSX_REPAIR=${XFSX_REPAIR:-$XFSX_BUILD/repair/xfsx_repair}
export XFSX_REPAIR

need_repair() {
	[ -x "$XFSX_REPAIR" ] && return 0
	skip "$1" "xfsx_repair not built"
	tap_done
	exit 0
}

repair_ran() { [ "$1" -eq 0 ] || [ "$1" -eq 1 ]; }

# imgsum is aged_lib.sh's: without it every sum would be the same empty string
# and "changed nothing" could not fail, so the library loads it itself
declare -F imgsum >/dev/null || . "$XFSX_SRC/tests/check/aged_lib.sh"
img_sha() { imgsum "$1"; }

# mount_cycle IMG DIR: the kernel mounts IMG, creates, writes and removes
# files, unmounts.  0 when all of it worked; says what failed on stderr.
mount_cycle() {
	local img=$1 dir=$2 i
	mkdir -p "$dir"
	mount -t xfs -o nouuid "$img" "$dir" 2>&1 || { echo "mount failed" >&2; return 1; }
	_MOUNTS+=("$dir")
	local rc=0
	# a subshell: a failed write ends it, not the test script
	(
		mkdir "$dir/.repair-probe" &&
		for i in $(seq 1 50); do
			head -c $((i * 3000)) /dev/urandom >"$dir/.repair-probe/f$i" || exit 1
		done &&
		sync -f "$dir" &&
		rm -rf "$dir/.repair-probe"
	) 2>&1 || { echo "create/write/remove failed" >&2; rc=1; }
	umount "$dir" || { echo "umount failed" >&2; rc=1; }
	return $rc
}

# after_repair IMG LABEL: the oracle once one xfsx_repair run is done —
# xfs_repair -n exits 0, xfsx_check exits 0, a second xfsx_repair exits 0
# and changes nothing (sha256), the kernel mounts it, creates, writes and
# removes files, unmounts (skipped with the reason without root or a loop
# device), and xfs_repair -n is still clean.  One TAP line per claim.
after_repair() {
	local img=$1 what=$2 rc s1 s2
	xfs_repair -n "$img" >"$TMP/oracle.out" 2>&1; rc=$?
	check "$what: xfs_repair -n clean after one run (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || grep -v -e '^Phase' -e '^ *-' "$TMP/oracle.out" | head -4 | sed 's/^/#   /'
	"$XFSX_CHECK" "$img" >"$TMP/oracle.out" 2>&1; rc=$?
	check "$what: xfsx_check clean after one run (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -4 "$TMP/oracle.out" | sed 's/^/#   /'
	s1=$(img_sha "$img")
	"$XFSX_REPAIR" "$img" >"$TMP/oracle.out" 2>&1; rc=$?
	s2=$(img_sha "$img")
	check "$what: second xfsx_repair exit 0 (got $rc)" [ $rc -eq 0 ]
	check "$what: second xfsx_repair changed nothing (sha256)" [ "$s1" = "$s2" ]
	if ! have_loop_xfs; then
		skip "$what: kernel mount, create/write/remove, unmount" "needs root and a loop device"
		return
	fi
	mount_cycle "$img" "$TMP/oracle.mnt" 2>"$TMP/oracle.err"; rc=$?
	check "$what: kernel mounts it, creates/writes/removes files, unmounts${rc:+$([ $rc -ne 0 ] && echo ": $(tail -1 "$TMP/oracle.err")")}" [ $rc -eq 0 ]
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$what: xfs_repair -n clean after the mount cycle (exit $rc)" [ $rc -eq 0 ]
}

# repair_once LABEL BASE IMG COPY XFS_DB_COMMAND...: BASE copied to IMG and
# damaged with the xfs_db commands, IMG copied to COPY (for Debian
# xfs_repair), the damage seen by xfs_repair -n, ONE xfsx_repair run exits 1
# (its output in $TMP/rep.out), then after_repair.
repair_once() {
	local label=$1 base=$2 img=$3 xr=$4 args=() c rc
	shift 4
	for c in "$@"; do args+=(-c "$c"); done
	cp --sparse=always "$base" "$img"
	xfs_db -x "${args[@]}" "$img" >/dev/null 2>&1
	cp --sparse=always "$img" "$xr"
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$label: the damage is there (xfs_repair -n exit $rc)" [ $rc -ne 0 ]
	"$XFSX_REPAIR" "$img" >"$TMP/rep.out" 2>&1; rc=$?
	check "$label: xfsx_repair fixed it in one run (exit $rc)" [ $rc -eq 1 ]
	[ $rc -eq 1 ] || grep -v '^fixed' "$TMP/rep.out" | head -5 | sed 's/^/#   /'
	after_repair "$img" "$label"
}
