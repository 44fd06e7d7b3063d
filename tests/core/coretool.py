#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Small helpers for the core shell tests.

  coretool.py hash FILE            sha256 of an image's non-zero blocks and
                                   where they are (holes are not read)
  coretool.py clean JSON           exit 0 iff the check JSON has no findings
  coretool.py has JSON PREFIX [AG] exit 0 iff a finding's code starts with
                                   PREFIX (and its "ag" is AG, when given)
  coretool.py get JSON KEY.KEY...  print one value from a JSON document

Findings are echoed as TAP diagnostics ("# ...") so failures explain themselves.
"""
import hashlib
import json
import os
import sys


def image_hash(path):
    """sha256 over the image's non-zero 4 KiB blocks and their offsets.

    Holes and written zeros hash alike, so a host filesystem converting
    extents after mkfs (delayed allocation, unwritten extents) does not
    change it, while any write of non-zero data does.  Only data extents
    are read (SEEK_DATA/SEEK_HOLE), so sparse images hash quickly.
    """
    blk = 4096
    zero = bytes(1 << 20)
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        h.update(b"size %d\n" % size)
        off = 0
        while off < size:
            try:
                data = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break              # no data past off
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            pos = data - data % blk
            while pos < hole:
                chunk = os.pread(fd, min(1 << 20, hole - pos), pos)
                if not chunk:
                    break
                if chunk != zero[:len(chunk)]:
                    for i in range(0, len(chunk), blk):
                        b = chunk[i:i + blk]
                        if b.count(0) != len(b):
                            h.update(b"%d\n" % (pos + i))
                            h.update(b)
                pos += len(chunk)
            off = hole
    finally:
        os.close(fd)
    return h.hexdigest()


def load(path):
    with open(path) as f:
        return json.load(f)


def show(findings):
    for f in findings:
        print("#   %s ag=%s daddr=%s field=%s expected=%s found=%s: %s" % (
            f.get("code"), f.get("ag"), f.get("daddr"), f.get("field"),
            f.get("expected"), f.get("found"), f.get("message")))


def main(argv):
    cmd = argv[1]
    if cmd == "hash":
        print(image_hash(argv[2]))
        return 0
    try:
        doc = load(argv[2])
    except (OSError, ValueError) as e:
        print("# cannot read JSON from %s: %s" % (argv[2], e))
        return 2
    if cmd == "clean":
        f = doc.get("findings")
        s = doc.get("summary", {})
        if f == [] and s.get("clean") is True and s.get("findings") == 0:
            return 0
        print("# expected no findings, got:")
        show(f or [])
        return 1
    if cmd == "has":
        prefix = argv[3]
        ag = int(argv[4]) if len(argv) > 4 else None
        for f in doc.get("findings") or []:
            if f.get("code", "").startswith(prefix) and (ag is None or f.get("ag") == ag):
                return 0
        print("# no finding %s*%s among:" % (prefix, "" if ag is None else " in AG %d" % ag))
        show(doc.get("findings") or [])
        return 1
    if cmd == "get":
        v = doc
        for k in argv[3].split("."):
            v = v[k]
        print(json.dumps(v) if not isinstance(v, str) else v)
        return 0
    print("unknown command " + cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
