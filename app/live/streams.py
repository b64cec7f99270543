"""The server-sent event streams, as text: what a page's EventSource and `flashjudge submit` read.

A stream holds no database session: it waits on its mailbox (app/live/hub.py), which the
process's poller fills. While nothing comes it sends a comment every `keepalive_s`, so proxies
do not cut an idle stream (and a client that left is noticed by the failed write at the latest).
Its subscription ends with it (the client left, the app shuts down).

Formats (unchanged for submissions):
- submission: `event: progress` with the detail as JSON whenever it changes (the first at
  connect), then `event: done` with the final detail, and the stream ends;
- scoreboard: `event: scoreboard` with `{"seq": N}` at connect (the newest scoreboard change this
  process knows) and whenever the board may have changed (at most every `live_board_every_s`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from app.live.hub import Closed, Hub, Mailbox
from app.live.poller import GONE
from app.results.detail import view_for
from flashjudge.contract import Status

KEEPALIVE = ": keepalive\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # nginx: do not buffer


def sse(kind: str, data: dict[str, Any]) -> str:
    """One event in the text/event-stream format."""
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


async def submission_events(hub: Hub, box: Mailbox, is_ta: bool, keepalive_s: float
                            ) -> AsyncIterator[str]:
    """`progress` on every change of the state a viewer sees, then `done`."""
    body: dict[str, Any] = {}
    last = ""
    try:
        while True:
            update = await box.next(keepalive_s)
            if update is None:
                yield KEEPALIVE
                continue
            if update.get(GONE):
                return
            body = {**body, **view_for(update, is_ta)}
            text = json.dumps(body)
            if "status" not in body or text == last:  # a partial update before the first
                continue  # state, or nothing this viewer sees changed
            last = text
            done = body["status"] == Status.DONE
            yield f"event: {'done' if done else 'progress'}\ndata: {text}\n\n"
            if done:
                return
    except Closed:
        return
    finally:
        hub.unsubscribe(box)


async def scoreboard_events(hub: Hub, box: Mailbox, seq: int, keepalive_s: float
                            ) -> AsyncIterator[str]:
    """The current seq, then a `scoreboard` event each time the board may have changed."""
    try:
        yield sse("scoreboard", {"seq": seq})
        while True:
            update = await box.next(keepalive_s)
            yield KEEPALIVE if update is None else sse("scoreboard", {"seq": update["seq"]})
    except Closed:
        return
    finally:
        hub.unsubscribe(box)
