#!/usr/bin/env bash
# Extended attributes, symlinks, special files and unlinked lists.
# A kernel-populated image (xattrs in short form, leaf, node and remote
# formats; inline and remote symlinks; fifo, character and block devices,
# a socket) must check clean; then each case damages one field with
# xfs_db -x and runs Debian's xfs_repair -n and xfsx_check on the copy:
#  - xfsx_check never crashes (exit 0 or 4 only);
#  - every case xfs_repair -n reports (exit 1), xfsx_check reports (exit 4);
#  - each case's expected finding code is among xfsx_check's findings.
# The closing diagnostics print how many cases each tool detected.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "attrs/symlink/unlinked corpus" "xfsprogs not installed"; tap_done; exit; }
have_loop_xfs || { skip "attrs/symlink/unlinked corpus" "needs root and a loop device"; tap_done; exit; }
command -v python3 >/dev/null || { skip "attrs/symlink/unlinked corpus" "needs python3"; tap_done; exit; }

base="$TMP/base.img"
truncate -s 320M "$base"
mkfs.xfs -q -f "$base" || { not_ok "mkfs.xfs"; tap_done; exit; }
mount_img "$base" "$TMP/mnt" || { not_ok "mount the fresh image"; tap_done; exit; }
python3 - "$TMP/mnt" <<'EOF' || not_ok "populate"
import os, socket, sys
m = sys.argv[1]
def new(name):
    p = os.path.join(m, name)
    open(p, 'w').close()
    return p
p = new('sf')                                   # short form
os.setxattr(p, 'user.a', b'1'); os.setxattr(p, 'user.bb', b'22')
p = new('leaf')                                 # one leaf block
for i in range(30): os.setxattr(p, 'user.leaf%03d' % i, b'v' * 40)
p = new('node')                                 # DA node + leaves
for i in range(2000): os.setxattr(p, 'user.node%05d' % i, b'x' * 20)
for i in range(0, 2000, 7): os.removexattr(p, 'user.node%05d' % i)
p = new('rmt')                                  # a 64 KiB remote value
os.setxattr(p, 'user.big', bytes(range(256)) * 256); os.setxattr(p, 'user.small', b's')
os.symlink('short/target', os.path.join(m, 'sl_inline'))
os.symlink('t' * 1000, os.path.join(m, 'sl_remote'))
os.mkfifo(os.path.join(m, 'fifo'))
os.setxattr(os.path.join(m, 'fifo'), 'trusted.onfifo', b'yes')
os.mknod(os.path.join(m, 'chr'), 0o20644, os.makedev(1, 3))
os.mknod(os.path.join(m, 'blk'), 0o60644, os.makedev(7, 0))
s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(m, 'sock')); s.close()
for i in range(40): open(os.path.join(m, 'pad%d' % i), 'w').close()
os.mkdir(os.path.join(m, 'u')); open(os.path.join(m, 'u', 'x'), 'w').close()
EOF
declare -A I
for f in sf leaf node rmt sl_inline sl_remote fifo chr blk sock; do
	I[$f]=$(stat -c %i "$TMP/mnt/$f")
done
u_ino=$(stat -c %i "$TMP/mnt/u") ux_ino=$(stat -c %i "$TMP/mnt/u/x")	# (any AG)
unmount_dir "$TMP/mnt"
diag "inodes: $(for f in "${!I[@]}"; do printf '%s=%s ' "$f" "${I[$f]}"; done)"

fmt() { xfs_db -r -c "inode $1" -c "p core.aformat" "$base" | awk '{print $4}'; }
check "short form attr fork is local ($(fmt "${I[sf]}"))" [ "$(fmt "${I[sf]}")" = "(local)" ]
for f in leaf node rmt; do
	check "$f attr fork is in blocks ($(fmt "${I[$f]}"))" [ "$(fmt "${I[$f]}")" = "(extents)" ]
