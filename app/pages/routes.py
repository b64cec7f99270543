"""HTML pages (Jinja2 + htmx + SSE): thin views over the same services as the API.

The TA page's actions live in app/pages/admin_pages.py, styled error pages in app/pages/errors.py.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.core.config import Settings
from app.core.errors import UserError
from app.core.etags import conditional
from app.db.models import Announcement, Assignment, User
from app.db.session import session_factory
from app.judging import assignments, capacity, deadlines, detail, profiles, visibility
from app.notices import announcements
from app.pages import board_html, clock, errormap_view, feedback_view
from app.pages.board_html import Fragment
from app.pages.gpu_tabs import GpuTabs, gpu_tabs
from app.pages.views import ago, bars, plain_text, verdict_class
from app.scoreboard import placing
from app.scoreboard.audience import audience
from app.scoreboard.cache import BoardCache, Built
from app.scoreboard.paired.progress import board_notes
from app.web.deps import BoardsDep, MaybeUser, SessionDep, SettingsDep, TokenDep, signed_in
from flashjudge.contract import TOOLED_LANGUAGES
from flashjudge.timefmt import seconds_text
from testcases.suite import load_suite

templates = Jinja2Templates(directory=Path(__file__).resolve().parent.parent / "templates")
templates.env.globals["verdict_class"] = verdict_class
templates.env.filters["ago"] = ago
templates.env.filters["secs"] = seconds_text
templates.env.filters["when"] = clock.when  # in the course's time zone, with its offset
templates.env.filters["when_text"] = clock.when_text
templates.env.filters["plain_text"] = plain_text  # announcements: text and links only
router = APIRouter(include_in_schema=False)
FAVICON = Path(__file__).resolve().parent.parent / "static" / "favicon.ico"


def page_user(user: MaybeUser) -> User:
    if user is None:
        raise UserError("log in first", status=401)
    return user


PageUser = Annotated[User, Depends(page_user)]


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    """A page (or a fragment, named "_..."); a whole page shows the session's notice once."""
    context.update(user=user, csrf=request.session.get("csrf", ""))
    if not name.startswith("_") and "notice" in request.session:
        context.setdefault("flash", request.session.pop("notice"))
    if not name.startswith("_") and user is not None and "announcements" not in context:
        context["announcements"] = announcements_for(request, user)
    return templates.TemplateResponse(request, name, context)


