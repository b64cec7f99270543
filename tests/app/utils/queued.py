"""The messages waiting on one broker queue, read straight from the broker (files of the embedded
broker, or the Redis list kombu keeps per queue), so a test sees exactly what a worker would get."""

from __future__ import annotations

import base64
import json
from typing import Any

import redis

from app.core.config import Settings


def waiting(settings: Settings, queue: str) -> list[tuple[str, dict[str, Any]]]:
    """(task name, kwargs) of every message waiting on `queue`, oldest first."""
    if settings.broker_url:
        client = redis.Redis.from_url(settings.broker_url)
        raw = [json.loads(m) for m in reversed(client.lrange(queue, 0, -1))]
    else:
        folder = settings.data_dir / "broker" / "queue"
        raw = [json.loads(p.read_text()) for p in sorted(folder.glob(f"*.{queue}.msg"))]
    out = []
    for message in raw:
        _args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        out.append((message["headers"]["task"], kwargs))
    return out
