#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# xfsx_bulkstat against the kernel's XFS_IOC_BULKSTAT, on images made by
# Debian's mkfs.xfs and aged by the kernel (populate.py: hard links,
# symlinks, devices, fifos, sockets, xattrs in every format, btree extent
# maps, hints, flags, pre-1970 and post-2038 times, freed inodes), with
# bigtime and nrext64 on and off, 1 KiB blocks, 2 KiB inodes without
# sparse chunks (chunks start at any cluster-aligned block), and 64 KiB
# blocks (two chunks share a block).
#
# The kernel's answer comes from xfs_io's bulkstat (its own ioctl caller)
# with one inode per request: Linux 6.18 reuses one buffer per request and
# leaves bs_cowextsize_blks stale for inodes without the hint, so batched
# answers depend on the batch boundaries.  xfsx_bulkstat's mountpoint mode
# is compared with xfs_io too, which validates that path; then the offline
# listing of the unmounted image must match both exactly, every field of
# every inode.
. "$XFSX_SRC/tests/lib.sh"
HERE="$XFSX_SRC/tests/bulkstat"
CMP="python3 $HERE/compare.py"
ALL=ino,mode,nlink,uid,gid,projectid,size,blocks,extents,aextents,forkoff,xflags,gen,rdev,atime,atime_nsec,mtime,mtime_nsec,ctime,ctime_nsec,btime,btime_nsec,extsize_blks,cowextsize_blks,blksize,extents32

if ! have_xfsprogs || ! command -v xfs_io >/dev/null || ! command -v python3 >/dev/null; then
	skip "kernel comparison" "xfsprogs (mkfs.xfs, xfs_io) and python3 are needed"
	tap_done; exit
fi
if ! have_loop_xfs; then
	skip "kernel comparison" "needs root, a free loop device and XFS in the kernel"
	tap_done; exit
fi

# compare NAME ARGS...: run compare.py, show its diagnostics, one TAP line
compare() {
	local name=$1; shift
	local out rc
	out=$($CMP "$@" 2>&1); rc=$?
	echo "$out" | sed 's/^[^#]/# &/'
	if [ $rc -eq 0 ]; then ok "$name"; else not_ok "$name"; fi
}

run_config() {
	local label=$1 bigtime=$2 nrext64=$3; shift 3
	local img="$TMP/$label.img" mnt="$TMP/mnt-$label" d="$TMP/$label"
	mkdir -p "$d"
	truncate -s 1G "$img"
	if ! mkfs.xfs -q -f -m bigtime="$bigtime" -i nrext64="$nrext64" -d agcount=4 "$@" "$img"; then
		not_ok "$label: mkfs.xfs"
		return
	fi
	if ! mount_img "$img" "$mnt" rw; then
		case $label in
		lbs_*) skip "$label" "this kernel cannot mount blocks larger than its pages";;
		*) not_ok "$label: mount";;
		esac
		return
	fi
	check "$label: populate" python3 "$HERE/populate.py" "$mnt" "$bigtime"
	unmount_dir "$mnt"
	if ! mount_img "$img" "$mnt" ro; then
		not_ok "$label: read-only mount"
		return
	fi
	xfs_io -c 'bulkstat -n 1' "$mnt" > "$d/kernel.txt"
	xfs_io -c 'bulkstat' "$mnt" > "$d/kernel_batched.txt"
	"$XFSX_BULKSTAT" --fields=$ALL "$mnt" > "$d/online.jsonl" 2> "$d/online.err"
	check "$label: mountpoint mode ran cleanly" test ! -s "$d/online.err"
	unmount_dir "$mnt"

	"$XFSX_BULKSTAT" --fields=$ALL "$img" > "$d/offline.jsonl" 2> "$d/offline.err"
	check "$label: offline mode ran cleanly" test ! -s "$d/offline.err"
	diag "$label: $(wc -l < "$d/offline.jsonl") inodes"
	compare "$label: kernel (xfs_io bulkstat) = mountpoint mode, every field" \
		xfsio "$d/kernel.txt" "$d/online.jsonl"
	compare "$label: kernel (xfs_io bulkstat) = offline, every field" \
		xfsio "$d/kernel.txt" "$d/offline.jsonl"
	compare "$label: offline = mountpoint mode, same records in the same order" \
		same "$d/offline.jsonl" "$d/online.jsonl"
	compare "$label: inode numbers ascend" sorted "$d/offline.jsonl"

	# the batched kernel answer differs only in stale cowextsize values
	python3 - "$d/kernel_batched.txt" "$d/kernel.txt" > "$d/batched.diag" <<'PY'
import re, sys
def load(p):
    recs, cur = {}, None
    for l in open(p):
        m = re.match(r"^\s*bs_(\w+) = (\S+)", l)
        if not m: continue
        if m.group(1) == "ino":
            cur = {}; recs[int(m.group(2))] = cur
        cur[m.group(1)] = m.group(2)
    return recs
