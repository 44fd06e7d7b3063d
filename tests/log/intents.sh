#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unfinished log intents: logs that stop after an EFI, RUI, CUI
# or BUI was logged and before its done item.  A kernel workload that uses
# intents (a fragmented file truncated; reflink copies and CoW writes on a
# reflink+rmapbt filesystem, of one large file and of many small ones) runs
# beside a loop of fsyncs, so its deferred chains are cut by many
# checkpoints; the log is then cut at each record
# start (tests/log/logcut.py) and the cuts whose replay leaves intents
# unfinished are the cases.  The kernel's recovery of the same cut image is
# the oracle: copy A mounted and unmounted, copy B repaired by xfsx_repair,
# compared as tests/log/replay.sh compares (xfs_repair -n, trees,
# xfsx_bulkstat), and the free block counts (plus the refcount btree
# blocks, whose shape differs: see intent_extra).  xfsx_check on the cut image
# (replayed in memory) must find nothing: the findings the intents explain
# are accounted, and their count must be above zero.  An unfinished BUI is
# applied to its inode's fork by the replay, a list of extents or a block
# map btree (remapbtree: remaps onto a btree fork, K > 0 such BUIs must be
# completed); a fork that needs more bmbt blocks than it had takes new ones
# from free space (convert: an extent list past the in-inode limit becomes
# a btree; growbt: a full bmbt leaf gets a second one; at least one such
# BUI, bui_bmbt_taken, must be completed over the two).  One the replay cannot apply (no
# free block) makes xfsx_repair refuse, nothing written, and no cut may
# meet that here.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/log/log_lib.sh"
need_log_tools "unfinished intents"
CUT="$XFSX_SRC/tests/log/logcut.py"

# the workloads: a fragmented file (and, with REFL, a reflink copy and CoW
# writes to it) changed while another file is fsynced in a loop
wl_chains() {
	python3 - "$1/frag" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)
for i in range(3000):
    os.pwrite(fd, b"x" * 4096, i * 8192)
os.close(fd)
PY
	echo start >"$1/tick"
	sync -f "$1"
	( while [ ! -e "$1/stop" ]; do xfs_io -c "pwrite 0 4k" -c fsync "$1/tick"; done ) &
	if [ -n "${REFL:-}" ]; then
		cp --reflink=always "$1/frag" "$1/clone"
		xfs_io -c "pwrite -S 0x41 0 2m" -c fsync "$1/clone"
	fi
	xfs_io -c "truncate 0" "$1/frag"
	touch "$1/stop"
	wait
}

# many small files (their forks stay lists of extents in the inode) cloned
# and written to, in one process so the deferred chains take most of the time
wl_clones() {
	mkdir "$1/s"
	python3 - "$1/s" "$(( FULL ? 400 : 150 ))" <<'PY'
import os, sys
for f in range(int(sys.argv[2])):
    fd = os.open(sys.argv[1] + "/f%d" % f, os.O_CREAT | os.O_WRONLY)
    for i in range(16):
        os.pwrite(fd, bytes([65 + f % 26]) * 4096, i * 8192)
    os.close(fd)
PY
	echo start >"$1/tick"
	sync -f "$1"
	( while [ ! -e "$1/stop" ]; do xfs_io -c "pwrite 0 4k" -c fsync "$1/tick"; done ) &
	python3 - "$1/s" "$(( FULL ? 400 : 150 ))" <<'PY'
import fcntl, os, sys
FICLONE = 0x40049409
d = sys.argv[1]
for f in range(int(sys.argv[2])):
    s = os.open(d + "/f%d" % f, os.O_RDONLY)
    c = os.open(d + "/c%d" % f, os.O_CREAT | os.O_WRONLY)
    fcntl.ioctl(c, FICLONE, s)
    os.pwrite(c, b"z" * 4096, 8192 * (f % 16))
    os.fsync(c)
    os.close(s)
    os.close(c)
PY
	touch "$1/stop"
	wait
}

