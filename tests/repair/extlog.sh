#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# xfsx_repair and xfsx_undo on filesystems with an external log (mkfs.xfs -l
# logdev=) and a realtime device (-r rtdev=).
# - A dirty log the kernel leaves on the external device (creates, renames,
#   xattrs, reflink copies, shutdown): copy A recovered by the kernel
#   (mount -o logdev=), copy B replayed by xfsx_repair -l: trees equal
#   (tests/log/tree.py), xfsx_bulkstat equal, xfs_repair -n -l clean on B.
# - -L throws the external log away (xfs_repair -n -l clean, the kernel mounts
#   and writes); --no-replay refuses, writing nothing.
# - Damage on the log device: the oldest record's bytes changed (its CRC
#   fails: dropped with every later record, as the kernel's head search drops
#   them; one run leaves it clean by xfs_repair -n -l), another
#   filesystem's log (refused; -L writes a clean one), a log device too small
#   (refused, nothing written).
# - Damage on the data device of such a filesystem (AGF counters, an inode's
#   link count, a bnobt root): one xfsx_repair -l run, judged as the repair
#   corpus (xfs_repair -n -l and xfsx_check -l clean, a second run changes
#   nothing, the kernel mounts with -o logdev= and writes).
# - Undo over two devices: a replay (data device) and its log reset (log
#   device), and -L, restored byte-exact by xfsx_undo -l (sha256 of both); a
#   run killed after its k-th write restored too; the wrong log device, or
#   none, refused with nothing written.
# - Realtime with -r, on images made by mkfs.xfs and by xfsx_mkfs -r rtdev= -p:
#   a file placed on the rt device with xfs_db; the bitmap, the summary and
#   sb_frextents damaged, repaired in one run (xfs_repair -n -r clean, 6.1 and
#   6.10; xfsx_check -r clean; a second run changes nothing).
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/extdev_lib.sh"

need_kernel_images "xfsx_repair with external devices"
command -v xfs_io >/dev/null || { skip "xfsx_repair with external devices" "xfs_io not installed"; tap_done; exit 0; }
mnt="$TMP/mnt" ma="$TMP/ma" mb="$TMP/mb"
mkdir -p "$mnt" "$ma" "$mb"

log=$(ext_dev log.img 80M) || { not_ok "a loop device for the log"; tap_done; exit; }
base="$TMP/base.img"
truncate -s 512M "$base"
if ! mkfs.xfs -q -f -m reflink=1,rmapbt=1 -l logdev="$log",size=64m "$base" 2>"$TMP/mkfs.err"; then
	not_ok "mkfs.xfs -l logdev=: $(head -1 "$TMP/mkfs.err")"
	tap_done
	exit
fi
# a populated clean base (the kernel's own), and a dirty one
mount_img "$base" "$mnt" "logdev=$log" && wl_extlog "$mnt" >/dev/null 2>&1 && umount "$mnt"
clean="$TMP/clean.img"
cp --sparse=always "$base" "$clean"
clean_log=$(copy_dev "$log" clean_log.img)
dirty="$TMP/dirty.img"
cp --sparse=always "$base" "$dirty"
dirty_log=$(copy_dev "$log" dirty_log.img)
if ! make_dirty_extlog "$dirty" "$dirty_log" "$mnt"; then
	not_ok "the kernel left a dirty external log"
	tap_done
	exit
fi
js=$("$XFSX_CHECK" -j -l "$dirty_log" "$dirty" 2>/dev/null)
python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["log"]["dirty"] else 1)' <<<"$js"
ok_if "the kernel left the external log dirty"

# fresh copies of the dirty pair: $img on $ilog
fresh_dirty() {
	img="$TMP/$1.img"
	cp --sparse=always "$dirty" "$img"
	ilog=$(copy_dev "$dirty_log" "$1.log")
}

