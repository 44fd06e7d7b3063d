#!/usr/bin/env bash
# xfsx_mkfs -n parent=1 and -i exchange=1 against xfsprogs 6.10 (the first
# mkfs.xfs that takes them; found by tests/lib.sh's oracle_610):
#  (a) geometry: over sizes, block sizes and option sets with and without
#      either option, superblocks 0 and 1, AGF/AGI/AGFL of AG 0, of the log's
#      AG and of the last AG, and xfs_db's info (xfs_info) print identically
#      for our image and mkfs.xfs 6.10's (same UUID), and with either option
#      on so does -N's table (without them it is 6.1's: warnings.sh);
#      the minimum log equals mkfs.xfs 6.10's over block, inode and directory
#      sizes, rmapbt/reflink, nrext64, stripes and sector sizes;
#  (b) every image of (a): 6.10's xfs_repair -n and xfsx_check clean;
#  (c) the kernel mounts a parent pointer image, creates, renames across
#      directories, hard links, removes, unmounts: both checkers clean;
#  (d) -p from a directory (hard links across directories and twice in one,
#      255-byte names, 3000 entries in one directory, a file of 800 links
#      whose parent pointers need a DA node, xattrs beside the pointers)
#      and from a protofile: both checkers clean, the attr forks in the
#      formats the sizes call for, the kernel's parent pointer lists
#      (GETPARENTS) complete, xfsx_bulkstat --paths lists every path find
#      lists on the mounted image; then (c) on it;
#  (e) mkfs.xfs 6.10's refusals of the new options are ours, and what it
#      takes (bare names, empty values) we take, with the same features.
. "$XFSX_SRC/tests/lib.sh"

[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }
sbin=$(oracle_610 2>"$TMP/oracle.err") || {
	skip "mkfs parent pointers" "no xfsprogs 6.10 oracle: $(tail -1 "$TMP/oracle.err")"
	tap_done; exit 0
}
MKFS=$sbin/mkfs.xfs DB=$sbin/xfs_db REPAIR=$sbin/xfs_repair IO=$sbin/xfs_io
U=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
a="$TMP/x.img"; b="$TMP/m.img"

# judge LABEL IMG: 6.10's xfs_repair -n and xfsx_check, both clean
judged=0; clean=0
judge() {
	local rc1 rc2 n
	"$REPAIR" -n "$2" >"$TMP/repair.out" 2>&1; rc1=$?
	"$XFSX_CHECK" -j "$2" >"$TMP/check.json" 2>"$TMP/check.err"; rc2=$?
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' \
		"$TMP/check.json" 2>/dev/null || echo '?')
	judged=$((judged + 1))
	if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ "$n" = 0 ]; then
		clean=$((clean + 1)); ok "$1: xfs_repair 6.10 -n clean, xfsx_check 0 findings"
	else
		not_ok "$1: xfs_repair 6.10 -n exit $rc1 ($(grep -i -m2 -e would -e error \
			"$TMP/repair.out" | tr '\n' ' ')), xfsx_check exit $rc2, $n findings"
	fi
}

# dump IMG: what is compared: headers of AG 0, the log's AG and the last, and the info table
dump() {
	local agc logag c
	agc=$("$DB" -r -c 'sb 0' -c 'print agcount' "$1" | awk '{print $3}')
	logag=$("$DB" -r -c 'sb 0' -c 'print logstart' "$1" | awk '{print $3}')
	logag=$((logag >> $("$DB" -r -c 'sb 0' -c 'print agblklog' "$1" | awk '{print $3}')))
	for c in "sb 0" "sb 1" "agf 0" "agi 0" "agfl 0" "agf $logag" "agi $logag" "agfl $logag" \
		 "agf $((agc - 1))" "agi $((agc - 1))" "agfl $((agc - 1))"; do
		echo "== $c"; "$DB" -r -c "$c" -c print "$1" 2>&1
	done
	"$DB" -r -c info "$1" 2>&1 | sed '1s/^meta-data=[^ ]*/meta-data=IMG/'
}

