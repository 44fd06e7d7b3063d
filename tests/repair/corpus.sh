#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Repair damage corpus: two small kernel-aged images
# (tests/check/aged_lib.sh, age.py), one with rmapbt+reflink and one
# without, damaged one (block, field, verb) at a time with `xfs_db -x fuzz`
# over the superblock (primary and a secondary), AGF, AGI, AGFL, the AG
# btrees (roots, nodes where they exist, leaves), inode cores, extent
# records and bmbt blocks, directories in every format (short form, block,
# data, leaf, node, free index), a directory's link count and size, xattrs
# (short form, leaf, node, remote values) and symlinks (inline, remote),
# plus each block's magic zeroed.  For every case
# xfs_repair -n or xfsx_check reports, one xfsx_repair run must leave it
# clean for both, a second run must change nothing, and the kernel must
# mount and use it (tests/repair/corpus.py has the details and the
# KNOWN_GAPS set whose failures are TAP TODO while repair is written).
# XFSX_REPAIR_CORPUS_FIELDS (fields per block: default 3 on the first
# image, 1 on the second; XFSX_REPAIR_CORPUS_NAMES_FIELDS, default 1, for the
# directory, xattr and symlink types), XFSX_REPAIR_CORPUS_TYPES (e.g. "agf bnobt.leaf") and
# XFSX_REPAIR_CORPUS_JOBS (default 2) size the run.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm	# cases copy the image: keep them in RAM
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "repair damage corpus"
have_xfsprogs || { skip "repair damage corpus" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "repair damage corpus" "needs root and a loop device to age the images"; tap_done; exit; }
command -v xfs_io >/dev/null || { skip "repair damage corpus" "xfs_io not installed"; tap_done; exit; }
export XFSX_CHECK XFSX_REPAIR

# rmap: 1 KiB blocks and fragmented free space (age.py --fragment), so the
# bnobt, cntbt and rmapbt have node levels; norm: 4 KiB, no rmapbt/reflink
fields=${XFSX_REPAIR_CORPUS_FIELDS:-3}
for row in "rmap|-m rmapbt=1,reflink=1 -b size=1024|--fragment|$fields" \
	   "norm|-m rmapbt=0,reflink=0||${XFSX_REPAIR_CORPUS_FIELDS:-1}"; do
	IFS='|' read -r label opts aopts cap <<<"$row"
	base="$TMP/$label.img"
	# shellcheck disable=SC2086
	if ! age_image "$base" 320M "$opts" $aopts 2>"$TMP/err"; then
		not_ok "$label: aged base image: $(tail -1 "$TMP/err")"
		continue
	fi
	cp "$TMP/age.inos" "$TMP/$label.inos"
	diag "$label: 320 MiB, mkfs.xfs $opts, aged${aopts:+ $aopts}: $(cat "$TMP/age.out")"
	xfs_repair -n "$base" >/dev/null 2>&1; rrc=$?
	"$XFSX_CHECK" -q "$base"; xrc=$?
	[ $rrc -eq 0 ] && [ $xrc -eq 0 ]
	ok_if "$label: base image clean (xfs_repair -n exit $rrc, xfsx_check exit $xrc)"
	mkdir -p "$TMP/$label.work"
	# renumber as the lines come: corpus.py counts from 1, after our own lines
	while IFS= read -r line; do
		case "$line" in
		"not ok "*" # TODO"*) TAP_N=$((TAP_N + 1)); echo "not ok $TAP_N - ${line#* - }" ;;
		"ok "*) ok "${line#* - }" ;;
		"not ok "*) not_ok "${line#* - }" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done < <(XFSX_REPAIR_CORPUS_FIELDS=$cap python3 "$XFSX_SRC/tests/repair/corpus.py" \
			"$base" "$TMP/$label.inos" "$label" "$TMP/$label.work"; echo "$?" >"$TMP/corpus.rc")
	rc=$(cat "$TMP/corpus.rc")
	[ "$rc" -le 1 ] || not_ok "$label: corpus.py failed (exit $rc)"
	rm -rf "$base" "$TMP/$label.work"
done
tap_done
