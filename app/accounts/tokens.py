"""Bearer tokens: personal ones (for `flashjudge submit`) and password-flow logins.

Only a SHA-256 of each token is stored; every token expires; owners and TAs list and revoke them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.core.errors import UserError, not_found
from app.core.security import new_token, token_hash
from app.core.validation import check_text
from app.db.models import ApiToken, User, utcnow
from app.db.session import write

DEFAULT_DAYS = 120  # a personal token's lifetime when the caller names none (one semester)
MAX_DAYS = 366  # no token outlives a course by much
LAST_USED_EVERY_S = 60  # last_used_at is refreshed at most this often (no write per request)
PERSONAL, LOGIN = "personal", "login"
MAX_TOKENS = 20  # live tokens per user and kind (settings.max_tokens_per_user)


@dataclass(frozen=True)
class IssuedToken:
    """A token as its owner sees it once, at creation."""

    id: int  # row id, for revoking it later
    token: str  # the secret itself (never shown again)
    name: str  # what the owner called it
    expires_at: datetime  # naive UTC


def token_days(days: int | None) -> int:
    """A lifetime in days within 1..MAX_DAYS (None: the default)."""
    days = DEFAULT_DAYS if days is None else days
    if not 1 <= days <= MAX_DAYS:
        raise UserError(f"expires_in_days must be 1 to {MAX_DAYS}", field="expires_in_days")
    return days


def issue(db: Session, user: User, name: str, max_age_s: int, kind: str = PERSONAL,
          keep: int = MAX_TOKENS) -> IssuedToken:
    """A new token for `user` that expires after `max_age_s` seconds; past `keep` tokens of
    this kind, the oldest are revoked (a script making 300 leaves `keep`)."""
    check_text("name", name, 100)
    token, now = new_token(), utcnow()
    expires = now + timedelta(seconds=max_age_s)
    row = ApiToken(user_id=user.id, token_hash=token_hash(token), name=name.strip() or kind,
                   kind=kind, created_at=now, expires_at=expires)
    db.add(row)
    db.flush()
    keep_newest(db, user.id, kind, keep)
    return IssuedToken(row.id, token, row.name, expires)


def keep_newest(db: Session, user_id: int, kind: str, keep: int) -> int:
    """Delete the user's expired tokens, then those of `kind` beyond the newest `keep`.
    Kinds are capped apart, so CLI password logins never push out a personal token."""
    db.execute(delete(ApiToken).where(ApiToken.user_id == user_id,
                                      ApiToken.expires_at <= utcnow()))
    older = db.scalars(select(ApiToken.id).where(ApiToken.user_id == user_id,
                                                 ApiToken.kind == kind)
                       .order_by(ApiToken.id.desc()).offset(max(1, keep))).all()
    if older:
        db.execute(delete(ApiToken).where(ApiToken.id.in_(older)))
    return len(older)


def issue_token(db: Session, user: User, name: str, max_age_s: int | None) -> str:
    """The token string only (None: a personal token of the default lifetime)."""
    seconds = max_age_s if max_age_s else DEFAULT_DAYS * 86400
    return issue(db, user, name, seconds, LOGIN if max_age_s else PERSONAL).token


def user_for_token(db: Session, token: str) -> User:
    """The active owner of a live token; 401/403 otherwise. Notes when it was last used."""
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    if row is None:
        raise UserError("invalid or revoked token; log in again or create a new token",
                        status=401)
    now = utcnow()
    if row.expires_at is not None and row.expires_at < now:
        raise UserError("token expired; log in again or create a new token", status=401)
    if not row.user.active:
        raise UserError("this account is disabled", status=403)
    if row.last_used_at is None or (now - row.last_used_at).total_seconds() > LAST_USED_EVERY_S:
        note_use(db, row.id, now)
    return row.user


def note_use(db: Session, token_id: int, when: datetime) -> None:
    """Committed at once in the request's own session (a GET may never commit otherwise), before
    the route has written anything. Not on a second connection: a hundred first uses at once
    would each hold two pooled connections and exhaust the pool (500s on deadline night)."""
    db.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=when))
    db.commit()


def listing(db: Session, user: User) -> list[ApiToken]:
    """The user's tokens that have not expired, newest first."""
    return list(db.scalars(select(ApiToken).where(
        ApiToken.user_id == user.id, ApiToken.expires_at > utcnow()
    ).order_by(ApiToken.id.desc())))


def revoke(db: Session, user: User, token_id: int) -> None:
    """Delete one of `user`'s tokens; someone else's is as missing as a wrong id."""
    gone = write(db, delete(ApiToken).where(ApiToken.id == token_id,
                                          ApiToken.user_id == user.id))
    if gone.rowcount != 1:
        raise not_found("token")


def revoke_all(db: Session, user_id: int) -> int:
    return write(db, delete(ApiToken).where(ApiToken.user_id == user_id)).rowcount
