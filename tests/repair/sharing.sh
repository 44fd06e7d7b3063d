#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Scale of sharing: images where one file is reflinked 10, 1000
# and 10,000 times, and a dedup-like image (many files sharing many
# extents, FICLONERANGE from a pool), all made by the kernel on a loop
# mount.  Each is damaged so the AG's space metadata must be rebuilt (the
# bnobt root's magic zeroed in AG 0, every refcount btree root's magic
# zeroed), then one xfsx_repair run under /usr/bin/time -v: peak RSS is
# reported, and must not grow with the sharing factor: 10,000 files cloned
# from one cost at most 1.25 x (+ 4 MiB) what 10,000 unshared files cost.  Then the corpus oracle
# (repair_lib.sh after_repair).  XFSX_REPAIR picks the binary.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "sharing scale"
have_xfsprogs || { skip "sharing scale" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "sharing scale" "needs root and a loop device to reflink with the kernel"; tap_done; exit; }
[ -x /usr/bin/time ] || { skip "sharing scale" "/usr/bin/time (GNU time) not installed"; tap_done; exit; }

# populate MNT MODE N: MODE one = one 16 KiB file cloned N times (FICLONE);
# MODE plain = N files of 16 KiB of their own (the control: as many inodes
# and extents, nothing shared); MODE dedup = N files of 32 chunks of 16 KiB,
# each chunk cloned (FICLONERANGE) from one of 64 pool files of 512 KiB
populate() {
	python3 - "$@" <<'PY'
import fcntl, os, random, struct, sys
mnt, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
FICLONE, FICLONERANGE = 0x40049409, 0x4020940d
rnd = random.Random(11)
if mode == "plain":
    for k in range(n):
        d = os.path.join(mnt, "d%02d" % (k % 50))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "c%05d" % k), "wb") as f:
            f.write(os.urandom(16 << 10))
elif mode == "one":
    src = os.path.join(mnt, "src")
    with open(src, "wb") as f:
        f.write(os.urandom(16 << 10))
    sfd = os.open(src, os.O_RDONLY)
    for k in range(n):
        d = os.path.join(mnt, "d%02d" % (k % 50))
        os.makedirs(d, exist_ok=True)
        fd = os.open(os.path.join(d, "c%05d" % k), os.O_CREAT | os.O_WRONLY, 0o644)
        fcntl.ioctl(fd, FICLONE, sfd)
        os.close(fd)
else:
    os.mkdir(os.path.join(mnt, "pool"))
    pool = []
    for p in range(64):
        path = os.path.join(mnt, "pool", "p%02d" % p)
        with open(path, "wb") as f:
            f.write(os.urandom(512 << 10))
        pool.append(os.open(path, os.O_RDONLY))
    os.mkdir(os.path.join(mnt, "dedup"))
    ch = 16 << 10
    for k in range(n):
        fd = os.open(os.path.join(mnt, "dedup", "f%05d" % k), os.O_CREAT | os.O_WRONLY, 0o644)
        for c in range(32):
            src = rnd.choice(pool)
            off = rnd.randrange(0, (512 << 10) // ch) * ch
            fcntl.ioctl(fd, FICLONERANGE, struct.pack("qQQQ", src, off, ch, c * ch))
        os.close(fd)
PY
}

# damage IMG: bnobt root magic of AG 0, every AG's refcount btree root magic
damage() {
	local img=$1 agc a args=(-c "agf 0" -c "addr bnoroot" -c "fuzz -d magic zeroes")
	agc=$(xfs_db -r -c "sb 0" -c "p agcount" "$img" | awk '{print $3}')
	for ((a = 0; a < agc; a++)); do
		args+=(-c "agf $a" -c "addr refcntroot" -c "fuzz -d magic zeroes")
	done
	xfs_db -x "${args[@]}" "$img" >/dev/null 2>&1
}

declare -A RSS
img="$TMP/share.img"
for row in "one 10" "one 1000" "one 10000" "plain 10000" "dedup 2000"; do
	read -r mode n <<<"$row"
	what="$mode x$n"
	[ "$mode" = one ] && what="one file reflinked $n times"
	[ "$mode" = dedup ] && what="dedup-like: $n files x 32 chunks from a 64-file pool"
	[ "$mode" = plain ] && what="$n files sharing nothing (control)"
	rm -f "$img"; truncate -s 1G "$img"
	mkfs.xfs -q -f -m rmapbt=1,reflink=1 -d agcount=4 "$img" >/dev/null 2>&1
	if ! mount_img "$img" "$TMP/mnt" || ! populate "$TMP/mnt" "$mode" "$n" 2>"$TMP/err"; then
		not_ok "$what: could not build the image: $(tail -1 "$TMP/err")"
		mountpoint -q "$TMP/mnt" && umount "$TMP/mnt"
		continue
	fi
	umount "$TMP/mnt"
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$what: built clean (xfs_repair -n exit $rc)" [ $rc -eq 0 ]
	diag "$what: refcount btree levels: $(xfs_db -r -c "agf 0" -c "p refcntlevel" "$img" | awk '{print $3}'), rmap records in AG 0: $(xfs_db -r -c "agf 0" -c "addr rmaproot" -c "p numrecs" "$img" | awk '{print $3}') (root block)"
	damage "$img"
	xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
	check "$what: damage reported by xfs_repair -n (exit $rc)" [ $rc -ne 0 ]
	/usr/bin/time -v "$XFSX_REPAIR" "$img" >"$TMP/out" 2>"$TMP/time"; rc=$?
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$TMP/time")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$TMP/time")
	RSS[$mode$n]=$rss
	check "$what: xfsx_repair ran and fixed (exit $rc, peak RSS $((rss / 1024)) MiB, wall $wall)" repair_ran $rc
	repair_ran $rc || tail -4 "$TMP/out" | sed 's/^/#   /'
	after_repair "$img" "$what"
done
diag "peak RSS (KiB): 10 sharers ${RSS[one10]:-?}, 1000 ${RSS[one1000]:-?}, 10000 ${RSS[one10000]:-?}, 10000 unshared files ${RSS[plain10000]:-?}, dedup ${RSS[dedup2000]:-?}"
# What sharing may not do is cost memory per sharer: 10,000 files cloned
# from one are measured against 10,000 files of their own (the same inodes
# and extents, no sharing), so the per-inode costs cancel out.
if [ -n "${RSS[one10000]:-}" ] && [ -n "${RSS[plain10000]:-}" ]; then
	check "peak RSS flat in the sharing factor: 10000 sharers ${RSS[one10000]} KiB <= 1.25 x 10000 unshared files ${RSS[plain10000]} KiB + 4 MiB" \
		[ "${RSS[one10000]}" -le $((RSS[plain10000] * 5 / 4 + 4096)) ]
else
	not_ok "peak RSS flat in the sharing factor: a run is missing"
fi
tap_done
