#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "Fixed" means the result was verified (repair/verify.c): xfsx_repair runs
# the scan over its planned result before the first write.  On an image
# made by xfsx_mkfs -p (no kernel needed):
#  - damage it fixes: every finding "fixed", --json's "verified" true,
#    "introduced" 0, "after" empty, and xfsx_check / xfs_repair -n agree;
#  - a plan made faulty by a test switch (XFSX_TEST_FAULT=plan-new-finding:
#    the root's link count raised in a dirty buffer): the result's new
#    problem is listed as "new", every finding stays "left", exit 4, and
#    the image is byte-identical (with -n too);
#  - an inode nothing shows to be one (magic, number and UUID gone): listed
#    as "cleared ... its data is lost" with its path (--json "cleared"),
#    never as a field fix, and Debian xfs_repair loses it too;
#  - a CRC-bad inode whose map covers another file's blocks: the first plan
#    keeps it and its result has new problems on it, so the plan is made
#    again with it cleared; the other file is kept, as xfs_repair keeps it;
#  - remote symlinks whose block headers are damaged (a 2-block extent under
#    one header, and one block) keep their targets;
#  - a btree-format file whose root key is damaged: the key is set from its
#    child, the file keeps its data;
#  - a clean image: nothing planned, nothing judged ("verified" false).
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "verified repairs"
have_xfsprogs || { skip "verified repairs" "xfsprogs not installed"; tap_done; exit; }

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[int(k)] if isinstance(d,list) else d[k]
print(json.dumps(d) if isinstance(d,(dict,list,bool)) or d is None else d)' "$@"; }

src="$TMP/src"
mkdir -p "$src/d" "$src/e"
for i in $(seq 1 40); do echo "file $i" >"$src/d/f$i"; done
head -c 200000 /dev/urandom >"$src/victim"
head -c 100000 /dev/urandom >"$src/e/big"
base="$TMP/base.img"
truncate -s 512M "$base"
"$XFSX_MKFS" -q -p "$src" "$base" >/dev/null 2>&1
check "xfsx_mkfs -p made the base image" "$XFSX_CHECK" -q "$base"

# 1. a fix that verifies
img="$TMP/a.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c 'agf 1' -c 'addr bnoroot' -c 'write -d magic 0' "$img" >/dev/null 2>&1
"$XFSX_REPAIR" --json "$img" >"$TMP/a.json" 2>"$TMP/a.err"; rc=$?
check "bnobt root damaged: repair exit 1 (got $rc)" [ $rc -eq 1 ]
check "bnobt root damaged: --json verified true" [ "$(jget "$TMP/a.json" summary.verified)" = true ]
check "bnobt root damaged: nothing introduced" [ "$(jget "$TMP/a.json" summary.introduced)" = 0 ]
check "bnobt root damaged: the scan of the result found nothing" [ "$(jget "$TMP/a.json" after)" = "[]" ]
python3 - "$TMP/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f["code"] for f in d["findings"] if not f["fixed"]]
sys.exit(1 if bad or not d["findings"] else 0)
PY
ok_if "bnobt root damaged: every finding fixed"
after_repair "$img" "bnobt root damaged"

# 2. a faulty plan is caught before the first write
img="$TMP/b.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c 'agf 1' -c 'addr bnoroot' -c 'write -d magic 0' "$img" >/dev/null 2>&1
s1=$(img_sha "$img")
XFSX_TEST_FAULT=plan-new-finding "$XFSX_REPAIR" -n "$img" >"$TMP/bn.out" 2>"$TMP/bn.err"; rc=$?
check "faulty plan, -n: exit 4 (got $rc)" [ $rc -eq 4 ]
check "faulty plan, -n: the new problem is listed" grep -q '^new .*inode.nlink.* inode 128' "$TMP/bn.out"
check "faulty plan, -n: no finding said to be fixed" bash -c "! grep -q '^would fix' '$TMP/bn.out'"
check "faulty plan, -n: says a repair would write nothing" grep -q 'a repair would write nothing' "$TMP/bn.err"
XFSX_TEST_FAULT=plan-new-finding "$XFSX_REPAIR" --json "$img" >"$TMP/b.json" 2>"$TMP/b.err"; rc=$?
s2=$(img_sha "$img")
check "faulty plan: exit 4 (got $rc)" [ $rc -eq 4 ]
check "faulty plan: the image is byte-identical" [ "$s1" = "$s2" ]
check "faulty plan: --json introduced 1" [ "$(jget "$TMP/b.json" summary.introduced)" = 1 ]
python3 - "$TMP/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fixed = [f for f in d["findings"] if f["fixed"]]
new = [f for f in d["after"] if f["new"]]
sys.exit(1 if fixed or len(new) != 1 or new[0]["code"] != "inode.nlink" else 0)
PY
ok_if "faulty plan: no finding fixed, one new (inode.nlink)"
check "faulty plan: says nothing was written" grep -q 'nothing was written' "$TMP/b.err"
XFSX_TEST_FAULT=plan-bad-block "$XFSX_REPAIR" "$img" >"$TMP/bb.out" 2>"$TMP/bb.err"; rc=$?
s2=$(img_sha "$img")
[ $rc -eq 4 ] && ! grep -q BUG "$TMP/bb.out" "$TMP/bb.err"
ok_if "plan with a block failing its verifier: exit 4, no BUG (got $rc)"
check "plan with a block failing its verifier: listed as new (inode.magic)" \
	grep -q '^new .*inode.magic.* inode 128' "$TMP/bb.out"
