"""TA endpoints: all submissions, rejudge, cancel, freeze, paired runs, grades, deadlines, queue
and workers.

Users, links and tokens: app/api/users.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.course import assignments, deadlines
from app.results import detail, overview
from app.schemas.admin import (
    AdminSubmissionOut,
    CancelOut,
    CancelQueuedIn,
    CancelQueuedOut,
    DeadlineIn,
    DeadlineOut,
    ExtensionIn,
    ExtensionOut,
    FlagClearedOut,
    FreezeOut,
    PairedAgainOut,
    PairedStartOut,
    RejudgeAllOut,
    Removed,
    StatusOut,
    StudentProfilesOut,
    SubmissionRef,
)
from app.scoreboard import lms
from app.scoreboard.freeze import freeze as freeze_board
from app.scoreboard.paired import service as paired
from app.submissions import feedback, profiles, ta_actions
from app.web import downloads
from app.web.deps import BoardsDep, SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/admin", tags=["TA"])


@router.get("/submissions", response_model=list[AdminSubmissionOut])
def all_submissions(db: SessionDep, _ta: TAUser) -> list[dict[str, Any]]:
    """Every submission, newest first, with system errors and late marks."""
    return overview.all_submissions(db)


@router.post("/submissions/{submission_id}/rejudge", status_code=202,
             response_model=SubmissionRef)
def rejudge(db: SessionDep, settings: SettingsDep, ta: TAUser,
            submission_id: int) -> SubmissionRef:
    """Judge one submission again."""
    ta_actions.rejudge(db, ta, detail.get_visible(db, ta, submission_id), settings)
    return SubmissionRef(id=submission_id)


@router.post("/rejudge-all", status_code=202, response_model=RejudgeAllOut)
def rejudge_all(db: SessionDep, settings: SettingsDep, ta: TAUser) -> RejudgeAllOut:
    """Judge again every submission of the suite: judged, queued and running ones (superseded
    and cancelled ones are left alone); the answer says how many of each."""
    report = ta_actions.rejudge_all(db, ta, settings)
    return RejudgeAllOut(count=report.count, by_status=report.by_status, skipped=report.skipped,
                         waiting=report.waiting, message=report.message())


@router.post("/submissions/{submission_id}/cancel", response_model=CancelOut)
def cancel(db: SessionDep, settings: SettingsDep, ta: TAUser, submission_id: int) -> CancelOut:
    """Cancel a queued or running submission (it shows as CANCELLED; audited)."""
    sub = detail.get_visible(db, ta, submission_id)
    ta_actions.cancel_submission(db, ta, sub, settings)
    return CancelOut(id=sub.id, verdict=str(sub.verdict))


@router.post("/cancel-queued", response_model=CancelQueuedOut)
def cancel_queued(db: SessionDep, settings: SettingsDep, ta: TAUser,
                  body: CancelQueuedIn) -> CancelQueuedOut:
    """Cancel every queued submission of one language (e.g. CUDA work no GPU worker will take)."""
    count = ta_actions.cancel_queued(db, ta, body.language, settings)
    return CancelQueuedOut(language=body.language, cancelled=count)


@router.post("/scoreboard/freeze", response_model=FreezeOut)
def freeze(db: SessionDep, settings: SettingsDep, ta: TAUser,
           assignment: str | None = None) -> dict[str, bool]:
    """Freeze an assignment's board (default: the first open one): students see it as of now,
    TAs live; and ask for paired runs of its neighbours whose time bands overlap (the final
    standing)."""
    shown = assignments.shown(db, assignment, settings.suite)
    freeze_board(db, ta, True, shown)
    paired.start_quietly(db, settings, shown.id)
    return {"frozen": True}


@router.post("/paired-runs", response_model=PairedStartOut)
def paired_runs(db: SessionDep, settings: SettingsDep, _ta: TAUser,
                assignment: str | None = None) -> PairedStartOut:
    """Ask for paired runs of an assignment board's neighbours whose time bands overlap
    (default: the first open one; pairs already compared or pending are left alone)."""
    shown = assignments.shown(db, assignment, settings.suite)
    started = paired.start(db, settings, shown.id)
    return PairedStartOut(overlapping=started.overlapping, sent=started.sent,
                          known=started.known, skipped=started.skipped,
                          message=started.message())


@router.post("/paired-runs/{run_id}/again", response_model=PairedAgainOut)
def paired_again(db: SessionDep, settings: SettingsDep, _ta: TAUser,
                 run_id: int) -> PairedAgainOut:
    """Compare one pair again (a settled or failed comparison; 409 while one is pending); the
    earlier outcome counts until the new one is recorded."""
    return PairedAgainOut(message=paired.again(db, settings, run_id))


@router.post("/scoreboard/unfreeze", response_model=FreezeOut)
def unfreeze(db: SessionDep, settings: SettingsDep, ta: TAUser,
             assignment: str | None = None) -> dict[str, bool]:
    """Unfreeze an assignment's board (default: the first open one)."""
    freeze_board(db, ta, False, assignments.shown(db, assignment, settings.suite))
    return {"frozen": False}


