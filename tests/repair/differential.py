#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Differential repair harness: xfsx_repair is never worse than
Debian's xfs_repair.

Run by tests/repair/differential.sh (TAP, a deterministic sample) and by
scripts/diff-repair (by hand: any size, a table at the end, --json).

Base images: two kernel-aged ones (tests/check/age.py through
aged_lib.sh's age_image): "rmap1k" (1 KiB blocks, rmapbt, reflink,
nrext64, part of the free space fragmented: multi-level AG btrees,
btree-format directory and xattr forks) and "sparse4k" (4 KiB blocks, no
rmapbt/reflink, all free space fragmented: sparse inode chunks, two-level
free-space btrees); both hold every directory and xattr format, remote
values, inline and remote symlinks, hard links, devices.  And "repro",
made by xfsx_mkfs and filled by fill_repro() for ten reproductions of
repair bugs found before (damage xfsx_repair once handled worse than
xfs_repair).  Realtime is not covered: the judge is the kernel, and a
kernel without CONFIG_XFS_RT cannot mount a realtime filesystem
(tests/repair/rt.sh covers the rt metadata without it).

Damage (xfs_db -x): every field of every structure tests/repair/corpus.py's
targets_for() reaches (plus btree-format directory and xattr forks, link
counts, directory, reflinked and realtime-metadata inode cores) x every
fuzz verb (zeroes ones firstbit middlebit lastbit add sub random), with the
CRC kept valid (`fuzz -d`) and left stale (`fuzz -c`); every such block or
inode zeroed whole; `blocktrash` over many seeds; and the repro cases.
"random" is made deterministic: the field's width is probed with `fuzz
ones` and a seeded value written with `write` (xfs_db's own random is not
seeded).

A case counts when xfs_repair -n or xfsx_check reports it.  Then on two
copies, xfsx_repair (--json) and xfs_repair each run once, and for each:
  onerun   xfs_repair -n and xfsx_check clean after one run (score 0..2)
  rerun    a second run of the same tool exits 0 and changes nothing
           (sha256 over the data, holes as zeroes: aged_lib.sh imgsum)
  kernel   (only when xfs_repair -n is clean) the kernel mounts it, creates
           files in lost+found and in every directory, fallocates 90% of
           the free space, unmounts, and xfs_repair -n is clean
  paths    the base image's (path, type) still there
  files    the base image's (path, content) of regular files (imgsum.py's
           digest) and symlinks (md5 of the target)
  xattrs   the base image's (path, name, md5(value))
  report   xfsx only (xfs_repair: n/a): summary.left == 0 exactly when both
           checkers call the result clean, the exit code follows (4 iff
           left), no finding "fixed" on an unchanged image, no "BUG:", and a
           regular file whose inode is gone from the tree means
           inodes_cleared > 0
(paths, files and xattrs are read on a read-only norecovery mount when the
result is not clean).  Rule: xfsx is at least as good as xfs_repair on every
measure of every case (for sets: it keeps everything xfs_repair keeps).
"""
import argparse
import concurrent.futures
import hashlib
import importlib.util
import itertools
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
_spec = importlib.util.spec_from_file_location("repair_corpus", os.path.join(HERE, "corpus.py"))
rcorpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rcorpus)
db, fields_of, targets_for, can_mount = (rcorpus.db, rcorpus.fields_of, rcorpus.targets_for,
                                         rcorpus.can_mount)
_spec = importlib.util.spec_from_file_location("imgsum", os.path.join(HERE, "..", "check", "imgsum.py"))
imgsum = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(imgsum)
sha = imgsum.digest     # aged_lib.sh's imgsum, in this process
xattrs_of = rcorpus.xattrs_kept.xattrs_of
AGED_LIB = rcorpus.AGED_LIB

VERBS = rcorpus.VERBS_D + ["random"]
MEASURES = ["onerun", "rerun", "kernel", "paths", "files", "xattrs", "report"]
TIMEOUT = 900
KEEP_MAX = 100      # failing cases kept (--keep): the first ones only

# Cases whose failure is reported as TAP TODO (not a red suite) until their
# fixes land: case id (or "base/type" for a whole type) -> reason.  Shrink
# it as fixes merge; a case not listed that is worse fails.
KNOWN_GAPS = {
    # (empty: every reproduction case and the CI sample pass since the inode
    # mending, namespace, symlink and superblock vote work merged; a case that
    # fails goes here only with its reason, and stays until it is fixed)
}

BASES = {
    # name: (size, mkfs.xfs options, age.py options)
    "rmap1k": ("320M", "-b size=1024 -m rmapbt=1,reflink=1 -i sparse=1,nrext64=1",
               "--fragment --fragment-runs 4000"),
    # sparse inode chunks: the free space all in 6-block runs (4 KiB blocks:
    # cluster-sized holes; reflink off, its AG reservation would stay a
    # free extent where full chunks fit)
    "sparse4k": ("320M", "-m rmapbt=0,reflink=0 -i sparse=1", "--fragment"),
}
NOTES = ["realtime: not covered: the judge is the kernel, and this one %s"
         " (tests/repair/rt.sh repairs rt metadata without mounting)"]


def run(args, timeout=TIMEOUT, **kw):
    """(exit code, stdout, stderr) as text; -9 on a timeout"""
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, **kw)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -9, "", "timed out after %d s" % timeout


def copy(src, dst):
    subprocess.run(["cp", "--sparse=always", src, dst], check=True)


def rt_note():
    try:
        import gzip
        cfg = gzip.open("/proc/config.gz").read().decode()
        if "CONFIG_XFS_RT=y" in cfg:
            return NOTES[0] % "has CONFIG_XFS_RT, but the harness has no rt device per case yet"
        return NOTES[0] % "has no CONFIG_XFS_RT"
    except OSError:
        return NOTES[0] % "may lack CONFIG_XFS_RT (no /proc/config.gz to tell)"


# ---- mounts: every mount is registered so that it is undone on any exit

_mounts = set()
_mlock = threading.Lock()


def mount(img, mnt, opts):
    os.makedirs(mnt, exist_ok=True)
    rc, out, err = run(["mount", "-t", "xfs", "-o", opts, img, mnt], timeout=300)
    if rc == 0:
        with _mlock:
            _mounts.add(mnt)
    return rc, (err or out).strip().splitlines()[-1:] or ["exit %d" % rc]


def umount(mnt):
    rc, _, err = run(["umount", mnt], timeout=300)
    if rc != 0:
        run(["umount", "-l", mnt], timeout=60)
    with _mlock:
        _mounts.discard(mnt)
    return rc == 0


def umount_all(work):
    """every mount this run made, and any other left under work (a worker
    stopped between its mount and its registration)"""
    for m in list(_mounts):
        umount(m)
    try:
        for line in open("/proc/self/mounts"):
            m = line.split()[1].encode().decode("unicode_escape")
            if m.startswith(work.rstrip("/") + "/"):
                umount(m)
    except OSError:
        pass


# ---- what a filesystem holds, read through the kernel

TYPECH = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFCHR: "c",
          stat.S_IFBLK: "b", stat.S_IFIFO: "p", stat.S_IFSOCK: "s"}


class Tree:
    """paths {path: type}, content {path: md5} (regular files: data,
    symlinks: target), xattrs {(path, name, md5)}, ino {path: inode}"""

    def __init__(self, mnt):
        self.paths, self.content, self.ino, self.dirs = {}, {}, {}, []
        for d, dirs, names in os.walk(mnt):
            rel = os.path.relpath(d, mnt)
            self.dirs.append(d)
            for nm in dirs + names:
                p = os.path.join(d, nm)
                r = os.path.normpath(os.path.join(rel, nm))
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                t = TYPECH.get(stat.S_IFMT(st.st_mode), "?")
                self.paths[r] = t
                self.ino[r] = st.st_ino
                try:
                    if t == "f":
                        # sparse-aware: the holes of a fragmented file are not read
                        self.content[r] = sha(p) if st.st_size else "empty"
                    elif t == "l":
                        self.content[r] = hashlib.md5(os.fsencode(os.readlink(p))).hexdigest()
                except OSError:
                    pass    # unreadable: not kept
        self.xattrs = xattrs_of(mnt, by_path=True)


def read_tree(img, mnt):
    """the Tree of img on a read-only norecovery mount, or None"""
    if mount(img, mnt, "ro,norecovery,nouuid")[0] != 0:
        return None
    try:
        return Tree(mnt)
    finally:
        umount(mnt)


def kernel_judge(img, mnt, n_clean, check=None):
    """(kernel measure: None when it all worked, else what failed; Tree or
    None).  Mounted read-write only when xfs_repair -n calls it clean;
    otherwise read on a read-only norecovery mount, and the kernel measure
    fails.  check: the command that judges the result after the mount
    cycle (default xfs_repair -n)."""
    if not n_clean:
        return "not tried: xfs_repair -n not clean", read_tree(img, mnt)
    rc, msg = mount(img, mnt, "nouuid")
    if rc != 0:
        return "mount failed: " + msg[0], read_tree(img, mnt)
    err = None
    tree = None
    try:
        tree = Tree(mnt)
        lf = os.path.join(mnt, "lost+found")
        for d in tree.dirs + ([lf] if os.path.isdir(lf) else []):
            for k in range(20 if d == lf else 2):
                with open(os.path.join(d, "dh.probe%d" % k), "wb") as f:
                    f.write(b"p" * (100 + 1000 * k))
        subprocess.run(["sync", "-f", mnt], check=True)
        st = os.statvfs(mnt)
        fill = os.path.join(mnt, "dh.fill")
        want = st.f_bavail * st.f_frsize * 9 // 10
        fd = os.open(fill, os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.posix_fallocate(fd, 0, want)
        finally:
            os.close(fd)
        subprocess.run(["sync", "-f", mnt], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        err = "writes failed: %s" % e
    if not umount(mnt):
        err = err or "umount failed"
    if err is None:
        rc, out, _ = run((check or ["xfs_repair", "-n"]) + [img])
        if rc != 0:
            err = "%s exit %d after the mount cycle" % (
                os.path.basename((check or ["xfs_repair -n"])[0]), rc)
    return err, tree


# ---- base images

class Base:
    def __init__(self, name, img, tree, note):
        self.name, self.img, self.tree, self.note = name, img, tree, note
        self.bkeys = {(p, t) for p, t in tree.paths.items()}
        self.files = set(tree.content.items())
        self.regino = {i for p, i in tree.ino.items() if tree.paths[p] == "f"}
        self.inos = {p: str(i) for p, i in tree.ino.items()}


def read_base(name, img, work, note):
    mnt = os.path.join(work, "mnt-" + name)
    rc, msg = mount(img, mnt, "ro,nouuid")
    if rc != 0:
        raise RuntimeError("%s: base image does not mount: %s" % (name, msg[0]))
    try:
        tree = Tree(mnt)
    finally:
        umount(mnt)
    return Base(name, img, tree, note)


def age_base(name, work):
    """a kernel-aged base image (aged_lib.sh's age_image: mkfs.xfs, loop
    mount, age.py, unmount); nrext64 is dropped, with a note, where this
    mkfs.xfs lacks it"""
    size, opts, aopts = BASES[name]
    tmp = os.path.join(work, "age-" + name)
    os.makedirs(tmp, exist_ok=True)
    img = os.path.join(work, name + ".img")
    note = ""
    probe = os.path.join(tmp, "probe.img")
    with open(probe, "wb") as f:
        f.truncate(512 << 20)
    if "nrext64" in opts and run(["mkfs.xfs", "-q", "-f", "-N", "-i", "nrext64=1", probe])[0] != 0:
        opts = opts.replace(",nrext64=1", "")
        note = "mkfs.xfs lacks nrext64: made without it"
    os.unlink(probe)
    shell = ('mount_img() { mkdir -p "$2"; mount -t xfs -o "${3:-rw}" "$1" "$2"; };'
             'unmount_dir() { umount "$1"; }; . "$0"; age_image "$@"')
    try:
        rc, out, err = run(["bash", "-c", shell, AGED_LIB, img, size, opts] + aopts.split(),
                           env=dict(os.environ, TMP=tmp, XFSX_SRC=SRC), timeout=1800)
    finally:
        if os.path.ismount(os.path.join(tmp, "agemnt")):
            run(["umount", "-l", os.path.join(tmp, "agemnt")])
    if rc != 0:
        raise RuntimeError("%s: aging failed: %s" % (name, (err or out).strip()[-300:]))
    aged = open(os.path.join(tmp, "age.out")).read().strip()
    # which on-disk formats the image really holds (aged_lib.sh format_report)
    _, fmts, _ = run(["bash", "-c", '. "$0"; format_report "$1"', AGED_LIB, img],
                     env=dict(os.environ, TMP=tmp))
    note = "; ".join(x for x in ("mkfs.xfs %s, aged %s: %s" % (opts, aopts or "(plain)", aged),
                                 "formats: " + fmts.strip(), note) if x)
    return read_base(name, img, work, note)


def fill_repro(mnt):
    """the objects the reproductions damage (xfsx_mkfs, mount, fill,
    unmount)"""
    j = lambda *p: os.path.join(mnt, *p)

    def put(p, data):
        with open(p, "wb") as f:
            f.write(data)
            os.fsync(f.fileno())
    rnd = random.Random(26)
    rb = lambda n: bytes(rnd.getrandbits(8) for _ in range(n))
    put(j("r"), rb(300 * 1024))
    os.setxattr(j("r"), "user.r", b"kept")
    os.link(j("r"), j("r2"))
    put(j("free1"), b"x")          # deleted below: the lowest free inode (repro 4)
    os.mkdir(j("d"))
    for k in range(1, 6):
        put(j("d", "f%d" % k), b"f%d\n" % k)
    # a btree-format attr fork: remote values, each allocation split from
    # the next by a spacer's block
    put(j("ra"), rb(4096))
    sp = os.open(j("spacer"), os.O_CREAT | os.O_WRONLY, 0o644)
    for k in range(40):
        os.setxattr(j("ra"), "user.v%02d" % k, rb(1500))
        os.posix_fallocate(sp, k * 4096, 4096)
        os.fsync(sp)
    os.close(sp)
    # leaf-format xattrs (repro 8)
    put(j("x8"), b"x8")
    for k in range(40):
        os.setxattr(j("x8"), "user.a%02d" % k, b"v" * 60)
    # two files one after the other, the first with a hole after its data (repro 8)
    fd = os.open(j("e1"), os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, rb(8192))
    os.ftruncate(fd, 32768)
    os.fsync(fd)
    os.close(fd)
    put(j("e2"), rb(8192))
    os.mkdir(j("d50"))
    for k in range(1, 61):
        put(j("d50", "f%d" % k), b"g%d\n" % k)
    os.makedirs(j("a", "b"))
    put(j("a", "b", "c"), b"c\n")
    for d, n in (("n52", 52), ("n250", 250)):
        os.mkdir(j(d))
        for k in range(n):
            open(j(d, "f%03d" % k), "w").close()
    os.unlink(j("free1"))
    subprocess.run(["sync", "-f", mnt], check=True)


def repro_base(work, mkfs):
    img = os.path.join(work, "repro.img")
    with open(img, "wb") as f:
        f.truncate(1 << 30)
    rc, out, err = run([mkfs, "-q", img])
    if rc != 0:
        raise RuntimeError("repro: %s exit %d: %s" % (mkfs, rc, (err or out).strip()[-200:]))
    mnt = os.path.join(work, "mnt-repro")
    rc, msg = mount(img, mnt, "rw")
    if rc != 0:
        raise RuntimeError("repro: the xfsx_mkfs image does not mount: " + msg[0])
    try:
        fill_repro(mnt)
    finally:
        umount(mnt)
    return read_base("repro", img, work, "1 GiB, xfsx_mkfs, filled by differential.py fill_repro()")


# ---- cases

class Case:
    def __init__(self, base, stype, what, steps, expect=None):
        self.base, self.stype, self.what, self.steps, self.expect = base, stype, what, steps, expect
        self.id = "/".join([base] + ([stype] if stype != base else []) + [what])


def stack_range(img, nav):
    m = re.search(r"byte offset (\d+), length (\d+)", db(img, nav + ["stack"]))
    return (int(m.group(1)), int(m.group(2))) if m else None


def extra_targets(base):
    """targets beyond corpus.py's: btree-format directory and xattr forks,
    a hard-linked file's link count, a directory's, a reflinked file's and a
    realtime metadata inode's core"""
    i = base.inos.get
    t = []
    core = re.compile(r"^core\.")
    for stype, path, fork in (("dir.bmbt", "dirs/node0", "u3"), ("attr.bmbt", "xattrs/node", "a")):
        if not i(path):
            continue
        nav = ["inode " + i(path)]
        fmt = db(base.img, nav + ["p core.%s" % ("format" if fork == "u3" else "aformat")])
        if "btree" in fmt:
            t.append((stype + ".root", nav, re.compile(r"^%s\.bmbt" % re.escape(fork))))
            t.append((stype + ".block", nav + ["addr %s.bmbt.ptrs[1]" % fork], None))
    if i("links/hard0"):
        t.append(("inode.nlink", ["inode " + i("links/hard0")], re.compile(r"^core\.nlinkv2 ")))
    if i("dirs/block0"):
        t.append(("inode.dir", ["inode " + i("dirs/block0")], core))
    if i("data/sparse0.clone0") and "REFLINK" in db(base.img, ["version"]):
        t.append(("inode.reflink", ["inode " + i("data/sparse0.clone0")],
                  re.compile(r"^(core\.(flags|nblocks|nextents) |v3\.)")))
    m = re.search(r"rsumino = (\d+)", db(base.img, ["sb 0", "p rsumino"]))
    if m:
        t.append(("inode.rtmeta", ["inode " + m.group(1)], core))
    return t


def fuzz_cases(base, full, fields_cap):
    """every (target, field, verb, crc flag) case of a base, and every
    target's block (or inode) zeroed whole"""
    has_rmap = "RMAPBT" in db(base.img, ["version"])
    out = []
    zeroed = set()
    for stype, nav, keep in targets_for(base.img, base.inos, has_rmap) + extra_targets(base):
        text = db(base.img, nav + ["print"])
        if keep:
            text = "\n".join(l for l in text.splitlines() if keep.match(l))
        flds = fields_of(text, 10 ** 9 if full else fields_cap)
        if not flds:
            out.append(Case(base.name, stype, "no fields at " + " / ".join(nav), None))
            continue
        for f in flds:
            for flag in ("-d", "-c"):
                for v in VERBS:
                    out.append(Case(base.name, stype, "fuzz %s %s %s" % (flag, f, v),
                                    [("fuzz", nav, flag, f, v)]))
        rng = stack_range(base.img, nav)
        if rng and rng not in zeroed:
            zeroed.add(rng)
            out.append(Case(base.name, stype, "zero %d bytes at %d" % (rng[1], rng[0]),
                            [("zero", rng[0], rng[1])]))
    for s in range(1, 201):
        out.append(Case(base.name, "blocktrash", "seed %d" % s, [("trash", s)]))
    return out


def repro_cases(base):
    """the reproductions 1-10, as damage on the repro base"""
    b = base.name
    c = []
    sb = lambda cmd: [("db", ["sb 0", cmd])]
    r1 = [("nblocks", "write -d core.nblocks 0"), ("naextents", "write -d core.naextents 16777216"),
          ("flags", "write -d core.flags 0xffff"), ("flags2", "fuzz -d v3.flags2 ones"),
          ("version", "write -d core.version 2"), ("aformat", "fuzz -d core.aformat ones")]
    for nm, cmd in r1:
        c.append(Case(b, "repro", "1." + nm, [("db", ["path /r", cmd])]))
    c.append(Case(b, "repro", "1.attr-extent-count", [("db", ["path /ra", "fuzz -d core.naextents add"])]))
    c.append(Case(b, "repro", "1.attr-bmbt-numrecs",
                  [("db", ["path /ra", "addr a.bmbt.ptrs[1]", "fuzz -d numrecs sub"])]))
    c.append(Case(b, "repro", "2.logstart", sb("write -d logstart 0")))
    c.append(Case(b, "repro", "3.rootino", sb("write -d rootino 0")))
    c.append(Case(b, "repro", "3.rbmino", sb("write -d rbmino 12345678901")))
    c.append(Case(b, "repro", "3.ro-compat", sb("write -d features_ro_compat 0")))
    c.append(Case(b, "repro", "3.sector0", [("zero", 0, 512)]))
    c.append(Case(b, "repro", "3.uuid", sb("fuzz -d uuid zeroes")))
    free = base.free_ino
    c.append(Case(b, "repro", "4.dir-magic+free-gen",
                  [("db", ["path /d", "write -d core.magic 0"]),
                   ("db", ["inode %d" % free, "write -c core.gen 1"])]))
    c.append(Case(b, "repro", "5.inobt-magic+inode-magic",
                  [("db", ["agi 0", "addr root", "write -d magic 0"]),
                   ("db", ["path /d50/f50", "write -d core.magic 0x4a4e"])]))
    c.append(Case(b, "repro", "6.dir-realtime", [("db", ["path /a/b", "write -d core.realtime 1"])]))
    m = re.search(r"rsumino = (\d+)", db(base.img, ["sb 0", "p rsumino"]))
    c.append(Case(b, "repro", "7.rsum-magic", [("db", ["inode " + m.group(1), "write -d core.magic 0"])]))
    c.append(Case(b, "repro", "8.attr-count+bad-crc",
                  [("db", ["path /x8", "ablock 0", "fuzz -d hdr.count add"]),
                   ("db", ["path /x8", "write -c core.gen 1"])]))
    c.append(Case(b, "repro", "8.stretched-extent", [("db", ["path /e1", base.stretch])]))
    c.append(Case(b, "repro", "9.dir-inode-magic", [("db", ["path /n52", "write -d core.magic 0"])]))
    c.append(Case(b, "repro", "9.dir-data-magic",
                  [("db", ["path /n250", "dblock 0", "write -d dhdr.hdr.magic 0"])]))
    c.append(Case(b, "repro", "10.compat-bit", sb("write -d features_compat 0x100"), expect="accept"))
    return c


def repro_facts(base):
    """the repro base's lowest free inode and the write that stretches
    /e1's extent over /e2's first block"""
    recs = db(base.img, ["agi 0", "addr root", "p recs"])
    base.free_ino = None
    for m in re.finditer(r"\d+:\[(\d+),(\d+),(\d+),(\d+),(0x[0-9a-f]+|\d+)\]", recs):
        start, free = int(m.group(1)), int(m.group(5), 0)
        if free:
            base.free_ino = start + ((free & -free).bit_length() - 1)
            break
    bm = lambda p: re.search(r"startblock (\d+) \(\S+\) count (\d+)",
                             db(base.img, ["path " + p, "bmap"]))
    e1, e2 = bm("/e1"), bm("/e2")
    gap = int(e2.group(1)) - int(e1.group(1)) if e1 and e2 else -1
    if 0 < gap < 8:
        base.stretch = "write -c u3.bmx[0].blockcount %d" % (gap + 1)
    else:   # not adjacent: point /e1's extent at /e2's block instead
        base.stretch = "write -c u3.bmx[0].startblock %s" % (e2.group(1) if e2 else 0)


def case_rng(case):
    return random.Random(int(hashlib.sha256(case.id.encode()).hexdigest()[:16], 16))


def damage(img, case):
    """apply a case's damage to img; returns what xfs_db said (the record
    of the values written)"""
    log = []
    for st in case.steps:
        if st[0] == "db":
            log.append(db(img, st[1], expert=True))
        elif st[0] == "zero":
            with open(img, "r+b") as f:
                f.seek(st[1])
                f.write(bytes(st[2]))
        elif st[0] == "trash":
            s = st[1]
            log.append(db(img, ["blockget", "blocktrash -s %d -n %d -3 -x 1 -y 32" % (s, 2 + s % 4)],
                          expert=True))
        elif st[0] == "fuzz":
            _, nav, flag, field, verb = st
            if verb != "random":
                log.append(db(img, nav + ["fuzz %s %s %s" % (flag, field, verb)], expert=True))
                continue
            # xfs_db's random is not seeded: probe the width with `ones`
            # and write a value drawn from the case's own seed
            probe = db(img, nav + ["fuzz -d %s ones" % field], expert=True)
            m = re.search(r"^%s = (\S+)" % re.escape(field), probe, re.M)
            rng = case_rng(case)
            val = None
            if m:
                try:
                    val = str(rng.getrandbits(max(1, int(m.group(1), 0).bit_length())))
                except ValueError:
                    if re.match(r"^[0-9a-f]{8}-", m.group(1)):
                        h = "%032x" % rng.getrandbits(128)
                        val = "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
            if val is None:
                log.append(db(img, nav + ["fuzz %s %s random" % (flag, field)], expert=True))
            else:
                log.append(db(img, nav + ["write %s %s %s" % (flag, field, val)], expert=True))
    return "".join(log)


# ---- one tool's result, measured

def measure(tool, img, mnt, env, before, accept=False):
    """the measures of one repair run on img (whose digest is before):
    tool "xfsx" or "xfs_repair" """
    res = {}
    t = [time.monotonic()]
    lap = lambda: t.append(time.monotonic())
    if tool == "xfsx":
        rc, out, err = run([env["XFSX_REPAIR"], "--json", img])
    else:
        rc, out, err = run(["xfs_repair", img])
    res["rc"] = rc
    res["bug"] = "BUG:" in out + err
    res["tail"] = (err.strip().splitlines() or out.strip().splitlines() or [""])[-1][:200]
    if tool == "xfsx":
        try:
            res["json"] = json.loads(out)
        except ValueError:
            res["json"] = None
    res["unchanged"] = sha(img) == before
    lap()
    n1 = run(["xfs_repair", "-n", img])[0]
    c1 = run([env["XFSX_CHECK"], "-q", img])[0]
    lap()
    res["onerun"] = (n1 == 0) + (c1 == 0)
    res["onerun_v"] = "xfs_repair -n %d, xfsx_check %d" % (n1, c1)
    s1 = sha(img)
    rc2 = run([env["XFSX_REPAIR"], "-q", img] if tool == "xfsx" else ["xfs_repair", img])[0]
    res["rerun"] = rc2 == 0 and sha(img) == s1
    res["rerun_v"] = "exit %d, %s" % (rc2, "unchanged" if sha(img) == s1 else "changed")
    lap()
    # a damage the kernel accepts (an unknown compat bit, which xfs_repair 6.1
    # refuses): the kernel and xfsx_check judge the result, not xfs_repair -n
    kerr, tree = kernel_judge(img, mnt, n1 == 0 or (accept and c1 == 0),
                              [env["XFSX_CHECK"], "-q"] if accept and n1 != 0 else None)
    lap()
    res["secs"] = [round(b - a, 2) for a, b in zip(t, t[1:])]   # run, check, rerun, kernel
    res["kernel"] = kerr is None
    res["kernel_v"] = kerr or "ok"
    res["tree"] = tree
    res["clean"] = (n1 == 0 or (accept and kerr is None)) and c1 == 0
    return res


def kept(res, base):
    t = res["tree"]
    if t is None:
        return set(), set(), set()
    return ({(p, ty) for p, ty in t.paths.items()} & base.bkeys,
            set(t.content.items()) & base.files, t.xattrs & base.tree.xattrs)


def report_honest(res, base, paths_kept):
    """None when xfsx_repair's report matches its after state, else why not"""
    j = res.get("json")
    if res["bug"]:
        return "BUG: in the output"
    if j is None:
        if res["rc"] == 8 and res["unchanged"]:
            return None     # a refusal that wrote nothing
        return "no JSON report (exit %d)" % res["rc"]
    s = j.get("summary", {})
    left = s.get("left", 0)
    if res["rc"] == 8 and res["unchanged"]:
        return None
    if (left == 0) != res["clean"]:
        return "summary.left %d but the result is %s (%s)" % (
            left, "clean" if res["clean"] else "not clean", res["onerun_v"])
    if res["rc"] in (0, 1, 4) and (res["rc"] == 4) != (left > 0):
        return "exit %d with summary.left %d" % (res["rc"], left)
    fixed = sum(1 for f in j.get("findings", []) if f.get("fixed"))
    if fixed and res["unchanged"]:
        return "%d findings \"fixed\" but the image is unchanged" % fixed
    # (an unchanged image: any file missing is the damage's doing, not a clear)
    if res["tree"] is not None and not res["unchanged"] and not s.get("inodes_cleared"):
        gone = base.regino - set(res["tree"].ino.values())
        if gone:
            return "%d regular files' inodes gone, inodes_cleared 0" % len(gone)
    return None


def compare(x, d, base, case):
    """{measure: (verdict, xfsx value, xfs_repair value)}; verdict is
    "better", "equal" or "worse" (for xfsx)"""
    out = {}
    for m in ("onerun", "rerun", "kernel"):
        a, b = int(x[m]), int(d[m])
        v = "better" if a > b else "worse" if a < b else "equal"
        out[m] = (v, x[m + "_v"], d[m + "_v"])
    xk, dk = kept(x, base), kept(d, base)
    for m, a, b in zip(("paths", "files", "xattrs"), xk, dk):
        lost = b - a
        if lost:
            e = sorted(lost)[0]
            eg = "/" + e[0] + (" " + e[1] if m == "xattrs" else "")
            out[m] = ("worse", "%d (of %d)" % (len(a), len(b | a)),
                      "%d; xfsx loses %d it keeps, e.g. %s" % (len(b), len(lost), eg))
        else:
            out[m] = ("better" if a - b else "equal", str(len(a)), str(len(b)))
    if case.expect == "accept" and (x["rc"] == 8 or x["onerun_v"].endswith("xfsx_check 8")):
        # the kernel mounts this one (an unknown compat bit): refusing is no repair,
        # whatever xfs_repair does
        out["onerun"] = ("worse", "refuses (exit %d, then %s)" % (x["rc"], x["onerun_v"]),
                         "%s (the kernel mounts the damaged image)" % d["onerun_v"])
    why = report_honest(x, base, xk[0])
    out["report"] = ("worse" if why else "equal", why or "honest", "n/a")
    return out


def run_case(case, bases, slot, env, keep):
    base = bases[case.base]
    cdir = os.path.join(env["WORK"], "case%d" % slot)
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    t0 = time.monotonic()
    r = {"id": case.id, "base": case.base, "type": case.stype, "what": case.what}
    try:
        dmg = os.path.join(cdir, "damaged.img")
        copy(base.img, dmg)
        r["damage_log"] = damage(dmg, case)
        rrc = run(["xfs_repair", "-n", dmg])[0]
        xrc = run([env["XFSX_CHECK"], "-q", dmg])[0]
        r["found"] = [rrc, xrc]
        r["seen"] = rrc != 0 or xrc != 0
        if not r["seen"]:
            return r
        res = {}
        before = sha(dmg)
        for tool in ("xfsx", "xfs_repair"):
            img = os.path.join(cdir, tool + ".img")
            copy(dmg, img)
            res[tool] = measure(tool, img, os.path.join(cdir, "mnt"), env, before,
                                case.expect == "accept")
            r[tool + "_rc"] = res[tool]["rc"]
            r[tool + "_tail"] = res[tool]["tail"]
            r[tool + "_secs"] = res[tool]["secs"]
        cmp_ = compare(res["xfsx"], res["xfs_repair"], base, case)
        r["measures"] = {m: {"verdict": v, "xfsx": a, "xfs_repair": b} for m, (v, a, b) in cmp_.items()}
        r["worse"] = [m for m in MEASURES if cmp_[m][0] == "worse"]
        j = res["xfsx"].get("json") or {}
        s = j.get("summary", {})
        r["xfsx_summary"] = {k: s.get(k) for k in ("findings", "left", "inodes_cleared",
                                                   "moved_to_lost_found", "attr_forks_removed")}
        r["xfsx_fixed"] = sum(1 for f in j.get("findings", []) if f.get("fixed"))
        return r
    finally:
        r["secs"] = round(time.monotonic() - t0, 2)
        for m in (os.path.join(cdir, "mnt"),):
            if os.path.ismount(m):
                umount(m)
        if keep and r.get("worse") and len(os.listdir(keep)) < KEEP_MAX:
            dst = os.path.join(keep, re.sub(r"[^A-Za-z0-9_.+-]+", "_", case.id))
            shutil.rmtree(dst, ignore_errors=True)
            os.makedirs(dst)
            for f in ("damaged.img",):
                if os.path.exists(os.path.join(cdir, f)):
                    shutil.move(os.path.join(cdir, f), dst)
            with open(os.path.join(dst, "case.json"), "w") as f:
                json.dump(r, f, indent=1, default=str)
        shutil.rmtree(cdir, ignore_errors=True)


# ---- selection and output

def type_match(case, types):
    if not types:
        return True
    for t in types:
        if t in (case.base, case.stype, case.id) or case.stype.startswith(t + ".") \
                or case.id.startswith(t):
            return True
    return False


def sample(cases, n, seed):
    """n cases spread over the structure types: round-robin over the types
    (in their order), each type's cases alternating over the bases (the
    first base by the seed), each base's in an order fixed by the seed and
    the case id (adding fields to a block changes little of the choice)"""
    key = lambda x: hashlib.sha256(("%s:%s" % (seed, x)).encode()).hexdigest()
    bytype = {}
    for c in cases:
        bytype.setdefault(c.stype, {}).setdefault(c.base, []).append(c)
    queues = {}
    for t, per in bytype.items():
        lists = [sorted(per[b], key=lambda c: key(c.id)) for b in sorted(per, key=lambda b: key(t + b))]
        queues[t] = [c for tup in itertools.zip_longest(*lists) for c in tup if c]
    out = []
    while len(out) < n and any(queues.values()):
        for t in queues:
            if queues[t] and len(out) < n:
                out.append(queues[t].pop(0))
    return out


def gap_of(r):
    return KNOWN_GAPS.get(r["id"], KNOWN_GAPS.get("%s/%s" % (r["base"], r["type"])))


def table(results, out):
    rows = {}
    order = []
    for r in results:
        t = r["type"]
        if t not in rows:
            rows[t] = {"cases": 0, "unseen": 0, "secs": 0.0, **{m: [0, 0, 0] for m in MEASURES}}
            order.append(t)
        row = rows[t]
        row["secs"] += r.get("secs", 0)
        if r.get("error"):
            continue
        if not r.get("seen"):
            row["unseen"] += 1
            continue
        row["cases"] += 1
        for m in MEASURES:
            row[m][("better", "equal", "worse").index(r["measures"][m]["verdict"])] += 1
    tot = {"cases": 0, "unseen": 0, "secs": 0.0, **{m: [0, 0, 0] for m in MEASURES}}
    for t in order:
        for k, v in rows[t].items():
            if isinstance(v, list):
                tot[k] = [a + b for a, b in zip(tot[k], v)]
            else:
                tot[k] += v
    w = max([len(t) for t in order] + [12])
    hdr = "%-*s %5s %5s " % (w, "type", "cases", "unrep") + " ".join("%11s" % m for m in MEASURES)
    out("per structure type: cases reported by a checker (unrep: by neither, not run);"
        " per measure xfsx_repair better/equal/worse than xfs_repair")
    out(hdr)
    for t, row in [(t, rows[t]) for t in order] + [("TOTAL", tot)]:
        out("%-*s %5d %5d " % (w, t, row["cases"], row["unseen"]) +
            " ".join("%11s" % "/".join(map(str, row[m])) for m in MEASURES))
    return tot


def main(argv=None, tap=False):
    ap = argparse.ArgumentParser(
        prog="diff-repair", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Differential repair harness: damage kernel-aged XFS images with "
                    "xfs_db, repair copies with xfsx_repair and with Debian xfs_repair, and "
                    "require xfsx_repair to be at least as good on every measure.",
        epilog="""environment (the options win):
  XFSX_REPAIR      xfsx_repair binary   (default BUILD/repair/xfsx_repair)
  XFSX_CHECK       xfsx_check binary    (default BUILD/check/xfsx_check)
  XFSX_MKFS        xfsx_mkfs binary for the repro image (default BUILD/mkfs/xfsx_mkfs)
  XFSX_BUILD       the build directory  (default SRC/build)
  XFSX_DIFF_FULL=1 every case (thousands; the default is a sample)
  XFSX_DIFF_CASES  sample size (default 40, plus every repro case)
  XFSX_DIFF_TYPES  space-separated bases, types or case-id prefixes, e.g.
                   "repro dir.block rmap1k/inode.core blocktrash"
  XFSX_DIFF_JOBS   cases in parallel (default 2)
  XFSX_DIFF_SEED   the sample's seed (default 26)
  XFSX_DIFF_KEEP   keep failing cases' damaged images and records here (--keep)
Needs root, loop devices and XFS in the kernel (it mounts images).""")
    ap.add_argument("--full", action="store_true", default=os.environ.get("XFSX_DIFF_FULL") == "1")
    ap.add_argument("--cases", type=int, default=int(os.environ.get("XFSX_DIFF_CASES", "40")))
    ap.add_argument("--types", default=os.environ.get("XFSX_DIFF_TYPES", ""))
    ap.add_argument("--case", action="append", default=[],
                    help="run this case id (repeatable; ids hold spaces: quote them)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("XFSX_DIFF_JOBS", "2")))
    ap.add_argument("--seed", default=os.environ.get("XFSX_DIFF_SEED", "26"))
    ap.add_argument("--fields", type=int, default=6,
                    help="fields per block in the sample's pool (default 6; --full: all)")
    ap.add_argument("--keep", default=os.environ.get("XFSX_DIFF_KEEP", "" if tap else "diff-repair.failed"),
                    help="keep the damaged image and record of each case where xfsx is worse"
                         " (the first %d) here; default ./diff-repair.failed by hand, nothing"
                         " in the test" % KEEP_MAX)
    ap.add_argument("--json", help="write the per-case results here")
    ap.add_argument("--list", action="store_true", help="list the chosen cases, run nothing")
    ap.add_argument("--no-repro", action="store_true", help="leave out the repro cases")
    ap.add_argument("--work", help="work directory (default a new one in $TMPDIR or /dev/shm)")
    ap.add_argument("--xfsx-repair", default=os.environ.get("XFSX_REPAIR"))
    ap.add_argument("--xfsx-check", default=os.environ.get("XFSX_CHECK"))
    a = ap.parse_args(argv)
    build = os.environ.get("XFSX_BUILD") or os.path.join(SRC, "build")
    env = {"XFSX_REPAIR": a.xfsx_repair or os.path.join(build, "repair", "xfsx_repair"),
           "XFSX_CHECK": a.xfsx_check or os.path.join(build, "check", "xfsx_check")}
    mkfs = os.environ.get("XFSX_MKFS") or os.path.join(build, "mkfs", "xfsx_mkfs")
    n_tap = [0]
    failed = [0]

    def out(s):
        print("# " + s if tap else s, flush=True)

    def tap_line(ok, msg, todo=None):
        n_tap[0] += 1
        if not ok and not todo:
            failed[0] += 1
        if tap:
            print("%s %d - %s%s" % ("ok" if ok else "not ok", n_tap[0], msg,
                                    " # TODO " + todo if todo and not ok else ""), flush=True)
        else:
            print("%s %s%s" % ("ok    " if ok else ("TODO  " if todo else "WORSE "), msg,
                               " (known gap: %s)" % todo if todo and not ok else ""), flush=True)

    def finish(code):
        if tap:
            print("1..%d" % n_tap[0])
        return code

    for b in ("XFSX_REPAIR", "XFSX_CHECK"):
        if not os.access(env[b], os.X_OK):
            if tap:
                tap_line(True, "differential harness # SKIP %s not built (%s)" % (b.lower(), env[b]))
                return finish(0)
            print("diff-repair: %s %s is not executable" % (b, env[b]), file=sys.stderr)
            return 2
    why = can_mount()
    if why:
        if tap:
            tap_line(True, "differential harness # SKIP needs root, loop devices and XFS: " + why)
            return finish(0)
        print("diff-repair: cannot mount images here: " + why, file=sys.stderr)
        return 2
    types = a.types.split() + [c.split("/")[0] for c in a.case]
    own_work = not a.work
    work = a.work or tempfile.mkdtemp(prefix="xfsx-diff.", dir=os.environ.get("TMPDIR") or (
        "/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    os.makedirs(work, exist_ok=True)
    env["WORK"] = work
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    t0 = time.monotonic()
    results = []

    ex = None

    def stop(sig, frame):
        raise SystemExit(128 + sig)     # the finally below unmounts and cleans up
    signal.signal(signal.SIGTERM, stop)
    try:
        out("xfsx_repair %s, xfsx_check %s; seed %s; %s" % (
            env["XFSX_REPAIR"], env["XFSX_CHECK"], a.seed,
            "FULL" if a.full else "sample of %d%s" % (a.cases, "" if a.no_repro else " + repro cases")))
        out(rt_note())
        bases = {}
        want_repro = not a.no_repro and (not types or any(t.startswith("repro") for t in types))

        def wants(n):
            # a base's name or "name/..." picks it; a type name picks every base
            return not types or any(t == n or t.startswith(n + "/") or not (
                t.startswith("repro") or t.split("/")[0] in BASES) for t in types)
        names = [n for n in BASES if wants(n)]
        for n in names:
            try:
                bases[n] = age_base(n, work)
                tap_line(True, "base %s: %s" % (n, bases[n].note))
            except RuntimeError as e:
                tap_line(False, str(e))
        if want_repro:
            try:
                bases["repro"] = repro_base(work, mkfs)
                repro_facts(bases["repro"])
                tap_line(True, "base repro: %s; lowest free inode %s; %s" % (
                    bases["repro"].note, bases["repro"].free_ino, bases["repro"].stretch))
            except (RuntimeError, AttributeError) as e:
                tap_line(False, "base repro: %s" % e)
                bases.pop("repro", None)
        for b in list(bases.values()):
            rc1 = run(["xfs_repair", "-n", b.img])[0]
            rc2 = run([env["XFSX_CHECK"], "-q", b.img])[0]
            ok = rc1 == 0 and rc2 == 0
            tap_line(ok, "base %s clean before damage (xfs_repair -n exit %d, xfsx_check exit %d)"
                     % (b.name, rc1, rc2))
            if not ok:
                del bases[b.name]
        pool = []
        for n in names:
            if n in bases:
                pool += [c for c in fuzz_cases(bases[n], a.full, a.fields) if type_match(c, types)]
        for c in [c for c in pool if c.steps is None]:
            tap_line(False, "%s: %s" % (c.id, "xfs_db printed no fields"))
        pool = [c for c in pool if c.steps is not None]
        chosen = pool if a.full or a.case else sample(pool, a.cases, a.seed)
        if "repro" in bases:
            chosen += [c for c in repro_cases(bases["repro"])
                       if not types or type_match(c, types) or "repro" in types]
        if a.case:
            chosen = [c for c in chosen if c.id in a.case]
        out("%d cases chosen from a pool of %d (+ repro)" % (len(chosen), len(pool)))
        if a.list:
            for c in chosen:
                print(c.id)
            return finish(0)
        slots = list(range(a.jobs))
        lock = threading.Lock()

        def run_slot(c):
            with lock:
                k = slots.pop()
            try:
                return run_case(c, bases, k, env, a.keep)
            except Exception as e:      # the harness's own failure: reported, not hidden
                return {"id": c.id, "base": c.base, "type": c.stype, "what": c.what, "secs": 0,
                        "error": "%s: %s" % (type(e).__name__, e)}
            finally:
                with lock:
                    slots.append(k)

        ex = concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs)
        for r in ex.map(run_slot, chosen):
            results.append(r)
            if r.get("error"):
                tap_line(False, "%s: harness error: %s" % (r["id"], r["error"]))
                continue
            if not r["seen"]:
                if r["type"] == "repro":
                    tap_line(False, "%s: neither checker reports the damage (not applied?)"
                             % r["id"], gap_of(r))
                continue
            ms = r["measures"]
            if r["worse"]:
                tap_line(False, "%s: xfsx worse on %s" % (r["id"], "; ".join(
                    "%s: xfsx %s vs xfs_repair %s" % (m, ms[m]["xfsx"], ms[m]["xfs_repair"])
                    for m in r["worse"])), gap_of(r))
            else:
                if gap_of(r):
                    out("known gap %s passes now: take it out of KNOWN_GAPS" % r["id"])
                better = [m for m in MEASURES if ms[m]["verdict"] == "better"]
                tap_line(True, "%s: xfsx >= xfs_repair%s (xfsx exit %s, %d fixed, left %s;"
                         " xfs_repair exit %s; %.1f s)" % (
                             r["id"], " (better: %s)" % ", ".join(better) if better else "",
                             r["xfsx_rc"], r["xfsx_fixed"], r["xfsx_summary"]["left"],
                             r["xfs_repair_rc"], r["secs"]))
        tot = table(results, out)
        out("%d cases run (%d reported by a checker), %.0f s, %d jobs" % (
            len(results), tot["cases"], time.monotonic() - t0, a.jobs))
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"xfsx_repair": env["XFSX_REPAIR"], "seed": a.seed, "full": a.full,
                           "bases": {n: b.note for n, b in bases.items()},
                           "cases": results}, f, indent=1, default=str)
        if a.keep and os.path.isdir(a.keep):
            if os.listdir(a.keep):
                out("cases where xfsx is worse: damaged images and records in %s" % a.keep)
            else:
                os.rmdir(a.keep)
        return finish(1 if failed[0] else 0)
    finally:
        if ex:      # stopped early: the running cases end, the queued ones are dropped
            ex.shutdown(wait=True, cancel_futures=True)
        umount_all(work)
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(tap="--tap" in sys.argv[1:], argv=[a for a in sys.argv[1:] if a != "--tap"]))