# remaps onto a file whose data fork is a block map btree (700 two-block
# extents, one block apart): each FICLONERANGE remaps extent by extent, an
# unmap BUI and a map BUI per extent on that btree fork, while another
# file is fsynced in a loop, so checkpoints fall inside the chains.  The
# files are made before a freeze, which covers the log: the cuts fall only
# among the remaps.
wl_remapbtree() {
	python3 - "$1" <<'PY'
import os, sys
for name, c in (("big", b"b"), ("big2", b"c"), ("dst", b"d")):
    fd = os.open(sys.argv[1] + "/" + name, os.O_CREAT | os.O_WRONLY)
    for i in range(700):
        os.pwrite(fd, c * 8192, i * 3 * 4096)
    os.close(fd)
PY
	echo start >"$1/tick"
	sync -f "$1"
	xfs_io -x -c freeze -c thaw "$1"
	( while [ ! -e "$1/stop" ]; do xfs_io -c "pwrite 0 4k" -c fsync "$1/tick"; done ) &
	for r in 1 2 3; do
		# the whole of big (size 8597504) at 0; big2 from its second block on, at 0
		xfs_io -c "reflink $1/big 0 0 8597504" -c fsync "$1/dst"
		xfs_io -c "reflink $1/big2 4096 0 8593408" -c fsync "$1/dst"
	done
	touch "$1/stop"
	wait
}

# a fast fsync loop on DIR/tick until DIR/stop exists (one process: many
# checkpoints, so some fall inside the deferred chains), running when it returns
ticker() {
	python3 - "$1" <<'PY' &
import os, sys
d = sys.argv[1]
fd = os.open(d + "/tick", os.O_CREAT | os.O_WRONLY)
n = 0
while not os.path.exists(d + "/stop"):
    os.pwrite(fd, b"t" * 512, 0)
    os.fsync(fd)
    n += 1
    if n == 20:
        open(d + "/ticking", "w").close()
PY
	while [ ! -e "$1/ticking" ]; do sleep 0.01; done
}

