"""The standing: each student's line on each board, kept up to date as results are recorded.

Recomputing the board from every submission on every request cost 0.4 s of CPU at 455 students.
Instead the transaction that changes something a board shows (a result, refined times, a
rejudge, a held or cleared flag, a freeze, a renamed user) also rewrites the affected students'
rows here and bumps `BoardState.version` (app/scoreboard/standing/). Readers rank these few hundred
rows and cache what they serve per version (app/scoreboard/cache.py).

A row is one student's best submission to one assignment for one cut of time and one GPU model:
- cut "live": every judged result; "frozen": only what was submitted before the freeze (rows
  of this cut exist only while the board is frozen);
- gpu_model "": results of every model (the board without tabs), else one model's results.

`PairedRun` keeps the paired comparisons of neighbours whose bands overlap (the final check).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, utcnow

LIVE, FROZEN = "live", "frozen"  # the cuts of time a row belongs to
PAIRED_PENDING, PAIRED_DONE, PAIRED_FAILED = "pending", "done", "failed"  # PairedRun.status
EVERY_MODEL = ""  # gpu_model of the rows that rank every model's results together


class Standing(Base):
    """One student's best submission on one board, with what the board shows of it."""

    __tablename__ = "standings"
    __table_args__ = (UniqueConstraint("assignment_id", "cut", "gpu_model", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(Integer, default=0)  # whose board (0014; 0:
    # none exists yet). No foreign key: the standing is derived, rebuilt when assignments change
    cut: Mapped[str] = mapped_column(String(8))  # LIVE | FROZEN
    gpu_model: Mapped[str] = mapped_column(String(200), default=EVERY_MODEL)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    username: Mapped[str] = mapped_column(String(64))
    display_name: Mapped[str] = mapped_column(String(200), default="")
    submission_id: Mapped[int] = mapped_column(Integer)  # the best submission
    passed: Mapped[int] = mapped_column(Integer)
    total_time: Mapped[float] = mapped_column(Float)
    score: Mapped[int] = mapped_column(Integer)
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    band_s: Mapped[float | None] = mapped_column(Float, nullable=True)  # refined total's +-
    tests: Mapped[dict[str, Any]] = mapped_column(JSON)  # test id -> {"verdict", "seconds"}
    penalty: Mapped[float] = mapped_column(Float, default=0.0)  # late penalty, percent
    alias: Mapped[str | None] = mapped_column(String(40), nullable=True)  # the public name
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)  # off the public board
    stamp: Mapped[int] = mapped_column(Integer, default=0)  # the board version that last
    # changed this row: readers reuse what they made of a row while its stamp stays


class BoardState(Base):
    """One row (id 1): the standing's version and what every board shares.

    `version` is bumped under this row's lock by every transaction that changes a board, so it
    orders changes as they commit, and a reader that saw version N has seen every change up to
    N. `built` is False until the standing has been computed from the submissions once (a
    database migrated from before 0008_standing, or one whose tables were emptied): the next
    writer or reader rebuilds it in full first."""

    __tablename__ = "board_state"
    id: Mapped[int] = mapped_column(primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    built: Mapped[bool] = mapped_column(Boolean, default=False)
    models: Mapped[list[str]] = mapped_column(JSON, default=list)  # judged_models(): the most
    # used first (the boards' tabs and the API's `gpu_models`)


class PairedRun(Base):
    """One paired comparison of two neighbours on the board whose bands overlapped:
    asked for at a freeze or by a TA, run interleaved on one GPU, its outcome kept here.
    Written only by app/scoreboard/paired/store.py; a submission's own rows never change."""

    __tablename__ = "paired_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_a: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True)  # ranked above at request
    submission_b: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True)  # ranked just below
    user_a: Mapped[str] = mapped_column(String(64))  # A's username, as the board shows it
    user_b: Mapped[str] = mapped_column(String(64))  # B's username
    key: Mapped[str] = mapped_column(String(32))  # this request's key (a stale result differs)
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending|done|failed
    outcome: Mapped[str] = mapped_column(String(16), default="")  # a-faster|b-faster|tied|failed
    reason: Mapped[str] = mapped_column(String(200), default="")  # ordered, budget, the error ...
    rounds: Mapped[int] = mapped_column(Integer, default=0)  # rounds run
    gpu_s: Mapped[float] = mapped_column(Float, default=0.0)  # GPU seconds the rounds held
    budget_s: Mapped[float] = mapped_column(Float, default=0.0)  # GPU seconds allowed
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the result
    requested_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
