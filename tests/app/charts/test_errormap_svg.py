"""The error map as SVG: well-formed, one cell per (row block, column group), hot where wrong."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from app.charts.errormap import error_map_svg
from kernels.errormap import ErrorMap, error_map_arrays
from kernels.fileformat import InputHeader

SVG = "{http://www.w3.org/2000/svg}"


def last_tile_map(B: int = 6, N: int = 100, d: int = 64) -> ErrorMap:
    want = np.random.default_rng(5).uniform(-1, 1, (B, N, d)).astype(np.float32)
    got = want.copy()
    got[:, 96:, 32:] += 1.0
    got[2:4, :8, :8] += 1.0
    return error_map_arrays(got, want, InputHeader(B, N, d))


def rects(root: ET.Element, kind: str) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == kind]


def test_heat_map_has_a_cell_per_block_and_group_hot_where_wrong() -> None:
    emap = last_tile_map()
    root = ET.fromstring(error_map_svg(emap, tile=32))
    cells = rects(root, "cell")
    assert len(cells) == 4 * 8  # ceil(100 / 32) row blocks x 64 / 8 column groups
    hot = {r.findtext(f"{SVG}title") for r in cells if r.get("data-count") != "0"}
    assert "rows 96-99, columns 32-39: 192 bad values" in hot  # 6 batches x 4 rows x 8 columns
    assert "rows 0-31, columns 0-7: 128 bad values" in hot  # batches 2-3, rows 0-7
    assert len(hot) == 5
    assert sum(int(r.get("data-count", 0)) for r in cells) == emap.bad


def test_tile_64_and_the_partial_tile_marker() -> None:
    root = ET.fromstring(error_map_svg(last_tile_map(), tile=64))
    assert len(rects(root, "cell")) == 2 * 8
    tail = next(line for line in root.iter(f"{SVG}line") if line.get("class") == "tail")
    assert "rows 64-99: the partial last 64-row tile" in (tail.findtext(f"{SVG}title") or "")


def test_batch_strip_and_reading_as_title() -> None:
    emap = last_tile_map()
    root = ET.fromstring(error_map_svg(emap))
    assert root.findtext(f"{SVG}title") == emap.reading
    strip = rects(root, "batch")
    assert [int(r.get("data-count", 0)) for r in strip] == emap.batch_counts
    assert len(strip) == 6


def test_text_is_escaped() -> None:
    emap = last_tile_map()
    emap.reading = '<script>alert("x")</script> & "rows": more'
    svg = error_map_svg(emap)
    assert "<script>" not in svg
    root = ET.fromstring(svg)
    assert root.findtext(f"{SVG}title") == emap.reading


def test_an_empty_map_draws_without_hot_cells() -> None:
    want = np.zeros((2, 64, 32), np.float32)
    emap = error_map_arrays(want, want, InputHeader(2, 64, 32))
    root = ET.fromstring(error_map_svg(emap))
    assert all(r.get("data-count") == "0" for r in rects(root, "cell"))
    assert not any(line.get("class") == "tail" for line in root.iter(f"{SVG}line"))
