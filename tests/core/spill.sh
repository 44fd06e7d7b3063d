#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The model's spill path (-m, --tmpdir: scan/model.c, libfs/util/spill.c)
# gives what the in-memory path gives.  A small kernel-aged image (1 KiB
# blocks, fragmented free space, rmapbt+reflink: tens of thousands of
# extents) and damaged copies of it (xfs_db blocktrash, seeds 1..N:
# XFSX_SPILL_SEEDS, default 3) are checked and repaired in memory and with
# XFSX_TEST_SPILL=3 (every model array of 3 extents spills: thousands of
# runs, merge passes; the directories kept for phase 5 wait in the
# temporary directory too): byte-identical --json (device name, times and
# memory left out) and byte-identical repaired images (imgsum).  Then: -m
# too small is refused (exit 8) naming the smallest that works, and that
# value runs and finds the same (the model spills at it or not: at 24
# bytes an extent this image's fits the model's share; repair's own
# refusal too); on 150,000 files the link records set the smallest cap (refused
# after the inode btrees below it), which holds the peak; a repair whose dirty buffers are staged in the temporary directory
# (XFSX_TEST_STAGE, every AG rebuilt) writes the same image; a full temporary
# directory (a 16 KiB tmpfs) and one removed mid-run (the
# XFSX_TEST_SPILL_VANISH hook) are operational errors (exit 8) naming the
# directory, with the image unchanged; a missing one is refused; one on
# the filesystem's own (read-only mounted) device is refused.
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"

have_xfsprogs || { skip "spill" "xfsprogs not installed"; tap_done; exit; }
base="$TMP/base.img"
if have_loop_xfs; then
	if ! age_image "$base" 320M "-m rmapbt=1,reflink=1 -b size=1024 -d agcount=4" --fragment 2>"$TMP/err"; then
		not_ok "aged base image: $(tail -1 "$TMP/err")"; tap_done; exit
	fi
	diag "base: 320 MiB, 1 KiB blocks, 4 AGs, aged: $(cat "$TMP/age.out")"
else
	# no loop mounts: a protofile tree (fewer extents, still thousands of runs)
	src="$TMP/f"; head -c 20000 /dev/urandom >"$src"
	{ echo /dev/null; echo "0 0"; echo "d--755 0 0"
	  for d in 1 2 3; do echo "d$d d--755 0 0"; for i in $(seq 1 300); do echo "f$i ---644 0 0 $src"; done; echo '$'; done
	  echo '$'; } >"$TMP/p.proto"
	truncate -s 320M "$base"
	mkfs.xfs -f -q -b size=1024 -d agcount=4 -p "$TMP/p.proto" "$base" >/dev/null 2>&1 ||
		{ not_ok "mkfs.xfs -p"; tap_done; exit; }
	diag "base: a protofile tree (no root or loop device to age one)"
fi
mkdir -p "$TMP/spill"

# norm JSON: the output without what spilling may change (tests/core/spill_norm.py)
norm() { python3 "$XFSX_SRC/tests/core/spill_norm.py" "$1"; }
summary_of() {	# JSON KEY: the summary's KEY
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"].get(sys.argv[2], ""))' "$1" "$2"
}
spilled() {	# JSON: whether some phase says it spilled
	python3 -c 'import json,sys; pm=json.load(open(sys.argv[1]))["summary"]["phase_memory"]; sys.exit(not any(v["spilled"] for v in pm.values()))' "$1"
}
edge_runs() {	# JSON (a check's): the directory edges' runs written to the temporary directory
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["spill"]["edge_runs"])' "$1" 2>/dev/null || echo 0
}

cases="clean"
for s in $(seq 1 "${XFSX_SPILL_SEEDS:-3}"); do
	cp --sparse=always "$base" "$TMP/d$s.img"
	xfs_db -x -c blockget -c "blocktrash -s $s -n 4 -x 1 -y 8" "$TMP/d$s.img" >/dev/null 2>&1
	cases="$cases d$s"
