#!/usr/bin/env bash
# Directories in every format, the directory graph and link counts.
# Needs root and a loop device (skips with the reason otherwise): the
# kernel builds the directories, xfsx_check judges them.
#  1. Clean: over several geometries (4 KiB and 1 KiB blocks, 16 KiB
#     directory blocks, ascii-ci) an image holding short form (3 entries),
#     block (~50), leaf (~500, then mostly removed), node (~20000 with a free
#     index, some removed) directories, subdirectories, hard links, a
#     symlink, a fifo and a device must give 0 findings and exit 0.
#  2. Damage: one field changed with xfs_db -x (CRC kept valid with -d, or
#     broken on purpose); every case must be reported by xfs_repair -n and
#     by xfsx_check (exit 4) with the expected finding code.  The closing
#     diagnostics print both tools' counts.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "directory tests" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "directory tests" "needs root and a loop device to let the kernel build directories"; tap_done; exit; }

populate() {
	local m=$1 i
	mkdir "$m/sf" "$m/blk" "$m/leaf" "$m/node"
	for i in 1 2 3; do echo "$i" > "$m/sf/f$i"; done
	for ((i = 1; i <= 50; i++)); do : > "$m/blk/file_$i"; done
	for ((i = 1; i <= 500; i++)); do : > "$m/leaf/entry_number_$i"; done
	for ((i = 1; i <= 30; i++)); do mkdir "$m/leaf/d$i"; done
	for ((i = 1; i <= 400; i++)); do rm "$m/leaf/entry_number_$i"; done
	for ((i = 1; i <= 20000; i++)); do : > "$m/node/a_long_file_name_for_node_format_$i"; done
	for ((i = 1; i <= 20000; i += 7)); do rm "$m/node/a_long_file_name_for_node_format_$i"; done
	for ((i = 1; i <= 20; i++)); do mkdir "$m/node/sub$i"; done
	mkdir -p "$m/sub/a/b/c" "$m/sub/d"
	ln "$m/sf/f1" "$m/sub/hard1"; ln "$m/sf/f1" "$m/blk/hard2"
	ln -s /etc/passwd "$m/sub/sym"; mkfifo "$m/sub/fifo"; mknod "$m/sub/cdev" c 1 3
	: > "$m/sub/CaseName"
}

make_image() {  # make_image IMG MKFS_OPTS
	rm -f "$1"; truncate -s 1G "$1"
	# shellcheck disable=SC2086
	mkfs.xfs -q -f $2 "$1" 2>"$TMP/mkfs.err" || return 2
	mount_img "$1" "$TMP/mnt" 2>"$TMP/mount.err" || return 3
	populate "$TMP/mnt"
	unmount_dir "$TMP/mnt"
}

# ---- 1. clean images ----
for opts in "" "-b size=1024" "-n size=16384" "-n version=ci" "-b size=2048 -n size=8192 -d agcount=7"; do
	img="$TMP/clean.img"
	make_image "$img" "$opts"; rc=$?
	if [ $rc = 2 ]; then skip "mkfs.xfs ${opts:-(defaults)}" "mkfs.xfs refused: $(head -1 "$TMP/mkfs.err")"; continue; fi
	# kernels that dropped ascii-ci refuse to mount it: the empty image is still judged
	if [ $rc = 3 ]; then
		xfs_repair -n "$img" >/dev/null 2>&1; rrc=$?
		"$XFSX_CHECK" -q "$img"; xrc=$?
		check "clean ${opts} (kernel refused the mount: empty image only): xfs_repair rc $rrc, xfsx_check rc $xrc" \
			[ $((rrc + xrc)) -eq 0 ]
		continue
	fi
	[ $rc = 0 ] || { not_ok "populate ${opts:-(defaults)}"; continue; }
	xfs_repair -n "$img" >/dev/null 2>&1; rrc=$?
	out=$("$XFSX_CHECK" "$img" 2>&1); xrc=$?
	if [ $xrc -eq 0 ] && [ $rrc -eq 0 ]; then
		ok "clean ${opts:-(defaults)}: xfs_repair -n and xfsx_check both clean"
	else
		not_ok "clean ${opts:-(defaults)}: xfs_repair rc $rrc, xfsx_check rc $xrc"
		echo "$out" | head -20 | sed 's/^/# /'
	fi
done

# ---- 2. damage, on the default geometry ----
base="$TMP/base.img"
make_image "$base" "" || { not_ok "base image"; tap_done; exit; }
"$XFSX_CHECK" -q "$base"; rc=$?
check "base image is clean (exit 0, got $rc)" [ $rc -eq 0 ]