# NFILES files of NEXT one-block extents (every other block), the log then
# covered by a freeze; then one block of src remapped into a hole of each
# (FICLONERANGE: a map BUI), past the fork's limit: its BUI makes the fork
# need a new bmbt block.  convert: 4 KiB blocks, 512-byte inodes: the data
# fork holds (512 - 176) / 16 = 21 extents in the inode (fewer when an attr
# fork shares it: NEXT=inode reads it), one more makes it a btree; growbt: 1 KiB blocks, a bmbt leaf holds (1024 - 72) / 16 = 59
# records, the 60th needs a second leaf.  Checkpoints rarely fall between
# a BUI and its done item (the chain is short: about one remap in a
# hundred), so there are many files, remapped by four processes beside the
# fsync loop, and the filesystem is shut down (log flushed) while they
# run, two thirds of the way; cut_cases tries only the cuts just past a
# BUI (bui_cuts).
wl_newbmbt() {
	if [ "$NEXT" = inode ]; then
		# the extents a new file's data fork holds in the inode: an empty attr
		# fork may take part of it (seen: forkoff 24, 12 extents; else 21)
		local fo isz
		echo x >"$1/probe"
		sync -f "$1"
		xfs_io -x -c freeze -c thaw "$1"
		fo=$(xfs_db -r -c "inode $(stat -c %i "$1/probe")" -c "p core.forkoff" "$IMG" | awk '{print $3}')
		isz=$(xfs_db -r -c "sb 0" -c "p inodesize" "$IMG" | awk '{print $3}')
		NEXT=$(( ${fo:-0} > 0 ? fo * 8 / 16 : (isz - 176) / 16 ))
		rm "$1/probe"
	fi
	python3 - "$1" "$NFILES" "$NEXT" "$BS" <<'PY'
import fcntl, mmap, os, struct, sys
FICLONERANGE = 0x4020940d
d, nf, ne, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(d + "/src", os.O_CREAT | os.O_WRONLY)
os.pwrite(fd, b"s" * bs * 4, 0)
os.close(fd)
os.sync()
# the extents: direct writes, one extent each (buffered ones get
# speculative preallocation, unwritten extents between the written ones);
# CLONED: blocks of src remapped, so a fork at the in-inode limit stays a
# list (direct writes leave a btree of 21: the kernel's allocations pass
# the limit on the way)
buf = mmap.mmap(-1, bs)
s = os.open(d + "/src", os.O_RDONLY)
for f in range(nf):
    buf[:] = bytes([65 + f % 26]) * bs
    fd = os.open(d + "/f%d" % f, os.O_CREAT | os.O_WRONLY | os.O_DIRECT)
    for i in range(ne):
        if os.environ.get("CLONED"):
            # struct file_clone_range: src_fd, src_offset, src_length, dest_offset
            fcntl.ioctl(fd, FICLONERANGE, struct.pack("=qQQQ", s, (i % 4) * bs, bs, 2 * i * bs))
        else:
            os.pwrite(fd, buf, 2 * i * bs)
    os.close(fd)
PY
	sync -f "$1"
	xfs_io -x -c freeze -c thaw "$1"
	ticker "$1"
	local part
	for part in 0 1 2 3; do
		python3 - "$1" "$NFILES" "$NEXT" "$BS" "$part" <<'PY' &
import fcntl, os, struct, sys
FICLONERANGE = 0x4020940d
d, nf, ne, bs, part = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = os.open(d + "/src", os.O_RDONLY)
for f in range(part, nf, 4):
    if f >= 2 * nf // 3:
        open(d + "/late", "w").close()
    try:
        c = os.open(d + "/f%d" % f, os.O_WRONLY)
        # struct file_clone_range: src_fd, src_offset, src_length, dest_offset
        fcntl.ioctl(c, FICLONERANGE, struct.pack("=qQQQ", s, (f % 4) * bs, bs, (2 * ne + 3) * bs))
        os.close(c)
    except OSError:
        break
PY
	done
	while [ ! -e "$1/late" ]; do sleep 0.001; done
	xfs_io -x -c "shutdown -f" "$1"
	wait
}

# fdblocks IMG: the superblock's free block count
fdblocks() { xfs_db -r -c 'sb 0' -c 'p fdblocks' "$1" | awk '{print $3}'; }

# agsum IMG FIELD...: the AGFs' FIELDs summed over every AG
agsum() {
	local img=$1 ag n s=0
	shift
	n=$(xfs_db -r -c 'sb 0' -c 'p agcount' "$img" | awk '{print $3}')
	for ((ag = 0; ag < n; ag++)); do
		s=$((s + $(xfs_db -r -c "agf $ag" -c "p $*" "$img" | awk '{t += $3} END {print t + 0}')))
	done
	echo $s
}

