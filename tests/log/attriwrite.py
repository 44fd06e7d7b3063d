#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# attriwrite.py IMG INO OP FILTER NAME VALUE_LEN [FUZZ]
# attriwrite.py IMG SPEC [SPEC...]   (SPEC: INO:OP:FILTER:NAME:VALUE_LEN[:FUZZ])
# Make the clean log of an unmounted XFS image dirty with unfinished xattr
# intents, as a kernel with logged xattrs would have left it: one new record
# after the head holding one transaction per intent (start, trans header,
# ATTRI format, name, value, commit), in the order given (log order), and the
# log-incompat bit LOG_XATTRS set in the superblock.  The kernel's recovery
# is the oracle for what this log means.  OP: 1 set, 2 remove, 3 replace;
# FILTER: 0 user, 2 trusted (ROOT), 4 security (SECURE); the value is
# VALUE_LEN bytes of a pattern.  FUZZ: opflag, namelen0, valuebig (an ATTRI
# the kernel refuses), filter (an unknown filter bit), nul (a NUL in the
# name), remval (a remove with a value), igen (the pad word, alfi_igen in
# newer headers, not 0), namelong (a name length past its region),
# name256 (a name length over 255), valuelong (a value length past its
# region), novalue (a set whose value region is missing), noname (the name
# region missing), fmtshort (a format region 4 bytes short).  Offsets and
# constants are those of <xfs/xfs_format.h>
# and <xfs/xfs_log_format.h> (struct xfs_dsb, xlog_rec_header,
# xlog_op_header, xfs_trans_header, xfs_attri_log_format).
import struct, sys

from logcrc import LogTail, crc32c  # beside this script

XLOG_MAGIC = 0xFEEDBABE
HDR = 328
XFS_LI_ATTRI = 0x1246
TRANS_MAGIC = 0x5452414E
START, COMMIT, UNMOUNT = 1, 2, 0x20
CLIENT = 0x69
LOG_XATTRS = 1

img = sys.argv[1]
if ":" in sys.argv[2]:
    specs = [a.split(":") for a in sys.argv[2:]]
else:
    specs = [sys.argv[2:8]]
f = open(img, "r+b")
T = LogTail(f)
sb, bsize, sectsize, off, nbbs, rd = T.sb, T.bsize, T.sectsize, T.off, T.nbbs, T.rd
last, tmpl, cycle, head = T.last, T.tmpl, T.cycle, T.head

# the ATTRI format and its regions, one transaction each
def pad4(b):
    return b + b"\0" * (-len(b) % 4)

def transaction(k, spec):
    ino, op, filt, name, vlen = int(spec[0]), int(spec[1]), int(spec[2]), spec[3].encode(), int(spec[4])
    fuzz = spec[5] if len(spec) > 5 else ""
    name_len = {"namelen0": 0, "namelong": len(name) + 8, "name256": 256}.get(fuzz, len(name))
    val = bytes((i * 7 + 3) & 0xFF for i in range(vlen))
    alen = 65537 if fuzz == "valuebig" else vlen + 64 if fuzz == "valuelong" else vlen
    opf = 9 if fuzz == "opflag" else 2 if fuzz == "remval" else op
    nreg = 2 + (1 if vlen else 0)
    if fuzz == "nul":
        name = name[:1] + b"\0" + name[2:]
    attri = struct.pack("<HHIQQIIII", XFS_LI_ATTRI, nreg, 1 if fuzz == "igen" else 0, 0x5A5A0001 + k,
                        ino, opf, name_len, alen, 0x40 if fuzz == "filter" else filt)
    if fuzz == "fmtshort":
        attri = attri[:-4]
    tid = 0x1F2E3D4C + k
    ops = [(START, b""), (0, struct.pack("<IIII", TRANS_MAGIC, 0, tid, 1)), (0, attri)]
    if fuzz != "noname":
        ops.append((0, pad4(name)))
    if vlen and fuzz != "novalue":
        ops.append((0, pad4(val)))
    ops.append((COMMIT, b""))
    return tid, ops

ops_all = []
for k, spec in enumerate(specs):
    tid, ops = transaction(k, spec)
    ops_all += [(tid, fl, p) for fl, p in ops]
ops = ops_all
data = b"".join(struct.pack(">IIBBH", tid, len(p), CLIENT, fl, 0) + p for tid, fl, p in ops)
hlen = len(data)
dbbs = (hlen + 511) // 512
if head + 1 + dbbs > nbbs:
    sys.exit("the record would wrap the log: not handled")
if dbbs > 64:
    sys.exit("record of more than 32 KiB: not handled")
data = bytearray(data + b"\0" * (dbbs * 512 - hlen))
hdr = bytearray(tmpl[:512])
for i in range(HDR, 512):
    hdr[i] = 0
lsn = (cycle << 32) | head
# the tail: the new record itself after an unmount record (a clean log: its
# first op is the unmount transaction); after a kernel's dirty log, that log's
# tail, so its transactions are recovered before the intents
unmount = rd(last + 1)[9] & UNMOUNT
tail = lsn if unmount else struct.unpack(">Q", tmpl[24:32])[0]
struct.pack_into(">IIIIQQIII", hdr, 0, XLOG_MAGIC, cycle, struct.unpack(">I", tmpl[8:12])[0], hlen, lsn, tail, 0, last, len(ops))
for i in range(64):
    struct.pack_into(">I", hdr, 44 + 4 * i, 0)
for i in range(dbbs):
    hdr[44 + 4 * i:48 + 4 * i] = data[i * 512:i * 512 + 4]
    struct.pack_into(">I", data, i * 512, cycle)
c = crc32c(0xFFFFFFFF, bytes(hdr[:32]) + b"\0\0\0\0" + bytes(hdr[36:HDR]))
c = crc32c(c, bytes(data[:hlen])) ^ 0xFFFFFFFF
struct.pack_into("<I", hdr, 32, c)
f.seek(off + head * 512)
f.write(hdr + data)
# the superblock: LOG_XATTRS, CRC over the sector
struct.pack_into(">I", sb, 220, struct.unpack(">I", sb[220:224])[0] | LOG_XATTRS)
f.seek(0)
sect = bytearray(f.read(sectsize))
sect[:512] = sb
sect[224:228] = b"\0\0\0\0"
struct.pack_into("<I", sect, 224, crc32c(0xFFFFFFFF, bytes(sect)) ^ 0xFFFFFFFF)
f.seek(0)
f.write(sect)
f.close()
print("record at %d, %d bytes, cycle %d" % (head, hlen, cycle))
