"""Reading server-sent events the way a browser's EventSource does, from httpx line iterators."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """One event, or a comment (kind "comment": a keepalive)."""

    kind: str
    data: Any = None


def parse(line: str, kind: str, data: Any) -> tuple[str, Any, Event | None]:
    """Feed one line; returns the state and the event it completed, if any."""
    if line.startswith(":"):
        return kind, data, Event("comment", line[1:].strip())
    if line == "":
        return "message", None, (Event(kind, data) if data is not None else None)
    if line.startswith("event: "):
        return line[7:], data, None
    if line.startswith("data: "):
        return kind, json.loads(line[6:]), None
    return kind, data, None


def next_event(lines: Iterator[str]) -> Event:
    kind, data = "message", None
    for line in lines:
        kind, data, event = parse(line, kind, data)
        if event is not None:
            return event
    raise AssertionError("the stream ended before the next event")


def until(lines: Iterator[str], wanted: Callable[[Event], bool], deadline_s: float = 120.0
          ) -> Event:
    """The first event (keepalives skipped) that `wanted` accepts, within `deadline_s` (checked
    at each keepalive at least: keepalives keep a client's read timeout from firing)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        event = next_event(lines)
        if event.kind != "comment" and wanted(event):
            return event
    raise AssertionError(f"no such event within {deadline_s:g} s")


async def anext_event(lines: AsyncIterator[str]) -> Event:
    kind, data = "message", None
    async for line in lines:
        kind, data, event = parse(line, kind, data)
        if event is not None:
            return event
    raise AssertionError("the stream ended before the next event")


async def auntil(lines: AsyncIterator[str], wanted: Callable[[Event], bool],
                 deadline_s: float = 120.0) -> Event:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        event = await anext_event(lines)
        if event.kind != "comment" and wanted(event):
            return event
    raise AssertionError(f"no such event within {deadline_s:g} s")
