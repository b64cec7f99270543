"""The project's import graph, measured: modules per folder, import arrows, the longest chain.

Issue 9 asked for these figures before and after worker/ became packages; run it from the
repository root: `python bench/import_graph.py [PACKAGE ...]` (default: app worker kernels testcases
flashjudge). Only imports between the project's own modules count as arrows.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from functools import cache
from pathlib import Path

ROOTS = ("app", "worker", "kernels", "testcases", "flashjudge")


def module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The project modules a file imports (`from a.b import c` counts a.b.c if a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def graph(roots: tuple[str, ...]) -> dict[str, set[str]]:
    files = {module_name(p): p for r in roots for p in Path(r).rglob("*.py")
             if "migrations" not in p.parts}
    known = set(files)
    return {m: imports_of(p, known) - {m} for m, p in files.items()}


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    @cache
    def chain(m: str, seen: frozenset[str]) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for n in edges.get(m, ()):
            if n not in seen:
                c = chain(n, seen | {n})
                best = c if len(c) > len(best) else best
        return (m, *best)
    longest: tuple[str, ...] = max((chain(m, frozenset({m})) for m in edges), key=len, default=())
    return list(longest)


def main(argv: list[str]) -> None:
    roots = tuple(argv) or ROOTS
    edges = graph(roots)
    folders = Counter(m.rpartition(".")[0] or m for m in edges)
    print("| folder | modules |\n|---|---|")
    for folder, count in sorted(folders.items()):
        print(f"| {folder} | {count} |")
    for root in roots:
        inner = sum(1 for m, ns in edges.items() if m.startswith(root) for n in ns
                    if n.startswith(root))
        print(f"{root}: {sum(1 for m in edges if m.split('.')[0] == root)} modules, "
              f"{inner} import arrows inside")
    chain = longest_chain({m: {n for n in ns if n.split('.')[0] == 'worker'}
                           for m, ns in edges.items() if m.startswith("worker")})
    print(f"longest worker/ import chain: {len(chain)} levels: {' -> '.join(chain)}")
    folder_edges = folder_graph(edges, "worker")
    arrows = sum(len(v) for v in folder_edges.values())
    top = longest_chain(folder_edges)
    print(f"worker/ parts: {len(folder_edges)}, {arrows} arrows between them, longest chain "
          f"{len(top)}: {' -> '.join(top)}")


def folder_graph(edges: dict[str, set[str]], root: str) -> dict[str, set[str]]:
    """Imports between the parts of a package (its sub-packages and top-level modules)."""
    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])
    parts: dict[str, set[str]] = {}
    for m, ns in edges.items():
        if m.startswith(root + "."):
            parts.setdefault(part(m), set()).update(
                part(n) for n in ns if n.startswith(root + ".") and part(n) != part(m))
    return parts


if __name__ == "__main__":
    main(sys.argv[1:])
