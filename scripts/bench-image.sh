# SPDX-License-Identifier: GPL-2.0
# The benchmark image builders scripts/bench-check and scripts/bench-repair
# share (source it; both functions read $img, $want, $dir and $mnt):
#   make_kernel  the kernel makes $want inodes on a 16 GiB image: loop
#                mount, 500 files per directory, one in ten with data, one
#                in fifty deleted so chunks and directories have holes
#   make_proto   the same tree from a protofile (mkfs.xfs -p), for hosts
#                without root or loop devices
#   make_aged    a realistic aged volume of at least $want inodes, made by
#                the kernel: fragmented files (btree extent
#                maps), sparse files, xattrs in every format (short form,
#                leaf, node, remote values), inline and remote symlinks,
#                hard links, a 100k-entry directory, small files for the
#                rest, deletes across it; $aged_v names its recipe (a
#                cached image of another recipe is made again)
#   make_pptr    the make_aged recipe on a filesystem made by xfsprogs
#                6.10.1's mkfs.xfs -n parent=1 -i exchange=1 (parent
#                pointers, exchange-range), aged by the kernel the same
#                way; needs $pptr_sbin (pptr_oracle sets it)
# make_aged and make_pptr run mkfs and the ager under nice (a shared host).
aged_v=2

# pptr_oracle: set pptr_sbin to xfsprogs 6.10.1's sbin directory, built once
# and cached by shared/oracles/xfsprogs-6.10 (looked for as tests/lib.sh's
# oracle_610 does: $XFSX_ORACLE_610, beside the repository, beside the main
# checkout of a worktree, /work/shared), or fail
pptr_oracle() {
	local c common
	common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || common=
	for c in "${XFSX_ORACLE_610:-}" "$top/../shared/oracles/xfsprogs-6.10" \
		 ${common:+"$common/../../shared/oracles/xfsprogs-6.10"} /work/shared/oracles/xfsprogs-6.10; do
		if [ -n "$c" ] && [ -x "$c" ]; then
			pptr_sbin=$(nice "$c") || return 1
			[ -x "$pptr_sbin/mkfs.xfs" ] && [ -x "$pptr_sbin/xfs_repair" ] && [ -x "$pptr_sbin/xfs_db" ]
			return
		fi
	done
	return 1
}

make_kernel() {
	rm -f "$img"
	truncate -s 16G "$img"
	mkfs.xfs -q -f "$img"
	mount -o loop "$img" "$mnt"
	python3 - "$mnt" "$want" <<'PY'
import os, sys
root, want = sys.argv[1], int(sys.argv[2])
n = d = 0
made = []
while n < want + want // 50:
    dp = os.path.join(root, "d%05d" % d)
    os.mkdir(dp)
    n += 1
    for f in range(500):
        fd = os.open(os.path.join(dp, "f%03d" % f), os.O_CREAT | os.O_WRONLY, 0o644)
        if f % 10 == 0:
            os.write(fd, b"x" * (100 + 37 * f))   # one file in ten has data
        os.close(fd)
        n += 1
    d += 1
# age: delete one file in fifty, so chunks and directories have holes
for k in range(0, d):
    for f in range(k % 50, 500, 50):
        os.unlink(os.path.join(root, "d%05d" % k, "f%03d" % f))
PY
	umount "$mnt"
}

make_proto() {
	# the kernel creator's tree, as a protofile: 500 files per directory,
	# one in ten with data, the one in fifty it deletes left out
	local src="$dir/proto-src"
	mkdir -p "$src"
	: > "$src/empty"
	python3 - "$dir/bench.proto" "$src" "$want" <<'PY'
import os, sys
out, src, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
sizes = {}
n = d = 0
with open(out, "w") as p:
    p.write("/dev/null\n0 0\nd--755 0 0\n")
    while n < want + want // 50:
        p.write("d%05d d--755 0 0\n" % d)
        n += 1
        for f in range(500):
            n += 1
            if f % 50 == d % 50:
                continue   # deleted by the kernel creator
            if f % 10 == 0:
                size = 100 + 37 * f
                path = os.path.join(src, "data%d" % size)
                if size not in sizes:
                    with open(path, "wb") as s:
                        s.write(b"x" * size)
                    sizes[size] = path
                p.write("f%03d ---644 0 0 %s\n" % (f, path))
            else:
                p.write("f%03d ---644 0 0 %s\n" % (f, os.path.join(src, "empty")))
        p.write("$\n")
        d += 1
    p.write("$\n")
PY
	truncate -s 16G "$img"
	mkfs.xfs -q -f -p "$dir/bench.proto" "$img"
}

