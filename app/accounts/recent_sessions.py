"""Browser sessions looked up in the last few seconds, remembered by this process for the
scoreboard's routes.

The board is asked for hundreds of times a second, and looking its viewer's session up was a
quarter of the API process's samples (docs/benchmarks.md). Only the board's routes read here
(app/api/scoreboard.py, app/pages/scoreboard.py); every other route looks the session up each
time. A remembered user is a detached copy: its columns can be read, nothing more.

A session ended (logout, a password change, a TA's sign-out, a sign-in past the per-user cap)
or a user's role changed makes this process forget every remembered session at once, and the
other API processes when their live poller reads the note it left on the change feed (within
a poll, 0.25 s: app/accounts/sessions.py, app/live/poller.py). `KEEP_S` bounds the rest (a
change made in the database by hand, a poller that stopped); a session's own expiry is checked
on every read.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from app.db.models import User, utcnow

KEEP_S = 60.0  # how long a lookup is trusted without asking the database again
MOST = 20_000  # sessions remembered at most (more than a course's open tabs)


@dataclass(frozen=True)
class Remembered:
    user: User  # detached: its columns only
    expires_at: datetime  # the session's own end
    until: float  # monotonic time after which it is looked up again


class RecentSessions:
    """sid hash -> the session's active user, for `KEEP_S` seconds."""

    def __init__(self, keep_s: float = KEEP_S, most: int = MOST) -> None:
        self.keep_s, self.most = keep_s, most
        self._by_hash: dict[str, Remembered] = {}
        self._lock = threading.Lock()
        self.generation = 0  # moves at every forget: a lookup begun before it is not kept

    def get(self, sid_hash: str) -> User | None:
        """The user of a session looked up moments ago, still live and active; else None."""
        found = self._by_hash.get(sid_hash)
        if found is None or time.monotonic() > found.until or found.expires_at <= utcnow():
            return None
        return found.user if found.user.active else None

    def keep(self, sid_hash: str, user: User, expires_at: datetime, generation: int) -> None:
        """Remember a lookup that began at `generation` (none if a forget came since)."""
        with self._lock:
            if generation != self.generation:
                return
            if len(self._by_hash) >= self.most:
                self._by_hash.clear()  # rare; the next reads look up again
            self._by_hash[sid_hash] = Remembered(user, expires_at,
                                                 time.monotonic() + self.keep_s)

    def forget_all(self) -> None:
        with self._lock:
            self._by_hash.clear()
            self.generation += 1


RECENT = RecentSessions()  # this process's; the board's routes read it
