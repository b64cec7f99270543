"""The environment is read at the edges only: worker.settings turns it into a JudgeConfig (and a
Machine) that the Celery adapter and the CLI pass down; the library below decides from what it is
given, so a judging never depends on a variable nobody passed."""

from __future__ import annotations

import ast
import logging
import shutil
from pathlib import Path

import pytest

from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeConfig, JudgeRequest, judge
from worker.running.testrun import KernelTimer
from worker.sandbox.bwrap import Sandbox
from worker.settings import WorkerSettings

WORKER = Path(__file__).resolve().parents[2] / "worker"
EDGES = ("settings.py", "celery_adapter")  # under worker/: where the environment may be read
# programs the judge starts inside the sandbox, whose environment the judge built for them
SANDBOXED_PROGRAMS = ("harness/triton_runner.py",)
ENVIRONMENT = {"environ", "environb", "getenv", "getenvb"}
TRIED_SPLIT = "the trusted timer could not run"  # cuda_kernel's warning before the fallback


def environment_reads(path: Path) -> list[str]:
    """Where a module reads the environment: os.environ / os.getenv, or worker.settings."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT
                and isinstance(node.value, ast.Name) and node.value.id == "os"):
            found.append(f"os.{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"from os import {a.name}" for a in node.names if a.name in ENVIRONMENT]
        elif isinstance(node, ast.ImportFrom) and node.module == "worker.settings":
            found.append(f"imports worker.settings (line {node.lineno})")
    return found


def test_only_the_edges_read_the_environment() -> None:
    library = [p for p in WORKER.rglob("*.py")
               if p.relative_to(WORKER).parts[0] not in EDGES
               and p.relative_to(WORKER).as_posix() not in SANDBOXED_PROGRAMS]
    assert len(library) > 40  # the walk found the library
    readers = {str(p.relative_to(WORKER)): reads for p in library
               if (reads := environment_reads(p))}
    assert readers == {}


def test_the_environment_becomes_one_config(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    for name, value in {"CUDA_VISIBLE_DEVICES": "GPU-5e1f, 1", "CUDA_PATH": "/opt/cuda",
                        "FLASHJUDGE_KERNEL_TIMER": "in-process", "FLASHJUDGE_INSECURE": "1",
                        "FLASHJUDGE_SCRATCH": str(tmp_path), "FLASHJUDGE_INPUT_CACHE_GB": "0.5",
                        "FLASHJUDGE_BWRAP": "/opt/bwrap/bwrap", "FLASHJUDGE_GPU_ARCH": "sm_80"
                        }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    config = WorkerSettings().judge_config(build_time_limit_s=5.0)
    machine = config.machine
    assert (machine.gpu_device, machine.cuda_home, machine.gpu_arch) == ("GPU-5e1f", "/opt/cuda",
                                                                         "sm_80")
    assert (machine.scratch, machine.bwrap) == (tmp_path, "/opt/bwrap/bwrap")
    assert (config.kernel_timer, config.insecure, config.build_time_limit_s) == (
        "in-process", True, 5.0)
    assert config.inputs.cap_bytes == 512 << 20
    assert not config.inputs.enabled  # inputs are copied onto /dev/shm only, never to scratch


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has a GPU")
@pytest.mark.parametrize("timer, environment", [("split", "in-process"), ("in-process", "split")])
def test_the_kernel_timer_is_the_configs(timer: KernelTimer, environment: str, engine_cache: Path,
                                         cpu_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch,
                                         caplog: pytest.LogCaptureFixture) -> None:
    """Without a GPU the trusted timer fails and the in-process harness follows: whether the
    trusted one was tried at all is JudgeConfig.kernel_timer's choice, whatever the environment
    says."""
    monkeypatch.setenv("FLASHJUDGE_KERNEL_TIMER", environment)
    request = JudgeRequest("cuda-kernel", load_case("kernel-correct").files, "hw4-mini", ["t07"])
    with caplog.at_level(logging.WARNING, logger="worker.languages.cuda_kernel"):
        result = judge(request, engine_cache, sandbox=cpu_sandbox,
                       config=JudgeConfig(kernel_timer=timer))
    assert result.compile.ok and "harness set-up failed" in (result.system_error or "")
    assert (TRIED_SPLIT in caplog.text) == (timer == "split")
