#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Crash safety: xfsx_repair --undo-file on a kernel-aged 8-AG image with
# every AG's bnobt root damaged, killed with SIGKILL (a) at fractions of a
# measured run and (b) right after its k-th device write
# (XFSX_TEST_KILL_AFTER_WRITES=k, libfs/io/io.c).  For each: the image is the
# untouched original, or has NEEDSREPAIR set (the kernel refuses it), or
# the run had finished its writes; the undo file restores the original
# byte-exact; a second xfsx_repair finishes to the oracle (xfs_repair -n,
# xfsx_check, a third run changes nothing, kernel mount + writes).
# Default: 4 fractions (one in the scan, three in the commit) and 6 write
# indexes; XFSX_UNDO_KILL_POINTS=N runs
# N fractions and every write index.
# on disk, not tmpfs: the commit's fsyncs take real time, so kills at fractions of the
# run land inside the crash protocol too
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"
. "$XFSX_SRC/tests/undo/undo_lib.sh"

need_undo "repair killed part-way"

damaged_base
img="$TMP/img"
points=${XFSX_UNDO_KILL_POINTS:-}

# (a) SIGKILL at fractions of the measured run (median of 3 wall times; the
# commit's share from --json's phase times): one kill inside the scan, the
# rest spread over the commit, where the crash protocol runs
times=() commits=()
for i in 1 2 3; do
	cpimg "$base" "$img"; rm -f "$TMP/u"
	t0=$(date +%s%N)
	"$XFSX_REPAIR" --json --undo-file="$TMP/u" "$img" >"$TMP/j" 2>/dev/null
	times+=($(( ($(date +%s%N) - t0) / 1000 )))
	commits+=($(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["summary"]["phase_seconds"]["commit"] * 1e6))' "$TMP/j"))
done
run_us=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
commit_us=$(printf '%s\n' "${commits[@]}" | sort -n | sed -n 2p)
diag "a repair with --undo-file takes $run_us us, its commit $commit_us us (medians of 3: ${times[*]} / ${commits[*]})"
if [ -n "$points" ]; then
	cfracs=$(python3 -c "n=$points; print(' '.join('%.3f' % ((i + 1) / (n + 1)) for i in range(n)))")
else
	cfracs="0.1 0.5 0.9"
fi
# the start of the commit as a fraction of the run, then points inside it
fracs=$(python3 -c "
r, c = $run_us, min($commit_us, $run_us)
s = (r - c) / r
print(' '.join(['%.3f' % (s / 2)] + ['%.3f' % (s + f * c / r) for f in map(float, '$cfracs'.split())]))")
declare -A seen
for f in $fracs; do
	cpimg "$base" "$img"; rm -f "$TMP/u"
	delay=$(python3 -c "print('%.6f' % ($f * $run_us / 1e6))")
	"$XFSX_REPAIR" --undo-file="$TMP/u" "$img" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -KILL $pid 2>/dev/null
	wait $pid; rc=$?
	st=$(killed_state "$img" "$orig")
	seen[$st]=$(( ${seen[$st]:-0} + 1 ))
	diag "killed at ${f} of the run (${delay}s): exit $rc, $st"
	if [ ! -e "$TMP/u" ]; then
		check "kill at $f: killed before the undo file existed, image untouched" \
			[ "$st" = untouched ]
		continue
	fi
	after_stop "$img" "$TMP/u" "$orig" "kill at $f of the run"
done

# (b) SIGKILL right after the k-th device write: exact points, so tmpfs
# (when there is one) is as good as disk and faster
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	disk_tmp=$TMP
	TMP=$(mktemp -d /dev/shm/xfsx-test.XXXXXX)
	trap 'rm -rf "$disk_tmp"; _cleanup' EXIT
	cpimg "$base" "$TMP/base.img"; rm -f "$base"; base="$TMP/base.img"; img="$TMP/img"
fi
K=$(write_count "$base")
diag "a repair of this image makes $K device writes"
if ! [ "${K:-0}" -gt 2 ] 2>/dev/null; then
	not_ok "counting the repair's device writes (got '$K')"; tap_done; exit
fi
if [ -n "$points" ]; then
	ks=$(seq 1 "$K")
else
	ks=$(printf '%s\n' 1 2 $((K / 3)) $((K / 2)) $((K - 1)) "$K" | sort -nu)
fi
for k in $ks; do
	cpimg "$base" "$img"; rm -f "$TMP/u"
	XFSX_TEST_KILL_AFTER_WRITES=$k "$XFSX_REPAIR" --undo-file="$TMP/u" "$img" >/dev/null 2>&1
	rc=$?
	check "kill after write $k of $K: the run was killed (exit $rc)" [ $rc -eq 137 ]
	st=$(killed_state "$img" "$orig")
	seen[$st]=$(( ${seen[$st]:-0} + 1 ))
	after_stop "$img" "$TMP/u" "$orig" "kill after write $k of $K"
done
diag "states after the kills: $(for s in "${!seen[@]}"; do printf '%s=%s ' "$s" "${seen[$s]}"; done)"
check "some kill left NEEDSREPAIR set (the protocol's middle was reached)" [ "${seen[needsrepair]:-0}" -gt 0 ]
tap_done
