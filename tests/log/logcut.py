# SPDX-License-Identifier: GPL-2.0
# Cut a first-cycle log where a record starts, as if the machine stopped
# there (tests/log/intents.sh).  The blocks after a cycle-1 log's head were
# never written, so zeroing from a record's start to the log's end gives the
# image a crash at that moment would have left, as far as the log says.
#   logcut.py starts IMG LOG_OFFSET TAIL HEAD   the record starts, one a line
#   logcut.py cut IMG LOG_OFFSET SECTORS BLOCK  zero the log from BLOCK on
import struct
import sys

XLOG_MAGIC = 0xFEEDBABE
XLOG_HEADER_CYCLE_SIZE = 32768


def starts(img, off, tail, head):
    with open(img, "rb") as f:
        b = tail
        while b < head:
            f.seek(off + b * 512)
            h = f.read(512)
            magic, _cycle, version, hlen = struct.unpack(">IIiI", h[:16])
            if magic != XLOG_MAGIC or hlen <= 0:
                sys.exit("logcut: no record header at block %d" % b)
            # a v2 record's header takes one sector per 32 KiB of its data
            hbs = max(1, (hlen + XLOG_HEADER_CYCLE_SIZE - 1) // XLOG_HEADER_CYCLE_SIZE) \
                if version & 2 else 1
            print(b)
            b += hbs + (hlen + 511) // 512


def cut(img, off, sectors, blk):
    with open(img, "r+b") as f:
        f.seek(off + blk * 512)
        f.write(bytes((sectors - blk) * 512))


if sys.argv[1] == "starts":
    starts(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
else:
    cut(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
