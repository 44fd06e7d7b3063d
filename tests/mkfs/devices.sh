#!/usr/bin/env bash
# xfsx_mkfs -l logdev= and -r rtdev= on image files: over a matrix of log
# sizes and realtime sizes and extent sizes, superblock 0 must print
# identically through xfs_db to Debian's mkfs.xfs 6.1 with the same options
# (and a secondary, AG 0's headers and the rt bitmap and summary inodes, times
# and CRCs aside)
# (same UUID; mkfs.xfs given -i nrext64=1, and -m rmapbt=1 without a
# realtime section: the 6.10 defaults 6.1 lacks), and the image must be clean
# for xfs_repair -n -l LOG -r RT and xfsx_check -l LOG -r RT.  Then the
# refusals (a device too small, in use, holding a filesystem, the data
# device itself) and, where root and loop devices allow, a kernel mount of
# an external-log image with -o logdev= that takes writes.  This kernel has
# no realtime support: realtime images are judged by xfs_repair only.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "mkfs devices" "xfsprogs not installed"; tap_done; exit; }
[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }

U=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
a="$TMP/x.img"; al="$TMP/xl.img"; ar="$TMP/xr.img"
b="$TMP/m.img"; bl="$TMP/ml.img"; br="$TMP/mr.img"

sb_print() { xfs_db -r -c 'sb 0' -c print "$1" 2>/dev/null; }

# run LABEL DATASIZE LOGDEVSIZE|- RTDEVSIZE|- [-l subopts] [-r subopts] [other options...]
# "-l X" / "-r X" are given as "l:X" / "r:X" (X without the device, which is added)
run() {
	local label=$1 dsz=$2 lsz=$3 rsz=$4; shift 4
	local xo=() mo=() lx="" rx="" w
	for w in "$@"; do
		case "$w" in
		l:*) lx=${w#l:} ;;
		r:*) rx=${w#r:} ;;
		*) xo+=("$w"); mo+=("$w") ;;
		esac
	done
	local rlx=() rrx=() cl=() cr=()
	rm -f "$a" "$al" "$ar" "$b" "$bl" "$br"
	truncate -s "$dsz" "$a" "$b"
	if [ "$lsz" != - ]; then
		truncate -s "$lsz" "$al" "$bl"
		xo+=(-l "logdev=$al${lx:+,$lx}"); mo+=(-l "logdev=$bl${lx:+,$lx}")
		rlx=(-l "$al"); cl=(-l "$al")
	fi
	if [ "$rsz" != - ]; then
		truncate -s "$rsz" "$ar" "$br"
		xo+=(-r "rtdev=$ar${rx:+,$rx}"); mo+=(-r "rtdev=$br${rx:+,$rx}")
		rrx=(-r "$ar"); cr=(-r "$ar")
	else
		mo+=(-m rmapbt=1)
	fi
	if ! "$XFSX_MKFS" -q -m uuid=$U "${xo[@]}" "$a" 2>"$TMP/mk.err"; then
		not_ok "$label: xfsx_mkfs failed: $(head -2 "$TMP/mk.err" | tr '\n' ' ')"
		return
	fi
	if xfs_repair -n "${rlx[@]}" "${rrx[@]}" "$a" >"$TMP/repair.out" 2>&1; then
		ok "$label: xfs_repair -n ${rlx[*]} ${rrx[*]} clean"
	else
		not_ok "$label: xfs_repair -n exit $?: $(grep -v -e '^Phase' -e '^ *-' "$TMP/repair.out" | head -3 | tr '\n' ' ')"
	fi
	if "$XFSX_CHECK" "${cl[@]}" "${cr[@]}" "$a" >"$TMP/check.out" 2>&1; then
		ok "$label: xfsx_check ${cl[*]} ${cr[*]} clean"
	else
		not_ok "$label: xfsx_check exit $?: $(head -3 "$TMP/check.out" | tr '\n' ' ')"
	fi
	if ! mkfs.xfs -q -f -m uuid=$U -i nrext64=1 "${mo[@]}" "$b" 2>"$TMP/mk.err"; then
		not_ok "$label: mkfs.xfs 6.1 refused what xfsx_mkfs made: $(head -1 "$TMP/mk.err")"
		return
	fi
	if diff <(sb_print "$a") <(sb_print "$b") >"$TMP/diff" 2>&1; then
		ok "$label: superblock 0 identical to mkfs.xfs's"
	else
		not_ok "$label: superblock 0 differs from mkfs.xfs's: $(grep '^[<>]' "$TMP/diff" | head -6 | tr '\n' ' ')"
	fi
	# a secondary, AG 0's headers and the rt bitmap and summary inodes (times and CRCs aside)
	local c diffs="" rbm
	rbm=$(xfs_db -r -c 'sb 0' -c 'print rbmino' "$b" 2>/dev/null | awk '{print $3}')
	for c in "sb 1" "agf 0" "agi 0" "agfl 0" "inode $rbm" "inode $((rbm + 1))"; do
		if ! diff <(xfs_db -r -c "$c" -c print "$a" 2>&1 | grep -v -e time -e crc) \
			  <(xfs_db -r -c "$c" -c print "$b" 2>&1 | grep -v -e time -e crc) >"$TMP/diff" 2>&1; then
			diffs="$diffs [$c: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')]"
		fi
	done
	if [ -z "$diffs" ]; then ok "$label: sb 1, AG 0 headers, rt inodes identical to mkfs.xfs's"
	else not_ok "$label: differs from mkfs.xfs:$diffs"; fi
}

