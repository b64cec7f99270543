"""The layering of docs/architecture.md, checked: a broken import rule fails here, not in review.

Reads every module's imports with `ast` (no import needed), and imports every module in a fresh
interpreter to check that importing does nothing but define.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "worker", "kernels", "testcases", "flashjudge", "flashjudge_cli")
# modules that exist to be loaded by a tool and build its object on import (Celery's CLI, Alembic)
ENTRY_MODULES = {"app.control.entry", "worker.celery_adapter.entry", "app.migrations.env"}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(path: Path) -> set[str]:
    """Top-level names of absolute imports, anywhere in the module (late imports count too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def offenders(prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{m} imports {n}" for m, p in modules().items()
                  if m == prefix or m.startswith(prefix + ".") for n in imported(p)
                  if n.split(".")[0] in forbidden or any(n.startswith(f + ".") for f in forbidden))


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
    outside = sorted(f"{m} imports {n}" for m, p in modules().items()
                     if m.startswith("flashjudge.contract") for n in imported(p)
                     if n.split(".")[0] not in STDLIB and not n.startswith("flashjudge.contract"))
    assert outside == []


def test_the_pipeline_and_kernels_know_no_framework() -> None:
    """kernelbot's rule: the judging core runs without Celery or FastAPI (the adapter is thin)."""
    core = [m for m in modules() if m.startswith(("worker.", "kernels", "testcases"))
            and not m.startswith("worker.celery_adapter")]
    frameworks = ("celery", "fastapi", "starlette", "sqlalchemy", "kombu")
    bad = sorted(f"{m} imports {n}" for m in core for n in imported(modules()[m])
                 if n.split(".")[0] in frameworks)
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
