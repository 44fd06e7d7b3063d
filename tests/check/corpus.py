#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Damage corpus driver (run by corpus.sh, which builds the aged base image).

Usage: corpus.py BASE_IMG INOS_FILE XFSX_CHECK WORKDIR

For every structure type, navigates xfs_db to one block of that type on
the base image, lists the block's fields from xfs_db's own `print`, and
makes one damaged copy per (field, verb): `fuzz -d FIELD VERB` (CRC kept
valid: the field rules must catch it) and `fuzz -c FIELD random` (CRC left
stale).  Each copy is judged by Debian's `xfs_repair -n` (exit != 0: found)
and by xfsx_check (exit 4: found; exit 8 accepted for the superblock, which
may now claim an unsupported format).  Rule: what xfs_repair -n finds,
xfsx_check must find.  Prints TAP: per-case failures, one summary line per
structure type.  Types (or field classes) whose checks are not on main yet
are summarised as `not ok ... # TODO`.
"""
import concurrent.futures
import os
import queue
import re
import subprocess
import sys
import time

VERBS_D = ["zeroes", "ones", "firstbit", "middlebit", "lastbit", "add", "sub"]

# What the tree verifies today.  A type here that misses a case xfs_repair
# finds is a failure; any other type reports its misses as TODO.  Classes
# split a type where one part is checked and another waits for a phase
# still being written (the reason says which).
VERIFIED = {"sb", "agf", "agi", "agfl", "bnobt", "cntbt", "inobt", "finobt",
            "rmapbt.block", "refcntbt.block", "inode.core",
            "dir.block", "dir.node", "dir.free",     # directories: 8ab9b26
            "attr.leaf", "attr.node", "attr.remote", "symlink",   # xattrs, symlinks: eff4eaf
            # record/fork/link classes: 0 misses over 4 runs of 663 cases (all fields)
            "rmapbt.rec", "refcntbt.rec", "inode.fork", "inode.link", "bmbt",
            "dir.data", "dir.leaf"}
TODO_REASON = {}

# inode fields that only a fork, directory or link-count check can judge
INODE_LINK = re.compile(r"^core\.(nlinkv[12]|onlink)$")
INODE_FORK = re.compile(r"^(core\.(nblocks|size|nextents|naextents|big_nextents|big_anextents|"
                        r"format|aformat|forkoff)$|u3\.|u\.|a\.)")


def sh(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def db(img, cmds, expert=False):
    a = ["xfs_db"] + (["-x"] if expert else ["-r"])
    for c in cmds:
        a += ["-c", c]
    return sh(a + [img]).stdout.decode(errors="replace")


def fields_of(text, cap):
    """Field paths from xfs_db print output: scalars as printed, arrays as
    their first and last element (with sub-fields), repeated shapes (dir
    entries) twice; crc fields left out (-d recomputes them anyway)."""
    out = []
    seen = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+) = (.*)$", line)
        if not m:
            continue
        name, val = m.group(1), m.group(2)
        if name.endswith("crc"):
            continue
        am = re.match(r"^(.*)\[(\d+)-(\d+)\]$", name)
        if am:
            base, lo, hi = am.group(1), int(am.group(2)), int(am.group(3))
            sub = re.match(r"^\[([a-z_0-9,]+)\]", val)
            for idx in sorted({lo, hi}):
                if sub:
                    out += ["%s[%d].%s" % (base, idx, s) for s in sub.group(1).split(",")]
                else:
                    out.append("%s[%d]" % (base, idx))
            continue
        shape = re.sub(r"\[\d+\]", "[]", name)
        seen[shape] = seen.get(shape, 0) + 1
        if seen[shape] <= 2:
            out.append(name)
    if len(out) > cap:
        # keep the headers (the first fields) and an even sample of the rest
        head = out[:cap // 2]
        rest = out[cap // 2:]
        step = len(rest) / (cap - len(head))
        out = head + [rest[int(i * step)] for i in range(cap - len(head))]
    return out


def classify(stype, field):
    if stype in ("rmapbt", "refcntbt"):
        # numrecs decides which records exist: one record less is only
        # seen against the owners the inode scan observes
        return stype + (".rec" if field.startswith("recs") or field == "numrecs" else ".block")
    if stype == "inode":
        if INODE_LINK.match(field):
            return "inode.link"
        if INODE_FORK.match(field):
            return "inode.fork"
        return "inode.core"
    return stype


def main():
    base, inos_file, xfsx, work = sys.argv[1:5]
    cap = int(os.environ.get("XFSX_CORPUS_FIELDS", "24"))
    jobs = int(os.environ.get("XFSX_CORPUS_JOBS", "2"))
    inos = {}
    for line in open(inos_file):
        p, i = line.split()
        inos[p] = i
    g = db(base, ["sb 0", "p blocksize dirblklog"])
    bsize = int(re.search(r"blocksize = (\d+)", g).group(1))
    dirblk = bsize << int(re.search(r"dirblklog = (\d+)", g).group(1))
    leaf_blk = (1 << 35) // bsize
    free_blk = (1 << 36) // bsize
    i = lambda p: inos.get(p, "")
    targets = [
        ("sb", ["sb 0"]), ("sb", ["sb 1"]),
        ("agf", ["agf 0"]), ("agi", ["agi 1"]), ("agfl", ["agfl 0"]),
        ("bnobt", ["agf 0", "addr bnoroot"]), ("cntbt", ["agf 1", "addr cntroot"]),
        ("inobt", ["agi 0", "addr root"]), ("finobt", ["agi 1", "addr free_root"]),
        ("rmapbt", ["agf 0", "addr rmaproot"]), ("refcntbt", ["agf 0", "addr refcntroot"]),
        ("inode", ["inode " + i("data/extents")]), ("inode", ["inode " + i("dirs/short0")]),
        ("bmbt", ["inode " + i("data/sparse0"), "addr u3.bmbt.ptrs[1]"]),
        ("dir.block", ["inode " + i("dirs/block0"), "dblock 0"]),
        ("dir.data", ["inode " + i("dirs/leaf0"), "dblock 0"]),
        ("dir.leaf", ["inode " + i("dirs/leaf0"), "dblock %d" % leaf_blk]),
        ("dir.node", ["inode " + i("dirs/node0"), "dblock %d" % leaf_blk]),
        ("dir.free", ["inode " + i("dirs/node0"), "dblock %d" % free_blk]),
        ("attr.leaf", ["inode " + i("xattrs/leaf"), "ablock 0"]),
        ("attr.node", ["inode " + i("xattrs/node"), "ablock 0"]),
        ("attr.remote", ["inode " + i("xattrs/remote2"), "ablock 1"]),
        ("symlink", ["inode " + i("links/long9"), "dblock 0"]),
    ]
    stats = {}
    order = []
    n = 0
    failed = 0
    total_cases = 0

    def tap(ok, msg):
        nonlocal n, failed
        n += 1
        if not ok:
            failed += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", n, msg), flush=True)

    only = set(os.environ.get("XFSX_CORPUS_TYPES", "").split())
    for ti, (stype, nav) in enumerate(targets):
        if only and stype not in only:
            continue
        if any(c.strip() in ("inode", "inode ") for c in nav):
            tap(False, "%s: the aged image lacks the object to navigate to" % stype)
            continue
        text = db(base, nav + ["print"])
        flds = fields_of(text, cap)
        if not flds:
            tap(False, "%s: xfs_db printed no fields at %s" % (stype, " / ".join(nav)))
            continue
        cases = []
        for fi, f in enumerate(flds):
            cases += [("-d", f, "random"), ("-d", f, VERBS_D[(fi + ti) % len(VERBS_D)]),
                      ("-c", f, "random")]

        def run(case, slot):
            flag, field, verb = case
            img = os.path.join(work, "case%d.img" % slot)
            t0 = time.monotonic()
            sh(["cp", "--sparse=always", "--reflink=auto", base, img])
            db(img, nav + ["fuzz %s %s %s" % (flag, field, verb)], expert=True)
            rrc = sh(["xfs_repair", "-n", img]).returncode
            xr = sh([xfsx, "-q", img])
            os.unlink(img)
            return rrc, xr.returncode, xr.stdout.decode(errors="replace"), time.monotonic() - t0

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            # one image file per worker thread: slots are handed out by a queue
            slots = queue.Queue()
            for k in range(jobs):
                slots.put(k)

            def run_slot(c):
                k = slots.get()
                try:
                    return run(c, k)
                finally:
                    slots.put(k)
            results = list(ex.map(run_slot, cases))
        for (flag, field, verb), (rrc, xrc, xout, secs) in zip(cases, results):
            cls = classify(stype, field)
            st = stats.setdefault(cls, {"cases": 0, "repair": 0, "xfsx": 0, "missed": 0,
                                        "xonly": 0, "misses": [], "secs": 0.0})
            if cls not in order:
                order.append(cls)
            st["cases"] += 1
            st["secs"] += secs
            total_cases += 1
            rfound = rrc != 0
            xfound = xrc == 4 or (xrc == 8 and stype == "sb")
            if rfound:
                st["repair"] += 1
            if xfound:
                st["xfsx"] += 1
            name = "%s %s: fuzz %s %s %s" % (stype, " / ".join(nav), flag, field, verb)
            if xrc not in (0, 4, 8) or (xrc == 8 and stype != "sb"):
                tap(False, "%s: xfsx_check exit %d (crash or operational error)" % (name, xrc))
                for l in xout.splitlines()[-3:]:
                    print("#   " + l)
                continue
            if rfound and not xfound:
                st["missed"] += 1
                st["misses"].append("%s %s %s" % (flag, field, verb))
                if cls in VERIFIED:
                    tap(False, "%s: xfs_repair -n finds it (exit %d), xfsx_check does not"
                        % (name, rrc))
            elif xfound and not rfound:
                st["xonly"] += 1
    print("# per structure (class): cases, xfs_repair -n found, xfsx_check found, missed,"
          " xfsx only; fields per block: up to %d (headers first, then an even sample;"
          " entries of repeated shape twice), verbs per field: -d random, -d one of %s"
          " (rotating), -c random" % (cap, "/".join(VERBS_D)))
    for cls in order:
        st = stats[cls]
        line = "%s: %d cases, xfs_repair -n found %d, xfsx_check found %d, missed %d, xfsx only %d" % (
            cls, st["cases"], st["repair"], st["xfsx"], st["missed"], st["xonly"])
        line += " (%.0f s)" % st["secs"]
        if cls in VERIFIED:
            tap(st["missed"] == 0, line)
        elif st["missed"]:
            print("not ok %d - %s # TODO %s" % (n + 1, line, TODO_REASON.get(cls, "not verified yet")))
            n += 1
            for m in st["misses"][:6]:
                print("#   missed: %s" % m)
        else:
            tap(True, line + " (not claimed verified yet)")
    print("# total damage cases: %d" % total_cases)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
