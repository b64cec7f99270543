"""The API's database pool has a connection for every thread of its thread pool.

A request runs its dependencies and its route as several hops through anyio's thread pool; with
fewer connections than threads a burst can leave every thread waiting for a connection held by a
request that waits for a thread, until the pool's 30 s timeout answers 500 (seen under the
scoreboard load: /api/auth/me at 2.6 req/s). A file-backed SQLite (serve) pools too."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from anyio import to_thread
from sqlalchemy.pool import QueuePool

from app.db.session import make_engine
from tests.pg_schema import PG_URL


async def api_threads() -> int:
    return int(to_thread.current_default_thread_limiter().total_tokens)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_every_api_thread_can_hold_a_connection_at_once(kind: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pool.db'}" if kind == "sqlite" else PG_URL.format(
        schema="public")
    engine = make_engine(url)
    pool = engine.pool
    assert isinstance(pool, QueuePool)  # a pool that keeps connections, with a size
    capacity = pool.size() + pool._max_overflow  # noqa: SLF001 - no public getter
    engine.dispose()
    assert capacity >= anyio.run(api_threads)
