#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unfinished xattr intents, the edges (attri.sh has one intent per
# image).  The logs are crafted by tests/log/attriwrite.py (one transaction
# per intent, in the order given) and the kernel's recovery of the same image
# is the oracle.
#  - Intents on several inodes (one each, as the kernel writes them: an xattr
#    op holds its inode locked through its chain): a set, a remove, a
#    replace, the three namespaces, a short form fork a set turns into leaf
#    blocks, a remote value, the last name removed.  The kernel recovers them
#    (its xattrs are what the ops leave); xfsx_check names them all and finds
#    nothing; xfsx_repair completes them all; B equals A (every xattr,
#    tree.py, xfsx_bulkstat, xfs_repair -n clean).
#  - Several unfinished intents on one inode: a log the kernel does not
#    write, and whose recovery (6.18) does not follow log order: it runs each
#    intent's first step, then the rest (a set removes the old name first
#    and adds the new one last), so a set before a remove of the same name
#    survives it and a set after the last name went is lost; other such logs
#    fail the mount, and a leaf fork set twice hung it.  Those two are not
#    mounted here: the failed or hung mount keeps its superblock, and every
#    later sync(1) on the host blocks on it.  xfsx_repair refuses them
#    before writing; the kernel's outcome is checked where it mounts.
#  - Intents the kernel's recovery stops at (the mount fails): on a free
#    inode, on a block that holds no inodes, on an inode whose short form
#    attr fork fails its check, whose attr leaf block fails its CRC, whose
#    data fork's extent list has a record outside the filesystem; a short
#    form directory with an entry naming no inode, an inline symlink target
#    with a NUL, a btree data fork whose root has level 0 (the fetch's data
#    fork checks, xfs_iformat_data_fork).  xfsx_repair refuses before
#    writing anything, naming the intent (id, op, name, inode) and why, and
#    the options; -n names it and exits 4; xfsx_check reports log.attri.
#    A directory entry named "/" is not the fork verifier's rule: the kernel
#    recovers that intent, and xfsx_repair -n would complete it.
#  - Four intents, two of them bad: xfsx_repair -n names both, says 2 of 4
#    can be completed and that a repair completes none; xfsx_repair refuses
#    naming the first; xfsx_check reports log.attri twice.
#  - A set on a symlink, which has no attr fork: the kernel's recovery does
#    nothing with it, nor does xfsx_repair; B equals A.
#  - An intent on an O_TMPFILE inode left on the AGI unlinked list by the
#    kernel's own dirty log: the kernel completes it, then frees the inode;
#    so does xfsx_repair (said as such), and B equals A.
#  - Fuzzed ATTRI items (name length past its region or over 255, value
#    length past its region, value or name region missing, a short format
#    region): the kernel refuses them (the mount fails), xfsx_repair refuses
#    them naming the item with nothing written, xfsx_check does not crash.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/log/log_lib.sh"
need_log_tools "xattr intent edges"
. "$XFSX_SRC/tests/log/attri_lib.sh"

