"""Running one test of a program submission (`./hw4 INPUT OUTPUT`) and judging its output.

Each test gets a fresh work dir with a copy of the built program, the input bound read-only from the
tmpfs input cache, and an output size limit just above the exact size the output must have. The wall
limit is the test's limit plus a small grace so the judge measures by how much it was exceeded; the
verdict uses the measured time against the real limit. The expected output never enters the sandbox.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from flashjudge.contract import TestResult
from kernels.compare import CompareError, compare_files
from kernels.fileformat import InputHeader
from testcases.prepared import PreparedTest
from worker.machine import Machine
from worker.running.borrowed import apply_finding, compiled_names, judge_gpu_run
from worker.running.classify import Classification, OutputCheck, SystemFailure, classify
from worker.running.errormaps import wrong_answer_map
from worker.running.fresh import fresh_workdir
from worker.running.mistakes import wrong_answer_mistake
from worker.sandbox.bwrap import Bind, Limits, RunResult, Sandbox, read_regular_file
from worker.sandbox.workspace import Cleaner, InputCache, remove_tree

KernelTimer = Literal["split", "in-process"]  # cuda-kernel timing (docs/kernel-timing.md)
INPUT_TARGET = "/input/input.bin"  # where the test's input appears inside the sandbox
OUTPUT_NAME = "output.bin"  # the output file, relative to the work dir (/work)
BASE_MEMORY = 4 << 30  # host memory for a run, on top of room for its input and output
OUTPUT_SLACK = 1 << 20  # the output may be this much larger than expected before OLE


@dataclass(frozen=True)
class TestInputs:
    """A test's prepared files: its input, and for cuda-kernel a fresh one of the same shape."""

    __test__ = False  # not a pytest class

    prepared: PreparedTest  # the test's input and expected output
    fresh: PreparedTest | None = None  # cuda-kernel: another seed, so a cached answer fails


@dataclass
class RunContext:
    """What every test of one submission shares."""

    sandbox: Sandbox  # runs the program
    product: Path  # the judge-owned built program (or library)
    inputs: InputCache  # tmpfs copies of the inputs
    tolerance: float  # max absolute error that passes
    env: dict[str, str] = field(default_factory=dict)  # extra environment inside the sandbox
    harness: Path | None = None  # cuda-kernel only: the compiled harness
    kernel_budget_s: float = 1.0  # cuda-kernel only: time budget of the timed calls per test
    kernel_timer: KernelTimer = "split"  # cuda-kernel only: the trusted timer, or in-process
    machine: Machine = Machine()  # this worker's GPU, CUDA toolkit and scratch dir
    base_memory_bytes: int = BASE_MEMORY  # host memory of a run besides its input and output
    cleaner: Cleaner | None = None  # removes work dirs in the background (None: at once)
    cache_dir: Path = Path("data/cache")  # the prepared cache (built helper programs live there)
    own_kernels_only: bool = False  # the suite forbids borrowed kernels (worker/harness/census.py)

    def discard(self, workdir: Path) -> None:
        """Remove a finished test's work dir (in the background when there is a cleaner)."""
        if self.cleaner is None:
            remove_tree(workdir)
        else:
            self.cleaner.later(workdir)


class Laps:
    """Wall-clock laps of one test's judging, so its overhead can be reported by phase."""

    def __init__(self) -> None:
        self._last = time.monotonic()
        self.parts: dict[str, float] = {}

    def lap(self, phase: str) -> None:
        now = time.monotonic()
        self.parts[phase] = self.parts.get(phase, 0.0) + now - self._last
        self._last = now

    def charge(self, result: TestResult, run_wall_s: float) -> None:
        """Record the overhead on `result`: every lap, less the program's own run time
        (RunResult.wall_s, from the sandbox's ready signal to the exit), so the 'sandbox' phase
        holds everything around it: the sandbox's start-up (RunResult.setup_s), supervision and
        the kill of the run's cgroup."""
        self.parts["sandbox"] = max(0.0, self.parts.get("sandbox", 0.0) - run_wall_s)
        result.overhead_parts = {phase: round(s, 4) for phase, s in self.parts.items()}
        result.overhead_s = sum(self.parts.values())


