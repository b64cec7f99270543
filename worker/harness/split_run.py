"""One cuda-kernel test run through the split timer (the timer and the runner, each in its
own sandbox): the trusted path; worker/harness/in_process.run_kernel_test is the fallback.

    split = SplitTimer.build(cache_dir, arch)                # once per worker
    result, timing = run_split_kernel_test(ctx, prepared, fresh, split, least_s)

The worker keeps one SplitTimer: our two programs and, per test shape, the overhead calibrated
with our own runner (a few hundred milliseconds the first time a shape is seen). `timing` carries
the flags (held or not, with the TA's reasons) for the service to show and to hold from ranking.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flashjudge.contract import TestResult
from kernels.fileformat import InputHeader
from worker.harness.build import RUNNER, TIMER, HarnessBuildError, Toolchain, program_binary
from worker.harness.split_processes import (
    LIBRARY_NAME,
    OUT1_NAME,
    OUT2_NAME,
    CalibrationError,
    SplitJob,
    SplitPrograms,
    SplitRun,
    calibrate,
    run_split,
)
from worker.harness.split_verdict import Expected, judge_split, to_test_result
from worker.harness.verify import Calibration, TimingVerdict
from worker.running.borrowed import CensusFinding, apply_finding, compiled_names, judge_gpu_run
from worker.running.classify import SystemFailure
from worker.running.errormaps import wrong_answer_map
from worker.running.mistakes import wrong_answer_mistake
from worker.running.testrun import Laps, RunContext, run_limits
from worker.sandbox.bwrap import Bind, read_regular_file

SETUP_WALL_S = 30.0  # both sandboxes starting, CUDA start-up twice, the library loading
CALIBRATION_MAX_AGE_S = 600.0  # the host's share of a batch drifts: measured again after this


@dataclass(frozen=True)
class RunnerSetting:
    """What the runner's sandbox gets apart from the timer's (the triton runner: a JIT cache
    and an environment without the toolkit's library path)."""

    binds: tuple[Bind, ...] = ()  # extra binds
    env: Mapping[str, str] | None = None  # its environment (None: the timer's)


@dataclass
class SplitTimer:
    """Per worker: the timer and runner binaries, and the calibrated overhead per shape."""

    timer: Path  # flashjudge-timer
    runner: Path  # flashjudge-runner
    calibrations: dict[tuple[int, int, int], Calibration] = field(default_factory=dict)
    calibrated_at: dict[tuple[int, int, int], float] = field(default_factory=dict)  # monotonic
    interpreter: str | None = None  # what runs the runner (the triton runner: a Python)
    library_name: str = LIBRARY_NAME  # the student's product in the runner's work dir
    census: bool = False  # the runner can record the kernels its process ran (where a rule asks)
    setup_s: float = SETUP_WALL_S  # wall time both sandboxes get for starting up

    @classmethod
    def build(cls, cache_dir: Path, arch: str, toolchain: Toolchain | None = None) -> SplitTimer:
        """Both programs for `arch` (built on first use); a build failure is ours (SE)."""
        try:
            return cls(program_binary(cache_dir, arch, TIMER, toolchain),
                       program_binary(cache_dir, arch, RUNNER, toolchain))
        except HarnessBuildError as exc:
            raise SystemFailure(str(exc)) from exc

    def calibration(self, ctx: RunContext, job: SplitJob, shape: tuple[int, int, int]
                    ) -> Calibration:
        """The overhead for `shape`, measured with our own runner on first use and again once
        it is CALIBRATION_MAX_AGE_S old (a few hundred milliseconds each time)."""
        age = time.monotonic() - self.calibrated_at.get(shape, -math.inf)
        if age > CALIBRATION_MAX_AGE_S:  # never measured: infinitely old
            try:
                self.calibrations[shape] = calibrate(ctx.sandbox, self.programs(None), job,
                                                     f"cal-{shape[0]}x{shape[1]}x{shape[2]}")
                self.calibrated_at[shape] = time.monotonic()
            except CalibrationError as exc:
                raise SystemFailure(str(exc)) from exc
        return self.calibrations[shape]

    def programs(self, library: Path | None, census: bool = False) -> SplitPrograms:
        """What the two processes run for `library` (None: our builtin solve, the calibration); the
        census only where a suite's rule reads it: its profiler costs the runner's process."""
        return SplitPrograms(self.timer, self.runner, library, self.interpreter,
                            self.library_name, self.census and census)


def split_job(ctx: RunContext, prepared: Any, fresh: Any, setup_s: float = SETUP_WALL_S,
             runner: RunnerSetting | None = None) -> SplitJob:
    """The inputs (tmpfs copies) and limits of one test: its limit per call, plus the set-up,
    three calls' worth of warm-up and the timing budget, for each sandbox."""
    spec = prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    extra = setup_s + 3 * spec.time_limit_s + ctx.kernel_budget_s
    limits = run_limits(header, spec.time_limit_s, extra, ctx.base_memory_bytes)
    runner = runner or RunnerSetting()
    return SplitJob(ctx.inputs.path_for(Path(prepared.input_path)),
                   ctx.inputs.path_for(Path(fresh.input_path)), spec.time_limit_s,
                   ctx.kernel_budget_s, limits, ctx.env, ctx.machine.scratch, runner.binds,
                   runner.env)


def gpu_finding(run: SplitRun, ctx: RunContext, split: SplitTimer) -> CensusFinding | None:
    """One GPU process per sandbox (the timer's and the runner's); where the suite forbids
    borrowed kernels and the judge's injection ran in the runner (cuda-kernel: the Triton runner
    keeps its own census), the runner's census against what the submission and our runner
    compiled (worker/running/borrowed.py)."""
    for side in (run.timer, run.runner):
        found = judge_gpu_run(side.gpu, None) if side.gpu is not None else None
        if found is not None:
            return found
    gpu = run.runner.gpu
    if gpu is None or not ctx.own_kernels_only or split.interpreter is not None:
        return None
    return judge_gpu_run(gpu, compiled_names([ctx.product, split.runner]))


def run_split_kernel_test(ctx: RunContext, prepared: Any, fresh: Any, split: SplitTimer,
                          least_s: float | None = None, own_kernels: frozenset[str] | None = None,
                          runner: RunnerSetting | None = None
                          ) -> tuple[TestResult, TimingVerdict | None]:
    """Run one test (`prepared`, plus the judge's `fresh` input) through the timer and its
    runner; judge it. `least_s`: the GPU's least time for the test (its speed of light; None:
    unknown); `own_kernels`: the submission's own kernel names, where the suite forbids
    borrowed kernels and the runner records them (None: no such rule)."""
    laps = Laps()
    spec = prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    job = split_job(ctx, prepared, fresh, split.setup_s, runner)
    calibration = split.calibration(ctx, job, (spec.B, spec.N, spec.d))
    expected = Expected(Path(prepared.expected_path), Path(fresh.expected_path), ctx.tolerance,
                        calibration, least_s, own_kernels)
    laps.lap("setup")
    run = run_split(ctx.sandbox, split.programs(ctx.product, census=own_kernels is not None), job,
                   f"kernel-{spec.id}")
    laps.lap("sandbox")
    try:
        judged = judge_split(run, header, spec.time_limit_s, expected)
        result = apply_finding(to_test_result(spec.id, spec.time_limit_s, run, judged),
                               gpu_finding(run, ctx, split))
        outputs = [(read_regular_file(run.timer_dir, OUT1_NAME), expected.output,
                    Path(prepared.input_path)),
                   (read_regular_file(run.timer_dir, OUT2_NAME), expected.fresh_output,
                    Path(fresh.input_path))]
        result.error_map = wrong_answer_map(result.verdict, [o[:2] for o in outputs],
                                            ctx.tolerance, header)  # where it is wrong
        result.mistake = wrong_answer_mistake(result.verdict, outputs, ctx.tolerance,
                                              result.error_map)  # which classic mistake
        laps.lap("compare")
    finally:
        for directory in run.scratch:
            ctx.discard(directory)
    laps.lap("cleanup")
    laps.charge(result, run.runner.wall_s)
    return result, judged.timing
