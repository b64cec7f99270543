"""One-time sign-in links: how a user without a password (roster import, new account) or one who
forgot it gets in. The token is random, stored hashed, expires, and works exactly once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.core.security import new_secret, token_hash
from app.db.models import SignInLink, User, utcnow
from app.db.session import write

INVITE, RESET = "invite", "reset"
SET_PASSWORD_PATH = "/set-password"


@dataclass(frozen=True)
class IssuedLink:
    """A link as it is shown once (CLI output, the TA page, the roster CSV)."""

    username: str  # whose link it is
    email: str  # where the TA may send it
    token: str  # the secret in the link
    purpose: str  # invite | reset
    expires_at: datetime  # naive UTC

    def url(self, base: str) -> str:
        """The full link under `base` (e.g. https://judge.example.edu)."""
        return f"{base.rstrip('/')}{SET_PASSWORD_PATH}?token={quote(self.token)}"


def create(db: Session, user: User, purpose: str, max_age_s: int,
           created_by: User | None = None) -> IssuedLink:
    """A fresh link for `user`; any earlier unused link of theirs stops working."""
    invalidate(db, user.id)
    token = new_secret()
    expires = utcnow() + timedelta(seconds=max_age_s)
    db.add(SignInLink(user_id=user.id, token_hash=token_hash(token), purpose=purpose,
                      expires_at=expires, created_by=created_by.id if created_by else None))
    db.flush()
    return IssuedLink(user.username, user.email, token, purpose, expires)


def invalidate(db: Session, user_id: int) -> None:
    """Mark every unused link of the user used (a new link or a new password replaces them)."""
    db.execute(update(SignInLink).where(SignInLink.user_id == user_id,
                                        SignInLink.used_at.is_(None)).values(used_at=utcnow()))


def peek(db: Session, token: str) -> SignInLink:
    """The live link for `token` (to show its form), without using it up."""
    row = db.scalar(select(SignInLink).where(SignInLink.token_hash == token_hash(token)))
    if row is None or row.used_at is not None or row.expires_at <= utcnow() \
            or not row.user.active:
        raise gone()
    return row


def redeem(db: Session, token: str) -> User:
    """Use the link up (one conditional UPDATE: of two racing uses, one wins); its user."""
    now = utcnow()
    row = db.scalar(select(SignInLink).where(SignInLink.token_hash == token_hash(token)))
    if row is None:
        raise gone()
    won = write(db, update(SignInLink).where(
        SignInLink.id == row.id, SignInLink.used_at.is_(None), SignInLink.expires_at > now
    ).values(used_at=now))
    if won.rowcount != 1 or not row.user.active:
        raise gone()
    return row.user


def gone() -> UserError:
    return UserError("this sign-in link was already used or has expired; ask a TA for a new "
                     "one", status=410, field="token")
