"""TA endpoints: all submissions, rejudge, freeze, grades, queue and worker status.

Users, links and tokens: app/routes/users.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from app.core.deps import SessionDep, SettingsDep, TAUser
from app.core.errors import UserError
from app.services import admin, feedback, profiles, scoreboard, submissions
from testcases.suite import load_suite

router = APIRouter(prefix="/api/admin", tags=["TA"])


@router.get("/submissions")
def all_submissions(db: SessionDep, _ta: TAUser) -> list[dict[str, Any]]:
    """Every submission, newest first, with system errors."""
    return admin.all_submissions(db)


@router.post("/submissions/{submission_id}/rejudge", status_code=202)
def rejudge(db: SessionDep, settings: SettingsDep, ta: TAUser,
            submission_id: int) -> dict[str, int]:
    """Judge one submission again."""
    admin.rejudge(db, ta, submissions.get_visible(db, ta, submission_id), settings)
    return {"id": submission_id}


@router.post("/rejudge-all", status_code=202)
def rejudge_all(db: SessionDep, settings: SettingsDep, ta: TAUser) -> dict[str, int]:
    """Judge every finished submission again."""
    return {"count": admin.rejudge_all(db, ta, settings)}


@router.post("/scoreboard/freeze")
def freeze(db: SessionDep, ta: TAUser) -> dict[str, bool]:
    """Freeze the public scoreboard (students see it as of now; TAs see it live)."""
    admin.freeze(db, ta, True)
    return {"frozen": True}


@router.post("/scoreboard/unfreeze")
def unfreeze(db: SessionDep, ta: TAUser) -> dict[str, bool]:
    """Unfreeze the public scoreboard."""
    admin.freeze(db, ta, False)
    return {"frozen": False}


@router.get("/grades.csv", response_class=PlainTextResponse)
def grades(db: SessionDep, settings: SettingsDep, _ta: TAUser) -> PlainTextResponse:
    """Grades per student from the best submission: the suite's score rule."""
    return PlainTextResponse(scoreboard.grades_csv(db, load_suite(settings.suite)),
                             media_type="text/csv")


@router.get("/status")
def status(db: SessionDep, _ta: TAUser) -> dict[str, Any]:
    """Queue lengths and workers (GPU name, busy or idle)."""
    return admin.status(db)


@router.post("/submissions/{submission_id}/clear-flag")
def clear_flag(db: SessionDep, ta: TAUser, submission_id: int) -> dict[str, Any]:
    """Let a result held by a speed-of-light flag be ranked (audited: who, when)."""
    feedback.clear_flag(db, ta, submissions.get_visible(db, ta, submission_id))
    return {"id": submission_id, "flag_status": "cleared"}


@router.post("/student-profiles/{state}")
def student_profiles(db: SessionDep, settings: SettingsDep, ta: TAUser,
                     state: str) -> dict[str, bool]:
    """Allow ("on") or forbid ("off") students to ask for ncu profiles."""
    if state not in ("on", "off"):
        raise UserError("state must be 'on' or 'off'", field="state")
    profiles.set_students_allowed(db, ta, state == "on")
    return {"allowed": profiles.students_allowed(db, settings)}
