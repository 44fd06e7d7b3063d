#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Clean images are left alone: Debian mkfs.xfs over an option matrix, and
# kernel-aged images (tests/check/aged_lib.sh, age.py).  For each image:
# `xfsx_repair -n` exits 0 and leaves the image byte-identical (sha256);
# `xfsx_repair` exits 0 and leaves it byte-identical too (a clean volume is
# not rewritten), also with --threads 1 -o ag_stride=2 -m 256 -q.  XFSX_REPAIR
# picks the binary (tests/repair/repair_lib.sh).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "clean images"
have_xfsprogs || { skip "clean images" "xfsprogs not installed"; tap_done; exit; }

# judge IMG LABEL: -n then a repair run, each exit 0 and sha256 unchanged
judge() {
	local img=$1 what=$2 before after rc
	before=$(img_sha "$img")
	"$XFSX_REPAIR" -n "$img" >"$TMP/out" 2>&1; rc=$?
	after=$(img_sha "$img")
	check "$what: xfsx_repair -n exit 0 (got $rc)" [ $rc -eq 0 ]
	check "$what: xfsx_repair -n wrote nothing (sha256)" [ "$before" = "$after" ]
	[ $rc -eq 0 ] || sed -n '1,5s/^/#   /p' "$TMP/out"
	"$XFSX_REPAIR" "$img" >"$TMP/out" 2>&1; rc=$?
	after=$(img_sha "$img")
	check "$what: xfsx_repair exit 0 (got $rc)" [ $rc -eq 0 ]
	check "$what: xfsx_repair left it byte-identical (sha256)" [ "$before" = "$after" ]
	[ $rc -eq 0 ] || sed -n '1,5s/^/#   /p' "$TMP/out"
	# the other options change how it runs, not what it decides
	"$XFSX_REPAIR" --threads 1 -o ag_stride=2 -m 256 --no-progress -q "$img" >"$TMP/out" 2>&1; rc=$?
	after=$(img_sha "$img")
	[ $rc -eq 0 ] && [ "$before" = "$after" ]
	ok_if "$what: xfsx_repair --threads 1 -o ag_stride=2 -m 256 -q exit 0 (got $rc), byte-identical"
}

matrix=(
	""
	"-m rmapbt=1,reflink=1"
	"-m reflink=0"
	"-b size=1024"
	"-i size=1024"
	"-n size=8192"
	"-i sparse=0"
	"-m finobt=0"
	"-m bigtime=0,inobtcount=0"
	"-d agcount=7"
)
for opts in "${matrix[@]}"; do
	img="$TMP/m.img"
	rm -f "$img"; truncate -s 512M "$img"
	# shellcheck disable=SC2086
	if ! mkfs.xfs -q -f $opts "$img" >"$TMP/err" 2>&1; then
		not_ok "mkfs.xfs ${opts:-(defaults)}: $(tail -1 "$TMP/err")"
		continue
	fi
	judge "$img" "mkfs.xfs ${opts:-(defaults)}"
done

if ! have_loop_xfs || ! command -v xfs_io >/dev/null; then
	skip "kernel-aged images" "needs root, a loop device and xfs_io to age images"
	tap_done; exit
fi
aged=(
	"|"
	"-m rmapbt=1,reflink=1|"
	"-b size=1024|"
	"-i sparse=1 -m reflink=0|--fragment"
)
for row in "${aged[@]}"; do
	opts=${row%%|*} ageopts=${row#*|} size=320M
	[ -n "$ageopts" ] && size=1G	# --fragment fills the free space (as tests/check/aged.sh)
	img="$TMP/a.img"
	# shellcheck disable=SC2086
	if ! age_image "$img" $size "$opts" $ageopts 2>"$TMP/err"; then
		not_ok "aged ${opts:-(defaults)}: $(tail -1 "$TMP/err")"
		continue
	fi
	xfs_repair -n "$img" >/dev/null 2>&1
	check "aged ${opts:-(defaults)} $ageopts: xfs_repair -n calls the base clean" [ $? -eq 0 ]
	judge "$img" "aged ${opts:-(defaults)} $ageopts"
done
tap_done