# multi_case NAME FILE:OP:FILTER:PREFIX:NAME:VLEN...: the intents in log order
multi_case() {
	local name=$1 img="$TMP/$1.img" a="$TMP/$1.A.img" out rc sum js n=0 f bad=0
	local -a specs=() ops
	declare -A seq=()
	shift
	for s in "$@"; do
		IFS=: read -r -a ops <<<"$s"
		specs+=("${INO[${ops[0]}]}:${ops[1]}:${ops[2]}:${ops[4]}:${ops[5]}")
		seq[${ops[0]}]+=" ${ops[1]} ${ops[3]} ${ops[4]} ${ops[5]}"
		n=$((n + 1))
	done
	cp --sparse=always "$BASE" "$img"
	if ! out=$(python3 "$W" "$img" "${specs[@]}" 2>&1); then
		not_ok "$name: attriwrite.py wrote the intents ($out)"
		return
	fi
	cp --sparse=always "$img" "$a"
	if ! mount_img "$a" "$TMP/ma"; then
		not_ok "$name: the kernel recovers the $n intents (mount)"
		return
	fi
	for f in "${!seq[@]}"; do
		# shellcheck disable=SC2086
		if [ "$(xa_dump "$TMP/ma/$f")" != "$(xa_expect "${BEFORE[$f]}" ${seq[$f]})" ]; then
			bad=1
			diag "$name: $f: expected $(xa_expect "${BEFORE[$f]}" ${seq[$f]})"
			diag "$name: $f: got      $(xa_dump "$TMP/ma/$f")"
		fi
	done
	umount "$TMP/ma"
	check "$name: the kernel recovers the $n intents in log order (files ${!seq[*]})" [ $bad -eq 0 ]
	sum=$(md5sum <"$img")
	js=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
	check "$name: xfsx_check names the $n unfinished ATTRIs, zero findings, writes nothing (exit $rc)" \
		test $rc -eq 0 -a "$(json_field "$js" "d['log']['replay']['intents_open']['ATTRI']")" = "$n" \
		-a "$(json_field "$js" "len(d['findings'])")" = 0 -a "$(md5sum <"$img")" = "$sum"
	out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
	if [ $rc -eq 0 ] && grep -q ": $n of $n completed" <<<"$out"; then
		ok "$name: xfsx_repair completes the $n intents (exit $rc)"
	else
		not_ok "$name: xfsx_repair completes the $n intents (exit $rc)"
		printf '%s\n' "$out" | head -6 | sed 's/^/#   /'
	fi
	xfs_repair -n "$img" >"$TMP/xr" 2>&1; rc=$?
	check "$name: xfs_repair -n clean on B (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -6 "$TMP/xr" | sed 's/^/#   /'
	bulkstat_equal "$name" "$a" "$img"
	trees_equal "$name" "$a" "$img"
	rm -f "$img" "$a"
}

multi_case four-inodes     none:1:0:user:n1:10 leaf:2:0:user:leafname005:0 one:3:0:user:only:44 sf:1:2:trusted:t9:12
multi_case forms           sf:1:0:user:big:3000 none:1:4:security:rmt:10240 one:2:0:user:only:0 leaf:3:0:user:leafname001:200

