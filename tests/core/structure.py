#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The shape doc/design.md, "Layout and the one direction of dependencies"
# promises, checked on the source tree:
#   1. no libfs .c file is over 1,200 lines unless its opening comment says
#      why, on a line of its own starting "Long because:" (every libfs .c
#      file's size is listed, longest first);
#   2. libfs includes no header of scan/ or of a tool (check/, repair/,
#      mkfs/, bulkstat/, undo/): it is the bottom layer;
#   3. scan/ includes no header of a tool: the tools sit on top of it.
# A made-up tree shows each rule fires.  Prints TAP; exits 1 on any hit.
import os
import re
import sys

top = os.path.abspath(sys.argv[1])
MAX_LINES = 1200
TOOLS = ("check", "repair", "mkfs", "bulkstat", "undo")
FORBIDDEN = {"libfs": ("scan",) + TOOLS, "scan": TOOLS}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)


def opening_comment(text):
    """The first /* */ comment of the file (after the SPDX line)."""
    m = re.search(r"/\*(.*?)\*/", text, re.S)
    return m.group(1) if m else ""


def says_why(text):
    return any(re.match(r"\s*\*?\s*Long because:\s*\S", ln)
               for ln in opening_comment(text).split("\n"))


def long_files(files):
    """(rel, lines, explained) of every libfs .c file, longest first."""
    out = []
    for rel, text in files:
        if rel.startswith("libfs/") and rel.endswith(".c"):
            out.append((rel, text.count("\n"), says_why(text)))
    return sorted(out, key=lambda r: -r[1])


def bad_includes(files):
    hits = []
    for rel, text in files:
        layer = rel.split("/", 1)[0]
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
            if inc.split("/", 1)[0] in FORBIDDEN.get(layer, ()) and "/" in inc:
                line = text.count("\n", 0, m.start()) + 1
                hits.append("%s:%d: includes %s" % (rel, line, inc))
    return hits


def read_tree():
    files = []
    for layer in ("libfs", "scan"):
        for root, dirs, names in os.walk(os.path.join(top, layer)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    path = os.path.join(root, name)
                    with open(path, encoding="utf-8") as f:
                        files.append((os.path.relpath(path, top), f.read()))
    return files


# the rules fire on a made-up tree, and pass what is allowed
short = "/*\n * Owns little.\n */\n"
long_why = "/*\n * Owns much.\n *\n * Long because: one table.\n */\n" + "x;\n" * 1300
long_not = "/*\n * Owns much; long because nobody split it.\n */\n" + "x;\n" * 1300
sample = [("libfs/a.c", short + '#include "libfs/fs.h"\n#include <xfs/xfs.h>\n'),
          ("libfs/b.c", long_why), ("libfs/c.c", long_not),
          ("libfs/d.h", '#include "scan/scan.h"\n'),
          ("scan/e.c", '#include "libfs/fs.h"\n#include "repair/repair.h"\n'),
          ("scan/f.c", '#  include "check/check.h"\n')]
sample_long = [(r, n) for r, n, why in long_files(sample) if n > MAX_LINES and not why]
sample_inc = bad_includes(sample)
sample_ok = (sample_long == [("libfs/c.c", 1303)] and
             sample_inc == ["libfs/d.h:1: includes scan/scan.h",
                            "scan/e.c:2: includes repair/repair.h",
                            "scan/f.c:1: includes check/check.h"])

files = read_tree()
sizes = long_files(files)
over = ["%s: %d lines, its opening comment has no \"Long because:\"" % (r, n)
        for r, n, why in sizes if n > MAX_LINES and not why]
incs = bad_includes(files)
lib_incs = [h for h in incs if h.startswith("libfs/")]
scan_incs = [h for h in incs if h.startswith("scan/")]

tests = [
    (sample_ok, "the rules find each fault of a made-up tree, and nothing else in it",
     [] if sample_ok else ["long: %s" % sample_long, "includes: %s" % sample_inc]),
    (len(sizes) > 20 and len(files) > 60,
     "%d libfs .c files and %d libfs and scan sources read" % (len(sizes), len(files)),
     ["%6d %s%s" % (n, r, " (Long because: said)" if why else "") for r, n, why in sizes]),
    (not over, "no libfs .c file over %d lines without saying why" % MAX_LINES, over),
    (not lib_incs, "libfs includes no header of scan/ or of a tool", lib_incs),
    (not scan_incs, "scan/ includes no header of a tool", scan_incs),
]
failed = False
for n, (ok, what, notes) in enumerate(tests, 1):
    failed |= not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    for h in notes:
        print("# " + h)
print("1..%d" % len(tests))
sys.exit(1 if failed else 0)
