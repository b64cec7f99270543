"""The error map on outputs with planted bugs: each tiling pattern gives its map and its reading."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kernels.compare import CompareError
from kernels.errormap import ErrorMap, error_map_arrays, error_map_files
from kernels.fileformat import InputHeader
from tests.peak_rss import peak_rss_growth_mb

Plant = Callable[[np.ndarray], object]  # changes a (B, N, d) copy of the expected output in place


def planted(B: int, N: int, d: int, plant: Plant, chunk: int = 1 << 19) -> ErrorMap:
    want = np.random.default_rng(7).uniform(-1, 1, (B, N, d)).astype(np.float32)
    got = want.copy()
    plant(got)
    return error_map_arrays(got, want, InputHeader(B, N, d), chunk=chunk)


def grid(emap: ErrorMap, tile: int) -> np.ndarray:
    return np.array(next(g.counts for g in emap.grids if g.tile == tile))


def test_wrong_partial_last_tile_is_the_tail_of_every_batch() -> None:
    emap = planted(6, 100, 64, lambda o: o[:, 96:].__iadd__(1.0))
    assert emap.reading == ("errors only in rows 96-99 of every batch: the partial last 32-row "
                            "tile (rows 96-99; N = 100 is not a multiple of 32)")
    tiles = {g.tile: (g.tail_start, g.tail_bad) for g in emap.grids}
    assert tiles == {32: (96, 6 * 4 * 64), 64: (64, 6 * 4 * 64)}
    assert grid(emap, 32)[:3].sum() == 0 and grid(emap, 32)[3].sum() == emap.bad


def test_wrong_last_full_tile() -> None:
    emap = planted(5, 128, 32, lambda o: o[:, 96:].__iadd__(0.01))
    assert emap.reading == "errors only in rows 96-127 of every batch: the last 32-row tile"
    assert grid(emap, 64).tolist() == [[0] * 4, [5 * 32 * 8] * 4]  # half of the last 64 block


@pytest.mark.parametrize("tile", [32, 64])
def test_every_second_block_wrong(tile: int) -> None:
    def plant(o: np.ndarray) -> None:
        for start in range(tile, 512, 2 * tile):
            o[:, start:start + tile] *= 2

    emap = planted(3, 512, 32, plant)
    assert emap.reading.endswith(f"of every batch: every second {tile}-row block (the odd ones)")
    per_block = grid(emap, tile).sum(axis=1)
    assert (per_block[1::2] > 0).all() and (per_block[::2] == 0).all()


def test_one_column_range_wrong() -> None:
    emap = planted(4, 256, 64, lambda o: o[:, :, 32:].__isub__(1.0))
    assert emap.reading == "errors only in columns 32-63 of every batch"
    per_group = grid(emap, 32).sum(axis=0)
    assert (per_group[:4] == 0).all() and (per_group[4:] == 4 * 256 * 8).all()
    assert emap.column_group == 8


def test_rows_past_n_written_into_the_next_batch() -> None:
    """A last tile stored without `row < N` overwrites the next batch's first rows."""
    emap = planted(8, 100, 32, lambda o: o[1:, :28].__iadd__(3.0))
    assert emap.reading.startswith("errors only in rows 0-27 of batches 1-7: the last 32-row "
                                   "tile of the batch before writes its 28 rows past N = 100")
    assert emap.batches_with_errors == 7 and emap.batch_counts[0] == 0


def test_only_some_batches_wrong() -> None:
    emap = planted(20, 64, 32, lambda o: o[5:10].__iadd__(1.0))
    assert emap.reading == "errors only in batches 5-9"
    assert emap.batch_counts == [0] * 5 + [64 * 32] * 5 + [0] * 10 and emap.batch_bucket == 1


def test_rows_and_columns_together() -> None:
    emap = planted(2, 128, 64, lambda o: o[:, 96:, 32:].__iadd__(1.0))
    assert emap.reading == ("errors only in rows 96-127, columns 32-63 of every batch: "
                            "the last 32-row tile")


def test_everything_wrong_is_not_a_tiling_pattern() -> None:
    emap = planted(3, 256, 32, lambda o: o.__imul__(-1.0))
    assert emap.reading.startswith("errors everywhere (")
    assert emap.reading.endswith("not a tiling pattern")


def test_sparse_errors_everywhere_read_as_scattered() -> None:
    def plant(o: np.ndarray) -> None:
        o.reshape(-1)[::97] += 1.0

    emap = planted(16, 128, 32, plant)
    assert emap.reading.startswith("errors scattered over all rows, columns and batches (")