done
cp --sparse=always "$base" "$TMP/clean.img"

for c in $cases; do
	img="$TMP/$c.img"
	"$XFSX_CHECK" --json "$img" >"$TMP/m.json" 2>/dev/null; mrc=$?
	XFSX_TEST_SPILL=3 "$XFSX_CHECK" --json --tmpdir "$TMP/spill" "$img" >"$TMP/s.json" 2>"$TMP/s.err"; src=$?
	nf=$(norm "$TMP/m.json" | grep -c '"code"'); er=$(edge_runs "$TMP/s.json")
	[ $mrc -eq $src ] && [ $mrc -ne 8 ] && cmp -s <(norm "$TMP/m.json") <(norm "$TMP/s.json") && spilled "$TMP/s.json" &&
		[ "$er" -gt 0 ]
	ok_if "$c: check spilled = in memory (exit $mrc/$src, $nf findings, identical --json, $er runs of edges)"
	# the directories kept for phase 5 waited in the temporary directory (none in memory's run)
	dsp=$(summary_of "$TMP/s.json" deferred_spilled); dm=$(summary_of "$TMP/m.json" deferred_spilled)
	[ "${dsp:-0}" -gt 0 ] && [ "$dm" = 0 ]
	ok_if "$c: check's deferred directories spilled ($dsp of $(summary_of "$TMP/s.json" deferred) deferred; $dm in memory)"
	cp --sparse=always "$img" "$TMP/rm.img"; cp --sparse=always "$img" "$TMP/rs.img"
	"$XFSX_REPAIR" --json "$TMP/rm.img" >"$TMP/rm.json" 2>/dev/null; mrc=$?
	XFSX_TEST_SPILL=3 "$XFSX_REPAIR" --json --tmpdir "$TMP/spill" "$TMP/rs.img" >"$TMP/rs.json" 2>"$TMP/rs.err"; src=$?
	hm=$(imgsum "$TMP/rm.img"); hs=$(imgsum "$TMP/rs.img")
	[ "$c" = d1 ] && d1_repaired=$hm
	[ $mrc -eq $src ] && [ $mrc -ne 8 ] && [ "$hm" = "$hs" ] &&
		cmp -s <(norm "$TMP/rm.json") <(norm "$TMP/rs.json") && spilled "$TMP/rs.json"
	ok_if "$c: repair spilled = in memory (exit $mrc/$src, image ${hm:0:12} both, identical --json)"
done
[ -z "$(ls -A "$TMP/spill")" ]
ok_if "nothing left in the temporary directory"

# the directory edges spilled (a check's: XFSX_TEST_SPILL): only the entries naming
# directories stay in memory, the others go to --tmpdir and are read back in the links
# phase.  A tree whose root entries for d0 and d2 name d3 and d1 instead leaves two
# subtrees unreachable: thousands of files named by unreachable directories, reported
# from the spilled entries merged by parent (hundreds of runs: merge passes) in the
# in-memory order; then the edges' own spill (XFSX_TEST_SPILL=1000: the model's arrays
# stay in memory, the edges go in runs of 1000) into a directory removed mid-run
python3 - >"$TMP/tree.proto" <<'PY'
print("/dev/null\n0 0\nd--755 0 0")
for d in range(4):
    print(" d%d d--755 0 0" % d)
    for s in range(3):
        print("  s%d d--755 0 0" % s)
        for f in range(300):
            print("   f%03d ---644 0 0 /dev/null" % f)
        print("  $")
    for f in range(200):
        print("  g%03d ---644 0 0 /dev/null" % f)
    print(" $")
