"""Response shapes of /api/similarity (TAs): pairs, one pair's passages, uploaded sources."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class Document(BaseModel):
    """One side of a pair."""

    doc_id: str  # "s<submission id>" or "p<source id>"
    kind: str  # submission | public | base
    who: str  # the student's username, or the source's name
    submission_id: int | None
    roles: list[str]  # "latest" and/or "best"
    created_at: datetime | None  # UTC
    verdict: str | None


class Pair(BaseModel):
    """Two documents of different owners and how much they share."""

    a: Document  # a submission
    b: Document  # another student's submission, or a public source
    score: float  # shared fingerprints over the smaller document, 0..1
    a_in_b: float  # share of a found in b
    b_in_a: float  # share of b found in a
    shared: int  # shared fingerprints that count


class Pairs(BaseModel):
    """The most similar pairs of the service's suite."""

    suite: str
    documents: int  # documents compared
    waiting: int  # documents whose fingerprints have not arrived yet
    pairs: list[Pair]  # most similar first


class PassageOut(BaseModel):
    """A shared passage as line ranges (1-based, inclusive) in each document."""

    number: int
    a_first: int
    a_last: int
    b_first: int
    b_last: int
    fingerprints: int  # shared fingerprints inside it


class PairDetail(BaseModel):
    """One pair with its shared passages."""

    pair: Pair
    passages: list[PassageOut]


class Source(BaseModel):
    """A source a TA uploaded."""

    id: int
    doc_id: str  # "p<id>"
    suite: str
    kind: str  # public | base
    name: str
    created_at: datetime  # UTC
    fingerprinted: bool  # its fingerprints are stored


class Sent(BaseModel):
    """Fingerprinting requests sent to the control worker."""

    sent: int


class Deleted(BaseModel):
    """A source removed from the comparison."""

    id: int
