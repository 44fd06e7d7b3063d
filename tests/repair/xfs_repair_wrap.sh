#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stand-in for xfsx_repair over Debian's xfs_repair, only to validate the
# tests/repair harness before the real binary exists:
#   XFSX_REPAIR=$XFSX_SRC/tests/repair/xfs_repair_wrap.sh meson test --suite repair
# Speaks xfsx_repair's interface: the same options, and exit
# status as fsck(8): 0 nothing wrong, 1 errors fixed, 4 errors left, 8
# operational error, 16 usage.  xfs_repair exits 0 after fixing and
# rewrites every AG's btrees even on a clean volume, so this first asks
# `xfs_repair -n` and writes only when that finds something.  The refusals
# xfs_repair does not make (image file of a mounted loop device, v4,
# unknown incompat bits) are made here, before xfs_repair runs.
usage() { echo "usage: xfs_repair_wrap.sh [-n] [-L] [-t N] [-o ag_stride=N] [-m MiB] [--json] [--progress|--no-progress] [-q] DEVICE|IMAGE" >&2; exit 16; }
dry=0 zap=() pass=() dev=
while [ $# -gt 0 ]; do
	case "$1" in
	-n) dry=1 ;;
	-L) zap=(-L) ;;
	-t) [ $# -ge 2 ] || usage; shift ;;
	-o) [ $# -ge 2 ] || usage; case "$2" in ag_stride=[0-9]*) pass+=(-o "$2") ;; *) usage ;; esac; shift ;;
	-m) [ $# -ge 2 ] || usage; pass+=(-m "$2"); shift ;;
	--json|--progress|--no-progress|-q|--no-replay) ;;
	-*) usage ;;
	*) [ -z "$dev" ] || usage; dev=$1 ;;
	esac
	shift
done
[ -n "$dev" ] || usage
[ -f "$dev" ] || [ -b "$dev" ] || { echo "$dev: no such file or block device" >&2; exit 8; }

# mounted: the device itself, or a loop device backed by the image
devs=("$(readlink -f "$dev")")
[ -f "$dev" ] && while IFS=: read -r l _; do [ -n "$l" ] && devs+=("$l"); done < <(losetup -j "$dev" 2>/dev/null)
for d in "${devs[@]}"; do
	if awk -v d="$d" '$1 == d { f = 1 } END { exit !f }' /proc/mounts; then
		echo "$dev is mounted ($d); unmount it first" >&2; exit 8
	fi
done

# v4, unknown incompat bits: read the primary superblock's bytes (not XFS
# at all: xfs_repair -n finds no secondary either, below)
python3 - "$dev" <<'PY' || exit 8
import struct, sys
with open(sys.argv[1], "rb") as f:
    sb = f.read(512)
if len(sb) < 512 or sb[:4] != b"XFSB":
    sys.exit(0)   # a lost primary: xfs_repair looks for secondaries
if struct.unpack(">H", sb[100:102])[0] & 0xf != 5:
    sys.exit("%s: not a v5 (CRC) filesystem" % sys.argv[1])
incompat = struct.unpack(">I", sb[216:220])[0]
if incompat & ~0x3f:   # ftype spinodes meta_uuid bigtime needsrepair nrext64
    sys.exit("%s: unknown incompatible feature bits 0x%x" % (sys.argv[1], incompat & ~0x3f))
PY

xfs_repair -n "$dev" >"${TMPDIR:-/tmp}/wrap.$$" 2>&1
rc=$?
if grep -q "could not find valid secondary superblock" "${TMPDIR:-/tmp}/wrap.$$"; then
	rm -f "${TMPDIR:-/tmp}/wrap.$$"
	echo "$dev: not an XFS filesystem (no superblock found)" >&2; exit 8
fi
rm -f "${TMPDIR:-/tmp}/wrap.$$"
if [ $dry = 1 ]; then
	case $rc in 0) exit 0 ;; 1) exit 4 ;; *) exit 8 ;; esac
fi
[ $rc = 0 ] && [ ${#zap[@]} = 0 ] && exit 0
xfs_repair "${zap[@]}" "${pass[@]}" "$dev"
case $? in
0) [ $rc = 0 ] && exit 0; exit 1 ;;
2) echo "$dev: dirty log: mount it to replay the log, or use -L to zero it" >&2; exit 8 ;;
*) exit 4 ;;
esac
