#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Age a mounted XFS through the kernel, so every metadata format appears.

Usage: age.py MOUNTPOINT [--scale N] [--fragment [--fragment-runs N]] [--seed S]

Creates, on the mounted filesystem: many small files; directories in every
format (short form, block, leaf, node) sized from the directory block size;
files whose extent map is a btree (a write every other block); xattrs in
every format (short form, leaf, node, remote values); inline and remote
symlinks; hard links; character and block devices, fifos, sockets;
reflinked copies (FICLONE, when the filesystem has reflink); then deletes
across all of it so free space and inode chunks have holes.  With
--fragment it then fills the free space with one file and punches 6 of
every 8 blocks, so no aligned 8-block extent is left, and creates the last
files, whose inode chunks come out sparse.  --fragment-runs N punches only
N of those 8-block runs, spread evenly, and leaves the rest allocated: the
same fragmentation (still no free aligned 8-block extent) with little free
space, so filling what is free stays quick.  Prints one line of counts.
Deterministic for a seed.
"""
import errno
import fcntl
import os
import random
import socket
import stat
import subprocess
import sys

FICLONE = 0x40049409
FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2


def geometry(mnt):
    st = os.statvfs(mnt)
    bsize = st.f_bsize
    # the directory block size is what a fresh directory's size becomes
    # once it leaves short form: grow one and read its size
    d = os.path.join(mnt, ".probe")
    os.mkdir(d)
    i = 0
    while os.stat(d).st_size < bsize and i < 4096:
        open(os.path.join(d, "p%05d" % i), "w").close()
        i += 1
    dirblk = os.stat(d).st_size
    for n in os.listdir(d):
        os.unlink(os.path.join(d, n))
    os.rmdir(d)
    return bsize, max(dirblk, bsize)


def punch(fd, off, length):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    if libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def resblks(mnt, n):
    subprocess.run(["xfs_io", "-x", "-c", "resblks %d" % n, mnt], check=True,
                   stdout=subprocess.DEVNULL)


def fragment(mnt, bsize, runs=0):
    """Fill all free space, then free 6 blocks of every 8 (of every
    len/runs-th run of 8 when runs is given)."""
    # the global reserve pool (8192 blocks) would stay one free extent
    # where full inode chunks still fit: empty it while filling
    resblks(mnt, 0)
    # speculative preallocation past other files' EOF would be trimmed
    # later, freeing long extents: trim it now, before filling
    subprocess.run(["sync", "-f", mnt], check=True)
    subprocess.run(["xfs_spaceman", "-c", "prealloc -s", mnt], check=True,
                   stdout=subprocess.DEVNULL)
    path = os.path.join(mnt, "fragmenter")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    size = 0
    step = 64 << 20
    while step >= 8 * bsize:
        try:
            os.posix_fallocate(fd, size, step)
            size += step
        except OSError:
            step //= 2
    size = size // (8 * bsize) * (8 * bsize)
    step = 8 * bsize * max(1, size // (8 * bsize) // runs) if runs else 8 * bsize
    punched = 0
    for off in range(0, size, step):
        punch(fd, off + 2 * bsize, 6 * bsize)
        punched += 1
    os.close(fd)
    resblks(mnt, 8192)
    return punched


def make_dir(path, n, namelen, rnd):
    os.mkdir(path)
    names = []
    for i in range(n):
        name = ("%06d_" % i) + "x" * max(0, namelen - 7)
        names.append(name)
        fd = os.open(os.path.join(path, name), os.O_CREAT | os.O_WRONLY, 0o644)
        if i % 7 == 0:
            os.write(fd, b"d" * (1 + rnd.randrange(300)))
        os.close(fd)
    return names


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    mnt = args[0]
    scale = 1
    frag = False
    runs = 0
    seed = 1
    i = 1
    while i < len(args):
        if args[i] == "--scale":
            scale = int(args[i + 1]); i += 2
        elif args[i] == "--fragment":
            frag = True; i += 1
        elif args[i] == "--fragment-runs":
            runs = int(args[i + 1]); i += 2
        elif args[i] == "--seed":
            seed = int(args[i + 1]); i += 2
        else:
            print("unknown option " + args[i], file=sys.stderr)
            return 2
    rnd = random.Random(seed)
    bsize, dirblk = geometry(mnt)
    counts = {"files": 0, "dirs": 0, "symlinks": 0, "links": 0, "special": 0,
              "xattrs": 0, "clones": 0, "deleted": 0, "btree_files": 0}

    # directories in every format
    top = os.path.join(mnt, "dirs")
    os.mkdir(top)
    per_blk = dirblk // 48          # entries of ~30-byte names per directory block
    shapes = {"short": (4, 8), "block": (max(8, per_blk // 2), 12),
              "leaf": (per_blk * 4, 30), "node": (dirblk // 6 * 3, 40)}
    for shape, (n, namelen) in shapes.items():
        for k in range(scale):
            names = make_dir(os.path.join(top, "%s%d" % (shape, k)), n, namelen, rnd)
            counts["dirs"] += 1
            counts["files"] += n
            # deletes leave free space inside the directory blocks
            for name in names[1::5]:
                os.unlink(os.path.join(top, "%s%d" % (shape, k), name))
                counts["deleted"] += 1

    # many small files in a tree
    tree = os.path.join(mnt, "tree")
    os.mkdir(tree)
    for d in range(20 * scale):
        sub = os.path.join(tree, "d%03d" % d)
        os.mkdir(sub)
        counts["dirs"] += 1
        for f in range(150):
            p = os.path.join(sub, "f%04d" % f)
            with open(p, "wb") as fh:
                if f % 3 == 0:
                    fh.write(os.urandom(rnd.randrange(1, 3 * bsize)))
            counts["files"] += 1
        # delete a third: free inodes in chunks, holes in the finobt
        for f in range(0, 150, 3):
            os.unlink(os.path.join(sub, "f%04d" % f))
            counts["deleted"] += 1

    # btree extent maps: a write every other block
    data = os.path.join(mnt, "data")
    os.mkdir(data)
    for k in range(2 * scale):
        p = os.path.join(data, "sparse%d" % k)
        fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
        nblk = 1200 + 300 * k
        blk = os.urandom(bsize)
        for b in range(0, 2 * nblk, 2):
            os.pwrite(fd, blk, b * bsize)
        os.fsync(fd)
        os.close(fd)
        counts["btree_files"] += 1
    # an extent list file and a big contiguous one
    with open(os.path.join(data, "extents"), "wb") as fh:
        for b in range(0, 16, 2):
            fh.seek(b * bsize)
            fh.write(os.urandom(bsize))
    with open(os.path.join(data, "big"), "wb") as fh:
        fh.write(os.urandom(2 << 20))
    counts["files"] += 2

    # reflinked copies (whole file and, through a partial overwrite, shared + CoW)
    for src in ("sparse0", "big"):
        for c in range(2):
            s = os.path.join(data, src)
            dpath = os.path.join(data, "%s.clone%d" % (src, c))
            sfd = os.open(s, os.O_RDONLY)
            dfd = os.open(dpath, os.O_CREAT | os.O_WRONLY, 0o644)
            try:
                fcntl.ioctl(dfd, FICLONE, sfd)
                counts["clones"] += 1
                os.pwrite(dfd, b"c" * bsize, bsize * (4 + c))
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.EXDEV, errno.ENOTTY):
                    raise
            os.close(sfd)
            os.close(dfd)

    # xattrs in every format
    xa = os.path.join(mnt, "xattrs")
    os.mkdir(xa)
    shapes = {"short": (2, 16), "leaf": (max(4, bsize // 250), 100), "node": (bsize // 4 + 200, 40)}
    for shape, (n, vlen) in shapes.items():
        p = os.path.join(xa, shape)
        open(p, "w").close()
        for a in range(n):
            os.setxattr(p, "user.attr%05d" % a, bytes([65 + a % 26]) * vlen)
            counts["xattrs"] += 1
        if shape != "short":
            for a in range(0, n, 4):
                os.removexattr(p, "user.attr%05d" % a)
    for k, vlen in enumerate((bsize + 100, 3 * bsize, 60000)):
        p = os.path.join(xa, "remote%d" % k)
        open(p, "w").close()
        os.setxattr(p, "user.big", os.urandom(vlen))
        os.setxattr(p, "trusted.small", b"t")
        os.setxattr(p, "security.s", b"s" * 20)
        counts["xattrs"] += 3
    os.setxattr(os.path.join(top, "block0"), "user.ondir", b"v" * 100)

    # symlinks: inline and remote
    sl = os.path.join(mnt, "links")
    os.mkdir(sl)
    for k in range(10 * scale):
        os.symlink("t%d" % k, os.path.join(sl, "short%d" % k))
        # 900+ bytes: beyond the inode's literal area even with 2 KiB inodes
        os.symlink(("/" + "/".join(["c%d_%03d" % (k, j) for j in range(200)]))[:900 + 12 * k],
                   os.path.join(sl, "long%d" % k))
        counts["symlinks"] += 2
    # hard links, also across directories
    for k in range(30):
        src = os.path.join(tree, "d000", "f%04d" % (1 + 3 * k + (k % 2)))
        if os.path.exists(src):
            os.link(src, os.path.join(sl, "hard%d" % k))
            os.link(src, os.path.join(top, "block0", "hard%d" % k))
            counts["links"] += 2
    # special files
    sp = os.path.join(mnt, "special")
    os.mkdir(sp)
    for k in range(5):
        os.mknod(os.path.join(sp, "chr%d" % k), 0o600 | stat.S_IFCHR, os.makedev(1, 3 + k))
        os.mknod(os.path.join(sp, "blk%d" % k), 0o600 | stat.S_IFBLK, os.makedev(7, 200 + k))
        os.mkfifo(os.path.join(sp, "fifo%d" % k))
        s = socket.socket(socket.AF_UNIX)
        s.bind(os.path.join(sp, "sock%d" % k))
        s.close()
        counts["special"] += 4

    # delete whole directories and a clone: freed chunks, freed dir blocks
    for d in range(0, 20 * scale, 4):
        sub = os.path.join(tree, "d%03d" % d)
        for n in os.listdir(sub):
            os.unlink(os.path.join(sub, n))
            counts["deleted"] += 1
        os.rmdir(sub)
    for p in (os.path.join(data, "big.clone1"),):
        if os.path.exists(p):
            os.unlink(p)
            counts["deleted"] += 1
    # files created last land in the holes left behind; after --fragment
    # no aligned full chunk is free, so their inode chunks are sparse
    if frag:
        counts["frag_runs"] = fragment(mnt, bsize, runs)
    again = os.path.join(mnt, "again")
    os.mkdir(again)
    # (enough to use up the inodes freed above and need new chunks)
    for f in range(500 * scale + (4000 if frag else 0)):
        open(os.path.join(again, "n%05d" % f), "w").close()
        counts["files"] += 1
    subprocess.run(["sync", "-f", mnt], check=True)
    print(" ".join("%s=%d" % kv for kv in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
