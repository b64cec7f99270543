"""Accepting submissions: check, capacity, deadline, rate-limit, supersede, commit, then send.

An upload is refused at once (409) when no live worker judges its language (app/services/
capacity.py), and refused (403) or marked late by the server's clock against its suite's
deadline (app/services/deadlines.py); what was accepted is judged, or cancelled by a TA.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app import queue
from app.core.config import Settings, get_settings
from app.core.errors import UserError, not_found
from app.db.models import Submission, SubmissionFile, User, utcnow
from app.services import capacity, deadlines, profiles, similarity_sources
from app.services.feedback import diagnosis_state, flags_of
from app.services.uploads import SourceFile, check_sources
from flashjudge.contract import LANGUAGES, Status
from testcases.suite import SuiteError, load_suite

log = logging.getLogger(__name__)
SUPERSEDED = "SUPERSEDED"  # verdict of a queued submission replaced by a newer one
CANCELLED = "CANCELLED"  # verdict of queued (or running) work a TA cancelled
UNJUDGED = (SUPERSEDED, CANCELLED)  # verdicts of submissions that were never judged to the end


def new_job_key() -> str:
    """A random key per attempt: messages carry it, so a message is matched to exactly one
    attempt even if ids are ever reused (a restored database, a kept broker)."""
    return uuid.uuid4().hex


def check_rate_limit(db: Session, user: User, settings: Settings) -> None:
    """At most one submission per `submit_interval_s` per user (TAs are exempt).

    One conditional UPDATE claims the slot: of concurrent submissions only the first to write
    the user's row passes (PostgreSQL re-checks the condition after the row lock, SQLite
    serialises writers); the claim commits or rolls back with the submission itself."""
    if user.is_ta or settings.submit_interval_s <= 0:
        return
    now = utcnow()
    cutoff = now - timedelta(seconds=settings.submit_interval_s)
    claimed = db.execute(update(User).where(
        User.id == user.id,
        or_(User.last_submission_at.is_(None), User.last_submission_at <= cutoff),
    ).values(last_submission_at=now).execution_options(synchronize_session=False))
    if claimed.rowcount == 1:
        return
    last = db.scalar(select(User.last_submission_at).where(User.id == user.id)) or now
    wait = settings.submit_interval_s - (now - last).total_seconds()
    raise UserError(f"too many submissions: wait {max(wait, 1):.0f} s before the next one",
                    status=429, headers={"Retry-After": str(max(1, round(wait)))})


def supersede_queued(db: Session, user: User) -> list[str]:
    """Close the user's still-queued submissions: a newer one replaces them. Returns their
    task ids, to revoke once the change is committed."""
    rows = db.execute(select(Submission.id, Submission.task_id).where(
        Submission.user_id == user.id, Submission.status == Status.QUEUED)).all()
    if rows:
        db.execute(update(Submission).where(Submission.id.in_([r.id for r in rows]),
                                            Submission.status == Status.QUEUED)
                   .values(status=Status.DONE, verdict=SUPERSEDED, finished_at=utcnow()))
    return [r.task_id for r in rows]


def create_submission(
    db: Session, user: User, language: str, files: list[SourceFile], settings: Settings
) -> Submission:
    """Store a checked submission (committed) and send its first judge task."""
    check_sources(language, files, settings)
    capacity.require_worker(db, settings, language)
    mark = deadlines.mark_upload(db, user, settings.suite, datetime.now(settings.course_zone))
    check_rate_limit(db, user, settings)
    superseded = supersede_queued(db, user)
    sub = Submission(user_id=user.id, language=language, suite=settings.suite, status=Status.QUEUED,
                     attempt=1, job_key=new_job_key(), compile_log="", error="",
                     late=mark.late, late_penalty=mark.penalty)
    sub.files = [SubmissionFile(name=f.name, content=f.content) for f in files]
    db.add(sub)
    db.commit()
    cancel(superseded, settings)
    dispatch(db, sub, settings)
    similarity_sources.fingerprint_later(settings, submission_id=sub.id)  # issue 13: TAs' page
    return sub


def cancel(task_ids: list[str], settings: Settings) -> None:
    try:
        queue.revoke(task_ids, settings)
    except Exception as exc:  # revoking only saves work; the results would be ignored anyway
        log.warning("could not revoke %s: %s", task_ids, exc)


def dispatch(db: Session, sub: Submission, settings: Settings) -> None:
    """Send the current attempt; on a broker failure leave sent_at empty for the sweeper."""
    try:
        sub.task_id = queue.send_judge(sub, queue.judge_queue(sub), settings)
    except Exception as exc:  # the broker is down: the sweeper re-sends, nothing is lost
        log.warning("could not send submission %s: %s", sub.id, exc)
        return
    sub.sent_at = utcnow()
    db.commit()


def resend(db: Session, sub: Submission, reason: str, settings: Settings) -> bool:
    """Start a new attempt (atomically: only one sweeper wins) and send it."""
    result = db.execute(
        update(Submission)
        .where(Submission.id == sub.id, Submission.attempt == sub.attempt,
               Submission.status != Status.DONE)
        .values(attempt=sub.attempt + 1, job_key=new_job_key(), status=Status.QUEUED, sent_at=None,
                heartbeat_at=None, error=reason)
    )
    if result.rowcount != 1:
        db.rollback()
        return False
    sub.tests.clear()
    db.commit()
    db.refresh(sub)
    dispatch(db, sub, settings)
    return True


def get_visible(db: Session, user: User, submission_id: int) -> Submission:
    """A submission the user may see: their own, or any for a TA."""
    sub = db.get(Submission, submission_id)
    if sub is None or (sub.user_id != user.id and not user.is_ta):
        raise not_found("submission")  # the same answer: ids cannot be probed
    return sub


def queue_position(db: Session, sub: Submission) -> int | None:
    """How many queued submissions on the same queue were sent before this one (0 = next)."""
    if sub.status != Status.QUEUED:
        return None
    langs = [n for n, f in LANGUAGES.items() if f.queue == LANGUAGES[sub.language].queue]
    ahead = db.scalars(select(Submission.id).where(
        Submission.status == Status.QUEUED, Submission.language.in_(langs), Submission.id < sub.id))
    return len(list(ahead))


def queue_facts(db: Session, ids: Collection[int], settings: Settings
                ) -> dict[int, dict[str, Any]]:
    """For those of `ids` still queued: their `queue_position` and `waiting` as `detail` says
    them, read with two queries however many are asked for. Both change without the submission
    changing (work ahead of it starts, workers come and go), so live pages refresh them."""
    queued = db.execute(select(Submission.id, Submission.language)
                        .where(Submission.status == Status.QUEUED).order_by(Submission.id)).all()
    if not any(row.id in ids for row in queued):
        return {}
    can = capacity.current(db, settings)
    ahead: Counter[object] = Counter()
    facts: dict[int, dict[str, Any]] = {}
    for sub_id, language in queued:  # in id order: the position is the count ahead on its queue
        line = LANGUAGES[language].queue if language in LANGUAGES else language
        if sub_id in ids:
            facts[sub_id] = {"queue_position": ahead[line], "waiting": capacity.waiting_message(
                can, language) if language in LANGUAGES else None}
        ahead[line] += 1
    return facts


TA_ONLY = ("error", "flags")  # what only TAs see of a submission


def detail(db: Session, sub: Submission, viewer: User,
           settings: Settings | None = None) -> dict[str, Any]:
    """The GET /api/submissions/{id} shape; SE internals only for TAs. `settings` (default: the
    environment's) says how recent a heartbeat must be to count a worker as live."""
    return view_for(full_detail(db, sub, settings), viewer.is_ta)


def view_for(body: dict[str, Any], is_ta: bool) -> dict[str, Any]:
    """What a viewer sees of `full_detail`: all of it for a TA, less TA_ONLY for anyone else.
    One snapshot serves every watcher of a submission (app/live/)."""
    return body if is_ta else {k: v for k, v in body.items() if k not in TA_ONLY}


def full_detail(db: Session, sub: Submission, settings: Settings | None = None
                ) -> dict[str, Any]:
    """The detail as a TA sees it (see `detail`)."""
    shapes = suite_shapes(sub.suite)
    body: dict[str, Any] = {
        "id": sub.id, "user": sub.user.username, "language": sub.language, "suite": sub.suite,
        "status": sub.status, "verdict": sub.verdict, "score": sub.score,
        "max_score": max_score_of(sub), "late": sub.late, "late_penalty": sub.late_penalty,
        "final_score": deadlines.final_score(sub.score, sub.late_penalty),
        "passed": sub.passed, "time": sub.total_time, "attempt": sub.attempt,
        "created_at": sub.created_at.isoformat() + "Z",
        "queue_position": queue_position(db, sub), "gpu_model": sub.gpu_model,
        "timing": (sub.result or {}).get("timing"),
        "waiting": waiting(db, sub, settings or get_settings()),
        "compile": {"ok": sub.compile_ok, "log": sub.compile_log},
        "tests": [test_row(t, shapes) for t in sub.tests],
        "files": file_names(db, sub),
        "feedback": sub.feedback,
        "diagnosis": sub.diagnosis,
        "diagnosis_status": diagnosis_state(sub),
        "flag_status": sub.flag_status,
        "profiles": profiles.listing(db, sub),
        "error": sub.error,
        "flags": flags_of(sub),
    }
    return body


def file_names(db: Session, sub: Submission) -> list[str]:
    """The names of the submission's files, without loading their contents."""
    return list(db.scalars(select(SubmissionFile.name)
                           .where(SubmissionFile.submission_id == sub.id)
                           .order_by(SubmissionFile.name)))


def waiting(db: Session, sub: Submission, settings: Settings) -> str | None:
    """Why a queued submission is not being judged (no live worker of its language), or None."""
    if sub.status != Status.QUEUED or sub.language not in LANGUAGES:
        return None
    return capacity.waiting_message(capacity.current(db, settings), sub.language)


def max_score_of(sub: Submission) -> int | None:
    """The best score of the judging as the worker reported it (None before a result)."""
    if sub.result and sub.result.get("max_score"):
        return int(sub.result["max_score"])
    return None


def suite_shapes(suite: str) -> dict[str, list[int]]:
    """test id -> [B, N, d] of the submission's suite ({} for a suite no longer shipped)."""
    try:
        return {t.id: [t.B, t.N, t.d] for t in load_suite(suite).tests}
    except SuiteError:
        return {}


def test_row(t: Any, shapes: dict[str, list[int]] | None = None) -> dict[str, Any]:
    detail = t.detail or {}
    return {"id": t.test_id, "verdict": t.verdict, "seconds": t.seconds,
            "max_error": t.max_error, "time_limit": t.time_limit,
            "shape": (shapes or {}).get(t.test_id), "message": detail.get("message", ""),
            "band_s": detail.get("band_s"), "runs": detail.get("runs"),
            "first_seconds": detail.get("first_seconds")}


def recent_for(db: Session, user: User, limit: int = 100) -> list[Submission]:
    return list(db.scalars(select(Submission).where(Submission.user_id == user.id)
                           .order_by(Submission.id.desc()).limit(limit)))


def window_start(seconds: float) -> Any:
    return utcnow() - timedelta(seconds=seconds)
