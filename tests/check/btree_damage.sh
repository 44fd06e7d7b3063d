#!/usr/bin/env bash
# Damage corpus for the free space btrees (bno, cnt), the inode btrees
# (inobt, finobt), the reverse mapping and reference count btrees (block
# level and record rules) and the AGF/AGI/superblock counters.
# Each case fuzzes one field of one block with xfs_db -x, then runs Debian's
# xfs_repair -n and xfsx_check on the same image.  Rules:
#  - xfsx_check never crashes: exit 0 or 4 only;
#  - every case xfs_repair -n reports (exit 1), xfsx_check reports (exit 4);
#  - CRC-breaking fuzz (no -d) is reported with the block's .crc code;
#  - named cases report their expected finding code.
# The closing diagnostics print how many cases each tool detected.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm	# every case copies the image: keep them in RAM
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "freesp damage corpus" "xfsprogs not installed"; tap_done; exit; }

base="$TMP/base.img"
truncate -s 320M "$base"
mkfs.xfs -q -f -b size=1024 -d agcount=2 "$base" || { not_ok "mkfs.xfs"; tap_done; exit; }
multi=0
if have_loop_xfs; then
	# fragment AG 0's free space so bno and cnt grow to two levels
	mount_img "$base" "$TMP/mnt" && {
		xfs_io -f -c "pwrite -q 0 12m" -c fsync "$TMP/mnt/big"
		args=()
		for ((i = 0; i < 12 * 1024; i += 2)); do args+=(-c "fpunch ${i}k 1k"); done
		xfs_io "${args[@]}" "$TMP/mnt/big"
		# enough inodes for a two-level inobt, every third freed for the finobt
		mkdir "$TMP/mnt/d"
		for ((i = 0; i < 5000; i++)); do : > "$TMP/mnt/d/$i"; done
		for ((i = 0; i < 5000; i += 3)); do rm "$TMP/mnt/d/$i"; done
		unmount_dir "$TMP/mnt"
	}
	[ "$(xfs_db -r -c 'agf 0' -c 'p bnolevel' "$base" | awk '{print $3}')" = 2 ] && multi=1
else
	diag "no root/loop device: trees stay single blocks (leaf cases only)"
fi

"$XFSX_CHECK" -q "$base"; rc=$?
check "base image is clean (exit 0, got $rc)" [ $rc -eq 0 ]

total=0 rep_det=0 x_det=0 missed=0 extra=0
img="$TMP/t.img"

# run_case NAME EXPECT_CODE(or -) XFS_DB_COMMANDS...
run_case() {
	local name=$1 expect=$2; shift 2
	local args=() c rrc xrc out
	for c in "$@"; do args+=(-c "$c"); done
	cp --sparse=always "$base" "$img"
	xfs_db -x "${args[@]}" "$img" >/dev/null 2>&1
	xfs_repair -n "$img" >/dev/null 2>&1; rrc=$?
	out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); xrc=$?
	total=$((total + 1))
	[ $rrc -ne 0 ] && rep_det=$((rep_det + 1))
	[ $xrc -eq 4 ] && x_det=$((x_det + 1))
	if [ $xrc -ne 0 ] && [ $xrc -ne 4 ]; then
		not_ok "$name: xfsx_check exit $xrc (crash or operational error)"
		return
	fi
	if [ $rrc -ne 0 ] && [ $xrc -ne 4 ]; then
		missed=$((missed + 1))
		not_ok "$name: xfs_repair -n reports it, xfsx_check does not"
		return
	fi
	[ $rrc -eq 0 ] && [ $xrc -eq 4 ] && extra=$((extra + 1))
	if [ "$expect" != - ] && ! grep -q "\"code\":\"$expect\"" <<<"$out"; then
		not_ok "$name: expected finding $expect"
		return
	fi
	ok "$name (xfs_repair rc $rrc, xfsx rc $xrc)"
}

leaf_fields=(magic level numrecs leftsib rightsib bno lsn uuid owner
	"recs[1].startblock" "recs[1].blockcount" "recs[3].startblock" "recs[3].blockcount")
node_fields=(magic level numrecs leftsib rightsib bno lsn uuid owner
	"keys[1].startblock" "keys[1].blockcount" "keys[2].startblock" "ptrs[1]" "ptrs[2]")
root1_fields=(magic level numrecs leftsib rightsib bno lsn uuid owner
	"recs[1].startblock" "recs[1].blockcount")
ileaf_fields=(magic level numrecs leftsib rightsib bno lsn owner
	"recs[1].startino" "recs[1].holemask" "recs[1].count" "recs[1].freecount" "recs[1].free"
	"recs[2].startino" "recs[2].freecount")
inode_fields=(magic level numrecs leftsib rightsib bno lsn owner "keys[1].startino" "keys[2].startino"
	"ptrs[1]" "ptrs[2]")
verbs=(zeroes ones firstbit middlebit lastbit add sub random)

