"""Measuring a worker's speed of light once: FP32 peak, bandwidth, reference times, CUDA start-up.

Run on first use and cached in a small JSON under the cache dir, keyed by the GPU's model and
driver (the worker's Machine.gpu, as NVML described it at start), so a worker measures once and
every later judging reads the file. Each figure is the best of a few
timed runs with CUDA events (a peak is what the GPU can do, so the fastest run is the estimate).
The empty CUDA program's start is timed the way a submission's is: sandboxed, whole process.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kernels.atomicfile import atomic_write
from testcases.suite import TestSpec, load_suite
from worker.feedback.speed import SpeedOfLight
from worker.languages.arch import gpu_arch
from worker.machine import Gpu, Machine
from worker.sandbox.bwrap import BwrapSandbox, Limits, Sandbox
from worker.sandbox.workspace import make_workdir, remove_tree

CHAINS = 8  # independent FMA chains per thread: enough to hide the FMA latency
UNROLL = 16
FMA_SOURCE = r"""
extern "C" __global__ void fma_chains(float* out, int iters, float a, float b) {
  float x[8];
  for (int c = 0; c < 8; ++c) x[c] = threadIdx.x + c;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
    }
  }
  float s = 0.f;
  for (int c = 0; c < 8; ++c) s += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""
EMPTY_PROGRAM = """#include <cuda_runtime.h>
int main() { return cudaFree(0) == cudaSuccess ? 0 : 1; }
"""
START_RUNS = 5


def _best_ms(fn: Any, repeat: int = 5) -> float:
    """Fastest of `repeat` event-timed calls of fn() after one warm-up, milliseconds."""
    import cupy

    fn()
    times = []
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return min(times)


def fma_peak_tflops(iters: int = 4096) -> float:
    """FP32 FMA throughput: 8 warps-worth of blocks per SM, each thread 8 chains of FMAs."""
    import cupy

    kernel = cupy.RawKernel(FMA_SOURCE, "fma_chains")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    blocks, threads = sms * 8, 256
    out = cupy.empty(blocks * threads, dtype=cupy.float32)
    args = (out, cupy.int32(iters), cupy.float32(0.999), cupy.float32(0.001))
    ms = _best_ms(lambda: kernel((blocks,), (threads,), args))
    flops = 2.0 * blocks * threads * iters * UNROLL * CHAINS
    return flops / (ms * 1e-3) / 1e12


