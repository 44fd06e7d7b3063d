# SPDX-License-Identifier: GPL-2.0
# Shared by tests/log: dirty images the kernel makes, and the comparison of
# the kernel's recovery (copy A) with xfsx_repair's replay (copy B).
# Source after tests/lib.sh.
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"
TREE="$XFSX_SRC/tests/log/tree.py"
FULL=${XFSX_LOG_FULL:-0}

# need_log_tools NAME: the whole script is one skip without them
need_log_tools() {
	need_kernel_images "$1"
	command -v xfs_io >/dev/null || { skip "$1" "xfs_io not installed"; tap_done; exit 0; }
	[ -x "$XFSX_REPAIR" ] || { skip "$1" "xfsx_repair not built"; tap_done; exit 0; }
}

M="$TMP/mnt"
mkdir -p "$M" "$TMP/ma" "$TMP/mb"

# json_field JSON EXPR: a python expression over the check's JSON (d)
json_field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($2)" <<<"$1" 2>/dev/null; }

# make_dirty NAME "MKFS OPTS" WORKLOAD [SHUTDOWN ARGS]: $TMP/NAME.img, left dirty
make_dirty() {
	local name=$1 opts=$2 wl=$3 sd=${4--f}
	IMG="$TMP/$name.img"
	rm -f "$IMG"
	truncate -s "${IMG_SIZE:-400M}" "$IMG"
	# QA_CHECK_FS: mkfs.xfs allows the small logs fstests use (a log that wraps soon)
	# shellcheck disable=SC2086
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f $opts "$IMG" >/dev/null 2>"$TMP/mkfs.err" || { diag "mkfs: $(cat "$TMP/mkfs.err")"; return 1; }
	mount_img "$IMG" "$M" || return 1
	"$wl" "$M" >/dev/null 2>&1
	# (a workload may have shut it down itself: xfs_io then says
	# "stat: Input/output error" opening the mount, and nothing more happens)
	# shellcheck disable=SC2086
	xfs_io -x -c "shutdown $sd" "$M" 2>/dev/null
	umount "$M"
}

# compare NAME: the kernel's recovery (A) against xfsx_repair's replay (B)
compare() {
	local name=$1 a="$TMP/$1.A.img" b="$TMP/$1.B.img" rc js out
	cp --sparse=always "$IMG" "$a"
	cp --sparse=always "$IMG" "$b"
	js=$("$XFSX_CHECK" -j "$b" 2>/dev/null)
	if [ "$(json_field "$js" "d['log']['dirty']")" != True ]; then
		not_ok "$name: the kernel left the log dirty"
		return
	fi
	diag "$name: log $(json_field "$js" "'head %d/%d tail %d/%d, %d records, %d transactions, items %s; check replayed in memory in %.3f s' % (d['log']['head']['cycle'], d['log']['head']['block'], d['log']['tail']['cycle'], d['log']['tail']['block'], d['log']['records'], d['log']['transactions'], d['log']['items'], d['log'].get('replay',{}).get('seconds',-1))")"
	LAST_JSON=$js
	# A: the kernel's recovery
	if ! mount_img "$a" "$TMP/ma"; then
		not_ok "$name: the kernel mounts copy A"
		return
	fi
	umount "$TMP/ma"
	# B: ours
	out=$("$XFSX_REPAIR" -v "$b" 2>&1); rc=$?	# -v: every finding on its line, to count
	# what mounting does after recovery, repair does after replay: free the
	# inodes the AGI unlinked lists hold (reported fixed as unlinked.*)
	local nfix nunl
	nfix=$(grep -c '^fixed ' <<<"$out"); nunl=$(grep -c '^fixed  *unlinked\.' <<<"$out")
	if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$nfix" -eq "$nunl" ]; }; then
		ok "$name: xfsx_repair replays and finds nothing else (exit $rc, unlinked-list findings freed: $nunl)"
	else
		not_ok "$name: xfsx_repair replays and finds nothing else (exit $rc)"
		printf '%s\n' "$out" | grep -v '^fixed  *unlinked\.' | head -8 | sed 's/^/#   /'
		return
	fi
	xfs_repair -n "$b" >"$TMP/xr" 2>&1; rc=$?
	check "$name: xfs_repair -n calls the replayed image clean (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -8 "$TMP/xr" | sed 's/^/#   /'
	# BULKSTAT_MASK: a sed script taking out fields a script compares its own way
	"$XFSX_BULKSTAT" "$a" 2>&1 | sed -e "${BULKSTAT_MASK:-}" >"$TMP/a.bs"
	"$XFSX_BULKSTAT" "$b" 2>&1 | sed -e "${BULKSTAT_MASK:-}" >"$TMP/b.bs"
	if cmp -s "$TMP/a.bs" "$TMP/b.bs"; then
		ok "$name: xfsx_bulkstat of A and B equal ($(wc -l <"$TMP/a.bs") inodes${BULKSTAT_MASK:+, fields masked: $BULKSTAT_MASK})"
	else
		not_ok "$name: xfsx_bulkstat of A and B equal"
		diff "$TMP/a.bs" "$TMP/b.bs" | head -6 | sed 's/^/#   /'
	fi
	if mount_img "$a" "$TMP/ma" ro && mount_img "$b" "$TMP/mb" ro,nouuid; then
		python3 "$TREE" "$TMP/ma" >"$TMP/a.tree"
		python3 "$TREE" "$TMP/mb" >"$TMP/b.tree"
		if cmp -s "$TMP/a.tree" "$TMP/b.tree"; then
			ok "$name: trees equal ($(wc -l <"$TMP/a.tree") paths)"
		else
			not_ok "$name: trees equal"
			diff "$TMP/a.tree" "$TMP/b.tree" | head -6 | sed 's/^/#   /'
		fi
	else
		not_ok "$name: both copies mount read-only"
	fi
	umount "$TMP/ma" 2>/dev/null
	umount "$TMP/mb" 2>/dev/null
	# more checks of a test's own over the two copies
	[ -z "${COMPARE_EXTRA:-}" ] || "$COMPARE_EXTRA" "$a" "$b"
	rm -f "$a" "$b"
}

