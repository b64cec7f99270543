"""Verdicts from what happened: pure functions of the run, the output check and the comparison."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flashjudge.contract import KernelTiming, Verdict
from kernels.compare import compare_flat
from worker.harness.in_process import (
    KernelReport,
    classify_harness_exit,
    classify_kernel,
    parse_timing,
)
from worker.running.classify import OutputCheck, SystemFailure, classify
from worker.sandbox.bwrap import RunResult, RunStatus

SIZE = 4 * 8
GOOD = OutputCheck(present=True, size=SIZE, expected_size=SIZE)
WANT = np.linspace(-1, 1, 8, dtype=np.float32)
PASS = compare_flat(WANT + 1e-4, WANT)
FAIL = compare_flat(WANT + 1e-2, WANT)


def run(status: RunStatus = RunStatus.OK, wall: float = 0.5, code: int | None = 0,
        sig: int | None = None, stderr: str = "") -> RunResult:
    return RunResult(status, code, sig, wall, "", stderr, None, "")


@pytest.mark.parametrize(("result", "output", "report", "verdict"), [
    (run(), GOOD, PASS, Verdict.AC),
    (run(), GOOD, FAIL, Verdict.WA),
    (run(wall=2.5), GOOD, PASS, Verdict.TLE),  # finished, but over the limit as measured
    (run(RunStatus.TIMEOUT, 2.6, None), GOOD, None, Verdict.TLE),
    (run(RunStatus.MEMORY, code=None), GOOD, None, Verdict.MLE),
    (run(RunStatus.OUTPUT_LIMIT, code=None, sig=25), GOOD, None, Verdict.OLE),
    (run(RunStatus.SIGNALED, code=None, sig=11), GOOD, PASS, Verdict.RE),
    (run(RunStatus.EXIT_NONZERO, code=3), GOOD, PASS, Verdict.RE),
    (run(), OutputCheck(False, 0, SIZE), None, Verdict.NO),
    (run(), OutputCheck(True, SIZE - 4, SIZE), None, Verdict.NO),
])
def test_verdicts(result: RunResult, output: OutputCheck, report: object, verdict: Verdict) -> None:
    assert classify(result, 2.0, output, report).verdict == verdict


def test_messages_name_what_a_student_can_act_on() -> None:
    assert "SIGSEGV" in classify(run(RunStatus.SIGNALED, code=None, sig=11), 2, GOOD, None).message
    assert "exit status 3" in classify(run(RunStatus.EXIT_NONZERO, code=3), 2, GOOD, None).message
    wrong_size = classify(run(), 2, OutputCheck(True, 4, SIZE), None).message
    assert "4 bytes" in wrong_size and str(SIZE) in wrong_size
    assert "max error" in classify(run(), 2, GOOD, FAIL).message


def test_sandbox_failure_is_ours_not_a_verdict() -> None:
    with pytest.raises(SystemFailure):
        classify(run(RunStatus.SYSTEM_ERROR, code=None), 2.0, GOOD, None)


TIMING = KernelTiming(mean_s=0.010, std_s=0.0001, min_s=0.0099, runs=12, fresh_calls=3)


def report(**changes: object) -> KernelReport:
    values = {"timing": TIMING, "warmup_s": 0.02, "inconsistent_runs": 0, "too_slow": False}
    values.update(changes)
    return KernelReport(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("rep", "first", "fresh", "verdict", "words"), [
    (report(), PASS, PASS, Verdict.AC, "mean"),
    (report(), FAIL, PASS, Verdict.WA, "over tolerance"),
    (report(), PASS, FAIL, Verdict.WA, "fresh input"),
    (report(), PASS, None, Verdict.WA, "fresh input"),
    (report(inconsistent_runs=2), PASS, PASS, Verdict.WA, "repeated calls"),
    (report(too_slow=True, warmup_s=3.0), PASS, PASS, Verdict.TLE, "3.000 s"),
    (None, PASS, PASS, Verdict.RE, "timing record"),
])
def test_kernel_verdicts(rep: KernelReport | None, first: object, fresh: object, verdict: Verdict,
                         words: str) -> None:
    got = classify_kernel(rep, 2.0, GOOD, first, fresh)
    assert got.verdict == verdict and words in got.message


def test_harness_exit_codes_tell_our_failures_from_the_students() -> None:
    with pytest.raises(SystemFailure, match="cannot open input"):
        classify_harness_exit(run(RunStatus.EXIT_NONZERO, code=2,
                                  stderr="flashjudge-harness: cannot open input x\n"))
    crashed = classify_harness_exit(run(RunStatus.EXIT_NONZERO, code=4,
                                        stderr="flashjudge-harness: solve(): illegal address\n"))
    assert crashed is not None and crashed.verdict == Verdict.RE
    assert crashed.message == "solve(): illegal address"
    hung = classify_harness_exit(run(RunStatus.TIMEOUT, 40.0, None))
    assert hung is not None and hung.verdict == Verdict.TLE
    assert classify_harness_exit(run()) is None


def test_timing_record_is_parsed_and_garbage_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "timing.json"
    good.write_text('{"runs": 12, "mean_s": 0.01, "std_s": 0.0001, "min_s": 0.0099, '
                    '"warmup_s": 0.02, "fresh_calls": 3, "inconsistent_runs": 0, '
                    '"too_slow": false}')
    parsed = parse_timing(good)
    assert parsed is not None and parsed.timing == TIMING
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": "many"}')
    assert parse_timing(bad) is None
    assert parse_timing(None) is None
