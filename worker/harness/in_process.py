"""Running one test of a cuda-kernel submission through the harness, and judging what it reports.

The harness (worker/harness/harness.cu) runs in the sandbox with the student's library; the judge
keeps both expected outputs (the test's input and a fresh one of the same shape) and compares the
harness's two output files with them, so an answer cached from an earlier call fails. Exit codes of
the harness tell our failures (2: SE, only before the student's library is loaded) from the
student's (3: the library would not load, 4: anything failing once it was loaded). The student's
code shares the harness's process, so a determined cheat could forge the timing record; it cannot
forge the outputs, which the judge compares with expected outputs that never enter the sandbox.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashjudge.contract import KernelTiming, TestResult, Verdict
from kernels.fileformat import InputHeader
from worker.harness.build import HARNESS_NAME
from worker.running.classify import Classification, OutputCheck, SystemFailure, classify_run
from worker.running.errormaps import wrong_answer_map
from worker.running.fresh import fresh_workdir
from worker.running.mistakes import wrong_answer_mistake
from worker.running.testrun import (
    INPUT_TARGET,
    OUTPUT_NAME,
    Laps,
    RunContext,
    check_output,
    compare_output,
    run_limits,
)
from worker.sandbox.bwrap import Bind, RunResult, RunStatus, read_regular_file

FRESH_TARGET = "/input/fresh.bin"  # the second input, same shape, another seed
FRESH_OUTPUT = "output2.bin"
TIMING_NAME = "timing.json"
EXIT_SETUP, EXIT_LIBRARY, EXIT_SOLVE = 2, 3, 4


@dataclass(frozen=True)
class KernelReport:
    """The harness's timing record (timing.json), parsed."""

    timing: KernelTiming  # solve() statistics
    warmup_s: float  # the untimed first call
    inconsistent_runs: int  # timed calls whose output differed from the first of its input
    too_slow: bool  # a call exceeded the time limit, so the harness stopped early


def parse_timing(path: Path | None) -> KernelReport | None:
    """timing.json as the harness wrote it; None when missing or malformed (the run is then RE)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:  # the submission could have made it huge: read a little
            doc = json.loads(f.read(4096))
        timing = KernelTiming(float(doc["mean_s"]), float(doc["std_s"]), float(doc["min_s"]),
                              int(doc["runs"]), int(doc["fresh_calls"]))
        return KernelReport(timing, float(doc["warmup_s"]), int(doc["inconsistent_runs"]),
                            bool(doc["too_slow"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def classify_harness_exit(run: RunResult) -> Classification | None:
    """The verdict when the harness did not finish cleanly (None when it did)."""
    last = (run.stderr_tail.strip().splitlines() or [""])[-1]
    if run.status == RunStatus.EXIT_NONZERO and run.exit_code == EXIT_SETUP:
        raise SystemFailure(f"harness set-up failed: {last}")
    if run.status == RunStatus.TIMEOUT:
        return Classification(Verdict.TLE, "solve() did not finish (the harness was killed)")
    if run.status == RunStatus.EXIT_NONZERO and run.exit_code in (EXIT_LIBRARY, EXIT_SOLVE):
        return Classification(Verdict.RE, last.removeprefix("flashjudge-harness: "))
    return classify_run(run, float("inf"))


def classify_kernel(
    report: KernelReport | None, time_limit_s: float, first: OutputCheck, first_cmp: Any | None,
    fresh_cmp: Any | None,
) -> Classification:
    """The verdict of a harness run that exited cleanly."""
    if report is None:
        return Classification(Verdict.RE, "the harness's timing record is missing or damaged")
    if report.too_slow or report.timing.mean_s > time_limit_s:
        slowest = max(report.warmup_s, report.timing.mean_s)
        return Classification(Verdict.TLE,
                              f"solve() took {slowest:.3f} s, limit {time_limit_s:g} s")
    if not first.present or first.size != first.expected_size or first_cmp is None:
        return Classification(Verdict.NO, "the harness wrote no output of the right size")
    if not first_cmp.ok:
        return Classification(Verdict.WA, first_cmp.message)
    if fresh_cmp is None or not fresh_cmp.ok:
        why = fresh_cmp.message if fresh_cmp is not None else "no output"
        return Classification(Verdict.WA, f"wrong on a fresh input of the same shape: {why}")
    if report.inconsistent_runs:
        return Classification(
            Verdict.WA, f"{report.inconsistent_runs} of {report.timing.runs} repeated calls "
            "gave a different output (NaN or over the tolerance)")
    return Classification(Verdict.AC, f"mean {report.timing.mean_s * 1e3:.3f} ms "
                                      f"over {report.timing.runs} runs")


def harness_argv(limit_s: float, budget_s: float, tolerance: float) -> list[str]:
    return [f"./{HARNESS_NAME}", "./libsolve.so", INPUT_TARGET, FRESH_TARGET, OUTPUT_NAME,
            FRESH_OUTPUT, TIMING_NAME, f"{limit_s:g}", f"{budget_s:g}", f"{tolerance:g}"]


def _files(ctx: RunContext) -> dict[str, Path]:
    """The harness and the student's library, laid out in /work."""
    assert ctx.harness is not None
    return {HARNESS_NAME: ctx.harness, ctx.product.name: ctx.product}


