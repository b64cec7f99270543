"""The feedback block of a GPU result: roofline rows and flags, for GPU languages only."""

from __future__ import annotations

from flashjudge.contract import CompileResult, JudgeResult, KernelTiming, TestResult, Verdict
from worker.feedback.block import feedback_for
from worker.feedback.speed import SpeedOfLight

PROFILE = SpeedOfLight("GPU", 132, 60.0, 3000.0, 0.35, "now", tensor_peak_tflops=600.0,
                     reference_s={"hw4": {"t30": 0.02}})


def result(language: str, seconds: float) -> JudgeResult:
    tests = [TestResult(id="t30", verdict=Verdict.AC, seconds=seconds,
                        timing=KernelTiming(seconds, 0.0, seconds, 5, 2))]
    return JudgeResult(CompileResult(ok=True), tests, 60, 1, language, "hw4")


def test_a_kernel_result_gets_its_roofline_speedup_and_no_flag_when_plausible() -> None:
    block = feedback_for(result("cuda-kernel", 0.04), PROFILE)
    assert block is not None and block["flags"] == []
    assert block["roofline"][0]["speedup"] == 0.5
    assert "reference_s" not in block["gpu"] and block["gpu"]["peak_tflops"] == 60.0


def test_an_impossible_kernel_time_is_flagged_in_the_block() -> None:
    block = feedback_for(result("cuda-kernel", 0.0001), PROFILE)
    assert block is not None and [f["test_id"] for f in block["flags"]] == ["t30"]


def test_no_block_for_cpu_submissions_or_without_a_profile() -> None:
    assert feedback_for(result("c-program", 1.0), PROFILE) is None
    assert feedback_for(result("cuda-kernel", 1.0), None) is None