# one_level IMG: its free space btrees can never grow past one level (all of an
# AG's free extents fit one leaf), where mkfs.xfs 6.1 and 6.10 fill the AGFL differently
one_level() {
	local bs agb
	bs=$("$DB" -r -c 'sb 0' -c 'print blocksize' "$1" | awk '{print $3}')
	agb=$("$DB" -r -c 'sb 0' -c 'print agblocks' "$1" | awk '{print $3}')
	[ $(((agb + 1) / 2)) -le $(((bs - 56) / 16)) ]
}

# geometry SIZE OPTS...: both make it (or both refuse it); fields equal; judged
geo_cases=0; geo_same=0; geo_refused=0; geo_skipped=0
geometry() {
	local sz=$1 label rx rm diffs="" six10=""; shift
	label="$sz ${*:-(defaults)}"
	case " $* " in *" -n parent=1 "*|*" -i exchange=1 "*) six10=1 ;; esac
	rm -f "$a" "$b"; truncate -s "$sz" "$a" "$b"
	"$XFSX_MKFS" -q -m uuid=$U "$@" "$a" >/dev/null 2>"$TMP/mkx.err"; rx=$?
	"$MKFS" -q -f -m uuid=$U "$@" "$b" >/dev/null 2>"$TMP/mkm.err"; rm=$?
	geo_cases=$((geo_cases + 1))
	if [ "$rx" -ne 0 ] || [ "$rm" -ne 0 ]; then
		if [ "$rx" -ne 0 ] && [ "$rm" -ne 0 ]; then
			geo_refused=$((geo_refused + 1)); ok "$label: both refuse (too small a device)"
		else
			not_ok "$label: xfsx_mkfs exit $rx ($(head -1 "$TMP/mkx.err")), mkfs.xfs 6.10 exit $rm ($(head -1 "$TMP/mkm.err"))"
		fi
		return
	fi
	if [ -z "$six10" ] && one_level "$a"; then
		geo_skipped=$((geo_skipped + 1))
		skip "$label: compare with mkfs.xfs 6.10" "free space btrees of one level: without 6.10's features the AGFL and root inode follow 6.1 (mkfs_matrix compares them with Debian's 6.1)"
		return
	fi
	dump "$a" >"$TMP/x.dump"; dump "$b" >"$TMP/m.dump"
	diff "$TMP/x.dump" "$TMP/m.dump" >"$TMP/diff" || diffs="fields: $(grep '^[<>]' "$TMP/diff" | head -6 | tr '\n' ' ')"
	# the -N table: 6.10's layout with 6.10's features (without them 6.1's: warnings.sh)
	if [ -n "$six10" ] &&
	   ! diff <("$XFSX_MKFS" -N -f "$@" "$a" 2>&1) <("$MKFS" -N -f "$@" "$a" 2>&1) >"$TMP/diff"; then
		diffs="$diffs -N table: $(grep '^[<>]' "$TMP/diff" | head -4 | tr '\n' ' ')"
	fi
	if [ -z "$diffs" ]; then geo_same=$((geo_same + 1)); ok "$label: identical to mkfs.xfs 6.10"
	else not_ok "$label: differs from mkfs.xfs 6.10: $diffs"; fi
	judge "$label" "$a"
}

# ---- (a), (b) geometry ----
sets=("" "-n parent=1" "-i exchange=1" "-n parent=1 -i exchange=1" "-n parent=1 -i exchange=0")
for s in "${sets[@]}"; do
	for sz in 300m 1g 16g 1t; do
		for bs in 1024 4096 65536; do
			# shellcheck disable=SC2086
			geometry "$sz" -b size=$bs $s
		done
	done
done
for o in "-m reflink=0" "-m rmapbt=0" "-m rmapbt=0,reflink=0 -i nrext64=0" "-i size=2048" \
	 "-n size=65536" "-l su=32k" "-d su=64k,sw=4" "-s size=4096" "-m finobt=0,inobtcount=0" \
	 "-i sparse=0" "-d agcount=7" "-l size=64m" "-b size=32768"; do
	for s in "-n parent=1" "-i exchange=1"; do
		# shellcheck disable=SC2086
		geometry 3g $o $s
	done
