"""Running a course: the audit log, small service state, deadlines and extensions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, utcnow
from app.db.models.people import User


class AuditLog(Base):
    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(primary_key=True)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)


class Announcement(Base):
    """A TA's message to everyone on the course, shown on every page until it expires or is
    withdrawn (0010_announcements)."""

    __tablename__ = "announcements"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text, default="")  # plain text; links become links
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"),
                                                   nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # naive UTC;
    # None: until withdrawn
    author: Mapped[User | None] = relationship(foreign_keys=[created_by])


class Dismissal(Base):
    """One user's "hide this" for one announcement (0010_announcements)."""

    __tablename__ = "announcement_dismissals"
    announcement_id: Mapped[int] = mapped_column(
        ForeignKey("announcements.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class KeyValue(Base):
    """Small service state, e.g. the scoreboard freeze time."""

    __tablename__ = "state"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Deadline(Base):
    """A suite's due time in this deployment and what happens after it (0006_course)."""

    __tablename__ = "deadlines"
    suite: Mapped[str] = mapped_column(String(64), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC, like every time here
    late_policy: Mapped[str] = mapped_column(String(16), default="refuse")  # refuse | penalty
    penalty_per_day: Mapped[float] = mapped_column(Float, default=0.0)  # percent per started day
    penalty_cap: Mapped[float] = mapped_column(Float, default=100.0)  # percent at most
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Extension(Base):
    """One student's own due time for a suite, granted by a TA (0006_course)."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("suite", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    suite: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    due_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC
    granted_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    user: Mapped[User] = relationship(foreign_keys=[user_id])
