"""Helpers shared by the sandbox tests (a module, not conftest, so tests can import them)."""

from __future__ import annotations

import shutil
from pathlib import Path

from worker.sandbox.bwrap import Limits, RunResult, Sandbox


def run_binary(sandbox: Sandbox, binary: Path, workdir: Path, *args: str,
               limits: Limits | None = None) -> RunResult:
    """Copy the program into the work dir and run it there as ./name."""
    shutil.copy(binary, workdir / binary.name)
    return sandbox.run([f"./{binary.name}", *args], workdir=workdir,
                       limits=limits or Limits(wall_s=10))


def processes_named(name: str) -> list[int]:
    """Host pids running a program called name (comm is cut at 15 characters)."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == name[:15]:
                found.append(int(comm.parent.name))
        except OSError:
            continue
    return found
