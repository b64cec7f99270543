"""Login throttling in the database, so every API process counts the same failures.

An attempt first records itself (committed), then counts the records in the window, itself
included: of any number of concurrent attempts at most `limit` get to check a password. A success
deletes its own records and the username's earlier failures; a refusal deletes its own record, so
hammering a locked account does not push the lockout further out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.core.errors import too_many
from app.core.security import token_hash
from app.db.models import LoginAttempt, utcnow


@dataclass(frozen=True)
class Rule:
    """At most `limit` failures per `window_s` seconds for one key."""

    key: str  # e.g. "user:alice" or "addr:10.0.0.7" (stored as its SHA-256)
    limit: int  # failures allowed in the window
    window_s: int  # the window, seconds


@dataclass
class Attempt:
    """The records one login attempt holds while its password is checked."""

    ids: list[int]  # LoginAttempt rows of this attempt
    rules: list[Rule]  # what it was counted against


def begin(db: Session, rules: list[Rule]) -> Attempt:
    """Record the attempt and check it against every rule; 429 with Retry-After when over."""
    now = utcnow()
    longest = max(r.window_s for r in rules)
    db.execute(delete(LoginAttempt).where(LoginAttempt.at < now - timedelta(seconds=longest)))
    rows = [LoginAttempt(key_hash=token_hash(r.key), at=now) for r in rules]
    db.add_all(rows)
    db.commit()
    attempt = Attempt([r.id for r in rows], rules)
    for rule in rules:
        wait = over_by(db, rule)
        if wait is not None:
            finish(db, attempt, succeeded=False, refused=True)
            raise too_many(f"too many failed logins; try again in {wait} s", wait)
    return attempt


def over_by(db: Session, rule: Rule) -> int | None:
    """Seconds until the rule admits another attempt, or None when it admits this one."""
    since = utcnow() - timedelta(seconds=rule.window_s)
    key = token_hash(rule.key)
    where = (LoginAttempt.key_hash == key, LoginAttempt.at >= since)
    count = db.scalar(select(func.count()).select_from(LoginAttempt).where(*where)) or 0
    if count <= rule.limit:
        return None
    oldest = db.scalar(select(func.min(LoginAttempt.at)).where(*where)) or since
    return max(1, math.ceil((oldest - since).total_seconds()))


def finish(db: Session, attempt: Attempt, *, succeeded: bool, refused: bool = False) -> None:
    """Keep a failure's records; drop a success's (and its username's failures) or a refusal's."""
    if succeeded or refused:
        db.execute(delete(LoginAttempt).where(LoginAttempt.id.in_(attempt.ids)))
    if succeeded:
        users = [token_hash(r.key) for r in attempt.rules if r.key.startswith("user:")]
        db.execute(delete(LoginAttempt).where(LoginAttempt.key_hash.in_(users)))
    db.commit()
