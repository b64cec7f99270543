"""One line for a student on where a wrong output is wrong, naming the tiling bug it looks like.

A reading is "errors only in <rows>, <columns> of <batches>: <why>". Each part comes from small
rules, one function each, tried in order; the first that matches describes the rows. To recognise
a new pattern, write a function Profile -> Rows | None and put it in ROW_RULES where it should
win. Tiles are tried smallest first where the pattern is "inside the tile" (the tightest fit),
so errors in rows 96-127 of N = 128 read as the last 32-row tile, not half of the last 64-row one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernels.errorscan import GROUP, Profile

TILES = (32, 64)  # the row tiles a FlashAttention kernel uses (Br), smallest first


@dataclass(frozen=True)
class Rows:
    """The rows (within a batch) that hold every bad value, and what that suggests."""

    text: str  # e.g. "rows 96-127"
    why: str  # e.g. "the last 32-row tile" ("" when nothing to add)


def bad_rows(p: Profile) -> np.ndarray:
    """Indices of the rows (within a batch) with a bad value in some batch."""
    return np.flatnonzero(p.rows.sum(axis=1))


def blocks(p: Profile, tile: int) -> np.ndarray:
    """Bad values per `tile`-row block (the last one partial when N is not a multiple)."""
    per_row = p.rows.sum(axis=1)
    padded = np.zeros(-(-len(per_row) // tile) * tile, np.int64)
    padded[: len(per_row)] = per_row
    sums: np.ndarray = padded.reshape(-1, tile).sum(axis=1)  # numpy types a reduction as Any
    return sums


def span(lo: int, hi: int, what: str = "rows") -> str:
    return f"{what[:-1]} {lo}" if lo == hi else f"{what} {lo}-{hi}"


def ranges(indices: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive runs of sorted indices as (first, last)."""
    breaks = np.flatnonzero(np.diff(indices) != 1)
    starts = [indices[0], *indices[breaks + 1]]
    ends = [*indices[breaks], indices[-1]]
    return [(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]


def partial_tile(p: Profile) -> Rows | None:
    """Only the rows past the last full tile: the tail when N is not a multiple of the tile."""
    rows, N = bad_rows(p), p.header.N
    for tile in TILES:
        start = N // tile * tile
        if tile < N and N % tile and rows[0] >= start:
            return Rows(span(int(rows[0]), int(rows[-1])),
                        f"the partial last {tile}-row tile (rows {start}-{N - 1}; "
                        f"N = {N} is not a multiple of {tile})")
    return None


def spill_into_next_batch(p: Profile) -> Rows | None:
    """Only the first rows of batches after the first: the last tile of the batch before wrote
    its rows past N (no bounds check), which are the next batch's first rows."""
    rows, N = bad_rows(p), p.header.N
    for tile in TILES:
        past = -N % tile  # rows of the last tile beyond N
        if past and rows[-1] < past and p.batches[0] == 0:
            return Rows(span(int(rows[0]), int(rows[-1])),
                        f"the last {tile}-row tile of the batch before writes its {past} rows "
                        f"past N = {N} here: check row < N before storing")
    return None


def last_tile(p: Profile) -> Rows | None:
    """Only the last row tile (full or partial) of each batch."""
    rows, N = bad_rows(p), p.header.N
    for tile in TILES:
        if tile < N and rows[0] >= (N - 1) // tile * tile:
            return Rows(span(int(rows[0]), int(rows[-1])), f"the last {tile}-row tile")
    return None


def alternate_blocks(p: Profile) -> Rows | None:
    """Only the even (or only the odd) row blocks, at least two of them."""
    for tile in TILES:
        count = -(-p.header.N // tile)
        hit = np.flatnonzero(blocks(p, tile))
        parities = set((hit % 2).tolist())
        if len(hit) >= 2 and len(parities) == 1 and count >= 4:
            kind, of_kind = ("odd", count // 2) if parities == {1} else ("even", (count + 1) // 2)
            first = [f"{b * tile}-{min(p.header.N, b * tile + tile) - 1}" for b in hit[:2]]
            why = (f"every second {tile}-row block (the {kind} ones)" if len(hit) == of_kind
                   else f"{len(hit)} of the {of_kind} {kind} {tile}-row blocks")
            return Rows(f"rows {', '.join(first)}, ...", why)
    return None


def row_span(p: Profile) -> Rows | None:
    """Any other proper subset of the rows, named by the tiles it lines up with."""
    rows, N = bad_rows(p), p.header.N
    lo, hi = int(rows[0]), int(rows[-1])
    if lo == 0 and hi == N - 1:
        return None
    for tile in reversed(TILES):  # the largest tile it lines up with
        if lo % tile == 0 and ((hi + 1) % tile == 0 or hi == N - 1):
            return Rows(span(lo, hi), span(lo // tile, hi // tile, f"{tile}-row blocks"))
    return Rows(span(lo, hi), "")


RowRule = Callable[[Profile], Rows | None]
ROW_RULES: list[RowRule] = [partial_tile, spill_into_next_batch, last_tile, alternate_blocks,
                            row_span]


def column_text(p: Profile) -> str | None:
    """The column groups holding every bad value, when not all of them."""
    hit = np.flatnonzero(p.rows.sum(axis=0))
    if len(hit) == p.rows.shape[1]:
        return None
    parts = [f"{a * GROUP}-{b * GROUP + GROUP - 1}" for a, b in ranges(hit)]
    return f"columns {', '.join(parts)}"


def batch_text(p: Profile) -> str | None:
    """The batches holding every bad value, when not all of them."""
    hit = np.flatnonzero(p.batches)
    if len(hit) == len(p.batches):
        return None
    if len(ranges(hit)) == 1:
        return span(int(hit[0]), int(hit[-1]), "batches")
    return f"{len(hit):,} of {len(p.batches):,} batches ({hit[0]} to {hit[-1]})"


def spread_text(p: Profile) -> str:
    """No rows, columns or batches stand out."""
    total = p.header.elements
    if p.bad * 2 >= total:
        return f"errors everywhere ({p.bad / total:.0%} of values): not a tiling pattern"
    return (f"errors scattered over all rows, columns and batches ({p.bad:,} of {total:,} "
            f"values): not a tiling pattern")


def one_value_text(p: Profile) -> str:
    f = p.first
    assert f is not None  # a profile with a bad value has its first
    return (f"one wrong value only, at batch {f.batch}, row {f.row}, column {f.col} "
            f"(got {f.got:.6g}, want {f.want:.6g})")


def reading(p: Profile) -> str:
    """The one line: the first row rule that matches, the columns and the batches."""
    if p.bad == 0:
        return "no errors: every value is within the tolerance"
    if p.bad == 1:
        return one_value_text(p)
    rows = next((r for rule in ROW_RULES if (r := rule(p)) is not None), None)
    cols, batches = column_text(p), batch_text(p)
    if rows is None and cols is None and batches is None:
        text = spread_text(p)
    else:
        where = ", ".join(x for x in (rows and rows.text, cols) if x)
        scope = f"{where} of {batches or 'every batch'}" if where else str(batches)
        text = f"errors only in {scope}" + (f": {rows.why}" if rows and rows.why else "")
    if p.nonfinite:
        text += f" ({p.nonfinite:,} of the bad values NaN/inf)"
    return text
