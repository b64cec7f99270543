"""Accumulating in half precision: no exact output to match (every program rounds in its own
order), so the variant is a simulation, an online softmax over key tiles of 32 keeping its row
sum and output accumulator in float16, and it is matched by the size of its errors
(kernels/mistakes/match.py: the student's rms error within a factor of NOISE_FACTOR of the
simulation's), not by its values. TF32 tensor cores (10-bit mantissas, like float16) look the
same, and the sentence says so."""

from __future__ import annotations

import numpy as np

from kernels.mistakes.sample import Sample
from kernels.mistakes.softmax import Prediction, Variant, values_of

TILE = 32  # key tile of the simulation


def half_accumulation(sample: Sample) -> Prediction:
    """The online softmax with l and O rounded to float16 after every key tile."""
    s = (sample.qk * sample.scale).astype(np.float32)
    v = values_of(sample).astype(np.float16).astype(np.float32)
    shape = sample.got.shape
    m = np.full((*shape[:2], 1), -np.inf, np.float32)
    total = np.zeros((*shape[:2], 1), np.float16)
    out = np.zeros(shape, np.float16)
    for k0 in range(0, s.shape[-1], TILE):
        tile = s[..., k0:k0 + TILE]
        m_new = np.maximum(m, tile.max(axis=-1, keepdims=True))
        p = np.exp(tile - m_new).astype(np.float16).astype(np.float32)
        alpha = np.exp(m - m_new)
        total = (total * alpha + p.sum(axis=-1, keepdims=True)).astype(np.float16)
        out = (out * alpha + p @ v[:, k0:k0 + TILE]).astype(np.float16)
        m = m_new
    return Prediction(out.astype(np.float64) / total.astype(np.float64))


PRECISION = (
    Variant("half_accumulation", "attention accumulated in half precision (float16 row sums "
            "and output accumulators, or TF32 tensor cores)", half_accumulation, exact=False),
)