ino_of() { xfs_db -r -c "path $1" -c inode "$base" 2>/dev/null | awk '/current inode number/ {print $NF}'; }
bsize=$(xfs_db -r -c "sb 0" -c "p blocksize" "$base" | awk '{print $3}')
leafblk=$(( (32 << 30) / bsize )); freeblk=$(( (64 << 30) / bsize ))
sf=$(ino_of /sf); f2=$(ino_of /sf/f2); blk=$(ino_of /blk); leaf=$(ino_of /leaf)
node=$(ino_of /node); sub=$(ino_of /sub); subd=$(ino_of /sub/d); suba=$(ino_of /sub/a)
diag "inodes: sf $sf blk $blk leaf $leaf node $node sub $sub"
# an inode in a chunk that is free: far past the last one the populate used
free_ino=$(xfs_db -r -c "agi 0" -c "p newino" "$base" | awk '{print $3}')
free_ino=$((free_ino + 63))
# the node directory's first DA btree child (a LEAFN)
leafn=$(xfs_db -r -c "inode $node" -c "dblock $leafblk" -c "p nbtree[0].before" "$base" 2>/dev/null | awk '{print $3}')

total=0 rep_det=0 x_det=0 img="$TMP/t.img"
run_case() {  # run_case NAME EXPECT_CODE XFS_DB_COMMANDS...
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
		not_ok "$name: xfsx_check exit $xrc (crash or operational error)"; return
	fi
	if [ $rrc -eq 0 ]; then
		not_ok "$name: the damage did not take (xfs_repair -n finds nothing)"; return
	fi
	if [ $xrc -ne 4 ]; then
		not_ok "$name: xfs_repair -n reports it, xfsx_check does not"; return
	fi
	if ! grep -q "\"code\":\"$expect\"" <<<"$out"; then
		not_ok "$name: expected finding $expect, got $(grep -o '"code":"[^"]*"' <<<"$out" | sort -u | tr '\n' ' ')"
		return
	fi
	ok "$name ($expect)"
}

# link counts
run_case "file nlink 5" inode.nlink "inode $f2" "write core.nlinkv2 5"
run_case "directory nlink 9" inode.nlink "inode $sub" "write core.nlinkv2 9"
run_case "directory nlink 1" inode.nlink "inode $blk" "write core.nlinkv2 1"
# short form
run_case "sf i8count 1" dir.sf "inode $sub" "write -d u3.sfdir3.hdr.i8count 1"
run_case "sf name with /" dir.name "inode $sub" "write -d u3.sfdir3.list[2].name \"ha/d1\""
run_case "sf offsets backwards" dir.sf "inode $sub" "write -d u3.sfdir3.list[1].offset 0x10"
run_case "sf entry to a free inode" dir.entry_free "inode $sub" "write -d u3.sfdir3.list[3].inumber.i4 $free_ino"
run_case "sf ftype wrong" dir.ftype "inode $sub" "write -d u3.sfdir3.list[3].filetype 1"
run_case "sf .. wrong" dir.parent "inode $subd" "write -d u3.sfdir3.hdr.parent.i4 $sf"
run_case "sf directory hard link" dir.hardlink "inode $sub" "write -d u3.sfdir3.list[1].inumber.i4 $suba"
run_case "sf duplicate name" dir.dup_name "inode $sub" "write -d u3.sfdir3.list[1].name \"a\""
run_case "sf namelen past the end" dir.namelen "inode $sub" "write -d u3.sfdir3.list[5].namelen 200"
# a name removed: the short form's last entry (cdev, 12 bytes) dropped
cnt=$(xfs_db -r -c "inode $sub" -c "p u3.sfdir3.hdr.count" "$base" | awk '{print $3}')
size=$(xfs_db -r -c "inode $sub" -c "p core.size" "$base" | awk '{print $3}')
lastlen=$(xfs_db -r -c "inode $sub" -c "p u3.sfdir3.list[$((cnt - 1))].namelen" "$base" | awk '{print $3}')
run_case "sf last entry removed (disconnected inode)" inode.unreachable "inode $sub" \
	"write -d u3.sfdir3.hdr.count $((cnt - 1))" "write -d core.size $((size - 3 - lastlen - 1 - 4))"
# block form
run_case "block magic" dir.magic "inode $blk" "dblock 0" "fuzz -d bhdr.hdr.magic random"
run_case "block CRC" dir.crc "inode $blk" "dblock 0" "fuzz -c bhdr.bestfree[0].length random"
run_case "block owner" dir.owner "inode $blk" "dblock 0" "write -d bhdr.hdr.owner $sf"
run_case "block blkno" dir.blkno "inode $blk" "dblock 0" "write -d bhdr.hdr.bno 8"
run_case "block name changed (hash)" dir.bad_hash "inode $blk" "dblock 0" "write -d bu[3].name \"zzzzzz\""
run_case "block duplicate name" dir.dup_name "inode $blk" "dblock 0" "write -d bu[3].name \"file_1\""
run_case "block tag" dir.tag "inode $blk" "dblock 0" "write -d bu[4].tag 0x10"
run_case "block bestfree" dir.bestfree "inode $blk" "dblock 0" "write -d bhdr.bestfree[0].length 8"
run_case "block namelen 0" dir.namelen "inode $blk" "dblock 0" "write -d bu[6].namelen 0"
run_case "block . wrong" dir.dot "inode $blk" "dblock 0" "write -d bu[0].inumber $sf"
run_case "block entry to a free inode" dir.entry_free "inode $blk" "dblock 0" "write -d bu[5].inumber $free_ino"
run_case "block ftype" dir.ftype "inode $blk" "dblock 0" "write -d bu[5].filetype 2"
run_case "block tail stale" dir.stale "inode $blk" "dblock 0" "write -d bleaf[3].address 0"
run_case "block tail count" dir.count "inode $blk" "dblock 0" "write -d btail.count 100000"
# a mapping naming 30000 blocks that are not directory blocks: reported, then given up (bounded output)
run_case "block dir mapped over 30000 blocks" dir.format "inode $blk" "write -d u3.bmx[0].blockcount 30000"
nf=$("$XFSX_CHECK" -j "$img" 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["findings"]))')
check "30000 bad directory blocks give a bounded report ($nf findings)" [ "${nf:-99999}" -lt 200 ]
# leaf form
# the last data block is always mapped (the size ends with it)
ldb=$(( $(xfs_db -r -c "inode $leaf" -c "p core.size" "$base" | awk '{print $3}') / bsize - 1 ))
lname=$(xfs_db -r -c "inode $leaf" -c "dblock $ldb" -c "p du[1].namelen" "$base" | awk '{print $3}')
run_case "leaf data magic" dir.magic "inode $leaf" "dblock $ldb" "fuzz -d dhdr.hdr.magic random"
run_case "leaf data bestfree" dir.bestfree "inode $leaf" "dblock $ldb" "write -d dhdr.bestfree[0].length 16"
run_case "leaf data name changed (hash)" dir.bad_hash "inode $leaf" "dblock $ldb" \
	"write -d du[1].name \"$(printf '%*s' "$lname" '' | tr ' ' x)\""
