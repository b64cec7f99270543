"""A cuda-kernel time the judge cannot show honest never ranks silently: the trusted timer's flags
travel on the test, and any holding flag reaches the feedback block that holds the result."""

from __future__ import annotations

from flashjudge.contract import CompileResult, JudgeResult, TestResult, Verdict
from worker.feedback.block import feedback_for
from worker.harness.verify import Flag, TimingVerdict
from worker.languages.cuda_kernel import IN_PROCESS_FLAG, with_timing


def verdict(*flags: Flag, source: str = "bracket") -> TimingVerdict:
    return TimingVerdict(ranked_s=1e-3, source=source, per_batch_s=(1e-3,), events_s=2e-4,
                         bracket_s=1e-3, wrong=None, flags=flags, timed_calls=64)


def judged(test: TestResult) -> JudgeResult:
    return JudgeResult(CompileResult(ok=True), [test], 60, 1, "cuda-kernel", "hw4")


def test_an_inconsistent_timing_is_flagged_and_held_without_a_speed_of_light() -> None:
    flag = Flag("events-inconsistent", "the events disagree with the timer's clock", True)
    test = with_timing(TestResult("t01", Verdict.AC, 1e-3), verdict(flag))
    assert test.timing_source == "bracket" and test.timing_flags[0]["code"] == flag.code
    block = feedback_for(judged(test), None)
    assert block is not None and block["flags"][0]["test_id"] == "t01"
    assert "disagree" in block["flags"][0]["reason"]


def test_a_consistent_timing_holds_nothing() -> None:
    test = with_timing(TestResult("t01", Verdict.AC, 1e-3), verdict(source="events"))
    assert test.timing_flags == [] and feedback_for(judged(test), None) is None


def test_the_in_process_fallback_holds_the_result() -> None:
    test = TestResult("t02", Verdict.AC, 4e-3, timing_source="in-process",
                      timing_flags=[IN_PROCESS_FLAG])
    block = feedback_for(judged(test), None)
    assert block is not None and "own process" in block["flags"][0]["reason"]


def test_the_flags_survive_the_wire() -> None:
    flag = Flag("below-floor", "faster than the GPU allows", True)
    test = with_timing(TestResult("t03", Verdict.AC, 1e-6), verdict(flag))
    back = JudgeResult.from_dict(judged(test).to_dict()).tests[0]
    assert back.timing_flags == test.timing_flags and back.timing_source == "bracket"
