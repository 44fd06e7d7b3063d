#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print "inode name md5" for every xattr the kernel can read under a mounted
directory (regular files, directories and symlinks alike; lost+found
included), sorted: the xattrs a repair kept (tests/repair/attrs.sh and
corpus.py compare ours with xfs_repair's).  getfattr is not needed."""
import hashlib
import os
import sys


def xattrs_of(top, by_path=False):
    """{(inode, name, value md5)}; by_path: {(path under top, name, value md5)}"""
    out = set()
    for d, dirs, files in os.walk(top):
        for nm in [None] + dirs + files:
            p = d if nm is None else os.path.join(d, nm)
            try:
                st = os.lstat(p)
                names = os.listxattr(p, follow_symlinks=False)
            except OSError:
                continue
            for a in names:
                try:
                    v = os.getxattr(p, a, follow_symlinks=False)
                except OSError:
                    continue	# unreadable after repair: not kept
                key = os.path.relpath(p, top) if by_path else st.st_ino
                out.add((key, a, hashlib.md5(v).hexdigest()))
    return out


if __name__ == "__main__":
    for ino, a, md5 in sorted(xattrs_of(sys.argv[1])):
        print(ino, a, md5)