done
node_magic=$(xfs_db -r -c "inode ${I[node]}" -c "ablock 0" -c "p hdr.info.hdr.magic" "$base" | awk '{print $3}')
check "node attr fork block 0 is a DA node ($node_magic)" [ "$node_magic" = 0x3ebe ]
"$XFSX_CHECK" "$base" >"$TMP/clean.out" 2>&1; rc=$?
check "populated image is clean (exit 0, got $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/clean.out"
xfs_repair -n "$base" >/dev/null 2>&1; rc=$?
check "xfs_repair -n agrees it is clean (exit $rc)" [ $rc -eq 0 ]
# every inode here is in AG 0, where inode numbers are AG inode numbers
for f in "${!I[@]}"; do
	[ "${I[$f]}" -lt 65536 ] || { not_ok "inode of $f is outside AG 0's low range"; tap_done; exit; }
done

# 1 KiB blocks: a remote symlink over two blocks is one extent with one
# header (the kernel writes a mapping at a time), remote values have a header
# per block, a node tree two levels deep
small="$TMP/small.img"
truncate -s 320M "$small"
mkfs.xfs -q -f -b size=1024 "$small" && mount_img "$small" "$TMP/mnt" && {
	python3 - "$TMP/mnt" "$TMP/deep.ino" <<'EOF2'
import os, sys
m = sys.argv[1]
for n in (900, 1015, 1023):
    os.symlink('q' * n, os.path.join(m, 'long%d' % n))
p = os.path.join(m, 'deep'); open(p, 'w').close()
open(sys.argv[2], 'w').write(str(os.stat(p).st_ino))
for i in range(6000): os.setxattr(p, 'user.k%05d' % i, b'y' * 100)
for i in range(0, 6000, 5): os.removexattr(p, 'user.k%05d' % i)
p = os.path.join(m, 'big'); open(p, 'w').close()
os.setxattr(p, 'user.v', b'w' * 65536)
EOF2
	unmount_dir "$TMP/mnt"
}
deep_lvl=$(xfs_db -r -c "inode $(cat "$TMP/deep.ino" 2>/dev/null || echo 0)" -c "ablock 0" \
	-c "p hdr.level" "$small" 2>/dev/null | awk '{print $3}')
check "1 KiB blocks: the attr tree is two node levels deep (level ${deep_lvl:-?})" [ "${deep_lvl:-0}" = 2 ]
"$XFSX_CHECK" "$small" >"$TMP/small.out" 2>&1; rc=$?
check "1 KiB blocks: long symlinks, deep attr tree, 64 KiB value are clean (exit $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/small.out"

total=0 rep_det=0 x_det=0 extra=0
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
		not_ok "$name: xfs_repair -n reports it, xfsx_check does not"
		return
	fi
	[ $rrc -eq 0 ] && [ $xrc -eq 4 ] && extra=$((extra + 1))
	if [ "$expect" != - ] && ! grep -q "\"code\":\"$expect\"" <<<"$out"; then
		not_ok "$name: expected finding $expect (xfs_repair rc $rrc, xfsx rc $xrc)"
		grep -o '"code":"[^"]*"' <<<"$out" | sort | uniq -c | sed 's/^/# /'
		return
	fi
	ok "$name (xfs_repair rc $rrc, xfsx rc $xrc)"
}

sf=${I[sf]} leaf=${I[leaf]} node=${I[node]} rmt=${I[rmt]}
# short form
run_case "sf totsize past the fork" attr.sf_size "inode $sf" "write -d a.sfattr.hdr.totsize 300"
run_case "sf totsize short of the entries" attr.sf_entry "inode $sf" "write -d a.sfattr.hdr.totsize 10"
run_case "sf count too large" attr.sf_entry "inode $sf" "write -d a.sfattr.hdr.count 5"
run_case "sf namelen 0" attr.sf_name "inode $sf" "write -d a.sfattr.list[0].namelen 0"
run_case "sf namelen past the end" attr.sf_entry "inode $sf" "write -d a.sfattr.list[1].namelen 200"
run_case "sf two namespaces" attr.sf_flags "inode $sf" "write -d a.sfattr.list[0].root 1" \
	"write -d a.sfattr.list[0].secure 1"
