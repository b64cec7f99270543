"""Judging: submissions with their files and per-test results, custom runs, profiles, workers."""

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
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, utcnow
from app.db.models.course import Assignment
from app.db.models.people import User


class Submission(Base):
    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    language: Mapped[str] = mapped_column(String(32))
    suite: Mapped[str] = mapped_column(String(64))  # the suite judged (its assignment's then)
    # the assignment it was submitted to (0010; NULL never after that migration: SQLite cannot
    # make an added column NOT NULL with its foreign key, so the database allows it)
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"),
                                                      nullable=True, index=True)
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
    # the worker's feedback block {"gpu", "roofline", "flags"} (None: CPU, CE, no GPU)
    feedback: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    diagnosis: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # to_dict()
    diagnosis_status: Mapped[str] = mapped_column(String(16), default="")  # ""|pending|done
    flag_status: Mapped[str] = mapped_column(String(16), default="")  # ""|held|cleared
    flag_cleared_by: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a TA's user id
    flag_cleared_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # set at upload by the server's clock against the suite's deadline (0006_course)
    late: Mapped[bool] = mapped_column(Boolean, default=False)  # after the (extended) due time
    late_penalty: Mapped[float] = mapped_column(Float, default=0.0)  # percent off the score
    # the GPU model the result was judged on (result["worker"]["gpu"]; None: CPU track)
    gpu_model: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    # the start-up floor of every test together (None: cuda-kernel, not measured;
    # 0012_floor); shown beside total_time, never ranked on
    floor_time: Mapped[float | None] = mapped_column(Float, nullable=True)
    user: Mapped[User] = relationship()
    assignment: Mapped[Assignment | None] = relationship()
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
    # the start-up floor of this test on the worker that judged it (0012_floor)
    floor_s: Mapped[float | None] = mapped_column(Float, nullable=True)


class CustomRun(Base):
    __tablename__ = "custom_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    # the assignment it was run for (0010; NULL: before assignments, or none chosen)
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"),
                                                      nullable=True)
    assignment: Mapped[Assignment | None] = relationship()
    status: Mapped[str] = mapped_column(String(16), default="queued")  # reserved (uploading)|
    # queued|running|done
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
    # bytes its files hold (while uploading: the most they may hold); the quotas add these up
    kept_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


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


class WorkerStatus(Base):
    """Last heartbeat of each judge worker (GPU name, busy or idle)."""

    __tablename__ = "workers"
    hostname: Mapped[str] = mapped_column(String(200), primary_key=True)
    gpu: Mapped[str] = mapped_column(String(200), default="")
    queues: Mapped[str] = mapped_column(String(100), default="")
    busy: Mapped[bool] = mapped_column(Boolean, default=False)
    current: Mapped[str] = mapped_column(String(100), default="")
    last_seen: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    languages: Mapped[str] = mapped_column(String(200), default="")  # comma-separated (0006_course)
    state: Mapped[str] = mapped_column(String(300), default="", server_default="")  # "": takes
    # jobs; else what it does before it can, e.g. "starting (preflight)" (0015_worker_state)
    slurm: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the Slurm job it
    # lives in: job_id, node, partition, gpus, end_time (epoch s); NULL outside Slurm (0017)


class SlurmJob(Base):
    """A worker job the control side submitted to Slurm (app/upkeep/slurm_scaler.py), or tried
    to: its id, what it serves, what Slurm last said of it, and why it was submitted."""

    __tablename__ = "slurm_jobs"
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # None: refused
    queue: Mapped[str] = mapped_column(String(32))  # the judge queue it serves: cpu or gpu
    state: Mapped[str] = mapped_column(String(32), index=True)  # Slurm's (PENDING, RUNNING,
    # COMPLETED, FAILED, ...) or REFUSED (sbatch said no) or GONE (Slurm forgot it)
    reason: Mapped[str] = mapped_column(String(500), default="", server_default="")  # Slurm's
    # reason (PartitionDown, Resources) or sbatch's error
    why: Mapped[str] = mapped_column(String(300), default="", server_default="")  # the decision
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
