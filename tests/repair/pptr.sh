#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# xfsx_repair on parent pointer filesystems (xfsprogs 6.10.1's mkfs.xfs
# -n parent=1 -i exchange=1, populated by the kernel).  Per case, the image
# damaged with 6.10's xfs_db (or a block zeroed): ONE xfsx_repair run, then
# 6.10's xfs_repair -n exit 0 and xfsx_check clean, a second run finds
# nothing, the kernel mounts it and every path find(1) listed before the
# damage is there again (save what the case loses by design: a cleared
# inode, a file moved to lost+found), the kernel creates and renames a
# file, and 6.10's xfs_repair -n is still clean.  The cases: parent
# pointers removed or wrong (short form, leaf and node attr forks), a link
# count, an attr fork with user xattrs beside the pointers rebuilt, an attr
# fork removed (its pointers written again), a cleared inode, a file with
# neither entry nor pointer (to a new lost+found), and a destroyed
# directory block in every directory format (short form, block, leaf,
# node): every name comes back from the parent pointers, and the report
# names the entries restored so.
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR=${XFSX_REPAIR:-$XFSX_BUILD/repair/xfsx_repair}

[ -x "$XFSX_REPAIR" ] || { skip "parent pointer repair" "xfsx_repair not built"; tap_done; exit 0; }
have_loop_xfs || { skip "parent pointer repair" "needs root and a loop device"; tap_done; exit 0; }
command -v python3 >/dev/null || { skip "parent pointer repair" "needs python3"; tap_done; exit 0; }
sbin=$(oracle_610 2>"$TMP/oracle.err") || {
	skip "parent pointer repair" "no xfsprogs 6.10 oracle: $(tail -1 "$TMP/oracle.err")"
	tap_done; exit 0
}
MKFS=$sbin/mkfs.xfs DB=$sbin/xfs_db REPAIR=$sbin/xfs_repair

base=$TMP/base.img img=$TMP/img
truncate -s 400M "$base"
"$MKFS" -q -f -n parent=1 -i exchange=1 -d agcount=2 "$base" || { not_ok "mkfs.xfs 6.10"; tap_done; exit; }
mount_img "$base" "$TMP/mnt" || { not_ok "mount the parent pointer image"; tap_done; exit; }
python3 - "$TMP/mnt" "$TMP/ino" <<'PY'
import os, sys
m, out = sys.argv[1], sys.argv[2]
P = lambda *a: os.path.join(m, *a)
for d in ('d1', 'd2', 'd3/sub'):
    os.makedirs(P(d))
with open(P('d1/f'), 'w') as f: f.write('x' * 100)
os.link(P('d1/f'), P('d2/f2')); os.link(P('d1/f'), P('d3/sub/f3'))
os.setxattr(P('d1/f'), 'user.beside', b'v')
open(P('leaf'), 'w').close()
for i in range(30): os.link(P('leaf'), P('d1', 'leaflink%02d' % i))
os.setxattr(P('leaf'), 'user.a', b'1' * 30)
open(P('node'), 'w').close()
for i in range(300): os.link(P('node'), P('d3', 'nodelink_with_a_long_name_%04d' % i))
open(P('xa'), 'w').close()
for i in range(100): os.setxattr(P('xa'), 'user.k%03d' % i, b'y' * 40)
# one directory of each format
for d, n, w in (('dsf', 3, 4), ('dblk', 20, 8), ('dleaf', 150, 12), ('dnode', 700, 40)):
    os.makedirs(P(d))
    for i in range(n):
        with open(P(d, ('f%0' + str(w) + 'd') % i), 'w') as f: f.write('x')
os.makedirs(P('dnode', 'subdir'))
os.makedirs(P('dblk', 'subd')); open(P('dblk', 'subd', 'inside'), 'w').close()
os.makedirs(P('dsf', 'sd')); open(P('dsf', 'sd', 'x'), 'w').close()
os.link(P('dnode', 'f%040d' % 5), P('dblk', 'hard'))
with open(out, 'w') as f:
    for n in ('d1', 'd2', 'd1/f', 'leaf', 'node', 'xa', 'd3/sub', 'dsf', 'dblk', 'dleaf', 'dnode',
              'dblk/f00000003', 'dsf/f0001', 'dsf/sd'):
        f.write('%s=%d\n' % (n.replace('/', '_'), os.stat(P(n)).st_ino))
