"""Which documents the similarity page compares, per suite: every student's latest and best
submission, and the sources TAs uploaded (public solutions, base code).

"Best" is the scoreboard's rule (more passed, then less time, then earlier); "latest" is the last
stored submission. Documents are named "s<submission id>" and "p<source id>"; a student's two
documents share an owner, so they are never reported as a pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import Fingerprint, SimilaritySource, Submission, User
from app.similarity.engine import SUBMISSION
from flashjudge.contract import Status

DOC_ID = re.compile(r"([sp])([0-9]{1,12})")


@dataclass(frozen=True)
class Candidate:
    """One document the page compares."""

    doc_id: str  # "s12" (submission 12) or "p3" (source 3)
    owner: str  # "u<user id>" for a student's submissions, "source-<id>" for an upload
    kind: str  # "submission" | "public" | "base"
    roles: tuple[str, ...] = ()  # a submission's: ("latest",), ("best",) or both


def submission_candidates(db: Session, suite: str) -> dict[str, Candidate]:
    """Each student's latest and best submission of the suite."""
    rows = db.execute(select(Submission.id, Submission.user_id, Submission.status,
                             Submission.passed, Submission.total_time)
                      .join(User, User.id == Submission.user_id)
                      .where(Submission.suite == suite, User.role == "student"))
    latest: dict[int, int] = {}
    best: dict[int, tuple[int, float, int]] = {}
    for sub_id, user_id, status, passed, total in rows:
        latest[user_id] = max(latest.get(user_id, 0), sub_id)
        if status == Status.DONE and passed is not None:
            key = (-passed, total or 0.0, sub_id)
            best[user_id] = min(best.get(user_id, key), key)
    roles: dict[int, list[str]] = {}
    for sub_id in latest.values():
        roles.setdefault(sub_id, []).append("latest")
    for key in best.values():
        roles.setdefault(key[2], []).append("best")
    owner = {sub_id: user_id for user_id, sub_id in latest.items()}
    owner.update({key[2]: user_id for user_id, key in best.items()})
    return {f"s{i}": Candidate(f"s{i}", f"u{owner[i]}", SUBMISSION, tuple(r))
            for i, r in roles.items()}


def source_candidates(db: Session, suite: str) -> dict[str, Candidate]:
    rows = db.execute(select(SimilaritySource.id, SimilaritySource.kind)
                      .where(SimilaritySource.suite == suite))
    return {f"p{i}": Candidate(f"p{i}", f"source-{i}", kind) for i, kind in rows}


def candidates(db: Session, suite: str) -> dict[str, Candidate]:
    """doc id -> candidate, submissions and sources of the suite."""
    return {**submission_candidates(db, suite), **source_candidates(db, suite)}


def fingerprinted(db: Session, doc_ids: list[str]) -> dict[str, str]:
    """doc id -> a stamp of its stored fingerprints (row and time: it changes when they are made
    again), for the doc ids among these that have some."""
    subs, sources = split_ids(doc_ids)
    found = {f"s{i}": _stamp(row, at) for i, row, at in db.execute(
        select(Fingerprint.submission_id, Fingerprint.id, Fingerprint.created_at)
        .where(Fingerprint.submission_id.in_(subs)))}
    found.update({f"p{i}": _stamp(row, at) for i, row, at in db.execute(
        select(Fingerprint.source_id, Fingerprint.id, Fingerprint.created_at)
        .where(Fingerprint.source_id.in_(sources)))})
    return found


def _stamp(row: int, at: datetime) -> str:
    return f"{row}@{at.isoformat()}"


def fingerprint_blobs(db: Session, doc_ids: list[str]) -> dict[str, bytes]:
    """doc id -> stored fingerprints (to_bytes), for these documents."""
    subs, sources = split_ids(doc_ids)
    blobs = {f"s{i}": data for i, data in db.execute(
        select(Fingerprint.submission_id, Fingerprint.data)
        .where(Fingerprint.submission_id.in_(subs)))}
    blobs.update({f"p{i}": data for i, data in db.execute(
        select(Fingerprint.source_id, Fingerprint.data).where(Fingerprint.source_id.in_(sources)))})
    return blobs


def split_ids(doc_ids: list[str]) -> tuple[list[int], list[int]]:
    """(submission ids, source ids) of doc ids."""
    subs = [int(d[1:]) for d in doc_ids if d.startswith("s")]
    return subs, [int(d[1:]) for d in doc_ids if d.startswith("p")]


def parse_doc_id(value: str, field: str) -> str:
    """A doc id from a request, or a UserError naming the field."""
    if not DOC_ID.fullmatch(value or ""):
        raise UserError(f"{field}: a document is s<submission id> or p<source id>, not "
                        f"{value!r}", field=field)
    return value
