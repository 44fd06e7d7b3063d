#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Trees for tests/mkfs/proto.sh (xfsx_mkfs -p).

  make DIR [--entries N]      every file type, hard links, sparse files, a file
                              with hundreds of extents, xattrs of every size
                              class (short form, leaf, node, remote) and ACLs,
                              255-byte names, setuid/setgid/sticky, times before
                              1970 and after 2038, a directory of N entries
  compare SRC DST [--no-times] [--no-xattrs]
                              every object of SRC equal in DST: type, mode,
                              owner, size, link count, md5, symlink target,
                              device numbers, xattrs, mtime (ns); sparse files
                              still sparse; prints one line per difference
  protofile DIR OUT [--inline-symlinks-only]
                              an mkfs.xfs protofile describing DIR
  layout SRC DST [MAXBYTES]   every regular file of SRC without holes and of
                              at most MAXBYTES (default 16 MiB) is one extent
                              in DST (FIEMAP); prints each one that is not
"""
import fcntl
import hashlib
import os
import struct
import stat
import sys


def w(path, data, mode=0o644):
    with open(path, 'wb') as f:
        f.write(data)
    os.chmod(path, mode)


def try_xattr(path, name, value, follow=False):
    try:
        os.setxattr(path, name, value, follow_symlinks=follow)
        return True
    except OSError as e:
        print('# cannot set %s on %s: %s' % (name, path, e))
        return False


def acl(entries):
    """Linux posix_acl_xattr value: version 2, (tag, perm, id) little-endian."""
    b = (2).to_bytes(4, 'little')
    for tag, perm, ident in entries:
        b += tag.to_bytes(2, 'little') + perm.to_bytes(2, 'little') + \
            (ident & 0xffffffff).to_bytes(4, 'little')
    return b


def make(root, entries):
    os.makedirs(root, exist_ok=True)
    rnd = __import__('random').Random(16)
    # regular files of several sizes, setuid/setgid/sticky
    w(root + '/empty', b'')
    w(root + '/small', b'hello\n')
    w(root + '/suid', b'#!/bin/sh\n', 0o4755)
    w(root + '/sgid', b'x' * 5000, 0o2711)
    w(root + '/big', bytes(rnd.getrandbits(8) for _ in range(3 << 20)))
    os.makedirs(root + '/sticky')
    os.chmod(root + '/sticky', 0o1777)
    os.chown(root + '/small', 1234, 5678)
    # sparse: a hole, data, a hole; and one with hundreds of extents (a bmbt)
    with open(root + '/sparse', 'wb') as f:
        f.truncate(64 << 20)
        f.seek(20 << 20)
        f.write(b'middle' * 1000)
    with open(root + '/manyext', 'wb') as f:
        for i in range(400):
            f.seek(i * 65536)
            f.write(bytes([i % 251 + 1]) * 4096)
    # hard links across directories
    os.makedirs(root + '/a/b/c')
    w(root + '/a/linked', b'one inode, three names\n')
    os.link(root + '/a/linked', root + '/a/b/linked2')
    os.link(root + '/a/linked', root + '/a/b/c/linked3')
    # symlinks: inline and remote targets
    os.symlink('small', root + '/sym_short')
    os.symlink('t' * 1000 + '/end', root + '/sym_long')
    os.symlink('/' + 'd/' * 500, root + '/sym_1k')
    # devices, fifo, socket
    os.mknod(root + '/cdev', 0o620 | stat.S_IFCHR, os.makedev(4, 64))
    os.mknod(root + '/bdev', 0o660 | stat.S_IFBLK, os.makedev(259, 70000))
    os.mkfifo(root + '/fifo')
    s = __import__('socket').socket(__import__('socket').AF_UNIX)
    s.bind(root + '/sock')
    s.close()
    # 255-byte names
    w(root + '/' + 'n' * 255, b'long name')
    os.makedirs(root + '/' + 'D' * 255)
    # times: before 1970, after 2038, nanoseconds
    w(root + '/old', b'old')
    os.utime(root + '/old', ns=(-1500000000 * 10**9 + 123, -1000000000 * 10**9 + 456789))
    w(root + '/future', b'future')
    os.utime(root + '/future', ns=(4102444800 * 10**9 + 1, 7000000000 * 10**9 + 999999999))
    # xattrs: short form, leaf (values >= 255 bytes), node (many), remote (large values)
    w(root + '/x_sf', b'')
    try_xattr(root + '/x_sf', 'user.a', b'1')
    try_xattr(root + '/x_sf', 'trusted.t', b'root only')
    try_xattr(root + '/x_sf', 'security.s', b'label')
    w(root + '/x_leaf', b'')
    for i in range(4):
        try_xattr(root + '/x_leaf', 'user.leaf%d' % i, bytes([65 + i]) * 300)
    w(root + '/x_node', b'')
    for i in range(200):
        try_xattr(root + '/x_node', 'user.node%03d' % i, ('v%d' % i).encode() * 40)
    # one long attribute per 1 KiB leaf: a DA tree of two node levels there
    # (250 names of 250 bytes: listxattr's 64 KiB limit allows no more)
    w(root + '/x_deep', b'')
    for i in range(250):
        try_xattr(root + '/x_deep', 'user.%04d' % i + 'k' * 236, (b'%d' % i) * 120)
    w(root + '/x_remote', b'')
    try_xattr(root + '/x_remote', 'user.remote', bytes(rnd.getrandbits(8) for _ in range(20000)))
    try_xattr(root + '/x_remote', 'user.max', b'm' * 65536)
    os.makedirs(root + '/x_dir')
    try_xattr(root + '/x_dir', 'user.on_a_dir', b'yes')
    os.mknod(root + '/x_dev', 0o600 | stat.S_IFCHR, os.makedev(1, 7))
    try_xattr(root + '/x_dev', 'trusted.dev', b'attr on a device')
    try_xattr(root + '/sym_short', 'trusted.onlink', b'attr on a symlink')
    # ACLs: access and default, with named entries so they are not just the mode
    w(root + '/acl_file', b'acl')
    try_xattr(root + '/acl_file', 'system.posix_acl_access',
              acl([(1, 6, -1), (2, 4, 1000), (4, 4, -1), (8, 6, 2000), (16, 6, -1), (32, 4, -1)]))
    os.makedirs(root + '/acl_dir')
    try_xattr(root + '/acl_dir', 'system.posix_acl_default',
              acl([(1, 7, -1), (2, 5, 1001), (4, 5, -1), (16, 5, -1), (32, 5, -1)]))
    # directories in every format: short form, block, leaf, node
    for n, name in ((3, 'd_sf'), (60, 'd_block'), (400, 'd_leaf'), (entries, 'd_node')):
        d = root + '/' + name
        os.makedirs(d)
        for i in range(n):
            p = '%s/%s%06d' % (d, 'e' * (i % 40), i)
            if i % 97 == 0:
                os.makedirs(p)
            elif i % 13 == 0:
                os.symlink('target%d' % i, p)
            else:
                w(p, b'%d\n' % i if i % 5 else b'')


def md5(path):
    h = hashlib.md5()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def data_bytes(path):
    """Bytes in data ranges (SEEK_DATA/SEEK_HOLE)."""
    n = 0
    with open(path, 'rb') as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        pos = 0
        while pos < size:
            try:
                d = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break
            h = os.lseek(fd, d, os.SEEK_HOLE)
            n += h - d
            pos = h
    return n


FS_IOC_FIEMAP = 0xC020660B


def nextents(path):
    """Extents FIEMAP counts for the whole file (extent_count 0: just count)."""
    req = bytearray(struct.pack('=QQLLLL', 0, 0xFFFFFFFFFFFFFFFF, 1, 0, 0, 0))  # FIEMAP_FLAG_SYNC
    with open(path, 'rb') as f:
        fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, req)
    return struct.unpack_from('=QQLLLL', req)[3]


def layout(src, dst, maxbytes):
    """Files that are whole (no holes) and small enough must be contiguous."""
    bad = whole = 0
    for d, dirs, files in os.walk(src):
        for name in files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0 or st.st_size > maxbytes:
                continue
            if data_bytes(p) < st.st_size:
                continue   # holes: several extents by design
            whole += 1
            q = os.path.join(dst, os.path.relpath(p, src))
            n = nextents(q)
            if n != 1:
                bad += 1
                if bad <= 10:
                    print('%s: %d bytes in %d extents' % (q, st.st_size, n))
    print('# %d files without holes, %d of them in more than one extent' % (whole, bad))
    return 1 if bad or not whole else 0


def xattrs(path):
    out = {}
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return out
    for n in names:
        if n.startswith('security.selinux'):
            continue
        out[n] = os.getxattr(path, n, follow_symlinks=False)
    return out


def compare(src, dst, times, with_xattrs):
    bad = 0
    seen = 0
    inodes = {}

    def diff(rel, what, a, b):
        nonlocal bad
        bad += 1
        if bad <= 30:
            print('# %s: %s differs: %r vs %r' % (rel or '/', what, a, b))

    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        rel = '' if rel == '.' else rel
        ddir = os.path.join(dst, rel)
        try:
            want = sorted(os.listdir(dirpath))
            got = sorted(os.listdir(ddir))
        except OSError as e:
            diff(rel, 'listing', 'readable', str(e))
            continue
        if want != got:
            diff(rel, 'names', len(want), len(got))
        for name in [''] + want:
            if name == '' and rel != '':
                continue
            r = os.path.join(rel, name) if name else rel
            a = os.path.join(src, r)
            b = os.path.join(dst, r)
            seen += 1
            try:
                sa, sb = os.lstat(a), os.lstat(b)
            except OSError as e:
                diff(r, 'lstat', 'ok', str(e))
                continue
            fmt = stat.S_IFMT(sa.st_mode)
            if sa.st_mode != sb.st_mode:
                diff(r, 'mode', oct(sa.st_mode), oct(sb.st_mode))
            if (sa.st_uid, sa.st_gid) != (sb.st_uid, sb.st_gid):
                diff(r, 'owner', (sa.st_uid, sa.st_gid), (sb.st_uid, sb.st_gid))
            if fmt != stat.S_IFDIR and sa.st_size != sb.st_size:
                diff(r, 'size', sa.st_size, sb.st_size)
            if fmt != stat.S_IFDIR and sa.st_nlink != sb.st_nlink:
                diff(r, 'nlink', sa.st_nlink, sb.st_nlink)
            if fmt == stat.S_IFDIR:
                subdirs = sum(1 for x in os.listdir(a) if stat.S_ISDIR(os.lstat(os.path.join(a, x)).st_mode))
                if sb.st_nlink != 2 + subdirs:
                    diff(r, 'directory nlink', 2 + subdirs, sb.st_nlink)
            if times and sa.st_mtime_ns != sb.st_mtime_ns:
                diff(r, 'mtime', sa.st_mtime_ns, sb.st_mtime_ns)
            if fmt in (stat.S_IFCHR, stat.S_IFBLK) and sa.st_rdev != sb.st_rdev:
                diff(r, 'rdev', sa.st_rdev, sb.st_rdev)
            if fmt == stat.S_IFLNK:
                try:
                    ta, tb = os.readlink(a), os.readlink(b)
                except OSError as e:
                    diff(r, 'symlink target', 'readable', str(e))
                else:
                    if ta != tb:
                        diff(r, 'symlink target', len(ta), len(tb))
            if fmt == stat.S_IFREG:
                if md5(a) != md5(b):
                    diff(r, 'md5', md5(a), md5(b))
                # holes stay holes: no more blocks than the data needs (rounded to 64 KiB)
                if sa.st_size > (1 << 20):
                    need = data_bytes(a)
                    if sb.st_blocks * 512 > need + 65536 * (need // 65536 + 2) and \
                            sb.st_blocks * 512 > sa.st_blocks * 512 + 65536:
                        diff(r, 'allocated bytes (sparse)', need, sb.st_blocks * 512)
                # hard links: one inode in the copy for one inode in the source
                key = (sa.st_dev, sa.st_ino)
                if key in inodes and inodes[key] != sb.st_ino:
                    diff(r, 'hard link inode', inodes[key], sb.st_ino)
                inodes[key] = sb.st_ino
            if with_xattrs:
                xa, xb = xattrs(a), xattrs(b)
                if xa != xb:
                    diff(r, 'xattrs', sorted(xa), sorted(xb))
    print('# compared %d objects, %d differences' % (seen, bad))
    return 1 if bad else 0


def protofile(root, out, inline_symlinks_only=False):
    """The tree as mkfs.xfs's protofile: types -bcdpl, u/g flags, uid gid, sources.

    inline_symlinks_only: leave out targets too long for the inode (Debian's
    mkfs.xfs 6.1 -p writes remote symlink blocks with a bad CRC).
    """
    lines = ['/dev/null', '0 0']

    def mode(st):
        t = {stat.S_IFREG: '-', stat.S_IFDIR: 'd', stat.S_IFCHR: 'c', stat.S_IFBLK: 'b',
             stat.S_IFIFO: 'p', stat.S_IFLNK: 'l'}[stat.S_IFMT(st.st_mode)]
        u = 'u' if st.st_mode & stat.S_ISUID else '-'
        g = 'g' if st.st_mode & stat.S_ISGID else '-'
        return '%s%s%s%03o' % (t, u, g, st.st_mode & 0o777)

    def walk(d, depth):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            st = os.lstat(p)
            f = stat.S_IFMT(st.st_mode)
            if f == stat.S_IFSOCK or ':' in name or ' ' in name:
                continue
            head = '%s%s %s %d %d' % (' ' * depth, name, mode(st), st.st_uid, st.st_gid)
            if f == stat.S_IFREG:
                lines.append(head + ' ' + os.path.abspath(p))
            elif f in (stat.S_IFCHR, stat.S_IFBLK):
                lines.append(head + ' %d %d' % (os.major(st.st_rdev), os.minor(st.st_rdev)))
            elif f == stat.S_IFLNK:
                t = os.readlink(p)
                if ' ' in t or ':' in t or (inline_symlinks_only and len(t) > 200):
                    continue
                lines.append(head + ' ' + t)
            elif f == stat.S_IFDIR:
                lines.append(head)
                walk(p, depth + 1)
                lines.append(' ' * (depth + 1) + '$')
            else:
                lines.append(head)

    st = os.lstat(root)
    lines.append('%s %d %d' % (mode(st), st.st_uid, st.st_gid))
    walk(root, 1)
    lines.append('$')
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    a = sys.argv[1:]
    if a and a[0] == 'make':
        n = int(a[a.index('--entries') + 1]) if '--entries' in a else 20000
        make(a[1], n)
    elif a and a[0] == 'compare':
        sys.exit(compare(a[1], a[2], '--no-times' not in a, '--no-xattrs' not in a))
    elif a and a[0] == 'layout':
        sys.exit(layout(a[1], a[2], int(a[3]) if len(a) > 3 else 16 << 20))
    elif a and a[0] == 'protofile':
        protofile(a[1], a[2], '--inline-symlinks-only' in a)
    else:
        print(__doc__)
        sys.exit(2)
