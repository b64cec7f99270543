"""TA actions on submissions: rejudge one or all, cancel one or a language's queue. Each is a
transition of app/submissions/lifecycle.py, audited in its own transaction."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.core.errors import UserError
from app.course import terms
from app.db.models import Submission, User
from app.submissions import capacity, dispatch, lifecycle
from flashjudge.contract import LANGUAGES


def rejudge(db: Session, actor: User, sub: Submission, settings: Settings) -> None:
    """Judge a submission again as a new attempt; its earlier results are cleared (never in an
    archived term)."""
    terms.require_sub_writable(sub)
    old_task = sub.task_id
    lifecycle.rejudge(db, sub)
    audit.record(db, actor, "rejudge", f"submission {sub.id}")
    db.commit()
    db.refresh(sub)
    dispatch.revoke([old_task], settings)
    dispatch.send_attempt(db, sub, settings)


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
    if sub.verdict in lifecycle.UNJUDGED:
        return str(sub.verdict).lower()
    if sub.assignment is not None and sub.assignment.term.archived_at is not None:
        return "of an archived term"
    if sub.assignment is None and sub.suite != suite:
        return f"of suite {sub.suite}"
    return None


def cancel_submission(db: Session, actor: User, sub: Submission, settings: Settings) -> None:
    """Stop waiting for a queued (or running) submission: it is done, verdict CANCELLED. Its task
    is revoked; a result that still comes is stale and ignored."""
    terms.require_sub_writable(sub)
    lifecycle.cancel(sub)
    audit.record(db, actor, "cancel", f"submission {sub.id}", was=str(sub.language))
    db.commit()
    dispatch.revoke([sub.task_id], settings)


def cancel_queued(db: Session, actor: User, language: str, settings: Settings) -> int:
    """Cancel every queued submission of one language (e.g. CUDA work with no GPU worker)."""
    if language not in LANGUAGES:
        raise UserError(f"unknown language {language!r}; choose one of "
                        f"{', '.join(sorted(LANGUAGES))}", field="language")
    task_ids = lifecycle.cancel_queued(db, language)
    audit.record(db, actor, "cancel-queued", language, count=len(task_ids))
    db.commit()
    dispatch.revoke(task_ids, settings)
    return len(task_ids)
