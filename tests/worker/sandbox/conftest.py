"""Real bubblewrap, real cgroups, real gcc: tiny C programs run sandboxed as a student's would."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import run_binary
from worker.sandbox.bwrap import BwrapSandbox, RunStatus, Sandbox, SandboxUnavailable
from worker.settings import WorkerSettings

SHM = Path("/dev/shm")
HEALTHY = r"""
#include <stdio.h>
int main(void) { puts("healthy"); return 0; }
"""


@pytest.fixture(scope="session")
def sandbox() -> BwrapSandbox:
    """One sandbox for the session, as a worker has (its bubblewrap and cgroups as the environment
    names them); skipped where this machine cannot sandbox."""
    try:
        return BwrapSandbox.for_machine(WorkerSettings().machine(), gpu=False)
    except SandboxUnavailable as exc:
        pytest.skip(f"sandbox unavailable here: {exc}")


@pytest.fixture(scope="session")
def build_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="fj-sandbox-bin-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def compile_c(build_dir: Path) -> Callable[[str, str], Path]:
    """compile_c(name, source) -> a binary named `name` plus a random suffix, so a leftover process
    is recognisable by name in /proc. Compiled on the host: the sandbox only runs it."""

    built: dict[tuple[str, str], Path] = {}

    def compile_one(name: str, source: str) -> Path:
        if (name, source) in built:
            return built[name, source]
        binary = build_dir / f"{name}_{uuid.uuid4().hex[:6]}"
        src = binary.with_suffix(".c")
        src.write_text(source)
        subprocess.run(["gcc", "-O1", "-o", str(binary), str(src)], check=True)
        built[name, source] = binary
        return binary

    return compile_one


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A fresh work dir on tmpfs, as the engine makes per test."""
    path = Path(tempfile.mkdtemp(prefix="fj-work-", dir=SHM if SHM.is_dir() else None))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def assert_healthy(sandbox: Sandbox, compile_c: Callable[[str, str], Path]) -> Callable[[], None]:
    """After a hostile run: the next submission is judged normally."""
    healthy = compile_c("healthy", HEALTHY)

    def check() -> None:
        with tempfile.TemporaryDirectory(dir=SHM if SHM.is_dir() else None) as tmp:
            result = run_binary(sandbox, healthy, Path(tmp))
        assert result.status is RunStatus.OK, result
        assert result.stdout_tail == "healthy\n"

    return check
