"""HTML pages (Jinja2 + htmx + SSE): thin views over the same services as the API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from app.core.deps import MaybeUser, SessionDep, SettingsDep
from app.core.errors import UserError
from app.db.models import User
from app.pages import errormap_view, feedback_view
from app.pages.gpu_tabs import gpu_tabs
from app.pages.views import bars, verdict_class
from app.services import admin, profiles, scoreboard, submissions
from flashjudge.contract import GPU_LANGUAGES, LANGUAGES
from testcases.suite import load_suite

templates = Jinja2Templates(directory=Path(__file__).resolve().parent.parent / "templates")
templates.env.globals["verdict_class"] = verdict_class
router = APIRouter(include_in_schema=False)


def page_user(user: MaybeUser) -> User:
    if user is None:
        raise UserError("log in first", status=401)
    return user


PageUser = Annotated[User, Depends(page_user)]


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    context.update(user=user, csrf=request.session.get("csrf", ""))
    return templates.TemplateResponse(request, name, context)


@router.get("/")
def home(user: MaybeUser) -> Response:
    return RedirectResponse("/submit" if user else "/login", status_code=303)


@router.get("/submit")
def submit_page(request: Request, user: PageUser) -> HTMLResponse:
    return render(request, "submit.html", user, languages=sorted(LANGUAGES),
                  default=request.app.state.settings.default_language)


@router.get("/submissions")
def mine_page(request: Request, db: SessionDep, user: PageUser) -> HTMLResponse:
    return render(request, "mine.html", user, subs=submissions.recent_for(db, user))


def _detail(db: SessionDep, settings: SettingsDep, user: User,
            submission_id: int) -> dict[str, Any]:
    sub = submissions.get_visible(db, user, submission_id)
    body = submissions.detail(db, sub, user)
    body["error_maps"] = errormap_view.error_maps(sub.tests)  # issue 13: where WA is wrong
    body["first_map"] = next(iter(body["error_maps"]), None)
    body["bars"] = bars(body["tests"])
    suite = load_suite(body["suite"])
    limits = {t.id: t.time_limit_s for t in suite.tests}
    body["charts"] = feedback_view.charts(body["feedback"], limits)
    body["figures"] = feedback_view.rows_by_test(body["feedback"])
    body["findings"] = feedback_view.findings(body["diagnosis"])
    body["suite_tests"] = list(limits)
    body["may_profile"] = (body["language"] in GPU_LANGUAGES and body["status"] == "done"
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


def _board(db: SessionDep, settings: SettingsDep, user: User,
           gpu_model: str | None = None) -> dict[str, Any]:
    tabs = gpu_tabs(db, gpu_model)  # issue 13: one board per GPU model in a mixed fleet
    frozen, rows = scoreboard.build(db, live=False, gpu_model=tabs.current)
    return {"frozen": frozen, "rows": rows, "tabs": tabs,
            "test_ids": [t.id for t in load_suite(settings.suite).tests]}


@router.get("/scoreboard")
def scoreboard_page(request: Request, db: SessionDep, settings: SettingsDep,
                    user: PageUser, gpu_model: str | None = None) -> HTMLResponse:
    return render(request, "scoreboard.html", user, board=_board(db, settings, user, gpu_model))


@router.get("/partials/scoreboard")
def scoreboard_partial(request: Request, db: SessionDep, settings: SettingsDep,
                       user: PageUser, gpu_model: str | None = None) -> HTMLResponse:
    return render(request, "_scoreboard.html", user,
                  board=_board(db, settings, user, gpu_model))


@router.get("/custom")
def custom_page(request: Request, user: PageUser) -> HTMLResponse:
    return render(request, "custom.html", user)


@router.get("/admin")
def admin_page(request: Request, db: SessionDep, user: PageUser) -> HTMLResponse:
    if not user.is_ta:
        raise UserError("only TAs may open the admin page", status=403)
    frozen, _ = scoreboard.build(db, live=True)
    return render(request, "admin.html", user, status=admin.status(db),
                  subs=admin.all_submissions(db, 100), frozen=frozen,
                  student_profiles=profiles.students_allowed(db, request.app.state.settings))
