"""Serving boards from memory: per API process, each board (view and GPU model) is read from
the standing and serialized once per board version, then answered as cached bytes.

A request served from here needs no query at all: the bytes come from here, and so does the
assignment the request names (`chosen`: kept per version, as every change to an assignment or
term moves the version; only the visibility rule, which depends on the time, is checked at
each request), and so does the version (`board_state`, one row), which is `known`:

- a move made by another process (a result the control worker recorded) is read from the
  change feed by this process's live poller, which calls `refresh` before it tells the pages:
  the new version is read, every value a request was given at the old version is made again
  at the new one, and only then is the new version served. Requests meanwhile get the old
  bytes from memory, as they would have a moment before, and never wait for a build;
- a move made by a commit in this process (a TA's change) is heard at once
  (app/scoreboard/standing/moves.py): the next request reads the version itself, so whoever
  made the change sees it in their next answer;
- the poller also calls `refresh` at least every second; a request reads the version itself
  only when `STATE_KEEP_S` passed without one (a poller that stopped or cannot read).

When a request does find its board out of date, it builds it, and the others asking for that
board meanwhile wait for that one build rather than starting their own. Every step takes an
`OnDemand` database (app/db/on_demand.py): in memory-only mode a step that would need the
database raises `NeedsDatabase` instead, so the route can answer on the event loop and go to
the thread pool only when something must be read or built.

The ETag is a digest of the bytes themselves: strong, the same in every process, and unchanged
when a change elsewhere (another model's board, a result after the freeze on the public board)
left these bytes as they were, so clients that send If-None-Match get a 304 then.

Builds are timed (wall and the building thread's CPU, which is about the time it held the GIL);
`Server-Timing` carries both on the response that paid for a build (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.course import assignments
from app.db.models import Assignment, User
from app.db.on_demand import NeedsDatabase, OnDemand
from app.scoreboard import boards
from app.scoreboard.boards import Snapshot, View
from app.scoreboard.standing.maintain import State, current_state
from app.scoreboard.standing.moves import MOVES

T = TypeVar("T")
Key = tuple[str, Hashable]
Maker = Callable[[OnDemand, State, Any], Any]  # (database, state, previous value) -> value
STATE_KEEP_S = 5.0  # a request reads the version when no refresh came for this long


def on_demand(db: Session | OnDemand) -> OnDemand:
    return db if isinstance(db, OnDemand) else OnDemand.of(db)


@dataclass(frozen=True)
class Known:
    """The board's state as last read, and the moves heard of before that read."""

    state: State
    moves: int
    until: float  # monotonic


@dataclass
class Built:
    """What one request's builds cost (none when everything was cached)."""

    seconds: float = 0.0  # wall time of the builds this request did
    cpu_seconds: float = 0.0  # CPU time of this thread in them (~ time holding the GIL)
    count: int = 0

    def header(self) -> dict[str, str]:
        if not self.count:
            return {}
        return {"Server-Timing": f"rebuild;dur={self.seconds * 1000:.1f}, "
                                 f"rebuild-cpu;dur={self.cpu_seconds * 1000:.1f}"}


@dataclass
class Entry:
    """One kept value: the version it was made at, how to make it again, and the last version a
    request was given it at (what `refresh` makes again)."""

    version: int
    value: Any
    make: Maker
    served: int


