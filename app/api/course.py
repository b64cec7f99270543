"""What the course offers the caller now: the assignments, the languages live workers judge, and
the deadline.

`flashjudge submit`, the submit page and scripts read these before uploading; an upload in a
language no live worker judges is refused anyway (409, with the same reason).
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter

from app.course import assignments, deadlines
from app.schemas.course import AssignmentOut, DeadlineStatusOut, LanguageOut, LanguagesOut
from app.submissions import capacity
from app.web.deps import CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api", tags=["course"])


@router.get("/languages", response_model=LanguagesOut)
def languages(db: SessionDep, settings: SettingsDep, _user: CurrentUser) -> LanguagesOut:
    """Every language, and whether some live worker (heartbeat within worker_live_s) judges it."""
    can = capacity.current(db, settings)
    return LanguagesOut(available=can.available, offered=[s.name for s in can.offered], languages=[
        LanguageOut(name=s.name, title=s.title, main_file=s.main_file, uses_gpu=s.uses_gpu,
                    available=s.available, workers=len(s.workers),
                    reason=None if s.available else can.why_not(s.name))
        for s in can.languages])


@router.get("/assignments", response_model=list[AssignmentOut])
def listing(db: SessionDep, settings: SettingsDep, user: CurrentUser) -> list[AssignmentOut]:
    """The current term's assignments a student may submit to (a TA: all of them), in order,
    each with the caller's deadline."""
    now = datetime.now(settings.course_zone)
    rows = assignments.in_term(db, settings.suite)
    return [AssignmentOut(name=a.name, title=a.label, suite=a.suite, open=a.is_open,
                          languages=a.language_list,
                          deadline=DeadlineStatusOut(**deadlines.status_for(
                              db, user, a, now).to_dict()))
            for a in rows if a.is_open or user.is_ta]


@router.get("/deadline", response_model=DeadlineStatusOut)
def deadline(db: SessionDep, settings: SettingsDep, user: CurrentUser,
             assignment: str | None = None) -> DeadlineStatusOut:
    """The caller's due time for an assignment (default: the first open one; a student may ask
    about open ones only), with their extension, by the server's clock: time left, or how
    late a submission now would be and what it would lose."""
    target = assignments.deadline_of(db, user, assignment, settings.suite)
    state = deadlines.status_for(db, user, target, datetime.now(settings.course_zone))
    return DeadlineStatusOut(**state.to_dict())
