# SPDX-License-Identifier: GPL-2.0
# Shared by tests/log/attri*.sh: the base image, xattr dumps, the expected
# result of a sequence of xattr ops, and the xfsx_bulkstat comparison of the
# kernel's copy with ours.  Source after tests/lib.sh and log_lib.sh.
W="$XFSX_SRC/tests/log/attriwrite.py"

# xa_dump FILE: every xattr of FILE as JSON {name: md5 of value}
xa_dump() {
	python3 - "$1" <<'PY'
import hashlib, json, os, sys
p = sys.argv[1]
print(json.dumps({n: hashlib.md5(os.getxattr(p, n)).hexdigest() for n in sorted(os.listxattr(p))}, sort_keys=True))
PY
}
# xa_expect BEFORE_JSON OP PREFIX NAME VLEN [OP PREFIX NAME VLEN...]: what the
# ops leave, in order (the kernel's rules: set creates or replaces, replace
# replaces, remove removes; the value is attriwrite's pattern)
xa_expect() {
	python3 - "$@" <<'PY'
import hashlib, json, sys
d = json.loads(sys.argv[1]); a = sys.argv[2:]
for k in range(0, len(a), 4):
    op, n, vlen = int(a[k]), a[k + 1] + "." + a[k + 2], int(a[k + 3])
    if op == 2:
        d.pop(n, None)
    else:
        d[n] = hashlib.md5(bytes((i * 7 + 3) & 0xFF for i in range(vlen))).hexdigest()
print(json.dumps(d, sort_keys=True))
PY
}

# bs_compare A B BASE: xfsx_bulkstat of A and B equal but for two things the
# oracle cannot share.  ctime: the kernel's short form add stamps it with the
# time of the recovery (xfs_attr_try_sf_addname), ours with the repair's, so
# it must have changed from BASE in B exactly where it did in A.  aextents:
# the kernel inserts into the leaf blocks it has, the repair re-encodes the
# fork into new blocks, so a leaf fork's extent count may differ (its block
# count may not).
bs_compare() {
	python3 - "$@" <<'PY'
import json, sys
def load(p):
    return {d["ino"]: d for d in map(json.loads, open(p))}
a, b, base = (load(p) for p in sys.argv[1:4])
bad, stamped, ext = [], 0, 0
if sorted(a) != sorted(b):
    bad.append("inode sets differ")
for ino in sorted(set(a) & set(b)):
    x, y, z = a[ino], b[ino], base.get(ino, {})
    for k in sorted(set(x) | set(y)):
        if k in ("ctime", "ctime_nsec"):
            ca, cb, c0 = (x["ctime"], x["ctime_nsec"]), (y["ctime"], y["ctime_nsec"]), (z.get("ctime"), z.get("ctime_nsec"))
            if (ca != c0) != (cb != c0):
                bad.append("inode %d: ctime changed in %s only" % (ino, "A" if ca != c0 else "B"))
            elif k == "ctime" and ca != c0:
                stamped += 1
        elif k == "aextents" and x.get(k) != y.get(k):
            ext += 1
        elif x.get(k) != y.get(k):
            bad.append("inode %d: %s %s vs %s" % (ino, k, x.get(k), y.get(k)))
print("\n".join(bad) if bad else "%d inodes; ctime stamped in both: %d; attr extent counts differing: %d" % (len(a), stamped, ext))
sys.exit(1 if bad else 0)
PY
}

# bulkstat_equal NAME A B: one test line, xfsx_bulkstat of A (the kernel's
# recovery) and B (ours) equal as bs_compare says, against $TMP/base.bs
bulkstat_equal() {
	local out
	"$XFSX_BULKSTAT" "$2" >"$TMP/a.bs" 2>&1
	"$XFSX_BULKSTAT" "$3" >"$TMP/b.bs" 2>&1
	if out=$(bs_compare "$TMP/a.bs" "$TMP/b.bs" "$TMP/base.bs"); then
		ok "$1: xfsx_bulkstat of A and B equal ($out)"
	else
		not_ok "$1: xfsx_bulkstat of A and B equal"
		printf '%s\n' "$out" | head -6 | cut -c1-300 | sed 's/^/#   /'
	fi
}

# trees_equal NAME A B [FILE EXPECTED]: one test line, every inode's xattrs
# (tree.py: paths, modes, contents, every xattr's value) of A and B equal,
# both mounted read-only; with FILE, B's xattrs of FILE dump as EXPECTED
trees_equal() {
	local ok=1
	if mount_img "$2" "$TMP/ma" ro && mount_img "$3" "$TMP/mb" ro,nouuid; then
		python3 "$TREE" "$TMP/ma" >"$TMP/a.tree"
		python3 "$TREE" "$TMP/mb" >"$TMP/b.tree"
		cmp -s "$TMP/a.tree" "$TMP/b.tree" || ok=0
		[ $# -lt 4 ] || [ "$(xa_dump "$TMP/mb/$4")" = "$5" ] || ok=0
		if [ $ok = 1 ]; then
			ok "$1: trees and xattrs of A and B equal ($(wc -l <"$TMP/a.tree") paths)"
		else
			not_ok "$1: trees and xattrs of A and B equal"
			diff "$TMP/a.tree" "$TMP/b.tree" | head -6 | cut -c1-200 | sed 's/^/#   /'
		fi
	else
		not_ok "$1: both copies mount read-only"
	fi
	umount "$TMP/ma" 2>/dev/null
	umount "$TMP/mb" 2>/dev/null
}

# the base: files with no xattr, a short form fork, a leaf fork; one with data;
# for the data forks the fetch of an intent's inode checks (attri_edge.sh): a
# short form directory, an inline symlink, a file whose extents need a btree
BASE="$TMP/base.img"
truncate -s 300M "$BASE"
mkfs.xfs -q -f "$BASE" >/dev/null 2>&1 || { not_ok "mkfs.xfs made the base"; tap_done; exit; }
mount_img "$BASE" "$M" || { not_ok "mounted the base"; tap_done; exit; }
touch "$M/none" "$M/sf" "$M/leaf" "$M/one"
head -c 100000 /dev/urandom >"$M/data"
python3 - "$M" <<'PY'
import os, sys
m = sys.argv[1]
for i in range(1, 3):
    os.setxattr(m + "/sf", "user.k%d" % i, b"v%d" % i)
os.setxattr(m + "/sf", "trusted.t0", b"tv")
os.setxattr(m + "/one", "user.only", b"o" * 20)
for i in range(80):
    os.setxattr(m + "/leaf", "user.leafname%03d" % i, b"x" * 40)
PY
mkdir "$M/d" && touch "$M/d/a" "$M/d/b"
ln -s none "$M/sl"
# one extent every other block: more than the inode's fork holds
bt_cmds=()
for i in $(seq 0 2 100); do bt_cmds+=(-c "pwrite -q $((i * 4096)) 4096"); done
xfs_io -f "${bt_cmds[@]}" "$M/bt"
declare -A INO BEFORE
for f in none sf leaf one data d sl bt; do
	INO[$f]=$(stat -c %i "$M/$f")
done
for f in none sf leaf one data; do
	BEFORE[$f]=$(xa_dump "$M/$f")
done
umount "$M"
xfs_repair -n "$BASE" >/dev/null 2>&1
check "base: xfs_repair -n clean" [ $? -eq 0 ]
"$XFSX_BULKSTAT" "$BASE" >"$TMP/base.bs" 2>&1

