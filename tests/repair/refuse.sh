#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Refusals: xfsx_repair exits 8 and leaves the image unchanged
# (sha256) on a mounted filesystem (the loop device and the image file
# behind it; the mount is frozen while we look so the kernel itself writes
# nothing), a v4 filesystem, unknown incompat feature bits, something that
# is not XFS (ext4, zeros), and a dirty log with --no-replay (replay is
# the default: tests/log).  Usage errors exit
# 16 and write nothing.  With -L the dirty log is zeroed and the result
# passes the corpus oracle (repair_lib.sh after_repair).  XFSX_REPAIR
# picks the binary (repair_lib.sh).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "refusals"
have_xfsprogs || { skip "refusals" "xfsprogs not installed"; tap_done; exit; }

# refused LABEL WANT IMG [ARGS...]: xfsx_repair ARGS exits WANT, sha256 of IMG unchanged
refused() {
	local what=$1 want=$2 img=$3 before after rc; shift 3
	before=$(img_sha "$img")
	"$XFSX_REPAIR" "$@" >"$TMP/out" 2>&1; rc=$?
	after=$(img_sha "$img")
	check "$what: exit $want (got $rc)" [ $rc -eq "$want" ]
	check "$what: image unchanged (sha256)" [ "$before" = "$after" ]
	[ $rc -eq "$want" ] || sed -n '1,4s/^/#   /p' "$TMP/out"
	[ $rc -eq "$want" ] && diag "$what: $(grep -v '^$' "$TMP/out" | tail -1)"
}

img="$TMP/fs.img"
mkxfs() { rm -f "$img"; truncate -s 300M "$img"; mkfs.xfs -q -f "$@" "$img" >/dev/null 2>"$TMP/mkfs.err"; }

# usage errors
mkxfs
refused "usage: unknown option" 16 "$img" --no-such-option "$img"
refused "usage: two devices" 16 "$img" "$img" "$img"
refused "usage: no device" 16 "$img"
refused "usage: -t without its argument" 16 "$img" "$img" -t

# v4
if mkxfs -m crc=0; then
	refused "v4 filesystem (mkfs.xfs -m crc=0)" 8 "$img" "$img"
else
	skip "v4 filesystem" "mkfs.xfs -m crc=0 failed: $(tail -1 "$TMP/mkfs.err")"
fi

# an incompat feature bit nobody knows (the top bit), in every superblock:
# a real feature, not damage the secondaries outvote (sb_trust.sh has that)
mkxfs
inc=$(xfs_db -r -c "sb 0" -c "p features_incompat" "$img" | awk '{print $3}')
nag=$(xfs_db -r -c "sb 0" -c "p agcount" "$img" | awk '{print $3}')
cmds=()
for ((a = 0; a < nag; a++)); do
	cmds+=(-c "sb $a" -c "write -d features_incompat $(printf '0x%x' $((inc | 0x80000000)))")
done
xfs_db -x "${cmds[@]}" "$img" >/dev/null 2>&1
now=$(xfs_db -r -c "sb 0" -c "p features_incompat" "$img" 2>/dev/null | awk '{print $3}')
if [ $((now & 0x80000000)) -ne 0 ]; then
	refused "unknown incompat feature bit (features_incompat $now)" 8 "$img" "$img"
	refused "unknown incompat feature bit, -n" 8 "$img" -n "$img"
else
	not_ok "could not set an unknown incompat bit (features_incompat $now)"
fi

# not XFS
rm -f "$img"; truncate -s 64M "$img"
refused "not XFS: zeros" 8 "$img" "$img"
if command -v mkfs.ext4 >/dev/null && mkfs.ext4 -q -F "$img" >/dev/null 2>&1; then
	refused "not XFS: ext4" 8 "$img" "$img"
	refused "not XFS: ext4, -n" 8 "$img" -n "$img"
else
	skip "not XFS: ext4" "mkfs.ext4 not installed"
fi

if ! have_loop_xfs || ! command -v xfs_io >/dev/null; then
	skip "mounted filesystem and dirty log" "need root, a loop device and xfs_io"
	tap_done; exit
fi

# dirty log: mount, write, shut down without flushing the log, unmount
mkxfs
mount_img "$img" "$TMP/mnt" || { not_ok "mount failed"; tap_done; exit; }
for i in $(seq 1 50); do echo "$i" >"$TMP/mnt/f$i"; done
mkdir "$TMP/mnt/d"
xfs_io -x -c "shutdown -f" "$TMP/mnt"
umount "$TMP/mnt"
xfs_repair -n "$img" >"$TMP/rn" 2>&1
if grep -q "valuable metadata changes in a log" "$TMP/rn"; then
	ok "dirty log made (xfs_repair -n: metadata changes in the log)"
	refused "dirty log with --no-replay" 8 "$img" --no-replay "$img"
	# -L zeroes the log (a clean log above every LSN in the metadata); what
	# it says is what it did, text and JSON, never "mount ... to replay it"
	cp --sparse=always "$img" "$TMP/dirty-json.img"
	"$XFSX_REPAIR" -L "$img" >"$TMP/out" 2>&1; rc=$?
	check "dirty log, -L: xfsx_repair ran (exit $rc)" repair_ran $rc
	check "dirty log, -L: says the log was zeroed and its last transactions discarded" \
		grep -q '^fixed *log.dirty: the dirty log was zeroed (-L): its last transactions.*were discarded' "$TMP/out"
	check "dirty log, -L: nothing says to mount and replay it" \
		bash -c '! grep -qi "replay it" "$0"' "$TMP/out"
	"$XFSX_REPAIR" -L --json "$TMP/dirty-json.img" >"$TMP/out.json" 2>"$TMP/err"; rc=$?
	check "dirty log, -L --json: the log.dirty finding says zeroed, not 'replay it' (exit $rc)" \
		python3 - "$TMP/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = [f["message"] for f in d["findings"] if f["code"] == "log.dirty"]
ok = len(m) == 1 and "zeroed (-L)" in m[0] and "replay it" not in m[0]
if not ok:
    print("# log.dirty messages:", m)
sys.exit(0 if ok else 1)
PY
	check "dirty log, -L --json: nothing on stderr says to replay it" \
		bash -c '! grep -qi "replay it" "$0"' "$TMP/err"
	after_repair "$img" "dirty log, -L"
else
	not_ok "could not make a dirty log (xfs_repair -n does not say so)"
fi

# mounted read-write: on the loop device and on the image file
mkxfs
dev=$(loop_attach "$img") || { not_ok "losetup failed"; tap_done; exit; }
_LOOPS+=("$dev")	# loop_attach ran in a subshell: register it here for the trap
mount_img "$dev" "$TMP/mnt" || { not_ok "mount of $dev failed"; tap_done; exit; }
echo data >"$TMP/mnt/file"; sync -f "$TMP/mnt"
# frozen: the kernel writes nothing (log covering, inode flushes) while we hash
fsfreeze -f "$TMP/mnt"
refused "mounted: the loop device" 8 "$img" "$dev"
refused "mounted: the image file" 8 "$img" "$img"
refused "mounted: the loop device, -n" 8 "$img" -n "$dev"
fsfreeze -u "$TMP/mnt"
umount "$TMP/mnt"
losetup -d "$dev"
tap_done
