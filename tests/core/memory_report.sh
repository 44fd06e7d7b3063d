#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How much memory each phase held, as xfsx_check and xfsx_repair say it:
# --json's "phase_memory" (per check phase, per repair step that ran: the
# peak and current resident set and the cache's bytes at its end, spilled
# false: this small tree stays far below the model's share of -m 16) and
# the "peak N MiB" every finished progress line ends with.  The peak never falls from one phase to the next,
# is above zero and at most the run's own "peak_rss_bytes"; the cache holds
# no more than the -m cap.  phase_seconds and the other keys stay;
# phase_cpu_seconds has the same phases, each within what the run's threads
# can use in its wall time.
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"

if ! have_xfsprogs || ! command -v python3 >/dev/null; then
	skip "memory per phase" "xfsprogs (mkfs.xfs, xfs_db) or python3 not installed"
	tap_done
	exit
fi
# a small tree: files in the root, a directory of 200 files, one nested
src="$TMP/f"; echo data >"$src"
{
	echo /dev/null; echo "0 0"; echo "d--755 0 0"
	for i in $(seq 1 20); do echo "f$i ---644 0 0 $src"; done
	echo "big d--755 0 0"
	for i in $(seq 1 200); do echo "entry_$i ---644 0 0 $src"; done
	echo "sub d--755 0 0"; echo "x ---644 0 0 $src"; echo '$'
	echo '$'
	echo '$'
} >"$TMP/p.proto"
img="$TMP/a.img"
truncate -s 512m "$img"
mkfs.xfs -f -q -p "$TMP/p.proto" "$img" >/dev/null 2>&1 || { not_ok "mkfs.xfs -p"; tap_done; exit; }
cap=$((16 << 20))

# judge JSON KIND: the summary (and every later round's) phase_memory;
# says what is wrong on stderr, exit status 1 then
judge() {
	python3 - "$1" "$2" "$cap" <<'PY'
import json, sys
path, kind, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(path))
sums = [d["summary"]] + [r["summary"] for r in d.get("later_rounds", []) if "summary" in r]
order = {"check": ["headers", "freesp", "inobt", "inodes", "blocks", "links", "unlinked", "owners"],
         "repair": ["scan", "intents", "superblocks", "inodes", "names", "xattrs", "quota", "rt",
                    "rebuild", "counters", "decide", "verify", "blame", "commit"]}[kind]
bad = []
for s in sums:
    pm, top = s.get("phase_memory"), s.get("peak_rss_bytes")
    if not isinstance(pm, dict) or not isinstance(top, int):
        bad.append("no phase_memory or peak_rss_bytes"); continue
    if "phase_seconds" not in s:
        bad.append("phase_seconds gone")
    # every phase timed ran, so it was measured
    for k in s["phase_seconds"]:
        if k not in pm:
            bad.append("phase %s timed but not measured" % k)
    if list(pm) != [k for k in order if k in pm] or not pm:
        bad.append("phases not in run order: %s" % list(pm))
    last = 0
    for k, m in pm.items():
        if set(m) != {"peak_rss_bytes", "rss_bytes", "cache_bytes", "spilled"}:
            bad.append("%s: fields %s" % (k, sorted(m)))
            continue
        p = m["peak_rss_bytes"]
        if not (p > 0 and p >= last and p <= top):
            bad.append("%s: peak %d after %d, run peak %d" % (k, p, last, top))
        if not 0 < m["rss_bytes"] <= p:
            bad.append("%s: rss %d, peak %d" % (k, m["rss_bytes"], p))
        if not 0 <= m["cache_bytes"] <= cap:
            bad.append("%s: cache %d over the cap %d" % (k, m["cache_bytes"], cap))
        if m["spilled"] is not False:
            bad.append("%s: spilled %r" % (k, m["spilled"]))
        last = p
if kind == "check" and "cache" not in d["summary"]:
    bad.append("summary.cache gone")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# --- xfsx_check ------------------------------------------------------------------------
