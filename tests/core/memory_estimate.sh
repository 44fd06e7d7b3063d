#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The memory estimate (--json summary.memory_estimate_bytes; -v prints it
# as "memory: a full check needs about N MiB"): made from the AG headers
# before the scan, it is held within 0.6x to 1.6x of the
# run's measured summary.peak_rss_bytes, for xfsx_check, xfsx_repair -n and
# a real xfsx_repair of a damaged copy (and -n's memory_estimate_repair_bytes
# against that real repair's peak), on images of different shapes: an
# empty 4-AG filesystem, 20,000, 100,000 and 1,000,000 files (the last not
# under a sanitizer) made by xfsx_mkfs -p, and 1,000 AGs with few inodes
# (the per-AG cost).  The 1M case fails the per-inode costs of before the
# compact link records (80 and 120 bytes: 1.9x there).
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"

if ! have_xfsprogs || ! command -v python3 >/dev/null; then
	skip "memory estimate" "xfsprogs (mkfs.xfs, xfs_db) or python3 not installed"
	tap_done
	exit
fi
: >"$TMP/empty"
# proto N: a protofile of N empty files, 1000 per directory
proto() {
	python3 - "$1" "$TMP/empty" <<'PY'
import sys
n, src = int(sys.argv[1]), sys.argv[2]
print("/dev/null\n0 0\nd--755 0 0")
for d in range((n + 999) // 1000):
    print(" d%04d d--755 0 0" % d)
    for f in range(min(1000, n - 1000 * d)):
        print("  f%04d ---644 0 0 %s" % (f, src))
    print(" $")
print("$")
PY
}
# ratio JSON: estimate / peak, within [0.6, 1.6] (printed either way)
ratio() {
	python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
e, p = s["memory_estimate_bytes"], s["peak_rss_bytes"]
r = e / p if p else 0
print("# estimate %.1f MiB, peak %.1f MiB: %.2fx" % (e / 2**20, p / 2**20, r))
sys.exit(0 if 0.6 <= r <= 1.6 else 1)
PY
}

# ahead NJSON RJSON: the -n run's memory_estimate_repair_bytes against the
# real repair's peak, within [0.6, 1.6]
ahead() {
	python3 - "$1" "$2" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["summary"]["memory_estimate_repair_bytes"]
p = json.load(open(sys.argv[2]))["summary"]["peak_rss_bytes"]
r = e / p if p else 0
print("# -n said %.1f MiB for the repair, which peaked at %.1f MiB: %.2fx" % (e / 2**20, p / 2**20, r))
sys.exit(0 if 0.6 <= r <= 1.6 else 1)
PY
}

# mcheck NAME CMD...: check, for the plain build; under ASan (the sanitizer
# suite runs core too) shadow memory and the free quarantine inflate the
# peak the estimate is held against, so the ratio is printed and skipped
if ldd "$XFSX_CHECK" 2>/dev/null | grep -q libasan; then sanitized=1; else sanitized=0; fi
mcheck() {
	local n=$1; shift
	if [ "$sanitized" = 1 ]; then
		"$@"
		skip "$n" "a sanitizer build: ASan's shadow memory and quarantine inflate the peak"
	else
		check "$n" "$@"
	fi
}

declare -A made
truncate -s 1g "$TMP/empty.img"
mkfs.xfs -q -f "$TMP/empty.img" >/dev/null 2>&1 && made[empty]=$TMP/empty.img
# 1M files too, where the per-inode costs outweigh the I/O buffers (the
# plain build only: its ratios are skipped under a sanitizer)
sizes="20000 100000"
[ "$sanitized" = 1 ] || sizes="$sizes 1000000"
for n in $sizes; do
	proto $n >"$TMP/p$n.proto"
	truncate -s 4g "$TMP/f$n.img"
	"$XFSX_MKFS" -q -f -p "$TMP/p$n.proto" "$TMP/f$n.img" && made[f$n]=$TMP/f$n.img
done
truncate -s 2t "$TMP/ags.img"
"$XFSX_MKFS" -q -f -d agcount=1000 -l size=64m "$TMP/ags.img" && made[ags]=$TMP/ags.img
keys="empty f20000 f100000 ags"
[ "$sanitized" = 1 ] || keys="$keys f1000000"
for k in $keys; do
	img=${made[$k]:-}
	if [ -z "$img" ]; then
		not_ok "$k: the image is made"
		continue
	fi
	"$XFSX_CHECK" --json "$img" >"$TMP/$k.check.json"
	mcheck "$k: xfsx_check's estimate is within 0.6x-1.6x of its peak" ratio "$TMP/$k.check.json"
	"$XFSX_REPAIR" -n --json "$img" >"$TMP/$k.n.json"
	mcheck "$k: xfsx_repair -n's estimate is within 0.6x-1.6x of its peak" ratio "$TMP/$k.n.json"
	# a real repair: every AGF's freeblks zeroed
	agc=$(xfs_db -r -c "sb 0" -c "p agcount" "$img" | awk '{print $3}')
	cmds=()
	for ((a = 0; a < agc; a++)); do cmds+=(-c "agf $a" -c "write -d freeblks 0"); done
	xfs_db -x "${cmds[@]}" "$img" >/dev/null 2>&1
	"$XFSX_REPAIR" --json "$img" >"$TMP/$k.r.json"
	check "$k: xfsx_repair fixes the damaged copy (exit 1)" test $? -eq 1
	mcheck "$k: xfsx_repair's estimate is within 0.6x-1.6x of its peak" ratio "$TMP/$k.r.json"
	mcheck "$k: xfsx_repair -n's estimate for a writing repair is within 0.6x-1.6x of that peak" \
		ahead "$TMP/$k.n.json" "$TMP/$k.r.json"
done
"$XFSX_CHECK" -v "${made[empty]:-$TMP/empty.img}" >"$TMP/v.txt"
check "xfsx_check -v prints the estimate beside the peak" \
	grep -Eq '^memory: a full check needs about [0-9]+ MiB .*this run peaked at [0-9]+ MiB$' "$TMP/v.txt"
"$XFSX_REPAIR" -n -v "${made[empty]:-$TMP/empty.img}" >"$TMP/rv.txt"
check "xfsx_repair -n -v prints it too" grep -Eq '^memory: a full repair needs about [0-9]+ MiB' "$TMP/rv.txt"
tap_done