def announcements_for(request: Request, user: User) -> list[Announcement]:
    """What the TAs announced, for the top of a whole page (one short query of its own: the
    pages' sessions are closed or busy by the time they render)."""
    with session_factory(request.app.state.settings.db_url)() as db:
        shown = announcements.current(db, user, announcements.SHOWN)
        for row in shown:
            db.expunge(row)
        return shown


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a local path (the page the user was sent away from), never
    another site ("//evil", "https://...", "/\\evil"), and /submit by default."""
    target = (target or "").strip()
    parts = urlsplit(target)
    if (not target.startswith("/") or target.startswith("//") or "\\" in target
            or parts.scheme or parts.netloc or any(ord(c) < 32 for c in target)
            or parts.path in ("/login", "/logout")):
        return "/submit"
    return target


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """Browsers ask for it on every page whatever base.html links: a 404 each time otherwise."""
    return FileResponse(FAVICON, media_type="image/x-icon",
                        headers={"Cache-Control": "public, max-age=86400"})


@router.get("/")
def home(user: MaybeUser) -> Response:
    return RedirectResponse("/submit" if user else "/login", status_code=303)


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
    body["error_maps"] = (errormap_view.error_maps(sub.tests)  # issue 13: where WA is wrong
                          if user.is_ta or body["shown"] == "all" else {})
    body["first_map"] = next(iter(body["error_maps"]), None)
    built = body["compile"]["ok"] is not False  # a compile error ran nothing: no time charts
    body["bars"] = bars(body["tests"]) if built else []
    suite = load_suite(body["suite"])
    limits = {t.id: t.time_limit_s for t in suite.tests}
    body["charts"] = feedback_view.charts(body["feedback"], limits) if built else {}
    body["figures"] = feedback_view.rows_by_test(body["feedback"])
    body["findings"] = feedback_view.findings(body["diagnosis"])
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


def _board(db: Session, settings: Settings, boards: BoardCache, user: User,
           gpu_model: str | None = None, assignment: str | None = None
           ) -> tuple[Fragment, GpuTabs, Built]:
    """An assignment's board's table for the viewer's audience (from the board cache: TAs'
    names everyone, the public's hides and aliases, app/scoreboard/audience.py) and its GPU
    tabs (issue 13: one board per GPU model in a mixed fleet)."""
    chosen = assignments.for_board(db, user, assignment, None, settings.suite)
    current = boards.current(db, live=False, assignment_id=chosen.id)
    tabs = gpu_tabs(current.models, gpu_model, assignment)  # the URL names it only if asked
    suite, who = chosen.suite, audience(user.is_ta)
    table = current.board(f"html:{who}", tabs.current, lambda snap, previous: board_html.fragment(
        templates.env, snap, board_columns(suite), previous, who))
    return table, tabs, current.built


def private_line(db: Session, boards: BoardCache, user: User, gpu_model: str | None,
                 assignment_id: int = 0) -> str:
    """Where a hidden or aliased student stands, for their eyes only (empty for the rest)."""
    if user.is_ta or not (user.board_hidden or user.board_alias):
        return ""
    snapshot = boards.current(db, live=False, assignment_id=assignment_id).snapshot(gpu_model)
    return placing.private_line(placing.my_place(snapshot.rows, user))


def board_columns(suite: str) -> list[str]:
    """The board's test columns (read from the suite file: only when a table is built)."""
    return [t.id for t in load_suite(suite).tests]


@router.get("/scoreboard")
def scoreboard_page(request: Request, db: SessionDep, settings: SettingsDep, boards: BoardsDep,
                    user: PageUser, gpu_model: str | None = None,
                    assignment: str | None = None) -> HTMLResponse:
    """An assignment's board (the first open one unless named), kept up to date by pushed
    events (app/static/app.js), readable without JS."""
    table, tabs, _ = _board(db, settings, boards, user, gpu_model, assignment)
    choices = [a for a in assignments.in_term(db, settings.suite)
               if user.is_ta or not visibility.board_hidden(a)]
    shown = assignments.for_board(db, user, assignment, None, settings.suite)
    return render(request, "scoreboard.html", user, board={
        "choices": choices, "title": shown.label if len(choices) > 1 else "",
        "shown": shown.name,
        "tabs": tabs, "etag": table.etag_for(user.username),
        "table": Markup(table.body_for(user.username).decode()),
        "private": private_line(db, boards, user, tabs.current, shown.id)},
        paired=board_notes(db) if user.is_ta else [])


@router.get("/partials/scoreboard")
async def scoreboard_partial(request: Request, boards: BoardsDep, token: TokenDep,
                             gpu_model: str | None = None,
                             assignment: str | None = None) -> Response:
    """The table alone, what the page fetches again when the board changed: 304 while the
    client's copy (If-None-Match) is current. Every open page asks for it after each change,
    so its database work is one trip through the thread pool (see app/routes/scoreboard.py)."""
    return await run_in_threadpool(table_for, request, boards, token, gpu_model, assignment)


def table_for(request: Request, boards: BoardCache, token: str | None,
              gpu_model: str | None, assignment: str | None = None) -> Response:
    settings = request.app.state.settings
    with session_factory(settings.db_url)() as db:
        user = signed_in(request, db, token)
        table, _, built = _board(db, settings, boards, user, gpu_model, assignment)
    return conditional(request, table.etag_for(user.username), "text/html",
                       lambda: table.body_for(user.username),
                       lambda: table.gzip_for(user.username), built.header())