def bandwidth_gbs(nbytes: int = 2 << 30) -> float:
    """A device-to-device copy of `nbytes`, counting bytes read and written."""
    import cupy

    src = cupy.ones(nbytes // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    ms = _best_ms(lambda: dst.data.copy_from_device_async(src.data, src.nbytes))
    return 2.0 * src.nbytes / (ms * 1e-3) / 1e9


def tensor_peak_tflops(n: int = 8192) -> float:
    """An FP16 matrix product (cuBLAS, tensor cores): the fastest arithmetic a kernel could use."""
    import cupy

    a = cupy.random.uniform(-1, 1, (n, n)).astype(cupy.float16)
    b = cupy.random.uniform(-1, 1, (n, n)).astype(cupy.float16)
    ms = _best_ms(lambda: cupy.matmul(a, b), repeat=3)
    return 2.0 * n**3 / (ms * 1e-3) / 1e12


def reference_seconds(specs: list[TestSpec]) -> dict[str, float]:
    """The reference kernel's time on random data of each test's shape (best of 3), seconds."""
    import cupy

    from kernels.gpu_reference import attention_gpu

    times = {}
    for spec in specs:
        q, k, v = (cupy.random.uniform(-3, 3, (spec.B, spec.N, spec.d), dtype=cupy.float32)
                   for _ in range(3))
        times[spec.id] = _best_ms(lambda q=q, k=k, v=v: attention_gpu(q, k, v), repeat=3) * 1e-3
        del q, k, v
        cupy.get_default_memory_pool().free_all_blocks()
    return times


def cuda_start_seconds(cache_dir: Path, sandbox: Sandbox | None = None,
                       runs: int = START_RUNS, machine: Machine | None = None) -> float:
    """Median wall time of an empty CUDA program (cudaFree(0)) run sandboxed like a submission
    on `machine` (default: a bare one)."""
    machine = machine or Machine()
    binary = _empty_program(cache_dir, gpu_arch(machine))
    sandbox = sandbox or BwrapSandbox.for_machine(machine, gpu=True)
    walls = []
    for _ in range(runs):
        workdir = make_workdir("cuda-start", machine.scratch)
        try:
            shutil.copyfile(binary, workdir / "empty")
            (workdir / "empty").chmod(0o755)
            run = sandbox.run(["./empty"], workdir=workdir, limits=Limits(wall_s=30.0))
        finally:
            remove_tree(workdir)
        if run.status != "ok":
            raise RuntimeError(f"the empty CUDA program failed in the sandbox: {run.message}")
        walls.append(run.wall_s)
    return statistics.median(walls)


def _empty_program(cache_dir: Path, arch: str) -> Path:
    """The empty CUDA program for this GPU, built with nvcc once (our code: not sandboxed)."""
    directory = Path(cache_dir) / "speed-of-light"
    binary = directory / f"empty-sm{arch}"
    if binary.is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "empty.cu"
    source.write_text(EMPTY_PROGRAM)
    partial = directory / f".{binary.name}.partial"
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    subprocess.run([nvcc, f"-arch=sm_{arch}", "-o", str(partial), str(source)],
                   check=True, capture_output=True, timeout=300)
    partial.rename(binary)
    return binary


def handed_gpu(machine: Machine | None) -> Gpu:
    """The GPU measured: the one the worker was handed (Machine.gpu); RuntimeError without one."""
    if machine is None or machine.gpu is None:
        raise RuntimeError("no GPU was handed to this worker: there is no speed of light to "
                           "measure")
    return machine.gpu


def sm_count(gpu: Gpu) -> int:
    """Its SM count: the driver's (NVML), else CUDA's own for the device measured."""
    if gpu.sm_count:
        return gpu.sm_count
    import cupy

    return int(cupy.cuda.Device().attributes["MultiProcessorCount"])


def profile_path(cache_dir: Path, name: str, driver: str) -> Path:
    """The cache file of one GPU model under one driver."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", f"{name}-{driver}").strip("-")
    return Path(cache_dir) / "speed-of-light" / f"{slug}.json"


def measure(cache_dir: Path, suite: str | None = "hw4", sandbox: Sandbox | None = None,
            machine: Machine | None = None) -> SpeedOfLight:
    """Measure everything now (about a minute for hw4's reference times) on `machine`'s GPU."""
    gpu = handed_gpu(machine)
    refs = {suite: reference_seconds(load_suite(suite).tests)} if suite else {}
    return SpeedOfLight(
        name=gpu.name, sm_count=sm_count(gpu), peak_tflops=round(fma_peak_tflops(), 2),
        bandwidth_gbs=round(bandwidth_gbs(), 1),
        cuda_start_s=round(cuda_start_seconds(Path(cache_dir), sandbox, machine=machine), 4),
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"), driver=gpu.driver,
        tensor_peak_tflops=round(tensor_peak_tflops(), 1), reference_s=refs,
    )


def measure_speed_of_light(cache_dir: str | Path, suite: str | None = "hw4",
                           sandbox: Sandbox | None = None, refresh: bool = False,
                           machine: Machine | None = None) -> SpeedOfLight:
    """This worker's SpeedOfLight (on `machine`'s GPU, Machine.gpu): from the cache, else
    measured now and cached."""
    gpu = handed_gpu(machine)
    path = profile_path(Path(cache_dir), gpu.name, gpu.driver)
    if path.is_file() and not refresh:
        cached = SpeedOfLight.from_dict(json.loads(path.read_text()))
        if suite is None or suite in cached.reference_s:
            return cached
    profile = measure(Path(cache_dir), suite, sandbox, machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        f.write(json.dumps(profile.to_dict(), indent=2).encode())
    return profile
