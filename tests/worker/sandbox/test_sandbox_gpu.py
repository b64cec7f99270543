"""GPU runs in the sandbox: only the worker's device nodes, and a kernel that never ends is killed.

Compiled with nvcc on the host; needs an NVIDIA GPU (skipped elsewhere)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import processes_named
from worker.sandbox.bwrap import BwrapSandbox, Limits, RunStatus
from worker.settings import WorkerSettings

pytestmark = pytest.mark.gpu

DEVICE_COUNT = r"""
#include <cstdio>
#include <dirent.h>
__global__ void add(int *x) { *x += 41; }
int main() {
    int n = 0, *d, h = 1;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { puts("no cuda"); return 2; }
    cudaMalloc(&d, sizeof h); cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    add<<<1, 1>>>(d); cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("devices=%d answer=%d\n", n, h);
    DIR *dev = opendir("/dev"); struct dirent *e;
    while ((e = readdir(dev))) if (e->d_name[0] == 'n' && e->d_name[1] == 'v') puts(e->d_name);
    return 0;
}
"""
ENDLESS_KERNEL = r"""
#include <cstdio>
__global__ void spin(volatile int *flag) { while (*flag == 0) { } }
int main() {
    int *d; cudaMalloc(&d, sizeof(int)); cudaMemset(d, 0, sizeof(int));
    spin<<<1, 1>>>(d); cudaDeviceSynchronize(); puts("never"); return 0;
}
"""


def _nvcc(tmp: Path, name: str, source: str) -> Path:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    src = tmp / f"{name}.cu"
    src.write_text(source)
    subprocess.run([nvcc, "-o", str(tmp / name), str(src)], check=True)
    return tmp / name


@pytest.fixture(scope="module")
def gpu_sandbox() -> BwrapSandbox:
    if not os.path.exists("/dev/nvidiactl"):
        pytest.skip("no NVIDIA GPU on this machine")
    return BwrapSandbox.for_machine(WorkerSettings().machine(), gpu=True)


def test_cuda_program_runs_and_sees_only_its_gpu(gpu_sandbox: BwrapSandbox, workdir: Path,
                                                  tmp_path: Path) -> None:
    binary = _nvcc(tmp_path, "devcount", DEVICE_COUNT)
    shutil.copy(binary, workdir / binary.name)
    result = gpu_sandbox.run([f"./{binary.name}"], workdir=workdir, limits=Limits(wall_s=60))
    assert result.status is RunStatus.OK, result
    assert "devices=1 answer=42" in result.stdout_tail
    visible = {line for line in result.stdout_tail.splitlines() if line.startswith("nvidia")}
    assert gpu_sandbox.gpu is not None
    assert visible == {Path(node).name for node in gpu_sandbox.gpu.device_nodes}


def test_endless_kernel_is_killed_and_the_gpu_stays_usable(gpu_sandbox: BwrapSandbox, workdir: Path,
                                                           tmp_path: Path) -> None:
    endless = _nvcc(tmp_path, "endless", ENDLESS_KERNEL)
    shutil.copy(endless, workdir / endless.name)
    result = gpu_sandbox.run([f"./{endless.name}"], workdir=workdir, limits=Limits(wall_s=3))
    assert result.status is RunStatus.TIMEOUT
    assert processes_named(endless.name) == []
    healthy = _nvcc(tmp_path, "devcount", DEVICE_COUNT)
    shutil.copy(healthy, workdir / healthy.name)
    after = gpu_sandbox.run([f"./{healthy.name}"], workdir=workdir, limits=Limits(wall_s=60))
    assert "answer=42" in after.stdout_tail
