#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unfinished xattr intents.  This kernel logs xattr intents only
# on parent-pointer filesystems, which Debian's mkfs.xfs cannot make, so no
# workload leaves an ATTRI behind; but the kernel recovers one on any v5
# filesystem with the log-incompat bit LOG_XATTRS.  tests/log/attriwrite.py
# crafts that log (one record after the head of a clean log: one transaction
# with one ATTRI, its name and value) and the kernel's recovery is the
# oracle: it mounts, and the xattr op took effect exactly as the case says.
# Cases: set on an inode without an attr fork, with a short form fork, with
# a leaf fork; a remote (10 KiB) value; remove; replace (of a present and
# of an absent name); the user, trusted and security namespaces.
# xfsx_check on the dirty image replays in memory, names the open ATTRI and
# finds nothing; xfsx_repair -n says it would complete it; xfsx_repair (B)
# replays and completes it, and B equals the kernel's copy A: every xattr
# (tree.py), xfsx_bulkstat, features_log_incompat (cleared), xfs_repair -n
# and xfsx_check clean.  Fuzzed ATTRIs (an
# unknown op, an empty name, a value over 64 KiB, an unknown filter bit, a
# NUL in the name, a remove with a value) are refused by the kernel (the
# mount fails) and by xfsx_repair (libfs/log/logattr.c's checks), with nothing
# written.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/log/log_lib.sh"
need_log_tools "xattr intents"
. "$XFSX_SRC/tests/log/attri_lib.sh"

completed=0 cases=0 kernel_ok=0
# attri_case NAME FILE OP FILTER PREFIX ATTRNAME VLEN [ATTRIWRITE FUZZ MODE]
attri_case() {
	local name=$1 f=$2 op=$3 filt=$4 pfx=$5 an=$6 vlen=$7 z=${8:-} img="$TMP/$1.img" a="$TMP/$1.A.img" out rc sum js exp got
	cases=$((cases + 1))
	cp --sparse=always "$BASE" "$img"
	if ! out=$(python3 "$W" "$img" "${INO[$f]}" "$op" "$filt" "$an" "$vlen" $z 2>&1); then
		not_ok "$name: attriwrite.py wrote the ATTRI ($out)"
		return
	fi
	cp --sparse=always "$img" "$a"
	# A: the kernel's recovery is the oracle
	if ! mount_img "$a" "$TMP/ma"; then
		not_ok "$name: the kernel recovers the crafted ATTRI (mount)"
		return
	fi
	got=$(xa_dump "$TMP/ma/$f")
	umount "$TMP/ma"
	exp=$(xa_expect "${BEFORE[$f]}" "$op" "$pfx" "$an" "$vlen")
	if [ "$got" = "$exp" ]; then
		ok "$name: the kernel recovers the ATTRI and the xattr op took effect"
		kernel_ok=$((kernel_ok + 1))
	else
		not_ok "$name: the kernel recovers the ATTRI and the xattr op took effect"
		diag "expected $exp"; diag "got      $got"
	fi
	xfs_repair -n "$a" >/dev/null 2>&1; rc=$?
	check "$name: xfs_repair -n clean after the kernel's recovery (exit $rc)" [ $rc -eq 0 ]
	# xfsx_check on the dirty image: replays in memory, names the open ATTRI, writes
	# nothing, and finds nothing (the ATTRI is what mounting completes, not damage)
	sum=$(md5sum <"$img")
	js=$("$XFSX_CHECK" -j "$img" 2>"$TMP/ck.err"); rc=$?
	check "$name: xfsx_check replays the dirty log in memory, zero findings (exit $rc)" \
		test $rc -eq 0 -a "$(json_field "$js" "d['log']['dirty']")" = True -a "$(json_field "$js" "len(d['findings'])")" = 0
	check "$name: xfsx_check names the unfinished ATTRI, writes nothing" \
		test "$(json_field "$js" "d['log']['replay']['intents_open']['ATTRI']")" = 1 -a "$(md5sum <"$img")" = "$sum"
	# xfsx_repair -n: replays in memory, says it would complete the ATTRI, writes nothing
	out=$("$XFSX_REPAIR" -n "$img" 2>&1); rc=$?
	check "$name: xfsx_repair -n would complete the ATTRI, writes nothing (exit $rc)" \
		test $rc -eq 0 -a "$(md5sum <"$img")" = "$sum" -a "$(grep -c ': 1 of 1 would be completed' <<<"$out")" = 1
	# B: ours
	out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
	if [ $rc -eq 0 ] && grep -q ': 1 of 1 completed' <<<"$out"; then
		ok "$name: xfsx_repair replays the log and completes the ATTRI (exit $rc)"
		completed=$((completed + 1))
	else
		not_ok "$name: xfsx_repair replays the log and completes the ATTRI (exit $rc)"
		printf '%s\n' "$out" | head -6 | sed 's/^/#   /'
	fi
	xfs_repair -n "$img" >"$TMP/xr" 2>&1; rc=$?
	check "$name: xfs_repair -n clean on B (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -6 "$TMP/xr" | sed 's/^/#   /'
	js=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
	check "$name: xfsx_check clean on B, log clean (exit $rc)" \
		test $rc -eq 0 -a "$(json_field "$js" "len(d['findings'])")" = 0 -a "$(json_field "$js" "d['log']['dirty']")" = False
	# the kernel clears the log-incompat bits (LOG_XATTRS) when it leaves a clean log: so do we
	lia=$(xfs_db -r -c "sb 0" -c "p features_log_incompat" "$a" 2>&1)
	lib=$(xfs_db -r -c "sb 0" -c "p features_log_incompat" "$img" 2>&1)
	check "$name: features_log_incompat of A and B equal, 0 ($lib)" test "$lia" = "$lib" -a "$lib" = "features_log_incompat = 0"
	bulkstat_equal "$name" "$a" "$img"
	trees_equal "$name" "$a" "$img" "$f" "$exp"
	rm -f "$img" "$a"
}

