"""The scoreboard, public within the course (any logged-in user).

Served from the per-process board cache (app/services/board_cache.py): bytes built once per board
version, a strong ETag, 304 to a client that has them. The response model stays for the OpenAPI
document; the JSON itself is written once per version by app/services/board_formats.py.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse

from app.core.deps import BoardsDep, CurrentUser, SessionDep, SettingsDep
from app.core.etags import conditional
from app.schemas.scoreboard import Board
from app.services import board_formats
from testcases.suite import load_suite

router = APIRouter(tags=["scoreboard"])


@router.get("/api/scoreboard", response_model=Board)
def board(request: Request, db: SessionDep, user: CurrentUser, boards: BoardsDep,
          live: bool = False, gpu_model: str | None = None) -> Response:
    """Ranked rows (passed desc, time asc), best submission per student; TAs may ask live=1;
    `gpu_model` ranks only results judged on that GPU model (`gpu_models` lists them).
    Sends an ETag; If-None-Match with it gets 304 until the board changes."""
    current = boards.current(db, live=live and user.is_ta)
    payload = current.board("json", gpu_model, board_formats.board_json)
    return conditional(request, payload.etag, "application/json", lambda: payload.body,
                       lambda: payload.gzipped, current.built.header())


@router.get("/api/scoreboard.csv", response_class=PlainTextResponse)
def board_csv(request: Request, db: SessionDep, settings: SettingsDep, user: CurrentUser,
                     boards: BoardsDep, live: bool = False,
                     gpu_model: str | None = None) -> Response:
    """The same board as CSV: user, rank, passed, time, score, t01..tNN."""
    test_ids = [t.id for t in load_suite(settings.suite).tests]
    current = boards.current(db, live=live and user.is_ta)
    payload = current.board("csv", gpu_model,
                            lambda snap, _: board_formats.board_csv(snap, test_ids))
    return conditional(request, payload.etag, "text/csv", lambda: payload.body,
                       lambda: payload.gzipped, current.built.header())
