#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Geometry matrix: images made by Debian's mkfs.xfs over block, inode and
# sector sizes, AG counts, features, directory block, log and stripe sizes.
# For each: xfsx_check exits 0 with no findings, --geometry --json equals
# xfs_db's "sb 0" print field by field, --geometry equals xfs_info, and the
# image is not modified.
# Then every I/O engine, --no-direct, loop devices (512 and 4096-byte
# logical sectors) and a filesystem the kernel has mounted and written.
. "$XFSX_SRC/tests/lib.sh"

here="$XFSX_SRC/tests/core"
tool() { python3 "$here/coretool.py" "$@"; }

if ! have_xfsprogs; then
	skip "geometry matrix" "xfsprogs (mkfs.xfs, xfs_db, xfs_repair) not installed"
	tap_done
	exit
fi
if [ ! -x "$XFSX_CHECK" ]; then
	not_ok "xfsx_check built at $XFSX_CHECK"
	tap_done
	exit
fi

# name | image size | mkfs.xfs options | command run on the image afterwards
matrix=(
	"default|1g||"
	"block-1k|1g|-b size=1024|"
	"block-2k|1g|-b size=2048|"
	"block-64k|1g|-b size=65536|"
	"block-64k-inode-2k|1g|-b size=65536 -i size=2048|"
	"inode-1k|1g|-i size=1024|"
	"inode-2k|1g|-i size=2048|"
	"sector-4k|1g|-s size=4096|"
	"sector-4k-inode-2k|1g|-s size=4096 -i size=2048 -b size=4096|"
	"agcount-2|1g|-d agcount=2|"
	"agcount-16|2g|-d agcount=16|"
	"short-last-ag|1050m|-d agsize=100m|"
	"rmapbt|1g|-m rmapbt=1|"
	"rmapbt-noreflink|1g|-m rmapbt=1,reflink=0|"
	"noreflink|1g|-m reflink=0|"
	"nofinobt|1g|-m finobt=0,inobtcount=0|"
	"nobigtime|1g|-m bigtime=0,inobtcount=0|"
	"nosparse|1g|-i sparse=0|"
	"dirblock-8k|1g|-n size=8192|"
	"dirblock-64k|1g|-n size=65536|"
	"block-1k-dirblock-64k|1g|-b size=1024 -n size=65536|"
	"log-128m|1g|-l size=128m|"
	"log-stripe|1g|-l su=32k|"
	"data-stripe|1g|-d su=64k,sw=4|"
	"data-log-stripe|2g|-d su=256k,sw=2 -l su=256k|"
	"label-uuid|1g|-L xfsx-label -m uuid=0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b|"
	"nrext64|1g|-i nrext64=1|"
	"maxpct-5|1g|-i maxpct=5|"
	"meta-uuid|1g||xfs_admin -U generate"
	"external-log|1g|-l logdev=@LOG@,size=64m|"
	"realtime|1g|-r rtdev=@RT@,extsize=64k|"
)

# mkimg NAME SIZE OPTS POST -> builds $TMP/NAME.img
mkimg() {
	local name=$1 size=$2 opts=$3 post=$4 img="$TMP/$1.img"
	truncate -s "$size" "$img" || return 1
	opts=${opts//@LOG@/$TMP/$name.log}
	opts=${opts//@RT@/$TMP/$name.rt}
	case "$opts" in *logdev=*) truncate -s 128m "$TMP/$name.log" ;; esac
	case "$opts" in *rtdev=*) truncate -s 256m "$TMP/$name.rt" ;; esac
	# shellcheck disable=SC2086
	if ! mkfs.xfs -f -q $opts "$img" >"$TMP/mkfs.out" 2>&1; then
		diag "mkfs.xfs $opts failed: $(head -3 "$TMP/mkfs.out")"
		return 1
	fi
	if [ -n "$post" ]; then
		# shellcheck disable=SC2086
		$post "$img" >"$TMP/post.out" 2>&1 || { diag "$post failed: $(cat "$TMP/post.out")"; return 1; }
	fi
}

# geometry_equal IMG: --geometry --json against xfs_db's sb 0
geometry_equal() {
	local img=$1
	"$XFSX_CHECK" --geometry --json "$img" >"$TMP/geo.json" 2>"$TMP/geo.err" || {
		diag "--geometry --json failed: $(cat "$TMP/geo.err")"; return 1; }
	xfs_db -r -c 'sb 0' -c print "$img" >"$TMP/db.txt" 2>&1 || {
		diag "xfs_db failed: $(head -3 "$TMP/db.txt")"; return 1; }
	python3 "$here/xfsdb_compare.py" "$TMP/db.txt" "$TMP/geo.json" >"$TMP/cmp.out"
	local rc=$?
	if [ $rc -ne 0 ]; then cat "$TMP/cmp.out"; return 1; fi
}

