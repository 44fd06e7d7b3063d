#!/usr/bin/env bash
# xfsx_mkfs says what Debian's mkfs.xfs 6.1 says for the same options on the
# same image: over a matrix of option sets (stripe units and widths with
# agcount/agsize, a data stripe unit past the log's 256 KiB, sizes not a multiple of the block size, small logs, a tiny
# filesystem, sector and block sizes, -N, -q), standard error must be line
# for line what mkfs.xfs prints (its name replaced by ours), the exit status
# the same, and where both make the filesystem, superblocks 0 and 1 must
# print identically through xfs_db (same UUID).  With -N the whole output,
# geometry and warnings, must be the same.  Where mkfs.xfs refuses, only its
# warnings (said before the refusal) are compared: the refusals are worded
# our way (tests/mkfs/refuse.sh).  Warnings about what a block device
# reports (stripe, sector sizes, alignment) cannot be made with image
# files or loop devices: tests/mkfs/test_plan.c covers them.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "mkfs warnings" "xfsprogs not installed"; tap_done; exit; }
[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }

U=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
# size|options (the same image name for both tools, so -N output compares whole)
cases=(
	"2g|-d agcount=8,su=64k,sw=4"
	"2g|-d agsize=256m,su=64k,sw=4"
	"2g|-d agsize=250m,su=64k,sw=4"
	"2g|-d agsize=250m,su=192k,sw=4"
	"2g|-d agsize=250m,sunit=384,swidth=1152"
	"2g|-d agcount=4,sunit=128,swidth=512"
	"2g|-d agcount=8,su=64k,sw=4 -b size=1024"
	"2g|-d agcount=8,su=64k,sw=4 -s size=4096"
	"2g|-d agcount=16,su=64k,sw=1"
	"2g|-d su=64k,sw=4"
	"2g|-d su=64k,sw=4 -l su=32k"
	"2g|-d agsize=100m,sunit=256,swidth=1024"
	"4g|-d agcount=32,su=128k,sw=8"
	"301m|-d agcount=2,su=64k,sw=4"
	"301m|-d su=64k,sw=4"
	# the log takes the data stripe unit: past 256 KiB it is made 32 KiB, and said
	"2g|-d su=512k,sw=2"
	"2g|-d su=1m,sw=4,agcount=8"
	# 32 and 64 KiB blocks: an inode alignment of one block, so inode chunks
	# are not stripe-aligned (the root inode where mkfs.xfs puts it)
	"2g|-d su=512k,sw=2 -b size=65536"
	"2g|-d su=64k,sw=4 -b size=32768"
	"2g|-d agsize=300m,su=512k,sw=3"
	"2g|-d su=512k,sw=2 -s size=4096"
	"2g|-d su=512k,sw=2 -l su=64k"
	"2g|-d agcount=2,su=64k,sw=4"
	"2g|-d size=1000000000"
	"2g|-d size=1000000000 -b size=65536"
	"2g|-d size=1000000512,agcount=8,su=64k,sw=4"
	"2g|-l size=67109376"
	"2g|-l size=134217728 -b size=2048"
	"2g|-d size=999999488 -l size=67109376 -b size=8192"
	"2g|-d agcount=7"
	"2g|-d agsize=300m"
	"2g|-s size=4096"
	"2g|-b size=1024 -s size=1024"
	"2g|-i size=1024 -n size=16384"
	"2g|-l size=64m"
	"300m|"
	"2g|"
	"-N 2g|-d agcount=8,su=64k,sw=4"
	"-N 2g|-d agsize=250m,su=192k,sw=4"
	"-N 2g|-d size=1000000000 -l size=67109376"
	"-N 2g|-d su=64k,sw=4"
	"-N 2g|-d su=512k,sw=2"
	"-N -q 2g|-d agcount=8,su=64k,sw=4"
	# refused by both: the warnings said first must be the same
	"2g|-d agcount=8,su=64k,sw=4 -l size=32m"
	"2g|-d size=1000000000 -l size=2m"
	"2g|-d size=1000000100"
	"2g|-l size=67109000"
	"200m|-d su=64k,sw=4"
	"2g|-d agcount=1"
	"2g|-d agcount=64,su=64k,sw=4"
	"301m|-d agsize=256m,su=256k,sw=4"
	"2g|-d agsize=250m,su=192k,sw=4 -b size=65536 -l size=64m"
)

