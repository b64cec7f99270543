"""The grades in the CSV layouts that learning management systems import, besides
flashjudge's own (app/scoreboard/grades.py). docs/grades.md shows each header row and how to
import the file.

- Canvas (Grades > Import): the identifying columns of Canvas's own gradebook export, Student,
  ID, SIS User ID, SIS Login ID, Section, then one column per assignment named as in Canvas
  (a new name creates an assignment). We fill SIS User ID and SIS Login ID with the username
  (the roster's student id) and leave Canvas's internal ID empty; a "Points Possible" row after
  the header gives the suite's best score, as Canvas's export has.
- Moodle (Grades > Import > CSV file): any columns, mapped on import: "Identify user by" maps
  our Email address (or Username) column to the user field, and the grade column to the grade
  item; a Feedback column may be mapped to the item's feedback.

Each grade is the final score (after any late penalty); the rank goes where the LMS can carry
it (Moodle's feedback; Canvas has no free column that imports, so it stays in our layout).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.core.spreadsheet import csv_text
from app.scoreboard.grades import Grade, grades, grades_csv, ranks_of
from app.scoreboard.rows import Row

LAYOUTS = ("flashjudge", "canvas", "moodle")
CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEAD = ["Username", "Email address"]


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise UserError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}",
                        field="layout")
    return layout


def feedback(grade: Grade) -> str:
    """One line for Moodle's feedback: the penalty, if any, and the rank."""
    sub = grade.submission
    if sub is None:
        return "no judged submission"
    late = f"late: {sub.late_penalty:g}% off {sub.score}; " if sub.late_penalty else ""
    rank = f"rank {grade.rank}" if grade.rank else "not ranked"
    return f"{late}{rank}; submission {sub.id}"


def canvas(rows: list[Grade], assignment: str) -> list[list[object]]:
    full = rows[0].max_score if rows else ""
    head: list[list[object]] = [[*CANVAS_HEAD, assignment],
                                ["Points Possible", "", "", "", "", full]]
    return head + [[g.user.display_name or g.user.username, "", g.user.username,
                    g.user.username, "", f"{g.final:g}"] for g in rows]


def moodle(rows: list[Grade], assignment: str) -> list[list[object]]:
    head: list[list[object]] = [[*MOODLE_HEAD, assignment, "Feedback"]]
    return head + [[g.user.username, g.user.email, f"{g.final:g}", feedback(g)] for g in rows]


SHAPES: dict[str, Callable[[list[Grade], str], list[list[object]]]] = {
    "canvas": canvas, "moodle": moodle}


def export(rows: list[Grade], layout: str, assignment: str) -> str:
    """`rows` (app/scoreboard/grades.py `grades`) as `layout`'s CSV, the grade column named
    `assignment` (as the LMS calls the assignment)."""
    return csv_text(SHAPES[check_layout(layout)](rows, assignment))


def grades_file(db: Session, suite: str, layout: str, board: list[Row] | None,
                assignment: str | None = None, assignment_id: int | None = None) -> str:
    """The grades of `suite` in `layout`, ranked on `board` (that suite's board's rows, every
    student; None: no rank column filled); the LMS's grade column is named `assignment`
    (default: the suite); `assignment_id` grades one assignment's submissions."""
    ranks = ranks_of(board) if board is not None else None
    if check_layout(layout) == "flashjudge":
        return grades_csv(db, suite, ranks, assignment_id)
    return export(grades(db, suite, ranks, assignment_id), layout, assignment or suite)