# after compare's checks, before it removes the copies.  fdblocks counts the
# AGFs' freeblks + flcount + btreeblks (the non-root bno/cnt/rmap blocks) but
# not the refcount btree's blocks nor the files' bmbt blocks.  The rebuilt
# AG's rmap and refcount btrees are packed by the bulk loader, not shaped by
# the kernel's inserts (seen: rmapbt 65 blocks for the kernel's 68,
# refcountbt 11 for its 9, freeblks one higher, fdblocks two lower), and a
# fork the replay rebuilt as a packed bmbt may hold fewer bmbt blocks than
# the kernel's, which splits block by block (seen: 6 for its 7, fdblocks one
# higher).  So the exact rule is fdblocks + the refcount btrees' blocks +
# the files' bmbt blocks equal: free space plus every btree block, which a
# leaked or doubly used block would break.  Per inode, the blocks the forks
# map (xfs_db bmap) are equal and bulkstat's "blocks" no higher than the
# kernel's.
intent_extra() {
	local fa fb ra rb
	fa=$(fdblocks "$1"); fb=$(fdblocks "$2")
	ra=$(agsum "$1" refcntblocks); rb=$(agsum "$2" refcntblocks)
	"$XFSX_CHECK" "$2" >/dev/null 2>&1
	check "$CASE: xfsx_check calls the repaired image clean" [ $? -eq 0 ]
	local ino ba bb ma mb bad="" bta=0 btb=0
	while read -r ino ba bb; do
		ma=$(forkblocks "$1" "$ino"); mb=$(forkblocks "$2" "$ino")
		[ "$ma" = "$mb" ] && [ "$bb" -le "$ba" ] || bad="$bad $ino($ba/$bb, mapped $ma/$mb)"
		bta=$((bta + ba - ma)); btb=$((btb + bb - mb))
		[ "$ba" = "$bb" ] || diag "$CASE: inode $ino: kernel $ba blocks, ours $bb (mapped $ma both: bmbt blocks $((ba - ma)) and $((bb - mb)))"
	done < <(python3 - "$1" "$2" "$XFSX_BULKSTAT" <<'PY'
import json, subprocess, sys
def bs(img):
    out = subprocess.run([sys.argv[3], img], capture_output=True, text=True).stdout
    return {d["ino"]: d["blocks"] for d in map(json.loads, out.splitlines()) if d}
a, b = bs(sys.argv[1]), bs(sys.argv[2])
for ino in sorted(a):
    print(ino, a[ino], b.get(ino, -1))
PY
)
	check "$CASE: per inode, the blocks mapped equal and ours no more in all (bmbt packed)${bad:+:$bad}" [ -z "$bad" ]
	[ -n "$fa" ] && [ -n "$ra" ] && [ $((fa + ra + bta)) -eq $((fb + rb + btb)) ]
	ok_if "$CASE: free blocks + refcount btree blocks + bmbt blocks equal (kernel $fa + $ra + $bta, ours $fb + $rb + $btb)"
	diag "$CASE: fdblocks kernel $fa ours $fb; AGF btreeblks kernel $(agsum "$1" btreeblks) ours $(agsum "$2" btreeblks), rmapblocks kernel $(agsum "$1" rmapblocks) ours $(agsum "$2" rmapblocks), refcntblocks kernel $ra ours $rb"
}
COMPARE_EXTRA=intent_extra
BULKSTAT_MASK='s/"blocks":[0-9]*,//'

# forkblocks IMG INO: the blocks the inode's forks map (xfs_db bmap), bmbt blocks not counted
forkblocks() {
	xfs_db -r -c "inode $2" -c "bmap -a" -c "bmap -d" "$1" | awk '{for (i = 1; i < NF; i++) if ($i == "count") s += $(i + 1)} END {print s + 0}'
}

