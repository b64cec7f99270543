"""Give each test session a Redis database of its own.

Celery workers started by one pytest session would otherwise take tasks queued by another session
running at the same time on the same Redis (two developers' runs, or a run beside CI), and
flushing a shared database would pull the floor from under the other. A session claims the first
free numbered database with SET NX on a lock key (expiring, so a killed session frees it) and
releases it at the end.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

HOST = "redis://127.0.0.1:6379"
LOCK_KEY = "flashjudge:test-session"
LOCK_SECONDS = 2 * 3600


@contextmanager
def claimed_redis_url(first: int = 1, last: int = 15) -> Iterator[str]:
    """A `redis://` URL of a database no other session holds, flushed before and after use."""
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        for db in range(first, last + 1):
            client = redis.Redis.from_url(f"{HOST}/{db}", socket_connect_timeout=3)
            if client.set(LOCK_KEY, token, nx=True, ex=LOCK_SECONDS):
                break
        else:
            pytest.skip(f"every Redis database {first}..{last} is held by another test session")
    except redis.RedisError as exc:
        pytest.skip(f"Redis is not reachable at 127.0.0.1:6379: {exc}")
    flush_but_lock(client)
    try:
        yield f"{HOST}/{db}"
    finally:
        flush_but_lock(client)
        if client.get(LOCK_KEY) == token.encode():
            client.delete(LOCK_KEY)


def flush_but_lock(client: redis.Redis) -> None:
    """Delete everything in the claimed database except the claim itself."""
    keys = [k for k in client.scan_iter(count=1000) if k != LOCK_KEY.encode()]
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])
