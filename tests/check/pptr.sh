#!/usr/bin/env bash
# Parent pointers (mkfs.xfs 6.10 -n parent=1, with and without -i exchange=1,
# and -p from a protofile).  The oracle is xfsprogs 6.10 (built once by
# ../shared/oracles/xfsprogs-6.10): Debian's 6.1 refuses these filesystems.
#  (a) images the kernel populates (files, renames across directories, hard
#      links in three directories and twice in one, xattrs beside the
#      parent pointers, a file with enough links for a leaf attr fork and
#      one for a node fork, an exchange-range, removals) check clean with
#      xfsx_check (exit 0, no finding) and with 6.10's xfs_repair -n;
#  (b) damage made with 6.10's xfs_db -x (a parent pointer removed, its
#      parent, generation, name or hash changed, in short form, leaf and
#      node attr forks; a directory entry gone; a link count) is reported
#      by xfsx_check with the expected code and by xfs_repair -n too;
#  (c) xfsx_bulkstat equals the kernel's bulkstat on such an image, and
#      --paths lists every path of every inode as find(1) sees them;
#  (d) xfsx_repair sets a wrong link count and repairs AG header damage on
#      such a filesystem (6.10 agrees it is clean after; tests/repair/pptr.sh
#      has the rest of repair on parent pointers).
. "$XFSX_SRC/tests/lib.sh"
XFSX_REPAIR="$XFSX_BUILD/repair/xfsx_repair"
CMP="python3 $XFSX_SRC/tests/bulkstat/compare.py"

have_loop_xfs || { skip "parent pointers" "needs root and a loop device"; tap_done; exit 0; }
command -v python3 >/dev/null || { skip "parent pointers" "needs python3"; tap_done; exit 0; }
command -v xfs_io >/dev/null || { skip "parent pointers" "needs xfs_io (Debian xfsprogs)"; tap_done; exit 0; }
sbin=$(oracle_610 2>"$TMP/oracle.err") || {
	skip "parent pointers" "no xfsprogs 6.10 oracle: $(tail -1 "$TMP/oracle.err")"
	tap_done; exit 0
}
MKFS=$sbin/mkfs.xfs DB=$sbin/xfs_db REPAIR=$sbin/xfs_repair IO=$sbin/xfs_io

# populate MOUNTPOINT INOFILE: the kernel's work; inode numbers into INOFILE (name=ino)
populate() {
	python3 - "$1" "$2" "$IO" <<'EOF'
import os, subprocess, sys
m, out, xfs_io = sys.argv[1], sys.argv[2], sys.argv[3]
P = lambda *a: os.path.join(m, *a)
for d in ('d1', 'd2', 'd3/sub', 'big', 'many'):
    os.makedirs(P(d))
with open(P('d1/f'), 'w') as f: f.write('x' * 100)
os.link(P('d1/f'), P('d2/f2')); os.link(P('d1/f'), P('d3/sub/f3'))   # three directories
os.link(P('d1/f'), P('d1/g'))                                         # twice in one
os.setxattr(P('d1/f'), 'user.beside', b'v')                           # beside the pointers
open(P('d2/h'), 'w').close(); os.rename(P('d2/h'), P('d3/h2'))        # across directories
os.rename(P('d3/sub'), P('d2/sub2'))                                  # a directory moved
open(P('leaf'), 'w').close()                                          # a leaf attr fork
for i in range(30): os.link(P('leaf'), P('d1', 'leaflink%02d' % i))
os.setxattr(P('leaf'), 'user.a', b'1' * 30)
open(P('node'), 'w').close()                                          # a node attr fork
for i in range(400): os.link(P('node'), P('big', 'nodelink_with_a_long_name_%04d' % i))
for i in range(0, 400, 9): os.unlink(P('big', 'nodelink_with_a_long_name_%04d' % i))
open(P('xa'), 'w').close()                                            # user xattrs in blocks
for i in range(100): os.setxattr(P('xa'), 'user.k%03d' % i, b'y' * 40)
for i in range(600): open(P('many', 'file%04d' % i), 'w').close()     # a node directory
for i in range(0, 600, 4): os.unlink(P('many', 'file%04d' % i))
os.symlink('d1/f', P('sl'))
os.mkfifo(P('d2/fifo'))
for n in ('e1', 'e2'):
    with open(P(n), 'wb') as f: f.write((n * 4096).encode()[:65536])
    os.fsync(os.open(P(n), os.O_RDONLY))
r = subprocess.run([xfs_io, '-c', 'exchangerange -f ' + P('e2'), P('e1')], capture_output=True, text=True)
print('exchangerange rc %d %s' % (r.returncode, (r.stdout + r.stderr).strip()))
os.unlink(P('d1/g')); os.unlink(P('d3/h2'))                            # removals
with open(out, 'w') as f:
    for n in ('d1', 'd2', 'd1/f', 'leaf', 'node', 'xa', 'many', 'd2/sub2', 'd2/fifo', 'e1'):
        f.write('%s=%d\n' % (n.replace('/', '_'), os.stat(P(n), follow_symlinks=False).st_ino))
EOF
}

