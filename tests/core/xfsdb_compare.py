#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare `xfs_db -c 'sb N' -c print` output with `xfsx_check --geometry --json`.

usage: xfsdb_compare.py XFS_DB_OUTPUT JSON_FILE

xfs_db prints "name = value" lines: decimal or 0x-hex numbers, "null" for
NULL inode numbers, UUIDs, the label as a quoted C string, and the CRC with
a "(correct)" note.  Every field xfs_db prints must be in the JSON with the
same value, and every JSON key must be a field xfs_db prints.  Mismatches go
to stdout as TAP diagnostics ("# ..."); exit status 0 when all agree.
"""
import json
import re
import sys


def parse_db(text):
    fields = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+) = (.*)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    return fields


def c_string(s):
    """Decode xfs_db's quoted label: C escapes, octal, trailing NULs dropped."""
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            if m:
                out.append(int(m.group(0), 8))
                i += 1 + len(m.group(0))
                continue
            esc = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39}
            out.append(esc.get(s[i + 1], ord(s[i + 1])))
            i += 2
            continue
        out += ch.encode("latin-1")
        i += 1
    return out.rstrip(b"\0").decode("latin-1")


def db_value(name, raw):
    """xfs_db's printed value as a Python value comparable with the JSON."""
    if raw == "null":
        return None
    if name == "fname":
        return c_string(raw)
    raw = re.sub(r"\s*\((correct|bad)\)$", "", raw)
    if re.fullmatch(r"0x[0-9a-fA-F]+", raw):
        return int(raw, 16)
    if re.fullmatch(r"-?[0-9]+", raw):
        return int(raw)
    return raw.lower()


def main():
    db = parse_db(open(sys.argv[1]).read())
    js = json.load(open(sys.argv[2]))
    bad = 0
    if not db:
        print("# xfs_db printed no fields")
        return 1
    for name, raw in db.items():
        if name not in js:
            print(f"# field {name} (xfs_db: {raw}) missing from the JSON")
            bad += 1
            continue
        want = db_value(name, raw)
        got = js[name]
        if isinstance(got, str) and name != "fname":
            got = got.lower()
        if want != got:
            print(f"# field {name}: xfs_db says {raw!r}, JSON says {js[name]!r}")
            bad += 1
    for name in js:
        if name not in db:
            print(f"# JSON key {name} is not a field xfs_db prints")
            bad += 1
    print(f"# compared {len(db)} fields, {bad} mismatch(es)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
