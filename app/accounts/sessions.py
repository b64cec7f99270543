"""Browser sessions kept on the server: the signed cookie holds only a random id, and a session
counts while its row exists. Logout, a password change and a TA's sign-out delete rows; each
deletion also makes every API process forget the sessions it remembered for the scoreboard
(app/accounts/recent_sessions.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, event, func, inspect, select
from sqlalchemy.orm import Session, joinedload, sessionmaker

from app.accounts.recent_sessions import RECENT
from app.changefeed.changes import SESSIONS, note_change
from app.core.security import new_secret, token_hash
from app.db.models import LoginSession, User, utcnow
from app.db.session import write

MAX_SESSIONS = 10  # live browser sessions per user (settings.max_sessions_per_user)


@dataclass(frozen=True)
class Found:
    """What a session id in a cookie stands for."""

    user: User | None  # its user; None when the session ended (logged out, revoked)
    expired: bool  # the row exists but its time is up
    expires_at: datetime | None = None  # when it ends (None when there is no row)


def start(db: Session, user: User, max_age_s: int, keep: int = MAX_SESSIONS,
          label: str = "") -> str:
    """A new session for `user`; returns the id for the cookie. Drops the user's expired ones,
    and past `keep` live ones their oldest (a script logging in 100 times leaves `keep`)."""
    now = utcnow()
    db.execute(delete(LoginSession).where(LoginSession.user_id == user.id,
                                          LoginSession.expires_at <= now))
    sid = new_secret()
    db.add(LoginSession(user_id=user.id, sid_hash=token_hash(sid), label=label[:200],
                        expires_at=now + timedelta(seconds=max_age_s)))
    db.flush()
    older = db.scalars(select(LoginSession.id).where(LoginSession.user_id == user.id)
                       .order_by(LoginSession.id.desc()).offset(max(1, keep))).all()
    if older:
        db.execute(delete(LoginSession).where(LoginSession.id.in_(older)))
        forget_remembered(db)
    return sid


def lookup(db: Session, sid: str) -> Found:
    """The session and its user in one query (every page and API request of a browser asks)."""
    row = db.scalar(select(LoginSession).options(joinedload(LoginSession.user))
                    .where(LoginSession.sid_hash == token_hash(sid)))
    if row is None:
        return Found(None, False)
    return Found(row.user, row.expires_at <= utcnow(), row.expires_at)


def lookup_recent(db: Callable[[], Session], sid: str) -> Found:
    """`lookup`, answered from this process's memory when the same session was looked up in
    the last seconds (for the scoreboard's routes only: see app/accounts/recent_sessions.py);
    `db` is called only when the database must be asked."""
    key = token_hash(sid)
    user = RECENT.get(key)
    if user is not None:
        return Found(user, False)
    generation = RECENT.generation
    found = lookup(db(), sid)
    if found.user is not None and not found.expired and found.expires_at is not None:
        RECENT.keep(key, found.user, found.expires_at, generation)
    return found


def end(db: Session, sid: str) -> None:
    db.execute(delete(LoginSession).where(LoginSession.sid_hash == token_hash(sid)))
    forget_remembered(db)


def end_all(db: Session, user_id: int) -> int:
    gone = write(db, delete(LoginSession).where(LoginSession.user_id == user_id)).rowcount
    forget_remembered(db)
    return gone


def forget_remembered(db: Session) -> None:
    """Every process forgets the sessions it remembers for the board: this one now and again
    when `db` commits (a lookup that read the row in between is not kept past the commit),
    the others when their live poller reads the note this leaves on the change feed."""
    RECENT.forget_all()
    note_change(db, SESSIONS)
    event.listen(db, "after_commit", lambda _session: RECENT.forget_all(), once=True)


def live_count(db: Session, user_id: int) -> int:
    return db.scalar(select(func.count()).select_from(LoginSession).where(
        LoginSession.user_id == user_id, LoginSession.expires_at > utcnow())) or 0


BROWSERS = ("Edg", "OPR", "Firefox", "Chrome", "Safari", "curl", "python")  # first match wins
SYSTEMS = ("Android", "iPhone", "iPad", "Windows", "Mac OS", "CrOS", "Linux")


def label_for(user_agent: str, address: str) -> str:
    """A session's label for /account, e.g. "Firefox on Linux, from 10.0.0.7"."""
    browser = next((b for b in BROWSERS if b in user_agent), "a browser")
    system = next((f" on {s}" for s in SYSTEMS if s in user_agent), "")
    names = {"Edg": "Edge", "OPR": "Opera"}
    return f"{names.get(browser, browser)}{system}, from {address or 'an unknown address'}"[:200]


def listing(db: Session, user_id: int) -> list[LoginSession]:
    """The user's live sessions, newest first (what /account shows)."""
    return list(db.scalars(select(LoginSession).where(
        LoginSession.user_id == user_id, LoginSession.expires_at > utcnow()
    ).order_by(LoginSession.id.desc())))


def end_one(db: Session, user_id: int, session_id: int) -> bool:
    """End one of the user's sessions by row id; False when it is not theirs (or gone)."""
    gone = write(db, delete(LoginSession).where(
        LoginSession.id == session_id, LoginSession.user_id == user_id)).rowcount == 1
    if gone:
        forget_remembered(db)
    return gone


def is_current(row: LoginSession, sid: object) -> bool:
    """Whether `row` is the session of the cookie's id `sid`."""
    return isinstance(sid, str) and row.sid_hash == token_hash(sid)


WHO_FIELDS = ("role", "active")  # what a remembered session's user must not be stale about


def forget_on_role_change(factory: sessionmaker[Session]) -> None:
    """A user's role or `active` changed through any session `factory` makes: every process
    forgets the sessions it remembers (installed at start: app/wiring.py; once per factory)."""
    if not event.contains(factory, "after_flush", _after_flush):
        event.listen(factory, "after_flush", _after_flush)


def _after_flush(session: Session, _context: object) -> None:
    for obj in session.dirty:
        if isinstance(obj, User) and any(inspect(obj).attrs[name].history.has_changes()
                                         for name in WHO_FIELDS):
            forget_remembered(session)
            return