# external logs: the whole device, -l size=, sizes across the 1 GiB rule, other blocks/sectors
run "log 100m" 1g 100m -
run "log 64m" 1g 64m -
run "log 1g" 2g 1g -
run "log size=80m of 200m" 1g 200m - l:size=80m
run "log size=64m, 300m data" 300m 100m - l:size=64m
run "log 2000m" 1g 2000m -
run "log -b 1024" 1g 100m - -b size=1024
run "log -b 65536" 1g 200m - -b size=65536
run "log -s 4096" 1g 100m - -s size=4096
run "log -l su=32k" 1g 100m - l:su=32k
run "log -d su=64k,sw=4" 3g 100m - -d su=64k,sw=4
# realtime: sizes, extent sizes, bitmaps of one to many blocks
run "rt 500m" 1g - 500m
run "rt size=100m of 500m" 1g - 500m r:size=100m
run "rt extsize=64k" 1g - 500m r:extsize=64k
run "rt extsize=1m" 1g - 2g r:extsize=1m
run "rt 10g" 1g - 10g
run "rt 10240000512 bytes (rextents not a multiple of 32)" 1g - 10240000512
run "rt -b 1024" 1g - 300m -b size=1024
run "rt -b 65536 extsize=128k" 1g - 2g -b size=65536 r:extsize=128k
run "rt extsize=16k, size=1000000k" 1g - 2g r:extsize=16k,size=1000000k
# both
run "log 100m + rt 1g" 1g 100m 1g
run "log 64m + rt 3g extsize=8k, agcount=8" 2g 64m 3g r:extsize=8k -d agcount=8

# -p with both devices: the tree in the data section, the rt files as made
mkdir -p "$TMP/src/d"
for i in $(seq 1 40); do echo "$i" >"$TMP/src/d/f$i"; done
head -c 3000000 /dev/urandom >"$TMP/src/big"
for rsz in 500m 10g; do
	rm -f "$a" "$al" "$ar"; truncate -s 1g "$a"; truncate -s 100m "$al"; truncate -s "$rsz" "$ar"
	if "$XFSX_MKFS" -q -p "$TMP/src" -l logdev="$al" -r rtdev="$ar" "$a" 2>"$TMP/err"; then
		xfs_repair -n -l "$al" -r "$ar" "$a" >"$TMP/repair.out" 2>&1 &&
			"$XFSX_CHECK" -l "$al" -r "$ar" "$a" >/dev/null 2>&1
		ok_if "-p with an external log and a $rsz realtime section: xfs_repair -n -l -r and xfsx_check -l -r clean"
	else
		not_ok "-p with -l logdev= -r rtdev=: $(head -1 "$TMP/err")"
	fi
