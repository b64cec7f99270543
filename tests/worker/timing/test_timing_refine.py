"""The refinement phase for real: a c-program rebuilt in the sandbox and its passed tests re-run
through the same language and sandbox as the verdict pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashjudge.contract import Verdict
from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeConfig, JudgeRequest, judge
from worker.running.classify import SystemFailure
from worker.timing.policy import PolicyConfig
from worker.timing.refine import refine_submission

EVERY_TEST = PolicyConfig(tiny_s=0.0, tiny_share=0.0, extra_share=3.0, max_runs=3)


def recorded(result) -> dict[str, dict]:
    """The verdict pass as the service records it (what the refine message carries)."""
    return {t.id: {"seconds": t.seconds, "passed": t.verdict == Verdict.AC,
                   "cost_s": t.seconds + t.overhead_s} for t in result.tests}


def test_passed_tests_are_run_again_and_get_a_band(engine_cache: Path,
                                                   judge_config: JudgeConfig) -> None:
    request = JudgeRequest("c-program", load_case("correct-seq").files, "hw4-mini", ["t01", "t02"])
    first = judge(request, engine_cache, config=judge_config)
    assert [t.verdict for t in first.tests] == [Verdict.AC, Verdict.AC]
    report = refine_submission(request, recorded(first), engine_cache, judge_config, EVERY_TEST)
    for timing in report.tests:
        assert len(timing.samples) >= 2 and all(s.passed for s in timing.samples)
        assert timing.estimate.low <= timing.estimate.statistic <= timing.estimate.high
    assert report.runs >= 2 and report.total.high > report.total.low


def test_a_failed_test_is_never_run_again(engine_cache: Path, judge_config: JudgeConfig) -> None:
    request = JudgeRequest("c-program", load_case("wrong").files, "hw4-mini", ["t01"])
    first = judge(request, engine_cache, config=judge_config)
    assert first.tests[0].verdict == Verdict.WA
    report = refine_submission(request, recorded(first), engine_cache, judge_config, EVERY_TEST)
    assert report.runs == 0 and len(report.tests[0].samples) == 1


def test_a_submission_that_no_longer_builds_is_our_failure(engine_cache: Path,
                                                           judge_config: JudgeConfig) -> None:
    request = JudgeRequest("c-program", {"hw4.c": b"int main( {"}, "hw4-mini", ["t01"])
    with pytest.raises(SystemFailure, match="no longer builds"):
        refine_submission(request, {"t01": {"seconds": 0.1, "passed": True}}, engine_cache,
                          judge_config)