print("$")
PY
truncate -s 512m "$TMP/tree.img"
"$XFSX_MKFS" -q -f -p "$TMP/tree.proto" "$TMP/tree.img" >/dev/null 2>&1 || not_ok "xfsx_mkfs -p tree"
rootino=$(xfs_db -r -c "sb 0" -c "p rootino" "$TMP/tree.img" | sed 's/.*= //')
sfino() { xfs_db -r -c "inode $rootino" -c "p u3.sfdir3.list[$1].inumber.i4" "$TMP/tree.img" | sed 's/.*= //'; }
i1=$(sfino 1); i3=$(sfino 3)
xfs_db -x -c "inode $rootino" -c "write u3.sfdir3.list[0].inumber.i4 $i3" \
	-c "write u3.sfdir3.list[2].inumber.i4 $i1" "$TMP/tree.img" >/dev/null 2>&1
"$XFSX_CHECK" --json "$TMP/tree.img" >"$TMP/m.json" 2>/dev/null; mrc=$?
XFSX_TEST_SPILL=3 "$XFSX_CHECK" --json --tmpdir "$TMP/spill" "$TMP/tree.img" >"$TMP/s.json" 2>/dev/null; src=$?
nun=$(python3 -c 'import json,sys; print(sum(f["code"] == "inode.unreachable" for f in json.load(open(sys.argv[1]))["findings"]))' "$TMP/m.json" 2>/dev/null)
er=$(edge_runs "$TMP/s.json")
[ $mrc -eq 4 ] && [ $src -eq 4 ] && cmp -s <(norm "$TMP/m.json") <(norm "$TMP/s.json") &&
	[ "${nun:-0}" -gt 2000 ] && [ "$er" -gt 64 ] && [ -z "$(ls -A "$TMP/spill")" ]
ok_if "unreachable subtrees, edges spilled: identical --json (exit $mrc/$src, ${nun:-?} unreachable, $er runs of edges)"
"$XFSX_CHECK" -v "$TMP/tree.img" >"$TMP/m.txt" 2>/dev/null
XFSX_TEST_SPILL=3 "$XFSX_CHECK" -v --tmpdir "$TMP/spill" "$TMP/tree.img" >"$TMP/s.txt" 2>/dev/null
cmp -s <(grep -v '^.*: checked ' "$TMP/m.txt") <(grep -v '^.*: checked ' "$TMP/s.txt")
ok_if "unreachable subtrees, edges spilled: identical text report ($(wc -l <"$TMP/m.txt") lines)"
mkdir -p "$TMP/gone2"
XFSX_TEST_SPILL=1000 XFSX_TEST_SPILL_VANISH=1 "$XFSX_CHECK" --json --tmpdir "$TMP/gone2" "$TMP/tree.img" >"$TMP/o" 2>"$TMP/e"; rc=$?
diag "$(cat "$TMP/e")"
[ $rc -eq 8 ] && [ ! -e "$TMP/gone2" ] && grep -q "temporary directory $TMP/gone2" "$TMP/e"
ok_if "check, edges' tmpdir removed mid-run: exit $rc naming it"

# -m too small: refused with the smallest that works, which then runs and spills by itself
img="$TMP/d1.img"
"$XFSX_CHECK" -m 1 "$img" >/dev/null 2>"$TMP/e"; rc=$?
min=$(sed -n 's/.*the smallest that works is -m \([0-9]*\).*/\1/p' "$TMP/e")
diag "$(cat "$TMP/e")"
[ $rc -eq 8 ] && [ -n "$min" ]
ok_if "check -m 1: refused (exit $rc) naming the smallest that works (-m ${min:-?})"
"$XFSX_CHECK" --json "$img" >"$TMP/m.json" 2>/dev/null; mrc=$?
"$XFSX_CHECK" --json -m "${min:-1}" --tmpdir "$TMP/spill" "$img" >"$TMP/s.json" 2>/dev/null; src=$?
[ $mrc -eq $src ] && cmp -s <(norm "$TMP/m.json") <(norm "$TMP/s.json")
ok_if "check -m $min: runs, same findings (exit $src)"
diag "check -m $min: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print("peak", s["peak_rss_bytes"] >> 20, "MiB; spilled in", [k for k, v in s["phase_memory"].items() if v["spilled"]])' "$TMP/s.json")"
"$XFSX_REPAIR" -m 1 "$TMP/rs.img" >/dev/null 2>"$TMP/e"; rc=$?
grep -q "the smallest that works is -m [0-9]" "$TMP/e" && [ $rc -eq 8 ]
ok_if "repair -m 1: refused (exit $rc) naming the smallest that works"
cp --sparse=always "$img" "$TMP/rs.img"
"$XFSX_REPAIR" -m "${min:-1}" --tmpdir "$TMP/spill" "$TMP/rs.img" >/dev/null 2>&1; src=$?
[ "$(imgsum "$TMP/rs.img")" = "${d1_repaired:-}" ] && [ $src -lt 8 ]
ok_if "repair -m $min: the same repaired image as in memory (exit $src)"

