"""Which neighbours on a board need a paired comparison: the same passed count and graded score
(what app/scoreboard/ties.py lets tie), and total times closer than their two bands together
(the bands overlap: a wider net than the ties' own rule, so every pair the noise could swap is
run)."""

from __future__ import annotations

from dataclasses import dataclass

from app.scoreboard.rows import Row

LEAST_BAND = 0.04  # the least band of a total, as a share of it: the refinement's band is the
# noise within one judging, but two judgings of the same program spread 3.2-4.6% in total (a
# worker's state between them); Settings.paired_least_band overrides it (a noisier machine)


@dataclass(frozen=True)
class Neighbours:
    """Two rows next to each other on the board, `above` ranked first."""

    above: Row  # the faster (or equal) of the two on the board
    below: Row  # the row right under it


def band(row: Row, least: float = LEAST_BAND) -> float:
    """The row's total's +- in seconds: the refinement's, never under `least` of the total."""
    return max(row.band_s or 0.0, least * row.time)


def overlap(above: Row, below: Row, least: float = LEAST_BAND) -> bool:
    """Whether the two bands overlap: the order of the totals alone is not worth grading on."""
    return (above.passed == below.passed and above.passed > 0 and above.final == below.final
            and below.time - above.time <= band(above, least) + band(below, least))


def overlapping(rows: list[Row], least: float = LEAST_BAND) -> list[Neighbours]:
    """Each pair of neighbours of a ranked board whose bands overlap, best first."""
    return [Neighbours(a, b) for a, b in zip(rows, rows[1:], strict=False)
            if overlap(a, b, least)]
