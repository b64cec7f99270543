"""Response shapes of /api/history: two of a student's submissions compared, the best-so-far."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class SubmissionBrief(BaseModel):
    """One side of a comparison."""

    id: int
    created_at: datetime  # UTC
    verdict: str | None
    passed: int | None
    score: int | None
    total_s: float | None  # the scoreboard's time
    gpu_model: str | None  # the GPU it was judged on (None: CPU track)


class TestDelta(BaseModel):
    """One test in both submissions."""

    test_id: str
    verdict_a: str | None
    verdict_b: str | None
    seconds_a: float | None
    seconds_b: float | None
    changed: bool  # the verdict differs
    delta_s: float | None  # b - a when both passed (negative: b is faster)


class HistoryComparison(BaseModel):
    """Two submissions of one student, test by test."""

    a: SubmissionBrief
    b: SubmissionBrief
    tests: list[TestDelta]
    fixed: list[str]  # failed in a, pass in b
    broken: list[str]  # passed in a, fail in b
    delta_total_s: float | None  # b's total time minus a's


class ProgressPointOut(BaseModel):
    """The best-so-far right after one judged submission."""

    submission_id: int
    at: datetime  # UTC
    best_id: int  # the best submission so far
    passed: int
    total_s: float
    improved: bool  # this submission became the best


class SeriesOut(BaseModel):
    """The best-so-far on one GPU model (or "CPU")."""

    model: str
    points: list[ProgressPointOut]


class Progress(BaseModel):
    """A student's best-so-far over time, per GPU model."""

    user: str
    suite: str
    series: list[SeriesOut]
