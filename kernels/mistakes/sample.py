"""What the catalogue compares: a few batches of the test (the first wrong one and the next),
all their rows when N is small, else a subset of rows, half of them wrong ones.

Reading a sample costs a few MB whatever the output's size: whole batches of the output and the
expected output (for the rows and the index-mapped variants) and their Q, K, V in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from kernels.fileformat import InputFile, InputHeader

MAX_BATCHES = 4  # batches compared
SCORE_BUDGET = 1 << 17  # batches x rows x N scores per variant: the CPU time per variant


def bad_mask(got: np.ndarray, want: np.ndarray, tolerance: float) -> np.ndarray:
    """Values the judge calls wrong: over the tolerance, NaN or infinite."""
    with np.errstate(invalid="ignore"):
        ok: np.ndarray = np.abs(got.astype(np.float64) - want) <= tolerance
    return ~ok


def first_bad_batch(got: np.ndarray, want: np.ndarray, tolerance: float,
                    step_elements: int = 1 << 22) -> int:
    """The first batch holding a wrong value (0 when none: the caller then compares batch 0)."""
    B = got.shape[0]
    step = max(1, step_elements // max(1, got[0].size))
    for start in range(0, B, step):
        bad = bad_mask(got[start:start + step], want[start:start + step], tolerance)
        hit = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))
        if hit.size:
            return start + int(hit[0])
    return 0


def spread(indices: np.ndarray, count: int) -> np.ndarray:
    """`count` entries of `indices` evenly spaced, its first and last included."""
    if count >= len(indices):
        return indices
    at = np.unique(np.linspace(0, len(indices) - 1, count).round().astype(int))
    picked: np.ndarray = indices[at]
    return picked


def pick_rows(bad_rows: np.ndarray, N: int, count: int) -> np.ndarray:
    """`count` rows of 0..N-1: every row when they fit, else half wrong ones, half the rest."""
    if count >= N:
        return np.arange(N)
    good = np.setdiff1d(np.arange(N), bad_rows)
    half = count // 2 if len(good) else count
    picked = np.union1d(spread(bad_rows, half), spread(good, count - half))
    return np.union1d(picked, [0, N - 1])


@dataclass
class Sample:
    """The batches and rows compared, the student's values there, and what variants read."""

    inp: InputFile  # the test's input (memory-mapped)
    expected: np.ndarray  # (B, N, d) float32: the right answer of every batch (memory-mapped)
    batches: np.ndarray  # (nb,) the batch indices compared, consecutive
    rows: np.ndarray  # (nr,) the rows compared in each of them (all N when they fit)
    got: np.ndarray  # (nb, nr, d) float64: the student's values there, NaN/inf as they are
    tolerance: float  # the judge's absolute tolerance
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)  # pieces variants share

    @property
    def header(self) -> InputHeader:
        return self.inp.header

    @cached_property
    def q(self) -> np.ndarray:
        """(nb, nr, d) float64 Q of the sampled rows."""
        b = self.batches
        return np.asarray(self.inp.data[b[0]:b[-1] + 1, 0][:, self.rows], dtype=np.float64)

    @cached_property
    def q_all(self) -> np.ndarray:
        """(nb, N, d) float64 Q of the sampled batches, every row (Q and K swapped)."""
        b = self.batches
        return np.asarray(self.inp.data[b[0]:b[-1] + 1, 0], dtype=np.float64)

    @cached_property
    def k(self) -> np.ndarray:
        """(nb, N, d) float64 K of the sampled batches."""
        b = self.batches
        return np.asarray(self.inp.data[b[0]:b[-1] + 1, 1], dtype=np.float64)

    @cached_property
    def v(self) -> np.ndarray:
        """(nb, N, d) float64 V of the sampled batches."""
        b = self.batches
        return np.asarray(self.inp.data[b[0]:b[-1] + 1, 2], dtype=np.float64)

    @cached_property
    def want(self) -> np.ndarray:
        """(nb, nr, d) float64: the right answer at the sampled places."""
        b = self.batches
        return np.asarray(self.expected[b[0]:b[-1] + 1][:, self.rows], dtype=np.float64)

    @cached_property
    def qk(self) -> np.ndarray:
        """(nb, nr, N) unscaled scores Q K^T of the sampled rows: every score variant's base."""
        scores: np.ndarray = self.q @ self.k.transpose(0, 2, 1)
        return scores

    @property
    def scale(self) -> float:
        return float(1.0 / np.sqrt(self.header.d))

    def where(self) -> str:
        """What was compared, for the student: "batches 0-3", "40 rows of batches 0-1"."""
        lo, hi = int(self.batches[0]), int(self.batches[-1])
        which = f"batch {lo}" if lo == hi else f"batches {lo}-{hi}"
        if len(self.rows) == self.header.N:
            return which
        return f"{len(self.rows)} rows of {which}"


def take_sample(inp: InputFile, got_all: np.ndarray, expected: np.ndarray, tolerance: float,
                first: int | None = None) -> Sample:
    """The sample of an output `got_all` (B, N, d) against `expected` (B, N, d)."""
    B, N, _ = got_all.shape
    start = first_bad_batch(got_all, expected, tolerance) if first is None else first
    nb = min(MAX_BATCHES, B)
    start = min(start, B - nb)
    batches = np.arange(start, start + nb)
    count = max(8, SCORE_BUDGET // (nb * N))
    bad = bad_mask(got_all[start], expected[start], tolerance)
    rows = pick_rows(np.flatnonzero(bad.any(axis=1)), N, count)
    got = np.asarray(got_all[start:start + nb][:, rows], dtype=np.float64)
    return Sample(inp, expected, batches, rows, got, tolerance)