done

# xfsprogs 6.10 (its defaults are ours: no -i/-m needed): superblock 0 equal and its
# xfs_repair -n clean (oracle_610 builds the oracle once, shared with tests/mkfs/pptr.sh
# and the other 6.10 tests; a skip only when it cannot be built here)
if s610=$(oracle_610 2>"$TMP/o610.err"); then
	run610() { # LABEL LOGSIZE RTSIZE RTSUBOPTS [options]
		local label=$1 lsz=$2 rsz=$3 rx=$4; shift 4
		rm -f "$a" "$al" "$ar" "$b" "$bl" "$br"
		truncate -s 1g "$a" "$b"; truncate -s "$lsz" "$al" "$bl"; truncate -s "$rsz" "$ar" "$br"
		if ! "$XFSX_MKFS" -q -m uuid=$U -l logdev="$al" -r rtdev="$ar$rx" "$@" "$a" 2>"$TMP/err" ||
		   ! "$s610/mkfs.xfs" -q -f -m uuid=$U -l logdev="$bl" -r rtdev="$br$rx" "$@" "$b" 2>"$TMP/err"; then
			not_ok "6.10 $label: mkfs failed: $(head -1 "$TMP/err")"; return
		fi
		if "$s610/xfs_repair" -n -l "$al" -r "$ar" "$a" >"$TMP/repair.out" 2>&1; then
			ok "6.10 $label: xfs_repair 6.10 -n -l -r clean"
		else
			not_ok "6.10 $label: xfs_repair 6.10 -n exit $?: $(grep -v -e '^Phase' -e '^ *-' "$TMP/repair.out" | head -3 | tr '\n' ' ')"
		fi
		diff <("$s610/xfs_db" -r -c 'sb 0' -c print "$a" 2>/dev/null) \
		     <("$s610/xfs_db" -r -c 'sb 0' -c print "$b" 2>/dev/null) >"$TMP/diff" 2>&1
		ok_if "6.10 $label: superblock 0 identical to mkfs.xfs 6.10's"
	}
	run610 "log 100m + rt 2g extsize=64k" 100m 2g ,extsize=64k
	run610 "log 64m + rt 500m, parent pointers" 64m 500m "" -n parent=1
	run610 "log 200m + rt 10g, 1 KiB blocks" 200m 10g "" -b size=1024
else
	skip "xfsprogs 6.10 comparison" "xfsprogs 6.10 cannot be built here: $(tail -1 "$TMP/o610.err")"
fi

