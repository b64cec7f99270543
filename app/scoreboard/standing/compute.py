"""What the standing should hold: each student's best counted submission per cut of time and
GPU model, computed from the submissions of some students (a write's) or of everyone (a
rebuild), with plain column queries (no ORM objects: a rebuild reads thousands of tests)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import JudgedTest, Submission, User
from app.db.models.standing import EVERY_MODEL, FROZEN, LIVE
from app.scoreboard.standing.rules import Boards, band_of, best_key, counted, graded, test_cell

Key = tuple[int, str, str, int]  # (assignment_id, cut, gpu_model, user_id): one standings row
CHUNK = 500  # ids per IN (...): well under SQLite's limit on bound parameters


@dataclass(frozen=True)
class Line:
    """What one standing row says (everything but which board and student it belongs to)."""

    username: str  # shown on the board
    display_name: str  # the row's tooltip on the page
    submission_id: int  # the best submission
    passed: int  # its AC tests
    total_time: float  # its total seconds (refined once the refinement came back)
    score: int  # the suite's score of it
    late: bool  # submitted after the due time
    band_s: float | None  # the refined total's +- (None: one run)
    tests: dict[str, dict[str, Any]]  # test id -> {"verdict", "seconds"}, by test id
    penalty: float = 0.0  # percent off `score` for lateness (the ranked score is after it)
    alias: str | None = None  # the name the student chose for the public board
    hidden: bool = False  # the student opted out of the public board

    def values(self) -> dict[str, Any]:
        """Column values for an INSERT or UPDATE of the row."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def chunks(ids: Collection[int]) -> Iterator[list[int]]:
    ordered = sorted(ids)
    for start in range(0, len(ordered), CHUNK):
        yield ordered[start:start + CHUNK]


def best_ids(db: Session, boards: Boards, user_ids: Collection[int] | None,
             cuts: Collection[str]) -> dict[Key, int]:
    """Key -> the best counted submission's id, for these students (None: every student), on
    the board of each one's assignment."""
    query = (select(Submission.id, Submission.user_id, Submission.passed, Submission.total_time,
                    Submission.score, Submission.late_penalty, Submission.gpu_model,
                    Submission.created_at, Submission.assignment_id)
             .join(User, User.id == Submission.user_id).where(*counted()))
    batches = [None] if user_ids is None else list(chunks(user_ids))
    best: dict[Key, tuple[float, int, float, int]] = {}
    for batch in batches:
        chosen = query if batch is None else query.where(Submission.user_id.in_(batch))
        for row in db.execute(chosen):
            rank = best_key(graded(row.score, row.late_penalty), row.passed, row.total_time,
                            row.id)
            models = [EVERY_MODEL] if row.gpu_model is None else [EVERY_MODEL, row.gpu_model]
            board = boards.board_of(row.assignment_id)
            freeze = boards.freezes.get(board)
            for cut in cuts:
                if cut == FROZEN and (freeze is None or row.created_at > freeze):
                    continue  # the frozen board shows what was submitted before the freeze
                for model in models:
                    key = (board, cut, model, row.user_id)
                    if key not in best or rank < best[key]:
                        best[key] = rank
    return {key: rank[3] for key, rank in best.items()}


def tests_of(db: Session, submission_ids: Collection[int]) -> dict[int, dict[str, Any]]:
    """submission id -> its test cells as the board shows them, by test id."""
    cells: dict[int, dict[str, Any]] = {i: {} for i in submission_ids}
    for batch in chunks(submission_ids):
        rows = db.execute(select(JudgedTest.submission_id, JudgedTest.test_id,
                                 JudgedTest.verdict, JudgedTest.seconds, JudgedTest.detail)
                          .where(JudgedTest.submission_id.in_(batch))
                          .order_by(JudgedTest.submission_id, JudgedTest.test_id))
        for row in rows:
            cells[row.submission_id][row.test_id] = test_cell(row.verdict, row.seconds,
                                                              row.detail)
    return cells


def lines_of(db: Session, best: dict[Key, int]) -> dict[Key, Line]:
    """The rows for chosen submissions: their numbers, tests and users' names."""
    ids = set(best.values())
    tests = tests_of(db, ids)
    found: dict[int, Line] = {}
    for batch in chunks(ids):
        rows = db.execute(select(Submission.id, Submission.passed, Submission.total_time,
                                 Submission.score, Submission.late, Submission.result,
                                 Submission.late_penalty, User.username, User.display_name,
                                 User.board_alias, User.board_hidden)
                          .join(User, User.id == Submission.user_id)
                          .where(Submission.id.in_(batch)))
        for r in rows:
            found[r.id] = Line(r.username, r.display_name, r.id, r.passed or 0,
                               r.total_time or 0.0, r.score or 0, bool(r.late),
                               band_of(r.result), tests[r.id], r.late_penalty or 0.0,
                               r.board_alias or None, bool(r.board_hidden))
    return {key: found[submission_id] for key, submission_id in best.items()}


def wanted(db: Session, boards: Boards, user_ids: Collection[int] | None,
           cuts: Collection[str] = (LIVE, FROZEN)) -> dict[Key, Line]:
    """Every row these students (None: all) should have in these cuts, given the freezes."""
    return lines_of(db, best_ids(db, boards, user_ids, cuts))
