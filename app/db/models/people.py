"""People and how they get in: users, tokens, sessions, sign-in links, login attempts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, utcnow


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(16), default="student")  # student | ta
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # claimed by one conditional UPDATE per submission, so the interval check cannot race
    last_submission_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # the public board: a name the student chose, or off it (TAs see both)
    board_alias: Mapped[str | None] = mapped_column(String(40), nullable=True)
    board_hidden: Mapped[bool] = mapped_column(Boolean, default=False)

    @property
    def is_ta(self) -> bool:
        return self.role == "ta"


class ApiToken(Base):
    """Personal and password-flow bearer tokens; only a SHA-256 of the token is stored."""

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    kind: Mapped[str] = mapped_column(String(16), default="personal")  # personal | login
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    user: Mapped[User] = relationship()


class LoginSession(Base):
    """A browser session: the signed cookie carries a random id whose SHA-256 is here; deleting
    the row (logout, password change, a TA's sign-out) ends it wherever the cookie was copied."""

    __tablename__ = "login_sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    sid_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    label: Mapped[str] = mapped_column(String(200), default="", server_default="")  # browser,
    # address: what /account shows, so its owner can tell their sessions apart
    user: Mapped[User] = relationship()


class SignInLink(Base):
    """A one-time link that lets its user set a password (invitation or reset); hashed."""

    __tablename__ = "signin_links"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    purpose: Mapped[str] = mapped_column(String(16), default="invite")  # invite | reset
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    used_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_by: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a TA's user id
    user: Mapped[User] = relationship()


class LoginAttempt(Base):
    """One password attempt not (yet) known to have succeeded, per throttling key (a SHA-256 of
    "user:NAME" or "addr:IP"): counted across processes, deleted once the window has passed."""

    __tablename__ = "login_attempts"
    id: Mapped[int] = mapped_column(primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)
