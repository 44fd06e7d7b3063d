#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Repair damage corpus driver (run by corpus.sh, which builds the images).

Usage: corpus.py BASE_IMG INOS_FILE LABEL WORKDIR

Environment: XFSX_CHECK, XFSX_REPAIR (binaries), XFSX_REPAIR_CORPUS_FIELDS
(fields per block, default 3), XFSX_REPAIR_CORPUS_TYPES (space-separated
structure types to run, e.g. "agf bnobt.leaf"), XFSX_REPAIR_CORPUS_JOBS
(cases in parallel, default 2).

For every structure that repair part 1 owns (superblock primary and
secondary, AGF, AGI, AGFL, the six AG btrees' roots, nodes and leaves,
inode cores, extent records, bmbt blocks) it navigates xfs_db to one block
on the base image, takes the block's fields from xfs_db's print (the field
discovery and sampling of tests/check/corpus.py, imported), and makes one
damaged copy per (field, verb): `fuzz -d` (CRC kept valid) and `fuzz -c`
(CRC stale); plus the block's magic zeroed.  A case counts when Debian
`xfs_repair -n` or xfsx_check reports it.  Then ONE xfsx_repair run, and:
xfs_repair -n exits 0, xfsx_check exits 0, a second xfsx_repair exits 0
and changes nothing (sha256), the kernel mounts it (nouuid), creates,
writes and removes files, unmounts, and xfs_repair -n is still clean.
Debian xfs_repair runs once on a copy of the same case, judged by its own
-n.  A refusal (exit 8, nothing written) counts as "refused", not a
failure, only where one xfs_repair run cannot fix the case either.
For the directory, xattr and symlink types, the regular files the kernel
reads after our run, as (inode, md5), must include every one xfs_repair
keeps; for the xattr types also the xattrs, as (inode, name, value md5).
Prints TAP, one line per case and one per structure type.
"""
import concurrent.futures
import importlib.util
import hashlib
import os
import stat
import queue
import re
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "check_corpus", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check", "corpus.py"))
check_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_corpus)
sh, db, fields_of, VERBS_D = check_corpus.sh, check_corpus.db, check_corpus.fields_of, check_corpus.VERBS_D
_spec = importlib.util.spec_from_file_location(
    "xattrs_kept", os.path.join(os.path.dirname(os.path.abspath(__file__)), "xattrs_kept.py"))
xattrs_kept = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(xattrs_kept)

# Types whose failures are reported as TAP TODO while repair is being
# written: the lead shrinks this set as repair phases land.  A type not
# listed here that fails makes the suite red.
KNOWN_GAPS = {
}
GAP_REASON = "xfsx_repair incomplete (corpus.py KNOWN_GAPS)"
NAMES_TYPES = {"dir", "attr", "symlink"}


def gap(label, cls):
    """The TODO reason for a failure of this type on this image, or None."""
    why = KNOWN_GAPS.get("%s %s" % (label, cls), KNOWN_GAPS.get(cls))
    return GAP_REASON + ": " + why if why else None

AGED_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check", "aged_lib.sh")
MAGIC = {"sb": "magicnum", "agf": "magicnum", "agi": "magicnum", "agfl": "magicnum"}


def sha(path):
    """sha256 of the image's content, holes read as zeroes
    (tests/check/aged_lib.sh imgsum: independent of the host's extents)"""
    return sh(["bash", "-c", '. "$0"; imgsum "$1"', AGED_LIB, path]).stdout.decode().strip()


def files_of(img, mnt):
    """({(inode, md5)} of the regular files the kernel can read on img
    (mounted read-only), {(inode, xattr name, value md5)} of the xattrs it
    reads), or None when it does not mount"""
    os.makedirs(mnt, exist_ok=True)
    if sh(["mount", "-t", "xfs", "-o", "ro,nouuid", img, mnt]).returncode != 0:
        return None
    out = set()
    xattrs = set()
    try:
        for d, _, names in os.walk(mnt):
            for nm in names:
                p = os.path.join(d, nm)
                try:
                    st = os.lstat(p)
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    with open(p, "rb") as f:
                        out.add((st.st_ino, hashlib.md5(f.read()).hexdigest()))
                except OSError:
                    pass	# unreadable after repair: not kept
        xattrs = xattrs_kept.xattrs_of(mnt)
    finally:
        sh(["umount", mnt])
    return out, xattrs


def can_mount():
    if os.geteuid() != 0:
        return "not root"
    if "xfs" not in open("/proc/filesystems").read():
        return "no xfs in /proc/filesystems"
    if sh(["losetup", "-f"]).returncode != 0:
        return "no free loop device"
    return None


def mount_cycle(img, mnt):
    """the kernel mounts img, creates, writes and removes files, unmounts:
    None when all worked, else what failed"""
    os.makedirs(mnt, exist_ok=True)
    r = sh(["mount", "-t", "xfs", "-o", "nouuid", img, mnt])
    if r.returncode != 0:
        out = r.stdout.decode(errors="replace").strip().splitlines()
        return "mount failed: " + (out[-1] if out else "exit %d" % r.returncode)
    err = None
    try:
        d = os.path.join(mnt, "repair-probe")
        os.mkdir(d)
        for k in range(40):
            with open(os.path.join(d, "f%d" % k), "wb") as f:
                f.write(os.urandom(512 + 3000 * k))
        subprocess.run(["sync", "-f", mnt], check=True)
        for k in range(40):
            os.unlink(os.path.join(d, "f%d" % k))
        os.rmdir(d)
    except OSError as e:
        err = "create/write/remove failed: %s" % e
    r = sh(["umount", mnt])
    if r.returncode != 0:
        sh(["umount", "-l", mnt])
        err = err or "umount failed"
    return err


def btree_level(base, nav):
    m = re.search(r"^level = (\d+)", db(base, nav + ["print level"]), re.M)
    return int(m.group(1)) if m else 0


def targets_for(base, inos, has_rmap):
    """(type, xfs_db navigation, field filter) for every block of the
    corpus: btree roots, and where a root is a node, the leaf reached by
    following first pointers; inodes split by field (core, extent records,
    the in-inode bmbt root)"""
    i = lambda p: inos.get(p, "")
    t = [("sb.primary", ["sb 0"], None), ("sb.secondary", ["sb 1"], None),
         ("agf", ["agf 0"], None), ("agi", ["agi 1"], None), ("agfl", ["agfl 0"], None)]
    trees = [("bnobt", ["agf 0"], "bnoroot"), ("cntbt", ["agf 1"], "cntroot"),
             ("inobt", ["agi 0"], "root"), ("finobt", ["agi 1"], "free_root")]
    if has_rmap:
        trees += [("rmapbt", ["agf 0"], "rmaproot"), ("refcntbt", ["agf 0"], "refcntroot")]
    for name, hdr, ptr in trees:
        nav = hdr + ["addr " + ptr]
        lv = btree_level(base, nav)
        if lv > 0:
            t.append((name + ".node", nav, None))
            t.append((name + ".leaf", nav + ["addr ptrs[1]"] * lv, None))
        else:
            t.append((name + ".leaf", nav, None))
    core = re.compile(r"^core\.(?!nlinkv[12] |onlink )")
    if i("data/extents"):
        t.append(("inode.core", ["inode " + i("data/extents")], core))
        t.append(("inode.extents", ["inode " + i("data/extents")], re.compile(r"^u3\.bmx")))
    if i("data/sparse0"):
        t.append(("bmbt.root", ["inode " + i("data/sparse0")], re.compile(r"^u3\.bmbt")))
        t.append(("bmbt.block", ["inode " + i("data/sparse0"), "addr u3.bmbt.ptrs[1]"], None))
    # the namespace: directories in every format, xattrs,
    # symlinks, and the inode fields that drive them
    g = db(base, ["sb 0", "p blocksize"])
    bsize = int(re.search(r"blocksize = (\d+)", g).group(1))
    leaf_blk, free_blk = (1 << 35) // bsize, (1 << 36) // bsize
    names = [("dir.sf", "dirs/short0", [], re.compile(r"^u3\.sfdir3")),
             ("dir.nlink", "dirs/block0", [], re.compile(r"^core\.(nlinkv2|size) ")),
             ("dir.block", "dirs/block0", ["dblock 0"], None),
             ("dir.data", "dirs/leaf0", ["dblock 0"], None),
             ("dir.leaf", "dirs/leaf0", ["dblock %d" % leaf_blk], None),
             ("dir.node", "dirs/node0", ["dblock %d" % leaf_blk], None),
             ("dir.free", "dirs/node0", ["dblock %d" % free_blk], None),
             ("attr.sf", "xattrs/short", [], re.compile(r"^a\.sfattr")),
             ("attr.leaf", "xattrs/leaf", ["ablock 0"], None),
             ("attr.node", "xattrs/node", ["ablock 0"], None),
             ("attr.remote", "xattrs/remote2", ["ablock 1"], None),
             ("symlink.inline", "links/short1", [], re.compile(r"^u3\.symlink|^core\.size ")),
             ("symlink.remote", "links/long9", ["dblock 0"], None)]
    for stype, path, nav, filt in names:
        if i(path):
            t.append((stype, ["inode " + i(path)] + nav, filt))
    return t


def main():
    base, inos_file, label, work = sys.argv[1:5]
    xfsx_check = os.environ["XFSX_CHECK"]
    xfsx_repair = os.environ["XFSX_REPAIR"]
    cap = int(os.environ.get("XFSX_REPAIR_CORPUS_FIELDS", "3"))
    # the namespace types sample fewer fields by default: the
    # suite stays well inside CI's time; XFSX_REPAIR_CORPUS_NAMES_FIELDS=24
    # runs them like the rest
    names_cap = int(os.environ.get("XFSX_REPAIR_CORPUS_NAMES_FIELDS", str(min(cap, 1))))
    jobs = int(os.environ.get("XFSX_REPAIR_CORPUS_JOBS", "2"))
    only = set(os.environ.get("XFSX_REPAIR_CORPUS_TYPES", "").split())
    inos = dict(line.split() for line in open(inos_file) if len(line.split()) == 2)
    has_rmap = "RMAPBT" in db(base, ["version"])
    no_mount = can_mount()

    cases = []
    bad_targets = []
    for ti, (stype, nav, keep) in enumerate(targets_for(base, inos, has_rmap)):
        if only and stype not in only:
            continue
        text = db(base, nav + ["print"])
        if keep:
            text = "\n".join(l for l in text.splitlines() if keep.match(l))
        flds = fields_of(text, names_cap if stype.split(".")[0] in NAMES_TYPES else cap)
        if not flds:
            bad_targets.append("%s: xfs_db printed no fields at %s" % (stype, " / ".join(nav)))
        for fi, f in enumerate(flds):
            cases.append((stype, nav, "-d", f, VERBS_D[(fi + ti) % len(VERBS_D)]))
            cases.append((stype, nav, "-c", f, "random"))
        if not stype.startswith(("inode", "bmbt.root")):
            magic = MAGIC.get(stype.split(".")[0], "magic")
            cases.append((stype, nav, "-d", magic, "zeroes"))

    def run(case, slot):
        stype, nav, flag, field, verb = case
        img = os.path.join(work, "case%d.img" % slot)
        deb = os.path.join(work, "deb%d.img" % slot)
        mnt = os.path.join(work, "mnt%d" % slot)
        t0 = time.monotonic()
        res = {"seen": False, "fail": [], "refused": False, "deb": None}
        sh(["cp", "--sparse=always", base, img])
        db(img, nav + ["fuzz %s %s %s" % (flag, field, verb)], expert=True)
        rrc = sh(["xfs_repair", "-n", img]).returncode
        xrc = sh([xfsx_check, "-q", img]).returncode
        res["found"] = (rrc, xrc)
        if rrc == 0 and xrc == 0:
            os.unlink(img)
            res["secs"] = time.monotonic() - t0
            return res
        res["seen"] = True
        sh(["cp", "--sparse=always", img, deb])
        before = sha(img)
        r1 = sh([xfsx_repair, img])
        fail = res["fail"]
        if r1.returncode == 8 and sha(img) == before:
            res["refused"] = True
        elif r1.returncode not in (0, 1):
            fail.append("xfsx_repair exit %d" % r1.returncode)
            fail += ["  " + l for l in r1.stdout.decode(errors="replace").splitlines()[-3:]]
        if not res["refused"]:
            n1 = sh(["xfs_repair", "-n", img]).returncode
            if n1 != 0:
                fail.append("xfs_repair -n exit %d after one run" % n1)
            c1 = sh([xfsx_check, img])
            if c1.returncode != 0:
                fail.append("xfsx_check exit %d after one run" % c1.returncode)
                fail += ["  " + l for l in c1.stdout.decode(errors="replace").splitlines()[:3]]
            s1 = sha(img)
            r2 = sh([xfsx_repair, img]).returncode
            if r2 != 0:
                fail.append("second xfsx_repair exit %d" % r2)
            if sha(img) != s1:
                fail.append("second xfsx_repair changed the image")
            if no_mount is None:
                # the kernel's verdict matters whenever xfs_repair -n calls it clean
                if n1 == 0 and r1.returncode in (0, 1):
                    err = mount_cycle(img, mnt)
                    if err:
                        fail.append("kernel: " + err)
                    else:
                        n2 = sh(["xfs_repair", "-n", img]).returncode
                        if n2 != 0:
                            fail.append("xfs_repair -n exit %d after the mount cycle" % n2)
                else:
                    fail.append("(mount cycle not tried: xfs_repair -n not clean)")
        # Debian xfs_repair, one run on a copy, judged by its own -n
        d1 = sh(["xfs_repair", deb]).returncode
        res["deb"] = sh(["xfs_repair", "-n", deb]).returncode == 0
        res["deb_rc"] = d1
        # the namespace types: no file xfs_repair keeps may be lost
        if (stype.split(".")[0] in NAMES_TYPES and no_mount is None and not res["refused"]
                and not fail):
            ours, theirs = files_of(img, mnt), files_of(deb, mnt)
            if ours is None or theirs is None:
                fail.append("files kept: a read-only mount failed")
            else:
                (ours, ours_xa), (theirs, theirs_xa) = ours, theirs
                res["kept"] = (len(ours), len(theirs))
                lost = theirs - ours
                if lost:
                    fail.append("files kept: xfsx_repair %d, xfs_repair %d; %d that xfs_repair "
                                "keeps are lost" % (len(ours), len(theirs), len(lost)))
                # the xattr types: no xattr (inode, name, value) xfs_repair keeps may be lost
                if stype.startswith("attr."):
                    res["xkept"] = (len(ours_xa), len(theirs_xa))
                    xlost = theirs_xa - ours_xa
                    if xlost:
                        fail.append("xattrs kept: xfsx_repair %d, xfs_repair %d; %d that "
                                    "xfs_repair keeps are lost, e.g. %s" % (
                                        len(ours_xa), len(theirs_xa), len(xlost),
                                        sorted(xlost)[0][:2]))
        if res["refused"] and not res["deb"]:
            pass   # nobody fixes it in one run: refusing is the honest answer
        elif res["refused"]:
            res["refused"] = False
            fail.append("xfsx_repair refused (exit 8) what one xfs_repair run fixes")
        os.unlink(img)
        os.unlink(deb)
        res["secs"] = time.monotonic() - t0
        return res

    slots = queue.Queue()
    for k in range(jobs):
        slots.put(k)

    def run_slot(c):
        k = slots.get()
        try:
            return run(c, k)
        finally:
            slots.put(k)

    n = 0
    failed = 0
    stats = {}
    order = []

    def tap(ok, msg, todo=None):
        nonlocal n, failed
        n += 1
        if not ok and todo is None:
            failed += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", n, msg,
                                " # TODO " + todo if todo and not ok else ""), flush=True)

    for b in bad_targets:
        tap(False, b)
    if no_mount:
        print("# kernel mount cycle skipped: %s" % no_mount)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for case, res in zip(cases, ex.map(run_slot, cases)):
            stype, nav, flag, field, verb = case
            cls = stype
            if cls not in stats:
                stats[cls] = {"cases": 0, "fixed": 0, "failed": 0, "refused": 0, "unseen": 0,
                              "dfixed": 0, "dfailed": 0, "secs": 0.0, "kept": None,
                              "xkept": None}
                order.append(cls)
            st = stats[cls]
            st["secs"] += res["secs"]
            if not res["seen"]:
                st["unseen"] += 1
                continue
            st["cases"] += 1
            st["dfixed" if res["deb"] else "dfailed"] += 1
            if "kept" in res:
                k = st["kept"] or (0, 0)
                st["kept"] = (k[0] + res["kept"][0], k[1] + res["kept"][1])
            if "xkept" in res:
                k = st["xkept"] or (0, 0)
                st["xkept"] = (k[0] + res["xkept"][0], k[1] + res["xkept"][1])
            name = "%s %s [%s]: fuzz %s %s %s (xfs_repair -n %d, xfsx_check %d)" % (
                label, cls, " / ".join(nav), flag, field, verb, res["found"][0], res["found"][1])
            deb = "xfs_repair one run: %s" % ("fixed" if res["deb"] else "NOT fixed (exit %d)" % res["deb_rc"])
            if res["refused"]:
                st["refused"] += 1
                tap(True, "%s: refused, image unchanged; %s" % (name, deb))
            elif res["fail"]:
                st["failed"] += 1
                tap(False, "%s: %s; %s" % (name, res["fail"][0], deb),
                    gap(label, cls))
                for l in res["fail"][1:6]:
                    print("#   " + l)
            else:
                st["fixed"] += 1
                kept = (", files kept: xfsx_repair %d, xfs_repair %d" % res["kept"]
                        if "kept" in res else "")
                if "xkept" in res:
                    kept += ", xattrs kept: xfsx_repair %d, xfs_repair %d" % res["xkept"]
                tap(True, "%s: fixed in one run%s%s; %s" % (
                    name, "" if no_mount is None else " (mount cycle skipped: %s)" % no_mount,
                    kept, deb))
    print("# %s, per structure type: cases reported by xfs_repair -n or xfsx_check; xfsx_repair"
          " fixed/failed/refused; Debian xfs_repair (one run) fixed/failed; cases nobody"
          " reported; fields per block: %d, verbs: -d rotating over %s, -c random, magic zeroed"
          % (label, cap, "/".join(VERBS_D)))
    for cls in order:
        st = stats[cls]
        line = ("%s %s: %d cases, xfsx_repair fixed %d, failed %d, refused %d; xfs_repair fixed %d,"
                " failed %d; unreported %d (%.0f s)" % (
                    label, cls, st["cases"], st["fixed"], st["failed"], st["refused"],
                    st["dfixed"], st["dfailed"], st["unseen"], st["secs"]))
        if st["kept"]:
            line += "; files kept over its cases: xfsx_repair %d, xfs_repair %d" % st["kept"]
        if st["xkept"]:
            line += "; xattrs kept over its cases: xfsx_repair %d, xfs_repair %d" % st["xkept"]
        tap(st["failed"] == 0, line, gap(label, cls))
    print("# %s: %d damage cases" % (label, len(cases)))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
