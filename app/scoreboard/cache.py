"""Serving boards from memory: per API process, each board (view and GPU model) is read from
the standing and serialized once per board version, then answered as cached bytes.

A request costs one query (the version: `board_state`, one row by primary key) besides its
login; the bytes come from here. When the version moved, the first request for a board builds
it again and the others asking for that board meanwhile wait for that one build rather than
starting their own, so a push that makes 500 tabs refetch costs one build per process, and no
tab gets a board older than the event that woke it.

The ETag is a digest of the bytes themselves: strong, the same in every process, and unchanged
when a change elsewhere (another model's board, a result after the freeze on the public board)
left these bytes as they were, so clients that send If-None-Match get a 304 then.

Builds are timed (wall and the building thread's CPU, which is about the time it held the GIL);
`Server-Timing` carries both on the response that paid for a build (docs/architecture.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.scoreboard import boards
from app.scoreboard.boards import Snapshot, View
from app.scoreboard.standing.maintain import current_state

T = TypeVar("T")


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
class BoardCache:
    """Per process: (kind, view) -> (version, value), built once per version."""

    entries: dict[tuple[str, View], tuple[int, Any]] = field(default_factory=dict)
    locks: dict[tuple[str, View], threading.Lock] = field(default_factory=dict)
    rebuilds: int = 0  # values built so far (a snapshot or a format of one)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fresh(self, key: tuple[str, View], version: int) -> Any | None:
        with self.lock:
            entry = self.entries.get(key)
        return entry[1] if entry is not None and entry[0] >= version else None

    def cached(self, key: tuple[str, View], version: int, make: Callable[[T | None], T],
               built: Built) -> T:
        """The value of `key` at `version` or later, built here only if nobody has; `make`
        gets the previous value (None the first time), whose parts it may reuse."""
        value = self.fresh(key, version)
        if value is not None:
            return value
        with self.lock:
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:  # one build per key at a time; the others wait for it
            value = self.fresh(key, version)
            if value is not None:
                return value
            with self.lock:
                previous = self.entries.get(key, (0, None))[1]
            started, cpu = time.perf_counter(), time.thread_time()
            value = make(previous)
            seconds = time.perf_counter() - started
            with self.lock:
                self.entries[key] = (version, value)
                self.rebuilds += 1
            built.seconds += seconds
            built.cpu_seconds += time.thread_time() - cpu
            built.count += 1
            return value

    def current(self, db: Session, live: bool, assignment_id: int = 0) -> Current:
        """The boards of an assignment (0: the default one) as of now (one query: the
        version), for a viewer who sees live results (`live`) or the public board."""
        built = Built()
        state = current_state(db)
        version, models = state.version, state.models
        every = View(live, None, assignment_id)
        snapshot = self.cached(
            ("snapshot", every), version,
            lambda previous: boards.read(db, version, models, every, previous), built)
        return Current(self, db, version, snapshot, built)


@dataclass
class Current:
    """The boards at one version, for one request."""

    cache: BoardCache
    db: Session
    version: int
    every: Snapshot  # the board of every model's results (its `models` name the others)
    built: Built  # what building cost this request so far

    @property
    def models(self) -> list[str]:
        return self.every.models

    def snapshot(self, gpu_model: str | None) -> Snapshot:
        """The ranked rows of one GPU model's board (None: every model's)."""
        if gpu_model is None:
            return self.every
        view = View(self.every.view.live, gpu_model, self.every.view.assignment_id)
        if gpu_model not in self.models:  # no results of it: nothing to keep (bounded keys)
            return boards.read(self.db, self.version, self.models, view)
        return self.cache.cached(
            ("snapshot", view), self.version,
            lambda previous: boards.read(self.db, self.version, self.models, view, previous),
            self.built)

    def board(self, kind: str, gpu_model: str | None,
              make: Callable[[Snapshot, T | None], T]) -> T:
        """`make(snapshot, previous)` of one board, kept as `kind` until the version moves."""
        snapshot = self.snapshot(gpu_model)
        if gpu_model is not None and gpu_model not in self.models:
            return make(snapshot, None)
        return self.cache.cached((kind, snapshot.view), self.version,
                                 lambda previous: make(snapshot, previous), self.built)
