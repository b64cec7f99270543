"""`cuda-kernel`: one .cu defining `extern "C" void solve(Q, K, V, O, B, N, d)` on device pointers.

Built into a shared library in the sandbox; the judge's harness (worker/harness/) loads it, feeds it
the test's input, and times solve() with CUDA events. The build also checks that the library really
exports `solve`, so a missing `extern "C"` is a CE with a clear message, not a crash at run time.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flashjudge.contract import TestResult
from flashjudge.contract.languages import CUDA_KERNEL, LanguageFacts
from testcases.prepared import prepare_suite
from testcases.suite import Suite
from worker.harness.build import HarnessBuildError, find_toolchain, harness_binary
from worker.harness.in_process import run_kernel_test
from worker.harness.linkcheck import borrowed_in_binary
from worker.harness.split_run import SplitTimer, run_split_kernel_test
from worker.harness.verify import TimingVerdict
from worker.languages.arch import gpu_arch
from worker.languages.base import BuildPlan, BuildSettings, Language, sources, with_nvcc_flags
from worker.machine import Machine
from worker.running.classify import SystemFailure
from worker.running.submission import SubmissionError, text_of
from worker.running.testrun import RunContext, TestInputs

log = logging.getLogger(__name__)
IN_PROCESS_FLAG = {"code": "in-process", "holds": True,
                   "reason": "timed inside the student's own process, which can rewrite "
                             "the figures: not ranked until a TA looks (the trusted timer could "
                             "not run on this worker)"}
FRESH_SEED_OFFSET = 1_000_003  # the second input: the test's seed plus this
LIBRARY = "libsolve.so"  # the product: the student's solve() in a shared library
_SOLVE = re.compile(r"\bsolve\s*\(")
_MAIN = re.compile(r"\bmain\s*\(")


def kernel_nvcc(source: str, arch: str) -> list[str]:
    """The build line: a position-independent shared library using the shared CUDA runtime."""
    return [
        "nvcc", "-std=c++17", "-O3", f"-arch=sm_{arch}", "-shared", "-Xcompiler", "-fPIC",
        "-cudart", "shared", "-o", LIBRARY, source,
    ]


class CudaKernel(Language):
    facts: ClassVar[LanguageFacts] = CUDA_KERNEL

    @classmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        cu = [text_of(files[n]) for n in sources(files, ".cu")]
        return any(_SOLVE.search(t) for t in cu) and not any(_MAIN.search(t) for t in cu)

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        cu = sources(files, ".cu")
        if len(cu) != 1:
            raise SubmissionError("files", f"cuda-kernel needs exactly one .cu file, got {len(cu)}")
        return BuildPlan(
            files=dict(files),
            argv=with_nvcc_flags(kernel_nvcc(cu[0], settings.gpu_arch), settings.nvcc_flags),
            product=LIBRARY,
            check_argv=["nm", "-D", "--defined-only", LIBRARY],
            check_message='the library does not export solve(): declare it extern "C"',
        )

    def run_argv(self, input_path: str, output_path: str) -> list[str]:
        raise NotImplementedError("cuda-kernel runs through the harness (run_test)")

    def borrowed_at_build(self, product: Path) -> str | None:
        """cuBLAS/cuDNN linked or named, CUTLASS's attention compiled in (linkcheck.py)."""
        return borrowed_in_binary(product)

    def test_inputs(self, suite: Suite, cache_dir: Path, device: str,
                    seed: int | None) -> list[TestInputs]:
        """Each test's input plus a fresh one of the same shape (another seed), so an answer
        cached from an earlier call fails."""
        inputs = []
        for test in super().test_inputs(suite, cache_dir, device, seed):
            spec = test.prepared.spec
            fresh_seed = (seed if seed is not None else spec.seed) + FRESH_SEED_OFFSET
            fresh = prepare_suite(suite, cache_dir, device, fresh_seed, tests=[spec.id])
            inputs.append(TestInputs(test.prepared, fresh[spec.id]))
        return inputs

    def runtime(self, cache_dir: Path, machine: Machine) -> Path | None:
        """The harness that loads the library and times solve(), built once per GPU arch."""
        try:
            return harness_binary(cache_dir, gpu_arch(machine), find_toolchain(machine.cuda_home))
        except HarnessBuildError as exc:
            raise SystemFailure(str(exc)) from exc

    def run_test(self, ctx: RunContext, inputs: TestInputs) -> TestResult:
        """Through the trusted timer (the student's process cannot touch the figure that ranks);
        where that cannot run, through the in-process harness, with the result held. Which one
        comes first is the caller's (RunContext.kernel_timer, from JudgeConfig)."""
        if ctx.kernel_timer == "split":
            try:
                split = split_timer(ctx.cache_dir, ctx.machine)
                result, timing = run_split_kernel_test(ctx, inputs.prepared, inputs.fresh, split)
            except SystemFailure as exc:
                log.warning("the trusted timer could not run (%s): timing in-process, held", exc)
            else:
                return with_timing(result, timing)
        result = run_kernel_test(ctx, inputs.prepared, inputs.fresh)
        result.timing_source = "in-process"
        result.timing_flags.append(IN_PROCESS_FLAG)
        return result


@functools.lru_cache(maxsize=4)
def split_timer(cache_dir: Path, machine: Machine) -> SplitTimer:
    """The worker's trusted timer and runner for its GPU, built once per process; it keeps the
    calibrated overhead per test shape."""
    try:
        toolchain = find_toolchain(machine.cuda_home)
    except HarnessBuildError as exc:
        raise SystemFailure(str(exc)) from exc
    return SplitTimer.build(cache_dir, gpu_arch(machine), toolchain)


def with_timing(result: TestResult, timing: TimingVerdict | None) -> TestResult:
    """The trusted timer's conclusions on the result: where the time comes from, and its flags."""
    if timing is not None:
        result.timing_source = timing.source
        result.timing_flags = [{"code": f.code, "reason": f.reason, "holds": f.holds}
                               for f in timing.flags]
    return result
