"""The error map of a WA test as SVG: where the wrong values are, under the one-line reading.

A heat map of bad values per (row block, column group), summed over the batches (query rows run
left to right, column groups top to bottom: up to 64 x 8 cells), the partial last tile marked, and
a strip of bad values per bucket of batches below. Plain SVG text in the style of the package
(app/charts/): no JavaScript, every label escaped, a <title> tooltip on each cell.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from app.charts.submission import Frame, _open, _text
from kernels.errormap import ErrorMap, TileGrid

CELL_HEIGHT = 18  # px per column group
STRIP_HEIGHT = 16  # px of the per-batch strip
EMPTY = "#f4f4f4"  # a cell without a bad value
BAD = "#d62728"  # a cell's colour, its opacity growing with its count


def _fill(count: int, most: int) -> str:
    if count == 0 or most == 0:
        return f'fill="{EMPTY}"'
    return f'fill="{BAD}" fill-opacity="{0.2 + 0.8 * count / most:.2f}"'


def _cell(x: float, y: float, w: float, h: float, count: int, most: int, tip: str,
          kind: str) -> str:
    return (f'<rect class="{kind}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'{_fill(count, most)} stroke="#fff" stroke-width="0.5" data-count="{count}">'
            f"<title>{escape(tip)}</title></rect>")


def _heat(emap: ErrorMap, grid: TileGrid, frame: Frame, top: float) -> list[str]:
    """One rect per (row cell, column group), the axes' labels, the partial-tile marker."""
    width = frame.width - frame.left - frame.right
    cw = width / len(grid.counts)
    most = max((c for row in grid.counts for c in row), default=0)
    parts = [_text(frame.left, top - 6, f"bad values per {grid.row_cell}-row block x "
                   f"{emap.column_group} columns, summed over {emap.header.B:,} batches")]
    for i, row in enumerate(grid.counts):
        parts += [_cell(frame.left + i * cw, top + g * CELL_HEIGHT, cw, CELL_HEIGHT, count, most,
                        f"{_rows(emap, grid, i)}, {_cols(emap, g)}: {count:,} bad values", "cell")
                  for g, count in enumerate(row)]
    parts += _labels(emap, grid, frame, top)
    if grid.tail_start < emap.header.N:
        x = frame.left + grid.tail_start / (len(grid.counts) * grid.row_cell) * width
        bottom = top + len(grid.counts[0]) * CELL_HEIGHT
        parts.append(f'<line class="tail" x1="{x:.1f}" y1="{top - 2}" x2="{x:.1f}" '
                     f'y2="{bottom + 2}" stroke="#000" stroke-dasharray="3,2">'
                     f"<title>{escape(_tail_tip(grid, emap.header.N))}</title></line>")
    return parts


def _rows(emap: ErrorMap, grid: TileGrid, cell: int) -> str:
    last = min(emap.header.N, (cell + 1) * grid.row_cell) - 1
    return f"rows {cell * grid.row_cell}-{last}"


def _cols(emap: ErrorMap, group: int) -> str:
    width = emap.column_group
    return f"columns {group * width}-{group * width + width - 1}"


def _labels(emap: ErrorMap, grid: TileGrid, frame: Frame, top: float) -> list[str]:
    """Column groups on the left; the first row of every fourth of the row cells below."""
    groups, cells = len(grid.counts[0]), len(grid.counts)
    cw = (frame.width - frame.left - frame.right) / cells
    bottom = top + groups * CELL_HEIGHT + 12
    parts = [_text(frame.left - 4, top + g * CELL_HEIGHT + 13,
                   _cols(emap, g).replace("columns", "cols"), "end") for g in range(groups)]
    parts.append(_text(frame.left - 4, bottom, "row", "end"))
    step = max(1, cells // 4)
    parts += [_text(frame.left + i * cw, bottom, str(i * grid.row_cell))
              for i in range(0, cells, step)]
    return parts


def _tail_tip(grid: TileGrid, N: int) -> str:
    return (f"rows {grid.tail_start}-{N - 1}: the partial last {grid.tile}-row tile, "
            f"{grid.tail_bad:,} bad values")


def _strip(emap: ErrorMap, frame: Frame, top: float) -> list[str]:
    """One rect per bucket of batches."""
    B, size = emap.header.B, emap.batch_bucket
    cw = (frame.width - frame.left - frame.right) / max(1, len(emap.batch_counts))
    most = max(emap.batch_counts, default=0)
    per = "batch" if size == 1 else f"{size:,} batches"
    parts = [_text(frame.left, top - 6, f"bad values per {per}: {emap.batches_with_errors:,} "
                   f"of {B:,} batches have some")]
    for i, count in enumerate(emap.batch_counts):
        lo, hi = i * size, min(B, (i + 1) * size) - 1
        tip = f"batch {lo}: {count:,} bad values" if lo == hi else \
            f"batches {lo}-{hi}: {count:,} bad values"
        parts.append(_cell(frame.left + i * cw, top, cw, STRIP_HEIGHT, count, most, tip, "batch"))
    parts.append(_text(frame.left - 4, top + 12, "batches", "end"))
    return parts


def error_map_svg(emap: ErrorMap, tile: int = 32, width: int = 700) -> str:
    """The map at row tile `tile` (32 or 64; the first grid if absent), its reading on top."""
    grid = next((g for g in emap.grids if g.tile == tile), emap.grids[0])
    groups = len(grid.counts[0]) if grid.counts else 0
    heat_top = 62
    strip_top = heat_top + groups * CELL_HEIGHT + 40
    frame = Frame(width=width, height=strip_top + STRIP_HEIGHT + 10, left=70, right=20)
    head, _, why = emap.reading.partition(": ")
    parts = _open(frame, head, emap.reading)
    if why:
        parts.append(_text(frame.width / 2, 34, why, "middle"))
    parts += _heat(emap, grid, frame, heat_top)
    parts += _strip(emap, frame, strip_top)
    parts.append("</svg>")
    return "\n".join(parts)
