"""A student's own history: compare two of one's submissions, the best-so-far.

Students see their own; TAs may pass any student's username (and compare any two submissions of
one student).
"""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.course import assignments
from app.db.models import Submission, User
from app.results import history
from app.schemas.history import (
    HistoryComparison,
    Progress,
    ProgressPointOut,
    SeriesOut,
    SubmissionBrief,
    TestDelta,
)
from app.web.deps import CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api/history", tags=["history"])


def brief(sub: Submission) -> SubmissionBrief:
    return SubmissionBrief(id=sub.id, created_at=sub.created_at, verdict=sub.verdict,
                           passed=sub.passed, score=sub.score, total_s=sub.total_time,
                           gpu_model=sub.gpu_model)


def comparison_out(found: history.Comparison) -> HistoryComparison:
    tests = [TestDelta(test_id=t.test_id, verdict_a=t.verdict_a, verdict_b=t.verdict_b,
                       seconds_a=t.seconds_a, seconds_b=t.seconds_b, changed=t.changed,
                       delta_s=t.delta_s) for t in found.tests]
    return HistoryComparison(a=brief(found.a), b=brief(found.b), tests=tests, fixed=found.fixed,
                             broken=found.broken, delta_total_s=found.delta_total_s)


def whose(db: Session, viewer: User, username: str | None) -> User:
    """The student whose history is asked for: oneself, or (TAs only) anyone by username."""
    if not username or username == viewer.username:
        return viewer
    if not viewer.is_ta:
        raise UserError("user: you can only see your own history", status=403, field="user")
    found = db.scalar(select(User).where(User.username == username))
    if found is None:
        raise UserError(f"user: no user {username!r}", status=404, field="user")
    return found


@router.get("/compare", response_model=HistoryComparison)
def compare(db: SessionDep, user: CurrentUser, a: int, b: int) -> HistoryComparison:
    """Two submissions of one student test by test: verdict changes, times and differences."""
    return comparison_out(history.compare(db, user, a, b))


@router.get("/progress", response_model=Progress)
def progress(db: SessionDep, settings: SettingsDep, viewer: CurrentUser,
             user: str | None = None, assignment: str | None = None) -> Progress:
    """The best-so-far total over time, one series per GPU model, for an assignment (default:
    the first open one); a student's hidden results are left out until the due time."""
    owner = whose(db, viewer, user)
    target = assignments.shown(db, assignment, settings.suite)
    series = history.best_so_far(history.judged(db, viewer, owner.id, target))
    return Progress(user=owner.username, suite=target.name, series=[
        SeriesOut(model=s.model, points=[ProgressPointOut(**vars(p)) for p in s.points])
        for s in series])
