"""Worker jobs that follow the queue (opt-in: FLASHJUDGE_SLURM_AUTOSCALE): the control side
submits `flashjudge worker` jobs to Slurm when judgings wait, and lets them drain when it empties.

Every `slurm_interval_s`, for each queue it serves (`slurm_queues`: gpu, cpu):
- judgings of the queue have waited `slurm_wait_s` and no live worker of the queue is idle: one
  job is submitted (sbatch with the TA's script and options), unless one of ours for the queue
  is still pending (Slurm will start it), `slurm_max_jobs` of ours are pending or running, or a
  job for the queue was refused or failed within `slurm_retry_s` (shown, not retried in a loop);
- nothing of the queue waits or runs for `slurm_idle_s`: each running job of ours drains
  (Slurm's own warning, sent now: the worker finishes what it holds and the job ends) and each
  pending one is cancelled.
Each decision and each change of a job's state is a row of the audit log ("submitted job 4812:
37 judgings waiting 4 min, 1 of 3 jobs") and shows on the TA page (`slurm_jobs`). The jobs are
ours alone: the rows of `slurm_jobs`; a site's other jobs are never looked at.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.db.models import SlurmJob, Submission, utcnow
from app.submissions import capacity
from app.upkeep.slurm_commands import SlurmCommands, job_env
from flashjudge.contract import LANGUAGES, Status

log = logging.getLogger(__name__)
LIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "DRAINING")
TROUBLE = ("REFUSED", "FAILED", "BOOT_FAIL", "NODE_FAIL", "OUT_OF_MEMORY", "DEADLINE")
GONE = "GONE"  # Slurm forgot the job (after MinJobAge) before we saw it end


@dataclass(frozen=True)
class QueueLoad:
    """What one judge queue asks for now."""

    queue: str  # gpu or cpu
    waiting: int  # judgings queued
    oldest_s: float  # how long the oldest of them has waited (0: none)
    idle_workers: int  # live workers of the queue that judge nothing now
    idle_for_s: float | None  # nothing of the queue queued or running for this long (None: busy)


@dataclass(frozen=True)
class Decision:
    """What the scaler does for one queue now."""

    action: str  # "submit" or "drain"
    queue: str
    why: str  # in words, for the audit log and the TA page


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def decide(load: QueueLoad, ours: list[SlurmJob], settings: Settings,
           now: datetime) -> Decision | None:
    """The scaler's choice for one queue, from its load and our jobs (pure: no Slurm, no DB)."""
    live = [j for j in ours if j.state in LIVE]
    mine = [j for j in live if j.queue == load.queue]
    if load.waiting and load.oldest_s >= settings.slurm_wait_s and not load.idle_workers:
        troubled = [j for j in ours if j.queue == load.queue and j.state in TROUBLE
                    and now - (j.ended_at or j.updated_at)
                    < timedelta(seconds=settings.slurm_retry_s)]
        if troubled or any(j.state == "PENDING" for j in mine) \
                or len(live) >= settings.slurm_max_jobs:
            return None
        return Decision("submit", load.queue,
                        f"{load.waiting} judging{'s' if load.waiting != 1 else ''} waiting "
                        f"{minutes(load.oldest_s)}, {len(live) + 1} of "
                        f"{settings.slurm_max_jobs} jobs")
    if load.idle_for_s is not None and load.idle_for_s >= settings.slurm_idle_s and any(
            j.state in ("PENDING", "RUNNING", "CONFIGURING") for j in mine):
        return Decision("drain", load.queue,
                        f"the {load.queue} queue empty for {minutes(load.idle_for_s)}")
    return None


def languages_of(queue: str) -> list[str]:
    return [name for name, facts in LANGUAGES.items() if str(facts.queue) == queue]


def measure(db: Session, settings: Settings, queue: str, ours: list[SlurmJob],
            now: datetime) -> QueueLoad:
    """The queue's load from the database and the workers' heartbeats."""
    names = languages_of(queue)
    waiting, oldest = db.execute(
        select(func.count(), func.min(func.coalesce(Submission.sent_at, Submission.created_at)))
        .where(Submission.status == Status.QUEUED, Submission.language.in_(names))).one()
    running = db.scalar(select(func.count()).where(
        Submission.status == Status.RUNNING, Submission.language.in_(names))) or 0
    idle = sum(1 for w in capacity.live_workers(db, settings, now)
               if queue in w.queues.split(",") and not w.busy)
    idle_for = None
    if not waiting and not running:
        last = db.scalar(select(func.max(Submission.finished_at))
                         .where(Submission.language.in_(names)))
        since = max([t for t in [last, *(j.submitted_at for j in ours if j.queue == queue)]
                     if t is not None], default=now)
        idle_for = (now - since).total_seconds()
    return QueueLoad(queue, int(waiting or 0),
                     (now - oldest).total_seconds() if oldest is not None else 0.0, idle,
                     idle_for)


