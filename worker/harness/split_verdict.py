"""From a finished run of the timer and its runner to one test's verdict, figure and flags.

Our failures (the timer, a report that does not parse, the runner's set-up before the student's
library is loaded) raise SystemFailure, which the judge retries (SE), never blames on the student.
The runner's own statuses decide RE/MLE/TLE as for any program; then the outputs the timer kept
are compared with the judge's expected outputs (full comparison, as before), and the timer's
report is judged by worker/harness/verify.py.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flashjudge.contract import KernelTiming, TestResult, Verdict
from kernels.fileformat import InputHeader
from worker.harness.census import borrowed, census_flag
from worker.harness.split_processes import OUT1_NAME, OUT2_NAME, SplitRun
from worker.harness.verify import Calibration, Flag, TimingVerdict, judge_timing
from worker.running.classify import Classification, SystemFailure, classify_run
from worker.running.testrun import check_output, compare_output
from worker.sandbox.bwrap import RunResult, RunStatus

EXIT_SETUP, EXIT_LIBRARY, EXIT_SOLVE = 2, 3, 4  # the runner's exit codes (runner.cu)
EXIT_COMPILE = 5  # the triton runner: solve.py does not import, or Triton cannot compile it


@dataclass(frozen=True)
class Expected:
    """What the run is compared with (never seen by either sandbox)."""

    output: Path  # expected output of the test's input
    fresh_output: Path  # expected output of the judge's fresh input
    tolerance: float  # max absolute error
    calibration: Calibration  # this worker's overhead, measured with our own runner
    least_s: float | None  # the GPU's speed of light for the test (None: unknown)
    own_kernels: frozenset[str] | None = None  # the suite forbids borrowed kernels: the
    # submission's own kernel names (worker/harness/census.py); None: no such rule


@dataclass(frozen=True)
class SplitJudgement:
    """The verdict and what it rests on."""

    classification: Classification  # verdict and the line that explains it
    timing: TimingVerdict | None  # the judged timing (None when the run ended too early)
    compare: Any | None  # the comparison of the test's own output (None: not compared)


def _last_line(run: RunResult) -> str:
    line = (run.stderr_tail.strip().splitlines() or [""])[-1]
    return line.split(": ", 1)[1] if line.startswith("flashjudge-") and ": " in line else line


def classify_sides(run: SplitRun) -> Classification | None:
    """The verdict the two processes decide alone (None: the outputs must be examined)."""
    timer, runner = run.timer, run.runner
    if timer.status != RunStatus.OK:
        raise SystemFailure(f"the timer failed: {_last_line(timer) or timer.message}")
    if run.report is None:
        raise SystemFailure(run.report_error or "the timer wrote no report")
    if runner.status == RunStatus.EXIT_NONZERO and runner.exit_code == EXIT_SETUP:
        raise SystemFailure(f"the runner's set-up failed: {_last_line(runner)}")
    if runner.status == RunStatus.EXIT_NONZERO and runner.exit_code == EXIT_COMPILE:
        return Classification(Verdict.CE, _last_line(runner))
    if run.report.too_slow:
        return Classification(Verdict.TLE, "solve() ran past the time limit")
    if runner.status == RunStatus.EXIT_NONZERO and runner.exit_code in (EXIT_LIBRARY, EXIT_SOLVE):
        return Classification(Verdict.RE, _last_line(runner))
    verdict = classify_run(runner, math.inf)
    if verdict is not None:
        return verdict
    if run.report.runner != "ok":
        return Classification(Verdict.RE, run.report.runner)
    return None


def _compare_outputs(run: SplitRun, header: InputHeader, exp: Expected
                     ) -> tuple[Classification | None, Any | None]:
    first = check_output(run.timer_dir, OUT1_NAME, header.output_bytes)
    first_cmp = compare_output(first, exp.output, exp.tolerance, header)
    if first_cmp is None:
        return Classification(Verdict.NO, "solve() left no output of the right size"), None
    if not first_cmp.ok:
        return Classification(Verdict.WA, first_cmp.message), first_cmp
    second = check_output(run.timer_dir, OUT2_NAME, header.output_bytes)
    fresh_cmp = compare_output(second, exp.fresh_output, exp.tolerance, header)
    if fresh_cmp is None or not fresh_cmp.ok:
        why = fresh_cmp.message if fresh_cmp is not None else "no output"
        return Classification(Verdict.WA, f"wrong on a fresh input of the same shape: {why}"), \
            first_cmp
    return None, first_cmp


def _accepted(timing: TimingVerdict, time_limit_s: float) -> Classification:
    ranked = timing.ranked_s
    if ranked is None:
        raise SystemFailure("the timer finished no timed batch")
    if ranked > time_limit_s:
        return Classification(Verdict.TLE, f"solve() took {ranked:.3f} s, limit {time_limit_s:g} s")
    clock = "" if timing.source == "events" else " (the judge's clock)"
    message = f"mean {ranked * 1e3:.3f} ms over {timing.timed_calls} timed calls{clock}"
    if timing.flags:
        held = "held for a TA: " if timing.held else ""
        message += f"; {held}{timing.reasons()}"
    return Classification(Verdict.AC, message)


def judge_split(run: SplitRun, header: InputHeader, time_limit_s: float,
               exp: Expected) -> SplitJudgement:
    """The verdict of one test run through the timer and its runner."""
    verdict = classify_sides(run)
    if verdict is not None:
        return SplitJudgement(verdict, None, None)
    assert run.report is not None
    verdict, compared = _compare_outputs(run, header, exp)
    first_error = compared.max_error if compared is not None else None
    timing = judge_timing(run.report, exp.calibration, exp.tolerance, exp.least_s, first_error)
    if exp.own_kernels is not None:
        verdict, timing = _kernel_rule(run, exp.own_kernels, verdict, timing)
    if verdict is None and timing.wrong:
        verdict = Classification(Verdict.WA, timing.wrong)
    return SplitJudgement(verdict or _accepted(timing, time_limit_s), timing, compared)


def _kernel_rule(run: SplitRun, own: frozenset[str], verdict: Classification | None,
                 timing: TimingVerdict) -> tuple[Classification | None, TimingVerdict]:
    """The suite's rule on borrowed kernels: BK naming the first library kernel the census saw
    (over WA and AC); a census that cannot be believed holds the result (census.py)."""
    census = run.census
    found = borrowed(census.kernels, own) if census is not None else []
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return Classification(Verdict.BK, f"a library kernel ran on the GPU: {found[0]}{more}; "
                                          "this suite accepts only your own kernels"), timing
    assert run.report is not None
    why = census_flag(census, sum(b.size for b in run.report.batches))
    if why is not None:
        flag = Flag("census", f"{why}: whether a library's kernels ran is unknown", holds=True)
        timing = replace(timing, flags=(*timing.flags, flag))
    return verdict, timing


def kernel_timing(timing: TimingVerdict | None) -> KernelTiming | None:
    """The figures in the shape results already carry (mean, spread, fastest, counts)."""
    if timing is None or timing.ranked_s is None:
        return None
    per = timing.per_batch_s
    spread = statistics.stdev(per) if len(per) > 1 else 0.0
    return KernelTiming(timing.ranked_s, spread, min(per), timing.timed_calls,
                        timing.timed_calls)


def to_test_result(test_id: str, time_limit_s: float, run: SplitRun,
                   judged: SplitJudgement) -> TestResult:
    """The TestResult of one test judged through the timer and its runner (the runner's
    process facts)."""
    timing, cmp = judged.timing, judged.compare
    seconds = timing.ranked_s if timing and timing.ranked_s is not None else run.runner.wall_s
    return TestResult(
        id=test_id, verdict=judged.classification.verdict, seconds=seconds,
        max_error=cmp.max_error if cmp is not None else None,
        over_tolerance=cmp.over_tolerance if cmp is not None else 0,
        mismatches=[m.to_dict() for m in cmp.mismatches] if cmp is not None else [],
        exit_code=run.runner.exit_code, signal=run.runner.signal,
        stdout_tail=run.runner.stdout_tail, stderr_tail=run.runner.stderr_tail,
        message=judged.classification.message, time_limit_s=time_limit_s,
        wall_s=run.runner.wall_s, memory_peak_bytes=run.runner.memory_peak_bytes,
        timing=kernel_timing(timing))
