"""The app as served, for the scoreboard's browser test: `create_app`, plus a stand-in for
GET /api/scoreboard/events while the service has no such route.

The live-progress work adds that endpoint (a per-process poller of the change feed fanning
`event: scoreboard` / `data: {"seq": N}` out to streams, coalesced about a second apart). Until it
is there, this stand-in speaks the same contract from the board's version, so the page's wiring
is tested against the contract; once the real route exists it is used and this adds nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from app.core.config import get_settings
from app.db.session import session_factory
from app.main import create_app as create_service
from app.standing.maintain import current_version

EVENTS = "/api/scoreboard/events"


def create_app() -> FastAPI:
    app = create_service()
    if not any(isinstance(r, Route) and r.path == EVENTS for r in app.routes):
        app.add_api_route(EVENTS, stand_in_events, include_in_schema=False)
    return app


def version(url: str) -> int:
    with session_factory(url)() as db:
        return current_version(db)


async def stand_in_events() -> StreamingResponse:
    url = get_settings().db_url

    async def stream() -> AsyncIterator[bytes]:
        seen = await run_in_threadpool(version, url)
        yield b": connected\n\n"
        while True:
            await asyncio.sleep(0.5)  # the real one coalesces about a second apart
            now = await run_in_threadpool(version, url)
            if now != seen:
                seen = now
                yield f'event: scoreboard\ndata: {{"seq": {now}}}\n\n'.encode()

    return StreamingResponse(stream(), media_type="text/event-stream")
