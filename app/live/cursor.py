"""Where one poller is in the change feed: the newest id it saw, and the gaps below it.

On PostgreSQL ids come from a sequence when a row is inserted, and transactions commit in any
order: when id 6 is read, id 5 may belong to a transaction still open. Such a gap (a "hole") is
asked for again on every read until it shows up or `hole_wait_s` has passed (a transaction that
rolled back leaves a hole that never fills). Rows are passed on once: what was seen is not
passed again, whatever the reads return. On SQLite writers take turns, so there are no holes.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.changefeed.feed import Noted

MAX_HOLES = 10_000  # a wider jump (a restored sequence) is not waited on, id by id
MAX_LISTED = 200  # more holes than this are read as a range from the oldest one


class Cursor:
    """The poller's position: read after `last`, and the `holes` not seen yet."""

    def __init__(self, last: int, hole_wait_s: float) -> None:
        self.last = last  # the newest id seen
        self.hole_wait_s = hole_wait_s
        self._holes: dict[int, float] = {}  # id not seen yet below `last` -> when to give up

    def copy(self) -> Cursor:
        """The same position, to go back to when a poll fails."""
        twin = Cursor(self.last, self.hole_wait_s)
        twin._holes = dict(self._holes)
        return twin

    @property
    def holes(self) -> list[int]:
        """Ids below `last` that may still commit."""
        return sorted(self._holes)

    def wanted(self) -> tuple[int, list[int]]:
        """What the next read asks for: ids after the first value, and the listed ids."""
        holes = self.holes
        if len(holes) > MAX_LISTED:
            return holes[0] - 1, []
        return self.last, holes

    def accept(self, rows: Iterable[Noted], now: float) -> list[Noted]:
        """The rows not seen before, in id order; moves the position past them."""
        fresh = []
        for row in sorted(rows, key=lambda r: r.id):
            if row.id in self._holes:
                del self._holes[row.id]
            elif row.id > self.last:
                if row.id - self.last - 1 <= MAX_HOLES:
                    self._holes.update(dict.fromkeys(range(self.last + 1, row.id),
                                                     now + self.hole_wait_s))
                self.last = row.id
            else:
                continue  # seen before
            fresh.append(row)
        return fresh

    def expire(self, now: float) -> None:
        """Stop waiting for holes older than `hole_wait_s` (their transactions rolled back)."""
        self._holes = {i: until for i, until in self._holes.items() if until > now}
