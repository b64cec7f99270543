"""Shared-fingerprint counts per pair of documents, kept sparse: only pairs sharing something."""

from __future__ import annotations

from collections.abc import Iterator

_LOW = (1 << 32) - 1


class PairCounts:
    """(x, y) -> how many counted fingerprints documents x and y share; x < y, internal numbers.
    A pair is stored under one int, x << 32 | y: a tuple key would cost ~60 more bytes a pair."""

    def __init__(self) -> None:
        self._shared: dict[int, int] = {}
        self._partners: dict[int, set[int]] = {}  # document -> documents it shares with

    def bump(self, x: int, y: int, delta: int) -> None:
        """Add delta to the pair's count; a pair falling to zero is forgotten."""
        key = _key(x, y)
        value = self._shared.get(key, 0) + delta
        if value > 0:
            self._shared[key] = value
            self._partners.setdefault(x, set()).add(y)
            self._partners.setdefault(y, set()).add(x)
            return
        self._shared.pop(key, None)
        self._unlink(x, y)
        self._unlink(y, x)

    def drop_document(self, x: int) -> None:
        """Forget every pair of a document that leaves the index."""
        for y in self._partners.pop(x, set()):
            self._shared.pop(_key(x, y), None)
            self._unlink(y, x)

    def get(self, x: int, y: int) -> int:
        return self._shared.get(_key(x, y), 0)

    def items(self) -> Iterator[tuple[tuple[int, int], int]]:
        """((x, y), shared) for every pair sharing something, x < y."""
        return (((key >> 32, key & _LOW), shared) for key, shared in self._shared.items())

    def __len__(self) -> int:
        return len(self._shared)

    def _unlink(self, x: int, y: int) -> None:
        partners = self._partners.get(x)
        if partners is not None:
            partners.discard(y)
            if not partners:
                del self._partners[x]


def _key(x: int, y: int) -> int:
    return (x << 32) | y if x < y else (y << 32) | x
