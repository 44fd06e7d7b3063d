#!/usr/bin/env bash
# Safety: an existing filesystem or partition table is refused without -f;
# -N writes nothing (sha256 unchanged); a mounted image is refused even with
# -f; bad options fail with a message naming the option; and a timing line
# (not an assertion) for a 15 TiB sparse image against mkfs.xfs.
. "$XFSX_SRC/tests/lib.sh"

[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }
img="$TMP/r.img"
sum() { sha256sum "$1" | cut -d' ' -f1; }

# an existing XFS (made by us) is refused without -f and kept intact
truncate -s 1g "$img"
check "fresh image accepted" "$XFSX_MKFS" -q "$img"
before=$(sum "$img")
if "$XFSX_MKFS" -q "$img" 2>"$TMP/err"; then not_ok "existing xfs refused without -f"
else
	grep -q "xfs" "$TMP/err" && grep -q -- "-f" "$TMP/err" && ok "existing xfs refused without -f, message names it and -f" ||
		not_ok "refusal message unclear: $(cat "$TMP/err")"
fi
[ "$(sum "$img")" = "$before" ] && ok "refused image unchanged" || not_ok "refused image changed"
check "-f overwrites" "$XFSX_MKFS" -q -f "$img"

# -N writes nothing, even with -f
before=$(sum "$img")
"$XFSX_MKFS" -N -f -b size=2048 "$img" >"$TMP/out" 2>&1
[ "$(sum "$img")" = "$before" ] && ok "-N leaves the image byte-identical" || not_ok "-N changed the image"
grep -q "bsize=2048" "$TMP/out" && ok "-N prints the geometry" || not_ok "-N printed: $(head -2 "$TMP/out")"

# -f -K over an older XFS with another AG size: its secondary superblocks
# are gone (none left where the new filesystem has free space)
if command -v mkfs.xfs >/dev/null; then
	rm -f "$img"; truncate -s 2g "$img"; mkfs.xfs -q -f -d agcount=13 "$img"
	"$XFSX_MKFS" -q -f -K "$img"
	left=$(python3 - "$img" <<'PY'
import sys
f = open(sys.argv[1], "rb"); agbytes = 40330 * 4096   # mkfs.xfs: 2 GiB / 13 AGs
newag = 131072 * 4096
n = 0
for a in range(1, 13):
    off = a * agbytes
    if off % newag == 0:
        continue
    f.seek(off)
    n += f.read(4) == b"XFSB"
print(n)
PY
)
	[ "$left" = 0 ] && ok "-f -K clears the old filesystem's secondary superblocks" ||
		not_ok "-f -K left $left old secondary superblocks"
	xfs_repair -n "$img" >/dev/null 2>&1 && ok "-f -K image xfs_repair -n clean" || not_ok "-f -K image xfs_repair -n"
else
	skip "old secondary superblocks cleared" "mkfs.xfs not installed"
fi

# other signatures: ext4 and a partition table
if command -v mkfs.ext4 >/dev/null; then
	rm -f "$img"; truncate -s 1g "$img"; mkfs.ext4 -q -F "$img"
	if "$XFSX_MKFS" -q "$img" 2>"$TMP/err"; then not_ok "ext4 refused without -f"
	else grep -q ext4 "$TMP/err" && ok "ext4 refused without -f, named" || not_ok "ext4 message: $(cat "$TMP/err")"; fi
else
	skip "ext4 refused" "mkfs.ext4 not installed"
fi
mbr() { # a DOS partition table with one Linux partition from sector 2048
	python3 - "$1" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    e = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 100000)
    f.seek(446); f.write(e); f.seek(510); f.write(b"\x55\xaa")
PY
}
if command -v python3 >/dev/null; then
	rm -f "$img"; truncate -s 1g "$img"; mbr "$img"
	if "$XFSX_MKFS" -q "$img" 2>"$TMP/err"; then not_ok "partition table refused without -f"
	else grep -q "partition table" "$TMP/err" && ok "partition table refused without -f" || not_ok "partition table message: $(cat "$TMP/err")"; fi
else
	skip "partition table refused" "python3 not installed"
fi

# bad input: each message names what is wrong
bad() { # expected-substring args...
	local want=$1; shift
	if "$XFSX_MKFS" "$@" 2>"$TMP/err" >/dev/null; then not_ok "refused: $*"
	elif grep -q -- "$want" "$TMP/err"; then ok "refused: $* ($want)"
	else not_ok "refused: $* but message lacks '$want': $(head -1 "$TMP/err")"; fi
}
rm -f "$img"; truncate -s 1g "$img"
bad "crc=0" -N -m crc=0 "$img"
bad "300 MiB" -N -d size=299m "$img"
bad "64 MiB" -N -l size=32m "$img"
bad "-b size" -N -b size=3000 "$img"
bad "agcount" -N -d agcount=2,agsize=100m "$img"
bad "-q" -N -m nosuch=1 "$img"
bad "no device" -N
bad "label" -N -L thirteen_chars "$img"
bad "needs at least" -N -b size=65536 -l size=64m "$img"

# a mounted image is refused even with -f
if have_loop_xfs && have_xfsprogs; then
	"$XFSX_MKFS" -q -f "$img"
	dev=$(loop_attach "$img") && mount_img "$dev" "$TMP/mnt" && {
		bad "mounted" -f -q "$img"
		bad "mounted" -f -q "$dev"
		umount "$TMP/mnt"
	}
	losetup -d "$dev" 2>/dev/null
else
	skip "mounted target refused" "needs root and loop devices"
fi

# timing (reported, not asserted): a 15 TiB sparse image
rm -f "$img"
if truncate -s 15T "$img" 2>/dev/null; then
	t0=$(date +%s.%N); "$XFSX_MKFS" -q "$img"; rc=$?; t1=$(date +%s.%N)
	[ $rc -eq 0 ] && ok "15 TiB sparse image made" || not_ok "15 TiB sparse image: exit $rc"
	if command -v mkfs.xfs >/dev/null; then
		rm -f "$img"; truncate -s 15T "$img"
		t2=$(date +%s.%N); mkfs.xfs -q -f "$img"; t3=$(date +%s.%N)
		diag "$(python3 -c "import sys; print('15 TiB sparse image: xfsx_mkfs %.3f s, mkfs.xfs %.3f s' % (float(sys.argv[2]) - float(sys.argv[1]), float(sys.argv[4]) - float(sys.argv[3])))" "$t0" "$t1" "$t2" "$t3")"
	fi
else
	skip "15 TiB sparse image" "the host filesystem cannot hold a 15 TiB sparse file"
fi
rm -f "$img"
# --help prints the usage on stdout and exits 0, like -h
if out=$("$XFSX_MKFS" --help 2>&1) && grep -q "^Usage: xfsx_mkfs" <<<"$out" && grep -q "1k..64k" <<<"$out"; then
	ok "--help prints the usage (block sizes 1k..64k) and exits 0"
else
	not_ok "--help: $(head -1 <<<"$out")"
fi
tap_done