check "plan with a block failing its verifier: the image is byte-identical" [ "$s1" = "$s2" ]
"$XFSX_REPAIR" "$img" >/dev/null 2>&1; rc=$?
check "without the fault the same image is repaired (exit $rc)" [ $rc -eq 1 ]

# 3. data lost is said as such
img="$TMP/c.img"
cp --sparse=always "$base" "$img"
ino=$(xfs_db -r -c 'path /victim' -c 'print core.magic v3.inumber' "$img" 2>/dev/null | awk '/v3.inumber/ {print $3}')
xfs_db -x -c 'path /victim' -c 'write -d core.magic 0' -c 'write -d v3.inumber 0' \
	-c 'write -d v3.uuid 00000000-0000-0000-0000-000000000000' "$img" >/dev/null 2>&1
cp --sparse=always "$img" "$TMP/c-xfs.img"
"$XFSX_REPAIR" "$img" >"$TMP/c.out" 2>&1; rc=$?
check "identity gone: repair exit 1 (got $rc)" [ $rc -eq 1 ]
check "identity gone: 'cleared inode $ino (/victim) ... data is lost'" \
	grep -q "^cleared   inode $ino (/victim): .*data is lost" "$TMP/c.out"
check "identity gone: the summary counts it" grep -q '1 inode(s) in use could not be mended' "$TMP/c.out"
cp --sparse=always "$TMP/c-xfs.img" "$TMP/c2.img"
"$XFSX_REPAIR" -n --json "$TMP/c2.img" >"$TMP/c.json" 2>/dev/null
check "identity gone: --json cleared names /victim" \
	[ "$(jget "$TMP/c.json" cleared.0.path)" = /victim ]
after_repair "$img" "identity gone"
xfs_repair "$TMP/c-xfs.img" >"$TMP/c-xfs.out" 2>&1
xfs_db -r -c 'path /victim' "$TMP/c-xfs.img" >"$TMP/c-xfs.db" 2>&1
check "identity gone: Debian xfs_repair clears it too" grep -q 'No such file' "$TMP/c-xfs.db"

# 4. a kept inode whose result brings in problems is planned again cleared:
# /victim's core with a bad CRC maps /e/big's blocks
img="$TMP/e.img"
cp --sparse=always "$base" "$img"
big=$(xfs_db -r -c 'path /e/big' -c 'print u3.bmx[0].startblock' "$img" | awk '{print $3}')
xfs_db -x -c 'path /victim' -c "write -c u3.bmx[0].startblock $big" "$img" >/dev/null 2>&1
cp --sparse=always "$img" "$TMP/e-xfs.img"
"$XFSX_REPAIR" "$img" >"$TMP/e.out" 2>&1; rc=$?
check "CRC-bad inode mapping another file's blocks: repair exit 1 (got $rc)" [ $rc -eq 1 ]
check "CRC-bad inode mapping another file's blocks: nothing left new" bash -c "! grep -q '^new' '$TMP/e.out'"
after_repair "$img" "CRC-bad inode mapping another file's blocks"
xfs_repair "$TMP/e-xfs.img" >/dev/null 2>&1
if have_loop_xfs; then
	# files_md5 IMG: "path md5" of every regular file the kernel reads, sorted
	files_md5() {
		mkdir -p "$TMP/fm"
		mount -t xfs -o ro,nouuid "$1" "$TMP/fm" || return 1
		_MOUNTS+=("$TMP/fm")
		(cd "$TMP/fm" && find . -type f -print0 | sort -z | xargs -0 -r md5sum)
		umount "$TMP/fm"
	}
	files_md5 "$img" >"$TMP/e.ours"
	files_md5 "$TMP/e-xfs.img" >"$TMP/e.theirs"
	check "CRC-bad inode mapping another file's blocks: /e/big kept with its contents" \
		grep -q "$(md5sum <"$src/e/big" | cut -d' ' -f1)  ./e/big" "$TMP/e.ours"
	check "CRC-bad inode mapping another file's blocks: every file xfs_repair keeps is kept" \
		bash -c "[ -z \"\$(comm -13 '$TMP/e.ours' '$TMP/e.theirs')\" ]"
else
	skip "CRC-bad inode mapping another file's blocks: files kept" "needs root and a loop device"
fi