# ---- replay: the kernel's recovery (A) against ours (B) ----
fresh_dirty A; a=$img alog=$ilog
fresh_dirty B; b=$img blog=$ilog
out=$("$XFSX_REPAIR" -v -l "$blog" "$b" 2>&1); rc=$?	# -v: every line, to count
nfix=$(grep -c '^fixed ' <<<"$out"); nunl=$(grep -c '^fixed  *unlinked\.' <<<"$out")
[ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$nfix" -eq "$nunl" ]; }
ok_if "replay: xfsx_repair -l replays and finds nothing else (exit $rc)"
grep -q "replayed and reset" <<<"$out"
ok_if "replay: said replayed and reset"
xfs_repair -n -l "$blog" "$b" >"$TMP/xr" 2>&1; rc=$?
check "replay: xfs_repair -n -l clean after (exit $rc)" [ $rc -eq 0 ]
if mount_img "$a" "$ma" "logdev=$alog"; then
	umount "$ma"
	"$XFSX_BULKSTAT" -l "$alog" "$a" >"$TMP/a.bs" 2>&1
	"$XFSX_BULKSTAT" -l "$blog" "$b" >"$TMP/b.bs" 2>&1
	check "replay: xfsx_bulkstat of A and B equal ($(wc -l <"$TMP/a.bs") inodes)" cmp -s "$TMP/a.bs" "$TMP/b.bs"
	if mount_img "$a" "$ma" "ro,logdev=$alog" && mount_img "$b" "$mb" "ro,nouuid,logdev=$blog"; then
		python3 "$TREE" "$ma" >"$TMP/a.tree"
		python3 "$TREE" "$mb" >"$TMP/b.tree"
		check "replay: trees equal ($(wc -l <"$TMP/a.tree") paths)" cmp -s "$TMP/a.tree" "$TMP/b.tree"
		grep -q 'user.k059' "$TMP/a.tree" ; ok_if "replay: the trees hold the workload's xattrs"
	else
		not_ok "replay: both copies mount read-only with -o logdev="
	fi
	umount "$ma" 2>/dev/null; umount "$mb" 2>/dev/null
else
	not_ok "replay: the kernel recovers copy A with -o logdev="
fi

# ---- --no-replay and -L ----
fresh_dirty N
s1=$(dev_sha "$img") s2=$(dev_sha "$ilog")
"$XFSX_REPAIR" --no-replay -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
check "--no-replay: refused (exit $rc)" [ $rc -eq 8 ]
[ "$(dev_sha "$img")" = "$s1" ] && [ "$(dev_sha "$ilog")" = "$s2" ]
ok_if "--no-replay: nothing written on either device"
"$XFSX_REPAIR" -L -l "$ilog" "$img" >"$TMP/out" 2>&1; rc=$?
check "-L: xfsx_repair -L -l (exit $rc)" [ $rc -le 1 ]
xfs_repair -n -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
check "-L: xfs_repair -n -l clean after (exit $rc)" [ $rc -eq 0 ]
js=$("$XFSX_CHECK" -j -l "$ilog" "$img" 2>/dev/null)
python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["filesystem"]["log"] == "clean" and not d["findings"] else 1)' <<<"$js"
ok_if "-L: xfsx_check -l: a clean log, no findings"
mount_img "$img" "$mnt" "logdev=$ilog" && echo w >"$mnt/after-L" && umount "$mnt"
ok_if "-L: the kernel mounts with -o logdev= and writes"