done
# 64 KiB blocks on a small device: without parent pointers the early-reflink
# minimum log fits no AG (both refuse); with them both make it
geometry 300m -b size=65536 -n parent=1 -m reflink=0
# free space btrees of one level: the AGFL (and so the root inode) by 6.10's rule
# with 6.10's features (without them 6.1's, which tests/mkfs/matrix.sh compares)
geometry 301m -b size=32768 -n parent=1
geometry 301m -b size=32768 -i exchange=1
diag "geometry: $geo_same of $geo_cases option sets identical to mkfs.xfs 6.10, $geo_refused refused by both, $geo_skipped one-level AGs without 6.10's features"
check "geometry: every option set identical to mkfs.xfs 6.10, refused by both or one-level without 6.10's features ($geo_same + $geo_refused + $geo_skipped of $geo_cases)" \
	[ $((geo_same + geo_refused + geo_skipped)) -eq "$geo_cases" -a "$geo_same" -gt 60 ]

# the minimum log: refused below it with mkfs.xfs 6.10's number, accepted at it
truncate -s 2g "$TMP/l.img"
compared=0; differ=0; refused=0
for pp in "-n parent=1" "-n parent=1 -i exchange=0"; do
	for bs in 1024 4096 16384 65536; do
		for rl in "reflink=0,rmapbt=0" "reflink=1,rmapbt=1" "reflink=0,rmapbt=1"; do
			for ne in 0 1; do
				for x in "" "-i size=2048" "-n size=65536" "-l su=32k" "-s size=4096"; do
					[ "$x" = "-i size=2048" ] && [ "$bs" -lt 2048 ] && continue
					[ "$x" = "-s size=4096" ] && [ "$bs" -lt 4096 ] && continue
					opts="-b size=$bs -m $rl -i nrext64=$ne $x $pp"
					ls=$((32 * bs)); [ "$ls" -lt 2097152 ] && ls=2097152
					# shellcheck disable=SC2086
					want=$("$MKFS" -N -f $opts -l size=$ls "$TMP/l.img" 2>&1 |
					       sed -n 's/.*minimum size is \([0-9]*\) blocks.*/\1/p')
					# shellcheck disable=SC2086
					got=$("$XFSX_MKFS" -N -f $opts -l size=$ls "$TMP/l.img" 2>&1 |
					      sed -n 's/.*needs at least \([0-9]*\) blocks.*/\1/p')
					compared=$((compared + 1))
					# both refusing for another reason (a log stripe unit below the block size) agrees
					if [ -z "$want$got" ] && ! "$MKFS" -N -f $opts "$TMP/l.img" >/dev/null 2>&1 &&
					   ! "$XFSX_MKFS" -N -f $opts "$TMP/l.img" >/dev/null 2>&1; then
						refused=$((refused + 1))
						continue
					fi
					if [ -z "$want" ] || [ "$want" != "$got" ]; then
						differ=$((differ + 1))
						not_ok "$opts: minimum log mkfs.xfs 6.10 '$want' xfsx_mkfs '$got'"
						continue
					fi
					acc=$((got * bs)); [ "$acc" -lt 67108864 ] && acc=67108864
					# shellcheck disable=SC2086
					"$XFSX_MKFS" -N -f $opts -l size=$acc "$TMP/l.img" >/dev/null 2>"$TMP/err" ||
						{ differ=$((differ + 1)); not_ok "$opts: -l size=$acc refused: $(head -1 "$TMP/err")"; }
				done
			done
		done
	done
done
diag "minimum log: $compared combinations, $refused refused by both, $differ differ"
check "minimum log with parent pointers equal to mkfs.xfs 6.10's in $((compared - refused)) combinations" \
	[ $((compared - refused)) -gt 100 -a "$differ" -eq 0 ]

# ---- (e) refusals and acceptances ----
truncate -s 1g "$TMP/r.img"
refusals=("-n parent=1 -m crc=0" "-i exchange=1 -m crc=0" "-n parent=2" "-i exchange=2" \
	  "-n parent=x" "-i exchange=-1" "-n parent=1 -n parent=1" "-n parent=1,parent=0" \
	  "-i exchange=1,exchange=0" "-i exchange=1 -i exchange=1" "-n parent=1,ftype=0")