# refuse_case NAME IMAGE SPEC...: the kernel's recovery stops at the intent; so does xfsx_repair
refuse_case() {
	local name=$1 img=$2 a="$TMP/$1.A.img" sum out rc js
	shift 2
	if ! out=$(python3 "$W" "$img" "$@" 2>&1); then
		not_ok "$name: attriwrite.py wrote the intent ($out)"
		return
	fi
	cp --sparse=always "$img" "$a"
	if [ "$KERNEL" = skip ]; then
		diag "$name: not mounted: kernel 6.18 fails this recovery and keeps the failed mount's superblock (a later sync(1) on the host hangs)"
	elif [ -n "$KERNEL" ]; then
		# several on one inode: what the kernel's recovery makes of them, for the record
		if ! mount_img "$a" "$TMP/ma"; then
			check "$name: the kernel's recovery of the log: the mount fails" [ "$KERNEL" = fail ]
		else
			local got
			got=$(python3 -c 'import os, sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$TMP/ma/${KERNEL%%=*}")
			umount "$TMP/ma"
			check "$name: the kernel's recovery of the log leaves ${KERNEL%%=*} with [${KERNEL#*=}] (got [$got])" \
				[ "$got" = "${KERNEL#*=}" ]
		fi
	elif mount_img "$a" "$TMP/ma"; then
		umount "$TMP/ma"
		not_ok "$name: the kernel's recovery stops at the intent (the mount succeeded)"
	else
		ok "$name: the kernel's recovery stops at the intent (the mount fails)"
	fi
	sum=$(md5sum <"$img")
	out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
	check "$name: xfsx_repair refuses before writing, naming the intent and the options (exit $rc)" \
		test $rc -eq 8 -a "$(md5sum <"$img")" = "$sum" \
		-a "$(grep -c "xattr intent $WHAT cannot be completed: .*\(mounting fails\|mounting may\).*-L throws the log away.*Nothing was written" <<<"$out")" = 1
	diag "$name: $(grep -o 'intent 0x.*' <<<"$out" | head -1 | cut -c1-400)"
	out=$("$XFSX_REPAIR" -n "$img" 2>&1); rc=$?
	check "$name: xfsx_repair -n names it and exits 4, writes nothing (exit $rc)" \
		test $rc -eq 4 -a "$(md5sum <"$img")" = "$sum" -a "$(grep -c 'a repair refuses such a log' <<<"$out")" = 1
	js=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
	check "$name: xfsx_check reports log.attri (exit $rc), writes nothing" \
		test $rc -eq 4 -a "$(json_field "$js" "[f['code'] for f in d['findings']].count('log.attri')")" = 1 \
		-a "$(md5sum <"$img")" = "$sum"
	rm -f "$img" "$a"
}

NM='(set of "user.nm", a value of 10 bytes on inode [0-9]*)'
# a free inode: the last of the root's chunk
cp --sparse=always "$BASE" "$TMP/r.img"
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case free-inode "$TMP/r.img" "$((INO[none] + 40)):1:0:nm:10"
# a block of free space: no inode cores there (an inode number 4096 blocks into AG 0)
cp --sparse=always "$BASE" "$TMP/r.img"
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case not-an-inode "$TMP/r.img" "$(( 4096 << $(xfs_db -r -c 'sb 0' -c 'p inopblog' "$BASE" | awk '{print $3}') )):1:0:nm:10"
# a short form attr fork with an empty name
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[sf]}" -c "write -d a.sfattr.list[0].namelen 0" "$TMP/r.img" >/dev/null 2>&1
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case sf-fork-bad "$TMP/r.img" "${INO[sf]}:1:0:nm:10"
# the leaf fork's first block with a CRC that does not match
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[leaf]}" -c "ablock 0" -c "write -c hdr.info.hdr.forw 7" "$TMP/r.img" >/dev/null 2>&1
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case leaf-block-bad "$TMP/r.img" "${INO[leaf]}:1:0:nm:10"
# a data fork extent outside the filesystem: the fetch checks the extent list
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[data]}" -c "write -d u3.bmx[0].startblock 99999999" "$TMP/r.img" >/dev/null 2>&1
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case data-fork-bad "$TMP/r.img" "${INO[data]}:1:0:nm:10"
# poke_fork IMG INO OFF BYTE: one byte of an AG 0 inode's data fork, its CRC recomputed
poke_fork() {
	python3 - "$@" <<'PY'
import struct, sys
img, ino, off, val = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(img, "r+b") as f:
    sb = f.read(512)
    bs, isz, inopblog = struct.unpack(">I", sb[4:8])[0], struct.unpack(">H", sb[104:106])[0], sb[123]
    # the v3 core is 176 bytes; an AG 0 inode's block is its number's high bits
    f.seek((ino >> inopblog) * bs + (ino & ((1 << inopblog) - 1)) * isz + 176 + off)
    f.write(bytes([val]))
PY
	xfs_db -x -c "inode $2" -c "crc -r" "$1" >/dev/null 2>&1
}
# the data forks the fetch checks besides an extent list (xfs_iformat_data_fork):
# a short form directory entry naming an inode that cannot exist
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[d]}" -c "write -d u3.sfdir3.list[0].inumber.i4 4294967040" "$TMP/r.img" >/dev/null 2>&1
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case sf-dir-bad "$TMP/r.img" "${INO[d]}:1:0:nm:10"
# an inline symlink target with a NUL inside ("n\0ne")
cp --sparse=always "$BASE" "$TMP/r.img"
poke_fork "$TMP/r.img" "${INO[sl]}" 1 0
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case symlink-bad "$TMP/r.img" "${INO[sl]}:1:0:nm:10"
# a btree data fork whose root in the inode has level 0
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[bt]}" -c "write -d u3.bmbt.level 0" "$TMP/r.img" >/dev/null 2>&1
WHAT="0x5a5a0001 $NM" KERNEL="" refuse_case bmbt-root-bad "$TMP/r.img" "${INO[bt]}:1:0:nm:10"
# a short form directory entry named "/": not the fork verifier's rule, so the
# kernel recovers the intent, and xfsx_repair -n would complete it
cp --sparse=always "$BASE" "$TMP/r.img"
poke_fork "$TMP/r.img" "${INO[d]}" 9 47
cp --sparse=always "$TMP/r.img" "$TMP/r.A.img"
python3 "$W" "$TMP/r.img" "${INO[d]}:1:0:nm:10" >/dev/null
python3 "$W" "$TMP/r.A.img" "${INO[d]}:1:0:nm:10" >/dev/null
if mount_img "$TMP/r.A.img" "$TMP/ma"; then
	got=$(xa_dump "$TMP/ma/d")
	umount "$TMP/ma"
	check "sf-dir-name: the kernel recovers the intent on a directory with an entry named / (got $got)" \
		[ "$got" = "$(xa_expect '{}' 1 user nm 10)" ]
