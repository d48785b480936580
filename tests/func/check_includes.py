#!/usr/bin/env python3
"""
check_includes.py [SRC]: the modules of SRC (a .c with its .h, by name)
and the modules each includes ("..." includes that are files of SRC).
Prints each circle, a module that leads back to itself through them,
and exits 1 if there is one: the layers must point one way, down.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    files = [os.path.normpath(os.path.join(d, n))
             for d, _, names in os.walk(root) for n in names
             if n.endswith((".c", ".h"))]
    known = set(files)
    edges = {}
    for f in files:
        m = os.path.splitext(f)[0]
        edges.setdefault(m, set())
        with open(f, errors="replace") as fh:
            text = fh.read()
        for h in INCLUDE.findall(text):
            p = os.path.normpath(os.path.join(os.path.dirname(f), h))
            if p in known and os.path.splitext(p)[0] != m:
                edges[m].add(os.path.splitext(p)[0])
    return edges


def circles(edges):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while not c or c[-1] != v:
                c.append(stack.pop())
                on.discard(c[-1])
            if len(c) > 1:
                found.append(sorted(c))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    edges = modules(sys.argv[1] if len(sys.argv) > 1 else "src")
    found = circles(edges)
    for c in found:
        print("a circle of includes among: " + " ".join(c))
    print(f"{len(edges)} modules, "
          f"{sum(map(len, edges.values()))} includes between them")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
