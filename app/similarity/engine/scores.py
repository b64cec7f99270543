"""Scores of pairs: shared counted fingerprints over each document's own, both directions.

Scoring reads an index through `IndexView`, the few questions it asks; engine/index.py's
SimilarityIndex answers them and calls these functions, so neither module imports the other's
class (no import circle held by TYPE_CHECKING).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.similarity.engine.documents import IndexedDocument
from app.similarity.engine.kinds import PUBLIC
from app.similarity.engine.pairs import PairCounts


@dataclass(frozen=True)
class Denominators:
    """What a document's share is measured against."""

    all: int  # distinct fingerprints outside base code: used against a public source
    distinctive: int  # of those, the ones not common among students: used against a student


class IndexView(Protocol):
    """What scoring asks of an index (see app/similarity/engine/index.py for the answers)."""

    pairs: PairCounts  # counted shared fingerprints per pair of document numbers

    def is_base(self, h: int) -> bool: ...  # base code holds the hash

    def is_common(self, h: int) -> bool: ...  # too many students hold it to count between them

    def counts(self, h: int, x: IndexedDocument, y: IndexedDocument) -> bool: ...

    def by_number(self, number: int) -> IndexedDocument: ...

    def denominators(self, doc: IndexedDocument) -> Denominators: ...  # cached `denominators`


@dataclass(frozen=True)
class SimilarPair:
    """Two documents of different owners and how much of each the other contains."""

    a: str  # doc id: the submission when b is a public source, else the smaller of the two ids
    b: str  # doc id of the other document
    owner_a: str  # owner of a
    owner_b: str  # owner of b
    kind_b: str  # "submission" or "public": a is always a submission
    shared: int  # counted fingerprints both hold
    a_in_b: float  # share of a's counted fingerprints also in b, 0..1
    b_in_a: float  # share of b's counted fingerprints also in a, 0..1
    score: float  # max(a_in_b, b_in_a): shared over the smaller document; what pairs rank by


def denominators(index: IndexView, doc: IndexedDocument) -> Denominators:
    """Count doc's fingerprints that are not base code, and those also not common."""
    hashes = doc.distinct.tolist()
    outside = [h for h in hashes if not index.is_base(h)]
    return Denominators(all=len(outside),
                        distinctive=sum(1 for h in outside if not index.is_common(h)))


def make_pair(index: IndexView, x: IndexedDocument, y: IndexedDocument,
              shared: int) -> SimilarPair:
    """The pair oriented for display (submission first, else ids in order), scored."""
    if x.kind == PUBLIC or (y.kind != PUBLIC and y.doc_id < x.doc_id):
        x, y = y, x
    field = "all" if y.kind == PUBLIC else "distinctive"
    dx = getattr(index.denominators(x), field)
    dy = getattr(index.denominators(y), field)
    a_in_b = shared / dx if dx else 0.0
    b_in_a = shared / dy if dy else 0.0
    return SimilarPair(a=x.doc_id, b=y.doc_id, owner_a=x.owner, owner_b=y.owner, kind_b=y.kind,
                       shared=shared, a_in_b=a_in_b, b_in_a=b_in_a, score=max(a_in_b, b_in_a))


def top_pairs(index: IndexView, limit: int, floor: int) -> list[SimilarPair]:
    """The `limit` pairs of highest score (then most shared, then ids) among those sharing at
    least `floor` counted fingerprints; ranked on plain numbers, objects built for the top."""
    ranked = heapq.nsmallest(limit, ((_rank(index, x, y, shared), x, y, shared)
                                     for (x, y), shared in index.pairs.items() if shared >= floor))
    return [make_pair(index, index.by_number(x), index.by_number(y), shared)
            for _, x, y, shared in ranked]


def _rank(index: IndexView, x: int, y: int, shared: int) -> tuple[float, int, str, str]:
    """Sort key of a pair: -score (shared over the smaller denominator), -shared, ids in order."""
    dx, dy = index.by_number(x), index.by_number(y)
    field = "all" if PUBLIC in (dx.kind, dy.kind) else "distinctive"
    smaller = min(getattr(index.denominators(dx), field), getattr(index.denominators(dy), field))
    score = shared / smaller if smaller else 0.0
    first, second = sorted((dx.doc_id, dy.doc_id))
    return (-score, -shared, first, second)


def counted_hashes(index: IndexView, x: IndexedDocument, y: IndexedDocument) -> set[int]:
    """The fingerprints x and y share that count for this pair (recomputed, not from counts)."""
    both = np.intersect1d(x.distinct, y.distinct, assume_unique=True).tolist()
    return {h for h in both if index.counts(h, x, y)}