"$XFSX_CHECK" --json -m 16 "$img" >"$TMP/c.json" 2>"$TMP/c.err"
check "check --json -m 16: exit 0" test $? -eq 0
diag "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print("check peak", s["peak_rss_bytes"], "owners", s["phase_memory"]["owners"])' "$TMP/c.json" 2>&1)"
check "check --json: every phase measured, peak nondecreasing and within the run's, cache within -m" \
	judge "$TMP/c.json" check
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; sys.exit(len(s["phase_memory"]) != 8)' "$TMP/c.json"
ok_if "check --json: all 8 phases of a clean run measured"
# phase_cpu_seconds: the process's CPU per phase, the same eight keys as
# phase_seconds; a phase cannot use more CPU than its workers (-t 2), the
# main thread and the cache's RCU thread could in its wall time (plus the
# 0.001 s both are rounded to), and the run used some
"$XFSX_CHECK" --json -t 2 "$img" >"$TMP/t.json" 2>/dev/null
python3 - "$TMP/t.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
w, c = s["phase_seconds"], s.get("phase_cpu_seconds")
bad = [] if isinstance(c, dict) else ["no phase_cpu_seconds"]
if not bad and list(c) != list(w):
    bad.append("keys %s, phase_seconds %s" % (list(c), list(w)))
for k in (c or {}):
    if not (isinstance(c[k], (int, float)) and 0 <= c[k] <= 4 * w.get(k, 0) + 0.005):
        bad.append("%s: cpu %r, wall %r" % (k, c[k], w.get(k)))
# (a run whose phases took under 2 ms in all may round every one to 0.000)
if c and sum(c.values()) <= 0 and sum(w.values()) >= 0.002:
    bad.append("no CPU in any phase")
print(" ".join(bad) or "cpu %s" % c, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ok_if "check --json -t 2: phase_cpu_seconds has the eight phases, each within what four threads use in its wall time"
"$XFSX_CHECK" --progress -m 16 "$img" >/dev/null 2>"$TMP/c.prog"
grep -E '^phase [0-9]+: .*\(100%\), [0-9.]+s' "$TMP/c.prog" >"$TMP/c.final"
diag "$(tail -1 "$TMP/c.final")"
[ "$(wc -l <"$TMP/c.final")" -eq 8 ] && ! grep -Evq ', peak [0-9]+ MiB$' "$TMP/c.final"
ok_if "check --progress: each of the 8 finished phase lines ends with its peak in MiB"

# --- xfsx_repair -n and a repair ---------------------------------------------------------
"$XFSX_REPAIR" -n --json -m 16 "$img" >"$TMP/n.json" 2>"$TMP/n.err"
check "repair -n --json -m 16: exit 0" test $? -eq 0
check "repair -n --json: every step measured, peak nondecreasing and within the run's, cache within -m" \
	judge "$TMP/n.json" repair
"$XFSX_REPAIR" -n --progress -m 16 "$img" >/dev/null 2>"$TMP/n.prog"
grep -E '^step [0-9]+/14: ' "$TMP/n.prog" >"$TMP/n.steps"
diag "$(head -1 "$TMP/n.steps")"
[ "$(wc -l <"$TMP/n.steps")" -eq 14 ] && ! grep -Evq ', peak [0-9]+ MiB(, ETA [0-9]+:[0-9]+)?$' "$TMP/n.steps"
ok_if "repair -n --progress: each of the 14 step lines carries its peak in MiB"
# a repair that writes (a damaged copy: one inode's mode zeroed), in every round
dmg="$TMP/d.img"
cp --sparse=always "$img" "$dmg"
xfs_db -x -c 'inode 131' -c 'write -d core.mode 0' "$dmg" >/dev/null 2>&1
"$XFSX_REPAIR" --json -m 16 "$dmg" >"$TMP/r.json" 2>"$TMP/r.err"
rc=$?
check "repair of a damaged copy: exit 1 (fixed)" test "$rc" -eq 1
check "repair --json -m 16: every step of every round measured, as for -n" judge "$TMP/r.json" repair
tap_done