# name|finding prefix|field list|xfs_db navigation...
targets=()
if [ $multi = 1 ]; then
	targets+=("bno-node|bnobt|node|agf 0|addr bnoroot" "bno-leaf|bnobt|leaf|agf 0|addr bnoroot|addr ptrs[2]"
		  "cnt-node|cntbt|node|agf 0|addr cntroot" "cnt-leaf|cntbt|leaf|agf 0|addr cntroot|addr ptrs[2]")
	if [ "$(xfs_db -r -c 'agi 0' -c 'p level' "$base" | awk '{print $3}')" = 2 ]; then
		targets+=("ino-node|inobt|inode|agi 0|addr root" "ino-leaf|inobt|ileaf|agi 0|addr root|addr ptrs[1]")
	else
		targets+=("ino-root|inobt|ileaf|agi 0|addr root")
	fi
	if [ "$(xfs_db -r -c 'agi 0' -c 'p free_level' "$base" | awk '{print $3}')" = 2 ]; then
		targets+=("fino-node|finobt|inode|agi 0|addr free_root"
			  "fino-leaf|finobt|ileaf|agi 0|addr free_root|addr ptrs[1]")
	else
		targets+=("fino-root|finobt|ileaf|agi 0|addr free_root")
	fi
fi
targets+=("bno-root1|bnobt|root1|agf 1|addr bnoroot" "cnt-root1|cntbt|root1|agf 1|addr cntroot")

for t in "${targets[@]}"; do
	IFS='|' read -r tname prefix fset nav1 nav2 nav3 <<<"$t"
	nav=("$nav1" "$nav2"); [ -n "${nav3:-}" ] && nav+=("$nav3")
	declare -n fl="${fset}_fields"
	fields=("${fl[@]}")
	unset -n fl
	for f in "${fields[@]}"; do
		for v in "${verbs[@]}"; do
			run_case "$tname fuzz -d $f $v" - "${nav[@]}" "fuzz -d $f $v"
		done
		# -c leaves the CRC stale: the block must fail its CRC (or its magic)
		exp="$prefix.crc"
		[ "$f" = magic ] && exp="$prefix.magic"
		run_case "$tname fuzz -c $f firstbit (CRC broken)" "$exp" "${nav[@]}" "fuzz -c $f firstbit"
	done
done

# AGF counters (CRC kept valid): the scan must disagree with them
for f in freeblks longest btreeblks; do
	[ $multi = 0 ] && [ $f = btreeblks ] && continue
	for v in add sub; do
		run_case "agf 0 fuzz -d $f $v" agf.counters "agf 0" "fuzz -d $f $v"
	done
done
# AGI counters
for f in count freecount; do
	for v in add sub; do
		run_case "agi 0 fuzz -d $f $v" agi.counters "agi 0" "fuzz -d $f $v"
	done
done
# the superblock's free block count
run_case "sb 0 fdblocks+1" sb.counters "sb 0" "write -d fdblocks $(( $(xfs_db -r -c 'sb 0' -c 'p fdblocks' "$base" | awk '{print $3}') + 1 ))"
# a secondary (mkfs leaves it in progress) never holds quota inodes or flags
run_case "sb 1 uquotino 128" sb.quota "sb 1" "write -d uquotino 128"
run_case "sb 1 qflags 1" sb.quota "sb 1" "write -d qflags 1"
# bno and cnt disagree: one cnt record changed with a valid CRC and still in order
run_case "agf 1 cnt root blockcount-1" - "agf 1" "addr cntroot" "fuzz -d recs[1].blockcount sub"

# inodes (the first image: file inodes in AG 0's chunks): verifier-level
# damage, fork block maps, link counts, unlinked list pointers.
if [ $multi = 1 ]; then
	root=$(xfs_db -r -c "sb 0" -c "p rootino" "$base" | awk '{print $3}')
	victim=$(xfs_db -r -c "inode $root" -c "p u3.sfdir3.list[0].inumber.i4" "$base" 2>/dev/null | awk '{print $3}')
	[ -n "$victim" ] || victim=$((root + 3))
	for f in core.magic core.mode core.version core.format core.nlinkv2 core.size core.nblocks \
		 core.extsize core.nextents core.naextents core.forkoff core.aformat core.flags \
		 core.gen next_unlinked v3.inumber v3.flags2 v3.cowextsize v3.uuid v3.lsn; do
		for v in zeroes ones random add sub; do
			run_case "inode $victim fuzz -d $f $v" - "inode $victim" "fuzz -d $f $v"
		done
		exp=inode.crc
		[ "$f" = core.magic ] && exp=inode.magic
		run_case "inode $victim fuzz -c $f firstbit (CRC broken)" "$exp" "inode $victim" "fuzz -c $f firstbit"
	done
	# a linked inode pointing into an unlinked list (at itself: a valid inode)
	vagino=$(xfs_db -r -c "convert ino $victim agino" "$base" | awk '{print $1}')
	run_case "inode $victim next_unlinked = its own agino" unlinked.linked "inode $victim" \
		"write -d next_unlinked $((vagino))"