for o in "${refusals[@]}"; do
	# shellcheck disable=SC2086
	"$MKFS" -N -f $o "$TMP/r.img" >/dev/null 2>&1; rm=$?
	# shellcheck disable=SC2086
	"$XFSX_MKFS" -N -f $o "$TMP/r.img" >/dev/null 2>"$TMP/err"; rx=$?
	check "$o: mkfs.xfs 6.10 refuses (exit $rm), so does xfsx_mkfs (exit $rx: $(head -1 "$TMP/err"))" \
		[ "$rm" -ne 0 -a "$rx" -eq 1 ]
done
feat() { "$DB" -r -c 'sb 0' -c 'print versionnum features_incompat' "$1" | awk '{print $3}' | tr '\n' ' '; }
for o in "-n parent" "-i exchange" "-n parent=" "-i exchange=" "-n parent=0 -i exchange=1" \
	 "-n parent=1 -i exchange=0" "-n parent,size=8192" "-i exchange,nrext64=0"; do
	rm -f "$a" "$b"; truncate -s 1g "$a" "$b"
	# shellcheck disable=SC2086
	"$MKFS" -q -f $o "$b" >/dev/null 2>&1; rm=$?
	# shellcheck disable=SC2086
	"$XFSX_MKFS" -q $o "$a" >/dev/null 2>"$TMP/err"; rx=$?
	fx=$(feat "$a"); fm=$(feat "$b")
	check "$o: both take it (exit $rm, $rx), same versionnum and incompat features ($fx)" \
		[ "$rm" -eq 0 -a "$rx" -eq 0 -a "$fx" = "$fm" ]
done

# ---- (c) the kernel on a parent pointer image ----
# kernel_rounds LABEL IMG: mount, namespace changes, unmount, judged again
kernel_rounds() {
	local m="$TMP/mnt" rc
	mount_img "$2" "$m" || { not_ok "$1: mount"; return; }
	python3 - "$m" >"$TMP/k.out" 2>&1 <<'PY'; rc=$?
import os, sys
m = sys.argv[1]
P = lambda *a: os.path.join(m, *a)
os.makedirs(P('k1/k2'), exist_ok=True)
os.makedirs(P('k3'), exist_ok=True)
for i in range(300):
    with open(P('k1', 'new_%03d' % i), 'w') as f: f.write('n' * i)
os.rename(P('k1/new_000'), P('k3/moved'))                   # across directories
os.rename(P('k1/new_001'), P('k1/k2/' + 'r' * 255))          # a long name
os.link(P('k1/new_002'), P('k3/link'))                       # a link in another directory
os.link(P('k1/new_002'), P('k1/k2/link2'))
os.rename(P('k1/new_003'), P('k3/link'))                     # over a linked name
os.unlink(P('k1/new_004'))
os.rename(P('k1/k2'), P('k3/k2'))                            # a directory moves
for d, _, fs in os.walk(m):
    for f in fs:
        if f.startswith('new_0') and f < 'new_020':
            os.setxattr(os.path.join(d, f), 'user.k', b'k' * 40)
os.sync()
PY
	sed 's/^/# /' "$TMP/k.out"
	unmount_dir "$m"
	check "$1: the kernel created, renamed, linked and removed (exit $rc)" [ "$rc" -eq 0 ]
	judge "$1, after the kernel's changes" "$2"
}

# ---- (d) -p ----
src="$TMP/src"
python3 - "$src" >"$TMP/src.out" 2>&1 <<'PY'; rc=$?
import os, sys
s = sys.argv[1]
P = lambda *a: os.path.join(s, *a)
for d in ('d1', 'd2', 'd3/sub', 'many', 'heavy/h1', 'heavy/h2', 'heavy/h3', 'heavy/h4'):
    os.makedirs(P(d))
with open(P('d1/f'), 'w') as f: f.write('f' * 100)
os.link(P('d1/f'), P('d2/f'))                     # same name, two directories
os.link(P('d1/f'), P('d3/sub/other'))
os.link(P('d1/f'), P('d1/second'))               # twice in one directory
os.setxattr(P('d1/f'), 'user.small', b'v')
L = 'L' * 255
with open(P('d2', L), 'w') as f: f.write('long')  # a 255-byte name: no short form
os.link(P('d2', L), P('d1', 'M' * 255))
for i in range(3000):
    with open(P('many', 'entry_%05d' % i), 'w') as f: pass
