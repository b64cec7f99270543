"""The submission pages: the upload form, my submissions, and one submission's result (the whole
page and the fragment its live stream swaps in). The API of the same resource is
app/api/submissions.py; what a submission shows is built by app/results/detail.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.course import assignments, deadlines
from app.db.models import Assignment, User
from app.pages.rendering import PageUser, render
from app.pages.views import error_maps, feedback
from app.pages.views.template_helpers import bars
from app.results import detail
from app.submissions import capacity, profiles
from app.web.deps import SessionDep, SettingsDep
from flashjudge.contract import TOOLED_LANGUAGES
from testcases.suite import load_suite

router = APIRouter(include_in_schema=False)


@router.get("/submit")
def submit_page(request: Request, db: SessionDep, settings: SettingsDep,
                user: PageUser, assignment: str | None = None) -> HTMLResponse:
    """The open assignments to pick from (a TA: every one of the term), the chosen one's
    deadline; the languages the live workers judge come first; the others follow, saying why
    they cannot be judged (a TA sees that at once, a student when they pick one)."""
    choices = [a for a in assignments.in_term(db, settings.suite) if a.is_open or user.is_ta]
    chosen = assignments.shown(db, assignment, settings.suite) if choices else None
    chosen = chosen if chosen in choices else next(iter(choices), None)
    can = capacity.current(db, settings)
    offered = [s for s in can.offered if accepts(chosen, s.name)] or can.offered
    default = next((s for s in offered if s.name == settings.default_language), offered[0])
    missing = [s for s in can.languages if s not in can.offered and accepts(chosen, s.name)]
    return render(request, "submit.html", user, offered=offered, default=default,
                  missing=missing, why=can.why_not(missing[0].name) if missing else "",
                  capacity=can, no_worker=not can.known, choices=choices, assignment=chosen,
                  deadline=deadlines.status_for(db, user, chosen, datetime.now(
                      settings.course_zone)) if chosen else deadlines.NOTHING_OPEN)


def accepts(chosen: Assignment | None, language: str) -> bool:
    """Whether the chosen assignment takes uploads in `language` (all, when it names none)."""
    return chosen is None or not chosen.language_list or language in chosen.language_list


@router.get("/submissions")
def mine_page(request: Request, db: SessionDep, user: PageUser) -> HTMLResponse:
    return render(request, "mine.html", user, subs=detail.recent_rows(db, user))


def _detail(db: SessionDep, settings: SettingsDep, user: User,
            submission_id: int) -> dict[str, Any]:
    sub = detail.get_visible(db, user, submission_id)
    body = detail.detail(db, sub, user, settings)
    body["error_maps"] = (error_maps.error_maps(sub.tests)  # where a WA is wrong
                          if user.is_ta or body["shown"] == "all" else {})
    body["first_map"] = next(iter(body["error_maps"]), None)
    built = body["compile"]["ok"] is not False  # a compile error ran nothing: no time charts
    body["bars"] = bars(body["tests"]) if built else []
    suite = load_suite(body["suite"])
    limits = {t.id: t.time_limit_s for t in suite.tests}
    body["charts"] = feedback.charts(body["feedback"], limits) if built else {}
    body["figures"] = feedback.rows_by_test(body["feedback"])
    body["findings"] = feedback.findings(body["diagnosis"])
    body["suite_tests"] = list(limits)
    body["may_profile"] = (body["language"] in TOOLED_LANGUAGES and body["status"] == "done"
                           and bool(body["compile"]["ok"])
                           and (user.is_ta or profiles.students_allowed(db, settings)))
    return body


@router.get("/submissions/{submission_id}")
def detail_page(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                submission_id: int) -> HTMLResponse:
    return render(request, "submission.html", user,
                  sub=_detail(db, settings, user, submission_id))


@router.get("/partials/submissions/{submission_id}")
def detail_partial(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                   submission_id: int) -> HTMLResponse:
    return render(request, "_submission.html", user,
                  sub=_detail(db, settings, user, submission_id))
