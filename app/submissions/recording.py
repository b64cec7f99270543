"""Recording what workers report, idempotently: one final result per submission attempt.

Every message carries (submission_id, attempt). A message for an attempt other than the current
one, or for a finished submission, is stale and ignored, so duplicate deliveries, late results of
a swept attempt and progress after the result all change nothing.

What counts toward giving up: a system error a worker reports (`record_failure`, or a result with
`system_error`) counts toward `max_attempts`; a judging lost with its worker (found by the
sweeper) toward `max_lost_attempts`; time spent waiting in a queue toward nothing. Everything is
cleaned (app/submissions/safe_text.py) before it is stored, so no output a submission printed can
make its result unstorable. A recorded verdict retires the submission in the attempt ledger.
Messages are read through their contract classes and mapped to rows by app/submissions/jobs.py; the
submission's state moves only through app/submissions/lifecycle.py.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import Submission
from app.submissions import dispatch, jobs, lifecycle, refinement
from app.submissions.safe_text import clean_json, clean_text
from flashjudge.claims import submission_subject
from flashjudge.contract import JudgeResult, ProgressEvent, Status, WorkerStatus

log = logging.getLogger(__name__)


def current(db: Session, submission_id: int, attempt: int, job: str | None = None
            ) -> Submission | None:
    """The submission if this message belongs to its live attempt, else None (stale)."""
    sub = db.get(Submission, submission_id, with_for_update=True, populate_existing=True)
    if sub is None or not lifecycle.is_live(sub, attempt, job):
        log.info("ignoring stale message for submission %s attempt %s", submission_id, attempt)
        return None
    return sub


def record_progress(db: Session, submission_id: int, attempt: int, event: dict[str, Any],
                    job: str | None = None) -> bool:
    """Mark running, refresh the heartbeat, and keep partial results for the live page."""
    progress = ProgressEvent.from_dict(clean_json(event))
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        return False
    lifecycle.start(sub)
    jobs.apply_progress(db, sub, progress)
    db.commit()
    return True


def record_result(
    db: Session, settings: Settings, submission_id: int, attempt: int, result: dict[str, Any],
    job: str | None = None,
) -> bool:
    """Store the final result of the live attempt; a system error becomes a failed attempt."""
    result = clean_json(result)
    if result.get("system_error"):
        return record_failure(db, settings, submission_id, attempt,
                              str(result["system_error"]), job)
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        retire_if_done(db, settings, submission_id)
        return False
    jobs.apply_result(db, sub, JudgeResult.from_dict(result), result)
    lifecycle.record_final(sub)
    db.commit()
    log.info("recorded verdict %s for attempt %s", sub.verdict, attempt)
    dispatch.retire(submission_subject(sub.id), settings)
    refinement.request_refinement(sub, settings)
    return True


def retire_if_done(db: Session, settings: Settings, submission_id: int) -> None:
    """A copy of an outcome that came after the verdict (a worker sends its outcome again when
    the broker lost its data, and the ledger's "done" with it): say "done" in the ledger again,
    so the worker stops keeping it (worker/celery_adapter/outbox.py). Recorded once all the
    same. Only where the ledger lost its record (a rejudge's new attempt is never overwritten)."""
    sub = db.get(Submission, submission_id)
    if sub is None or sub.status != Status.DONE:
        return
    subject = submission_subject(sub.id)
    try:
        lost = dispatch.ledger(settings).live(subject) is None
    except Exception as exc:  # noqa: BLE001 - the broker is away: the worker asks again later
        log.warning("could not read %s in the attempt ledger: %s", subject, exc)
        return
    if lost:
        dispatch.retire(subject, settings)


def record_failure(
    db: Session, settings: Settings, submission_id: int, attempt: int, message: str,
    job: str | None = None,
) -> bool:
    """An attempt failed through no fault of the student: retry, or SE after max_attempts
    system errors."""
    message = clean_text(message)
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        retire_if_done(db, settings, submission_id)
        return False
    if sub.failures + 1 >= settings.max_attempts:
        sub.failures += 1
        give_up(db, sub, message, settings)
    else:
        retry(db, sub, message, settings, "failures")
    return True


def record_handback(db: Session, settings: Settings, submission_id: int, attempt: int,
                    reason: str, job: str | None = None) -> bool:
    """A worker handed the live attempt back unjudged (its Slurm job is ending, or was
    cancelled): a new attempt goes to another worker at once, counted as neither a failure nor
    a lost judging, so a drained worker never brings a submission nearer to SE. The handed-back
    attempt's result, should one still come, is stale."""
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        return False
    if not lifecycle.hand_back(db, sub, f"handed back: {clean_text(reason)}"):
        return False
    db.commit()
    db.refresh(sub)
    log.info("attempt %s handed back (%s): attempt %s sent", attempt, reason, sub.attempt)
    dispatch.send_attempt(db, sub, settings)
    return True


def record_lost(db: Session, sub: Submission, reason: str, settings: Settings) -> bool:
    """The sweeper found the live attempt's judging lost (its worker died, or its result never
    arrived): judge again as a new attempt, or SE after max_lost_attempts; False if the
    attempt moved on meanwhile (its result arrived, another sweeper acted)."""
    locked = current(db, sub.id, sub.attempt, sub.job_key or None)
    if locked is None:
        db.rollback()
        return False
    if locked.lost + 1 >= settings.max_lost_attempts:
        locked.lost += 1
        give_up(db, locked, f"{reason} ({locked.lost} judgings lost)", settings)
        return True
    return retry(db, locked, reason, settings, "lost")


def retry(db: Session, sub: Submission, reason: str, settings: Settings,
          counted: Literal["failures", "lost"]) -> bool:
    """Start the next attempt (only one sweeper or message wins), counting it as a failure or
    a lost judging, and send it."""
    if not lifecycle.retry(db, sub, reason, counted):
        return False
    db.commit()
    db.refresh(sub)
    log.info("attempt %s (%s: %s)", sub.attempt, counted, reason)
    dispatch.send_attempt(db, sub, settings)
    return True


def give_up(db: Session, sub: Submission, message: str, settings: Settings) -> None:
    """Final SE (lifecycle.give_up), committed; the attempt retired in the ledger."""
    lifecycle.give_up(sub, message)
    db.commit()
    log.warning("gave up on attempt %s: %s", sub.attempt, message)
    dispatch.retire(submission_subject(sub.id), settings)


def record_worker(db: Session, status: dict[str, Any]) -> None:
    """Upsert a worker heartbeat; a busy heartbeat also keeps its submission's attempt alive."""
    beat = WorkerStatus.from_dict(clean_json(status))
    jobs.apply_heartbeat(db, beat)
    job = beat.job or {}
    if job.get("submission_id"):
        sub = db.get(Submission, job["submission_id"])
        if sub is not None and lifecycle.is_live(sub, job.get("attempt"),
                                                 job.get("job", sub.job_key)):
            lifecycle.start(sub)
    db.commit()
