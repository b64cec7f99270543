"""Recording what workers report, idempotently: one final result per submission attempt.

Every message carries (submission_id, attempt). A message for an attempt other than the current
one, or for a finished submission, is stale and ignored, so duplicate deliveries, late results of
a swept attempt and progress after the result all change nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import JudgedTest, Submission, WorkerStatus, utcnow
from app.services.feedback import apply_result
from app.services.gpu_models import gpu_model_of
from app.services.submissions import resend
from flashjudge.contract import JudgeResult, Status

log = logging.getLogger(__name__)


def current(db: Session, submission_id: int, attempt: int, job: str | None = None
            ) -> Submission | None:
    """The submission if this message belongs to its live attempt, else None (stale)."""
    sub = db.get(Submission, submission_id, with_for_update=True)
    if sub is None or sub.status == Status.DONE or sub.attempt != attempt or (
            job is not None and job != sub.job_key):
        log.info("ignoring stale message for submission %s attempt %s", submission_id, attempt)
        return None
    return sub


def upsert_test(db: Session, sub: Submission, test: dict[str, Any]) -> None:
    row = db.scalar(select(JudgedTest).where(JudgedTest.submission_id == sub.id,
                                             JudgedTest.test_id == test["id"]))
    if row is None:
        row = JudgedTest(submission_id=sub.id, test_id=test["id"])
        db.add(row)
    row.attempt = sub.attempt
    row.verdict = str(test.get("verdict", "SE"))
    row.seconds = test.get("seconds")
    row.time_limit = test.get("time_limit_s")
    row.max_error = test.get("max_error")
    row.detail = {k: test.get(k) for k in ("message", "exit_code", "signal", "over_tolerance",
                                           "mismatches", "stderr_tail", "stdout_tail",
                                           "error_map")}


def record_progress(db: Session, submission_id: int, attempt: int, event: dict[str, Any],
                    job: str | None = None) -> bool:
    """Mark running, refresh the heartbeat, and keep partial results for the live page."""
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
    return True


def record_failure(
    db: Session, settings: Settings, submission_id: int, attempt: int, message: str,
    job: str | None = None,
) -> bool:
    """An attempt failed through no fault of the student: retry, or SE after max_attempts."""
    sub = current(db, submission_id, attempt, job)
    if sub is None:
        return False
    if sub.attempt >= settings.max_attempts:
        give_up(db, sub, message)
    else:
        resend(db, sub, message, settings)
    return True


def give_up(db: Session, sub: Submission, message: str) -> None:
    """Final SE, with the reason kept for TAs: nothing is lost silently."""
    sub.status = Status.DONE
    sub.verdict = "SE"
    sub.error = f"system error after {sub.attempt} attempt(s): {message}"
    sub.finished_at = utcnow()
    db.commit()


def record_worker(db: Session, status: dict[str, Any]) -> None:
    """Upsert a worker heartbeat; a busy heartbeat also keeps its submission's attempt alive."""
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
