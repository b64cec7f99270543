"""From the pipeline's results and events to the policy's samples (result_samples.py)."""

from __future__ import annotations

import pytest

from flashjudge.contract import TestResult, Verdict
from worker.pipeline import JudgeEvent
from worker.timing.result_samples import (
    GpuEventRecorder,
    TestOutcome,
    first_pass_samples,
    sample_from_result,
)
from worker.timing.sample import Sample, gpu_sampled


def result(test_id: str, verdict: Verdict, seconds: float) -> TestResult:
    return TestResult(id=test_id, verdict=verdict, seconds=seconds, overhead_s=0.05)


def test_an_accepted_run_counts_and_costs_its_overhead_too() -> None:
    sample = sample_from_result(result("t01", Verdict.AC, 1.25))
    assert (sample.seconds, sample.passed) == (1.25, True)
    assert sample.cost == pytest.approx(1.30)


def test_any_other_verdict_is_a_failed_run() -> None:
    for verdict in (Verdict.WA, Verdict.TLE, Verdict.RE, Verdict.SE):
        assert not sample_from_result(result("t01", verdict, 1.0)).passed


def test_the_verdict_pass_keeps_the_suite_order() -> None:
    tests: list[TestOutcome] = [result("t02", Verdict.AC, 2.0), result("t01", Verdict.WA, 1.0)]
    samples = first_pass_samples(tests, GpuEventRecorder(None))
    assert list(samples) == ["t02", "t01"]
    assert samples["t01"].passed is False and samples["t02"].gpu_before is None


def test_without_nvml_nothing_is_read_and_runs_are_unchanged() -> None:
    recorder = GpuEventRecorder(None)
    recorder(JudgeEvent("test-start", "t01"))
    assert recorder.before == {}

    def run(test_id: str) -> Sample:
        return Sample(1.0, True)

    assert gpu_sampled(run, None) is run
