"""From the two processes of a timed run to the test's verdict (worker/harness/split_verdict.py),
and both processes started for real in the sandbox (this machine has no GPU: the timer's set-up
fails, which must be our failure, found fast, never the student's)."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest

from flashjudge.contract import Verdict
from kernels.fileformat import InputHeader
from testcases.prepared import prepare_suite
from testcases.suite import load_suite
from tests.worker.harness.timer_reports import batch, report, scaled
from worker.harness.build import RUNNER, TIMER, find_toolchain, program_binary
from worker.harness.split_processes import (
    OUT1_NAME,
    OUT2_NAME,
    SplitJob,
    SplitPrograms,
    SplitRun,
    run_split,
)
from worker.harness.split_run import SplitTimer, run_split_kernel_test
from worker.harness.split_verdict import Expected, judge_split, to_test_result
from worker.harness.timer_report import parse_report
from worker.harness.verify import Calibration
from worker.running.classify import SystemFailure
from worker.running.testrun import RunContext
from worker.sandbox.bwrap import Limits, RunResult, RunStatus, Sandbox
from worker.sandbox.workspace import InputCache

HEADER = InputHeader(2, 8, 4)
CAL = Calibration(fixed_s=0.2e-3, per_call_s=0.0, noise_s=0.01e-3, flush_ms=0.05)


def ran(status: RunStatus = RunStatus.OK, code: int | None = 0, stderr: str = "",
        sig: int | None = None) -> RunResult:
    return RunResult(status, code, sig, 1.5, "", stderr, None, "")


def ran_split(tmp_path: Path, doc: dict | None = None, runner: RunResult | None = None,
         timer: RunResult | None = None) -> SplitRun:
    parsed = parse_report(doc if doc is not None else report())
    return SplitRun(timer or ran(), runner or ran(), parsed, None, tmp_path, [])


def expected(tmp_path: Path, wrong_fresh: bool = False) -> Expected:
    """Expected outputs, and the timer's kept outputs: right (the fresh one off if asked)."""
    rng = np.random.default_rng(1)
    want = rng.uniform(-1, 1, HEADER.elements).astype(np.float32)
    want2 = rng.uniform(-1, 1, HEADER.elements).astype(np.float32)
    (tmp_path / "want.bin").write_bytes(want.tobytes())
    (tmp_path / "want2.bin").write_bytes(want2.tobytes())
    (tmp_path / OUT1_NAME).write_bytes((want + 1e-6).astype(np.float32).tobytes())
    (tmp_path / OUT2_NAME).write_bytes((want2 + (0.5 if wrong_fresh else 0)).astype(
        np.float32).tobytes())
    return Expected(tmp_path / "want.bin", tmp_path / "want2.bin", 5e-3, CAL, None)


def test_an_honest_run_is_accepted_with_its_event_time(tmp_path: Path) -> None:
    run = ran_split(tmp_path)
    judged = judge_split(run, HEADER, 2.0, expected(tmp_path))
    assert judged.classification.verdict == Verdict.AC
    assert judged.classification.message.startswith("mean 1.00") and "20 timed calls" in \
        judged.classification.message
    result = to_test_result("t05", 2.0, run, judged)
    assert result.seconds == pytest.approx(1e-3, rel=0.01) and result.timing is not None
    assert result.timing.runs == 20 and result.max_error == pytest.approx(1e-6, rel=0.1)


def test_forged_events_are_accepted_on_the_judges_clock_and_say_so(tmp_path: Path) -> None:
    doc = report([batch(i, "timed", events_ms=scaled(i, 0.01)) for i in range(4, 9)])
    judged = judge_split(ran_split(tmp_path, doc), HEADER, 2.0, expected(tmp_path))
    message = judged.classification.message
    assert judged.classification.verdict == Verdict.AC
    assert "(the judge's clock)" in message and "[events-inconsistent]" in message
    assert "held" not in message


def test_a_held_result_says_it_is_held_for_a_ta(tmp_path: Path) -> None:
    doc = report([batch(i, "timed", sampled_error=[1e-3] * 4) for i in range(4, 9)])
    judged = judge_split(ran_split(tmp_path, doc), HEADER, 2.0, expected(tmp_path))
    assert judged.timing is not None and judged.timing.held
    assert "held for a TA: [less-precise-timed]" in judged.classification.message


def test_wrong_on_the_fresh_input_or_a_timed_call_is_wa(tmp_path: Path) -> None:
    judged = judge_split(ran_split(tmp_path), HEADER, 2.0, expected(tmp_path, wrong_fresh=True))
    assert judged.classification.verdict == Verdict.WA
    assert "fresh input of the same shape" in judged.classification.message
    doc = report([batch(i, "timed", nonfinite=[0, 9, 0, 0]) for i in range(4, 9)])
    judged = judge_split(ran_split(tmp_path, doc), HEADER, 2.0, expected(tmp_path))
    assert judged.classification.verdict == Verdict.WA and "not yet written" in \
        judged.classification.message


