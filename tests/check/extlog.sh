#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# External log and realtime devices, as xfsx_check and xfsx_bulkstat meet
# them.  A filesystem Debian mkfs.xfs makes with -l logdev= checks clean with
# -l (0 findings; xfs_repair -n -l agrees); without -l check, repair and
# bulkstat refuse it (exit 8, the message names --logdev) and nothing is
# written; so is a log device too small for the log, another filesystem's log,
# the data device given as its own log, and a log device the kernel has
# mounted as another filesystem's log.  A dirty log the kernel leaves on the
# external device (creates, renames, xattrs, reflink copies, shutdown) is
# replayed in memory by check: it says so and finds nothing.  A realtime
# filesystem (mkfs.xfs -r rtdev=, a file made realtime with xfs_db): clean
# with -r; without -r said once (stderr, JSON); an rt device smaller than the
# section gives rt.device_small and rt.beyond_device (xfs_repair -n -r
# refuses such a device).
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/extdev_lib.sh"

need_kernel_images "external log and realtime devices"
mnt="$TMP/mnt"
mkdir -p "$mnt"

# ---- a clean filesystem with an external log ----
log=$(ext_dev log.img 80M) || { not_ok "a loop device for the log"; tap_done; exit; }
data="$TMP/data.img"
truncate -s 512M "$data"
if ! mkfs.xfs -q -f -m reflink=1,rmapbt=1 -l logdev="$log",size=64m "$data" 2>"$TMP/mkfs.err"; then
	not_ok "mkfs.xfs -l logdev=: $(head -1 "$TMP/mkfs.err")"
	tap_done
	exit
fi
logstart=$(xfs_db -r -l "$log" -c "sb 0" -c "print logstart" "$data" | awk '{print $3}')
check "mkfs.xfs -l logdev=: the superblock says the log is external (logstart $logstart)" [ "$logstart" = 0 ]
xfs_repair -n -l "$log" "$data" >/dev/null 2>&1; rc=$?
check "clean: xfs_repair -n -l (exit $rc)" [ $rc -eq 0 ]
out=$("$XFSX_CHECK" -j -l "$log" "$data" 2>"$TMP/err"); rc=$?
check "clean: xfsx_check -l exits 0 (got $rc)" [ $rc -eq 0 ]
check "clean: no findings" grep -q '"findings":\[\]' <<<"$out"
check "clean: the JSON names the log device" grep -q "\"logdev\":\"$log\"" <<<"$out"
out=$("$XFSX_CHECK" -j --logdev="$log" "$data" 2>/dev/null); rc=$?
check "clean: --logdev= is the same (exit $rc)" [ $rc -eq 0 ]

s_data=$(dev_sha "$data") s_log=$(dev_sha "$log")
"$XFSX_CHECK" "$data" >/dev/null 2>"$TMP/err"; rc=$?
check "no -l: xfsx_check refuses (exit $rc)" [ $rc -eq 8 ]
check "no -l: xfsx_check's message names --logdev" grep -q -- "--logdev" "$TMP/err"
"$XFSX_REPAIR" "$data" >/dev/null 2>"$TMP/err"; rc=$?
check "no -l: xfsx_repair refuses (exit $rc)" [ $rc -eq 8 ]
check "no -l: xfsx_repair's message names --logdev" grep -q -- "--logdev" "$TMP/err"
"$XFSX_BULKSTAT" "$data" >/dev/null 2>"$TMP/err"; rc=$?
check "no -l: xfsx_bulkstat refuses (exit $rc)" [ $rc -eq 8 ]
check "no -l: xfsx_bulkstat's message names --logdev" grep -q -- "--logdev" "$TMP/err"
[ "$(dev_sha "$data")" = "$s_data" ] && [ "$(dev_sha "$log")" = "$s_log" ]
ok_if "no -l: nothing was written (sha256 of both devices unchanged)"
n=$("$XFSX_BULKSTAT" -l "$log" "$data" 2>/dev/null | wc -l)
check "xfsx_bulkstat -l lists the root ($n records)" [ "$n" -ge 1 ]
"$XFSX_CHECK" -g "$data" >/dev/null 2>&1; rc=$?
check "xfsx_check -g reads the geometry without the log (exit $rc)" [ $rc -eq 0 ]

# devices that are not this filesystem's
small=$(ext_dev small.img 32M)
"$XFSX_CHECK" -l "$small" "$data" >/dev/null 2>"$TMP/err"; rc=$?
check "a log device smaller than the log: refused (exit $rc)" [ $rc -eq 8 ]
check "a log device smaller than the log: said so" grep -q "not this filesystem's log device" "$TMP/err"
other="$TMP/other.img"
truncate -s 512M "$other"
olog=$(ext_dev olog.img 80M)
mkfs.xfs -q -f -l logdev="$olog",size=64m "$other"
for t in "$XFSX_CHECK" "$XFSX_REPAIR" "$XFSX_BULKSTAT"; do
	"$t" -l "$olog" "$data" >/dev/null 2>"$TMP/err"; rc=$?
	check "$(basename "$t"): another filesystem's log refused (exit $rc)" [ $rc -eq 8 ]
	check "$(basename "$t"): said to be another filesystem's" grep -q "log of another filesystem" "$TMP/err"
