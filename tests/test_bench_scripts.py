"""The benchmark scripts still start: GPU ones run only on GPU nodes, where a stale import found
after a device machine was already paid for wastes the session (seen: bench/timing_fidelity.py,
bench/gpu_engine_check.sh and bench/gpu_feedback_check.sh named moved functions)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
FROM_IMPORT = re.compile(r"^\s*(?:import \w+(?:, \w+)*; )?from ((?:worker|kernels|testcases|app|"
                         r"flashjudge)[\w.]*) import ([\w, ]+(?: as \w+)?)", re.M)
ARGPARSE_SCRIPTS = sorted(p for p in BENCH.glob("*.py") if "ArgumentParser" in p.read_text())


def project_imports(text: str) -> list[tuple[str, str]]:
    """(module, name) of every `from <project module> import name` in a script's Python."""
    found = []
    for module, names in FROM_IMPORT.findall(text):
        for name in names.split(","):
            found.append((module, name.split(" as ")[0].strip()))
    return found


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.sh")), ids=lambda p: p.name)
def test_every_name_a_shell_benchmark_imports_exists(script: Path) -> None:
    for module, name in project_imports(script.read_text()):
        found = importlib.import_module(module)
        if not hasattr(found, name):  # `from kernels import gpu_reference`: a submodule
            importlib.import_module(f"{module}.{name}")


@pytest.mark.parametrize("script", ARGPARSE_SCRIPTS, ids=lambda p: p.name)
def test_every_python_benchmark_answers_help(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()


def test_the_pattern_sees_the_imports_it_must() -> None:
    text = "import os, time\nfrom worker.feedback.speed_of_light import measure_speed_of_light\n"
    assert project_imports(text) == [("worker.feedback.speed_of_light", "measure_speed_of_light")]
