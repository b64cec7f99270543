"""TA actions: rejudge, cancel, freeze, queue and worker status. Every change is audited."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import Submission, User, WorkerStatus, utcnow
from app.services import audit, capacity, scoreboard
from app.services.broker_watch import loss_notice
from app.services.feedback import CLEARED_FIELDS, flags_of
from app.services.submissions import CANCELLED, UNJUDGED, cancel, dispatch, new_job_key
from flashjudge.contract import LANGUAGES, Status


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


@dataclass
class RejudgeReport:
    """What "rejudge all" did, in numbers a TA can check."""

    count: int = 0  # submissions sent again
    by_status: dict[str, int] = field(default_factory=dict)  # their status before: done/queued/..
    skipped: dict[str, int] = field(default_factory=dict)  # left alone: superseded, cancelled
    waiting: dict[str, int] = field(default_factory=dict)  # of those sent, per language no live
    # worker judges now (they wait for one)

    def message(self) -> str:
        """One line for the TA page: "rejudging 3 submission(s) (2 done, 1 queued); skipped 1
        superseded; waiting for a worker: 1 cuda-program"."""
        line = f"rejudging {self.count} submission(s)" + _counts(self.by_status, " ({})")
        return line + _counts(self.skipped, "; skipped {}") + _counts(
            self.waiting, "; waiting for a worker: {}")


def _counts(counts: dict[str, int], frame: str) -> str:
    """"2 done, 1 queued" put in `frame`, or "" for no counts."""
    if not counts:
        return ""
    return frame.format(", ".join(f"{n} {what}" for what, n in sorted(counts.items())))


def rejudge_all(db: Session, actor: User, settings: Settings) -> RejudgeReport:
    """Judge every submission of the current suite again: judged ones, and queued or running ones
    (a new attempt, so one stuck behind a lost message is sent again). Superseded and cancelled
    submissions were never meant to be judged, and other suites' are not this deployment's."""
    rows = list(db.scalars(select(Submission).order_by(Submission.id)))
    reasons = {s.id: skip_reason(s, settings.suite) for s in rows}
    chosen = [s for s in rows if reasons[s.id] is None]
    can = capacity.current(db, settings)
    report = RejudgeReport(
        len(chosen), dict(Counter(str(s.status) for s in chosen)),
        dict(Counter(r for r in reasons.values() if r is not None)),
        dict(Counter(s.language for s in chosen
                     if s.language in LANGUAGES and not can.get(s.language).available)))
    audit.record(db, actor, "rejudge-all", settings.suite, count=report.count,
                 by_status=report.by_status, skipped=report.skipped)
    db.commit()
    for sub in chosen:
        rejudge(db, actor, sub, settings)
    return report


def skip_reason(sub: Submission, suite: str) -> str | None:
    """Why "rejudge all" leaves a submission alone, or None to rejudge it."""
    if sub.verdict in UNJUDGED:
        return str(sub.verdict).lower()
    if sub.suite != suite:
        return f"of suite {sub.suite}"
    return None


def cancel_submission(db: Session, actor: User, sub: Submission, settings: Settings) -> None:
    """Stop waiting for a queued (or running) submission: it is done, verdict CANCELLED. Its task
    is revoked; a result that still comes is stale and ignored."""
    if sub.status == Status.DONE:
        raise UserError(f"submission {sub.id} is already {str(sub.verdict or 'done').lower()}: "
                        "only queued or running work can be cancelled", status=409)
    sub.status, sub.verdict, sub.finished_at = Status.DONE, CANCELLED, utcnow()
    audit.record(db, actor, "cancel", f"submission {sub.id}", was=str(sub.language))
    db.commit()
    cancel([sub.task_id], settings)


def cancel_queued(db: Session, actor: User, language: str, settings: Settings) -> int:
    """Cancel every queued submission of one language (e.g. CUDA work with no GPU worker)."""
    if language not in LANGUAGES:
        raise UserError(f"unknown language {language!r}; choose one of "
                        f"{', '.join(sorted(LANGUAGES))}", field="language")
    rows = db.execute(select(Submission.id, Submission.task_id).where(
        Submission.status == Status.QUEUED, Submission.language == language)).all()
    if rows:
        db.execute(update(Submission).where(Submission.id.in_([r.id for r in rows]),
                                            Submission.status == Status.QUEUED)
                   .values(status=Status.DONE, verdict=CANCELLED, finished_at=utcnow()))
    audit.record(db, actor, "cancel-queued", language, count=len(rows))
    db.commit()
    cancel([r.task_id for r in rows], settings)
    return len(rows)


def freeze(db: Session, actor: User, frozen: bool) -> None:
    scoreboard.set_frozen(db, frozen)
    audit.record(db, actor, "freeze" if frozen else "unfreeze", "scoreboard")
    db.commit()


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