# info_equal IMG: the text report is xfs_info's, character for character
info_equal() {
	xfs_info "$1" >"$TMP/info.want" 2>&1 || { diag "xfs_info failed: $(head -2 "$TMP/info.want")"; return 1; }
	"$XFSX_CHECK" --geometry "$1" >"$TMP/info.got" 2>&1 || { diag "--geometry failed"; return 1; }
	diff "$TMP/info.want" "$TMP/info.got" >"$TMP/info.diff" && return 0
	sed 's/^/# /' "$TMP/info.diff"
	return 1
}

# the row's external devices (-l LOG, -r RT), set per matrix row; empty for the rest
devs=()

# check_clean IMG [env/flags...]: exit 0, no findings, JSON says clean
check_clean() {
	local img=$1 rc; shift
	"$@" "$XFSX_CHECK" --json "${devs[@]}" "$img" >"$TMP/check.json" 2>"$TMP/check.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		diag "xfsx_check exit $rc: $(head -3 "$TMP/check.err")"
		tool clean "$TMP/check.json" >/dev/null 2>&1 || tool clean "$TMP/check.json"
		return 1
	fi
	tool clean "$TMP/check.json"
}

# the plain text run must agree with the JSON one
check_text_clean() {
	local out rc
	out=$("$XFSX_CHECK" "${devs[@]}" "$1" 2>&1); rc=$?
	[ $rc -eq 0 ] && [[ "$out" == *", clean" ]] || { diag "text run: exit $rc: $out"; return 1; }
}

stamp() { stat -c '%s %Y.%y %Z' "$1"; }

declare -A made
for row in "${matrix[@]}"; do
	IFS='|' read -r name size opts post <<<"$row"
	img="$TMP/$name.img"
	if ! mkimg "$name" "$size" "$opts" "$post"; then
		not_ok "$name: mkfs.xfs ${opts:-(defaults)} ${post:+then $post} made an image"
		continue
	fi
	made[$name]=1
	devs=()
	case "$opts" in *logdev=*) devs+=(-l "$TMP/$name.log") ;; esac
	case "$opts" in *rtdev=*) devs+=(-r "$TMP/$name.rt") ;; esac
	before=$(tool hash "$img"); st_before=$(stamp "$img")
	if [[ "$opts" == *logdev=* ]]; then
		# an external log is mandatory: without -l the check stops (exit 8) and names the option
		out=$("$XFSX_CHECK" "$img" 2>&1); rc=$?
		if [ $rc -eq 8 ] && [[ "$out" == *--logdev* ]]; then
			ok "$name: without -l, xfsx_check exits 8 naming --logdev"
		else
			not_ok "$name: without -l, xfsx_check exits 8 naming --logdev"
			diag "exit $rc: $out"
		fi
	fi
	if check_clean "$img" && check_text_clean "$img"; then
		ok "$name: xfsx_check exits 0 with no findings"
	else
		not_ok "$name: xfsx_check exits 0 with no findings"
	fi
	check "$name: --geometry --json equals xfs_db sb 0 field by field" geometry_equal "$img"
	if command -v xfs_info >/dev/null; then
		check "$name: --geometry text equals xfs_info" info_equal "$img"
	else
		skip "$name: --geometry text equals xfs_info" "xfs_info not installed"
	fi
	after=$(tool hash "$img"); st_after=$(stamp "$img")
	if [ "$before" = "$after" ] && [ "$st_before" = "$st_after" ]; then
		ok "$name: image unchanged by the check (sha256 of data extents, mtime, ctime)"
	else
		not_ok "$name: image unchanged by the check (sha256 of data extents, mtime, ctime)"
	fi
	# keep a few images for the engine runs; free the rest
	case "$name" in default|sector-4k|block-64k|rmapbt|short-last-ag) ;; *) rm -f "$img" "$TMP/$name.log" "$TMP/$name.rt" ;; esac
done
devs=()
diag "every field xfs_db prints for sb 0 is compared; no field is skipped"

# the hash above must be able to fail: one changed byte in a zeroed region changes it
if [ -n "${made[default]:-}" ]; then
	cp --sparse=always "$TMP/default.img" "$TMP/poked.img"
	h1=$(tool hash "$TMP/poked.img")
	printf 'x' | dd of="$TMP/poked.img" bs=1 seek=$((700 * 1024 * 1024 + 5)) conv=notrunc status=none
	check "image hash notices a one-byte write" test "$h1" != "$(tool hash "$TMP/poked.img")"
	rm -f "$TMP/poked.img"
fi

# --- I/O engines and O_DIRECT ------------------------------------------------
engine_name() { case $1 in uring) echo io_uring ;; aio) echo libaio ;; pread) echo pread ;; esac; }

# engine_clean IMG ENGINE HOW [--no-direct]: clean, and the engine reported is the one asked for
engine_clean() {
	local img=$1 e=$2 how=$3 nodirect=${4:-} rc
	if [ "$how" = env ]; then
		XFSX_IO_ENGINE=$e "$XFSX_CHECK" --json $nodirect "$img" >"$TMP/e.json" 2>"$TMP/e.err"
	else
		"$XFSX_CHECK" --io-engine="$e" --json $nodirect "$img" >"$TMP/e.json" 2>"$TMP/e.err"
	fi
	rc=$?
	if [ $rc -ne 0 ]; then diag "exit $rc: $(cat "$TMP/e.err")"; return 1; fi
	tool clean "$TMP/e.json" || return 1
	[ "$(tool get "$TMP/e.json" filesystem.io_engine)" = "$(engine_name "$e")" ] || {
		diag "engine in use: $(tool get "$TMP/e.json" filesystem.io_engine)"; return 1; }
	if [ -n "$nodirect" ]; then
		[ "$(tool get "$TMP/e.json" filesystem.direct_io)" = false ] || { diag "O_DIRECT used despite --no-direct"; return 1; }
	fi
}