with open(P('heavy/target'), 'w') as f: f.write('t')
for i in range(800):
    os.link(P('heavy/target'), P('heavy/h%d' % (1 + i % 4), 'link_with_a_longer_name_%04d' % i))
os.setxattr(P('heavy/target'), 'user.beside', b'b' * 100)
# a remote value in XFS (over 3/4 of a block), small enough for ext4's one xattr block
os.setxattr(P('heavy/target'), 'user.remote', b'r' * 3500)
with open(P('leafy'), 'w') as f: f.write('l')
for i in range(30):
    os.link(P('leafy'), P('d3', 'leafy_link_%02d' % i))
os.setxattr(P('d3'), 'user.dir', b'd' * 20)
os.symlink('d1/f', P('sym'))
os.symlink('x' * 600, P('longsym'))
os.mkfifo(P('d2/fifo'))
if os.geteuid() == 0:
    os.mknod(P('d2/chr'), 0o20644, os.makedev(1, 3))
    os.setxattr(P('d2/f'), 'trusted.t', b'trusted')
PY
sed 's/^/# /' "$TMP/src.out"
check "the source tree made (exit $rc)" [ "$rc" -eq 0 ]

# pptr_forms LABEL IMG LEAFY HEAVY: the attr fork formats (LEAFY, HEAVY: the
# magic of attr block 0 of the 31-name and of the 801-name file)
pptr_forms() {
	local f
	f=$("$DB" -r -c 'path /many/entry_00001' -c 'p core.aformat' "$2" | awk '{print $3}')
	check "$1: one short name: a short form attr fork (aformat $f)" [ "$f" = 1 ]
	f=$("$DB" -r -c "path /d2/$(printf 'L%.0s' $(seq 255))" -c 'ablock 0' -c 'p hdr.info.hdr.magic' "$2" | awk '{print $3}')
	check "$1: 255-byte names: one attr leaf block ($f)" [ "$f" = 0x3bee ]
	f=$("$DB" -r -c 'path /leafy' -c 'ablock 0' -c 'p hdr.info.hdr.magic' "$2" | awk '{print $3}')
	check "$1: 31 names: attr block 0 is $3 ($f)" [ "$f" = "$3" ]
	f=$("$DB" -r -c 'path /heavy/target' -c 'ablock 0' -c 'p hdr.info.hdr.magic' "$2" | awk '{print $3}')
	check "$1: 801 names and two xattrs: attr block 0 is $4 ($f)" [ "$f" = "$4" ]
}

# kernel_parents LABEL MOUNTPOINT PATH N: the kernel lists N parent pointers of PATH
# (xfs_io 6.10's parent: XFS_IOC_GETPARENTS; xfs_db 6.10 lists none in short form)
kernel_parents() {
	local n
	n=$("$IO" -r -c parent "$2/$3" 2>&1 | grep -c "^p_name *=")
	check "$1: the kernel lists $4 parent pointers of $3 ($n)" [ "$n" = "$4" ]
}

# paths_equal LABEL IMG: --paths of the image = what find lists on it, mounted
paths_equal() {
	local m="$TMP/mnt" rc
	mount_img "$2" "$m" ro || { not_ok "$1: read-only mount"; return; }
	(cd "$m" && find . -mindepth 1 -printf '%i %P\n') >"$TMP/find.txt"
	kernel_parents "$1" "$m" heavy/target 801
	kernel_parents "$1" "$m" d1/f 4
	kernel_parents "$1" "$m" "d1/$(printf 'M%.0s' $(seq 255))" 2
	unmount_dir "$m"
	"$XFSX_BULKSTAT" --paths "$2" >"$TMP/paths.jsonl" 2>"$TMP/paths.err"; rc=$?
	python3 - "$TMP/find.txt" "$TMP/paths.jsonl" >"$TMP/paths.out" 2>&1 <<'PY' || rc=1
import json, sys
want = {}
for line in open(sys.argv[1]):
    ino, _, p = line.rstrip('\n').partition(' ')
    want.setdefault(int(ino), set()).add('/' + p)
got = {r['ino']: r['paths'] for r in map(json.loads, open(sys.argv[2]))}
bad = [i for i, p in want.items() if set(got.get(i, [])) != p or len(got.get(i, [])) != len(p)]
extra = [i for i in got if got[i] and i not in want and got[i] != ['/']]
for i in bad[:5]:
    print('# inode %d: find %d paths, --paths %d' % (i, len(want[i]), len(got.get(i, []))))
print('# --paths: %d inodes, %d paths, %d mismatches, %d extra'
      % (len(want), sum(map(len, want.values())), len(bad), len(extra)))
sys.exit(1 if bad or extra or sum(map(len, want.values())) < 3800 else 0)
PY
	cat "$TMP/paths.out"
	check "$1: xfsx_bulkstat --paths lists every path find lists (exit $rc)" [ "$rc" -eq 0 ]
}

