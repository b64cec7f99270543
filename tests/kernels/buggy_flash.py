"""Buggy FlashAttention written the way a student writes it (float32, key tile by key tile),
independently of the catalogue's float64 formulas: the outputs the catalogue must name."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32


@dataclass(frozen=True)
class Bugs:
    """Which mistakes the kernel makes (all False: the right answer)."""

    scale: str = "rsqrt"  # "rsqrt" (right), "one", "inv_d", "sqrt", "zero"
    max_sub: bool = True  # subtract the running row max
    rescale_o: bool = True  # multiply O by exp(m_old - m_new)
    rescale_l: bool = True  # multiply l by exp(m_old - m_new)
    divide: bool = True  # divide by l at the end
    tail: str = ""  # the partial last key tile: "dropped", "twice", "zeros", "clamped"
    half: bool = False  # l and O kept in float16 between tiles
    tile: int = 32  # key tile (Bc)


def scale_of(bugs: Bugs, d: int) -> np.float32:
    return F32({"rsqrt": 1 / np.sqrt(d), "one": 1.0, "inv_d": 1 / d, "sqrt": np.sqrt(d),
                "zero": 0.0}[bugs.scale])


def key_tile(k: np.ndarray, v: np.ndarray, k0: int, bugs: Bugs) -> tuple[np.ndarray, ...]:
    """The tile's keys and values as the buggy loader fills them."""
    N, T = len(k), bugs.tile
    idx = np.arange(k0, k0 + T)
    if bugs.tail == "clamped":
        idx = np.minimum(idx, N - 1)
    elif bugs.tail == "zeros":
        kt, vt = np.zeros((T, k.shape[1]), F32), np.zeros((T, v.shape[1]), F32)
        real = idx[idx < N]
        kt[: len(real)], vt[: len(real)] = k[real], v[real]
        return kt, vt
    else:
        idx = idx[idx < N]
    return k[idx], v[idx]


def flash_batch(q: np.ndarray, k: np.ndarray, v: np.ndarray, bugs: Bugs) -> np.ndarray:
    """One batch through the online softmax with the given bugs."""
    N, d = q.shape
    acc_t = np.float16 if bugs.half else F32
    m = np.full((N, 1), -np.inf, F32)
    total, out = np.zeros((N, 1), acc_t), np.zeros((N, d), acc_t)
    starts = list(range(0, N, bugs.tile))
    if bugs.tail == "dropped" and N % bugs.tile:
        starts = starts[:-1]
    if bugs.tail == "twice" and N % bugs.tile:
        starts.append(starts[-1])
    for k0 in starts:
        kt, vt = key_tile(k, v, k0, bugs)
        s = (q @ kt.T) * scale_of(bugs, d)
        m_new = np.maximum(m, s.max(axis=1, keepdims=True)) if bugs.max_sub else np.zeros_like(m)
        p = np.exp(s - m_new)
        alpha = np.exp(m - m_new) if bugs.max_sub else F32(1)
        total = ((total * alpha if bugs.rescale_l else total) + p.sum(1, keepdims=True))
        out = ((out * alpha if bugs.rescale_o else out) + p @ vt)
        total, out, m = total.astype(acc_t), out.astype(acc_t), m_new
    result = out.astype(F32) / total.astype(F32) if bugs.divide else out.astype(F32)
    return result.astype(F32)


def flash(qkv: np.ndarray, bugs: Bugs) -> np.ndarray:
    """(B, N, d) float32 output of (B, 3, N, d) inputs."""
    with np.errstate(all="ignore"):
        return np.stack([flash_batch(q, k, v, bugs) for q, k, v in qkv.astype(F32)])
