#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Header damage: superblocks (primary, AG 1, last AG), AGF, AGI and AGFL
# (AG 0, a middle AG, the last AG) damaged with xfs_db -x:
#   set   write -d FIELD VALUE, a value known to be invalid, CRC kept valid:
#         xfsx_check must exit 4 with a finding for that object and AG
#   rand  fuzz -d FIELD random, CRC kept valid: the value may happen to be
#         valid, so Debian's xfs_repair -n is the judge: whatever it reports,
#         xfsx_check must report (exit 4 naming the object; exit 8 for a
#         primary superblock that now claims v4 or unknown features)
#   crc   fuzz -c FIELD random, CRC left stale: the object's .crc finding
# Each case starts from a pristine copy of its base image.  A closing
# diagnostic gives the counts: cases, xfs_repair detected, xfsx detected,
# missed.
. "$XFSX_SRC/tests/lib.sh"

here="$XFSX_SRC/tests/core"
tool() { python3 "$here/coretool.py" "$@"; }

if ! have_xfsprogs; then
	skip "header damage" "xfsprogs (mkfs.xfs, xfs_db, xfs_repair) not installed"
	tap_done
	exit
fi

# --- base images --------------------------------------------------------------
# A: 4 AGs, rmapbt + reflink + finobt + sparse, 512-byte sectors; lived in when
#    the kernel can mount it (real LSNs, a moved log head, a used free list).
# B: 4 KiB sectors, no rmapbt, 7 AGs with a short last one.
A="$TMP/a.img"; B="$TMP/b.img"
truncate -s 1g "$A" && mkfs.xfs -f -q -m rmapbt=1 "$A" >/dev/null 2>&1 || { not_ok "mkfs.xfs image A"; tap_done; exit; }
truncate -s 1100m "$B" && mkfs.xfs -f -q -s size=4096 -d agsize=160m "$B" >/dev/null 2>&1 || { not_ok "mkfs.xfs image B"; tap_done; exit; }
if have_loop_xfs && mount_img "$A" "$TMP/mnt" loop 2>/dev/null; then
	for d in 1 2 3 4 5 6; do
		mkdir -p "$TMP/mnt/d$d" && for i in $(seq 1 40); do echo "$d $i" >"$TMP/mnt/d$d/f$i"; done
	done
	rm -rf "$TMP/mnt/d2" "$TMP/mnt/d5"
	umount "$TMP/mnt"
	diag "image A was mounted and written by the kernel"
else
	diag "image A is fresh from mkfs (no loop mount here)"
fi
for img in "$A" "$B"; do
	out=$("$XFSX_CHECK" "$img" 2>&1) || { not_ok "base image $(basename "$img") is clean before damage: $out"; tap_done; exit; }
	xfs_repair -n "$img" >/dev/null 2>&1 || { not_ok "xfs_repair -n calls base image $(basename "$img") clean"; tap_done; exit; }
done
ok "base images are clean for xfsx_check and xfs_repair -n"
agcount_of() { xfs_db -r -c 'sb 0' -c 'print agcount' "$1" | awk '{print $3}'; }
A_LAST=$(($(agcount_of "$A") - 1)); B_LAST=$(($(agcount_of "$B") - 1))
B_MID=$((B_LAST / 2))
A_VERSION=$(xfs_db -r -c 'sb 0' -c 'print versionnum' "$A" | awk '{print $3}')
# an active free list slot of an AGF (flfirst), to damage a block actually in use
flfirst_of() { xfs_db -r -c "agf $2" -c 'print flfirst' "$1" | awk '{print $3}'; }

# --- one case ------------------------------------------------------------------
W="$TMP/work.img"
n_cases=0; n_xfsx=0; n_missed=0; n_extra=0
n_set=0; n_set_ok=0
n_crc=0; n_crc_ok=0; n_crc_repair=0
n_rand=0; n_rand_xfsx=0; n_rand_repair=0

# object_of "agf 3" -> prefix agf, ag 3
# detected JSON OBJ AG RC: the run reported damage to this object in this AG
detected() {
	local json=$1 prefix=$2 ag=$3 rc=$4
	if [ "$rc" -eq 4 ]; then
		tool has "$json" "$prefix." "$ag" >/dev/null && return 0
		# a primary superblock unusable for geometry: the fallback names it
		[ "$prefix" = sb ] && [ "$ag" -eq 0 ] && tool has "$json" sb.primary_bad 0 >/dev/null && return 0
		return 1
	fi
	# unknown compat bits: harmless by definition (the kernel mounts with them);
	# xfs_repair refuses them, xfsx_check says so as information
	if [ "$rc" -eq 0 ] && [ "$prefix" = sb ] && [ "$ag" -eq 0 ] &&
	   tool has "$json" sb.compat_unknown 0 >/dev/null; then
		return 0
	fi
	# a primary superblock that claims v4 or unknown features is refused, not checked
	if [ "$rc" -eq 8 ] && [ "$prefix" = sb ] && [ "$ag" -eq 0 ] &&
	   grep -q "v4 filesystems are not supported\|unsupported filesystem features" "$TMP/check.err"; then
		return 0
	fi
	return 1
}

