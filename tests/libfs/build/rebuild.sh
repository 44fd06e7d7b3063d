#!/usr/bin/env bash
# The write path and the bulk loader against the real judges: on images the
# kernel populated (1 KiB and 4 KiB blocks, rmapbt, reflink, finobt, sparse
# inodes; many small files, a third of them removed, reflinked copies), every
# AG's bno, cnt, rmap, refcount, inobt and finobt trees are rebuilt by
# rebuild_tool (tests/libfs/build/rebuild_tool.c: walk, bulk load onto the same
# blocks in another order, AGF/AGI roots updated, verified writeback, new
# blocks flushed before the headers), and so is the block map btree of a
# file with thousands of extents (the root rewritten in its inode).  Then the image must have changed, and
# xfs_repair -n and xfsx_check must call it clean, the kernel must mount it,
# read every file back unchanged, write (into the rebuilt file too), reflink
# and remove, and xfs_repair -n must still be clean.
# Needs root and a loop device (skips with the reason otherwise).
. "$XFSX_SRC/tests/lib.sh"
TOOL="$XFSX_BUILD/tests/libfs/build/rebuild_tool"

have_xfsprogs || { skip "btree rebuilds" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "btree rebuilds" "needs root and a loop device to let the kernel populate an image"; tap_done; exit; }

populate() {  # many small files, a third removed (free space in pieces), reflinked copies
	python3 - "$1" <<'EOF'
import os, sys
m = sys.argv[1]
for d in range(8):
    os.mkdir(f"{m}/d{d}")
    for i in range(1500):
        with open(f"{m}/d{d}/f{i}", "wb") as f:
            f.write(os.urandom(1024 * (1 + i % 5)))
for d in range(8):
    for i in range(0, 1500, 3):
        os.unlink(f"{m}/d{d}/f{i}")
# a file with every other block punched out: free space in thousands of pieces
# (deep bno/cnt trees) and a data fork in btree format
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
bs = os.statvfs(m).f_bsize
with open(f"{m}/holey", "wb") as f:
    f.write(os.urandom(bs * 12000))
    f.flush()
    os.fsync(f.fileno())
    for b in range(0, 12000, 2):
        if libc.fallocate(f.fileno(), 3, ctypes.c_long(b * bs), ctypes.c_long(bs)):
            sys.exit("fallocate: punch hole failed")
EOF
	mkdir "$1/clones"
	for i in $(seq 1 3 900); do cp --reflink=always "$1/d0/f$i" "$1/clones/c$i" 2>/dev/null || return 1; done
}

for opts in "-b size=1024" "-b size=4096"; do
	img="$TMP/img"
	rm -f "$img"; truncate -s 512M "$img"
	if ! mkfs.xfs -q -f $opts -m rmapbt=1,reflink=1 -d agcount=2 "$img" 2>"$TMP/mkfs.err"; then
		skip "rebuild ($opts)" "mkfs.xfs refused: $(head -1 "$TMP/mkfs.err")"; continue
	fi
	mount_img "$img" "$TMP/mnt" || { not_ok "mount ($opts)"; continue; }
	populate "$TMP/mnt" || { not_ok "populate ($opts)"; unmount_dir "$TMP/mnt"; continue; }
	files=$(find "$TMP/mnt" -type f | wc -l)
	sums=$(cd "$TMP/mnt" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)
	unmount_dir "$TMP/mnt"
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$opts: populated image is clean before (xfs_repair -n exit $rc)" [ $rc -eq 0 ]
	before=$(sha256sum < "$img")

	holey=$(xfs_db -r -c "path /holey" -c inode "$img" 2>/dev/null | awk '/current inode number/ {print $NF}')
	fmt=$(xfs_db -r -c "inode $holey" -c "p core.format" "$img" 2>/dev/null)
	diag "/holey is inode $holey, $fmt"
	out=$("$TOOL" "$img" bno cnt rmap refc ino fino "bmbt:$holey" 2>&1); rc=$?
	echo "$out" | sed 's/^/# /'
	check "$opts: rebuild_tool exit 0 (got $rc)" [ $rc -eq 0 ]
	rebuilt=$(grep -c 'levels' <<<"$out")
	multi=$(grep -cE 'levels [2-9]' <<<"$out")
	[ "$rebuilt" -ge 11 ] && [ "$multi" -ge 4 ]
	ok_if "$opts: trees rebuilt ($rebuilt of 13; $multi with two levels or more)"
	check "$opts: the holey file's block map btree rebuilt" grep -q "^bmbt $holey: .*levels" <<<"$out"
	after=$(sha256sum < "$img")
	check "$opts: the image changed" [ "$before" != "$after" ]

	xfs_repair -n "$img" >"$TMP/repair.out" 2>&1; rc=$?
	check "$opts: xfs_repair -n clean after the rebuild (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -20 "$TMP/repair.out" | sed 's/^/# /'
	"$XFSX_CHECK" "$img" >"$TMP/check.out" 2>&1; rc=$?
	check "$opts: xfsx_check clean after the rebuild (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -20 "$TMP/check.out" | sed 's/^/# /'

	if mount_img "$img" "$TMP/mnt"; then
		n=$(find "$TMP/mnt" -type f | wc -l)
		check "$opts: the kernel mounts it and sees all $files files (saw $n)" [ "$n" -eq "$files" ]
		now=$(cd "$TMP/mnt" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)
		check "$opts: every file reads back the same bytes (the rebuilt block map included)" \
			[ "$now" = "$sums" ]
		head -c 3000000 /dev/urandom > "$TMP/mnt/new" && rm "$TMP/mnt/d1/f1" && \
			cp --reflink=always "$TMP/mnt/d2/f2" "$TMP/mnt/clone-new" && \
			dd if=/dev/urandom of="$TMP/mnt/holey" bs=1k seek=4001 count=300 conv=notrunc \
				status=none && sync -f "$TMP/mnt"
		check "$opts: the kernel writes (into the holey file's holes too), removes and reflinks on it" [ $? -eq 0 ]
		unmount_dir "$TMP/mnt"
		xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
		check "$opts: still clean after the kernel's writes (xfs_repair -n exit $rc)" [ $rc -eq 0 ]
	else
		not_ok "$opts: the kernel mounts the rebuilt image"
	fi
done
tap_done
