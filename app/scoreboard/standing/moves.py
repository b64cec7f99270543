"""How many board moves this process has heard of, so that the board version it remembers
(app/scoreboard/cache.py) is read again at once after any move it knows of.

Two ways a move is heard: a commit in this process that bumped the version (a TA's change, a
result recorded here; `heard_after_commit`), and a "scoreboard" row of the change feed read by
this process's live poller (a move made by another process: app/live/poller.py), which is
heard before the poller tells the open pages, so a page's refetch never gets the board it had.
A move neither way hears (the poller stopped) is read within the cache's `STATE_KEEP_S`.
"""

from __future__ import annotations

import threading

from sqlalchemy import event
from sqlalchemy.orm import Session


class Moves:
    """A counter that only goes up."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def moved(self) -> None:
        with self._lock:
            self.count += 1

    def heard_after_commit(self, db: Session) -> None:
        """Count a move when `db` commits (not if it rolls back)."""
        event.listen(db, "after_commit", lambda _session: self.moved(), once=True)


MOVES = Moves()  # this process's
