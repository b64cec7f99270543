"""Who sees which names on the board (issue 23): a student may choose an alias for the public
board or opt out of it; TAs see everyone, with both the alias and the real name.

Every board is one snapshot of every row (app/scoreboard/boards.py); what leaves the service for
a non-TA goes through `public` first, so the public JSON, CSV and page cannot carry the
username or display name of an aliased student, nor any row of a hidden one. Ranks are the
board's own, counted over everyone, so a hidden student keeps the rank they would have and the
public board shows a gap where they stand; they see their rank privately (`own`).
"""

from __future__ import annotations

import dataclasses

from app.scoreboard.rows import Row

PUBLIC, TAS = "public", "ta"  # the two audiences a board is made for


def audience(is_ta: bool) -> str:
    return TAS if is_ta else PUBLIC


def shown(row: Row) -> str:
    """The name the public board shows: the alias when the student chose one."""
    return row.alias or row.user


def public(rows: list[Row]) -> list[Row]:
    """The rows anyone may see: no hidden student, an aliased one under the alias alone."""
    return [dataclasses.replace(r, user=shown(r), display_name="") if r.alias else r
            for r in rows if not r.hidden]


def rows_for(rows: list[Row], who: str) -> list[Row]:
    return rows if who == TAS else public(rows)


def names(rows: list[Row]) -> dict[str, str]:
    """username -> the name their public row goes by (hidden students have none)."""
    return {r.user: shown(r) for r in rows if not r.hidden}


def own(rows: list[Row], username: str) -> Row | None:
    """The viewer's own row on the whole board (hidden or not): what they may always see."""
    return next((r for r in rows if r.user == username), None)