# 5. remote symlinks whose block headers are damaged keep their targets
# (repair/symlinks.c): one 2-block extent under one header (1 KiB blocks, a
# 1000-byte target) and one block; magic zeroed in both
ssrc="$TMP/ssrc"
mkdir -p "$ssrc"
long=$(printf 't%.0s' $(seq 1 1000)); short=$(printf 'u%.0s' $(seq 1 600))
ln -s "$long" "$ssrc/ll"
ln -s "$short" "$ssrc/ls"
img="$TMP/s.img"
truncate -s 512M "$img"
"$XFSX_MKFS" -q -b size=1024 -p "$ssrc" "$img" >/dev/null 2>&1
check "1 KiB-block image with remote symlinks: the 1000-byte one is one 2-block extent" \
	bash -c "xfs_db -r -c 'path /ll' -c 'print u3' '$img' | grep -q '0:\[0,[0-9]*,2,0\]'"
xfs_db -x -c 'path /ll' -c 'dblock 0' -c 'write -d magic 0' -c 'path /ls' -c 'dblock 0' \
	-c 'write -d magic 0' "$img" >/dev/null 2>&1
"$XFSX_CHECK" "$img" >"$TMP/s.chk" 2>&1
check "remote symlink headers damaged: check finds both" \
	[ "$(grep -c 'symlink.magic' "$TMP/s.chk")" -ge 2 ]
"$XFSX_REPAIR" "$img" >"$TMP/s.out" 2>&1; rc=$?
check "remote symlink headers damaged: repair exit 1 (got $rc)" [ $rc -eq 1 ]
check "remote symlink headers damaged: nothing cleared" bash -c "! grep -q '^cleared' '$TMP/s.out'"
after_repair "$img" "remote symlink headers damaged"
if have_loop_xfs; then
	mkdir -p "$TMP/sm"
	if mount -t xfs -o ro,nouuid "$img" "$TMP/sm"; then
		_MOUNTS+=("$TMP/sm")
		check "remote symlink headers damaged: the 1000-byte target is read back whole" \
			[ "$(readlink "$TMP/sm/ll")" = "$long" ]
		check "remote symlink headers damaged: the 600-byte target is read back whole" \
			[ "$(readlink "$TMP/sm/ls")" = "$short" ]
		umount "$TMP/sm"
	else
		not_ok "remote symlink headers damaged: the kernel mounts the result"
	fi
else
	skip "remote symlink headers damaged: targets read back" "needs root and a loop device"
fi

# 6. a btree-format file whose root key is damaged keeps its data: the key
# is set from its child's first key (repair/bmbt_keys.c), as xfs_repair keeps it
if have_loop_xfs; then
	img="$TMP/k.img"
	truncate -s 512M "$img"
	"$XFSX_MKFS" -q -b size=1024 "$img" >/dev/null 2>&1
	mkdir -p "$TMP/km"
	if mount -t xfs -o nouuid "$img" "$TMP/km"; then
		_MOUNTS+=("$TMP/km")
		# every other block written: one extent each, a bmbt of two leaves or more
		for i in $(seq 0 2 400); do
			xfs_io -f -c "pwrite -q $((i * 1024)) 1024" "$TMP/km/frag"
		done
		sync -f "$TMP/km"
		want=$(md5sum <"$TMP/km/frag" | cut -d' ' -f1)
		umount "$TMP/km"
		xfs_db -x -c 'path /frag' -c 'write -d u3.bmbt.keys[2].startoff 1' "$img" >/dev/null 2>&1
		"$XFSX_CHECK" "$img" >"$TMP/k.chk" 2>&1
		check "bmbt root key damaged: check finds it (bmbt.key)" grep -q 'bmbt.key' "$TMP/k.chk"
		"$XFSX_REPAIR" "$img" >"$TMP/k.out" 2>&1; rc=$?
		check "bmbt root key damaged: repair exit 1 (got $rc)" [ $rc -eq 1 ]
		check "bmbt root key damaged: nothing cleared" bash -c "! grep -q '^cleared' '$TMP/k.out'"
		after_repair "$img" "bmbt root key damaged"
		mount -t xfs -o ro,nouuid "$img" "$TMP/km" && {
			got=$(md5sum <"$TMP/km/frag" | cut -d' ' -f1)
			umount "$TMP/km"
		}
		check "bmbt root key damaged: the file reads back as written" [ "${got:-}" = "$want" ]
	else
		not_ok "bmbt root key damaged: the kernel mounts the image"
	fi
else
	skip "bmbt root key damaged" "needs root and a loop device"
fi

# 7. nothing to do: nothing judged
"$XFSX_REPAIR" --json "$base" >"$TMP/d.json" 2>/dev/null; rc=$?
check "clean image: exit 0 (got $rc)" [ $rc -eq 0 ]
check "clean image: verified false (nothing planned)" [ "$(jget "$TMP/d.json" summary.verified)" = false ]
tap_done
