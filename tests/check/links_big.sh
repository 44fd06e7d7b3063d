#!/usr/bin/env bash
# Link counts and references past 16 bits (scan/links.h keeps both in 16
# bits a slot, 65,535 and more in a side table): a kernel-populated image
# with a file of 66,001 hard links (one directory of 66,000 names and its
# first name) and a directory of 66,000 subdirectories (link count
# 66,002) checks clean, as xfs_repair -n says; each link count set wrong
# with xfs_db is reported as inode.nlink with the right count (66,001 and
# 66,002 references), as xfs_repair -n reports it; xfsx_repair sets both
# and the result is clean for both tools.
. "$XFSX_SRC/tests/lib.sh"

need_kernel_images "link counts past 16 bits"
XFSX_REPAIR=${XFSX_REPAIR:-$XFSX_BUILD/repair/xfsx_repair}
N=66000

base="$TMP/base.img"
truncate -s 1G "$base"
mkfs.xfs -q -f -d agcount=2 "$base" || { not_ok "mkfs.xfs"; tap_done; exit; }
mnt="$TMP/mnt"
mount_img "$base" "$mnt" || { not_ok "mount"; tap_done; exit; }
python3 - "$mnt" "$N" <<'PY' || { not_ok "populate"; unmount_dir "$mnt"; tap_done; exit; }
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
f = os.path.join(root, "f")
open(f, "w").close()
os.mkdir(os.path.join(root, "links"))
for i in range(n):
    os.link(f, os.path.join(root, "links", "l%05d" % i))
os.mkdir(os.path.join(root, "dirs"))
for i in range(n):
    os.mkdir(os.path.join(root, "dirs", "d%05d" % i))
PY
unmount_dir "$mnt"

check_clean_base "$base"
fino=$(xfs_db -r -c 'path /f' -c 'p core.nlinkv2' "$base" | awk '{print $3}')
dino=$(xfs_db -r -c 'path /dirs' -c 'p core.nlinkv2' "$base" | awk '{print $3}')
check "the file has $((N + 1)) links (xfs_db: $fino)" [ "$fino" = $((N + 1)) ]
check "the directory has link count $((N + 2)) (xfs_db: $dino)" [ "$dino" = $((N + 2)) ]

img="$TMP/t.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c 'path /f' -c "write core.nlinkv2 $((N + 7))" -c 'path /dirs' -c 'write core.nlinkv2 70000' \
	"$img" >/dev/null 2>&1
xfs_repair -n "$img" >"$TMP/rn" 2>&1; rc=$?
check "wrong link counts: xfs_repair -n reports them (exit $rc)" [ $rc -ne 0 ]
out=$("$XFSX_CHECK" -j "$img" 2>/dev/null); rc=$?
check "wrong link counts: xfsx_check exit 4 (got $rc)" [ $rc -eq 4 ]
n=$(grep -o '"code":"inode.nlink"' <<<"$out" | wc -l)
check "two inode.nlink findings (got $n)" [ "$n" -eq 2 ]
check "the file: link count $((N + 7)), $((N + 1)) references" \
	grep -q "has link count $((N + 7)), directories reference it $((N + 1)) times" <<<"$out"
check "the directory: link count 70000, $((N + 2)) wanted" \
	grep -q "has link count 70000, directories reference it $((N + 2)) times" <<<"$out"

"$XFSX_REPAIR" "$img" >"$TMP/rep" 2>&1; rc=$?
sed 's/^/# /' "$TMP/rep" | tail -4
check "xfsx_repair sets them (exit $rc, 1: repaired)" [ $rc -eq 1 ]
fino=$(xfs_db -r -c 'path /f' -c 'p core.nlinkv2' "$img" | awk '{print $3}')
dino=$(xfs_db -r -c 'path /dirs' -c 'p core.nlinkv2' "$img" | awk '{print $3}')
check "repaired: the file's link count is $((N + 1)) (got $fino)" [ "$fino" = $((N + 1)) ]
check "repaired: the directory's link count is $((N + 2)) (got $dino)" [ "$dino" = $((N + 2)) ]
"$XFSX_CHECK" "$img" >/dev/null 2>&1; rc=$?
check "repaired: xfsx_check exit 0 (got $rc)" [ $rc -eq 0 ]
xfs_repair -n "$img" >/dev/null 2>&1; rc=$?
check "repaired: xfs_repair -n clean (exit $rc)" [ $rc -eq 0 ]
tap_done
