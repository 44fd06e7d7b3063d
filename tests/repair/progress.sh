#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Repair's progress covers every step of its run table (repair/run.c),
# not only the scan's phases: with --progress (stderr not a terminal) or
# -t SECONDS one line per step ends with its time, the run's, the peak RSS and an ETA,
# the last one without an ETA and newline-terminated; the scans' own phase
# lines still come in between.  --no-progress and -q print none, and the
# report on stdout is the same either way.  XFSX_REPAIR picks the binary.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "repair progress"
have_xfsprogs || { skip "repair progress" "xfsprogs not installed"; tap_done; exit; }

# the run table's steps, in order (repair/run.c steps[])
STEPS="scan intents superblocks inodes names xattrs quota rt rebuild counters decide verify blame commit"
NSTEPS=$(echo $STEPS | wc -w)

base="$TMP/base.img"
truncate -s 300M "$base" && mkfs.xfs -q -f "$base" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
damage() {
	cp --sparse=always "$base" "$1"
	xfs_db -x -c 'agf 1' -c 'write -d freeblks 7' "$1" >/dev/null 2>&1
}

# every_step ERR: a line per step, in the table's order, each with its time
every_step() {
	local n=0 s line
	for s in $STEPS; do
		n=$((n + 1))
		line=$(grep -E "^step $n/$NSTEPS: $s: [0-9.]+s, run [0-9.]+s" "$1")
		[ -n "$line" ] || { diag "no progress line for step $n ($s)"; return 1; }
	done
	# the order: step numbers as printed rise
	grep -oE '^step [0-9]+' "$1" | awk '{ if ($2 <= last) exit 1; last = $2 }'
}

img="$TMP/dmg.img"
damage "$img"
"$XFSX_REPAIR" --progress "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--progress on damage: exit 1 (got $rc)" [ $rc -eq 1 ]
check "--progress: a line for each of the $NSTEPS steps, in order" every_step "$TMP/err"
check "--progress: every step but the last has an ETA" \
	bash -c '[ "$(grep -cE "^step [0-9]+/$1: .*, ETA [0-9]+:[0-5][0-9]$" "$0")" -eq $(($1 - 1)) ]' "$TMP/err" "$NSTEPS"
check "--progress: the last step's line ends the progress, newline-terminated" \
	bash -c 'grep "^step " "$0" | tail -1 | grep -qE "^step $1/$1: commit: [0-9.]+s, run [0-9.]+s, peak [0-9]+ MiB$" &&
		[ "$(tail -c 1 "$0" | od -An -c | tr -d " ")" = "\\n" ]' "$TMP/err" "$NSTEPS"
check "--progress: the scan phases are still shown" grep -q '^phase 4: inodes: ' "$TMP/err"
check "--progress: no carriage returns when stderr is not a terminal" bash -c '! grep -q $'"'"'\r'"'"' "$0"' "$TMP/err"
xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
check "--progress: xfs_repair -n clean after the repair (exit $rc)" [ $rc -eq 0 ]
cp "$TMP/out" "$TMP/out.progress"

damage "$img"
"$XFSX_REPAIR" -t 1 "$img" >/dev/null 2>"$TMP/err"; rc=$?
check "-t 1 on damage: exit 1 (got $rc)" [ $rc -eq 1 ]
check "-t 1: a line for each step" every_step "$TMP/err"

damage "$img"
"$XFSX_REPAIR" --no-progress "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--no-progress: exit 1 (got $rc)" [ $rc -eq 1 ]
check "--no-progress: no progress line" bash -c '! grep -qE "^(step|phase|verify: phase) " "$0"' "$TMP/err"
check "--no-progress: the same report as with --progress" cmp -s "$TMP/out" "$TMP/out.progress"

damage "$img"
"$XFSX_REPAIR" -q --progress "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "-q --progress: exit 1 (got $rc)" [ $rc -eq 1 ]
check "-q --progress: nothing on stderr or stdout" bash -c '[ ! -s "$0" ] && [ ! -s "$1" ]' "$TMP/err" "$TMP/out"

damage "$img"
"$XFSX_REPAIR" --json --progress "$img" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--json --progress: no progress line (the JSON is the output)" \
	bash -c '! grep -qE "^(step|phase) " "$0"' "$TMP/err"

tap_done
