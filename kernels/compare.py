"""Compare an output with the expected one: exact size, finiteness, max abs error, first mismatches.

A test passes when every value is within `tolerance` of the expected one (|got - want| <= tolerance)
and none is NaN or infinite. The chunked, threaded scan lives in kernels/chunkscan.py; this module
checks sizes, merges the chunks' results into one report and words it for a student.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernels.chunkscan import CHUNK_ELEMENTS, KEEP, ChunkResult, scan, scan_files
from kernels.fileformat import InputHeader

DEFAULT_TOLERANCE = 5e-3
MAX_MISMATCHES = KEEP  # mismatches a report lists


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


def _json_float(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _report(
    results: list[ChunkResult], total: int, tolerance: float, shape: tuple[int, int] | None
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

    return _report(scan(fetch, got.size, tolerance, chunk), got.size, tolerance, shape)


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


def open_values(path: str | os.PathLike[str], role: str) -> tuple[int, int]:
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


def compare_files(
    output: str | os.PathLike[str],
    expected: str | os.PathLike[str],
    tolerance: float = DEFAULT_TOLERANCE,
    header: InputHeader | None = None,
    chunk: int = CHUNK_ELEMENTS,
) -> CompareReport:
    """Compare two output files; `header` (the input's shape) locates mismatches and sizes them."""
    want_fd, want_size = open_values(expected, "expected")
    try:
        if header is not None and want_size != header.output_bytes:
            raise CompareError(
                f"expected file {expected} is {want_size:,} bytes, "
                f"the input needs {header.output_bytes:,}"
            )
        got_fd, got_size = open_values(output, "output")
        try:
            if got_size != want_size:
                return _size_report(got_size, want_size, tolerance)
            shape = (header.N, header.d) if header is not None else None
            total = want_size // 4
            results = scan_files(got_fd, want_fd, total, tolerance, chunk)
            return _report(results, total, tolerance, shape)
        finally:
            os.close(got_fd)
    finally:
        os.close(want_fd)