if [ "$rc" -eq 0 ]; then
	# options, and the magic of attr block 0 of the 31-name and the 801-name file
	for c in "|0x3bee|0x3ebe" "-b size=1024|0x3ebe|0x3ebe" "-i exchange=0 -i size=1024|0x3bee|0x3ebe" \
		 "-b size=65536|0x3bee|0x3bee"; do
		IFS='|' read -r o leafy heavy <<<"$c"
		label="-p DIR -n parent=1 ${o:-(defaults)}"
		rm -f "$a"; truncate -s 4g "$a"
		# shellcheck disable=SC2086
		"$XFSX_MKFS" -q -n parent=1 $o -p "$src" "$a" 2>"$TMP/mk.err"; rc=$?
		check "$label: made (exit $rc: $(head -1 "$TMP/mk.err"))" [ "$rc" -eq 0 ]
		[ "$rc" -eq 0 ] || continue
		judge "$label" "$a"
		pptr_forms "$label" "$a" "$leafy" "$heavy"
		if have_loop_xfs; then
			paths_equal "$label" "$a"
			kernel_rounds "$label" "$a"
		else
			skip "$label: the kernel's view" "needs root and a loop device"
		fi
	done
fi

# a protofile: directories, files, a symlink; every name a parent pointer
cat >"$TMP/proto" <<EOF
/dev/null
0 0
d--755 0 0
pd1 d--755 0 0
 pf1 ---644 0 0 $src/d1/f
 pf2 ---644 0 0 $src/leafy
 pd2 d--700 1 1
  pf3 ---600 0 0 $src/heavy/target
  ps1 l--777 0 0 pf3
 $
 $(printf 'P%.0s' $(seq 255)) ---644 0 0 $src/d1/f
$
$
EOF
rm -f "$a"; truncate -s 1g "$a"
"$XFSX_MKFS" -q -n parent=1 -p "$TMP/proto" "$a" 2>"$TMP/mk.err"; rc=$?
check "-p PROTOFILE -n parent=1: made (exit $rc: $(head -1 "$TMP/mk.err"))" [ "$rc" -eq 0 ]
judge "-p PROTOFILE -n parent=1" "$a"
if have_loop_xfs && mount_img "$a" "$TMP/mnt" ro; then
	kernel_parents "-p PROTOFILE" "$TMP/mnt" pd1/pd2/pf3 1
	kernel_parents "-p PROTOFILE" "$TMP/mnt" pd1/pd2 1
	kernel_parents "-p PROTOFILE" "$TMP/mnt" "pd1/$(printf 'P%.0s' $(seq 255))" 1
	unmount_dir "$TMP/mnt"
else
	skip "-p PROTOFILE: the kernel's parent pointers" "needs root and a loop device"
fi

# an empty parent pointer image under the kernel
rm -f "$a"; truncate -s 1g "$a"
if "$XFSX_MKFS" -q -n parent=1 "$a" 2>"$TMP/mk.err"; then
	if have_loop_xfs; then kernel_rounds "empty -n parent=1" "$a"
	else skip "empty -n parent=1: the kernel's changes" "needs root and a loop device"; fi
else
	not_ok "empty -n parent=1: xfsx_mkfs failed: $(head -1 "$TMP/mk.err")"
fi
diag "judged $judged images: $clean clean under both checkers"
rm -f "$a" "$b"
tap_done
