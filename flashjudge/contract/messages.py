"""The messages the app sends to workers, and the small ones workers send back besides results.

Every message is a dataclass with `to_dict()` (what goes on the wire, JSON only) and `from_dict()`
(what the other side reads), so a field added here is added for both sides at once.
"""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass, field, fields
from typing import Any


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class Attempt:
    """Which judging of which submission a message is about; results of other attempts are stale."""

    submission_id: int  # the service's submission id
    attempt: int  # which send of it this is (a re-send after a lost worker is attempt + 1)
    key: str  # random key of this attempt, echoed in every message about it


@dataclass(frozen=True)
class JudgePayload:
    """Task `flashjudge.judge`: only what a worker needs to judge one attempt."""

    attempt: Attempt  # the attempt being judged
    language: str  # a name from contract.languages.LANGUAGES
    files: dict[str, bytes]  # file name -> content (base64 on the wire)
    suite: str  # suite name, e.g. "hw4"
    tests: list[str] | None = None  # test ids to judge (None: all)
    seed: int | None = field(default=None, repr=False)  # a hidden seed for the suite's inputs
    # (None: the suite's own); secret (hidden tests): kept out of repr, so no log line shows it
    gpu_model: str | None = None  # judge only on this GPU model (None: any)
    libraries_allowed: bool = False  # the assignment lets library kernels compute the answer
    # (the suite's own-kernels rule lifted; a second process on the GPU stays BK)

    def to_dict(self) -> dict[str, Any]:
        return {"submission_id": self.attempt.submission_id, "attempt": self.attempt.attempt,
                "job": self.attempt.key, "language": self.language,
                "files": {n: base64.b64encode(d).decode() for n, d in self.files.items()},
                "suite": self.suite, "tests": self.tests, "seed": self.seed,
                "gpu_model": self.gpu_model, "libraries_allowed": self.libraries_allowed}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgePayload:
        attempt = Attempt(int(data["submission_id"]), int(data["attempt"]),
                          str(data.get("job", "")))
        return cls(attempt,
                   language=str(data["language"]),
                   files={n: base64.b64decode(d) for n, d in data["files"].items()},
                   suite=str(data["suite"]), tests=data.get("tests"), seed=data.get("seed"),
                   gpu_model=data.get("gpu_model"),
                   libraries_allowed=bool(data.get("libraries_allowed", False)))


@dataclass(frozen=True)
class ProfilePayload:
    """Task `flashjudge.profile`: one ncu run of a judged submission on one test."""

    judge: JudgePayload  # the submission as it was judged
    profile_id: int  # the service's profile row
    test_id: str  # the test to profile
    yields: int = 0  # how often it already gave way to waiting judgings

    def to_dict(self) -> dict[str, Any]:
        return {**self.judge.to_dict(), "profile_id": self.profile_id, "test_id": self.test_id,
                "yields": self.yields}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProfilePayload:
        return cls(JudgePayload.from_dict(data), int(data["profile_id"]), str(data["test_id"]),
                   int(data.get("yields", 0)))


@dataclass(frozen=True)
class RefinePayload:
    """Task `flashjudge.refine_timing`: after the verdicts, run the passed tests again until their
    times can carry a rank (worker/timing/). The result comes back as `record_timing`."""

    judge: JudgePayload  # the submission as it was judged (same attempt)
    tests: dict[str, dict[str, Any]]  # the verdict pass: test id -> seconds, passed, cost_s

    def to_dict(self) -> dict[str, Any]:
        return {**self.judge.to_dict(), "first_pass": self.tests}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RefinePayload:
        return cls(JudgePayload.from_dict(data), dict(data.get("first_pass") or {}))


@dataclass(frozen=True)
class FingerprintPayload:
    """Task `flashjudge.fingerprint` (on `control`): fingerprint stored documents for the TAs'
    similarity page. One of the two ids is set, or `submission_ids` (the API gathers a burst of
    new submissions into one message: app/submissions/fingerprint_batch.py); the control worker
    reads the text from the database, so the message stays small."""

    submission_id: int | None = None  # a stored submission's id
    source_id: int | None = None  # a TA-uploaded public or base source's id
    submission_ids: list[int] = field(default_factory=list)  # several stored submissions

    def to_dict(self) -> dict[str, Any]:
        """The fields, without an empty `submission_ids` (a one-document message as before)."""
        return {k: v for k, v in asdict(self).items() if k != "submission_ids" or v}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FingerprintPayload:
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class CustomRunPayload:
    """Task `flashjudge.custom_run`: the reference output of an uploaded input file."""

    run_id: int  # the service's custom-run row
    attempt: int  # which send of it this is
    input_path: str  # the uploaded input (a data dir shared with the worker)
    output_path: str  # where the reference output goes
    own_output_path: str | None = None  # the user's own output to compare, if uploaded
    time_limit_s: float = 120.0  # the whole run's wall-time limit
    queue: str = "custom-gpu"  # the queue it waits on (custom-gpu or custom-cpu)
    yields: int = 0  # how often it already gave way to waiting judgings

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CustomRunPayload:
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class ProgressEvent:
    """Message `flashjudge.record_progress`: one step of a running judging."""

    type: str  # "started", "compile", "prepare", "test-start", "test-done"
    test_id: str | None = None  # the test it is about, if any
    index: int = 0  # the test's position in the suite (1-based), 0 if none
    total: int = 0  # the number of tests being judged
    ok: bool | None = None  # compile events: did the build succeed
    log: str | None = None  # compile events: the build log
    test: dict[str, Any] | None = None  # test-done: TestResult.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProgressEvent:
        return cls(**{"type": str(data.get("type") or data.get("event") or ""),
                      **{k: v for k, v in _known(cls, data).items() if k != "type"}})


@dataclass(frozen=True)
class WorkerStatus:
    """Message `flashjudge.worker_status`: a judge worker's heartbeat."""

    hostname: str  # "gpu0@node1": one row per worker process
    gpu: str  # the GPU model as NVML names it, or "cpu"
    queues: str  # comma-separated queues it consumes
    busy: bool = False  # judging right now
    job: dict[str, Any] | None = None  # {"submission_id", "attempt", "job"} while busy
    languages: list[str] = field(default_factory=list)  # languages it can judge
    pid: int = 0  # the worker process id (a restarted worker is a new pid)
    state: str = ""  # "": it takes jobs; else what it does before it can ("starting (preflight)",
    # announced by `flashjudge worker` before its Celery process is up) or instead ("draining: ...")
    slurm: dict[str, Any] | None = None  # the Slurm job it lives in (SlurmJob.summary(): job_id,
    # node, partition, gpus, end_time in epoch seconds or None), None outside Slurm

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkerStatus:
        return cls(**{"gpu": "", "queues": "", **_known(cls, data)})
