"""A document as the index holds it, and the checks a new one must pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.similarity.engine.errors import SimilarityError
from app.similarity.engine.fingerprints import DocumentFingerprints, FingerprintParams
from app.similarity.engine.kinds import KINDS


@dataclass(frozen=True)
class IndexedDocument:
    """One document as the index knows it."""

    doc_id: str  # the caller's id (e.g. a submission id), unique in the index
    owner: str  # the student (or uploader) it belongs to; same-owner pairs are never reported
    kind: str  # "submission" | "public" | "base"
    number: int  # internal small integer, in order of addition
    fingerprints: DocumentFingerprints  # all winnowed fingerprints, kept for passages
    distinct: np.ndarray  # sorted distinct hashes: what counting walks


def check_new(docs: dict[str, IndexedDocument], params: FingerprintParams, doc_id: str,
              kind: str, fp: DocumentFingerprints) -> None:
    """SimilarityError naming the field when a document cannot join the index."""
    if doc_id in docs:
        raise SimilarityError(f"document {doc_id!r} is already in the index", field="doc_id")
    if kind not in KINDS:
        raise SimilarityError(f"kind {kind!r} is not one of {', '.join(KINDS)}", field="kind")
    if fp.params != params:
        raise SimilarityError(f"fingerprints made with {fp.params}, the index uses {params}",
                              field="fingerprints")
