"""Browser sessions kept on the server: the signed cookie holds only a random id, and a session
counts while its row exists. Logout, a password change and a TA's sign-out delete rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, joinedload

from app.core.security import new_secret, token_hash
from app.db.models import LoginSession, User, utcnow
from app.db.session import write


@dataclass(frozen=True)
class Found:
    """What a session id in a cookie stands for."""

    user: User | None  # its user; None when the session ended (logged out, revoked)
    expired: bool  # the row exists but its time is up


def start(db: Session, user: User, max_age_s: int) -> str:
    """A new session for `user`; returns the id for the cookie. Drops the user's expired ones."""
    now = utcnow()
    db.execute(delete(LoginSession).where(LoginSession.user_id == user.id,
                                          LoginSession.expires_at <= now))
    sid = new_secret()
    db.add(LoginSession(user_id=user.id, sid_hash=token_hash(sid),
                        expires_at=now + timedelta(seconds=max_age_s)))
    db.flush()
    return sid


def lookup(db: Session, sid: str) -> Found:
    """The session and its user in one query (every page and API request of a browser asks)."""
    row = db.scalar(select(LoginSession).options(joinedload(LoginSession.user))
                    .where(LoginSession.sid_hash == token_hash(sid)))
    if row is None:
        return Found(None, False)
    return Found(row.user, row.expires_at <= utcnow())


def end(db: Session, sid: str) -> None:
    db.execute(delete(LoginSession).where(LoginSession.sid_hash == token_hash(sid)))


def end_all(db: Session, user_id: int) -> int:
    return write(db, delete(LoginSession).where(LoginSession.user_id == user_id)).rowcount


def live_count(db: Session, user_id: int) -> int:
    return db.scalar(select(func.count()).select_from(LoginSession).where(
        LoginSession.user_id == user_id, LoginSession.expires_at > utcnow())) or 0
