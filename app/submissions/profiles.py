"""ncu profiles asked for from a submission's page: who may ask, sending, recording, the file.

GPU workers hold no database credentials and may not share a disk with the service, so the
.ncu-rep comes back inside the control message, base64, capped by the worker (32 MB); it is kept
under data_dir/profiles/<profile id>/. One profile per request; recording is idempotent per
profile id (a duplicate delivery changes nothing).
"""

from __future__ import annotations

import base64
import binascii
import logging
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.course import terms
from app.db.models import KeyValue, Profile, Submission, User, utcnow
from app.submissions import dispatch
from flashjudge.contract import TOOLED_LANGUAGES, Status
from testcases.suite import load_suite

log = logging.getLogger(__name__)
STUDENTS_KEY = "student_profiles"


def students_allowed(db: Session, settings: Settings) -> bool:
    """Students may profile when the setting or the TA admin page's switch says so."""
    row = db.get(KeyValue, STUDENTS_KEY)
    return settings.student_profiles or (row is not None and row.value == "on")


def set_students_allowed(db: Session, actor: User, allowed: bool) -> None:
    row = db.get(KeyValue, STUDENTS_KEY) or KeyValue(key=STUDENTS_KEY, value="off")
    row.value = "on" if allowed else "off"
    db.merge(row)
    audit.record(db, actor, "student-profiles", "settings", allowed=allowed)
    db.commit()


def check_request(db: Session, user: User, sub: Submission, test_id: str,
                  settings: Settings) -> None:
    """Raise a UserError naming what stops this profile request."""
    if not user.is_ta and not students_allowed(db, settings):
        raise UserError("profiles are for TAs unless a TA allows students to ask", status=403)
    if sub.language not in TOOLED_LANGUAGES:
        raise UserError(f"only CUDA submissions can be profiled, not {sub.language}",
                        field="language")
    if sub.status != Status.DONE or not sub.compile_ok:
        raise UserError("only a judged submission that compiled can be profiled", status=409)
    if test_id not in {t.id for t in load_suite(sub.suite).tests}:
        raise UserError(f"no test {test_id!r} in suite {sub.suite}", field="test_id")
    waiting = db.scalar(select(Profile.id).where(Profile.submission_id == sub.id,
                                                 Profile.status == Status.QUEUED))
    if waiting is not None:
        raise UserError("a profile of this submission is already queued", status=409)


def request_profile(db: Session, user: User, sub: Submission, test_id: str,
                    settings: Settings) -> Profile:
    """Store the request (committed) and send it to the GPU workers' low-priority queue."""
    check_request(db, user, sub, test_id, settings)
    terms.require_sub_writable(sub)
    profile = Profile(submission_id=sub.id, requested_by=user.id, test_id=test_id,
                      status=Status.QUEUED, error="", report_file="")
    db.add(profile)
    db.commit()
    try:
        dispatch.send_profile(profile, sub, settings)
    except Exception as exc:  # the broker is down: say so on the page, the user may ask again
        log.warning("could not send profile %s: %s", profile.id, exc)
        finish(db, profile, None, f"the queue is unreachable ({exc}); ask again later")
    return profile


def finish(db: Session, profile: Profile, summary: dict[str, Any] | None, error: str) -> None:
    profile.status = Status.DONE
    profile.summary = summary
    profile.error = error
    profile.finished_at = utcnow()
    db.commit()


def record_profile(db: Session, settings: Settings, profile_id: int,
                   outcome: dict[str, Any]) -> bool:
    """A worker's outcome {"profile": Profile.to_dict() | None, "report": base64 | None,
    "error": str | None}; the first one for a profile id is kept, later ones ignored."""
    profile = db.get(Profile, profile_id, with_for_update=True)
    if profile is None or profile.status == Status.DONE:
        db.rollback()
        return False
    summary = outcome.get("profile") if isinstance(outcome.get("profile"), dict) else None
    error = str(outcome.get("error") or (summary or {}).get("error") or "")
    if outcome.get("report"):
        try:
            profile.report_file = keep_report(settings, profile, str(outcome["report"]))
        except (binascii.Error, ValueError, OSError) as exc:
            error = error or f"the .ncu-rep could not be kept: {exc}"
    finish(db, profile, summary, error)
    return True


def keep_report(settings: Settings, profile: Profile, data: str) -> str:
    """Write the .ncu-rep under the data dir; returns its name relative to profiles_dir."""
    name = f"{profile.id}/{profile.test_id}.ncu-rep"
    path = settings.profiles_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(data, validate=True))
    return name


def get_for(db: Session, sub: Submission, profile_id: int) -> Profile:
    profile = db.get(Profile, profile_id)
    if profile is None or profile.submission_id != sub.id:
        raise not_found("profile")
    return profile


def report_file(settings: Settings, profile: Profile) -> Path:
    """The kept .ncu-rep of a profile; a UserError when there is none."""
    path = settings.profiles_dir / profile.report_file if profile.report_file else None
    if path is None or not path.is_file():
        raise UserError(f"profile {profile.id} has no .ncu-rep file", status=404)
    return path


def listing(db: Session, sub: Submission) -> list[dict[str, Any]]:
    """The submission's profiles for its page and API, newest first."""
    rows = db.scalars(select(Profile).where(Profile.submission_id == sub.id)
                      .order_by(Profile.id.desc()))
    return [{"id": p.id, "test_id": p.test_id, "status": p.status, "error": p.error,
             "main": (p.summary or {}).get("main"), "kernels": (p.summary or {}).get("kernels"),
             "seconds": (p.summary or {}).get("seconds"),
             "report_url": f"/api/submissions/{sub.id}/profiles/{p.id}/report"
             if p.report_file else None} for p in rows]
