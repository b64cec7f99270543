"""Fixtures for the engine's tests: one real sandbox and one prepared cache per session.

Tests are an edge, like the CLI: the machine they judge on comes from the environment through
worker.settings (the GPU check names a bundled bubblewrap in FLASHJUDGE_BWRAP), and is passed in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from worker.machine import Machine
from worker.pipeline import JudgeConfig
from worker.sandbox.bwrap import BwrapSandbox, Sandbox, SandboxUnavailable
from worker.settings import WorkerSettings


def gpu_present() -> bool:
    """An NVIDIA GPU and nvcc: what the gpu-marked engine tests need."""
    return os.path.exists("/dev/nvidiactl") and shutil.which("nvcc") is not None


@pytest.fixture(autouse=True)
def _skip_gpu_tests_without_gpu(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("gpu") and not gpu_present():
        pytest.skip("needs an NVIDIA GPU and nvcc")


@pytest.fixture(scope="session")
def engine_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache of inputs and expected outputs shared by the session's judgings.

    FLASHJUDGE_TEST_CACHE points it at a persistent dir (the GPU check reuses the hw4 cache)."""
    override = os.environ.get("FLASHJUDGE_TEST_CACHE")
    return Path(override) if override else tmp_path_factory.mktemp("engine-cache")


@pytest.fixture(scope="session")
def machine() -> Machine:
    """This machine as its environment describes it (FLASHJUDGE_*, CUDA_VISIBLE_DEVICES)."""
    return WorkerSettings().machine()


@pytest.fixture
def judge_config() -> JudgeConfig:
    """This worker's JudgeConfig as its environment gives it (machine, input cache cap, timer)."""
    return WorkerSettings().judge_config()


@pytest.fixture(scope="session")
def cpu_sandbox(machine: Machine) -> Sandbox:
    """The real sandbox (bubblewrap + cgroups); no GPU devices. A machine that cannot sandbox
    fails these tests (CI must judge for real), with the reason instead of a traceback."""
    try:
        return BwrapSandbox.for_machine(machine, gpu=False)
    except SandboxUnavailable as exc:
        pytest.fail(f"the engine's tests need the sandbox: {exc}")