# run_case KIND IMAGE "OBJ N" FIELD [VALUE]
run_case() {
	local kind=$1 base=$2 obj=$3 field=$4 value=${5:-} prefix ag cmd rc rrc=-1 name
	prefix=${obj% *}; ag=${obj#* }
	case $kind in
		set)  cmd="write -d $field $value" ;;
		rand) cmd="fuzz -d $field random" ;;
		crc)  cmd="fuzz -c $field random" ;;
	esac
	name="$(basename "$base" .img):$obj $cmd"
	cp --sparse=always "$base" "$W"
	if ! xfs_db -x -c "$obj" -c "$cmd" "$W" >"$TMP/db.out" 2>&1 ||
	   grep -qi "invalid\|not found\|unknown\|usage" "$TMP/db.out"; then
		not_ok "$name: xfs_db applied the damage"
		sed 's/^/# /' "$TMP/db.out" | head -3
		return
	fi
	"$XFSX_CHECK" --json "$W" >"$TMP/check.json" 2>"$TMP/check.err"; rc=$?
	# 0, 4 or 8 with a JSON document: anything else is a crash or a usage bug
	case $rc in 0|4|8) ;; *) rc=crash ;; esac
	if [ $rc = crash ] || [ ! -s "$TMP/check.json" ]; then
		not_ok "$name: xfsx_check ran (exit $rc: $(head -c 300 "$TMP/check.err"))"
		return
	fi
	n_cases=$((n_cases + 1))
	local got=no
	detected "$TMP/check.json" "$prefix" "$ag" $rc && got=yes
	[ $got = yes ] && n_xfsx=$((n_xfsx + 1))
	case $kind in
	set)
		n_set=$((n_set + 1))
		if [ $got = yes ]; then
			n_set_ok=$((n_set_ok + 1))
			ok "$name: exit $rc, finding for $prefix in AG $ag"
		else
			n_missed=$((n_missed + 1))
			not_ok "$name: exit $rc, finding for $prefix in AG $ag"
			tool has "$TMP/check.json" "$prefix." "$ag" || head -c 300 "$TMP/check.err" | sed 's/^/# /'
		fi
		;;
	crc)
		xfs_repair -n "$W" >"$TMP/repair.out" 2>&1; rrc=$?
		n_crc=$((n_crc + 1))
		[ $rrc -ne 0 ] && n_crc_repair=$((n_crc_repair + 1))
		if [ $rc -eq 4 ] && tool has "$TMP/check.json" "$prefix.crc" "$ag" >/dev/null; then
			n_crc_ok=$((n_crc_ok + 1))
			ok "$name: exit 4, $prefix.crc in AG $ag (xfs_repair -n exit $rrc)"
		else
			n_missed=$((n_missed + 1))
			not_ok "$name: exit $rc, $prefix.crc in AG $ag (xfs_repair -n exit $rrc)"
			tool has "$TMP/check.json" "$prefix.crc" "$ag"
		fi
		;;
	rand)
		xfs_repair -n "$W" >"$TMP/repair.out" 2>&1; rrc=$?
		n_rand=$((n_rand + 1))
		[ $rrc -ne 0 ] && n_rand_repair=$((n_rand_repair + 1))
		[ $got = yes ] && n_rand_xfsx=$((n_rand_xfsx + 1))
		if [ $rrc -ne 0 ] && [ $got = no ]; then
			n_missed=$((n_missed + 1))
			not_ok "$name: xfs_repair -n reports it (exit $rrc), so must xfsx_check (exit $rc)"
			xfs_db -r -c "$obj" -c "print $field" "$W" 2>/dev/null | grep -F -m1 "$field = " | sed 's/^/#   now: /'
			grep -v "^Phase\|^        -\|^No modify\|^Cannot get host\|^Repair may fail\|^the image and" "$TMP/repair.out" | head -4 | sed 's/^/#   xfs_repair: /'
		else
			ok "$name: xfs_repair -n exit $rrc, xfsx_check exit $rc"
			if [ $rrc -eq 0 ] && [ $got = yes ]; then
				n_extra=$((n_extra + 1))
				diag "  only xfsx_check reports this one: $(xfs_db -r -c "$obj" -c "print $field" "$W" 2>/dev/null | grep -F -m1 "$field = ")"
			fi
		fi
		;;
	esac
}

