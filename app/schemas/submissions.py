"""Response shapes of /api/submissions that the upload path owns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Created(BaseModel):
    """A submission accepted for judging."""

    id: int  # watch it at /api/submissions/{id} (and /events)


class UploadLimits(BaseModel):
    """What the server accepts, so clients refuse a too-large file before sending it."""

    max_source_bytes: int  # per source file
    max_files: int  # per submission
    max_request_bytes: int  # the whole multipart body


class SubmissionRow(BaseModel):
    """One line of "my submissions"."""

    id: int
    status: str  # queued | running | done
    verdict: str | None  # AC, WA, ... once done (CE, SE, superseded, cancelled too)
    passed: int | None  # tests passed
    score: int | None  # the suite's score for the result
    time: float | None  # the Time column: sum of per-test seconds (refined when refined)
    language: str
    created_at: str  # ISO 8601, UTC
    assignment: str = ""  # the assignment it went to


class TestRow(BaseModel):
    """One test of a submission, as the result page shows it."""

    model_config = ConfigDict(extra="allow")  # feedback details ride along (error map, band)

    id: str
    verdict: str
    seconds: float | None
    max_error: float | None = None
    time_limit: float | None = None
    message: str = ""
    band_s: float | None = None  # +- of the refined time (None: the verdict pass's one run)
    runs: int | None = None  # runs behind the refined time
    first_seconds: float | None = None  # the verdict pass's time, before the refinement


class SubmissionDetail(BaseModel):
    """Status, verdict, score and per-test results of one submission."""

    model_config = ConfigDict(extra="allow")  # feedback, diagnosis, profiles, timing

    id: int
    user: str
    language: str
    suite: str
    assignment: str = ""  # the assignment it went to (its name)
    status: str
    verdict: str | None
    score: int | None
    passed: int | None
    time: float | None
    attempt: int
    created_at: str
    queue_position: int | None = None  # while queued: how many wait before it
    gpu_model: str | None = None  # the GPU model it was judged on (None: CPU track, not yet)
    timing: dict[str, Any] | None = None  # the refinement: total_s, total_band_s, runs, error
    compile: dict[str, Any]  # {"ok", "log"}
    tests: list[TestRow]
    files: list[str]
