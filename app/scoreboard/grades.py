"""The grades export: per student, the submission with the best final score on the suite.

Scores are the ones the worker computed and the recorder stored (the suite file's rule), never
recomputed here from passed tests; the late penalty stored at upload is applied on top:
final = score * (100 - penalty) / 100. A result held by a speed-of-light flag does not count
until a TA clears it, as on the scoreboard. The submission counted is the one the board ranks
(the same key: app/scoreboard/standing/rules.py `best_key`), and the rank is the board's
("4=" when tied), given by the caller from the board of this suite, so that the export of one
assignment's board takes that board (`ranks_of`). The LMS layouts are in
app/scoreboard/lms.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.spreadsheet import csv_text
from app.course.deadlines import final_score
from app.db.models import Submission, User
from app.scoreboard.rows import Row
from app.scoreboard.standing.rules import best_key, graded
from flashjudge.contract import Status
from testcases.suite import SuiteError, load_suite

COLUMNS = ("username", "display_name", "email", "submission", "passed", "score", "max_score",
           "late", "penalty_percent", "final_score", "rank")


@dataclass(frozen=True)
class Grade:
    """One student's line."""

    user: User  # the student
    submission: Submission | None  # the counted submission (None: nothing judged)
    max_score: int  # the suite's best score
    rank: str = ""  # on the suite's board, "4" or "4=" ("" when not on it)

    @property
    def final(self) -> float:
        sub = self.submission
        return (final_score(sub.score, sub.late_penalty) or 0.0) if sub else 0.0

    def row(self) -> list[object]:
        sub = self.submission
        if sub is None:
            return [self.user.username, self.user.display_name, self.user.email, "", 0, 0,
                    self.max_score, "", 0, 0, self.rank]
        return [self.user.username, self.user.display_name, self.user.email, sub.id,
                sub.passed or 0, sub.score or 0, self.max_score, "yes" if sub.late else "no",
                f"{sub.late_penalty:g}", f"{self.final:g}", self.rank]


def key_of(sub: Submission) -> tuple[float, int, float, int]:
    """The board's order of one student's submissions (best first), the graded score first."""
    return best_key(graded(sub.score, sub.late_penalty), sub.passed, sub.total_time, sub.id)


def counted(db: Session, suite: str, assignment_id: int | None = None) -> dict[int, Submission]:
    """user id -> the judged submission with the best final score (then as the board: more
    passed, less time, the earliest), among an assignment's submissions (None: a suite's)."""
    which = (Submission.assignment_id == assignment_id if assignment_id is not None
             else Submission.suite == suite)
    query = select(Submission).where(
        which, Submission.status == Status.DONE,
        Submission.score.is_not(None), Submission.flag_status != "held")
    best: dict[int, Submission] = {}
    for sub in db.scalars(query.order_by(Submission.id)):
        old = best.get(sub.user_id)
        if old is None or key_of(sub) < key_of(old):
            best[sub.user_id] = sub
    return best


def ranks_of(rows: list[Row]) -> dict[str, str]:
    """username -> the rank as the board shows it ("4="), from the whole board's rows (TAs'
    view: hidden students too, they are graded like everyone)."""
    return {r.user: r.label or str(r.rank) for r in rows}


def grades(db: Session, suite: str, ranks: dict[str, str] | None = None,
           assignment_id: int | None = None) -> list[Grade]:
    """Every student on the roster, in username order, with their rank on `ranks` (the
    board's; None: no rank), graded on one assignment (None: every submission of `suite`)."""
    try:
        full = load_suite(suite).max_score
    except SuiteError:
        full = 0
    best = counted(db, suite, assignment_id)
    students = db.scalars(select(User).where(User.role == "student").order_by(User.username))
    return [Grade(u, best.get(u.id), full, (ranks or {}).get(u.username, ""))
            for u in students]


def grades_csv(db: Session, suite: str, ranks: dict[str, str] | None = None,
               assignment_id: int | None = None) -> str:
    """The CSV a TA downloads: score, penalty, final score, the late mark and the rank."""
    return csv_text([COLUMNS, *(grade.row() for grade in grades(db, suite, ranks,
                                                                 assignment_id))])
