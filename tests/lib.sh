# Shared helpers for shell tests: TAP output, skips that say why, and
# cleanup of mounts and loop devices even when a test fails.
# Source it; then call tap_plan N (or tap_done at the end).
set -u
: "${XFSX_BUILD:?run through meson test (XFSX_BUILD unset)}"
: "${XFSX_SRC:?run through meson test (XFSX_SRC unset)}"
XFSX_CHECK="$XFSX_BUILD/check/xfsx_check"
XFSX_MKFS="$XFSX_BUILD/mkfs/xfsx_mkfs"
XFSX_BULKSTAT="$XFSX_BUILD/bulkstat/xfsx_bulkstat"

TAP_N=0
TAP_FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xfsx-test.XXXXXX")
_MOUNTS=()
_LOOPS=()

_cleanup() {
	local m l
	for m in "${_MOUNTS[@]:-}"; do [ -n "$m" ] && mountpoint -q "$m" 2>/dev/null && umount -l "$m" 2>/dev/null; done
	for l in "${_LOOPS[@]:-}"; do [ -n "$l" ] && losetup -d "$l" 2>/dev/null; done
	# and every loop device over a file of $TMP: loop_attach called inside $(...)
	# registers in a subshell, which this trap never sees
	if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null; then
		losetup -l -n -O NAME,BACK-FILE 2>/dev/null | while read -r l f; do
			case "$f" in "$TMP"/*) losetup -d "$l" 2>/dev/null ;; esac
		done
	fi
	rm -rf "$TMP"
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

ok()      { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }
# a "not ok ... # TODO reason" line is a known gap, not a failure (TAP)
not_ok()  {
	TAP_N=$((TAP_N + 1))
	case "$*" in *"# TODO"*) ;; *) TAP_FAILED=$((TAP_FAILED + 1)) ;; esac
	echo "not ok $TAP_N - $*"
}
skip()    { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP ${2:-}"; }
diag()    { echo "# $*"; }
# check NAME CMD...: ok if CMD succeeds
check()   { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; fi; }
# COND1 && COND2 ...; ok_if NAME: ok or not_ok by the exit status of the
# command list just run (check takes one command: "check N [ a ] && [ b ]"
# would test only a)
ok_if()   { local rc=$?; if [ $rc -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
tap_done() { echo "1..$TAP_N"; [ "$TAP_FAILED" -eq 0 ]; }

have_root() { [ "$(id -u)" -eq 0 ]; }
have_xfsprogs() { command -v mkfs.xfs >/dev/null && command -v xfs_db >/dev/null && command -v xfs_repair >/dev/null; }
# can we attach loop devices and mount XFS here?
# oracle_610: print the sbin of xfsprogs 6.10.1 (parent pointers, exchange-range),
# building it once (shared/oracles/xfsprogs-6.10 beside the repository: the one a
# clean clone sits next to, else the one beside this machine's main checkout, else
# $XFSX_ORACLE_610); fails with the builder's last words on stderr
oracle_610() {
	local c common
	common=$(git -C "$XFSX_SRC" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	for c in "${XFSX_ORACLE_610:-}" "$XFSX_SRC/../shared/oracles/xfsprogs-6.10" \
		 ${common:+"$common/../../shared/oracles/xfsprogs-6.10"} /work/shared/oracles/xfsprogs-6.10; do
		[ -n "$c" ] && [ -x "$c" ] && { "$c"; return; }
	done
	echo "xfsprogs-6.10 oracle script not found beside $XFSX_SRC" >&2
	return 1
}
have_loop_xfs() {
	have_root || return 1
	grep -qw xfs /proc/filesystems 2>/dev/null || return 1
	local l; l=$(losetup -f 2>/dev/null) || return 1
	[ -n "$l" ]
}
# need_kernel_images NAME: xfsprogs, root and a loop device to let the
# kernel populate images, or the whole test is one skip and the script ends
need_kernel_images() {
	have_xfsprogs || { skip "$1" "xfsprogs not installed"; tap_done; exit 0; }
	have_loop_xfs && return 0
	skip "$1" "needs root and a loop device to populate an image with the kernel"
	tap_done
	exit 0
}

# check_clean_base IMG: both tools call a freshly populated image clean;
# xfsx_check's JSON is left in $BASE_JSON
check_clean_base() {
	local rc
	xfs_repair -n "$1" >/dev/null 2>&1; rc=$?
	check "populated image: xfs_repair -n clean (exit $rc)" [ $rc -eq 0 ]
	BASE_JSON=$("$XFSX_CHECK" -j "$1" 2>/dev/null); rc=$?
	check "populated image: xfsx_check exit 0 (got $rc)" [ $rc -eq 0 ]
	check "populated image: no findings" grep -q '"findings":\[\]' <<<"$BASE_JSON"
}

# loop_attach IMG -> prints device, registers cleanup
loop_attach() {
	local dev; dev=$(losetup -f --show "$1") || return 1
	_LOOPS+=("$dev"); echo "$dev"
}
# mount_img IMG DIR [opts]: loop-mount an image, registered for cleanup
mount_img() {
	mkdir -p "$2"
	mount -t xfs -o "${3:-rw}" "$1" "$2" || return 1
	_MOUNTS+=("$2")
}
unmount_dir() { umount "$1"; }
