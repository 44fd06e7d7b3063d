# SPDX-License-Identifier: GPL-2.0
"""CRC32c (Castagnoli, reflected) for the log test scripts that write log
records and superblocks (attriwrite.py, logfuzz.py): crc32c(crc, data) runs
the table over data from crc; callers start at 0xFFFFFFFF and invert the end
as XFS does."""

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
