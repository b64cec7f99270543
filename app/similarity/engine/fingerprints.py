"""k-gram hashes of the normalized token stream, winnowed as MOSS does.

Every k consecutive tokens are hashed (a polynomial hash over stable per-token ids, so stored
fingerprints stay comparable across processes and Python versions); in every window of `window`
consecutive hashes the smallest is kept (the rightmost on ties). Any passage of at least
k + window - 1 tokens shared by two documents therefore shares at least one fingerprint, and a
document keeps about 2 / (window + 1) of its k-grams.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from app.similarity.engine.tokens import TokenStream, normalize

_BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial hash (the FNV prime)
_MASK = np.uint64(2**63 - 1)  # hashes fit a signed 64-bit column (PostgreSQL bigint)


@dataclass(frozen=True)
class FingerprintParams:
    """How documents are fingerprinted; only fingerprints made with equal params compare."""

    k: int = 20  # tokens per k-gram: shorter shared runs are noise (MOSS's noise threshold)
    window: int = 8  # winnowing window: runs of k + window - 1 tokens are always caught


@dataclass(frozen=True)
class DocumentFingerprints:
    """One document's winnowed fingerprints, in source order; four arrays of equal length."""

    params: FingerprintParams  # the k and window they were made with
    hashes: np.ndarray  # int64 k-gram hash of each fingerprint
    positions: np.ndarray  # int64 index of the k-gram's first token in the normalized stream
    first_lines: np.ndarray  # int64 1-based source line of the k-gram's first token
    last_lines: np.ndarray  # int64 1-based source line of the k-gram's last token

    def __len__(self) -> int:
        return len(self.hashes)

    def distinct(self) -> np.ndarray:
        """The sorted distinct hashes: what similarity scores count."""
        return np.unique(self.hashes)


def fingerprint_text(text: str, params: FingerprintParams | None = None) -> DocumentFingerprints:
    """Lex, normalize, hash and winnow one source text."""
    return fingerprint_tokens(normalize(text), params or FingerprintParams())


def fingerprint_tokens(stream: TokenStream, params: FingerprintParams) -> DocumentFingerprints:
    """Fingerprints of an already normalized stream; fewer than k tokens give none."""
    k = params.k
    if len(stream.tokens) < k:
        return empty_fingerprints(params)
    kgrams = kgram_hashes(np.array([token_id(t) for t in stream.tokens], dtype=np.uint64), k)
    positions = winnow(kgrams, params.window)
    lines = np.array(stream.lines, dtype=np.int64)
    return DocumentFingerprints(
        params=params,
        hashes=kgrams[positions].astype(np.int64),
        positions=positions.astype(np.int64),
        first_lines=lines[positions],
        last_lines=lines[positions + k - 1],
    )


def empty_fingerprints(params: FingerprintParams) -> DocumentFingerprints:
    """A document with no fingerprints (too short, or only comments)."""
    none = np.zeros(0, dtype=np.int64)
    return DocumentFingerprints(params, none, none, none, none)


@lru_cache(maxsize=4096)
def token_id(token: str) -> int:
    """A stable 64-bit id per normalized token (blake2b, not Python's salted hash())."""
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


def kgram_hashes(ids: np.ndarray, k: int) -> np.ndarray:
    """Hash of every k consecutive ids: sum of id[i+j] * BASE^(k-1-j) modulo 2^64, 63 bits kept."""
    powers = np.array([pow(int(_BASE), k - 1 - j, 2**64) for j in range(k)], dtype=np.uint64)
    windows = sliding_window_view(ids, k)
    with np.errstate(over="ignore"):
        return (windows * powers).sum(axis=1, dtype=np.uint64) & _MASK


def winnow(hashes: np.ndarray, window: int) -> np.ndarray:
    """Sorted positions chosen by winnowing: the rightmost minimum of every window."""
    if len(hashes) <= window:
        return np.array([len(hashes) - 1 - int(np.argmin(hashes[::-1]))], dtype=np.int64)
    windows = sliding_window_view(hashes, window)[:, ::-1]
    rightmost = window - 1 - np.argmin(windows, axis=1)
    return np.unique(np.arange(len(windows)) + rightmost)
