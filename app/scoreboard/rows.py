"""The scoreboard: each student's best submission, ranked by passed (desc) then time (asc).

Frozen: students see the board as it stood at the freeze time; TAs always see it live.

Requests read the standing kept at write time (app/scoreboard/standing/) through
app/scoreboard/cache.py; this module holds the row, the shading's reference and the CSV. The
definition the standing is tested against, a board computed from every submission, lives with
the tests (tests/app/utils/board_oracle.py).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.scoreboard.standing.rules import (
    band_of,
    frozen_at,
)
from flashjudge.timefmt import seconds_text

__all__ = ["Row", "band_of", "fastest_passing", "frozen_at", "to_csv"]


@dataclass(slots=True)
class Row:
    """One student's line on the board (slots: a cached board holds hundreds, and fewer
    objects make the API process's full garbage collections shorter)."""

    rank: int  # competition rank: ties share a rank
    user: str  # username
    display_name: str  # shown on pages
    passed: int  # AC tests of the best submission
    time: float  # sum of per-test seconds of the best submission
    score: int  # the suite's score for that submission
    submission_id: int  # which submission the row is from
    tests: dict[str, dict[str, Any]]  # test id -> rules.test_cell: {"verdict", "seconds", "band_s"}
    late: bool = False  # the submission came after the due time (with a penalty)
    band_s: float | None = None  # +- of the total from the timing refinement (None: one run)
    stamp: int = 0  # the board version that last changed the row (the standing's; 0: built)

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "user": self.user, "passed": self.passed,
                "time": round(self.time, 6), "score": self.score, "tests": self.tests,
                "late": self.late, "band_s": self.band_s}


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


def to_csv(rows: list[Row], test_ids: list[str], frozen: datetime | None = None) -> str:
    """User | Rank | Passed | Time | Score | t01..tNN like the course's board, times in
    milliseconds' precision, then the total's band, the late mark and when the board was frozen
    (empty: live), so a frozen export says so on every row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["user", "rank", "passed", "time", "score", *test_ids, "band_s", "late",
                     "frozen_at"])
    stamp = frozen.isoformat() + "Z" if frozen is not None else ""
    for r in rows:
        cells = [_cell(r.tests.get(t)) for t in test_ids]
        band = f"{r.band_s:.3f}" if r.band_s is not None else ""
        writer.writerow([r.user, r.rank, r.passed, f"{r.time:.3f}", r.score, *cells, band,
                         "late" if r.late else "", stamp])
    return out.getvalue()


def _cell(test: dict[str, Any] | None) -> str:
    if not test:
        return ""
    if test["verdict"] == "AC" and test["seconds"] is not None:
        return seconds_text(test["seconds"])  # a kernel's 0.000196 s must not read 0.000
    return str(test["verdict"])
