#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Comments that point somewhere must point at something that is there.
# Every comment of the C, meson, shell and python sources (and every line
# of the man pages and of the test scripts, whose descriptions are what a
# failing test prints) is read, and reported with file:line when it
#   1. names a repository path (under libfs, tests, scripts, ...) that is
#      neither a file nor a directory of the source tree, nor a glob
#      matching one, nor a tool's binary (check/xfsx_check), nor a target
#      built from a source of that name (a fuzz target: its .c); a
#      placeholder in angle brackets stands for any name;
#   2. cites the design document by the capitalised name it had outside
#      the repository (it is doc/design.md);
#   3. cites a section of doc/design.md (its path, a comma, the heading in
#      double quotes) that is not one of its headings;
#   4. refers to an issue by its number: the tracker is not in the
#      repository, and the reason is what belongs in the text.
# This file's own comments are written so they match none of the rules.
# Prints TAP; exits 1 on any hit.
import glob
import os
import re
import sys

top = os.path.abspath(sys.argv[1])
TOP_DIRS = ("libfs", "scan", "check", "repair", "mkfs", "bulkstat", "undo", "tests", "scripts",
            "man", "doc")
SKIP_DIRS = {".git", "subprojects"}
PATH_RE = re.compile(r"(?<![\w./-])((?:%s)/[\w./*+<>-]*)" % "|".join(TOP_DIRS))
DESIGN_RE = re.compile(r"DESIGN\.md")
SECTION_RE = re.compile(r'doc/design\.md,?\s*"([^"]+)"')
ISSUE_RE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)


def c_comments(text):
    """(line, text) of every // and /* */ comment, strings and characters skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            i = j + 2
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def hash_comments(text):
    """(line, text) of every # comment: a # at a line's start or after a blank, outside quotes."""
    out = []
    for no, ln in enumerate(text.split("\n"), 1):
        quote = None
        k = 0
        while k < len(ln):
            ch = ln[k]
            if quote:
                if ch == "\\" and quote == '"':
                    k += 1
                elif ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (k == 0 or ln[k - 1] in " \t"):
                out.append((no, ln[k + 1:]))
                break
            k += 1
    return out


def kind(path, name):
    if name.endswith((".c", ".h")):
        return "c"
    if name.endswith((".sh", ".py")) or name in ("meson.build", "meson_options.txt"):
        return "hash"
    if name.endswith(".8.in"):
        return "all"
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except (UnicodeDecodeError, OSError):
        return None
    return "hash" if first.startswith("#!") and ("bash" in first or "python" in first or
                                                  first.rstrip().endswith("/sh")) else None


def design_sections():
    heads = set()
    try:
        with open(os.path.join(top, "doc", "design.md"), encoding="utf-8") as f:
            for ln in f:
                m = re.match(r"#+\s+(.*\S)", ln)
                if m:
                    heads.add(m.group(1).replace("`", "").lower())
    except OSError:
        pass
    return heads


def path_exists(p):
    p = p.rstrip(".,:;)")
    while p.endswith("/") and len(p) > 1:
        p = p[:-1]
    full = os.path.join(top, p)
    head, base = os.path.split(p)
    if "<" in p:            # a placeholder: tests/libfs/<room>/
        return True, p
    if "*" in p:
        return bool(glob.glob(full)), p
    return (os.path.exists(full) or base == "xfsx_" + head or
            any(os.path.isfile(full + ext) for ext in (".c", ".sh", ".py"))), p


def scan_text(rel, k, text, hits):
    """Add the file's hits; returns how many comments it has."""
    comments = c_comments(text) if k == "c" else hash_comments(text) if k == "hash" else \
        list(enumerate(text.split("\n"), 1))
    # test scripts and man pages: every line (what a test prints, what a page says)
    issue_lines = list(enumerate(text.split("\n"), 1)) \
        if rel.startswith(("tests" + os.sep, "scripts" + os.sep)) else comments
    for line, body in comments:
        for off, ln in enumerate(body.split("\n")):
            for m in PATH_RE.finditer(ln):
                ok, p = path_exists(m.group(1))
                if not ok:
                    hits["path"].append("%s:%d: %s" % (rel, line + off, p))
            if DESIGN_RE.search(ln):
                hits["design"].append("%s:%d: %s" % (rel, line + off, ln.strip()))
        # a section may be cited across a line break of the comment
        flat = re.sub(r"\s*\n\s*(\*(?!/)|#|//)?\s*", " ", body)
        for m in SECTION_RE.finditer(flat):
            if m.group(1).replace("`", "").lower() not in sections:
                hits["section"].append('%s:%d: "%s"' % (rel, line, m.group(1)))
    seen = set()
    for line, body in issue_lines:
        for off, ln in enumerate(body.split("\n")):
            if ISSUE_RE.search(ln) and (line + off) not in seen:
                seen.add(line + off)
                hits["issue"].append("%s:%d: %s" % (rel, line + off, ln.strip()))
    return len(comments)


sections = design_sections()

# the rules fire: a made-up file with one of each mistake, and one without
SAMPLE = "\n".join([
    "/* see libfs/no_such_file.c */",
    "// as DESIGN" + ".md says",
    "/* doc/design.md, \"No such\n * section\" */",
    "/* for iss" + "ue 7 */",
    "/* libfs/format/inode.c, doc/design.md, \"The check scan\", tests/log/attri*.sh, "
    "tests/libfs/<room>/ */",
    "const char *s = \"libfs/nothing.c iss" + "ue #3\";",
])
sample = {"path": [], "design": [], "section": [], "issue": []}
scan_text("sample.c", "c", SAMPLE, sample)
want = {"path": ["sample.c:1: libfs/no_such_file.c"], "design": ["sample.c:2: as DESIGN.md says"],
        "section": ['sample.c:3: "No such section"'], "issue": ["sample.c:5: for iss" + "ue 7"]}

hits = {"path": [], "design": [], "section": [], "issue": []}
nfiles = ncomments = 0
for root, dirs, names in os.walk(top):
    rel_root = os.path.relpath(root, top)
    if rel_root == ".":
        dirs[:] = sorted(d for d in dirs if d in TOP_DIRS)
    else:
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
    for name in sorted(names):
        path = os.path.join(root, name)
        rel = os.path.relpath(path, top)
        if rel.startswith("doc" + os.sep):
            continue
        k = kind(path, name)
        if not k:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        nfiles += 1
        ncomments += scan_text(rel, k, text, hits)

tests = [
    (sample == want, "the rules find each mistake of a made-up file, and nothing else in it",
     [] if sample == want else ["found %s, expected %s" % (sample, want)]),
    (nfiles > 100 and ncomments > 1000,
     "%d source files read, %d comments found" % (nfiles, ncomments), []),
    (not hits["path"], "every repository path a comment names exists", hits["path"]),
    (not hits["design"], "no comment cites DESIGN.md (the design document is doc/design.md)",
     hits["design"]),
    (bool(sections) and not hits["section"],
     "every doc/design.md section a comment cites is a heading of it (%d headings)"
     % len(sections), hits["section"]),
    (not hits["issue"], "no issue number in a comment, a man page or a test's text",
     hits["issue"]),
]
failed = False
for n, (ok, what, found) in enumerate(tests, 1):
    failed |= not ok
    print("%s %d - %s%s" % ("ok" if ok else "not ok", n, what,
                            " (%d hits)" % len(found) if found else ""))
    for h in found:
        print("# " + h)
print("1..%d" % len(tests))
sys.exit(1 if failed else 0)
