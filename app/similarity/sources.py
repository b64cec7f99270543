"""What the similarity page compares besides submissions: sources a TA uploads per suite (last
year's solutions as "public", starter code such as seq-flashattention.c as "base"), and asking
the control worker to fingerprint a stored source, or whatever is missing (a new submission asks
for itself: app/submissions/dispatch.py `fingerprint_later`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.course import assignments
from app.db.models import SimilaritySource, User
from app.similarity.candidates import candidates, fingerprinted, split_ids
from app.submissions.dispatch import fingerprint_later

SOURCE_KINDS = ("public", "base")  # public: compared with everyone; base: excluded everywhere
MAX_SOURCE_CHARS = 512 * 1024  # a source file, as text


def checked_text(name: str, content: bytes) -> str:
    """The upload as text, or a UserError naming the field."""
    if not content.strip():
        raise UserError(f"file: {name or 'the file'} is empty", field="file")
    if len(content) > MAX_SOURCE_CHARS:
        raise UserError(f"file: {name} is over {MAX_SOURCE_CHARS} bytes", status=413,
                        field="file")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"file: {name} is not UTF-8 text", field="file") from None


def add_source(db: Session, actor: User, suite: str, kind: str, name: str, content: bytes,
               settings: Settings) -> SimilaritySource:
    """Store a TA's source (committed) and ask for its fingerprints."""
    if kind not in SOURCE_KINDS:
        raise UserError(f"kind: must be one of {', '.join(SOURCE_KINDS)}, not {kind!r}",
                        field="kind")
    name = (name or "").strip()[:200]
    if not name:
        raise UserError("name: give the source a name (e.g. its file name)", field="name")
    text = checked_text(name, content)
    source = SimilaritySource(suite=suite, kind=kind, name=name, content=text,
                              uploaded_by=actor.id)
    db.add(source)
    audit.record(db, actor, "similarity-source", f"{kind} {name}", suite=suite)
    db.commit()
    fingerprint_later(settings, source_id=source.id)
    return source


def sources(db: Session, suite: str) -> list[SimilaritySource]:
    return list(db.scalars(select(SimilaritySource).where(SimilaritySource.suite == suite)
                           .order_by(SimilaritySource.id)))


def delete_source(db: Session, actor: User, source_id: int) -> None:
    source = db.get(SimilaritySource, source_id)
    if source is None:
        raise not_found("source")
    audit.record(db, actor, "similarity-source-delete", f"{source.kind} {source.name}")
    db.delete(source)
    db.commit()


def request_missing(db: Session, settings: Settings) -> int:
    """Send a fingerprinting request for every compared document without fingerprints."""
    wanted = candidates(db, assignments.shown(db, None, settings.suite).suite)
    missing = sorted(set(wanted) - set(fingerprinted(db, list(wanted))))
    subs, source_ids = split_ids(missing)
    for sub_id in subs:
        fingerprint_later(settings, submission_id=sub_id)
    for source_id in source_ids:
        fingerprint_later(settings, source_id=source_id)
    return len(missing)
