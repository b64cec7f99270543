"""The float64 pieces every variant is built from: a softmax over weighted keys times V, and the
running maximum an online (tiled) softmax sees key tile by key tile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kernels.mistakes.sample import Sample

UNDERFLOW = 600.0  # exp(-600) = 3e-261: smaller terms are dropped (exact zeros)
FLT_MAX = float(np.finfo(np.float32).max)  # float32 overflows past this: inf, then NaN


@dataclass
class Prediction:
    """What a mistake outputs at the sampled places."""

    values: np.ndarray  # (nb, nr, d) float64; NaN where the mistake gives NaN or inf
    unsure: np.ndarray | None = None  # (nb, nr, d) bool: values it leaves open (not compared)
    words: dict[str, str] = field(default_factory=dict)  # fills the variant's sentence


@dataclass(frozen=True)
class Variant:
    """One classic mistake: its id, its sentence and the function computing its output."""

    name: str  # stable id, e.g. "no_scale" or "no_rescale@32" (stored with the result)
    sentence: str  # completes "your output equals ...", with {fields} from Prediction.words
    predict: Callable[[Sample], Prediction | None]  # None: it cannot show on this test
    exact: bool = True  # False: a rounding mistake, matched by the size of its errors


@dataclass
class Parts:
    """One softmax's pieces, shared by the variants built on it: exp(s - m), m, l = sum exp(s - m)
    and (exp(s - m)) V, each over the sampled rows."""

    e: np.ndarray  # (nb, nr, N) exp(s - m)
    m: np.ndarray  # (nb, nr, 1) the row max
    total: np.ndarray  # (nb, nr, 1) the row sum of e
    ev: np.ndarray  # (nb, nr, d) e V

    def key_sums(self, v: np.ndarray, start: int, weight: float) -> tuple[np.ndarray, ...]:
        """(e V, l) with keys start.. counted `weight` times instead of once."""
        tail_e = self.e[..., start:]
        extra = weight - 1.0
        return (self.ev + extra * (tail_e @ v[:, start:]),
                self.total + extra * tail_e.sum(axis=-1, keepdims=True))


def exp_shifted(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    """exp(s - m), exactly 0 below exp(-UNDERFLOW): subnormal doubles (in exp, or in the
    products with V) make the work 100 times slower (unscaled scores reach s - m = -1000)."""
    x = s - m
    e: np.ndarray = np.exp(x, where=x > -UNDERFLOW, out=np.zeros_like(x))
    return e


def parts(sample: Sample, factor: float) -> Parts:
    """The softmax of the sampled scores times `factor`, computed once per sample and factor."""
    key = ("parts", factor)
    if key not in sample.cache:
        s = sample.qk * factor
        m = s.max(axis=-1, keepdims=True)
        e = exp_shifted(s, m)
        sample.cache[key] = Parts(e, m, e.sum(axis=-1, keepdims=True), e @ values_of(sample))
    found: Parts = sample.cache[key]
    return found


def attend(scores: np.ndarray, v: np.ndarray, weights: np.ndarray | None = None,
           pad: int = 0) -> np.ndarray:
    """softmax(scores) V over the last axis, each key counted `weights` times (None: once),
    plus `pad` zero keys (score 0, value 0) that only add to the denominator."""
    m = scores.max(axis=-1, keepdims=True)
    if pad:
        m = np.maximum(m, 0.0)
    e = exp_shifted(scores, m)
    if weights is not None:
        e *= weights
    total = e.sum(axis=-1, keepdims=True) + pad * np.exp(-m)
    out: np.ndarray = (e @ v) / total
    return out


def running_max(scores: np.ndarray, tile: int) -> np.ndarray:
    """For each key, the row maximum an online softmax has seen once that key's tile is in
    (the maximum over every tile up to and including it), shaped like `scores`."""
    N = scores.shape[-1]
    count = -(-N // tile)
    padded = np.full((*scores.shape[:-1], count * tile), -np.inf)
    padded[..., :N] = scores
    per_tile = padded.reshape(*scores.shape[:-1], count, tile).max(axis=-1)
    seen = np.maximum.accumulate(per_tile, axis=-1)
    spread_out: np.ndarray = np.repeat(seen, tile, axis=-1)[..., :N]
    return spread_out


def values_of(sample: Sample) -> np.ndarray:
    """(nb, N, d) float64 V of the sampled batches."""
    return sample.v


def key_span(lo: int, hi: int) -> str:
    return f"key {lo}" if lo == hi else f"keys {lo}-{hi}"
