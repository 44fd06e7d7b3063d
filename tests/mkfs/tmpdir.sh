#!/usr/bin/env bash
# xfsx_mkfs -p --tmpdir: the tree lives in a temporary file there, so a
# directory that is missing, not a directory, or too small (a 1 MiB tmpfs,
# root only) is an error (exit 1) that names it and leaves the target as it
# was (an existing filesystem, -f given: its bytes unchanged); $TMPDIR is
# the default; a run that works leaves nothing in the directory, and its
# image is clean (xfsx_check, xfs_repair -n).
. "$(dirname "$0")/../lib.sh"

[ -x "$XFSX_MKFS" ] || { skip "xfsx_mkfs --tmpdir" "xfsx_mkfs not built"; tap_done; exit 0; }
have_xfsprogs || { skip "xfsx_mkfs --tmpdir" "xfsprogs not installed"; tap_done; exit 0; }

# 30,000 empty files, 1,000 a directory
python3 - >"$TMP/p.proto" <<'PY'
print("/dev/null\n0 0\nd--755 0 0")
for d in range(30):
    print(" d%02d d--755 0 0" % d)
    for f in range(1000):
        print("  f%04d ---644 0 0 /dev/null" % f)
    print(" $")
print("$")
PY
img="$TMP/t.img"
truncate -s 1g "$img"
mkfs.xfs -q -f "$img"
h0=$(sha256sum <"$img")

# refused DESC DIR [ARGS...]: xfsx_mkfs -f -p with ARGS exits 1, names DIR
# on stderr, and the image is unchanged
refused() {
	local desc=$1 dir=$2 rc; shift 2
	"$XFSX_MKFS" -q -f -p "$TMP/p.proto" "$@" "$img" >/dev/null 2>"$TMP/err"; rc=$?
	diag "$desc: $(head -1 "$TMP/err")"
	check "$desc: exit 1 (was $rc)" [ $rc -eq 1 ]
	check "$desc: the message names $dir" grep -qF "$dir" "$TMP/err"
	check "$desc: the target is unchanged" [ "$(sha256sum <"$img")" = "$h0" ]
}
refused "--tmpdir missing" "$TMP/none" --tmpdir "$TMP/none"
: >"$TMP/afile"
refused "--tmpdir a regular file" "$TMP/afile" --tmpdir="$TMP/afile"
TMPDIR="$TMP/gone" refused "\$TMPDIR missing (the default)" "$TMP/gone"
if have_root && grep -qw tmpfs /proc/filesystems; then
	mkdir -p "$TMP/full"
	if mount -t tmpfs -o size=1m tmpfs "$TMP/full"; then
		_MOUNTS+=("$TMP/full")	# unmounted on exit whatever happens
		refused "--tmpdir on a 1 MiB tmpfs (too small for the tree)" "$TMP/full" --tmpdir "$TMP/full"
		check "the full tmpfs is left empty" [ -z "$(ls -A "$TMP/full")" ]
		umount "$TMP/full"
	else
		not_ok "mount a 1 MiB tmpfs"
	fi
else
	skip "--tmpdir too small" "needs root and tmpfs to mount a small one"
fi

mkdir -p "$TMP/ok"
"$XFSX_MKFS" -q -f -p "$TMP/p.proto" --tmpdir "$TMP/ok" "$img" >/dev/null 2>"$TMP/err"
check "--tmpdir that works: exit 0" [ $? -eq 0 ]
check "--tmpdir that works: nothing left in it" [ -z "$(ls -A "$TMP/ok")" ]
"$XFSX_CHECK" "$img" >"$TMP/c.out" 2>&1
check "--tmpdir that works: xfsx_check finds the image clean" [ $? -eq 0 ]
xfs_repair -n "$img" >"$TMP/r.out" 2>&1
check "--tmpdir that works: xfs_repair -n finds it clean" [ $? -eq 0 ]
n=$(xfs_db -r -c "sb 0" -c "p icount" "$img" | awk '{print $3}')
check "--tmpdir that works: every inode made (icount $n >= 30,031)" [ "${n:-0}" -ge 30031 ]
tap_done