# leaf block
L=("inode $leaf" "ablock 0")
run_case "leaf usedbytes+4" attr.usedbytes "${L[@]}" "write -d hdr.usedbytes $(( $(xfs_db -r -c "inode $leaf" -c "ablock 0" -c "p hdr.usedbytes" "$base" | awk '{print $3}') + 4 ))"
run_case "leaf firstused into the header" attr.firstused "${L[@]}" "write -d hdr.firstused 16"
run_case "leaf count past the name area" attr.count "${L[@]}" "write -d hdr.count 1000"
run_case "leaf owner" attr.owner "${L[@]}" "write -d hdr.info.owner 5"
run_case "leaf self address" attr.blkno "${L[@]}" "write -d hdr.info.bno 8"
run_case "leaf hash of entry 0" attr.hash "${L[@]}" "write -d entries[0].hashval 0"
run_case "leaf hash order" attr.order "${L[@]}" "write -d entries[3].hashval 0xffffffff"
run_case "leaf nameidx outside the block" attr.nameidx "${L[@]}" "write -d entries[2].nameidx 8"
run_case "leaf name length 0" attr.name "${L[@]}" "write -d nvlist[0].namelen 0"
run_case "leaf incomplete entry" attr.incomplete "${L[@]}" "write -d entries[1].incomplete 1"
run_case "leaf freemap misaligned" attr.freemap "${L[@]}" "write -d hdr.freemap[0].base 3"
run_case "leaf magic (CRC kept)" attr.magic "${L[@]}" "write -d hdr.info.hdr.magic 0x3bef"
run_case "leaf count (CRC broken)" attr.crc "${L[@]}" "fuzz -c hdr.count firstbit"
for v in zeroes ones random add sub; do
	run_case "leaf fuzz -d hdr.count $v" - "${L[@]}" "fuzz -d hdr.count $v"
	run_case "leaf fuzz -d entries[1].nameidx $v" - "${L[@]}" "fuzz -d entries[1].nameidx $v"
done
# node tree
N=("inode $node" "ablock 0")
run_case "node level" - "${N[@]}" "write -d hdr.level 3"
run_case "node key of child 0" da.hash "${N[@]}" "write -d btree[0].hashval 1"
run_case "node child pointer" - "${N[@]}" "write -d btree[1].before 0"
run_case "node count (CRC broken)" da.crc "${N[@]}" "fuzz -c hdr.count firstbit"
for v in zeroes ones random; do
	run_case "node fuzz -d btree[2].before $v" - "${N[@]}" "fuzz -d btree[2].before $v"
