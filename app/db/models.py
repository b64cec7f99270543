"""SQLAlchemy 2 models: the database is the only source of truth for the service."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    """Aware UTC now; stored naive-UTC so SQLite and PostgreSQL compare the same way."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base for every table."""


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


class Submission(Base):
    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    language: Mapped[str] = mapped_column(String(32))
    suite: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    verdict: Mapped[str | None] = mapped_column(String(16), nullable=True)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    passed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    total_time: Mapped[float | None] = mapped_column(Float, nullable=True)
    attempt: Mapped[int] = mapped_column(Integer, default=0)  # bumped when a judging fails or
    # is lost (a re-send of queued work keeps it)
    failures: Mapped[int] = mapped_column(Integer, default=0)  # system errors workers reported
    lost: Mapped[int] = mapped_column(Integer, default=0)  # judgings lost with their worker
    job_key: Mapped[str] = mapped_column(String(32), default="")  # random per attempt
    task_id: Mapped[str] = mapped_column(String(64), default="")  # Celery id of the last send
    compile_ok: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    compile_log: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str] = mapped_column(Text, default="")  # system errors, shown to TAs
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # issue 6: the worker's feedback block {"gpu", "roofline", "flags"} (None: CPU, CE, no GPU)
    feedback: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    diagnosis: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # to_dict()
    diagnosis_status: Mapped[str] = mapped_column(String(16), default="")  # ""|pending|done
    flag_status: Mapped[str] = mapped_column(String(16), default="")  # ""|held|cleared
    flag_cleared_by: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a TA's user id
    flag_cleared_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # issue 12: set at upload by the server's clock against the suite's deadline (0004_course)
    late: Mapped[bool] = mapped_column(Boolean, default=False)  # after the (extended) due time
    late_penalty: Mapped[float] = mapped_column(Float, default=0.0)  # percent off the score
    # issue 13: the GPU model the result was judged on (result["worker"]["gpu"]; None: CPU track)
    gpu_model: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    user: Mapped[User] = relationship()
    files: Mapped[list[SubmissionFile]] = relationship(
        cascade="all, delete-orphan", order_by="SubmissionFile.name"
    )
    tests: Mapped[list[JudgedTest]] = relationship(
        cascade="all, delete-orphan", order_by="JudgedTest.test_id"
    )


class SubmissionFile(Base):
    __tablename__ = "submission_files"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(128))
    content: Mapped[bytes] = mapped_column(LargeBinary)


class JudgedTest(Base):
    """One test of one submission, from progress events of the current attempt or the result."""

    __tablename__ = "test_results"
    __table_args__ = (UniqueConstraint("submission_id", "test_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    attempt: Mapped[int] = mapped_column(Integer)
    test_id: Mapped[str] = mapped_column(String(16))
    verdict: Mapped[str] = mapped_column(String(16))
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    time_limit: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_error: Mapped[float | None] = mapped_column(Float, nullable=True)
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class CustomRun(Base):
    __tablename__ = "custom_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="queued")  # queued|running|done
    folder: Mapped[str] = mapped_column(String(64))  # its files under data_dir/custom/
    B: Mapped[int] = mapped_column(Integer)
    N: Mapped[int] = mapped_column(Integer)
    d: Mapped[int] = mapped_column(Integer)
    has_own_output: Mapped[bool] = mapped_column(Boolean, default=False)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    reference: Mapped[str | None] = mapped_column(String(64), nullable=True)
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    expired_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # files deleted


class AuditLog(Base):
    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(primary_key=True)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class WorkerStatus(Base):
    """Last heartbeat of each judge worker (GPU name, busy or idle)."""

    __tablename__ = "workers"
    hostname: Mapped[str] = mapped_column(String(200), primary_key=True)
    gpu: Mapped[str] = mapped_column(String(200), default="")
    queues: Mapped[str] = mapped_column(String(100), default="")
    busy: Mapped[bool] = mapped_column(Boolean, default=False)
    current: Mapped[str] = mapped_column(String(100), default="")
    last_seen: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    languages: Mapped[str] = mapped_column(String(200), default="")  # comma-separated (0004)


class Profile(Base):
    """One Nsight Compute run of a submission on one test, asked for from its page."""

    __tablename__ = "profiles"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    test_id: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default="queued")  # queued|done
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # to_dict()
    error: Mapped[str] = mapped_column(Text, default="")
    report_file: Mapped[str] = mapped_column(String(200), default="")  # under data_dir/profiles
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class KeyValue(Base):
    """Small service state, e.g. the scoreboard freeze time."""

    __tablename__ = "state"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Deadline(Base):
    """A suite's due time in this deployment and what happens after it (0004_course)."""

    __tablename__ = "deadlines"
    suite: Mapped[str] = mapped_column(String(64), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC, like every time here
    late_policy: Mapped[str] = mapped_column(String(16), default="refuse")  # refuse | penalty
    penalty_per_day: Mapped[float] = mapped_column(Float, default=0.0)  # percent per started day
    penalty_cap: Mapped[float] = mapped_column(Float, default=100.0)  # percent at most
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Extension(Base):
    """One student's own due time for a suite, granted by a TA (0004_course)."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("suite", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    suite: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    due_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC
    granted_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    user: Mapped[User] = relationship(foreign_keys=[user_id])
# --- issue 13 (insight): similarity for TAs ------------------------------------------------------


class SimilaritySource(Base):
    """A source a TA uploaded for one suite: a public solution (compared with every student) or
    base code (starter code such as seq-flashattention.c: nobody's copy, excluded everywhere)."""

    __tablename__ = "similarity_sources"
    id: Mapped[int] = mapped_column(primary_key=True)
    suite: Mapped[str] = mapped_column(String(64), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # public | base
    name: Mapped[str] = mapped_column(String(200))  # what the TA called it (e.g. the file name)
    content: Mapped[str] = mapped_column(Text)  # the source text
    uploaded_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Fingerprint(Base):
    """The stored fingerprints of one document (app.similarity.to_bytes), computed once on the
    control side, so the page's index is rebuilt without lexing anything again."""

    __tablename__ = "fingerprints"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), unique=True, nullable=True)
    source_id: Mapped[int | None] = mapped_column(
        ForeignKey("similarity_sources.id", ondelete="CASCADE"), unique=True, nullable=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)  # to_bytes() of DocumentFingerprints
    count: Mapped[int] = mapped_column(Integer, default=0)  # fingerprints in `data`
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