else
	not_ok "sf-dir-name: the kernel recovers the intent on a directory with an entry named / (the mount failed)"
fi
sum=$(md5sum <"$TMP/r.img")
out=$("$XFSX_REPAIR" -n "$TMP/r.img" 2>&1); rc=$?
js=$("$XFSX_CHECK" -j "$TMP/r.img" 2>/dev/null)
check "sf-dir-name: xfsx_repair -n would complete it (exit $rc), xfsx_check reports the name, not log.attri" \
	test "$(grep -c ': 1 of 1 would be completed' <<<"$out")" = 1 -a "$(md5sum <"$TMP/r.img")" = "$sum" \
	-a "$(json_field "$js" "[f['code'] for f in d['findings'] if f['code'] in ('dir.name', 'log.attri')]")" = "['dir.name']"
rm -f "$TMP/r.img" "$TMP/r.A.img"
# one good intent before the bad one: still nothing written
cp --sparse=always "$BASE" "$TMP/r.img"
WHAT="0x5a5a0002 $NM" KERNEL="" refuse_case good-then-free "$TMP/r.img" "${INO[one]}:1:0:ok:5" "$((INO[none] + 40)):1:0:nm:10"

# several unfinished on one inode: refused (the kernel's outcome, where it is not a hang, for the record)
for c in "set-remove sf=trusted.t0,user.a,user.k1,user.k2 sf:1:0:a:30 sf:2:0:a:0" \
	 "remove-last-set one= one:2:0:only:0 one:1:0:again:15" \
	 "set-remove-last skip one:1:0:a:10 one:2:0:only:0" \
	 "set-replace none=user.a none:1:0:a:30 none:3:0:a:50"; do
	read -r name kern s1 s2 <<<"$c"
	cp --sparse=always "$BASE" "$TMP/r.img"
	f1=${s1%%:*} f2=${s2%%:*}
	WHAT="0x5a5a0001 (.*on inode ${INO[$f1]})" KERNEL=$kern \
		refuse_case "$name" "$TMP/r.img" "${INO[$f1]}:${s1#*:}" "${INO[$f2]}:${s2#*:}"
done

# intents on an inode without an attr fork (a symlink: forkoff 0): the
# kernel's recovery completes them doing nothing (the fork is added before
# an intent is logged, never by recovery); so does xfsx_repair
img="$TMP/nofork.img" a="$TMP/nofork.A.img"
cp --sparse=always "$BASE" "$img"
python3 "$W" "$img" "${INO[sl]}:1:0:nm:3000" >/dev/null
cp --sparse=always "$img" "$a"
if mount_img "$a" "$TMP/ma"; then
	got=$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1], follow_symlinks=False))' "$TMP/ma/sl")
	umount "$TMP/ma"
	check "no-fork: the kernel recovers a set on a symlink without an attr fork, which stays without xattrs (got $got)" [ "$got" = "[]" ]
else
	not_ok "no-fork: the kernel recovers a set on a symlink without an attr fork (the mount failed)"
fi
out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
check "no-fork: xfsx_repair completes it as the kernel does (exit $rc)" \
	test $rc -eq 0 -a "$(grep -c ': 1 of 1 completed' <<<"$out")" = 1
xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
check "no-fork: xfs_repair -n clean on B (exit $rc)" [ $rc -eq 0 ]
bulkstat_equal no-fork "$a" "$img"
trees_equal no-fork "$a" "$img"
rm -f "$img" "$a"