# clean_check LABEL IMG: xfsx_check exit 0 with no finding; 6.10's xfs_repair -n exit 0
clean_check() {
	local label=$1 img=$2 rc n
	"$XFSX_CHECK" --json "$img" >"$TMP/$label.json" 2>"$TMP/$label.err"; rc=$?
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' \
		"$TMP/$label.json" 2>/dev/null || echo '?')
	check "$label: xfsx_check exit 0 (got $rc), $n findings" [ "$rc" -eq 0 -a "$n" = 0 ]
	[ "$rc" -eq 0 ] || "$XFSX_CHECK" "$img" 2>&1 | head -20 | sed 's/^/# /'
	"$REPAIR" -n "$img" >"$TMP/$label.repair" 2>&1; rc=$?
	check "$label: xfs_repair 6.10 -n agrees it is clean (exit $rc)" [ "$rc" -eq 0 ]
}

# ---- (a) clean images ----
base=$TMP/base.img
truncate -s 512M "$base"
"$MKFS" -q -f -n parent=1 -i exchange=1 -d agcount=4 "$base" || { not_ok "mkfs.xfs 6.10 -n parent=1 -i exchange=1"; tap_done; exit; }
mount_img "$base" "$TMP/mnt" || { not_ok "mount the parent pointer image"; tap_done; exit; }
populate "$TMP/mnt" "$TMP/ino" >"$TMP/populate.out" 2>&1; rc=$?
sed 's/^/# /' "$TMP/populate.out"
check "populate (exit $rc)" [ "$rc" -eq 0 ]
check "exchange-range ran (exit 0)" grep -q '^exchangerange rc 0' "$TMP/populate.out"
# what find sees, for --paths: inode -> every path
(cd "$TMP/mnt" && find . -printf '%i %P\n') >"$TMP/find.txt"
unmount_dir "$TMP/mnt"
. "$TMP/ino"
fmt() { "$DB" -r -c "inode $1" -c "p core.aformat" "$base" | awk '{print $4}'; }
magic() { "$DB" -r -c "inode $1" -c "ablock 0" -c "p hdr.info.hdr.magic" "$base" | awk '{print $3}'; }
check "d1/f's parent pointers are short form ($(fmt "$d1_f"))" [ "$(fmt "$d1_f")" = "(local)" ]
check "leaf's attr fork is one leaf block ($(magic "$leaf"))" [ "$(magic "$leaf")" = 0x3bee ]
check "node's attr fork is a DA node ($(magic "$node"))" [ "$(magic "$node")" = 0x3ebe ]
clean_check "parent+exchange" "$base"

img2=$TMP/noexch.img
truncate -s 512M "$img2"
if "$MKFS" -q -f -n parent=1 -i exchange=0 "$img2" && mount_img "$img2" "$TMP/mnt2"; then
	populate "$TMP/mnt2" "$TMP/ino2" >/dev/null 2>&1
	unmount_dir "$TMP/mnt2"
	xi=$("$DB" -r -c sb -c 'p features_incompat' "$img2" | awk '{print $3}')
	check "parent without exchange: incompat $xi has PARENT, not EXCHRANGE" \
		[ $(( xi & 0x80 )) -ne 0 -a $(( xi & 0x40 )) -eq 0 ]
	clean_check "parent, no exchange" "$img2"
else
	not_ok "mkfs.xfs 6.10 -n parent=1 -i exchange=0 and mount"
fi

img3=$TMP/proto.img
cat >"$TMP/proto" <<EOF
/dev/null
0 0
d--755 0 0
afile ---644 0 0 $XFSX_SRC/README.md
sub d--755 0 0
 inner ---600 0 0 $XFSX_SRC/meson.build
 deeper d--755 0 0
  leaf ---644 0 0 $XFSX_SRC/README.md
 $
 link l--777 0 0 ../afile
 $
$
EOF
truncate -s 320M "$img3"
if "$MKFS" -q -f -n parent=1 -i exchange=1 -p "$TMP/proto" "$img3"; then
	clean_check "mkfs -p protofile" "$img3"
else
	not_ok "mkfs.xfs 6.10 -n parent=1 -p protofile"
fi

