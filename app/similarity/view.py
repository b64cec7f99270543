"""What the similarity pages and API show: pairs with their students and submissions, and one
pair side by side with the shared passages highlighted."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.core.errors import UserError
from app.db.models import SimilaritySource, Submission, User
from app.similarity.candidates import split_ids
from app.similarity.engine import Passage, SideBySide, SimilarPair, side_by_side
from app.similarity.fingerprinting import document_text
from app.similarity.suite_index import SuiteIndex, sync, top_pairs


@dataclass(frozen=True)
class DocInfo:
    """One side of a pair, as a TA reads it."""

    doc_id: str  # "s12" or "p3"
    kind: str  # submission | public | base
    who: str  # the student's username, or the source's name
    submission_id: int | None  # the submission (None for a source)
    roles: tuple[str, ...]  # latest and/or best
    created_at: datetime | None  # when it was submitted or uploaded (UTC)
    verdict: str | None  # the submission's verdict (None for a source)


@dataclass(frozen=True)
class PairRow:
    """One line of the page."""

    a: DocInfo  # a submission
    b: DocInfo  # another student's submission, or a public source
    score: float  # shared fingerprints over the smaller document, 0..1
    a_in_b: float  # share of a found in b
    b_in_a: float  # share of b found in a
    shared: int  # shared fingerprints that count


@dataclass(frozen=True)
class Overview:
    """The page's head: what was compared, and the pairs."""

    documents: int  # documents in the index
    waiting: int  # candidates whose fingerprints have not arrived yet
    pairs: list[PairRow]  # most similar first


def doc_infos(db: Session, state: SuiteIndex, doc_ids: set[str]) -> dict[str, DocInfo]:
    """doc id -> DocInfo, in two queries."""
    subs, sources = split_ids(sorted(doc_ids))
    infos = {}
    for sub, username in db.execute(select(Submission, User.username).join(User)
                                    .where(Submission.id.in_(subs))):
        doc = state.docs.get(f"s{sub.id}")
        infos[f"s{sub.id}"] = DocInfo(f"s{sub.id}", "submission", username, sub.id,
                                      doc.roles if doc else (), sub.created_at, sub.verdict)
    for source in db.scalars(select(SimilaritySource).where(SimilaritySource.id.in_(sources))):
        infos[f"p{source.id}"] = DocInfo(f"p{source.id}", source.kind, source.name, None, (),
                                         source.created_at, None)
    return infos


def row(pair: SimilarPair, infos: dict[str, DocInfo]) -> PairRow:
    return PairRow(infos[pair.a], infos[pair.b], pair.score, pair.a_in_b, pair.b_in_a,
                   pair.shared)


def overview(db: Session, db_url: str, suite: str, limit: int) -> Overview:
    """The `limit` most similar pairs of the suite's documents."""
    state = sync(db, db_url, suite)
    pairs = top_pairs(state, limit)
    infos = doc_infos(db, state, {d for p in pairs for d in (p.a, p.b)})
    return Overview(len(state.docs), len(state.waiting), [row(p, infos) for p in pairs])


@dataclass(frozen=True)
class PairView:
    """One pair side by side."""

    row: PairRow  # who, and the scores
    view: SideBySide  # both texts in lines, tagged with their passage
    passages: list[Passage]  # the shared passages, numbered


def text_of(db: Session, doc_id: str) -> str:
    if doc_id.startswith("s"):
        sub = db.scalar(select(Submission).where(Submission.id == int(doc_id[1:]))
                        .options(selectinload(Submission.files)))
        return document_text(list(sub.files)) if sub is not None else ""
    source = db.get(SimilaritySource, int(doc_id[1:]))
    return source.content if source is not None else ""


def pair_view(db: Session, db_url: str, suite: str, a: str, b: str) -> PairView:
    """The pair (a, b) side by side; both must be documents the page compares."""
    state = sync(db, db_url, suite)
    for name, doc_id in (("a", a), ("b", b)):
        if doc_id not in state.docs:
            raise UserError(f"{name}: {doc_id} is not compared (only each student's latest and "
                            "best submissions and the uploaded sources are)", status=404,
                            field=name)
    with state.lock:
        pair = as_asked(state.index.pair(a, b), a)
        passages = state.index.passages(a, b)
    infos = doc_infos(db, state, {a, b})
    view = side_by_side(text_of(db, a), text_of(db, b), passages)
    return PairView(row(pair, infos), view, passages)


def as_asked(pair: SimilarPair, a: str) -> SimilarPair:
    """The pair with `a` first, as the TA asked for it (the engine orders pairs its own way)."""
    if pair.a == a:
        return pair
    return dataclasses.replace(pair, a=pair.b, b=pair.a, owner_a=pair.owner_b,
                               owner_b=pair.owner_a, a_in_b=pair.b_in_a, b_in_a=pair.a_in_b)
