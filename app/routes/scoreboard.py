"""The scoreboard, public within the course (any logged-in user)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from app.core.deps import CurrentUser, SessionDep, SettingsDep
from app.services import scoreboard
from testcases.suite import load_suite

router = APIRouter(tags=["scoreboard"])


@router.get("/api/scoreboard")
def board(db: SessionDep, user: CurrentUser, live: bool = False) -> dict[str, Any]:
    """Ranked rows (passed desc, time asc), best submission per student; TAs may ask live=1."""
    frozen, rows = scoreboard.build(db, live=live and user.is_ta)
    return {"frozen": frozen, "rows": [r.to_dict() for r in rows]}


@router.get("/api/scoreboard.csv", response_class=PlainTextResponse)
def board_csv(db: SessionDep, settings: SettingsDep, user: CurrentUser, live: bool = False
              ) -> PlainTextResponse:
    """The same board as CSV: user, rank, passed, time, score, t01..tNN."""
    _, rows = scoreboard.build(db, live=live and user.is_ta)
    test_ids = [t.id for t in load_suite(settings.suite).tests]
    return PlainTextResponse(scoreboard.to_csv(rows, test_ids), media_type="text/csv")
