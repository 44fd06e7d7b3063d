#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README and doc/*.md say only what the tree backs: every repository
# path they name (tests/..., scripts/..., libfs/..., man/... and bare
# test file names in backquotes) exists; every option shown after an
# xfsx_* tool name is in that tool's --help; every finding code named is a
# row of the findings table (libfs/format/findings.def); no "issue N"
# references; the quick start is two commands that exist and are
# executable; every claim of the README's "What the tests prove" carries a
# (test: PATH) tag, and every tag anywhere names a test file that exists and
# a meson.build registers.
. "$XFSX_SRC/tests/lib.sh"

docs=("$XFSX_SRC/README.md" "$XFSX_SRC"/doc/*.md)
for t in check repair mkfs bulkstat undo; do
	bin="$XFSX_BUILD/$t/xfsx_$t"
	if [ -x "$bin" ]; then
		"$bin" --help >"$TMP/help.xfsx_$t" 2>&1
	else
		not_ok "xfsx_$t built (its --help is what the documents' options are checked against)"
	fi
done

# The checks, one result line each: "ok<TAB>name" or "not ok<TAB>name<TAB>detail"
python3 - "$XFSX_SRC" "$TMP" "${docs[@]}" >"$TMP/results" <<'PY'
import glob, os, re, sys

src, tmp, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
rel = lambda p: os.path.relpath(p, src)
out = []
def result(ok, name, detail=""):
    out.append(("ok" if ok else "not ok") + "\t" + name + ("\t" + detail if detail else ""))

texts = {rel(p): open(p, encoding="utf-8").read() for p in docs}
readme = texts["README.md"]

# 1. no "issue N" references
for name, text in texts.items():
    hits = [m.group(0) for m in re.finditer(r"\bissues?\s*#?\d+", text, re.I)]
    result(not hits, f"{name}: no 'issue N' references", ", ".join(hits[:5]))

# 2. every repository path named exists
roots = ("tests", "scripts", "libfs", "scan", "check", "repair", "mkfs", "bulkstat", "undo", "man", "doc")
path_re = re.compile(r"(?<![\w./-])((?:%s)/[\w./<>*-]*[\w*/])" % "|".join(roots))
for name, text in texts.items():
    base = os.path.dirname(os.path.join(src, name))
    missing, seen = [], 0
    for m in path_re.finditer(text):
        p = m.group(1)
        if "<" in p:            # a placeholder: tests/libfs/<folder>/
            continue
        seen += 1
        if "*" in p:
            if not glob.glob(os.path.join(src, p)):
                missing.append(p)
        elif not os.path.exists(os.path.join(src, p)):
            missing.append(p)
    # relative links between documents: (doc/check.md) from README, (check.md) or (../man/...) from doc/
    for m in re.finditer(r"\]\(([^)#:]+)\)", text):
        seen += 1
        if not os.path.exists(os.path.normpath(os.path.join(base, m.group(1)))):
            missing.append(m.group(1))
    result(not missing and seen > 0, f"{name}: the {seen} repository paths and links it names exist",
           "missing: " + ", ".join(sorted(set(missing))))

# bare file names in backquotes (`names.sh`, `corpus.py`, `test_write.c`): some file of the tree
tree = set()
for d in ("tests", "scripts", "libfs", "scan", "check", "repair", "mkfs", "bulkstat", "undo"):
    for dirpath, _, files in os.walk(os.path.join(src, d)):
        tree.update(files)
for name, text in texts.items():
    bare = set(re.findall(r"`([\w-]+\.(?:sh|py|c|h))`", text))
    missing = sorted(b for b in bare if b not in tree)
    result(not missing, f"{name}: the {len(bare)} bare file names in backquotes are files of the tree",
           "missing: " + ", ".join(missing))

# unit tests and fuzz targets named bare (`test_bmap`, `fuzz_dir`): a file, or a function of tests/
test_sources = ""
for f in glob.glob(os.path.join(src, "tests", "**", "*.c"), recursive=True):
    test_sources += open(f, encoding="utf-8", errors="replace").read()
for name, text in texts.items():
    bare = set(re.findall(r"`((?:test|fuzz)_\w+)`", text))
    missing = sorted(b for b in bare if b + ".c" not in tree
                     and re.search(r"\b" + b + r"\s*\(", test_sources) is None)
    result(not missing, f"{name}: the {len(bare)} unit tests and fuzz targets it names exist",
           "missing: " + ", ".join(missing))

# 3. every option shown after a tool's name is in that tool's --help
helps = {}
for t in ("check", "repair", "mkfs", "bulkstat", "undo"):
    try:
        helps["xfsx_" + t] = open(os.path.join(tmp, "help.xfsx_" + t)).read()
    except OSError:
        helps["xfsx_" + t] = None
tool_re = re.compile(r"(?<![\w-])(xfsx_(?:check|repair|mkfs|bulkstat|undo))\b(?!')")
opt_re = re.compile(r"(?<![\w./=-])(--?[A-Za-z][\w-]*)")
def in_help(opt, h):
    if opt.startswith("--"):
        return re.search(re.escape(opt) + r"(?![\w-])", h) is not None
    return re.search(r"(?:^|[\s,\[/])" + re.escape(opt) + r"(?![\w-])", h, re.M) is not None