# --- targeted invalid values: always detected ------------------------------------
for obj in "sb 0"; do
	run_case set "$A" "$obj" blocksize 0
	run_case set "$A" "$obj" agcount 5
	run_case set "$A" "$obj" dblocks 99999999999
	run_case set "$A" "$obj" sectsize 1000
	run_case set "$A" "$obj" inodesize 300
	run_case set "$A" "$obj" logblocks 10
	run_case set "$A" "$obj" logblocks 600	# above 512 but below the reservation minimum
	run_case set "$A" "$obj" dirblklog 4	# valid alone: the secondaries outvote the primary
	run_case set "$A" "$obj" versionnum 0xb4a6
	run_case set "$A" "$obj" inprogress 1
	run_case set "$A" "$obj" imax_pct 200
	run_case set "$A" "$obj" icount 65
	run_case set "$A" "$obj" ifree 4000000
	run_case set "$A" "$obj" fdblocks 99999999999
	run_case set "$A" "$obj" features2 0
	run_case set "$A" "$obj" bad_features2 0
	run_case set "$A" "$obj" unit 3
	run_case set "$A" "$obj" rootino 5
	run_case set "$A" "$obj" uquotino 12345678901
	run_case set "$A" "$obj" flags 1
	run_case set "$A" "$obj" versionnum $((A_VERSION | 0x40))	# quotas on, no quota inode
	run_case set "$B" "$obj" logstart 1
	run_case set "$B" "$obj" agblocks 1
done
for obj in "sb 1" "sb $A_LAST"; do
	run_case set "$A" "$obj" agcount 5
	run_case set "$A" "$obj" blocksize 8192
	run_case set "$A" "$obj" dblocks 12345
	run_case set "$A" "$obj" magicnum 0
	run_case set "$A" "$obj" logstart 0
	run_case set "$A" "$obj" inodesize 1024
	run_case set "$A" "$obj" flags 2
done
run_case set "$B" "sb $B_LAST" agblocks 1
run_case set "$B" "sb $B_MID" features_ro_compat 0

for spec in "$A agf 0" "$A agf 2" "$A agf $A_LAST" "$B agf $B_LAST"; do
	set -- $spec; img=$1; obj="$2 $3"
	run_case set "$img" "$obj" freeblks 4000000000
	run_case set "$img" "$obj" longest 4000000000
	run_case set "$img" "$obj" seqno 7
	run_case set "$img" "$obj" length 1
	run_case set "$img" "$obj" versionnum 2
	run_case set "$img" "$obj" magicnum 0
	run_case set "$img" "$obj" bnolevel 0
	run_case set "$img" "$obj" cntlevel 99
	run_case set "$img" "$obj" bnoroot 0
	run_case set "$img" "$obj" cntroot 0xffffff00
	run_case set "$img" "$obj" flfirst 2000
	run_case set "$img" "$obj" fllast 1100
	run_case set "$img" "$obj" flcount 1200
	run_case set "$img" "$obj" btreeblks 4000000000
	run_case set "$img" "$obj" refcntlevel 99
	run_case set "$img" "$obj" uuid 00000000-0000-0000-0000-000000000001
	run_case set "$img" "$obj" lsn 0xffffffffffffffff
done
run_case set "$A" "agf 1" rmaplevel 0
run_case set "$A" "agf 1" rmapblocks 0
run_case set "$B" "agf 1" rmaproot 9

for spec in "$A agi 0" "$A agi $A_LAST" "$B agi $B_MID" "$B agi $B_LAST"; do
	set -- $spec; img=$1; obj="$2 $3"
	run_case set "$img" "$obj" "unlinked[5]" 0xdeadbeef
	run_case set "$img" "$obj" "unlinked[63]" 1
	run_case set "$img" "$obj" seqno 9
	run_case set "$img" "$obj" length 7
	run_case set "$img" "$obj" level 0
	run_case set "$img" "$obj" level 99
	run_case set "$img" "$obj" root 0
	run_case set "$img" "$obj" count 4000000000
	run_case set "$img" "$obj" newino 5
	run_case set "$img" "$obj" dirino 1000
	run_case set "$img" "$obj" free_level 0
	run_case set "$img" "$obj" ino_blocks 0
	run_case set "$img" "$obj" magicnum 0x58414746