# ---- (b) damage ----
img=$TMP/t.img
total=0 both=0
# run_case NAME EXPECT_CODE XFS_DB_COMMANDS...
run_case() {
	local name=$1 expect=$2; shift 2
	local args=() c rrc xrc out codes rsays
	for c in "$@"; do args+=(-c "$c"); done
	cp --sparse=always "$base" "$img"
	"$DB" -x "${args[@]}" "$img" >"$TMP/db.out" 2>&1
	"$REPAIR" -n "$img" >"$TMP/r.out" 2>&1; rrc=$?
	out=$("$XFSX_CHECK" --json "$img" 2>/dev/null); xrc=$?
	codes=$(grep -o '"code":"[^"]*"' <<<"$out" | cut -d'"' -f4 | sort | uniq -c |
		awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
	rsays=$(grep -m1 -i 'parent pointer\|hashvalue\|nlink\|entry' "$TMP/r.out" | cut -c1-100)
	total=$((total + 1))
	diag "$name: xfsx_check exit $xrc [$codes]; xfs_repair 6.10 -n exit $rrc [$rsays]"
	if [ $rrc -eq 0 ]; then
		not_ok "$name: xfs_repair 6.10 -n does not see the damage (the case damages nothing?)"
		sed 's/^/# db: /' "$TMP/db.out" | head -5
		return
	fi
	if [ $xrc -ne 4 ] || ! grep -q "\"code\":\"$expect\"" <<<"$out"; then
		not_ok "$name: expected $expect from xfsx_check (exit $xrc)"
		return
	fi
	both=$((both + 1))
	ok "$name: $expect; xfs_repair 6.10 -n agrees there is damage"
}
# the index of the first parent pointer of a short form fork / leaf block, by xfs_db's print
sf_pptr() { "$DB" -r -c "inode $1" -c "p a.sfattr" "$base" | sed -n 's/^a\.sfattr\.list\[\([0-9]*\)\]\.parent = 1$/\1/p' | head -1; }
leaf_pptr() { "$DB" -r -c "inode $1" -c "ablock $2" -c "p entries" "$base" | sed -n 's/^\([0-9]*\):\[.*,1,1\] *$/\1/p' | sed -n "${3:-1}p"; }
i=$(sf_pptr "$d1_f")
run_case "short form: a parent pointer removed" pptr.missing \
	"inode $d1_f" "write -d a.sfattr.list[$i].parent 0"
run_case "short form: its parent changed to another directory" pptr.dangling \
	"inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.inumber $d2"
run_case "short form: its generation changed" pptr.gen \
	"inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.gen 12345"
run_case "short form: its name changed" pptr.dangling \
	"inode $d1_f" "write -d a.sfattr.list[$i].name \"q\""
run_case "short form: its parent an impossible inode" pptr.value \
	"inode $d1_f" "write -d a.sfattr.list[$i].parent_dir.inumber 0"
j=$(sf_pptr "$d2_sub2")
run_case "short form: a directory's parent pointer generation" pptr.gen \
	"inode $d2_sub2" "write -d a.sfattr.list[$j].parent_dir.gen 7"
k=$(leaf_pptr "$leaf" 0 2)
run_case "leaf: a parent pointer's hash" pptr.hash \
	"inode $leaf" "ablock 0" "write -d entries[$k].hashval 0x12345678"
run_case "leaf: a parent pointer's generation" pptr.gen \
	"inode $leaf" "ablock 0" "write -d nvlist[$k].parent_dir.gen 99"
run_case "leaf: a parent pointer's parent" pptr.dangling \
	"inode $leaf" "ablock 0" "write -d nvlist[$k].parent_dir.inumber $d2"
run_case "leaf: a parent pointer made a user xattr" pptr.missing \
	"inode $leaf" "ablock 0" "write -d entries[$k].parent 0"
k=$(leaf_pptr "$node" 1 3)
run_case "node: a parent pointer's hash (a leaf under the node)" pptr.hash \
	"inode $node" "ablock 1" "write -d entries[$k].hashval 0x1"
run_case "node: a parent pointer's generation" pptr.gen \
	"inode $node" "ablock 1" "write -d nvlist[$k].parent_dir.gen 5"
run_case "node: a parent pointer's name (NUL-padded by the write)" pptr.name \
	"inode $node" "ablock 1" "write -d nvlist[$k].name \"zzzz\""
e=$("$DB" -r -c "inode $d2" -c "p u3.sfdir3.hdr.count" "$base" | awk '{print $3}')
check "d2 is a short form directory ($e entries)" [ -n "$e" ]
run_case "a short form directory entry made to name another file" pptr.missing \
	"inode $d2" "write -d u3.sfdir3.list[0].inumber.i4 $xa"
run_case "a link count" inode.nlink "inode $d1_f" "write -d core.nlinkv2 9"
diag "damage cases: $total, both tools see damage in $both"

# ---- (c) bulkstat ----
mount_img "$base" "$TMP/mnt" ro || not_ok "read-only mount for bulkstat"
ALL=ino,mode,nlink,uid,gid,projectid,size,blocks,extents,aextents,forkoff,xflags,gen,rdev,atime,atime_nsec,mtime,mtime_nsec,ctime,ctime_nsec,btime,btime_nsec,extsize_blks,cowextsize_blks,blksize,extents32
xfs_io -c 'bulkstat -n 1' "$TMP/mnt" >"$TMP/kernel.txt"
"$XFSX_BULKSTAT" --fields=$ALL "$TMP/mnt" >"$TMP/online.jsonl"
"$XFSX_BULKSTAT" --paths "$TMP/mnt" >"$TMP/online_paths.jsonl"
unmount_dir "$TMP/mnt"
"$XFSX_BULKSTAT" --fields=$ALL "$base" >"$TMP/offline.jsonl" 2>"$TMP/offline.err"; rc=$?
check "bulkstat offline on a parent pointer filesystem (exit $rc, no messages)" [ "$rc" -eq 0 -a ! -s "$TMP/offline.err" ]
out=$($CMP xfsio "$TMP/kernel.txt" "$TMP/offline.jsonl" 2>&1); rc=$?
echo "$out" | tail -1
check "bulkstat offline = the kernel's XFS_IOC_BULKSTAT, every field" [ "$rc" -eq 0 ]
out=$($CMP same "$TMP/offline.jsonl" "$TMP/online.jsonl" 2>&1); rc=$?
check "bulkstat offline = mountpoint mode" [ "$rc" -eq 0 ]
"$XFSX_BULKSTAT" --paths "$base" >"$TMP/paths.jsonl"
"$XFSX_BULKSTAT" --paths --format=csv --fields=ino "$base" >"$TMP/paths.csv"
python3 - "$TMP/find.txt" "$TMP/paths.jsonl" "$TMP/online_paths.jsonl" "$TMP/paths.csv" <<'EOF'; rc=$?
import csv, json, sys
want = {}
for line in open(sys.argv[1]):
    ino, _, p = line.rstrip('\n').partition(' ')
    want.setdefault(int(ino), set()).add('/' + p)
def load(path):
    return {r['ino']: r['paths'] for r in map(json.loads, open(path))}
off, on = load(sys.argv[2]), load(sys.argv[3])
rows = {int(r['ino']): r['paths'].split('//') for r in csv.DictReader(open(sys.argv[4]))}
bad = 0
for ino, paths in want.items():
    if set(off.get(ino, [])) != paths or len(off.get(ino, [])) != len(paths):
        bad += 1; print('# inode %d: find %s, --paths %s' % (ino, sorted(paths), off.get(ino)))
extra = [i for i in off if off[i] and i not in want]
multi = sum(1 for p in want.values() if len(p) > 1)
print('# --paths: %d inodes find lists, %d with several paths, %d links, %d mismatches, %d extra'
      % (len(want), multi, sum(map(len, want.values())), bad, len(extra)))
same = off == on and {i: sorted(p) for i, p in rows.items()} == {i: sorted(p) for i, p in off.items()}
print('# offline paths = mountpoint mode paths = CSV paths: %s' % same)
sys.exit(0 if not bad and not extra and same and multi >= 3 else 1)
EOF
check "bulkstat --paths: every path find sees, hard links included, offline = mounted = CSV" [ "$rc" -eq 0 ]

# ---- (d) repair ----
cp --sparse=always "$base" "$img"
"$DB" -x -c "inode $d1_f" -c "write -d core.nlinkv2 9" "$img" >/dev/null 2>&1
"$XFSX_REPAIR" -n "$img" >"$TMP/rep.out" 2>&1; rc=$?
said=$(grep -c 'would fix *inode.nlink' "$TMP/rep.out")
check "repair -n says it would set the link count (exit $rc, $said lines)" [ "$rc" -eq 4 -a "$said" -ge 1 ]
"$XFSX_REPAIR" "$img" >"$TMP/rep.out" 2>&1; rc=$?
sed 's/^/# /' "$TMP/rep.out" | head -4
check "repair sets a link count on a parent pointer filesystem (exit $rc)" [ "$rc" -eq 1 ]
clean_check "after the link count repair" "$img"
cp --sparse=always "$base" "$img"
"$DB" -x -c "agf 1" -c "write -d freeblks 5" "$img" >/dev/null 2>&1
"$XFSX_REPAIR" "$img" >"$TMP/rep.out" 2>&1; rc=$?
check "repair fixes AG header damage on a parent pointer filesystem (exit $rc)" [ "$rc" -eq 1 ]
clean_check "after the AG repair" "$img"
tap_done
