#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# tree.py DIR: one line per path under DIR (sorted): type, mode, owner,
# size, link count, contents (md5), symlink target and every xattr with its
# value's md5.  Two trees are equal when their listings are; times are left
# out (recovery and replay both leave them as logged; atime moves on reads).
import hashlib, os, stat, sys

def xattrs(p):
    try:
        names = sorted(os.listxattr(p, follow_symlinks=False))
    except OSError:
        return "-"
    out = []
    for n in names:
        try:
            v = os.getxattr(p, n, follow_symlinks=False)
        except OSError as e:
            v = ("error %d" % e.errno).encode()
        out.append("%s=%s" % (n, hashlib.md5(v).hexdigest()[:12]))
    return ",".join(out) or "-"

def line(root, p):
    st = os.lstat(p)
    rel = os.path.relpath(p, root)
    what = "-"
    if stat.S_ISREG(st.st_mode):
        h = hashlib.md5()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        what = h.hexdigest()
    elif stat.S_ISLNK(st.st_mode):
        what = "->" + os.readlink(p)
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        what = "dev %d" % st.st_rdev
    size = st.st_size if not stat.S_ISDIR(st.st_mode) else 0
    return "%s %o %d:%d size=%d nlink=%d %s %s" % (rel, st.st_mode, st.st_uid, st.st_gid,
                                                    size, st.st_nlink, what, xattrs(p))

root = sys.argv[1]
lines = [line(root, root)]
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        lines.append(line(root, os.path.join(d, n)))
for l in sorted(lines):
    print(l)