done
"$XFSX_CHECK" -l "$data" "$data" >/dev/null 2>"$TMP/err"; rc=$?
check "the data device given as its log: refused (exit $rc)" [ $rc -eq 8 ]
[ "$(dev_sha "$data")" = "$s_data" ] && [ "$(dev_sha "$log")" = "$s_log" ]
ok_if "refusals wrote nothing (sha256 of both devices unchanged)"
# a log device the kernel uses for a mounted filesystem (its log is in use)
if mount_img "$other" "$mnt" "logdev=$olog"; then
	cp --sparse=always "$other" "$TMP/other2.img"
	"$XFSX_CHECK" -l "$olog" "$TMP/other2.img" >/dev/null 2>"$TMP/err"; rc=$?
	check "a log device in use by a read-write mount: xfsx_check refuses (exit $rc)" [ $rc -eq 8 ]
	check "a log device in use: named as the external log device of the mount" \
		grep -q "external log device of" "$TMP/err"
	"$XFSX_REPAIR" -l "$olog" "$TMP/other2.img" >/dev/null 2>"$TMP/err"; rc=$?
	check "a log device in use: xfsx_repair refuses (exit $rc)" [ $rc -eq 8 ]
	umount "$mnt"
else
	not_ok "the kernel mounts a filesystem with -o logdev="
fi

# ---- a dirty external log the kernel leaves ----
if make_dirty_extlog "$data" "$log" "$mnt"; then
	out=$("$XFSX_CHECK" -j -l "$log" "$data" 2>"$TMP/err"); rc=$?
	check "dirty: xfsx_check -l exits 0 (got $rc)" [ $rc -eq 0 ]
	python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["log"]["dirty"] and d["log"]["replayed"] and d["log"]["records"] > 0 and not d["findings"] else 1)' <<<"$out"
	ok_if "dirty: the JSON says dirty, replayed in memory, records read, no findings"
	"$XFSX_CHECK" -l "$log" "$data" >/dev/null 2>"$TMP/err"
	check "dirty: the text run says it replayed the log in memory" grep -q "replayed in memory only" "$TMP/err"
	out=$("$XFSX_REPAIR" -n -l "$log" "$data" 2>&1); rc=$?
	check "dirty: xfsx_repair -n -l says it would replay (exit $rc)" grep -q "replayed in memory only" <<<"$out"
	"$XFSX_CHECK" "$data" >/dev/null 2>&1; rc=$?
	check "dirty: without -l still refused, never a clean verdict (exit $rc)" [ $rc -eq 8 ]
else
	not_ok "the kernel left a dirty external log"
fi

# ---- realtime ----
rt="$TMP/rt.img" rtfs="$TMP/rtfs.img" src="$TMP/src"
truncate -s 256M "$rt"
truncate -s 512M "$rtfs"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/a"
printf '/\n0 0\nd--755 0 0\na ---644 0 0 %s/a\n$\n' "$src" >"$TMP/proto"
if mkfs.xfs -q -f -r rtdev="$rt" -p "$TMP/proto" "$rtfs" 2>"$TMP/mkfs.err"; then
	# /a becomes a realtime file at rt block 1000; one repair makes the bitmap say so
	fino=$(xfs_db -r -c "path /a" -c "print v3.inumber" "$rtfs" | awk '{print $3}')
	xfs_db -x -c "inode $fino" -c "write core.realtime 1" -c "write u3.bmx[0].startblock 1000" "$rtfs" >/dev/null
	"$XFSX_REPAIR" -r "$rt" "$rtfs" >/dev/null 2>&1
	xfs_repair -n -r "$rt" "$rtfs" >/dev/null 2>&1; rc=$?
	check "realtime: a file on the rt device, xfs_repair -n -r clean (exit $rc)" [ $rc -eq 0 ]
	out=$("$XFSX_CHECK" -j -r "$rt" "$rtfs" 2>/dev/null); rc=$?
	check "realtime: xfsx_check -r exits 0 (got $rc)" [ $rc -eq 0 ]
	check "realtime: -r: rt extents checked against the device (JSON)" \
		grep -q '"rt_extents_checked_against_device":true' <<<"$out"
	out=$("$XFSX_CHECK" -j "$rtfs" 2>/dev/null); rc=$?
	check "realtime: without -r, exit 0 (got $rc)" [ $rc -eq 0 ]
	check "realtime: without -r, the JSON says the rt extents were not checked" \
		grep -q '"rt_extents_checked_against_device":false' <<<"$out"
	"$XFSX_CHECK" "$rtfs" >/dev/null 2>"$TMP/err"
	n=$(grep -c "realtime extents were not checked against the device" "$TMP/err")
	check "realtime: without -r, said once on stderr ($n)" [ "$n" -eq 1 ]
	# an rt device smaller than the section: the file's extent lies beyond it
	head -c 2M "$rt" >"$TMP/rtsmall.img"
	out=$("$XFSX_CHECK" -j -r "$TMP/rtsmall.img" "$rtfs" 2>/dev/null); rc=$?
	check "realtime: a too small rt device: exit 4 (got $rc)" [ $rc -eq 4 ]
	check "realtime: a too small rt device: rt.device_small" grep -q '"code":"rt.device_small"' <<<"$out"
	check "realtime: the file's extent beyond it: rt.beyond_device" \
		grep -q "\"code\":\"rt.beyond_device\",[^}]*\"ino\":$fino" <<<"$out"
	xfs_repair -n -r "$TMP/rtsmall.img" "$rtfs" >/dev/null 2>&1; rc=$?
	check "realtime: xfs_repair -n -r refuses the too small device too (exit $rc)" [ $rc -ne 0 ]
	"$XFSX_CHECK" -r "$rt" "$data" -l "$log" >/dev/null 2>"$TMP/err"; rc=$?
	check "-r for a filesystem without a realtime section: noted, exit $rc" grep -q "no realtime section" "$TMP/err"
else
	not_ok "mkfs.xfs -r rtdev=: $(head -1 "$TMP/mkfs.err")"
fi
tap_done
