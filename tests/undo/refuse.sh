#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Undo files xfsx_undo must refuse, writing nothing: truncated (in the
# header, in a record, by one byte, empty), flipped bytes (header, record
# header, record data, last byte), data appended, another device (same
# size, other size), a device that changed since the run (mounted and
# written); -f restores anyway.  xfsx_repair refuses to overwrite an
# existing undo file; usage errors exit 16.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
. "$XFSX_SRC/tests/lib.sh"
. "$XFSX_SRC/tests/check/aged_lib.sh"
. "$XFSX_SRC/tests/repair/repair_lib.sh"
. "$XFSX_SRC/tests/undo/undo_lib.sh"

need_undo "undo refusals"

img="$TMP/img"
truncate -s 512M "$img"
mkfs.xfs -q -f -m rmapbt=1,reflink=1 "$img" >/dev/null 2>&1 || { not_ok "mkfs.xfs"; tap_done; exit; }
damage "$img" bno 4
"$XFSX_REPAIR" --undo-file="$TMP/good" "$img" >/dev/null 2>&1; rc=$?
check "xfsx_repair --undo-file fixed the image (exit $rc)" [ $rc -eq 1 ]
after=$(img_sha "$img")
len=$(stat -c %s "$TMP/good")

# refused FILE CODE PATTERN LABEL: xfsx_undo (and -n) exit CODE naming PATTERN, image untouched
refused() {
	local f=$1 code=$2 pat=$3 what=$4 rc
	"$XFSX_UNDO" -n "$f" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$what: -n refused (exit $rc, want $code)" [ $rc -eq "$code" ]
	"$XFSX_UNDO" "$f" "$img" >"$TMP/out" 2>&1; rc=$?
	check "$what: refused (exit $rc, want $code)" [ $rc -eq "$code" ]
	check "$what: the message names it ('$pat')" grep -qi -- "$pat" "$TMP/out"
	grep -qi -- "$pat" "$TMP/out" || sed 's/^/#   /' "$TMP/out" | tail -3
	check "$what: nothing written" [ "$(img_sha "$img")" = "$after" ]
}
# flip FILE OFFSET: invert one byte
flip() {
	python3 - "$1" "$2" <<'PY'
import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); b = f.read(1); f.seek(o)
f.write(bytes([b[0] ^ 0xff])); f.close()
PY
}

cp "$TMP/good" "$TMP/bad"; truncate -s 100 "$TMP/bad"
refused "$TMP/bad" 2 "truncated" "truncated inside the header"
cp "$TMP/good" "$TMP/bad"; truncate -s 4110 "$TMP/bad"
refused "$TMP/bad" 2 "truncated" "truncated inside the first record"
cp "$TMP/good" "$TMP/bad"; truncate -s $((len - 1)) "$TMP/bad"
refused "$TMP/bad" 2 "truncated" "truncated by one byte"
: >"$TMP/bad"
refused "$TMP/bad" 2 "truncated" "empty file"
cp "$TMP/good" "$TMP/bad"; flip "$TMP/bad" 30
refused "$TMP/bad" 2 "damaged header" "a flipped byte in the header"
cp "$TMP/good" "$TMP/bad"; flip "$TMP/bad" 9
refused "$TMP/bad" 2 "damaged header" "a flipped byte in the header's version"
cp "$TMP/good" "$TMP/bad"; flip "$TMP/bad" $((4096 + 12))
refused "$TMP/bad" 2 "record #0" "a flipped byte in the first record's header"
cp "$TMP/good" "$TMP/bad"; flip "$TMP/bad" $((4096 + 32 + 100))
refused "$TMP/bad" 2 "checksum" "a flipped byte in the first record's data"
cp "$TMP/good" "$TMP/bad"; flip "$TMP/bad" $((len - 1))
refused "$TMP/bad" 2 "damaged" "a flipped last byte"
cp "$TMP/good" "$TMP/bad"; echo junk >>"$TMP/bad"
refused "$TMP/bad" 2 "appended" "data appended"
head -c 8192 /dev/urandom >"$TMP/bad"
refused "$TMP/bad" 2 "not an xfsx undo file" "not an undo file"