def run_kernel_test(ctx: RunContext, prepared: Any, fresh: Any) -> TestResult:
    """Run one test (`prepared`) plus its fresh input (`fresh`) through the harness; judge both."""
    laps = Laps()
    spec = prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    with fresh_workdir(f"kernel-{spec.id}", _files(ctx), ctx.discard,
                       ctx.machine.scratch) as workdir:
        binds = [Bind(ctx.inputs.path_for(Path(prepared.input_path)), INPUT_TARGET),
                 Bind(ctx.inputs.path_for(Path(fresh.input_path)), FRESH_TARGET)]
        extra_wall = 10.0 + 3 * spec.time_limit_s + ctx.kernel_budget_s
        limits = run_limits(header, spec.time_limit_s, extra_wall, ctx.base_memory_bytes)
        argv = harness_argv(spec.time_limit_s, ctx.kernel_budget_s, ctx.tolerance)
        laps.lap("setup")
        run = ctx.sandbox.run(argv, workdir=workdir, limits=limits, binds=binds, env=ctx.env)
        laps.lap("sandbox")
        result = _judge_run(ctx, run, workdir, prepared, fresh, header)
        outputs = [(read_regular_file(workdir, OUTPUT_NAME), Path(prepared.expected_path),
                    Path(prepared.input_path)),
                   (read_regular_file(workdir, FRESH_OUTPUT), Path(fresh.expected_path),
                    Path(fresh.input_path))]
        result.error_map = wrong_answer_map(result.verdict, [o[:2] for o in outputs],
                                            ctx.tolerance, header)  # where it is wrong
        result.mistake = wrong_answer_mistake(result.verdict, outputs, ctx.tolerance,
                                              result.error_map)  # which classic mistake
        laps.lap("compare")
    laps.lap("cleanup")
    laps.charge(result, run.wall_s)
    return result


def _judge_run(ctx: RunContext, run: RunResult, workdir: Path, prepared: Any, fresh: Any,
               header: InputHeader) -> TestResult:
    spec = prepared.spec
    first = check_output(workdir, OUTPUT_NAME, header.output_bytes)
    verdict = classify_harness_exit(run)
    report = first_cmp = None
    if verdict is None:
        report = parse_timing(read_regular_file(workdir, TIMING_NAME))
        first_cmp = compare_output(first, Path(prepared.expected_path), ctx.tolerance, header)
        second = check_output(workdir, FRESH_OUTPUT, header.output_bytes)
        fresh_cmp = compare_output(second, Path(fresh.expected_path), ctx.tolerance, header)
        verdict = classify_kernel(report, spec.time_limit_s, first, first_cmp, fresh_cmp)
    seconds = report.timing.mean_s if report is not None else run.wall_s
    return TestResult(
        id=spec.id, verdict=verdict.verdict, seconds=seconds,
        max_error=first_cmp.max_error if first_cmp is not None else None,
        over_tolerance=first_cmp.over_tolerance if first_cmp is not None else 0,
        mismatches=[m.to_dict() for m in first_cmp.mismatches] if first_cmp is not None else [],
        exit_code=run.exit_code, signal=run.signal, stdout_tail=run.stdout_tail,
        stderr_tail=run.stderr_tail, message=verdict.message, time_limit_s=spec.time_limit_s,
        wall_s=run.wall_s, memory_peak_bytes=run.memory_peak_bytes,
        timing=report.timing if report is not None else None,
    )
