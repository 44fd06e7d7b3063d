# SPDX-License-Identifier: GPL-2.0
"""CRC32c (Castagnoli, reflected) for the log test scripts that write log
records and superblocks (attriwrite.py, logfuzz.py): crc32c(crc, data) runs
the table over data from crc; callers start at 0xFFFFFFFF and invert the end
as XFS does.  log_tail(f) finds where such a script appends its record."""

import struct

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(crc, data):
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


class LogTail:
    """The internal log of the clean XFS image open in f (r+b): the
    superblock sector (sb), geometry, rd(blk, n) over the log's 512-byte
    blocks, and its newest record (the highest LSN among record headers of
    a log that has not wrapped): last (its block), tmpl (its header),
    cycle, and head (the block after it)."""

    def __init__(self, f):
        self.f = f
        sb = self.sb = bytearray(f.read(512))
        self.bsize = struct.unpack(">I", sb[4:8])[0]
        logstart = struct.unpack(">Q", sb[48:56])[0]
        logblocks = struct.unpack(">I", sb[96:100])[0]
        agblocks = struct.unpack(">I", sb[84:88])[0]
        agblklog = sb[124]
        self.sectsize = struct.unpack(">H", sb[102:104])[0]
        self.off = ((logstart >> agblklog) * agblocks +
                    (logstart & ((1 << agblklog) - 1))) * self.bsize
        self.nbbs = logblocks * self.bsize // 512
        best = None
        for blk in range(self.nbbs):
            h = self.rd(blk)
            if struct.unpack(">I", h[:4])[0] != 0xFEEDBABE:
                continue
            lsn = struct.unpack(">Q", h[16:24])[0]
            if best is None or lsn > best[0]:
                best = (lsn, blk, h)
        if best is None:
            raise SystemExit("no log record found")
        _, self.last, self.tmpl = best
        tmpl = self.tmpl
        self.cycle = struct.unpack(">I", tmpl[4:8])[0]
        if struct.unpack(">I", tmpl[8:12])[0] & 2 and struct.unpack(">I", tmpl[320:324])[0] > 32768:
            raise SystemExit("log record headers of more than one sector: not handled")
        self.head = self.last + 1 + (struct.unpack(">I", tmpl[12:16])[0] + 511) // 512

    def rd(self, blk, n=1):
        self.f.seek(self.off + blk * 512)
        return bytearray(self.f.read(512 * n))