run_case "leaf1 magic" dir.magic "inode $leaf" "dblock $leafblk" "fuzz -d lhdr.info.hdr.magic random"
run_case "leaf1 CRC" dir.crc "inode $leaf" "dblock $leafblk" "fuzz -c lhdr.stale random"
run_case "leaf1 stale" dir.stale "inode $leaf" "dblock $leafblk" "write -d lhdr.stale 7"
run_case "leaf1 bests" dir.bests "inode $leaf" "dblock $leafblk" "write -d lbests[0] 0x10"
run_case "leaf1 hash order" dir.hash_order "inode $leaf" "dblock $leafblk" "write -d lents[5].hashval 0"
run_case "leaf1 count" dir.count "inode $leaf" "dblock $leafblk" "write -d lhdr.count 60000"
# the only leaf block of a leaf-format directory has no siblings
run_case "leaf1 forw" da.sibling "inode $leaf" "dblock $leafblk" "write -d lhdr.info.hdr.forw 3"
run_case "leaf1 back" da.sibling "inode $leaf" "dblock $leafblk" "write -d lhdr.info.hdr.back 1"
# "." and ".." are directories: their file type says so
run_case "block . ftype" dir.ftype "inode $blk" "dblock 0" "write -d bu[0].filetype 1"
run_case "leaf data .. ftype" dir.ftype "inode $leaf" "dblock 0" "write -d du[1].filetype 7"
# node form
run_case "da node level" da.level "inode $node" "dblock $leafblk" "write -d nhdr.level 3"
run_case "da node count 0" da.count "inode $node" "dblock $leafblk" "write -d nhdr.count 0"
run_case "da node hash key" da.hash "inode $node" "dblock $leafblk" "write -d nbtree[0].hashval 5"
run_case "da node child out of range" da.ptr "inode $node" "dblock $leafblk" "write -d nbtree[1].before 3"
run_case "da node CRC" da.crc "inode $node" "dblock $leafblk" "fuzz -c nhdr.count random"
c0=$(xfs_db -r -c "inode $node" -c "dblock $leafblk" -c "p nbtree[0].before" "$base" | awk '{print $3}')
run_case "da node two keys to one child (loop, orphan leaf)" da.loop "inode $node" "dblock $leafblk" "write -d nbtree[1].before $c0"
run_case "leafn address" dir.leaf "inode $node" "dblock $leafn" "write -d lents[3].address 1"
run_case "leafn sibling" da.sibling "inode $node" "dblock $leafn" "write -d lhdr.info.hdr.forw 0"
run_case "free index nused" dir.free "inode $node" "dblock $freeblk" "write -d fhdr.nused 1"
nvalid=$(xfs_db -r -c "inode $node" -c "dblock $freeblk" -c "p fhdr.nvalid" "$base" | awk '{print $3}')
run_case "free index nvalid-1 (data block not indexed)" dir.bests "inode $node" "dblock $freeblk" "write -d fhdr.nvalid $((nvalid - 1))"
run_case "free index firstdb" dir.free "inode $node" "dblock $freeblk" "write -d fhdr.firstdb 5"
run_case "free index bests" dir.bests "inode $node" "dblock $freeblk" "write -d fbests[2] 8"
run_case "free index magic" dir.magic "inode $node" "dblock $freeblk" "fuzz -d fhdr.hdr.magic random"
run_case "node data entry inode" dir.ino "inode $node" "dblock 3" "write -d du[2].inumber 1"

diag "damage cases: $total; xfs_repair -n detected $rep_det, xfsx_check detected $x_det"
tap_done
