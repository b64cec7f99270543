"""The scoreboard, public within the course (any logged-in user)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from app.core.deps import CurrentUser, SessionDep, SettingsDep
from app.schemas.scoreboard import Board
from app.services import scoreboard
from app.services.gpu_models import judged_models
from testcases.suite import load_suite

router = APIRouter(tags=["scoreboard"])


@router.get("/api/scoreboard", response_model=Board)
def board(db: SessionDep, user: CurrentUser, live: bool = False,
          gpu_model: str | None = None) -> dict[str, Any]:
    """Ranked rows (passed desc, time asc), best submission per student; TAs may ask live=1;
    `gpu_model` ranks only results judged on that GPU model (`gpu_models` lists them)."""
    frozen, rows = scoreboard.build(db, live=live and user.is_ta, gpu_model=gpu_model)
    return {"frozen": frozen, "gpu_model": gpu_model, "gpu_models": judged_models(db),
            "rows": [r.to_dict() for r in rows]}


@router.get("/api/scoreboard.csv", response_class=PlainTextResponse)
def board_csv(db: SessionDep, settings: SettingsDep, user: CurrentUser, live: bool = False,
              gpu_model: str | None = None) -> PlainTextResponse:
    """The same board as CSV: user, rank, passed, time, score, t01..tNN."""
    shown_live = live and user.is_ta
    frozen, rows = scoreboard.build(db, live=shown_live, gpu_model=gpu_model)
    test_ids = [t.id for t in load_suite(settings.suite).tests]
    stamp = scoreboard.frozen_at(db) if frozen and not shown_live else None
    return PlainTextResponse(scoreboard.to_csv(rows, test_ids, stamp), media_type="text/csv")
