#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Differential repair harness: a deterministic sample of damage cases on
# kernel-aged images, plus reproductions of past repair bugs, each repaired
# by xfsx_repair and by Debian's xfs_repair on copies; xfsx_repair must be
# at least as good on every measure (one-run clean, second run changes
# nothing, the kernel survives writes, paths/files/xattrs kept, an honest
# report).  tests/repair/differential.py has the details and the KNOWN_GAPS
# set (cases reported as TAP TODO while their fixes land); the table
# per structure type ends the output.  XFSX_DIFF_CASES, XFSX_DIFF_TYPES,
# XFSX_DIFF_JOBS, XFSX_DIFF_SEED, XFSX_DIFF_FULL=1 (every case) size it;
# XFSX_REPAIR / XFSX_CHECK point it at other binaries.  scripts/diff-repair
# is the same driver, by hand.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm	# cases copy the images: keep them in RAM
check_from_env=${XFSX_CHECK:-}	# lib.sh sets the build's; a caller's wins here
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"
[ -n "$check_from_env" ] && XFSX_CHECK=$check_from_env

need_repair "differential harness"
have_xfsprogs || { skip "differential harness" "xfsprogs not installed"; tap_done; exit 0; }
have_loop_xfs || { skip "differential harness" "needs root, a loop device and XFS in the kernel"; tap_done; exit 0; }
command -v xfs_io >/dev/null || { skip "differential harness" "xfs_io not installed"; tap_done; exit 0; }
export XFSX_CHECK XFSX_REPAIR
exec python3 "$XFSX_SRC/tests/repair/differential.py" --tap --work "$TMP/work"