done
first_leaf=$(xfs_db -r -c "inode $node" -c "ablock 0" -c "p btree[0].before" "$base" | awk '{print $3}')
second_leaf=$(xfs_db -r -c "inode $node" -c "ablock 0" -c "p btree[1].before" "$base" | awk '{print $3}')
run_case "node leaf forw pointer" attr.sibling "inode $node" "ablock $first_leaf" "write -d hdr.info.hdr.forw 0"
run_case "node leaf back pointer" attr.sibling "inode $node" "ablock $second_leaf" "write -d hdr.info.hdr.back 77"
run_case "node leaf entry hash" attr.hash "inode $node" "ablock $second_leaf" "write -d entries[0].hashval 0"
# remote value
run_case "remote valueblk unmapped" attr.remote "inode $rmt" "ablock 0" "write -d nvlist[0].valueblk 100"
run_case "remote valuelen larger" - "inode $rmt" "ablock 0" "write -d nvlist[0].valuelen 70000"
run_case "remote block offset" attrrmt.offset "inode $rmt" "ablock 2" "write -d hdr.offset 0"
run_case "remote block bytes" attrrmt.bytes "inode $rmt" "ablock 3" "write -d hdr.bytes 100"
run_case "remote block owner" attrrmt.owner "inode $rmt" "ablock 1" "write -d hdr.owner 5"
run_case "remote block magic" attrrmt.magic "inode $rmt" "ablock 1" "write -d hdr.magic 0"
run_case "remote block (CRC broken)" attrrmt.crc "inode $rmt" "ablock 4" "fuzz -c hdr.bytes firstbit"
# symlinks
S=("inode ${I[sl_remote]}" "dblock 0")
run_case "remote symlink bytes" symlink.bytes "${S[@]}" "write -d bytes 900"
run_case "remote symlink offset" symlink.offset "${S[@]}" "write -d offset 10"
run_case "remote symlink owner" symlink.owner "${S[@]}" "write -d owner 5"
run_case "remote symlink self address" symlink.blkno "${S[@]}" "write -d bno 8"
run_case "remote symlink magic" symlink.magic "${S[@]}" "write -d magic 0"
run_case "remote symlink (CRC broken)" symlink.crc "${S[@]}" "fuzz -c bytes firstbit"
run_case "remote symlink core.size 999" symlink.bytes "inode ${I[sl_remote]}" "write -d core.size 999"
run_case "remote symlink core.size 1023" - "inode ${I[sl_remote]}" "write -d core.size 1023"
run_case "inline symlink core.size 0" - "inode ${I[sl_inline]}" "write -d core.size 0"
run_case "inline symlink core.size 5" - "inode ${I[sl_inline]}" "write -d core.size 5"
# special files
run_case "chr device size 100" special.size "inode ${I[chr]}" "write -d core.size 100"
run_case "blk device size 4096" special.size "inode ${I[blk]}" "write -d core.size 4096"
run_case "fifo size 1" special.size "inode ${I[fifo]}" "write -d core.size 1"
run_case "socket size 8" special.size "inode ${I[sock]}" "write -d core.size 8"
run_case "fifo nextents 1" - "inode ${I[fifo]}" "write -d core.nextents 1"
# unlinked lists (AG 0: AG inode number = inode number)
b=$((sf % 64)) other=$(((sf + 1) % 64))
free_ino=$(( (sf / 64) * 64 + 63 ))
run_case "bucket lists a linked inode" unlinked.nlink "agi 0" "write -d unlinked[$b] $sf"
run_case "inode on the wrong bucket" unlinked.bucket "inode $sf" "write -d core.nlinkv2 0" \
	"agi 0" "write -d unlinked[$other] $sf"
run_case "bucket lists a free inode" unlinked.free "agi 0" "write -d unlinked[$((free_ino % 64))] $free_ino"
run_case "inode with no links on no list" unlinked.orphan "inode $leaf" "write -d core.nlinkv2 0"
run_case "unlinked chain loops" unlinked.loop "inode $sf" "write -d core.nlinkv2 0" \
	"write -d next_unlinked $sf" "agi 0" "write -d unlinked[$b] $sf"
# a well-formed list: u/x's name removed (u's short form emptied), no
# links, on its bucket.  With a clean log nothing frees it.
ux_ag=$(xfs_db -r -c "convert ino $ux_ino agno" "$base" | awk '{print $1}')
ux_agino=$(xfs_db -r -c "convert ino $ux_ino agino" "$base" | awk '{print $1}')
run_case "a well-formed unlinked list (unlinked, never freed)" unlinked.pending \
	"inode $u_ino" "write -d u3.sfdir3.hdr.count 0" "write -d core.size 6" \
	"inode $ux_ino" "write -d core.nlinkv2 0" \
	"agi $((ux_ag))" "write -d unlinked[$((ux_agino % 64))] $((ux_agino))"
xfs_repair -n "$img" >/dev/null 2>&1; rrc=$?
codes=$("$XFSX_CHECK" -j "$img" 2>/dev/null | grep -o '"code":"[^"]*"' | sort -u | tr '\n' ' ')
[ $rrc -eq 1 ] && [ "$codes" = '"code":"unlinked.pending" ' ]
ok_if "... xfs_repair -n reports it (exit $rrc), xfsx_check only as pending ($codes)"

diag "cases: $total; xfs_repair -n detected $rep_det, xfsx_check detected $x_det" \
	"(xfsx_check only: $extra)"
tap_done
