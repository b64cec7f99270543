"""The broker as the tests see it: messages waiting on a queue, and a broker that lost its data
(a Redis restarted without persistence), on either backend."""

from __future__ import annotations

import shutil

import redis

from app.core.config import Settings
from tests.redis_claim import flush_but_lock

PRIORITY_LISTS = ("", "\x06\x163", "\x06\x166", "\x06\x169")  # kombu's Redis priority steps


def messages_waiting(settings: Settings, queue: str = "cpu") -> int:
    """Messages on `queue`: Redis LLEN over its priority lists, or the embedded broker's files."""
    if settings.broker_url:
        client = redis.Redis.from_url(settings.broker_url)
        return sum(int(client.llen(queue + suffix)) for suffix in PRIORITY_LISTS)
    return len(list((settings.data_dir / "broker" / "queue").glob(f"*.{queue}.msg")))


def lose_broker_data(settings: Settings) -> None:
    """Every queued message and every ledger record gone, as after a restart without data."""
    if settings.broker_url:
        flush_but_lock(redis.Redis.from_url(settings.broker_url))
        return
    for message in (settings.data_dir / "broker" / "queue").glob("*.msg"):
        message.unlink(missing_ok=True)
    shutil.rmtree(settings.data_dir / "claims", ignore_errors=True)