def sbatch_args(settings: Settings, queue: str) -> list[str]:
    gres = f"--gres={settings.slurm_gpu_gres}" if queue == "gpu" else "--gres=none"
    return [gres, "--job-name=flashjudge-worker", *shlex.split(settings.slurm_sbatch_args)]


def note(db: Session, action: str, job: SlurmJob, message: str) -> None:
    """An audit row (no actor: the control side decided) and a log line."""
    audit.record(db, None, action, f"slurm job {job.job_id or '-'}", message=message)
    log.info("slurm: %s", message)


def apply(db: Session, settings: Settings, slurm: SlurmCommands, decision: Decision,
          ours: list[SlurmJob], now: datetime) -> None:
    if decision.action == "submit":
        sent = slurm.submit(settings.slurm_script, sbatch_args(settings, decision.queue))
        job = SlurmJob(job_id=sent.job_id, queue=decision.queue,
                       state="PENDING" if sent.job_id else "REFUSED", reason=sent.error[:500],
                       why=decision.why[:300], submitted_at=now, updated_at=now,
                       ended_at=None if sent.job_id else now)
        db.add(job)
        if sent.job_id:
            note(db, "slurm-submit", job, f"submitted job {sent.job_id}: {decision.why}")
        else:
            note(db, "slurm-refused", job, f"sbatch refused a {decision.queue} worker job "
                                           f"({decision.why}): {sent.error}")
        return
    for job in [j for j in ours if j.queue == decision.queue and j.job_id]:
        if job.state == "PENDING":
            error = slurm.cancel(job.job_id or "")
            verb = "cancelled pending"
        elif job.state in ("RUNNING", "CONFIGURING"):
            error = slurm.drain(job.job_id or "")
            verb = "drained"
        else:
            continue
        if not error:
            job.state, job.updated_at = "DRAINING", now
        note(db, "slurm-drain", job, f"{verb} job {job.job_id}: {decision.why}"
             + (f" (failed: {error})" if error else ""))


def refresh(db: Session, slurm: SlurmCommands, ours: list[SlurmJob], now: datetime) -> None:
    """Our live jobs' states from squeue; each change in the audit log."""
    live = [j for j in ours if j.state in LIVE and j.job_id]
    seen = slurm.states([j.job_id for j in live if j.job_id])
    if seen is None:
        return  # squeue failed: next pass
    for job in live:
        now_seen = seen.get(job.job_id or "")
        state = now_seen.state if now_seen else GONE
        reason = now_seen.reason if now_seen else "Slurm no longer knows it"
        if job.state == "DRAINING" and state in ("RUNNING", "COMPLETING", "CONFIGURING"):
            continue
        if (state, reason) == (job.state, job.reason):
            continue
        job.state, job.reason, job.updated_at = state, reason[:500], now
        if state not in LIVE:
            job.ended_at = now
        said = f" ({reason})" if reason and reason != "None" else ""
        note(db, "slurm-job", job, f"job {job.job_id} is {state}{said}")


def scale(db: Session, settings: Settings, slurm: SlurmCommands,
          now: datetime | None = None) -> list[Decision]:
    """One pass: refresh our jobs, then submit or drain per queue; committed."""
    now = now or utcnow()
    ours = list(db.scalars(select(SlurmJob).order_by(SlurmJob.id)))
    refresh(db, slurm, ours, now)
    made = []
    for queue in [q.strip() for q in settings.slurm_queues.split(",") if q.strip()]:
        decision = decide(measure(db, settings, queue, ours, now), ours, settings, now)
        if decision is not None:
            apply(db, settings, slurm, decision, ours, now)
            db.flush()
            ours = list(db.scalars(select(SlurmJob).order_by(SlurmJob.id)))
            made.append(decision)
    db.commit()
    return made


def recent_jobs(db: Session, limit: int = 20) -> list[SlurmJob]:
    """Our latest worker jobs, newest first (the TA page)."""
    return list(db.scalars(select(SlurmJob).order_by(SlurmJob.id.desc()).limit(limit)))


def start_slurm_scaler(settings: Settings, make_session, stop: threading.Event
                       ) -> threading.Thread:
    """Run `scale` every slurm_interval_s in a daemon thread until `stop` is set."""
    slurm = SlurmCommands(job_env(os.environ, settings.slurm_job_env))

    def loop() -> None:
        while not stop.wait(settings.slurm_interval_s):
            try:
                with make_session() as db:
                    scale(db, settings, slurm)
            except Exception:  # keep looking: one bad pass must not end the loop
                log.exception("slurm scaler pass failed")

    thread = threading.Thread(target=loop, name="flashjudge-slurm-scaler", daemon=True)
    thread.start()
    return thread
