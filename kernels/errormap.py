"""Where a wrong answer is wrong: the error map of a WA output, small enough to ship in a result.

A FlashAttention kernel's bugs leave patterns: a wrong last tile, every second block, one group of
columns, the batches past a grid limit. The map counts the bad values (over the tolerance, or
NaN/inf) per batch and per (row block, column group) summed over the batches, at the row tiles
32 and 64, and words what it sees in one line (kernels/errorpatterns.py). The counting streams
over the memory-mapped files (kernels/errorscan.py): bounded memory whatever the output's size.

Column groups are 8 columns wide: the finest of the usual widths (a wider group is a sum of these),
so d = 64 splits into 8 groups and a half-d bug (columns 32-63) or a float4/8-wide store bug shows,
while the map stays at most 8 groups across.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels.chunkscan import CHUNK_ELEMENTS, mapped_pair
from kernels.compare import DEFAULT_TOLERANCE, CompareError, open_values
from kernels.errorpatterns import TILES, reading
from kernels.errorscan import GROUP, Location, Profile, profile_of
from kernels.fileformat import InputHeader

MAX_CELLS = 64  # heat-map row cells per tile and batch buckets kept: the dict stays a few KB


@dataclass
class TileGrid:
    """Bad values per (row block, column group) at one row tile, summed over the batches."""

    tile: int  # rows per block (32 or 64)
    row_cell: int  # rows per heat-map cell: `tile`, or a multiple of it when N has > 64 blocks
    counts: list[list[int]]  # [cell][column group]: bad values in rows cell*row_cell.. of groups
    tail_start: int  # first row past the last full tile (N when N is a multiple of `tile`)
    tail_bad: int  # bad values in rows tail_start..N-1 (the partial last tile), all batches


@dataclass
class ErrorMap:
    """Where the bad values of one output are, and the one-line reading of it."""

    header: InputHeader  # the output's shape (B, N, d)
    tolerance: float  # absolute tolerance used
    bad: int  # values over the tolerance or NaN/inf
    nonfinite: int  # NaN/inf values in the output
    first: Location | None  # the first bad value in file order (None when there is none)
    grids: list[TileGrid]  # one per tile in TILES (32, then 64)
    batch_bucket: int  # consecutive batches per bucket of batch_counts (1 when B <= 64)
    batch_counts: list[int]  # bad values per bucket of batches (at most 64 buckets)
    batches_with_errors: int  # batches with at least one bad value
    reading: str  # one line for the student, e.g. "errors only in rows 96-127 of every batch..."
    column_group: int = GROUP  # columns per column group

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (NaN/inf spelled as strings), a few KB at most."""
        first = None if self.first is None else {
            "batch": self.first.batch, "row": self.first.row, "col": self.first.col,
            "got": _json_float(self.first.got), "want": _json_float(self.first.want)}
        return {
            "B": self.header.B, "N": self.header.N, "d": self.header.d,
            "tolerance": self.tolerance, "bad": self.bad, "nonfinite": self.nonfinite,
            "first": first, "column_group": self.column_group,
            "grids": [vars(g).copy() for g in self.grids],
            "batch_bucket": self.batch_bucket, "batch_counts": self.batch_counts,
            "batches_with_errors": self.batches_with_errors, "reading": self.reading,
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> ErrorMap:
        """Back from to_dict(); ValueError naming the field when something is missing or wrong."""
        try:
            first = data["first"]
            return ErrorMap(
                InputHeader(int(data["B"]), int(data["N"]), int(data["d"])),
                float(data["tolerance"]), int(data["bad"]), int(data["nonfinite"]),
                None if first is None else Location(
                    int(first["batch"]), int(first["row"]), int(first["col"]),
                    float(first["got"]), float(first["want"])),
                [_grid(g) for g in data["grids"]], int(data["batch_bucket"]),
                [int(c) for c in data["batch_counts"]], int(data["batches_with_errors"]),
                str(data["reading"]), int(data["column_group"]))
        except KeyError as exc:
            raise ValueError(f"error map: missing field {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise ValueError(f"error map: malformed field: {exc}") from exc


def _grid(data: dict[str, Any]) -> TileGrid:
    return TileGrid(int(data["tile"]), int(data["row_cell"]),
                    [[int(c) for c in row] for row in data["counts"]],
                    int(data["tail_start"]), int(data["tail_bad"]))


def _json_float(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def bucket(values: np.ndarray, size: int) -> np.ndarray:
    """Sums of `size` consecutive entries along the first axis (the last sum may be of fewer)."""
    count = ceil_div(len(values), size)
    padded = np.zeros((count * size, *values.shape[1:]), np.int64)
    padded[: len(values)] = values
    sums: np.ndarray = padded.reshape(count, size, *values.shape[1:]).sum(axis=1)  # Any to numpy
    return sums


def tile_grid(p: Profile, tile: int) -> TileGrid:
    """The heat map at one tile: blocks of `tile` rows, merged when there are over MAX_CELLS."""
    N = p.header.N
    row_cell = tile * ceil_div(ceil_div(N, tile), MAX_CELLS)
    tail_start = N // tile * tile
    return TileGrid(tile, row_cell, bucket(p.rows, row_cell).tolist(), tail_start,
                    int(p.rows[tail_start:].sum()))


def error_map(p: Profile, tolerance: float) -> ErrorMap:
    """The map (and its reading) of a scanned output."""
    size = ceil_div(p.header.B, MAX_CELLS)
    return ErrorMap(p.header, tolerance, p.bad, p.nonfinite, p.first,
                    [tile_grid(p, t) for t in TILES], size, bucket(p.batches, size).tolist(),
                    int(np.count_nonzero(p.batches)), reading(p))


def error_map_arrays(got: np.ndarray, want: np.ndarray, header: InputHeader,
                     tolerance: float = DEFAULT_TOLERANCE, chunk: int = CHUNK_ELEMENTS
                     ) -> ErrorMap:
    """The map of in-memory outputs (any shape, B*N*d float32 values each)."""
    got_flat = np.ascontiguousarray(got, dtype=np.float32).reshape(-1)
    want_flat = np.ascontiguousarray(want, dtype=np.float32).reshape(-1)
    for name, values in (("output", got_flat), ("expected", want_flat)):
        if values.size != header.elements:
            raise CompareError(f"{name} has {values.size:,} values, B*N*d = {header.elements:,}")

    def fetch(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        return got_flat[start:stop], want_flat[start:stop]

    return error_map(profile_of(fetch, header, tolerance, chunk), tolerance)


def error_map_files(output: str | os.PathLike[str], expected: str | os.PathLike[str],
                    header: InputHeader, tolerance: float = DEFAULT_TOLERANCE,
                    chunk: int = CHUNK_ELEMENTS) -> ErrorMap:
    """The map of an output file against the expected one; both must be header.output_bytes
    (the judge maps only a WA output, whose size it has checked): CompareError otherwise."""
    fds = []
    try:
        for path, name in ((output, "output"), (expected, "expected")):
            fds.append(_open_sized(path, name, header))
        with mapped_pair(fds[0], fds[1], header.elements) as (fetch, done):
            return error_map(profile_of(fetch, header, tolerance, chunk, done), tolerance)
    finally:
        for fd in fds:
            os.close(fd)


def _open_sized(path: str | os.PathLike[str], role: str, header: InputHeader) -> int:
    fd, size = open_values(path, role)
    if size != header.output_bytes:
        os.close(fd)
        raise CompareError(f"{role} file {path} is {size:,} bytes, the input needs "
                           f"{header.output_bytes:,}")
    return fd
