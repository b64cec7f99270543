"""Every GPU run starts CUDA with the work queues the node is set for (FLASHJUDGE_CUDA_CONNECTIONS;
by default CUDA's own): a figure is only comparable with one made under the same setting, so no
caller of the sandbox (a test run, a profile, the floor's calibration) can start CUDA otherwise,
and a course that chose one queue gets it in every run.

No GPU here: the runs are "GPU runs" without device nodes, and the program prints the
environment its CUDA would read (docs/kernel-timing.md, "Work queues")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import run_binary
from worker.sandbox.bwrap import BwrapSandbox, GpuAccess, Limits, RunStatus
from worker.sandbox.gpu.gpu_run import gpu_runtime_for
from worker.settings import WorkerSettings

SAYS_QUEUES = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    const char *queues = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    printf("queues=%s\n", queues ? queues : "cuda-default");
    return 0;
}
"""


def queues_seen(settings: WorkerSettings, compile_c: Callable[[str, str], Path],
                workdir: Path, env: dict[str, str] | None = None) -> str:
    machine = settings.machine()
    sandbox = BwrapSandbox(gpu=GpuAccess(device_nodes=()), bwrap=machine.bwrap,
                           cgroup_root=machine.cgroup_root, gpu_runtime=gpu_runtime_for(machine))
    binary = compile_c("says_queues", SAYS_QUEUES)
    if env is None:
        result = run_binary(sandbox, binary, workdir)
    else:
        (workdir / binary.name).write_bytes(binary.read_bytes())
        (workdir / binary.name).chmod(0o755)
        result = sandbox.run([f"./{binary.name}"], workdir=workdir, env=env,
                             limits=Limits(wall_s=10))
    assert result.status is RunStatus.OK, result
    return result.stdout_tail.strip()


def test_by_default_a_gpu_run_starts_cuda_as_it_comes(compile_c: Callable[[str, str], Path],
                                                       workdir: Path) -> None:
    """The default keeps CUDA's eight queues: one queue serializes kernels of streams issued
    depth first (4.4x on an H100), which a judge must not impose on a course unasked."""
    assert queues_seen(WorkerSettings(), compile_c, workdir) == "queues=cuda-default"


def test_a_course_that_sets_one_queue_gets_it_in_every_run(
        compile_c: Callable[[str, str], Path], workdir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_CUDA_CONNECTIONS", "1")
    assert queues_seen(WorkerSettings(), compile_c, workdir) == "queues=1"


def test_the_caller_cannot_start_cuda_with_other_queues(
        compile_c: Callable[[str, str], Path], workdir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_CUDA_CONNECTIONS", "1")
    seen = queues_seen(WorkerSettings(), compile_c, workdir,
                       env={"CUDA_DEVICE_MAX_CONNECTIONS": "8", "OMP_NUM_THREADS": "1"})
    assert seen == "queues=1"


def test_a_setting_cuda_cannot_take_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_CUDA_CONNECTIONS", "64")
    with pytest.raises(ValueError, match="cuda_connections"):
        WorkerSettings()