def test_one_nan_is_located() -> None:
    def plant(o: np.ndarray) -> None:
        o[3, 17, 5] = np.nan

    emap = planted(6, 64, 32, plant)
    assert emap.bad == 1 and emap.nonfinite == 1
    assert emap.reading.startswith("one wrong value only, at batch 3, row 17, column 5 (got nan")
    assert emap.first is not None and (emap.first.batch, emap.first.row, emap.first.col) == \
        (3, 17, 5)
    assert grid(emap, 32)[0, 0] == 1 and grid(emap, 32).sum() == 1
    json.dumps(emap.to_dict(), allow_nan=False)


def test_nan_in_a_pattern_is_counted_in_the_reading() -> None:
    emap = planted(2, 128, 32, lambda o: o[:, 96:].__imul__(np.nan))
    assert emap.nonfinite == emap.bad == 2 * 32 * 32
    assert emap.reading.endswith(f"({emap.bad:,} of the bad values NaN/inf)")


def test_a_right_output_has_an_empty_map() -> None:
    emap = planted(2, 64, 32, lambda o: o.__iadd__(1e-3))
    assert emap.bad == 0 and emap.first is None and grid(emap, 32).sum() == 0
    assert emap.reading == "no errors: every value is within the tolerance"


@pytest.mark.parametrize("chunk", [32 * 7, 100 * 64 - 64, 1 << 19])
def test_chunks_across_batch_boundaries_give_the_same_map(chunk: int) -> None:
    """Chunks smaller than a batch, straddling batches, and of many whole batches agree."""

    def plant(o: np.ndarray) -> None:
        o[2:, 90:, 8:16] += 1.0
        o[4, 0, 0] = np.inf

    emap = planted(9, 100, 32, plant, chunk=chunk)
    assert emap.to_dict() == planted(9, 100, 32, plant).to_dict()
    assert emap.bad == 7 * 10 * 8 + 1 and emap.first is not None and emap.first.row == 90


def test_dict_round_trips_and_stays_small() -> None:
    many = planted(13600, 128, 32, lambda o: o[::3, :, :8].__iadd__(1.0))
    long = planted(2, 32768, 64, lambda o: o.__iadd__(1.0))
    for emap in (many, long):
        text = json.dumps(emap.to_dict(), allow_nan=False)
        assert len(text) < 8000, len(text)
        assert ErrorMap.from_dict(json.loads(text)) == emap
    assert len(many.batch_counts) == 64 and many.batch_bucket == 213
    assert sum(many.batch_counts) == many.bad and many.batches_with_errors == 4534
    assert [len(g.counts) for g in long.grids] == [64, 64]  # 1024 and 512 blocks, merged


def test_from_dict_names_a_missing_field() -> None:
    data = planted(2, 64, 32, lambda o: None).to_dict()
    del data["grids"]
    with pytest.raises(ValueError, match="'grids'"):
        ErrorMap.from_dict(data)


def test_files_map_like_arrays_and_refuse_wrong_sizes(tmp_path: Path) -> None:
    header = InputHeader(4, 100, 64)
    want = np.random.default_rng(3).uniform(-1, 1, header.elements).astype(np.float32)
    got = want.reshape(4, 100, 64).copy()
    got[:, 64:] += 1.0
    want.tofile(tmp_path / "want.bin")
    got.tofile(tmp_path / "got.bin")
    emap = error_map_files(tmp_path / "got.bin", tmp_path / "want.bin", header, chunk=1000)
    assert emap == error_map_arrays(got, want, header)
    assert "the partial last 64-row tile" in emap.reading
    with pytest.raises(CompareError, match="output file .* is 102,400 bytes, the input needs"):
        error_map_files(tmp_path / "got.bin", tmp_path / "want.bin", InputHeader(4, 100, 32))


def test_large_file_maps_in_bounded_memory(tmp_path: Path) -> None:
    """Two 512 MB outputs (sparse zeros) with a negative tolerance, so that every value is bad
    and every chunk takes the slow path: the peak RSS still grows by < 64 MB."""
    for name in ("got.bin", "want.bin"):
        with open(tmp_path / name, "wb") as f:
            f.truncate(512 << 20)
    growth = peak_rss_growth_mb(f"""
        from kernels.errormap import error_map_files
        from kernels.fileformat import InputHeader
        emap = error_map_files({str(tmp_path / "got.bin")!r}, {str(tmp_path / "want.bin")!r},
                               InputHeader(128, 16384, 64), tolerance=-1.0)
        assert emap.bad == 128 * 16384 * 64, emap.bad
    """)
    assert growth < 64, f"peak RSS grew by {growth} MB"
