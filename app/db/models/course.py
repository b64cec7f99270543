"""Running a course: the audit log, small service state, terms, assignments, extensions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
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
    withdrawn (0011_announcements)."""

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
    """One user's "hide this" for one announcement (0011_announcements)."""

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


class Term(Base):
    """A term of the course: its assignments, and through them every submission (0010).

    Archiving one makes everything in it read-only (app/course/terms.py); the newest term
    that is not archived is the current one."""

    __tablename__ = "terms"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    archived_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    assignments: Mapped[list[Assignment]] = relationship(
        back_populates="term", order_by="Assignment.position, Assignment.id")


class Assignment(Base):
    """One board of a term: what it judges, who may submit, its deadline and rules (0010).

    The deadline lives here (it used to be a `deadlines` row per suite); a student's own due
    time is an Extension. Names are unique within a term; a new term copies them."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("term_id", "name"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    term_id: Mapped[int] = mapped_column(ForeignKey("terms.id"), index=True)
    name: Mapped[str] = mapped_column(String(64))  # what --assignment and the API take
    title: Mapped[str] = mapped_column(String(200), default="")  # for people ("" : the name)
    suite: Mapped[str] = mapped_column(String(64))  # the tests (testcases/<suite>.toml)
    languages: Mapped[str] = mapped_column(String(500), default="")  # comma-separated; "": all
    is_open: Mapped[bool] = mapped_column(Boolean, default=True)  # students may submit
    position: Mapped[int] = mapped_column(Integer, default=0)  # order on pages and pickers
    # the deadline (None: none) and what happens after it (app/course/deadlines.py)
    due_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # naive UTC
    late_policy: Mapped[str] = mapped_column(String(16), default="refuse")  # refuse | penalty
    penalty_per_day: Mapped[float] = mapped_column(Float, default=0.0)  # percent per started day
    penalty_cap: Mapped[float] = mapped_column(Float, default=100.0)  # percent at most
    # the board: frozen since this time (students see it as it stood then), else live
    frozen_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    gpu_model: Mapped[str] = mapped_column(String(200), default="")  # "": any model judges it;
    # else only workers of that GPU model (one board, no tabs)
    visibility: Mapped[str] = mapped_column(String(16), default="all")  # what a student sees
    # before the due time: all | verdicts | none (app/course/visibility.py)
    libraries_allowed: Mapped[bool] = mapped_column(Boolean, default=False,  # a TA lets library
                                                    server_default=false())  # kernels compute
    # the answer here (the suite's own-kernels rule lifted; a second GPU process stays BK)
    secret_seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # hidden tests:
    # judged on this seed, never shown to students nor logged; None: the suite's public seeds
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    term: Mapped[Term] = relationship(back_populates="assignments")

    @property
    def label(self) -> str:
        """How pages name it: the title, else the name."""
        return self.title or self.name

    @property
    def language_list(self) -> list[str]:
        """The languages accepted ([]: every language)."""
        return [x.strip() for x in self.languages.split(",") if x.strip()]


class Extension(Base):
    """One student's own due time for an assignment, granted by a TA (0006_course, 0010)."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("assignment_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    due_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC
    granted_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    user: Mapped[User] = relationship(foreign_keys=[user_id])


class CourseSettings(Base):
    """What a TA may change about the course while it runs (0017): one row, id 1, written
    only by app/course/course_settings.py. Made on first read from the environment's values
    (FLASHJUDGE_COURSE_TIMEZONE, _SUBMIT_INTERVAL_S, _OIDC_*), which are first values only:
    the course settings page changes them without a restart."""

    __tablename__ = "course_settings"
    id: Mapped[int] = mapped_column(primary_key=True)
    timezone: Mapped[str] = mapped_column(String(64))
    submit_interval_s: Mapped[float] = mapped_column(Float)
    late_policy: Mapped[str] = mapped_column(String(16))  # a new deadline's default
    penalty_per_day: Mapped[float] = mapped_column(Float)
    penalty_cap: Mapped[float] = mapped_column(Float)
    oidc_issuer: Mapped[str] = mapped_column(String(500), default="")
    oidc_client_id: Mapped[str] = mapped_column(String(200), default="")
    oidc_client_secret: Mapped[str] = mapped_column(String(500), default="")
    oidc_name: Mapped[str] = mapped_column(String(100), default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
