"""Login throttling in the database, so every API process counts the same failures.

An attempt first records itself (committed), then counts the records in the window, itself
included: of any number of concurrent attempts at most `limit` get to check a password at once.
Past the limit nothing is locked: a key admits one more check after a wait that doubles with each
failure (cap/16, cap/8 ...) up to `backoff_cap_s`: one check per cap at most, the guessing bound. A
refusal deletes its own record, so hammering a key does not push its wait further out; a success
deletes its own records and the failures of the keys that belong to whoever succeeded (their own
typos), never a username's count across addresses (an attacker's spray stays counted).
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

DOUBLINGS = 4  # past the limit the waits are cap/16, cap/8, cap/4, cap/2, then cap


@dataclass(frozen=True)
class Rule:
    """At most `limit` failures per `window_s` seconds for one key checked without waiting; past
    it one check per cap/16, cap/8 ... seconds, at most `backoff_cap_s` apart."""

    key: str  # e.g. "user:alice" or "addr:10.0.0.7" (stored as its SHA-256)
    limit: int  # failures in the window before the waits begin
    window_s: int  # the window, seconds
    backoff_cap_s: int  # the longest wait between two checks past the limit
    why: str = "too many failed logins"  # the 429's message, before "; try again in N s"
    personal: bool = False  # the succeeding client's own key: a success clears its failures


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
        wait = over_by(db, rule, attempt.ids)
        if wait is not None:
            finish(db, attempt, succeeded=False, refused=True)
            raise too_many(f"{rule.why}; try again in {wait} s", wait)
    return attempt


def over_by(db: Session, rule: Rule, own: list[int]) -> int | None:
    """Seconds until the rule admits another check, or None when it admits this one."""
    since = utcnow() - timedelta(seconds=rule.window_s)
    where = (LoginAttempt.key_hash == token_hash(rule.key), LoginAttempt.at >= since)
    count = db.scalar(select(func.count()).select_from(LoginAttempt).where(*where)) or 0
    if count <= rule.limit:
        return None
    latest = db.scalar(select(func.max(LoginAttempt.at)).where(
        *where, LoginAttempt.id.not_in(own)))
    if latest is None:
        return None
    spacing = rule.backoff_cap_s / 2 ** max(0, DOUBLINGS - (count - rule.limit - 1))
    wait = spacing - (utcnow() - latest).total_seconds()
    return None if wait <= 0 else max(1, math.ceil(wait))


def finish(db: Session, attempt: Attempt, *, succeeded: bool, refused: bool = False) -> None:
    """Keep a failure's records; drop a success's (and its personal keys' failures) or a
    refusal's."""
    if succeeded or refused:
        db.execute(delete(LoginAttempt).where(LoginAttempt.id.in_(attempt.ids)))
    if succeeded:
        mine = [token_hash(r.key) for r in attempt.rules if r.personal]
        db.execute(delete(LoginAttempt).where(LoginAttempt.key_hash.in_(mine)))
    db.commit()
