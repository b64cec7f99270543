"""Where a TA decides that a library is fine for one assignment.

A suite such as hw4 accepts only the submission's own kernels: a cuBLAS or attention library
kernel that computes the answer is BK (docs/homework.md, "Borrowed kernels"). An assignment
about using cuBLAS well wants the opposite, and a TA may decide so after seeing what students
tried. The TA page lists the current term's BK results per assignment; one click allows library
kernels for the assignment and judges its BK submissions again, and one click undoes it and
judges again every submission that was judged while it was allowed. A second process on the
GPU stays BK either way: that rule is about whose process did the work, not which library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.course import assignments, terms
from app.db.models import Assignment, JudgedTest, Submission, User, utcnow
from app.submissions import lifecycle, ta_actions
from flashjudge.contract import Verdict

SHOWN_PER_ASSIGNMENT = 50  # BK rows listed per assignment (the newest)


@dataclass(frozen=True)
class BorrowedRow:
    """One BK submission as the TA page lists it."""

    submission_id: int
    username: str
    test_id: str  # the first BK test
    message: str  # what the judge named: the kernel or the process
    created_at: datetime


@dataclass
class AssignmentBorrowed:
    """An assignment's rule and its BK submissions."""

    name: str
    label: str
    libraries_allowed: bool
    writable: bool  # its term is not archived
    rows: list[BorrowedRow] = field(default_factory=list)


def borrowed_results(db: Session, settings: Settings) -> list[AssignmentBorrowed]:
    """Every assignment of the current term with its BK submissions (newest first)."""
    listed = []
    for a in assignments.in_term(db, settings.suite):
        found = db.execute(
            select(Submission, JudgedTest).join(JudgedTest, JudgedTest.submission_id
                                                == Submission.id)
            .where(Submission.assignment_id == a.id, Submission.verdict == Verdict.BK,
                   JudgedTest.verdict == Verdict.BK)
            .order_by(Submission.id.desc(), JudgedTest.test_id)).all()
        rows: dict[int, BorrowedRow] = {}
        for sub, test in found:
            if sub.id not in rows and len(rows) < SHOWN_PER_ASSIGNMENT:
                message = str((test.detail or {}).get("message", ""))
                rows[sub.id] = BorrowedRow(sub.id, sub.user.username, test.test_id, message,
                                           sub.created_at)
        listed.append(AssignmentBorrowed(a.name, a.label, a.libraries_allowed,
                                         a.term.archived_at is None, list(rows.values())))
    return listed


def set_libraries_allowed(db: Session, actor: User, name: str, allowed: bool,
                          settings: Settings) -> str:
    """Allow (or forbid again) library kernels for one assignment and judge again what the
    change concerns; one line for the TA page saying what was done."""
    row = assignments.named(db, name, settings.suite)
    terms.require_writable(row)
    if row.libraries_allowed == allowed:
        return f"{name}: library kernels are already {_state(allowed)}; nothing changed"
    chosen = _to_rejudge(db, row, allowed)
    row.libraries_allowed, row.updated_by, row.updated_at = allowed, actor.id, utcnow()
    audit.record(db, actor, "libraries-allow" if allowed else "libraries-forbid", name,
                 rejudged=len(chosen))
    db.commit()
    for sub in chosen:
        ta_actions.rejudge(db, actor, sub, settings)
    return (f"{name}: library kernels {_state(allowed)}; judging {len(chosen)} submission(s) "
            f"again")


def _to_rejudge(db: Session, row: Assignment, allowing: bool) -> list[Submission]:
    """Allowing: its BK submissions (the others' verdicts cannot change). Forbidding again:
    every judged submission of it, since any of them may have used a library while allowed.
    Either way those still in flight, whose message carries the old rule."""
    judged = (Submission.verdict == Verdict.BK) if allowing \
        else Submission.verdict.not_in(lifecycle.UNJUDGED)
    return list(db.scalars(select(Submission).where(
        Submission.assignment_id == row.id, or_(Submission.verdict.is_(None), judged))
        .order_by(Submission.id)))


def _state(allowed: bool) -> str:
    return "allowed" if allowed else "forbidden"
