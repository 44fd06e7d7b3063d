#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Offline log replay against the kernel's own recovery.  Each
# case makes an image the kernel leaves dirty (mount, workload, xfs_io
# "shutdown -f", unmount), copies it twice: A is mounted by the kernel (its
# recovery) and unmounted, B is replayed by xfsx_repair.  Then: xfs_repair
# -n calls B clean, xfsx_bulkstat of A and B are equal, and the two trees
# mounted read-only are equal (paths, types, modes, owners, sizes, link
# counts, contents, symlink targets, xattrs: tests/log/tree.py).  Also a
# shutdown without -f, a log torn at the head (its newest record damaged),
# and fuzzed logs (no crash or hang; refused, or replayed as the kernel
# does).  The default run is a sample; XFSX_LOG_FULL=1 runs every case,
# bigger workloads, directories pieced from 1 KiB holes, more fuzz and a
# 64 MiB log for the replay time.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/log/log_lib.sh"
need_log_tools "log replay"

run_case creates "" wl_creates
run_case renames "" wl_renames
run_case xattrs "" wl_xattrs
run_case data "" wl_data
run_case reflink "-m reflink=1,rmapbt=1" wl_reflink
run_case bigdir-1k "-b size=1024" wl_bigdir
# a small filesystem for a small log (mkfs.xfs allows it to fstests: QA_CHECK_FS)
IMG_SIZE=200M run_case wrap "" wl_wrap
if [ -n "${LAST_JSON:-}" ]; then
	c=$(json_field "$LAST_JSON" "d['log']['head']['cycle']")
	check "wrap: the log wrapped (head cycle $c)" [ "${c:-0}" -ge 2 ]
fi
run_case noflush "" wl_noflush ""
run_case unlinked "" wl_unlinked
if [ "$FULL" = 1 ]; then
	run_case xattrs-rmap "-m rmapbt=1" wl_xattrs
	run_case data-reflink "-m reflink=1,rmapbt=1" wl_data
	run_case renames-1k "-b size=1024" wl_renames
	IMG_SIZE=200M run_case fragdir-1k "-b size=1024" wl_fragdir
	IMG_SIZE=2G run_case biglog "-l size=64m" wl_wrap
	if [ -n "${LAST_JSON:-}" ]; then
		diag "biglog: replay of $(json_field "$LAST_JSON" "'%d records, %.1f MiB of log: %.3f s' % (d['log']['records'], d['log']['bytes'] / 1048576, d['log']['replay']['seconds'])")"
	fi
fi

tap_done
