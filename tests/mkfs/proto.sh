#!/usr/bin/env bash
# xfsx_mkfs -p: a source tree made in the test on a kernel-mounted
# XFS (every file type, hard links, sparse files, a file with hundreds of
# extents, xattrs in short form, leaf, node and remote formats, ACLs,
# 255-byte names, setuid/setgid/sticky, times before 1970 and after 2038, a
# directory of XFSX_PROTO_ENTRIES entries, 20,000 by default) is copied by
# xfsx_mkfs -p under seven geometries (defaults; 1 KiB and 64 KiB blocks;
# 2 KiB inodes; 64 KiB directory blocks; rmapbt and reflink off; 1 KiB
# blocks with 1 KiB directory blocks, where the big directory's DA btree
# has two levels, which xfs_db confirms).  Each
# image: xfs_repair -n and xfsx_check clean, mounted read-only by the
# kernel and every object equal to the source (proto_tree.py compare: type,
# mode, owner, size, link count, md5, symlink target, device numbers,
# xattrs, mtime in ns, sparse files still sparse).  On the default image
# every file without holes of up to 16 MiB is one extent, and the kernel then writes (create, append, delete) and it is still clean.
# Protofiles: the same tree described as an mkfs.xfs protofile gives the
# same tree as Debian's mkfs.xfs -p.  Errors exit 1: a protofile syntax error
# (line and column, target untouched), a missing or unreadable source, a tree larger than
# the filesystem (the primary superblock is zeroed: nothing looks like XFS).
# XFSX_PROTO_FULL=1 adds the 100,000-entry directory.
. "$(dirname "$0")/../lib.sh"

PT="$XFSX_SRC/tests/mkfs/proto_tree.py"
need_kernel_images "xfsx_mkfs -p"
[ -x "$XFSX_MKFS" ] || { skip "xfsx_mkfs -p" "xfsx_mkfs not built"; tap_done; exit 0; }

ENTRIES=${XFSX_PROTO_ENTRIES:-20000}
[ -n "${XFSX_PROTO_FULL:-}" ] && ENTRIES=100000

# the source lives on XFS: every xattr namespace, large values, ACLs
truncate -s 2G "$TMP/src.img"
mkfs.xfs -q -f "$TMP/src.img"
mount_img "$TMP/src.img" "$TMP/src" || { not_ok "mount the source filesystem"; tap_done; exit 1; }
python3 "$PT" make "$TMP/src/t" --entries "$ENTRIES" >"$TMP/make.log" 2>&1
check "source tree made ($ENTRIES-entry directory)" [ $? -eq 0 ]
grep '^#' "$TMP/make.log" | head -5

repair_clean() {
	local out rc
	out=$(xfs_repair -n "$1" 2>&1); rc=$?
	[ $rc -eq 0 ] || { echo "$out" | grep -v '^ *- \|^Phase' | head -10 | sed 's/^/# /'; }
	return $rc
}

check_clean() {
	local out rc
	out=$("$XFSX_CHECK" "$1" 2>&1); rc=$?
	[ $rc -eq 0 ] || { echo "$out" | tail -5 | sed 's/^/# /'; }
	return $rc
}

compare_mounted() {   # IMG SRC [compare options]
	local img=$1 src=$2 rc
	shift 2
	mount_img "$img" "$TMP/dst" ro || return 1
	if [ "${1:-}" = --layout ]; then
		python3 "$PT" layout "$src" "$TMP/dst" | tail -8
	else
		python3 "$PT" compare "$src" "$TMP/dst" "$@" | tail -8
	fi
	rc=${PIPESTATUS[0]}
	umount "$TMP/dst"
	return $rc
}

