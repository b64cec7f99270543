"""Accepting submissions: check, capacity, deadline, rate-limit, supersede, commit, then send.

An upload is refused at once (409) when no live worker judges its language
(app/submissions/capacity.py), goes to an assignment (the one named, or the only open one:
app/course/assignments.py), and is refused (403) or marked late by the server's clock against that
assignment's deadline (app/course/deadlines.py); what was accepted enters its life queued
(app/submissions/lifecycle.py) and is judged, or cancelled by a TA.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.course import assignments, deadlines, terms
from app.db.models import Assignment, Submission, SubmissionFile, User, utcnow
from app.db.session import write
from app.submissions import capacity, dispatch, lifecycle
from app.submissions.uploads import SourceFile, check_sources
from flashjudge.contract import LANGUAGES


def check_rate_limit(db: Session, user: User, settings: Settings) -> None:
    """At most one submission per `submit_interval_s` per user (TAs are exempt).

    One conditional UPDATE claims the slot: of concurrent submissions only the first to write
    the user's row passes (PostgreSQL re-checks the condition after the row lock, SQLite
    serialises writers); the claim commits or rolls back with the submission itself."""
    if user.is_ta or settings.submit_interval_s <= 0:
        return
    now = utcnow()
    cutoff = now - timedelta(seconds=settings.submit_interval_s)
    claimed = write(db, update(User).where(
        User.id == user.id,
        or_(User.last_submission_at.is_(None), User.last_submission_at <= cutoff),
    ).values(last_submission_at=now).execution_options(synchronize_session=False))
    if claimed.rowcount == 1:
        return
    last = db.scalar(select(User.last_submission_at).where(User.id == user.id)) or now
    wait = settings.submit_interval_s - (now - last).total_seconds()
    raise UserError(f"too many submissions: wait {max(wait, 1):.0f} s before the next one",
                    status=429, headers={"Retry-After": str(max(1, round(wait)))})


def pinned_model(target: Assignment, language: str) -> str | None:
    """The assignment's GPU-model rule: a GPU language is judged only on that model (its queue
    `gpu.<slug>`, app/submissions/dispatch.py); None: any model, or a CPU language."""
    return target.gpu_model or None if LANGUAGES[language].uses_gpu else None


def create_submission(
    db: Session, user: User, language: str, files: list[SourceFile], settings: Settings,
    assignment: str | None = None,
) -> Submission:
    """Store a checked submission (committed) and send its first judge task. `assignment`: its
    name (None: the only open one); its suite, languages and deadline apply."""
    check_sources(language, files)
    target = assignments.for_upload(db, user, assignment, language, settings.suite)
    terms.require_writable(target)
    capacity.require_worker(db, settings, language)
    mark = deadlines.mark_upload(db, user, target, datetime.now(settings.course_zone))
    check_rate_limit(db, user, settings)
    superseded = lifecycle.supersede_queued(db, user.id, target.id)
    sub = Submission(user_id=user.id, language=language, suite=target.suite,
                     assignment_id=target.id, compile_log="", error="", late=mark.late,
                     late_penalty=mark.penalty, gpu_model=pinned_model(target, language))
    sub.files = [SubmissionFile(name=f.name, content=f.content) for f in files]
    lifecycle.accept(db, sub)
    db.commit()
    dispatch.revoke(superseded, settings)
    dispatch.send_attempt(db, sub, settings)
    dispatch.fingerprint_soon(settings, sub.id)  # for the TAs' similarity page, in a batch
    return sub
