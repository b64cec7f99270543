"""What TAs see of the judging: submissions per status, what the live workers can judge, each
worker's last heartbeat, work no worker can take, queued messages the broker lost, and the
latest submissions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import Submission, WorkerStatus, utcnow
from app.judging import capacity
from app.judging.broker_watch import loss_notice
from app.judging.feedback import flags_of


def status(db: Session, settings: Settings) -> dict[str, Any]:
    """Counts per submission status, what can be judged now, and each worker's last heartbeat."""
    rows = db.execute(select(Submission.status, func.count()).group_by(Submission.status))
    counts = {status: count for status, count in rows}
    can = capacity.current(db, settings)
    now = utcnow()
    live = {w.hostname for w in capacity.live_workers(db, settings, now)}
    workers = [{"hostname": w.hostname, "gpu": w.gpu, "queues": w.queues,
                "languages": sorted(capacity.worker_languages(w)),
                "state": "busy" if w.busy and w.hostname in live else "idle"
                if w.hostname in live else "offline", "current": w.current,
                "last_seen": w.last_seen.isoformat() + "Z",
                "seen_s_ago": round((now - w.last_seen).total_seconds(), 1)}
               for w in db.scalars(select(WorkerStatus).order_by(WorkerStatus.hostname))]
    return {"queued": counts.get("queued", 0), "running": counts.get("running", 0),
            "done": counts.get("done", 0), "workers": workers,
            "languages": {s.name: list(s.workers) for s in can.languages},
            "stranded": capacity.stranded(db, can), "broker_loss": loss_text(db)}


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
