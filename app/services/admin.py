"""TA actions: rejudge, freeze, queue and worker status. Every change is audited."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import Submission, User, WorkerStatus, utcnow
from app.services import audit, scoreboard
from app.services.feedback import CLEARED_FIELDS, flags_of
from app.services.submissions import SUPERSEDED, cancel, dispatch, new_job_key
from flashjudge.contract import Status

OFFLINE_AFTER_S = 60  # a worker silent this long (heartbeats come every ~10 s) is shown offline


def rejudge(db: Session, actor: User, sub: Submission, settings: Settings) -> None:
    """Judge a submission again as a new attempt; its earlier results are cleared."""
    old_task = sub.task_id
    db.execute(update(Submission).where(Submission.id == sub.id).values(
        attempt=Submission.attempt + 1, job_key=new_job_key(), status=Status.QUEUED, verdict=None,
        score=None, passed=None, total_time=None, sent_at=None, heartbeat_at=None,
        finished_at=None, error="", result=None, failures=0, lost=0, **CLEARED_FIELDS))
    sub.tests.clear()
    audit.record(db, actor, "rejudge", f"submission {sub.id}")
    db.commit()
    db.refresh(sub)
    cancel([old_task], settings)
    dispatch(db, sub, settings)


def rejudge_all(db: Session, actor: User, settings: Settings) -> int:
    """Rejudge every judged submission (not superseded ones)."""
    subs = list(db.scalars(select(Submission).where(
        Submission.status == Status.DONE, Submission.verdict != SUPERSEDED
    ).order_by(Submission.id)))
    audit.record(db, actor, "rejudge-all", count=len(subs))
    for sub in subs:
        rejudge(db, actor, sub, settings)
    return len(subs)


def freeze(db: Session, actor: User, frozen: bool) -> None:
    scoreboard.set_frozen(db, frozen)
    audit.record(db, actor, "freeze" if frozen else "unfreeze", "scoreboard")
    db.commit()


def status(db: Session) -> dict[str, Any]:
    """Counts per submission status and each worker's last heartbeat."""
    rows = db.execute(select(Submission.status, func.count()).group_by(Submission.status))
    counts = {status: count for status, count in rows}
    silent_since = utcnow() - timedelta(seconds=OFFLINE_AFTER_S)
    workers = [{"hostname": w.hostname, "gpu": w.gpu, "queues": w.queues,
                "state": "offline" if w.last_seen < silent_since else "busy" if w.busy
                else "idle", "current": w.current, "last_seen": w.last_seen.isoformat() + "Z"}
               for w in db.scalars(select(WorkerStatus).order_by(WorkerStatus.hostname))]
    return {"queued": counts.get("queued", 0), "running": counts.get("running", 0),
            "done": counts.get("done", 0), "workers": workers}


def all_submissions(db: Session, limit: int = 500) -> list[dict[str, Any]]:
    rows = db.scalars(select(Submission).order_by(Submission.id.desc()).limit(limit))
    return [{"id": s.id, "user": s.user.username, "language": s.language, "status": s.status,
             "verdict": s.verdict, "passed": s.passed, "time": s.total_time,
             "attempt": s.attempt, "error": s.error, "flag_status": s.flag_status,
             "flags": flags_of(s),
             "created_at": s.created_at.isoformat() + "Z"} for s in rows]
