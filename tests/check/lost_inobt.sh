#!/usr/bin/env bash
# Inode chunks beyond the inode btree (scan/phase_inobt.c, add_rmap_chunks):
# with the rmapbt on, the rmap OWN_INODES records name the chunks an inode
# btree lost, and the inode scan reads them, keeping only inodes that prove
# themselves (magic and their own number).  A kernel-populated image whose
# AG 0 inobt root is zeroed must still have every inode checked: agi.root
# and inobt.lost reported, no file called unreachable or free, a damaged
# link count in a lost chunk still found; the clean image reports nothing;
# a file's data extent relabelled OWN_INODES makes no chunk.
. "$XFSX_SRC/tests/lib.sh"

need_kernel_images "inode chunks beyond the inobt"

base="$TMP/base.img"
truncate -s 320M "$base"
mkfs.xfs -q -f -m rmapbt=1 -d agcount=2 "$base" || { not_ok "mkfs.xfs"; tap_done; exit; }
mnt="$TMP/mnt"
mount_img "$base" "$mnt" || { not_ok "mount"; tap_done; exit; }
python3 - "$mnt" <<'PY' || { not_ok "populate"; unmount_dir "$mnt"; tap_done; exit; }
import os, sys
root = sys.argv[1]
for d in range(4):
    dp = os.path.join(root, "d%d" % d)
    os.mkdir(dp)
    for i in range(400):
        with open(os.path.join(dp, "f%03d" % i), "w") as f:
            if i % 10 == 0:
                f.write("x" * 5000)
PY
unmount_dir "$mnt"

check_clean_base "$base"
checked=$(grep -o '"inodes_checked":[0-9]*' <<<"$BASE_JSON" | cut -d: -f2)
diag "clean image: ${checked:-?} inodes checked"

img="$TMP/t.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c "agi 0" -c "write -d root 0" "$img" >/dev/null 2>&1
out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
check "inobt root zeroed: xfsx_check exit 4 (got $rc)" [ $rc -eq 4 ]
check "inobt root zeroed: agi.root reported" grep -q '"code":"agi.root"' <<<"$out"
check "inobt root zeroed: inobt.lost reported" grep -q '"code":"inobt.lost"' <<<"$out"
now=$(grep -o '"inodes_checked":[0-9]*' <<<"$out" | cut -d: -f2)
check "inobt root zeroed: every inode still checked (${now:-?} of ${checked:-?})" \
	[ "${now:-none}" = "${checked:-unknown}" ]
for code in inode.unreachable inode.nlink dir.ino inode.free inobt.freemask unlinked.orphan; do
	check "inobt root zeroed: no $code" bash -c "! grep -q '\"code\":\"$code\"' <<<'$out'"
done

# a link count damaged in a chunk only the rmapbt still knows
ino=$(xfs_db -r -c 'path /d0/f005' -c 'inode' "$base" 2>/dev/null | awk '/current inode number/ {print $5}')
ag0=$(xfs_db -r -c "convert ino ${ino:-0} agno" "$base" 2>/dev/null | awk '{print $1}')
check "the damaged file's inode is in AG 0 (inode ${ino:-?}, AG ${ag0:-?})" [ "${ag0:-x}" = "0x0" ]
xfs_db -x -c "inode $ino" -c "write -d core.nlinkv2 7" "$img" >/dev/null 2>&1
out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
check "and a file's nlink set to 7: exit 4 (got $rc)" [ $rc -eq 4 ]
check "and a file's nlink set to 7: inode.nlink for inode $ino" \
	grep -q "\"code\":\"inode.nlink\",[^}]*\"ino\":$ino," <<<"$out"

# a hostile rmap record: a file's data extent relabelled OWN_INODES (owner -7)
# must not make a chunk of it (its blocks hold no inodes), nor a finding
# the relabelling does not explain
cp --sparse=always "$base" "$img"
leaf=$(xfs_db -r -c "agf 0" -c "addr rmaproot" -c "p level" "$img" 2>/dev/null | awk '{print $3}')
cmds=(-c "agf 0" -c "addr rmaproot")
while [ "${leaf:-0}" -gt 0 ]; do
	n=$(xfs_db -r "${cmds[@]}" -c "p numrecs" "$img" 2>/dev/null | awk '{print $3}')
	cmds+=(-c "addr ptrs[$n]")
	leaf=$((leaf - 1))
done
n=$(xfs_db -r "${cmds[@]}" -c "p numrecs" "$img" 2>/dev/null | awk '{print $3}')
bno=$(xfs_db -r "${cmds[@]}" -c "p bno" "$img" 2>/dev/null | awk '{print $3}')
rec=$(xfs_db -r "${cmds[@]}" -c "p recs[$n]" "$img" 2>/dev/null | tail -1)
owner=$(sed 's/.*:\[\([^]]*\)\]/\1/' <<<"$rec" | cut -d, -f3)
diag "last rmap record of AG 0: $rec (leaf at daddr ${bno:-?})"
if [ -n "$bno" ] && [ -n "$n" ] && [ "${owner:-0}" -gt 0 ] 2>/dev/null; then
	# short btree block header 56 bytes, records of 24: owner at +8, offset at +16
	printf '\xff\xff\xff\xff\xff\xff\xff\xf9\0\0\0\0\0\0\0\0' |
		dd of="$img" bs=1 seek=$((bno * 512 + 56 + (n - 1) * 24 + 8)) conv=notrunc status=none
	xfs_db -x "${cmds[@]}" -c "crc -r" "$img" >/dev/null 2>&1
	out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
	check "data relabelled OWN_INODES: exit 4 (got $rc)" [ $rc -eq 4 ]
	check "data relabelled OWN_INODES: rmap.extra reported" grep -q '"code":"rmap.extra"' <<<"$out"
	for code in inobt.lost inode.magic inode.crc inode.unreachable; do
		check "data relabelled OWN_INODES: no $code" bash -c "! grep -q '\"code\":\"$code\"' <<<'$out'"
	done
	now=$(grep -o '"inodes_checked":[0-9]*' <<<"$out" | cut -d: -f2)
	check "data relabelled OWN_INODES: the same inodes checked (${now:-?})" \
		[ "${now:-none}" = "${checked:-unknown}" ]
else
	not_ok "no file data record at the end of AG 0's rmapbt to relabel ($rec)"
fi
tap_done