# ---- damage on the log device ----
# a byte inside the oldest record changed: its CRC fails; the kernel's head
# search drops it and every record after it (torn), and so does ours
fresh_dirty C
js_dirty=$("$XFSX_CHECK" -j -l "$ilog" "$img" 2>/dev/null)
tail_blk=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["log"]["tail"]["block"])' <<<"$js_dirty")
printf '\xa5\x5a' | dd of="$ilog" bs=1 seek=$(( (tail_blk + 2) * 512 + 100 )) conv=notrunc status=none
js=$("$XFSX_CHECK" -j -l "$ilog" "$img" 2>/dev/null)
python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["log"]["torn_records"] >= 1 else 1)' <<<"$js"
ok_if "corrupted record: xfsx_check -l finds the record torn (JSON torn_records)"
"$XFSX_REPAIR" -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
check "corrupted record: xfsx_repair -l in one run (exit $rc)" [ $rc -le 1 ]
xfs_repair -n -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
check "corrupted record: xfs_repair -n -l clean after (exit $rc)" [ $rc -eq 0 ]
"$XFSX_CHECK" -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
check "corrupted record: xfsx_check -l clean after (exit $rc)" [ $rc -eq 0 ]
# (the kernel's own recovery drops the same records, but its tree is no
# oracle: blocks the dropped transactions freed and file data then reused
# are still named by the metadata on disk, which xfs_repair -n calls damage)
mount_img "$img" "$mnt" "logdev=$ilog" && echo w >"$mnt/w" && umount "$mnt"
ok_if "corrupted record: the kernel mounts the repaired copy with -o logdev= and writes"

# another filesystem's log on the device (a wrong UUID in every record)
img="$TMP/F.img"
cp --sparse=always "$clean" "$img"
flog=$(ext_dev flog.img 80M)
truncate -s 512M "$TMP/ofs.img"
mkfs.xfs -q -f -l logdev="$flog",size=64m "$TMP/ofs.img"
"$XFSX_REPAIR" -l "$flog" "$img" >/dev/null 2>"$TMP/err"; rc=$?
check "another filesystem's log: refused (exit $rc)" [ $rc -eq 8 ]
"$XFSX_REPAIR" -L -l "$flog" "$img" >/dev/null 2>&1; rc=$?
check "another filesystem's log: -L writes a clean one in one run (exit $rc)" [ $rc -eq 1 ]
xfs_repair -n -l "$flog" "$img" >"$TMP/xr" 2>&1; rc=$?
[ $rc -eq 0 ] && ! grep -q "mismatched uuid" "$TMP/xr"
ok_if "another filesystem's log: xfs_repair -n -l clean after, no UUID mismatch (exit $rc)"
mount_img "$img" "$mnt" "logdev=$flog" && echo w >"$mnt/w" && umount "$mnt"
ok_if "another filesystem's log: the kernel mounts with -o logdev= and writes"
# a log device too small for the log
small=$(ext_dev small.img 32M)
s1=$(dev_sha "$clean")
"$XFSX_REPAIR" -L -l "$small" "$clean" >/dev/null 2>&1; rc=$?
check "log device too small: refused even with -L (exit $rc)" [ $rc -eq 8 ]
check "log device too small: nothing written" [ "$(dev_sha "$clean")" = "$s1" ]

# ---- damage on the data device, repaired with -l ----
agf_free() { xfs_db -x -l "$2" -c "agf 1" -c "write -d freeblks 12" "$1" >/dev/null; }
nlink() {
	local ino
	ino=$(xfs_db -r -l "$2" -c "path /a/f20" -c "print v3.inumber" "$1" | awk '{print $3}')
	xfs_db -x -l "$2" -c "inode $ino" -c "write -d core.nlinkv2 5" "$1" >/dev/null
}
bno_root() { xfs_db -x -l "$2" -c "agf 0" -c "write -d bnoroot 0" "$1" >/dev/null; }
for dmg in agf_free nlink bno_root; do
	img="$TMP/D.img"
	cp --sparse=always "$clean" "$img"
	dlog=$(copy_dev "$clean_log" "D-$dmg.log")
	"$dmg" "$img" "$dlog"
	xfs_repair -n -l "$dlog" "$img" >/dev/null 2>&1; rc=$?
	check "$dmg: xfs_repair -n -l finds it (exit $rc)" [ $rc -ne 0 ]
	"$XFSX_REPAIR" -l "$dlog" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$dmg: xfsx_repair -l fixes it in one run (exit $rc)" [ $rc -eq 1 ]
	xfs_repair -n -l "$dlog" "$img" >/dev/null 2>&1; rc=$?
	check "$dmg: xfs_repair -n -l clean after (exit $rc)" [ $rc -eq 0 ]
	"$XFSX_CHECK" -l "$dlog" "$img" >/dev/null 2>&1; rc=$?
	check "$dmg: xfsx_check -l clean after (exit $rc)" [ $rc -eq 0 ]
	s1=$(dev_sha "$img") s2=$(dev_sha "$dlog")
	"$XFSX_REPAIR" -l "$dlog" "$img" >/dev/null 2>&1; rc=$?
	[ $rc -eq 0 ] && [ "$(dev_sha "$img")" = "$s1" ] && [ "$(dev_sha "$dlog")" = "$s2" ]
	ok_if "$dmg: a second run exits 0 and changes nothing (exit $rc)"
	mount_img "$img" "$mnt" "logdev=$dlog" && head -c 100000 /dev/urandom >"$mnt/w" && sync -f "$mnt" && umount "$mnt"
	ok_if "$dmg: the kernel mounts with -o logdev= and writes"