# refusals: exit 1 and a sentence naming the problem; the target untouched
refuse() { # LABEL PATTERN xfsx_mkfs-args...
	local label=$1 pat=$2; shift 2
	"$XFSX_MKFS" "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
	if [ $rc -eq 1 ] && grep -qi -- "$pat" "$TMP/err"; then
		ok "refused: $label (exit 1: $(head -1 "$TMP/err"))"
	else
		not_ok "refused: $label: exit $rc, stderr: $(head -2 "$TMP/err" | tr '\n' ' ')"
	fi
}
rm -f "$a" "$al" "$ar"; truncate -s 1g "$a"
truncate -s 5m "$al"
# mkfs.xfs -m rmapbt=1 -i nrext64=1 (the defaults here) says the same numbers
refuse "log device of 5 MiB" "external log device size 1280 blocks too small, must be at least 3273 blocks" -f -l logdev="$al" "$a"
rm -f "$al"; truncate -s 20m "$al"
refuse "log device of 20 MiB" "smaller than 64 MiB" -f -l logdev="$al" "$a"
rm -f "$al"; truncate -s 3g "$al"
refuse "log device of 3 GiB (larger than a log can be)" "log size 3221225472 bytes too large" -f -l logdev="$al" "$a"
rm -f "$al"; truncate -s 100m "$al"
refuse "-l size= larger than the log device" "larger than the log device" -f -l logdev="$al",size=200m "$a"
rm -f "$al"; truncate -s 200m "$al"
refuse "-l size= not a multiple of the log stripe unit" "log size 25603 is not a multiple of the log stripe unit 8" -f -l logdev="$al",su=32k,size=25603b "$a"
rm -f "$al"; truncate -s $((100 * 1048576 + 12288)) "$al"
"$XFSX_MKFS" -q -f -l logdev="$al",su=32k "$a" 2>"$TMP/err"
[ "$(xfs_db -r -c 'sb 0' -c 'print logblocks' "$a" 2>/dev/null)" = "logblocks = 25600" ]
ok_if "a log device of 25603 blocks with an 8-block stripe unit: a log of 25600 (not mkfs.xfs's 25608, past the end)"
rm -f "$al"; truncate -s 200m "$al"
refuse "logdev= the data device" "is the data device" -f -l logdev="$a" "$a"
refuse "rtdev= the data device" "is the data device" -f -r rtdev="$a" "$a"
refuse "logdev= and rtdev= one device" "the same" -f -l logdev="$al" -r rtdev="$al" "$a"
refuse "missing log device" "No such file" -f -l logdev="$TMP/none.img" "$a"
refuse "-l internal=1 with logdev=" "two places" -f -l internal=1,logdev="$al" "$a"
refuse "-r size= without rtdev=" "need a realtime device" -f -r size=100m "$a"
truncate -s 500m "$ar"
refuse "-r size= larger than the device" "larger than the realtime device" -f -r rtdev="$ar",size=600m "$a"
refuse "-r extsize= not a multiple of the block size" "illegal rt extent size 6144, not a multiple of 4096" -f -r rtdev="$ar",extsize=6k "$a"
refuse "-r extsize= over 1 GiB" "larger than 1 GiB" -f -r rtdev="$ar",extsize=2g "$a"
refuse "reflink=1 with a realtime device" "reflink not supported with realtime devices" -f -m reflink=1 -r rtdev="$ar" "$a"
refuse "rmapbt=1 with a realtime device" "rmapbt not supported with realtime devices" -f -m rmapbt=1 -r rtdev="$ar" "$a"
rm -f "$al" "$ar"; truncate -s 400m "$al"; truncate -s 500m "$ar"
mkfs.xfs -q -f "$al" >/dev/null 2>&1 || true
mkfs.xfs -q -f "$ar" >/dev/null 2>&1 || true
cp "$al" "$TMP/al.before"
refuse "log device holding a filesystem, without -f" "already holds an xfs filesystem" -l logdev="$al" "$a"
cmp -s "$al" "$TMP/al.before"; ok_if "the refused log device is unchanged"
refuse "rt device holding a filesystem, without -f" "already holds an xfs filesystem" -r rtdev="$ar" "$a"
if "$XFSX_MKFS" -q -f -l logdev="$al" -r rtdev="$ar" "$a" 2>"$TMP/err"; then
	ok "with -f the old filesystems on the log and rt devices are overwritten"
else
	not_ok "with -f: $(head -1 "$TMP/err")"
fi

