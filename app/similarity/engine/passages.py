"""Shared passages of two documents: runs of matching fingerprints, as line ranges in each.

A run is a chain of shared fingerprints that advance together in both documents (each step at most
`gap` tokens in each), so a copied function is one passage wherever it sits in the other file.
Where a region matches several places (code repeated in one file), the run with more fingerprints
wins and overlapping weaker runs are dropped, so each region is highlighted once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from app.similarity.engine.fingerprints import DocumentFingerprints


@dataclass(frozen=True)
class LineSpan:
    """Lines of one document, 1-based and inclusive."""

    first: int  # first line of the passage
    last: int  # last line of the passage (>= first)


@dataclass(frozen=True)
class Passage:
    """One shared passage, located in both documents."""

    number: int  # 1-based, in order of where the passage starts in document a
    a: LineSpan  # where it is in document a
    b: LineSpan  # where it is in document b
    fingerprints: int  # shared fingerprints inside it: its weight


@dataclass
class _Run:
    """A chain being built: fingerprint indices in a and b, in step."""

    a_idx: list[int]  # indices into a's fingerprint arrays
    b_idx: list[int]  # matching indices into b's


def shared_passages(a: DocumentFingerprints, b: DocumentFingerprints,
                    counted: set[int]) -> list[Passage]:
    """Passages made of the fingerprints in `counted` (hashes that count for this pair)."""
    gap = a.params.k + 2 * a.params.window
    runs = _chain(_matches(a, b, counted), a, b, gap)
    kept = _without_overlaps(runs, a, b)
    kept.sort(key=lambda run: int(a.positions[run.a_idx[0]]))
    return [_passage(n, run, a, b) for n, run in enumerate(kept, start=1)]


def _matches(a: DocumentFingerprints, b: DocumentFingerprints,
             counted: set[int]) -> list[tuple[int, int]]:
    """Every (index in a, index in b) with the same counted hash, in order of a then b."""
    in_b: defaultdict[int, list[int]] = defaultdict(list)
    for j, h in enumerate(b.hashes.tolist()):
        if h in counted:
            in_b[h].append(j)
    return [(i, j) for i, h in enumerate(a.hashes.tolist()) for j in in_b.get(h, ())]


def _chain(matches: list[tuple[int, int]], a: DocumentFingerprints, b: DocumentFingerprints,
           gap: int) -> list[_Run]:
    """Greedy chaining: a match extends the open run it follows closely in both documents."""
    runs: list[_Run] = []
    pa, pb = a.positions.tolist(), b.positions.tolist()
    for i, j in matches:
        best = None
        for run in runs:
            da, db = pa[i] - pa[run.a_idx[-1]], pb[j] - pb[run.b_idx[-1]]
            if 0 < da <= gap and 0 < db <= gap and (best is None or db < best[0]):
                best = (db, run)
        if best is None:
            runs.append(_Run([i], [j]))
        else:
            best[1].a_idx.append(i)
            best[1].b_idx.append(j)
    return runs


def _without_overlaps(runs: list[_Run], a: DocumentFingerprints,
                      b: DocumentFingerprints) -> list[_Run]:
    """Strongest runs first; a run overlapping a kept one (in a or in b) is dropped."""
    kept: list[_Run] = []
    spans_a: list[tuple[int, int]] = []
    spans_b: list[tuple[int, int]] = []
    k = a.params.k
    for run in sorted(runs, key=lambda r: -len(r.a_idx)):
        sa = (int(a.positions[run.a_idx[0]]), int(a.positions[run.a_idx[-1]]) + k)
        sb = (int(b.positions[run.b_idx[0]]), int(b.positions[run.b_idx[-1]]) + k)
        if any(_overlap(sa, s) for s in spans_a) or any(_overlap(sb, s) for s in spans_b):
            continue
        kept.append(run)
        spans_a.append(sa)
        spans_b.append(sb)
    return kept


def _overlap(x: tuple[int, int], y: tuple[int, int]) -> bool:
    return x[0] < y[1] and y[0] < x[1]


def _passage(number: int, run: _Run, a: DocumentFingerprints, b: DocumentFingerprints) -> Passage:
    return Passage(
        number=number,
        a=LineSpan(int(a.first_lines[run.a_idx].min()), int(a.last_lines[run.a_idx].max())),
        b=LineSpan(int(b.first_lines[run.b_idx].min()), int(b.last_lines[run.b_idx].max())),
        fingerprints=len(run.a_idx),
    )
