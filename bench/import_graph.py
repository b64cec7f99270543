"""The project's import graph, measured: modules per folder, arrows running back up against the
declared floors, import circles, the longest import chain.

These figures were first asked for when worker/ became packages; the aims since: no arrow back
up, no circle, and no folder over about 15 modules:
`python bench/import_graph.py [PACKAGE ...]` (default: every package of the project). Only imports
between the project's own modules count as arrows (read by bench/import_reader.py, as the
architecture tests read them); an import under `if TYPE_CHECKING:` is an arrow marked "type only"
(it never runs, but a reader still has to follow it).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from import_reader import REPO, module_name, read_imports, tree_modules

# The declared order, lowest first, and the one place it is declared (docs/architecture.md
# describes it): a module may import only from its own floor or below. Inside worker/ and app/,
# each part (a sub-package or a top-level module: the tree says which there are) has a floor of
# its own, in the order of ORDER; the package's own __init__ sits below all its parts. A part the
# tree has and ORDER does not place (a new package), or a name ORDER places that the tree lacks (a
# moved one), fails tests/test_architecture.py: place it here.
FLOORS = ("flashjudge", "kernels", "testcases", "worker", "app", "flashjudge_cli")
ORDER = {
    "worker": ("machine", "cpus", "gpus", "slurm_job", "sandbox", "running", "harness",
               "languages", "pipeline", "feedback", "timing", "settings", "celery_adapter"),
    "app": ("logging_setup", "core", "schemas", "charts", "db", "migrations", "metrics",
            "changefeed", "accounts", "notices", "course", "submissions", "custom_runs",
            "upkeep", "results", "similarity", "scoreboard", "live", "wiring", "web", "api",
            "pages", "main", "control"),
}
FOLDER_LIMIT = 15  # the aim: no folder over about this many modules
Edges = dict[str, dict[str, bool]]  # module -> {imported module: type only?}


def imports_of(path: Path, module: str, known: set[str]) -> dict[str, bool]:
    """The project modules a file imports, each with whether only type checking imports it."""
    found: dict[str, bool] = {}
    for imported in read_imports(path, module, known):
        name = imported.name
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            found[name] = found.get(name, True) and imported.type_only
    return found


def graph(roots: Iterable[str], root: Path = REPO) -> Edges:
    files = tree_modules(root, roots, skip=("migrations",))
    known = set(files)
    edges = {m: imports_of(p, m, known) for m, p in files.items()}
    return {m: {n: t for n, t in ns.items() if n != m} for m, ns in edges.items()}


def parts(package: str, root: Path = REPO) -> set[str]:
    """The parts of a package as the tree has them: its sub-packages and top-level modules."""
    return {m.split(".")[1] for m in tree_modules(root, (package,)) if m.count(".") >= 1}


def unplaced(root: Path = REPO) -> dict[str, list[str]]:
    """Per package of ORDER: its parts ORDER does not place, and names ORDER places that the
    tree does not have ("-name"). Empty lists everywhere when the order is whole."""
    return {package: sorted(parts(package, root) - set(order))
            + sorted(f"-{name}" for name in set(order) - parts(package, root))
            for package, order in ORDER.items()}


def floor(module: str) -> tuple[int, int] | None:
    """(floor, floor of its part) of a module; None outside the floors or in an unplaced part."""
    names = module.split(".")
    if names[0] not in FLOORS:
        return None
    order = ORDER.get(names[0])
    if order is None or len(names) == 1:
        return FLOORS.index(names[0]), -1
    return (FLOORS.index(names[0]), order.index(names[1])) if names[1] in order else None


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
    arrows: dict[str, set[str]] = {}
    for m, ns in edges.items():
        if m.startswith(root + "."):
            arrows.setdefault(part(m), set()).update(
                part(n) for n in ns if n.startswith(root + ".") and part(n) != part(m))
    return arrows


def runtime(edges: Edges, root: str = "") -> dict[str, set[str]]:
    """The arrows that run at import or call time (no type-only ones), optionally inside a root."""
    def inside(module: str) -> bool:
        return not root or module.split(".")[0] == root
    return {m: {n for n, t in ns.items() if not t and inside(n)}
            for m, ns in edges.items() if inside(m)}


def folder_sizes(roots: Iterable[str], root: Path = REPO) -> Counter[str]:
    """Modules per folder (a package's __init__ counts in its own folder), migrations left out."""
    return Counter(module_name(path.parent.relative_to(root) / "__init__.py")
                   for path in tree_modules(root, roots, skip=("migrations",)).values())


def print_folders(edges: Edges, roots: tuple[str, ...]) -> None:
    folders = folder_sizes(roots)
    print("| folder | modules |\n|---|---|")
    for folder, count in sorted(folders.items()):
        print(f"| {folder} | {count} |")
    for root in roots:
        inner = sum(1 for m, ns in edges.items() if m.split(".")[0] == root for n in ns
                    if n.split(".")[0] == root)
        print(f"{root}: {sum(1 for m in edges if m.split('.')[0] == root)} modules, "
              f"{inner} import arrows inside")
    biggest, most = max(folders.items(), key=lambda item: (item[1], item[0]))
    over = [f"{f} ({n})" for f, n in folders.most_common() if n > FOLDER_LIMIT]
    print(f"folders: {len(folders)}, biggest {biggest} with {most} modules; "
          f"over {FOLDER_LIMIT}: {len(over)}{': ' if over else ''}{', '.join(over)}")


def print_layering(edges: Edges) -> None:
    for package, names in unplaced().items():
        if names:
            print(f"{package}/ parts ORDER does not place (not judged; '-': placed, not in the "
                  f"tree): {', '.join(names)}")
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
