"""Verdicts and the result dataclasses the judging pipeline returns.

These are the shapes every consumer reads (the CLI's table and --json, the Celery adapter, the
service's recorder), so every field carries a comment saying what it means. `JudgeResult.to_dict()`
is the `flashjudge judge-local --json` object: the keys `compile`, `score`, `passed` and `tests`
(each with `id`, `verdict`, `seconds`, `max_error`) are a contract; the others are extra detail.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    """One verdict per test (CE and SE apply to the whole submission)."""

    AC = "AC"  # accepted: every number within tolerance, in time
    WA = "WA"  # wrong answer: some number off by more than the tolerance (or NaN/inf)
    TLE = "TLE"  # time limit exceeded (measured wall time over the test's limit)
    RE = "RE"  # runtime error: non-zero exit status or killed by a signal
    MLE = "MLE"  # memory limit exceeded (host memory, cgroup)
    OLE = "OLE"  # output limit exceeded (wrote more than the output may hold)
    NO = "NO"  # no output: the output file is missing, not a regular file, or of the wrong size
    CE = "CE"  # compile error: the build failed (the log says why)
    SE = "SE"  # system error: our failure, to be retried, never the student's fault


@dataclass
class KernelTiming:
    """GPU timings of solve() measured by the cuda-kernel harness with CUDA events."""

    mean_s: float  # mean of the timed calls, seconds
    std_s: float  # sample standard deviation of the timed calls, seconds
    min_s: float  # fastest timed call, seconds
    runs: int  # number of timed calls (3..100)
    fresh_calls: int  # how many of them ran on the second (fresh) input


@dataclass
class TestResult:
    """The outcome of one test."""

    __test__ = False  # not a pytest test class, despite the name

    id: str  # test id, e.g. "t01"
    verdict: Verdict  # the verdict for this test
    seconds: float  # the time that counts: the process's wall time (cuda-kernel: mean solve() time)
    max_error: float | None = None  # max absolute error vs the expected output (None: not compared)
    over_tolerance: int = 0  # how many numbers were off by more than the tolerance
    mismatches: list[dict[str, Any]] = field(default_factory=list)  # the first few, located
    exit_code: int | None = None  # the program's exit status, None if killed by a signal or not run
    signal: int | None = None  # the signal that killed the program, if any
    stdout_tail: str = ""  # last bytes (<= 16 KiB) of the program's standard output
    stderr_tail: str = ""  # last bytes (<= 16 KiB) of the program's standard error
    message: str = ""  # one line for the student: why this verdict
    time_limit_s: float = 0.0  # the test's time limit, seconds
    wall_s: float = 0.0  # the sandboxed process's wall time as the judge measured it, seconds
    memory_peak_bytes: int | None = None  # peak host memory of the run, if the sandbox reported it
    timing: KernelTiming | None = None  # cuda-kernel only: the harness's solve() statistics
    overhead_s: float = 0.0  # judge time for this test outside the run (setup, sandbox, compare)
    overhead_parts: dict[str, float] = field(default_factory=dict)  # overhead by phase: setup,
    # sandbox (start/stop around the program), compare (output check + comparison)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: contract keys first, then the details."""
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        data["seconds"] = round(self.seconds, 4)
        return data


@dataclass
class CompileResult:
    """The outcome of building the submission."""

    ok: bool  # did the build produce what the language needs
    log: str = ""  # the compiler's output (capped), shown to the student
    seconds: float = 0.0  # wall time of the build
    notes: list[str] = field(default_factory=list)  # what the judge changed (e.g. sm_61 -> sm_90)
    command: str = ""  # the build command, as the student would type it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class JudgeResult:
    """The outcome of judging one submission against a suite."""

    compile: CompileResult  # the build step
    tests: list[TestResult]  # one per test, in suite order (all CE when the build failed)
    score: int  # the suite's score for the failed count (hw4: max(0, 60 - 3k))
    passed: int  # number of AC tests
    language: str  # the language the submission was judged as
    suite: str  # suite name, e.g. "hw4"
    insecure: bool = False  # judged WITHOUT the sandbox's protections (development only)
    system_error: str | None = None  # set when we failed (SE): the caller should judge it again
    prepare_s: float = 0.0  # seconds spent preparing the suite's inputs and expected outputs
    overhead_s: float = 0.0  # judge overhead over all tests (sum of TestResult.overhead_s)
    notes: list[str] = field(default_factory=list)  # extra lines for the student (e.g. "INSECURE")

    @property
    def total_seconds(self) -> float:
        """The scoreboard's Time column: the sum of the per-test seconds."""
        return sum(t.seconds for t in self.tests)

    def to_dict(self) -> dict[str, Any]:
        """The `judge-local --json` object (compile.ok/log, score, passed, tests[] first)."""
        return {
            "compile": self.compile.to_dict(),
            "score": self.score,
            "passed": self.passed,
            "tests": [t.to_dict() for t in self.tests],
            "language": self.language,
            "suite": self.suite,
            "total_seconds": round(self.total_seconds, 4),
            "insecure": self.insecure,
            "system_error": self.system_error,
            "prepare_s": round(self.prepare_s, 4),
            "overhead_s": round(self.overhead_s, 4),
            "notes": list(self.notes),
        }
