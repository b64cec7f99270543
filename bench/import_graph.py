"""The project's import graph, measured: modules per folder, arrows running back up against the
declared floors, import circles, the longest import chain.

Issue 9 asked for these figures before and after worker/ became packages, issue 18 for the arrows
back up (target 0) and the circles (target 0). Run it from the repository root:
`python bench/import_graph.py [PACKAGE ...]` (default: every package of the project). Only imports
between the project's own modules count as arrows; an import under `if TYPE_CHECKING:` is an arrow
marked "type only" (it never runs, but a reader still has to follow it).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

# The floors, lowest first (docs/architecture.md): a module may import only from its own floor or
# below. Inside worker/ and app/ their parts have floors of their own, in this order; the package's
# own __init__ sits below all its parts.
FLOORS = ("flashjudge", "kernels", "testcases", "worker", "app", "flashjudge_cli")
PARTS = {
    "worker": ("settings", "sandbox", "running", "harness", "languages", "pipeline", "feedback",
               "timing", "celery_adapter"),
    "app": ("logging_setup", "core", "schemas", "charts", "history_chart", "errormap_svg", "db",
            "migrations", "metrics", "live", "standing", "similarity", "queue", "services",
            "control_tasks", "control_entry", "routes", "pages", "main"),
}
Edges = dict[str, dict[str, bool]]  # module -> {imported module: type only?}


def module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def type_only_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`)."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        name = getattr(node.test, "id", None) or getattr(node.test, "attr", None)
        if name == "TYPE_CHECKING":
            guarded |= {id(n) for child in node.body for n in ast.walk(child)}
    return guarded


def imported_names(node: ast.AST) -> list[str]:
    """`from a.b import c` names a.b.c (kept if it is a module) and a.b."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [f"{node.module}.{a.name}" for a in node.names] + [node.module]
    return []


def imports_of(path: Path, known: set[str]) -> dict[str, bool]:
    """The project modules a file imports, each with whether only type checking imports it."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = type_only_nodes(tree)
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        for name in imported_names(node):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found[name] = found.get(name, True) and id(node) in guarded
    return found


def graph(roots: tuple[str, ...]) -> Edges:
    files = {module_name(p): p for r in roots for p in Path(r).rglob("*.py")
             if "migrations" not in p.parts}
    known = set(files)
    edges = {m: imports_of(p, known) for m, p in files.items()}
    return {m: {n: t for n, t in ns.items() if n != m} for m, ns in edges.items()}


def floor(module: str) -> tuple[int, int] | None:
    """(floor, floor of its part) of a module; None where its part has no declared floor."""
    parts = module.split(".")
    if parts[0] not in FLOORS:
        return None
    order = PARTS.get(parts[0])
    if order is None or len(parts) == 1:
        return FLOORS.index(parts[0]), -1
    return (FLOORS.index(parts[0]), order.index(parts[1])) if parts[1] in order else None


def runs_up(m: str, n: str) -> bool:
    """Does the arrow m -> n reach a higher floor, or a higher part of m's own package?"""
    fm, fn = floor(m), floor(n)
    if fm is None or fn is None:
        return False
    if fm[0] != fn[0]:
        return fn[0] > fm[0]
    return m.split(".")[1:2] != n.split(".")[1:2] and fn[1] > fm[1]


def upward(edges: Edges) -> list[tuple[str, str, bool]]:
    """The arrows running back up, each with whether only type checking follows it."""
    return sorted((m, n, t) for m, ns in edges.items() for n, t in ns.items() if runs_up(m, n))


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in edges.get(m, ()):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            component: list[str] = []
            while not component or component[-1] != m:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for m in sorted(edges):
        if m not in index:
            visit(m)
    return sorted(found)


def condensed(edges: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """The graph with each circle made one node, named `{a | b}`: a graph without circles."""
    name = {m: "{" + " | ".join(c) + "}" for c in circles(edges) for m in c}
    result: dict[str, set[str]] = {}
    for m, ns in edges.items():
        result.setdefault(name.get(m, m), set()).update(
            name.get(n, n) for n in ns if name.get(n, n) != name.get(m, m))
    return result


def longest_chain(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """The longest path of imports; a circle counts as one level."""
    dag = condensed(edges)
    best: dict[str, tuple[str, ...]] = {}

    def chain(m: str) -> tuple[str, ...]:
        if m not in best:
            below: tuple[str, ...] = max((chain(n) for n in sorted(dag.get(m, ()))), key=len,
                                         default=())
            best[m] = (m, *below)
        return best[m]

    longest: tuple[str, ...] = max((chain(m) for m in sorted(dag)), key=len, default=())
    return list(longest)


def folder_graph(edges: Edges, root: str) -> dict[str, set[str]]:
    """Imports between the parts of a package (its sub-packages and top-level modules)."""
    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])
    parts: dict[str, set[str]] = {}
    for m, ns in edges.items():
        if m.startswith(root + "."):
            parts.setdefault(part(m), set()).update(
                part(n) for n in ns if n.startswith(root + ".") and part(n) != part(m))
    return parts


def runtime(edges: Edges, root: str = "") -> dict[str, set[str]]:
    """The arrows that run at import or call time (no type-only ones), optionally inside a root."""
    def inside(module: str) -> bool:
        return not root or module.split(".")[0] == root
    return {m: {n for n, t in ns.items() if not t and inside(n)}
            for m, ns in edges.items() if inside(m)}


def print_folders(edges: Edges, roots: tuple[str, ...]) -> None:
    folders = Counter(m.rpartition(".")[0] or m for m in edges)
    print("| folder | modules |\n|---|---|")
    for folder, count in sorted(folders.items()):
        print(f"| {folder} | {count} |")
    for root in roots:
        inner = sum(1 for m, ns in edges.items() if m.split(".")[0] == root for n in ns
                    if n.split(".")[0] == root)
        print(f"{root}: {sum(1 for m in edges if m.split('.')[0] == root)} modules, "
              f"{inner} import arrows inside")


def print_layering(edges: Edges) -> None:
    undeclared = sorted({".".join(m.split(".")[:2]) for m in edges if floor(m) is None})
    if undeclared:
        print(f"parts without a declared floor (not judged): {', '.join(undeclared)}")
    up = upward(edges)
    print(f"arrows running back up: {len(up)} ({sum(t for *_, t in up)} type only)")
    for m, n, t in up:
        print(f"  {m} -> {n}{' (type only)' if t else ''}")
    found = circles(edges)
    print(f"import circles: {len(found)}")
    for circle in found:
        inner = [f"{m} -> {n}" for m in circle for n, t in edges[m].items() if n in circle and t]
        print(f"  {' <-> '.join(circle)}"
              + (f" (held by type-only {', '.join(inner)})" if inner else ""))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=list(FLOORS))
    roots = tuple(parser.parse_args(argv).packages)
    edges = graph(roots)
    print_folders(edges, roots)
    print_layering(edges)
    chain = longest_chain(runtime(edges))
    print(f"longest import chain: {len(chain)} levels: {' -> '.join(chain)}")
    chain = longest_chain(runtime(edges, "worker"))
    print(f"longest worker/ import chain: {len(chain)} levels: {' -> '.join(chain)}")
    folder_edges = folder_graph(edges, "worker")
    arrows = sum(len(v) for v in folder_edges.values())
    top = longest_chain(folder_edges)
    print(f"worker/ parts: {len(folder_edges)}, {arrows} arrows between them, longest chain "
          f"{len(top)}: {' -> '.join(top)}")


if __name__ == "__main__":
    main(sys.argv[1:])
