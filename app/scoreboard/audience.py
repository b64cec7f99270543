"""Who sees which names and numbers on the board: a student may choose an alias for the public
board or opt out of it; TAs see everyone, with both the alias and the real name; while an
assignment shows verdicts only (app/course/visibility.py), its students' board has no time in
it at all and ranks by graded score and passed tests alone (an order by time would tell who is
faster), the `VERDICTS` audience.

Every board is one snapshot of every row (app/scoreboard/boards.py); what leaves the service for
a non-TA goes through `public` first, so the public JSON, CSV and page cannot carry the
username or display name of an aliased student, nor any row of a hidden one. Ranks are the
board's own, counted over everyone, so a hidden student keeps the rank they would have and the
public board shows a gap where they stand; they see their rank privately (`own`).
"""

from __future__ import annotations

import dataclasses

from app.course import visibility
from app.scoreboard.rows import Row

PUBLIC, TAS, VERDICTS = "public", "ta", "verdicts"  # the audiences a board is made for


def audience(is_ta: bool, level: str = visibility.ALL) -> str:
    """The board a viewer gets, by role and the assignment's `visibility.board_level`."""
    if is_ta:
        return TAS
    return VERDICTS if level == visibility.VERDICTS else PUBLIC


def shown(row: Row) -> str:
    """The name the public board shows: the alias when the student chose one."""
    return row.alias or row.user


def public(rows: list[Row]) -> list[Row]:
    """The rows anyone may see: no hidden student, an aliased one under the alias alone."""
    return [dataclasses.replace(r, user=shown(r), display_name="") if r.alias else r
            for r in rows if not r.hidden]


def ranked_for(rows: list[Row], who: str) -> list[Row]:
    """Every row (hidden ones too) ranked as `who`'s board ranks them: a viewer's own place."""
    return untimed(rows) if who == VERDICTS else rows


def rows_for(rows: list[Row], who: str) -> list[Row]:
    if who == TAS:
        return rows
    return public(untimed(rows) if who == VERDICTS else rows)


def untimed(rows: list[Row]) -> list[Row]:
    """Every row without a time (total, band, each test's), ranked again by graded score and
    passed tests alone over every student (hidden ones keep their place), by name within a
    shared rank."""
    ordered = sorted(rows, key=lambda r: (-r.final, -r.passed, shown(r)))
    out: list[Row] = []
    for i, r in enumerate(ordered):
        tied = i > 0 and (r.final, r.passed) == (ordered[i - 1].final, ordered[i - 1].passed)
        rank = out[-1].rank if tied else i + 1
        shared = tied or (i + 1 < len(ordered) and (r.final, r.passed)
                          == (ordered[i + 1].final, ordered[i + 1].passed))
        out.append(dataclasses.replace(
            r, rank=rank, label=f"{rank}=" if shared else str(rank), tie="", timed=False,
            band_s=None, tests={t: {"verdict": c.get("verdict"), "seconds": None,
                                    "band_s": None} for t, c in r.tests.items()}))
    return out


def names(rows: list[Row]) -> dict[str, str]:
    """username -> the name their public row goes by (hidden students have none)."""
    return {r.user: shown(r) for r in rows if not r.hidden}


def own(rows: list[Row], username: str) -> Row | None:
    """The viewer's own row on the whole board (hidden or not): what they may always see."""
    return next((r for r in rows if r.user == username), None)
