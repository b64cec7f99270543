"""The scoreboard: each student's best submission, ranked by passed (desc) then time (asc).

Frozen: students see the board as it stood at the freeze time; TAs always see it live.

`build` computes a board from every submission (0.4 s at 455 students): the definition the
standing kept at write time (app/standing/) is tested against, and what `flashjudge scoreboard
rebuild` amounts to. Requests read the standing through app/services/board_cache.py instead.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.db.models import KeyValue, Submission, User, utcnow
from app.standing.rules import (
    FROZEN_KEY,
    band_of,
    best_key,
    counted,
    frozen_at,
    standing_key,
    test_cell,
)

__all__ = ["FROZEN_KEY", "Row", "band_of", "best_submissions", "build", "fastest_passing",
           "frozen_at", "set_frozen", "to_csv"]


@dataclass(slots=True)
class Row:
    """One student's line on the board (slots: a cached board holds hundreds, and fewer
    objects make the API process's full garbage collections shorter)."""

    rank: int  # competition rank: ties share a rank
    user: str  # username
    display_name: str  # shown on pages
    passed: int  # AC tests of the best submission
    time: float  # sum of per-test seconds of the best submission
    score: int  # the suite's score for that submission
    submission_id: int  # which submission the row is from
    tests: dict[str, dict[str, Any]]  # test id -> {"verdict", "seconds"}
    late: bool = False  # the submission came after the due time (with a penalty)
    band_s: float | None = None  # +- of the total from the timing refinement (None: one run)
    stamp: int = 0  # the board version that last changed the row (the standing's; 0: built)

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "user": self.user, "passed": self.passed,
                "time": round(self.time, 6), "score": self.score, "tests": self.tests,
                "late": self.late, "band_s": self.band_s}


def fastest_passing(rows: list[Row]) -> dict[str, float]:
    """test id -> the fastest passing time on the board (what each time cell is shaded against)."""
    fastest: dict[str, float] = {}
    for row in rows:
        for test_id, cell in row.tests.items():
            seconds = cell.get("seconds")
            if seconds and cell.get("verdict") == "AC":
                old = fastest.get(test_id)
                if old is None or seconds < old:
                    fastest[test_id] = seconds
    return fastest


def set_frozen(db: Session, frozen: bool) -> None:
    row = db.get(KeyValue, FROZEN_KEY)
    if frozen and row is None:
        db.add(KeyValue(key=FROZEN_KEY, value=utcnow().isoformat()))
    elif not frozen and row is not None:
        db.delete(row)


def best_submissions(db: Session, before: datetime | None, gpu_model: str | None = None
                     ) -> dict[int, Submission]:
    """user id -> best judged submission (more passed, then less time, then earlier); a result
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
        if old is None or best_key(sub.passed, sub.total_time, sub.id) < best_key(
                old.passed, old.total_time, old.id):
            best[sub.user_id] = sub
    return best


def build(db: Session, live: bool, gpu_model: str | None = None) -> tuple[bool, list[Row]]:
    """(frozen, ranked rows); `live` shows current results even while frozen (TAs); `gpu_model`
    ranks only the results judged on that GPU model."""
    freeze = frozen_at(db)
    subs = sorted(best_submissions(db, None if live else freeze, gpu_model).values(),
                  key=lambda s: standing_key(s.passed or 0, s.total_time or 0.0, s.user.username))
    rows: list[Row] = []
    for i, sub in enumerate(subs):
        rank = i + 1
        if rows and (rows[-1].passed, rows[-1].time) == (sub.passed, sub.total_time or 0.0):
            rank = rows[-1].rank
        tests = {t.test_id: test_cell(t.verdict, t.seconds, t.detail) for t in sub.tests}
        rows.append(Row(rank, sub.user.username, sub.user.display_name, sub.passed or 0,
                        sub.total_time or 0.0, sub.score or 0, sub.id, tests,
                        bool(getattr(sub, "late", False)), band_of(sub.result)))
    return freeze is not None, rows


def to_csv(rows: list[Row], test_ids: list[str], frozen: datetime | None = None) -> str:
    """User | Rank | Passed | Time | Score | t01..tNN like the course's board, times in
    milliseconds' precision, then the total's band, the late mark and when the board was frozen
    (empty: live), so a frozen export says so on every row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["user", "rank", "passed", "time", "score", *test_ids, "band_s", "late",
                     "frozen_at"])
    stamp = frozen.isoformat() + "Z" if frozen is not None else ""
    for r in rows:
        cells = [_cell(r.tests.get(t)) for t in test_ids]
        band = f"{r.band_s:.3f}" if r.band_s is not None else ""
        writer.writerow([r.user, r.rank, r.passed, f"{r.time:.3f}", r.score, *cells, band,
                         "late" if r.late else "", stamp])
    return out.getvalue()


def _cell(test: dict[str, Any] | None) -> str:
    if not test:
        return ""
    if test["verdict"] == "AC" and test["seconds"] is not None:
        return f"{test['seconds']:.3f}"
    return str(test["verdict"])
