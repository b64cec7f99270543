"""Malformed input files are refused with the offending field named; valid ones map correctly."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from kernels.fileformat import (
    FormatError,
    InputHeader,
    check_finite,
    open_input,
    read_header,
    read_output,
    write_input,
)


def raw_file(path: Path, B: int, N: int, d: int, payload_floats: int | None = None) -> Path:
    """A file with header (B, N, d) and `payload_floats` zero floats (default: the right count)."""
    count = 3 * B * N * d if payload_floats is None else payload_floats
    path.write_bytes(struct.pack("<iii", B, N, d) + bytes(4 * count))
    return path


def small_input(path: Path, B: int = 3, N: int = 5, d: int = 32) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-3, 3, (B, N, d)).astype(np.float32) for _ in range(3))
    write_input(path, q, k, v)
    return q, k, v


def test_valid_file_maps_batches_in_q_k_v_order(tmp_path: Path) -> None:
    q, k, v = small_input(tmp_path / "in.bin")
    f = open_input(tmp_path / "in.bin")
    assert f.header == InputHeader(3, 5, 32)
    assert f.header.input_bytes == (tmp_path / "in.bin").stat().st_size
    for b in range(3):
        for got, want in zip(f.batch(b), (q[b], k[b], v[b]), strict=True):
            np.testing.assert_array_equal(got, want)
    assert f.batches(1, 3).shape == (2, 3, 5, 32)
    check_finite(f)


@pytest.mark.parametrize(
    ("header", "field", "words"),
    [
        ((0, 128, 32), "B", "B must be in 1..14000"),
        ((14001, 128, 32), "B", "B = 14001"),
        ((-5, 128, 32), "B", "B = -5"),
        ((2, 0, 32), "N", "N must be in 1..32768"),
        ((2, 65536, 32), "N", "N = 65536"),
        ((2, 128, 48), "d", "d must be one of 32, 64"),
        ((14000, 128, 64), "elements", "114,688,000 is too large"),
    ],
)
def test_out_of_range_headers_name_the_field(
    tmp_path: Path, header: tuple[int, int, int], field: str, words: str
) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(struct.pack("<iii", *header))
    with pytest.raises(FormatError, match=words) as info:
        read_header(path)
    assert info.value.field == field


def test_t12_sized_header_is_accepted() -> None:
    assert InputHeader(9600, 128, 64).validate().elements == 78_643_200


def test_short_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.bin"
    path.write_bytes(b"\x01\x00\x00\x00\x02")
    with pytest.raises(FormatError, match="5 bytes.*needs 12") as info:
        read_header(path)
    assert info.value.field == "header"


@pytest.mark.parametrize(
    ("floats", "words"), [(3 * 2 * 4 * 32 - 1, "truncated"), (3 * 2 * 4 * 32 + 3, "trailing bytes")]
)
def test_wrong_size_gives_both_sizes(tmp_path: Path, floats: int, words: str) -> None:
    path = raw_file(tmp_path / "in.bin", 2, 4, 32, floats)
    with pytest.raises(FormatError, match=words) as info:
        open_input(path)
    assert info.value.field == "size"
    assert f"{path.stat().st_size:,} bytes" in str(info.value) and "3,084 bytes" in str(info.value)


def test_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read"):
        read_header(tmp_path / "nope.bin")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_name_the_batch(tmp_path: Path, bad: float) -> None:
    q, k, v = small_input(tmp_path / "in.bin")
    v[2, 4, 31] = bad
    write_input(tmp_path / "in.bin", q, k, v)
    with pytest.raises(FormatError, match="batch 2") as info:
        check_finite(open_input(tmp_path / "in.bin"))
    assert info.value.field == "values"


def test_output_of_wrong_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "out.bin"
    path.write_bytes(bytes(4 * 2 * 4 * 32 - 4))
    with pytest.raises(FormatError, match="expected 4\\*B\\*N\\*d = 1,024"):
        read_output(path, InputHeader(2, 4, 32))
