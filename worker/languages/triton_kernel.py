"""`triton-kernel`: one .py defining `solve(Q, K, V, O, B, N, d)` on CUDA tensors (torch float32,
contiguous, shape (B, N, d)) that launches the student's Triton kernel(s) and writes O.

The build is a syntax check in the sandbox (`python3 -m py_compile`, Python's own message as the
CE log) and a check that the file defines solve(). Each test runs through the trusted split timer
as cuda-kernel does (docs/kernel-timing.md), with a Python runner in the student's sandbox
(worker/harness/triton_runner.py) that imports the file, calls solve() once untimed so that
Triton compiles (and autotunes) before anything is timed, and reports that time apart; a Triton
compile error or a file that does not import is a CE with Python's or Triton's message. Where the
suite forbids borrowed kernels (hw4), the kernels the runner's process ran are checked
(worker/harness/census.py): a library's attention or matrix kernel is a BK.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from flashjudge.contract import TestResult
from flashjudge.contract.languages import TRITON_KERNEL, LanguageFacts
from worker.harness import triton_runner
from worker.harness.build import TIMER, HarnessBuildError, find_toolchain, program_binary
from worker.harness.census import own_functions
from worker.harness.split_run import RunnerSetting, SplitTimer, run_split_kernel_test
from worker.languages.arch import gpu_arch
from worker.languages.base import BuildPlan, BuildSettings, sources
from worker.languages.cuda_kernel import CudaKernel, with_timing
from worker.languages.triton_env import known_triton_python, triton_python, triton_runtime
from worker.machine import Machine
from worker.running.classify import SystemFailure
from worker.running.submission import SubmissionError, text_of
from worker.running.testrun import RunContext, TestInputs
from worker.sandbox.bwrap import Bind
from worker.sandbox.gpu.gpu_run import NO_INJECTION

SOURCE = "solve.py"  # the student's file in the runner's work dir
JIT_CACHE = "/jit"  # Triton's cache, shared by the tests of one judging (never across judgings)
SETUP_S = 120.0  # importing torch, compiling and autotuning, before the first timed call
TORCH_MEMORY = 4 << 30  # host memory for torch's and Triton's own libraries and compiler, on top
RUNNER_ENV = {"TRITON_CACHE_DIR": f"{JIT_CACHE}/cache", "TRITON_HOME": JIT_CACHE,
              "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "OMP_NUM_THREADS": "4",
              NO_INJECTION: "1"}  # the runner speaks to the driver gate and keeps its census
_SOLVE = re.compile(r"^def\s+solve\s*\(", re.MULTILINE)
_JIT = re.compile(r"^flashjudge-jit: ([0-9.]+) s$", re.MULTILINE)
_FUNCTIONS = ("import ast,sys;print(*[n.name for n in ast.parse(open(sys.argv[1],'rb').read())"
              ".body if isinstance(n,ast.FunctionDef)])")


class TritonKernel(CudaKernel):
    facts: ClassVar[LanguageFacts] = TRITON_KERNEL

    @classmethod
    def needs_met(cls) -> bool:
        """A Python with torch and triton was found (the first ask starts the probe in the
        background and answers False until it is done)."""
        return known_triton_python() is not None

    @classmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        return any(_SOLVE.search(text_of(files[n])) for n in sources(files, ".py"))

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        py = sources(files, ".py")
        if len(py) != 1:
            raise SubmissionError("files", f"triton-kernel needs exactly one .py file, got "
                                           f"{len(py)}")
        return BuildPlan(
            files=dict(files), argv=["python3", "-I", "-m", "py_compile", py[0]], product=py[0],
            check_argv=["python3", "-I", "-c", _FUNCTIONS, py[0]],
            check_message=f"{py[0]} defines no top-level solve(Q, K, V, O, B, N, d)")

    def borrowed_at_build(self, product: Path) -> str | None:
        """Not from the source (a getattr hides a call): from the kernels the GPU ran, per test
        (worker/harness/census.py)."""
        return None

    def runtime(self, cache_dir: Path, machine: Machine) -> Path | None:
        """The trusted timer (the runner is Python); SE where torch and triton are missing."""
        return triton_split_timer(cache_dir, machine).timer

    def run_test(self, ctx: RunContext, inputs: TestInputs) -> TestResult:
        """Through the trusted timer only (there is no in-process fallback for Python)."""
        split = triton_split_timer(ctx.cache_dir, ctx.machine)
        ctx = replace(ctx, base_memory_bytes=ctx.base_memory_bytes + TORCH_MEMORY)
        own = own_functions(ctx.product.read_bytes()) if ctx.own_kernels_only else None
        runner = RunnerSetting((Bind(jit_cache(ctx.product), JIT_CACHE, writable=True),
                                *python_binds()), runner_env(ctx.env))
        result, timing = run_split_kernel_test(ctx, inputs.prepared, inputs.fresh, split,
                                               own_kernels=own, runner=runner)
        return with_jit_time(with_timing(result, timing))


def python_binds() -> tuple[Bind, ...]:
    """The runner's Python where it lies outside /usr (a virtualenv), read-only at its path."""
    found = triton_runtime()
    return tuple(Bind(Path(d), d) for d in found.binds) if found is not None else ()


def runner_env(env: Mapping[str, str]) -> dict[str, str]:
    """The runner's environment: the timer's without the toolkit's library path (torch brings
    its own CUDA libraries), plus Triton's cache in the judging's JIT dir."""
    return {**{k: v for k, v in env.items() if k != "LD_LIBRARY_PATH"}, **RUNNER_ENV}


def jit_cache(product: Path) -> Path:
    """The judging's Triton cache, beside its product (removed with it), writable inside."""
    directory = product.parent / "triton-jit"
    directory.mkdir(exist_ok=True)
    directory.chmod(0o777)
    return directory


def with_jit_time(result: TestResult) -> TestResult:
    """The runner's untimed first call (compilation, autotuning), shown apart from the figure."""
    found = _JIT.findall(result.stderr_tail)
    if found:
        result.message += f"; Triton compile and autotune {float(found[-1]):.2f} s before " \
                          "timing (not counted)"
    return result


@functools.lru_cache(maxsize=4)
def triton_split_timer(cache_dir: Path, machine: Machine) -> SplitTimer:
    """The trusted timer with the Python runner, built once per process."""
    python = triton_python()
    if python is None:
        raise SystemFailure("this worker has no Python with torch and triton under /usr")
    try:
        timer = program_binary(cache_dir, gpu_arch(machine), TIMER,
                               find_toolchain(machine.cuda_home))
    except HarnessBuildError as exc:
        raise SystemFailure(str(exc)) from exc
    return SplitTimer(timer, Path(triton_runner.__file__), interpreter=python,
                      library_name=SOURCE, census=True, setup_s=SETUP_S)
