"""The layering of docs/architecture.md, checked: a broken import rule fails here, not in review.

Reads every module's imports with `ast` (bench/import_reader.py: no import needed), and imports
every module in a fresh interpreter to check that importing does nothing but define.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import import_graph
import pytest
from import_reader import PACKAGES, Import, read_imports, tree_modules

REPO = Path(__file__).resolve().parents[1]
# modules that exist to be loaded by a tool and build its object on import (Celery's CLI, Alembic)
ENTRY_MODULES = {"app.control.entry", "worker.celery_adapter.entry", "app.migrations.env"}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


@cache
def modules() -> dict[str, Path]:
    return tree_modules(REPO, PACKAGES)


def imported(module: str, path: Path) -> list[Import]:
    """Every import of the module, late and type-only ones too (bench/import_reader.py)."""
    return read_imports(path, module, modules())


def offenders(prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{p.relative_to(REPO)}:{i.line} imports {i.name}"
                  for m, p in modules().items() if m == prefix or m.startswith(prefix + ".")
                  for i in imported(m, p) if i.name.split(".")[0] in forbidden)


@pytest.mark.parametrize("layer, forbidden", [
    ("flashjudge", ("app", "worker", "kernels", "testcases", "flashjudge_cli")),
    ("app", ("worker", "flashjudge_cli")),
    ("worker", ("app", "flashjudge_cli")),
    ("kernels", ("app", "worker", "testcases", "flashjudge_cli", "fastapi", "celery")),
    ("testcases", ("app", "worker", "flashjudge_cli", "fastapi", "celery")),
])
def test_layers_import_only_downwards(layer: str, forbidden: tuple[str, ...]) -> None:
    assert offenders(layer, forbidden) == []


def test_the_contract_is_standard_library_only() -> None:
    outside = sorted(f"{m}:{i.line} imports {i.name}" for m, p in modules().items()
                     if m.startswith("flashjudge.contract") for i in imported(m, p)
                     if i.name.split(".")[0] not in STDLIB
                     and not i.name.startswith("flashjudge.contract"))
    assert outside == []


def test_the_pipeline_and_kernels_know_no_framework() -> None:
    """kernelbot's rule: the judging core runs without Celery or FastAPI (the adapter is thin)."""
    core = [m for m in modules() if m.startswith(("worker.", "kernels", "testcases"))
            and not m.startswith("worker.celery_adapter")]
    frameworks = ("celery", "fastapi", "starlette", "sqlalchemy", "kombu")
    bad = sorted(f"{m}:{i.line} imports {i.name}" for m in core
                 for i in imported(m, modules()[m]) if i.name.split(".")[0] in frameworks)
    assert bad == []


IMPORT_ALL = """
import importlib, json, os, signal, sys, threading
before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
after = {s: signal.getsignal(s) for s in before}
print(json.dumps({"files": sorted(os.listdir(".")), "threads": threading.active_count(),
                  "signals": [str(s) for s in before if before[s] != after[s]]}))
"""


def test_importing_any_module_does_nothing_but_define(tmp_path: Path) -> None:
    names = sorted(set(modules()) - ENTRY_MODULES)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, json.dumps(names)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"files": [], "threads": 1, "signals": []}


def test_no_import_runs_back_up_and_none_goes_round() -> None:
    """bench/import_graph.py's floors (docs/architecture.md's order): 0 arrows up, 0 circles."""
    edges = import_graph.graph(import_graph.FLOORS)
    assert import_graph.upward(edges) == []
    assert import_graph.circles(edges) == []


def test_every_part_of_the_tree_has_its_place_in_the_declared_order() -> None:
    """A new package of app/ or worker/ (or a moved one) is placed in import_graph.ORDER, or no
    arrow into it or out of it is judged; '-name' is a name ORDER places that the tree lacks."""
    assert sorted(import_graph.FLOORS) == sorted(PACKAGES)
    for order in import_graph.ORDER.values():
        assert len(set(order)) == len(order), f"placed twice: {order}"
    assert import_graph.unplaced() == {package: [] for package in import_graph.ORDER}


def test_the_order_check_sees_a_new_package_and_a_gone_one(tmp_path: Path) -> None:
    for path in ("app/__init__.py", "app/core/__init__.py", "app/fresh/__init__.py",
                 "app/fresh/rules.py", "app/main.py", "worker/__init__.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    found = import_graph.unplaced(tmp_path)["app"]
    assert "fresh" in found and "-db" in found
    assert "core" not in found and "main" not in found and "-core" not in found