a, b = load(sys.argv[1]), load(sys.argv[2])
bad = stale = 0
for ino in b:
    for f, v in b[ino].items():
        if a.get(ino, {}).get(f) != v:
            if f == "cowextsize_blks" and not int(a[ino]["xflags"], 0) & 0x10000:
                stale += 1
            else:
                bad += 1; print("# inode %d %s: batched %s, single %s" % (ino, f, a.get(ino, {}).get(f), v))
print("# batched kernel answers: %d stale cowextsize values, %d other differences" % (stale, bad))
sys.exit(1 if bad or set(a) != set(b) else 0)
PY
	local rc=$?
	cat "$d/batched.diag"
	if [ $rc -eq 0 ]; then ok "$label: batched kernel answers differ only in stale cowextsize_blks"; else not_ok "$label: batched kernel answers differ only in stale cowextsize_blks"; fi

	# formats, threads, selections
	"$XFSX_BULKSTAT" "$img" > "$d/default.jsonl"
	"$XFSX_BULKSTAT" --format=csv "$img" > "$d/default.csv"
	compare "$label: CSV rows = JSON lines" csv "$d/default.jsonl" "$d/default.csv"
	"$XFSX_BULKSTAT" --threads=1 --fields=$ALL "$img" > "$d/t1.jsonl"
	"$XFSX_BULKSTAT" --threads=2 --fields=$ALL "$img" > "$d/t2.jsonl"
	"$XFSX_BULKSTAT" --threads=4 --io-engine=pread --no-direct --fields=$ALL "$img" > "$d/t4.jsonl"
	compare "$label: 1 thread = default" same "$d/t1.jsonl" "$d/offline.jsonl"
	compare "$label: 2 threads = default" same "$d/t2.jsonl" "$d/offline.jsonl"
	compare "$label: 4 threads, pread, buffered = default" same "$d/t4.jsonl" "$d/offline.jsonl"
	"$XFSX_BULKSTAT" --format=text --fields=ino,mode,xflags "$img" > "$d/text.txt"
	check "$label: text format lines" test "$(wc -l < "$d/text.txt")" -eq "$(wc -l < "$d/offline.jsonl")"
	python3 - "$d/offline.jsonl" "$img" "$XFSX_BULKSTAT" "$d" <<'PY' > "$d/select.diag"
import json, subprocess, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
img, tool, d = sys.argv[2], sys.argv[3], sys.argv[4]
bad = 0
def run(*args):
    out = subprocess.run([tool, "--fields=ino,gen", *args, img], capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines()]
mid = recs[len(recs) // 2]["ino"]
got = run("--start-ino=%d" % mid)
want = [{"ino": r["ino"], "gen": r["gen"]} for r in recs if r["ino"] >= mid]
if got != want:
    bad += 1; print("# --start-ino=%d: %d records, expected %d" % (mid, len(got), len(want)))
# --ag=N for every AG: the union is everything, each AG's inodes contiguous
union = []
for ag in range(4):
    union += run("--ag=%d" % ag)
if union != [{"ino": r["ino"], "gen": r["gen"]} for r in recs]:
    bad += 1; print("# --ag=0..3 together differ from the whole listing")
print("# selections checked, %d problems" % bad)
sys.exit(1 if bad else 0)
PY
	local src=$?
	cat "$d/select.diag"
	if [ $src -eq 0 ]; then ok "$label: --start-ino and --ag select the right inodes"; else not_ok "$label: --start-ino and --ag select the right inodes"; fi

	# internal inodes: the kernel never shows them; --include-internal adds exactly them
	local rbm rsum extra
	rbm=$(xfs_db -r -c 'sb 0' -c 'print rbmino' "$img" | awk '{print $3}')
	rsum=$(xfs_db -r -c 'sb 0' -c 'print rsumino' "$img" | awk '{print $3}')
	extra=$(comm -13 <("$XFSX_BULKSTAT" --fields=ino --format=csv "$img" | tail -n +2 | sort) \
			 <("$XFSX_BULKSTAT" --include-internal --fields=ino --format=csv "$img" | tail -n +2 | sort) | sort -n | tr '\n' ' ')
	diag "$label: --include-internal adds: $extra (rbmino $rbm, rsumino $rsum)"
	check "$label: --include-internal adds the rt bitmap and summary inodes" \
		test "$extra" = "$(printf '%s\n' "$rbm" "$rsum" | sort -n | tr '\n' ' ')"
}

run_config legacy 0 0
run_config bigtime_nrext64 1 1
run_config bigtime_1k 1 0 -b size=1024
run_config nosparse_inode2k 1 0 -i sparse=0,size=2048
run_config lbs_64k 1 1 -b size=65536
tap_done
