"""Freezing an assignment's board: students then see it as it stood at the freeze time, TAs
live. The freeze is the assignment's `frozen_at` (0014_boards); the standing's hooks rebuild
the boards when it changes."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.errors import UserError
from app.course import terms
from app.db.models import Assignment, User, utcnow
from app.scoreboard.standing.rules import default_board


def set_frozen(db: Session, frozen: bool, assignment: Assignment | None = None) -> Assignment:
    """Note the freeze time of an assignment's board (default: the default board's), or drop
    it; a board already frozen keeps its first freeze time."""
    target = assignment or db.get(Assignment, default_board(db))
    if target is None:
        raise UserError("no assignment to freeze: none exists yet", status=409,
                        field="assignment")
    terms.require_writable(target)
    if frozen and target.frozen_at is None:
        target.frozen_at = utcnow()
    elif not frozen:
        target.frozen_at = None
    return target


def freeze(db: Session, actor: User, frozen: bool, assignment: Assignment | None = None) -> None:
    """A TA freezes or unfreezes a board, audited in the same transaction."""
    target = set_frozen(db, frozen, assignment)
    audit.record(db, actor, "freeze" if frozen else "unfreeze", f"scoreboard {target.name}")
    db.commit()
