"""What TAs see of the judging: submissions per status, what the live workers can judge, each
worker's last heartbeat, work no worker can take, queued messages the broker lost, and the
latest submissions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import SlurmJob, Submission, WorkerStatus, utcnow
from app.submissions import capacity
from app.submissions.feedback import flags_of
from app.upkeep.broker_watch import loss_notice
from app.upkeep.slurm_scaler import recent_jobs


def status(db: Session, settings: Settings) -> dict[str, Any]:
    """Counts per submission status, what can be judged now, and each worker's last heartbeat."""
    rows = db.execute(select(Submission.status, func.count()).group_by(Submission.status))
    counts = {status: count for status, count in rows}
    can = capacity.current(db, settings)
    now = utcnow()
    live = {w.hostname for w in capacity.live_workers(db, settings, now)}
    workers = [{"hostname": w.hostname, "gpu": w.gpu, "queues": w.queues,
                "languages": sorted(capacity.worker_languages(w)),
                "state": worker_state(w, w.hostname in live, now, settings.worker_live_s),
                "current": w.current,
                "slurm": slurm_text(w.slurm, now),
                "last_seen": w.last_seen.isoformat() + "Z",
                "seen_s_ago": round((now - w.last_seen).total_seconds(), 1)}
               for w in db.scalars(select(WorkerStatus).order_by(WorkerStatus.hostname))]
    return {"queued": counts.get("queued", 0), "running": counts.get("running", 0),
            "done": counts.get("done", 0), "workers": workers,
            "languages": {s.name: list(s.workers) for s in can.languages},
            "stranded": capacity.stranded(db, can), "broker_loss": loss_text(db),
            "slurm_jobs": [slurm_job_row(j, now) for j in recent_jobs(db)]}


def slurm_job_row(job: SlurmJob, now: datetime) -> dict[str, Any]:
    """One worker job the control side submitted, as the TA page lists it."""
    return {"job_id": job.job_id or "", "queue": job.queue, "state": job.state,
            "reason": "" if job.reason == "None" else job.reason, "why": job.why,
            "submitted_s_ago": round((now - job.submitted_at).total_seconds(), 1)}


def worker_state(w: WorkerStatus, live: bool, now: datetime, live_s: float) -> str:
    """busy, idle, what it does instead of taking work (starting, draining), or offline."""
    if w.state and (now - w.last_seen).total_seconds() <= live_s:
        return w.state
    if not live:
        return "offline"
    return "busy" if w.busy else "idle"


def slurm_text(job: dict[str, Any] | None, now: datetime) -> str:
    """"job 4812 on gpu07 (nvidia), GPUs 2,3, 0:09:12 left" from a heartbeat's Slurm job."""
    if not isinstance(job, dict) or not job.get("job_id"):
        return ""
    where = f" ({job['partition']})" if job.get("partition") else ""
    gpus = f", GPUs {','.join(str(g) for g in job.get('gpus') or [])}" if job.get("gpus") else ""
    end = job.get("end_time")
    left = "no time limit"
    if isinstance(end, int | float):
        seconds = max(0, int(end - now.replace(tzinfo=UTC).timestamp()))
        left = f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d} left"
    return f"job {job['job_id']} on {job.get('node') or '?'}{where}{gpus}, {left}"


def loss_text(db: Session) -> str | None:
    """The broker's last loss of queued messages, while the TA page should say it."""
    notice = loss_notice(db)
    return notice.text() if notice is not None else None


def all_submissions(db: Session, limit: int = 500) -> list[dict[str, Any]]:
    rows = db.scalars(select(Submission).order_by(Submission.id.desc()).limit(limit))
    return [{"id": s.id, "user": s.user.username, "language": s.language, "status": s.status,
             "verdict": s.verdict, "passed": s.passed, "score": s.score, "late": s.late,
             "late_penalty": s.late_penalty, "time": s.total_time,
             "attempt": s.attempt, "error": s.error, "flag_status": s.flag_status,
             "flags": flags_of(s),
             "created_at": s.created_at.isoformat() + "Z"} for s in rows]
