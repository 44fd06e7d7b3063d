#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parent-pointer damage corpus: xfsx_repair keeps parent pointers true,
and keeps every path xfs_repair 6.10 keeps (more: names come back from
parent pointers).  Run by tests/repair/pptr_corpus.sh (TAP).

The base image, made once per run: xfsprogs 6.10.1's mkfs.xfs -n parent=1
-i exchange=1, populated by the kernel (populate() below): directories of
every format (sf 3 entries short form, blk 30 a block, lf 300 leaf, nd
3000 node with a btree data fork), a file hard-linked from six directories
(short form parent pointers beside a user xattr), one with 41 links (a
leaf attr fork: pointers and user xattrs in one block), one with 400 (a
node attr fork), renames across directories (a file and a directory), an
exchange-range swap, a symlink.

Each case damages a copy with 6.10's xfs_db -x (fields written, a
directory block zeroed whole, a parent pointer added) and a second copy of
the damaged image goes to 6.10's xfs_repair.  On the first copy, ONE
xfsx_repair run, then each of these must hold (the case is "fixed" when
all do):
  seen     6.10's xfs_repair -n or xfsx_check reports the damage
  onerun   xfsx_repair exited 1; 6.10's xfs_repair -n exits 0, xfsx_check 0
  rerun    a second xfsx_repair exits 0 and changes nothing (sha256, holes
           as zeroes: tests/check/imgsum.py)
  kernel   the kernel mounts it, creates a file, renames it into the
           damaged directory, renames one out of it, unmounts; 6.10's
           xfs_repair -n still exits 0
  paths    every base (path, inode) 6.10's xfs_repair keeps, xfsx_repair
           keeps (read from a kernel mount); where the case destroys a
           directory block ("restore" cases) every base path is back
and every entry the JSON report lists as restored from parent pointers is
in the tree under that path and inode.  A failing case is "not ok", or
"not ok ... # TODO" while it is in KNOWN_GAPS (with the reason).  The
per-structure table (TAP diag lines) gives cases, fixed, and the base paths
kept by each tool summed over the cases.

