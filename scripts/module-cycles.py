#!/usr/bin/env python3
"""Cycles between the modules of a crate, read from its `use` paths.

Usage: scripts/module-cycles.py [SRC_DIR] [--within PREFIX] [--folders]

Each .rs file is a module (`mod.rs` is its folder's); an edge A -> B is a
`crate::b::...` or `super::...` path in A's code naming B (comments and the trailing
`#[cfg(test)] mod tests` are left out). Prints
the strongly connected components with more than one module, smallest
first; `--within drain` keeps only cycles whose every module is under
`drain`. `--folders` prints instead the pairs of top-level folders that
import each other (a module of each names a module of the other), with one
such import each way. Exit 0 always: it reports, it does not judge.
"""

import os
import re
import sys


def modules(src):
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            out["::".join(rel)] = path
    return out


PATH = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*?)\}", re.S)


def resolve(me, is_dir_mod, path, known):
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    else:
        # `super` is the parent of this module, whether it is a file or a
        # folder's mod.rs.
        base = me.split("::") if me else []
        rest = parts
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
    # The longest prefix that is a module.
    best = None
    for i in range(len(rest), -1, -1):
        cand = "::".join(base + rest[:i])
        if cand in known:
            best = cand
            break
    return best


def edges(mods):
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        text = open(path, encoding="utf-8").read()
        # Unit tests (by convention the file's last item) see the module
        # from inside, and comments name modules without using them.
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        is_dir = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        paths = set(PATH.findall(text))
        for prefix, inner in GROUP.findall(text):
            for item in re.split(r"[,\s]+", inner):
                item = item.strip().split(" as ")[0].strip("{} ")
                if item and item != "self":
                    paths.add(f"{prefix}::{item}")
                elif item == "self":
                    paths.add(prefix)
        for p in paths:
            t = resolve(m, is_dir, p, mods)
            if t is not None and t != m:
                graph[m].add(t)
    return graph


def sccs(graph):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder_pairs(src, graph):
    """Top-level folders importing each other, with an example each way."""

    def folder(m):
        top = m.split("::")[0] if m else ""
        return top if os.path.isdir(os.path.join(src, top)) and top else None

    way = {}
    for a, targets in graph.items():
        for b in targets:
            fa, fb = folder(a), folder(b)
            if fa and fb and fa != fb:
                way.setdefault((fa, fb), (a, b))
    return sorted(
        (x, y, way[(x, y)], way[(y, x)]) for (x, y) in way if x < y and (y, x) in way
    )


def main():
    args = sys.argv[1:]
    folders = "--folders" in args
    if folders:
        args.remove("--folders")
    within = None
    if "--within" in args:
        i = args.index("--within")
        within = args[i + 1]
        del args[i : i + 2]
    src = args[0] if args else "src"
    mods = modules(src)
    # A parent module (mod.rs) re-exporting its children is not a cycle of
    # concerns: drop edges from a folder's mod.rs into its own children.
    graph = edges(mods)
    for m in graph:
        graph[m] = {t for t in graph[m] if not (m and t.startswith(m + "::")) and t != ""}
    if folders:
        pairs = folder_pairs(src, graph)
        print(f"{len(pairs)} folder pairs of {src} import each other")
        for x, y, there, back in pairs:
            print(f"{x} <-> {y}: {there[0]} -> {there[1]}; {back[0]} -> {back[1]}")
        return
    comps = [c for c in sccs(graph) if len(c) > 1]
    if within:
        comps = [c for c in comps if all(x == within or x.startswith(within + "::") for x in c)]
    comps.sort(key=len)
    if not comps:
        print(f"no cycles among {len(mods)} modules of {src}" + (f" within {within}" if within else ""))
    for c in comps:
        print(f"cycle of {len(c)}: " + " ".join(c))


if __name__ == "__main__":
    main()