# an engine the kernel refuses (io_uring disabled by sysctl or seccomp) is a skip, not a pass
engine_available() {
	XFSX_IO_ENGINE=$1 "$XFSX_CHECK" --geometry "$TMP/default.img" >/dev/null 2>"$TMP/avail.err" && return 0
	grep -q "not implemented\|not supported" "$TMP/avail.err" && return 1
	return 0
}

for e in uring aio pread; do
	if ! engine_available $e; then
		skip "I/O engine $e" "the $e engine is not available here: $(cat "$TMP/avail.err")"
		continue
	fi
	for name in default sector-4k block-64k rmapbt short-last-ag; do
		[ -n "${made[$name]:-}" ] || continue
		img="$TMP/$name.img"
		before=$(tool hash "$img")
		check "$name: engine $e via XFSX_IO_ENGINE, clean" engine_clean "$img" $e env
		check "$name: engine $e via --io-engine --no-direct, clean, no O_DIRECT" engine_clean "$img" $e flag --no-direct
		check "$name: image unchanged after engine $e" test "$before" = "$(tool hash "$img")"
	done
done

# --- block devices ---------------------------------------------------------------
if ! have_loop_xfs; then
	skip "loop device runs" "needs root, loop devices and the xfs kernel module"
	tap_done
	exit
fi

# a loop device of the default image, every engine, direct I/O on the block device
if [ -n "${made[default]:-}" ] && dev=$(loop_attach "$TMP/default.img"); then
	for e in uring aio pread; do
		engine_available $e || continue
		check "loop device $dev: engine $e, clean" engine_clean "$dev" $e env
	done
	check "loop device: direct I/O used on the block device" \
		test "$(tool get "$TMP/e.json" filesystem.direct_io)" = true
	losetup -d "$dev"
fi

# 4096-byte logical sectors: every read must be 4 KiB aligned for O_DIRECT
if [ -n "${made[sector-4k]:-}" ] && dev=$(losetup -f --show -b 4096 "$TMP/sector-4k.img" 2>/dev/null); then
	_LOOPS+=("$dev")
	for e in uring aio pread; do
		engine_available $e || continue
		check "4k-sector loop device: engine $e, clean" engine_clean "$dev" $e env
	done
	losetup -d "$dev"
else
	skip "4k-sector loop device" "losetup -b 4096 not supported here"
fi

# a filesystem the kernel has mounted, written and unmounted: LSNs, log head, version bits
img="$TMP/lived.img"
truncate -s 1g "$img" && mkfs.xfs -f -q -m rmapbt=1 "$img" >/dev/null 2>&1
mnt="$TMP/mnt"
if mount_img "$img" "$mnt" loop; then
	mkdir -p "$mnt/d" && for i in $(seq 1 300); do echo "$i" >"$mnt/d/f$i"; done
	setfattr -n user.xfsx -v 1 "$mnt/d/f1" 2>/dev/null
	cp -r "$XFSX_SRC/libfs" "$mnt/" && rm -f "$mnt/d/f1"[0-9]
	umount "$mnt"
	xfs_repair -n "$img" >"$TMP/rep.out" 2>&1; rrc=$?
	diag "xfs_repair -n on the mounted-and-written image: exit $rrc"
	check "mounted, written, unmounted: xfsx_check clean (xfs_repair -n exit $rrc)" check_clean "$img"
	check "mounted, written, unmounted: geometry equals xfs_db" geometry_equal "$img"
	# crash it: a dirty log is a warning, not corruption
	if mount_img "$img" "$mnt" loop; then
		for i in $(seq 1 100); do echo "$i" >"$mnt/d/g$i"; done
		sync -f "$mnt"
		if xfs_io -x -c "shutdown -f" "$mnt" >/dev/null 2>&1; then
			umount "$mnt"
			"$XFSX_CHECK" --json "$img" >"$TMP/dirty.json" 2>/dev/null; rc=$?
			# replayed in memory and checked as recovery leaves it
			check "dirty log: exit 0 (replayed in memory, clean)" test $rc -eq 0
			check "dirty log: JSON says the log is dirty" \
				test "$(tool get "$TMP/dirty.json" filesystem.log)" = dirty
			check "dirty log: JSON says it was replayed in memory" \
				test "$(tool get "$TMP/dirty.json" log.replayed)" = true
		else
			umount "$mnt"
			skip "dirty log" "xfs_io shutdown not available"
		fi
	else
		not_ok "remount for the dirty-log case"
	fi
else
	skip "mounted filesystem" "mount -t xfs of a loop image failed here"
fi

tap_done
