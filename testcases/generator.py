"""The deterministic input generator: same test and seed, byte-identical file on any machine.

numpy's distribution methods (Generator.uniform, ...) may change between numpy versions, so they
are not used. Each batch b has its own stream: PCG64 seeded by SeedSequence([seed, B, N, d, b])
(both algorithms are fixed by numpy's stability promise), read with `random_raw`. Each 64-bit word
gives two values: every little-endian 32-bit half keeps its top 24 bits u, mapped to
(u - 2^23) * scale / 2^23, an exact float64 product rounded once to float32: uniform in
[-scale, scale).

Files are written chunk by chunk (CHUNK_ELEMENTS values at a time), so t12's 944 MB input needs a
few MB of memory; per-batch streams also mean any batch can be regenerated on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from kernels.atomicfile import atomic_write
from kernels.fileformat import FLOAT, InputHeader, batch_ranges, write_header
from testcases.suite import SuiteError, TestSpec

GENERATOR_VERSION = 1  # bump when the bytes change: part of the prepared cache's key
CHUNK_ELEMENTS = 1 << 21  # values generated and written per step (8 MB of float32)
_HALF = 1 << 23


def effective_seed(spec: TestSpec, seed: int | None = None) -> int:
    """The seed a test is generated from: the override when given, else the suite's."""
    actual = spec.seed if seed is None else int(seed)
    if actual < 0:
        raise SuiteError(f"seed {actual} is negative: seeds are integers >= 0")
    return actual


def batch_values(header: InputHeader, seed: int, b: int, scale: float = 3.0) -> np.ndarray:
    """Batch b's Q, K, V as one (3, N, d) float32 array."""
    values = _to_float(_batch_raw(header, seed, b), scale)[: 3 * header.N * header.d]
    return values.reshape(3, header.N, header.d)


def _batch_raw(header: InputHeader, seed: int, b: int) -> np.ndarray:
    """The batch's 3*N*d/2 (rounded up) raw 64-bit words."""
    entropy = [seed, header.B, header.N, header.d, b]
    bits = np.random.PCG64(np.random.SeedSequence(entropy))
    return bits.random_raw((3 * header.N * header.d + 1) // 2)


def _to_float(raw: np.ndarray, scale: float) -> np.ndarray:
    """Map raw words to float32 in [-scale, scale), two values per word, byte order fixed."""
    halves = np.ascontiguousarray(raw, dtype="<u8").view("<u4")
    ints = (halves >> np.uint32(8)).astype(np.int32)
    ints -= _HALF
    values = ints.astype(np.float64)
    values *= scale / _HALF
    return values.astype(FLOAT)


def chunk_values(
    header: InputHeader, seed: int, start: int, stop: int, scale: float = 3.0, kind: str = "uniform"
) -> np.ndarray:
    """Batches start..stop-1 as a (stop-start, 3, N, d) float32 array."""
    per_batch = 3 * header.N * header.d
    flat = np.empty((stop - start, per_batch), dtype=FLOAT)
    for b in range(start, stop):
        flat[b - start] = _to_float(_batch_raw(header, seed, b), scale)[:per_batch]
    out = flat.reshape(stop - start, 3, header.N, header.d)
    if kind == "zero-q":
        out[:, 0] = 0.0  # all scores equal: the softmax is uniform and O = mean(V)
    return out


def write_input(
    path: str | os.PathLike[str],
    spec: TestSpec,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write the test's input file atomically; progress(batches_done, B) after each chunk."""
    header = spec.header
    actual_seed = effective_seed(spec, seed)
    with atomic_write(path) as f:
        write_header(f, header)
        for start, stop in batch_ranges(header, CHUNK_ELEMENTS // 3):
            chunk_values(header, actual_seed, start, stop, spec.scale, spec.values).tofile(f)
            if progress is not None:
                progress(stop, header.B)
