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

img_sha() { imgsum "$1"; }

# mount_cycle IMG DIR: the kernel mounts IMG, creates, writes and removes
# files, unmounts.  0 when all of it worked; says what failed on stderr.
mount_cycle() {
	local img=$1 dir=$2 i
	mkdir -p "$dir"
	mount -t xfs -o nouuid "$img" "$dir" 2>&1 || { echo "mount failed" >&2; return 1; }
	_MOUNTS+=("$dir")
	local rc=0
	{
		mkdir "$dir/.repair-probe" &&
		for i in $(seq 1 50); do
			head -c $((i * 3000)) /dev/urandom >"$dir/.repair-probe/f$i" || exit 1
		done &&
		sync -f "$dir" &&
		rm -rf "$dir/.repair-probe"
	} 2>&1 || { echo "create/write/remove failed" >&2; rc=1; }
	umount "$dir" || { echo "umount failed" >&2; rc=1; }
	return $rc
}
