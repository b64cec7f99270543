"""Recording what workers report, idempotently: one final result per submission attempt.

Every message carries (submission_id, attempt). A message for an attempt other than the current
one, or for a finished submission, is stale and ignored, so duplicate deliveries, late results of
a swept attempt and progress after the result all change nothing.

What counts toward giving up: a system error a worker reports (`record_failure`, or a result with
`system_error`) counts toward `max_attempts`; a judging lost with its worker (found by the
sweeper) toward `max_lost_attempts`; time spent waiting in a queue toward nothing. Everything is
cleaned (app/judging/safe_text.py) before it is stored, so no output a submission printed can
make its result unstorable. A recorded verdict retires the submission in the attempt ledger.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import JudgedTest, Submission, WorkerStatus, utcnow
from app.judging import dispatch as queue
from app.judging import timing
from app.judging.feedback import apply_result
from app.judging.gpu_models import gpu_model_of
from app.judging.intake import dispatch, new_job_key
from app.judging.safe_text import clean_json, clean_text
from flashjudge.claims import submission_subject
from flashjudge.contract import JudgeResult, Status

log = logging.getLogger(__name__)


def current(db: Session, submission_id: int, attempt: int, job: str | None = None
            ) -> Submission | None:
    """The submission if this message belongs to its live attempt, else None (stale)."""
    sub = db.get(Submission, submission_id, with_for_update=True, populate_existing=True)
    if sub is None or sub.status == Status.DONE or sub.attempt != attempt or (
            job is not None and job != sub.job_key):
        log.info("ignoring stale message for submission %s attempt %s", submission_id, attempt)
        return None
    return sub


def number(value: Any) -> float | None:
    """A float column's value ("nan"/"inf" from clean_json back to floats); None if not one."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def upsert_test(db: Session, sub: Submission, test: dict[str, Any]) -> None:
    row = db.scalar(select(JudgedTest).where(JudgedTest.submission_id == sub.id,
                                             JudgedTest.test_id == test["id"]))
    if row is None:
        row = JudgedTest(submission_id=sub.id, test_id=test["id"])
        db.add(row)
    row.attempt = sub.attempt
    row.verdict = str(test.get("verdict", "SE"))
    row.seconds = number(test.get("seconds"))
    row.time_limit = number(test.get("time_limit_s"))
    row.max_error = number(test.get("max_error"))
    row.detail = {k: test.get(k) for k in ("message", "exit_code", "signal", "over_tolerance",
                                           "mismatches", "stderr_tail", "stdout_tail",
                                           "error_map")}


def record_progress(db: Session, submission_id: int, attempt: int, event: dict[str, Any],
                    job: str | None = None) -> bool:
    """Mark running, refresh the heartbeat, and keep partial results for the live page."""
    event = clean_json(event)
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        return False
    sub.status = Status.RUNNING
    sub.heartbeat_at = utcnow()
    kind = event.get("type") or event.get("event") or ""
    if kind.startswith("compile") and "ok" in event:
        sub.compile_ok = bool(event["ok"])
        sub.compile_log = str(event.get("log", ""))
    test = event.get("test") if isinstance(event.get("test"), dict) else None
    if kind == "test-done" and test and "verdict" in test:
        upsert_test(db, sub, test)
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
        return False
    judged = JudgeResult.from_dict(result)
    sub.compile_ok = judged.compile.ok
    sub.compile_log = judged.compile.log
    for test in result.get("tests", []):
        upsert_test(db, sub, test)
    sub.verdict = str(judged.verdict)
    sub.score = judged.score
    sub.passed = judged.passed
    sub.total_time = round(judged.total_seconds, 6)
    sub.result = {k: v for k, v in result.items() if k not in ("tests", "feedback")}
    apply_result(sub, result)
    sub.gpu_model = gpu_model_of(result)  # rejudges and refinements stay on this model
    sub.status = Status.DONE
    sub.finished_at = utcnow()
    db.commit()
    log.info("recorded verdict %s for attempt %s", sub.verdict, attempt)
    queue.retire(submission_subject(sub.id), settings)
    timing.request_refinement(sub, settings)
    return True


def record_failure(
    db: Session, settings: Settings, submission_id: int, attempt: int, message: str,
    job: str | None = None,
) -> bool:
    """An attempt failed through no fault of the student: retry, or SE after max_attempts
    system errors."""
    message = clean_text(message)
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        return False
    if sub.failures + 1 >= settings.max_attempts:
        sub.failures += 1
        give_up(db, sub, message, settings)
    else:
        new_attempt(db, sub, message, settings, "failures")
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
    return new_attempt(db, locked, reason, settings, "lost")


def new_attempt(db: Session, sub: Submission, reason: str, settings: Settings,
                counted: Literal["failures", "lost"]) -> bool:
    """Start the next attempt (atomically: only one sweeper or message wins), counting it as
    a failure or a lost judging, and send it."""
    column = getattr(Submission, counted)
    result = db.execute(
        update(Submission)
        .where(Submission.id == sub.id, Submission.attempt == sub.attempt,
               Submission.status != Status.DONE)
        .values(attempt=sub.attempt + 1, job_key=new_job_key(), status=Status.QUEUED,
                sent_at=None, heartbeat_at=None, error=clean_text(reason), **{counted: column + 1})
    )
    if result.rowcount != 1:
        db.rollback()
        return False
    sub.tests.clear()
    db.commit()
    db.refresh(sub)
    log.info("attempt %s (%s: %s)", sub.attempt, counted, reason)
    dispatch(db, sub, settings)
    return True


def give_up(db: Session, sub: Submission, message: str, settings: Settings) -> None:
    """Final SE, with the reason kept for TAs: nothing is lost silently."""
    sub.status = Status.DONE
    sub.verdict = "SE"
    sub.error = clean_text(f"system error after {sub.attempt} attempt(s): {message}")
    sub.finished_at = utcnow()
    db.commit()
    log.warning("gave up on attempt %s: %s", sub.attempt, message)
    queue.retire(submission_subject(sub.id), settings)


def record_worker(db: Session, status: dict[str, Any]) -> None:
    """Upsert a worker heartbeat; a busy heartbeat also keeps its submission's attempt alive."""
    status = clean_json(status)
    row = db.get(WorkerStatus, status["hostname"]) or WorkerStatus(hostname=status["hostname"])
    row.gpu = str(status.get("gpu", ""))
    row.queues = str(status.get("queues", ""))
    row.languages = ",".join(str(n) for n in status.get("languages") or [])
    row.busy = bool(status.get("busy"))
    job = status.get("job") or {}
    row.current = f"submission {job['submission_id']}" if job.get("submission_id") else ""
    row.last_seen = utcnow()
    db.merge(row)
    if job.get("submission_id"):
        sub = db.get(Submission, job["submission_id"])
        if (sub is not None and sub.status != Status.DONE and sub.attempt == job.get("attempt")
                and job.get("job", sub.job_key) == sub.job_key):
            sub.status = Status.RUNNING
            sub.heartbeat_at = utcnow()
    db.commit()
