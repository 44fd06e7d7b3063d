#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# xfs_repair's flags and exit statuses: xfsx_repair takes every flag
# Debian's xfs_repair 6.1 takes (-n -L -m -v -d -f -P -e -c -o -t -l -r -V),
# honours what has a meaning here and notes the rest on one line, never a
# usage error; -t is the progress interval as in xfs_repair (threads are
# --threads); through a link named xfs_repair the exit statuses are
# xfs_repair's (0 clean or fixed, 4 with -e when fixed, 1 damage found
# with -n or a usage error, 2 a dirty log that stopped the run).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "xfs_repair's flags"
have_xfsprogs || { skip "xfs_repair's flags" "xfsprogs not installed"; tap_done; exit; }

src="$TMP/src"
mkdir -p "$src/d"
for i in $(seq 1 20); do echo "file $i" >"$src/d/f$i"; done
base="$TMP/base.img"
truncate -s 512M "$base"
"$XFSX_MKFS" -q -p "$src" "$base" >/dev/null 2>&1
check "xfsx_mkfs -p made the base image" "$XFSX_CHECK" -q "$base"
damage() { cp --sparse=always "$base" "$1"
	xfs_db -x -c 'agf 1' -c 'addr bnoroot' -c 'write -d magic 0' "$1" >/dev/null 2>&1; }

# every flag of xfs_repair's, on a clean image: exit 0 (not 16), nothing written
img="$TMP/clean.img"
cp --sparse=always "$base" "$img"
s0=$(img_sha "$img")
while IFS='|' read -r flags note; do
	# shellcheck disable=SC2086
	"$XFSX_REPAIR" $flags "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
	check "xfsx_repair $flags: exit 0 on a clean image (got $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || sed -n '1,3s/^/#   /p' "$TMP/err"
	if [ -n "$note" ]; then
		check "xfsx_repair $flags: one note on stderr ($note)" grep -q -- "$note" "$TMP/err"
	fi
done <<'EOF'
-f|-f: accepted
-P|-P: accepted
-d|-d: accepted
-v|
-vv|
-c lazycount=1|changing filesystem features is not done here
-o bhash=1024|-o bhash=1024: accepted
-o ihash=7,force_geometry|-o force_geometry: accepted
-o noquota|-o noquota: accepted
-o ag_stride=2|
-t 5|
-m 64|
-l /dev/null|this filesystem's log is internal
-r /dev/null|no realtime section
-e|-e: the exit status already says 1
-f -P -v -m 64 -o ag_stride=1 -t 3|
EOF
check "none of them wrote anything (sha256)" [ "$(img_sha "$img")" = "$s0" ]
"$XFSX_REPAIR" -n -e "$img" >/dev/null 2>&1; rc=$?
check "-n with -e: usage error 16, as xfs_repair refuses it (got $rc)" [ $rc -eq 16 ]
"$XFSX_REPAIR" -t 0 "$img" >/dev/null 2>&1; rc=$?
check "-t 0: usage error 16 (got $rc)" [ $rc -eq 16 ]
"$XFSX_REPAIR" --threads 1 -q "$img" >/dev/null 2>&1; rc=$?
check "--threads 1: exit 0 (got $rc)" [ $rc -eq 0 ]

# what has a meaning is honoured
img="$TMP/dmg.img"
damage "$img"
"$XFSX_REPAIR" -t 1 "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "-t 1 on damage: exit 1 (got $rc)" [ $rc -eq 1 ]
check "-t 1: progress lines on stderr, one per line" grep -q '^phase 1: ' "$TMP/err"
check "-t 1: the scan of the plan's result shows its progress too" grep -q '^verify: phase 1: ' "$TMP/err"
damage "$img"
"$XFSX_REPAIR" -v "$img" >"$TMP/out" 2>&1; rc=$?
check "-v on damage: the phase times are printed" grep -q '^round 1 seconds: scan ' "$TMP/out"
damage "$img"
"$XFSX_REPAIR" -o ag_stride=2 -o bhash=1 "$img" >/dev/null 2>&1; rc=$?
check "-o ag_stride=2 -o bhash=1 on damage: exit 1 (got $rc)" [ $rc -eq 1 ]
after_repair "$img" "-o ag_stride=2 -o bhash=1"

# through a link named xfs_repair: xfs_repair's exit statuses
mkdir -p "$TMP/bin"
ln -sf "$XFSX_REPAIR" "$TMP/bin/xfs_repair"
X="$TMP/bin/xfs_repair"
"$X" "$base" >/dev/null 2>&1; rc=$?
check "as xfs_repair: clean: 0 (got $rc)" [ $rc -eq 0 ]
"$X" -n "$base" >/dev/null 2>&1; rc=$?
check "as xfs_repair: -n clean: 0 (got $rc)" [ $rc -eq 0 ]
damage "$img"
"$X" -n "$img" >/dev/null 2>&1; rc=$?
check "as xfs_repair: -n on damage: 1 (got $rc)" [ $rc -eq 1 ]
xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
check "  (Debian xfs_repair -n on the same damage: 1, got $rc)" [ $rc -eq 1 ]
"$X" "$img" >/dev/null 2>&1; rc=$?
check "as xfs_repair: repair of the damage: 0 (got $rc)" [ $rc -eq 0 ]
damage "$img"
"$X" -e "$img" >/dev/null 2>"$TMP/err"; rc=$?
check "as xfs_repair: -e repair of the damage: 4 (got $rc)" [ $rc -eq 4 ]
check "as xfs_repair: -e is not noted" bash -c "! grep -q -- '-e:' '$TMP/err'"
"$X" -e "$img" >/dev/null 2>&1; rc=$?
check "as xfs_repair: -e on the repaired image: 0 (got $rc)" [ $rc -eq 0 ]
"$X" --no-such-flag "$img" >/dev/null 2>&1; rc=$?
check "as xfs_repair: a usage error: 1 (got $rc)" [ $rc -eq 1 ]

# a dirty log that stops the run: 2 (needs the kernel to make one)
if have_loop_xfs; then
	dirty="$TMP/dirty.img"
	cp --sparse=always "$base" "$dirty"
	mkdir -p "$TMP/mnt"
	if mount -o loop,nouuid "$dirty" "$TMP/mnt" 2>/dev/null; then
		_MOUNTS+=("$TMP/mnt")
		for i in $(seq 1 30); do echo "$i" >"$TMP/mnt/d/new$i"; done
		sync -f "$TMP/mnt"
		touch "$TMP/mnt/d/after-sync"
		xfs_io -x -c 'shutdown -f' "$TMP/mnt" 2>/dev/null
		umount "$TMP/mnt"
		"$X" --no-replay "$dirty" >/dev/null 2>&1; rc=$?
		check "as xfs_repair: a dirty log with --no-replay: 2 (got $rc)" [ $rc -eq 2 ]
		xfs_repair "$dirty" >/dev/null 2>&1; rc=$?
		check "  (Debian xfs_repair on the same dirty log: 2, got $rc)" [ $rc -eq 2 ]
		"$X" "$dirty" >/dev/null 2>&1; rc=$?
		check "as xfs_repair: the same log replayed: 0 (got $rc)" [ $rc -eq 0 ]
	else
		not_ok "the kernel mounts the base image"
	fi
else
	skip "as xfs_repair: a dirty log stops the run with 2" "needs root and a loop device"
fi
tap_done
