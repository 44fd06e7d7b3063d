#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Damage corpus over every structure type: superblock, AGF, AGI, AGFL,
# bno/cnt/inobt/finobt/rmap/refcount btree blocks, inodes, bmbt blocks,
# directory blocks (block, data, leaf, node, free), xattr blocks (leaf,
# node, remote value) and remote symlink blocks.  A small kernel-aged image
# (tests/check/age.py) is damaged one (field, verb) at a time with
# `xfs_db -x fuzz`: every field xfs_db prints for the block (sampled, see
# the closing diagnostics), `-d` (CRC kept valid) and `-c` (CRC stale).
# Rule: every case xfs_repair -n flags, xfsx_check flags.  Per structure
# type the counts are printed; types whose checks are not on main yet
# report their misses as TAP TODO (tests/check/corpus.py: VERIFIED).
# XFSX_CORPUS_FIELDS (default 16) caps the fields per block,
# XFSX_CORPUS_JOBS (default 2) runs cases in parallel, XFSX_CORPUS_TYPES
# (space-separated structure types, e.g. "inode dir.leaf") limits the run.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm	# cases copy the image: keep them in RAM
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"

have_xfsprogs || { skip "damage corpus" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "damage corpus" "needs root and a loop device to age the image"; tap_done; exit; }
command -v xfs_io >/dev/null || { skip "damage corpus" "xfs_io not installed"; tap_done; exit; }

base="$TMP/base.img"
if ! age_image "$base" 320M "-m rmapbt=1,reflink=1 -d agcount=2" 2>"$TMP/err"; then
	not_ok "aged base image: $(tail -1 "$TMP/err")"
	tap_done; exit
fi
diag "base: 320 MiB, 2 AGs, rmapbt+reflink, aged: $(cat "$TMP/age.out")"
xfs_repair -n "$base" >/dev/null 2>&1; rrc=$?
"$XFSX_CHECK" -q "$base"; xrc=$?
[ $rrc -eq 0 ] && [ $xrc -eq 0 ]
ok_if "base image clean (xfs_repair -n exit $rrc, xfsx_check exit $xrc)"
XFSX_CORPUS_FIELDS=${XFSX_CORPUS_FIELDS:-16} \
	python3 "$XFSX_SRC/tests/check/corpus.py" "$base" "$TMP/age.inos" "$XFSX_CHECK" "$TMP" >"$TMP/corpus.tap"
rc=$?
# renumber: corpus.py counts from 1, after our own lines
while IFS= read -r line; do
	case "$line" in
	"ok "*" # TODO"*|"not ok "*" # TODO"*)
		TAP_N=$((TAP_N + 1)); echo "not ok $TAP_N - ${line#* - }" ;;
	"ok "*) ok "${line#* - }" ;;
	"not ok "*) not_ok "${line#* - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done <"$TMP/corpus.tap"
[ $rc -le 1 ] || not_ok "corpus.py failed (exit $rc)"
tap_done
