"""A student's own history: two submissions side by side, and the best-so-far over time.

Built from the stored rows only (submissions and their per-test results). "Best" is the
scoreboard's rule: more passed tests, then less total time, then the earlier submission; the
best-so-far is kept per GPU model, since times on two models do not compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, selectinload

from app.core.errors import UserError
from app.course import visibility
from app.db.models import Assignment, Submission, User
from app.results.detail import get_visible
from app.submissions.lifecycle import SUPERSEDED
from flashjudge.contract import Status

CPU_TRACK = "CPU"  # the series label of results judged without a GPU


@dataclass(frozen=True)
class TestChange:
    """One test in both submissions."""

    test_id: str  # e.g. "t03"
    verdict_a: str | None  # its verdict in the first submission (None: not judged there)
    verdict_b: str | None  # in the second
    seconds_a: float | None  # its time in the first
    seconds_b: float | None  # in the second

    @property
    def changed(self) -> bool:
        """The verdict differs between the two."""
        return self.verdict_a != self.verdict_b

    @property
    def delta_s(self) -> float | None:
        """Second minus first, seconds (negative: faster); None unless both passed."""
        if self.verdict_a == self.verdict_b == "AC" and None not in (self.seconds_a,
                                                                      self.seconds_b):
            return (self.seconds_b or 0.0) - (self.seconds_a or 0.0)
        return None


@dataclass(frozen=True)
class Comparison:
    """Two submissions of one student, test by test."""

    a: Submission  # the first (usually the older)
    b: Submission  # the second
    tests: list[TestChange]  # every test either one has, in test order

    @property
    def fixed(self) -> list[str]:
        """Tests that failed in a and pass in b."""
        return [t.test_id for t in self.tests if t.changed and t.verdict_b == "AC"]

    @property
    def broken(self) -> list[str]:
        """Tests that passed in a and fail in b."""
        return [t.test_id for t in self.tests if t.changed and t.verdict_a == "AC"]

    @property
    def delta_total_s(self) -> float | None:
        """b's total time minus a's (None unless both have one and both ran tests: a compile
        error's total is 0 s, and an AC against it read as seconds saved)."""
        if self.a.total_time is None or self.b.total_time is None:
            return None
        if not (any(t.seconds_a is not None for t in self.tests)
                and any(t.seconds_b is not None for t in self.tests)):
            return None
        return self.b.total_time - self.a.total_time


def compare(db: Session, viewer: User, a_id: int, b_id: int) -> Comparison:
    """Compare two submissions the viewer may see, which must belong to one student."""
    a = get_visible(db, viewer, a_id)
    b = get_visible(db, viewer, b_id)
    for name, sub in (("a", a), ("b", b)):
        if not viewer.is_ta and visibility.level(db, sub) != visibility.ALL:
            raise UserError(f"{name}: submission {sub.id}'s results are shown after the due "
                            "time", status=403, field=name)
    if a.user_id != b.user_id:
        raise UserError("b: compare two submissions of the same student", field="b")
    rows_a = {t.test_id: t for t in a.tests}
    rows_b = {t.test_id: t for t in b.tests}
    tests = [TestChange(i, _verdict(rows_a.get(i)), _verdict(rows_b.get(i)),
                        _seconds(rows_a.get(i)), _seconds(rows_b.get(i)))
             for i in sorted(rows_a.keys() | rows_b.keys())]
    return Comparison(a, b, tests)


def _verdict(row: object) -> str | None:
    return getattr(row, "verdict", None)


def _seconds(row: object) -> float | None:
    return getattr(row, "seconds", None)


@dataclass(frozen=True)
class ProgressPoint:
    """The best-so-far right after one judged submission."""

    submission_id: int  # the submission judged at this point
    at: datetime  # when it was submitted (UTC)
    best_id: int  # the best submission so far (this one when it improved)
    passed: int  # the best-so-far's passed tests
    total_s: float  # the best-so-far's total time, seconds
    improved: bool  # this submission became the best
    verdict: str = ""  # this submission's own verdict (AC, WA, ...)
    own_passed: int = 0  # this submission's own passed tests
    own_s: float = 0.0  # this submission's own total time, seconds (0: none)


@dataclass(frozen=True)
class Series:
    """The best-so-far of one GPU model (or the CPU track) over time."""

    model: str  # the GPU model, or CPU_TRACK
    points: list[ProgressPoint]  # in submission order


def judged(db: Session, viewer: User, user_id: int, assignment: Assignment) -> list[Submission]:
    """The student's judged submissions to an assignment, oldest first (superseded ones left
    out; for a student, only those whose results the visibility rule shows in full)."""
    subs = list(db.scalars(
        select(Submission).where(Submission.user_id == user_id,
                                 or_(Submission.assignment_id == assignment.id,
                                     and_(Submission.assignment_id.is_(None),  # no assignment:
                                          Submission.suite == assignment.suite)),  # by suite
                                 Submission.status == Status.DONE,
                                 Submission.passed.is_not(None),
                                 Submission.verdict != SUPERSEDED)
        .order_by(Submission.created_at, Submission.id).options(selectinload(Submission.tests))))
    return subs if viewer.is_ta else [s for s in subs if visibility.level(db, s) == visibility.ALL]


def best_so_far(subs: list[Submission]) -> list[Series]:
    """One step series per GPU model: after each submission, the best of those so far."""
    series: dict[str, list[ProgressPoint]] = {}
    best: dict[str, Submission] = {}
    for sub in subs:
        model = sub.gpu_model or CPU_TRACK
        old = best.get(model)
        improved = old is None or rank_key(sub) < rank_key(old)
        if improved:
            best[model] = sub
        top = best[model]
        series.setdefault(model, []).append(ProgressPoint(
            sub.id, sub.created_at, top.id, top.passed or 0, top.total_time or 0.0, improved,
            sub.verdict or "", sub.passed or 0, sub.total_time or 0.0))
    return [Series(m, p) for m, p in series.items()]


def rank_key(sub: Submission) -> tuple[int, float, int]:
    """The scoreboard's order: more passed, then less time, then earlier."""
    return (-(sub.passed or 0), sub.total_time or 0.0, sub.id)
