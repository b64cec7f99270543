"""Similarity for TAs: the most similar pairs of the suite's submissions, one pair's
shared passages, and the public and base sources they are compared with."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, UploadFile

from app.course import assignments
from app.schemas.similarity import (
    Deleted,
    Document,
    Pair,
    PairDetail,
    Pairs,
    PassageOut,
    Sent,
    Source,
)
from app.similarity import sources as similarity_sources
from app.similarity.candidates import fingerprinted, parse_doc_id
from app.similarity.view import DocInfo, PairRow, overview, pair_view
from app.web.deps import SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/similarity", tags=["similarity"])


def document(info: DocInfo) -> Document:
    return Document(doc_id=info.doc_id, kind=info.kind, who=info.who,
                    submission_id=info.submission_id, roles=list(info.roles),
                    created_at=info.created_at, verdict=info.verdict)


def pair_out(row: PairRow) -> Pair:
    return Pair(a=document(row.a), b=document(row.b), score=row.score, a_in_b=row.a_in_b,
                b_in_a=row.b_in_a, shared=row.shared)


@router.get("/pairs", response_model=Pairs)
def pairs(db: SessionDep, settings: SettingsDep, _ta: TAUser,
          limit: Annotated[int, Query(ge=1, le=1000)] = 50,
          assignment: str | None = None) -> Pairs:
    """Every student's latest and best submission against every other's and the public
    sources, base code excluded: the most similar pairs first; among the submissions of an
    assignment's suite (default: the first open assignment's)."""
    suite = assignments.shown(db, assignment, settings.suite).suite
    found = overview(db, settings.db_url, suite, limit)
    return Pairs(suite=suite, documents=found.documents, waiting=found.waiting,
                 pairs=[pair_out(r) for r in found.pairs])


@router.get("/pairs/{a}/{b}", response_model=PairDetail)
def pair(db: SessionDep, settings: SettingsDep, _ta: TAUser, a: str, b: str,
         assignment: str | None = None) -> PairDetail:
    """One pair's shared passages, as line ranges in each document."""
    suite = assignments.shown(db, assignment, settings.suite).suite
    found = pair_view(db, settings.db_url, suite, parse_doc_id(a, "a"),
                      parse_doc_id(b, "b"))
    passages = [PassageOut(number=p.number, a_first=p.a.first, a_last=p.a.last,
                           b_first=p.b.first, b_last=p.b.last, fingerprints=p.fingerprints)
                for p in found.passages]
    return PairDetail(pair=pair_out(found.row), passages=passages)


@router.get("/sources", response_model=list[Source])
def sources(db: SessionDep, settings: SettingsDep, _ta: TAUser) -> list[Source]:
    """The public and base sources of the service's suite."""
    rows = similarity_sources.sources(db, assignments.shown(db, None, settings.suite).suite)
    ready = fingerprinted(db, [f"p{s.id}" for s in rows])
    return [Source(id=s.id, doc_id=f"p{s.id}", suite=s.suite, kind=s.kind, name=s.name,
                   created_at=s.created_at, fingerprinted=f"p{s.id}" in ready) for s in rows]


@router.post("/sources", response_model=Source, status_code=201)
async def add_source(db: SessionDep, settings: SettingsDep, ta: TAUser,
                     kind: Annotated[str, Form()], file: Annotated[UploadFile, File()],
                     name: Annotated[str, Form()] = "") -> Source:
    """Upload a public source (e.g. last year's solution) or base code (e.g. the course's
    seq-flashattention.c, excluded from every comparison); fingerprinted on the control side."""
    content = await file.read(similarity_sources.MAX_SOURCE_CHARS + 1)
    suite = assignments.shown(db, None, settings.suite).suite
    source = similarity_sources.add_source(db, ta, suite, kind,
                                           name or file.filename or "", content, settings)
    return Source(id=source.id, doc_id=f"p{source.id}", suite=source.suite, kind=source.kind,
                  name=source.name, created_at=source.created_at, fingerprinted=False)


@router.delete("/sources/{source_id}", response_model=Deleted)
def delete_source(db: SessionDep, ta: TAUser, source_id: int) -> Deleted:
    """Remove an uploaded source (and its fingerprints) from the comparison."""
    similarity_sources.delete_source(db, ta, source_id)
    return Deleted(id=source_id)


@router.post("/fingerprint-missing", response_model=Sent)
def fingerprint_missing(db: SessionDep, settings: SettingsDep, _ta: TAUser) -> Sent:
    """Ask again for the fingerprints of every compared document that has none (e.g. stored
    while the broker was down, or before this feature)."""
    return Sent(sent=similarity_sources.request_missing(db, settings))