@router.get("/grades.csv", response_class=PlainTextResponse)
def grades_csv(db: SessionDep, settings: SettingsDep, boards: BoardsDep, ta: TAUser,
               layout: str = "flashjudge", assignment: str | None = None,
               term: str | None = None, column: str | None = None) -> PlainTextResponse:
    """Per student, the submission to an assignment (default: the first open one; `term`: an
    archived term's) with the best final score: its stored score, the late penalty, the final
    score, the late mark and the board's rank; `layout` canvas or moodle gives the columns those
    import (docs/grades.md), the grade column named `column` (default: the assignment's
    title)."""
    chosen = assignments.for_board(db, ta, assignment, term, settings.suite)
    board = boards.current(db, live=True, assignment_id=chosen.id).snapshot(None).rows
    body = lms.grades_file(db, chosen.suite, layout, board, column or chosen.label, chosen.id)
    name = downloads.csv_name(settings.course_name, chosen.name, layout, settings.course_zone)
    return PlainTextResponse(body, media_type="text/csv", headers=downloads.attachment(name))


@router.get("/status", response_model=StatusOut)
def status(db: SessionDep, settings: SettingsDep, _ta: TAUser) -> dict[str, Any]:
    """Queue lengths, the languages live workers judge, and the workers (GPU, busy or idle)."""
    return overview.status(db, settings)


@router.post("/submissions/{submission_id}/clear-flag", response_model=FlagClearedOut)
def clear_flag(db: SessionDep, ta: TAUser, submission_id: int) -> dict[str, Any]:
    """Let a result held by a speed-of-light flag be ranked (audited: who, when)."""
    feedback.clear_flag(db, ta, detail.get_visible(db, ta, submission_id))
    return {"id": submission_id, "flag_status": "cleared"}


@router.post("/student-profiles/{state}", response_model=StudentProfilesOut)
def student_profiles(db: SessionDep, settings: SettingsDep, ta: TAUser,
                     state: str) -> dict[str, bool]:
    """Allow ("on") or forbid ("off") students to ask for ncu profiles."""
    if state not in ("on", "off"):
        raise UserError("state must be 'on' or 'off'", field="state")
    profiles.set_students_allowed(db, ta, state == "on")
    return {"allowed": profiles.students_allowed(db, settings)}


def deadline_out(db: Session, suite: str) -> DeadlineOut:
    """The DeadlineOut of a suite (due_at null: no deadline)."""
    rule = deadlines.rule_for(db, suite)
    extensions = [ExtensionOut(username=e.user.username,
                               due_at=deadlines.iso(deadlines.aware(e.due_at)) or "")
                  for e in deadlines.extensions(db, suite)]
    if rule is None or rule.due_at is None:
        return DeadlineOut(suite=suite, due_at=None, late_policy="", penalty_per_day=0,
                           penalty_cap=0, extensions=extensions)
    return DeadlineOut(suite=suite, due_at=deadlines.iso(deadlines.aware(rule.due_at)),
                       late_policy=rule.late_policy, penalty_per_day=rule.penalty_per_day,
                       penalty_cap=rule.penalty_cap, extensions=extensions)


@router.get("/deadlines/{suite}", response_model=DeadlineOut)
def get_deadline(db: SessionDep, _ta: TAUser, suite: str) -> DeadlineOut:
    """A suite's due time, late policy and extensions (due_at null: no deadline)."""
    return deadline_out(db, suite)


@router.put("/deadlines/{suite}", response_model=DeadlineOut)
def put_deadline(db: SessionDep, ta: TAUser, suite: str, body: DeadlineIn) -> DeadlineOut:
    """Set a suite's due time and late policy (audited)."""
    deadlines.set_deadline(db, ta, suite, deadlines.parse_due(body.due_at), body.late_policy,
                           body.penalty_per_day, body.penalty_cap)
    return deadline_out(db, suite)


@router.delete("/deadlines/{suite}", response_model=Removed)
def delete_deadline(db: SessionDep, ta: TAUser, suite: str) -> Removed:
    """Remove a suite's deadline and its extensions (audited)."""
    return Removed(removed=deadlines.clear_deadline(db, ta, suite))


@router.put("/deadlines/{suite}/extensions/{username}", response_model=DeadlineOut)
def put_extension(db: SessionDep, ta: TAUser, suite: str, username: str,
                  body: ExtensionIn) -> DeadlineOut:
    """Give one student a later due time (audited)."""
    deadlines.grant_extension(db, ta, suite, username, deadlines.parse_due(body.due_at))
    return deadline_out(db, suite)


@router.delete("/deadlines/{suite}/extensions/{username}", response_model=Removed)
def delete_extension(db: SessionDep, ta: TAUser, suite: str, username: str) -> Removed:
    """Take a student's extension back (audited)."""
    return Removed(removed=deadlines.revoke_extension(db, ta, suite, username))
