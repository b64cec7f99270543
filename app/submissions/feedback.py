"""Recording a judging's feedback: the roofline block, the cheating flags and the diagnosis.

The roofline block and the flags travel inside the result message (`result["feedback"]`, stored
with the result by app/submissions/jobs.py); the sanitizer diagnosis comes later in its own message
(the worker sends it after the result, so a verdict never waits for it). A diagnosis belongs to
one attempt, like a result: a rejudge starts a new attempt and clears all of it, and a diagnosis
of an older attempt is ignored.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.errors import UserError
from app.course import terms
from app.db.models import Submission, User, utcnow
from app.submissions import lifecycle

log = logging.getLogger(__name__)
DIAGNOSIS_WAIT = timedelta(minutes=15)  # its own budget is ~5 min (worker/diagnosis.py)
def record_diagnosis(db: Session, submission_id: int, attempt: int, diagnosis: dict[str, Any],
                     job: str | None = None) -> bool:
    """Store the diagnosis of the recorded attempt, once; anything else is stale and ignored."""
    sub = db.get(Submission, submission_id, with_for_update=True)
    if (sub is None or not lifecycle.is_recorded(sub, attempt, job)
            or sub.diagnosis_status == "done"):
        log.info("ignoring diagnosis for submission %s attempt %s", submission_id, attempt)
        db.rollback()
        return False
    sub.diagnosis = diagnosis
    sub.diagnosis_status = "done"
    db.commit()
    return True


def clear_flag(db: Session, actor: User, sub: Submission) -> None:
    """A TA looked at a flagged result and lets it be ranked; who and when go to the audit log."""
    terms.require_sub_writable(sub)
    if sub.flag_status != "held":
        raise UserError(f"submission {sub.id} is not held by a flag", status=409)
    sub.flag_status = "cleared"
    sub.flag_cleared_by = actor.id
    sub.flag_cleared_at = utcnow()
    tests = [f.get("test_id") for f in (sub.feedback or {}).get("flags", [])]
    audit.record(db, actor, "clear-flag", f"submission {sub.id}", tests=tests)
    db.commit()


def flags_of(sub: Submission) -> list[dict[str, Any]]:
    return list((sub.feedback or {}).get("flags") or [])


def diagnosis_state(sub: Submission) -> str:
    """"", "pending", "done", or "lost" when a pending one is long overdue (its worker died)."""
    overdue = sub.finished_at is not None and utcnow() - sub.finished_at > DIAGNOSIS_WAIT
    return "lost" if sub.diagnosis_status == "pending" and overdue else sub.diagnosis_status