# several intents, some the kernel's recovery stops at, some fine: xfsx_repair -n
# names each bad one and counts the rest as what they are (a repair completes
# none: it refuses the log, naming the first); xfsx_check reports each
cp --sparse=always "$BASE" "$TMP/r.img"
xfs_db -x -c "inode ${INO[d]}" -c "write -d u3.sfdir3.list[0].inumber.i4 4294967040" "$TMP/r.img" >/dev/null 2>&1
python3 "$W" "$TMP/r.img" "${INO[none]}:1:0:a:10" "$((INO[none] + 40)):1:0:nm:10" "${INO[one]}:1:0:b:20" \
	"${INO[d]}:1:0:c:30" >/dev/null
sum=$(md5sum <"$TMP/r.img")
out=$("$XFSX_REPAIR" -n "$TMP/r.img" 2>"$TMP/err"); rc=$?
check "several: xfsx_repair -n names both bad intents (0x5a5a0002 free inode, 0x5a5a0004 directory) and exits 4, writes nothing (exit $rc)" \
	test $rc -eq 4 -a "$(md5sum <"$TMP/r.img")" = "$sum" \
	-a "$(grep -c "intent 0x5a5a0002 (set of \"user.nm\".*on inode $((INO[none] + 40))) cannot be completed: inode $((INO[none] + 40)) is free.*a repair refuses such a log" <<<"$out")" = 1 \
	-a "$(grep -c "intent 0x5a5a0004 (set of \"user.c\".*on inode ${INO[d]}) cannot be completed: inode ${INO[d]}'s short form directory fails its check: dir.ino.*a repair refuses such a log" <<<"$out")" = 1 \
	-a "$(grep -c 'cannot be completed' <<<"$out")" = 2
check "several: xfsx_repair -n: 2 of 4 can be completed, 2 cannot, a repair completes none; nothing said not completed" \
	test "$(grep -c ": 2 of 4 can be completed as recovery completes them, on their inodes' attr forks; 2 cannot be (on the inodes named above), so a repair refuses the log and completes none of the 4$" <<<"$out")" = 1 \
	-a "$(grep -c 'not completed' "$TMP/err")" = 0
grep 'ATTRI)' <<<"$out" | head -2 | cut -c1-300 | sed 's/^/#   /'
js=$("$XFSX_CHECK" -j "$TMP/r.img" 2>/dev/null); rc=$?
check "several: xfsx_check reports log.attri twice (exit $rc)" \
	test $rc -eq 4 -a "$(json_field "$js" "[f['code'] for f in d['findings']].count('log.attri')")" = 2
out=$("$XFSX_REPAIR" "$TMP/r.img" 2>&1); rc=$?
check "several: xfsx_repair refuses naming the first and pointing to -n for the rest, writes nothing (exit $rc)" \
	test $rc -eq 8 -a "$(md5sum <"$TMP/r.img")" = "$sum" \
	-a "$(grep -c 'intent 0x5a5a0002 .*(and more intents: xfsx_repair -n names them all).*Nothing was written' <<<"$out")" = 1
rm -f "$TMP/r.img"

# an intent on an unlinked inode (an O_TMPFILE file open at the crash: no
# links, on an AGI unlinked list, in the kernel's own dirty log): the
# kernel's recovery completes it, then frees the inode (xlog_recover_iget
# keeps it, XFS_IRECOVERY; the unlinked lists are processed after the
# intents).  xfsx_repair gives the same: the inode freed, its fork with it
img="$TMP/tmpf.img" a="$TMP/tmpf.A.img"
cp --sparse=always "$BASE" "$img"
if mount_img "$img" "$M"; then
	tino=$(xfs_io -x -T -c "pwrite -q 0 64k" -c fsync -c stat -c "shutdown -f" "$M" 2>/dev/null |
	       awk '/^stat.ino/ {print $3}')
	umount "$M"
fi
if [ -z "${tino:-}" ] || ! python3 "$W" "$img" "$tino:1:0:nm:3000" "${INO[one]}:1:0:ok:5" >/dev/null; then
	not_ok "unlinked: an O_TMPFILE inode left on the unlinked list, the intents written"
