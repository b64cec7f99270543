"""The one reader of the project's imports, with `ast` (nothing is imported): the modules of a tree
and what each one imports.

bench/import_graph.py measures the graph with it, and the tests that hold the layers
(tests/test_architecture.py, tests/app/test_import_floors.py) and the walk of one submission
(tests/test_walk.py) read the same imports, so a rule and its measure cannot disagree on what an
import is. What counts: every import statement of a file, late ones (inside a function) and
type-only ones (under `if TYPE_CHECKING:`) too, with relative ones made absolute. `from a import b`
names `a`, and `a.b` as well where that is a module of the tree (importing it runs both).

Scripts here import it by file name (`import import_reader`); so do the tests (pytest's
`pythonpath` and mypy's `mypy_path` both hold bench/).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The project's own code: the folders whose imports the layer rules are about.
PACKAGES = ("flashjudge", "kernels", "testcases", "worker", "app", "flashjudge_cli")


@dataclass(frozen=True)
class Import:
    name: str  # the module named, absolute (`app.judging.lifecycle`, `fastapi`)
    line: int  # of the import statement, 1-based
    type_only: bool  # under `if TYPE_CHECKING:`: it never runs, but a reader still follows it


def module_name(path: Path) -> str:
    """The dotted name of a file given relative to its tree's root: app/db/__init__.py is app.db."""
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tree_modules(root: Path = REPO, packages: Iterable[str] = PACKAGES,
                 skip: Collection[str] = ()) -> dict[str, Path]:
    """Every module under the packages: its dotted name -> its file. A file under a folder named
    in `skip` (anywhere in its path: "migrations") is left out."""
    return {module_name(path.relative_to(root)): path for package in packages
            for path in sorted((root / package).rglob("*.py"))
            if not skip or not set(path.relative_to(root).parts) & set(skip)}


def read_imports(path: Path, module: str, known: Collection[str] = ()) -> list[Import]:
    """The imports of one file, in the order of the file. `module` is the file's own dotted name
    (relative imports are read against its package); `known` holds the modules of the tree, to
    tell `from a import b` where b is a module from one where it is a name defined in a."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = type_only_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(tree):
        for name in named_modules(node, package, known):
            found.append(Import(name, getattr(node, "lineno", 0), id(node) in guarded))
    return sorted(found, key=lambda i: i.line)


def named_modules(node: ast.AST, package: str, known: Collection[str]) -> list[str]:
    """The modules one statement imports (none if it is no import statement)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = absolute(node, package)
    inner = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
    return [base, *inner] if base else inner


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` reads from: `from ..db import models` in app.core.x is
    app.db."""
    if node.level == 0:
        return node.module or ""
    parts = package.split(".") if package else []
    base = parts[:len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


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
