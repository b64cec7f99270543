"""A submission's life, and the only writer of its status, attempt and job_key.

    accept ──> queued ──start──> running ──record_final──> done (the verdict)
                 ^  │               │ ├──give_up─────────> done (SE: max attempts or lost)
                 │  │               │ └──cancel──────────> done (CANCELLED)
                 │  ├──supersede / cancel ──────────────> done (SUPERSEDED, CANCELLED)
                 └──┴── retry (a system error, a lost judging), rejudge (any state)

Every message about a submission names its attempt and job_key, and a worker judges only the
attempt the ledger says is live (flashjudge/claims), so a stale message can never land on a new
attempt: these fields change here and nowhere else (tests/app/submissions/test_lifecycle.py reads
app/ for other writers). Each transition only stages its change; the caller commits it with
whatever else belongs in the same transaction (an audit row, the result's fields), then sends,
revokes or retires (app/submissions/dispatch.py), never before the commit.
"""

from __future__ import annotations

import uuid
from typing import Literal

from sqlalchemy import ColumnElement, select, true, update
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import Submission, utcnow
from app.db.session import UNRANKED_ONLY, write
from app.submissions.jobs import CLEARED_RESULT
from app.submissions.safe_text import clean_text
from flashjudge.contract import Status, Verdict

SUPERSEDED = "SUPERSEDED"  # verdict of a queued submission replaced by a newer one
CANCELLED = "CANCELLED"  # verdict of queued (or running) work a TA cancelled
UNJUDGED = (SUPERSEDED, CANCELLED)  # verdicts of submissions that were never judged to the end


def new_job_key() -> str:
    """A random key per attempt: messages carry it, so a message is matched to exactly one
    attempt even if ids are ever reused (a restored database, a kept broker)."""
    return uuid.uuid4().hex


def is_live(sub: Submission, attempt: object, job: object = None) -> bool:
    """Whether a message about (attempt, job) is about the attempt being judged now (job None:
    an older worker that sent no key)."""
    return (sub.status != Status.DONE and sub.attempt == attempt
            and (job is None or job == sub.job_key))


def is_recorded(sub: Submission, attempt: object, job: object = None) -> bool:
    """Whether a late message (a diagnosis, refined times) is about the attempt whose verdict is
    recorded; after a rejudge it is not."""
    return (sub.status == Status.DONE and sub.attempt == attempt
            and (job is None or job == sub.job_key))


def accept(db: Session, sub: Submission) -> Submission:
    """A new submission enters its life: queued, attempt 1 with its own key (added, not sent)."""
    sub.status, sub.attempt, sub.job_key = Status.QUEUED, 1, new_job_key()
    db.add(sub)
    return sub


def supersede_queued(db: Session, user_id: int, assignment_id: int | None = None) -> list[str]:
    """Close the user's still-queued submissions to the same assignment (None: to any): a newer
    one replaces them; a queued hw4 is not replaced by a challenge entry. Returns their task
    ids, to revoke once the change is committed."""
    same = (Submission.assignment_id == assignment_id if assignment_id is not None else true())
    rows = db.execute(select(Submission.id, Submission.task_id).where(
        Submission.user_id == user_id, Submission.status == Status.QUEUED, same)).all()
    _close_queued(db, [r.id for r in rows], SUPERSEDED)
    return [r.task_id for r in rows]


def start(sub: Submission) -> None:
    """A worker reports the live attempt (progress, a busy heartbeat): running, heartbeat now."""
    sub.status = Status.RUNNING
    sub.heartbeat_at = utcnow()


def record_final(sub: Submission) -> None:
    """The live attempt's result is recorded (its fields by app/submissions/jobs.py): done."""
    sub.status = Status.DONE
    sub.finished_at = utcnow()


def give_up(sub: Submission, message: str) -> None:
    """Final SE, with the reason kept for TAs: nothing is lost silently."""
    sub.status = Status.DONE
    sub.verdict = str(Verdict.SE)
    sub.error = clean_text(f"system error after {sub.attempt} attempt(s): {message}")
    sub.finished_at = utcnow()


def retry(db: Session, sub: Submission, reason: str,
          counted: Literal["failures", "lost"]) -> bool:
    """The next attempt after a system error or a lost judging, counted as one of those. Only
    one retry of an attempt wins (a sweeper and a message at once): False for the others,
    whose session is rolled back."""
    column = getattr(Submission, counted)
    return _next_attempt(db, sub, [Submission.attempt == sub.attempt,
                                   Submission.status != Status.DONE],
                         error=clean_text(reason), **{counted: column + 1})


def hand_back(db: Session, sub: Submission, reason: str) -> bool:
    """The next attempt after a worker handed its judging back unfinished (its Slurm job ends
    or was cancelled): nothing went wrong with the submission or the judge, so nothing is
    counted toward giving up. Only one start of the next attempt wins, as in `retry`."""
    return _next_attempt(db, sub, [Submission.attempt == sub.attempt,
                                   Submission.status != Status.DONE], error=clean_text(reason))


def rejudge(db: Session, sub: Submission) -> None:
    """Judge again from the start, whatever the state: a new attempt, the earlier results and
    the counts toward giving up cleared."""
    _next_attempt(db, sub, [], error="", finished_at=None, failures=0, lost=0, **CLEARED_RESULT)


def cancel(sub: Submission) -> None:
    """A TA stops queued or running work: done, CANCELLED (a result still coming is stale)."""
    if sub.status == Status.DONE:
        raise UserError(f"submission {sub.id} is already {str(sub.verdict or 'done').lower()}: "
                        "only queued or running work can be cancelled", status=409)
    sub.status, sub.verdict, sub.finished_at = Status.DONE, CANCELLED, utcnow()


def cancel_queued(db: Session, language: str) -> list[str]:
    """Cancel every queued submission of one language; returns their task ids, to revoke once
    the change is committed."""
    rows = db.execute(select(Submission.id, Submission.task_id).where(
        Submission.status == Status.QUEUED, Submission.language == language)).all()
    _close_queued(db, [r.id for r in rows], CANCELLED)
    return [r.task_id for r in rows]


def _close_queued(db: Session, ids: list[int], verdict: str) -> None:
    """Done with `verdict`, those of `ids` still queued (one that started meanwhile runs on)."""
    if ids:
        db.execute(update(Submission).where(Submission.id.in_(ids),
                                            Submission.status == Status.QUEUED)
                   .values(status=Status.DONE, verdict=verdict, finished_at=utcnow())
                   .execution_options(**{UNRANKED_ONLY: True}))  # queued: no board shows them


def _next_attempt(db: Session, sub: Submission, where: list[ColumnElement[bool]],
                  **values: object) -> bool:
    """The one way a new attempt starts: the next number and key, queued and not yet sent, its
    tests gone. One conditional UPDATE, so of concurrent starters only one wins."""
    started = write(db, update(Submission).where(Submission.id == sub.id, *where).values(
        attempt=Submission.attempt + 1, job_key=new_job_key(), status=Status.QUEUED,
        sent_at=None, heartbeat_at=None, **values))
    if started.rowcount != 1:
        db.rollback()
        return False
    sub.tests.clear()
    return True
