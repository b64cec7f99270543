"""The scoreboard page and the table it fetches again when the board changed. The API of the
same resource is app/api/scoreboard.py; the table is drawn by app/pages/views/board_html.py.
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.etags import conditional
from app.course import assignments, terms, visibility
from app.db.models import Assignment, User
from app.db.on_demand import OnDemand, memory_first
from app.pages.rendering import PageUser, render, templates
from app.pages.views import board_html
from app.pages.views.board_html import Fragment
from app.pages.views.gpu_tabs import GpuTabs, gpu_tabs
from app.scoreboard import placing
from app.scoreboard.audience import audience, ranked_for
from app.scoreboard.cache import BoardCache, Built, on_demand
from app.scoreboard.paired.progress import board_notes
from app.web.deps import BoardsDep, SessionDep, SettingsDep, TokenDep, board_viewer
from testcases.suite import load_suite

router = APIRouter(include_in_schema=False)


def _board(db: Session | OnDemand, settings: Settings, boards: BoardCache, user: User,
           gpu_model: str | None = None, assignment: str | None = None,
           term: str | None = None) -> tuple[Fragment, GpuTabs, Built]:
    """An assignment's board's table for the viewer's audience (from the board cache: TAs'
    names everyone, the public's hides and aliases, app/scoreboard/audience.py) and its GPU
    tabs (one board per GPU model in a mixed fleet). A TA may name any term's board.
    NeedsDatabase when `db` is memory-only and something must be read or built."""
    term, db = term if user.is_ta else None, on_demand(db)
    state = boards.state(db)
    chosen = boards.chosen(db, state, user, assignment, term, settings.suite)
    current = boards.current(db, live=False, assignment_id=chosen.id, state=state)
    tabs = gpu_tabs(current.models, gpu_model, assignment, term)  # the URL names it if asked
    suite, who = chosen.suite, audience(user.is_ta, visibility.board_level(chosen))
    table = current.board(f"html:{who}", tabs.current, lambda snap, previous: board_html.fragment(
        templates.env, snap, board_columns(suite), previous, who))
    return table, tabs, current.built


def private_line(db: Session, boards: BoardCache, user: User, gpu_model: str | None,
                 chosen: Assignment) -> str:
    """Where a hidden or aliased student stands, for their eyes only (empty for the rest),
    ranked as the board they see ranks."""
    if user.is_ta or not (user.board_hidden or user.board_alias):
        return ""
    snapshot = boards.current(db, live=False, assignment_id=chosen.id).snapshot(gpu_model)
    rows = ranked_for(snapshot.rows, audience(False, visibility.board_level(chosen)))
    return placing.private_line(placing.my_place(rows, user))


def board_columns(suite: str) -> list[str]:
    """The board's test columns (read from the suite file: only when a table is built)."""
    return [t.id for t in load_suite(suite).tests]


def board_choices(db: Session, settings: Settings, user: User,
                  term: str | None) -> list[Assignment]:
    """The boards the page offers as tabs: the named term's (TAs), else the current term's
    that the viewer may see."""
    if term:
        return list(db.scalars(select(Assignment).where(
            Assignment.term_id == terms.by_name(db, term).id)
            .order_by(Assignment.position, Assignment.id)))
    return [a for a in assignments.in_term(db, settings.suite)
            if user.is_ta or not visibility.board_hidden(a)]


def term_links(db: Session, user: User, term: str | None) -> list[dict[str, object]]:
    """A TA's way to every term's boards, the one shown marked (empty with only one term)."""
    every = terms.listing(db) if user.is_ta else []
    if len(every) < 2:
        return []
    current = assignments.current_term(db)
    shown = term or (current.name if current else None)
    return [{"name": t.name, "archived": t.archived_at is not None, "shown": t.name == shown,
             "query": "" if current is not None and t.id == current.id else t.name}
            for t in every]


@router.get("/scoreboard")
def scoreboard_page(request: Request, db: SessionDep, settings: SettingsDep, boards: BoardsDep,
                    user: PageUser, gpu_model: str | None = None,
                    assignment: str | None = None, term: str | None = None) -> HTMLResponse:
    """An assignment's board (the first open one unless named), kept up to date by pushed
    events (app/static/app.js), readable without JS; a TA may name an archived `term`."""
    term = term if user.is_ta else None
    table, tabs, _ = _board(db, settings, boards, user, gpu_model, assignment, term)
    choices = board_choices(db, settings, user, term)
    shown = assignments.for_board(db, user, assignment, term, settings.suite)
    return render(request, "scoreboard.html", user, board={
        "choices": choices, "title": shown.label if len(choices) > 1 else "",
        "shown": shown.name, "term": term, "terms": term_links(db, user, term),
        "archived": shown.term.archived_at is not None, "term_name": shown.term.name,
        "tab_query": lambda name: urlencode({"term": term, "assignment": name} if term
                                            else {"assignment": name}),
        "tabs": tabs, "etag": table.etag_for(user.username),
        "table": Markup(table.body_for(user.username).decode()),
        "private": private_line(db, boards, user, tabs.current, shown)},
        paired=board_notes(db) if user.is_ta else [])


@router.get("/partials/scoreboard")
async def scoreboard_partial(request: Request, boards: BoardsDep, token: TokenDep,
                             gpu_model: str | None = None, assignment: str | None = None,
                             term: str | None = None) -> Response:
    """The table alone, what the page fetches again when the board changed: 304 while the
    client's copy (If-None-Match) is current. Every open page asks for it after each change:
    answered from memory on the event loop when it can be, else in one trip through the thread
    pool (see app/api/scoreboard.py)."""
    return await memory_first(
        lambda db: table_for(request, boards, token, gpu_model, assignment, term, db),
        request.app.state.settings.db_url)


def table_for(request: Request, boards: BoardCache, token: str | None,
              gpu_model: str | None, assignment: str | None, term: str | None,
              db: OnDemand) -> Response:
    settings = request.app.state.settings
    user = board_viewer(request, db, token)
    table, _, built = _board(db, settings, boards, user, gpu_model, assignment, term)
    return conditional(request, table.etag_for(user.username), "text/html",
                       lambda: table.body_for(user.username),
                       lambda: table.gzip_for(user.username), built.header())
