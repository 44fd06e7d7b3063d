#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# xfsx_mkfs option parsing and advice: sizes in
# blocks keep their option's name (no use after scope: this suite runs under
# ASan too), zero sizes and repeated suboptions are refused before anything
# is printed, as mkfs.xfs refuses them; an impossible size is refused by -N
# already; advice for a log that cannot fit names a change that works (the
# test follows it); the geometry is printed only after the target is sized
# and opened; feature dependencies follow mkfs.xfs's rule (a default yields
# to an explicit option; two explicit options that conflict are refused),
# each pair tried both ways against Debian's mkfs.xfs.
. "$XFSX_SRC/tests/lib.sh"

img="$TMP/t.img"
truncate -s 1g "$img"
# run ARGS...: xfsx_mkfs; stdout/stderr in $TMP/out, $TMP/err, exit in $RC
run() { RC=0; "$XFSX_MKFS" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?; }
# refused NAME PATTERN ARGS...: exit 1, message, and nothing on stdout
refused() {
	local name=$1 pat=$2; shift 2
	run "$@"
	if [ $RC -eq 1 ] && grep -Eq -- "$pat" "$TMP/err" && [ ! -s "$TMP/out" ]; then
		ok "refused before printing: $name"
	else
		not_ok "refused before printing: $name (exit $RC; $(head -c 200 "$TMP/err"); stdout $(wc -c <"$TMP/out") bytes)"
	fi
}

# --- item 9: a size in blocks names its option, never garbage ------------------------
refused "-d size=1b (names -d size=1b)" "the filesystem would be 0 MiB" -N -f -d size=1b "$img"
refused "-l size=1b (names the log)" "log size" -N -f -l size=1b "$img"
refused "-d size=0b" "^xfsx_mkfs: -d size=0b is too small" -N -f -d size=0b "$img"
refused "-d agsize=1b" "agsize|AG" -N -f -d agsize=1b "$img"
refused "-d size=99999999999999999999b" "^xfsx_mkfs: -d size=99999999999999999999b is not a number of blocks" -N -f -d size=99999999999999999999b "$img"

# --- item 10: zero sizes, repeated suboptions, impossible sizes ----------------------
for o in "-b size=0" "-i size=0" "-n size=0" "-s size=0" "-l size=0" "-d size=0" "-d agsize=0"; do
	# shellcheck disable=SC2086
	refused "$o is too small (not the default)" "too small" -N -f $o "$img"
done
refused "-b size=4k,size=8k: given twice" "-b size given twice" -N -f -b size=4k,size=8k "$img"
refused "-b size=4k -b size=4k: given twice" "-b size given twice" -N -f -b size=4k -b size=4k "$img"
refused "-d agcount=4,agcount=8: given twice" "-d agcount given twice" -N -f -d agcount=4,agcount=8 "$img"
refused "-s size= and -s sectsize=: the same option" "-s size given twice" -N -f -s size=512,sectsize=512 "$img"
refused "-N -d size=8e: larger than any file" "larger than any file" -N -f -d size=8e "$img"
# ext4 (the test directory's usual home) holds files up to 16 TiB: the real run
# would fail at extending, so -N must say so too (asked of a scratch file)
if [ "$(stat -f -c %T "$TMP")" = ext2/ext3 ]; then
	refused "-N -d size=1e on ext4: cannot extend, said by -N" "cannot extend" -N -f -d size=1e "$img"
	check "-N -d size=1e: the image was not touched" [ "$(stat -c %s "$img")" = $((1 << 30)) ]
	check "-N: no scratch file left beside the image" bash -c '! ls -A "$0" | grep -q xfsx_mkfs-size' "$TMP"
else
	skip "-N -d size=1e refused on ext4" "the test directory is not on ext4"
fi
if have_xfsprogs; then
	for o in "-b size=0" "-b size=4k,size=8k" "-d agcount=4,agcount=8" "-l size=0"; do
		# shellcheck disable=SC2086
		rc=0; mkfs.xfs -N -f $o "$img" >/dev/null 2>&1 || rc=$?
		check "mkfs.xfs refuses $o too (exit $rc)" [ $rc -ne 0 ]
	done
fi

# --- item 11: advice that works -------------------------------------------------------
small="$TMP/small.img"
truncate -s 300m "$small"
run -N -f -b size=64k "$small"
if [ $RC -eq 1 ] && grep -q "a larger -l size= cannot help" "$TMP/err"; then
	ok "300 MiB, -b size=64k: no log fits an AG, -l size= not advised"
	advice=$(grep -o -- "-d agcount=[0-9]*" "$TMP/err")
	if [ -n "$advice" ]; then
		# shellcheck disable=SC2086
		run -f -b size=64k $advice "$small"
		check "following the advice ($advice) makes the filesystem" [ $RC -eq 0 ]
		rc=0; "$XFSX_CHECK" -q "$small" || rc=$?
		check "... and it checks clean (exit $rc)" [ $rc -eq 0 ]
	else
		not_ok "the advice names a -d agcount= ($(cat "$TMP/err"))"
	fi
else
	not_ok "300 MiB, -b size=64k: advice ($RC: $(cat "$TMP/err"))"
fi

# --- item 12: open and size first, print after ---------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	ro="$TMP/ro.img"; truncate -s 1g "$ro"; chmod 444 "$ro"
	run -f "$ro"
	check "a file it cannot open for writing: exit 1, no geometry printed" \
		bash -c '[ '"$RC"' -eq 1 ] && [ ! -s "$0" ] && grep -q "cannot open" "$1"' "$TMP/out" "$TMP/err"
