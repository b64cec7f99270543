"""The scoreboard's definition, for the tests: a board computed from every submission (0.4 s at
455 students), which the standing kept at write time (app/scoreboard/standing/) must always
equal. Kept out of app/: the service never computes a board this way, it reads the standing."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.db.models import Submission, User
from app.scoreboard.boards import ranked
from app.scoreboard.rows import Row
from app.scoreboard.standing.rules import (
    band_of,
    best_key,
    counted,
    frozen_at,
    graded,
    test_cell,
)


def key_of(sub: Submission) -> tuple[float, int, float, int]:
    return best_key(graded(sub.score, sub.late_penalty), sub.passed, sub.total_time, sub.id)


def best_submissions(db: Session, before: datetime | None, gpu_model: str | None = None
                     ) -> dict[int, Submission]:
    """user id -> best judged submission (higher graded score, more passed, then less time,
    then earlier); a result
    held by a speed-of-light flag does not count until a TA clears it. With `gpu_model`, only
    results judged on that GPU model count (times compare only within one model)."""
    query = (select(Submission).join(User).where(*counted())
             .options(selectinload(Submission.tests), selectinload(Submission.user)))
    if before is not None:
        query = query.where(Submission.created_at <= before)
    if gpu_model is not None:
        query = query.where(Submission.gpu_model == gpu_model)
    best: dict[int, Submission] = {}
    for sub in db.scalars(query):
        old = best.get(sub.user_id)
        if old is None or key_of(sub) < key_of(old):
            best[sub.user_id] = sub
    return best


def build(db: Session, live: bool, gpu_model: str | None = None) -> tuple[bool, list[Row]]:
    """(frozen, ranked rows); `live` shows current results even while frozen (TAs); `gpu_model`
    ranks only the results judged on that GPU model."""
    freeze = frozen_at(db)
    rows: list[Row] = []
    for sub in best_submissions(db, None if live else freeze, gpu_model).values():
        tests = {t.test_id: test_cell(t.verdict, t.seconds, t.detail) for t in sub.tests}
        rows.append(Row(0, sub.user.username, sub.user.display_name, sub.passed or 0,
                        sub.total_time or 0.0, sub.score or 0, sub.id, tests,
                        bool(getattr(sub, "late", False)), band_of(sub.result),
                        penalty=sub.late_penalty or 0.0, alias=sub.user.board_alias or None,
                        hidden=bool(sub.user.board_hidden)))
    return freeze is not None, ranked(rows)  # the order and ties are the board's own rule
