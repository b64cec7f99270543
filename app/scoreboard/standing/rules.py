"""The ranking rules, in one place: which results count, which one is a student's best, in what
order students stand, which boards there are (one per assignment) and when each was
frozen.

Both ways of computing a board use these: the standing kept at write time
(app/scoreboard/standing/) and the full computation from every submission
(tests/app/utils/board_oracle.py), which the tests hold the standing to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from app.course.deadlines import final_score
from app.db.models import Assignment, Submission, Term, User
from flashjudge.contract import Status

RANKED_ROLE = "student"  # TAs' results are never ranked
HELD = "held"  # flag_status of a result a speed-of-light flag holds until a TA clears it


def counted() -> list[ColumnElement[bool]]:
    """The WHERE clauses of a result that counts: judged to the end with a number of passed
    tests, by a student, not held by a flag (join User)."""
    return [Submission.status == Status.DONE, Submission.passed.is_not(None),
            User.role == RANKED_ROLE, Submission.flag_status != HELD]


def graded(score: int | None, penalty: float | None) -> float:
    """The score that is graded and ranked: the stored score after the late penalty, by the
    grades export's own rule (app/course/deadlines.py `final_score`), so the board and the
    grades never disagree on who is ahead."""
    return final_score(score or 0, penalty or 0.0) or 0.0


def best_key(score: float, passed: int | None, total_time: float | None, submission_id: int
             ) -> tuple[float, int, float, int]:
    """Smaller is better: a higher graded score (`graded`), then more passed, then less time,
    then the earlier submission. The grades export counts the same submission."""
    return (-score, -(passed or 0), total_time or 0.0, submission_id)


def finite(seconds: float | None) -> float | None:
    """A time JSON can carry: a worker's NaN or infinity (kept as such in test_results) would
    make the row unstorable in PostgreSQL's json and the board unservable, so it shows as none."""
    return seconds if seconds is None or math.isfinite(seconds) else None


def test_cell(verdict: str, seconds: float | None, detail: dict[str, Any] | None
              ) -> dict[str, Any]:
    """One test's cell on a board: its verdict, its seconds and, once the timing refinement came
    back, the +- of that time (seconds; None: one run)."""
    band = (detail or {}).get("band_s")
    band = finite(float(band)) if isinstance(band, int | float) else None
    return {"verdict": verdict, "seconds": finite(seconds),
            "band_s": None if band is None else round(band, 9)}


def standing_key(score: float, passed: int, time: float, username: str
                 ) -> tuple[float, int, float, str]:
    """The board's order of students: the higher graded score, then more passed, then less
    time, then by name."""
    return (-score, -passed, time, username)


def band_of(result: dict[str, Any] | None) -> float | None:
    """The refined total's noise band, when the refinement has come back."""
    timing = (result or {}).get("timing") or {}
    band = timing.get("total_band_s") if isinstance(timing, dict) else None
    return round(float(band), 6) if isinstance(band, int | float) else None


@dataclass(frozen=True)
class Boards:
    """Which boards there are now: one per assignment."""

    default: int  # the board a submission without an assignment counts on, and the one shown
    # when none is named: the current term's first open assignment (0: none exists yet)
    freezes: dict[int, datetime]  # assignment id -> when its board was frozen

    def board_of(self, assignment_id: int | None) -> int:
        return assignment_id or self.default


def default_board(db: Session) -> int:
    """The current term's first open assignment, else its first, else 0."""
    found = db.scalar(select(Assignment.id).join(Term, Term.id == Assignment.term_id)
                      .where(Term.archived_at.is_(None))
                      .order_by(Term.id.desc(), Assignment.is_open.desc(), Assignment.position,
                                Assignment.id).limit(1))
    return found or 0


def boards_now(db: Session) -> Boards:
    rows = db.execute(select(Assignment.id, Assignment.frozen_at)
                      .where(Assignment.frozen_at.is_not(None)))
    return Boards(default_board(db), {r.id: r.frozen_at for r in rows})


def frozen_at(db: Session, assignment_id: int | None = None) -> datetime | None:
    """When an assignment's board was frozen (default: the default board's; None: live)."""
    board = assignment_id or default_board(db)
    return db.scalar(select(Assignment.frozen_at).where(Assignment.id == board))


def judged_models(db: Session) -> list[str]:
    """The GPU models with judged submissions, the most used first (then by name): the boards'
    tabs. Kept in board_state at write time; this is the query that keeps it."""
    count = func.count(Submission.id)
    rows = db.execute(select(Submission.gpu_model, count)
                      .where(Submission.status == Status.DONE, Submission.gpu_model.is_not(None))
                      .group_by(Submission.gpu_model).order_by(count.desc(), Submission.gpu_model))
    return [str(name) for name, _ in rows]
