"""Stored form of a document's fingerprints, so the index is rebuilt without re-lexing.

Two encodings of the same content: JSON (a JSON column, readable) and bytes (a bytea/blob column,
about 20 bytes per fingerprint: int64 hashes, int32 positions and lines, little-endian). Both
carry k and window, because fingerprints made with other params never match.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

from app.similarity.engine.errors import SimilarityError
from app.similarity.engine.fingerprints import DocumentFingerprints, FingerprintParams

FORMAT = "flashjudge-fingerprints/1"
_MAGIC = b"FJFP\x01"
_HEADER = struct.Struct("<5sIII")  # magic+version, k, window, fingerprint count
_ARRAYS = ("hashes", "positions", "first_lines", "last_lines")


def to_json(fp: DocumentFingerprints) -> str:
    """JSON text: {"format", "k", "window", "hashes", "positions", "first_lines", "last_lines"}."""
    body: dict[str, Any] = {"format": FORMAT, "k": fp.params.k, "window": fp.params.window}
    body.update({name: getattr(fp, name).tolist() for name in _ARRAYS})
    return json.dumps(body, separators=(",", ":"))


def from_json(text: str) -> DocumentFingerprints:
    """Inverse of to_json; SimilarityError(field="fingerprints") on anything else."""
    try:
        body = json.loads(text)
        if body.get("format") != FORMAT:
            raise ValueError(f"format is {body.get('format')!r}, expected {FORMAT!r}")
        params = FingerprintParams(k=int(body["k"]), window=int(body["window"]))
        arrays = [np.array(body[name], dtype=np.int64) for name in _ARRAYS]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SimilarityError(f"stored fingerprints are not readable: {exc}",
                              field="fingerprints") from exc
    return _checked(params, arrays)


def to_bytes(fp: DocumentFingerprints) -> bytes:
    """Compact binary form: header, then the four arrays one after the other."""
    header = _HEADER.pack(_MAGIC, fp.params.k, fp.params.window, len(fp))
    return b"".join([header, fp.hashes.astype("<i8").tobytes(),
                     *(getattr(fp, name).astype("<i4").tobytes() for name in _ARRAYS[1:])])


def from_bytes(data: bytes) -> DocumentFingerprints:
    """Inverse of to_bytes; SimilarityError(field="fingerprints") on a wrong or cut blob."""
    if len(data) < _HEADER.size or data[:5] != _MAGIC:
        raise SimilarityError("stored fingerprints are not in the flashjudge binary format",
                              field="fingerprints")
    _, k, window, count = _HEADER.unpack_from(data)
    if len(data) != _HEADER.size + 20 * count:
        raise SimilarityError(f"stored fingerprints are cut: {len(data)} bytes for {count}",
                              field="fingerprints")
    hashes = np.frombuffer(data, "<i8", count, _HEADER.size).astype(np.int64)
    offset = _HEADER.size + 8 * count
    rest = [np.frombuffer(data, "<i4", count, offset + 4 * count * i).astype(np.int64)
            for i in range(3)]
    return _checked(FingerprintParams(k=k, window=window), [hashes, *rest])


def _checked(params: FingerprintParams, arrays: list[np.ndarray]) -> DocumentFingerprints:
    if len({len(a) for a in arrays}) != 1 or params.k < 1 or params.window < 1:
        raise SimilarityError("stored fingerprints are inconsistent (array lengths or params)",
                              field="fingerprints")
    return DocumentFingerprints(params, *arrays)
