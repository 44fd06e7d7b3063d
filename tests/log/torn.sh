#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Damaged logs: a log torn at the head (its newest record's data
# changed, so its CRC fails; or its last sector never written, a hole in
# the cycle numbers) is replayed as the kernel replays it, without that
# record; fuzzed logs (bytes flipped between tail and head) never crash or
# hang xfsx_check or xfsx_repair: they are refused, or replayed with the
# same result as the kernel's recovery; crafted logs (damage with the CRC
# made right again, tests/log/logfuzz.py) never crash or hang either.
# XFSX_LOG_FULL=1: more fuzz.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/log/log_lib.sh"
need_log_tools "damaged logs"

make_dirty base "" wl_renames || { not_ok "made a dirty image"; tap_done; exit; }
BASE="$TMP/base.dirty.img"
mv "$IMG" "$BASE"
js=$("$XFSX_CHECK" -j "$BASE" 2>/dev/null)
off=$(json_field "$js" "d['log']['offset']")
last=$(json_field "$js" "d['log']['last_record']['block']")
head=$(json_field "$js" "d['log']['head']['block']")
tail=$(json_field "$js" "d['log']['tail']['block']")
recs=$(json_field "$js" "d['log']['records']")
diag "base: log at byte $off, tail $tail, head $head, last record at $last, $recs records"

# log_sanitizer FILE...: a sanitizer build reported something in the log code
# (reports from elsewhere, the repair that follows a replay, are only shown)
log_sanitizer() {
	grep -hE "runtime error|Sanitizer" "$@" | grep -vE "libfs/log|scan/log" | head -2 |
		sed 's/^/# (outside the log code) /'
	grep -hE "runtime error|Sanitizer" "$@" | grep -qE "libfs/log|scan/log|ERROR: AddressSanitizer"
}

# patch IMG BYTE_OFFSET HEX...: overwrite bytes in place
patch_bytes() {
	python3 - "$@" <<'PY'
import sys
img, off = sys.argv[1], int(sys.argv[2])
with open(img, "r+b") as f:
    f.seek(off)
    f.write(bytes.fromhex("".join(sys.argv[3:])))
PY
}

# torn by CRC: a byte of the newest record's data changed
IMG="$TMP/torn-crc.img"
cp --sparse=always "$BASE" "$IMG"
patch_bytes "$IMG" $(( off + (last + 1) * 512 + 200 )) 5a5a5a5a
tjs=$("$XFSX_CHECK" -j "$IMG" 2>/dev/null)
t=$(json_field "$tjs" "d['log']['torn_records']")
check "torn (CRC): the newest record is dropped as torn ($t)" [ "${t:-0}" -ge 1 ]
compare torn-crc

# torn by a hole: the newest record's last sector never reached the disk (cycle 0)
IMG="$TMP/torn-hole.img"
cp --sparse=always "$BASE" "$IMG"
patch_bytes "$IMG" $(( off + (head - 1) * 512 )) "$(printf '00%.0s' $(seq 1 512))"
tjs=$("$XFSX_CHECK" -j "$IMG" 2>/dev/null)
t=$(json_field "$tjs" "d['log']['head']['block']")
check "torn (hole): the head moves back to the newest whole record (head $t, was $head)" \
	[ "${t:-$head}" -lt "$head" ]
compare torn-hole

# fuzz: bytes flipped anywhere between tail and head
n=$(( FULL ? 24 : 6 ))
for i in $(seq 1 "$n"); do
	IMG="$TMP/fuzz$i.img"
	cp --sparse=always "$BASE" "$IMG"
	python3 - "$IMG" "$off" "$tail" "$head" "$i" <<'PY'
import random, sys
img, off, tail, head, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = random.Random(seed)
with open(img, "r+b") as f:
    for _ in range(r.choice([1, 2, 8])):
        pos = off + r.randrange(tail * 512, head * 512)
        f.seek(pos)
        b = f.read(1)
        f.seek(pos)
        f.write(bytes([b[0] ^ (1 << r.randrange(8))]))
PY
	timeout 120 "$XFSX_CHECK" "$IMG" >/dev/null 2>"$TMP/fz.err"; crc=$?
	cp --sparse=always "$IMG" "$IMG.A"
	timeout 120 "$XFSX_REPAIR" "$IMG" >"$TMP/fz.out" 2>&1; rrc=$?
	if [ $crc -ge 124 ] || [ $rrc -ge 124 ] || log_sanitizer "$TMP/fz.err" "$TMP/fz.out"; then
		not_ok "fuzz $i: no crash, hang or sanitizer report (check exit $crc, repair exit $rrc)"
		grep -hE "runtime error|Sanitizer" "$TMP/fz.err" "$TMP/fz.out" | head -3 | sed 's/^/#   /'
		continue
	fi
	if mount_img "$IMG.A" "$TMP/ma" 2>/dev/null; then kernel=mounted; umount "$TMP/ma"; else kernel=refused; fi
	if [ $rrc -eq 8 ]; then
		ok "fuzz $i: refused ($(grep -o 'cannot be replayed: [^.]*' "$TMP/fz.out" | head -1 | cut -c1-100)); the kernel $kernel it"
	elif [ "$kernel" = refused ]; then
		not_ok "fuzz $i: replayed (exit $rrc) although the kernel refuses the log"
	else
		xfs_repair -n "$IMG" >/dev/null 2>&1; x=$?
		if mount_img "$IMG.A" "$TMP/ma" ro && mount_img "$IMG" "$TMP/mb" ro,nouuid; then
			python3 "$TREE" "$TMP/ma" >"$TMP/a.tree"; python3 "$TREE" "$TMP/mb" >"$TMP/b.tree"
			umount "$TMP/ma" "$TMP/mb"
			check "fuzz $i: replayed (exit $rrc) as the kernel does: trees equal, xfs_repair -n exit $x" \
				cmp -s "$TMP/a.tree" "$TMP/b.tree"
		else
			umount "$TMP/ma" 2>/dev/null
			not_ok "fuzz $i: both copies mount after replay"
		fi
	fi
	rm -f "$IMG" "$IMG.A"
