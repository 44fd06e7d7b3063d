#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Vote on the superblock first: a
# damaged primary superblock is judged against the secondaries and the
# geometry before anything trusts it.  On an xfsx_mkfs image the kernel
# filled, each damage of sb 0 gives xfsx_check exit 4 with an sb.* finding
# (never 8), ONE xfsx_repair run exit 1, then the oracle (after_repair),
# and: the log's blocks are not free space (every AGF's freeblks as on the
# undamaged image), every file is kept (path and md5, through a read-only
# mount), the rmapbt/reflink/finobt features are still on.  An unknown
# compat bit is kept and mounts.  Then field by field: every field of sb 0
# that xfs_db prints, fuzzed on a copy; on a twin copy Debian's xfs_repair;
# xfsx must never be worse (one-run clean, files kept).  CI runs a sample;
# XFSX_SB_TRUST_FULL=1 runs every field with every verb.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"

need_repair "superblock vote"
need_kernel_images "superblock vote"

base="$TMP/base.img"
mnt="$TMP/mnt"
mkdir -p "$mnt"
truncate -s 1g "$base"
"$XFSX_MKFS" -q "$base" || { not_ok "xfsx_mkfs"; tap_done; exit; }
mount_img "$base" "$mnt" || { not_ok "mount the new image"; tap_done; exit; }
(
	cd "$mnt" || exit 1
	mkdir -p d1/sub d2 d3
	for i in $(seq 50); do echo "file $i" >d1/f$i; done
	for i in $(seq 300); do echo "entry $i" >d2/a_longer_name_for_a_leaf_directory_$i; done
	head -c 300000 /dev/urandom >r && ln r r2
	head -c 5000000 /dev/urandom >d1/sub/big
	cp --reflink=always d1/sub/big d3/big.clone
	ln -s d1/f1 sym
	setfattr -n user.k -v v d1/f2 2>/dev/null
	true
) || not_ok "populate the image"
umount "$mnt"
check_clean_base "$base"

# listing IMG OUT: every path with its type, regular files with their md5
# (a read-only mount); empty when the kernel cannot mount it
listing() {
	: >"$2"
	mount -t xfs -o ro,nouuid "$1" "$mnt" 2>/dev/null || return 1
	_MOUNTS+=("$mnt")
	(cd "$mnt" && find . -path ./lost+found -prune -o -printf '%y %p\n' | sort >"$2.t" &&
		find . -path ./lost+found -prune -o -type f -print0 | sort -z | xargs -0 -r md5sum >>"$2.t")
	sort "$2.t" >"$2"
	umount "$mnt"
}
# kept LIST: how many of the base listing's lines LIST holds
kept() { comm -12 "$TMP/base.list" "$1" | wc -l; }
# freeblks IMG: every AGF's free block count
freeblks() {
	local a n args=()
	n=$(xfs_db -r -c 'sb 0' -c 'print agcount' "$base" | awk '{print $3}')
	for ((a = 0; a < n; a++)); do args+=(-c "agf $a" -c 'print freeblks'); done
	xfs_db -r "${args[@]}" "$1" 2>/dev/null | awk '{printf "%s ", $3}'
}
sbfield() { xfs_db -r -c 'sb 0' -c "print $2" "$1" 2>/dev/null | awk '{print $3}'; }

listing "$base" "$TMP/base.list"
base_n=$(wc -l <"$TMP/base.list")
check "the base listing holds the tree ($base_n lines)" [ "$base_n" -gt 700 ]
base_free=$(freeblks "$base")
base_ro=$(sbfield "$base" features_ro_compat)
base_in=$(sbfield "$base" features_incompat)
base_uuid=$(sbfield "$base" uuid)

# findings_sb JSON: the check found something in a superblock, and only there
sb_coded() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
codes = sorted({f["code"] for f in d["findings"] if f["severity"] != "info"})
print("# findings:", " ".join(codes))
sys.exit(0 if codes and all(c.startswith("sb.") for c in codes) else 1)
PY
}

