"""Reading one board from the standing (app/db/models/standing.py): a query of a few hundred
rows, ranked. What app/scoreboard/cache.py serializes once per board version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Standing
from app.db.models.standing import EVERY_MODEL, FROZEN, LIVE
from app.scoreboard import ties
from app.scoreboard.rows import Row
from app.scoreboard.settled import settled_for
from app.scoreboard.standing.compute import chunks
from app.scoreboard.standing.rules import default_board, frozen_at, standing_key


@dataclass(frozen=True)
class View:
    """Which board: live (TAs may see results after a freeze) and which GPU model's."""

    live: bool  # current results even while frozen
    gpu_model: str | None  # ranks only this model's results (None: every result)
    assignment_id: int = 0  # whose board (0: the default one, the first open assignment)


@dataclass(frozen=True)
class Snapshot:
    """One board as of one version of the standing."""

    version: int  # the standing's version it was read at (or later)
    view: View  # which board
    cut: str  # the standing's cut it was read from (LIVE, or FROZEN for students while frozen)
    frozen_at: datetime | None  # when the board was frozen (None: live)
    models: list[str]  # GPU models with judged results, the most used first
    rows: list[Row]  # ranked, best first

    @property
    def frozen(self) -> bool:
        return self.frozen_at is not None


def ranked(rows: list[Row], settled: ties.Settled = ()) -> list[Row]:
    """Rows in the board's order (graded score, passed, time) with competition ranks; a
    neighbour the measured noise does not separate shares the rank, "4=" (app/scoreboard/
    ties.py; `settled`: the pairs paired runs decided, its seam)."""
    rows.sort(key=lambda r: standing_key(r.final, r.passed, r.time, r.user))
    by_user = {r.user: r for r in rows}
    entries = [ties.Entry(r.user, r.final, r.passed, r.time, r.band_s) for r in rows]
    out: list[Row] = []
    for placed in ties.place(entries, settled):
        row = by_user[placed.id]
        row.rank, row.label, row.tie = placed.rank, placed.label, placed.reason
        out.append(row)
    return out


def tests_by_id(db: Session, row_ids: list[int]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for batch in chunks(row_ids):
        rows = db.execute(select(Standing.id, Standing.tests).where(Standing.id.in_(batch)))
        found.update((row_id, tests) for row_id, tests in rows)
    return found


def read(db: Session, version: int, models: list[str], view: View,
         previous: Snapshot | None = None) -> Snapshot:
    """The board `view` from the standing (the frozen cut for students while frozen), with the
    judged GPU models as of `version` (board_state keeps them). The test
    cells of rows whose stamp did not move since `previous` are taken from it, not decoded
    again: their JSON is most of what reading a board costs."""
    board = view.assignment_id or default_board(db)
    freeze = frozen_at(db, board)
    cut = FROZEN if freeze is not None and not view.live else LIVE
    query = select(Standing.id, Standing.username, Standing.display_name, Standing.passed,
                   Standing.total_time, Standing.score, Standing.submission_id, Standing.late,
                   Standing.band_s, Standing.stamp, Standing.penalty, Standing.alias,
                   Standing.hidden).where(
        Standing.assignment_id == board, Standing.cut == cut,
        Standing.gpu_model == (view.gpu_model or EVERY_MODEL))
    found = list(db.execute(query))
    known = {(r.user, r.stamp): r.tests for r in previous.rows} \
        if previous is not None and previous.cut == cut else {}
    fetched = tests_by_id(db, [r.id for r in found if (r.username, r.stamp) not in known])
    rows = [Row(0, r.username, r.display_name, r.passed, r.total_time, r.score,
                r.submission_id, fetched[r.id] if r.id in fetched else known[(r.username, r.stamp)],
                r.late, r.band_s, r.stamp, r.penalty or 0.0, r.alias, bool(r.hidden))
            for r in found]
    return Snapshot(version, view, cut, freeze, models, ranked(rows, settled_for(db, rows)))
