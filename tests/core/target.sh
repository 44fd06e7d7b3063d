#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The target and the output, for xfsx_check and xfsx_bulkstat:
# what is not a block device or regular file is refused at once (a FIFO
# never hangs), a read-write mount is refused by check and listed through
# the kernel by bulkstat, a read-only mount is checked with a warning, a bad
# primary superblock is read through a secondary by both tools (exit 4),
# output errors are exit 8 naming the output, a reader going away is exit 0
# for bulkstat every time, and the messages name what is wrong.
. "$XFSX_SRC/tests/lib.sh"

# run TOOL ARGS...: stdout in $TMP/out, stderr in $TMP/err, exit code in $RC;
# killed after 20 s (a hang is a failure, not a stuck suite)
run() { RC=0; timeout 20 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || RC=$?; }
# expect WANT_RC PATTERN: the last run's exit code and stderr
expect() {
	if [ "$RC" -ne "$1" ]; then diag "exit $RC, wanted $1; stderr: $(head -c 300 "$TMP/err")"; return 1; fi
	if [ -n "$2" ] && ! grep -Eq -- "$2" "$TMP/err"; then
		diag "stderr lacks /$2/: $(head -c 300 "$TMP/err")"; return 1
	fi
}

# --- not a block device or regular file (item 6, 15) -------------------------------
mkfifo "$TMP/fifo"
mkdir "$TMP/dir"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$TMP/sock"
for t in check bulkstat; do
	bin=$XFSX_CHECK; [ $t = bulkstat ] && bin=$XFSX_BULKSTAT
	run "$bin" "$TMP/fifo"
	check "$t: a FIFO is refused at once, exit 8" expect 8 "is a FIFO: not a block device or regular file"
	run "$bin" "$TMP/sock"
	check "$t: a socket is refused, exit 8" expect 8 "is a socket: not a block device or regular file"
	run "$bin" /dev/null
	check "$t: /dev/null is refused, exit 8 (not 'Block device required')" expect 8 "is a character device: not a block device or regular file"
done
run "$XFSX_CHECK" "$TMP/dir"
check "check: a directory is refused, exit 8" expect 8 "is a directory: not a block device or regular file"

# --- usage and messages (items 13, 15) ----------------------------------------------
for t in check bulkstat mkfs; do
	bin=$XFSX_CHECK; urc=16
	[ $t = bulkstat ] && bin=$XFSX_BULKSTAT
	[ $t = mkfs ] && { bin=$XFSX_MKFS; urc=1; }
	run "$bin" --version
	check "$t --version: exit 0, names the tool and meson's version" \
		bash -c '[ '"$RC"' -eq 0 ] && grep -qx "xfsx_'"$t"' [0-9][0-9.]*" "$0"' "$TMP/out"
	run "$bin" --help
	check "$t --help: exit 0, states the exit codes" \
		bash -c '[ '"$RC"' -eq 0 ] && grep -q "^Exit: 0 " "$0"' "$TMP/out"
	run "$bin" --no-such-option x
	check "$t: an unknown long option is named in full, exit $urc" expect $urc "'--no-such-option'"
	run "$bin" a.img b.img
	check "$t: two targets name the extra argument, exit $urc" expect $urc "extra.*'b.img'"
	XFSX_IO_ENGINE=bogus run "$bin" "$TMP/none.img"
	check "$t: XFSX_IO_ENGINE=bogus is named" expect $([ $t = check ] || [ $t = bulkstat ] && echo 8 || echo 1) "XFSX_IO_ENGINE=bogus is not an I/O engine"
done
run "$XFSX_CHECK" --help
check "check --help: -q still reports operational errors on stderr" grep -q "operational errors still go to stderr" "$TMP/out"

if command -v mkfs.ext4 >/dev/null; then
	truncate -s 64m "$TMP/ext4.img"
	if mkfs.ext4 -q -F "$TMP/ext4.img" >/dev/null 2>&1; then
		for t in check bulkstat; do
			bin=$XFSX_CHECK; [ $t = bulkstat ] && bin=$XFSX_BULKSTAT
			run "$bin" "$TMP/ext4.img"
			check "$t: an ext4 image is named by libblkid, 'an ext4'" expect 8 "not an XFS filesystem: libblkid finds an ext4 filesystem"
		done
	else
		skip "ext4 image named" "mkfs.ext4 failed"
	fi
else
	skip "ext4 image named" "mkfs.ext4 not installed"