shown = {t: {} for t in helps}
for name, text in texts.items():
    in_code, last_tool = False, None
    for line in text.splitlines():
        if line.startswith("```"):
            in_code, last_tool = not in_code, None
            continue
        found = list(tool_re.finditer(line))
        if in_code and not found and last_tool and re.match(r"\s+\[", line):
            # a synopsis continued on an indented line
            for o in opt_re.findall(line):
                shown[last_tool].setdefault(o, name)
            continue
        last_tool = None
        for m in found:
            tail = line[m.end():]
            # the command ends at a backquote, a pipe, a command separator, a comment, the next tool
            cut = re.search(r"`|\s\|\s|;|&&|\s#|\s{3,}|xfsx_", tail)
            if cut:
                tail = tail[:cut.start()]
            for o in opt_re.findall(tail):
                shown[m.group(1)].setdefault(o, name)
            last_tool = m.group(1) if in_code else None
    # a README paragraph opening with **xfsx_TOOL**: its options in backquotes are that tool's
    for para in re.split(r"\n\s*\n", text):
        m = re.match(r"\*\*(xfsx_\w+)\*\*", para)
        if m and m.group(1) in shown:
            for o in re.findall(r"`(--?[A-Za-z][\w-]*)[^`]*`", para):
                shown[m.group(1)].setdefault(o, name)
for t, opts in shown.items():
    h = helps[t]
    if h is None:
        result(False, f"{t}: options shown in the documents are in its --help", "no --help (not built)")
        continue
    missing = sorted(f"{o} ({where})" for o, where in opts.items() if not in_help(o, h))
    result(not missing, f"{t}: the {len(opts)} options shown after its name are in its --help",
           "not in --help: " + ", ".join(missing))

# 4. every finding code named is a row of the findings table
table = open(os.path.join(src, "libfs/format/findings.def")).read()
codes = set(re.findall(r'^FS_CODE\([A-Z0-9_]+, [A-Z0-9_]+, "([a-z0-9_]+\.[a-z0-9_]+)"', table, re.M))
families = {c.split(".")[0] for c in codes}
# dotted names that are not codes: a program, and keys of the JSON summary
not_code_families = {"mkfs", "summary", "readahead", "filesystem"}
exts = ("c", "h", "py", "sh", "md", "in", "json", "8", "img", "undo", "txt", "build", "log")
for name, text in texts.items():
    named = set()
    for tok in re.findall(r"`([a-z][a-z0-9_]*\.(?:[a-z0-9_]+|\*))`", text):
        if tok.split(".")[0] in not_code_families or tok.split(".")[1] in exts:
            continue
        named.add(tok)
    bad = sorted(c for c in named
                 if not (c in codes or (c.endswith(".*") and c[:-2] in families)))
    result(not bad, f"{name}: the {len(named)} finding codes it names are rows of the findings table",
           "unknown: " + ", ".join(bad))
result(len(codes) > 100, f"the findings table read: {len(codes)} codes")

# 5. the quick start: two commands, both executable
qs = re.search(r"^## Quick start\n(.*?)^## ", readme, re.S | re.M)
block = re.search(r"```sh\n(.*?)```", qs.group(1), re.S) if qs else None
cmds = [l.split()[0] for l in block.group(1).splitlines() if l.strip()] if block else []
result(len(cmds) == 2, f"README: the quick start is two commands ({' '.join(cmds) or 'none found'})")
for c in cmds:
    p = os.path.join(src, c)
    result(os.path.isfile(p) and os.access(p, os.X_OK), f"README: quick start command {c} exists and is executable")

# 6. claims tied to tests
def registered(t):
    """a test file its directory's meson.build runs: named there as 'stem' or 'stem.ext' (not in a comment)"""
    mb = os.path.join(src, os.path.dirname(t), "meson.build")
    if not os.path.isfile(os.path.join(src, t)) or not os.path.isfile(mb):
        return False
    code = re.sub(r"#.*", "", open(mb).read())
    stem = os.path.splitext(os.path.basename(t))[0]
    return "'" + stem + "'" in code or "'" + os.path.basename(t) + "'" in code
tag_re = re.compile(r"\(test: ([^)\s]+)\)")
for name, text in texts.items():
    tags = tag_re.findall(text)
    bad = sorted(set(t for t in tags if not registered(t)))
    if tags or name == "README.md":
        result(tags and not bad, f"{name}: the {len(tags)} (test: ...) tags name test files meson runs",
               "missing or not registered: " + ", ".join(bad))
claims = re.search(r"^## What the tests prove\n(.*?)^## ", readme, re.S | re.M)
bullets = re.findall(r"^- (.*)$", claims.group(1), re.M) if claims else []
untagged = [b[:60] for b in bullets if not tag_re.search(b)]
result(len(bullets) > 0 and not untagged,
       f"README: every one of the {len(bullets)} claims under 'What the tests prove' names its test",
       "untagged: " + " | ".join(untagged))

print("\n".join(out))
PY
rc=$?
check "the documents were read and judged (python exit $rc)" [ $rc -eq 0 ]
while IFS=$'\t' read -r verdict name detail; do
	if [ "$verdict" = ok ]; then
		ok "$name"
	else
		not_ok "$name${detail:+ ($detail)}"
	fi
done <"$TMP/results"
tap_done
