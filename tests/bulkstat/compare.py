#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare bulkstat listings: xfs_io's, and xfsx_bulkstat's JSON lines and CSV.

usage:
  compare.py xfsio KERNEL.txt OURS.jsonl   every inode and every field xfs_io prints
  compare.py same A.jsonl B.jsonl          identical records, identical order
  compare.py csv A.jsonl B.csv             CSV rows carry the JSON lines' values
  compare.py sorted A.jsonl                inode numbers strictly ascend

Differences are printed as TAP diagnostics ("# ..."); exit 0 when all agree.
The last line printed is "# compared N inodes, M fields, K mismatches".
"""
import csv
import json
import re
import sys

# xfs_io field name -> our field name (None: not compared)
XFS_IO = {
    "ino": "ino", "size": "size", "blocks": "blocks", "xflags": "xflags",
    "atime": "atime", "ctime": "ctime", "mtime": "mtime", "btime": "btime",
    "gen": "gen", "uid": "uid", "gid": "gid", "projectid": "projectid",
    "blksize": "blksize", "rdev": "rdev", "cowextsize_blks": "cowextsize_blks",
    "extsize_blks": "extsize_blks", "nlink": "nlink", "extents": None,  # 0: xfs_io asks for the 64-bit counter
    "aextents": "aextents", "version": None, "forkoff": "forkoff", "sick": None,
    "checked": None, "mode": "mode", "extents64": "extents",
}


def parse_xfsio(path):
    recs, cur = [], None
    for line in open(path):
        m = re.match(r"^\s*bs_(\w+) = (\S+)", line)
        if not m:
            continue
        k, v = m.group(1), m.group(2)
        if k == "ino":
            cur = {}
            recs.append(cur)
        if cur is None or k not in XFS_IO:
            raise SystemExit("# unexpected xfs_io line: " + line.rstrip())
        name = XFS_IO[k]
        if name is None:
            continue
        if name in ("atime", "ctime", "mtime", "btime"):
            sec, nsec = v.split(".")
            sec = int(sec)
            if sec >= 1 << 63:  # xfs_io prints the signed seconds as unsigned
                sec -= 1 << 64
            cur[name] = sec
            cur[name + "_nsec"] = int(nsec)
        else:
            cur[name] = int(v, 0) if not (name == "mode") else int(v, 8)
    return recs


def load_jsonl(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def main():
    mode = sys.argv[1]
    bad = fields = 0
    if mode == "xfsio":
        kern = parse_xfsio(sys.argv[2])
        ours = load_jsonl(sys.argv[3])
        kmap = {r["ino"]: r for r in kern}
        omap = {r["ino"]: r for r in ours}
        for ino in sorted(set(kmap) - set(omap)):
            print("# inode %d: the kernel lists it, xfsx does not" % ino)
            bad += 1
        for ino in sorted(set(omap) - set(kmap)):
            print("# inode %d: xfsx lists it, the kernel does not" % ino)
            bad += 1
        for ino in sorted(set(kmap) & set(omap)):
            k, o = kmap[ino], omap[ino]
            for f, v in k.items():
                if f not in o:
                    continue  # not selected in our listing
                fields += 1
                if o[f] != v:
                    bad += 1
                    if bad <= 50:
                        print("# inode %d field %s: kernel %r, xfsx %r" % (ino, f, v, o[f]))
        n = len(kmap)
    elif mode == "same":
        a, b = load_jsonl(sys.argv[2]), load_jsonl(sys.argv[3])
        n = len(a)
        if len(a) != len(b):
            print("# %d records vs %d" % (len(a), len(b)))
            bad += 1
        for x, y in zip(a, b):
            fields += len(x)
            if x != y:
                bad += 1
                if bad <= 20:
                    d = [f for f in x if x.get(f) != y.get(f)]
                    print("# inode %s differs in %s: %s / %s" % (x.get("ino"), ",".join(d),
                          [x.get(f) for f in d], [y.get(f) for f in d]))
    elif mode == "csv":
        a = load_jsonl(sys.argv[2])
        rows = list(csv.DictReader(open(sys.argv[3])))
        n = len(a)
        if len(a) != len(rows):
            print("# %d JSON lines vs %d CSV rows" % (len(a), len(rows)))
            bad += 1
        for x, y in zip(a, rows):
            if list(x.keys()) != list(y.keys()):
                print("# column order differs: %s / %s" % (list(x.keys()), list(y.keys())))
                bad += 1
                break
            for f in x:
                fields += 1
                if str(x[f]) != y[f]:
                    bad += 1
                    if bad <= 20:
                        print("# inode %s field %s: json %s csv %s" % (x["ino"], f, x[f], y[f]))
    elif mode == "sorted":
        a = load_jsonl(sys.argv[2])
        n = len(a)
        for x, y in zip(a, a[1:]):
            fields += 1
            if y["ino"] <= x["ino"]:
                bad += 1
                print("# inode %d follows %d" % (y["ino"], x["ino"]))
    else:
        raise SystemExit("unknown mode " + mode)
    print("# compared %d inodes, %d fields, %d mismatches" % (n, fields, bad))
    sys.exit(1 if bad else 0)


main()
