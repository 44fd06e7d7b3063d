#!/usr/bin/env bash
# xfsx_mkfs -p PROTOFILE takes what Debian's mkfs.xfs 6.1 -p takes: a
# protofile whose directories are not closed by "$" (the end of the file
# closes them), a first line and counts that are not numbers (ignored),
# owners in hex or octal (strtoll's base 0: "010" is 8), and as a regular
# file's source anything it can open: /dev/null, /dev/zero, a FIFO, a block
# device (each an empty file, as fstat says 0) and a symbolic link to a
# file (followed).  Each image: exit 0, xfs_repair -n and xfsx_check
# clean, and the kernel-mounted tree equal to mkfs.xfs -p's of the same
# protofile (type, mode, owner, size, links, contents).  What mkfs.xfs
# refuses (a directory or a socket as a file's source) is refused with exit
# 1 naming the source, the target untouched.
. "$(dirname "$0")/../lib.sh"

PT="$XFSX_SRC/tests/mkfs/proto_tree.py"
need_kernel_images "xfsx_mkfs -p accepts what mkfs.xfs -p accepts"
[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }

S="$TMP/src"
mkdir -p "$S"
echo hello >"$S/real.txt"
ln -s real.txt "$S/link.txt"
mkfifo "$S/fifo"
truncate -s 64M "$TMP/dev.img"
blkdev=$(loop_attach "$TMP/dev.img") || blkdev=""
# loop_attach ran in a subshell: register the device here for the cleanup trap
[ -n "$blkdev" ] && _LOOPS+=("$blkdev")

compare_trees() {   # OURS THEIRS: both mounted read-only, every object equal
	local rc
	mount_img "$1" "$TMP/m1" ro || return 1
	if ! mount_img "$2" "$TMP/m2" ro; then umount "$TMP/m1"; return 1; fi
	python3 "$PT" compare "$TMP/m2" "$TMP/m1" --no-times --no-xattrs | tail -6
	rc=${PIPESTATUS[0]}
	umount "$TMP/m1" "$TMP/m2"
	return $rc
}

accept() {   # LABEL PROTOFILE
	local label=$1 proto=$2 out rc
	rm -f "$TMP/x.img" "$TMP/m.img"
	truncate -s 1G "$TMP/x.img"
	truncate -s 1G "$TMP/m.img"
	"$XFSX_MKFS" -q -f -p "$proto" "$TMP/x.img" 2>"$TMP/err"; rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$label: xfsx_mkfs exit 0 (got $rc: $(head -c 300 "$TMP/err"))"
		return
	fi
	ok "$label: xfsx_mkfs exit 0"
	out=$(xfs_repair -n "$TMP/x.img" 2>&1); rc=$?
	check "$label: xfs_repair -n clean (exit $rc)" [ $rc -eq 0 ]
	"$XFSX_CHECK" "$TMP/x.img" >"$TMP/chk" 2>&1; rc=$?
	check "$label: xfsx_check clean (exit $rc)" [ $rc -eq 0 ]
	# a writer holds the FIFO open, or mkfs.xfs's open of it would wait for one
	exec 9<>"$S/fifo"
	timeout 120 mkfs.xfs -q -f -p "$proto" "$TMP/m.img" >"$TMP/merr" 2>&1; rc=$?
	exec 9>&-
	if [ $rc -ne 0 ]; then
		not_ok "$label: mkfs.xfs -p accepts it too (exit $rc: $(head -c 200 "$TMP/merr"))"
		return
	fi
	check "$label: the same tree as mkfs.xfs -p (kernel mounts)" compare_trees "$TMP/x.img" "$TMP/m.img"
}

refuse() {   # LABEL PROTOFILE WHAT-THE-MESSAGE-NAMES
	local label=$1 proto=$2 names=$3 rc sum0
	rm -f "$TMP/x.img"
	truncate -s 1G "$TMP/x.img"
	sum0=$(sha256sum <"$TMP/x.img")
	"$XFSX_MKFS" -q -f -p "$proto" "$TMP/x.img" 2>"$TMP/err"; rc=$?
	diag "$(cat "$TMP/err")"
	check "$label: xfsx_mkfs exit 1 naming $names (got $rc)" \
		bash -c '[ "$0" -eq 1 ] && grep -qF -- "$1" "$2"' "$rc" "$names" "$TMP/err"
	check "$label: target untouched" [ "$(sha256sum <"$TMP/x.img")" = "$sum0" ]
	truncate -s 1G "$TMP/m.img"
	timeout 120 mkfs.xfs -q -f -p "$proto" "$TMP/m.img" >/dev/null 2>&1; rc=$?
	check "$label: mkfs.xfs -p refuses it too (exit $rc)" [ $rc -ne 0 ]
}

# no "$" at all: the end of the file closes the subdirectory and the root
cat >"$TMP/open.proto" <<EOF
boot-image-name
blocks inodes
d--755 0 0
null ---644 0 0 /dev/null
zero ---600 0x3e8 010 /dev/zero
fifo ---644 1 2 $S/fifo
link ---644 0 0 $S/link.txt
dev b--660 0 6 8 1
sub d--750 5 6
f ---644 0 0 $S/real.txt
l l--777 0 0 real.txt
EOF
accept "no \$ anywhere, odd header, /dev/null, /dev/zero, FIFO and link sources, hex/octal owners" \
	"$TMP/open.proto"

# every directory closed but the root
printf 'x\n0 0\nd--755 0 0\na d--755 0 0\nb ---644 0 0 %s\n$\nc ---644 0 0 %s\n' \
	"$S/real.txt" /dev/null >"$TMP/noroot.proto"
accept "only the root's \$ missing" "$TMP/noroot.proto"

if [ -n "$blkdev" ]; then
	printf 'x\n0 0\nd--755 0 0\nblk ---644 0 0 %s\n$\n' "$blkdev" >"$TMP/blk.proto"
	accept "a block device as a file's source (empty, as fstat says)" "$TMP/blk.proto"
else
	skip "a block device as a file's source" "no loop device attached"
fi

printf 'x\n0 0\nd--755 0 0\nd ---644 0 0 %s\n$\n' "$S" >"$TMP/dir.proto"
refuse "a directory as a file's source" "$TMP/dir.proto" "cannot copy $S: Is a directory"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$S/sock"
printf 'x\n0 0\nd--755 0 0\ns ---644 0 0 %s\n$\n' "$S/sock" >"$TMP/sock.proto"
refuse "a socket as a file's source" "$TMP/sock.proto" "cannot copy $S/sock"
tap_done
