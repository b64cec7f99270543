"""The scoreboard, public within the course (any logged-in user).

Served from the per-process board cache (app/scoreboard/cache.py): bytes built once per board
version, a strong ETag, 304 to a client that has them. The response model stays for the OpenAPI
document; the JSON itself is written once per version by app/scoreboard/formats.py.

Almost every request finds all it needs in this process's memory (the viewer's session, the
board's version, the bytes) and is answered on the event loop, with no query and no trip through
the thread pool. One that needs the database (a session not seen for seconds, a board to build)
is answered in one trip through the thread pool, with a session of its own: the shared
dependency chain takes several trips holding a pooled connection in between, which under a
burst of requests can leave every thread waiting for a connection held by a request waiting for
a thread.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from app.core.etags import conditional
from app.course import assignments, visibility
from app.db.on_demand import OnDemand, memory_first
from app.db.session import session_factory
from app.schemas.scoreboard import Board, BoardNameIn, MyPlace
from app.scoreboard import formats
from app.scoreboard.audience import audience, ranked_for
from app.scoreboard.board_names import set_board_name
from app.scoreboard.cache import BoardCache
from app.scoreboard.placing import my_place
from app.web import downloads
from app.web.deps import BoardsDep, CurrentUser, SessionDep, TokenDep, board_viewer, signed_in
from testcases.suite import load_suite

router = APIRouter(tags=["scoreboard"])


@dataclass(frozen=True)
class Where:
    """Which assignment's board a request names (None: the default one, the current term)."""

    assignment: str | None
    term: str | None


def serve(request: Request, boards: BoardCache, token: str | None, kind: str, live: bool,
          gpu_model: str | None, where: Where, db: OnDemand) -> Response:
    """One board in one format, from the cache, for the signed-in caller (NeedsDatabase when
    `db` is memory-only and something must be read or built)."""
    settings = request.app.state.settings
    user = board_viewer(request, db, token)
    state = boards.state(db)
    chosen = boards.chosen(db, state, user, where.assignment, where.term, settings.suite)
    current = boards.current(db, live=live and user.is_ta, assignment_id=chosen.id, state=state)
    suite = chosen.suite
    # TAs' copy names everyone; the public's hides and aliases, and has no time while the
    # assignment shows verdicts only
    who = audience(user.is_ta, visibility.board_level(chosen))
    if kind == "csv":  # the suite file is read only when the CSV is built
        payload = current.board(f"csv:{who}", gpu_model, lambda snap, _: formats.board_csv(
            snap, [t.id for t in load_suite(suite).tests], who))
    else:
        payload = current.board(f"json:{who}", gpu_model,
                                lambda snap, old: formats.board_json(snap, old, who))
    media = "text/csv" if kind == "csv" else "application/json"
    headers = current.built.header()
    if kind == "csv":
        headers = {**headers, **downloads.attachment(downloads.csv_name(
            settings.course_name, chosen.name, "scoreboard", settings.course_zone))}
    return conditional(request, payload.etag, media, lambda: payload.body,
                       lambda: payload.gzipped, headers)


async def answer(request: Request, boards: BoardCache, token: str | None, kind: str,
                 live: bool, gpu_model: str | None, where: Where) -> Response:
    return await memory_first(
        lambda db: serve(request, boards, token, kind, live, gpu_model, where, db),
        request.app.state.settings.db_url)


@router.get("/api/scoreboard", response_model=Board)
async def board(request: Request, boards: BoardsDep, token: TokenDep, live: bool = False,
                gpu_model: str | None = None, assignment: str | None = None,
                term: str | None = None) -> Response:
    """Ranked rows (graded score desc, passed desc, time asc; "4=" where the measured noise
    does not separate neighbours), best submission per student; TAs may ask live=1 and see
    every student by name; `gpu_model` ranks only results judged on that GPU model
    (`gpu_models` lists them); `assignment` names the board (default: the first open one; a TA
    may name an archived `term`). Sends an ETag; If-None-Match gets 304 until the board
    changes."""
    return await answer(request, boards, token, "json", live, gpu_model, Where(assignment, term))


@router.get("/api/scoreboard.csv", response_class=PlainTextResponse)
async def board_csv(request: Request, boards: BoardsDep, token: TokenDep, live: bool = False,
                    gpu_model: str | None = None, assignment: str | None = None,
                    term: str | None = None) -> Response:
    """The same board as CSV: user, rank, passed, time, score, t01..tNN."""
    return await answer(request, boards, token, "csv", live, gpu_model, Where(assignment, term))


def place_of(request: Request, boards: BoardCache, token: str | None,
             gpu_model: str | None, assignment: str | None = None) -> MyPlace:
    settings = request.app.state.settings
    with session_factory(settings.db_url)() as db:
        user = signed_in(request, db, token)
        chosen = assignments.for_board(db, user, assignment, None, settings.suite)
        snapshot = boards.current(db, live=False, assignment_id=chosen.id).snapshot(gpu_model)
        who = audience(user.is_ta, visibility.board_level(chosen))
        return MyPlace(**asdict(my_place(ranked_for(snapshot.rows, who), user)))


@router.get("/api/scoreboard/me", response_model=MyPlace)
async def my_row(request: Request, boards: BoardsDep, token: TokenDep,
                 gpu_model: str | None = None, assignment: str | None = None) -> MyPlace:
    """My own place on an assignment's board (default: the first open one) as others see it,
    hidden or not, with my alias and whether I am hidden (a student who opted out sees their
    rank here)."""
    return await run_in_threadpool(place_of, request, boards, token, gpu_model, assignment)


@router.put("/api/scoreboard/me", response_model=MyPlace)
def set_my_name(db: SessionDep, boards: BoardsDep, user: CurrentUser,
                body: BoardNameIn) -> MyPlace:
    """Choose how the public board shows me: an `alias` (3-24 letters, digits, spaces, . _ -;
    nobody else's name; empty: my username) and/or `hidden` to leave it (TAs still see me)."""
    set_board_name(db, user, body.alias, body.hidden)
    return MyPlace(**asdict(my_place(boards.current(db, live=False).every.rows, user)))