PY
check "populate (exit $?)" true
(cd "$TMP/mnt" && find . -printf '%i %y %P\n' | sort -k3) >"$TMP/find.before"
unmount_dir "$TMP/mnt"
. "$TMP/ino"
"$REPAIR" -n "$base" >/dev/null 2>&1
check "the populated image is clean for xfs_repair 6.10 -n (exit $?)" [ $? -eq 0 ]

# zero DIR's data-fork block at file offset OFF (dir blocks: 0 is the first data block)
zero_dblock() {
	local fsb daddr
	fsb=$("$DB" -r -c "inode $1" -c "bmap" "$img" | awk -v o="$2" '$3 == o {print $5; exit}')
	daddr=$("$DB" -r -c "convert fsb $fsb daddr" "$img" | sed 's/.*(\(.*\))/\1/')
	dd if=/dev/zero of="$img" bs=512 seek="$daddr" count=8 conv=notrunc status=none
}

total=0 passed=0
# repair_case NAME LOSES SETUP...: LOSES is an extended regex of find lines the case may
# change (- none); SETUP: xfs_db commands, or "zero INO OFF"
repair_case() {
	local name=$1 loses=$2 args=() c rc rc2 n fails=""; shift 2
	cp --sparse=always "$base" "$img"
	for c in "$@"; do
		case $c in
		zero\ *) set -- $c; zero_dblock "$2" "$3" ;;
		*) args+=(-c "$c") ;;
		esac
	done
	[ ${#args[@]} -gt 0 ] && "$DB" -x "${args[@]}" "$img" >"$TMP/db.out" 2>&1
	"$XFSX_REPAIR" -v "$img" >"$TMP/rep.out" 2>&1; rc=$?
	[ $rc -eq 1 ] || fails+=" repair-exit-$rc"
	"$REPAIR" -n "$img" >"$TMP/x.out" 2>&1 || fails+=" 6.10-not-clean"
	"$XFSX_CHECK" "$img" >"$TMP/c.out" 2>&1 || fails+=" xfsx_check-not-clean"
	"$XFSX_REPAIR" "$img" >"$TMP/rep2.out" 2>&1; rc2=$?
	[ $rc2 -eq 0 ] || fails+=" second-run-exit-$rc2"
	if mount_img "$img" "$TMP/mnt"; then
		(cd "$TMP/mnt" && find . -printf '%i %y %P\n' | sort -k3) >"$TMP/find.after"
		if [ "$loses" = - ]; then
			cmp -s "$TMP/find.before" "$TMP/find.after" || fails+=" paths-differ"
		else
			diff <(grep -Ev "$loses" "$TMP/find.before") <(grep -Ev "$loses" "$TMP/find.after") \
				>/dev/null || fails+=" paths-differ"
		fi
		touch "$TMP/mnt/d1/newfile" && mv "$TMP/mnt/d1/newfile" "$TMP/mnt/d2/renamed" &&
			mv "$TMP/mnt/d2/f2" "$TMP/mnt/d1/f2moved" || fails+=" kernel-write"
		unmount_dir "$TMP/mnt"
		"$REPAIR" -n "$img" >"$TMP/x2.out" 2>&1 || fails+=" 6.10-not-clean-after-kernel"
	else
		fails+=" no-mount"
	fi
	total=$((total + 1))
	if [ -z "$fails" ]; then
		passed=$((passed + 1))
		ok "$name"
	else
		not_ok "$name:$fails"
		sed 's/^/# repair: /' "$TMP/rep.out" | grep -v '^# repair:   ' | head -12
		grep -i 'parent\|would\|disconnected\|entry' "$TMP/x.out" | head -5 | sed 's/^/# 6.10: /'
		head -5 "$TMP/c.out" | sed 's/^/# check: /'
		[ $rc2 -eq 0 ] || head -5 "$TMP/rep2.out" | sed 's/^/# second run: /'
		[ -f "$TMP/find.after" ] && diff "$TMP/find.before" "$TMP/find.after" | head -5 | sed 's/^/# paths: /'
	fi
	rm -f "$TMP/find.after"
}
restored() { grep -Eo "^restored +[0-9]+ entries in directory inode $1" "$TMP/rep.out" | awk '{print $2}'; }

sf_pptr() { "$DB" -r -c "inode $1" -c "p a.sfattr" "$base" | sed -n 's/^a\.sfattr\.list\[\([0-9]*\)\]\.parent = 1$/\1/p' | head -1; }
leaf_pptr() { "$DB" -r -c "inode $1" -c "ablock $2" -c "p entries" "$base" | sed -n 's/^\([0-9]*\):\[.*,1,1\] *$/\1/p' | sed -n "${3:-1}p"; }

# ---- parent pointers wrong ----
i=$(sf_pptr "$d1_f")
repair_case "short form: a parent pointer removed" - "inode $d1_f" "write -d a.sfattr.list[$i].parent 0"
repair_case "short form: its parent another directory" - "inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.inumber $d2"
repair_case "short form: its generation" - "inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.gen 12345"
repair_case "short form: its name" - "inode $d1_f" "write -d a.sfattr.list[$i].name \"q\""
repair_case "short form: its parent an impossible inode" - "inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.inumber 0"
j=$(sf_pptr "$d3_sub")
repair_case "short form: a directory's parent pointer generation" - "inode $d3_sub" "write -d a.sfattr.list[$j].parent_dir.gen 7"
k=$(leaf_pptr "$leaf" 0 2)
repair_case "leaf: a parent pointer's hash" - "inode $leaf" "ablock 0" "write -d entries[$k].hashval 0x12345678"
repair_case "leaf: a parent pointer's generation" - "inode $leaf" "ablock 0" "write -d nvlist[$k].parent_dir.gen 99"
repair_case "leaf: a parent pointer's parent" - "inode $leaf" "ablock 0" "write -d nvlist[$k].parent_dir.inumber $d2"
k=$(leaf_pptr "$node" 1 3)
repair_case "node: a parent pointer's hash" - "inode $node" "ablock 1" "write -d entries[$k].hashval 0x1"
repair_case "node: a parent pointer's generation" - "inode $node" "ablock 1" "write -d nvlist[$k].parent_dir.gen 5"
# ---- link counts, attr forks, cleared inodes, lost+found ----
repair_case "a link count" - "inode $d1_f" "write -d core.nlinkv2 9"
repair_case "an attr fork with user xattrs beside the pointers rebuilt" - "inode $xa" "ablock 1" "write -d entries[3].hashval 0x1"
repair_case "an attr fork whose block map is bad, removed: its pointer written again" - "inode $xa" "write -d a.bmx[0].startblock 0"
repair_case "a node attr fork whose block map is bad, removed: its 300 pointers written again in blocks" - \
	"inode $node" "write -d a.bmx[0].startblock 0"
repair_case "a cleared inode: the entries naming it dropped, with its pointers" "^$dblk_f00000003 " "inode $dblk_f00000003" "write -d core.mode 0170644"
i=$(sf_pptr "$dsf_f0001")
repair_case "a file with neither entry nor pointer goes to a new lost+found" "^$dsf_f0001 |lost\\+found" \
	"inode $dsf_f0001" "write -d a.sfattr.list[$i].parent 0" "inode $dsf" "write -d u3.sfdir3.list[1].namelen 0"
grep -q "lost+found/$dsf_f0001" "$TMP/find.before" 2>/dev/null
check "... named /lost+found/$dsf_f0001 there" grep -q "moved *inode $dsf_f0001 .*lost+found/$dsf_f0001" "$TMP/rep.out"
repair_case "a cleared directory: its files to lost+found, their pointers naming it" "dsf|lost\\+found" \
	"inode $dsf" "write -d core.mode 0170755"
check "... its files named in /lost+found" grep -q "moved *inode $dsf_f0001 .*lost+found/$dsf_f0001" "$TMP/rep.out"
i=$(sf_pptr "$dsf_sd")
repair_case "a directory with neither entry nor pointer goes to lost+found with its files" \
	"^$dsf_sd |dsf/sd|lost\\+found" \
	"inode $dsf_sd" "write -d a.sfattr.list[$i].parent 0" "inode $dsf" "write -d u3.sfdir3.list[3].namelen 0"
check "... named /lost+found/$dsf_sd" grep -q "moved *inode $dsf_sd .*lost+found/$dsf_sd" "$TMP/rep.out"
repair_case "a name twice in a directory: the second's file back under its own name" - \
	"inode $dsf" "write -d u3.sfdir3.list[1].name \"f0000\""
repair_case "an entry naming no possible inode: dropped, its file back under its name" - \
	"inode $dsf" "write -d u3.sfdir3.list[0].inumber.i4 4000000000"
# ---- destroyed directory blocks: every name restored from the parent pointers ----
repair_case "short form directory damaged: every name back" - "inode $dsf" "write -d u3.sfdir3.list[1].namelen 0"
repair_case "block directory's block destroyed: every name back" - "zero $dblk 0"
n=$(restored "$dblk"); check "... the report names $n entries restored in it (22 wanted)" [ "${n:-0}" -eq 22 ]
repair_case "leaf directory's first data block destroyed: every name back" - "zero $dleaf 0"
n=$(restored "$dleaf"); check "... the report names $n entries restored in it" [ "${n:-0}" -gt 50 ]
# -n says what a repair would restore, and writes nothing; xfs_repair 6.10 on the same damage
cp --sparse=always "$base" "$img"; zero_dblock "$dleaf" 0; sum=$(sha256sum <"$img")
"$XFSX_REPAIR" -n "$img" >"$TMP/dry.out" 2>&1; rc=$?
n=$(grep -Eo "^would restore +[0-9]+ entries in directory inode $dleaf" "$TMP/dry.out" | awk '{print $3}')
check "-n: exit $rc, says it would restore $n entries, writes nothing" \
	[ $rc -eq 4 -a "${n:-0}" -gt 50 -a "$(sha256sum <"$img")" = "$sum" ]
"$REPAIR" "$img" >/dev/null 2>&1
if mount_img "$img" "$TMP/mnt"; then
	lf=$(find "$TMP/mnt/lost+found" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	unmount_dir "$TMP/mnt"
	diag "the same leaf block destroyed: xfs_repair 6.10 moves $lf files to lost+found, xfsx_repair 0"
fi
repair_case "node directory's first data block destroyed: every name back" - "zero $dnode 0"
n=$(restored "$dnode"); check "... the report names $n entries restored in it" [ "${n:-0}" -gt 50 ]
repair_case "node directory's second data block destroyed: every name back" - "zero $dnode 1"
repair_case "node directory's DA node block destroyed: every name kept" - "zero $dnode 8388608"
cp --sparse=always "$base" "$img"; zero_dblock "$dnode" 0
"$XFSX_REPAIR" --json "$img" >"$TMP/rep.json" 2>"$TMP/rep.err"
python3 - "$TMP/rep.json" "$dnode" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print('# json restored: %s' % [(x['dir'], x['count']) for x in d['restored']])
r = [x for x in d['restored'] if x['dir'] == int(sys.argv[2])]
ok = r and r[0]['count'] == len(r[0]['entries']) > 0 and d['summary']['entries_restored'] >= r[0]['count']
print('# json: %s' % ((r[0]['count'], r[0]['path']) if r else None,))
sys.exit(0 if ok else 1)
PY
check "--json: restored[] names the directory, its count and every entry" [ $? -eq 0 ]
diag "parent pointer repair: $passed of $total cases clean after one run"
tap_done
