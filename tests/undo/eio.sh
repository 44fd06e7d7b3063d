#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write errors mid-repair: the k-th device write fails with EIO
# (XFSX_TEST_FAIL_WRITE=k, libfs/io/io.c; nothing after it is submitted),
# with and without --undo-file, and, where the kernel has device-mapper,
# an error target under one range the repair writes.  xfsx_repair stops,
# names the failing range, exits 8; the image is the original (first
# write: NEEDSREPAIR itself failed) or has NEEDSREPAIR set; the undo file
# restores it byte-exact; a second run finishes to the oracle.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"
. "$XFSX_SRC/tests/undo/undo_lib.sh"

need_undo "repair with write errors"

damaged_base
img="$TMP/img"
K=$(write_count "$base")
diag "a repair of this image makes $K device writes"
if ! [ "${K:-0}" -gt 2 ] 2>/dev/null; then
	not_ok "counting the repair's device writes (got '$K')"; tap_done; exit
fi

for k in 1 2 $((K / 2)) "$K"; do
	for undo in yes no; do
		cpimg "$base" "$img"; rm -f "$TMP/u"
		args=(); [ $undo = yes ] && args=(--undo-file="$TMP/u")
		XFSX_TEST_FAIL_WRITE=$k "$XFSX_REPAIR" "${args[@]}" "$img" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		what="EIO on write $k of $K (undo file: $undo)"
		check "$what: exit 8 (got $rc)" [ $rc -eq 8 ]
		check "$what: the failing range is named" \
			grep -q "failed at daddr 0x[0-9a-f]* ([0-9]* bytes): Input/output error" "$TMP/err"
		grep -q "failed at daddr" "$TMP/err" || sed 's/^/#   /' "$TMP/err" | tail -3
		st=$(killed_state "$img" "$orig")
		if [ "$k" -eq 1 ]; then
			check "$what: the first write (NEEDSREPAIR) failed: image untouched ($st)" \
				[ "$st" = untouched ]
		else
			check "$what: NEEDSREPAIR stays set ($st)" [ "$st" = needsrepair ]
		fi
		if [ $undo = yes ]; then
			after_stop "$img" "$TMP/u" "$orig" "$what"
		elif [ "$k" -eq $((K / 2)) ]; then
			[ "$st" = needsrepair ] && check "$what: the kernel refuses it" kernel_refuses "$img"
			"$XFSX_REPAIR" "$img" >/dev/null 2>&1; rc=$?
			check "$what: second xfsx_repair finishes (exit $rc)" [ $rc -eq 1 ]
			after_repair "$img" "$what"
		fi
	done
done

# A device-mapper error target under the first range the repair writes past
# the primary superblock: a real EIO from the block layer.
if ! command -v dmsetup >/dev/null || ! dmsetup targets 2>/dev/null | grep -qw error; then
	skip "EIO from a device-mapper error target" "the kernel has no device-mapper (dmsetup targets fails)"
	tap_done; exit
fi
cpimg "$base" "$TMP/c"; rm -f "$TMP/u"
"$XFSX_REPAIR" --undo-file="$TMP/u" "$TMP/c" >/dev/null 2>&1
range=$("$XFSX_UNDO" -n -v "$TMP/u" "$TMP/c" |
	sed -n 's/^would restore .* at offset \([0-9]*\) (\([0-9]*\) bytes).*/\1 \2/p' |
	awk '$1 > 65536 { print; exit }')
cpimg "$base" "$img"
loop=$(loop_attach "$img")
if [ -z "$range" ] || [ -z "$loop" ]; then
	not_ok "setting up the error target (range '$range', loop '$loop')"; tap_done; exit
fi
set -- $range
es=$(($1 / 512)) en=$((($2 + 511) / 512)) total=$(blockdev --getsz "$loop")
name="xfsx-undo-eio-$$"
printf '0 %s linear %s 0\n%s %s error\n%s %s linear %s %s\n' "$es" "$loop" "$es" "$en" \
	$((es + en)) $((total - es - en)) "$loop" $((es + en)) | dmsetup create "$name"
trap 'dmsetup remove "$name" 2>/dev/null; _cleanup' EXIT
"$XFSX_REPAIR" "/dev/mapper/$name" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "dm error target at sector $es: exit 8 (got $rc)" [ $rc -eq 8 ]
check "dm error target: the failing range is named" grep -q "failed at daddr" "$TMP/err"
dmsetup remove "$name"
losetup -d "$loop"
check "dm error target: NEEDSREPAIR stays set" needsrepair "$img"
check "dm error target: the kernel refuses it" kernel_refuses "$img"
"$XFSX_REPAIR" "$img" >/dev/null 2>&1; rc=$?
check "dm error target: second xfsx_repair finishes (exit $rc)" [ $rc -eq 1 ]
after_repair "$img" "dm error target"
tap_done