fi

if ! have_xfsprogs; then
	skip "the rest: output errors, superblock fallback, mounts" "xfsprogs not installed"
	tap_done
	exit
fi
img="$TMP/x.img"
truncate -s 512m "$img"
{ echo /dev/null; echo "0 0"; echo "d--755 0 0"
  for i in $(seq 1 600); do echo "file_with_a_longer_name_$i ---644 0 0 /dev/null"; done
  echo '$'; } >"$TMP/p.proto"
mkfs.xfs -f -q -p "$TMP/p.proto" "$img" >/dev/null 2>&1 || { not_ok "mkfs.xfs -p"; tap_done; exit; }

# --- output errors (item 7) ---------------------------------------------------------
for args in "--json" "" "--geometry" "--geometry --json"; do
	# shellcheck disable=SC2086
	RC=0; "$XFSX_CHECK" $args "$img" >/dev/full 2>"$TMP/err" || RC=$?
	check "check $args >/dev/full: exit 8 naming the output" expect 8 "cannot write the report to standard output: No space left"
done
RC=0; "$XFSX_BULKSTAT" "$img" >/dev/full 2>"$TMP/err" || RC=$?
check "bulkstat >/dev/full: exit 8 naming the output" expect 8 "cannot write to standard output: No space left"
check "bulkstat >/dev/full: the image is not blamed" bash -c '! grep -q "x.img" "$0"' "$TMP/err"
RC=0; "$XFSX_MKFS" -N -f "$img" >/dev/full 2>"$TMP/err" || RC=$?
check "mkfs -N >/dev/full: exit 1 naming the output" expect 1 "cannot write to standard output"

# --- a reader that goes away (item 8): exit 0 every time ------------------------------
bad=0
for i in $(seq 1 20); do
	"$XFSX_BULKSTAT" "$img" 2>"$TMP/err" | head -1 >/dev/null
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || { bad=$((bad + 1)); diag "run $i: exit $rc"; }
done
check "bulkstat | head -1: exit 0 in 20 of 20 runs" [ $bad -eq 0 ]
check "bulkstat | head -1: nothing said about the closed pipe" bash -c '! grep -qi "pipe" "$0"' "$TMP/err"

# --- empty answers say so (item 15) ---------------------------------------------------
run "$XFSX_BULKSTAT" --start-ino 99999999999 "$img"
check "bulkstat --start-ino past the end: says no inodes, exit 0" expect 0 "no inodes at or after inode 99999999999"
run "$XFSX_BULKSTAT" --ag 3 "$img"
check "bulkstat --ag of an empty AG: says no inodes, exit 0" expect 0 "no inodes in AG 3"
run "$XFSX_CHECK" -q "$img"
check "check -q on a clean image: nothing on stdout or stderr" bash -c '[ '"$RC"' -eq 0 ] && [ ! -s "$0" ] && [ ! -s "$1" ]' "$TMP/out" "$TMP/err"

# --- bad primary superblock magic: one rule for both tools (item 4) ------------------
"$XFSX_BULKSTAT" -F ino,mode,size "$img" >"$TMP/good.list" 2>/dev/null
cp --sparse=always "$img" "$TMP/sb.img"
xfs_db -x -c 'sb 0' -c 'write -d magicnum 0' "$TMP/sb.img" >/dev/null 2>&1
run "$XFSX_BULKSTAT" -F ino,mode,size "$TMP/sb.img"
check "bulkstat, bad primary magic: read through a secondary, exit 4" expect 4 "primary superblock is unusable.*secondary in AG"
check "bulkstat, bad primary magic: the same inodes as before the damage" cmp -s "$TMP/out" "$TMP/good.list"
run "$XFSX_CHECK" --json "$TMP/sb.img"
check "check, bad primary magic: exit 4" expect 4 ""
check "check, bad primary magic: sb.primary_bad" grep -q '"sb.primary_bad"' "$TMP/out"
# the secondary's counters are mkfs's (xfs_db: icount 0 there), never kept current
check "check, bad primary magic: the secondary's stale counters are not reported" \
	bash -c '! grep -q "\"sb.counters\"" "$0"' "$TMP/out"
check "check, bad primary magic: nothing but superblock findings" \
	python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["findings"]; sys.exit(any(not x["code"].startswith("sb.") for x in f))' "$TMP/out"

