#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Filesystems repaired by Debian xfs_repair are clean.
# xfs_repair rewrites AG headers outside the log and stamps the AGFL with
# LSN NULLCOMMITLSN (all ones), which the kernel accepts by rule.  Each case
# builds a populated image with mkfs.xfs -p (no kernel needed), damages it
# with xfs_db in one way, requires xfs_repair -n to see the damage, repairs
# it with xfs_repair, requires xfs_repair -n to accept the result, and then
# xfsx_check must report no finding at all.
. "$XFSX_SRC/tests/lib.sh"

if ! have_xfsprogs; then
	skip "repaired images are clean" "xfsprogs (mkfs.xfs, xfs_db, xfs_repair) not installed"
	tap_done
	exit
fi

# a small tree as a protofile: files, a symlink, nested and larger directories
src="$TMP/src"
mkdir -p "$src"
for i in $(seq 1 30); do echo "file $i" >"$src/f$i"; done
head -c 1310720 /dev/zero | tr '\0' 'x' >"$src/data"
{
	echo /dev/null; echo "0 0"; echo "d--755 0 0"
	for i in $(seq 1 30); do echo "f$i ---644 0 0 $src/f$i"; done
	echo "link l--777 0 0 f1"
	echo "d1 d--755 0 0"
	echo "data ---644 0 0 $src/data"
	echo "d2 d--755 0 0"; echo "x ---644 0 0 $src/f2"; echo '$'
	echo '$'
	echo "big d--755 0 0"
	for i in $(seq 1 300); do echo "entry_with_a_long_name_$i ---644 0 0 $src/f3"; done
	echo '$'
	echo '$'
} >"$TMP/tree.proto"
base="$TMP/base.img"
truncate -s 512m "$base"
if ! mkfs.xfs -f -q -p "$TMP/tree.proto" "$base" >"$TMP/mkfs.out" 2>&1; then
	not_ok "mkfs.xfs -p made the base image"; sed 's/^/# /' "$TMP/mkfs.out"; tap_done; exit
fi
ino_of() { xfs_db -r -c "ls $1" "$base" 2>/dev/null | awk -v n="$2" '$NF == "(good)" && $(NF-1) == n {print $2}'; }
d1=$(ino_of / d1)
f1=$(ino_of / f1)
big=$(ino_of / big)
data=$(ino_of /d1 data)
rc=0; "$XFSX_CHECK" -q "$base" || rc=$?
check "base image is clean (exit $rc)" [ $rc -eq 0 ]

# repaired NAME XFS_DB_COMMANDS...
repaired() {
	local name=$1 img="$TMP/r.img" rc args=() c; shift
	cp --sparse=always "$base" "$img"
	for c in "$@"; do args+=(-c "$c"); done
	xfs_db -x "${args[@]}" "$img" >/dev/null 2>&1
	rc=0; xfs_repair -n "$img" >/dev/null 2>&1 || rc=$?
	check "$name: xfs_repair -n sees the damage (exit $rc)" [ $rc -ne 0 ]
	rc=0; xfs_repair "$img" >"$TMP/repair.out" 2>&1 || rc=$?
	check "$name: xfs_repair repaired it (exit $rc)" [ $rc -eq 0 ]
	rc=0; xfs_repair -n "$img" >/dev/null 2>&1 || rc=$?
	check "$name: xfs_repair -n accepts the result (exit $rc)" [ $rc -eq 0 ]
	rc=0; "$XFSX_CHECK" --json "$img" >"$TMP/r.json" 2>"$TMP/r.err" || rc=$?
	check "$name: xfsx_check exit 0 (got $rc)" [ $rc -eq 0 ]
	if grep -q '"findings":\[\]' "$TMP/r.json"; then
		ok "$name: xfsx_check reports no finding"
	else
		not_ok "$name: xfsx_check reports no finding"
		python3 -c 'import json,sys; [print("#", f["code"], f["ag"], f["message"]) for f in json.load(open(sys.argv[1]))["findings"][:10]]' "$TMP/r.json" 2>/dev/null
	fi
	# xfs_repair rebuilt the AG headers: the AGFL carries NULLCOMMITLSN
	local lsn; lsn=$(xfs_db -r -c 'agfl 0' -c 'print lsn' "$img" 2>/dev/null | awk '{print $3}')
	check "$name: AGFL 0 LSN after repair is NULLCOMMITLSN ($lsn)" [ "$lsn" = 0xffffffffffffffff ]
}

repaired "directory inode cleared (its children go to lost+found)" "inode $d1" 'write -d core.mode 0'
repaired "root link count wrong" 'inode 128' 'write -d core.nlinkv2 9'
repaired "file inode magic destroyed" "inode $f1" 'write -d core.magic 0'
repaired "AGF and AGI counters wrong" 'agf 1' 'write -d freeblks 5' 'agi 2' 'write -d count 999'
repaired "primary superblock magic and fdblocks" 'sb 0' 'write -d magicnum 0' 'write -d fdblocks 3'
repaired "superblock icount wrong" 'sb 0' 'write -d icount 5'
repaired "large directory's inode size wrong" "inode $big" 'write -d core.size 1'
repaired "file extent points past the AG" "inode $data" 'write -d u3.bmx[0].startblock 999999999'
repaired "free space btree root lost" 'agf 0' 'write -d bnoroot 0'
repaired "inode btree root lost" 'agi 1' 'write -d root 0'
tap_done
