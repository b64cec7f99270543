"""A session opened only when a step needs the database, or never.

The scoreboard is asked for hundreds of times a second, and almost every time everything it
needs is in this process's memory (the viewer's session, the board's version, the board's
bytes). Its route therefore first answers on the event loop with `OnDemand.memory_only()`: the
first step that would need the database raises `NeedsDatabase` instead of blocking the loop,
and the route asks again in the thread pool with `OnDemand.of_url(...)`, which opens a session
on first use and closes it at the end (`memory_first` does both). One function serves both
ways; nothing is written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from anyio import to_thread
from sqlalchemy.orm import Session

from app.db.session import session_factory

T = TypeVar("T")


class NeedsDatabase(Exception):
    """This answer needs the database: ask again where waiting for it is allowed."""


class OnDemand:
    """Hands out one session, opened at the first call; none in memory-only mode."""

    def __init__(self, url: str | None, session: Session | None = None) -> None:
        self._url = url
        self._session = session
        self._owned = False

    @classmethod
    def memory_only(cls) -> OnDemand:
        return cls(None)

    @classmethod
    def of_url(cls, url: str) -> OnDemand:
        return cls(url)

    @classmethod
    def of(cls, session: Session) -> OnDemand:
        """A session the caller opened and closes."""
        return cls(None, session)

    @property
    def may_wait(self) -> bool:
        """Whether a step may go to the database (and wait for it)."""
        return self._session is not None or self._url is not None

    def __call__(self) -> Session:
        if self._session is None:
            if self._url is None:
                raise NeedsDatabase
            self._session = session_factory(self._url)()
            self._owned = True
        return self._session

    def close(self) -> None:
        if self._owned and self._session is not None:
            self._session.close()
            self._session = None
            self._owned = False

    def __enter__(self) -> OnDemand:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


async def memory_first(answer: Callable[[OnDemand], T], url: str) -> T:
    """`answer` from memory, on the event loop; if it needs the database, once more in the
    thread pool (as FastAPI runs sync routes) with a session of its own."""
    try:
        return answer(OnDemand.memory_only())
    except NeedsDatabase:
        pass

    def with_database() -> T:
        with OnDemand.of_url(url) as db:
            return answer(db)

    return await to_thread.run_sync(with_database)
