"""The TA page and its htmx actions: each action answers a small HTML fragment saying what it
did ("rejudging 12 submission(s) ..."), shown at once without a reload.

The fragments call the same services as /api/admin; a refusal (a UserError) comes back as the
usual JSON error, which app/static/app.js shows in the fragment's place.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.course import assignments, course_settings, deadlines
from app.db.models import User
from app.pages.rendering import PageUser, render
from app.results import detail, overview
from app.scoreboard import rows
from app.scoreboard.paired import progress as paired_progress
from app.scoreboard.paired import service as paired
from app.submissions import capacity, profiles, ta_actions
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)


def page_ta(user: PageUser) -> User:
    if not user.is_ta:
        raise UserError("only TAs may open the admin page", status=403)
    return user


PageTA = Annotated[User, Depends(page_ta)]


def deadline_view(db: Session, settings: Settings, assignment: str | None = None
                  ) -> dict[str, Any]:
    """An assignment's deadline and extensions (default: the first open one's), for the TA
    page; the form's date picker shows the due time in the course's time zone."""
    target = shown(db, settings, assignment)
    rule = deadlines.rule_for(db, target)
    due_at = (deadlines.aware(rule.due_at).astimezone(settings.course_zone)
              if rule and rule.due_at else None)
    return {"suite": target, "rule": rule, "due_at": due_at,
            "defaults": course_settings.current(db, settings),  # a new rule's late policy
            "extensions": [{"username": e.user.username, "due_at": deadlines.aware(e.due_at)}
                           for e in deadlines.extensions(db, target)]}


def shown(db: Session, settings: Settings, assignment: str | None = None) -> str:
    """The assignment the TA page's deadline box and freeze are about: the one named, else the
    first open one."""
    return assignments.shown(db, assignment, settings.suite).name


@router.get("/admin")
def admin_page(request: Request, db: SessionDep, settings: SettingsDep,
               user: PageTA, assignment: str | None = None) -> HTMLResponse:
    chosen = assignments.shown(db, assignment, settings.suite)
    return render(request, "admin.html", user, status=overview.status(db, settings),
                  subs=overview.all_submissions(db, SHOWN), chosen=chosen,
                  choices=assignments.in_term(db, settings.suite),
                  frozen=rows.frozen_at(db, chosen.id) is not None,  # its board's state
                  student_profiles=profiles.students_allowed(db, settings),
                  deadline=deadline_view(db, settings, chosen.name),
                  policies=deadlines.POLICIES,
                  capacity=capacity.current(db, settings),
                  paired=paired_progress.progress(db), paired_budget_s=settings.paired_budget_s)


SHOWN = 100  # submissions on the TA page, newest first


def said(request: Request, user: User, message: str, ok: bool = True,
         subs: list[dict[str, Any]] | None = None) -> HTMLResponse:
    """A one-line fragment for the element the action targets; with `subs`, the submissions
    table too (swapped out of band: the page shows what the action changed)."""
    return render(request, "_admin_result.html", user, message=message, ok=ok, subs=subs)


@router.post("/partials/admin/rejudge-all")
def rejudge_all(request: Request, db: SessionDep, settings: SettingsDep,
                ta: PageTA) -> HTMLResponse:
    message = ta_actions.rejudge_all(db, ta, settings).message()
    return said(request, ta, message, subs=overview.all_submissions(db, SHOWN))


@router.post("/partials/admin/paired-runs")
def paired_runs(request: Request, db: SessionDep, settings: SettingsDep,
                ta: PageTA) -> HTMLResponse:
    """Ask for paired runs of the overlapping neighbours; the section shows the new progress."""
    message = paired.start(db, settings).message()
    return render(request, "_admin_paired.html", ta, paired=paired_progress.progress(db),
                  paired_budget_s=settings.paired_budget_s, message=message)


@router.post("/partials/admin/paired-runs/{run_id}/again")
def paired_again(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                 run_id: int) -> HTMLResponse:
    """Compare one pair again; the section shows the new request."""
    message = paired.again(db, settings, run_id)
    return render(request, "_admin_paired.html", ta, paired=paired_progress.progress(db),
                  paired_budget_s=settings.paired_budget_s, message=message)


@router.post("/partials/admin/submissions/{submission_id}/rejudge")
def rejudge(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
            submission_id: int) -> HTMLResponse:
    ta_actions.rejudge(db, ta, detail.get_visible(db, ta, submission_id), settings)
    return said(request, ta, "rejudging")


@router.post("/partials/admin/submissions/{submission_id}/cancel")
def cancel(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
           submission_id: int) -> HTMLResponse:
    ta_actions.cancel_submission(db, ta, detail.get_visible(db, ta, submission_id), settings)
    return said(request, ta, "cancelled")


@router.post("/partials/admin/cancel-queued")
def cancel_queued(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                  language: Annotated[str, Form()]) -> HTMLResponse:
    count = ta_actions.cancel_queued(db, ta, language, settings)
    return said(request, ta, f"cancelled {count} queued {language} submission(s)")


@router.post("/partials/admin/deadline")
def set_deadline(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                 due_at: Annotated[str, Form()], late_policy: Annotated[str, Form()] = "refuse",
                 penalty_per_day: Annotated[float, Form()] = 0.0,
                 penalty_cap: Annotated[float, Form()] = 100.0,
                 assignment: str | None = None) -> HTMLResponse:
    target = shown(db, settings, assignment)
    due = deadlines.typed(due_at, settings.course_zone)
    deadlines.set_deadline(db, ta, target, deadlines.parse_due(due), late_policy,
                           penalty_per_day, penalty_cap)
    return render(request, "_admin_deadline.html", ta,
                  deadline=deadline_view(db, settings, target),
                  policies=deadlines.POLICIES, message="deadline saved")


@router.post("/partials/admin/deadline/clear")
def clear_deadline(request: Request, db: SessionDep, settings: SettingsDep,
                   ta: PageTA, assignment: str | None = None) -> HTMLResponse:
    target = shown(db, settings, assignment)
    removed = deadlines.clear_deadline(db, ta, target)
    return render(request, "_admin_deadline.html", ta,
                  deadline=deadline_view(db, settings, target),
                  policies=deadlines.POLICIES,
                  message="deadline removed" if removed else "there was no deadline")


@router.post("/partials/admin/extension")
def extension(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
              username: Annotated[str, Form()], due_at: Annotated[str, Form()] = "",
              revoke: Annotated[bool, Form()] = False,
              assignment: str | None = None) -> HTMLResponse:
    """Grant (or, with revoke, take back) one student's extension."""
    target = shown(db, settings, assignment)
    if revoke:
        done = deadlines.revoke_extension(db, ta, target, username)
        message = f"{username}'s extension revoked" if done else f"{username} had no extension"
    else:
        deadlines.grant_extension(db, ta, target, username,
                                  deadlines.parse_due(deadlines.typed(
                                      due_at, settings.course_zone)))
        message = f"extension granted to {username}"
    return render(request, "_admin_deadline.html", ta,
                  deadline=deadline_view(db, settings, target),
                  policies=deadlines.POLICIES, message=message)