done

# unfinished intents: a fragmented file removed while the log is cut off
# (its extents' rmap/refcount/free intents, the done items not yet logged)
wl_intents() {
	python3 - "$1/frag" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)
for i in range(30000):
    os.pwrite(fd, b"x" * 4096, i * 8192)
os.close(fd)
PY
	sync -f "$1"
	rm "$1/frag" & sleep 0.05
}
if [ "$FULL" != 1 ]; then
	skip "unfinished intents" "timing-dependent and slow: XFSX_LOG_FULL=1 runs it (tests/log/intents.sh makes such logs deterministically)"
elif make_dirty intents "-m reflink=1,rmapbt=1" wl_intents; then
	ijs=$("$XFSX_CHECK" -j "$IMG" 2>/dev/null)
	open=$(json_field "$ijs" "sum(d['log'].get('replay', {}).get('intents_open', {}).values())")
	bui=$(json_field "$ijs" "d['log'].get('replay', {}).get('intents_open', {}).get('BUI', 0)")
	if [ "${open:-0}" -gt 0 ] && [ "${bui:-0}" -eq 0 ]; then
		check "unfinished intents ($open): xfsx_check finds nothing after its replay" \
			[ "$(json_field "$ijs" "len(d['findings'])")" = 0 ]
		compare intents
	elif [ "${open:-0}" -gt 0 ]; then
		sum=$(sha256sum <"$IMG")
		"$XFSX_REPAIR" "$IMG" >"$TMP/int.out" 2>&1; rc=$?
		[ "$(sha256sum <"$IMG")" = "$sum" ] && [ $rc -eq 8 ] && grep -q BUI "$TMP/int.out"
		ok_if "unfinished intents with a BUI: xfsx_repair refuses (exit $rc), nothing written"
	else
		skip "unfinished intents" "the kernel finished every intent before the shutdown this time"
	fi
else
	not_ok "intents: made a dirty image"
fi

# crafted: bytes flipped inside records whose CRC is then made right again,
# so the damage reaches the operation and item parsers
n=$(( FULL ? 40 : 10 ))
refused=0 replayed=0 agree=0
for i in $(seq 1 "$n"); do
	IMG="$TMP/craft$i.img"
	cp --sparse=always "$BASE" "$IMG"
	python3 "$XFSX_SRC/tests/log/logfuzz.py" "$IMG" "$off" "$(json_field "$js" "d['log']['sectors']")" \
		"$tail" "$head" "$i"
	timeout 120 "$XFSX_CHECK" "$IMG" >/dev/null 2>"$TMP/fz.err"; crc=$?
	cp --sparse=always "$IMG" "$IMG.A"
	timeout 120 "$XFSX_REPAIR" "$IMG" >"$TMP/fz.out" 2>&1; rrc=$?
	if [ $crc -ge 124 ] || [ $rrc -ge 124 ] || log_sanitizer "$TMP/fz.err" "$TMP/fz.out"; then
		not_ok "crafted $i: no crash, hang or sanitizer report (check exit $crc, repair exit $rrc)"
		grep -hE "runtime error|Sanitizer" "$TMP/fz.err" "$TMP/fz.out" | head -3 | sed 's/^/#   /'
		continue
	fi
	if mount_img "$IMG.A" "$TMP/ma" 2>/dev/null; then kernel=mounted; umount "$TMP/ma"; else kernel=refused; fi
	if [ $rrc -eq 8 ]; then
		refused=$((refused + 1)); [ $kernel = refused ] && agree=$((agree + 1))
		what=$(grep -o 'cannot be replayed: .*' "$TMP/fz.out" | head -1 | cut -c1-110)
	else
		replayed=$((replayed + 1)); [ $kernel = mounted ] && agree=$((agree + 1))
		what="replayed, exit $rrc"
	fi
	ok "crafted $i: no crash, hang or sanitizer report ($what; the kernel $kernel it)"
	rm -f "$IMG" "$IMG.A"
done
diag "crafted logs: $refused refused, $replayed replayed; the kernel agreed on $agree of $n"

tap_done
