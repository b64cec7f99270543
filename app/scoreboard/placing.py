"""A viewer's own place on the board: what a student who chose an alias or opted out of the
public board still sees of themselves, for the API and the page's private line."""

from __future__ import annotations

from dataclasses import dataclass

from app.db.models import User
from app.scoreboard.audience import own, shown
from app.scoreboard.rows import Row


@dataclass(frozen=True)
class MyPlace:
    """The viewer's own place (the API's `MyPlace`, app/schemas/scoreboard.py)."""

    on_board: bool  # they have a judged, ranked result
    of: int  # how many students are ranked
    hidden: bool  # they opted out: the public board leaves them out
    alias: str | None = None  # the name the public board shows them under
    rank: int | None = None  # their rank over every student (hidden ones included)
    rank_label: str | None = None  # "4" or "4="
    score: float | None = None  # the graded score
    shown_as: str | None = None  # the name on the public board (None: not on it)


def my_place(rows: list[Row], user: User) -> MyPlace:
    """`user`'s place among `rows` (the whole board), with their own board settings."""
    row = own(rows, user.username)
    hidden, alias = bool(user.board_hidden), user.board_alias
    if row is None:
        return MyPlace(on_board=False, of=len(rows), hidden=hidden, alias=alias)
    return MyPlace(on_board=True, rank=row.rank, rank_label=row.label or str(row.rank),
                   of=len(rows), score=row.final, alias=alias, hidden=hidden,
                   shown_as=None if hidden else shown(row))


def private_line(place: MyPlace) -> str:
    """One sentence for the page: where a hidden or aliased student stands (empty otherwise)."""
    if not place.on_board or not (place.hidden or place.alias):
        return ""
    where = f"rank {place.rank_label} of {place.of}"
    if place.hidden:
        return f"You opted out of the public board; only you and the TAs see your {where}."
    return f"You appear on the public board as \u201c{place.alias}\u201d ({where})."
