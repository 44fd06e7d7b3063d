#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# pptrwrite.py IMG SPEC [SPEC...]
# Make the clean log of an unmounted parent-pointer / exchange-range XFS
# image dirty with unfinished intents, one transaction each, in the order
# given (one new record after the head, as attriwrite.py does for plain
# xattr intents), as a kernel would have left them; the kernel's recovery
# is the oracle for what the log means.  SPECs:
#   pptr:INO:IGEN:OP:NAME:PINO:PGEN[:NEWNAME:NPINO:NPGEN][:FUZZ]
#     a parent pointer ATTRI: OP set (4), remove (5), replace (6; the new
#     name and parent follow); FUZZ: valueshort (the value region 8 bytes),
#     badop (op 7), name256 (a name length of 256), filter (the user
#     namespace), regions (a set with a fourth region)
#   xmi:INO1:GEN1:INO2:GEN2:OFF1:OFF2:COUNT:FLAGS[:sizes=S1/S2][:FUZZ]
#     an XMI (exchange of COUNT file blocks from OFF1 of INO1 and OFF2 of
#     INO2); sizes: its xmi_isize1 and xmi_isize2 (else -1 both, as the
#     kernel logs them without SET_SIZES; with it, the kernel logs INO2's
#     size and INO1's); FUZZ: short (8 bytes short), pad (the pad word 1),
#     flags (an unknown flag bit), count0 (no blocks)
# Layouts: struct xfs_attri_log_format, struct xfs_parent_rec and struct
# xfs_xmi_log_format (the kernel's xfs_log_format.h / xfs_da_format.h),
# xlog_rec_header, xlog_op_header, xfs_trans_header.
import struct, sys

from logcrc import LogTail, crc32c  # beside this script

XLOG_MAGIC = 0xFEEDBABE
HDR = 328
XFS_LI_ATTRI, XFS_LI_XMI = 0x1246, 0x1248
TRANS_MAGIC = 0x5452414E
START, COMMIT, UNMOUNT = 1, 2, 0x20
CLIENT = 0x69
LOG_XATTRS = 1
ATTR_PARENT = 8

img = sys.argv[1]
specs = [a.split(":") for a in sys.argv[2:]]
f = open(img, "r+b")
T = LogTail(f)
sb, bsize, sectsize, off, nbbs, rd = T.sb, T.bsize, T.sectsize, T.off, T.nbbs, T.rd
last, tmpl, cycle, head = T.last, T.tmpl, T.cycle, T.head


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def prec(ino, gen):
    return struct.pack(">QI", int(ino), int(gen))


def pptr_item(k, s):
    ino, igen, op, name, pino, pgen = int(s[0]), int(s[1]), int(s[2]), s[3].encode(), s[4], s[5]
    rest = s[6:]
    new = rest[:3] if op == 6 else []
    fuzz = (rest[3:] if op == 6 else rest)
    fuzz = fuzz[0] if fuzz else ""
    val = prec(pino, pgen)
    regs = [pad4(name)]
    if op == 6:
        regs.append(pad4(new[0].encode()))
    regs.append(val if fuzz != "valueshort" else val[:8])
    if op == 6:
        regs.append(prec(new[1], new[2]))
    if fuzz == "regions":
        regs.append(b"\0" * 4)
    nl = 256 if fuzz == "name256" else len(name)
    namefield = struct.pack("<HH", nl, len(new[0])) if op == 6 else struct.pack("<I", nl)
    fmt = struct.pack("<HHIQQI", XFS_LI_ATTRI, 1 + len(regs), igen, 0x5A5B0001 + k, ino,
                      7 if fuzz == "badop" else op) + namefield + \
        struct.pack("<II", 12, 0 if fuzz == "filter" else ATTR_PARENT)
    return [fmt] + regs


def xmi_item(k, s):
    i1, g1, i2, g2, o1, o2, cnt, fl = (int(x, 0) for x in s[:8])
    fuzz, isize1, isize2 = "", -1, -1
    for t in s[8:]:
        if t.startswith("sizes="):
            isize1, isize2 = (int(x, 0) for x in t[6:].split("/"))
        else:
            fuzz = t
    fmt = struct.pack("<HHIQQQIIQQQQqq", XFS_LI_XMI, 1, 1 if fuzz == "pad" else 0, 0x5A5C0001 + k,
                      i1, i2, g1, g2, o1, o2, 0 if fuzz == "count0" else cnt,
                      fl | (1 << 5) if fuzz == "flags" else fl, isize1, isize2)
    if fuzz == "short":
        fmt = fmt[:-8]
    return [fmt]


ops = []
xattrs = False
for k, spec in enumerate(specs):
    regs = pptr_item(k, spec[1:]) if spec[0] == "pptr" else xmi_item(k, spec[1:])
    xattrs |= spec[0] == "pptr"
    tid = 0x2F3E4D5C + k
    t = [(START, b""), (0, struct.pack("<IIII", TRANS_MAGIC, 0, tid, 1))]
    t += [(0, r) for r in regs] + [(COMMIT, b"")]
    ops += [(tid, fl, p) for fl, p in t]
data = b"".join(struct.pack(">IIBBH", tid, len(p), CLIENT, fl, 0) + p for tid, fl, p in ops)
hlen = len(data)
dbbs = (hlen + 511) // 512
if head + 1 + dbbs > nbbs or dbbs > 64:
    sys.exit("the record would wrap the log or exceed 32 KiB: not handled")
data = bytearray(data + b"\0" * (dbbs * 512 - hlen))
hdr = bytearray(tmpl[:512])
for i in range(HDR, 512):
    hdr[i] = 0
lsn = (cycle << 32) | head
unmount = rd(last + 1)[9] & UNMOUNT
tail = lsn if unmount else struct.unpack(">Q", tmpl[24:32])[0]
struct.pack_into(">IIIIQQIII", hdr, 0, XLOG_MAGIC, cycle, struct.unpack(">I", tmpl[8:12])[0],
                 hlen, lsn, tail, 0, last, len(ops))
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
if xattrs:
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
