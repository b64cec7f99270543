"""The live side of one API process: its hub and its poller, started and stopped with the app.

`create_app` puts a `Live` in `app.state.live`; the lifespan starts its poller and stops it (and
ends every open stream) on shutdown. Routes reach it through `LiveDep`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request

from app.core.config import Settings
from app.db.session import session_factory
from app.live.hub import Hub
from app.live.poller import Poller


class Live:
    """One process's hub, poller and poller task."""

    def __init__(self, settings: Settings,
                 on_board_move: Callable[[], Awaitable[None]] | None = None) -> None:
        self.settings = settings
        self.hub = Hub()
        self.poller = Poller(settings, self.hub, lambda: session_factory(settings.db_url)(),
                             on_board_move=on_board_move)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start polling (on the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self.poller.run(), name="flashjudge-live-poller")

    async def stop(self) -> None:
        """End every stream and stop polling."""
        self.hub.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def live_of(request: Request) -> Live:
    """The app's live side (set by create_app)."""
    return request.app.state.live


LiveDep = Annotated[Live, Depends(live_of)]