# ---- workloads ----
wl_creates() {
	local n=$(( FULL ? 60 : 25 ))
	for d in $(seq 1 "$n"); do
		mkdir -p "$1/d$d/sub"
		for f in $(seq 1 40); do echo "file $d/$f" >"$1/d$d/f$f"; done
		ln "$1/d$d/f1" "$1/d$d/hard1"
		ln -s "../d$d/f2" "$1/d$d/sub/link"
	done
	mknod "$1/d1/chr" c 1 3
	chown 1000:1000 "$1/d2/f3"; chmod 4751 "$1/d2/f4"
}
wl_renames() {
	wl_creates "$1"
	sync -f "$1"
	for d in $(seq 1 20); do
		mv "$1/d$d/f5" "$1/d$((d % 7 + 1))/moved$d"
		rm -f "$1/d$d/f6" "$1/d$d/f7" "$1/d$d/hard1"
		mv "$1/d$d/sub" "$1/d$d/sub2"
	done
	rm -rf "$1/d3"
	mv "$1/d4" "$1/d5/d4inside"
}
wl_xattrs() {
	mkdir "$1/x"
	for i in 1 2 3 4; do echo "$i" >"$1/x/f$i"; done
	python3 - "$1/x" <<'PY'
import os, sys
d = sys.argv[1]
os.setxattr(d + "/f1", "user.small", b"v")                     # short form
for i in range(40):                                              # leaf
    os.setxattr(d + "/f2", "user.leaf%d" % i, b"x" * 40)
for i in range(600):                                             # node
    os.setxattr(d + "/f3", "user.node%04d" % i, b"y" * 30)
os.setxattr(d + "/f4", "user.remote", os.urandom(9000))          # remote value
os.setxattr(d + "/f4", "trusted.t", b"root only")
for i in range(0, 600, 3):
    os.removexattr(d + "/f3", "user.node%04d" % i)
for i in range(0, 40, 2):
    os.removexattr(d + "/f2", "user.leaf%d" % i)
os.removexattr(d + "/f1", "user.small")
PY
}
wl_data() {
	mkdir "$1/data"
	for i in $(seq 1 12); do
		head -c $((i * 300000)) /dev/urandom >"$1/data/f$i"
	done
	truncate -s 1000 "$1/data/f2"
	truncate -s 50M "$1/data/f3"
	xfs_io -c "falloc 0 8m" -f "$1/data/prealloc"
	xfs_io -c "falloc -k 0 4m" "$1/data/f4"
	xfs_io -c "fpunch 100k 200k" "$1/data/f5"
	xfs_io -c "pwrite -S 0x61 1m 64k" "$1/data/f6" >/dev/null
	rm "$1/data/f7"
	# many small extents: a btree-format data fork
	for i in $(seq 0 2 400); do xfs_io -c "pwrite -S 0x62 $((i * 8192)) 4096" "$1/data/sparse"; done >/dev/null
}
wl_reflink() {
	mkdir "$1/r"
	head -c 6M /dev/urandom >"$1/r/orig"
	sync -f "$1"
	for i in 1 2 3; do cp --reflink=always "$1/r/orig" "$1/r/clone$i"; done
	xfs_io -c "pwrite -S 0x63 1m 128k" "$1/r/clone1" >/dev/null
	xfs_io -c "pwrite -S 0x64 0 4k" "$1/r/orig" >/dev/null
	rm "$1/r/clone3"
	truncate -s 2M "$1/r/clone2"
}
wl_bigdir() {
	local n=$(( FULL ? 12000 : 4000 ))
	mkdir "$1/big"
	for i in $(seq 1 "$n"); do : >"$1/big/name-with-some-length-$i"; done
	sync -f "$1"
	for i in $(seq 1 3 "$n"); do rm "$1/big/name-with-some-length-$i"; done
}
wl_wrap() {
	# enough creates and removes to go round a 5 MiB log several times
	python3 - "$1" "$(( FULL ? 60 : 25 ))" <<'PY'
import os, shutil, sys
root, rounds = sys.argv[1], int(sys.argv[2])
for r in range(rounds):
    d = os.path.join(root, "w%d" % r)
    os.mkdir(d)
    for i in range(1000):
        with open(os.path.join(d, "f%d" % i), "w") as f:
            f.write("%d %d\n" % (r, i))
    if r:
        shutil.rmtree(os.path.join(root, "w%d" % (r - 1)))
PY
}
wl_fragdir() {
	# free space in single 1 KiB holes, then a directory whose 4 KiB blocks
	# are pieced from them (logged one piece per item)
	python3 - "$1" <<'PY'
import os, subprocess, sys
root = sys.argv[1]
os.mkdir(root + "/fill")
n = 0
try:
    while n < 200000:
        with open(root + "/fill/%d" % n, "wb") as f:
            f.write(b"z" * 1024)
        n += 1
except OSError:
    pass
subprocess.run(["sync", "-f", root], check=True)
for i in range(0, n, 2):
    os.unlink(root + "/fill/%d" % i)
subprocess.run(["sync", "-f", root], check=True)
os.mkdir(root + "/frag")
for i in range(3000):
    open(root + "/frag/a-fairly-long-name-to-fill-directory-blocks-%06d" % i, "w").close()
for i in range(0, 3000, 5):
    os.unlink(root + "/frag/a-fairly-long-name-to-fill-directory-blocks-%06d" % i)
PY
}

# files unlinked while open when the log stops: the AGI unlinked lists hold
# them; mounting frees them after recovery, repair after replay
wl_unlinked() {
	mkdir "$1/u"
	for i in 1 2 3 4; do head -c $((i * 50000)) /dev/urandom >"$1/u/f$i"; done
	sync -f "$1"
	(
		exec 3<"$1/u/f1" 4<"$1/u/f2" 5<"$1/u/f3"
		rm "$1/u/f1" "$1/u/f2" "$1/u/f3"
		xfs_io -x -c "shutdown -f" "$1"
	)
}

wl_noflush() {
	wl_creates "$1"
	sync -f "$1"
	wl_xattrs "$1"
}

run_case() {
	local name=$1; shift
	if make_dirty "$name" "$@"; then
		compare "$name"
	else
		not_ok "$name: made a dirty image"
	fi
}

