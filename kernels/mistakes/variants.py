"""The mistakes in the math: the scale, the row maximum, the online softmax's rescale, the final
division, the score matrix. Each is a function Sample -> Prediction, exact in float64; those on
the right scores share one exp and one product with V (softmax.parts)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from kernels.mistakes.sample import Sample
from kernels.mistakes.softmax import FLT_MAX, Prediction, Variant, attend, parts, values_of

TILES = (16, 32, 64, 128)  # key tiles (Bc) an online softmax uses, each twice the one before
OVERFLOW = math.log(FLT_MAX)  # expf overflows to inf past 88.72
EDGE = 0.01  # scores this close to OVERFLOW may go either way in the student's float32
Predict = Callable[[Sample], Prediction | None]


def scaled(factor_of_d: Callable[[int], float]) -> Predict:
    """Attention with the scores multiplied by factor_of_d(d) instead of 1/sqrt(d)."""
    def predict(sample: Sample) -> Prediction:
        p = parts(sample, factor_of_d(sample.header.d))
        return Prediction(p.ev / p.total)
    return predict


def mean_of_v(sample: Sample) -> Prediction:
    """Scores multiplied by 0: every row the mean of V."""
    mean = values_of(sample).mean(axis=1, keepdims=True)
    return Prediction(np.broadcast_to(mean, sample.got.shape).copy())


def no_max_no_scale(sample: Sample) -> Prediction | None:
    """exp(q.k) without the scale nor the row max in float32: a row overflows to inf (then
    NaN) when one score passes 88.72 or its sum passes FLT_MAX; elsewhere it is the unscaled
    softmax. Rows near either edge, or whose e V might pass FLT_MAX, are left open. None when
    nothing overflows (no trace)."""
    p = parts(sample, 1.0)
    log_total = p.m + np.log(p.total)
    log_bound = log_total + np.log(np.abs(values_of(sample)).max())  # bounds log |e V|
    overflow = (p.m > OVERFLOW + EDGE) | (log_total > OVERFLOW + EDGE)
    safe = (log_total < OVERFLOW - EDGE) & (log_bound < OVERFLOW - EDGE)
    if not overflow.any() or overflow.all():
        return None
    values = np.where(overflow, np.nan, p.ev / p.total)
    unsure = np.broadcast_to(~(overflow | safe), sample.got.shape).copy()
    return Prediction(values, unsure, {"rows": f"{int(overflow.sum()):,}"})


def tile_products(sample: Sample, tile: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per key tile of the right softmax: (its e V, its e row sum, its max score), shaped
    (nb, nr, tiles, d), (nb, nr, tiles) and (nb, nr, tiles); built from the 16-key tiles'."""
    key = ("tiles", tile)
    if key not in sample.cache:
        if tile == TILES[0]:
            sample.cache[key] = first_tiles(sample, tile)
        else:
            ev, total, top = tile_products(sample, tile // 2)
            sample.cache[key] = tuple(pairs(x, how) for x, how in
                                      ((ev, np.sum), (total, np.sum), (top, np.max)))
    found: tuple[np.ndarray, np.ndarray, np.ndarray] = sample.cache[key]
    return found


def pairs(x: np.ndarray, how: Callable[..., np.ndarray]) -> np.ndarray:
    """Tiles merged two by two (axis 2), the last alone when their count is odd."""
    count = x.shape[2]
    if count % 2:
        fill = np.zeros_like(x[:, :, :1]) if how is np.sum else np.full_like(x[:, :, :1], -np.inf)
        x = np.concatenate([x, fill], axis=2)
    return how(x.reshape(*x.shape[:2], -1, 2, *x.shape[3:]), axis=3)


def first_tiles(sample: Sample, tile: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = parts(sample, sample.scale)
    N, count = sample.header.N, -(-sample.header.N // tile)
    nb, nr = p.e.shape[:2]
    e = np.zeros((nb, nr, count * tile))
    e[..., :N] = p.e
    s = np.full((nb, nr, count * tile), -np.inf)
    s[..., :N] = sample.qk * sample.scale
    v = np.zeros((nb, count * tile, sample.header.d))
    v[:, :N] = values_of(sample)
    e4 = e.reshape(nb, nr, count, tile)
    ev = np.einsum("brtk,btkd->brtd", e4, v.reshape(nb, count, tile, -1))
    return ev, e4.sum(axis=-1), s.reshape(nb, nr, count, tile).max(axis=-1)


def no_rescale(tile: int, sum_too: bool) -> Predict:
    """The online softmax that adds each key tile's exp(s - m_seen) V without multiplying the
    accumulator by exp(m_old - m_new) when the row max grows (and, if `sum_too`, the row sum
    l neither). Each tile's terms are the right e = exp(s - m) times exp(m - m_seen)."""
    def predict(sample: Sample) -> Prediction | None:
        if tile >= sample.header.N:
            return None
        ev, total, top = tile_products(sample, tile)
        p = parts(sample, sample.scale)
        lift = np.exp(p.m - np.maximum.accumulate(top, axis=-1))  # (nb, nr, tiles)
        num = np.einsum("brt,brtd->brd", lift, ev)
        den = (lift * total).sum(axis=-1, keepdims=True) if sum_too else p.total
        return Prediction(num / den, words={"tile": str(tile)})
    return predict


def no_division(sample: Sample) -> Prediction:
    """sum_j exp(s_ij - m_i) V_j, never divided by the row sum."""
    return Prediction(parts(sample, sample.scale).ev)


def qk_swapped(sample: Sample) -> Prediction:
    """Scores K Q^T: row i holds k_i . q_j, the softmax then taken along that row."""
    s = sample.k[:, sample.rows] @ sample.q_all.transpose(0, 2, 1)
    return Prediction(attend(s * sample.scale, values_of(sample)))


def k_not_transposed(sample: Sample) -> Prediction:
    """Scores Q K with K's N x d values read as a d x N matrix (K[t*N + j] for K^T[t][j])."""
    nb, N, d = sample.k.shape
    s = sample.q @ sample.k.reshape(nb, d, N)
    return Prediction(attend(s * sample.scale, values_of(sample)))


def rescale_variants() -> tuple[Variant, ...]:
    o_only = [Variant(f"no_rescale@{t}", "the online softmax that never rescales its output "
                      "accumulator when the row max grows (key tiles of {tile}): multiply O by "
                      "exp(m_old - m_new) before adding a tile", no_rescale(t, False))
              for t in TILES]
    both = [Variant(f"no_rescale_sum@{t}", "the online softmax that rescales neither its output "
                    "accumulator nor its row sum when the row max grows (key tiles of {tile}): "
                    "multiply both by exp(m_old - m_new)", no_rescale(t, True)) for t in TILES]
    return (*o_only, *both)


MATH = (
    Variant("no_scale", "attention without the 1/sqrt(d) scale", scaled(lambda d: 1.0)),
    Variant("scale_1_over_d", "attention scaled by 1/d instead of 1/sqrt(d)",
            scaled(lambda d: 1.0 / d)),
    Variant("scale_sqrt_d", "attention scaled by sqrt(d) instead of 1/sqrt(d)",
            scaled(math.sqrt)),
    Variant("scale_zero", "attention with the scores multiplied by 0, every row the mean of V "
            "(an integer division such as 1/d or (int)(1/sqrt(d)) made the scale 0)",
            mean_of_v),
    Variant("no_max_no_scale", "attention without the 1/sqrt(d) scale and without subtracting "
            "the row max: exp overflows to inf in float32, NaN in the same {rows} rows",
            no_max_no_scale),
    *rescale_variants(),
    Variant("no_division", "attention never divided by the row sum of exp (the softmax's "
            "denominator l)", no_division),
    Variant("qk_swapped", "attention with Q and K swapped (scores K Q^T)", qk_swapped),
    Variant("k_not_transposed", "attention with K read as a d x N matrix (K[t*N + j] where "
            "K^T[t][j] is K[j*d + t])", k_not_transposed),
)
