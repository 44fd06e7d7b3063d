#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# repair/'s files include one another without circles: the graph of
# '#include "repair/<x>.h"' lines is derived from the sources (a file x.c
# and its header x.h are one node, x; an include of y.h from either is an
# edge x -> y) and every strongly connected component of more than one
# node is a circle, reported with its members: any circle fails.  (The
# decision table, fix.c, includes the phases' headers; a phase reaches
# the table through rules.h alone.)  Every repair .c but main.c has its
# own header.  Prints TAP.
import os
import re
import sys

top = sys.argv[1]
rdir = os.path.join(top, "repair")
INCLUDE = re.compile(r'^\s*#\s*include\s+"repair/([A-Za-z0-9_]+)\.h"', re.M)
n = 0


def tap(ok, what, directive=""):
    global n
    n += 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", n, what, directive))


def circles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph, comp):
    """One circle through comp's first member, for the message."""
    start = min(comp)
    seen, trail = {start}, [start]

    def walk(v):
        for w in sorted(graph.get(v, ())):
            if w == start and len(trail) > 1:
                return True
            if w in comp and w not in seen:
                seen.add(w)
                trail.append(w)
                if walk(w):
                    return True
                trail.pop()
        return False

    walk(start)
    return " -> ".join(trail + [start])


# the finder itself finds a made-up circle and nothing in a made-up chain
probe = circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
tap(probe == [{"a", "b", "c"}] and not circles({"a": {"b"}, "b": {"c"}}),
    "the circle finder finds a -> b -> c -> a and no circle in a chain")

graph, files, edges = {}, 0, 0
for name in sorted(os.listdir(rdir)):
    stem, ext = os.path.splitext(name)
    if ext not in (".c", ".h"):
        continue
    files += 1
    text = open(os.path.join(rdir, name), encoding="utf-8").read()
    graph.setdefault(stem, set())
    for dep in INCLUDE.findall(text):
        if dep != stem:
            graph[stem].add(dep)
            edges += 1
tap(files >= 20 and edges >= 20,
    "repair/'s include graph derived (%d files, %d nodes, %d includes)" % (files, len(graph), edges))

missing = sorted(v for v in graph if v != "main" and
                 os.path.exists(os.path.join(rdir, v + ".c")) and
                 not os.path.exists(os.path.join(rdir, v + ".h")))
tap(not missing, "every repair .c but main.c has its own header%s" %
    (" (missing: %s)" % ", ".join(missing) if missing else ""))

found = circles(graph)
tap(not found, "no include circle among repair/'s files%s" %
    ("" if not found else ": " + "; ".join(path_in(graph, c) for c in found)))
for c in found:
    print("#   circle of %s" % ", ".join(sorted(c)))
print("1..%d" % n)