# case NAME DAMAGE...: DAMAGE (a command) on a copy, then the claims
case_sb() {
	local name=$1 img="$TMP/case.img" rc; shift
	cp --sparse=always "$base" "$img"
	"$@" "$img" >"$TMP/damage.out" 2>&1
	"$XFSX_CHECK" --json "$img" >"$TMP/case.json" 2>"$TMP/case.err"; rc=$?
	check "$name: xfsx_check exit 4 (got $rc)" [ $rc -eq 4 ]
	[ $rc -eq 8 ] && sed 's/^/#   /' "$TMP/case.err"
	check "$name: xfsx_check's findings are sb.* ones" sb_coded "$TMP/case.json"
	"$XFSX_REPAIR" "$img" >"$TMP/repair.out" 2>&1; rc=$?
	check "$name: one xfsx_repair run exit 1 (got $rc)" [ $rc -eq 1 ]
	[ $rc -eq 1 ] || tail -3 "$TMP/repair.out" | sed 's/^/#   /'
	check "$name: every AG's free space as before the damage (the log is not free space)" \
		[ "$(freeblks "$img")" = "$base_free" ]
	check "$name: features_ro_compat kept ($base_ro)" [ "$(sbfield "$img" features_ro_compat)" = "$base_ro" ]
	check "$name: features_incompat kept ($base_in)" [ "$(sbfield "$img" features_incompat)" = "$base_in" ]
	check "$name: uuid kept" [ "$(sbfield "$img" uuid)" = "$base_uuid" ]
	listing "$img" "$TMP/case.list"
	check "$name: every path and file kept ($(kept "$TMP/case.list") of $base_n)" \
		[ "$(kept "$TMP/case.list")" -eq "$base_n" ]
	after_repair "$img" "$name"
}

sbw() { local f=$1 v=$2 img=$3; xfs_db -x -c 'sb 0' -c "write -d $f $v" "$img"; }
wipe0() { dd if=/dev/zero of="$1" bs=512 count=1 conv=notrunc status=none; }

case_sb "logstart 0" sbw logstart 0
case_sb "rootino 0" sbw rootino 0
case_sb "rbmino 12345678901" sbw rbmino 12345678901
case_sb "features_ro_compat 0" sbw features_ro_compat 0
case_sb "features_incompat with an unknown bit" sbw features_incompat $((base_in | 0x40000000))
case_sb "uuid zeroed" sbw uuid 00000000-0000-0000-0000-000000000000
case_sb "sector 0 zeroed" wipe0
case_sb "agblocks + 1" sbw agblocks $(( $(sbfield "$base" agblocks) + 1 ))
case_sb "logblocks halved" sbw logblocks $(( $(sbfield "$base" logblocks) / 2 ))

# two AGs: one secondary cannot outvote the primary, but the log can be
# looked at: a primary log placement holding no log loses to the secondary's
two="$TMP/two.img"
truncate -s 1g "$two"
if "$XFSX_MKFS" -q -d agcount=2 "$two"; then
	two_free=$(xfs_db -r -c 'agf 0' -c 'print freeblks' -c 'agf 1' -c 'print freeblks' "$two" | awk '{printf "%s ", $3}')
	sbw logstart 0 "$two" >/dev/null 2>&1
	"$XFSX_CHECK" --json "$two" >"$TMP/two.json" 2>/dev/null; rc=$?
	check "two AGs, logstart 0: xfsx_check exit 4 (got $rc)" [ $rc -eq 4 ]
	check "two AGs, logstart 0: findings are sb.* ones" sb_coded "$TMP/two.json"
	"$XFSX_REPAIR" "$two" >"$TMP/repair.out" 2>&1; rc=$?
	check "two AGs, logstart 0: one xfsx_repair run exit 1 (got $rc)" [ $rc -eq 1 ]
	check "two AGs, logstart 0: the log is not free space" \
		[ "$(xfs_db -r -c 'agf 0' -c 'print freeblks' -c 'agf 1' -c 'print freeblks' "$two" | awk '{printf "%s ", $3}')" = "$two_free" ]
	after_repair "$two" "two AGs, logstart 0"
else
	not_ok "xfsx_mkfs -d agcount=2"
fi