# repair's own refusal names a value that then repairs, the same image as in memory
"$XFSX_REPAIR" -m 1 "$img" >/dev/null 2>"$TMP/e"
rmin=$(sed -n 's/.*the smallest that works is -m \([0-9]*\).*/\1/p' "$TMP/e")
cp --sparse=always "$img" "$TMP/rs.img"
"$XFSX_REPAIR" -m "${rmin:-1}" --tmpdir "$TMP/spill" "$TMP/rs.img" >/dev/null 2>&1; src=$?
[ -n "$rmin" ] && [ "$(imgsum "$TMP/rs.img")" = "${d1_repaired:-}" ] && [ $src -lt 8 ]
ok_if "repair -m 1 names -m ${rmin:-?}, which repairs to the same image (exit $src)"

# the link records (6 bytes an inode slot, 4 an edge) do not spill: on 150,000 empty files
# they pass the model's share of the smallest cap the fixed part allows, so -m 1 names a
# cap that holds them too (estimated from the superblock's inode count), one below it is
# refused after the inode btrees (exit 8, nothing printed, the image untouched by repair)
# naming the same, and that cap runs within itself with the in-memory findings
python3 - 150000 >"$TMP/many.proto" <<'PY'
import sys
n = int(sys.argv[1])
print("/dev/null\n0 0\nd--755 0 0")
for d in range((n + 999) // 1000):
    print(" d%04d d--755 0 0" % d)
    for f in range(min(1000, n - 1000 * d)):
        print("  f%04d ---644 0 0 /dev/null" % f)
    print(" $")
print("$")
PY
truncate -s 2g "$TMP/many.img"
"$XFSX_MKFS" -q -f -p "$TMP/many.proto" "$TMP/many.img" >/dev/null 2>&1 || not_ok "xfsx_mkfs -p 150,000 files"
"$XFSX_CHECK" -m 1 "$TMP/many.img" >/dev/null 2>"$TMP/e"; rc=$?
lmin=$(sed -n 's/.*the smallest that works is -m \([0-9]*\).*/\1/p' "$TMP/e")
diag "$(cat "$TMP/e")"
[ $rc -eq 8 ] && [ -n "$lmin" ]
ok_if "150,000 files, check -m 1: refused naming -m ${lmin:-?}"
"$XFSX_CHECK" -m $((${lmin:-2} - 1)) "$TMP/many.img" >"$TMP/o" 2>"$TMP/e"; rc=$?
diag "$(cat "$TMP/e")"
[ $rc -eq 8 ] && [ ! -s "$TMP/o" ] && grep -q "the smallest that works is -m ${lmin:-x}\b" "$TMP/e"
ok_if "check -m $((${lmin:-2} - 1)): refused once the link records are sized (exit $rc, nothing printed, -m ${lmin:-?} named)"
cp --sparse=always "$TMP/many.img" "$TMP/many2.img"; h0=$(imgsum "$TMP/many2.img")
"$XFSX_REPAIR" -m $((${lmin:-2} - 1)) "$TMP/many2.img" >/dev/null 2>"$TMP/e"; rc=$?
[ $rc -eq 8 ] && grep -q "the smallest that works is -m" "$TMP/e" && [ "$(imgsum "$TMP/many2.img")" = "$h0" ]
ok_if "repair -m $((${lmin:-2} - 1)): refused (exit $rc), image unchanged"
"$XFSX_CHECK" --json "$TMP/many.img" >"$TMP/m.json" 2>/dev/null; mrc=$?
"$XFSX_CHECK" --json -m "${lmin:-1}" --tmpdir "$TMP/spill" "$TMP/many.img" >"$TMP/s.json" 2>/dev/null; src=$?
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["peak_rss_bytes"])' "$TMP/s.json" 2>/dev/null)
diag "check -m ${lmin:-?}: peak $((${peak:-0} >> 20)) MiB"
[ $mrc -eq $src ] && [ $src -ne 8 ] && cmp -s <(norm "$TMP/m.json") <(norm "$TMP/s.json")
ok_if "check -m ${lmin:-?}: runs with the in-memory findings (exit $src)"
if ldd "$XFSX_CHECK" 2>/dev/null | grep -q libasan; then
	skip "check -m ${lmin:-?}: peak within the cap" "ASan's shadow memory inflates the peak"
