# SPDX-License-Identifier: GPL-2.0
# The benchmark image builders scripts/bench-check and scripts/bench-repair
# share (source it; both functions read $img, $want, $dir and $mnt):
#   make_kernel  the kernel makes $want inodes on a 16 GiB image: loop
#                mount, 500 files per directory, one in ten with data, one
#                in fifty deleted so chunks and directories have holes
#   make_proto   the same tree from a protofile (mkfs.xfs -p), for hosts
#                without root or loop devices

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
