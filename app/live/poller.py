"""One poller per API process: it reads what changed and loads each watched state once.

Every `live_poll_s` one short session (in a thread: the event loop never waits on the database)
reads the new rows of the change feed, then loads the detail of every watched submission that
changed, or that a stream has just started watching, ONCE for all its watchers in this process,
and the loop publishes them to the hub. The poller is the only reader of snapshots, so what a
stream receives is always newer than what it received before. A stream's first state is the
first snapshot published after it subscribed (within a poll or two): it was read after that
poll's feed read, so any change it misses committed later and is read from the feed later.

Two fields of a queued submission change without the submission changing: its queue position
(work ahead of it starts) and `waiting` (workers come and go). For the watched queued ones they
are read with two queries whatever their number, after submission changes (at most every
QUEUE_AT_MOST_S) and every QUEUE_EVERY_S regardless, and published as a partial update.

Scoreboard changes are published as {"seq": id} to the "scoreboard" topic, at most once per
`live_board_every_s` (5 s): every open page refetches the board on it, so a burst of results
costs one refetch per page, and 500 pages never cost more than the 5 s polling they replace.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.accounts.recent_sessions import RECENT
from app.changefeed import feed
from app.changefeed.changes import (
    SCOREBOARD,
    SESSIONS,
    SUBMISSION,
    submission_topic,
    topic_submission,
)
from app.core.config import Settings
from app.db.models import Submission
from app.live.cursor import Cursor
from app.live.hub import Hub, Update
from app.results.detail import full_detail, queue_facts
from app.scoreboard.standing.moves import MOVES

log = logging.getLogger(__name__)
QUEUE_EVERY_S = 5.0  # queued pages' position and `waiting` refreshed at least this often
QUEUE_AT_MOST_S = 1.0  # ... and at most this often
HOLE_WAIT_S = 120.0  # how long an id below the newest may still commit (app/live/cursor.py)
BOARDS_RENEW_S = 1.0  # the boards' version read at least this often (a move the feed missed)
GONE = "gone"  # key of the update that says a watched submission no longer exists


@dataclass
class Stats:
    """What this process's poller did, for /metrics (app/live/metrics.py)."""

    polls: int = 0  # reads of the feed
    queries: int = 0  # SQL statements the poller sent, everything included
    changes: int = 0  # rows of the feed passed on
    snapshots: int = 0  # submission details loaded
    failures: int = 0  # polls that failed (the database away)


@dataclass
class Batch:
    """What one poll read, to publish on the event loop."""

    changes: list[feed.Noted] = field(default_factory=list)
    snapshots: dict[str, Update] = field(default_factory=dict)  # topic -> full detail | GONE
    queue: dict[str, Update] = field(default_factory=dict)  # topic -> position and waiting