completed=0 cases=0 refused=0 buis=0 btbuis=0 taken=0 kinds=""
# bui_count BASE OFF SECS B: the BUI items in BASE's log cut at record start B (B: the head, uncut)
bui_count() {
	cp --sparse=always "$1" "$TMP/bisect.img"
	[ "$4" = "$HEAD" ] || python3 "$CUT" cut "$TMP/bisect.img" "$2" "$3" "$4"
	json_field "$("$XFSX_CHECK" -j "$TMP/bisect.img" 2>/dev/null)" "d['log']['items'].get('bui', 0)"
	rm -f "$TMP/bisect.img"
}
# bui_cuts BASE OFF SECS NBUI CUT...: for the first BUIs in the log (two, or
# ten with XFSX_LOG_FULL=1), the first cut (record start, the last one the
# head) whose log holds it: a BUI is written only when a checkpoint falls
# between it and its done item, so that cut leaves it unfinished
bui_cuts() {
	local base=$1 off=$2 secs=$3 nbui=$4 k lo hi mid c
	shift 4
	local -a at=("$@")
	HEAD=${at[-1]}
	for ((k = 1; k <= nbui && k <= (FULL ? 10 : 2); k++)); do
		lo=0 hi=$((${#at[@]} - 1))
		while [ $lo -lt $hi ]; do
			mid=$(((lo + hi) / 2))
			c=$(bui_count "$base" "$off" "$secs" "${at[mid]}")
			if [ "${c:-0}" -ge $k ]; then hi=$mid; else lo=$((mid + 1)); fi
		done
		echo "${at[lo]}"
	done | uniq
}
# cut_cases NAME: every cut of $IMG whose replay leaves intents unfinished
cut_cases() {
	local name=$1 base="$TMP/$1.base.img" js off secs tail head n=0 last=-1 tk
	# convert, growbt: the cases are the cuts with a BUI that took new bmbt blocks
	local newbmbt=0
	case $name in convert | growbt) newbmbt=1 ;; esac
	mv "$IMG" "$base"
	js=$("$XFSX_CHECK" -j "$base" 2>/dev/null)
	off=$(json_field "$js" "d['log']['offset']"); secs=$(json_field "$js" "d['log']['sectors']")
	tail=$(json_field "$js" "d['log']['tail']['block']"); head=$(json_field "$js" "d['log']['head']['block']")
	if [ "$(json_field "$js" "d['log']['head']['cycle']")" != 1 ]; then
		diag "$name: the log wrapped (cuts need its first cycle)"
		rm -f "$base"
		return 2
	fi
	diag "$name: log $(json_field "$js" "'%d transactions, items %s' % (d['log']['transactions'], d['log']['items'])")"
	local cuts
	cuts=$(python3 "$CUT" starts "$base" "$off" "$tail" "$head" | tail -n +2)
	# convert, growbt: only the cuts just past a BUI (found by bisection)
	[ "$newbmbt" = 0 ] || cuts=$(bui_cuts "$base" "$off" "$secs" \
		"$(json_field "$js" "d['log']['items'].get('bui', 0)")" $cuts "$head")
	for b in $cuts; do
		IMG="$TMP/$name.cut.img"
		cp --sparse=always "$base" "$IMG"
		[ "$b" = "$head" ] || python3 "$CUT" cut "$IMG" "$off" "$secs" "$b"
		js=$("$XFSX_CHECK" -j "$IMG" 2>/dev/null); rc=$?
		local t open bui acc
		t=$(json_field "$js" "d['log']['transactions']")
		[ "$t" = "$last" ] && continue	# the same transactions as the last cut
		last=$t
		open=$(json_field "$js" "sum(d['log']['replay']['intents_open'].values())")
		[ "${open:-0}" -gt 0 ] || continue
		bui=$(json_field "$js" "d['log']['replay']['buis_unapplied'] + d['log']['replay']['intents_open']['ATTRI']")
		acc=$(json_field "$js" "d['log']['replay']['intent_findings_accounted']")
		CASE="$name@$b"
		kinds="$kinds $(json_field "$js" "' '.join(k for k, v in d['log']['replay']['intents_open'].items() if v)")"
		[ "$rc" -eq 0 ] && [ "$(json_field "$js" "len(d['findings'])")" = 0 ]
		ok_if "$CASE: xfsx_check on the cut log replays in memory and finds nothing (exit $rc; $open unfinished intents, $acc findings accounted to them)"
		if [ "$bui" -gt 0 ]; then
			local sum out
			sum=$(sha256sum <"$IMG")
			out=$("$XFSX_REPAIR" "$IMG" 2>&1); rc=$?
			[ $rc -eq 8 ] && grep -q "BUI" <<<"$out" && [ "$(sha256sum <"$IMG")" = "$sum" ]
			ok_if "$CASE: a BUI the replay cannot apply: xfsx_repair refuses (exit $rc), naming it, nothing written"
			refused=$((refused + 1))
			[ "$FULL" = 1 ] || [ $refused -lt 2 ] || [ $n -lt 3 ] || break
			continue
		fi
		tk=$(json_field "$js" "d['log']['replay']['bui_bmbt_taken']")
		[ "$newbmbt" = 0 ] || [ "$FULL" = 1 ] || [ "${tk:-0}" -gt 0 ] || continue
		taken=$((taken + ${tk:-0}))
		cases=$((cases + 1))
		completed=$((completed + open))
		buis=$((buis + $(json_field "$js" "d['log']['replay']['buis_applied']")))
		# remapbtree's BUIs are all on its btree-format fork (dst)
		[ "$name" != remapbtree ] || btbuis=$((btbuis + $(json_field "$js" "d['log']['replay']['buis_applied']")))
		compare "$CASE"
		n=$((n + 1))
		# a sample unless XFSX_LOG_FULL=1: three cases (remapbtree: and a BUI
		# among them; convert, growbt: the first that took a new bmbt block)
		[ "$FULL" = 1 ] || [ $newbmbt = 0 ] || break
		[ "$FULL" = 1 ] || [ $n -lt 3 ] || { [ "$name" = remapbtree ] && [ $btbuis -eq 0 ]; } || break
	done
	rm -f "$base" "$TMP/$name.cut.img"
	[ $n -gt 0 ] || [ $refused -gt 0 ] || return 3
}

# workload NAME OPTS WL: make the dirty image and its cases; the timing
# decides where the checkpoints fall, so a run whose log wrapped or whose
# cuts leave no intent unfinished is made again (TRIES times, default
# three, then said)
workload() {
	local name=$1 opts=$2 wl=$3 try rc=1 tries=${TRIES:-3}
	for ((try = 1; try <= tries; try++)); do
		if ! make_dirty "$name" "$opts" "$wl"; then
			not_ok "$name: made a dirty image"
			return
		fi
		cut_cases "$name"; rc=$?
		[ $rc -eq 0 ] && return
		diag "$name: try $try: $([ $rc -eq 2 ] && echo "the log wrapped" || echo "no cut left an intent unfinished"); again"
	done
	if [ $rc -eq 2 ]; then
		not_ok "$name: a log in its first cycle in $tries tries (cuts need that)"
	else
		diag "$name: no cut left an intent unfinished in $tries tries"
	fi
}

IMG_SIZE=400M
workload truncate "-m reflink=1,rmapbt=1 -l size=3100b" wl_chains
REFL=1 workload reflink "-m reflink=1,rmapbt=1 -l size=3100b" wl_chains
# (rarely cut inside a chain: XFSX_LOG_FULL=1 only)
if [ "$FULL" != 1 ]; then
	skip "clones" "few of its cuts leave intents unfinished: XFSX_LOG_FULL=1 runs it"
else
	# 400 files: a 3100-block log wrapped in every try; 8000 blocks hold them
	workload clones "-m reflink=1,rmapbt=1 -l size=8000b" wl_clones
fi
workload remapbtree "-m reflink=1,rmapbt=1 -l size=3100b" wl_remapbtree
IMG_SIZE=100M
# a BUI is logged only when a checkpoint falls inside its short chain: a
# run may have none (convert more often: about one try in three met one),
# so each is tried up to TRIES times and the assertion is on the two
# together (each says its count)
t0=$taken
TRIES=4 CLONED=1 NFILES=1000 NEXT=inode BS=4096 \
	workload convert "-m reflink=1,rmapbt=1 -i size=512 -l size=6000b" wl_newbmbt
t_convert=$((taken - t0))
TRIES=8 NFILES=500 NEXT=59 BS=1024 \
	workload growbt "-b size=1024 -m reflink=1,rmapbt=1 -i size=512 -l size=6000b" wl_newbmbt
check "BUIs completed that took a new bmbt block: $t_convert made an extent list a btree (convert), $((taken - t0 - t_convert)) gave a full bmbt leaf a second one (growbt); all workloads: $taken" \
	[ $((taken - t0)) -gt 0 ]
diag "kinds of unfinished intents met:$(tr ' ' '\n' <<<"$kinds" | sort | uniq -c | tr '\n' ' ')"
check "intents completed: $completed across $cases cases, $buis of them BUIs applied to forks" \
	[ "$completed" -gt 0 ]
[ "$btbuis" -gt 0 ] && [ "$refused" -eq 0 ]
ok_if "BUIs completed on block map btree forks: $btbuis (remapbtree); cuts refused for a BUI: $refused"

tap_done
