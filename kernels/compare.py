"""Compare an output with the expected one: exact size, finiteness, max abs error, first mismatches.

A test passes when every value is within `tolerance` of the expected one (|got - want| <= tolerance)
and none is NaN or infinite. Files are memory-mapped (no copy out of the page cache) and checked in
chunks of CHUNK_ELEMENTS values by a persistent pool of THREADS threads (numpy releases the GIL),
each with its own reused scratch buffer. Each chunk takes a fast path (diff, abs in place, max);
only a chunk whose max is over the tolerance (or NaN) is re-examined to count and locate the
mismatches. After a chunk, its pages are unmapped again (MADV_DONTNEED: they stay in the page
cache, shared, not the judge's private memory), so the judge's resident set grows by at most a few
chunks whatever the file size.

The files must not shrink while they are compared (a mapped page past a new end of file faults):
the judge compares an output only after its sandbox is over and every process of it is dead, and
expected outputs are its own, replaced only by rename.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernels.fileformat import FLOAT, InputHeader

DEFAULT_TOLERANCE = 5e-3
MAX_MISMATCHES = 5
CHUNK_ELEMENTS = 1 << 19  # 2 MB of float32 per file per step (bench/compare_throughput.py)
THREADS = max(2, min(8, os.cpu_count() or 2))  # a GPU node's spare cores speed up judging
PAGE = mmap.PAGESIZE


class CompareError(ValueError):
    """A file that cannot be compared at all (missing, unreadable, expected file malformed)."""


@dataclass(frozen=True)
class Mismatch:
    """One value that is over the tolerance or not finite."""

    batch: int | None  # batch index (None when the shape is unknown)
    row: int | None  # row within the batch
    col: int | None  # column (0..d-1)
    got: float  # the output's value
    want: float  # the expected value
    index: int  # flat element index in the output

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "row": self.row,
            "col": self.col,
            "got": _json_float(self.got),
            "want": _json_float(self.want),
            "index": self.index,
        }


@dataclass
class CompareReport:
    """The outcome of one comparison."""

    ok: bool  # passed
    status: str  # "pass" | "fail" | "size" | "nonfinite"
    max_error: float | None  # max |got - want| over finite values; None when sizes differ
    over_tolerance: int  # values over the tolerance or not finite
    nonfinite: int  # NaN or infinite values in the output
    mismatches: list[Mismatch] = field(default_factory=list)  # the first MAX_MISMATCHES
    message: str = ""  # one line for a person
    tolerance: float = DEFAULT_TOLERANCE  # the tolerance used

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "max_error": self.max_error,
            "over_tolerance": self.over_tolerance,
            "nonfinite": self.nonfinite,
            "mismatches": [m.to_dict() for m in self.mismatches],
            "message": self.message,
            "tolerance": self.tolerance,
        }


@dataclass
class _ChunkResult:
    max_error: float  # over finite values (0.0 when none)
    over: int  # values failing the test
    nonfinite: int  # NaN/inf values in got
    first: list[tuple[int, float, float]]  # (flat index, got, want) of the first failing values


# fetch(start, stop) -> (got, want) views of values start..stop-1; done(start, stop) after the check
Fetch = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
Done = Callable[[int, int], None]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()  # each thread's scratch buffer, kept across comparisons


def _shared_pool() -> ThreadPoolExecutor:
    """The comparison threads, started once per process: a test's comparison pays no start-up."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="flashjudge-compare")
        return _pool


def _scratch(size: int) -> np.ndarray:
    """This thread's diff buffer of at least `size` values (allocated, and faulted in, once)."""
    buf = getattr(_local, "diff", None)
    if buf is None or buf.size < size:
        buf = _local.diff = np.empty(size, dtype=FLOAT)
    return buf