n=0
for opts in "" "-b size=1024" "-b size=65536" "-i size=2048" "-n size=65536" "-m rmapbt=0,reflink=0" \
	    "-b size=1024 -n size=1024"; do
	n=$((n + 1))
	img="$TMP/p$n.img"
	name="-p DIR ${opts:-(defaults)}"
	rm -f "$img"
	# 64 KiB blocks: every small file takes a whole block
	case "$opts" in
	*65536*) truncate -s $(( (ENTRIES * 80 + 2 * 1024 * 1024) / 1024 ))M "$img" ;;
	*) truncate -s 3G "$img" ;;
	esac
	# shellcheck disable=SC2086
	if ! "$XFSX_MKFS" -q -f $opts -p "$TMP/src/t" "$img" 2>"$TMP/err"; then
		not_ok "$name: xfsx_mkfs exit 0 ($(head -c 300 "$TMP/err"))"
		continue
	fi
	ok "$name: made"
	if [ "$opts" = "-b size=1024 -n size=1024" ] && [ "$ENTRIES" -ge 20000 ]; then
		# the DA root is the first block at the leaf offset (32 GiB into the directory)
		level=$(xfs_db -r -c "path /d_node" -c "dblock $(( (32 << 30) / 1024 ))" \
			-c "print nhdr.level" "$img" 2>&1 | awk '/nhdr.level/ {print $3}')
		check "$name: the $ENTRIES-entry directory's DA btree has two levels (root level ${level:-none})" \
			[ "${level:-0}" -ge 2 ]
	fi
	check "$name: xfs_repair -n clean" repair_clean "$img"
	check "$name: xfsx_check clean" check_clean "$img"
	check "$name: every object equal to the source (kernel read-only mount)" \
		compare_mounted "$img" "$TMP/src/t"
	if [ $n -eq 1 ]; then
		# a fresh filesystem with room: a file without holes gets one extent, as the kernel gives
		check "$name: every file without holes of up to 16 MiB is one extent" \
			compare_mounted "$img" "$TMP/src/t" --layout
	fi
	if [ $n -eq 1 ]; then
		# the kernel keeps writing: create, append, delete, then still clean
		if mount_img "$img" "$TMP/dst" rw; then
			( set -e
			  for i in $(seq 1 500); do echo "$i" >"$TMP/dst/t_new$i"; done
			  mkdir "$TMP/dst/d_node/newdir"
			  cat "$TMP/dst/big" >>"$TMP/dst/small"
			  rm -rf "$TMP/dst/d_leaf" "$TMP/dst/a" "$TMP/dst/x_node"
			  setfattr -n user.added -v yes "$TMP/dst/x_sf" 2>/dev/null || true
			) ; wrc=$?
			umount "$TMP/dst"
			check "$name: the kernel creates, appends and deletes" [ $wrc -eq 0 ]
			check "$name: after the kernel's writes: xfs_repair -n clean" repair_clean "$img"
			check "$name: after the kernel's writes: xfsx_check clean" check_clean "$img"
		else
			not_ok "$name: mount read-write"
		fi
	fi
	rm -f "$img"
done

# ---- protofiles, against Debian's mkfs.xfs -p ----
# vs_mkfs_xfs WHAT PROTO OURS: OURS (made by xfsx_mkfs from PROTO) against Debian's mkfs.xfs -p of PROTO
vs_mkfs_xfs() {
	local what=$1 proto=$2 ours=$3 theirs="$TMP/theirs.img"
	rm -f "$theirs"
	truncate -s 1G "$theirs"
	if mkfs.xfs -q -f -p "$proto" "$theirs" >"$TMP/err2" 2>&1; then
		mount_img "$theirs" "$TMP/theirs" ro
		check "$what: the same tree as mkfs.xfs -p (all but times and xattrs)" \
			compare_mounted "$ours" "$TMP/theirs" --no-times --no-xattrs
		umount "$TMP/theirs"
	else
		skip "$what: compared with mkfs.xfs -p" "mkfs.xfs -p failed: $(head -c 200 "$TMP/err2")"
	fi
	rm -f "$theirs"
}
python3 "$PT" make "$TMP/src/small" --entries 1500 >/dev/null 2>&1
python3 "$PT" protofile "$TMP/src/small" "$TMP/proto"
# Debian's mkfs.xfs 6.1 -p writes remote symlink blocks with a bad CRC: compare without them
python3 "$PT" protofile "$TMP/src/small" "$TMP/proto.cmp" --inline-symlinks-only
truncate -s 1G "$TMP/ours.img"
if "$XFSX_MKFS" -q -f -p "$TMP/proto" "$TMP/ours.img" 2>"$TMP/err"; then
	ok "-p PROTOFILE: made ($(wc -l <"$TMP/proto") lines)"
	check "-p PROTOFILE: xfs_repair -n clean" repair_clean "$TMP/ours.img"
	check "-p PROTOFILE: xfsx_check clean" check_clean "$TMP/ours.img"
	if "$XFSX_MKFS" -q -f -p "$TMP/proto.cmp" "$TMP/ours.img" 2>"$TMP/err"; then
		vs_mkfs_xfs "-p PROTOFILE" "$TMP/proto.cmp" "$TMP/ours.img"
	else
		not_ok "-p PROTOFILE (inline symlinks only): made ($(head -c 300 "$TMP/err"))"
	fi
