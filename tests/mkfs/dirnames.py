#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Directory entry sets for the directory encoder's kernel test (dirnames.sh).

make ROOT SEED: under ROOT, directories sized for each format (short form,
block, leaf, node, a large node directory) holding random names of every
length 1..255, every file type, and groups of names that share one XFS
directory name hash (built, then checked with the hash function itself).
list DIR: one line per entry of every directory below DIR, sorted:
"relative-dir<TAB>name-hex<TAB>type".
"""
import os
import random
import stat
import sys

BAD = {0, ord('/')}


def da_hash(name):
    """The XFS directory/attr name hash (xfs_da_hashname)."""
    def rol32(x, n):
        return ((x << n) | (x >> (32 - n))) & 0xffffffff
    h, i, n = 0, 0, len(name)
    while n - i >= 4:
        h = (name[i] << 21) ^ (name[i + 1] << 14) ^ (name[i + 2] << 7) ^ name[i + 3] ^ rol32(h, 28)
        i += 4
    r = n - i
    if r == 3:
        h = (name[i] << 14) ^ (name[i + 1] << 7) ^ name[i + 2] ^ rol32(h, 21)
    elif r == 2:
        h = (name[i] << 7) ^ name[i + 1] ^ rol32(h, 14)
    elif r == 1:
        h = name[i] ^ rol32(h, 7)
    return h & 0xffffffff


def f4(g):
    return (g[0] << 21) ^ (g[1] << 14) ^ (g[2] << 7) ^ g[3]


def printable(rng, n):
    return bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+=")
                 for _ in range(n))


def collide(rng, name):
    """Another name with name's hash: groups j, j+1 changed so the hash after them is equal
    (7-bit characters: the 4-byte group function is a bijection onto 28 bits)."""
    n = bytearray(name)
    for _ in range(10000):
        j = rng.randrange(0, len(n) // 4 - 1) * 4
        g, h = n[j:j + 4], n[j + 4:j + 8]
        g2 = bytearray(printable(rng, 3)) + bytes([(g[3] & 0x0f) | (rng.choice([0x20, 0x30, 0x40, 0x50, 0x60, 0x70]))])
        if g2[3] in BAD or g2[3] >= 0x7f or g2 == g:
            continue
        delta = (f4(g) ^ f4(g2)) >> 4
        h2 = bytes([h[0] ^ ((delta >> 21) & 0x7f), h[1] ^ ((delta >> 14) & 0x7f),
                    h[2] ^ ((delta >> 7) & 0x7f), h[3] ^ (delta & 0x7f)])
        if any(c in BAD or c < 0x21 or c >= 0x7f for c in h2):
            continue
        m = bytes(n[:j]) + bytes(g2) + h2 + bytes(n[j + 8:])
        if da_hash(m) == da_hash(bytes(name)) and m != bytes(name):
            return m
    return None


KINDS = ["reg", "dir", "symlink", "fifo", "sock", "chr", "blk"]


def mkobj(path, kind, rng):
    if kind == "reg":
        with open(path, "wb") as f:
            f.write(b"x")
    elif kind == "dir":
        os.mkdir(path)
    elif kind == "symlink":
        os.symlink(b"target-" + printable(rng, 5), path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sock":
        os.mknod(path, 0o644 | stat.S_IFSOCK)
    elif kind == "chr":
        os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        os.mknod(path, 0o644 | stat.S_IFBLK, os.makedev(7, 0))


def make(root, seed):
    rng = random.Random(seed)
    sizes = {"sf": 6, "block": 40, "leaf": 400, "node": 3000, "bignode": 20000}
    groups = 0
    os.makedirs(root.encode(), exist_ok=True)
    for d, count in sizes.items():
        base = os.path.join(root.encode(), d.encode())
        os.mkdir(base)
        names = set()
        lengths = list(range(1, 256))
        while len(names) < count:
            ln = lengths[len(names) % len(lengths)] if len(names) < 255 else rng.randint(1, 255)
            nm = printable(rng, ln)
            if nm in names or nm in (b".", b".."):
                continue
            names.add(nm)
            # a quarter of the long-enough names get colliding partners (groups of 2..4)
            if ln >= 8 and rng.random() < 0.25 and len(names) < count:
                for _ in range(rng.randint(1, 3)):
                    other = collide(rng, nm)
                    if other is None:
                        sys.exit("no colliding name found for %r" % nm)
                    if other not in names and other not in (b".", b".."):
                        names.add(other)
                        groups += 1
        for i, nm in enumerate(sorted(names)):
            mkobj(os.path.join(base, nm), KINDS[i % len(KINDS)], rng)
    print("# %d directories, %d colliding names made" % (len(sizes), groups))


def kind_of(m):
    for k, t in (("dir", stat.S_ISDIR), ("reg", stat.S_ISREG), ("symlink", stat.S_ISLNK),
                 ("fifo", stat.S_ISFIFO), ("sock", stat.S_ISSOCK), ("chr", stat.S_ISCHR),
                 ("blk", stat.S_ISBLK)):
        if t(m):
            return k
    return "?"


def listing(top):
    out = []
    topb = top.encode()
    for dirpath, dirnames, filenames in os.walk(topb):
        rel = os.path.relpath(dirpath, topb)
        for nm in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, nm))
            out.append("%s\t%s\t%s" % (rel.decode("ascii", "replace"), nm.hex(), kind_of(st.st_mode)))
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "list":
        listing(sys.argv[2])
    elif sys.argv[1] == "hash":
        print("%08x" % da_hash(sys.argv[2].encode()))
