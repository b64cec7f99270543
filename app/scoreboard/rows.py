"""The scoreboard: each student's best submission, ranked by the graded score (after any late
penalty, desc), then passed (desc), then time (asc); neighbours whose totals the measured noise
does not separate share a rank ("4=", app/scoreboard/ties.py).

Frozen: students see the board as it stood at the freeze time; TAs always see it live.

Requests read the standing kept at write time (app/scoreboard/standing/) through
app/scoreboard/cache.py; this module holds the row, the shading's reference and the CSV. The
definition the standing is tested against, a board computed from every submission, lives with
the tests (tests/app/utils/board_oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.spreadsheet import csv_text
from app.scoreboard.standing.rules import (
    band_of,
    frozen_at,
    graded,
)
from flashjudge.timefmt import seconds_text

__all__ = ["Row", "band_of", "fastest_passing", "frozen_at", "to_csv"]


@dataclass(slots=True)
class Row:
    """One student's line on the board (slots: a cached board holds hundreds, and fewer
    objects make the API process's full garbage collections shorter)."""

    rank: int  # competition rank: ties share a rank (app/scoreboard/ties.py)
    user: str  # username (on the public board: the name shown, app/scoreboard/audience.py)
    display_name: str  # shown on pages
    passed: int  # AC tests of the best submission
    time: float  # sum of per-test seconds of the best submission
    score: int  # the suite's score for that submission, before any late penalty
    submission_id: int  # which submission the row is from
    tests: dict[str, dict[str, Any]]  # test id -> rules.test_cell: {"verdict", "seconds", "band_s"}
    late: bool = False  # the submission came after the due time (with a penalty)
    band_s: float | None = None  # +- of the total from the timing refinement (None: one run)
    stamp: int = 0  # the board version that last changed the row (the standing's; 0: built)
    penalty: float = 0.0  # percent the late penalty took off `score`
    alias: str | None = None  # the name the student chose for the public board
    hidden: bool = False  # the student opted out of the public board (TAs still see them)
    label: str = ""  # the rank as shown: "4", or "4=" when tied
    tie: str = ""  # why the rank is shared (or a near tie was broken): app/scoreboard/ties.py
    timed: bool = True  # False: the viewer may see no time (app/scoreboard/audience.py)

    @property
    def final(self) -> float:
        """The graded score: `score` after the late penalty, what the board ranks by."""
        return graded(self.score, self.penalty)

    def rank_fields(self) -> dict[str, Any]:
        """The rank and how it reads: they move when a neighbour moves, the rest does not."""
        return {"rank": self.rank, "rank_label": self.label or str(self.rank),
                "tie": self.tie or None}

    def to_dict(self, ta: bool = False) -> dict[str, Any]:
        """The row in the API; a TA's copy also names the student and says if they are hidden."""
        fields = {**self.rank_fields(), "user": self.user, "alias": self.alias,
                  "passed": self.passed,
                  "time": round(self.time, 6) if self.timed else None, "score": self.final,
                  "raw_score": self.score, "penalty_percent": self.penalty,
                  "tests": self.tests, "late": self.late, "band_s": self.band_s}
        return {**fields, "display_name": self.display_name, "hidden": self.hidden} if ta \
            else fields


def fastest_passing(rows: list[Row]) -> dict[str, float]:
    """test id -> the fastest passing time on the board (what each time cell is shaded against)."""
    fastest: dict[str, float] = {}
    for row in rows:
        for test_id, cell in row.tests.items():
            seconds = cell.get("seconds")
            if seconds and cell.get("verdict") == "AC":
                old = fastest.get(test_id)
                if old is None or seconds < old:
                    fastest[test_id] = seconds
    return fastest


CSV_TAIL = ["band_s", "late", "frozen_at", "penalty_percent", "raw_score", "tie", "alias"]


def to_csv(rows: list[Row], test_ids: list[str], frozen: datetime | None = None,
           ta: bool = False) -> str:
    """User | Rank | Passed | Time | Score | t01..tNN like the course's board, times in
    milliseconds' precision, then the total's band, the late mark and when the board was frozen
    (empty: live), so a frozen export says so on every row; then the late penalty and the score
    before it, why a rank is shared, and the alias. The rank reads "4=" when tied, the score is
    the graded one. A TA's copy adds the student's name and whether they are hidden."""
    extra = ["display_name", "hidden"] if ta else []
    lines: list[list[object]] = [
        ["user", "rank", "passed", "time", "score", *test_ids, *CSV_TAIL, *extra]]
    stamp = frozen.isoformat() + "Z" if frozen is not None else ""
    for r in rows:
        cells = [_cell(r.tests.get(t)) for t in test_ids]
        band = f"{r.band_s:.3f}" if r.band_s is not None else ""
        mine = [r.display_name, "yes" if r.hidden else ""] if ta else []
        time = f"{r.time:.3f}" if r.timed else ""
        lines.append([r.user, r.label or r.rank, r.passed, time, f"{r.final:g}",
                      *cells, band, "late" if r.late else "", stamp, f"{r.penalty:g}",
                      r.score, r.tie, r.alias or "", *mine])
    return csv_text(lines)


def _cell(test: dict[str, Any] | None) -> str:
    if not test:
        return ""
    if test["verdict"] == "AC" and test["seconds"] is not None:
        return seconds_text(test["seconds"])  # a kernel's 0.000196 s must not read 0.000
    return str(test["verdict"])