done

# ---- undo over both devices ----
undo_case() {
	local what=$1 s1 s2 rc u="$TMP/$2.undo"
	shift 2
	s1=$(dev_sha "$img") s2=$(dev_sha "$ilog")
	rm -f "$u"
	"$@" --undo-file="$u" -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
	check "undo, $what: the repair ran (exit $rc)" [ $rc -le 1 ]
	[ "$(dev_sha "$img")" != "$s1" ] && [ "$(dev_sha "$ilog")" != "$s2" ]
	ok_if "undo, $what: the run wrote both devices"
	"$XFSX_UNDO" "$u" "$img" >/dev/null 2>"$TMP/err"; rc=$?
	check "undo, $what: xfsx_undo without -l refused (exit $rc)" [ $rc -eq 16 ]
	check "undo, $what: the message names --logdev" grep -q -- "--logdev" "$TMP/err"
	"$XFSX_UNDO" -l "$clean_log" "$u" "$img" >/dev/null 2>&1; rc=$?
	check "undo, $what: the wrong log device refused (exit $rc)" [ $rc -eq 1 ]
	"$XFSX_UNDO" -l "$ilog" "$u" "$img" >/dev/null 2>&1; rc=$?
	check "undo, $what: xfsx_undo -l restores (exit $rc)" [ $rc -eq 0 ]
	[ "$(dev_sha "$img")" = "$s1" ] && [ "$(dev_sha "$ilog")" = "$s2" ]
	ok_if "undo, $what: both devices byte-exact (sha256)"
}
fresh_dirty U1
undo_case "a replay (data device) and its log reset (log device)" u1 "$XFSX_REPAIR"
fresh_dirty U2
undo_case "-L" u2 "$XFSX_REPAIR" -L
# killed after its k-th device write
for k in 1 2 5; do
	fresh_dirty "K$k"
	s1=$(dev_sha "$img") s2=$(dev_sha "$ilog")
	rm -f "$TMP/k.undo"
	XFSX_TEST_KILL_AFTER_WRITES=$k "$XFSX_REPAIR" --undo-file="$TMP/k.undo" -l "$ilog" "$img" >/dev/null 2>&1; rc=$?
	check "killed after write $k: the run was killed (exit $rc)" [ $rc -eq 137 ]
	"$XFSX_UNDO" -l "$ilog" "$TMP/k.undo" "$img" >/dev/null 2>&1; rc=$?
	check "killed after write $k: xfsx_undo -l restores (exit $rc)" [ $rc -eq 0 ]
	[ "$(dev_sha "$img")" = "$s1" ] && [ "$(dev_sha "$ilog")" = "$s2" ]
	ok_if "killed after write $k: both devices byte-exact (sha256)"
done