else
	[ -n "$peak" ] && [ "$peak" -le $((${lmin:-0} << 20)) ]
	ok_if "check -m ${lmin:-?}: peak within the cap ($((${peak:-0} >> 20)) MiB)"
fi

# a repair's dirty buffers past the cache's share staged in --tmpdir (XFSX_TEST_STAGE=2:
# past 2 KiB, as a small -m on a big volume): every AG's free-space counters zeroed, so
# every AG's btrees are rebuilt; the same image as the in-memory repair, the rebuild
# step says it spilled; staging into a full directory writes nothing
cp --sparse=always "$TMP/clean.img" "$TMP/z.img"
for a in 0 1 2 3; do xfs_db -x -c "agf $a" -c "write -d freeblks 0" "$TMP/z.img" >/dev/null 2>&1; done
cp --sparse=always "$TMP/z.img" "$TMP/zm.img"; cp --sparse=always "$TMP/z.img" "$TMP/zs.img"
"$XFSX_REPAIR" "$TMP/zm.img" >/dev/null 2>&1; mrc=$?
XFSX_TEST_STAGE=2 "$XFSX_REPAIR" --json -m "${rmin:-1}" --tmpdir "$TMP/spill" "$TMP/zs.img" >"$TMP/zs.json" 2>"$TMP/e"; src=$?
hm=$(imgsum "$TMP/zm.img")
[ $mrc -eq $src ] && [ $mrc -ne 8 ] && [ "$hm" = "$(imgsum "$TMP/zs.img")" ] &&
	python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["summary"]["phase_memory"]["rebuild"]["spilled"])' "$TMP/zs.json"
ok_if "repair -m ${rmin:-?}, dirty buffers staged: the same image as in memory (exit $mrc/$src, ${hm:0:12})"
[ -z "$(ls -A "$TMP/spill")" ]
ok_if "nothing left in the temporary directory after staging"