else
	not_ok "-p PROTOFILE: xfsx_mkfs exit 0 ($(head -c 300 "$TMP/err"))"
fi

# ---- as an ordinary user: an image file, owners as the tree says ----
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	mkdir -p "$TMP/nr/tree/sub"
	echo hi >"$TMP/nr/tree/f"
	echo x >"$TMP/nr/tree/sub/g"
	chown -R 4321:4321 "$TMP/nr/tree/sub"
	chmod -R a+rX "$TMP/nr"
	chmod a+x "$TMP"
	truncate -s 1G "$TMP/nr/img"
	chown nobody "$TMP/nr" "$TMP/nr/img"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		"$XFSX_MKFS" -q -f -p "$TMP/nr/tree" "$TMP/nr/img" 2>"$TMP/err"; rc=$?
	check "as user nobody: -p DIR onto an image file exits 0 ($(head -c 200 "$TMP/err"))" [ $rc -eq 0 ]
	check "as user nobody: xfs_repair -n clean" repair_clean "$TMP/nr/img"
	check "as user nobody: owners as the tree says (kernel mount)" \
		compare_mounted "$TMP/nr/img" "$TMP/nr/tree" --no-xattrs
	# a file the user cannot read: found when its data is read, after the target is touched
	echo secret >"$TMP/nr/tree/unreadable"
	chmod 000 "$TMP/nr/tree/unreadable"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		"$XFSX_MKFS" -q -f -p "$TMP/nr/tree" "$TMP/nr/img" 2>"$TMP/err"; rc=$?
	diag "$(cat "$TMP/err")"
	check "as user nobody: an unreadable source file: exit 1 naming it" \
		bash -c '[ "$0" -eq 1 ] && grep -q "unreadable: Permission denied" "$1"' "$rc" "$TMP/err"
	check "as user nobody: an unreadable source file: no XFS left (blkid finds none)" \
		bash -c '! blkid -p "$0" 2>/dev/null | grep -q xfs' "$TMP/nr/img"
	# directories it cannot read: the scan runs on several threads, the error is the
	# first in depth-first name order (a/zz_locked before b_locked), every time
	mkdir -p "$TMP/nr/tree/a/zz_locked" "$TMP/nr/tree/b_locked"
	chmod 000 "$TMP/nr/tree/a/zz_locked" "$TMP/nr/tree/b_locked"
	sum0=$(sha256sum <"$TMP/nr/img")
	bad=""
	for try in 1 2 3; do
		setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
			"$XFSX_MKFS" -q -f -p "$TMP/nr/tree" "$TMP/nr/img" 2>"$TMP/err"; rc=$?
		grep -q "cannot read directory $TMP/nr/tree/a/zz_locked: Permission denied" "$TMP/err" &&
			[ $rc -eq 1 ] || bad="$bad try $try: exit $rc, $(head -c 200 "$TMP/err");"
	done
	check "as user nobody: two unreadable directories: exit 1 naming the first in depth-first order, 3 of 3 runs${bad:+:$bad}" [ -z "$bad" ]
	check "as user nobody: an unreadable directory: the target untouched (the tree is read first)" \
		[ "$(sha256sum <"$TMP/nr/img")" = "$sum0" ]
	chmod 755 "$TMP/nr/tree/a/zz_locked" "$TMP/nr/tree/b_locked"
else
	skip "-p DIR as an ordinary user" "setpriv or user nobody missing"
fi

# ---- errors: exit 1, a message, nothing that looks like XFS ----
printf '/dev/null\n0 0\nd--755 0 0\nok ---644 0 0 /etc/hostname\nbad d--75x 0 0\n$\n$\n' >"$TMP/bad.proto"
truncate -s 1G "$TMP/e.img"
sum0=$(sha256sum <"$TMP/e.img")
"$XFSX_MKFS" -q -f -p "$TMP/bad.proto" "$TMP/e.img" 2>"$TMP/err"; rc=$?
diag "$(cat "$TMP/err")"
check "protofile syntax error: exit 1" [ $rc -eq 1 ]
check "protofile syntax error: the message names line 5, column 5" grep -q 'bad.proto:5:5:' "$TMP/err"
check "protofile syntax error: target untouched" [ "$(sha256sum <"$TMP/e.img")" = "$sum0" ]
printf '/dev/null\n0 0\nd--755 0 0\nf ---644 0 0 %s/nonexistent\n$\n' "$TMP" >"$TMP/miss.proto"
"$XFSX_MKFS" -q -f -p "$TMP/miss.proto" "$TMP/e.img" 2>"$TMP/err"; rc=$?
diag "$(cat "$TMP/err")"
check "protofile naming a missing file: exit 1 with the path" \
	bash -c '[ "$0" -eq 1 ] && grep -q nonexistent "$1"' "$rc" "$TMP/err"
