"""Which neighbours on a board need a paired comparison: the same passed count and graded score
(what app/scoreboard/ties.py lets tie), and total times closer than their two bands together
(the bands overlap: a wider net than the ties' own rule, so every pair the noise could swap is
run)."""

from __future__ import annotations

from dataclasses import dataclass

from app.scoreboard.rows import Row

PRIOR_BAND = 0.06  # a total not refined yet: +-6% (two sigma of the 3% noise of one judging);
# Settings.paired_prior_band overrides it (a noisier machine)


@dataclass(frozen=True)
class Neighbours:
    """Two rows next to each other on the board, `above` ranked first."""

    above: Row  # the faster (or equal) of the two on the board
    below: Row  # the row right under it


def band(row: Row, prior: float = PRIOR_BAND) -> float:
    """The row's total's +- in seconds: the refinement's, else `prior` times the total."""
    return row.band_s if row.band_s is not None else prior * row.time


def overlap(above: Row, below: Row, prior: float = PRIOR_BAND) -> bool:
    """Whether the two bands overlap: the order of the totals alone is not worth grading on."""
    return (above.passed == below.passed and above.passed > 0 and above.final == below.final
            and below.time - above.time <= band(above, prior) + band(below, prior))


def overlapping(rows: list[Row], prior: float = PRIOR_BAND) -> list[Neighbours]:
    """Each pair of neighbours of a ranked board whose bands overlap, best first."""
    return [Neighbours(a, b) for a, b in zip(rows, rows[1:], strict=False)
            if overlap(a, b, prior)]
