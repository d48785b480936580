#!/usr/bin/env python3
"""
check_includes.py [SRC]: the modules of SRC (a .c with its .h, by name)
and the modules each includes ("..." includes that are files of SRC,
named from the including file's folder or from SRC, as the build's
-iquote src finds them). Prints each circle, a module that leads back
to itself through them, and each circle among SRC's folders (a folder
that leads back to itself through its files' includes); exits 1 if
there is one: the layers must point one way, down.
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
            for base in (os.path.dirname(f), root):
                p = os.path.normpath(os.path.join(base, h))
                if p in known:
                    break
            if p in known and os.path.splitext(p)[0] != m:
                edges[m].add(os.path.splitext(p)[0])
    return edges


def folders(edges, root):
    """The same graph between the folders right under root."""
    def folder(m):
        rel = os.path.relpath(m, root)
        return rel.split(os.sep)[0] if os.sep in rel else "."

    out = {}
    for a, bs in edges.items():
        fa = folder(a)
        out.setdefault(fa, set())
        for b in bs:
            if folder(b) != fa:
                out[fa].add(folder(b))
    return out


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
    root = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else "src")
    edges = modules(root)
    found = circles(edges)
    for c in found:
        print("a circle of includes among: " + " ".join(c))
    by_folder = folders(edges, root)
    folder_circles = circles(by_folder)
    for c in folder_circles:
        print("a circle of includes among the folders: " + " ".join(c))
    print(f"{len(edges)} modules, "
          f"{sum(map(len, edges.values()))} includes between them; "
          f"{len(by_folder)} folders, "
          f"{sum(map(len, by_folder.values()))} ways between them")
    return 1 if found or folder_circles else 0


if __name__ == "__main__":
    sys.exit(main())