Environment: XFSX_REPAIR, XFSX_CHECK (binaries), XFSX_PPTR_CORPUS_FULL=1
(every case; default the sample marked below), XFSX_PPTR_CORPUS_CASES
(case-name prefixes, space-separated, or comma-separated when they hold
spaces), XFSX_PPTR_CORPUS_JOBS (default 2),
XFSX_PPTR_CORPUS_KEEP (a directory: the damaged image of each failing
case is copied there).
Usage: pptr_corpus.py SBIN610 WORKDIR"""
import concurrent.futures
import importlib.util
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("imgsum", os.path.join(HERE, "..", "check", "imgsum.py"))
imgsum = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(imgsum)

SBIN, WORK = sys.argv[1], sys.argv[2]
MKFS, DB, REPAIR, IO = (os.path.join(SBIN, t) for t in ("mkfs.xfs", "xfs_db", "xfs_repair", "xfs_io"))
XREPAIR = os.environ["XFSX_REPAIR"]
XCHECK = os.environ["XFSX_CHECK"]
FULL = os.environ.get("XFSX_PPTR_CORPUS_FULL") == "1"
_only = os.environ.get("XFSX_PPTR_CORPUS_CASES", "")
ONLY = [o.strip() for o in _only.split(",") if o.strip()] if "," in _only else _only.split()
JOBS = max(1, int(os.environ.get("XFSX_PPTR_CORPUS_JOBS", "2")))
KEEP = os.environ.get("XFSX_PPTR_CORPUS_KEEP", "")
TIMEOUT = 600

# Cases whose failure is reported as TAP TODO (the suite stays green) until
# their fix lands: case id -> why.  Shrink it as fixes merge; a case not
# listed that fails is a failure, and a listed one that passes says so.
KNOWN_GAPS = {
    "inode.dir/short form dir: size":
        "a directory inode cleared: the file hard-linked from it (5 other links) is cleared"
        " too ('planning again with it cleared') where xfs_repair 6.10 drops one pointer and link",
    "inode.dir/block dir: size":
        "a directory inode cleared: the file hard-linked from it (5 other links) is cleared"
        " too ('planning again with it cleared') where xfs_repair 6.10 drops one pointer and link",
}

_tap = [0, 0]           # lines, failures
_out = threading.Lock()


def tap(ok, msg, todo=None):
    with _out:
        _tap[0] += 1
        _tap[1] += not ok and not todo
        print("%s %d - %s%s" % ("ok" if ok else "not ok", _tap[0], msg,
                                " # TODO " + todo if todo and not ok else ""), flush=True)


def diag(msg):
    with _out:
        for line in msg.splitlines() or [""]:
            print("# " + line, flush=True)


def run(args, timeout=TIMEOUT, split=False):
    """(exit code, stdout+stderr as text); -9 on a timeout.  split: (exit
    code, stdout, stderr)"""
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE if split else subprocess.STDOUT,
                           timeout=timeout)
        out = r.stdout.decode(errors="replace")
        return (r.returncode, out, r.stderr.decode(errors="replace")) if split else (r.returncode, out)
    except subprocess.TimeoutExpired:
        return (-9, "", "timed out after %d s" % timeout) if split else (-9, "timed out after %d s" % timeout)


def db(img, cmds, expert=False):
    args = [DB] + (["-x"] if expert else ["-r"])
    for c in cmds:
        args += ["-c", c]
    return run(args + [img])[1]


def copy(src, dst):
    subprocess.run(["cp", "--sparse=always", src, dst], check=True)


# ---- mounts, all undone on any exit

_mounts = set()
_mlock = threading.Lock()


def mount(img, mnt, opts):
    os.makedirs(mnt, exist_ok=True)
    rc, out = run(["mount", "-t", "xfs", "-o", opts, img, mnt], timeout=300)
    if rc == 0:
        with _mlock:
            _mounts.add(mnt)
    return rc, (out.strip().splitlines() or ["exit %d" % rc])[-1]


def umount(mnt):
    rc, _ = run(["umount", mnt], timeout=300)
    if rc != 0:
        run(["umount", "-l", mnt], timeout=60)
    with _mlock:
        _mounts.discard(mnt)
    return rc == 0


def umount_all():
    for m in list(_mounts):
        umount(m)


def tree(mnt):
    """{path relative to the mount: inode} of everything under it"""
    t = {}
    for d, dirs, names in os.walk(mnt):
        rel = os.path.relpath(d, mnt)
        for nm in dirs + names:
            try:
                t[os.path.normpath(os.path.join(rel, nm))] = os.lstat(os.path.join(d, nm)).st_ino
            except OSError:
                pass
    return t


def read_tree(img, mnt):
    """the tree on a read-only norecovery mount, None when it does not mount"""
    if mount(img, mnt, "ro,norecovery,nouuid")[0] != 0:
        return None
    try:
        return tree(mnt)
    finally:
        umount(mnt)


# ---- the base image

def populate(m):
    P = lambda *a: os.path.join(m, *a)

    def mk(p, data=b""):
        with open(p, "wb") as f:
            f.write(data)
    for n, cnt in (("sf", 3), ("blk", 30), ("lf", 300), ("nd", 3000)):
        os.mkdir(P(n))
        for i in range(cnt):
            mk(P(n, "f%04d" % i), b"%s %d\n" % (n.encode(), i))
    os.makedirs(P("a/b"))
    os.mkdir(P("c"))
    mk(P("a/hl"), b"hard")                      # six directories: short form pointers
    for d in ("sf", "blk", "lf", "nd", "c"):
        os.link(P("a/hl"), P(d, "hl." + d))
    os.setxattr(P("a/hl"), "user.beside", b"v" * 20)
    mk(P("a/mv"))                               # renames across directories
    os.rename(P("a/mv"), P("c/moved"))
    os.rename(P("a/b"), P("c/b2"))
    mk(P("c/b2/deep"), b"deep")
    mk(P("pl"))                                 # a leaf attr fork
    for i in range(40):
        os.link(P("pl"), P("lf", "pl.%02d" % i))
    for i in range(5):
        os.setxattr(P("pl"), "user.l%d" % i, b"w" * 30)
    mk(P("pn"))                                 # a node attr fork
    for i in range(400):
        os.link(P("pn"), P("nd", "pn.with.a.longer.name.%04d" % i))
    for i in range(20):
        os.setxattr(P("pn"), "user.n%02d" % i, b"z" * 50)
    for n in ("e1", "e2"):
        with open(P(n), "wb") as f:
            f.write((n * 8192).encode()[:65536])
            os.fsync(f.fileno())
    rc, out = run([IO, "-c", "exchangerange -f " + P("e2"), P("e1")])
    os.symlink("a/hl", P("sl"))
    subprocess.run(["sync", "-f", m], check=True)
    return rc, out.strip()


class Base:
    pass


class NoKernel(Exception):
    """the kernel cannot mount the image: the corpus is one skip"""


def make_base():
    b = Base()
    b.img = os.path.join(WORK, "base.img")
    with open(b.img, "wb") as f:
        f.truncate(512 << 20)
    rc, out = run([MKFS, "-q", "-f", "-n", "parent=1", "-i", "exchange=1", b.img])
    if rc != 0:
        raise RuntimeError("mkfs.xfs 6.10 -n parent=1 -i exchange=1: exit %d: %s" % (rc, out.strip()[-200:]))
    mnt = os.path.join(WORK, "mnt-base")
    rc, msg = mount(b.img, mnt, "rw")
    if rc != 0:
        raise NoKernel("this kernel does not mount a parent-pointer/exchange-range filesystem: " + msg)
    try:
        b.xrc, b.xout = populate(mnt)
        b.tree = tree(mnt)
    finally:
        umount(mnt)
    b.ino = {p: str(i) for p, i in b.tree.items()}
    b.ino["."] = db(b.img, ["sb 0", "p rootino"]).split("=")[-1].strip()
    return b


def gen_of(img, ino):
    m = re.search(r"core\.gen = (\d+)", db(img, ["inode %s" % ino, "p core.gen"]))
    return int(m.group(1)) if m else 0


def index_of(text, prefix, field, value):
    """the N of the first line "prefixN].field = value" in an xfs_db print"""
    m = re.search(r"^%s(\d+)\]\.%s = %s$" % (re.escape(prefix), re.escape(field), re.escape(value)), text, re.M)
    return m.group(1) if m else None


def byte_range(img, nav):
    m = re.search(r"byte offset (\d+), length (\d+)", db(img, nav + ["stack"]))
    return (int(m.group(1)), int(m.group(2))) if m else None


def data_blocks_zeroed(img, ino):
    """the steps that zero every data block of directory ino (its blocks
    below the leaf offset, by its bmap): None when it has none"""
    blocks = []
    for m in re.finditer(r"data offset (\d+) startblock \d+ \S+ count (\d+)", db(img, ["inode " + ino, "bmap"])):
        off, n = int(m.group(1)), int(m.group(2))
        blocks += [b for b in range(off, off + n) if b < 8388608]
    cmds = ["inode " + ino]
    for blk in blocks:
        cmds += ["dblock %d" % blk, "stack"]
    rngs = [(int(a), int(n)) for a, n in re.findall(r"byte offset (\d+), length (\d+)", db(img, cmds))]
    return [("zero",) + r for r in rngs] if blocks and len(rngs) == len(blocks) else None


# ---- cases

class Case:
    def __init__(self, struct_, name, steps, sample=False, restore=False, dir_="c"):
        self.struct, self.name, self.steps = struct_, name, steps
        self.sample, self.restore, self.dir = sample, restore, dir_
        self.id = "%s/%s" % (struct_, name)


def cases(b):
    """every case, from the base's facts; a case whose facts are missing is
    one with steps None (a failure: the base is not what populate made)"""
    i = b.ino
    img = b.img
    out = []
    add = lambda *a, **k: out.append(Case(*a, **k))
    nav = lambda p: ["inode " + i[p]]

    # ---- parent pointers, short form: a/hl (six pointers and a user xattr), c/b2 (a directory's)
    sf = db(img, nav("a/hl") + ["p a"])
    k = index_of(sf, "a.sfattr.list[", "name", '"hl.blk"')
    f = "a.sfattr.list[%s]." % k
    h = nav("a/hl")
    s = "pptr.sf"
    add(s, "name changed", k and h + ["write -d %sname \"hl.blq\"" % f], True, dir_="blk")
    add(s, "namelen shortened", k and h + ["write -d %snamelen 5" % f], dir_="blk")
    add(s, "parent moved to another directory", k and h + ["write -d %sparent_dir.inumber %s" % (f, i["c"])],
        True, dir_="blk")
    add(s, "parent an impossible inode", k and h + ["write -d %sparent_dir.inumber 0" % f], dir_="blk")
    add(s, "parent a regular file", k and h + ["write -d %sparent_dir.inumber %s" % (f, i["e1"])], dir_="blk")
    add(s, "generation changed", k and h + ["write -d %sparent_dir.gen 12345" % f], True, dir_="blk")
    add(s, "parent flag cleared (pointer removed)", k and h + ["write -d %sparent 0" % f], True, dir_="blk")
    add(s, "root flag set beside parent", k and h + ["write -d %sroot 1" % f], dir_="blk")
    add(s, "valuelen changed", k and h + ["write -d %svaluelen 11" % f], dir_="blk")
    ks = index_of(db(img, nav("c/b2") + ["p a"]), "a.sfattr.list[", "name", '"b2"')
    add(s, "a directory's pointer: generation", ks and nav("c/b2") + [
        "write -d a.sfattr.list[%s].parent_dir.gen 7" % ks], True)
    add(s, "a directory's pointer: parent another directory", ks and nav("c/b2") + [
        "write -d a.sfattr.list[%s].parent_dir.inumber %s" % (ks, i["sf"])], dir_="sf")
    # a pointer removed whole: the only one of a short form fork (its header
    # then says an empty fork: count 0, totsize the header's 4 bytes)
    add(s, "a directory's only pointer removed", ks and nav("c/b2") + [
        "write -d a.sfattr.hdr.count 0", "write -d a.sfattr.hdr.totsize 4"], True)
    k2 = index_of(db(img, nav("c/moved") + ["p a"]), "a.sfattr.list[", "name", '"moved"')
    add(s, "a renamed file's only pointer removed", k2 and nav("c/moved") + [
        "write -d a.sfattr.hdr.count 0", "write -d a.sfattr.hdr.totsize 4"])
    add(s, "a renamed file's pointer: name", k2 and nav("c/moved") + [
        "write -d a.sfattr.list[%s].name \"mv\"" % k2])
    # a pointer to a real directory under a name it has no entry for
    val = os.path.join(WORK, "pptr-blk.val")
    with open(val, "wb") as fv:
        fv.write(struct.pack(">QI", int(i["blk"]), gen_of(img, i["blk"])))
    add(s, "a pointer added to a directory without the entry", h + ["attr_set -p -V %s ghost" % val],
        True, dir_="blk")
    add(s, "attr fork header: totsize", h + ["write -d a.sfattr.hdr.totsize 40"], dir_="blk")
    add(s, "attr fork header: count", h + ["write -d a.sfattr.hdr.count 3"], True, dir_="blk")

    # ---- leaf and node attr forks: pl (40 pointers, 5 user xattrs), pn (400, 20)
    for s, p, blk, pat, smp in (("pptr.leaf", "pl", 0, r"pl\.17", True),
                                ("pptr.node", "pn", 1, r"pn\.with\.a\.longer\.name\.\d+", True)):
        lv = db(img, nav(p) + ["ablock %d" % blk, "p nvlist"])
        m = re.search(r'^nvlist\[(\d+)\]\.name = "(%s)"$' % pat, lv, re.M)
        k, nm = (m.group(1), m.group(2)) if m else (None, None)
        a = nav(p) + ["ablock %d" % blk]
        d = "lf" if p == "pl" else "nd"
        new = nm and (nm[:-1] + ("x" if nm[-1] != "x" else "y"))
        add(s, "hash changed", k and a + ["write -d entries[%s].hashval 0x12345678" % k], smp, dir_=d)
        add(s, "name changed", k and a + ["write -d nvlist[%s].name \"%s\"" % (k, new)], smp, dir_=d)
        add(s, "parent moved to another directory", k and a + [
            "write -d nvlist[%s].parent_dir.inumber %s" % (k, i["c"])], dir_=d)
        add(s, "parent an impossible inode", k and a + [
            "write -d nvlist[%s].parent_dir.inumber 0" % k], dir_=d)
        add(s, "generation changed", k and a + ["write -d nvlist[%s].parent_dir.gen 99" % k], smp, dir_=d)
        add(s, "parent flag cleared (pointer removed)", k and a + ["write -d entries[%s].parent 0" % k], dir_=d)
        add(s, "root flag set beside parent", k and a + ["write -d entries[%s].root 1" % k], dir_=d)
        add(s, "incomplete flag set (pointer half-made)", k and a + ["write -d entries[%s].incomplete 1" % k],
            dir_=d)
        add(s, "valuelen changed", k and a + ["write -d nvlist[%s].valuelen 13" % k], dir_=d)
        add(s, "namelen changed", k and a + ["write -d nvlist[%s].namelen 3" % k], dir_=d)
        add(s, "a pointer added to a directory without the entry", nav(p) + [
            "attr_set -p -V %s ghost.%s" % (val, p)], smp and p == "pn", dir_="blk")
        add(s, "attr block header: count", a + ["write -d hdr.count 3"], dir_=d)
        add(s, "attr block header: usedbytes", a + ["write -d hdr.usedbytes 7"], dir_=d)
        rng = byte_range(img, a)
        add(s, "attr block zeroed", rng and [("zero",) + rng], p == "pl", dir_=d)
        if p == "pn":
            add(s, "node block: a hash", nav(p) + ["ablock 0", "write -d btree[3].hashval 0x1"], dir_=d)
            add(s, "node block: a pointer to a leaf", nav(p) + ["ablock 0", "write -d btree[3].before 1"],
                dir_=d)
            rng = byte_range(img, nav(p) + ["ablock 0"])
            add(s, "node block zeroed", rng and [("zero",) + rng], True, dir_=d)
        add(s, "attr fork format changed", nav(p) + ["write -d core.aformat 1"], dir_=d)

    # ---- directory entries, each directory format
    for s, d, blk, pre in (("dirent.sf", "sf", None, "u3.sfdir3.list["), ("dirent.block", "blk", 0, "bu["),
                           ("dirent.leaf", "lf", 1, "du["), ("dirent.node", "nd", 3, "du[")):
        a = nav(d) + ([] if blk is None else ["dblock %d" % blk])
        text = db(img, a + ["p"])
        m = re.search(r'^%s(\d+)\]\.name = "(f\d+)"$' % re.escape(pre), text, re.M)
        k, nm = (m.group(1), m.group(2)) if m else (None, None)
        e = "%s%s]." % (pre, k)
        ino = "inumber.i4" if blk is None else "inumber"
        smp = d in ("sf", "lf")
        add(s, "entry names another file", k and a + ["write -d %s%s %s" % (e, ino, i["e2"])], smp, dir_=d)
        add(s, "entry names a free inode", k and a + ["write -d %s%s %d" % (e, ino, int(i["e2"]) + 40)],
            dir_=d)
        add(s, "entry name changed", k and a + ["write -d %sname \"%s\"" % (e, "g" + nm[1:])], not smp, dir_=d)
        add(s, "entry file type changed", k and a + ["write -d %sfiletype 2" % e], dir_=d)
        add(s, "entry name length changed", k and a + ["write -d %snamelen %d" % (e, len(nm) - 2)], dir_=d)
        if blk is None:
            add(s, "parent (..) another directory", a + ["write -d u3.sfdir3.hdr.parent.i4 %s" % i["c"]], dir_=d)
            add(s, "the last entry dropped (count)", a + ["write -d u3.sfdir3.hdr.count 3"], True, dir_=d)
        elif blk == 0:
            add(s, "parent (..) another directory", a + ["write -d bu[1].inumber %s" % i["c"]], dir_=d)

    # ---- directory blocks destroyed (zeroed whole): every name must come back
    s = "dirblock"
    # a short form directory's entries: its inode's data fork zeroed (v3
    # inode core: 176 bytes), the inode's CRC made right again
    rng, fo = byte_range(img, nav("sf")), re.search(r"forkoff = (\d+)", db(img, nav("sf") + ["p core.forkoff"]))
    add(s, "short form dir: its entries zeroed", rng and fo and [
        ("zero", rng[0] + 176, int(fo.group(1)) * 8), nav("sf") + ["crc -r"]], True, restore=True, dir_="sf")
    for d, what, dblk, smp in (("blk", "block dir: its block", 0, True),
                               ("lf", "leaf dir: data block 0", 0, True),
                               ("lf", "leaf dir: data block 1", 1, False),
                               ("lf", "leaf dir: its leaf block", 8388608, False),
                               ("nd", "node dir: data block 5", 5, True),
                               ("nd", "node dir: its da node block", 8388608, False),
                               ("nd", "node dir: a leaf block", 8388610, False),
                               ("nd", "node dir: its free index block", 16777216, False)):
        rng = byte_range(img, nav(d) + ["dblock %d" % dblk])
        add(s, what + " zeroed", rng and [("zero",) + rng], smp, restore=True, dir_=d)
    add(s, "leaf dir: data block 0 magic", nav("lf") + ["dblock 0", "write -d dhdr.hdr.magic 0"],
        restore=True, dir_="lf")
    for d in ("lf", "nd"):
        add(s, "%s dir: every data block zeroed" % ("leaf" if d == "lf" else "node"),
            data_blocks_zeroed(img, i[d]), restore=True, dir_=d)
    r2, r7 = byte_range(img, nav("nd") + ["dblock 2"]), byte_range(img, nav("nd") + ["dblock 7"])
    add(s, "node dir: data block 2 and 7 zeroed", r2 and r7 and [("zero",) + r2, ("zero",) + r7],
        restore=True, dir_="nd")

    # ---- directory inodes
    s = "inode.dir"
    add(s, "short form dir: size", nav("sf") + ["write -d core.size 200"], True, dir_="sf")
    add(s, "short form dir: link count", nav("c") + ["write -d core.nlinkv2 7"])
    add(s, "block dir: size", nav("blk") + ["write -d core.size 0"], dir_="blk")
    add(s, "block dir: extent count", nav("blk") + ["write -d core.nextents 0"], dir_="blk")
    add(s, "leaf dir: an extent's start block", nav("lf") + ["write -d u3.bmx[1].startblock 3"],
        True, restore=True, dir_="lf")
    add(s, "leaf dir: mode made a regular file", nav("lf") + ["write -d core.mode 0100644"], dir_="lf")
    add(s, "node dir: size", nav("nd") + ["write -d core.size 4096"], dir_="nd")
    add(s, "node dir: link count", nav("nd") + ["write -d core.nlinkv2 1"], dir_="nd")
    add(s, "a renamed directory: its magic", nav("c/b2") + ["write -d core.magic 0"])

    # ---- link counts of files
    s = "nlink"
    add(s, "six-link file: count too high", nav("a/hl") + ["write -d core.nlinkv2 9"], True, dir_="blk")
    add(s, "six-link file: count 1", nav("a/hl") + ["write -d core.nlinkv2 1"], dir_="blk")
    add(s, "leaf-fork file: count 3", nav("pl") + ["write -d core.nlinkv2 3"], True, dir_="lf")
    add(s, "node-fork file: count 1000", nav("pn") + ["write -d core.nlinkv2 1000"], dir_="nd")
    add(s, "a plain file: count 0", nav("blk/f0007") + ["write -d core.nlinkv2 0"], dir_="blk")
    add(s, "the exchange-range file: count 2", nav("e1") + ["write -d core.nlinkv2 2"])
    return out


def damage(img, c):
    """apply a case's steps: one list of xfs_db commands, or a list of
    steps, each ("zero", offset, length) or a list of xfs_db commands"""
    log = []
    steps = c.steps if not isinstance(c.steps[0], str) else [c.steps]
    for st in steps:
        if isinstance(st, tuple) and st[0] == "zero":
            with open(img, "r+b") as f:
                f.seek(st[1])
                f.write(bytes(st[2]))
        else:
            log.append(db(img, st, expert=True))
    return "".join(log)


# ---- one case

def kernel_cycle(img, mnt, d):
    """(None or what failed, tree read while mounted); mounts read-write,
    creates a file, renames it into directory d, creates one in d and
    renames it to the root, unmounts"""
    rc, msg = mount(img, mnt, "nouuid")
    if rc != 0:
        return "mount failed: " + msg, None
    err, t = None, None
    try:
        t = tree(mnt)
        dd = os.path.join(mnt, d) if os.path.isdir(os.path.join(mnt, d)) else mnt
        with open(os.path.join(mnt, "probe.new"), "wb") as f:
            f.write(b"probe")
        os.rename(os.path.join(mnt, "probe.new"), os.path.join(dd, "probe.moved"))
        with open(os.path.join(dd, "probe.out"), "wb") as f:
            f.write(b"probe")
        os.rename(os.path.join(dd, "probe.out"), os.path.join(mnt, "probe.back"))
        subprocess.run(["sync", "-f", mnt], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        err = "create/rename failed: %s" % e
    if not umount(mnt):
        err = err or "umount failed"
    if err is None:
        rc, _ = run([REPAIR, "-n", img])
        if rc != 0:
            err = "xfs_repair 6.10 -n exit %d after the mount cycle" % rc
    return err, t


def kept(t, base):
    return set() if t is None else {p for p, n in t.items() if base.tree.get(p) == n}


def run_case(c, b, slot):
    cdir = os.path.join(WORK, "case%d" % slot)
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    r = {"case": c, "fails": [], "t0": time.monotonic()}
    fail = r["fails"].append
    try:
        x, y = os.path.join(cdir, "x.img"), os.path.join(cdir, "r.img")
        copy(b.img, x)
        dblog = damage(x, c)
        copy(x, y)
        n0, _ = run([REPAIR, "-n", x])
        c0, _ = run([XCHECK, "-q", x])
        r["seen"] = n0 != 0 or c0 != 0
        if not r["seen"]:
            fail("neither xfs_repair 6.10 -n nor xfsx_check sees the damage (xfs_db: %s)"
                 % " | ".join(dblog.strip().splitlines()[-2:]))
            return r
        # xfsx_repair, once
        rc1, out1, err1 = run([XREPAIR, "--json", x], split=True)
        r["rc1"] = rc1
        try:
            rep = json.loads(out1)
        except ValueError:
            rep = None
            fail("xfsx_repair wrote no JSON report (exit %d: %s)" % (rc1, (err1 + out1).strip()[-160:]))
        if rc1 != 1:
            s = (rep or {}).get("summary", {})
            fail("xfsx_repair exit %d, not 1 (%s%s)" % (
                rc1, "summary: %s left, %s inodes cleared; " % (s.get("left"), s.get("inodes_cleared"))
                if s else "", " ".join(err1.split())[-160:]))
        # the entries the report says came back from parent pointers: (path, inode)
        said = set()
        for d in (rep or {}).get("restored") or []:
            for e in d.get("entries", []):
                said.add((os.path.normpath(os.path.join((d.get("path") or "?").lstrip("/"), e.get("name", ""))),
                          e.get("ino")))
        r["said"] = said
        n1, nout = run([REPAIR, "-n", x])
        c1, cout = run([XCHECK, x])
        if n1 != 0:
            said = [l.strip() for l in nout.splitlines() if l.strip() and not re.match(
                r"(Phase|\s+- |Cannot get host|Repair may fail|the image and|No modify)", l)]
            fail("xfs_repair 6.10 -n exit %d after one run (%s)" % (n1, "; ".join(said[:2])[:200]))
        if c1 != 0:
            fail("xfsx_check exit %d after one run (%s)" % (c1, "; ".join(cout.strip().splitlines()[:2])[:200]))
        s1 = imgsum.digest(x)
        rc2, out2 = run([XREPAIR, x])
        if rc2 != 0 or imgsum.digest(x) != s1:
            fail("second xfsx_repair exit %d, %s" % (rc2, "image unchanged" if imgsum.digest(x) == s1
                                                     else "image changed"))
        if n1 == 0:
            kerr, tx = kernel_cycle(x, os.path.join(cdir, "mnt"), c.dir)
            if kerr:
                fail("kernel: " + kerr)
        else:
            fail("kernel: not tried (xfs_repair 6.10 -n not clean)")
            tx = None
        if tx is None:
            tx = read_tree(x, os.path.join(cdir, "mnt"))
        # xfs_repair 6.10, the real one, on the second copy
        r["rc610"], _ = run([REPAIR, y])
        ty = read_tree(y, os.path.join(cdir, "mnt"))
        kx, ky = kept(tx, b), kept(ty, b)
        r["kx"], r["ky"], r["back"] = len(kx), len(ky), len(kx - ky)
        lost = sorted(ky - kx)
        if lost:
            fail("paths xfs_repair 6.10 keeps and xfsx_repair does not: %d (%s)"
                 % (len(lost), ", ".join(lost[:4])))
        notthere = sorted(p for p, n in said if tx is None or tx.get(p) != n)
        if notthere:
            fail("the report says %d entries restored that the tree lacks (%s)"
                 % (len(notthere), ", ".join(notthere[:4])))
        if c.restore and len(kx) != len(b.tree):
            gone = sorted(set(b.tree) - kx)
            fail("a destroyed directory block cost %d paths (%s)" % (len(gone), ", ".join(gone[:4])))
        return r
    except Exception as e:      # the harness's own failure: reported, not hidden
        fail("harness error: %s: %s" % (type(e).__name__, e))
        return r
    finally:
        r["secs"] = time.monotonic() - r["t0"]
        m = os.path.join(cdir, "mnt")
        if os.path.ismount(m):
            umount(m)
        if KEEP and r["fails"] and os.path.exists(os.path.join(cdir, "x.img")):
            os.makedirs(KEEP, exist_ok=True)
            # the damaged image again (x.img is the repaired one)
            dst = os.path.join(KEEP, re.sub(r"[^A-Za-z0-9_.+-]+", "_", c.id) + ".img")
            copy(b.img, dst)
            damage(dst, c)
        shutil.rmtree(cdir, ignore_errors=True)


def main():
    t0 = time.monotonic()
    os.makedirs(WORK, exist_ok=True)
    try:
        b = make_base()
    except NoKernel as e:
        tap(True, "parent-pointer damage corpus # SKIP %s" % e)
        return
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        tap(False, "base image: %s" % e)
        return
    dirs = {d: sum(1 for p in b.tree if os.path.dirname(p) == d) for d in ("sf", "blk", "lf", "nd")}
    tap(b.xrc == 0, "base: mkfs.xfs 6.10 -n parent=1 -i exchange=1, kernel-populated: %d paths; "
        "entries sf %d blk %d lf %d nd %d; exchange-range exit %d" % (
            len(b.tree), dirs["sf"], dirs["blk"], dirs["lf"], dirs["nd"], b.xrc))
    def first(pat, text):
        m = re.search(pat, text)
        return m.group(1) if m else "?"
    dfmt = {p: first(r"core\.format = \d+ \((\w+)\)", db(b.img, ["inode " + b.ino[p], "p core.format"]))
            for p in ("sf", "blk", "lf", "nd")}
    # a leaf directory's block at the leaf offset is a leaf, a node directory's a DA node
    lmagic = {p: first(r"magic = (0x\w+)", db(b.img, ["inode " + b.ino[p], "dblock 8388608", "p"]))
              for p in ("lf", "nd")}
    amagic = {p: first(r"magic = (0x\w+)", db(b.img, ["inode " + b.ino[p], "ablock 0", "p hdr.info.hdr.magic"]))
              for p in ("pl", "pn")}
    ok = (dfmt["sf"] == "local" and dfmt["blk"] == "extents" and lmagic["lf"] == "0x3df1"
          and lmagic["nd"] == "0x3ebe" and amagic == {"pl": "0x3bee", "pn": "0x3ebe"})
    tap(ok, "base: directory sf %s, blk %s, lf %s (leaf %s), nd %s (node %s); attr forks pl %s (leaf),"
        " pn %s (node)" % (dfmt["sf"], dfmt["blk"], dfmt["lf"], lmagic["lf"], dfmt["nd"], lmagic["nd"],
                           amagic["pl"], amagic["pn"]))
    n, _ = run([REPAIR, "-n", b.img])
    c, cout = run([XCHECK, "-q", b.img])
    tap(n == 0 and c == 0, "base clean: xfs_repair 6.10 -n exit %d, xfsx_check exit %d" % (n, c))
    if n != 0 or c != 0:
        return
    every = cases(b)
    for c in every:
        if not c.steps:
            tap(False, "%s: the base lacks what the case damages" % c.id)
    every = [c for c in every if c.steps]
    chosen = [c for c in every if (FULL or c.sample or ONLY) and (not ONLY or any(c.id.startswith(o) for o in ONLY))]
    diag("%d cases of %d (%s), %d jobs" % (len(chosen), len(every), "FULL" if FULL else
                                            ("XFSX_PPTR_CORPUS_CASES" if ONLY else
                                             "sample; XFSX_PPTR_CORPUS_FULL=1 runs all"), JOBS))
    slots = list(range(JOBS))
    lock = threading.Lock()

    def one(c):
        with lock:
            k = slots.pop()
        try:
            return run_case(c, b, k)
        finally:
            with lock:
                slots.append(k)
    rows, order = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as ex:
        for r in ex.map(one, chosen):
            c = r["case"]
            if c.struct not in rows:
                rows[c.struct] = [0] * 6
                order.append(c.struct)
            row = rows[c.struct]
            row[0] += 1
            row[1] += not r["fails"]
            row[2] += r.get("kx", 0)
            row[3] += r.get("ky", 0)
            row[4] += len(b.tree) if "kx" in r else 0
            row[5] += r.get("back", 0)
            if r["fails"]:
                tap(False, "%s: %s" % (c.id, "; ".join(r["fails"])), KNOWN_GAPS.get(c.id))
            else:
                if c.id in KNOWN_GAPS:
                    diag("known gap %s passes now: take it out of KNOWN_GAPS" % c.id)
                tap(True, "%s: fixed in one run; paths kept xfsx %d, xfs_repair 6.10 %d (exit %d) of %d%s;"
                    " %.1f s" % (c.id, r["kx"], r["ky"], r["rc610"], len(b.tree),
                                 ", %d only by xfsx" % r["back"] if r["back"] else "", r["secs"]))
                if r["said"]:
                    diag("  %s: the report lists %d entries restored from parent pointers (%s%s)"
                         % (c.id, len(r["said"]), ", ".join(sorted(p for p, _ in r["said"])[:3]),
                            ", ..." if len(r["said"]) > 3 else ""))
    diag("per structure: cases, fixed by one xfsx_repair run (every measure), base paths kept"
         " (summed over the cases) by xfsx_repair and by xfs_repair 6.10, of how many, and kept"
         " by xfsx_repair only")
    diag("%-14s %5s %5s %9s %9s %9s %7s" % ("structure", "cases", "fixed", "xfsx", "6.10", "of", "xfsx+"))
    tot = [0] * 6
    for s in order:
        diag("%-14s %5d %5d %9d %9d %9d %7d" % ((s,) + tuple(rows[s])))
        tot = [a + v for a, v in zip(tot, rows[s])]
    diag("%-14s %5d %5d %9d %9d %9d %7d" % (("TOTAL",) + tuple(tot)))
    diag("%.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    # a stop (meson's timeout) still unmounts: the finally below runs
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    try:
        main()
    finally:
        umount_all()
        print("1..%d" % _tap[0], flush=True)
    sys.exit(1 if _tap[1] else 0)