else
	cp --sparse=always "$img" "$a"
	if mount_img "$a" "$TMP/ma"; then
		got=$(xa_dump "$TMP/ma/one")
		umount "$TMP/ma"
		xfs_repair -n "$a" >/dev/null 2>&1; rc=$?
		check "unlinked: the kernel recovers both intents and frees inode $tino (one: $got; xfs_repair -n exit $rc)" \
			test "$got" = "$(xa_expect "${BEFORE[one]}" 1 user ok 5)" -a $rc -eq 0 \
			-a "$(xfs_db -c "inode $tino" -c "print core.mode" "$a" | awk '{print $3}')" = 0
	else
		not_ok "unlinked: the kernel recovers the intents (the mount failed)"
	fi
	sum=$(md5sum <"$img")
	out=$("$XFSX_REPAIR" -n "$img" 2>"$TMP/err"); rc=$?
	check "unlinked: xfsx_repair -n: 1 of 2 would be completed, 1 on an unlinked inode that would be freed, writes nothing (exit $rc)" \
		test $rc -eq 0 -a "$(md5sum <"$img")" = "$sum" -a "$(grep -c ': 1 of 2 would be completed .*; 1 on unlinked inodes .* which would be freed' <<<"$out")" = 1 \
		-a ! -s "$TMP/err"
	out=$("$XFSX_REPAIR" -v "$img" 2>"$TMP/err"); rc=$?	# -v: every line, to count
	nfix=$(grep -c '^fixed ' <<<"$out"); nunl=$(grep -c '^fixed  *unlinked\.' <<<"$out")
	check "unlinked: xfsx_repair completes one, frees the unlinked inode with the other (exit $rc, fixes $nfix, of them unlinked-list ones $nunl)" \
		test $rc -le 1 -a "$nfix" = "$nunl" -a "$(grep -c ': 1 of 2 completed .*; 1 on unlinked inodes .* which are freed' <<<"$out")" = 1 \
		-a ! -s "$TMP/err" -a "$(xfs_db -c "inode $tino" -c "print core.mode" "$img" | awk '{print $3}')" = 0
	xfs_repair -n "$img" >"$TMP/xr" 2>&1; rc=$?
	check "unlinked: xfs_repair -n clean on B (exit $rc)" [ $rc -eq 0 ]
	bulkstat_equal unlinked "$a" "$img"
	trees_equal unlinked "$a" "$img"
fi
rm -f "$img" "$a"

# fuzzed ATTRI items: the kernel refuses them (the mount fails), so do we, saying why
fuzz_case() {
	local z=$1 img="$TMP/fz.img" a="$TMP/fz.A.img" sum out rc
	cp --sparse=always "$BASE" "$img"
	python3 "$W" "$img" "${INO[sf]}:1:0:fz:20:$z" >/dev/null 2>&1 || { not_ok "fuzz $z: attriwrite.py"; return; }
	cp --sparse=always "$img" "$a"
	if mount_img "$a" "$TMP/ma"; then
		umount "$TMP/ma"
		not_ok "fuzz $z: the kernel refuses the ATTRI (the mount succeeded)"
	else
		ok "fuzz $z: the kernel refuses the ATTRI (the mount fails)"
	fi
	sum=$(md5sum <"$img")
	out=$("$XFSX_REPAIR" "$img" 2>&1); rc=$?
	check "fuzz $z: xfsx_repair refuses it (exit $rc), naming the log item, and writes nothing" \
		test $rc -eq 8 -a "$(md5sum <"$img")" = "$sum" -a "$(grep -c "Nothing was written" <<<"$out")" = 1
	diag "fuzz $z: $(grep -o 'cannot be replayed: [^.]*' <<<"$out")"
	"$XFSX_CHECK" "$img" >/dev/null 2>&1; rc=$?
	check "fuzz $z: xfsx_check does not crash (exit $rc)" test $rc -lt 128
	rm -f "$img" "$a"
}
for z in namelong name256 valuelong novalue noname fmtshort; do fuzz_case "$z"; done

tap_done