printf '/dev/null\n0 0\nd--755 0 0\n%s ---644 0 0 /etc/hostname\n$\n' "$(printf 'x%.0s' $(seq 256))" >"$TMP/long.proto"
"$XFSX_MKFS" -q -f -p "$TMP/long.proto" "$TMP/e.img" 2>"$TMP/err"; rc=$?
check "protofile with a 256-byte name: exit 1 naming the limit" \
	bash -c '[ "$0" -eq 1 ] && grep -q 255 "$1"' "$rc" "$TMP/err"
# a name twice in one directory: line and column of the second
printf '/dev/null\n0 0\nd--755 0 0\na ---644 0 0 /etc/hostname\nb ---644 0 0 /etc/hostname\na ---644 0 0 /etc/hostname\n$\n' >"$TMP/dup.proto"
"$XFSX_MKFS" -q -f -p "$TMP/dup.proto" "$TMP/e.img" 2>"$TMP/err"; rc=$?
diag "$(cat "$TMP/err")"
check "protofile naming one name twice in a directory: exit 1 at line 6, column 1" \
	bash -c '[ "$0" -eq 1 ] && grep -q "dup.proto:6:1: name already used" "$1"' "$rc" "$TMP/err"
# a protofile directory of $ENTRIES names (its duplicate check was quadratic): the same tree as mkfs.xfs -p
python3 - "$ENTRIES" "$TMP/src/small" "$TMP/flat.proto" <<'PY'
import os, sys
n, src, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = next(os.path.join(r, x) for r, _, fs in os.walk(src) for x in sorted(fs)
         if os.path.isfile(os.path.join(r, x)) and not os.path.islink(os.path.join(r, x)))
with open(out, "w") as o:
    o.write("/dev/null\n0 0\nd--755 0 0\nflat d--755 0 0\n")
    for i in range(n):
        o.write("name-%07d ---644 %d %d %s\n" % (i, i % 7, i % 5, f))
    o.write("$\n$\n")
PY
truncate -s 1G "$TMP/flat.img"
if "$XFSX_MKFS" -q -f -p "$TMP/flat.proto" "$TMP/flat.img" 2>"$TMP/err"; then
	check "-p PROTOFILE with a $ENTRIES-entry directory: xfs_repair -n clean" repair_clean "$TMP/flat.img"
	vs_mkfs_xfs "-p PROTOFILE with a $ENTRIES-entry directory" "$TMP/flat.proto" "$TMP/flat.img"
else
	not_ok "-p PROTOFILE with a $ENTRIES-entry directory: made ($(head -c 300 "$TMP/err"))"
fi
rm -f "$TMP/flat.img"
# a tree larger than the filesystem
mkdir -p "$TMP/src/huge"
head -c 400M /dev/zero | tr '\0' 'z' >"$TMP/src/huge/f"
rm -f "$TMP/e.img"
truncate -s 300M "$TMP/e.img"
"$XFSX_MKFS" -q -f -p "$TMP/src/huge" "$TMP/e.img" 2>"$TMP/err"; rc=$?
diag "$(cat "$TMP/err")"
check "a tree larger than the filesystem: exit 1" [ $rc -eq 1 ]
check "a tree larger than the filesystem: the message says so" grep -qi 'larger than the filesystem' "$TMP/err"
check "a tree larger than the filesystem: no XFS left (xfsx_check refuses it)" \
	bash -c '! "$0" "$1" >/dev/null 2>&1' "$XFSX_CHECK" "$TMP/e.img"
check "a tree larger than the filesystem: no XFS left (blkid finds none)" \
	bash -c '! blkid -p "$0" 2>/dev/null | grep -q xfs' "$TMP/e.img"

tap_done
