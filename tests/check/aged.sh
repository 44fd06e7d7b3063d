#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Kernel-aged clean images: Debian's mkfs.xfs over an option matrix, loop
# mounted and populated by the kernel (tests/check/age.py: many files,
# directories in every format, btree extent maps, xattrs in every format
# with remote values, inline and remote symlinks, hard links, devices,
# fifos, sockets, reflinked copies, deletes), unmounted.  For each image:
#   - xfs_db confirms the formats the test claims to cover are really there
#     (the list is printed; a missing one is a failure of the builder);
#   - xfs_repair -n exits 0 (the oracle calls it clean);
#   - xfsx_check exits 0 with 0 findings and the image's sha256 unchanged.
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"

have_xfsprogs || { skip "aged images" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "aged images" "needs root and a loop device to mount XFS"; tap_done; exit; }
command -v xfs_io >/dev/null || { skip "aged images" "xfs_io not installed"; tap_done; exit; }

# options|age.py options|formats that must appear
# The sparse-inode case also turns reflink off: the refcount btree's per-AG
# reservation would stay a free extent where full inode chunks still fit.
all="dir.short dir.block dir.leaf dir.node bmap.btree bmap.extents attr.short attr.leaf attr.node attr.remote symlink.inline symlink.remote dev fifo"
matrix=(
	"||$all"
	"-i sparse=1 -m reflink=0|--fragment|$all inode.sparse_chunk"
	"-m reflink=1,rmapbt=1||$all"
	"-n size=8192||$all"
	"-b size=1024||$all"
	"-i size=1024||$all"
)

img="$TMP/aged.img"
for row in "${matrix[@]}"; do
	IFS='|' read -r opts aopts want <<<"$row"
	name="mkfs.xfs ${opts:-(defaults)}${aopts:+ + $aopts}"
	# shellcheck disable=SC2086
	if ! age_image "$img" 1G "$opts" $aopts 2>"$TMP/err"; then
		not_ok "$name: could not build the aged image: $(tail -1 "$TMP/err")"
		continue
	fi
	diag "$name: $(cat "$TMP/age.out")"
	have=$(format_report "$img")
	missing=
	for w in $want; do [[ " $have " == *" $w "* ]] || missing+=" $w"; done
	check "$name: formats present ($have)${missing:+, MISSING:$missing}" [ -z "$missing" ]
	xfs_repair -n "$img" >"$TMP/repair.out" 2>&1; rrc=$?
	check "$name: xfs_repair -n exit 0 (got $rrc)" [ $rrc -eq 0 ]
	[ $rrc -ne 0 ] && grep -v -e '^Phase' -e '^ *-' "$TMP/repair.out" | head -5 | sed 's/^/#   /'
	sum=$(imgsum "$img")
	out=$("$XFSX_CHECK" -j "$img" 2>"$TMP/err"); rc=$?
	n=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["findings"]))' <<<"$out" 2>/dev/null || echo "?")
	after=$(imgsum "$img")
	if [ $rc -eq 0 ] && [ "$n" = 0 ] && [ "$after" = "$sum" ]; then
		ok "$name: xfsx_check exit 0, 0 findings, image sha256 unchanged"
	else
		not_ok "$name: xfsx_check exit $rc, $n findings, image $([ "$after" = "$sum" ] && echo unchanged || echo CHANGED)"
		"$XFSX_CHECK" "$img" 2>&1 | head -8 | sed 's/^/#   /'
	fi
done
tap_done