# a temporary directory that fills, vanishes or is missing: exit 8, nothing written
cp --sparse=always "$img" "$TMP/e.img"; h0=$(imgsum "$TMP/e.img")
if have_root && mkdir -p "$TMP/full" && mount -t tmpfs -o size=16k tmpfs "$TMP/full" 2>/dev/null; then
	_MOUNTS+=("$TMP/full")
	XFSX_TEST_SPILL=3 "$XFSX_REPAIR" --tmpdir "$TMP/full" "$TMP/e.img" >/dev/null 2>"$TMP/e"; rc=$?
	diag "$(cat "$TMP/e")"
	[ $rc -eq 8 ] && grep -q "temporary directory $TMP/full: No space left" "$TMP/e" && [ "$(imgsum "$TMP/e.img")" = "$h0" ]
	ok_if "repair, tmpdir full: exit $rc naming it, image unchanged"
	XFSX_TEST_SPILL=3 "$XFSX_CHECK" --tmpdir "$TMP/full" "$TMP/e.img" >/dev/null 2>"$TMP/e"; rc=$?
	[ $rc -eq 8 ] && grep -q "temporary directory $TMP/full" "$TMP/e"
	ok_if "check, tmpdir full: exit $rc naming it"
	XFSX_TEST_SPILL=1000 "$XFSX_CHECK" --tmpdir "$TMP/full" "$TMP/tree.img" >/dev/null 2>"$TMP/e"; rc=$?
	diag "$(cat "$TMP/e")"
	[ $rc -eq 8 ] && grep -q "temporary directory $TMP/full: No space left" "$TMP/e"
	ok_if "check, the edges' tmpdir full: exit $rc naming it"
	cp --sparse=always "$TMP/z.img" "$TMP/zf.img"; hz=$(imgsum "$TMP/zf.img")
	XFSX_TEST_STAGE=2 "$XFSX_REPAIR" --tmpdir "$TMP/full" "$TMP/zf.img" >/dev/null 2>"$TMP/e"; rc=$?
	diag "$(cat "$TMP/e")"
	[ $rc -eq 8 ] && grep -q "temporary directory $TMP/full: No space left" "$TMP/e" && [ "$(imgsum "$TMP/zf.img")" = "$hz" ]
	ok_if "repair, staging into a full tmpdir: exit $rc naming it, image unchanged"
	umount "$TMP/full"
else
	skip "repair, tmpdir full" "needs root to mount a 16 KiB tmpfs"
	skip "check, tmpdir full" "needs root to mount a 16 KiB tmpfs"
	skip "check, the edges' tmpdir full" "needs root to mount a 16 KiB tmpfs"
	skip "repair, staging into a full tmpdir" "needs root to mount a 16 KiB tmpfs"
fi
mkdir -p "$TMP/gone"
XFSX_TEST_SPILL=3 XFSX_TEST_SPILL_VANISH=1 "$XFSX_REPAIR" --tmpdir "$TMP/gone" "$TMP/e.img" >/dev/null 2>"$TMP/e"; rc=$?
diag "$(cat "$TMP/e")"
[ $rc -eq 8 ] && [ ! -e "$TMP/gone" ] && grep -q "temporary directory $TMP/gone" "$TMP/e" && [ "$(imgsum "$TMP/e.img")" = "$h0" ]
ok_if "repair, tmpdir removed mid-run: exit $rc naming it, image unchanged"
"$XFSX_REPAIR" -m 256 --tmpdir "$TMP/none" "$TMP/e.img" >/dev/null 2>"$TMP/e"; rc=$?
[ $rc -eq 8 ] && grep -q "temporary directory $TMP/none" "$TMP/e" && [ "$(imgsum "$TMP/e.img")" = "$h0" ]
ok_if "repair, tmpdir missing: refused (exit $rc), image unchanged"

# a tmpdir on the filesystem's own device (mounted read-only, which check allows)
if have_loop_xfs && dev=$(loop_attach "$TMP/clean.img") && mount_img "$dev" "$TMP/ro" ro 2>/dev/null; then
	"$XFSX_CHECK" -m 256 --tmpdir "$TMP/ro" "$dev" >/dev/null 2>"$TMP/e"; rc=$?
	[ $rc -eq 8 ] && grep -q "own device" "$TMP/e"
	ok_if "check, tmpdir on the device checked: refused (exit $rc)"
	umount "$TMP/ro"
else
	skip "check, tmpdir on the device checked" "needs root and a loop device"
fi
tap_done
