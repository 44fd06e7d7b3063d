# SPDX-License-Identifier: GPL-2.0
# Shared by the external log and realtime device tests (tests/check/extlog.sh,
# tests/repair/extlog.sh): devices as loop devices over image files, copies of
# them, and a dirty external log the kernel leaves.  Source after tests/lib.sh.
# Every device is read and written through its loop device only (never the
# file behind it while attached), so the page caches agree.
XFSX_REPAIR=${XFSX_REPAIR:-$XFSX_BUILD/repair/xfsx_repair}
XFSX_UNDO=${XFSX_UNDO:-$XFSX_BUILD/undo/xfsx_undo}
TREE="$XFSX_SRC/tests/log/tree.py"

# ext_dev NAME SIZE: a new zeroed image $TMP/NAME on a loop device; prints the device
ext_dev() {
	rm -f "$TMP/$1"
	truncate -s "$2" "$TMP/$1"
	loop_attach "$TMP/$1"
}
# copy_dev DEV NAME: DEV's contents on a new loop device over $TMP/NAME; prints it
copy_dev() {
	local size
	size=$(blockdev --getsize64 "$1") || return 1
	rm -f "$TMP/$2"
	truncate -s "$size" "$TMP/$2"
	dd if="$1" of="$TMP/$2" bs=1M conv=sparse,notrunc status=none || return 1
	loop_attach "$TMP/$2"
}
# dev_sha DEV|FILE: sha256 of the whole contents
dev_sha() { sha256sum "$1" | awk '{print $1}'; }

# wl_extlog DIR: creates, renames, xattrs in every format, reflink copies
wl_extlog() {
	local d=$1 i
	mkdir -p "$d/a" "$d/b"
	for i in $(seq 1 40); do echo "file $i" >"$d/a/f$i"; done
	for i in $(seq 1 15); do mv "$d/a/f$i" "$d/b/g$i"; done
	python3 - "$d" <<'EOF'
import os, sys
d = sys.argv[1]
for i, n in enumerate((1, 12, 60)):
    p = os.path.join(d, "x%d" % i)
    open(p, "w").write("x")
    for k in range(n):
        os.setxattr(p, "user.k%03d" % k, os.urandom(40 + k % 7))
open(os.path.join(d, "remote"), "w").write("r")
os.setxattr(os.path.join(d, "remote"), "user.big", os.urandom(6000))
EOF
	head -c 3000000 /dev/urandom >"$d/data"
	sync -f "$d"
	cp --reflink=always "$d/data" "$d/data.clone"
	printf 'changed' | dd of="$d/data.clone" bs=1 seek=5000 conv=notrunc status=none
	ln -s a/f20 "$d/link"
	for i in $(seq 41 60); do echo "late $i" >"$d/a/f$i"; done
	rm -f "$d/a/f30"
}

# make_dirty_extlog IMG LOGDEV MNT: the kernel leaves IMG's log on LOGDEV dirty
make_dirty_extlog() {
	mount_img "$1" "$3" "logdev=$2" || return 1
	wl_extlog "$3" >/dev/null 2>&1
	xfs_io -x -c "shutdown -f" "$3" 2>/dev/null
	umount "$3"
}
