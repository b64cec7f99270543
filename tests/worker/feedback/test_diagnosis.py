"""When a diagnosis runs, on what input, built how, and what the student reads (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

from flashjudge.contract import CompileResult, JudgeResult, TestResult, Verdict
from testcases.suite import load_suite
from worker.feedback.diagnosis import (
    Diagnosis,
    DiagnosisConfig,
    diagnose,
    failing_test,
    sanitizer_argv,
    small_spec,
    summary_line,
)
from worker.feedback.sanitizer_report import parse_report
from worker.languages import BuildSettings, get_language
from worker.pipeline import JudgeRequest

MISALIGNED = """\
========= Invalid __shared__ write of size 16 bytes
=========     at attention(const float *, float *, int, int)+0x2d0 in /work/hw4.cu:24
=========     by thread (5,0,0) in block (0,1,0)
=========     Address 0x104 is misaligned
========= ERROR SUMMARY: 4 errors
"""


def judged(language: str, *verdicts: Verdict) -> JudgeResult:
    tests = [TestResult(id=f"t0{i + 1}", verdict=v, seconds=0.3) for i, v in enumerate(verdicts)]
    return JudgeResult(compile=CompileResult(ok=True), tests=tests, score=0, passed=0,
                       language=language, suite="hw4")


def test_the_first_wa_re_or_no_is_diagnosed_and_tle_alone_is_not() -> None:
    result = judged("cuda-program", Verdict.AC, Verdict.TLE, Verdict.RE, Verdict.WA)
    assert (failing := failing_test(result)) is not None and failing.id == "t03"
    assert failing_test(judged("cuda-program", Verdict.AC, Verdict.TLE)) is None


def test_passing_cpu_and_uncompiled_submissions_cost_nothing(tmp_path: Path) -> None:
    request = JudgeRequest("cuda-program", {"hw4.cu": b""})
    assert diagnose(request, judged("cuda-program", Verdict.AC), tmp_path) is None
    assert diagnose(request, judged("c-program", Verdict.WA), tmp_path) is None
    ce = judged("cuda-program", Verdict.CE)
    ce.compile.ok = False
    assert diagnose(request, ce, tmp_path) is None


def test_the_small_input_keeps_d_and_caps_b_and_n() -> None:
    t12 = load_suite("hw4").test("t12")  # B=9600, N=128, d=64
    small = small_spec(t12, DiagnosisConfig())
    assert (small.B, small.N, small.d, small.seed) == (2, 128, 64, t12.seed)
    small = small_spec(load_suite("hw4").test("t30"), DiagnosisConfig())
    assert (small.B, small.N, small.d) == (2, 256, 64)


def test_the_diagnosis_build_adds_lineinfo_to_nvcc_and_to_a_students_makefile() -> None:
    settings = BuildSettings(nvcc_flags=("-lineinfo",))
    program = get_language("cuda-program")
    assert program.plan({"hw4.cu": b""}, settings).argv[-1] == "-lineinfo"
    made = program.plan({"hw4.cu": b"", "Makefile": b"hw4:\n\tnvcc -o hw4 hw4.cu\n"}, settings)
    assert made.argv == ["env", "NVCC_APPEND_FLAGS=-lineinfo", "make", "hw4"]
    kernel = get_language("cuda-kernel").plan({"solve.cu": b"void solve("}, settings)
    assert "-lineinfo" in kernel.argv
    assert "-lineinfo" not in program.plan({"hw4.cu": b""}, BuildSettings()).argv  # judging


def test_the_sanitizer_writes_its_report_to_a_log_in_the_work_dir() -> None:
    argv = sanitizer_argv("/usr/local/cuda/bin/compute-sanitizer", "memcheck",
                          ["./hw4", "/input/input.bin", "output.bin"])
    assert argv[1:5] == ["--tool", "memcheck", "--log-file", "/work/sanitizer.log"]
    assert argv[-3:] == ["./hw4", "/input/input.bin", "output.bin"]


def test_the_student_reads_kind_line_thread_and_how_many_more() -> None:
    diagnosis = Diagnosis("t05", (2, 256, 32), [parse_report(MISALIGNED)])
    assert summary_line(diagnosis) == (
        "memcheck on a small input (B=2, N=256, d=32) like t05's: Invalid __shared__ write of "
        "size 16 bytes at hw4.cu:24 (thread (5, 0, 0), block (0, 1, 0)); 3 more")
    clean = Diagnosis("t05", (2, 256, 32), [parse_report("========= ERROR SUMMARY: 0 errors",
                                                         "memcheck"),
                                            parse_report("", "racecheck")])
    assert "memcheck and racecheck" in summary_line(clean)
    assert "no memory error or race" in summary_line(clean)