# --- a truncated device (item 3): nothing claimed about what was not read -----------
{ echo /dev/null; echo "0 0"; echo "d--755 0 0"
  for d in 1 2 3 4 5 6 7 8; do
	echo "dir$d d--755 0 0"
	for i in $(seq 1 20); do echo "f$i ---644 0 0 /dev/null"; done
	echo '$'
  done
  echo '$'; } >"$TMP/t.proto"
tr="$TMP/tr.img"
truncate -s 1g "$tr"
mkfs.xfs -f -q -p "$TMP/t.proto" "$tr" >/dev/null 2>&1
dirs_elsewhere=$(xfs_db -r -c 'ls /' "$tr" 2>/dev/null | awk '$NF == "(good)" && $2 > 262144' | wc -l)
check "truncation case: directories of the root lie in later AGs ($dirs_elsewhere)" [ "$dirs_elsewhere" -gt 0 ]
rc=0; "$XFSX_CHECK" -q "$tr" || rc=$?
check "truncation case: the whole image is clean (exit $rc)" [ $rc -eq 0 ]
truncate -s 100m "$tr"
run "$XFSX_CHECK" --json "$tr"
check "1 GiB cut to 100 MiB: exit 4" expect 4 ""
check "1 GiB cut to 100 MiB: only the two sb.geometry findings (too large; AGs 1..3 not read)" \
	python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
codes = sorted(x["code"] for x in f)
if codes != ["sb.geometry", "sb.geometry"]:
    print("# findings:", [(x["code"], x["ag"], x["message"][:80]) for x in f][:12]); sys.exit(1)
' "$TMP/out"
check "1 GiB cut to 100 MiB: says once what was skipped and why" \
	grep -q "AGs 1..3 start beyond the end of the device.*nothing is claimed" "$TMP/out"

# --- mounted (items 1, 2) ------------------------------------------------------------
if ! have_loop_xfs; then
	skip "mounted filesystems: check refuses read-write, bulkstat asks the kernel" "needs root, loop devices and XFS in the kernel"
	tap_done
	exit
fi
mimg="$TMP/m.img"
cp --sparse=always "$img" "$mimg"
dev=$(loop_attach "$mimg") || { not_ok "losetup"; tap_done; exit; }
_LOOPS+=("$dev")	# loop_attach ran in a subshell: register it here for the trap
if ! mount_img "$dev" "$TMP/mnt"; then
	skip "mounted filesystems" "mount -t xfs of a loop device failed"
	tap_done
	exit
fi
for i in $(seq 1 100); do : >"$TMP/mnt/new_$i"; done
mkdir "$TMP/mnt/newdir"
sync -f "$TMP/mnt"
for target in "$mimg" "$dev"; do
	run "$XFSX_CHECK" "$target"
	check "check $(basename "$target") mounted read-write: exit 8, refused" expect 8 "mounted read-write on $TMP/mnt.*unmount it first"
	run "$XFSX_CHECK" --json "$target"
	check "check --json $(basename "$target") mounted read-write: exit 8" expect 8 "mounted read-write"
done
run "$XFSX_BULKSTAT" -F ino "$mimg"
n_img=$(wc -l <"$TMP/out")
RC2=$RC
run "$XFSX_BULKSTAT" -F ino "$TMP/mnt"
n_mnt=$(wc -l <"$TMP/out")
check "bulkstat of the image behind a mounted loop = the kernel's list ($n_img = $n_mnt inodes)" \
	bash -c '[ '"$RC2"' -eq 0 ] && [ '"$n_img"' -eq '"$n_mnt"' ] && [ '"$n_mnt"' -gt 600 ]'
umount "$TMP/mnt"
if mount -t xfs -o ro "$dev" "$TMP/mnt"; then
	run "$XFSX_CHECK" "$mimg"
	check "check of an image mounted read-only: exit 0 with a stale-result warning" expect 0 "mounted read-only on $TMP/mnt.*may be stale"
	run "$XFSX_CHECK" --json "$dev"
	check "check --json of a device mounted read-only: \"mounted\":\"read-only\"" \
		bash -c '[ '"$RC"' -eq 0 ] && grep -q "\"mounted\":\"read-only\"" "$0"' "$TMP/out"
	umount "$TMP/mnt"
else
	not_ok "read-only mount"
fi
losetup -d "$dev"
run "$XFSX_CHECK" "$mimg"
check "check after unmount: clean, no warning" bash -c '[ '"$RC"' -eq 0 ] && ! grep -q mounted "$0"' "$TMP/err"
tap_done