done
run_case set "$A" "agi 0" freecount 4000000

for spec in "$A agfl 0" "$A agfl 2" "$B agfl $B_LAST"; do
	set -- $spec; img=$1; obj="$2 $3"; ag=$3
	first=$(flfirst_of "$img" "$ag")
	run_case set "$img" "$obj" "bno[100]" 4000000000
	run_case set "$img" "$obj" "bno[$first]" 0
	run_case set "$img" "$obj" "bno[$first]" 0xffffffff
	run_case set "$img" "$obj" seqno 5
	run_case set "$img" "$obj" magicnum 0
	run_case set "$img" "$obj" uuid 00000000-0000-0000-0000-000000000001
	run_case set "$img" "$obj" lsn 0xffffffffffffffff
done

# --- CRC broken ---------------------------------------------------------------------
run_case crc "$A" "sb 0" fdblocks
run_case crc "$A" "sb 1" icount
run_case crc "$B" "sb $B_LAST" fdblocks
for spec in "$A agf 0" "$A agf $A_LAST" "$B agf $B_MID" "$A agi 0" "$B agi $B_LAST" "$A agfl 0" "$B agfl $B_LAST"; do
	set -- $spec
	case $2 in agf) f=btreeblks ;; agi) f=freecount ;; agfl) f="bno[110]" ;; esac
	run_case crc "$1" "$2 $3" "$f"
done

# --- random values, CRC valid: whatever xfs_repair -n reports, xfsx_check reports ---
sb_fields="magicnum blocksize dblocks rblocks rextents uuid logstart rootino rbmino rsumino
	rextsize agblocks agcount rbmblocks logblocks versionnum sectsize inodesize inopblock
	blocklog sectlog inodelog inopblog agblklog rextslog inprogress imax_pct icount ifree
	fdblocks frextents uquotino gquotino qflags flags shared_vn inoalignmt unit width
	dirblklog logsectlog logsectsize logsunit features2 bad_features2 features_compat
	features_ro_compat features_incompat features_log_incompat spino_align pquotino lsn
	meta_uuid"
sec_fields="magicnum blocksize dblocks agblocks agcount logstart logblocks versionnum
	sectsize inodesize blocklog agblklog inoalignmt dirblklog features_incompat
	features_ro_compat uuid spino_align"
agf_fields="magicnum versionnum seqno length bnoroot cntroot rmaproot refcntroot bnolevel
	cntlevel rmaplevel refcntlevel rmapblocks refcntblocks flfirst fllast flcount freeblks
	longest btreeblks uuid lsn"
agi_fields="magicnum versionnum seqno length count root level freecount newino dirino
	unlinked[0] unlinked[31] unlinked[63] uuid lsn free_root free_level ino_blocks fino_blocks"
agfl_fields="magicnum seqno uuid lsn bno[0] bno[1] bno[2] bno[3] bno[100]"

for f in $sb_fields; do run_case rand "$A" "sb 0" "$f"; done
for f in $sec_fields; do run_case rand "$A" "sb 1" "$f"; done
for f in $sec_fields; do run_case rand "$B" "sb $B_LAST" "$f"; done
for f in $agf_fields; do run_case rand "$A" "agf 0" "$f"; done
for f in $agf_fields; do run_case rand "$A" "agf 2" "$f"; done
for f in $agf_fields; do run_case rand "$B" "agf $B_LAST" "$f"; done
for f in $agi_fields; do run_case rand "$A" "agi 0" "$f"; done
for f in $agi_fields; do run_case rand "$B" "agi $B_LAST" "$f"; done
for f in $agfl_fields; do run_case rand "$A" "agfl 0" "$f"; done
for f in $agfl_fields; do run_case rand "$B" "agfl $B_LAST" "$f"; done

diag "damage summary: $n_cases cases: $n_set targeted invalid values, $n_rand random values, $n_crc stale CRCs"
diag "damage summary: targeted: xfsx_check detected $n_set_ok of $n_set"
diag "damage summary: stale CRC: xfs_repair -n detected $n_crc_repair, xfsx_check $n_crc_ok of $n_crc"
diag "damage summary: random: xfs_repair -n detected $n_rand_repair, xfsx_check $n_rand_xfsx of $n_rand" \
     "($n_extra reported by xfsx_check only)"
diag "damage summary: total: xfsx_check detected $n_xfsx of $n_cases; missed $n_missed"
tap_done
