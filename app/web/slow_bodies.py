"""Deadlines for a request body's arrival, so a client dribbling its upload cannot hold a
connection (and a slot, and a file) for as long as it likes: each part must come within
`body_idle_timeout_s`, and past that grace the body must average `body_min_rate_bytes_s`.
Used by the body guard (app/web/body_guard.py) for every request that has a body."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from starlette.types import Message, Receive

from app.core.config import Settings
from app.core.errors import UserError


@dataclass
class BodyClock:
    """How long a body has been arriving, and how much of it came."""

    idle_s: float  # the longest wait for the next part
    min_rate: float  # bytes per second the body must average past the first idle_s
    started: float = field(default_factory=time.monotonic)  # when the first part was awaited
    seen: int = 0  # body bytes so far
    done: bool = False  # the last part came: no deadlines any more (disconnect waits are free)

    @classmethod
    def of(cls, settings: Settings) -> BodyClock:
        return cls(settings.body_idle_timeout_s, settings.body_min_rate_bytes_s)

    def too_slow(self) -> UserError | None:
        """The 408 for a body slower than its floor, or None."""
        elapsed = time.monotonic() - self.started
        if elapsed <= self.idle_s or self.seen >= self.min_rate * (elapsed - self.idle_s):
            return None
        return timeout_error(f"the request body arrives too slowly ({self.seen / elapsed:.0f} "
                             f"bytes/s; at least {self.min_rate:.0f} are needed)")


async def receive_timed(receive: Receive, clock: BodyClock) -> Message:
    """The next message, within the body's deadlines; raises the 408 when one passes."""
    if clock.done:
        return await receive()
    try:
        message = await asyncio.wait_for(receive(), clock.idle_s)
    except TimeoutError:
        raise timeout_error(f"no part of the request body came for {clock.idle_s:g} s") \
            from None
    if message["type"] == "http.request":
        clock.seen += len(message.get("body", b""))
        clock.done = not message.get("more_body", False)
        slow = None if clock.done else clock.too_slow()
        if slow is not None:
            raise slow
    return message


def timeout_error(why: str) -> UserError:
    return UserError(f"{why}: the connection is closed; send the request again", status=408,
                     headers={"Connection": "close"})