attri_case set-no-fork     none 1 0 user     newname 100
attri_case set-shortform   sf   1 0 user     newname 60
attri_case set-leaf        leaf 1 0 user     newname 200
attri_case set-remote      sf   1 0 user     bigvalue 10240
attri_case set-existing    sf   1 0 user     k1 30
attri_case remove          sf   2 0 user     k1 0
attri_case remove-leaf     leaf 2 0 user     leafname007 0
attri_case remove-absent   sf   2 0 user     nosuch 0
attri_case remove-last     one  2 0 user     only 0
attri_case replace         sf   3 0 user     k2 300
attri_case replace-absent  sf   3 0 user     nosuch 40
attri_case replace-leaf    leaf 3 0 user     leafname011 500
attri_case trusted         none 1 2 trusted  t1 20
attri_case security        sf   1 4 security s1 20
# what the kernel ignores: the INCOMPLETE filter bit, the pad word (alfi_igen) of a non-parent op
attri_case incomplete-bit  sf   1 128 user   inc 10
attri_case pad-word        sf   1 0 user     pad 10 igen
diag "ATTRI cases: $cases; the kernel's recovery as expected in $kernel_ok; xfsx_repair completed $completed"
check "ATTRI cases met: $cases > 0, all recovered by the kernel" test "$cases" -gt 0 -a "$kernel_ok" -eq "$cases"
check "ATTRIs completed by xfsx_repair: $completed of $cases" test "$completed" -gt 0 -a "$completed" -eq "$cases"

# fuzzed ATTRIs: the kernel refuses them (the mount fails), so do we, saying why
fuzz_case() {
	local z=$1 img="$TMP/fz.img" a="$TMP/fz.A.img" sum out rc
	cp --sparse=always "$BASE" "$img"
	python3 "$W" "$img" "${INO[sf]}" 1 0 fz 20 "$z" >/dev/null 2>&1 || { not_ok "fuzz $z: attriwrite.py"; return; }
	cp --sparse=always "$img" "$a"
	if mount_img "$a" "$TMP/ma"; then
		umount "$TMP/ma"
		not_ok "fuzz $z: the kernel refuses the ATTRI (the mount succeeded)"
	else
		ok "fuzz $z: the kernel refuses the ATTRI (the mount fails)"
	fi
	sum=$(md5sum <"$img")
	out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
	check "fuzz $z: xfsx_repair refuses it as a bad ATTRI (exit $rc) and writes nothing" \
		test $rc -ge 2 -a $rc -lt 128 -a "$(md5sum <"$img")" = "$sum" -a "$(grep -c "ATTRI log item" <<<"$out")" -gt 0
	diag "fuzz $z: $(grep -o 'ATTRI log item[^.]*' <<<"$out")"
	"$XFSX_CHECK" "$img" >/dev/null 2>&1; rc=$?
	check "fuzz $z: xfsx_check does not crash (exit $rc)" test $rc -lt 128
	rm -f "$img" "$a"
}
for z in opflag namelen0 valuebig filter nul remval; do fuzz_case "$z"; done

tap_done
