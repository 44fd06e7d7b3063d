#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""sha256 of a file's content, holes read as zeroes: every 1 MiB-aligned
chunk that is not all zero, with its offset, then the size.  Independent of
how the host filesystem lays out extents (writeback after a loop unmount
may split or merge them, a repair may write zeroes where a hole was), and
it reads only the data regions.  aged_lib.sh's imgsum runs it on images;
tests/repair/differential.py also on the files of a mounted filesystem.

Usage: imgsum.py FILE"""
import hashlib
import os
import sys

CH = 1 << 20
ZERO = bytes(CH)


def digest(path):
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        end = os.fstat(fd).st_size
        c = 0
        while c < end:
            try:
                # the chunk holding the next data byte at or after c
                c = os.lseek(fd, c, os.SEEK_DATA) // CH * CH
            except OSError:
                break   # only a hole is left
            b = os.pread(fd, min(CH, end - c), c)
            if b != ZERO[:len(b)]:
                h.update(c.to_bytes(8, "little"))
                h.update(b)
            c += CH
    finally:
        os.close(fd)
    h.update(end.to_bytes(8, "little"))
    return h.hexdigest()


if __name__ == "__main__":
    print(digest(sys.argv[1]))
