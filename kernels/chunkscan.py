"""Scanning two float32 arrays chunk by chunk on a shared thread pool: the engine of comparison.

Each chunk takes a fast path (diff, abs in place, max); only a chunk whose max is over the
tolerance (or NaN) is re-examined to count and locate its mismatches. A persistent pool of THREADS
threads (numpy releases the GIL) with one reused scratch buffer per thread means a test's
comparison pays no start-up. Files are memory-mapped (no copy out of the page cache) and each
chunk's pages are let go after it (MADV_DONTNEED: they stay in the page cache, shared, not the
judge's private memory), so the resident set grows by a few chunks whatever the file size.
`map_chunks` and `mapped_pair` run any per-chunk work the same way (kernels/errorscan.py's counts).

The files must not shrink while they are scanned (a mapped page past a new end of file faults):
the judge compares an output only after its sandbox is over and every process of it is dead, and
expected outputs are its own, replaced only by rename.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from kernels.fileformat import FLOAT

CHUNK_ELEMENTS = 1 << 19  # 2 MB of float32 per file per step (bench/compare_throughput.py)
THREADS = max(2, min(8, os.cpu_count() or 2))  # a GPU node's spare cores speed up judging
PAGE = mmap.PAGESIZE
KEEP = 5  # failing values located per chunk (the report shows the first few of the file)


@dataclass
class ChunkResult:
    """What one chunk contributes to the report."""

    max_error: float  # over finite values (0.0 when none)
    over: int  # values failing the test
    nonfinite: int  # NaN/inf values in got
    first: list[tuple[int, float, float]]  # (flat index, got, want) of the first failing values


# fetch(start, stop) -> (got, want) views of values start..stop-1; done(start, stop) after the check
Fetch = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
Done = Callable[[int, int], None]
T = TypeVar("T")
Work = Callable[[int, np.ndarray, np.ndarray], T]  # work(start, got, want) on one chunk

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()  # each thread's scratch buffer, kept across comparisons


def shared_pool() -> ThreadPoolExecutor:
    """The comparison threads, started once per process: a test's comparison pays no start-up."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="flashjudge-compare")
        return _pool


def scratch(size: int) -> np.ndarray:
    """This thread's diff buffer of at least `size` values (allocated, and faulted in, once)."""
    buf = getattr(_local, "diff", None)
    if buf is None or buf.size < size:
        buf = _local.diff = np.empty(size, dtype=FLOAT)
    return buf


def check_chunk(got: np.ndarray, want: np.ndarray, tol: float, buf: np.ndarray) -> ChunkResult:
    """Fast path: one diff, abs and max; the slow path only when that max fails."""
    diff = buf[: got.size]
    np.subtract(got, want, out=diff)
    np.abs(diff, out=diff)
    worst = diff.max()
    if worst <= tol:
        return ChunkResult(float(worst), 0, 0, [])
    return failing_chunk(got, want, diff, float(worst), tol)


def failing_chunk(
    got: np.ndarray, want: np.ndarray, diff: np.ndarray, worst: float, tol: float
) -> ChunkResult:
    """Slow path: count and locate the values over the tolerance (and the NaN/inf ones)."""
    if math.isfinite(worst):  # the common failure: wrong but finite values
        bad = diff > tol
        nonfinite, max_finite = 0, worst
    else:
        bad = ~(diff <= tol)  # NaN compares false, so it counts as bad
        finite = np.isfinite(diff)
        nonfinite = int(np.count_nonzero(~np.isfinite(got)))
        max_finite = float(diff[finite].max()) if finite.any() else 0.0
    first = [(int(i), float(got[i]), float(want[i])) for i in np.flatnonzero(bad)[:KEEP]]
    return ChunkResult(max_finite, int(np.count_nonzero(bad)), nonfinite, first)


def map_chunks(fetch: Fetch, total: int, chunk: int, work: Work[T],
               done: Done | None = None) -> list[T]:
    """Run `work(start, got, want)` on every chunk, results in file order, on the shared threads
    when there are several; `done(start, stop)` after each (where pages are let go)."""

    def one(start: int) -> T:
        stop = min(total, start + chunk)
        got, want = fetch(start, stop)
        result = work(start, got, want)
        del got, want
        if done is not None:
            done(start, stop)
        return result

    starts = range(0, total, chunk)
    if len(starts) <= 1:
        return [one(s) for s in starts]
    return list(shared_pool().map(one, starts))


def scan(fetch: Fetch, total: int, tol: float, chunk: int,
          done: Done | None = None) -> list[ChunkResult]:
    """Check all chunks (kernels.compare's report), results in file order."""

    def check(start: int, got: np.ndarray, want: np.ndarray) -> ChunkResult:
        result = check_chunk(got, want, tol, scratch(chunk))
        result.first = [(start + i, g, w) for i, g, w in result.first]
        return result

    return map_chunks(fetch, total, chunk, check, done)


class Mapped:
    """A read-only mapping of a whole float32 file, as an array, whose pages can be let go."""

    def __init__(self, fd: int, size: int) -> None:
        self.map = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        self.values = np.frombuffer(self.map, dtype=FLOAT)

    def release(self, start: int, stop: int) -> None:
        """Unmap the pages of values start..stop-1 (they stay in the page cache)."""
        begin = (4 * start) // PAGE * PAGE
        self.map.madvise(mmap.MADV_DONTNEED, begin, 4 * stop - begin)

    def close(self) -> None:
        del self.values
        with contextlib.suppress(BufferError):  # a view still alive: the GC unmaps it later
            self.map.close()


@contextlib.contextmanager
def mapped_pair(got_fd: int, want_fd: int, total: int) -> Iterator[tuple[Fetch, Done]]:
    """Both files memory-mapped: `fetch` views a chunk of each, `done` lets its pages go."""
    got, want = Mapped(got_fd, 4 * total), Mapped(want_fd, 4 * total)
    try:
        def fetch(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
            return got.values[start:stop], want.values[start:stop]

        def done(start: int, stop: int) -> None:
            got.release(start, stop)
            want.release(start, stop)

        yield fetch, done
    finally:
        got.close()
        want.close()


def scan_files(got_fd: int, want_fd: int, total: int, tolerance: float,
                    chunk: int) -> list[ChunkResult]:
    if total == 0:
        return []
    with mapped_pair(got_fd, want_fd, total) as (fetch, done):
        return scan(fetch, total, tolerance, chunk, done)
