"""The TAs' similarity page: one incremental index per suite, kept in the API process, and the
most similar pairs and side-by-side views read from it.

The index holds the candidates of app/similarity/candidates.py that have stored fingerprints.
Each request syncs it with the database: documents that stopped being a latest or best submission
leave it, new ones join it from their stored fingerprints (no lexing here: the control worker
fingerprinted them), so a page costs the changes since the last one, not the whole course. The
top pairs are kept until the documents change.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import lru_cache

from sqlalchemy.orm import Session

from app.similarity.candidates import Candidate, candidates, fingerprint_blobs, fingerprinted
from app.similarity.engine import SimilarityError, SimilarityIndex, SimilarPair, from_bytes

log = logging.getLogger(__name__)


@dataclass
class SuiteIndex:
    """One suite's index and what is in it."""

    index: SimilarityIndex = field(default_factory=SimilarityIndex)  # the engine's index
    docs: dict[str, Candidate] = field(default_factory=dict)  # doc id -> what it was added as
    stamps: dict[str, str] = field(default_factory=dict)  # doc id -> its fingerprints' stamp
    waiting: list[str] = field(default_factory=list)  # candidates without fingerprints yet
    version: int = 0  # bumped whenever documents join or leave
    top: dict[int, tuple[int, list[SimilarPair]]] = field(default_factory=dict)  # limit ->
    # (version, pairs): the last answer, valid while the version stands
    lock: threading.Lock = field(default_factory=threading.Lock)  # one sync at a time


@lru_cache(maxsize=16)
def suite_index(db_url: str, suite: str) -> SuiteIndex:
    """The process's index of one suite (of one database), built empty on first use."""
    return SuiteIndex()


def sync(db: Session, db_url: str, suite: str) -> SuiteIndex:
    """Bring the suite's index up to date with the database, and return it."""
    state = suite_index(db_url, suite)
    wanted = candidates(db, suite)
    ready = fingerprinted(db, list(wanted))
    with state.lock:
        state.waiting = sorted(set(wanted) - set(ready))
        gone = [d for d, c in state.docs.items()
                if state.stamps.get(d) != ready.get(d) or not _same(wanted[d], c)]
        for doc_id in gone:
            state.index.remove(doc_id)
            del state.docs[doc_id], state.stamps[doc_id]
        state.docs.update({d: wanted[d] for d in state.docs})  # roles (latest, best) change
        new = [d for d in ready if d not in state.docs]
        for doc_id, blob in fingerprint_blobs(db, new).items():
            _add(state, wanted[doc_id], blob, ready[doc_id])
        if gone or new:
            state.version += 1
    return state


def _same(a: Candidate, b: Candidate) -> bool:
    """Whether the index holds `a` as it holds `b` (roles do not matter to it)."""
    return (a.owner, a.kind) == (b.owner, b.kind)


def _add(state: SuiteIndex, doc: Candidate, blob: bytes, stamp: str) -> None:
    """Add one document from its stored fingerprints; one that cannot join is left waiting."""
    try:
        state.index.add_fingerprints(doc.doc_id, doc.owner, doc.kind, from_bytes(blob))
    except SimilarityError as exc:  # made with other params, or damaged: fingerprint again
        log.warning("document %s not indexed: %s", doc.doc_id, exc)
        state.waiting.append(doc.doc_id)
        return
    state.docs[doc.doc_id] = doc
    state.stamps[doc.doc_id] = stamp


def top_pairs(state: SuiteIndex, limit: int) -> list[SimilarPair]:
    """The most similar pairs, computed once per version of the documents."""
    with state.lock:
        cached = state.top.get(limit)
        if cached is None or cached[0] != state.version:
            cached = (state.version, state.index.top_pairs(limit))
            state.top[limit] = cached
        return cached[1]