def _json_float(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _check_chunk(got: np.ndarray, want: np.ndarray, tol: float, buf: np.ndarray) -> _ChunkResult:
    """Fast path: one diff, abs and max; the slow path only when that max fails."""
    diff = buf[: got.size]
    np.subtract(got, want, out=diff)
    np.abs(diff, out=diff)
    worst = diff.max()
    if worst <= tol:
        return _ChunkResult(float(worst), 0, 0, [])
    return _failing_chunk(got, want, diff, float(worst), tol)


def _failing_chunk(
    got: np.ndarray, want: np.ndarray, diff: np.ndarray, worst: float, tol: float
) -> _ChunkResult:
    """Slow path: count and locate the values over the tolerance (and the NaN/inf ones)."""
    if math.isfinite(worst):  # the common failure: wrong but finite values
        bad = diff > tol
        nonfinite, max_finite = 0, worst
    else:
        bad = ~(diff <= tol)  # NaN compares false, so it counts as bad
        finite = np.isfinite(diff)
        nonfinite = int(np.count_nonzero(~np.isfinite(got)))
        max_finite = float(diff[finite].max()) if finite.any() else 0.0
    first = [(int(i), float(got[i]), float(want[i])) for i in np.flatnonzero(bad)[:MAX_MISMATCHES]]
    return _ChunkResult(max_finite, int(np.count_nonzero(bad)), nonfinite, first)


def _scan(fetch: Fetch, total: int, tol: float, chunk: int,
          done: Done | None = None) -> list[_ChunkResult]:
    """Check all chunks, results in file order, on the shared threads when there are several."""

    def work(start: int) -> _ChunkResult:
        stop = min(total, start + chunk)
        got, want = fetch(start, stop)
        result = _check_chunk(got, want, tol, _scratch(chunk))
        del got, want
        if done is not None:
            done(start, stop)
        result.first = [(start + i, g, w) for i, g, w in result.first]
        return result

    starts = range(0, total, chunk)
    if len(starts) <= 1:
        return [work(s) for s in starts]
    return list(_shared_pool().map(work, starts))


def _report(
    results: list[_ChunkResult], total: int, tolerance: float, shape: tuple[int, int] | None
) -> CompareReport:
    """Merge the chunks' results (in file order) into one report."""
    over = sum(r.over for r in results)
    nonfinite = sum(r.nonfinite for r in results)
    max_error = max((r.max_error for r in results), default=0.0)
    firsts = [f for r in results for f in r.first][:MAX_MISMATCHES]
    mismatches = [_mismatch(i, g, w, shape) for i, g, w in firsts]
    status = "nonfinite" if nonfinite else ("fail" if over else "pass")
    report = CompareReport(
        status == "pass", status, max_error, over, nonfinite, mismatches, tolerance=tolerance
    )
    report.message = _message(report, total)
    return report


def compare_flat(
    got: np.ndarray,
    want: np.ndarray,
    tolerance: float = DEFAULT_TOLERANCE,
    shape: tuple[int, int] | None = None,
    chunk: int = CHUNK_ELEMENTS,
) -> CompareReport:
    """Compare two flat float32 arrays of equal size; `shape` = (N, d) locates mismatches."""

    def fetch(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        return got[start:stop], want[start:stop]

    return _report(_scan(fetch, got.size, tolerance, chunk), got.size, tolerance, shape)


def _mismatch(i: int, got: float, want: float, shape: tuple[int, int] | None) -> Mismatch:
    if shape is None:
        return Mismatch(None, None, None, got, want, i)
    N, d = shape
    return Mismatch(i // (N * d), (i // d) % N, i % d, got, want, i)


def _message(report: CompareReport, total: int) -> str:
    if report.status == "pass":
        return f"pass: max error {report.max_error:.3g} <= {report.tolerance:g}"
    where = ""
    if report.mismatches:
        m = report.mismatches[0]
        at = f"({m.batch}, {m.row}, {m.col})" if m.batch is not None else f"index {m.index}"
        where = f"; first at {at}: got {m.got:.6g}, want {m.want:.6g}"
    if report.status == "nonfinite":
        return f"fail: {report.nonfinite:,} NaN/inf values in the output{where}"
    return (
        f"fail: {report.over_tolerance:,} of {total:,} values over tolerance "
        f"{report.tolerance:g}, max error {report.max_error:.3g}{where}"
    )


def compare_arrays(
    got: np.ndarray, want: np.ndarray, N: int, d: int, tolerance: float = DEFAULT_TOLERANCE
) -> CompareReport:
    """Compare in-memory outputs of any shape holding the same number of values."""
    got_flat = np.ascontiguousarray(got, dtype=np.float32).reshape(-1)
    want_flat = np.ascontiguousarray(want, dtype=np.float32).reshape(-1)
    if got_flat.size != want_flat.size:
        return _size_report(got_flat.size * 4, want_flat.size * 4, tolerance)
    return compare_flat(got_flat, want_flat, tolerance, (N, d))


def _size_report(got_bytes: int, want_bytes: int, tolerance: float) -> CompareReport:
    message = f"wrong output size: {got_bytes:,} bytes, expected {want_bytes:,}"
    return CompareReport(False, "size", None, 0, 0, [], message, tolerance)


def _open(path: str | os.PathLike[str], role: str) -> tuple[int, int]:
    """Open a float32 file for reading: (fd, size); CompareError when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise CompareError(f"cannot read {role} file {path}: {exc.strerror or exc}") from exc
    size = os.fstat(fd).st_size
    if role == "expected" and size % 4:
        os.close(fd)
        raise CompareError(f"expected file {path} is {size} bytes, not a whole number of float32")
    return fd, size


class _Mapped:
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


def _compare_mapped(got_fd: int, want_fd: int, total: int, tolerance: float,
                    chunk: int) -> list[_ChunkResult]:
    if total == 0:
        return []
    got, want = _Mapped(got_fd, 4 * total), _Mapped(want_fd, 4 * total)
    try:
        def fetch(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
            return got.values[start:stop], want.values[start:stop]

        def done(start: int, stop: int) -> None:
            got.release(start, stop)
            want.release(start, stop)

        return _scan(fetch, total, tolerance, chunk, done)
    finally:
        got.close()
        want.close()


def compare_files(
    output: str | os.PathLike[str],
    expected: str | os.PathLike[str],
    tolerance: float = DEFAULT_TOLERANCE,
    header: InputHeader | None = None,
    chunk: int = CHUNK_ELEMENTS,
) -> CompareReport:
    """Compare two output files; `header` (the input's shape) locates mismatches and sizes them."""
    want_fd, want_size = _open(expected, "expected")
    try:
        if header is not None and want_size != header.output_bytes:
            raise CompareError(
                f"expected file {expected} is {want_size:,} bytes, "
                f"the input needs {header.output_bytes:,}"
            )
        got_fd, got_size = _open(output, "output")
        try:
            if got_size != want_size:
                return _size_report(got_size, want_size, tolerance)
            shape = (header.N, header.d) if header is not None else None
            total = want_size // 4
            results = _compare_mapped(got_fd, want_fd, total, tolerance, chunk)
            return _report(results, total, tolerance, shape)
        finally:
            os.close(got_fd)
    finally:
        os.close(want_fd)
