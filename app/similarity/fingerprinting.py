"""Fingerprinting on the control side: task `flashjudge.fingerprint` turns a stored submission or
a TA's source into its winnowed fingerprints (app.similarity), stored once per document.

It runs in the control worker, next to the database and never on a GPU queue: a few milliseconds
of lexing per submission, so the TAs' page only reads stored fingerprints (no lexing per view).
Idempotent: a document fingerprinted again replaces its row.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.db.models import Fingerprint, SimilaritySource, Submission, SubmissionFile, utcnow
from app.similarity.engine import FingerprintParams, IndexConfig, fingerprint_text, to_bytes
from flashjudge.contract import FingerprintPayload

log = logging.getLogger(__name__)
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp", ".cxx")  # code, not builds


def params() -> FingerprintParams:
    """The k and window every stored fingerprint and the page's index use."""
    return IndexConfig().params


def document_text(files: list[SubmissionFile]) -> str:
    """A submission as one document: its source files in name order, each under a header line
    (a comment: the lexer drops it, the side-by-side view shows it)."""
    parts = []
    for f in sorted(files, key=lambda f: f.name):
        if f.name.endswith(SOURCE_SUFFIXES):
            text = f.content.decode("utf-8", errors="replace")
            parts.append(f"// ---- {f.name} ----\n{text.rstrip()}\n")
    return "".join(parts)


def text_of(db: Session, job: FingerprintPayload) -> str | None:
    """The document's text (None: it no longer exists)."""
    if job.submission_id is not None:
        sub = db.get(Submission, job.submission_id)
        return document_text(list(sub.files)) if sub is not None else None
    source = db.get(SimilaritySource, job.source_id) if job.source_id is not None else None
    return source.content if source is not None else None


def fingerprint(db: Session, job: FingerprintPayload) -> bool:
    """Compute and store the documents' fingerprints (False: every one of them is gone)."""
    if job.submission_ids:
        return fingerprint_submissions(db, job.submission_ids)
    text = text_of(db, job)
    if text is None:
        log.info("nothing to fingerprint: %s", job)
        return False
    keep(db, job.submission_id, job.source_id, text)
    db.commit()
    return True


def fingerprint_submissions(db: Session, ids: list[int]) -> bool:
    """Several stored submissions in one transaction (a burst of uploads: one message, one
    commit); those gone are skipped. Whether any was stored."""
    subs = db.scalars(select(Submission).where(Submission.id.in_(ids))
                      .options(selectinload(Submission.files))).all()
    for sub in subs:
        keep(db, sub.id, None, document_text(list(sub.files)))
    db.commit()
    if len(subs) < len(set(ids)):
        log.info("nothing to fingerprint for %d of %d submission(s)", len(set(ids)) - len(subs),
                 len(set(ids)))
    return bool(subs)


def keep(db: Session, submission_id: int | None, source_id: int | None, text: str) -> None:
    """Stage one document's fingerprints (its row replaced if it had one)."""
    found = fingerprint_text(text, params())
    column = Fingerprint.submission_id if submission_id is not None else Fingerprint.source_id
    key = submission_id if submission_id is not None else source_id
    row = db.scalar(select(Fingerprint).where(column == key)) or Fingerprint(
        submission_id=submission_id, source_id=source_id)
    row.data, row.count, row.created_at = to_bytes(found), len(found), utcnow()
    db.add(row)
