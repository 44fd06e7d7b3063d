#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# logfuzz.py IMG LOG_OFFSET LOG_SECTORS TAIL HEAD SEED: flip bytes inside the
# data of log records between tail and head, then recompute each changed
# record's CRC, so the damage reaches the operation and item parsers (a
# crafted log, not a torn one).  The first word of every data sector (the
# cycle stamp) is left alone.
import random, struct, sys

from logcrc import crc32c  # beside this script

HDR = 328          # sizeof(struct xlog_rec_header)
EXT = 260          # sizeof(struct xlog_rec_ext_header)
CRC_OFF = 32

img, off, nbbs, tail, head, seed = sys.argv[1], *map(int, sys.argv[2:7])
r = random.Random(seed)
f = open(img, "r+b")

def rd(blk, n):
    out = b""
    for i in range(n):
        f.seek(off + ((blk + i) % nbbs) * 512)
        out += f.read(512)
    return bytearray(out)

def wr(blk, data):
    for i in range(len(data) // 512):
        f.seek(off + ((blk + i) % nbbs) * 512)
        f.write(data[i * 512:(i + 1) * 512])

recs = []
blk = tail
while blk != head and len(recs) < 100000:
    h = rd(blk, 1)
    if struct.unpack(">I", h[:4])[0] != 0xFEEDBABE:
        break
    hlen, hsize, version = struct.unpack(">I", h[12:16])[0], struct.unpack(">I", h[324:328])[0], struct.unpack(">I", h[8:12])[0]
    hbbs = (hsize + 32767) // 32768 if (version & 2) and hsize > 32768 else 1
    dbbs = (hlen + 511) // 512
    recs.append((blk, hbbs, dbbs, hlen))
    blk = (blk + hbbs + dbbs) % nbbs
for blk, hbbs, dbbs, hlen in r.sample(recs, min(len(recs), r.choice([1, 2, 3]))):
    hdr = rd(blk, hbbs)
    data = rd(blk + hbbs, dbbs)
    for _ in range(r.choice([1, 4, 16, 64])):
        pos = r.randrange(hlen)
        if pos % 512 < 4:
            continue
        data[pos] ^= 1 << r.randrange(8)
    c = crc32c(0xFFFFFFFF, bytes(hdr[:CRC_OFF]) + b"\0\0\0\0" + bytes(hdr[CRC_OFF + 4:HDR]))
    for i in range(1, hbbs):
        c = crc32c(c, bytes(hdr[i * 512:i * 512 + EXT]))
    c = crc32c(c, bytes(data[:hlen])) ^ 0xFFFFFFFF
    hdr[CRC_OFF:CRC_OFF + 4] = struct.pack("<I", c)
    wr(blk, hdr)
    wr(blk + hbbs, data)
f.close()
