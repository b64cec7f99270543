"""The float64 CPU reference: softmax(Q K^T / sqrt(d)) V, the judge's ground truth.

Computed in float64 with the row maximum subtracted, like the course's seq-attention.c but
exact to ~1e-15. Work is split so that the score block never exceeds SCORE_BUDGET float64 values
(32 MB): many small batches go through at once, while one batch of N=32768 is split into blocks of
query rows, so no N x N matrix is ever built for large N.
"""

from __future__ import annotations

import math

import numpy as np

from kernels.fileformat import FLOAT, InputFile

NAME = "cpu-float64-v1"  # the reference version: part of the prepared cache's key
SCORE_BUDGET = 1 << 22  # float64 score values held at once


def attention_f64(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, budget: int = SCORE_BUDGET
) -> np.ndarray:
    """Attention of one (N, d) or several (B, N, d) batches, returned in float64."""
    single = q.ndim == 2
    q3, k3, v3 = (x[None] if single else x for x in (q, k, v))
    B, N, d = q3.shape
    out = np.empty((B, N, d), dtype=np.float64)
    group = max(1, budget // (N * N))
    rows = N if group > 1 else max(1, min(N, budget // N))
    for b0 in range(0, B, group):
        b1 = min(B, b0 + group)
        k64 = np.asarray(k3[b0:b1], dtype=np.float64)
        v64 = np.asarray(v3[b0:b1], dtype=np.float64)
        kt = np.ascontiguousarray(k64.transpose(0, 2, 1))  # a strided K^T is 10x slower in BLAS
        for r0 in range(0, N, rows):
            r1 = min(N, r0 + rows)
            q64 = np.asarray(q3[b0:b1, r0:r1], dtype=np.float64) * (1.0 / math.sqrt(d))
            out[b0:b1, r0:r1] = _softmax_times_v(q64 @ kt, v64)
    return out[0] if single else out


def _softmax_times_v(scores: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise softmax of `scores` (modified in place) times V."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    out: np.ndarray = (scores @ v) / total  # numpy types `@` on a bare ndarray as Any
    return out


def reference_chunk(input_file: InputFile, start: int, stop: int) -> np.ndarray:
    """Float32 output of batches start..stop-1 of an input file, shaped (stop-start, N, d)."""
    chunk = input_file.batches(start, stop)
    return attention_f64(chunk[:, 0], chunk[:, 1], chunk[:, 2]).astype(FLOAT)