# --undo-file covers all three devices; xfsx_undo wants them all and restores them byte-exact
XFSX_UNDO="$XFSX_BUILD/undo/xfsx_undo"
md5sum "$a" "$al" "$ar" >"$TMP/before.md5"
if "$XFSX_MKFS" -q -f --undo-file="$TMP/u.undo" -l logdev="$al" -r rtdev="$ar" "$a" 2>"$TMP/err"; then
	"$XFSX_UNDO" "$TMP/u.undo" "$a" >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -ne 0 ] && grep -q -- "--logdev" "$TMP/err"; ok_if "xfsx_undo without -l refuses, naming --logdev (exit $rc)"
	"$XFSX_UNDO" -l "$al" "$TMP/u.undo" "$a" >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -ne 0 ] && grep -q -- "--rtdev" "$TMP/err"; ok_if "xfsx_undo without -r refuses, naming --rtdev (exit $rc)"
	"$XFSX_UNDO" -l "$al" -r "$ar" "$TMP/u.undo" "$a" >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -eq 0 ] && md5sum --quiet -c "$TMP/before.md5" >/dev/null 2>&1
	ok_if "xfsx_undo -l -r restores data, log and rt devices byte-exact (exit $rc)"
else
	not_ok "xfsx_mkfs --undo-file with -l and -r: $(head -1 "$TMP/err")"
fi

# the kernel: mount with -o logdev=, write, unmount, xfs_repair -n -l clean
if ! have_loop_xfs; then
	skip "kernel mount of an external-log image" "needs root, XFS in the kernel and a loop device"
else
	rm -f "$a" "$al"; truncate -s 1g "$a"; truncate -s 100m "$al"
	# the log on a block device (a loop device over the log image)
	ld=$(loop_attach "$al")
	if "$XFSX_MKFS" -q -l logdev="$ld" "$a" 2>"$TMP/err"; then ok "xfsx_mkfs -l logdev=$ld (a block device)"
	else not_ok "xfsx_mkfs -l logdev=$ld: $(head -1 "$TMP/err")"; fi
	mnt="$TMP/mnt"
	if mount_img "$a" "$mnt" "logdev=$ld" 2>"$TMP/err"; then
		ok "the kernel mounts xfsx_mkfs's external-log image with -o logdev=$ld"
		for i in $(seq 1 100); do echo "file $i" >"$mnt/f$i"; done
		mkdir "$mnt/d" && cp "$mnt"/f1* "$mnt/d/"
		sync
		check "100 files written" [ "$(ls "$mnt" | wc -l)" -eq 101 ]
		# in use: the mounted log device and the mounted data image are refused
		rm -f "$b"; truncate -s 1g "$b"
		refuse "log device in use as a mounted filesystem's log" "mount\|busy\|in use" -f -l logdev="$ld" "$b"
		refuse "a mounted filesystem as the log device" "mount\|busy\|in use" -f -l logdev="$a" "$b"
		refuse "a mounted filesystem as the rt device" "mount\|busy\|in use" -f -r rtdev="$a" "$b"
		umount "$mnt"; ok_if "unmounted"
		if xfs_repair -n -l "$ld" "$a" >"$TMP/repair.out" 2>&1; then ok "after the kernel's writes: xfs_repair -n -l clean"
		else not_ok "after the kernel's writes: xfs_repair -n -l exit $?: $(grep -v -e '^Phase' -e '^ *-' "$TMP/repair.out" | head -3 | tr '\n' ' ')"; fi
		if "$XFSX_CHECK" -l "$ld" "$a" >"$TMP/check.out" 2>&1; then ok "after the kernel's writes: xfsx_check -l clean"
		else not_ok "after the kernel's writes: xfsx_check -l exit $?: $(head -3 "$TMP/check.out" | tr '\n' ' ')"; fi
	else
		not_ok "mount -o logdev=$ld: $(head -2 "$TMP/err" | tr '\n' ' ')"
	fi
	losetup -d "$ld" 2>/dev/null
	skip "kernel mount of a realtime image" "this kernel has no realtime support: xfs_repair -n -r judged them above"
fi
rm -f "$a" "$al" "$ar" "$b" "$bl" "$br"
tap_done