@dataclass
class BoardCache:
    """Per process: (kind, view) -> its value, made once per version."""

    entries: dict[Key, Entry] = field(default_factory=dict)
    locks: dict[Key, threading.Lock] = field(default_factory=dict)
    rebuilds: int = 0  # values made so far (the assignment asked for, a snapshot, a format)
    lock: threading.Lock = field(default_factory=threading.Lock)
    known: Known | None = None  # the version served (see the module's doc)
    state_keep_s: float = STATE_KEEP_S
    refreshes: int = 0  # moves made ready before the pages heard of them

    def state(self, db: OnDemand) -> State:
        """The board's state: remembered until a move is heard of or `state_keep_s` passed."""
        known, moves = self.known, MOVES.count  # moves counted before the read
        if known is not None and known.moves == moves and time.monotonic() < known.until:
            return known.state
        return self.read_state(db, moves)

    def read_state(self, db: OnDemand, moves: int) -> State:
        state = current_state(db())
        self.know(state, moves)
        return state

    def know(self, state: State, moves: int) -> None:
        """Serve `state` from now on, read after `moves` were heard of (never an older one
        read before the same moves)."""
        with self.lock:
            known = self.known
            if known is None or known.moves != moves or known.state.version <= state.version:
                self.known = Known(state, moves, time.monotonic() + self.state_keep_s)

    def refresh(self, db: OnDemand) -> None:
        """A move read from the change feed: read the new version, make again at it every value
        a request was given at the version served until now, then serve the new one."""
        known, moves = self.known, MOVES.count
        state = current_state(db())
        if known is not None and state.version > known.state.version:
            with self.lock:
                hot = [(key, e.make) for key, e in self.entries.items()
                       if e.served >= known.state.version]
            for key, make in hot:
                with contextlib.suppress(UserError):  # an assignment renamed away: not kept
                    self.cached(key, state, make, Built(), db)
        with self.lock:
            self.refreshes += 1
        self.know(state, moves)

    def refresh_from(self, url: str) -> None:
        """`refresh` with a session of its own (the live poller's hook, in a thread)."""
        with OnDemand.of_url(url) as db:
            self.refresh(db)

    def fresh(self, key: Key, version: int) -> Any | None:
        """The value of `key` if made at `version` or later (noted as served at it)."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is None or entry.version < version:
                return None
            entry.served = max(entry.served, version)
            return entry.value

    def cached(self, key: Key, state: State, make: Maker, built: Built, db: OnDemand) -> Any:
        """The value of `key` at `state`'s version or later, made here only if nobody has;
        `make` gets the previous value (None the first time), whose parts it may reuse. Never
        waits (for another's build) when `db` may not wait."""
        value = self.fresh(key, state.version)
        if value is not None:
            return value
        if not db.may_wait:
            raise NeedsDatabase
        with self.lock:
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:  # one build per key at a time; the others wait for it
            value = self.fresh(key, state.version)
            if value is not None:
                return value
            with self.lock:
                entry = self.entries.get(key)
            started, cpu = time.perf_counter(), time.thread_time()
            value = make(db, state, entry.value if entry is not None else None)
            seconds = time.perf_counter() - started
            with self.lock:
                self.entries[key] = Entry(state.version, value, make, state.version)
                self.rebuilds += 1
            built.seconds += seconds
            built.cpu_seconds += time.thread_time() - cpu
            built.count += 1
            return value

    def chosen(self, db: Session | OnDemand, state: State, viewer: User, name: str | None,
               term: str | None, default_suite: str) -> Assignment:
        """`assignments.for_board` as of the board's `state`: read once per version (a 404 is
        not kept), the visibility rule checked every time."""
        ta = viewer.is_ta
        term = term if ta else None
        found: Assignment = self.cached(
            ("assignment", (name, term, ta)), state,
            lambda d, _state, _old: assignments.board_named(d(), ta, name, term, default_suite),
            Built(), on_demand(db))
        assignments.refuse_hidden_board(viewer, found)
        return found

    def current(self, db: Session | OnDemand, live: bool, assignment_id: int = 0,
                state: State | None = None) -> Current:
        """The boards of an assignment (0: the default one) as of now (the version as
        `state` says, unless the caller read it already), for a viewer who sees live results
        (`live`) or the public board."""
        built, db = Built(), on_demand(db)
        state = state or self.state(db)
        every = View(live, None, assignment_id)
        snapshot = self.cached(("snapshot", every), state, reader(every), built, db)
        return Current(self, db, state, snapshot, built)


def reader(view: View) -> Maker:
    """How a board's snapshot is made: read from the standing."""
    return lambda db, state, previous: boards.read(db(), state.version, state.models, view,
                                                   previous)


@dataclass
class Current:
    """The boards at one version, for one request."""

    cache: BoardCache
    db: OnDemand
    state: State
    every: Snapshot  # the board of every model's results (its `models` name the others)
    built: Built  # what building cost this request so far

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def models(self) -> list[str]:
        return self.every.models

    def snapshot(self, gpu_model: str | None) -> Snapshot:
        """The ranked rows of one GPU model's board (None: every model's)."""
        if gpu_model is None:
            return self.every
        view = View(self.every.view.live, gpu_model, self.every.view.assignment_id)
        if gpu_model not in self.models:  # no results of it: nothing to keep (bounded keys)
            return boards.read(self.db(), self.version, self.models, view)
        snapshot: Snapshot = self.cache.cached(("snapshot", view), self.state, reader(view),
                                               self.built, self.db)
        return snapshot

    def board(self, kind: str, gpu_model: str | None,
              make: Callable[[Snapshot, T | None], T]) -> T:
        """`make(snapshot, previous)` of one board, kept as `kind` until the version moves."""
        snapshot = self.snapshot(gpu_model)
        if gpu_model is not None and gpu_model not in self.models:
            return make(snapshot, None)
        view, cache = snapshot.view, self.cache

        def again(db: OnDemand, state: State, previous: T | None) -> T:
            return make(cache.cached(("snapshot", view), state, reader(view), Built(), db),
                        previous)

        value: T = cache.cached((kind, view), self.state, again, self.built, self.db)
        return value
