"""The result of judging, as the worker builds it and the app records it.

These are the shapes every consumer reads (the CLI's table and --json, the Celery adapter, the
service's recorder), so every field carries a comment. `JudgeResult.to_dict()` is the
`flashjudge judge-local --json` object and the `record_result` message; `from_dict` is how the app
reads it back, so neither side parses the other's dicts by hand.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from flashjudge.contract.status import Verdict


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of the dataclass `cls` (newer senders may add keys)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class KernelTiming:
    """GPU timings of solve() measured by the cuda-kernel harness."""

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
    error_map: dict[str, Any] | None = None  # WA only: kernels.errormap.ErrorMap.to_dict()
    mistake: dict[str, Any] | None = None  # WA only, when the output matches a classic
    # mistake: kernels.mistakes.match.Mistake.to_dict() ("name", "line" for the student, ...)
    shape: tuple[int, int, int] | None = None  # the test's (B, N, d)
    timing_source: str = ""  # cuda-kernel: what the time is: "events" (the student process's
    # CUDA events, shown consistent by the trusted timer), "bracket" (the trusted timer's own
    # clock) or "in-process" (the old harness: not verifiable, held)
    timing_flags: list[dict[str, Any]] = field(default_factory=list)  # why the time cannot be
    # shown honest: {"code", "reason", "holds"}; a holding flag keeps the result off the ranking

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: contract keys first, then the details."""
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        data["seconds"] = round(self.seconds, 6)
        data["shape"] = list(self.shape) if self.shape else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestResult:
        known = _known(cls, data)
        known["verdict"] = Verdict(known.get("verdict", "SE"))
        known["seconds"] = float(known.get("seconds") or 0.0)
        timing = known.get("timing")
        known["timing"] = KernelTiming(**_known(KernelTiming, timing)) if timing else None
        shape = known.get("shape")
        known["shape"] = tuple(shape) if shape else None
        return cls(**known)


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompileResult:
        return cls(**{"ok": False, **_known(cls, data)})


@dataclass
class JudgeResult:
    """The outcome of judging one submission against a suite."""

    compile: CompileResult  # the build step
    tests: list[TestResult]  # one per test, in suite order (all CE when the build failed)
    score: int  # the suite's score for this result (its scoring rule: testcases/*.toml)
    passed: int  # number of AC tests
    language: str  # the language the submission was judged as
    suite: str  # suite name, e.g. "hw4"
    insecure: bool = False  # judged WITHOUT the sandbox's protections (development only)
    system_error: str | None = None  # set when we failed (SE): the caller should judge it again
    prepare_s: float = 0.0  # seconds spent preparing the suite's inputs and expected outputs
    overhead_s: float = 0.0  # judge overhead over all tests (sum of TestResult.overhead_s)
    notes: list[str] = field(default_factory=list)  # extra lines for the student (e.g. "INSECURE")
    max_score: int = 0  # the suite's best possible score
    extra: dict[str, Any] = field(default_factory=dict)  # blocks added by the adapter
    # (feedback, worker, timing), carried through to_dict/from_dict untouched

    @property
    def total_seconds(self) -> float:
        """The scoreboard's Time column: the sum of the per-test seconds."""
        return sum(t.seconds for t in self.tests)

    @property
    def verdict(self) -> Verdict:
        """The submission's verdict: CE if the build failed, AC if every test passed, else the
        first failing test's verdict (SE when we failed)."""
        if self.system_error:
            return Verdict.SE
        if not self.compile.ok:
            return Verdict.CE
        return next((t.verdict for t in self.tests if t.verdict != Verdict.AC), Verdict.AC)

    def to_dict(self) -> dict[str, Any]:
        """The `judge-local --json` object (compile.ok/log, score, passed, tests[] first)."""
        return {
            "compile": self.compile.to_dict(), "score": self.score, "passed": self.passed,
            "tests": [t.to_dict() for t in self.tests], "language": self.language,
            "suite": self.suite, "verdict": str(self.verdict),
            "total_seconds": round(self.total_seconds, 6), "insecure": self.insecure,
            "system_error": self.system_error, "prepare_s": round(self.prepare_s, 4),
            "overhead_s": round(self.overhead_s, 4), "notes": list(self.notes),
            "max_score": self.max_score, **self.extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeResult:
        base = {f.name for f in fields(cls)} | {"verdict", "total_seconds"}
        return cls(
            compile=CompileResult.from_dict(data.get("compile") or {}),
            tests=[TestResult.from_dict(t) for t in data.get("tests") or []],
            score=int(data.get("score") or 0), passed=int(data.get("passed") or 0),
            language=str(data.get("language", "")), suite=str(data.get("suite", "")),
            insecure=bool(data.get("insecure")), system_error=data.get("system_error"),
            prepare_s=float(data.get("prepare_s") or 0),
            overhead_s=float(data.get("overhead_s") or 0),
            notes=list(data.get("notes") or []), max_score=int(data.get("max_score") or 0),
            extra={k: v for k, v in data.items() if k not in base},
        )