# (10) an unknown compat bit: harmless by definition; the kernel mounts it
img="$TMP/compat.img"
cp --sparse=always "$base" "$img"
sbw features_compat 0x100 "$img" >/dev/null 2>&1
"$XFSX_CHECK" --json "$img" >"$TMP/compat.json" 2>"$TMP/compat.err"; rc=$?
check "compat 0x100: xfsx_check exit 0 (got $rc)" [ $rc -eq 0 ]
check "compat 0x100: said as information (sb.compat_unknown)" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if [f for f in d["findings"] if f["code"]=="sb.compat_unknown" and f["severity"]=="info"] else 1)' "$TMP/compat.json"
s1=$(img_sha "$img")
"$XFSX_REPAIR" "$img" >"$TMP/repair.out" 2>&1; rc=$?
check "compat 0x100: xfsx_repair exit 0 (got $rc)" [ $rc -eq 0 ]
check "compat 0x100: xfsx_repair changed nothing" [ "$s1" = "$(img_sha "$img")" ]
check "compat 0x100: the bit is kept" [ "$(sbfield "$img" features_compat)" = 0x100 ]
mount_cycle "$img" "$TMP/compat.mnt" 2>"$TMP/compat.err"; rc=$?
check "compat 0x100: the kernel mounts it, writes, unmounts" [ $rc -eq 0 ]

# Field by field, never worse than xfs_repair: one-run clean (xfs_repair -n
# and xfsx_check after one run) and files kept, on twin copies.
fields=(magicnum blocksize dblocks rblocks rextents uuid logstart rootino rbmino rsumino rextsize
	agblocks agcount rbmblocks logblocks versionnum sectsize inodesize inopblock fname blocklog
	sectlog inodelog inopblog agblklog rextslog inprogress imax_pct icount ifree fdblocks
	frextents uquotino gquotino qflags flags shared_vn inoalignmt unit width dirblklog logsectlog
	logsectsize logsunit features2 bad_features2 features_compat features_ro_compat
	features_incompat features_log_incompat spino_align pquotino lsn meta_uuid)
verbs=(random zeroes ones firstbit middlebit lastbit add sub)
if [ "${XFSX_SB_TRUST_FULL:-0}" = 1 ]; then
	plan=()
	for f in "${fields[@]}"; do for v in "${verbs[@]}"; do plan+=("$f:$v"); done; done
else
	plan=(logstart:random logblocks:random rootino:random rbmino:ones agblocks:add
	      agcount:random features_ro_compat:random features_incompat:zeroes
	      uuid:random inoalignmt:random dblocks:sub versionnum:random icount:random
	      sectsize:firstbit)
fi

# one_run IMG TOOL: 0 when one run of TOOL leaves both checkers clean
one_run() {
	"$2" "$1" >/dev/null 2>&1
	xfs_repair -n "$1" >/dev/null 2>&1 && "$XFSX_CHECK" "$1" >/dev/null 2>&1
}
printf '# %-28s %-8s %-8s %-6s %-6s %s\n' field/verb x-clean r-clean x-kept r-kept verdict
worse=0
for c in "${plan[@]}"; do
	f=${c%%:*} v=${c##*:}
	a="$TMP/fz-x.img" b="$TMP/fz-r.img"
	cp --sparse=always "$base" "$a"
	xfs_db -x -c 'sb 0' -c "fuzz -d $f $v" "$a" >"$TMP/fz.out" 2>&1
	cp --sparse=always "$a" "$b"
	one_run "$a" "$XFSX_REPAIR"; xc=$?
	one_run "$b" xfs_repair; rcl=$?
	listing "$a" "$TMP/fz-x.list"; xk=$(kept "$TMP/fz-x.list")
	listing "$b" "$TMP/fz-r.list"; rk=$(kept "$TMP/fz-r.list")
	verdict=ok
	if { [ $rcl -eq 0 ] && [ $xc -ne 0 ]; } || [ "$xk" -lt "$rk" ]; then
		verdict=WORSE
		worse=$((worse + 1))
	fi
	printf '# %-28s %-8s %-8s %-6s %-6s %s\n' "$f $v" \
		"$([ $xc -eq 0 ] && echo yes || echo no)" "$([ $rcl -eq 0 ] && echo yes || echo no)" \
		"$xk" "$rk" "$verdict"
	check "fuzz $f $v: xfsx_repair no worse than xfs_repair (clean $xc/$rcl, kept $xk/$rk)" \
		[ "$verdict" = ok ]
done
diag "${#plan[@]} fuzz cases, $worse worse than xfs_repair"
tap_done