a="$TMP/fs.img"
norm() { sed 's/mkfs\.xfs/xfsx_mkfs/g' "$1"; }
# the lines mkfs.xfs says before going on (or before refusing): warnings
warnings() {
	norm "$1" | grep -E -e '^(warning|Warning): ' -e '^agsize rounded to ' \
		-e '^problems by aligning' -e '^an AG size that is one' \
		-e '^specified blocksize .* physical sector' -e '^switching to logical sector' \
		-e '^log stripe unit \(.*\) is too large' -e '^log stripe unit adjusted to' \
		-e '^xfsx_mkfs: (Specified data stripe|Volume reports|small data volume)'
}
sbs() { xfs_db -c 'sb 0' -c print -c 'sb 1' -c print "$a" 2>&1; }

nwarn=0
for c in "${cases[@]}"; do
	head=${c%%|*}; opts=${c#*|}
	sz=${head##* }; flags=""
	[ "$sz" = "$head" ] || flags=${head% *}
	label="$sz${flags:+ $flags}${opts:+ $opts}"
	# mkfs.xfs 6.1 first (with the 6.10 defaults it lacks), then ours, on the same path
	rm -f "$a"; truncate -s "$sz" "$a"
	mrc=0
	# shellcheck disable=SC2086
	mkfs.xfs -f ${flags:--q} -m rmapbt=1,uuid=$U -i nrext64=1 $opts "$a" >"$TMP/m.out" 2>"$TMP/m.err" || mrc=$?
	[ "$mrc" -eq 0 ] && [ -z "$flags" ] && sbs >"$TMP/m.sb"
	rm -f "$a"; truncate -s "$sz" "$a"
	xrc=0
	# shellcheck disable=SC2086
	"$XFSX_MKFS" -f ${flags:--q} -m uuid=$U $opts "$a" >"$TMP/x.out" 2>"$TMP/x.err" || xrc=$?
	if [ $((mrc != 0)) -ne $((xrc != 0)) ]; then
		not_ok "$label: mkfs.xfs exit $mrc, xfsx_mkfs exit $xrc: $(head -2 "$TMP/x.err" | tr '\n' ' ')"
		continue
	fi
	[ -s "$TMP/m.err" ] && warnings "$TMP/m.err" >/dev/null && nwarn=$((nwarn + 1))
	if [ "$mrc" -ne 0 ]; then
		if diff <(warnings "$TMP/m.err") <(warnings "$TMP/x.err") >"$TMP/diff"; then
			ok "$label: both refuse, after the same $(warnings "$TMP/m.err" | wc -l) warning line(s)"
		else
			not_ok "$label: warnings before the refusal differ: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')"
		fi
		continue
	fi
	if diff <(norm "$TMP/m.err") "$TMP/x.err" >"$TMP/diff"; then
		ok "$label: the same standard error ($(wc -l <"$TMP/x.err") line(s))"
	else
		not_ok "$label: standard error differs: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')"
	fi
	if [ -n "$flags" ]; then
		# -N: geometry and warnings on one screen, nothing written
		if diff "$TMP/m.out" "$TMP/x.out" >"$TMP/diff"; then
			ok "$label: the same geometry printed"
		else
			not_ok "$label: printed geometry differs: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')"
		fi
		continue
	fi
	if diff "$TMP/m.sb" <(sbs) >"$TMP/diff"; then
		ok "$label: superblocks 0 and 1 identical to mkfs.xfs's"
	else
		not_ok "$label: superblocks differ: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')"
	fi
done
# the matrix must exercise warnings, not only silence
check "mkfs.xfs warned on $nwarn of ${#cases[@]} option sets (at least 15)" [ "$nwarn" -ge 15 ]
rm -f "$a"
tap_done
