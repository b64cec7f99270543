"""Shapes of the TA endpoints (/api/admin/...)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class SubmissionRef(BaseModel):
    """The submission an action was applied to."""

    id: int


class CancelOut(BaseModel):
    """A cancelled submission."""

    id: int
    verdict: str = Field(description="CANCELLED")


class CancelQueuedIn(BaseModel):
    """Which queued work to cancel."""

    language: str = Field(description="cancel every queued submission of this language")


class CancelQueuedOut(BaseModel):
    language: str
    cancelled: int = Field(description="how many queued submissions were cancelled")


class RejudgeAllOut(BaseModel):
    """What "rejudge all" did."""

    count: int = Field(description="submissions sent again")
    by_status: dict[str, int] = Field(description="their status before: done, queued, running")
    skipped: dict[str, int] = Field(description="left alone, by reason: superseded, cancelled, "
                                                "of another suite")
    waiting: dict[str, int] = Field(description="of those sent, per language no live worker "
                                                "judges now")
    message: str = Field(description="the same in one line")


class WorkerOut(BaseModel):
    """One judge worker's last heartbeat."""

    hostname: str
    gpu: str
    queues: str
    languages: list[str] = Field(description="what it judges")
    state: str = Field(description="busy | idle | offline (no heartbeat within worker_live_s) "
                                   "| what it does instead of taking work: starting (...), "
                                   "draining, its Slurm job ends in N s")
    current: str
    slurm: str = Field("", description="the Slurm job it lives in: job id, node, partition, "
                                       "GPUs, time left (\"\" outside Slurm)")
    last_seen: str = Field(description="ISO 8601 UTC")
    seen_s_ago: float = Field(description="seconds since its last heartbeat")


class SlurmJobOut(BaseModel):
    """A worker job the control side submitted to Slurm (FLASHJUDGE_SLURM_AUTOSCALE)."""

    job_id: str = Field(description="Slurm's job id (\"\" when sbatch refused it)")
    queue: str = Field(description="the judge queue it serves: gpu or cpu")
    state: str = Field(description="Slurm's state (PENDING, RUNNING, COMPLETED, FAILED, ...), "
                                   "DRAINING, REFUSED or GONE")
    reason: str = Field(description="Slurm's reason (PartitionDown, Resources) or sbatch's error")
    why: str = Field(description="why it was submitted: judgings waiting, jobs at once")
    submitted_s_ago: float


class StatusOut(BaseModel):
    """Queue lengths, what can be judged now and the workers."""

    queued: int
    running: int
    done: int
    workers: list[WorkerOut]
    languages: dict[str, list[str]] = Field(description="language -> live workers judging it")
    stranded: dict[str, int] = Field(description="language -> queued submissions no live "
                                                 "worker can judge")
    broker_loss: str | None = Field(None, description="queued messages the broker lost and "
                                    "their re-sending, for 10 minutes after (else null)")
    slurm_jobs: list[SlurmJobOut] = Field(default_factory=list, description="the latest "
                                          "worker jobs the control side submitted to Slurm")


class AdminSubmissionOut(BaseModel):
    """One submission as the TA list shows it."""

    id: int
    user: str
    language: str
    status: str
    verdict: str | None
    passed: int | None
    score: int | None
    late: bool
    late_penalty: float
    time: float | None
    attempt: int
    error: str
    flag_status: str
    flags: list[dict]
    created_at: str


class DeadlineIn(BaseModel):
    """A suite's due time and late policy."""

    due_at: str = Field(description="ISO 8601 with a UTC offset, e.g. 2026-12-01T23:59+08:00",
                        examples=["2026-12-01T23:59+08:00"])
    late_policy: str = Field("refuse", description="refuse | penalty")
    penalty_per_day: float = Field(0.0, description="penalty: percent per started day late")
    penalty_cap: float = Field(100.0, description="penalty: percent at most")


class ExtensionIn(BaseModel):
    due_at: str = Field(description="ISO 8601 with a UTC offset", examples=["2026-12-03T23:59Z"])


class ExtensionOut(BaseModel):
    """One student's own due time."""

    username: str
    due_at: str = Field(description="ISO 8601 UTC")


class DeadlineOut(BaseModel):
    """A suite's deadline in this deployment (due_at null: none set)."""

    suite: str
    due_at: str | None
    late_policy: str
    penalty_per_day: float
    penalty_cap: float
    extensions: list[ExtensionOut]


class Removed(BaseModel):
    """Whether a DELETE removed something."""

    removed: bool


class FreezeOut(BaseModel):
    """The public scoreboard's state after a freeze or an unfreeze."""

    frozen: bool


class PairedAgainOut(BaseModel):
    """A TA's second comparison of one pair."""

    message: str  # what was done, in one sentence


class PairedStartOut(BaseModel):
    """What asking for paired runs did: pairs whose bands overlap, and what became of them."""

    overlapping: int  # neighbour pairs whose time bands overlap on the public board
    sent: int  # paired comparisons asked for now
    known: int  # pairs already compared or pending
    skipped: int  # pairs one machine cannot run (a CPU and a GPU program)
    message: str  # the same in one sentence


class FlagClearedOut(BaseModel):
    """A held result let into the ranking."""

    id: int
    flag_status: str  # "cleared"


class StudentProfilesOut(BaseModel):
    """Whether students may now ask for ncu profiles."""

    allowed: bool


class AuditEntryOut(BaseModel):
    """One audit row."""

    id: int
    at: datetime = Field(description="UTC")
    actor: str = Field(description='the TA\'s username; "shell USER@HOST" for a command at the '
                       'server\'s shell; "-" for none (a refused sign-in)')
    action: str
    target: str
    detail: dict[str, Any]


class AuditPageOut(BaseModel):
    """One page of the audit log, newest first."""

    entries: list[AuditEntryOut]
    total: int = Field(description="rows matching the filters")
    page: int
    pages: int
    per_page: int
