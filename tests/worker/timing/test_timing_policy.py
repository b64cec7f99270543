"""The refinement policy on scripted runs: a runner that returns known times is a real input."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest

from worker.timing.gpustate import GPU_IDLE, SW_POWER_CAP, GpuSample
from worker.timing.policy import PolicyConfig, refine
from worker.timing.report import StopReason, TimingReport
from worker.timing.sample import Sample

IDLE = GpuSample(1980, 2619, 40, 70.0, GPU_IDLE, 0, 0)
CAPPED = GpuSample(1410, 2619, 80, 700.0, SW_POWER_CAP, 0, 0)
QUIET = [1.000, 1.001, 0.999, 1.000, 1.001]  # relative noise ~0.1%: settles at 3 runs
NOISY = [1.00, 1.10, 0.90, 1.05, 0.95, 1.12, 0.88, 1.04, 0.96, 1.08, 0.92]  # ~8%: never settles
ROOMY = PolicyConfig(extra_share=100.0)  # a budget that never binds


def ok(seconds: float) -> Sample:
    return Sample(seconds, True)


def throttled(seconds: float) -> Sample:
    return Sample(seconds, True, gpu_before=IDLE, gpu_after=CAPPED)


class Script:
    """Runs each test through its scripted samples, cycling; records the calls."""

    def __init__(self, runs: dict[str, list[Sample]]) -> None:
        self.runs: dict[str, Iterator[Sample]] = {k: itertools.cycle(v) for k, v in runs.items()}
        self.calls: list[str] = []

    def __call__(self, test_id: str) -> Sample:
        self.calls.append(test_id)
        return next(self.runs[test_id])


def first_pass(**seconds: float) -> dict[str, Sample]:
    return {test_id: ok(s) for test_id, s in seconds.items()}


def test_a_quiet_test_stops_at_the_target_and_a_noisy_one_gets_the_runs() -> None:
    script = Script({"quiet": [ok(t) for t in QUIET[1:]], "noisy": [ok(t) for t in NOISY[1:]]})
    report = refine(first_pass(quiet=QUIET[0], noisy=NOISY[0]), script, ROOMY)
    quiet, noisy = report.test("quiet"), report.test("noisy")
    assert (quiet.stop, len(quiet.samples)) == (StopReason.TARGET, 3)
    assert quiet.estimate.rse <= 0.01
    assert noisy.stop == StopReason.MAX_RUNS and len(noisy.samples) == ROOMY.max_runs
    assert report.stopped == "settled"


def test_the_refinement_stays_within_half_a_pass() -> None:
    tests = {f"t{i:02}": 1.0 + 0.1 * i for i in range(10)}
    script = Script({k: [ok(v * f) for f in (1.08, 0.93, 1.05)] for k, v in tests.items()})
    report = refine(first_pass(**tests), script, PolicyConfig(extra_share=0.5))
    assert report.spent_s <= 0.5 * report.first_pass_s
    assert report.cost_ratio <= 1.5
    assert report.stopped == "budget"
    assert report.runs == len(script.calls) > 0


def test_the_longest_tests_get_the_runs_and_tiny_ones_none() -> None:
    tests = {"mid": 1.0, "big": 2.0, "a": 1.0, "b": 1.0, "tiny": 0.05}
    script = Script({k: [ok(v * f) for f in (1.06, 0.95)] for k, v in tests.items()})
    report = refine(first_pass(**tests), script, PolicyConfig(extra_share=1.0))
    assert script.calls == ["big", "big"]  # then 1.03 s is left: no 1 s test fits with margin
    assert report.test("tiny").stop == StopReason.TINY
    assert [len(t.samples) for t in report.tests] == [1, 3, 1, 1, 1]


def test_a_throttled_run_is_left_out_and_redone_once() -> None:
    script = Script({"t01": [ok(1.0), throttled(1.4), ok(1.0), ok(1.0)]})
    report = refine(first_pass(t01=1.0), script, ROOMY)
    timing = report.test("t01")
    assert [s.kept for s in timing.samples][:3] == [True, True, False]
    assert timing.estimate.statistic == 1.0 and not timing.flagged
    assert len(script.calls) == len(timing.samples) - 1


def test_a_second_throttled_run_is_kept_and_flagged() -> None:
    script = Script({"t01": [throttled(1.3)]})
    report = refine(first_pass(t01=1.0), script, PolicyConfig(extra_share=100.0, max_runs=3))
    timing = report.test("t01")
    assert [s.kept for s in timing.samples] == [True, False, True, True]
    assert timing.flagged


def test_throttled_verdict_runs_are_redone_first_the_longest_first() -> None:
    first = {"t01": throttled(1.5), "t02": ok(1.0), "t03": throttled(3.0)}
    script = Script({"t01": [ok(1.0)], "t02": [ok(1.0)], "t03": [ok(2.0)]})
    report = refine(first, script, ROOMY)
    assert script.calls[:2] == ["t03", "t01"]
    assert report.test("t01").samples[0].kept is False
    assert report.test("t01").estimate.statistic == 1.0


def test_runs_come_in_pairs_so_the_statistic_is_a_middle_run() -> None:
    script = Script({"a": [ok(t) for t in QUIET[1:]], "b": [ok(t) for t in QUIET[1:]]})
    report = refine(first_pass(a=1.0, b=1.0), script, ROOMY)
    assert script.calls[:4] == ["a", "a", "b", "b"]
    assert all(len(t.samples) % 2 == 1 for t in report.tests)


def test_a_failed_test_is_never_run_again() -> None:
    first = {"t01": Sample(2.0, False), "t02": ok(1.0)}
    script = Script({"t02": [ok(1.0)]})
    report = refine(first, script, ROOMY)
    assert "t01" not in script.calls
    assert report.test("t01").stop == StopReason.FAILED


def test_a_repeat_that_fails_ends_the_repeats_and_its_time_is_unused() -> None:
    script = Script({"t01": [Sample(0.2, False), ok(1.0)]})
    report = refine(first_pass(t01=1.0), script, ROOMY)
    timing = report.test("t01")
    assert script.calls == ["t01"] and timing.stop == StopReason.FAILED_REPEAT
    assert timing.estimate.statistic == 1.0 and timing.samples[1].kept is False


def test_the_total_band_covers_the_tests() -> None:
    script = Script({"a": [ok(t) for t in QUIET[1:]], "b": [ok(2 * t) for t in QUIET[1:]]})
    report = refine(first_pass(a=1.0, b=2.0), script, ROOMY)
    assert report.total.statistic == pytest.approx(3.0, rel=1e-3)
    assert report.total.low < report.total.statistic < report.total.high


def test_the_report_survives_its_message_form() -> None:
    script = Script({"t01": [throttled(1.3), ok(1.0)], "t02": [ok(0.5)]})
    report = refine(first_pass(t01=1.0, t02=0.5), script, ROOMY)
    data = json.loads(json.dumps(report.to_dict()))
    assert TimingReport.from_dict(data) == report
    assert data["tests"][0]["samples"][1]["throttled"] is True
