"""Messages shaped exactly like the worker's: built with the real worker functions on synthetic
inputs (a judged hw4-mini result, a SpeedOfLight, captured sanitizer and ncu output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flashjudge.contract import CompileResult, JudgeResult, KernelTiming, TestResult, Verdict
from testcases.suite import load_suite
from worker.feedback.block import feedback_for
from worker.feedback.diagnosis import Diagnosis, summary_line
from worker.feedback.ncu_profile import Profile
from worker.feedback.ncu_report import parse_profile
from worker.feedback.sanitizer_report import parse_report
from worker.feedback.speed import SpeedOfLight

SAMPLES = Path(__file__).resolve().parents[2] / "worker" / "feedback" / "feedback_samples"
GPU = SpeedOfLight("NVIDIA H100 80GB HBM3", 132, 51.0, 3000.0, 0.35, "2026-11-22T09:00:00+00:00",
                 driver="580", tensor_peak_tflops=700.0,
                 reference_s={"hw4-mini": {t.id: 0.002 for t in load_suite("hw4-mini").tests}})


def judge_result(language: str, seconds: float, failing: tuple[str, ...] = ()) -> JudgeResult:
    """Every hw4-mini test at `seconds`; the tests in `failing` WA, the others AC."""
    tests = []
    for spec in load_suite("hw4-mini").tests:
        verdict = Verdict.WA if spec.id in failing else Verdict.AC
        timing = KernelTiming(seconds, 0.0, seconds, 5, 2) if language == "cuda-kernel" else None
        tests.append(TestResult(id=spec.id, verdict=verdict, seconds=seconds,
                                time_limit_s=spec.time_limit_s, timing=timing,
                                max_error=1e-6 if verdict == Verdict.AC else 0.5))
    passed = len(tests) - len(failing)
    return JudgeResult(CompileResult(ok=True), tests, max(0, 60 - 3 * len(failing)), passed,
                       language, "hw4-mini")


def result_message(language: str, seconds: float, failing: tuple[str, ...] = ()
                   ) -> dict[str, Any]:
    """The judge task's record_result body: JudgeResult.to_dict() plus the feedback block."""
    result = judge_result(language, seconds, failing)
    body = result.to_dict()
    body["feedback"] = feedback_for(result, GPU)
    return body


def diagnosis_message(test_id: str = "t02") -> dict[str, Any]:
    """Diagnosis.to_dict() of the planted misaligned float4 shared store, as on the H100."""
    text = (SAMPLES / "memcheck-h100-misaligned-shared.txt").read_text()
    diagnosis = Diagnosis(test_id, (2, 128, 64), [parse_report(text, "memcheck")])
    diagnosis.message = summary_line(diagnosis)
    return diagnosis.to_dict()


def profile_message(test_id: str = "t01") -> dict[str, Any]:
    """Profile.to_dict() of a captured H100 ncu run."""
    kernels = parse_profile((SAMPLES / "ncu-h100-details.csv").read_text(),
                            (SAMPLES / "ncu-h100-raw.csv").read_text())
    return Profile(test_id, kernels=kernels, report_path="/tmp/x.ncu-rep", seconds=12.5).to_dict()