else
	skip "unwritable target prints no geometry" "root opens any file for writing"
fi
if [ "$(stat -f -c %T "$TMP")" = ext2/ext3 ]; then
	truncate -s 1g "$TMP/big.img"
	run -f -d size=1e "$TMP/big.img"
	check "a size the host cannot extend to: exit 1, no geometry printed" \
		bash -c '[ '"$RC"' -eq 1 ] && [ ! -s "$0" ] && grep -q "cannot extend" "$1"' "$TMP/out" "$TMP/err"
else
	skip "unextendable size prints no geometry" "the test directory is not on ext4"
fi

# --- item 13: long options ---------------------------------------------------------------
run --version
check "--version: exit 0, the version" bash -c '[ '"$RC"' -eq 0 ] && grep -qx "xfsx_mkfs [0-9][0-9.]*" "$0"' "$TMP/out"
run --bogus "$img"
check "--bogus: named in full, exit 1" bash -c '[ '"$RC"' -eq 1 ] && grep -q "unknown option '"'"'--bogus'"'"'" "$0"' "$TMP/err"
run --help
check "--help: lists every size suffix the parser takes (k m g t p e, s, b)" grep -q "k/m/g/t/p/e suffix" "$TMP/out"
check "--help: states that usage errors exit 1" grep -q "usage errors included" "$TMP/out"

# --- item 14: feature dependencies, both ways, against mkfs.xfs -----------------------
if ! have_xfsprogs; then
	skip "feature dependencies against mkfs.xfs" "xfsprogs not installed"
	tap_done
	exit
fi
# ro_compat_bit IMG MASK: 1 if the superblock's ro_compat word has MASK set
ro_compat_bit() {
	local v; v=$(xfs_db -r -c 'sb 0' -c 'print features_ro_compat' "$1" 2>/dev/null | awk '{print $3}')
	[ -n "$v" ] || { echo "?"; return; }
	echo $(( (v & $2) ? 1 : 0 ))
}
finobt_bit() { ro_compat_bit "$1" 1; }     # XFS_SB_FEAT_RO_COMPAT_FINOBT
inobtcnt_bit() { ro_compat_bit "$1" 8; }   # XFS_SB_FEAT_RO_COMPAT_INOBTCNT
# Each pair (A needs B): every combination of {default, 0, 1} for both.
for combo in "" "finobt=0" "finobt=1" "inobtcount=0" "inobtcount=1" \
	     "finobt=0,inobtcount=0" "finobt=0,inobtcount=1" "finobt=1,inobtcount=0" \
	     "finobt=1,inobtcount=1" "inobtcount=1,finobt=0" "inobtcount=0,finobt=0"; do
	args=(); [ -n "$combo" ] && args=(-m "$combo")
	a="$TMP/a.img"; b="$TMP/b.img"; rm -f "$a" "$b"; truncate -s 1g "$a" "$b"
	rx=0; "$XFSX_MKFS" -f -q "${args[@]}" "$a" >"$TMP/x.err" 2>&1 || rx=$?
	rm=0; mkfs.xfs -f -q "${args[@]}" "$b" >"$TMP/m.err" 2>&1 || rm=$?
	name="-m ${combo:-(defaults)}"
	if [ $rm -ne 0 ]; then
		check "$name: mkfs.xfs refuses, so does xfsx_mkfs (exit $rx, $(head -c 120 "$TMP/x.err"))" [ $rx -ne 0 ]
	else
		fx="$(finobt_bit "$a")$(inobtcnt_bit "$a")"; fm="$(finobt_bit "$b")$(inobtcnt_bit "$b")"
		check "$name: both make it, finobt/inobtcount bits equal (xfsx $fx, mkfs.xfs $fm)" \
			bash -c '[ '"$rx"' -eq 0 ] && [ "$0" = "$1" ] && [ "${#0}" -eq 2 ] && [ "${0#*\?}" = "$0" ]' "$fx" "$fm"
	fi
done
a="$TMP/a.img"; rm -f "$a"; truncate -s 1g "$a"
"$XFSX_MKFS" -f -q -m finobt=0 "$a" >/dev/null 2>&1
rc=0; "$XFSX_CHECK" -q "$a" || rc=$?
check "-m finobt=0 (inobtcount dropped): checks clean (exit $rc)" [ $rc -eq 0 ]
rc=0; xfs_repair -n "$a" >/dev/null 2>&1 || rc=$?
check "-m finobt=0 (inobtcount dropped): xfs_repair -n clean (exit $rc)" [ $rc -eq 0 ]
# Pairs without a dependency must not be refused either way
for combo in "rmapbt=0,reflink=1" "rmapbt=1,reflink=0" "bigtime=0" "finobt=0,rmapbt=1"; do
	a="$TMP/a.img"; rm -f "$a"; truncate -s 1g "$a"
	rx=0; "$XFSX_MKFS" -f -q -m "$combo" "$a" >"$TMP/x.err" 2>&1 || rx=$?
	rm=0; mkfs.xfs -N -f -q -m "$combo" "$a" >/dev/null 2>&1 || rm=$?
	check "-m $combo: xfsx_mkfs exit $rx, mkfs.xfs exit $rm" [ $rx -eq $rm ]
done
tap_done
