"""What a submission's page, the API and live streams show of it: who may see it, its detail
(the same snapshot for every watcher, cut per viewer), its place in the queue and why it waits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import not_found
from app.course import deadlines, visibility
from app.db.models import Submission, SubmissionFile, User
from app.submissions import capacity, floors, profiles
from app.submissions.feedback import diagnosis_state, flags_of
from flashjudge.contract import LANGUAGES, Status
from testcases.suite import SuiteError, load_suite


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


def detail(db: Session, sub: Submission, viewer: User, settings: Settings) -> dict[str, Any]:
    """The GET /api/submissions/{id} shape; SE internals only for TAs. `settings` says how
    recent a heartbeat must be to count a worker as live."""
    return view_for(full_detail(db, sub, settings), viewer.is_ta)


def view_for(body: dict[str, Any], is_ta: bool) -> dict[str, Any]:
    """What a viewer sees of `full_detail`: all of it for a TA; for anyone else less TA_ONLY,
    and cut by the assignment's visibility rule before the due time (`shown`:
    app/course/visibility.py). One snapshot serves every watcher of a submission (app/live/)."""
    if is_ta:
        return body
    return {k: v for k, v in visibility.cut_detail(body).items() if k not in TA_ONLY}


def full_detail(db: Session, sub: Submission, settings: Settings) -> dict[str, Any]:
    """The detail as a TA sees it (see `detail`)."""
    shapes = suite_shapes(sub.suite)
    body: dict[str, Any] = {
        "id": sub.id, "user": sub.user.username, "language": sub.language, "suite": sub.suite,
        "assignment": assignment_name(sub), "shown": visibility.level(db, sub),
        "hidden_tests": bool(sub.assignment and sub.assignment.secret_seed is not None),
        "status": sub.status, "verdict": sub.verdict,
        "score": sub.score,
        "max_score": max_score_of(sub), "late": sub.late, "late_penalty": sub.late_penalty,
        "final_score": deadlines.final_score(sub.score, sub.late_penalty),
        "passed": sub.passed, "time": sub.total_time, "attempt": sub.attempt,
        "created_at": sub.created_at.isoformat() + "Z",
        "queue_position": queue_position(db, sub), "gpu_model": sub.gpu_model,
        "timing": (sub.result or {}).get("timing"),
        "floor": floors.summary(sub),
        "waiting": waiting(db, sub, settings),
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


def assignment_name(sub: Submission) -> str:
    """The name of the assignment it went to ("" for none, which no row has after 0010)."""
    return sub.assignment.name if sub.assignment else ""


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
            "first_seconds": detail.get("first_seconds"), **floors.test_floor(t),
            "mistake": mistake_of(detail)}


def mistake_of(detail: dict[str, Any]) -> dict[str, Any] | None:
    """The classic mistake a WA test's output matches, as the worker named it, or
    None (none matched, or a result from before the catalogue)."""
    found = detail.get("mistake")
    return found if isinstance(found, dict) and isinstance(found.get("line"), str) else None


def recent_for(db: Session, user: User, limit: int = 100) -> list[Submission]:
    return list(db.scalars(select(Submission).where(Submission.user_id == user.id)
                           .order_by(Submission.id.desc()).limit(limit)))


def recent_rows(db: Session, user: User, limit: int = 100) -> list[dict[str, Any]]:
    """The lines of "my submissions", newest first, each cut by its assignment's visibility
    rule (app/course/visibility.py)."""
    rows = []
    for s in recent_for(db, user, limit):
        row = {"id": s.id, "status": s.status, "verdict": s.verdict, "passed": s.passed,
               "score": s.score, "time": s.total_time, "language": s.language,
               "created_at": s.created_at, "late": s.late, "late_penalty": s.late_penalty,
               "assignment": assignment_name(s)}
        rows.append(visibility.cut_row(row, visibility.level(db, s)))
    return rows