fi

# rmap and refcount trees: a second image with rmapbt, reflinked and fragmented files
if have_loop_xfs; then
	rbase="$TMP/rbase.img"
	truncate -s 320M "$rbase"
	mkfs.xfs -q -f -b size=1024 -d agcount=2 -m rmapbt=1,reflink=1 "$rbase"
	mount_img "$rbase" "$TMP/mnt" && {
		xfs_io -f -c "pwrite -q 0 6m" -c fsync "$TMP/mnt/big"
		args=()
		for ((i = 0; i < 6 * 1024; i += 2)); do args+=(-c "fpunch ${i}k 1k"); done
		xfs_io "${args[@]}" "$TMP/mnt/big"
		for i in 1 2 3; do cp --reflink=always "$TMP/mnt/big" "$TMP/mnt/c$i"; done
		xfs_io -c "pwrite -q 0 100k" "$TMP/mnt/c1"
		clone_ino=$(stat -c %i "$TMP/mnt/c2")
		unmount_dir "$TMP/mnt"
	}
	"$XFSX_CHECK" -q "$rbase"; rc=$?
	check "rmap/reflink base image is clean (exit 0, got $rc)" [ $rc -eq 0 ]
	base=$rbase
	# a record that stays valid on its own (another inode as owner, another
	# reference count) is caught by comparing the trees with the observed
	# owners (last phase); an rmap node's high key must be the highest key
	# of its subtree.
	rnode_fields=(magic level numrecs leftsib rightsib bno lsn owner "keys[1].startblock"
		"keys[2].startblock" "keys[2].owner" "keys[2].offset" "keys[2].startblock_hi" "ptrs[1]")
	rleaf_fields=(magic level numrecs leftsib rightsib bno owner "recs[1].startblock"
		"recs[1].blockcount" "recs[1].owner" "recs[3].startblock" "recs[3].blockcount"
		"recs[3].owner" "recs[3].offset" "recs[3].extentflag" "recs[3].attrfork" "recs[3].bmbtblock")
	cnode_fields=(magic level numrecs leftsib rightsib bno lsn owner "keys[1].startblock"
		"keys[2].startblock" "ptrs[1]")
	cleaf_fields=(magic level numrecs leftsib rightsib bno owner "recs[1].startblock"
		"recs[1].blockcount" "recs[1].refcount" "recs[1].cowflag" "recs[3].startblock")
	for t in "rmap-node|rmapbt|rnode|agf 0|addr rmaproot" \
		 "rmap-leaf|rmapbt|rleaf|agf 0|addr rmaproot|addr ptrs[1]" \
		 "refc-node|refcbt|cnode|agf 0|addr refcntroot" \
		 "refc-leaf|refcbt|cleaf|agf 0|addr refcntroot|addr ptrs[1]"; do
		IFS='|' read -r tname prefix fset nav1 nav2 nav3 <<<"$t"
		nav=("$nav1" "$nav2"); [ -n "${nav3:-}" ] && nav+=("$nav3")
		[ "$tname" = rmap-leaf ] && nav+=("addr ptrs[1]")	# three levels
		declare -n fl="${fset}_fields"
		fields=("${fl[@]}")
		unset -n fl
		for f in "${fields[@]}"; do
			for v in zeroes ones firstbit lastbit add sub random; do
				run_case "$tname fuzz -d $f $v" - "${nav[@]}" "fuzz -d $f $v"
			done
			exp="$prefix.crc"
			[ "$f" = magic ] && exp="$prefix.magic"
			run_case "$tname fuzz -c $f firstbit (CRC broken)" "$exp" "${nav[@]}" "fuzz -c $f firstbit"
		done
	done
	# a node's high key one block below the highest record of its subtree
	hi=$(xfs_db -r -c "agf 0" -c "addr rmaproot" -c "p keys[1].startblock_hi" "$base" | awk '{print $3}')
	[ -n "$hi" ] && [ "$hi" -gt 0 ] &&
		run_case "rmap-node keys[1] high key - 1" rmapbt.key "agf 0" "addr rmaproot" \
			"write -d keys[1].startblock_hi $((hi - 1))"
	# shared extents need the reflink flag (xfs_repair: "setting reflink flag")
	[ -n "${clone_ino:-}" ] &&
		run_case "inode $clone_ino (a clone) reflink flag cleared" inode.reflink \
			"inode $clone_ino" "write -d v3.reflink 0"
	for f in rmapblocks refcntblocks; do
		run_case "agf 0 fuzz -d $f add" agf.counters "agf 0" "fuzz -d $f add"
	done
else
	skip "rmap/refcount damage" "needs root and a loop device to build the image"
fi

diag "cases: $total; xfs_repair -n detected: $rep_det; xfsx_check detected: $x_det;" \
	"missed (repair yes, xfsx no): $missed; xfsx only: $extra"
tap_done