class Poller:
    """Reads the feed for one process's hub (state touched only by one poll at a time)."""

    def __init__(self, settings: Settings, hub: Hub, session: Callable[[], Session],
                 stats: Stats | None = None,
                 on_board_move: Callable[[], Awaitable[None]] | None = None) -> None:
        self.settings = settings
        self.hub = hub
        self.on_board_move = on_board_move  # makes the new boards ready (app/scoreboard/cache.py)
        self.session = session
        self.stats = stats or Stats()
        self.cursor: Cursor | None = None  # set by the first poll
        self.scoreboard_every_s = settings.live_board_every_s
        self.queue_every_s, self.queue_at_most_s = QUEUE_EVERY_S, QUEUE_AT_MOST_S
        self.board_seq = 0  # the seq of the last scoreboard event (or the newest at start)
        self._board_pending: int | None = None  # a scoreboard change not published yet
        self._board_sent_at = -math.inf
        self._boards_renewed_at = -math.inf
        self._queue_read_at = -math.inf
        self._failing = False  # the last poll failed (logged once per outage)
        self._unreadable: set[int] = set()  # submissions whose state failed to load

    async def run(self) -> None:
        """Poll until cancelled; a failed poll is logged once and tried again."""
        while True:
            try:
                await self.poll()
                if self._failing:
                    log.info("live: the change feed can be read again")
                self._failing = False
            except Exception:  # noqa: BLE001 - the database away, anything: keep polling
                self.stats.failures += 1
                if not self._failing:
                    log.exception("live: reading the change feed failed; trying again")
                self._failing = True
            await asyncio.sleep(self.settings.live_poll_s)

    async def poll(self) -> None:
        """One poll: read in a thread, publish here."""
        watched, waiting = self.hub.watched(SUBMISSION), self.hub.waiting(SUBMISSION)
        batch = await asyncio.to_thread(self.read, ids(watched), ids(waiting), time.monotonic())
        now = time.monotonic()
        board = self.publish(batch, now)
        moved = any(c.topic == SCOREBOARD for c in batch.changes)
        if moved or now - self._boards_renewed_at >= BOARDS_RENEW_S:
            self._boards_renewed_at = now
            await self.renew_boards()  # before any page hears of a move: its refetch gets it
        if board is not None:
            await self.hub.publish_spread(SCOREBOARD, board)

    async def renew_boards(self) -> None:
        """Have this process's boards read and made again at the version now (off the
        requests' path; see app/scoreboard/cache.py); if that fails, the next request reads
        the version itself."""
        try:
            if self.on_board_move is not None:
                await self.on_board_move()
                return
        except Exception:  # noqa: BLE001 - the database away, anything: requests read it
            log.exception("live: making the new boards ready failed; requests will")
        MOVES.moved()

    def read(self, watched: set[int], waiting: set[int], now: float) -> Batch:
        """Read the feed, then the states owed, in one short session. A poll that fails leaves
        the position where it was: the next one reads the same changes again."""
        with self.session() as db:
            event.listen(db.connection(), "before_cursor_execute", self._count)
            if self.cursor is None:
                self.cursor = Cursor(feed.newest_id(db), HOLE_WAIT_S)
                self.board_seq = feed.newest_id(db, SCOREBOARD)
            saved = self.cursor.copy()
            try:
                return self.read_batch(db, watched, waiting, now)
            except BaseException:
                self.cursor = saved
                raise

    def read_batch(self, db: Session, watched: set[int], waiting: set[int], now: float
                   ) -> Batch:
        """The new changes, the states of the watched submissions among them and of those a
        stream waits on (not again for one that could not be read, until it changes), and the
        queued ones' position when due."""
        batch = Batch(changes=self.read_changes(db, now))
        changed = {i for c in batch.changes if (i := topic_submission(c.topic)) is not None}
        for sub_id in sorted((changed & watched) | (waiting - self._unreadable)):
            snapshot = self.snapshot(db, sub_id)
            if snapshot is not None:
                batch.snapshots[submission_topic(sub_id)] = snapshot
        if watched and self.queue_due(now, bool(changed)):
            facts = queue_facts(db, watched, self.settings)
            batch.queue = {submission_topic(i): f for i, f in facts.items()}
        return batch

    def read_changes(self, db: Session, now: float) -> list[feed.Noted]:
        """The feed's rows not passed on before, reading again while reads come back full."""
        assert self.cursor is not None
        self.stats.polls += 1
        self.cursor.expire(now)
        after, missing = self.cursor.wanted()
        fresh: list[feed.Noted] = []
        while True:
            rows = feed.read_after(db, after, missing)
            fresh += self.cursor.accept(rows, now)
            if len(rows) < feed.READ_LIMIT:
                break
            after, missing = rows[-1].id, []
        self.stats.changes += len(fresh)
        return fresh

    def snapshot(self, db: Session, sub_id: int) -> Update | None:
        """A submission's detail as a TA sees it (streams cut it per viewer), GONE, or None when
        it cannot be shown (logged: its watchers keep their state, the others theirs)."""
        self.stats.snapshots += 1
        sub = db.get(Submission, sub_id)
        if sub is None:
            return {GONE: True}
        try:
            state = full_detail(db, sub, self.settings)
        except SQLAlchemyError:
            raise  # the database: the whole poll is tried again
        except Exception:  # noqa: BLE001 - one submission's bad data must not stop the feed
            if sub_id not in self._unreadable:
                log.exception("live: the state of submission %s could not be read", sub_id)
            self._unreadable.add(sub_id)
            return None
        self._unreadable.discard(sub_id)
        return state

    def queue_due(self, now: float, submissions_changed: bool) -> bool:
        """Whether to refresh queued pages' position and `waiting` in this poll."""
        since = now - self._queue_read_at
        due = since >= self.queue_every_s or (submissions_changed
                                              and since >= self.queue_at_most_s)
        if due:
            self._queue_read_at = now
        return due

    def publish(self, batch: Batch, now: float) -> Update | None:
        """Hand a poll's submission results to the hub (on the event loop); the scoreboard event
        when one is due (the caller spreads it over its many streams)."""
        for topic, snapshot in batch.snapshots.items():
            self.hub.publish(topic, snapshot, whole=True)
        for topic, facts in batch.queue.items():
            self.hub.publish(topic, facts)
        if any(c.topic == SESSIONS for c in batch.changes):
            RECENT.forget_all()  # another process ended sessions or changed a role
        boards = [c.id for c in batch.changes if c.topic == SCOREBOARD]
        if boards:
            self._board_pending = max(self._board_pending or 0, *boards)
        due = now - self._board_sent_at >= self.scoreboard_every_s
        if self._board_pending is not None and due:
            self.board_seq, self._board_pending = self._board_pending, None
            self._board_sent_at = now
            return {"seq": self.board_seq}
        return None

    def _count(self, *_: Any) -> None:
        self.stats.queries += 1


def ids(topics: set[str]) -> set[int]:
    """The submission ids of submission topics."""
    return {i for i in map(topic_submission, topics) if i is not None}
