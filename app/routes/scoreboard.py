"""The scoreboard, public within the course (any logged-in user).

Served from the per-process board cache (app/scoreboard/cache.py): bytes built once per board
version, a strong ETag, 304 to a client that has them. The response model stays for the OpenAPI
document; the JSON itself is written once per version by app/scoreboard/formats.py.

These routes are async and do all their database work (login, the version, a build if one is
due) in one trip through the thread pool with a session of their own: the shared dependency
chain takes several trips holding a pooled connection in between, which under a burst of
requests can leave every thread waiting for a connection held by a request waiting for a thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from app.core.etags import conditional
from app.db.session import session_factory
from app.judging import assignments
from app.schemas.scoreboard import Board
from app.scoreboard import formats
from app.scoreboard.cache import BoardCache
from app.web.deps import BoardsDep, TokenDep, signed_in
from testcases.suite import load_suite

router = APIRouter(tags=["scoreboard"])


@dataclass(frozen=True)
class Where:
    """Which assignment's board a request names (None: the default one, the current term)."""

    assignment: str | None
    term: str | None


def serve(request: Request, boards: BoardCache, token: str | None, kind: str, live: bool,
          gpu_model: str | None, where: Where) -> Response:
    """One board in one format, from the cache, for the signed-in caller."""
    settings = request.app.state.settings
    with session_factory(settings.db_url)() as db:
        user = signed_in(request, db, token)
        chosen = assignments.for_board(db, user, where.assignment, where.term, settings.suite)
        current = boards.current(db, live=live and user.is_ta, assignment_id=chosen.id)
        suite = chosen.suite
        if kind == "csv":  # the suite file is read only when the CSV is built
            payload = current.board(kind, gpu_model, lambda snap, _: formats.board_csv(
                snap, [t.id for t in load_suite(suite).tests]))
        else:
            payload = current.board(kind, gpu_model, formats.board_json)
    media = "text/csv" if kind == "csv" else "application/json"
    return conditional(request, payload.etag, media, lambda: payload.body,
                       lambda: payload.gzipped, current.built.header())


@router.get("/api/scoreboard", response_model=Board)
async def board(request: Request, boards: BoardsDep, token: TokenDep, live: bool = False,
                gpu_model: str | None = None, assignment: str | None = None,
                term: str | None = None) -> Response:
    """Ranked rows (passed desc, time asc), best submission per student; TAs may ask live=1;
    `gpu_model` ranks only results judged on that GPU model (`gpu_models` lists them).
    `assignment` names the board (default: the first open one; a TA may name an archived
    `term`). Sends an ETag; If-None-Match with it gets 304 until the board changes."""
    return await run_in_threadpool(serve, request, boards, token, "json", live, gpu_model,
                                   Where(assignment, term))


@router.get("/api/scoreboard.csv", response_class=PlainTextResponse)
async def board_csv(request: Request, boards: BoardsDep, token: TokenDep, live: bool = False,
                    gpu_model: str | None = None, assignment: str | None = None,
                    term: str | None = None) -> Response:
    """The same board as CSV: user, rank, passed, time, score, t01..tNN."""
    return await run_in_threadpool(serve, request, boards, token, "csv", live, gpu_model,
                                   Where(assignment, term))
