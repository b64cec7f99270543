"""What a student sees of a result before the due time: all of it, verdicts only, or nothing.

Gradescope's "hidden / after due date" and CMS's private testcases: an assignment's
`visibility` says what its students see of their own results until their due time (with their
extension); after it, and for TAs always, everything. One cut, `cut_detail`, is applied to the
detail every student-facing view is made from (the result page and its live stream, GET
/api/submissions/ID, `flashjudge submit`'s table); `cut_row` to lists (my submissions,
history); `board_level` to the scoreboard (page, JSON, CSV, my place: no board under NONE, no
time under VERDICTS, app/scoreboard/audience.py).

Hidden tests (an assignment judged on a secret seed) never show a student their expected
values, whatever the rule and the time: a wrong answer's message keeps where it went wrong and
what the student's kernel wrote there, never what it should have written ("want ...").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.db.models import Assignment, Extension, Submission
from app.db.models.base import utcnow

ALL, VERDICTS, NONE = "all", "verdicts", "none"
TEST_VERDICT_KEYS = ("id", "verdict", "shape", "time_limit")  # a test row under VERDICTS
HIDDEN_RESULT: dict[str, Any] = {  # what NONE blanks
    "verdict": None, "score": None, "final_score": None, "passed": None, "time": None,
    "tests": [], "timing": None}
DETAIL_ONLY: dict[str, Any] = {  # what VERDICTS (and NONE) blank besides
    "feedback": None, "diagnosis": None, "diagnosis_status": "", "profiles": [],
    "timing": None, "time": None, "floor": None}


WANT = re.compile(r",? want [^;,]*")  # the expected value in a compare message (kernels/compare.py)


def due_for(db: Session, assignment: Assignment, user_id: int) -> datetime | None:
    """The student's own due time (their extension, else the assignment's), naive UTC."""
    own = db.query(Extension.due_at).filter(Extension.assignment_id == assignment.id,
                                            Extension.user_id == user_id).scalar()
    return own or assignment.due_at


def level(db: Session, sub: Submission, now: datetime | None = None) -> str:
    """What the submission's owner sees of it now: ALL, VERDICTS or NONE. A rule other than
    ALL with no due time set stays in force (there is no "after" yet)."""
    assignment = sub.assignment
    if assignment is None or assignment.visibility == ALL:
        return ALL
    due = due_for(db, assignment, sub.user_id)
    moment = now.astimezone(UTC).replace(tzinfo=None) if now else utcnow()
    return ALL if due is not None and moment >= due else assignment.visibility


def cut_detail(body: dict[str, Any]) -> dict[str, Any]:
    """A student's view of a detail by its `shown` level (set by app/results/detail.py)."""
    if body.get("hidden_tests"):
        body = body | {"tests": [without_expected(t) for t in body.get("tests", [])]}
    shown = body.get("shown", ALL)
    if shown == ALL:
        return body
    cut = body | DETAIL_ONLY
    if shown == VERDICTS:
        cut["tests"] = [verdict_only(t) for t in body.get("tests", [])]
        return cut
    return cut | HIDDEN_RESULT


def without_expected(test: dict[str, Any]) -> dict[str, Any]:
    """A hidden test's row without the expected value its message names."""
    message = test.get("message")
    return test | {"message": WANT.sub("", message)} if message else test


def verdict_only(test: dict[str, Any]) -> dict[str, Any]:
    """A test row with its verdict (and shape, limit) and every measurement blanked."""
    blank = {k: None for k in test if k not in TEST_VERDICT_KEYS}
    return test | blank | ({"message": ""} if "message" in test else {})


def cut_row(row: dict[str, Any], shown: str) -> dict[str, Any]:
    """One line of a list (my submissions): NONE blanks the verdict and numbers, VERDICTS
    the time."""
    if shown == ALL:
        return row
    blank = {"time": None} if shown == VERDICTS else {"verdict": None, "passed": None,
                                                      "score": None, "time": None}
    return row | blank


def board_level(assignment: Assignment | None, now: datetime | None = None) -> str:
    """What students see of an assignment's board now: ALL, VERDICTS (no time anywhere, ranks
    by score and passed tests alone) or NONE (no board). A rule in force until the assignment's
    due time; with no due time set it stays in force."""
    if assignment is None or assignment.visibility == ALL:
        return ALL
    moment = now.astimezone(UTC).replace(tzinfo=None) if now else utcnow()
    due = assignment.due_at
    return ALL if due is not None and moment >= due else assignment.visibility


def board_hidden(assignment: Assignment | None, now: datetime | None = None) -> bool:
    """Whether students see no board now: the rule is NONE and its due time has not passed
    (the board would show every student's results)."""
    return board_level(assignment, now) == NONE
