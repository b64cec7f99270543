"""Engine and session factory: SQLite (WAL) by default, PostgreSQL when configured.

The floor every other part of app/ stands on: it imports none of them. The listeners that keep
the change feed and the scoreboard's standing with every write are installed by whoever starts
a process (app/wiring.py), not here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import CursorResult
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.dml import UpdateBase

# At least as many connections as the API's thread pool has threads (anyio's 40): a request runs its
# dependencies and its route as several hops through that pool, so with fewer connections a burst
# can leave every thread waiting for a connection held by a request that waits for a thread (seen:
# /api/auth/me at 2.6 req/s under load, requests failing after the pool's 30 s timeout). Half of
# them are kept: an overflow connection is closed when it is returned, so with 10 kept, 200 board
# requests a second opened and closed PostgreSQL connections all the time (a tenth of the API's
# samples); all 50 kept would hold 50 of PostgreSQL's 100 per API process even when idle.
POOL_SIZE = 20
POOL_OVERFLOW = 30
# A bulk write's execution option: it changes only rows no scoreboard shows, before and after
# (queued uploads closed as superseded), so the standing's listener skips it
# (app/scoreboard/standing/hooks.py; set in app/submissions/lifecycle.py).
UNRANKED_ONLY = "standing_unranked_only"


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    """WAL lets the API read while the control worker writes; busy_timeout waits out locks."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create an engine for `url`, setting SQLite up for several processes."""
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        in_memory = make_url(url).database in (None, "", ":memory:")  # one connection: no pool
        pool = {} if in_memory else {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW}
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10},
                               **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)


@lru_cache
def get_engine(url: str) -> Engine:
    """One engine per URL per process."""
    return make_engine(url)


@lru_cache
def session_factory(url: str) -> sessionmaker[Session]:
    """One factory per URL per process, so the listeners a process installs on it at start
    (app/wiring.py: the change feed, the scoreboard's standing) serve all of its sessions."""
    return sessionmaker(get_engine(url), expire_on_commit=False)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session committed on success, rolled back on error (for workers and commands)."""
    session = session_factory(url)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def write(db: Session, statement: UpdateBase) -> CursorResult[*tuple[Any, ...]]:
    """Run an INSERT/UPDATE/DELETE and return its cursor result, whose `rowcount` says how many
    rows it touched (Session.execute is typed as returning a plain Result, which has none)."""
    result = db.execute(statement)
    if not isinstance(result, CursorResult):
        raise TypeError(f"{type(statement).__name__} returned {type(result).__name__}, no rowcount")
    return result
