#!/usr/bin/env python3
"""Cycles between the modules of a crate, read from its `use` paths.

Usage: scripts/module-cycles.py [SRC_DIR] [--within PREFIX] [--folders]
       scripts/module-cycles.py --check ALLOWED SRC_DIR...

Each .rs file is a module (`mod.rs` is its folder's); an edge A -> B is a
`crate::b::...` or `super::...` path in A's code naming B (comments and the trailing
`#[cfg(test)] mod tests` are left out). A path through a folder's
re-export (`crate::drain::run`, where drain/mod.rs has `pub(crate) use
session::run`) is an edge to the module that defines it (drain::session),
not to the folder: otherwise a cycle through a re-export goes unseen, as
the edges from a folder's mod.rs into its own children are dropped (a
parent naming its children is not a cycle of concerns).

Prints the strongly connected components with more than one module,
smallest first; `--within drain` keeps only cycles whose every module is
under `drain`. `--folders` prints instead the pairs of top-level folders
that import each other (a module of each names a module of the other), with
one such import each way. Exit 0: it reports.

`--check ALLOWED SRC_DIR...` judges (CI runs it): it exits 1 when a source
directory has a cycle or a folder pair that ALLOWED does not list, and when
ALLOWED lists one that is gone (so the list only shrinks, and is edited in
the change that mends it). ALLOWED holds lines `SRC_DIR cycle A B ...` and
`SRC_DIR folders X Y`, `#` comments.
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


def resolve(me, is_dir_mod, path, known, exported=None):
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
    # The longest prefix that is a module, then through its re-exports.
    for i in range(len(rest), -1, -1):
        cand = "::".join(base + rest[:i])
        if cand in known:
            name = rest[i] if i < len(rest) else None
            seen = set()
            while exported and name and name in exported.get(cand, {}) and cand not in seen:
                seen.add(cand)
                cand = exported[cand][name]
            return cand
    return None


def code(path):
    """A module's code: unit tests (by convention the file's last item) see
    the module from inside, and comments name modules without using them."""
    text = open(path, encoding="utf-8").read()
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    return re.sub(r"//[^\n]*", "", text)


REEXPORT = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);")


def use_paths(tree):
    """The paths a `use` tree names, with the name each is known by:
    `a::{b, c as d}` gives (a::b, b) and (a::c, d)."""
    tree = re.sub(r"\s+", " ", tree).strip()
    m = re.match(r"^(.*?)::\{(.*)\}$", tree)
    if m:
        prefix, inner = m.group(1), m.group(2)
        depth, part, parts = 0, "", []
        for ch in inner:
            depth += ch == "{"
            depth -= ch == "}"
            if ch == "," and depth == 0:
                parts.append(part)
                part = ""
            else:
                part += ch
        parts.append(part)
        for p in parts:
            p = p.strip()
            if p and p != "self" and p != "*":
                yield from use_paths(f"{prefix}::{p}")
        return
    path, _, alias = tree.partition(" as ")
    path = path.strip()
    if path.endswith("*"):
        return
    yield path, (alias.strip() or path.split("::")[-1])


def reexports(mods):
    """Per module, the names it re-exports and the module each comes from."""
    out = {}
    for m, path in mods.items():
        for tree in REEXPORT.findall(code(path)):
            for p, name in use_paths(tree):
                parts = p.split("::")
                if parts[0] == "self":
                    parts = parts[1:]
                if parts[0] not in ("crate", "super"):
                    # A path from this module: its child, as Rust 2018 reads it.
                    parts = ["crate"] + (m.split("::") if m else []) + parts
                src = resolve(m, True, "::".join(parts), mods)
                if src is not None and src != m:
                    out.setdefault(m, {})[name] = src
    return out


def edges(mods):
    graph = {m: set() for m in mods}
    exported = reexports(mods)
    for m, path in mods.items():
        text = code(path)
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
            t = resolve(m, is_dir, p, mods, exported)
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


def findings(src):
    """The cycles and folder pairs of a source directory, as ALLOWED lines."""
    mods = modules(src)
    graph = without_children(edges(mods))
    out = set()
    for c in sccs(graph):
        if len(c) > 1:
            out.add(f"{src} cycle " + " ".join(c))
    for x, y, _, _ in folder_pairs(src, graph):
        out.add(f"{src} folders {x} {y}")
    return out


def without_children(graph):
    # A parent module (mod.rs) naming its children is not a cycle of
    # concerns: drop edges from a folder's mod.rs into its own children.
    return {
        m: {t for t in ts if not (m and t.startswith(m + "::")) and t != ""}
        for m, ts in graph.items()
    }


def check(allowed_file, srcs):
    allowed = set()
    for line in open(allowed_file, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if line:
            allowed.add(" ".join(line.split()))
    found = set().union(*(findings(s) for s in srcs))
    checked = {a for a in allowed if a.split()[0] in srcs}
    new, gone = sorted(found - allowed), sorted(checked - found)
    for f in new:
        print(f"new: {f}")
    for g in gone:
        print(f"mended, take it off {allowed_file}: {g}")
    if not new and not gone:
        print(f"module shape holds: {len(found)} known, listed in {allowed_file}")
    return 1 if new or gone else 0


def main():
    args = sys.argv[1:]
    if "--check" in args:
        i = args.index("--check")
        allowed = args[i + 1]
        del args[i : i + 2]
        sys.exit(check(allowed, args or ["src"]))
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
    graph = without_children(edges(mods))
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
