#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Parent-pointer damage corpus: a kernel-populated
# image made by xfsprogs 6.10.1's mkfs.xfs -n parent=1 -i exchange=1
# (directories short form, block, leaf and node; hard links in six
# directories; short form, leaf and node attr forks of parent pointers
# beside user xattrs; renames across directories; an exchange-range swap),
# damaged one case at a time with 6.10's xfs_db -x: every parent pointer
# field in each attr format, a pointer added, attr fork headers, directory
# entries of each directory format, directory blocks destroyed, directory
# inode cores, link counts.  Per case ONE xfsx_repair run, then 6.10's
# xfs_repair -n clean, xfsx_check clean, a second run changes nothing, the
# kernel mounts, creates and renames, unmounts, still clean; and against
# 6.10's xfs_repair on a copy of the same damage: every path it keeps
# xfsx_repair keeps, and where a directory block was destroyed every path
# is back (from the parent pointers).  A table per structure ends it.
# tests/repair/pptr_corpus.py has the cases, the details and the KNOWN_GAPS
# set (failures reported as TAP TODO, with the reason, while a fix lands).
# XFSX_PPTR_CORPUS_FULL=1 runs every case (default: a sample),
# XFSX_PPTR_CORPUS_CASES="pptr.leaf dirblock" picks cases by name prefix (comma-
# separated when a prefix holds spaces: "dirblock/leaf dir: every,nlink"),
# XFSX_PPTR_CORPUS_JOBS (default 2), XFSX_PPTR_CORPUS_KEEP=DIR keeps the
# damaged image of each failing case.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm	# cases copy the image: keep them in RAM
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "parent-pointer damage corpus"
have_loop_xfs || { skip "parent-pointer damage corpus" "needs root and a loop device to populate the image with the kernel"; tap_done; exit 0; }
command -v python3 >/dev/null || { skip "parent-pointer damage corpus" "needs python3"; tap_done; exit 0; }
sbin=$(oracle_610 2>"$TMP/oracle.err") || {
	skip "parent-pointer damage corpus" "no xfsprogs 6.10 oracle: $(tail -1 "$TMP/oracle.err")"
	tap_done; exit 0
}
export XFSX_CHECK XFSX_REPAIR
# not exec: this shell's exit trap removes $TMP and any loop device left over it
python3 "$XFSX_SRC/tests/repair/pptr_corpus.py" "$sbin" "$TMP/work"
