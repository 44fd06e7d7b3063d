#!/usr/bin/env bash
# The minimum log size (libfs/log/logres.c): for every combination of block
# size, inode size, directory block size, reflink/rmapbt and nrext64 below,
# xfsx_mkfs must refuse a too-small -l size= with the same minimum that
# Debian's mkfs.xfs 6.1 names ("minimum size is N blocks"), and accept the
# minimum itself (or 64 MiB, below which both refuse any log).  Only -N runs: nothing is written.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "minimum log size" "xfsprogs not installed"; tap_done; exit; }
[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }

img="$TMP/l.img"
truncate -s 2g "$img"
compared=0; differ=0
for b in 1024 4096 16384 32768 65536; do
	for rl in "reflink=0,rmapbt=0" "reflink=1,rmapbt=1" "reflink=0,rmapbt=1"; do
		for ne in 0 1; do
			for i in 512 2048; do
				for n in 0 65536; do
					[ "$i" -gt "$b" ] && continue
					opts="-b size=$b -m $rl -i nrext64=$ne,size=$i"
					[ "$n" -gt 0 ] && opts="$opts -n size=$n"
					# the smallest -l size= mkfs.xfs parses: 2 MiB, at least 32 blocks
					ls=$((32 * b)); [ "$ls" -lt 2097152 ] && ls=2097152
					# shellcheck disable=SC2086
					want=$(mkfs.xfs -N -f $opts -l size=$ls "$img" 2>&1 |
					       sed -n 's/.*minimum size is \([0-9]*\) blocks.*/\1/p')
					# shellcheck disable=SC2086
					got=$("$XFSX_MKFS" -N -f $opts -l size=$ls "$img" 2>&1 |
					      sed -n 's/.*needs at least \([0-9]*\) blocks.*/\1/p')
					compared=$((compared + 1))
					if [ -z "$want" ] || [ "$want" != "$got" ]; then
						differ=$((differ + 1))
						not_ok "$opts: minimum log mkfs.xfs '${want}' xfsx_mkfs '${got}'"
					fi
					# and the minimum itself is accepted (both refuse below 64 MiB)
					acc=$((got * b)); [ "$acc" -lt 67108864 ] && acc=67108864
					# shellcheck disable=SC2086
					if [ -n "$got" ] && ! "$XFSX_MKFS" -N -f $opts -l size=$acc \
						"$img" >/dev/null 2>"$TMP/err"; then
						not_ok "$opts: -l size=$acc refused: $(head -1 "$TMP/err")"
					fi
				done
			done
		done
	done
done
if [ "$compared" -gt 0 ] && [ "$differ" -eq 0 ]; then
	ok "minimum log size equal to mkfs.xfs 6.1 in $compared combinations"
else
	not_ok "minimum log size: $differ of $compared combinations differ from mkfs.xfs 6.1"
fi
diag "compared $compared combinations, $differ differ"

# 300 MiB with 64 KiB blocks: with rmapbt and nrext64 the minimum log does
# not fit in an AG and both refuse; without them both make a 1024-block log
truncate -s 300m "$TMP/s.img"
mkfs.xfs -N -f -b size=65536 -m rmapbt=1 -i nrext64=1 "$TMP/s.img" >/dev/null 2>&1; m=$?
"$XFSX_MKFS" -N -f -b size=65536 "$TMP/s.img" >/dev/null 2>&1; x=$?
if [ "$m" -ne 0 ] && [ "$x" -ne 0 ]; then
	ok "300 MiB, 64 KiB blocks, rmapbt: both refuse (mkfs.xfs exit $m, xfsx_mkfs exit $x)"
else
	not_ok "300 MiB, 64 KiB blocks, rmapbt: mkfs.xfs exit $m, xfsx_mkfs exit $x"
fi
lm=$(mkfs.xfs -N -f -b size=65536 -m rmapbt=0 -i nrext64=0 "$TMP/s.img" 2>&1 | sed -n 's/^log .*blocks=\([0-9]*\).*/\1/p')
lx=$("$XFSX_MKFS" -N -f -b size=65536 -m rmapbt=0 -i nrext64=0 "$TMP/s.img" 2>&1 | sed -n 's/^log .*blocks=\([0-9]*\).*/\1/p')
if [ -n "$lm" ] && [ "$lm" = "$lx" ]; then
	ok "300 MiB, 64 KiB blocks, no rmapbt: both make a $lm-block log"
else
	not_ok "300 MiB, 64 KiB blocks, no rmapbt: mkfs.xfs log '$lm' blocks, xfsx_mkfs '$lx'"
fi
tap_done