def grace_s(time_limit_s: float) -> float:
    """How long past its limit a run may go before it is killed (the verdict is TLE either way)."""
    return min(max(0.5, 0.2 * time_limit_s), 2.0)


def run_limits(header: InputHeader, time_limit_s: float, extra_wall_s: float = 0.0,
               base_memory: int = BASE_MEMORY) -> Limits:
    """Limits of one test run, sized to its input and output."""
    return Limits(
        wall_s=time_limit_s + grace_s(time_limit_s) + extra_wall_s,
        memory_bytes=base_memory + header.input_bytes + 2 * header.output_bytes,
        file_size_bytes=header.output_bytes + OUTPUT_SLACK, timed=True,
    )


def check_output(workdir: Path, name: str, expected_size: int) -> OutputCheck:
    """What is at the output path: a regular file (links never followed) and its exact size."""
    path = read_regular_file(workdir, name)
    size = path.stat().st_size if path is not None else 0
    return OutputCheck(path is not None, size, expected_size, path)


def compare_output(
    check: OutputCheck, expected: Path, tolerance: float, header: InputHeader
) -> Any | None:
    """The comparison report when there is a right-sized output to compare, else None."""
    if check.path is None or check.size != check.expected_size:
        return None
    try:
        return compare_files(check.path, expected, tolerance, header)
    except CompareError as exc:
        raise SystemFailure(f"cannot compare: {exc}") from exc


def to_result(
    test_id: str, time_limit_s: float, run: RunResult, verdict: Classification, report: Any | None
) -> TestResult:
    """The TestResult of a program run."""
    return TestResult(
        id=test_id, verdict=verdict.verdict, seconds=run.wall_s,
        max_error=report.max_error if report is not None else None,
        over_tolerance=report.over_tolerance if report is not None else 0,
        mismatches=[m.to_dict() for m in report.mismatches] if report is not None else [],
        exit_code=run.exit_code, signal=run.signal, stdout_tail=run.stdout_tail,
        stderr_tail=run.stderr_tail, message=verdict.message, time_limit_s=time_limit_s,
        wall_s=run.wall_s, memory_peak_bytes=run.memory_peak_bytes,
    )


def run_program_test(ctx: RunContext, prepared: PreparedTest, argv: list[str]) -> TestResult:
    """Run one prepared test as `argv` (the language's command, reading INPUT_TARGET and writing
    OUTPUT_NAME) and judge it."""
    laps = Laps()
    spec = prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    with fresh_workdir(f"test-{spec.id}", {ctx.product.name: ctx.product}, ctx.discard,
                       ctx.machine.scratch) as workdir:
        source = ctx.inputs.path_for(Path(prepared.input_path))
        laps.lap("setup")
        run = ctx.sandbox.run(
            argv, workdir=workdir,
            limits=run_limits(header, spec.time_limit_s, 0.0, ctx.base_memory_bytes),
            binds=[Bind(source, INPUT_TARGET)], env=ctx.env,
        )
        laps.lap("sandbox")
        check = check_output(workdir, OUTPUT_NAME, header.output_bytes)
        report = None
        if run.status == "ok" and run.wall_s <= spec.time_limit_s:
            report = compare_output(check, Path(prepared.expected_path), ctx.tolerance, header)
        result = to_result(spec.id, spec.time_limit_s, run, classify(run, spec.time_limit_s,
                                                                     check, report), report)
        if run.gpu is not None:  # one GPU process per test; the census where the suite asks
            compiled = compiled_names([ctx.product]) if ctx.own_kernels_only else None
            result = apply_finding(result, judge_gpu_run(run.gpu, compiled))
        expected = Path(prepared.expected_path)
        result.error_map = wrong_answer_map(result.verdict, [(check.path, expected)],
                                            ctx.tolerance, header)  # where it is wrong
        result.mistake = wrong_answer_mistake(result.verdict, [(  # which classic mistake
            check.path, expected, Path(prepared.input_path))], ctx.tolerance, result.error_map)
        laps.lap("compare")
    laps.lap("cleanup")
    laps.charge(result, run.wall_s)
    return result
