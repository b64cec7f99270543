"""The mistakes at the end of a sequence whose N is not a multiple of the tile (hw4-mini has
N = 100, 33, 1000): the last partial tile of query rows never written, or the last partial tile
of keys dropped, counted twice, padded with zero keys still in the softmax, or filled by
clamping the index to the last key. Several tiles can give the same output (N = 100: tiles 16
and 32 both end at row 96), so the sentences name the rows and keys, not the tile."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernels.mistakes.sample import Sample
from kernels.mistakes.softmax import Prediction, Variant, key_span, parts, values_of
from kernels.mistakes.variants import TILES

Predict = Callable[[Sample], Prediction | None]


def tail_start(N: int, tile: int) -> int | None:
    """The first index of the partial last tile; None when N is a multiple of the tile."""
    return None if N % tile == 0 else N // tile * tile


def rows_unwritten(tile: int, fill: float) -> Predict:
    """Rows of the partial last row tile never written (the grid or loop stops at N / tile):
    zeros from a fresh buffer, or NaN where the judge poisons O (cuda-kernel)."""
    def predict(sample: Sample) -> Prediction | None:
        N = sample.header.N
        start = tail_start(N, tile)
        if start is None or start == 0:
            return None
        values = sample.want.copy()
        values[:, sample.rows >= start] = fill
        rows = f"rows {start}-{N - 1}" if start < N - 1 else f"row {start}"
        return Prediction(values, words={"rows": rows, "N": str(N)})
    return predict


def key_weights(tile: int, kind: str) -> Predict:
    """Keys of the partial last key tile counted with another weight: 0 (dropped), 2 (twice),
    or the last key counted for every missing one of the tile (an index clamped to N - 1)."""
    def predict(sample: Sample) -> Prediction | None:
        N = sample.header.N
        start = tail_start(N, tile)
        if start is None or (kind == "dropped" and start == 0):
            return None
        p = parts(sample, sample.scale)
        if kind == "clamped":
            ev, total = p.key_sums(values_of(sample), N - 1, float(start + tile - N + 1))
        else:
            ev, total = p.key_sums(values_of(sample), start, 0.0 if kind == "dropped" else 2.0)
        return Prediction(ev / total,
                          words={"keys": key_span(start, N - 1), "N": str(N),
                                 "times": str(start + tile - N + 1)})
    return predict


def zero_padded(tile: int) -> Predict:
    """The partial last key tile filled with zero keys whose scores (0) are not masked."""
    def predict(sample: Sample) -> Prediction | None:
        N = sample.header.N
        start = tail_start(N, tile)
        if start is None:
            return None
        pad = start + tile - N
        p = parts(sample, sample.scale)
        return Prediction(p.ev / (p.total + pad * np.exp(-p.m)),
                          words={"pad": str(pad), "N": str(N)})
    return predict


def tail_variants() -> tuple[Variant, ...]:
    found: list[Variant] = []
    for t in TILES:
        found += [
            Variant(f"rows_unwritten@{t}", "the right answer with {rows} left as zeros: "
                    "the partial last tile of query rows (N = {N}) is never computed",
                    rows_unwritten(t, 0.0)),
            Variant(f"rows_unwritten_nan@{t}", "the right answer with {rows} never written "
                    "(NaN, as the judge fills O before solve()): the partial last tile of query "
                    "rows (N = {N}) is never computed", rows_unwritten(t, np.nan)),
            Variant(f"keys_dropped@{t}", "attention without {keys}: the partial last key tile "
                    "(N = {N}) is left out of the softmax", key_weights(t, "dropped")),
            Variant(f"keys_twice@{t}", "attention with {keys} counted twice: the partial last "
                    "key tile (N = {N}) is added a second time", key_weights(t, "twice")),
            Variant(f"keys_zero_padded@{t}", "attention with {pad} extra zero keys in the "
                    "softmax: the partial last key tile (N = {N}) is padded with zeros whose "
                    "scores are not masked with -inf", zero_padded(t)),
            Variant(f"keys_clamped@{t}", "attention with the last key counted {times} times: the "
                    "partial last key tile (N = {N}) is filled by clamping the key index to N - 1",
                    key_weights(t, "clamped")),
        ]
    return tuple(found)


TAILS = tail_variants()
