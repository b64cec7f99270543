"""Similarity engine for TAs: which submissions share code, and where.

Pure library: no database, no I/O. The service keeps one `SimilarityIndex` per suite, adds each
student's latest and best submissions as they arrive (removing the ones they supersede), the
public sources and the base code TAs upload, stores each document's fingerprints (`to_json` /
`to_bytes`) and rebuilds the index from them (`add_fingerprints`) without re-lexing.

How: MOSS's method. The source is lexed and normalized (tokens.py: comments and whitespace
dropped, identifiers -> I, literals -> L, keywords, CUDA qualifiers and operators kept), hashed in
k-grams and winnowed (fingerprints.py); each fingerprint keeps its line span. The index
(index.py) counts, per pair of owners' documents, the fingerprints they share that are not base
code, as an inverted index updated per document; scores.py turns counts into shares, passages.py
turns shared fingerprints into line ranges, sidebyside.py into a page's rows.

Why our own ~900 lines and not copydetect (0.5.0, on PyPI): copydetect is built for one batch
run over directories. Its boilerplate is subtracted when each file is fingerprinted (a new base
file means fingerprinting everything again), it compares every pair of files each run (no
inverted index, nothing incremental), it has no notion of owners, its fingerprints carry
character offsets of its filtered text rather than source lines, it imports matplotlib and tqdm,
and it lexes with pygments, which we measured at 20 ms for a 300-line kernel against 1.2 ms for
the two-pass regular expression lexer here (3000 submissions: a minute against 4 seconds).
"""

from app.similarity.engine.documents import IndexedDocument
from app.similarity.engine.errors import SimilarityError
from app.similarity.engine.fingerprints import (
    DocumentFingerprints,
    FingerprintParams,
    fingerprint_text,
)
from app.similarity.engine.index import IndexConfig, SimilarityIndex
from app.similarity.engine.kinds import BASE, KINDS, PUBLIC, SUBMISSION
from app.similarity.engine.passages import LineSpan, Passage
from app.similarity.engine.scores import SimilarPair
from app.similarity.engine.sidebyside import SideBySide, ViewLine, side_by_side
from app.similarity.engine.storage import from_bytes, from_json, to_bytes, to_json

__all__ = [
    "BASE", "KINDS", "PUBLIC", "SUBMISSION", "DocumentFingerprints", "FingerprintParams",
    "IndexConfig", "IndexedDocument", "LineSpan", "Passage", "SideBySide", "SimilarPair",
    "SimilarityError", "SimilarityIndex", "ViewLine", "fingerprint_text", "from_bytes",
    "from_json", "side_by_side", "to_bytes", "to_json",
]
