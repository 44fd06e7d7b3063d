#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Age a mounted XFS with every kind of inode bulkstat has to get right.

usage: populate.py MOUNTPOINT BIGTIME(0|1)

Regular files (empty, small, preallocated, fragmented into a btree-format
extent map), directories of every size class (short form, block, leaf,
node), hard links, symlinks (inline and remote), character and block
devices (large major/minor too), fifos, a unix socket, xattrs in every
format (inline, leaf, node, remote values), extent size and CoW extent
size hints, xflags, owners and project ids, timestamps before 1970 (and
after 2038 when BIGTIME), and freed inodes leaving holes in chunks.
"""
import os
import socket
import subprocess
import sys

mnt = sys.argv[1]
bigtime = sys.argv[2] == "1"


def p(*parts):
    return os.path.join(mnt, *parts)


def xfs_io(path, *cmds):
    args = ["xfs_io"]
    for c in cmds:
        args += ["-c", c]
    subprocess.run(args + [path], check=True, stdout=subprocess.DEVNULL)


def touch(path, when):
    subprocess.run(["touch", "-h", "-d", when, path], check=True)


# directories: short form, block, leaf, node
for name, n in (("dir_sf", 3), ("dir_block", 40), ("dir_leaf", 400), ("dir_node", 3000)):
    os.mkdir(p(name))
    for i in range(n):
        with open(p(name, "entry_with_a_longish_name_%05d" % i), "w"):
            pass

# regular files
open(p("empty"), "w").close()
with open(p("small"), "w") as f:
    f.write("hello\n")
with open(p("onemeg"), "wb") as f:
    f.write(os.urandom(1 << 20))
subprocess.run(["xfs_io", "-f", "-c", "falloc 0 4m", p("prealloc")], check=True)

# a fragmented file: every other block of a sparse file -> btree-format extent map
fd = os.open(p("fragmented"), os.O_CREAT | os.O_WRONLY, 0o644)
blk = os.urandom(4096)
for i in range(0, 4096, 2):
    os.pwrite(fd, blk, i * 4096)
os.fsync(fd)
os.close(fd)

# hard links
with open(p("linked"), "w") as f:
    f.write("x")
for i in range(5):
    os.link(p("linked"), p("dir_sf", "link%d" % i))

# symlinks: inline and remote targets
os.symlink("short-target", p("sym_short"))
os.symlink("t" * 200 + "/" + "u" * 300, p("sym_long"))
os.symlink("/" + "/".join(["component%03d" % i for i in range(60)]), p("sym_remote"))

# special files
os.mknod(p("chr"), 0o620 | 0o020000, os.makedev(4, 5))
os.mknod(p("blk"), 0o660 | 0o060000, os.makedev(8, 1))
os.mknod(p("chr_big"), 0o600 | 0o020000, os.makedev(300, 70000))
os.mkfifo(p("fifo"))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(p("sock"))
s.close()

# xattrs in every format
with open(p("xattr_inline"), "w"):
    pass
os.setxattr(p("xattr_inline"), "user.small", b"v")
with open(p("xattr_leaf"), "w"):
    pass
for i in range(60):
    os.setxattr(p("xattr_leaf"), "user.attr%03d" % i, b"value-%03d" % i)
with open(p("xattr_node"), "w"):
    pass
for i in range(2000):
    os.setxattr(p("xattr_node"), "user.a_rather_long_attribute_name_%05d" % i, b"v" * 40)
with open(p("xattr_remote"), "w"):
    pass
os.setxattr(p("xattr_remote"), "user.big", os.urandom(60000))
os.setxattr(p("sym_short"), "trusted.on_symlink", b"x", follow_symlinks=False)
os.mkdir(p("dir_with_xattr"))
os.setxattr(p("dir_with_xattr"), "user.d", b"dirattr")

# hints and flags
with open(p("extsize"), "w"):
    pass
xfs_io(p("extsize"), "extsize 1m")
os.mkdir(p("extsz_inherit"))
xfs_io(p("extsz_inherit"), "extsize 256k")
with open(p("extsz_inherit", "child"), "w"):
    pass
with open(p("cowextsize"), "w"):
    pass
try:
    xfs_io(p("cowextsize"), "cowextsize 512k")
except subprocess.CalledProcessError:
    pass  # no reflink on this filesystem
for flag, name in (("s", "flag_sync"), ("A", "flag_noatime"), ("d", "flag_nodump"),
                   ("a", "flag_append"), ("i", "flag_immutable")):
    with open(p(name), "w"):
        pass
    xfs_io(p(name), "chattr +" + flag)
with open(p("projid"), "w"):
    pass
xfs_io(p("projid"), "chproj 70000")
os.mkdir(p("projinherit"))
xfs_io(p("projinherit"), "chattr +P", "chproj 42")
with open(p("owned"), "w"):
    pass
os.chown(p("owned"), 1234, 56789)
os.chmod(p("owned"), 0o4751)

# timestamps
with open(p("t_1960"), "w"):
    pass
touch(p("t_1960"), "1960-01-01 12:34:56.123456789")
with open(p("t_1901"), "w"):
    pass
touch(p("t_1901"), "1901-12-14 00:00:00")
touch(p("sym_short"), "1969-12-31 23:59:59.5")
if bigtime:
    with open(p("t_2300"), "w"):
        pass
    touch(p("t_2300"), "2300-06-01 00:00:00.987654321")

# free inodes in allocated chunks
os.mkdir(p("churn"))
for i in range(300):
    with open(p("churn", "f%d" % i), "w"):
        pass
for i in range(0, 300, 3):
    os.unlink(p("churn", "f%d" % i))
subprocess.run(["sync", "-f", mnt], check=True)
