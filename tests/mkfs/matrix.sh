#!/usr/bin/env bash
# xfsx_mkfs over a matrix of sizes (300 MiB .. 1 TiB, sparse files) and
# options: Debian's xfs_repair -n must exit 0 and xfsx_check must find
# nothing on every image; where Debian's mkfs.xfs 6.1 accepts the same
# options (plus -m rmapbt=1 -i nrext64=1, the 6.10 defaults 6.1 lacks),
# superblock 0, a secondary, AGF/AGI/AGFL of AG 0, of the log's AG and of the
# last AG must print identically through xfs_db (same UUID for both).
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "mkfs matrix" "xfsprogs not installed"; tap_done; exit; }
[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }

U=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
sizes=(300m 301m 512m 1g 4g 100g 1t)
options=(
	""
	"-b size=1024"
	"-b size=2048"
	"-b size=8192"
	"-b size=16384"
	"-b size=32768"
	"-b size=65536"
	"-b size=65536 -i size=1024"
	"-s size=4096"
	"-i size=1024"
	"-i size=2048"
	"-i sparse=0"
	"-i maxpct=10"
	"-m finobt=0,inobtcount=0"
	"-m reflink=0"
	"-m bigtime=0"
	"-d agcount=7"
	"-d agsize=100m"
	"-d su=64k,sw=4"
	"-d sunit=128,swidth=512"
	"-l size=128m"
	"-l su=32k"
	"-n size=8192"
	"-L label12chars"
)
# options mkfs.xfs 6.1 spells differently or lacks: judged by xfs_repair -n and xfsx_check only
solo_options=(
	"-m rmapbt=0"
	"-i nrext64=0"
	"-m rmapbt=0,reflink=0,finobt=0,inobtcount=0 -i sparse=0"
	"-d concurrency=8"
	"-l concurrency=4"
)

a="$TMP/x.img"; b="$TMP/m.img"
fields() { # IMG CMD -> xfs_db print output
	xfs_db -c "$2" -c print "$1" 2>&1
}
compare() { # label
	local agc logag c diffs=""
	agc=$(xfs_db -c 'sb 0' -c 'print agcount' "$a" | awk '{print $3}')
	logag=$((agc / 2))
	for c in "sb 0" "sb 1" "sb $((agc - 1))" "agf 0" "agi 0" "agfl 0" "agf $logag" \
		 "agi $logag" "agfl $logag" "agf $((agc - 1))" "agi $((agc - 1))"; do
		if ! diff <(fields "$a" "$c") <(fields "$b" "$c") >"$TMP/diff" 2>&1; then
			diffs="$diffs [$c: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')]"
		fi
	done
	if [ -z "$diffs" ]; then ok "$1: sb/AGF/AGI/AGFL fields identical to mkfs.xfs"
	else not_ok "$1: differs from mkfs.xfs:$diffs"; fi
}
judge() { # label
	if xfs_repair -n "$a" >"$TMP/repair.out" 2>&1; then ok "$1: xfs_repair -n clean"
	else not_ok "$1: xfs_repair -n exit $?: $(grep -v -e '^Phase' -e '^ *-' -e 'host filesystem' -e 'Repair may fail' -e 'the image and' "$TMP/repair.out" | head -3 | tr '\n' ' ')"; fi
	if "$XFSX_CHECK" "$a" >"$TMP/check.out" 2>&1; then ok "$1: xfsx_check clean"
	else not_ok "$1: xfsx_check exit $?: $(head -3 "$TMP/check.out" | tr '\n' ' ')"; fi
}

run() { # size oracle(0/1) opts...
	local sz=$1 oracle=$2; shift 2
	local label="$sz ${*:-(defaults)}"
	rm -f "$a" "$b"; truncate -s "$sz" "$a"
	# shellcheck disable=SC2068
	if ! "$XFSX_MKFS" -q -m uuid=$U $@ "$a" 2>"$TMP/mk.err"; then
		not_ok "$label: xfsx_mkfs failed: $(head -2 "$TMP/mk.err" | tr '\n' ' ')"
		return
	fi
	judge "$label"
	[ "$oracle" = 1 ] || return 0
	truncate -s "$sz" "$b"
	# shellcheck disable=SC2068
	if ! mkfs.xfs -q -f -m rmapbt=1,uuid=$U -i nrext64=1 $@ "$b" 2>"$TMP/mk.err"; then
		skip "$label: compare with mkfs.xfs" "mkfs.xfs 6.1 refused: $(head -1 "$TMP/mk.err")"
		return
	fi
	compare "$label"
}

for sz in "${sizes[@]}"; do run "$sz" 1; done
for o in "${options[@]}"; do [ -n "$o" ] && run 3g 1 "$o"; done
for o in "-b size=1024" "-b size=2048" "-b size=8192" "-b size=32768" "-s size=4096" \
	 "-i size=1024" "-i size=2048"; do run 301m 1 "$o"; run 700g 1 "$o"; done
for o in "${solo_options[@]}"; do run 3g 0 "$o"; done
# large sparse images: default geometry across the 4 TiB rule and 1 TiB AGs
for sz in 4t 5t 15t; do run "$sz" 1; done
rm -f "$a" "$b"
tap_done
