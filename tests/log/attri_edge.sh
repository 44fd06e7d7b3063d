#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unfinished xattr intents (issue 15), the edges (attri.sh has one intent per
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
#    data fork's extent list has a record outside the filesystem.
#    xfsx_repair refuses before writing anything, naming the intent (id,
#    op, name, inode) and why, and the options; -n names it and exits 4;
#    xfsx_check reports log.attri.
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
