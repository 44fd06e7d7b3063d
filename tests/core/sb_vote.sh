#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# With the primary superblock destroyed, the geometry comes from the
# secondaries by agreement, not from the first copy that verifies: AG 1's
# copy is given a different (still valid, CRC kept) size, and the geometry
# the other copies share must win.
. "$XFSX_SRC/tests/lib.sh"

here="$XFSX_SRC/tests/core"
tool() { python3 "$here/coretool.py" "$@"; }

if ! have_xfsprogs; then
	skip "secondary superblock vote" "xfsprogs (mkfs.xfs, xfs_db) not installed"
	tap_done
	exit
fi

img="$TMP/vote.img"
truncate -s 1g "$img" && mkfs.xfs -f -q -d agcount=6 "$img" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
dblocks=$(xfs_db -r -c 'sb 0' -c 'print dblocks' "$img" | awk '{print $3}')
odd=$((dblocks - 1))
xfs_db -x -c 'sb 1' -c "write -d dblocks $odd" "$img" >/dev/null 2>&1
check "xfs_db left AG 1's copy with dblocks $odd" \
	test "$(xfs_db -r -c 'sb 1' -c 'print dblocks' "$img" 2>/dev/null | awk '{print $3}')" = "$odd"
xfs_db -x -c 'sb 0' -c 'write -d magicnum 0' "$img" >/dev/null 2>&1

"$XFSX_CHECK" --json "$img" >"$TMP/vote.json" 2>"$TMP/vote.err"; rc=$?
check "exit 4 (primary damaged)" test $rc -eq 4
check "sb.primary_bad reported" tool has "$TMP/vote.json" sb.primary_bad 0
src=$(tool get "$TMP/vote.json" filesystem.sb_source_ag 2>/dev/null)
check "geometry not taken from the odd copy in AG 1 (took AG $src)" test "$src" != 1 -a -n "$src"
check "dblocks is the majority's ($dblocks)" \
	test "$(tool get "$TMP/vote.json" filesystem.dblocks 2>/dev/null)" = "$dblocks"
check "the odd copy in AG 1 is reported (sb.secondary)" tool has "$TMP/vote.json" sb.secondary 1
tap_done