# ---- realtime, with -r: images made by mkfs.xfs and by xfsx_mkfs ----
# (no realtime in this kernel: judged by xfs_repair -n -r, Debian 6.1 and 6.10)
s610=$(oracle_610 2>"$TMP/o610.err") || { s610=; diag "xfsprogs 6.10: $(tail -1 "$TMP/o610.err")"; }
rt="$TMP/rt.img" rtfs="$TMP/rtfs.img" src="$TMP/src"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/a"
printf '/\n0 0\nd--755 0 0\na ---644 0 0 %s/a\n$\n' "$src" >"$TMP/proto"
block0() { echo $(( $(xfs_db -r -c "inode $2" -c "bmap" "$1" | awk '/startblock/ {print $5; exit}') * 4096 )); }
zero_word() { printf '\0\0\0\0' | dd of="$1" bs=1 seek=$(($(block0 "$1" "$rbm") + 8)) conv=notrunc status=none; }
bump_counter() { printf '\7' | dd of="$1" bs=1 seek=$(block0 "$1" "$rsum") conv=notrunc status=none; }
bad_frext() { xfs_db -x -c "sb 0" -c "write frextents 5" "$1" >/dev/null; }
for maker in mkfs.xfs xfsx_mkfs; do
	rm -f "$rt" "$rtfs"
	truncate -s 256M "$rt"
	truncate -s 512M "$rtfs"
	case $maker in
	mkfs.xfs) mkfs.xfs -q -f -r rtdev="$rt" -p "$TMP/proto" "$rtfs" 2>"$TMP/err" ;;
	xfsx_mkfs) "$XFSX_MKFS" -q -f -r rtdev="$rt" -p "$TMP/proto" "$rtfs" 2>"$TMP/err" ;;
	esac || { not_ok "$maker -r rtdev= -p: $(head -1 "$TMP/err")"; continue; }
	fino=$(xfs_db -r -c "path /a" -c "print v3.inumber" "$rtfs" | awk '{print $3}')
	xfs_db -x -c "inode $fino" -c "write core.realtime 1" -c "write u3.bmx[0].startblock 1000" "$rtfs" >/dev/null
	"$XFSX_REPAIR" -r "$rt" "$rtfs" >/dev/null 2>&1; rc=$?
	check "realtime ($maker): a file placed on the rt device with xfs_db, repaired with -r (exit $rc)" [ $rc -eq 1 ]
	rbm=$(xfs_db -r -c "sb 0" -c "print rbmino" "$rtfs" | awk '{print $3}')
	rsum=$(xfs_db -r -c "sb 0" -c "print rsumino" "$rtfs" | awk '{print $3}')
	for dmg in zero_word bump_counter bad_frext; do
		cp --sparse=always "$rtfs" "$TMP/r.img"
		"$dmg" "$TMP/r.img"
		xfs_repair -n -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
		check "realtime ($maker) $dmg: xfs_repair -n -r finds it (exit $rc)" [ $rc -ne 0 ]
		"$XFSX_REPAIR" -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
		check "realtime ($maker) $dmg: xfsx_repair -r fixes it in one run (exit $rc)" [ $rc -eq 1 ]
		xfs_repair -n -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
		check "realtime ($maker) $dmg: xfs_repair -n -r clean after (exit $rc)" [ $rc -eq 0 ]
		if [ -n "$s610" ]; then
			"$s610/xfs_repair" -n -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
			check "realtime ($maker) $dmg: xfs_repair 6.10 -n -r clean after (exit $rc)" [ $rc -eq 0 ]
		else
			skip "realtime ($maker) $dmg: xfs_repair 6.10 -n -r clean after" "xfsprogs 6.10 cannot be built here"
		fi
		"$XFSX_CHECK" -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
		check "realtime ($maker) $dmg: xfsx_check -r clean after (exit $rc)" [ $rc -eq 0 ]
		"$XFSX_REPAIR" -r "$rt" "$TMP/r.img" >/dev/null 2>&1; rc=$?
		check "realtime ($maker) $dmg: a second xfsx_repair -r changes nothing (exit $rc)" [ $rc -eq 0 ]
	done
done
tap_done