make_aged() {
	# $1: the mkfs.xfs to use (default Debian's), the rest its options
	local mkfs=${1:-mkfs.xfs}
	[ $# -gt 0 ] && shift
	rm -f "$img"
	truncate -s 16G "$img"
	nice "$mkfs" -q -f "$@" "$img"
	mount -o loop "$img" "$mnt"
	nice python3 - "$mnt" "$want" <<'PY'
import os, subprocess, sys
root, want = sys.argv[1], int(sys.argv[2])
n = 0
# fragmented files: a 4 KiB write every other block, round robin, so the
# extents of 64 files interleave and their maps become btrees
frag = os.path.join(root, "frag"); os.mkdir(frag)
fds = [os.open(os.path.join(frag, "f%02d" % k), os.O_CREAT | os.O_WRONLY, 0o644) for k in range(64)]
blk = b"f" * 4096
for b in range(0, 1024, 2):
    for fd in fds:
        os.pwrite(fd, blk, b * 4096)
    if b % 64 == 0:
        subprocess.run(["sync", "-f", root], check=True)
for fd in fds:
    os.close(fd)
n += 65
# sparse files: a few blocks far apart, holes between
sparse = os.path.join(root, "sparse"); os.mkdir(sparse)
for k in range(200):
    fd = os.open(os.path.join(sparse, "s%03d" % k), os.O_CREAT | os.O_WRONLY, 0o644)
    for j in range(1 + k % 16):
        os.pwrite(fd, blk, (j * 37 + k) * (1 << 20))
    os.close(fd)
n += 201
# a 100k-entry directory (half the inodes for a quick run)
big = os.path.join(root, "big"); os.mkdir(big)
nbig = min(100000, want // 2)
for k in range(nbig):
    os.close(os.open(os.path.join(big, "entry-%07d" % k), os.O_CREAT | os.O_WRONLY, 0o644))
n += nbig + 1
# xattrs on one file in ten of the rest: short form; leaf (one in three);
# node, several leaf blocks under a DA node (one in a hundred); remote
# values (one in seven)
xa = os.path.join(root, "xattrs"); os.mkdir(xa)
nxa = max(1, (want - n) // 10)
for k in range(nxa):
    p = os.path.join(xa, "x%06d" % k)
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
    os.setxattr(p, "user.a", b"v" * 16)
    if k % 3 == 0:
        for j in range(40):
            os.setxattr(p, "user.leaf%02d" % j, b"l" * 64)
    if k % 100 == 0:
        for j in range(300):
            os.setxattr(p, "user.node%03d" % j, b"n" * 64)
    if k % 7 == 0:
        os.setxattr(p, "user.remote", b"r" * 6000)
n += nxa + 1
# symlinks, inline and remote (a target longer than the inode holds), and
# hard links to some of the xattr files
ln = os.path.join(root, "links"); os.mkdir(ln)
for k in range(20000):
    target = ("t%06d" % k) if k % 4 else ("long-%06d-" % k) + "y" * 900
    os.symlink(target, os.path.join(ln, "l%05d" % k))
    if k % 2 == 0 and k // 2 < nxa:
        os.link(os.path.join(xa, "x%06d" % (k // 2)), os.path.join(ln, "h%05d" % k))
n += 20001
# small files for the rest, 500 per directory, one in ten with data
d = 0
while n < want + want // 50:
    dp = os.path.join(root, "d%05d" % d); os.mkdir(dp); n += 1
    for f in range(500):
        fd = os.open(os.path.join(dp, "f%03d" % f), os.O_CREAT | os.O_WRONLY, 0o644)
        if f % 10 == 0:
            os.write(fd, b"x" * (100 + 37 * f))
        os.close(fd)
        n += 1
    d += 1
# age: delete one file in fifty, every seventh entry of the big directory,
# every fifth symlink
for k in range(d):
    for f in range(k % 50, 500, 50):
        os.unlink(os.path.join(root, "d%05d" % k, "f%03d" % f))
for k in range(0, nbig, 7):
    os.unlink(os.path.join(big, "entry-%07d" % k))
for k in range(0, 20000, 5):
    os.unlink(os.path.join(ln, "l%05d" % k))
PY
	umount "$mnt"
}

make_pptr() {
	make_aged "$pptr_sbin/mkfs.xfs" -n parent=1 -i exchange=1
}
