"""Freezing the scoreboard: students then see it as it stood at the freeze time, TAs live."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accounts import audit
from app.db.models import KeyValue, User, utcnow
from app.scoreboard.standing.rules import FROZEN_KEY


def set_frozen(db: Session, frozen: bool) -> None:
    """Note the freeze time (or drop it); the standing's hooks rebuild the frozen cut."""
    row = db.get(KeyValue, FROZEN_KEY)
    if frozen and row is None:
        db.add(KeyValue(key=FROZEN_KEY, value=utcnow().isoformat()))
    elif not frozen and row is not None:
        db.delete(row)


def freeze(db: Session, actor: User, frozen: bool) -> None:
    """A TA freezes or unfreezes the board, audited in the same transaction."""
    set_frozen(db, frozen)
    audit.record(db, actor, "freeze" if frozen else "unfreeze", "scoreboard")
    db.commit()