def test_a_mean_over_the_limit_is_tle(tmp_path: Path) -> None:
    judged = judge_split(ran_split(tmp_path), HEADER, 0.0005, expected(tmp_path))
    assert judged.classification.verdict == Verdict.TLE


def test_our_failures_are_system_failures_never_the_students(tmp_path: Path) -> None:
    with pytest.raises(SystemFailure, match="the timer failed: no usable CUDA device"):
        judge_split(ran_split(tmp_path, timer=ran(RunStatus.EXIT_NONZERO, 2,
                                            "flashjudge-timer: no usable CUDA device\n")),
                   HEADER, 2.0, expected(tmp_path))
    broken = SplitRun(ran(), ran(), None, "timer report, file: not JSON", tmp_path, [])
    with pytest.raises(SystemFailure, match="not JSON"):
        judge_split(broken, HEADER, 2.0, expected(tmp_path))
    setup = ran(RunStatus.EXIT_NONZERO, 2, "flashjudge-runner: cannot map the timer's memory\n")
    with pytest.raises(SystemFailure, match="set-up failed: cannot map"):
        judge_split(ran_split(tmp_path, runner=setup), HEADER, 2.0, expected(tmp_path))


def test_the_students_failures_are_re_or_tle(tmp_path: Path) -> None:
    lib = ran(RunStatus.EXIT_NONZERO, 3, "flashjudge-runner: the library does not export solve()")
    doc = report([], runner="the runner failed: the library does not export solve()")
    judged = judge_split(ran_split(tmp_path, doc, runner=lib), HEADER, 2.0, expected(tmp_path))
    assert (judged.classification.verdict, judged.classification.message) == (
        Verdict.RE, "the library does not export solve()")
    segv = ran(RunStatus.SIGNALED, None, "", signal.SIGSEGV)
    doc = report([], runner="the runner ended during a batch")
    judged = judge_split(ran_split(tmp_path, doc, runner=segv), HEADER, 2.0, expected(tmp_path))
    assert judged.classification.verdict == Verdict.RE and "SIGSEGV" in \
        judged.classification.message
    judged = judge_split(ran_split(tmp_path, report([], too_slow=True)), HEADER, 2.0,
                         expected(tmp_path))
    assert judged.classification.verdict == Verdict.TLE


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has a GPU")
def test_both_processes_start_sandboxed_and_a_timer_without_gpu_is_our_failure(
        tmp_path: Path, engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    suite = load_suite("hw4-mini")
    prepared = prepare_suite(suite, engine_cache, "cpu", tests=["t01"])["t01"]
    programs = SplitPrograms(program_binary(tmp_path, "90", TIMER),
                            program_binary(tmp_path, "90", RUNNER), None)
    job = SplitJob(Path(prepared.input_path), Path(prepared.input_path), 2.0, 0.5,
                  Limits(wall_s=60.0), {"LD_LIBRARY_PATH": str(find_toolchain().lib_dir)})
    run = run_split(cpu_sandbox, programs, job, "nogpu")
    try:
        assert run.timer.exit_code == 2 and "no usable CUDA device" in run.timer.stderr_tail
        # the runner ends at once: its watchdog sees the timer hang up (its exit code says nothing)
        assert run.runner.wall_s < 10, run.runner
        with pytest.raises(SystemFailure, match="the timer failed"):
            judge_split(run, InputHeader(prepared.spec.B, prepared.spec.N, prepared.spec.d), 2.0,
                       Expected(Path(prepared.expected_path), Path(prepared.expected_path),
                                5e-3, CAL, None))
        assert not (run.timer_dir / "timer.json").exists()
        assert json.dumps(run.report_error or "").count("file") >= 1
    finally:
        for directory in run.scratch:
            shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has a GPU")
def test_a_worker_without_gpu_fails_its_calibration_as_ours(
        tmp_path: Path, engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    """A split run calibrates the shape first, and that failing is an SE."""
    suite = load_suite("hw4-mini")
    prepared = prepare_suite(suite, engine_cache, "cpu", tests=["t02"])["t02"]
    ctx = RunContext(sandbox=cpu_sandbox, product=tmp_path / "libsolve.so",
                     inputs=InputCache(tmp_path / "cache"), tolerance=suite.tolerance,
                     env={"LD_LIBRARY_PATH": str(find_toolchain().lib_dir)})
    split = SplitTimer.build(tmp_path, "90")
    with pytest.raises(SystemFailure, match="calibration run failed.*no usable CUDA device"):
        run_split_kernel_test(ctx, prepared, prepared, split)
    assert split.calibrations == {}
