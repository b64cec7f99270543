"""Response shapes of /api/submissions that the upload path owns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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


class MistakeOut(BaseModel):
    """The classic mistake a wrong output matches (the mistake catalogue)."""

    name: str = Field(description="the mistake's id, e.g. no_scale or no_rescale@32")
    line: str = Field(description="one sentence for the student: what the output equals")
    distance: float | None = Field(None, description="max |got - variant| / max(1, |variant|) "
                                   "where compared (rms error for a rounding mistake)")
    compared: str = Field("", description="what was compared, e.g. batches 0-3")
    how: str = Field("all", description="all: every compared value matches; wrong: the wrong "
                     "values only (the rest is right); errors: errors of the same size")


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
    floor_s: float | None = None  # the start-up floor of this test (None: cuda-kernel, unmeasured)
    above_floor_s: float | None = None  # seconds - floor_s: what the program's own work took
    mistake: MistakeOut | None = None  # WA: the classic mistake the output matches, if any


class FloorSummary(BaseModel):
    """The start-up floor of a whole-program result (cuda-program, c-program): the part of each
    time that a program which only starts, reads the input and writes the output takes on the
    worker that judged it. Shown so a change to the kernel is visible; ranks use `time`."""

    total_s: float | None  # the floors of every test together (None: some test has none)
    above_s: float | None  # time - total_s: the whole-program time above the floor
    what: str  # what the calibration program does
    runs: int  # runs behind each test's floor (their lower median)
    error: str | None = None  # why the worker could not measure it (then no floors)


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
    floor: FloorSummary | None = None  # the start-up floor (None: cuda-kernel, not measured)
    compile: dict[str, Any]  # {"ok", "log"}
    tests: list[TestRow]
    files: list[str]
