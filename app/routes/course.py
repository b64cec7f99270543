"""What the course offers the caller now: the languages live workers judge, and the deadline.

`flashjudge submit`, the submit page and scripts read these before uploading; an upload in a
language no live worker judges is refused anyway (409, with the same reason).
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter

from app.judging import capacity, deadlines
from app.schemas.course import DeadlineStatusOut, LanguageOut, LanguagesOut
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


@router.get("/deadline", response_model=DeadlineStatusOut)
def deadline(db: SessionDep, settings: SettingsDep, user: CurrentUser) -> DeadlineStatusOut:
    """The caller's due time for the deployment's suite (with their extension), by the server's
    clock: time left, or how late a submission now would be and what it would lose."""
    state = deadlines.status_for(db, user, settings.suite, datetime.now(settings.course_zone))
    return DeadlineStatusOut(**state.to_dict())
