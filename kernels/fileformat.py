"""The homework's binary input format: read, validate and write it.

An input file is three little-endian int32 (B, N, d) followed by B batches of Q, K, V (each
N*d float32, row-major). Its size is exactly 12 + 12*B*N*d bytes; the output is 4*B*N*d bytes of
float32, no header. Big inputs (t12 is ~944 MB) are memory-mapped, never read whole.

Accepted ranges (checked here so every caller refuses the same files with the same words):
- B in 1..14000: the spec's upper bound; 1 is allowed so custom runs can try a single batch.
- N in 1..32768: any length (tails are the kernels' job), up to the spec's largest.
- d in {32, 64}: the spec's head dimensions, the ones both references are built and tested for.
- B*N*d <= 80,000,000: the real test set exceeds the spec's 56M (t12 is 78.6M).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

HEADER_BYTES = 12
MAX_B = 14_000
MAX_N = 32_768
ALLOWED_D = (32, 64)
MAX_ELEMENTS = 80_000_000
FLOAT = np.dtype("<f4")  # every value in the files: little-endian float32
_HEADER = struct.Struct("<iii")


class FormatError(ValueError):
    """A file that is not a valid homework input/output; the message is fit to show a student."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = (
            field  # which part is wrong: "header", "B", "N", "d", "elements", "size", "values"
        )
        self.message = message  # the explanation, naming the offending value


@dataclass(frozen=True)
class InputHeader:
    """The shape of one input file."""

    B: int  # batches
    N: int  # sequence length (rows of Q, K, V)
    d: int  # head dimension (columns)

    @property
    def elements(self) -> int:
        """Number of float32 values in the output (and in each of Q, K, V over all batches)."""
        return self.B * self.N * self.d

    @property
    def input_bytes(self) -> int:
        return HEADER_BYTES + 12 * self.elements

    @property
    def output_bytes(self) -> int:
        return 4 * self.elements

    def validate(self) -> InputHeader:
        """Raise FormatError naming the first field out of range; return self when all are fine."""
        if not 1 <= self.B <= MAX_B:
            raise FormatError("B", f"B = {self.B} is out of range: B must be in 1..{MAX_B}")
        if not 1 <= self.N <= MAX_N:
            raise FormatError("N", f"N = {self.N} is out of range: N must be in 1..{MAX_N}")
        if self.d not in ALLOWED_D:
            allowed = ", ".join(str(d) for d in ALLOWED_D)
            raise FormatError("d", f"d = {self.d} is not supported: d must be one of {allowed}")
        if self.elements > MAX_ELEMENTS:
            raise FormatError(
                "elements",
                f"B*N*d = {self.elements:,} is too large: the judge accepts at most "
                f"{MAX_ELEMENTS:,} (B={self.B}, N={self.N}, d={self.d})",
            )
        return self


def parse_header(data: bytes) -> InputHeader:
    """Decode and range-check the 12 header bytes."""
    if len(data) < HEADER_BYTES:
        raise FormatError(
            "header",
            f"the file is too short for a header: {len(data)} bytes, the header "
            f"(three int32: B, N, d) needs {HEADER_BYTES}",
        )
    B, N, d = _HEADER.unpack(data[:HEADER_BYTES])
    return InputHeader(B, N, d).validate()


def read_header(path: str | os.PathLike[str]) -> InputHeader:
    """Read and validate the header, and check the file's size is exactly what it announces."""
    try:
        with open(path, "rb") as f:
            header = parse_header(f.read(HEADER_BYTES))
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise FormatError("file", f"cannot read {path}: {exc.strerror or exc}") from exc
    check_size(header, size)
    return header


def check_size(header: InputHeader, size: int) -> None:
    """Refuse a truncated file or one with trailing bytes, giving both sizes."""
    if size == header.input_bytes:
        return
    what = "truncated" if size < header.input_bytes else "has trailing bytes"
    raise FormatError(
        "size",
        f"the file {what}: it is {size:,} bytes but B={header.B}, N={header.N}, d={header.d} "
        f"needs exactly 12 + 12*B*N*d = {header.input_bytes:,} bytes",
    )


@dataclass
class InputFile:
    """A validated input file, memory-mapped read-only."""

    path: Path  # where it lives
    header: InputHeader  # its shape
    data: np.ndarray  # (B, 3, N, d) float32 memmap: [b, 0] is Q, [b, 1] K, [b, 2] V

    def batch(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K, V of batch b as (N, d) float32 views."""
        return self.data[b, 0], self.data[b, 1], self.data[b, 2]

    def batches(self, start: int, stop: int) -> np.ndarray:
        """Batches start..stop-1 as a (stop-start, 3, N, d) view."""
        return self.data[start:stop]

    def chunks(self, max_elements: int = 1 << 22) -> Iterator[tuple[int, int]]:
        """(start, stop) batch ranges holding about max_elements output values each."""
        yield from batch_ranges(self.header, max_elements)


def batch_ranges(header: InputHeader, max_elements: int) -> Iterator[tuple[int, int]]:
    """Split 0..B into consecutive ranges of at most max_elements output values (>= 1 batch)."""
    step = max(1, max_elements // (header.N * header.d))
    for start in range(0, header.B, step):
        yield start, min(header.B, start + step)


def open_input(path: str | os.PathLike[str]) -> InputFile:
    """Validate the header and size, then memory-map the values."""
    header = read_header(path)
    shape = (header.B, 3, header.N, header.d)
    data = np.memmap(path, dtype=FLOAT, mode="r", offset=HEADER_BYTES, shape=shape)
    return InputFile(Path(path), header, data)


def check_finite(input_file: InputFile, max_elements: int = 1 << 22) -> None:
    """Raise FormatError(field="values") naming the first batch holding a NaN or infinity."""
    for start, stop in input_file.chunks(max_elements):
        chunk = input_file.batches(start, stop)
        if np.isfinite(chunk).all():
            continue
        b = start + int(np.argmin(np.isfinite(chunk).reshape(stop - start, -1).all(axis=1)))
        raise FormatError("values", f"batch {b} contains a NaN or infinite value")


def write_header(f: BinaryIO, header: InputHeader) -> None:
    """Write the 12-byte header (after validating it)."""
    header.validate()
    f.write(_HEADER.pack(header.B, header.N, header.d))


def write_input(path: str | os.PathLike[str], q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
    """Write a small input file from in-memory (B, N, d) arrays (tests, custom files)."""
    B, N, d = q.shape
    with open(path, "wb") as f:
        write_header(f, InputHeader(B, N, d))
        np.stack([q, k, v], axis=1).astype(FLOAT).tofile(f)


def read_output(path: str | os.PathLike[str], header: InputHeader) -> np.ndarray:
    """Memory-map an output file as (B, N, d) float32, refusing a wrong size."""
    size = os.path.getsize(path)
    if size != header.output_bytes:
        raise FormatError(
            "size", f"the output is {size:,} bytes, expected 4*B*N*d = {header.output_bytes:,}"
        )
    return np.memmap(path, dtype=FLOAT, mode="r", shape=(header.B, header.N, header.d))
