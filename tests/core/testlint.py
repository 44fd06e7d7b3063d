#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The test scripts' own mistake that hides failures: tests/lib.sh's check
# runs ONE command, so "check NAME [ a ] && [ b ]" asserts only a (the
# rest runs after ok is printed, its status thrown away).  Every check
# statement of every shell script under tests/ and scripts/ is parsed
# (line continuations joined, $(...) and quotes respected) and one with
# && or || at its top level is reported: such lists go before ok_if.
# Prints TAP.
import os
import re
import shlex
import sys

top = sys.argv[1]
bad, nchecks, nfiles = [], 0, 0


def strip_subst(s):
    """$(...) (nested too) replaced by a word: its && is not the statement's."""
    out, i, depth = [], 0, 0
    while i < len(s):
        if s.startswith("$(", i):
            depth += 1
            i += 2
            continue
        if depth:
            if s[i] == "(":
                depth += 1
            elif s[i] == ")":
                depth -= 1
                if not depth:
                    out.append("X")
            i += 1
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


for sub in ("tests", "scripts"):
    for root, _, names in os.walk(os.path.join(top, sub)):
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if not (name.endswith(".sh") or text.startswith("#!/usr/bin/env bash")):
                continue
            nfiles += 1
            lines = text.split("\n")
            i = 0
            while i < len(lines):
                if re.match(r"\s*check\s", lines[i]):
                    stmt, j = lines[i], i
                    while stmt.rstrip().endswith("\\") and j + 1 < len(lines):
                        j += 1
                        stmt = stmt.rstrip()[:-1] + " " + lines[j].strip()
                    nchecks += 1
                    try:
                        lx = shlex.shlex(strip_subst(stmt), posix=True, punctuation_chars="&|;")
                        lx.whitespace_split = True
                        toks = list(lx)
                    except ValueError:
                        toks = []   # a quote spanning lines (python3 -c '...'): one argument
                    if "&&" in toks or "||" in toks:
                        bad.append("%s:%d" % (os.path.relpath(path, top), i + 1))
                    i = j
                i += 1

print("ok 1 - %d shell scripts read, %d check statements found" % (nfiles, nchecks)
      if nchecks > 100 else "not ok 1 - only %d check statements found in %d scripts" % (nchecks, nfiles))
print(("ok 2" if not bad else "not ok 2") +
      " - no check statement has && or || after its command (check asserts one command; lists go before ok_if)" +
      ("".join("\n# " + b for b in bad)))
print("1..2")
sys.exit(1 if bad or nchecks <= 100 else 0)
