"""The incremental similarity index: documents come and go one at a time, pair counts stay exact.

Per fingerprint hash the index keeps who holds it (submissions and public sources apart), and per
pair of documents the number of fingerprints they share that count. A shared fingerprint counts
for a pair when:
- no base document holds it (starter code is nobody's copy);
- the two documents have different owners, and are not both public sources;
- between two submissions only: at most `common_owners` students hold it. A passage most of the
  class has is an idiom, not a copy; ignoring it also keeps every update short (a hash's posting is
  walked only while it is rare). Against a public source every non-base fingerprint counts, so a
  public solution copied by half the class is still reported for each copier.
Adding or removing a document updates only the pairs its fingerprints touch, plus the pairs of a
hash that crosses the common threshold or becomes (or stops being) base code.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from app.similarity.engine.documents import IndexedDocument, check_new
from app.similarity.engine.errors import SimilarityError
from app.similarity.engine.fingerprints import (
    DocumentFingerprints,
    FingerprintParams,
    fingerprint_text,
)
from app.similarity.engine.kinds import BASE, PUBLIC, SUBMISSION
from app.similarity.engine.pairs import PairCounts
from app.similarity.engine.passages import Passage, shared_passages
from app.similarity.engine.scores import (
    Denominators,
    SimilarPair,
    counted_hashes,
    denominators,
    make_pair,
    top_pairs,
)


@dataclass(frozen=True)
class IndexConfig:
    """Tuning of one index (one suite's comparison)."""

    params: FingerprintParams = field(default_factory=FingerprintParams)  # k and window
    common_owners: int = 30  # a hash more students than this hold is ignored between students
    min_shared: int = 5  # pairs sharing fewer counted fingerprints are not reported


class SimilarityIndex:
    """Documents of one comparison; see the module docstring for what counts."""

    def __init__(self, config: IndexConfig | None = None) -> None:
        self.config = config or IndexConfig()
        self._docs: dict[str, IndexedDocument] = {}
        self._numbers: dict[int, IndexedDocument] = {}
        self._next = 0
        self._subs: dict[int, list[int]] = {}  # hash -> submissions holding it
        self._pubs: dict[int, list[int]] = {}  # hash -> public sources holding it
        self._base: dict[int, int] = {}  # hash -> base documents holding it
        self._owner_count: dict[int, int] = {}  # hash -> distinct students holding it
        self._owner_hashes: dict[str, dict[int, int]] = {}  # student -> hash -> their docs
        self.pairs = PairCounts()  # counted shared fingerprints per pair
        self._denominators: dict[int, Denominators] = {}  # per document, dropped on change

    def add(self, doc_id: str, owner: str, kind: str, text: str) -> DocumentFingerprints:
        """Fingerprint `text` and add it; returns the fingerprints, for the caller to store."""
        fp = fingerprint_text(text, self.config.params)
        self.add_fingerprints(doc_id, owner, kind, fp)
        return fp

    def add_fingerprints(self, doc_id: str, owner: str, kind: str,
                         fingerprints: DocumentFingerprints) -> None:
        """Add a document from stored fingerprints (no lexing): how the index is rebuilt."""
        check_new(self._docs, self.config.params, doc_id, kind, fingerprints)
        doc = IndexedDocument(doc_id, owner, kind, self._next, fingerprints,
                              fingerprints.distinct())
        self._next += 1
        self._docs[doc_id] = self._numbers[doc.number] = doc
        adders = {SUBMISSION: self._add_submission, PUBLIC: self._add_public, BASE: self._add_base}
        adders[kind](doc)
        self._denominators.clear()

    def remove(self, doc_id: str) -> None:
        """Forget a document (e.g. a student's superseded latest submission)."""
        doc = self.document(doc_id)
        self.pairs.drop_document(doc.number)
        {SUBMISSION: self._remove_submission, PUBLIC: self._remove_public,
         BASE: self._remove_base}[doc.kind](doc)
        del self._docs[doc_id], self._numbers[doc.number]
        self._denominators.clear()

    def document(self, doc_id: str) -> IndexedDocument:
        if doc_id not in self._docs:
            raise SimilarityError(f"no document {doc_id!r} in the index", field="doc_id")
        return self._docs[doc_id]

    def fingerprints(self, doc_id: str) -> DocumentFingerprints:
        return self.document(doc_id).fingerprints

    def by_number(self, number: int) -> IndexedDocument:
        return self._numbers[number]

    def __len__(self) -> int:
        return len(self._docs)

    # Results -------------------------------------------------------------------------------

    def top_pairs(self, limit: int = 50) -> list[SimilarPair]:
        """The most similar pairs across owners, highest score first."""
        return top_pairs(self, limit, self.config.min_shared)

    def pair(self, a: str, b: str) -> SimilarPair:
        """The score of one pair (any two documents, even below min_shared)."""
        x, y = self.document(a), self.document(b)
        return make_pair(self, x, y, len(counted_hashes(self, x, y)))

    def passages(self, a: str, b: str) -> list[Passage]:
        """The passages a and b share, as line ranges in each (a's lines first)."""
        x, y = self.document(a), self.document(b)
        return shared_passages(x.fingerprints, y.fingerprints, counted_hashes(self, x, y))

    def denominators(self, doc: IndexedDocument) -> Denominators:
        if doc.number not in self._denominators:
            self._denominators[doc.number] = denominators(self, doc)
        return self._denominators[doc.number]

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    # What counts -------------------------------------------------------------------------

    def is_base(self, h: int) -> bool:
        return h in self._base

    def is_common(self, h: int) -> bool:
        return self._owner_count.get(h, 0) > self.config.common_owners

    def may_pair(self, x: IndexedDocument, y: IndexedDocument) -> bool:
        """Pairs ever reported: different owners, at least one submission, no base."""
        return (x.owner != y.owner and BASE not in (x.kind, y.kind)
                and SUBMISSION in (x.kind, y.kind))

    def counts(self, h: int, x: IndexedDocument, y: IndexedDocument) -> bool:
        """Whether a hash both hold counts for the pair (x, y)."""
        if not self.may_pair(x, y) or self.is_base(h):
            return False
        return PUBLIC in (x.kind, y.kind) or not self.is_common(h)

    # Submissions -------------------------------------------------------------------------

    def _add_submission(self, doc: IndexedDocument) -> None:
        held = self._owner_hashes.setdefault(doc.owner, {})
        tally: Counter[int] = Counter()  # other document -> hashes counted with doc
        for h in doc.distinct.tolist():
            if h not in held:
                self._owner_count[h] = self._owner_count.get(h, 0) + 1
                if self._owner_count[h] == self.config.common_owners + 1 and not self.is_base(h):
                    self._student_pairs(h, -1)
            held[h] = held.get(h, 0) + 1
            holders = self._subs.setdefault(h, [])
            if not self.is_base(h):
                if not self.is_common(h):
                    tally.update(holders)
                tally.update(self._pubs.get(h, ()))
            holders.append(doc.number)
        self._pair_with(doc, tally)

    def _remove_submission(self, doc: IndexedDocument) -> None:
        held = self._owner_hashes[doc.owner]
        for h in doc.distinct.tolist():
            _discard(self._subs, h, doc.number)
            held[h] -= 1
            if held[h]:
                continue
            del held[h]
            self._owner_count[h] -= 1
            if self._owner_count[h] == self.config.common_owners and not self.is_base(h):
                self._student_pairs(h, +1)
            if not self._owner_count[h]:
                del self._owner_count[h]
        if not held:
            del self._owner_hashes[doc.owner]

    def _pair_with(self, doc: IndexedDocument, tally: Counter[int]) -> None:
        """Add each other document's count of hashes it shares with doc (one update per pair)."""
        for other, shared in tally.items():
            if self.may_pair(doc, self._numbers[other]):
                self.pairs.bump(doc.number, other, shared)

    def _student_pairs(self, h: int, delta: int) -> None:
        """h starts (+1) or stops (-1) counting between the students holding it."""
        holders = self._subs.get(h, [])
        for i, x in enumerate(holders):
            for y in holders[i + 1:]:
                if self._numbers[x].owner != self._numbers[y].owner:
                    self.pairs.bump(x, y, delta)

    # Public sources and base code ----------------------------------------------------------

    def _add_public(self, doc: IndexedDocument) -> None:
        tally: Counter[int] = Counter()
        for h in doc.distinct.tolist():
            if not self.is_base(h):
                tally.update(self._subs.get(h, ()))
            self._pubs.setdefault(h, []).append(doc.number)
        self._pair_with(doc, tally)

    def _remove_public(self, doc: IndexedDocument) -> None:
        for h in doc.distinct.tolist():
            _discard(self._pubs, h, doc.number)

    def _add_base(self, doc: IndexedDocument) -> None:
        for h in doc.distinct.tolist():
            self._base[h] = self._base.get(h, 0) + 1
            if self._base[h] == 1:
                self._all_pairs(h, -1)

    def _remove_base(self, doc: IndexedDocument) -> None:
        for h in doc.distinct.tolist():
            self._base[h] -= 1
            if not self._base[h]:
                del self._base[h]
                self._all_pairs(h, +1)

    def _all_pairs(self, h: int, delta: int) -> None:
        """h stops (-1) or starts (+1) being base code: every pair it counted for changes."""
        if not self.is_common(h):
            self._student_pairs(h, delta)
        for public in self._pubs.get(h, ()):
            for other in self._subs.get(h, ()):
                if self.may_pair(self._numbers[public], self._numbers[other]):
                    self.pairs.bump(public, other, delta)


def _discard(postings: dict[int, list[int]], h: int, number: int) -> None:
    holders = postings[h]
    holders.remove(number)
    if not holders:
        del postings[h]