# another device: same size, another filesystem; and another size
other="$TMP/other"
truncate -s 512M "$other"; mkfs.xfs -q -f "$other" >/dev/null 2>&1
osum=$(img_sha "$other")
"$XFSX_UNDO" "$TMP/good" "$other" >"$TMP/out" 2>&1; rc=$?
check "another XFS of the same size: refused (exit $rc)" [ $rc -eq 1 ]
check "another XFS: the message says why" grep -q "Refusing another device" "$TMP/out"
check "another XFS: nothing written" [ "$(img_sha "$other")" = "$osum" ]
truncate -s 600M "$other"; osum=$(img_sha "$other")
"$XFSX_UNDO" "$TMP/good" "$other" >"$TMP/out" 2>&1; rc=$?
check "a device of another size: refused (exit $rc)" [ $rc -eq 1 ]
check "another size: the message names both sizes" grep -q "629145600 bytes.*536870912" "$TMP/out"
check "another size: nothing written" [ "$(img_sha "$other")" = "$osum" ]

# the device changed since the run: mounted, written, unmounted
if mount_img "$img" "$TMP/mnt"; then
	head -c 1M /dev/urandom >"$TMP/mnt/new"
	umount "$TMP/mnt"
	after=$(img_sha "$img")
	refused "$TMP/good" 1 "changed since the run" "the device changed since the run"
	"$XFSX_UNDO" -f "$TMP/good" "$img" >"$TMP/out" 2>&1; rc=$?
	check "changed device with -f: restored anyway (exit $rc: 0, or 4 when its first blocks still differ)" \
		[ $rc -eq 0 -o $rc -eq 4 ]
	check "changed device with -f: it wrote" [ "$(img_sha "$img")" != "$after" ]
else
	not_ok "mounting the repaired image"
fi

# the undo file's own filesystem fills up: the write it should have covered
# never happens, the run stops, and what the file holds still restores
e="$TMP/e.img"
truncate -s 320M "$e"
mkdir -p "$TMP/small" "$TMP/emnt"
if command -v mkfs.ext4 >/dev/null && mkfs.ext4 -q -F "$e" >/dev/null 2>&1 &&
   mount -t tmpfs -o size=1m tmpfs "$TMP/small" 2>/dev/null; then
	_MOUNTS+=("$TMP/small")
	if mount -o loop "$e" "$TMP/emnt" 2>/dev/null; then
		head -c 20M /dev/urandom >"$TMP/emnt/data"
		umount "$TMP/emnt"
	fi
	orig=$(img_sha "$e")
	"$XFSX_MKFS" -q -f --undo-file="$TMP/small/u" "$e" >"$TMP/out" 2>&1; rc=$?
	check "undo file on a full filesystem: mkfs stops (exit $rc)" [ $rc -eq 1 ]
	check "undo file on a full filesystem: the message names the undo file" \
		grep -qi "undo file" "$TMP/out"
	"$XFSX_UNDO" "$TMP/small/u" "$e" >"$TMP/out" 2>&1; rc=$?
	check "undo file on a full filesystem: what it holds restores (exit $rc)" [ $rc -eq 0 ]
	check "undo file on a full filesystem: byte-exact (sha256)" [ "$(img_sha "$e")" = "$orig" ]
	umount "$TMP/small"
else
	skip "undo file on a full filesystem" "needs mkfs.ext4 and a tmpfs mount"
fi

# xfsx_repair never overwrites an undo file; usage errors
cp "$TMP/good" "$TMP/exists"; s=$(sha256sum <"$TMP/exists"); before=$(img_sha "$img")
damage "$img" bno 4; before=$(img_sha "$img")
"$XFSX_REPAIR" --undo-file="$TMP/exists" "$img" >"$TMP/out" 2>&1; rc=$?
check "xfsx_repair with an existing undo file: refused (exit $rc)" [ $rc -eq 8 ]
check "existing undo file: message says so" grep -q "never overwritten" "$TMP/out"
check "existing undo file: file and device untouched" \
	[ "$(sha256sum <"$TMP/exists")" = "$s" -a "$(img_sha "$img")" = "$before" ]
"$XFSX_REPAIR" -n --undo-file="$TMP/x" "$img" >/dev/null 2>&1; rc=$?
check "xfsx_repair -n --undo-file: usage error (exit $rc)" [ $rc -eq 16 ]
"$XFSX_UNDO" "$TMP/good" >/dev/null 2>&1; rc=$?
check "xfsx_undo with one argument: usage error (exit $rc)" [ $rc -eq 16 ]
"$XFSX_UNDO" -x "$TMP/good" "$img" >/dev/null 2>&1; rc=$?
check "xfsx_undo -x: usage error (exit $rc)" [ $rc -eq 16 ]
tap_done
